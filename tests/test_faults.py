"""Faults with real processes: every cell status from a real cell, a kill of the lab followed by --resume,
Ctrl-C, two runs at once, a truncated results line, a results folder that becomes read-only, bad YAML of
every kind.  No mock stands in for the thing under test; the lab runs as a subprocess, as a user runs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab import results
from lab.config import Lab
from lab.publish import build_report
from lab.report import errors_in

from .conftest import FIXTURE_CIPHERS, ROOT

pytestmark = pytest.mark.timeout(600)


def lab_env(tmp: Path, **extra) -> dict:
    return {**os.environ, "CIPHERLAB_CIPHER_DIRS": str(FIXTURE_CIPHERS), "CIPHERLAB_LOCK_DIR": str(tmp / "locks"),
            "CIPHERLAB_MACHINE": "faults", **extra}


def lab(tmp: Path, *args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env or lab_env(tmp), timeout=timeout)


def start(tmp: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lab", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env or lab_env(tmp))


def run_args(tmp: Path, matrix: Path, *extra: str) -> list[str]:
    return ["run", "--matrix", str(matrix), "--results-dir", str(tmp / "results"), "--build-dir",
            str(ROOT / "build" / "test-faults"), "--no-report", "--no-icount", "--no-progress", *extra]


def matrix(tmp: Path, text: str) -> Path:
    p = tmp / "matrix.yaml"
    p.write_text(text)
    return p


def only_run(tmp: Path) -> Path:
    (d,) = results.run_dirs(tmp / "results")
    return d


def cell_lines(run_dir: Path) -> list[str]:
    return (run_dir / "cells.jsonl").read_text().splitlines()


# ------------------------------------------------------------------ statuses
def test_every_status_comes_from_a_real_cell_with_its_reason(tmp_path):
    m = matrix(tmp_path, "ciphers: [faultdes, wrongdes, crashdes, des]\nimplementations: ours\n"
                         "toolchains: [gcc-O3]\ntargets: [host]\nprofile: smoke\n")
    r = lab(tmp_path, *run_args(tmp_path, m, "--timeout", "4"))
    assert r.returncode == 1, r.stderr  # red cells: exit status 1
    assert "Traceback" not in r.stderr
    _, cells = results.read_run(only_run(tmp_path))
    by = {c.cell: c for c in cells}
    want = {"faultdes/broken@gcc-O3@host": ("build_failed", "broken.c"),
            "faultdes/hang@gcc-O3@host": ("timeout", "timed out after"),
            "faultdes/bus@gcc-O3@host": ("crashed", "SIGBUS"),
            "faultdes/garbage@gcc-O3@host": ("measure_failed", "unreadable"),
            "wrongdes/flipbit@gcc-O3@host": ("kat_failed", "known-answer records failed"),
            "crashdes/segv@gcc-O3@host": ("crashed", "SIGSEGV"),
            "des/spbox@gcc-O3@host": ("ok", None)}
    for cell, (status, why) in want.items():
        assert by[cell].status == status, (cell, by[cell].reason)
        if why:
            assert why in by[cell].reason, (cell, by[cell].reason)
    assert by["des/spbox@gcc-O3@host"].measurement.timing  # the good cell was measured all the same
    html = build_report(Lab(), [only_run(tmp_path)], results_dir=tmp_path / "results",
                        reports_dir=tmp_path / "rep").read_text()
    assert not errors_in(html)
    for status, why in want.values():
        assert status in html and (why is None or why in html)


def test_a_slow_first_call_does_not_size_the_samples(tmp_path):
    """faultdes/slowfirst: real DES whose first encryption call in a process takes 2 ms (a page fault, an
    interrupt). Both measuring programs size a sample from the smaller of two readings, so Encrypt-1 still takes
    many calls per sample; sized from the first reading alone it took one, and the process's samples were single
    calls in counter steps (docs/measurement.md, "Found on the way")."""
    m = matrix(tmp_path, "ciphers: [faultdes]\nimplementations: [faultdes/slowfirst]\ntoolchains: [gcc-O3]\n"
                         "targets: [host]\nprofile: smoke\n")
    r = lab(tmp_path, *run_args(tmp_path, m))
    assert r.returncode == 0, r.stderr
    _, (cell,) = results.read_run(only_run(tmp_path))
    assert cell.status == "ok", cell.reason
    first = [next(o for o in p.ops if o.op == "encrypt" and o.n == 1) for p in cell.measurement.cycles]
    assert first and all(o.calls >= 64 for o in first), [o.calls for o in first]  # 20-us samples of ~0.1-us calls
    assert all(p.key_sizes[64]["encrypt"].per_sample >= 64 for p in cell.measurement.timing)


def test_a_missing_compiler_and_an_impossible_target_are_unavailable(tmp_path):
    root = tmp_path / "checkout"  # the lab's data, plus a toolchain whose compiler is not installed
    root.mkdir()
    for name in ("c_src", "targets", "profiles", "dockerfiles", "matrix.yaml"):
        (root / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "toolchains", root / "toolchains")
    (root / "toolchains" / "gcc-missing.yaml").write_text(
        "description: a compiler this machine lacks\ninherits: gcc-O3\ncc: gcc-99-nonexistent\n"
        "package: gcc-99\n")
    (root / "toolchains" / "container-only.yaml").write_text(
        "description: builds for the x86_64 container only\ninherits: gcc-O3\ntargets: [x86_64]\n")
    code = ("import sys; from pathlib import Path; from lab.config import Lab; from lab.run import RunRequest, run;"
            "t = Path(sys.argv[1]); out = run(Lab(root=t / 'checkout', shared=Path(sys.argv[2])),"
            " RunRequest(ciphers=['des'], implementations='default', toolchains=['gcc-missing', 'container-only'],"
            " profile='smoke',"
            " results_dir=t / 'results', build_dir=t / 'build', icount=False)); print(out.run_dir)")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(ROOT.parent / "shared")], cwd=ROOT,
                       capture_output=True, text=True, env=lab_env(tmp_path))
    assert r.returncode == 0, r.stderr
    _, cells = results.read_run(Path(r.stdout.strip().splitlines()[-1]))
    by = {c.toolchain: c for c in cells}
    assert by["gcc-missing"].status == "unavailable"
    assert by["gcc-missing"].reason == \
        "compiler gcc-99-nonexistent not found (toolchain gcc-missing): install gcc-99"
    assert by["container-only"].status == "unavailable"
    assert "builds for x86_64 only" in by["container-only"].reason
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    html = build_report(Lab(root=root, shared=ROOT.parent / "shared"), [run_dir], results_dir=tmp_path / "results",
                        reports_dir=tmp_path / "rep").read_text()
    assert not errors_in(html)
    for c in cells:  # the correctness matrix lists each with its status and reason
        assert f"<td>{c.cell}</td><td class=\"na\">unavailable</td><td>{c.reason}</td>" in html, c.cell


# ------------------------------------------------------------- kill, resume
SLOW = ("ciphers: [des, 3des, idea, rc6, twofish, serpent]\ntoolchains: [gcc-O3, clang-O3]\ntargets: [host]\n"
        "profile: smoke\n")


def _wait_for_cells(run_dirs_of, n: int, proc: subprocess.Popen, limit: float = 300) -> Path:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        dirs = run_dirs_of()
        if dirs and (dirs[0] / "cells.jsonl").exists() and len(cell_lines(dirs[0])) >= n:
            return dirs[0]
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {n} cells: {proc.stderr.read()}")
        time.sleep(0.05)
    raise AssertionError("no cells recorded in time")


def test_sigkill_mid_run_then_resume_records_every_cell_exactly_once(tmp_path):
    m = matrix(tmp_path, SLOW)
    p = start(tmp_path, *run_args(tmp_path, m, "--jobs", "1"))
    run_dir = _wait_for_cells(lambda: results.run_dirs(tmp_path / "results"), 3, p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    before = cell_lines(run_dir)
    meta, _ = results.read_run(run_dir)
    assert meta.status == "running" and len(before) < len(meta.cells_planned)  # killed: no chance to say so
    r = lab(tmp_path, *run_args(tmp_path, m, "--resume"))
    assert r.returncode == 0, r.stderr
    after = cell_lines(run_dir)
    assert after[:len(before)] == before  # nothing recorded was lost or rewritten
    meta, cells = results.read_run(run_dir)
    assert sorted(c.cell for c in cells) == sorted(meta.cells_planned)  # every planned cell, once each
    assert meta.status == "finished" and len(meta.resumed) == 1


def _checkout_measuring_in_batches(tmp: Path, batch: int) -> Path:
    """A checkout (links to this one) whose smoke profile measures `batch` cells at a time, not all in one turn."""
    root = tmp / "checkout"
    root.mkdir()
    (tmp / "shared").symlink_to(ROOT.parent / "shared")  # the vectors beside the checkout
    for name in ("c_src", "targets", "toolchains", "dockerfiles", "java_src", "matrix.yaml"):
        (root / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "profiles", root / "profiles")
    smoke = root / "profiles" / "smoke.yaml"
    text = smoke.read_text()
    assert "  interleave: 0 " in text
    smoke.write_text(text.replace("  interleave: 0 ", f"  interleave: {batch} "))
    return root


def test_ctrl_c_marks_the_run_interrupted_exits_130_and_resume_finishes_it(tmp_path):
    # enough cells that Ctrl-C lands in the middle of the run even at the smoke profile's fraction of a second
    # per cell (two batches of 12; Ctrl-C comes as the first batch's cells are recorded, the second's 12 still
    # to measure: in one turn of all 24 every cell would end in the same last round)
    env = lab_env(tmp_path, CIPHERLAB_ROOT=str(_checkout_measuring_in_batches(tmp_path, 12)))
    m = matrix(tmp_path, "ciphers: [des, idea, rc6, twofish, serpent, mars, cast256, e2, loki97, magenta, dfc, "
                         "saferplus]\ntoolchains: [gcc-O3, clang-O3]\nprofile: smoke\n")
    p = start(tmp_path, *run_args(tmp_path, m, "--jobs", "1"), env=env)
    run_dir = _wait_for_cells(lambda: results.run_dirs(tmp_path / "results"), 1, p)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    meta, cells = results.read_run(run_dir)
    assert meta.status == "interrupted" and len(cells) < len(meta.cells_planned)
    r = lab(tmp_path, *run_args(tmp_path, m, "--resume", meta.run_id), env=env)
    assert r.returncode == 0, r.stderr
    meta, cells = results.read_run(run_dir)
    assert meta.status == "finished" and len(cells) == len(set(c.cell for c in cells)) == len(meta.cells_planned)


def test_a_truncated_last_line_is_dropped_with_a_warning_and_the_cell_measured_again(tmp_path):
    m = matrix(tmp_path, "ciphers: [des, idea]\ntoolchains: [gcc-O3]\nprofile: smoke\n")
    assert lab(tmp_path, *run_args(tmp_path, m)).returncode == 0
    run_dir = only_run(tmp_path)
    lines = cell_lines(run_dir)
    (run_dir / "cells.jsonl").write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # a kill mid-write
    meta = json.loads((run_dir / "run.json").read_text())
    meta["status"] = "running"
    (run_dir / "run.json").write_text(json.dumps(meta))
    r = lab(tmp_path, *run_args(tmp_path, m, "--resume"))
    assert r.returncode == 0, r.stderr
    assert "truncated" in r.stderr
    meta, cells = results.read_run(run_dir)
    assert len(cells) == 2 and meta.status == "finished"
    assert cell_lines(run_dir)[0] == lines[0]


def test_resume_refuses_when_the_sources_changed(tmp_path):
    ciphers = tmp_path / "ciphers"
    shutil.copytree(ROOT / "tests" / "fixtures" / "ciphers" / "crashdes", ciphers / "crashdes")
    env = lab_env(tmp_path, CIPHERLAB_CIPHER_DIRS=str(ciphers))
    m = matrix(tmp_path, "ciphers: [crashdes, des, idea, rc6]\ntoolchains: [gcc-O3, clang-O3]\nprofile: smoke\n")
    p = start(tmp_path, *run_args(tmp_path, m, "--jobs", "1"), env=env)
    _wait_for_cells(lambda: results.run_dirs(tmp_path / "results"), 1, p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    src = ciphers / "crashdes" / "segv.c"
    src.write_text(src.read_text() + "\n/* edited after the run started */\n")
    r = lab(tmp_path, *run_args(tmp_path, m, "--resume"), env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert re.search(r"cannot resume .*sources crashdes/segv@(gcc|clang)-O3@host changed", r.stderr), r.stderr


def _stderr_until(p: subprocess.Popen, text: str) -> str:
    """What the process printed on stderr up to and including the first line holding text."""
    lines = []
    for line in iter(p.stderr.readline, ""):
        lines.append(line)
        if text in line:
            break
    return "".join(lines)


@pytest.mark.parametrize("second", ["local", "dask"])
def test_two_runs_at_once_never_time_each_other(tmp_path, second):
    """A local run and a second run (local, or Dask: its measuring tasks take the same lock) started together:
    no timing of one overlaps a timing of the other, and neither times while a third party holds the lock."""
    from lab.lock import timing_lock

    if second == "dask":
        pytest.importorskip("distributed", reason="the optional Dask extra: pip install -e '.[distributed]'")
    m = matrix(tmp_path, "ciphers: [des, idea, rc6]\ntoolchains: [gcc-O3]\nprofile: smoke\n")
    # the test holds the lock until both runs queue for it, so that they meet there whatever their speed (with
    # warm builds a smoke run measures in a fraction of a second: the second could arrive after the first ended)
    os.environ["CIPHERLAB_LOCK_DIR"] = str(tmp_path / "locks")
    try:
        with timing_lock("holder-test", ROOT, say=lambda s: None):
            a = start(tmp_path, *run_args(tmp_path, m, "--tag", "a"))
            b = start(tmp_path, *run_args(tmp_path, m, "--tag", "b", *(["--executor", "dask"] if second == "dask"
                                                                       else [])))
            queued = {p: _stderr_until(p, "waiting for the timing lock") for p in (a, b)}
            released = time.time()
    finally:
        del os.environ["CIPHERLAB_LOCK_DIR"]
    (_, ea), (_, eb) = a.communicate(timeout=600), b.communicate(timeout=600)
    ea, eb = queued[a] + ea, queued[b] + eb
    assert a.returncode == b.returncode == 0, ea + eb
    assert "waiting for the timing lock: held by run" in queued[a] and "waiting for the timing lock" in queued[b]
    dirs = results.run_dirs(tmp_path / "results")
    assert len(dirs) == 2 and dirs[0].name != dirs[1].name  # ids never collide

    def spans(d: Path) -> list[tuple[float, float]]:
        _, cells = results.read_run(d)
        return [(p.started, p.started + p.seconds) for c in cells for p in [*c.measurement.timing,
                                                                           *c.measurement.cycles]]
    sa, sb = spans(dirs[0]), spans(dirs[1])
    assert len(sa) == len(sb) == 3 * 2 * 2
    assert min(s for s, _ in sa + sb) >= released - 0.5  # nobody timed while the test held the lock
    for s1, e1 in sa:  # no timing of one run overlaps a timing of the other
        for s2, e2 in sb:
            assert e1 <= s2 or e2 <= s1, f"timings overlap: [{s1}, {e1}] and [{s2}, {e2}]"


def test_no_wait_refuses_while_another_run_times(tmp_path):
    from lab.lock import timing_lock

    os.environ["CIPHERLAB_LOCK_DIR"] = str(tmp_path / "locks")
    try:
        with timing_lock("someone-else", ROOT):
            m = matrix(tmp_path, "ciphers: [des]\ntoolchains: [gcc-O3]\nprofile: smoke\n")
            r = lab(tmp_path, *run_args(tmp_path, m, "--no-wait"))
    finally:
        del os.environ["CIPHERLAB_LOCK_DIR"]
    assert r.returncode == 2 and "timing is busy on this machine: run someone-else" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_holder_that_takes_the_lock_again_at_once_cannot_starve_a_waiter(tmp_path, monkeypatch):
    """A benchmark that holds the lock cipher after cipher, letting go for a moment between holds: a waiter
    queues in the kernel and gets it at the next let-go (polling every 2 s, a flag search waited through one hold
    after another of a Java benchmark)."""
    import threading

    from lab.lock import timing_lock

    monkeypatch.setenv("CIPHERLAB_LOCK_DIR", str(tmp_path / "locks"))
    stop, holds, said = threading.Event(), [], []

    def hog():
        while not stop.is_set():
            with timing_lock(f"hog-{len(holds)}", ROOT, say=lambda s: None):
                holds.append(time.monotonic())
                time.sleep(0.5)
            time.sleep(0.02)  # let go for a moment only

    t = threading.Thread(target=hog, daemon=True)
    t.start()
    while not holds:
        time.sleep(0.01)
    t0 = time.monotonic()
    try:
        with timing_lock("waiter", ROOT, say=said.append):
            waited = time.monotonic() - t0
    finally:
        stop.set()
        t.join(10)
    assert said and said[0].startswith("waiting for the timing lock: held by run hog-")
    assert waited < 5, f"waited {waited:.1f} s through {len(holds)} holds"


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    d = tmp_path / "locks"
    d.mkdir()
    (d / "timing.lock").write_text(json.dumps({"pid": 999999, "run_id": "ghost", "started": "yesterday"}))
    m = matrix(tmp_path, "ciphers: [des]\ntoolchains: [gcc-O3]\nprofile: smoke\n")
    r = lab(tmp_path, *run_args(tmp_path, m))
    assert r.returncode == 0 and "taking over the timing lock of run ghost" in r.stderr


# --------------------------------------------------------- results folder
@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders: the full-disk test covers it")
def test_a_results_folder_that_becomes_read_only_loses_nothing(tmp_path):
    m = matrix(tmp_path, SLOW)
    p = start(tmp_path, *run_args(tmp_path, m, "--jobs", "1"))
    run_dir = _wait_for_cells(lambda: results.run_dirs(tmp_path / "results"), 2, p)
    (run_dir / "cells.jsonl").chmod(0o444)
    os.chmod(run_dir, 0o555)
    out, err = p.communicate(timeout=300)
    os.chmod(run_dir, 0o755)
    assert p.returncode == 2 and "cannot write" in err and "Traceback" not in err
    _, cells = results.read_run(run_dir)
    assert len(cells) >= 2


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_disk_that_fills_up_mid_run_loses_nothing_already_written(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        m = matrix(tmp_path, SLOW)
        args = ["--results-dir", str(disk), "--build-dir", str(ROOT / "build" / "test-faults"), "--no-report",
                "--no-icount", "--no-progress"]
        p = start(tmp_path, "run", "--matrix", str(m), "--jobs", "1", *args)
        run_dir = _wait_for_cells(lambda: results.run_dirs(disk), 1, p)
        try:
            (disk / "filler").write_bytes(b"\0" * (400 * 1024))
        except OSError:
            pass  # the disk is full now
        out, err = p.communicate(timeout=300)
        assert p.returncode == 2, err
        assert "No space left on device" in err and "Traceback" not in err and "--resume" in err
        (disk / "filler").unlink()
        _, cells = results.read_run(run_dir)
        assert len(cells) >= 1
        r = lab(tmp_path, "run", "--resume", *args)
        assert r.returncode == 0, r.stderr
        meta, cells = results.read_run(run_dir)
        assert sorted(c.cell for c in cells) == sorted(meta.cells_planned) and meta.status == "finished"
    finally:
        subprocess.run(["umount", "-l", str(disk)])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("args,where", [
    (["run", "--toolchains", "gcc-03"], "did you mean 'gcc-O3'"),
    (["run", "--ciphers", "rijndeal"], "did you mean 'rijndael'"),
    (["run", "--profile", "quik"], "did you mean 'quick'"),
    (["run", "--targets", "sparc"], "did you mean 'sparc64'"),
    (["run", "--implementations", "rijndael/tttable"], "did you mean 'ttable'"),
    (["run", "--jobs", "zero"], "option --jobs: 'zero' is not a number"),
    (["run", "--matrix", "/nonexistent/m.yaml"], "option --matrix: /nonexistent/m.yaml does not exist"),
    (["verify", "des", "/nonexistent.kat"], "/nonexistent.kat does not exist"),
    (["report", "--runs", "no-such-run", "--results-dir", "/tmp"], "no run 'no-such-run'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_usage_errors_are_one_line_exit_2_no_traceback(tmp_path, args, where):
    r = lab(tmp_path, *args)
    assert r.returncode == 2, r.stderr
    assert where in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2


@pytest.mark.parametrize("name,text,key,problem", [
    ("toolchains/bad-key.yaml", "description: d\ninherits: gcc-O3\nflgs: [-O2]\n", "flgs", "unknown key"),
    ("toolchains/bad-yaml.yaml", "description: [unclosed\n", None, "not valid YAML"),
    ("toolchains/bad-type.yaml", "description: d\ninherits: gcc-O3\nflags: -O2\n", "flags", "valid list"),
    ("toolchains/bad-cycle.yaml", "description: d\ninherits: bad-cycle\n", "inherits", "inheritance cycle"),
    ("profiles/bad.yaml", "name: bad\ndescription: d\ncycles: {sizes: [1]}\n", "sampling", "missing"),
    ("targets/bad.yaml", "name: other\n", "name", "must equal the file name"),
])
def test_every_kind_of_bad_yaml_names_file_key_and_fix_at_start(tmp_path, name, text, key, problem):
    """A broken file the run does not even use still stops the lab at start, with one clear message."""
    root = tmp_path / "checkout"
    root.mkdir()
    for d in ("c_src", "dockerfiles", "matrix.yaml", "toolchains", "targets", "profiles"):
        if d in ("toolchains", "targets", "profiles"):
            shutil.copytree(ROOT / d, root / d)
        else:
            (root / d).symlink_to(ROOT / d)
    (root / name).write_text(text)
    r = lab(tmp_path, "validate", env=lab_env(tmp_path, CIPHERLAB_ROOT=str(root)))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert name in r.stderr and problem in r.stderr
    if key:
        assert f"key '{key}'" in r.stderr
    assert "Fix:" in r.stderr


def test_debug_shows_the_traceback(tmp_path):
    r = lab(tmp_path, "run", "--toolchains", "gcc-03", "--debug")
    assert r.returncode == 2 and "Traceback" in r.stderr


def test_invoke_gives_the_same_clean_errors(tmp_path):
    r = subprocess.run([str(Path(sys.executable).parent / "invoke"), "matrix.run", "--toolchains", "gcc-03"],
                       cwd=ROOT, capture_output=True, text=True, env=lab_env(tmp_path))
    assert r.returncode == 2 and "did you mean 'gcc-O3'" in r.stderr and "Traceback" not in r.stderr
