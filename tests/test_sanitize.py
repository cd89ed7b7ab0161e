"""Every implementation's kat program, built with toolchains/sanitize.yaml (clang ASan + UBSan, every
finding fatal), runs over all its vector files without a single sanitizer finding: the quick gate (every
short record, the n-block calls and the checksum chain, every 32nd record iterated over 100 times: the
iterated records repeat the paths the others take, and would be 95 % of the work under ASan).

Implementations are discovered when the tests are collected, so a cipher folder added later is
covered without an edit here.  The builds and runs go in parallel (one process per CPU, each unit in
its own build directory so no two compilers write the same harness object); each test then reads its
implementation's outcome.  The sanitizer runtimes write their reports into per-run log files
(ASAN_OPTIONS / UBSAN_OPTIONS log_path), because lab.verify keeps only the last stderr line of a
program that died; a failing test quotes the report.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from lab.config import Lab
from lab.verify import verify

from .conftest import ROOT, all_implementations

TOOLCHAIN = "sanitize"
IMPLS = all_implementations()
REPORT_LINES = 40  # of a sanitizer report quoted in an assertion message


def _sanitizer_env(log_prefix: Path) -> dict[str, str]:
    common = f"log_path={log_prefix}:print_stacktrace=1:symbolize=1"
    # ASan is fatal by nature; halt_on_error restates it. Leaks are reported at exit (LeakSanitizer).
    return {"ASAN_OPTIONS": f"{common}:halt_on_error=1:detect_leaks=1:strict_string_checks=1",
            "UBSAN_OPTIONS": f"{common}:halt_on_error=1"}


def _check(cipher: str, strategy: str, build_root: str, log_root: str) -> list[tuple[str, object, str]]:
    """Builds one implementation and runs its kat program over each of its vector files (in a worker
    process: the sanitizer options are environment variables, set here for this unit alone)."""
    lab = Lab()
    out = []
    for vf in lab.cipher(cipher).impls[strategy].vector_files:
        prefix = Path(log_root) / f"{cipher}.{strategy}.{vf.name}"
        os.environ.update(_sanitizer_env(prefix))
        (r,) = verify(lab, cipher, vf, strategy, TOOLCHAIN, build_dir=Path(build_root) / f"{cipher}.{strategy}",
                      quick=True)
        logs = sorted(prefix.parent.glob(prefix.name + ".*"))  # <prefix>.<pid>, one per process that reported
        report = "\n".join(p.read_text(errors="replace") for p in logs)
        out.append((vf.name, r, report))
    return out


def _quote(report: str) -> str:
    """The report up to its SUMMARY line (ASan's shadow-byte map after it says little), at most REPORT_LINES."""
    lines = report.strip().splitlines()
    end = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("SUMMARY:")), len(lines))
    return "\n".join(lines[:min(end, REPORT_LINES)])


@pytest.fixture(scope="session")
def sanitized(request, lab, tmp_path_factory) -> dict[tuple[str, str], list]:
    """(cipher, strategy) -> [(vector file name, VerifyResult, sanitizer report text)] for the
    implementations this session selected (all of them unless -k narrows it), in parallel; the units
    with the most vector bytes start first (their runs are the long ones)."""
    build_root, log_root = tmp_path_factory.mktemp("sanitize-build"), tmp_path_factory.mktemp("sanitize-logs")
    selected = {(it.callspec.params["cipher"], it.callspec.params["strategy"]) for it in request.session.items
                if it.originalname == "test_no_sanitizer_finding_over_all_vectors"}

    def weight(unit: tuple[str, str]) -> int:
        return sum(f.stat().st_size for f in lab.cipher(unit[0]).impls[unit[1]].vector_files)

    units = sorted(selected or IMPLS, key=weight, reverse=True)
    workers = min(len(units), len(os.sched_getaffinity(0))) or 1
    t0 = time.perf_counter()
    # spawn, not fork: the session may already run threads (a browser driver) that fork would copy mid-lock
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {u: pool.submit(_check, *u, str(build_root), str(log_root)) for u in units}
        results = {u: f.result() for u, f in futures.items()}
    print(f"\nsanitize: {len(units)} implementations built and checked in {time.perf_counter() - t0:.1f} s "
          f"with {workers} processes")
    return results


@pytest.mark.slow
@pytest.mark.parametrize("cipher,strategy", IMPLS, ids=[f"{c}/{s}" for c, s in IMPLS])
def test_no_sanitizer_finding_over_all_vectors(lab, sanitized, cipher, strategy):
    runs = sanitized[(cipher, strategy)]
    assert runs, f"{cipher} has no vectors: add them or a local .kat"
    if not lab.cipher(cipher).impl(strategy).runs_on(lab.target("host").arch):
        pytest.skip(f"{cipher}/{strategy} does not run on the host's arch")
    for name, r, report in runs:
        if r.problem and "unavailable on this CPU" in r.problem:
            pytest.skip(r.problem)
        if report.strip():
            pytest.fail(f"{name}: {r.line()}\nsanitizer report:\n{_quote(report)}", pytrace=False)
        assert r.problem is None, f"{name}: {r.line()}"
        assert r.failed == 0, f"{name}: {r.line()}; first failures: {r.fails[:3]}"
        assert r.passed > 0 and r.passed + r.skipped + r.verdict.sampled_out == r.records, f"{name}: {r.line()}"


# Peers: their adapters free what they allocate (cl_impl.release), so leak detection finds nothing either.
PEER_CIPHERS = sorted({i.cipher for i in Lab().all_impls() if i.impl_class == "peer"})


@pytest.mark.slow
@pytest.mark.parametrize("cipher", [c if c == "rijndael" else pytest.param(c, marks=pytest.mark.heavy)
                                    for c in PEER_CIPHERS])  # rijndael: the cipher with the most peers
def test_every_peer_is_clean_under_the_sanitizers_leaks_included(lab, cipher, monkeypatch):
    """`python -m lab verify CIPHER VECTORS --impl peers --toolchain sanitize --quick-gate` passes: with leak
    detection on (ASan's default) and the report on stderr, as a user runs it.  The quick gate (every short
    record, the n-block check, the checksum chain, every 32nd long record) calls every key setup, block
    function and release hook the full gate calls; the full one repeats them under ASan for 90 s more."""
    monkeypatch.delenv("ASAN_OPTIONS", raising=False)
    c = lab.cipher(cipher)
    for r in verify(lab, cipher, c.impls[c.default_impl].vector_files[0], "peers", TOOLCHAIN,
                    build_dir=ROOT / "build" / "test-sanitize-peers", quick=True):
        assert r.ok or r.unavailable, r.line()


def test_a_finding_is_a_status_of_its_own_and_the_release_hook_frees_what_key_setup_kept(fixture_lab, tmp_path,
                                                                                          monkeypatch):
    """tests/fixtures/ciphers/leakydes: real DES keeping a heap object per key schedule, as peer adapters do.
    The harness calls the release hook before it frees a schedule, so the implementation that has one is clean;
    the one without is a "sanitizer" finding carrying LeakSanitizer's summary and the frame that allocated —
    not kat_failed, although every known answer passed."""
    monkeypatch.delenv("ASAN_OPTIONS", raising=False)
    got = {r.impl: r for r in verify(fixture_lab, "leakydes", fixture_lab.vectors_dir / "des.kat", "all", TOOLCHAIN,
                                     build_dir=tmp_path / "build")}
    assert got["leakydes/releases"].ok, got["leakydes/releases"].line()
    leak = got["leakydes/leaks"]
    assert not leak.ok and leak.verdict.status == "sanitizer", leak.line()
    assert re.search(r"AddressSanitizer: \d+ byte\(s\) leaked in 2 allocation\(s\)\.; first frame: own .*leaky\.c:\d+",
                     leak.verdict.reason), leak.verdict.reason
    assert leak.line().endswith(leak.verdict.reason) and "kat_failed" not in leak.line()


# The profile itself: a finding must stop the program with a diagnostic (no recovery).
PROBES = {
    "shift": ("#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
              "int main(int argc, char **argv) { (void)argc; uint8_t b = (uint8_t)atoi(argv[1]);\n"
              "  uint32_t x = b << 24; printf(\"went on %u\\n\", x); return 0; }\n",
              "left shift of 200 by 24 places cannot be represented in type 'int'"),
    "heap": ("#include <stdio.h>\n#include <stdlib.h>\n"
             "int main(int argc, char **argv) { (void)argc; int n = atoi(argv[1]); unsigned char *p = malloc(16);\n"
             "  p[n] = 1; printf(\"went on %d\\n\", p[n]); free(p); return 0; }\n",
             "heap-buffer-overflow"),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_the_profile_stops_at_the_first_finding(lab, tmp_path, probe):
    src, expected = PROBES[probe]
    tc = lab.toolchain(TOOLCHAIN)
    c = tmp_path / f"{probe}.c"
    c.write_text(src)
    exe = tmp_path / probe
    b = subprocess.run([tc.cc, *tc.flags, str(c), *tc.ldflags, "-o", str(exe)], capture_output=True, text=True)
    assert b.returncode == 0, f"cannot build with the {TOOLCHAIN} profile (sanitizer runtimes installed?): {b.stderr}"
    env = {**os.environ, **_sanitizer_env(tmp_path / "log")}
    p = subprocess.run([str(exe), "200" if probe == "shift" else "16"], capture_output=True, text=True, env=env)
    report = "\n".join(f.read_text() for f in tmp_path.glob("log.*"))
    assert p.returncode != 0 and "went on" not in p.stdout, (p.returncode, p.stdout)
    assert expected in report and f"{probe}.c:" in report, report
