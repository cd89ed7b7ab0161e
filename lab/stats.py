"""Statistics: NIST's 1999 reduction, and the headline estimate with its interval. Imports nothing of the lab.

NIST (section 3.1) reported the mean of the samples within three standard
deviations of the median: :func:`nist_summary`, kept as ``value``.

The headline estimate (docs/measurement.md says why) treats the *process* as
the unit of replication: a quantity's samples inside one process are
summarised by their minimum (the cost with the least interference), and the
per-process minima are summarised by an estimator over processes:

* ``min``: the smallest per-process minimum, "the best-case cost over process
  layouts"; its interval is the bootstrap percentile interval over processes
  (scipy.stats.bootstrap), which shows how far it moves when its best
  processes are left out;
* ``median``: the median of the per-process minima, "the cost in a typical
  process"; its interval is the distribution-free order-statistic interval of
  the median (scipy.stats.quantile_test), exact for any distribution.

The machine-speed-gauge-relative figure (lab/quantities.py) is summarised over processes by the 20 % trimmed
mean (:func:`trimmed_mean`), with the Tukey–McLaughlin interval (scipy.stats.mstats.trimmed_mean_ci).

Every estimate carries the estimator's name, its interval and the relative
half-width that the adaptive sampling compares with the profile's target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

ESTIMATORS = ("min", "median")
# The lab's noise threshold, defined once: the p90 of the relative differences between two identical runs under
# load (``invoke bench.repeatability``, docs/measurement.md).  A change smaller than this is no change.
NOISE_THRESHOLD = 0.03


# ----------------------------------------------------------------- NIST 1999
@dataclass(frozen=True)
class Summary:
    value: float  # mean of the samples within 3 standard deviations of the median
    median: float
    std: float  # sample standard deviation (n-1) of all samples
    minimum: float
    maximum: float
    n: int  # samples kept (within 3 sd of the median)
    n_total: int


def nist_summary(xs: Sequence[float]) -> Summary:
    """NIST's reduction: mean of the samples within 3 sd of the median (sd with divisor n-1)."""
    a = np.asarray(xs, dtype=float)
    if a.size == 0:
        raise ValueError("no samples")
    med = float(np.median(a))
    sd = float(np.std(a, ddof=1)) if a.size > 1 else 0.0
    kept = a[np.abs(a - med) <= 3 * sd]
    return Summary(float(kept.mean()), med, sd, float(a.min()), float(a.max()), int(kept.size), int(a.size))


# ------------------------------------------------------------ headline estimate
@dataclass(frozen=True)
class Estimate:
    estimate: float
    ci_low: float  # NaN when the data cannot give an interval (too few processes)
    ci_high: float
    estimator: str
    processes: int
    confidence: float | None  # None: an exact count (lab.results), no interval

    @property
    def precision(self) -> float:
        """Relative half-width of the interval (inf when there is none)."""
        if not (math.isfinite(self.ci_low) and math.isfinite(self.ci_high)) or self.estimate <= 0:
            return math.inf
        return (self.ci_high - self.ci_low) / 2 / self.estimate

    def inverted(self, work: float) -> "Estimate":
        """The estimate of work / x (a rate from a time): the interval's ends swap."""
        def inv(x: float) -> float:
            if math.isnan(x):
                return math.nan
            return work / x if x > 0 else math.inf
        return Estimate(inv(self.estimate), inv(self.ci_high), inv(self.ci_low), self.estimator, self.processes,
                        self.confidence)


def _rng() -> np.random.Generator:
    """A fixed seed, on sorted data: the same data (in any order, at any scale) always gives the same interval."""
    return np.random.default_rng(1999)


def _sorted_processes(per_process: Sequence[float], estimator: str) -> np.ndarray:
    """The per-process values sorted, once the estimator is known and there is a value."""
    a = np.sort(np.asarray(per_process, dtype=float))
    if a.size == 0:
        raise ValueError("no processes")
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator '{estimator}' (one of {ESTIMATORS})")
    return a


def _point(a: np.ndarray, estimator: str) -> float:
    return float(a[0]) if estimator == "min" else float(np.median(a))


def point(per_process: Sequence[float], estimator: str = "min") -> float:
    """The estimate of `estimator` over per-process values, without its interval (what estimate() returns as
    .estimate, at none of its bootstrap's cost)."""
    return _point(_sorted_processes(per_process, estimator), estimator)


def estimate(per_process: Sequence[float], estimator: str = "min", confidence: float = 0.95) -> Estimate:
    """The headline estimate over per-process values (normally each process's minimum) with its interval."""
    a = _sorted_processes(per_process, estimator)
    point = _point(a, estimator)
    nan = math.nan
    if estimator == "min":
        if a.size < 2:
            return Estimate(point, nan, nan, "min", 1, confidence)
        if a[0] == a[-1]:
            return Estimate(point, point, point, "min", int(a.size), confidence)
        ci = sps.bootstrap((a,), np.min, confidence_level=confidence, method="percentile", n_resamples=4999,
                           vectorized=True, rng=_rng()).confidence_interval
        # the percentile's interpolation can land a rounding error above the minimum: the interval holds it
        return Estimate(point, min(float(ci.low), point), max(float(ci.high), point), "min", int(a.size), confidence)
    if a[0] == a[-1]:
        return Estimate(point, point, point, "median", int(a.size), confidence)
    # an end the order statistics cannot bound (too few processes) is NaN (scipy's value)
    ci = sps.quantile_test(a, q=point, p=0.5).confidence_interval(confidence)
    return Estimate(point, float(ci.low), float(ci.high), "median", int(a.size), confidence)


TRIM = 0.2  # the share trimmed from each end by trimmed_mean


def trimmed_mean(values: Sequence[float], confidence: float = 0.95, proportion: float = TRIM) -> Estimate:
    """The mean of the values left when `proportion` of them (rounded down) are cut from each end, with its
    Tukey–McLaughlin interval (Student's t on the Winsorized variance, n - 2g - 1 degrees of freedom; NaN ends with
    fewer than two values).  Robust like the median to a few disturbed values at either end (up to `proportion`),
    and steadier than it when the values are spread without outliers (each process's own layout; the measured
    comparison with the median: docs/measurement.md, "Over processes, a trimmed mean")."""
    a = np.sort(np.asarray(values, dtype=float))
    if a.size == 0:
        raise ValueError("no processes")
    name = f"trimmed mean {round(100 * proportion)} %"
    point = float(sps.trim_mean(a, proportion))
    if a.size < 2:
        return Estimate(point, math.nan, math.nan, name, 1, confidence)
    if a[0] == a[-1]:
        return Estimate(point, point, point, name, int(a.size), confidence)
    low, high = sps.mstats.trimmed_mean_ci(a, limits=(proportion, proportion), alpha=1 - confidence)
    return Estimate(point, float(low), float(high), name, int(a.size), confidence)


def counter_step(deltas: Sequence[int]) -> int:
    """The counter's resolution: the greatest common divisor of its readings (26 TSC ticks on the lab's VM)."""
    nonzero = [int(d) for d in deltas if d]
    return int(np.gcd.reduce(nonzero)) if nonzero else 1


# ------------------------------------------------------------------ comparison
@dataclass(frozen=True)
class Comparison:
    ratio: float  # estimate of B / estimate of A
    ci_low: float
    ci_high: float
    p_value: float  # two-sided Mann-Whitney U over the per-process values (shown; decides for "median" only)
    verdict: str  # faster, slower, no change (for a cost: ratio < 1 is faster)


def beyond_noise(low: float, high: float, threshold: float) -> bool:
    """True when an interval of a ratio lies wholly outside the noise band 1 +- threshold."""
    return low > 1 + threshold or high < 1 - threshold


def compare(a: Sequence[float], b: Sequence[float], estimator: str = "min", confidence: float = 0.95,
            threshold: float = NOISE_THRESHOLD, alpha: float = 0.05, higher_is_better: bool = False) -> Comparison:
    """B against A for one quantity, from their per-process values.

    The ratio's interval is a two-sample bootstrap over processes of the estimator's statistic.  The verdict
    follows the estimator, so that it answers the question the estimate answers:

    * ``min`` (the best case over processes): faster or slower when the ratio's interval lies wholly outside
      1 +- threshold.  A test over *all* per-process values would also judge the slow layout modes, which the
      best case leaves out on purpose (docs/measurement.md), and could call a tie what the estimate shows apart.
    * ``median`` (the typical process): a significant Mann-Whitney U test on the per-process values and a
      ratio outside 1 +- threshold.

    Anything else is "no change"."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ea, eb = point(xa, estimator), point(xb, estimator)
    if not ea > 0:  # against nothing: no ratio, no verdict
        return Comparison(math.nan, math.nan, math.nan, 1.0, "no change")
    ratio = eb / ea
    stat = np.min if estimator == "min" else np.median
    both = xa.size >= 2 and xb.size >= 2
    if both and not (np.ptp(xa) == 0 and np.ptp(xb) == 0):
        ci = sps.bootstrap((np.sort(xa), np.sort(xb)), lambda u, v, axis=-1: stat(v, axis=axis) / stat(u, axis=axis),
                           confidence_level=confidence, method="percentile", n_resamples=4999, vectorized=True,
                           rng=_rng()).confidence_interval
        low, high = float(ci.low), float(ci.high)
        p = float(sps.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    else:
        low = high = ratio
        p = 0.0 if ratio != 1 and both else 1.0
    if estimator == "min":
        decided = both and beyond_noise(low, high, threshold)
    else:
        decided = p < alpha and abs(ratio - 1) > threshold
    if decided:
        better = ratio > 1 if higher_is_better else ratio < 1
        verdict = "faster" if better else "slower"
    else:
        verdict = "no change"
    return Comparison(ratio, low, high, p, verdict)


@dataclass(frozen=True)
class Speedup:
    speedup: float  # B's speed / A's: above 1, B is faster
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str  # faster, slower, no change (of B)


def speedup(costs_a: Sequence[float], costs_b: Sequence[float], estimator: str = "min",
            threshold: float = NOISE_THRESHOLD, alpha: float = 0.05) -> Speedup:
    """B against A from their per-process costs (times, counts), oriented as a speed: compare()'s cost ratio
    B/A turned over, with its interval's ends swapped."""
    c = compare(costs_a, costs_b, estimator, threshold=threshold, alpha=alpha)
    return Speedup(1 / c.ratio, 1 / c.ci_high, 1 / c.ci_low, c.p_value, c.verdict)


def exact_verdict(speedup_ratio: float, threshold: float = NOISE_THRESHOLD) -> str:
    """The verdict on an exact speed ratio (instruction counts, facts): no statistics, a change beyond the
    threshold."""
    if abs(speedup_ratio - 1) <= threshold:
        return "no change"
    return "faster" if speedup_ratio > 1 else "slower"

