"""End to end on the host: a wrong and a crashing implementation become red
cells, the rest of the run completes and is measured, results load into a
tidy DataFrame, and the report is rebuilt from the stored results."""

import re
from pathlib import Path

from lab import results
from lab.report import build_report


def test_every_planned_cell_is_recorded_with_its_status(small_run):
    meta, cells = results.read_run(small_run)
    assert meta.version == results.VERSION and meta.finished and meta.status == "finished"
    status = {c.cell: c.status for c in cells}
    assert set(status) == set(meta.cells_planned)
    assert len(status) == 7  # 4 ciphers x 2 toolchains, minus one excluded cell
    assert "idea/ref@clang-O3@host" not in status
    for tc in ("gcc-O3", "clang-O3"):
        assert status[f"des/spbox@{tc}@host"] == "ok"
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
    des = next(c for c in cells if c.cell == "des/spbox@gcc-O3@host")
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
    des = df[(df.cell == "des/spbox@gcc-O3@host")]
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
