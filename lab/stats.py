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
from functools import lru_cache
from typing import Sequence

import numpy as np
from scipy import stats as sps

from .metrics import ESTIMATORS

# The smallest difference between two runs that is a change: below it a difference is "no change" whatever the
# intervals say (a compiler or a code change of less than 1 % is not worth a verdict).
MIN_EFFECT = 0.01
# The lab's noise threshold, defined once: the p90 of the relative differences between two identical runs under
# load (``invoke bench.repeatability``, docs/measurement.md).  A change smaller than this is no change.
NOISE_THRESHOLD = 0.03


# The confidence at which a difference between two runs' figures is called a change (compare, trends, history's
# thresholds): their 95 % intervals cover the next run (docs/measurement.md), so a 95 % verdict would call 5 % of
# the quantities of two identical runs changed; at 99 % about 1 % (``invoke bench.aa`` measures it).
VERDICT_CONFIDENCE = 0.99


def noise_threshold(sigmas: Sequence[float], confidence: float = VERDICT_CONFIDENCE,
                    fallback: float = NOISE_THRESHOLD) -> float:
    """The change two runs of a quantity must differ by to be called a change, from its measured run-to-run noise:
    z * sqrt(2) * the median relative sd of its figures (`sigmas`, from their intervals: :func:`sigma`), at least
    MIN_EFFECT; `fallback` when no figure has an interval (older runs, exact counts)."""
    s = np.asarray([x for x in sigmas if math.isfinite(x) and x > 0], dtype=float)
    if s.size == 0:
        return fallback
    return max(MIN_EFFECT, z_value(confidence) * math.sqrt(2) * float(np.median(s)))


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
    within: float = math.nan  # trimmed: the relative half-width of the within-run part alone (what more
    # processes can narrow); the run-to-run part (run_noise) comes on top of it

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
                        self.confidence, self.within)


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
    if estimator == "trimmed":
        return float(sps.trim_mean(a, TRIM))
    return float(a[0]) if estimator == "min" else float(np.median(a))


@lru_cache(maxsize=None)
def z_value(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 95 %)."""
    return float(sps.norm.ppf(0.5 + confidence / 2))


def run_to_run(a: np.ndarray, confidence: float, run_noise: float, resolution: float,
               within_scale: float = 1.0) -> Estimate:
    """The 20 % trimmed mean of the per-process values with its run-to-run interval: two-sided, symmetric about
    the estimate, from three half-widths added as variances: the Tukey–McLaughlin interval over processes (the
    layouts a run happened to draw: :func:`trimmed_mean`), the counter's quantisation (one step's uniform
    variance, step^2 / 12, over the n - 2g values kept) and the machine's run-to-run noise `run_noise` (a relative
    sd: the machine's speed from one run to the next, which every process of a run shares and so cannot show;
    lab.calibration learns it from A/A pairs).  ``within`` keeps the first two alone: what more processes narrow,
    so that the stop rule does not chase the machine's noise (docs/measurement.md, "Intervals that hold").
    `within_scale` is the machine's calibration of that part (lab.calibration: at most 1, learnt from A/A pairs
    where the Tukey–McLaughlin half-width over a few processes is wider than the runs' differences need)."""
    tm = trimmed_mean(a, confidence)
    point = tm.estimate
    if a.size < 2:
        return Estimate(point, math.nan, math.nan, "trimmed", int(a.size), confidence)
    z = z_value(confidence)
    kept = a.size - 2 * int(TRIM * a.size)
    hw_w = within_scale * math.hypot(tm.ci_high - point, z * resolution / math.sqrt(12 * kept))
    hw = math.hypot(hw_w, z * run_noise * point)
    within = hw_w / point if point > 0 else math.inf
    return Estimate(point, point - hw, point + hw, "trimmed", int(a.size), confidence, within)


def point(per_process: Sequence[float], estimator: str = "min") -> float:
    """The estimate of `estimator` over per-process values, without its interval (what estimate() returns as
    .estimate, at none of its bootstrap's cost)."""
    return _point(_sorted_processes(per_process, estimator), estimator)


def estimate(per_process: Sequence[float], estimator: str = "min", confidence: float = 0.95, *,
             run_noise: float = 0.0, resolution: float = 0.0, within_scale: float = 1.0) -> Estimate:
    """The headline estimate over per-process values (normally each process's minimum) with its interval
    (trimmed: the run-to-run interval of :func:`run_to_run`, which alone takes run_noise and resolution)."""
    a = _sorted_processes(per_process, estimator)
    if estimator == "trimmed":
        return run_to_run(a, confidence, run_noise, resolution or 0.0, within_scale)
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
    n = int(a.size)
    g = int(proportion * n)  # cut from each end (rounded down, as scipy's trim_mean and trimmed_mean_ci)
    point = float(a[g:n - g].mean())
    if n < 2:
        return Estimate(point, math.nan, math.nan, name, 1, confidence)
    if a[0] == a[-1]:
        return Estimate(point, point, point, name, n, confidence)
    # scipy.stats.mstats.trimmed_mean_ci's interval (a test holds the two equal), without its masked arrays: the
    # stop rule asks for it tens of thousands of times a run, and scipy's took about 1 ms a call (AMD EPYC)
    w = a.copy()
    w[:g], w[n - g:] = a[g], a[n - g - 1]  # Winsorized
    se = float(w.std(ddof=1)) / ((1 - 2 * proportion) * math.sqrt(n))
    hw = _t_quantile(1 - (1 - confidence) / 2, n - 2 * g - 1) * se
    return Estimate(point, point - hw, point + hw, name, n, confidence)


@lru_cache(maxsize=None)
def _t_quantile(p: float, df: int) -> float:
    return float(sps.t.ppf(p, df))


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
    stat = {"min": np.min, "median": np.median,
            "trimmed": lambda x, axis=-1: sps.trim_mean(x, TRIM, axis=axis)}[estimator]
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
    if estimator in ("min", "trimmed"):
        decided = both and beyond_noise(low, high, threshold)
    else:
        decided = p < alpha and abs(ratio - 1) > threshold
    if decided:
        better = ratio > 1 if higher_is_better else ratio < 1
        verdict = "faster" if better else "slower"
    else:
        verdict = "no change"
    return Comparison(ratio, low, high, p, verdict)


def sigma(e: Estimate) -> float:
    """The relative standard deviation an estimate's interval stands for (its relative half-width over z); NaN
    without an interval, 0 for an exact count."""
    if e.confidence is None:
        return 0.0
    return e.precision / z_value(e.confidence) if math.isfinite(e.precision) else math.nan


def compare_estimates(a: Estimate, b: Estimate, confidence: float = VERDICT_CONFIDENCE, min_effect: float = MIN_EFFECT,
                      higher_is_better: bool = False) -> Comparison:
    """B against A from two runs' figures and their run-to-run intervals (no raw data needed): the ratio b / a
    with the interval of its logarithm, log(b / a) +- z * sqrt(sigma_a^2 + sigma_b^2).  Faster or slower when that
    interval excludes 1 and the ratio differs from 1 by at least `min_effect`; otherwise no change.  The p value
    is the two-sided normal one of the same z.  Honest intervals (docs/measurement.md: coverage measured by
    ``invoke bench.aa``) make this a 1 % test at the default VERDICT_CONFIDENCE, and the effect floor lowers its
    false changes further."""
    if not (a.estimate > 0 and b.estimate > 0):
        return Comparison(math.nan, math.nan, math.nan, 1.0, "no change")
    ratio = b.estimate / a.estimate
    s = math.hypot(sigma(a), sigma(b))
    if not math.isfinite(s):
        return Comparison(ratio, math.nan, math.nan, 1.0, "no change")
    hw = z_value(confidence) * s
    low, high = ratio * math.exp(-hw), ratio * math.exp(hw)
    p = float(2 * sps.norm.sf(abs(math.log(ratio)) / s)) if s > 0 else float(ratio == 1.0)
    decided = (low > 1 or high < 1) and abs(ratio - 1) >= min_effect
    verdict = "no change"
    if decided:
        verdict = "faster" if (ratio > 1) == higher_is_better else "slower"
    return Comparison(ratio, low, high, p, verdict)


def coverage(log_ratio: Sequence[float], s_combined: Sequence[float], confidence: float = 0.95) -> dict:
    """How well intervals hold two runs' differences: z = log(b / a) / s, where s is the two figures' relative
    standard deviations combined (sqrt(s_a^2 + s_b^2)); the share of |z| beyond the confidence level's quantile
    (honest: 1 - confidence), the standard deviation of z (honest: about 1) and its robust twin, 1.4826 x the
    median absolute deviation (a few whole cells that changed mode between runs move the sd, not it).  A difference between two
    zero-width intervals is beyond (infinite z)."""
    d, s = np.asarray(log_ratio, dtype=float), np.asarray(s_combined, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(s > 0, d / s, np.where(d == 0, 0.0, np.inf))
    finite = z[np.isfinite(z)]
    robust = 1.4826 * float(np.median(np.abs(finite - np.median(finite)))) if finite.size > 1 else math.nan
    return {"quantities": int(z.size), "beyond": float(np.mean(np.abs(z) > z_value(confidence))) if z.size else math.nan,
            "sd_z": float(np.std(finite, ddof=1)) if finite.size > 1 else math.nan, "robust_sd_z": robust}


def fit_run_noise(log_ratio: Sequence[float], s_within: Sequence[float], confidence: float = 0.95) -> float:
    """The machine's run-to-run noise from A/A pairs: the relative sd sigma that each run adds to every figure such
    that the pairs' differences fall beyond their combined intervals, z * sqrt(s_within^2 + 2 sigma^2), in exactly
    1 - confidence of the quantities (s_within: each pair's two within-run sds combined).  0 when the within-run
    parts alone already hold them."""
    d = np.abs(np.asarray(log_ratio, dtype=float))
    s = np.asarray(s_within, dtype=float)
    ok = np.isfinite(d) & np.isfinite(s)
    d, s = d[ok], s[ok]
    if d.size == 0:
        raise ValueError("no pairs")
    z = z_value(confidence)
    # the sigma each quantity needs to be held; the confidence quantile of those is the answer
    need = np.sqrt(np.maximum((d / z) ** 2 - s ** 2, 0.0) / 2)
    return float(np.quantile(need, confidence))


def fit_within_scale(log_ratio: Sequence[float], s_within: Sequence[float], confidence: float = 0.95) -> float:
    """The share of the within-run parts that A/A pairs' differences need: the k (at most 1) such that exactly
    1 - confidence of them fall beyond z * k * s_within.  Below 1 when the runs' processes show more spread than
    their figures have from one run to the next (the Tukey-McLaughlin interval's t over a few processes, and the
    machine's drift within a run that its reference speed takes out: docs/measurement.md); 1 when the within-run
    parts alone do not hold them (the run-to-run noise is fitted then: fit_run_noise)."""
    d = np.abs(np.asarray(log_ratio, dtype=float))
    s = np.asarray(s_within, dtype=float)
    ok = np.isfinite(d) & np.isfinite(s) & (s > 0)
    if not ok.any():
        raise ValueError("no pairs")
    return float(min(1.0, np.quantile(d[ok] / (z_value(confidence) * s[ok]), confidence)))


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

