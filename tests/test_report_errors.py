"""No silent loss in the report: a section whose computation fails is an error box naming the section and the
cause, the other sections are still there, and the test that built the report fails (conftest's guard)."""

from __future__ import annotations

import pytest

import lab.report as report
from lab.config import Lab
from lab import versus
from lab.publish import build_report
from lab.report import analysis, ct_leaks, errors_in, published
from lab.report import tables as report_tables

from . import synth
from .html_tables import find, tables


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("errors")
    cells = [synth.cell(c, "ref", key_sizes=(128,), timing=synth.steady_timing(e, e * 1.1, 400.0, (1.0, 1.01, 1.02)))
             for c, e in (("rijndael", 100.0), ("rc6", 200.0), ("serpent", 900.0))]
    cells.append(synth.cell("deal", "ref", status="kat_failed", reason="3 of 10 records failed"))
    return synth.write_run(tmp / "results", cells, toolchains={"gcc-O3": synth.toolchain_facts("gcc", ["A.1-7"])})


# (where the failure is planted, the function, the section the box must name)
SECTIONS = [
    (report_tables, "a1_table", "platform gcc-O3/host"),
    (analysis, "platform_averages", "platforms"),
    (analysis, "top_performers", "top performers"),
    (analysis, "compilers_relative", "compilers"),
    (analysis, "correctness_matrix", "correctness"),
    (analysis, "memory_table", "memory"),
    (published, "comparison", "published"),
    (report_tables, "instructions_table", "instructions"),
    (versus, "versus_libraries", "libraries"),
    (report, "_section_system", "system"),
    (report, "_section_machines", "machines"),
    (report, "_section_precision", "precision"),
    (ct_leaks, "section", "compiler-made leaks"),
]


@pytest.mark.report_errors
@pytest.mark.parametrize("module,name,section", SECTIONS, ids=[s for _, _, s in SECTIONS])
def test_a_failing_section_is_an_error_box_naming_it_and_the_rest_is_shown(run, tmp_path, monkeypatch,
                                                                          _report_sections_must_not_fail,
                                                                          module, name, section):
    def planted(*args, **kwargs):
        raise ZeroDivisionError(f"planted in {name}")

    monkeypatch.setattr(module, name, planted)
    html = build_report(Lab(), [run], results_dir=run.parent.parent, reports_dir=tmp_path).read_text()
    boxes = errors_in(html)
    assert boxes, "no error box"
    assert f"This section could not be computed ({section}): ZeroDivisionError: planted in {name}" in boxes[0]
    failed = _report_sections_must_not_fail
    assert failed and failed[0] == f"{section}: ZeroDivisionError: planted in {name}"  # the guard fails a test
    if name == "platform_averages":  # the top performers need the averages: their box says so
        assert any("(top performers): needs the platform averages, which failed (ZeroDivisionError" in b
                   for b in boxes), boxes
    else:
        assert len(boxes) == 1, boxes
    # the rest of the report is there: the correctness matrix (or the A.1 table when that is the planted one)
    others = find(html, "a1") if name == "correctness_matrix" else \
        [t for t in tables(html) if t.section == "correctness"]
    assert others and others[0].rows
    assert "deal/ref@gcc-O3@host" in html and "3 of 10 records failed" in html


def test_a_report_without_failures_has_no_error_box(run, tmp_path, _report_sections_must_not_fail):
    html = build_report(Lab(), [run], results_dir=run.parent.parent, reports_dir=tmp_path).read_text()
    assert errors_in(html) == [] and _report_sections_must_not_fail == []
    assert "section-error" in (report.Path(report.__file__).parent / "templates" / "index.html.j2").read_text()
