"""The machine's reference speed: every timed figure of a run at the speed the machine had in its reference run.

Between two runs of the same binaries every figure moves by one factor, the whole machine's speed (a
neighbour's load, the host's frequency): one core busy on the AMD kind, -1.8 to +2.3 % between back-to-back
runs, common to every cell (docs/measurement.md, "What is left between runs").  Every measuring process also
times a fixed workload, the gauge (c_src/harness/util.c), and a run's gauges over all its processes see that
factor: the same 30 A/A pairs' figures at the reference speed moved by 0.093 % (sd over pairs)
where the raw figures moved by 0.94 %.

So a run's timed figures are given at the machine's *reference speed*: each multiplied (costs divided) by the
run's gauge over the reference gauge of the same gauge program.  The gauge is compiled with the cell's
compiler and its toolchain's flags (the build's cflags), on its target, and timed in the timing (ns) or cycles
(counter units) program: a *gauge group* is that combination, and only gauges of one group are ever compared.
A group's reference is the run gauge of the first run on this machine (and CPU model) that measured it, stored in
``results/<machine>/speed.json`` and copied into every later run's metadata (``speed_reference``), so a run's
figures never depend on files outside its folder.  A run without references (older runs, flag searches) keeps
its raw figures (``speed_factor`` NaN).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FILE = "speed.json"
MIN_PROCESSES = 3  # fewer gauged processes in a group: no run gauge (its median says too little)


@dataclass(frozen=True)
class RunGauge:
    """A gauge group's speed in one run: the median over its processes of each process's fastest gauge sample
    (per iteration), and the median's relative standard error (1.2533 x robust sd of log gauge / sqrt n)."""

    gauge: float
    rel_se: float
    processes: int


def group(cell, unit: str) -> str:
    """The gauge group of a cell record's processes timed in `unit` (ns: the timing program; a counter unit: the
    cycles program): what compiled the gauge (compiler version and flags) and where it ran."""
    b = cell.build
    flags = " ".join(b.cflags) if b else ""
    version = (b.compiler_version or b.compiler) if b else ""
    return f"{cell.target}|{version}|{flags}|{unit}"


def _gauge_minima(cells: Iterable) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for c in cells:
        m = c.measurement
        if m is None or c.status != "ok":
            continue
        for p in list(m.timing) + list(m.cycles):
            if p.gauge is not None and p.gauge.samples:
                out.setdefault(group(c, p.gauge.unit), []).append(float(p.gauge.per_iteration().min()))
    return out


def run_gauges(cells: Iterable) -> dict[str, RunGauge]:
    """Each gauge group's run gauge over the ok cells of one run (groups of fewer than MIN_PROCESSES processes
    left out)."""
    out = {}
    for g, v in _gauge_minima(cells).items():
        a = np.asarray(v, dtype=float)
        if a.size < MIN_PROCESSES or not (a > 0).all():
            continue
        lg = np.log(a)
        mad = float(np.median(np.abs(lg - np.median(lg))))
        out[g] = RunGauge(float(np.median(a)), 1.2533 * 1.4826 * mad / math.sqrt(a.size), int(a.size))
    return out


@dataclass(frozen=True)
class Factor:
    """How much slower than its reference a gauge group's machine ran in one run (run gauge / reference; above
    1: slower), with the run gauge's relative standard error."""

    value: float
    rel_se: float


def factors(gauges: dict[str, RunGauge], references: dict[str, float]) -> dict[str, Factor]:
    """The factor of every group that has both a run gauge and a reference.  The reference run itself: 1 with
    no uncertainty (its figures define the reference speed; nothing of them was corrected)."""
    return {g: Factor(r.gauge / references[g], 0.0 if r.gauge == references[g] else r.rel_se)
            for g, r in gauges.items() if references.get(g, 0) > 0}


# ------------------------------------------------------------ the machine's references
def path(results_dir: Path, machine: str) -> Path:
    return Path(results_dir) / machine / FILE


def _read(results_dir: Path, machine: str) -> dict:
    """The machine's references by CPU model ({} when none, or the file is unreadable: runs set them again)."""
    try:
        data = json.loads(path(results_dir, machine).read_text())
        return {str(cpu): {str(g): float(v) for g, v in refs.items()} for cpu, refs in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def stored(results_dir: Path, machine: str, cpu: str) -> dict[str, float]:
    """The machine's references for one CPU model ({} when none)."""
    return _read(results_dir, machine).get(cpu, {})


def settle(results_dir: Path, machine: str, cpu: str, gauges: dict[str, RunGauge],
           known: dict[str, float]) -> dict[str, float]:  # pragma: no mutate block (I/O: docs/testing.md)
    """The references of a run's groups: those the run already carries (`known`), else the machine's stored
    ones, else the run's own gauge, which becomes the machine's reference for that group (stored, never
    replaced: a reference that moved would move every later figure)."""
    data = _read(results_dir, machine)
    store = data.setdefault(cpu, {})
    out = {g: known.get(g) or store.get(g) or r.gauge for g, r in gauges.items()}
    new = {g: v for g, v in out.items() if g not in store}
    if new:
        store.update(new)
        p = path(results_dir, machine)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        tmp.replace(p)
    return out


__all__ = ["RunGauge", "Factor", "group", "run_gauges", "factors", "stored", "settle", "path", "FILE"]
