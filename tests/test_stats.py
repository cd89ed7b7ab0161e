"""Statistics against values computed by hand, and properties (Hypothesis) that every estimator must have."""

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from lab import metrics, stats


# ------------------------------------------------------------------ NIST 1999
def test_nist_value_keeps_a_sample_within_three_sd_but_not_within_two():
    # 1..9 and 30: mean 7.5, median 5.5; squared deviations from the mean sum to 622.5,
    # sd = sqrt(622.5 / 9) = 8.3166; |30 - 5.5| = 24.5 <= 3 sd = 24.95 (kept), > 2 sd = 16.63
    s = stats.nist_summary([1, 2, 3, 4, 5, 6, 7, 8, 9, 30])
    assert s.median == 5.5
    assert s.std == pytest.approx(math.sqrt(622.5 / 9))
    assert s.value == pytest.approx(7.5)  # the mean of all ten: NOT the median, NOT the 2-sd mean (5.0)
    assert (s.n, s.n_total, s.minimum, s.maximum) == (10, 10, 1, 30)


def test_nist_value_drops_a_sample_beyond_three_sd():
    # 10..19 and 40: median 15, sd = 8.2075; |40 - 15| = 25 > 24.62: dropped; mean of 10..19 = 14.5
    s = stats.nist_summary([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 40])
    assert s.median == 15 and s.std == pytest.approx(8.2075353, rel=1e-6)
    assert s.value == pytest.approx(14.5) and s.n == 10 and s.n_total == 11


def test_nist_summary_of_one_sample_and_of_none():
    s = stats.nist_summary([7.0])
    assert (s.value, s.median, s.std, s.n) == (7.0, 7.0, 0.0, 1)
    with pytest.raises(ValueError):
        stats.nist_summary([])


# ----------------------------------------------------------- headline estimate
def test_min_estimate_is_the_best_process_and_its_interval_reaches_up():
    e = stats.estimate([105.0, 100.0, 130.0, 101.0, 103.0, 99.0, 150.0, 102.0], "min")
    assert e.estimate == 99.0 and e.estimator == "min" and e.processes == 8
    assert e.ci_low == 99.0  # the minimum can only rise when its best processes are left out
    assert 100.0 <= e.ci_high <= 105.0  # the bootstrap of the minimum reaches the low order statistics
    assert e.precision == pytest.approx((e.ci_high - e.ci_low) / 2 / 99.0)


def test_point_is_the_estimate_without_its_interval():
    x = [104.0, 100.0, 131.0, 102.0, 250.0, 101.0]
    assert stats.point(x, "min") == 100.0 == stats.estimate(x, "min").estimate
    assert stats.point(x, "median") == 103.0 == stats.estimate(x, "median").estimate
    with pytest.raises(ValueError, match="no processes"):
        stats.point([], "min")
    with pytest.raises(ValueError, match="unknown estimator"):
        stats.point(x, "mean")


def test_median_estimate_uses_the_order_statistic_interval():
    # 11 processes: median 6; the 95 % interval is [x(2), x(10)] (binomial); one slow layout makes the mean 7.4,
    # so a mean passed off as a median shows (issue 26: fixtures that separate the alternatives)
    x = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 26])
    e = stats.estimate(x, "median")
    assert e.estimate == 6.0 and np.mean(x) == pytest.approx(7.364, abs=1e-3)
    ci = sps.quantile_test(x, q=6.0, p=0.5).confidence_interval(0.95)
    assert (e.ci_low, e.ci_high) == (ci.low, ci.high) == (2.0, 10.0)
    few = stats.estimate([5.0, 6.0, 7.0], "median")  # too few processes for a 95 % interval
    assert math.isnan(few.ci_low) and few.precision == math.inf


def test_identical_processes_give_a_zero_width_interval_and_one_gives_none():
    e = stats.estimate([42.0] * 6, "min")
    assert (e.estimate, e.ci_low, e.ci_high, e.precision) == (42.0, 42.0, 42.0, 0.0)
    one = stats.estimate([42.0], "min")
    assert one.estimate == 42.0 and math.isnan(one.ci_high) and one.precision == math.inf


def test_rates_invert_the_interval():
    e = stats.estimate([100.0, 110.0, 120.0, 104.0, 101.0], "min").inverted(1e6)
    assert e.estimate == pytest.approx(1e4)
    assert e.ci_high == pytest.approx(1e4) and e.ci_low < e.estimate  # a time's upper end is a speed's lower end


def test_unknown_estimator_and_no_processes_are_errors():
    with pytest.raises(ValueError, match="unknown estimator"):
        stats.estimate([1.0, 2.0], "mean")
    with pytest.raises(ValueError):
        stats.estimate([], "min")


def test_counter_step_is_the_gcd_of_readings():
    assert stats.counter_step([52, 78, 26 * 17, 0]) == 26
    assert stats.counter_step([3, 5]) == 1
    assert stats.counter_step([0, 0]) == 1


def test_interval_is_reproducible():
    x = [100.0, 101.0, 103.0, 99.5, 140.0, 100.5]
    assert stats.estimate(x, "min") == stats.estimate(list(reversed(x)), "min")


# --------------------------------------------------------------- properties
samples = st.lists(st.floats(min_value=1.0, max_value=1e6, allow_nan=False), min_size=2, max_size=30)


@settings(max_examples=60, deadline=None)
@given(samples, st.sampled_from(metrics.ESTIMATORS), st.randoms(use_true_random=False))
def test_permutation_invariance(xs, estimator, rnd):
    shuffled = list(xs)
    rnd.shuffle(shuffled)
    a, b = stats.estimate(xs, estimator), stats.estimate(shuffled, estimator)
    assert a.estimate == b.estimate
    assert (a.ci_low, a.ci_high) == pytest.approx((b.ci_low, b.ci_high), nan_ok=True)


@settings(max_examples=60, deadline=None)
@given(samples, st.sampled_from(metrics.ESTIMATORS), st.floats(min_value=0.01, max_value=100.0))
def test_scaling_the_samples_scales_the_estimate(xs, estimator, k):
    a, b = stats.estimate(xs, estimator), stats.estimate([k * x for x in xs], estimator)
    assert b.estimate == pytest.approx(k * a.estimate, rel=1e-9)
    assert b.precision == pytest.approx(a.precision, rel=1e-6, nan_ok=True) or a.precision == b.precision == math.inf


@settings(max_examples=60, deadline=None)
@given(samples, st.sampled_from(metrics.ESTIMATORS))
def test_the_interval_contains_the_estimate(xs, estimator):
    e = stats.estimate(xs, estimator)
    if math.isfinite(e.ci_low):
        assert e.ci_low <= e.estimate <= e.ci_high


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=100.0, max_value=110.0), min_size=9, max_size=25),
       st.floats(min_value=1e3, max_value=1e9))
def test_bounded_influence_of_one_outlier(xs, outlier):
    """One process slowed down by anything (a pre-emption, a stolen CPU) moves neither robust estimate out of
    the range of the others, however slow it was; NIST's mean it would move."""
    for estimator in metrics.ESTIMATORS:
        e = stats.estimate(xs + [outlier], estimator)
        assert min(xs) <= e.estimate <= max(xs)


def test_nist_value_is_not_robust_where_the_headline_is():
    # mean 105, sd = sqrt((8 * 25 + 225 + 625) / 9) = 10.80; |130 - 100| = 30 <= 32.4: kept, pulls the mean to 105
    xs = [100.0] * 8 + [120.0, 130.0]
    assert stats.nist_summary(xs).value == pytest.approx(105.0)
    assert stats.estimate(xs, "min").estimate == 100.0


@pytest.mark.parametrize("dist", ["lognormal", "gamma", "bimodal"])
def test_median_interval_covers_the_true_median_about_95_percent(dist):
    """Coverage on samples from known distributions: the order-statistic interval is exact for any
    continuous distribution, so in 400 data sets of 15 processes the true median is inside ~95 % of the time."""
    rng = np.random.default_rng(7)
    if dist == "lognormal":
        draw, true = (lambda n: rng.lognormal(5.0, 0.3, n)), float(np.exp(5.0))
    elif dist == "gamma":
        draw, true = (lambda n: 100 + rng.gamma(2.0, 5.0, n)), 100 + sps.gamma(2.0, scale=5.0).median()
    else:  # two layout modes, 60 % at 1180 and 40 % at 1320, each with a little noise
        def draw(n):
            return np.where(rng.random(n) < 0.6, rng.normal(1180, 5, n), rng.normal(1320, 5, n))
        true = float(np.median(draw(2_000_000)))
    hits = 0
    for _ in range(400):
        e = stats.estimate(draw(15), "median")
        hits += e.ci_low <= true <= e.ci_high
    assert 0.92 <= hits / 400 <= 0.995


def test_min_interval_tells_how_far_a_repeat_moves_the_best_case():
    """For the best-case estimator the quantity of interest is the cost of the fastest layouts: with two modes
    (fast 1180 in 35 % of processes, slow 1320), when 12 processes found the fast mode often enough the interval
    stays in it (and the precision target can be met); when the fast mode was rare the interval honestly
    reaches the slow one (and the adaptive sampling takes more processes)."""
    rng = np.random.default_rng(3)
    narrow, wide = [], 0
    for _ in range(300):
        x = np.where(rng.random(12) < 0.35, rng.normal(1180, 3, 12), rng.normal(1320, 3, 12))
        e = stats.estimate(x, "min")
        fast = int((x < 1250).sum())
        if fast >= 4:
            assert e.ci_high < 1250 and e.estimate < 1190
            narrow.append(e.precision)
        elif 1 <= fast <= 2:
            assert e.ci_high > 1250  # two fast processes of twelve: the best case is not pinned down
            wide += 1
    assert len(narrow) > 100 and np.median(narrow) < 0.01 and wide > 10


def test_trimmed_mean_cuts_a_fifth_from_each_end_with_the_tukey_mclaughlin_interval_computed_by_hand():
    # 100 (six), 103 (three), 150 (one disturbed process): median 100, mean 105.9; cut two from each end: 101.
    # Winsorized: 100 x 6, 103 x 4, sd 1.5492; half-width t(0.975, 10 - 2*2 - 1 = 5) = 2.5706 * sd / (0.6 sqrt 10)
    e = stats.trimmed_mean([103, 100, 150, 100, 103, 100, 100, 103, 100, 100], 0.95)
    w = [100.0] * 6 + [103.0] * 4
    half = 2.5706 * float(np.std(w, ddof=1)) / (0.6 * math.sqrt(10))
    assert e.estimate == pytest.approx(101)
    assert (e.ci_low, e.ci_high) == (pytest.approx(101 - half, rel=1e-4), pytest.approx(101 + half, rel=1e-4))
    assert e.processes == 10 and e.confidence == 0.95 and e.estimator == "trimmed mean 20 %"
    narrow = stats.trimmed_mean([103, 100, 150, 100, 103, 100, 100, 103, 100, 100], 0.80)
    assert e.ci_low < narrow.ci_low < narrow.ci_high < e.ci_high  # the confidence is the one asked for
    one = stats.trimmed_mean([7.0])
    assert one.estimate == 7.0 and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    same = stats.trimmed_mean([5.0, 5.0, 5.0])
    assert (same.estimate, same.ci_low, same.ci_high) == (5.0, 5.0, 5.0)


def test_trimmed_mean_is_scipys_trimmed_mean_and_tukey_mclaughlin_interval():
    """The lab computes them without scipy's masked arrays (the stop rule asks tens of thousands of times a run):
    the same figures as scipy.stats.trim_mean and scipy.stats.mstats.trimmed_mean_ci, at every process count."""
    rng = np.random.default_rng(11)
    for n in list(range(2, 41)) + [57, 100]:
        for conf in (0.95, 0.8, 0.99):
            a = rng.lognormal(7, 0.05, n) + (rng.random(n) < 0.1) * 300  # a few slow processes
            e = stats.trimmed_mean(a, conf)
            low, high = sps.mstats.trimmed_mean_ci(np.sort(a), limits=(0.2, 0.2), alpha=1 - conf)
            assert e.estimate == pytest.approx(sps.trim_mean(a, 0.2), rel=1e-12)
            assert (e.ci_low, e.ci_high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12)), (n, conf)


def test_the_gauge_relative_figure_is_the_trimmed_mean_of_the_processes_paired_ratios():
    from lab.quantities import Quantity, gauge_relative
    q = Quantity("ekey", 128, None, "tsc_ticks", "x86-tsc-lfence", per_process=[500.0] * 10,
                 gauge=[5.0] * 10, paired=[103, 100, 150, 100, 103, 100, 100, 103, 100, 100])
    assert gauge_relative(q, 0.95).estimate == pytest.approx(101)  # the median would say 100, the mean 105.9
    speed = Quantity("encrypt_speed", 128, None, "Kbit/s", "clock-monotonic", per_process=[100.0] * 10,
                     gauge=[2.0] * 10, paired=[50.0] * 9 + [80.0], rate_work=128e6)
    assert gauge_relative(speed, 0.95).estimate == pytest.approx(128e6 / 50)  # a speed: rate_work over it
    speed.paired[3] = None
    assert gauge_relative(speed, 0.95) is None  # a process without a gauge


# ----------------------------------------------------------------- compare
def test_compare_finds_a_known_factor_and_calls_noise_no_change():
    rng = np.random.default_rng(11)
    a = 1000 + rng.gamma(2.0, 5.0, 10)
    slower = stats.compare(a, 1.25 * a + rng.normal(0, 2, 10))
    assert slower.verdict == "slower" and slower.ratio == pytest.approx(1.25, rel=0.02)
    assert slower.ci_low <= slower.ratio <= slower.ci_high and slower.p_value < 0.01
    same = stats.compare(a, a + rng.normal(0, 2, 10))
    assert same.verdict == "no change"
    tiny = stats.compare(a, 1.01 * a)  # significant but below the 2 % noise threshold
    assert tiny.verdict == "no change"
    faster = stats.compare(a, 0.5 * a)
    assert faster.verdict == "faster" and faster.ratio == pytest.approx(0.5)


def _bootstrap_ratio(a, b, stat, confidence=0.95):
    ci = sps.bootstrap((np.sort(a), np.sort(b)), lambda u, v, axis=-1: stat(v, axis=axis) / stat(u, axis=axis),
                       confidence_level=confidence, method="percentile", n_resamples=4999, vectorized=True,
                       rng=np.random.default_rng(1999)).confidence_interval
    return ci.low, ci.high


@pytest.mark.parametrize("estimator,stat", [("min", np.min), ("median", np.median)])
def test_compare_computes_ratio_interval_and_p_value_from_their_definitions(estimator, stat):
    rng = np.random.default_rng(5)
    a = list(rng.permutation(100 + rng.gamma(2.0, 3.0, 9)))  # unsorted: the interval must not depend on order
    b = list(rng.permutation(112 + rng.gamma(2.0, 3.0, 8)))
    c = stats.compare(a, b, estimator)
    assert c.ratio == pytest.approx(stat(b) / stat(a), rel=1e-12)
    low, high = _bootstrap_ratio(a, b, stat)
    assert (c.ci_low, c.ci_high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert c.p_value == pytest.approx(sps.mannwhitneyu(a, b, alternative="two-sided").pvalue, rel=1e-12)
    assert c.verdict == "slower"
    wide = stats.compare(a, b, estimator, confidence=0.99)
    assert (wide.ci_low, wide.ci_high) == (pytest.approx(_bootstrap_ratio(a, b, stat, 0.99)[0], rel=1e-12),
                                           pytest.approx(_bootstrap_ratio(a, b, stat, 0.99)[1], rel=1e-12))
    assert wide.ci_low < c.ci_low and wide.ci_high > c.ci_high
    # a speed: higher is better, the same ratio is "faster"
    assert stats.compare(a, b, estimator, higher_is_better=True).verdict == "faster"
    assert stats.compare(b, a, estimator, higher_is_better=True).verdict == "slower"
    assert stats.compare(b, a, estimator).verdict == "faster"


def test_the_median_verdict_needs_significance_and_a_ratio_beyond_the_threshold():
    a, b = [4.0, 4.1, 4.2, 4.3], [5.0, 5.1, 5.2, 5.3]
    p = sps.mannwhitneyu(a, b, alternative="two-sided").pvalue
    med = functools.partial(stats.compare, estimator="median")
    assert med(a, b).verdict == "slower"
    assert med(a, b, alpha=p).verdict == "no change"  # p must be below alpha, not equal
    assert med(a, b, alpha=p * 1.0001).verdict == "slower"
    # ratio 1.25 exactly: beyond a threshold of 0.24, not beyond 0.25
    assert med(a, b, threshold=0.24).verdict == "slower"
    assert med(a, b, threshold=0.25).verdict == "no change"
    assert med(a, b, threshold=0.26).verdict == "no change"
    assert med([4.0, 4.0, 4.0], [3.0, 3.0, 3.0], threshold=0.25).verdict == "no change"  # |0.75 - 1|
    assert med([4.0, 4.0, 4.0], [3.0, 3.0, 3.0], threshold=0.24).verdict == "faster"


def _two_layouts(fast: float, n_fast: int, slow: float, n_slow: int) -> list[float]:
    """Per-process costs in two layout modes (docs/measurement.md): n_fast near `fast`, n_slow near `slow`."""
    return [fast + 0.05 * i for i in range(n_fast)] + [slow + 0.05 * i for i in range(n_slow)]


def test_the_min_verdict_follows_the_best_case_interval_not_a_test_over_every_layout():
    # issue 26's DES row: the best case 6 % slower with a narrow interval, while the slow layout mode, which the
    # best case leaves out, makes a Mann-Whitney test over all processes insignificant
    a = _two_layouts(100.0, 10, 137.0, 10)
    b = _two_layouts(106.0, 6, 130.0, 14)
    assert sps.mannwhitneyu(a, b, alternative="two-sided").pvalue > 0.5
    c = stats.compare(a, b)  # the default estimator is the headline's, min
    assert 1.03 < c.ci_low <= c.ratio <= c.ci_high  # wholly outside the noise band...
    assert c.verdict == "slower"  # ...so never a tie
    assert stats.compare(a, b, "median").verdict == "no change"  # the typical process: no significant difference
    # the band is the lab's noise threshold by default, and the interval must clear it whole
    assert stats.NOISE_THRESHOLD == 0.03
    assert stats.compare(a, b, threshold=c.ci_low - 1 - 1e-9).verdict == "slower"
    assert stats.compare(a, b, threshold=c.ci_low - 1 + 1e-9).verdict == "no change"
    # faster: the interval wholly below 1 - threshold
    assert stats.compare(b, a).verdict == "faster" and stats.compare(b, a).ci_high < 0.97
    # an interval that reaches into the band is no change even when its point lies beyond it
    wobbly = stats.compare([100.0, 100.5, 104.0, 109.0], [104.0, 106.0, 108.0, 110.0])
    assert wobbly.ratio == pytest.approx(1.04) and wobbly.ci_low < 1.03 and wobbly.verdict == "no change"


def test_compare_of_constant_and_single_values():
    same = stats.compare([5.0, 5.0, 5.0], [5.0, 5.0])
    assert (same.ratio, same.ci_low, same.ci_high, same.p_value, same.verdict) == (1.0, 1.0, 1.0, 1.0, "no change")
    moved = stats.compare([5.0, 5.0, 5.0], [6.0, 6.0])
    assert (moved.ratio, moved.ci_low, moved.ci_high, moved.p_value, moved.verdict) == (1.2, 1.2, 1.2, 0.0, "slower")
    one = stats.compare([5.0], [6.0, 6.5])  # one process cannot show significance
    assert (one.ratio, one.p_value, one.verdict) == (1.2, 1.0, "no change") and one.ci_low == one.ci_high == 1.2
    other = stats.compare([5.0, 5.5], [6.0])
    assert (other.p_value, other.verdict) == (1.0, "no change")
    # a spread only on one side still bootstraps and tests
    half = stats.compare([5.0, 5.0, 5.0, 5.0], [6.0, 6.1, 6.2, 6.3])
    assert half.p_value == pytest.approx(sps.mannwhitneyu([5.0] * 4, [6.0, 6.1, 6.2, 6.3]).pvalue)
    assert half.ci_high > half.ci_low


def test_compare_against_zero_is_undefined():
    c = stats.compare([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    assert all(math.isnan(x) for x in (c.ratio, c.ci_low, c.ci_high)) and (c.p_value, c.verdict) == (1.0, "no change")


def test_edges_two_processes_small_values_and_messages():
    c = stats.compare([0.5, 0.52], [0.6, 0.61])  # two processes each are enough for a test and an interval
    assert c.ratio == pytest.approx(1.2) and c.ci_low < c.ci_high
    assert c.p_value == pytest.approx(sps.mannwhitneyu([0.5, 0.52], [0.6, 0.61], alternative="two-sided").pvalue)
    k = stats.compare([0.5, 0.5], [0.6, 0.6])
    assert (k.ratio, k.p_value, k.verdict) == (pytest.approx(1.2), 0.0, "slower")
    s = stats.nist_summary([1.0, 3.0])
    assert s.std == pytest.approx(math.sqrt(2.0)) and s.value == 2.0
    with pytest.raises(ValueError, match="^no samples$"):
        stats.nist_summary([])
    with pytest.raises(ValueError, match="^no processes$"):
        stats.estimate([], "min")


def test_every_field_of_an_estimate():
    one = stats.estimate([7.0], "min", 0.9)
    assert (one.estimate, one.estimator, one.processes, one.confidence) == (7.0, "min", 1, 0.9)
    assert math.isnan(one.ci_low) and math.isnan(one.ci_high) and one.precision == math.inf
    two = stats.estimate([7.0, 8.0], "min", 0.9)  # two processes: a bootstrap interval already
    assert (two.estimate, two.estimator, two.processes, two.confidence) == (7.0, "min", 2, 0.9)
    assert two.ci_low == 7.0 and 7.0 <= two.ci_high <= 8.0
    flat = stats.estimate([5.0, 5.0, 5.0], "min", 0.8)
    assert (flat.estimate, flat.ci_low, flat.ci_high, flat.estimator, flat.processes, flat.confidence) == \
        (5.0, 5.0, 5.0, "min", 3, 0.8)
    # only equal ends mean "constant": equal first two, or equal last two, values still get an interval
    assert stats.estimate([5.0, 5.0] + [9.0] * 6, "min").ci_high == 9.0
    assert stats.estimate([4.0] + [9.0] * 7, "min").ci_high == 9.0
    assert stats.estimate([5.0, 5.0] + [9.0] * 6, "median").ci_low == 5.0
    flatm = stats.estimate([5.0, 5.0, 5.0, 5.0], "median", 0.8)
    assert (flatm.estimate, flatm.ci_low, flatm.ci_high, flatm.estimator, flatm.processes, flatm.confidence) == \
        (5.0, 5.0, 5.0, "median", 4, 0.8)
    med = stats.estimate([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], "median", 0.9)
    ci = sps.quantile_test(np.arange(1.0, 10.0), q=5.0, p=0.5).confidence_interval(0.9)
    assert (med.estimate, med.ci_low, med.ci_high, med.estimator, med.processes, med.confidence) == \
        (5.0, ci.low, ci.high, "median", 9, 0.9)
    few = stats.estimate([1.0, 2.0, 3.0], "median")  # too few processes for a 95 % interval of the median
    assert few.estimate == 2.0 and math.isnan(few.ci_low) and math.isnan(few.ci_high)


def _aa_pairs(n: int, pairs: int, confidence: float = 0.95, estimator: str = "trimmed", run_noise: float = 0.01,
              seed: int = 42) -> dict:
    """Simulated A/A pairs with a known between-run spread: each run shifts every process by one machine-speed draw
    (relative sd run_noise), each process is its own layout (30 % of them 5 % slower) with a small jitter; the
    intervals are judged as bench.aa judges real runs (stats.coverage)."""
    rng = np.random.default_rng(seed)
    d, s = [], []
    for _ in range(pairs):
        es = []
        for _run in range(2):
            shift = rng.normal(0, 0.01)
            slow = rng.random(n) < 0.3
            x = 1000 * (1 + shift) * (1 + 0.05 * slow) * (1 + np.abs(rng.normal(0, 0.002, n)))
            es.append(stats.estimate(x, estimator, confidence, run_noise=run_noise))
        d.append(math.log(es[1].estimate / es[0].estimate))
        s.append(math.hypot(es[0].precision, es[1].precision) / stats.z_value(0.95))
    return stats.coverage(d, s)


def test_the_run_to_run_interval_covers_the_next_run_95_times_in_100():
    """Issue 42: over 400 simulated A/A pairs whose runs differ by a known machine-speed spread (1 %), the trimmed
    estimator's 95 % intervals hold the differences: 3-7 % beyond the combined half-widths, sd of z 0.88-1.1.  A
    90 % interval, an interval without the run-to-run part and the one-sided best case fail it."""
    ok = _aa_pairs(20, 400)
    assert 0.03 <= ok["beyond"] <= 0.07 and 0.88 <= ok["sd_z"] <= 1.1, ok
    narrow = _aa_pairs(20, 400, confidence=0.90)
    assert not (0.03 <= narrow["beyond"] <= 0.07 and 0.88 <= narrow["sd_z"] <= 1.1), narrow
    blind = _aa_pairs(20, 400, run_noise=0.0)  # the processes alone cannot see the machine's run-to-run spread
    assert blind["beyond"] > 0.2, blind
    best_case = _aa_pairs(20, 100, estimator="min")
    assert best_case["beyond"] > 0.5, best_case


def test_the_run_to_run_interval_is_two_sided_and_adds_its_parts_as_variances():
    a = np.array([100.0, 100.2, 100.1, 100.4, 100.3, 120.0, 100.2, 100.5, 119.0, 100.1])
    e = stats.estimate(a, "trimmed", 0.95, run_noise=0.01, resolution=0.5)
    tm = stats.trimmed_mean(a, 0.95)
    z = stats.z_value(0.95)
    assert e.estimate == pytest.approx(tm.estimate) and e.ci_low < e.estimate < e.ci_high
    assert e.estimate - e.ci_low == pytest.approx(e.ci_high - e.estimate)
    hw_w = math.hypot(tm.ci_high - tm.estimate, z * 0.5 / math.sqrt(12 * 6))  # 10 - 2 x 2 values kept
    assert e.within == pytest.approx(hw_w / e.estimate)
    assert e.ci_high - e.estimate == pytest.approx(math.hypot(hw_w, z * 0.01 * e.estimate))
    assert stats.estimate(a, "trimmed", 0.95, resolution=0.5).precision == pytest.approx(e.within)  # no noise
    r = e.inverted(1e6)  # a speed: the ends swap, the within part stays relative
    assert r.ci_low < r.estimate < r.ci_high and r.within == e.within


def test_two_runs_figures_are_compared_on_their_intervals():
    a = stats.Estimate(100.0, 98.0, 102.0, "trimmed", 10, 0.95)  # +-2 %: sigma 1.02 %
    assert stats.compare_estimates(a, stats.Estimate(101.5, 99.5, 103.5, "trimmed", 10, 0.95)).verdict == "no change"
    # 4 % apart with sigmas of 1.02 % each: z 2.76, beyond 2.58 (the verdict's 99 %), so slower
    slower = stats.compare_estimates(a, stats.Estimate(104.0, 102.0, 106.0, "trimmed", 10, 0.95))
    assert slower.verdict == "slower" and slower.ci_low > 1 and slower.ratio == pytest.approx(1.04)
    assert stats.compare_estimates(a, stats.Estimate(104.0, 102.0, 106.0, "trimmed", 10, 0.95),
                                   higher_is_better=True).verdict == "faster"
    # 3.5 % apart: z 2.41, a change at 95 % but not at the verdict's 99 %
    v35 = stats.Estimate(103.5, 101.43, 105.57, "trimmed", 10, 0.95)
    assert stats.compare_estimates(a, v35).verdict == "no change"
    assert stats.compare_estimates(a, v35, confidence=0.95).verdict == "slower"
    tight = stats.Estimate(100.0, 99.9, 100.1, "trimmed", 10, 0.95)
    tiny = stats.compare_estimates(tight, stats.Estimate(100.5, 100.4, 100.6, "trimmed", 10, 0.95))
    assert tiny.ci_low > 1 and tiny.verdict == "no change"  # below the 1 % effect floor
    # the z of the log ratio over the two sigmas combined: just inside and just beyond 2.58 (99 %)
    s = 0.02 / stats.z_value(0.95)  # each side's sigma
    assert stats.VERDICT_CONFIDENCE == 0.99

    def at(z: float) -> str:
        v = 100 * math.exp(z * s * math.sqrt(2))
        return stats.compare_estimates(a, stats.Estimate(v, v * 0.98, v * 1.02, "trimmed", 10, 0.95)).verdict
    assert at(2.5) == "no change" and at(2.65) == "slower" and at(-2.65) == "faster"
    assert stats.sigma(stats.Estimate(1.0, math.nan, math.nan, "exact", 1, None)) == 0.0
