"""invoke bench.compilers: what the compiler axis costs and how far its answers repeat.

* The flag search (lab/flags.py) over a space (default flags/gcc-six.yaml: six binary choices, 64 combinations)
  for five ciphers on the host, twice (cold: an empty build folder; warm: the same folder again): wall time
  of each search and of its stages (build, gate, waiting for the timing lock, race), builds, distinct binaries, measuring processes
  per cell against what the full factorial would spend at the nist profile (every distinct binary to its
  max_processes), the winners' interval half-widths, and whether the second search's winner is the first's or
  one tied with it (and the other way round).
* With ``--preset``: the ``compilers`` matrix preset (matrix-compilers.yaml) cold (an empty build folder) and warm.

Goals (issue 22): the six-flag search for five ciphers in <= 10 min on two cores with the winners' intervals
within +-1 %; the same winner or a tied one in >= 95 % of cells.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from ..config import Lab
from ..errors import UsageError
from . import header, store

CIPHERS = ["serpent", "mars", "rc6", "rijndael", "twofish"]


def _agree(a: dict, b: dict) -> bool:
    """b's winner is a's winner or tied with it, or a's winner is tied with b's."""
    return b["winner"] == a["winner"] or b["winner"] in a["tied"] or a["winner"] in b["tied"]


def bench(lab: Lab, space: str | None = None, ciphers: list[str] | None = None, preset: bool = False,
          out: Path | None = None, jobs: int | None = None, search: bool = True, say=print) -> dict:
    if not (search or preset):
        raise UsageError("bench.compilers: --no-search needs --preset (there would be nothing to measure)")
    doc = {**header("compilers")}
    if search:
        doc.update(search_bench(lab, space, ciphers, jobs, say))
    if preset:
        doc["preset"] = preset_bench(lab, say)
    store(lab.root, doc, "compilers", out, say)
    return doc


def search_bench(lab: Lab, space: str | None, ciphers: list[str] | None, jobs: int | None, say=print) -> dict:
    from .. import flags

    space = space or str(lab.root / "flags" / "gcc-six.yaml")
    ciphers = ciphers or CIPHERS
    nist_max = lab.profile("nist").sampling.max_processes
    # the first search from an empty build folder (cold: every build and every gate), the second in the same
    # folder (warm: builds current, the distinct binaries' verdicts remembered): both repeat the whole race
    build = lab.root / "build" / "bench-compilers-flags"
    shutil.rmtree(build, ignore_errors=True)
    searches = []
    for attempt, kind in ((1, "cold"), (2, "warm")):
        load = os.getloadavg()[0]
        t0 = time.monotonic()
        found = flags.search(lab, space, ciphers, build_dir=build, jobs=jobs,
                             say=lambda s: say(s) if s.startswith(("flags:", "  stages:")) else None)
        seconds = time.monotonic() - t0
        cells = [c.json() for c in found]
        for c, f in zip(cells, found):
            w = next((e for e in f.entries if e.status == "winner"), None)
            c["winner_precision"] = w.estimate.precision if w and w.estimate else None
        stages = {k: round(sum(c["stages"].get(k, 0.0) for c in cells), 1)
                  for k in ("build", "gate", "lock_wait", "race", "build_cpu", "gate_cpu")}
        searches.append({"kind": kind, "seconds": round(seconds, 1), "stages": stages,
                         "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2),
                         "cells": cells})
        say(f"search {attempt} ({kind}): {seconds / 60:.1f} min: " + ", ".join(f"{k} {v:.0f} s"
                                                                            for k, v in stages.items())
            + f"; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        for c in cells:
            say(f"  {c['cipher']:<10} winner {' '.join(c['winner'] or ['-'])!s:<50} tied {len(c['tied'])}, "
                f"{c['distinct_binaries']} binaries, {c['processes']} processes, ±"
                f"{100 * (c['winner_precision'] or float('nan')):.2f} %, "
                + ", ".join(f"{k} {v:.0f} s" for k, v in c["stages"].items()))
    first, second = searches
    agree = [_agree(a, b) for a, b in zip(first["cells"], second["cells"])]
    spent = [c["processes"] for s in searches for c in s["cells"]]
    factorial = [c["distinct_binaries"] * nist_max for s in searches for c in s["cells"]]
    precisions = [c["winner_precision"] for s in searches for c in s["cells"] if c["winner_precision"] is not None]
    doc = {"space": space, "ciphers": ciphers, "searches": searches,
           "candidates_per_cell": first["cells"][0]["candidates_total"] if first["cells"] else 0,
           "agreement": sum(agree) / len(agree) if agree else None,
           "processes_spent": sum(spent), "processes_full_factorial_nist": sum(factorial),
           "processes_per_cell_mean": sum(spent) / len(spent) if spent else None,
           # programs (timing + kat) compiled and linked, against both programs of every candidate of every cell
           "programs_built": [sum(c["builds"] for c in s["cells"]) for s in searches],
           "programs_full_factorial": sum(2 * c["candidates_total"] for c in first["cells"]),
           "winner_precision_max": max(precisions) if precisions else None,
           "goals": {"search_minutes": 10, "winner_precision": 0.01, "agreement": 0.95}}
    say(f"flag search: {doc['candidates_per_cell']} candidates x {len(ciphers)} ciphers in "
        f"{first['seconds'] / 60:.1f} (cold) and {second['seconds'] / 60:.1f} min (warm) (goal <= 10); winners within "
        f"±{100 * (doc['winner_precision_max'] or 0):.2f} % (goal 1 %); same or tied winner in "
        f"{100 * (doc['agreement'] or 0):.0f} % of cells (goal 95 %); {doc['processes_spent']} measuring "
        f"processes where the full factorial at the nist profile would take up to "
        f"{doc['processes_full_factorial_nist']}")
    return doc


def preset_bench(lab: Lab, say=print) -> dict:
    """The compilers preset (matrix-compilers.yaml) from an empty build folder (cold: every build and known-answer
    gate; the images already built) and again (warm: builds current, verdicts remembered, measuring repeated)."""
    import json

    from ..run import RunRequest, run

    times = {}
    build = lab.root / "build" / "bench-compilers"
    shutil.rmtree(build, ignore_errors=True)
    for kind in ("cold", "warm"):
        load = os.getloadavg()[0]
        t0 = time.monotonic()
        o = run(lab, RunRequest(matrix=lab.root / "matrix-compilers.yaml", tag="bench-compilers", jobs=2,
                                results_dir=lab.root / "results", build_dir=build), say=lambda s: None)
        meta = json.loads((o.run_dir / "run.json").read_text())
        times[kind] = {"seconds": round(time.monotonic() - t0, 1), "counts": o.counts, "run": o.run_dir.name,
                       "stage_seconds": meta.get("stage_seconds", {}), "load_before": round(load, 2),
                       "load_after": round(os.getloadavg()[0], 2)}
        say(f"compilers preset, {kind}: {times[kind]['seconds'] / 60:.1f} min {o.counts} "
            f"{times[kind]['stage_seconds']}; load average {load:.1f} before")
    return times
