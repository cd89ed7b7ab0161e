"""invoke test.repeat: the test command N times (optionally beside one core-bound compile loop), failures per test.

A test that fails one run in a few is found only by running it again and again in the conditions it meets: the
suite's own workers, and a machine that is doing something else.  Each run is the README's test command (pytest
with the project's options: one xdist worker per core, a file per worker), on the whole suite or on the files
given, writing a junit XML report; the reports are tallied into "test id -> failed k of N".  With ``load`` a
thread keeps one gcc -O2 compile running from before the first run to after the last (one core busy, as a
build beside the tests would keep it), and counts the compiles it finished, so the summary shows the load was
there.  The figures are appended to bench/results/test-repeat.jsonl.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from ..errors import UserError
from . import header, store

# what the compile loop builds: enough work for a second or so of gcc -O2, nothing to link or run
LOAD_SOURCE = "c_src/ciphers/serpent/bitslice.c"


def test_id(classname: str, name: str, root: Path) -> str:
    """pytest's node id from a junit testcase: the longest prefix of the dotted classname that is a .py file
    under root is the file, the rest are classes (tests.test_x.TestY + test_z -> tests/test_x.py::TestY::test_z)."""
    parts = classname.split(".") if classname else []
    for k in range(len(parts), 0, -1):
        path = "/".join(parts[:k]) + ".py"
        if (root / path).is_file():
            return "::".join([path, *parts[k:], name])
    return "::".join([*parts, name]) if parts else name


def outcomes(report: Path, root: Path) -> dict[str, str]:
    """test id -> passed, failed, error or skipped, from one junit XML report (pytest --junitxml)."""
    try:
        tree = ET.parse(report)
    except (OSError, ET.ParseError) as e:
        raise UserError(f"{report}: not a junit XML report ({e})") from None
    out: dict[str, str] = {}
    for case in tree.iter("testcase"):
        tid = test_id(case.get("classname", ""), case.get("name", ""), root)
        kinds = {child.tag for child in case}
        state = "failed" if "failure" in kinds else "error" if "error" in kinds else \
            "skipped" if "skipped" in kinds else "passed"
        if out.get(tid) in ("failed", "error"):  # a test that failed and then erred in teardown stays failed
            continue
        out[tid] = state
    return out


def tally(runs: list[dict[str, str] | None]) -> dict[str, dict]:
    """Per test that did not pass every run it ran in: {"failed": k, "runs": N, "outcomes": [...]}; a run with
    no report (pytest crashed, or was killed) counts as a failure of the pseudo-test "<run>"."""
    n = len(runs)
    bad: dict[str, dict] = {}
    ids = sorted({t for r in runs if r for t in r})
    for tid in ids:
        seen = [r.get(tid, "absent") if r is not None else "no report" for r in runs]
        k = sum(s in ("failed", "error") for s in seen)
        if k:
            bad[tid] = {"failed": k, "runs": n, "outcomes": seen}
    lost = sum(r is None for r in runs)
    if lost:
        bad["<run>"] = {"failed": lost, "runs": n, "outcomes": ["no report" if r is None else "ok" for r in runs]}
    return bad


class CompileLoop:
    """One gcc -O2 compile after another, in a thread, until stopped: one core kept busy."""

    def __init__(self, root: Path, source: str = LOAD_SOURCE, cc: str = "gcc"):
        self.root = root  # the compile runs there: the command stored in the summary has no machine path
        self.argv = [cc, "-O2", "-I", "c_src/include", "-c", source, "-o", os.devnull]
        self.compiles = 0
        self.failure: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            p = subprocess.run(self.argv, cwd=self.root, capture_output=True, text=True)
            if p.returncode:
                self.failure = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
                return
            self.compiles += 1

    def __enter__(self) -> CompileLoop:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()  # the compile under way finishes: nothing is left running


def pytest_argv(files: list[str] | None, report: Path) -> list[str]:
    """The README's test command (./cipherlab test runs `python -m pytest` with pyproject's options) on the files
    given or the whole suite, with a junit report."""
    return [sys.executable, "-m", "pytest", *(files or []), "-p", "no:cacheprovider", f"--junitxml={report}"]


def one_run(root: Path, files: list[str] | None, report: Path) -> dict:
    t0 = time.monotonic()
    p = subprocess.run(pytest_argv(files, report), cwd=root, capture_output=True, text=True)
    got = outcomes(report, root) if report.is_file() and report.stat().st_size else None
    summary = (p.stdout.strip().splitlines() or [""])[-1]
    return {"exit_code": p.returncode, "seconds": round(time.monotonic() - t0, 1), "summary": summary,
            "outcomes": got}


def repeat(root: Path, runs: int, load: bool = False, files: list[str] | None = None, out: Path | None = None,
           say=print) -> dict:
    if runs < 1:
        raise UserError(f"option --runs: {runs} runs; give 1 or more")
    for f in files or []:
        if not (root / f.split("::")[0]).exists():
            raise UserError(f"option --files: {f} does not exist (paths are relative to {root})")
    doc = {**header("test-repeat"), "runs": runs, "files": files or "the whole suite", "load": None,
           "command": " ".join(pytest_argv(files, Path("REPORT.xml"))[1:]), "per_run": []}
    loop = CompileLoop(root) if load else None
    with tempfile.TemporaryDirectory(prefix="cipherlab-test-repeat-") as tmp, loop or contextlib.nullcontext():
        started = time.monotonic()
        for i in range(runs):
            r = one_run(root, files, Path(tmp) / f"run-{i}.xml")
            say(f"run {i + 1}/{runs}: exit {r['exit_code']} in {r['seconds']:.0f} s: {r['summary']}")
            doc["per_run"].append(r)
            if loop and loop.failure:
                raise UserError(f"the compile loop failed: {loop.failure} ({' '.join(loop.argv)})")
        if loop:
            doc["load"] = {"command": " ".join(loop.argv), "compiles": loop.compiles,
                           "seconds": round(time.monotonic() - started, 1)}
    doc["failures"] = tally([r["outcomes"] for r in doc["per_run"]])
    doc["tests"] = len({t for r in doc["per_run"] if r["outcomes"] for t in r["outcomes"]})
    for r in doc["per_run"]:  # per-test outcomes are kept only for the tests that failed (in doc["failures"])
        r["tests"] = len(r.pop("outcomes") or {})
    _print(doc, say)
    store(root, doc, "test-repeat", out, say)
    return doc


def _print(doc: dict, say) -> None:
    if doc["load"]:
        say(f"load: {doc['load']['compiles']} compiles in {doc['load']['seconds']:.0f} s ({doc['load']['command']})")
    if not doc["failures"]:
        say(f"no failures: {doc['tests']} tests, {doc['runs']} runs")
        return
    for tid, f in sorted(doc["failures"].items(), key=lambda kv: -kv[1]["failed"]):
        say(f"{tid} -> failed {f['failed']} of {f['runs']}")
