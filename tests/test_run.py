"""End to end on the host: a wrong and a crashing implementation become red
cells, the rest of the run completes and is measured, results load into a
tidy DataFrame, and the report is rebuilt from the stored results."""

import re

from lab import results
from lab.publish import build_report


def test_every_planned_cell_is_recorded_with_its_status(small_run):
    meta, cells = results.read_run(small_run)
    assert meta.version == results.VERSION and meta.finished and meta.status == "finished"
    status = {c.cell: c.status for c in cells}
    assert set(status) == set(meta.cells_planned)
    assert len(status) == 7  # 4 ciphers x 2 toolchains, minus one excluded cell
    assert "idea/ref@clang-O3@host" not in status
    for tc in ("gcc-O3", "clang-O3"):
        assert status[f"des/sp64@{tc}@host"] == "ok"
        assert status[f"wrongdes/flipbit@{tc}@host"] == "kat_failed"
        assert status[f"crashdes/segv@{tc}@host"] == "crashed"
    assert status["idea/ref@gcc-O3@host"] == "ok"


def test_failed_cells_say_why_and_are_not_timed(small_run):
    _, cells = results.read_run(small_run)
    by = {c.cell: c for c in cells}
    wrong = by["wrongdes/flipbit@gcc-O3@host"]
    assert "known-answer records failed" in wrong.reason
    assert wrong.kat.failed > 0 and wrong.kat.fails[0]["expected"] != wrong.kat.fails[0]["got"]
    assert wrong.measurement is None
    crash = by["crashdes/segv@gcc-O3@host"]
    assert "SIGSEGV" in crash.reason
    assert crash.measurement is None


def test_measured_cells_carry_provenance_and_raw_samples(small_run):
    meta, cells = results.read_run(small_run)
    des = next(c for c in cells if c.cell == "des/sp64@gcc-O3@host")
    assert des.kat.passed == des.kat.records > 0
    m = des.measurement
    sampling = meta.profile["sampling"]
    assert len(m.timing) == len(m.cycles) == sampling["min_processes"]  # smoke: min = max processes
    assert len(m.timing[0].key_sizes[64]["encrypt"].ns) == sampling["samples"]
    assert des.build.cflags[:1] == ["-O3"] and des.build.compiler_version.startswith("gcc")
    assert m.counter in ("x86-tsc-lfence", "clock-monotonic")
    assert meta.machine["cpu_model"] and meta.git is not None
    assert "clang" in meta.toolchains["clang-O3"]["version"].lower()


def test_long_dataframe(small_run):
    df = results.load(small_run)
    assert list(df.columns) == list(results.COLUMNS)
    des = df[(df.cell == "des/sp64@gcc-O3@host")]
    enc = des[(des.metric == "encrypt_speed") & (des.key_size == 64)]
    assert len(enc) == 1 and enc.iloc[0].value > 0 and enc.iloc[0].unit == "Kbit/s"
    per_block = des[des.metric == "encrypt_per_block"]
    assert sorted(per_block.n_blocks) == [1, 16, 128]
    assert set(df[df.status == "kat_failed"].metric) <= {"kat_passed", "kat_failed", "table_bytes",
                                                         "key_schedule_bytes", "code_bytes"}
    cells = results.load_cells(small_run)
    assert (cells.status == "ok").sum() == 3


def test_report_is_rebuilt_from_stored_results(fixture_lab, small_run, tmp_path):
    index = build_report(fixture_lab, [small_run], results_dir=small_run.parent, reports_dir=tmp_path)
    html = index.read_text()
    assert "Enc128" in html and "EKey" in html and "Encrypt-128" in html
    assert "not measured" in html and "kat_failed" in html and "SIGSEGV" in html
    assert "<svg" in html
    # self-contained: nothing is fetched from the network
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "url(http" not in html and "@import" not in html
    assert (tmp_path / "latest" / "index.html").exists()
    assert (index.parent / "results.parquet").exists()


def test_the_imitating_toolchains_record_their_flags_and_meet_their_1999_tables(lab, build_dir, tmp_path):
    """icc-like and gcc-djgpp1999 through a whole run: every cell passes and is measured, each build records the
    flags its toolchain file promises, and the report compares gcc-djgpp1999 with NIST's two DJGPP tables."""
    from lab.run import RunRequest, run

    from .html_tables import find

    m = tmp_path / "matrix.yaml"
    m.write_text("ciphers: [rijndael, rc6, serpent, twofish, mars]\nimplementations: default\n"
                 "toolchains: [icc-like, gcc-djgpp1999]\ntargets: [host]\nprofile: smoke\n")
    out = run(lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=build_dir, icount=False))
    meta, cells = results.read_run(out.run_dir)
    assert len(cells) == 10 and {c.status for c in cells} == {"ok"}, [(c.cell, c.reason) for c in cells]
    assert all(c.measurement and c.measurement.timing for c in cells)
    for c in cells:
        if c.toolchain == "icc-like":  # clang with -xHost, unrolling and whole-program optimisation
            assert {"-O3", "-march=native", "-funroll-loops", "-fomit-frame-pointer", "-flto"} <= set(c.build.cflags)
            assert "-flto" in c.build.ldflags and "clang" in c.build.compiler_version.lower()
        else:  # gcc with NIST's Appendix B flags, -mcpu=pentiumpro become -mtune=core2 on x86-64
            assert c.build.cflags[:4] == ["-O2", "-std=c11", "-pedantic", "-fomit-frame-pointer"]
            assert "-mtune=core2" in c.build.cflags and "-O3" not in c.build.cflags
            assert c.build.compiler_version.lower().startswith("gcc")
    html = build_report(lab, [out.run_dir], results_dir=tmp_path / "results", reports_dir=tmp_path / "r").read_text()
    taus = find(html, "taus")[0]
    rows = {r[2].text.split(":")[0]: r for r in taus.rows if r[1].text == "gcc-djgpp1999"}
    assert set(rows) == {"A.1-5", "A.1-6"}
    for r in rows.values():
        assert int(r[5].text) == 5 and -1 <= float(r[3].text) <= 1
    assert not [r for r in taus.rows if r[1].text == "icc-like"]
    assert "Toolchains without a 1999 counterpart, not compared: icc-like" in html
