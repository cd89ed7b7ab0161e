"""invoke bench.aa: do the 95 % intervals cover the next run?  A/A pairs, a planted change, and the calibration.

N + 1 runs of one matrix back to back (or stored runs, ``--runs``) give N A/A pairs: the same binaries measured
twice.  From them, per pair and pooled:

* **calibration**: the machine's run-to-run noise (lab.calibration.fit: the relative sd each run adds, so that
  95 % of the differences lie within their combined intervals), fitted on the first half of the pairs and
  judged on the second half (held out: a fit judged on its own data holds by construction); stored in
  ``results/<machine>/noise.json`` (from all pairs) unless ``--no-store``, so that every later run's intervals take it;
* **coverage** of the intervals as each run stored them and as they are with the fitted noise: the share of
  differences beyond the combined half-widths (honest: 3-8 %) and the sd of z (0.8-1.25);
* **compare**: ``compare``'s verdicts on each A/A pair (the false-change rate: share not "no change") and on a
  planted pair: the second run with one cipher's encryption made 3 % slower (its raw encryption samples scaled by
  1.03 in a copy: the noise stays real, the change is known), the power (share of that cipher's encryption
  quantities called slower) and the false changes among the others.

The figures are printed and stored (bench/results/aa-DATE.json) with the machine kind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import calibration, results, stats, system
from ..compare import compare_frames
from ..config import Lab, shown
from ..errors import UserError
from ..request import RunRequest
from ..run import run
from . import header, store

PLANT = 1.03  # the planted slowdown of one cipher's encryption
PLANTED_METRICS = ("encrypt_speed", "encrypt_per_block")
GOALS = {"beyond": (0.03, 0.08), "sd_z": (0.8, 1.25), "aa_no_change": 0.97, "power": 0.90, "planted_others": 0.03}


@contextlib.contextmanager
def busy_cores(n: int, measuring_cpu: int | None):
    """n processes that spin for as long as the block runs, each pinned to a CPU other than the measuring one
    (the condition "one core busy": another tenant's work beside the measurement; the CPU is never idle, whatever
    else runs on it); nothing when n is 0."""
    cpus = sorted(os.sched_getaffinity(0) - ({measuring_cpu} if measuring_cpu is not None else set()))
    if n and not cpus:
        raise UserError("option --busy: no CPU other than the measuring one to keep busy")
    def pin(cpu: int) -> None:  # at the lowest priority: it fills that CPU's idle time, whatever else runs there
        os.sched_setaffinity(0, {cpu})
        os.nice(19)

    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda c=cpus[i % len(cpus)]:
                              pin(c)) for i in range(n)]
    try:
        yield [cpus[i % len(cpus)] for i in range(n)]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def measure(lab: Lab, n_runs: int, say=print, busy: int = 0, **request) -> list[Path]:
    """n_runs runs of the request back to back (with `busy` cores kept busy meanwhile); their folders."""
    dirs = []
    with busy_cores(busy, system.pick_cpu("auto")) as spun:
        if spun:
            say(f"bench.aa: CPU {', '.join(map(str, spun))} kept busy while measuring")
        for i in range(n_runs):
            t0 = time.monotonic()
            o = run(lab, RunRequest(icount=False, tag="aa", **request))
            say(f"bench.aa: run {i + 1} of {n_runs}: {o.run_dir.name} ({time.monotonic() - t0:.0f} s)")
            dirs.append(o.run_dir)
    return dirs


def planted_copy(run_dir: Path, cipher: str, into: Path, factor: float = PLANT) -> Path:
    """A copy of a run whose `cipher`'s encryption is `factor` slower: each timing process's encryption samples
    and each cycles process's encrypt deltas scaled (the rest byte for byte the same)."""
    out = into / run_dir.parent.name / (run_dir.name + "-planted")
    out.mkdir(parents=True)
    shutil.copy(run_dir / "run.json", out / "run.json")
    lines = []
    for line in (run_dir / "cells.jsonl").read_text().splitlines():
        rec = json.loads(line)
        m = rec.get("measurement")
        if rec.get("cipher") == cipher and rec.get("build"):  # other code: not one of compare's unchanged cells
            rec["build"]["programs"] = f"{rec['build'].get('programs')}-planted"
        if rec.get("cipher") == cipher and m:
            for p in m["timing"]:
                for ops in p["key_sizes"].values():
                    if "encrypt" in ops:
                        ops["encrypt"]["ns"] = [round(x * factor) for x in ops["encrypt"]["ns"]]
            for p in m["cycles"]:
                for op in p["ops"]:
                    if op["op"] == "encrypt":
                        op["deltas"] = [round(x * factor) for x in op["deltas"]]
        lines.append(json.dumps(rec))
    (out / "cells.jsonl").write_text("\n".join(lines) + "\n")
    return out


def _verdicts(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    t = compare_frames(a, b, "cell", "a", "b", metrics=list(calibration.TIMED))
    return pd.DataFrame([{"cell": r.item, "metric": r.metric, "verdict": r.verdict} for r in t.rows])


def judge(frames: list[pd.DataFrame], plant_cipher: str | None, planted: list[pd.DataFrame],
          cpu: str = "") -> tuple[dict, calibration.Noise | None]:
    """Calibration (fit on the first half, judged on the second), coverage and compare's verdicts: on the A/A
    pairs, and on each pair with its second run's copy made slower in one cipher's encryption (`planted`, one per
    pair).  Returns the figures and the noise fitted on all pairs (None without a pair)."""
    pairs = [calibration.paired(a, b) for a, b in zip(frames, frames[1:])]
    half = max(1, len(pairs) // 2)
    doc: dict = {"pairs": len(pairs), "quantities": int(sum(len(p) for p in pairs))}
    doc["as_stored"] = calibration.judge(pd.concat(pairs))
    fit_all = calibration.fit(pairs, cpu) if pairs else None  # what the machine stores
    if len(pairs) >= 2:
        fit = calibration.fit(pairs[:half], cpu)
        held = pd.concat(pairs[half:])
        # held out: compare on the second half as the next runs would see them (intervals rebuilt with the noise
        # fitted on the first half); calibrated: every pair with the noise fitted on all of them
        doc["held_out"] = {"fitted_on_pairs": half, "run_noise": fit.run_noise, "within_scale": fit.within_scale,
                           **stats.coverage(held.log_ratio, np.sqrt((fit.within_scale * held.s_within) ** 2
                                                                    + 2 * fit.run_noise ** 2)),
                           **_with_noise(frames[half:], planted[half:], plant_cipher, fit)}
        doc["calibrated"] = {"run_noise": fit_all.run_noise, "within_scale": fit_all.within_scale,
                             **_with_noise(frames, planted, plant_cipher, fit_all)}
    doc.update(_verdict_shares(frames, planted, plant_cipher))
    return doc, fit_all


def _verdict_shares(frames: list[pd.DataFrame], planted: list[pd.DataFrame], cipher: str | None) -> dict:
    """compare's share of "no change" over the A/A pairs, and its verdicts on the planted pairs."""
    v = pd.concat([_verdicts(a, b) for a, b in zip(frames, frames[1:])]) if len(frames) > 1 else pd.DataFrame()
    out: dict = {"aa_no_change": float((v.verdict == "no change").mean()) if len(v) else None}
    if planted:
        out["planted"] = _planted(frames, planted, cipher)
    return out


def _with_noise(frames: list[pd.DataFrame], planted: list[pd.DataFrame], cipher: str | None,
                noise: calibration.Noise) -> dict:
    """_verdict_shares with every run's intervals rebuilt with a fitted noise (run noise and within scale)."""
    def rebuilt(f: pd.DataFrame) -> pd.DataFrame:
        return calibration.with_noise(f, noise.run_noise, noise.within_scale)
    return _verdict_shares([rebuilt(f) for f in frames], [rebuilt(f) for f in planted], cipher)


def _planted(frames: list[pd.DataFrame], planted: list[pd.DataFrame], cipher: str) -> dict:
    """compare's verdicts of each pair's first run against its second run's planted copy: the power on the planted
    cipher's encryption quantities, the false changes among the others."""
    p = pd.concat([_verdicts(a, b) for a, b in zip(frames, planted)])
    hit = p.cell.str.startswith(cipher + "/") & p.metric.isin(PLANTED_METRICS)
    return {"cipher": cipher, "factor": PLANT, "pairs": len(planted), "affected": int(hit.sum()),
            "power": float((p[hit].verdict == "slower").mean()) if hit.any() else None,
            "others_changed": float((p[~hit].verdict != "no change").mean())}


def bench(lab: Lab, pairs: int = 10, runs: list[Path] | None = None, plant: str | None = "serpent",
          store_noise: bool = True, out: Path | None = None, say=print, results_dir: Path | None = None,
          busy: int = 0, condition: str | None = None, **request) -> dict:
    results_dir = Path(results_dir or lab.root / "results")
    t0 = time.monotonic()
    dirs = list(runs) if runs else measure(lab, pairs + 1, say, busy, results_dir=results_dir, **request)
    frames = [results.load(d, d.parent.parent) for d in dirs]
    with tempfile.TemporaryDirectory() as tmp:
        planted = []
        if plant and len(dirs) >= 2:  # each pair's second run, made slower in one cipher's encryption
            planted = [results.load(planted_copy(d, plant, Path(tmp) / str(i)), Path(tmp) / str(i))
                       for i, d in enumerate(dirs[1:])]
        figures, noise = judge(frames, plant, planted, system.machine().get("cpu_model", ""))
        lanes = run_lanes(dirs[0])
        noise = noise and dataclasses.replace(noise, lanes=lanes)
        doc = {**header("aa"), "runs": [f"{d.parent.name}/{d.name}" for d in dirs],  # machine/run id
               "condition": condition or _condition(busy, lanes), "lanes": lanes,
               "wall_seconds": round(time.monotonic() - t0, 1), "goals": GOALS, **figures}
    if store_noise and noise is not None:
        machine = dirs[0].parent.name
        doc["stored_noise"] = {"file": shown(calibration.store(dirs[0].parent.parent, machine, noise),
                                             results_dir.parent), "run_noise": noise.run_noise,
                             "within_scale": noise.within_scale}
    say(format_doc(doc))
    store(lab.root, doc, "aa", out, say)
    return doc


def run_lanes(run_dir: Path) -> int:
    """The measuring lanes a stored run had (run.json's options.cpus; older runs: one)."""
    try:
        return max(1, len(json.loads((run_dir / "run.json").read_text())["options"].get("cpus") or [None]))
    except (OSError, ValueError, KeyError, TypeError):
        return 1


def _condition(busy: int, lanes: int) -> str:
    if busy:
        return f"{busy} core{'s' if busy > 1 else ''} busy"
    return "quiet" if lanes <= 1 else f"{lanes} lanes"


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def _robust(d: dict) -> str:
    return f" (robust {d['robust_sd_z']:.2f})" if d.get("robust_sd_z") is not None else ""


def _fit(d: dict) -> str:
    """A fitted noise in words: the run-to-run noise, and the within-run parts' scale where it is not 1."""
    k = d.get("within_scale", 1.0)
    return f"run-to-run noise {_pct(d['run_noise'])}" + (f", within-run parts x {k:.2f}" if k < 1 else "")


def format_doc(doc: dict) -> str:
    lo, hi = GOALS["beyond"]
    s = doc["as_stored"]
    lines = [f"bench.aa on {doc['machine'].get('cpu_model', '?')} ({doc.get('condition', '?')}): {doc['pairs']} A/A pairs, "
             f"{doc['quantities']} quantity differences",
             f"  intervals as stored: beyond {_pct(s['beyond'])} (goal {_pct(lo)}-{_pct(hi)}), sd z {s['sd_z']:.2f} "
             f"(goal {GOALS['sd_z'][0]}-{GOALS['sd_z'][1]}){_robust(s)}"]
    if "held_out" in doc:
        h = doc["held_out"]
        lines.append(f"  fitted on {h['fitted_on_pairs']} pairs: {_fit(h)}; on the "
                     f"other pairs: beyond {_pct(h['beyond'])}, sd z {h['sd_z']:.2f}{_robust(h)}")
        if "aa_no_change" in h:
            line = f"    with it, compare on those pairs: A/A no change {_pct(h['aa_no_change'])}"
            if h.get("planted"):
                line += (f"; planted: slower in {_pct(h['planted']['power'])} of {h['planted']['affected']}, others "
                         f"changed {_pct(h['planted']['others_changed'])}")
            lines.append(line)
    if doc.get("calibrated"):
        c = doc["calibrated"]
        line = (f"  fitted on all pairs ({_fit(c)}), compare on them: A/A no change "
                f"{_pct(c['aa_no_change'])}")
        if c.get("planted"):
            line += (f"; planted: slower in {_pct(c['planted']['power'])} of {c['planted']['affected']}, others "
                     f"changed {_pct(c['planted']['others_changed'])}")
        lines.append(line)
    lines.append(f"  compare, A/A: no change {_pct(doc['aa_no_change'])} (goal >= {_pct(GOALS['aa_no_change'])})")
    if doc.get("planted"):
        p = doc["planted"]
        lines.append(f"  compare, {p['cipher']} encryption {100 * (p['factor'] - 1):.0f} % slower (in each of "
                     f"{p.get('pairs', 1)} pairs): slower in "
                     f"{_pct(p['power'])} of {p['affected']} (goal >= {_pct(GOALS['power'])}), others changed "
                     f"{_pct(p['others_changed'])} (goal <= {_pct(GOALS['planted_others'])})")
    if doc.get("stored_noise"):
        lines.append(f"  stored: {doc['stored_noise']['file']} ({_fit(doc['stored_noise'])})")
    return "\n".join(lines)
