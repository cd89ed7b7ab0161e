"""invoke bench.scale: the container matrix run serially and on a two-worker Dask LocalCluster.

The matrix: every cipher's default implementation, gcc-O3 and clang-O3, on the x86_64, sparc64 and mips64
containers — building, known-answer gates and instruction counts dominate there (emulated targets are timed
briefly; their headline is the exact count).  Each run starts from an empty build folder of its own, so both
pay the same builds.  Prints the wall time of each and the speed-up, stores JSON; docs/scaling.md reads it.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from ..config import Lab
from . import header, store
from ..run import RunRequest, run

TARGETS = ["x86_64", "sparc64", "mips64"]


def bench(lab: Lab, ciphers=None, toolchains=None, targets=None, profile=None, out: Path | None = None,
          say=print) -> dict:
    rows = []
    for executor, jobs in (("local", 1), ("dask", None)):
        build = lab.root / "build" / f"bench-scale-{executor}"
        shutil.rmtree(build, ignore_errors=True)
        say(f"bench.scale: {executor} executor{' with 1 job (serial)' if jobs == 1 else ', 2 workers'} ...")
        t0 = time.monotonic()
        o = run(lab, RunRequest(ciphers=ciphers, implementations="default", toolchains=toolchains or
                                ["gcc-O3", "clang-O3"], targets=targets or TARGETS, backend="container",
                                profile=profile, executor=executor, jobs=jobs, tag=f"scale-{executor}",
                                results_dir=lab.root / "results", build_dir=build))
        rows.append({"executor": executor, "jobs": jobs, "seconds": round(time.monotonic() - t0, 1),
                     "cells": sum(o.counts.values()), "counts": o.counts, "run": str(o.run_dir.relative_to(lab.root))})
        shutil.rmtree(build, ignore_errors=True)
    doc = {**header("scale"), "rows": rows, "speedup": round(rows[0]["seconds"] / rows[1]["seconds"], 2)}
    for r in rows:
        say(f"  {r['executor']:<6} {r['seconds']:7.1f} s  {r['cells']} cells  {r['counts']}")
    say(f"  speed-up of the two-worker cluster over the serial run: {doc['speedup']}x")
    store(lab.root, doc, "scale", out, say)
    return doc
