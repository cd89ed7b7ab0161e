"""invoke bench.faults: the faults a week-long campaign meets, each provoked for real, as a table.

Every scenario runs the lab as a subprocess, as a user runs it (``python -m lab``), on small matrices with the
smoke profile and the fault fixtures of tests/fixtures/ciphers, and reports: the fault, what the lab did (exit
status, statuses, message) and how many cells were lost — planned cells that never got exactly one record,
after a ``--resume`` where one is the remedy.  The goal is 0 everywhere.  tests/test_faults.py asserts the
same behaviours; this prints them as a table (docs/benchmarks.md has the latest).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import results
from ..config import Lab
from . import header, store

SLOW = "ciphers: [des, 3des, idea, rc6, twofish, serpent]\ntoolchains: [gcc-O3, clang-O3]\nprofile: smoke\n"


class Scenario:
    def __init__(self, lab: Lab, tmp: Path):
        self.lab, self.tmp = lab, tmp
        self.env = {**os.environ, "CIPHERLAB_CIPHER_DIRS": str(lab.root / "tests" / "fixtures" / "ciphers"),
                    "CIPHERLAB_LOCK_DIR": str(tmp / "locks"), "CIPHERLAB_MACHINE": "faults"}

    def args(self, matrix: str, results_dir: Path | None = None, *extra: str) -> list[str]:
        m = self.tmp / f"m{abs(hash(matrix)) % 10**6}.yaml"
        m.write_text(matrix)
        return ["run", "--matrix", str(m), "--results-dir", str(results_dir or self.tmp / "results"), "--build-dir",
                str(self.lab.root / "build" / "bench-faults"), "--no-report", "--no-icount", "--no-progress", *extra]

    def lab_run(self, args: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "lab", *args], cwd=self.lab.root, capture_output=True,
                              text=True, env=self.env, timeout=timeout)

    def start(self, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "lab", *args], cwd=self.lab.root, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env)

    def wait_cells(self, p: subprocess.Popen, where: Path, n: int) -> Path:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 600:
            dirs = results.run_dirs(where)
            if dirs and (dirs[0] / "cells.jsonl").exists() and \
                    (dirs[0] / "cells.jsonl").read_text().count("\n") >= n:
                return dirs[0]
            if p.poll() is not None:
                raise RuntimeError(f"the run ended early: {p.stderr.read()[-300:]}")
            time.sleep(0.05)
        raise RuntimeError("no cells recorded in time")


def lost(run_dir: Path) -> int:
    """Planned cells without exactly one record."""
    meta, cells = results.read_run(run_dir)
    ids = [c.cell for c in cells]
    return sum(1 for c in meta.cells_planned if ids.count(c) != 1)


def _first_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.startswith(("error", "warning", "interrupted"))]
    return (lines[-1] if lines else text.strip().splitlines()[-1] if text.strip() else "")[:150]


# enough cells that a signal after the first lands mid-run even when each cell takes a fraction of a second
MANY = ("ciphers: [des, idea, rc6, twofish, serpent, mars, cast256, e2, loki97, magenta, dfc, saferplus]\n"
        "toolchains: [gcc-O3, clang-O3]\nprofile: quick\n")


def _interrupt_and_resume(s: Scenario, matrix: str, where: Path | None, after: int, sig: int):
    """Start a run, send `sig` once `after` cells are recorded, then --resume it: (run dir, the interrupted
    process, cells recorded and the run's status before the resume, the resume's result)."""
    p = s.start(s.args(matrix, where, "--jobs", "1"))
    d = s.wait_cells(p, where or s.tmp / "results", after)
    p.send_signal(sig)
    p.communicate(timeout=300)
    before = (d / "cells.jsonl").read_text().count("\n"), results.read_run(d)[0].status
    return d, p, before, s.lab_run(s.args(matrix, where, "--resume"))


def kill_and_resume(s: Scenario) -> dict:
    d, _, (kept, _), r = _interrupt_and_resume(s, SLOW, None, 3, signal.SIGKILL)
    return {"fault": "SIGKILL of the lab mid-run, then --resume",
            "did": f"kept {kept} recorded cells; resume exit {r.returncode}, ran only the rest", "lost": lost(d)}


def ctrl_c(s: Scenario) -> dict:
    d, p, (_, status), r = _interrupt_and_resume(s, MANY, s.tmp / "results-int", 1, signal.SIGINT)
    return {"fault": "Ctrl-C mid-run, then --resume",
            "did": f"exit {p.returncode}, run marked {status}; resume exit {r.returncode}", "lost": lost(d)}


def two_runs(s: Scenario) -> dict:
    matrix = "ciphers: [des, idea, rc6]\ntoolchains: [gcc-O3]\nprofile: smoke\n"
    where = s.tmp / "results-two"
    a, b = s.start(s.args(matrix, where, "--tag", "a")), s.start(s.args(matrix, where, "--tag", "b"))
    (_, ea), (_, eb) = a.communicate(timeout=600), b.communicate(timeout=600)
    dirs = results.run_dirs(where)
    spans = []
    for d in dirs:
        _, cells = results.read_run(d)
        spans.append(sorted((p.started, p.started + p.seconds) for c in cells
                            for p in [*c.measurement.timing, *c.measurement.cycles]))
    first, second = sorted(spans, key=lambda x: x[-1][1])
    overlap = max(0.0, first[-1][1] - second[0][0])
    waited = "waited for the timing lock" if "waiting for the timing lock" in ea + eb else "did not wait"
    return {"fault": "two runs started at once on one machine",
            "did": f"exit {a.returncode}/{b.returncode}, distinct ids, second {waited}, timings overlap {overlap:.3f} s",
            "lost": sum(lost(d) for d in dirs)}


def bad_cells(s: Scenario) -> dict:
    matrix = ("ciphers: [faultdes, wrongdes, crashdes, des]\nimplementations: ours\ntoolchains: [gcc-O3]\n"
              "profile: smoke\n")
    where = s.tmp / "results-bad"
    r = s.lab_run(s.args(matrix, where, "--timeout", "4"))
    (d,) = results.run_dirs(where)
    _, cells = results.read_run(d)
    statuses = ", ".join(f"{c.implementation}: {c.status}" for c in sorted(cells, key=lambda c: c.cell))
    return {"fault": "cells that segfault, raise SIGBUS, hang, print garbage, do not compile, answer wrong",
            "did": f"exit {r.returncode}; {statuses}", "lost": lost(d)}


def missing_compiler(s: Scenario) -> dict:
    root = s.tmp / "checkout"
    root.mkdir(exist_ok=True)
    for name in ("c_src", "targets", "profiles", "dockerfiles", "matrix.yaml"):
        if not (root / name).exists():
            (root / name).symlink_to(s.lab.root / name)
    shutil.copytree(s.lab.root / "toolchains", root / "toolchains", dirs_exist_ok=True)
    if not (s.tmp / "shared").exists():
        (s.tmp / "shared").symlink_to(s.lab.shared)
    (root / "toolchains" / "gcc-missing.yaml").write_text(
        "description: a compiler this machine lacks\ninherits: gcc-O3\ncc: gcc-99-nonexistent\npackage: gcc-99\n")
    where = s.tmp / "results-cc"
    env = {**s.env, "CIPHERLAB_ROOT": str(root)}
    r = subprocess.run([sys.executable, "-m", "lab", *s.args("ciphers: [des]\ntoolchains: [gcc-missing, gcc-O3]\n"
                                                             "profile: smoke\n", where)],
                       cwd=s.lab.root, capture_output=True, text=True, env=env, timeout=600)
    (d,) = results.run_dirs(where)
    _, cells = results.read_run(d)
    miss = next(c for c in cells if c.toolchain == "gcc-missing")
    return {"fault": "a toolchain whose compiler is not installed",
            "did": f"exit {r.returncode}; {miss.status}: {miss.reason}", "lost": lost(d)}


def disk_full(s: Scenario) -> dict:
    disk = s.tmp / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        return {"fault": "the results disk fills up mid-run", "did": "not run: mounting a tmpfs needs root",
                "lost": None}
    try:
        p = s.start(s.args(SLOW, disk, "--jobs", "1"))
        d = s.wait_cells(p, disk, 1)
        try:
            (disk / "filler").write_bytes(b"\0" * 400 * 1024)
        except OSError:
            pass
        _, err = p.communicate(timeout=300)
        (disk / "filler").unlink()
        r = s.lab_run(s.args(SLOW, disk, "--resume"))
        return {"fault": "the results disk fills up mid-run, then --resume",
                "did": f"exit {p.returncode}: {_first_line(err)}; resume exit {r.returncode}", "lost": lost(d)}
    finally:
        subprocess.run(["umount", "-l", str(disk)])


def truncated(s: Scenario) -> dict:
    matrix = "ciphers: [des, idea]\ntoolchains: [gcc-O3]\nprofile: smoke\n"
    where = s.tmp / "results-trunc"
    s.lab_run(s.args(matrix, where))
    (d,) = results.run_dirs(where)
    lines = (d / "cells.jsonl").read_text().splitlines()
    (d / "cells.jsonl").write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])
    meta = json.loads((d / "run.json").read_text())
    meta["status"] = "running"
    (d / "run.json").write_text(json.dumps(meta))
    r = s.lab_run(s.args(matrix, where, "--resume"))
    return {"fault": "a kill during a write: the last results line cut in half",
            "did": f"resume exit {r.returncode}: {_first_line(r.stderr)}; the cell measured again", "lost": lost(d)}


def bad_yaml(s: Scenario) -> dict:
    root = s.tmp / "badroot"
    root.mkdir()
    for name in ("c_src", "targets", "profiles", "dockerfiles", "matrix.yaml"):
        (root / name).symlink_to(s.lab.root / name)
    shutil.copytree(s.lab.root / "toolchains", root / "toolchains")
    (root / "toolchains" / "unused.yaml").write_text("description: d\ninherits: gcc-O3\nflgs: [-O2]\n")
    r = subprocess.run([sys.executable, "-m", "lab", "validate"], cwd=s.lab.root, capture_output=True, text=True,
                       env={**s.env, "CIPHERLAB_ROOT": str(root)})
    tb = "with" if "Traceback" in r.stderr else "no"
    return {"fault": "an unknown key in a toolchain file the run does not use",
            "did": f"exit {r.returncode}, {tb} traceback: {_first_line(r.stderr)}", "lost": 0}


SCENARIOS = (bad_cells, missing_compiler, kill_and_resume, ctrl_c, two_runs, truncated, disk_full, bad_yaml)


def bench(lab: Lab, out: Path | None = None, say=print) -> dict:
    rows = []
    with tempfile.TemporaryDirectory() as t:
        for i, scenario in enumerate(SCENARIOS):
            tmp = Path(t) / str(i)
            tmp.mkdir()
            t0 = time.monotonic()
            try:
                row = scenario(Scenario(lab, tmp))
            except Exception as e:  # noqa: BLE001 - a scenario that cannot run is a row, not a crash
                row = {"fault": scenario.__name__, "did": f"scenario failed: {type(e).__name__}: {e}", "lost": None}
            row["seconds"] = round(time.monotonic() - t0, 1)
            say(f"  {row['fault']}: lost {row['lost']} ({row['seconds']} s)")
            rows.append(row)
    doc = {**header("faults"), "rows": rows}
    say(format_table(rows))
    store(lab.root, doc, "faults", out, say)
    return doc


def format_table(rows: list[dict]) -> str:
    lines = ["| fault | what the lab did | cells lost |", "| --- | --- | --- |"]
    lines += [f"| {r['fault']} | {r['did']} | {r['lost'] if r['lost'] is not None else 'n/a'} |" for r in rows]
    return "\n".join(lines)
