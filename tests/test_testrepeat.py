"""invoke test.repeat's bookkeeping (lab/bench/testrepeat.py): junit reports of synthetic runs tallied into
"test id -> failed k of N", node ids from junit class names, a run without a report, and the compile loop that
loads one core (a real gcc, started and stopped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.bench import testrepeat
from lab.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def junit(tmp: Path, name: str, cases: dict[str, str]) -> Path:
    """A junit report as pytest writes it: testcase classname (dotted module path) and name, and a child element
    per outcome (failure, error, skipped; none for passed)."""
    body = []
    for tid, state in cases.items():
        module, _, test = tid.rpartition("::")
        classname = module.removesuffix(".py").replace("/", ".").replace("::", ".")
        child = {"passed": "", "failed": '<failure message="assert 1 == 2">trace</failure>',
                 "error": '<error message="fixture failed">trace</error>',
                 "skipped": '<skipped type="pytest.skip" message="no image">skip</skipped>'}[state]
        body.append(f'<testcase classname="{classname}" name="{test}" time="0.1">{child}</testcase>')
    p = tmp / name
    p.write_text('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="%d">%s'
                 "</testsuite></testsuites>" % (len(cases), "".join(body)))
    return p


def test_node_ids_from_junit_class_names():
    assert testrepeat.test_id("tests.test_bisect", "test_x", ROOT) == "tests/test_bisect.py::test_x"
    assert testrepeat.test_id("tests.test_distributed", "test_cut[in-measure]", ROOT) == \
        "tests/test_distributed.py::test_cut[in-measure]"
    # a class inside a module: the file is the longest prefix that is a file
    assert testrepeat.test_id("tests.test_stats.TestCompare", "test_y", ROOT) == \
        "tests/test_stats.py::TestCompare::test_y"
    assert testrepeat.test_id("", "test_z", ROOT) == "test_z"


def test_failures_are_tallied_per_test_over_runs(tmp_path):
    a, b, c, d = ("tests/test_bisect.py::test_on_time", "tests/test_bisect.py::test_exact",
                  "tests/test_distributed.py::test_cut[in-measure]", "tests/test_containers.py::test_image")
    runs = [
        {a: "failed", b: "passed", c: "passed", d: "skipped"},
        {a: "passed", b: "passed", c: "error", d: "skipped"},
        {a: "failed", b: "passed", c: "passed", d: "skipped"},
        {a: "passed", b: "passed", c: "passed", d: "skipped"},
    ]
    reports = [testrepeat.outcomes(junit(tmp_path, f"run-{i}.xml", r), ROOT) for i, r in enumerate(runs)]
    assert reports == runs  # every outcome read back under its node id
    bad = testrepeat.tally(reports)
    assert set(bad) == {a, c}  # passed and skipped every time: not listed
    assert (bad[a]["failed"], bad[a]["runs"], bad[a]["outcomes"]) == (2, 4, ["failed", "passed", "failed", "passed"])
    assert (bad[c]["failed"], bad[c]["runs"]) == (1, 4)  # an error counts as a failure
    lines = []
    testrepeat._print({"load": None, "failures": bad, "tests": 4, "runs": 4}, lines.append)
    assert lines == [f"{a} -> failed 2 of 4", f"{c} -> failed 1 of 4"]  # most failures first


def test_a_run_without_a_report_and_a_test_that_fails_then_errs(tmp_path):
    t = "tests/test_bisect.py::test_on_time"
    p = tmp_path / "r.xml"
    p.write_text('<testsuites><testsuite><testcase classname="tests.test_bisect" name="test_on_time">'
                 '<failure message="x"/></testcase><testcase classname="tests.test_bisect" name="test_on_time">'
                 '<error message="teardown"/></testcase></testsuite></testsuites>')
    assert testrepeat.outcomes(p, ROOT) == {t: "failed"}  # call failed, teardown erred: one failure, not two
    bad = testrepeat.tally([{t: "passed"}, None, {t: "passed"}])
    assert bad == {"<run>": {"failed": 1, "runs": 3, "outcomes": ["ok", "no report", "ok"]}}
    # a test that ran in some runs only: "absent" in the others, the failures counted over all runs
    bad = testrepeat.tally([{t: "failed"}, {}, {t: "passed"}])
    assert bad[t] == {"failed": 1, "runs": 3, "outcomes": ["failed", "absent", "passed"]}
    (tmp_path / "broken.xml").write_text("<testsuites><testsuite>")
    with pytest.raises(UserError, match="broken.xml: not a junit XML report"):
        testrepeat.outcomes(tmp_path / "broken.xml", ROOT)


def test_the_compile_loop_keeps_compiling_until_stopped():
    import time

    with testrepeat.CompileLoop(ROOT) as loop:
        t0 = time.monotonic()
        while loop.compiles < 2 and time.monotonic() - t0 < 120:
            time.sleep(0.1)
    done = loop.compiles
    assert done >= 2 and loop.failure is None and not loop._thread.is_alive()
    time.sleep(0.5)
    assert loop.compiles == done  # stopped: nothing compiles after the block


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="--runs: 0 runs"):
        testrepeat.repeat(ROOT, 0, out=tmp_path / "x.json")
    with pytest.raises(UserError, match="--files: tests/test_nothing.py does not exist"):
        testrepeat.repeat(ROOT, 1, files=["tests/test_nothing.py"], out=tmp_path / "x.json")


def test_two_real_runs_of_a_planted_file_are_tallied_and_stored(tmp_path):
    """The whole path, twice, on a planted test file (one test passes, one fails, one fails on odd runs): the
    README's pytest command with the project's options, its junit reports, the tally and the JSON."""
    where = ROOT / "build" / "test-repeat"
    where.mkdir(parents=True, exist_ok=True)
    (where / "test_planted.py").write_text(
        "import os, pathlib\n"
        "def test_passes():\n    assert True\n"
        "def test_fails():\n    assert 1 == 2\n"
        "def test_flaky():\n"
        "    n = pathlib.Path(__file__).with_suffix('.count')\n"
        "    k = int(n.read_text()) + 1 if n.exists() else 1\n    n.write_text(str(k))\n    assert k % 2 == 0\n")
    (where / "test_planted.count").unlink(missing_ok=True)
    said = []
    doc = testrepeat.repeat(ROOT, 2, files=["build/test-repeat/test_planted.py"], out=tmp_path / "r.json",
                            say=said.append)
    stored = json.loads((tmp_path / "r.json").read_text())
    f = "build/test-repeat/test_planted.py::"
    assert stored["failures"] == {f + "test_fails": {"failed": 2, "runs": 2, "outcomes": ["failed", "failed"]},
                                  f + "test_flaky": {"failed": 1, "runs": 2, "outcomes": ["failed", "passed"]}}
    assert stored["tests"] == 3 and [r["exit_code"] for r in stored["per_run"]] == [1, 1]
    assert doc["format"] == "cipherlab-bench-test-repeat" and doc["load"] is None
    assert said[-3:-1] == [f + "test_fails -> failed 2 of 2", f + "test_flaky -> failed 1 of 2"]
