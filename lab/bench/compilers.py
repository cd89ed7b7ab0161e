"""invoke bench.compilers: what the compiler axis costs and how far its answers repeat.

* The flag search (lab/flags.py) over a space (default flags/gcc-six.yaml: six binary choices, 64 combinations)
  for five ciphers on the host, twice (cold: an empty build folder; warm: the same folder again): wall time of
  each search and of its stages (build, gate, waiting for the timing lock, race; CPU seconds of builds and gates),
  builds, distinct binaries, measuring processes per cell against what the full factorial would spend at the nist
  profile (every distinct binary to its max_processes), the winners' interval half-widths, and whether the second
  search's winner is the first's or one tied with it (and the other way round).
* ``--first RUNS --second RUNS``: the same figures from stored searches (e.g. one repeat per cipher).
* With ``--preset``: the ``compilers`` matrix preset (presets/compilers.yaml) cold (an empty build folder) and warm.

Goals (issue 22): the six-flag search for five ciphers in <= 10 min on two cores with the winners' intervals
within +-1 %; the same winner or a tied one in >= 95 % of cells.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .. import results
from ..config import Lab
from ..errors import UsageError
from ..models import FlagCell, FlagSearch
from . import header, store

CIPHERS = ["serpent", "mars", "rc6", "rijndael", "twofish"]


def _agree(a: dict, b: dict) -> bool:
    """b's winner is a's winner or tied with it, or a's winner is tied with b's."""
    return b["winner"] == a["winner"] or b["winner"] in a["tied"] or a["winner"] in b["tied"]


def bench(lab: Lab, space: str | None = None, ciphers: list[str] | None = None, preset: bool = False,
          out: Path | None = None, jobs: int | None = None, search: bool = True, first: list[str] | None = None,
          second: list[str] | None = None, say=print) -> dict:
    if not (search or preset or first):
        raise UsageError("bench.compilers: --no-search needs --preset (there would be nothing to measure)")
    doc = {**header("compilers")}
    if first or second:
        if not (first and second):
            raise UsageError("bench.compilers: --first needs --second (the stored searches to compare)")
        doc.update(from_runs(lab, first, second, say=say))
    elif search:
        doc.update(search_bench(lab, space, ciphers, jobs, say))
    if preset:
        doc["preset"] = preset_bench(lab, say, jobs=jobs)
    store(lab.root, doc, "compilers", out, say)
    return doc


STAGES = ("build", "gate", "lock_wait", "race", "confirm", "build_cpu", "gate_cpu")


def _precision(cell: FlagCell) -> float | None:
    """The winner's relative half-width, from a searched cell."""
    w = next((e for e in cell.candidates if e.status == "winner"), None)
    if not w or not w.estimate or w.ci_low is None:
        return None
    return (w.ci_high - w.ci_low) / 2 / w.estimate


def _search(kind: str, seconds: float, found: list[FlagCell], load_before: float | None, say=print) -> dict:
    """One search's figures: its cells as stored (models.FlagCell), each with its winner's precision."""
    cells = [{**c.model_dump(mode="json", exclude_unset=True), "winner_precision": _precision(c)} for c in found]
    stages = {k: round(sum(c.stages.get(k, 0.0) for c in found), 1) for k in STAGES}
    load = round(os.getloadavg()[0], 2)
    say(f"search ({kind}): {seconds / 60:.1f} min: " + ", ".join(f"{k} {v:.0f} s" for k, v in stages.items())
        + (f"; load average {load_before:.1f} before, {load:.1f} after" if load_before is not None else ""))
    for c in cells:
        say(f"  {c['cipher']:<10} winner {' '.join(c['winner'] or ['-'])!s:<50} tied {len(c['tied'])}, "
            f"{c['distinct_binaries']} binaries, {c['processes']} processes, ±"
            f"{100 * (c['winner_precision'] or float('nan')):.2f} %, "
            + ", ".join(f"{k} {v:.0f} s" for k, v in c.get("stages", {}).items()))
    return {"kind": kind, "seconds": round(seconds, 1), "stages": stages, "load_before": load_before,
            "load_after": load, "cells": cells}


def search_bench(lab: Lab, space: str | None, ciphers: list[str] | None, jobs: int | None, say=print) -> dict:
    from .. import flags

    space = space or str(lab.root / "flags" / "gcc-six.yaml")
    ciphers = ciphers or CIPHERS
    # the first search from an empty build folder (cold: every build and every gate), the second in the same
    # folder (warm: builds current, the distinct binaries' verdicts remembered): both repeat the whole race
    build = lab.root / "build" / "bench-compilers-flags"
    shutil.rmtree(build, ignore_errors=True)
    searches = []
    for kind in ("cold", "warm"):
        load = round(os.getloadavg()[0], 2)
        t0 = time.monotonic()
        found = flags.search(lab, space, ciphers, build_dir=build, jobs=jobs,
                             say=lambda s: say(s) if s.startswith(("flags:", "  stages:")) else None)
        searches.append(_search(kind, time.monotonic() - t0, [c.record() for c in found], load, say))
    return summarise(lab, space, ciphers, searches, say)


def from_runs(lab: Lab, first: list[str], second: list[str], results_dir: Path | None = None, say=print) -> dict:
    """The same figures from stored searches (their runs' outcome, results.read_flag_search): `first` the first
    search (one run, or one per cipher), `second` the repeat.  A search's seconds are then the sum of its cells'
    (prepare and race)."""
    results_dir = results_dir or lab.root / "results"
    by_id = {d.name: d for d in reversed(results.run_dirs(results_dir))}  # the first folder of an id, as before
    docs: list[list[FlagSearch]] = []
    for runs in (first, second):
        found = [results.read_flag_search(by_id[r]) if r in by_id else None for r in runs]
        for r, f in zip(runs, found):
            if f is None:
                raise UsageError(f"option --first/--second: no flag search run '{r}' in {results_dir}")
        docs.append(found)
    spaces = {d.space for ds in docs for d in ds}
    if len(spaces) != 1:
        raise UsageError(f"options --first/--second: the runs searched different spaces ({', '.join(sorted(spaces))})")
    searches = [_search(kind, sum(c.seconds for d in ds for c in d.cells), [c for d in ds for c in d.cells], None, say)
                for kind, ds in zip(("first", "repeat"), docs)]
    doc = summarise(lab, spaces.pop(), [c["cipher"] for c in searches[0]["cells"]], searches, say)
    doc["runs"] = {"first": first, "second": second}
    return doc


def summarise(lab: Lab, space: str, ciphers: list[str], searches: list[dict], say=print) -> dict:
    from ..flags import shown

    first, second = searches
    nist_max = lab.profile("nist").sampling.max_processes
    pairs = {(c["cipher"], c["target"]): [c] for c in first["cells"]}
    for c in second["cells"]:
        pairs.get((c["cipher"], c["target"]), []).append(c)
    agree = [_agree(*p) for p in pairs.values() if len(p) == 2]
    spent = [c["processes"] for s in searches for c in s["cells"]]
    factorial = [c["distinct_binaries"] * nist_max for s in searches for c in s["cells"]]
    precisions = [c["winner_precision"] for s in searches for c in s["cells"] if c["winner_precision"] is not None]
    doc = {"space": shown(lab, space), "ciphers": ciphers, "searches": searches,
           "candidates_per_cell": first["cells"][0]["candidates_total"] if first["cells"] else 0,
           "agreement": sum(agree) / len(agree) if agree else None, "cells_compared": len(agree),
           "processes_spent": sum(spent), "processes_full_factorial_nist": sum(factorial),
           "processes_per_cell_mean": sum(spent) / len(spent) if spent else None,
           # programs (timing + kat) compiled and linked, against both programs of every candidate of every cell
           "programs_built": [sum(c["builds"] for c in s["cells"]) for s in searches],
           "programs_full_factorial": sum(2 * c["candidates_total"] for c in first["cells"]),
           "winner_precision_max": max(precisions) if precisions else None,
           "goals": {"search_minutes": 10, "winner_precision": 0.01, "agreement": 0.95}}
    say(f"flag search: {doc['candidates_per_cell']} candidates x {len(ciphers)} ciphers in "
        f"{first['seconds'] / 60:.1f} ({first['kind']}) and {second['seconds'] / 60:.1f} min ({second['kind']}) "
        f"(goal <= 10); winners within ±{100 * (doc['winner_precision_max'] or 0):.2f} % (goal 1 %); same or tied "
        f"winner in {100 * (doc['agreement'] or 0):.0f} % of {len(agree)} cells (goal 95 %); "
        f"{doc['processes_spent']} measuring processes where the full factorial at the nist profile would take up "
        f"to {doc['processes_full_factorial_nist']}")
    return doc


def preset_bench(lab: Lab, say=print, jobs: int | None = None) -> dict:
    """The compilers preset (presets/compilers.yaml) from an empty build folder (cold: every build and known-answer
    gate; the images already built) and again (warm: builds current, verdicts remembered, measuring repeated), with
    `jobs` builds and gates at a time (--jobs; the core count when not given, as every run)."""
    from ..run import RunRequest, run

    times = {}
    build = lab.root / "build" / "bench-compilers"
    shutil.rmtree(build, ignore_errors=True)
    for kind in ("cold", "warm"):
        load = os.getloadavg()[0]
        t0 = time.monotonic()
        o = run(lab, RunRequest(preset="compilers", tag="bench-compilers", jobs=jobs,
                                results_dir=lab.root / "results", build_dir=build), say=lambda s: None)
        meta, _ = results.read_run(o.run_dir)
        counts = {str(k): n for k, n in o.counts.items()}  # Status names, as the run's summary line prints them
        times[kind] = {"seconds": round(time.monotonic() - t0, 1), "counts": counts, "run": o.run_dir.name,
                       "stage_seconds": meta.stage_seconds, "load_before": round(load, 2),
                       "load_after": round(os.getloadavg()[0], 2), "jobs": meta.options["jobs"]}
        say(f"compilers preset, {kind}: {times[kind]['seconds'] / 60:.1f} min {counts} "
            f"{times[kind]['stage_seconds']}; load average {load:.1f} before")
    return times
