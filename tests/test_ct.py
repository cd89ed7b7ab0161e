"""The constant-time check (issue 23) with real builds, the real plugin under real QEMU, no mocks.

Planted leaks (tests/fixtures/ciphers/ctserpent/plant.c: real bitsliced Serpent plus one secret-dependent branch
or table index after it) are caught with their source line; T-table Rijndael is a memory-address leak; bitsliced
Serpent, RC6 and AES-NI on x86-64 pass; a verdict repeats exactly; sparc64 and mips64 are checked in their
containers (the static ct programs run under this machine's qemu-<arch> and plugin, addr2line in the image)."""

from __future__ import annotations

import numpy as np
import pytest

from lab import ct, ctcheck
from lab.plan import Cell

from .conftest import ROOT, image_or_skip

PLANT = ROOT / "tests" / "fixtures" / "ciphers" / "ctserpent" / "plant.c"


def planted_line(marker: str) -> int:
    return next(i for i, line in enumerate(PLANT.read_text().splitlines(), 1) if marker in line)


def cells(lab, names: list[str], toolchain: str, target: str) -> list[Cell]:
    profile = lab.profile("smoke")
    out = []
    for n in names:
        cipher, _, impl = n.partition("/")
        im = lab.cipher(cipher).impl(impl)
        out.append(Cell(im, lab.toolchain(toolchain), lab.target(target), im.key_bits[:1], profile))
    return out


def checked(lab, names, toolchain, target, build_dir, dudect=0) -> dict[str, ctcheck.CellCheck]:
    be = ctcheck.ct_backend(lab, build_dir)
    try:
        be.prepare([lab.target(target)])
        got = ctcheck.check_cells(lab, cells(lab, names, toolchain, target), be, build_dir=build_dir, jobs=2,
                             dudect_measurements=dudect)
    finally:
        be.close()
    return {c.impl: c for c in got}


HOST = ["ctserpent/clean", "ctserpent/branch", "ctserpent/table", "rijndael/ttable", "serpent/bitslice",
        "rc6/ref", "rijndael/aesni"]


@pytest.fixture(scope="module")
def host(fixture_lab, build_dir, host_plugin):
    return checked(fixture_lab, HOST, "gcc-O3", "host", build_dir)


def test_a_planted_secret_dependent_branch_is_caught_with_its_source_line(host):
    v = host["ctserpent/branch"].verdict
    assert v.verdict == "leak", v
    enc = next(o for o in v.ops if o.op == "encrypt")
    assert enc.verdict == "leak" and enc.control_differs
    d = enc.divergence
    assert d is not None and d.kind == "branch"
    assert d.location == f"tests/fixtures/ciphers/ctserpent/plant.c:{planted_line('PLANTED BRANCH')}", d
    assert d.function == "enc_branch"
    assert [o.op for o in v.leaking_ops] == ["encrypt"]  # key setup and decryption are the real Serpent's


def test_a_planted_secret_dependent_table_index_is_caught_with_its_source_line(host):
    v = host["ctserpent/table"].verdict
    assert v.verdict == "leak" and [o.op for o in v.leaking_ops] == ["encrypt"]
    enc = v.leaking_ops[0]
    assert enc.memory_differs and not enc.control_differs
    d = enc.divergence
    assert d is not None and d.kind == "memory" and d.detail.startswith("load of 1 byte")
    assert d.location == f"tests/fixtures/ciphers/ctserpent/plant.c:{planted_line('PLANTED TABLE INDEX')}", d
    assert host["ctserpent/table"].refutes_claim  # its cipher.yaml claims constant time


def test_t_table_rijndael_is_a_memory_address_leak_in_its_round_code(host):
    v = host["rijndael/ttable"].verdict
    assert v.verdict == "leak"
    enc = next(o for o in v.ops if o.op == "encrypt")
    assert enc.verdict == "leak" and enc.memory_differs and not enc.control_differs
    assert enc.divergence.kind == "memory" and enc.divergence.location.startswith("c_src/ciphers/rijndael/ttable.c:")
    assert not host["rijndael/ttable"].refutes_claim  # it claims constant_time: false


@pytest.mark.parametrize("name", ["ctserpent/clean", "serpent/bitslice", "rc6/ref", "rijndael/aesni"])
def test_constant_time_code_passes_on_x86_64(host, name):
    v = host[name].verdict
    assert v.verdict == "clean", host[name].lines()
    assert {o.op for o in v.ops} == {"ekey", "dkey", "encrypt", "decrypt"} and all(o.inputs == 8 for o in v.ops)


def test_the_verdict_is_the_same_on_two_runs(fixture_lab, host, build_dir):
    again = checked(fixture_lab, ["ctserpent/branch", "rijndael/ttable", "serpent/bitslice"], "gcc-O3", "host",
                    build_dir)
    for name, c in again.items():
        assert c.verdict == host[name].verdict, name


def test_dudect_runs_on_the_host_with_its_stated_measurements(fixture_lab, build_dir, host_plugin):
    c = checked(fixture_lab, ["rijndael/ttable"], "gcc-O3", "host", build_dir, dudect=2000)["rijndael/ttable"]
    d = c.verdict.dudect
    assert d is not None and d.verdict in ("clean", "leak") and d.threshold == 4.5
    assert {(o.op, o.measurements) for o in d.ops} == {("ekey", 198), ("dkey", 198), ("encrypt", 1980),
                                                      ("decrypt", 1980)}
    assert all(np.isfinite(o.t) and (o.verdict == "leak") == (o.t > 4.5) for o in d.ops)


def test_welch_t_with_cropping_separates_a_shift_from_noise():
    rng = np.random.default_rng(1)
    classes = rng.integers(0, 2, 20000)
    same = rng.gamma(4.0, 25.0, 20000) + 100
    assert ct.welch_t(same, classes) < 4.5
    shifted = same + 3.0 * classes  # 3 units on a spread of 50: invisible per sample, plain over 20,000
    assert ct.welch_t(shifted, classes) > 4.5
    # 40 interrupts of 0.1-1 ms hide the shift from the uncropped test; the cropped ones still see it
    spiky = shifted.copy()
    spiky[rng.choice(20000, 40, replace=False)] += rng.uniform(1e5, 1e6, 40)
    assert ct.welch_t(spiky, classes, percentiles=0) < 4.5 < ct.welch_t(spiky, classes)


def test_first_divergence_tells_a_branch_from_an_address():
    a = np.array([[0x10, 0], [0x14, 0], [0x800, 1 | 2 << 8], [0x18, 0]], dtype=np.uint64)
    b = a.copy()
    b[2, 0] = 0x808
    assert ct.first_divergence(a, b)[:3] == ("memory", 2, 0x14)
    c = a.copy()
    c[3, 0] = 0x40
    assert ct.first_divergence(a, c)[:3] == ("branch", 3, 0x14)


@pytest.mark.parametrize("target", ["sparc64", "mips64"])
def test_big_endian_targets_are_checked_in_their_containers(fixture_lab, build_dir, target, host_plugin):
    image_or_skip(target)
    got = checked(fixture_lab, ["ctserpent/clean", "ctserpent/table"], "gcc-O3", target, build_dir)
    assert got["ctserpent/clean"].verdict.verdict == "clean", got["ctserpent/clean"].lines()
    v = got["ctserpent/table"].verdict
    assert v.verdict == "leak" and [o.op for o in v.leaking_ops] == ["encrypt"], got["ctserpent/table"].lines()
    d = v.leaking_ops[0].divergence
    assert d.kind == "memory"
    assert d.location == f"tests/fixtures/ciphers/ctserpent/plant.c:{planted_line('PLANTED TABLE INDEX')}", d


def test_the_command_exits_1_on_a_leak_with_its_file_line_and_0_when_clean(build_dir, capsys, host_plugin):
    from lab import cli

    assert cli.main(["ct", "rijndael", "--impl", "ttable,aesni", "--dudect", "0", "--quick-gate",
                     "--build-dir", str(build_dir)]) == 1
    out = capsys.readouterr().out
    assert "rijndael/ttable@gcc-O3@host: LEAK (claimed not constant time)" in out
    assert "encrypt 128: secret-dependent memory access at c_src/ciphers/rijndael/ttable.c:" in out
    assert "rijndael/aesni@gcc-O3@host: CLEAN (claimed constant time)" in out
    assert out.strip().splitlines()[-1] == "2 cells: 1 clean, 1 leak, 0 unavailable"
    assert cli.main(["ct", "rc6", "--dudect", "0", "--build-dir", str(build_dir)]) == 0


def test_a_peer_with_fewer_key_sizes_than_its_cipher_is_checked_at_those_it_has(build_dir, capsys, host_plugin):
    """libmcrypt's LOKI97 takes 256-bit keys only: the trace check and dudect run at 256 instead of failing on
    the cipher's 128 ("the trace run failed: exit status 2" before)."""
    from lab import cli

    assert cli.main(["ct", "loki97", "--impl", "mcrypt", "--dudect", "200", "--quick-gate",
                     "--build-dir", str(build_dir)]) == 1
    out = capsys.readouterr().out
    assert "loki97/mcrypt@gcc-O3@host: LEAK (no claim); dudect max |t|" in out, out
    assert "ekey 256: secret-dependent" in out and "ekey 128" not in out, out


def test_a_peer_that_needs_its_environment_gets_it(build_dir, capsys, host_plugin):
    """OpenSSL's vector-permute AES exists only in a process whose OPENSSL_ia32cap masks AES-NI (peer.yaml env):
    the check runs it there (it was 'unavailable on this CPU' while the ct programs ran without the env)."""
    from lab import cli

    assert cli.main(["ct", "rijndael", "--impl", "openssl_vpaes,openssl_noaesni", "--dudect", "0", "--quick-gate",
                     "--build-dir", str(build_dir)]) == 1
    out = capsys.readouterr().out
    assert "rijndael/openssl_vpaes@gcc-O3@host: CLEAN (claimed constant time)" in out, out  # pshufb, no table
    assert "rijndael/openssl_noaesni@gcc-O3@host: LEAK (no claim)" in out, out      # its T-tables


def test_a_matrix_run_with_ct_records_the_verdicts_loads_them_and_reports_the_matrix(fixture_lab, tmp_path, host_plugin):
    """--ct: the one cell pipeline checks every verified cell (trace in prepare, dudect with the measuring);
    the records carry the verdict, results.load and load_cells its columns, the report its matrix with the
    first divergence on hover and the refuted claims (ctserpent/branch claims constant time)."""
    from lab import results
    from lab.progress import Progress
    from lab.publish import build_report
    from lab.report import errors_in
    from lab.run import RunRequest, run

    from .html_tables import find

    out = run(fixture_lab, RunRequest(ciphers=["ctserpent", "rc6"], implementations=["ctserpent/branch", "rc6/ref"],
                                      toolchains=["gcc-O3"], profile="smoke", icount=False, ct=True,
                                      results_dir=tmp_path / "results", build_dir=ROOT / "build" / "test-ct-run"),
              Progress(0, "quiet"))
    assert out.counts == {"ok": 2}
    _, recs = results.read_run(out.run_dir)
    by = {r.implementation: r for r in recs}
    assert by["branch"].ct.verdict == "leak" and by["ref"].ct.verdict == "clean"
    assert by["ref"].ct.dudect is not None and by["ref"].ct.dudect.ops  # dudect ran, on this machine's CPU
    assert "ct" in by["branch"].stages and "dudect" in by["ref"].stages
    df = results.load(out.run_dir, tmp_path / "results")
    row = df[(df.implementation == "branch") & (df.metric == "encrypt_speed")].iloc[0]
    assert row.ct_trace == "leak" and f"plant.c:{planted_line('PLANTED BRANCH')}" in row.ct_divergence
    cells = results.load_cells(out.run_dir, tmp_path / "results")
    assert set(cells.ct_trace) == {"leak", "clean"} and cells.ct_dudect_t.notna().all()
    html = build_report(fixture_lab, [out.run_dir], results_dir=tmp_path / "results",
                        reports_dir=tmp_path / "reports").read_text()
    assert not errors_in(html)
    (table,) = find(html, "ct-matrix", section="constant-time")
    rows = {r[0].text: r for r in table.rows}
    branch, ref = (cells[cells.implementation == i].row.iloc[0] for i in ("branch", "ref"))
    assert rows[branch][1].text == "yes" and rows[branch][2].text.startswith("leak")
    assert "plant.c:" in rows[branch][2].title and rows[ref][2].text == "clean"
    assert "refuted here" in html and branch in html.split("refuted here")[1][:200]


def test_a_host_cell_without_a_plugin_says_why_it_could_not_be_built(fixture_lab, tmp_path, monkeypatch):
    """The mixed backend runs a host cell's trace on this machine: the plugin it passes is the host's, never the
    path that exists only inside the images (QEMU would fail to load it with no hint); when the host's cannot be
    built, the cell is unavailable with the build's one-line reason."""
    from lab import qemu_plugin
    from lab.backends import host as host_backend
    from lab.backends.container import PLUGIN_IN_IMAGE
    from lab.backends.mixed import MixedBackend

    monkeypatch.delenv("CIPHERLAB_QEMU_PLUGIN", raising=False)
    plugin = tmp_path / "qemu-plugin" / "libicount.so"
    monkeypatch.setattr(host_backend, "HOST_PLUGIN", plugin)  # a checkout whose plugin was never copied out
    monkeypatch.setattr(qemu_plugin, "built_plugin", lambda root: None)  # ... nor built, and cannot be:

    def cannot(root, say):
        raise qemu_plugin.PluginBuildError("building the QEMU plugin: apt-get update failed (exit 100): offline")
    monkeypatch.setattr(qemu_plugin, "build_plugin", cannot)
    monkeypatch.setattr(qemu_plugin, "_failed", {})
    be = MixedBackend(fixture_lab, build_dir=tmp_path / "b", progress=lambda s: None)
    host, sparc = fixture_lab.target("host"), fixture_lab.target("sparc64")
    assert be.plugin_path(host) is None
    assert be.plugin_path(sparc) == PLUGIN_IN_IMAGE  # the image's plugin, for the programs run in the image
    assert be.plugin_path(fixture_lab.target("sparc64-trixie")) is None  # an image without one: none at all
    got = ctcheck.check_cells(fixture_lab, cells(fixture_lab, ["rc6/ref"], "gcc-O3", "host"), be,
                         build_dir=tmp_path / "b", jobs=1, dudect_measurements=0)
    v = got[0].verdict
    assert v.verdict == "unavailable" and "apt-get update failed (exit 100): offline" in v.reason, v
    plugin.parent.mkdir(parents=True)
    plugin.write_bytes(b"")
    assert be.plugin_path(host) == str(plugin)
    be.close()
