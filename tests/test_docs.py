"""The documentation: the site builds with `mkdocs build --strict` (no warning, no dead link), a dead link fails it,
and docs/benchmarks.md is what the stored benchmark results give (the latest result per benchmark and machine)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from lab.bench import store
from lab.docsite import benchmarks, site

ROOT = Path(__file__).resolve().parent.parent


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        for v in item.values():
            out += _nav_pages(v) if isinstance(v, list) else [v]
    return out


def test_the_site_builds_strict_with_every_page_in_its_navigation(tmp_path):
    said: list[str] = []
    assert site.build(ROOT, tmp_path / "site", say=said.append, write_benchmarks=False) == 0, said
    pages = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    assert sorted(pages) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))  # no page left out
    for page in pages:
        assert (tmp_path / "site" / ("" if page == "index.md" else page[:-3]) / "index.html").is_file(), page
    assert (tmp_path / "site" / "img" / "report.png").is_file()


def test_a_dead_link_fails_the_build(tmp_path):
    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root)
    page = root / "docs" / "ci.md"
    page.write_text(page.read_text() + "\nSee [the missing page](missing.md).\n")
    said: list[str] = []
    assert site.build(root, tmp_path / "site", say=said.append, write_benchmarks=False) != 0
    assert any("missing.md" in s for s in said), said


def test_the_benchmarks_page_is_current():
    said: list[str] = []
    assert benchmarks.write(ROOT, check=True, say=said.append) == 0, said


def _scale(date: str, cpu: str, speedup: float, dask: float) -> dict:
    return {"format": "cipherlab-bench-scale", "date": date, "machine": {"cpu_model": cpu, "cores": 2},
            "rows": [{"executor": "local", "seconds": 10.0}, {"executor": "dask", "seconds": dask}],
            "speedup": speedup}


def test_the_page_shows_the_latest_result_of_each_machine_kind(tmp_path):
    (tmp_path / "docs").mkdir()
    quiet = lambda s: None  # noqa: E731
    store(tmp_path, _scale("2030-01-01T00:00:00+00:00", "CPU A", 1.67, 6.0), "scale", say=quiet)
    store(tmp_path, _scale("2030-01-02T00:00:00+00:00", "CPU A", 1.9, 5.3), "scale", say=quiet)
    store(tmp_path, _scale("2029-12-31T00:00:00+00:00", "CPU B", 1.2, 8.3), "scale", say=quiet)
    assert benchmarks.write(tmp_path, say=quiet) == 0
    rows = [ln for ln in (tmp_path / benchmarks.PAGE).read_text().splitlines() if ln.startswith("| `bench.scale`")]
    assert rows == [
        "| `bench.scale` | CPU A, 2 cores | 2030-01-02 | local 10.0 s, dask 5.3 s: speed-up 1.9× | "
        "`bench/results/scale.jsonl`, `scale-2030-01-02T0000` |",
        "| `bench.scale` | CPU B, 2 cores | 2029-12-31 | local 10.0 s, dask 8.3 s: speed-up 1.2× | "
        "`bench/results/scale.jsonl`, `scale-2029-12-31T0000` |"]
    assert benchmarks.write(tmp_path, check=True, say=quiet) == 0
    store(tmp_path, _scale("2030-01-03T00:00:00+00:00", "CPU B", 1.5, 6.7), "scale", say=quiet)
    assert benchmarks.write(tmp_path, check=True, say=quiet) == 1  # a new result makes the page stale


def test_every_relative_link_of_the_readme_exists():
    import re

    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", (ROOT / "README.md").read_text())
    local = [x for x in links if not re.match(r"[a-z]+://", x)]
    assert len(local) >= 15 and "docs/img/report.png" in local
    assert [x for x in local if not (ROOT / x).exists()] == []


def test_the_readme_layout_lists_everything_at_the_root():
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {p.split("/")[0] for p in tracked.splitlines()} - {".gitignore"}
    layout = (ROOT / "README.md").read_text().split("## Layout", 1)[1].split("```")[1]
    listed = {ln.split()[0].split("/")[0] for ln in layout.splitlines() if ln.strip() and not ln.startswith(" ")}
    assert top and top <= listed, f"at the root but not in the README's layout: {sorted(top - listed)}"
    assert listed <= top, f"in the README's layout but not at the root: {sorted(listed - top)}"


def test_aa_results_one_row_per_condition_and_a_rejudgement_replaces_the_first(tmp_path):
    (tmp_path / "docs").mkdir()
    quiet = lambda s: None  # noqa: E731

    def aa(date, runs, condition, beyond, power):
        return {"format": "cipherlab-bench-aa", "date": date, "machine": {"cpu_model": "CPU A", "cores": 2},
                "runs": runs, "pairs": len(runs) // 2, "quantities": 100, "condition": condition,
                "held_out": {"beyond": beyond, "sd_z": 1.0, "run_noise": 0.005},
                "calibrated": {"aa_no_change": 0.98, "planted": {"factor": 1.03, "power": power,
                                                                 "others_changed": 0.01}}}
    store(tmp_path, aa("2030-01-01T00:00:00+00:00", ["a", "b"], None, 0.2, 0.1), "aa", say=quiet)
    store(tmp_path, aa("2030-01-02T00:00:00+00:00", ["a", "b"], "loaded: others", 0.08, 0.15), "aa", say=quiet)
    newer = aa("2030-01-03T00:00:00+00:00", ["c", "d"], "quiet", 0.05, 0.8)
    newer["held_out"].update(robust_sd_z=0.93, within_scale=0.75)  # a fit at the machine's reference speed
    store(tmp_path, newer, "aa", say=quiet)
    benchmarks.write(tmp_path, say=quiet)
    rows = [ln for ln in (tmp_path / benchmarks.PAGE).read_text().splitlines() if ln.startswith("| `bench.aa`")]
    assert [r.split(" | ")[1] for r in rows] == ["CPU A, 2 cores (loaded)", "CPU A, 2 cores (quiet)"]
    assert "held out: 8.00 % beyond" in rows[0] and "power on a planted 3.00 % 15.00 %" in rows[0]
    assert "held out: 5.00 % beyond" in rows[1] and "A/A no change 98.00 %" in rows[1]
    assert "sd of z 1.00 (robust 0.93)" in rows[1] and "within-run parts x 0.75" in rows[1]
    assert "robust" not in rows[0] and "within-run" not in rows[0]  # older results say what they had


def test_the_compiler_matrix_and_plain_ct_results_share_a_file_and_get_a_row_each(tmp_path):
    (tmp_path / "docs").mkdir()
    quiet = lambda s: None  # noqa: E731
    m = {"cpu_model": "CPU A", "cores": 2}
    store(tmp_path, {"format": "cipherlab-bench-ct", "date": "2030-01-01T00:00:00+00:00", "machine": m,
                     "targets": ["host"], "summary": {"cells": 4, "verdicts": {"clean": 3, "leak": 1}},
                     "wall_seconds": {"host": 10.0}}, "ct", say=quiet)
    store(tmp_path, {"format": "cipherlab-bench-ct-compilers", "date": "2030-01-02T00:00:00+00:00", "machine": m,
                     "implementations": ["a/x", "b/y"], "levels": ["-O1", "-O2"], "targets": ["host"],
                     "summary": {"cells": 16, "verdicts": {"clean": 15, "leak": 1},
                                 "compiler_made_leaks": ["a/x@gcc-12-O2@host"], "blamed": 1,
                                 "blames_with_a_pass": 1}, "wall_seconds": {"host": 600.0}}, "ct", say=quiet)
    benchmarks.write(tmp_path, say=quiet)
    page = (tmp_path / benchmarks.PAGE).read_text().splitlines()
    plain = [ln for ln in page if ln.startswith("| `bench.ct` |")]
    matrix = [ln for ln in page if ln.startswith("| `bench.ct --compilers` |")]
    assert len(plain) == 1 and "4 cells on host" in plain[0] and "2030-01-01" in plain[0]
    assert len(matrix) == 1 and "16 cells (2 implementations" in matrix[0] and "compiler-made leaks 1" in matrix[0]
    assert "600 s" in matrix[0] and "`bench/results/ct.jsonl`" in matrix[0]


def test_the_compiler_matrix_gets_a_row_per_set_of_targets_and_a_part_way_result_gives_way(tmp_path):
    """bench.ct --compilers stores its result after each target: the part-way results of one sweep give way to the
    whole, and sweeps of other targets keep their own rows (a sweep of sparc64 does not hide the host's)."""
    (tmp_path / "docs").mkdir()
    quiet = lambda s: None  # noqa: E731

    def sweep(date, targets, cells):
        return {"format": "cipherlab-bench-ct-compilers", "date": date, "machine": {"cpu_model": "CPU A", "cores": 2},
                "implementations": ["a/x"], "levels": ["-O2"], "targets": targets,
                "summary": {"cells": cells, "verdicts": {"clean": cells}, "compiler_made_leaks": [], "blamed": 0,
                            "blames_with_a_pass": 0}, "wall_seconds": {t: 1.0 for t in targets}}
    store(tmp_path, sweep("2030-01-01T00:00:00+00:00", ["host"], 8), "ct", say=quiet)
    store(tmp_path, sweep("2030-01-02T00:00:00+00:00", ["mips64"], 2), "ct", say=quiet)
    store(tmp_path, sweep("2030-01-02T00:00:00+00:00", ["mips64", "sparc64"], 4), "ct", say=quiet)
    benchmarks.write(tmp_path, say=quiet)
    rows = [ln for ln in (tmp_path / benchmarks.PAGE).read_text().splitlines()
            if ln.startswith("| `bench.ct --compilers` |")]
    assert len(rows) == 2, rows
    assert any("8 cells" in r and "on host" in r for r in rows)
    assert any("4 cells" in r and "on mips64, sparc64" in r for r in rows)


def test_the_main_job_and_test_repeat_rows_say_their_own_figures(tmp_path):
    """bench.mainjob's row gives cold and warm each their own figures (run, report, Chromium, precision);
    test.repeat's gives each set of files a row with its runs, failures, seconds and the compiles beside them."""
    (tmp_path / "docs").mkdir()
    quiet = lambda s: None  # noqa: E731
    m = {"cpu_model": "CPU A", "cores": 2}

    def job(run, report, share, browser):
        return {"run_seconds": run, "report_seconds": report, "cells": 7, "precision": {"share_met": share},
                "browser": {"seconds": browser}}
    store(tmp_path, {"format": "cipherlab-bench-mainjob", "date": "2030-01-01T00:00:00+00:00", "machine": m,
                     "cold": job(300.4, 20.0, 0.9, 3.25), "warm": job(80.0, 9.6, 0.95, 2.0)}, "mainjob", say=quiet)
    for files, fail in ((["tests/test_a.py"], {}), (["tests/test_b.py::t"], {"tests/test_b.py::t": {"failed": 1,
                                                                                                   "runs": 3}}),
                        ("the whole suite", {})):  # as test.repeat stores a run of the whole suite
        store(tmp_path, {"format": "cipherlab-bench-test-repeat", "date": "2030-01-01T00:00:00+00:00", "machine": m,
                         "files": files, "failures": fail, "load": {"compiles": 12},
                         "per_run": [{"seconds": 10.2}, {"seconds": 31.0}, {"seconds": 12.0}]}, "test-repeat",
              say=quiet)
    benchmarks.write(tmp_path, say=quiet)
    page = (tmp_path / benchmarks.PAGE).read_text().splitlines()
    (main,) = [ln for ln in page if ln.startswith("| `bench.mainjob` |")]
    assert ("cold 300 s + report 20 s, laid out in Chromium in 3.2 s, 7 cells, precision met 90.00 %; "
            "warm 80 s + report 10 s, laid out in Chromium in 2.0 s, 7 cells, precision met 95.00 %") in main
    rows = [ln for ln in page if ln.startswith("| `test.repeat` |")]
    assert len(rows) == 3
    assert "| the whole suite: 3 runs, failures: none" in rows[0]  # not its letters one by one
    assert "test_a.py: 3 runs, failures: none; 10-31 s a run; 12 compiles beside them" in rows[1]
    assert "test_b.py::t: 3 runs, failures: tests/test_b.py::t 1 of 3" in rows[2]


def test_bench_placement_gets_a_row_per_cell(tmp_path):
    """Each cell bench.placement measured keeps its own row: a later result of another cell does not hide it."""
    (tmp_path / "docs").mkdir()
    quiet = lambda s: None  # noqa: E731
    m = {"cpu_model": "CPU A", "cores": 2}
    for cell, date in (("serpent/avx2@gcc-O3@host", "2030-01-01"), ("rijndael/aesni@gcc-O3@host", "2030-01-02")):
        store(tmp_path, {"format": "cipherlab-bench-placement", "date": f"{date}T00:00:00+00:00", "machine": m,
                         "cell": cell, "copies": 4, "processes": 2, "mode_ratio": 1.3,
                         "copies_of_the_file": {"ekey": {"slow_groups": 1, "slow_ratios": [1.5], "within_group": 0.01}},
                         "the_file_itself": {"ekey": {"slow_groups": 0}}}, "placement", say=quiet)
    benchmarks.write(tmp_path, say=quiet)
    rows = [ln for ln in (tmp_path / benchmarks.PAGE).read_text().splitlines()
            if ln.startswith("| `bench.placement` |")]
    assert len(rows) == 2 and any("serpent/avx2" in r for r in rows) and any("rijndael/aesni" in r for r in rows)


def test_the_results_page_lists_every_column_of_the_tidy_table():
    """docs/results.md names the tidy table's columns in order: a column added to lab.results.COLUMNS (or one
    renamed) fails here until the page says so."""
    import re

    from lab import results

    text = " ".join((ROOT / "docs" / "results.md").read_text().split())
    listed = re.search(r"with these columns .*?: `([^`]+)`", text)
    assert listed, "docs/results.md: no 'with these columns ...: `...`' list"
    assert [c.strip() for c in listed.group(1).split(",")] == list(results.COLUMNS)
