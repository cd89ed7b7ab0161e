"""The machine's run-to-run noise: what a run adds to every figure beyond what its own processes show.

A run's processes show how far its figure moves with the process layouts it happened to draw (the within-run
part of an interval).  Between two runs more moves: the machine's speed from one minute to the next (a
neighbour's load, the host's frequency), which every process of one run shares and so cannot see.  The lab
measures it from A/A pairs (the same binaries measured in two runs back to back: ``invoke bench.aa``) as one
relative standard deviation per machine, :func:`lab.stats.fit_run_noise`, and stores it in
``results/<machine>/noise.json``; every later run on that machine widens its trimmed intervals by it
(``run_noise`` in each record).  Before the first calibration the profile's prior (``sampling.run_noise``)
stands in: wide, so that a fresh machine's intervals err on the honest side.

Since a run's figures are at the machine's reference speed (lab/speed.py) the run noise left is near 0, and the
pairs' differences are often narrower than their within-run parts say (the Tukey-McLaughlin half-width over a
few processes is wide); then the fit is the share of the within-run part they need (``within_scale``, at most 1),
and the run noise 0.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from . import metrics, stats
from .models import Status

FILE = "noise.json"
TIMED = metrics.HEADLINE  # the timed quantities pairs are judged on
KEYS = ["cell", "metric", "key_size", "n_blocks"]


@dataclass(frozen=True)
class Noise:
    run_noise: float  # relative sd a run adds to every figure
    pairs: int  # A/A pairs it rests on
    quantities: int  # quantity differences it rests on
    measured: str  # when (UTC, ISO)
    cpu: str  # the machine's CPU model when it was measured
    within_scale: float = 1.0  # the share of the within-run part the pairs need (stats.fit_within_scale; older: 1)
    raw_run_noise: float | None = None  # the run noise of figures at the speed they ran at (Java's; older: run_noise)
    lanes: int = 1  # processes measured at once in the pairs (sampling.lanes): a calibration holds for its own


def path(results_dir: Path, machine: str, lanes: int = 1) -> Path:
    """Where a machine's calibration for runs of `lanes` measuring lanes lives (noise.json for one lane)."""
    return Path(results_dir) / machine / (FILE if lanes <= 1 else f"noise-{lanes}-lanes.json")


def learned(results_dir: Path, machine: str, lanes: int = 1) -> Noise | None:
    """The machine's stored run-to-run noise for runs of `lanes` measuring lanes, or None (never calibrated in
    that condition, or an unreadable file: the prior)."""
    try:
        n = Noise(**json.loads(path(results_dir, machine, lanes).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return n if n.lanes == max(1, lanes) else None


def store(results_dir: Path, machine: str, noise: Noise) -> Path:
    p = path(results_dir, machine, noise.lanes)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(asdict(noise), indent=1) + "\n")
    return p


def paired(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The timed quantities both runs measured with a run-to-run interval (estimator trimmed), one row each: the log
    ratio of the two estimates, the within-run sds combined with the speed factors' (s_within) and the whole
    intervals' (s_total)."""
    def sel(d: pd.DataFrame) -> pd.DataFrame:
        d = d[(d.status == Status.OK) & (d.estimator == "trimmed") & d.metric.isin(TIMED)
              & ~d.below_resolution.astype(bool)]
        # the within-run part as the processes show it, before any calibration of it (what a fit starts from)
        scale = d["within_scale"].astype(float).fillna(1.0) if "within_scale" in d else 1.0
        d = d.assign(speed_se=d["speed_se"].astype(float).fillna(0.0) if "speed_se" in d else 0.0,
                     within=d["within"].astype(float) / scale)
        # the figure at the speed its run ran at: a cost times its speed factor, a speed (a rate) divided by it
        f = d["speed_factor"].astype(float).fillna(1.0) if "speed_factor" in d else 1.0
        d = d.assign(ran=d.estimate.astype(float) * np.where(d.metric.map(metrics.higher_is_better), 1 / f, f))
        return d[KEYS + ["estimate", "precision", "within", "confidence", "speed_se", "ran"]]
    m = sel(a).merge(sel(b), on=KEYS, suffixes=("_a", "_b"))
    z = m.confidence_a.map(lambda c: stats.z_value(float(c)))
    # what a run shows of itself: its processes' spread and its speed factor's uncertainty (lab/speed.py)
    shown = np.sqrt(m.within_a.astype(float) ** 2 + m.within_b.astype(float) ** 2
                    + (z * m.speed_se_a) ** 2 + (z * m.speed_se_b) ** 2)
    m = m.assign(log_ratio=np.log(m.estimate_b.astype(float) / m.estimate_a.astype(float)),
                 raw_log_ratio=np.log(m.ran_b / m.ran_a),
                 s_processes=np.hypot(m.within_a.astype(float), m.within_b.astype(float)) / z,
                 s_within=shown / z,
                 s_total=np.hypot(m.precision_a.astype(float), m.precision_b.astype(float)) / z)
    return m[np.isfinite(m.log_ratio)]


def fit(pairs: list[pd.DataFrame], cpu: str, confidence: float = 0.95) -> Noise:
    """The run-to-run noise that makes the pairs' intervals hold `confidence` of their differences, or, where the
    within-run parts alone hold more than that, the share of them that does (within_scale, run noise 0)."""
    d = pd.concat(pairs, ignore_index=True)
    if d.empty:
        raise ValueError("no quantity was measured with a run-to-run interval in both runs of any pair")
    scale = stats.fit_within_scale(d.log_ratio, d.s_within, confidence)
    value = stats.fit_run_noise(d.log_ratio, d.s_within, confidence) if scale >= 1 else 0.0
    raw = stats.fit_run_noise(d.raw_log_ratio, d.s_processes, confidence) if "raw_log_ratio" in d else value
    return Noise(round(value, 5), len(pairs), int(len(d)), datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 cpu, round(scale, 4), round(raw, 5))


def with_noise(df: pd.DataFrame, run_noise: float, within_scale: float = 1.0) -> pd.DataFrame:
    """A run's rows as they would be had the run taken `run_noise`: every trimmed figure's interval rebuilt from
    its within-run part, that noise and its speed factor's uncertainty (stats.run_to_run's sum of variances;
    symmetric about the estimate)."""
    t = (df.estimator == "trimmed") & df.within.notna() & df.estimate.notna()
    if not t.any():
        return df
    z = df.loc[t, "confidence"].map(lambda c: stats.z_value(float(c)))
    se = df.loc[t, "speed_se"].astype(float).fillna(0.0) if "speed_se" in df else 0.0
    old = df.loc[t, "within_scale"].astype(float).fillna(1.0) if "within_scale" in df else 1.0
    within = df.loc[t, "within"].astype(float) / old * within_scale
    h = np.sqrt(within ** 2 + (z * run_noise) ** 2 + (z * se) ** 2)
    out = df.copy()
    est = out.loc[t, "estimate"].astype(float)
    out.loc[t, "ci_low"], out.loc[t, "ci_high"] = est * (1 - h), est * (1 + h)
    out.loc[t, "precision"], out.loc[t, "run_noise"] = h, run_noise
    out.loc[t, "within"] = within
    if "within_scale" in out or within_scale != 1.0:
        out.loc[t, "within_scale"] = within_scale
    return out


def judge(pair: pd.DataFrame, confidence: float = 0.95) -> dict:
    """One pair's (or pooled pairs') coverage by the intervals as stored: share beyond and sd of z."""
    return stats.coverage(pair.log_ratio, pair.s_total, confidence)


__all__ = ["Noise", "learned", "store", "paired", "fit", "judge", "with_noise", "path", "FILE"]
