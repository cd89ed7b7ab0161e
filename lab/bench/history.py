"""invoke bench.history: what the results index costs and saves.

Takes a real run (the latest in results/, or the one named), and measures building its index (the tidy table
from the raw samples) and loading it with and without the index; then makes N copies of it (each a run of its
own: new id, every estimate and interval scaled by a small random factor, the index stamped for the copy) and
times ``results.load`` of 10, 100 and 1,000 runs through their indexes.  Goal (issue 24): 1,000 runs in <= 5 s.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .. import index, results
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


def bench(lab: Lab, run: str | None = None, copies: int = 1000, out: Path | None = None, say=print) -> dict:
    results_dir = lab.root / "results"
    (src,) = results.resolve_runs(results_dir, run)
    cells = sum(1 for _ in (src / "cells.jsonl").open())
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
    loads = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        rng = np.random.default_rng(24)
        dirs = [_copy(src, root, i, rng) for i in range(copies)]
        for n in (10, 100, 1000):
            if n > copies:
                break
            t0 = time.monotonic()
            frame = results.load(dirs[:n], root)
            loads[n] = round(time.monotonic() - t0, 3)
            say(f"load of {n:5d} runs ({len(frame):,} rows): {loads[n]:.2f} s")
    doc = {**header("history"), "run": src.name, "cells": cells, "rows": len(df),
           "index_build_seconds": round(compute + write, 3), "compute_seconds": round(compute, 3),
           "load_one_indexed_seconds": round(indexed_one, 4), "load_seconds": loads, "goal_1000_runs_seconds": 5}
    store(lab.root, doc, "history", out, say)
    return doc


__all__ = ["bench"]
