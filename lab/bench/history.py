"""invoke bench.history: what the results index costs and saves.

Takes a real run (the latest in results/, or the one named), and measures building its index (the tidy table
from the raw samples) and loading it with and without the index; then makes N copies of it (each a run of its
own: new id, every estimate and interval scaled by a small random factor, the index stamped for the copy) and
times ``results.load`` of 10, 100 and 1,000 runs: first from every run's own index (which also writes the results
folder's combined index), then again through the combined one.  Goal (issue 24): 1,000 runs in <= 5 s.  And the
search for steps over those runs (``history.steps``, every cell's default metrics; the copies' processes are the
same, so none is due).

Then what a bisection costs over a range of ``bisect_commits`` revisions (default 64): a scratch repository made
from this checkout's HEAD (``git archive``), a base commit and 64 more, each adding a line to the README except
one that adds work to RC6's encrypt loop; ``lab.bisect`` looks for it on guest instructions (exact) and on time,
and the builds, instruction counts, measuring processes and wall time of each are printed and stored.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .. import bisect, history, index, results
from ..config import Lab
from . import header, store


def _copy(src: Path, dest_root: Path, i: int, rng: np.random.Generator) -> Path:
    meta = json.loads((src / "run.json").read_text())
    run_id = f"{meta['run_id']}-copy{i:04d}"
    d = dest_root / meta["machine_id"] / run_id
    d.mkdir(parents=True)
    shutil.copy2(src / "cells.jsonl", d / "cells.jsonl")
    (d / "run.json").write_text(json.dumps({**meta, "run_id": run_id}))
    df = pq.read_table(src / index.FILE).to_pandas()
    f = 1 + rng.normal(0, 0.01)
    for col in ("estimate", "ci_low", "ci_high", "value"):
        df[col] = df[col] * f
    df["run_id"] = run_id
    index.write(d, df, results.VERSION)
    return d


_GIT = ["git", "-c", "user.email=lab@example.invalid", "-c", "user.name=lab"]


def _scratch(root: Path, repo: Path, commits: int, step_at: int) -> list[str]:
    """A scratch repository of HEAD's tree: a base and `commits` more; the one numbered `step_at` (1-based) adds
    work to RC6's encrypt loop.  The hashes, base first."""
    repo.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(root), "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(repo)], input=archive, check=True)
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    hashes = []
    for i in range(commits + 1):
        if i == step_at:
            src = repo / "c_src" / "ciphers" / "rc6" / "ref.c"
            loop = "        for (volatile int w = 0; w < 100; w++)\n            ;\n"
            src.write_text(src.read_text().replace("        RC6_ENC4(1);\n", loop + "        RC6_ENC4(1);\n", 1))
        elif i:
            with (repo / "README.md").open("a") as f:
                f.write(f"\nnote {i}\n")
        subprocess.run([*_GIT, "-C", str(repo), "add", "-A"], check=True)
        subprocess.run([*_GIT, "-C", str(repo), "commit", "-qm", "rc6: extra work" if i == step_at else f"note {i}"],
                       check=True)
        hashes.append(subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                                     check=True).stdout.strip())
    return hashes


def bisect_cost(lab: Lab, commits: int = 64, say=print) -> dict:
    """Bisects a scratch range of `commits` revisions on guest instructions and on time; what each cost."""
    step_at = commits * 2 // 3 + 1
    out = {"commits": commits, "step_at": step_at}
    with tempfile.TemporaryDirectory() as tmp:
        hashes = _scratch(lab.root, Path(tmp) / "repo", commits, step_at)
        for metric in ("insn_encrypt_per_block", "encrypt_speed"):
            o = bisect.bisect(lab, "rc6", good=hashes[0], bad=hashes[-1], repo=Path(tmp) / "repo", metric=metric,
                              say=lambda s: None)
            found = o.first is not None and o.first.ref == hashes[step_at]
            out[metric] = {"found": found, "change": o.change, "ci": [o.ci_low, o.ci_high], "probes": len(o.probes),
                           "builds": o.builds, "counts": o.counts, "processes": o.processes,
                           "seconds": round(o.seconds, 1)}
            say(f"bisection over {commits} commits on {metric}: {'found' if found else 'NOT found'} the planted "
                f"commit ({o.message.splitlines()[0]}); {o.builds} builds, {o.counts} instruction counts, "
                f"{o.processes} measuring processes, {o.seconds:.0f} s")
    return out


def bench(lab: Lab, run: str | None = None, copies: int = 1000, out: Path | None = None, say=print,
          bisect_commits: int = 64) -> dict:
    results_dir = lab.root / "results"
    (src,) = results.resolve_runs(results_dir, run)
    with (src / "cells.jsonl").open() as f:
        cells = sum(1 for _ in f)
    t0 = time.monotonic()
    df = results.computed_rows(src)
    compute = time.monotonic() - t0
    t0 = time.monotonic()
    index.write(src, df, results.VERSION)
    write = time.monotonic() - t0
    t0 = time.monotonic()
    results.load(src, results_dir)
    indexed_one = time.monotonic() - t0
    say(f"run {src.name}: {cells} cells, {len(df)} rows; computing its table {compute:.2f} s, writing the index "
        f"{write * 1000:.0f} ms, loading it through the index {indexed_one * 1000:.0f} ms")
    loads, first_loads, steps = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        rng = np.random.default_rng(24)
        dirs = [_copy(src, root, i, rng) for i in range(copies)]
        for n in (10, 100, 1000):
            if n > copies:
                break
            t0 = time.monotonic()
            frame = results.load(dirs[:n], root)  # every run's own index (then the combined file is written)
            first = time.monotonic() - t0
            t0 = time.monotonic()
            results.load(dirs[:n], root)  # the same runs again: the combined file
            loads[n] = round(time.monotonic() - t0, 3)
            first_loads[n] = round(first, 3)
            say(f"load of {n:5d} runs ({len(frame):,} rows): {loads[n]:.2f} s through the combined index "
                f"(the first load, from every run's own index and writing the combined one: {first:.2f} s)")
            t0 = time.monotonic()
            # every cell's default metrics, as `invoke history` finds them
            found = history.steps(history.measured(frame))
            steps[n] = {"seconds": round(time.monotonic() - t0, 3), "steps": len(found)}
            say(f"steps over {n:5d} runs: {steps[n]['seconds']:.2f} s, {len(found)} found (copies of one run: none due)")
    doc = {**header("history"), "run": src.name, "cells": cells, "rows": len(df),
           "index_build_seconds": round(compute + write, 3), "compute_seconds": round(compute, 3),
           "load_one_indexed_seconds": round(indexed_one, 4), "load_seconds": loads,
           "first_load_seconds": first_loads, "goal_1000_runs_seconds": 5, "steps": steps,
           "bisection": bisect_cost(lab, bisect_commits, say) if bisect_commits else None}
    store(lab.root, doc, "history", out, say)
    return doc


__all__ = ["bench"]
