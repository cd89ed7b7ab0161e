"""The judges without a home of their own in the number tests: dudect's statistic (lab/ct.py welch_t), the
key-size rule of the tables, and the Java-versus-C verdict (lab/versus.py java_vs_c) on rows built by hand: our fastest Java cell against
our fastest portable C cell on hardware, the cost ratio Java / C and its interval against 2, at the table's key
size per cell.  Every figure is asserted; the fixtures separate the plausible neighbours (the slowest cell, an
emulated or SIMD C cell, the point ratio instead of the interval, another cell's key size).  Beside them: compare's one judge (a cost's interval turned round, one run's toolchains on the
within-run part, the gauge-relative ratio of a cost as a speed), the tables' vectorised mark against the best other
toolchain, a version step confirmed only by counts that move its way, and the flag search's cost of constant time
when the winner outruns every leak."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lab import ct, results, versus

from lab.models import Status

SPREAD = 1 + np.linspace(0.0, 0.03, 21)  # 21 processes, layouts 0-3 %


def _row(cipher, impl, tc, lang, cost, key_size=128, target="host", impl_class="portable", emulated=False,
         machine="m1", spread=SPREAD):
    costs = list(cost * spread)
    return {"cell": f"{cipher}/{impl}@{tc}@{target}", "machine": machine, "cipher": cipher, "display": cipher.upper(),
            "implementation": impl, "toolchain": tc, "target": target, "language": lang, "impl_class": impl_class,
            "emulated": emulated, "metric": "encrypt_speed", "status": Status.OK, "key_size": key_size,
            "estimate": 1e6 / min(costs), "per_process": costs, "estimator": "min"}


@pytest.fixture(scope="module")
def rows():
    wide = 1 + np.linspace(0.0, 0.6, 21)  # Java's processes spread 0-60 %: an interval that straddles 2
    r = [
        # rc6: C fastest 100 (portable, host); a slower C cell 300; a faster SIMD cell and a faster emulated cell
        # that must not count; Java 150 (1.5x: below 2) and a slower Java cell 500 (not ours to pick)
        _row("rc6", "ref", "gcc-O3", "c", 100.0), _row("rc6", "ref", "gcc-O0", "c", 300.0),
        _row("rc6", "sse2", "gcc-O3", "c", 40.0, impl_class="simd"),
        _row("rc6", "ref", "gcc-O3", "c", 20.0, target="sparc64", emulated=True),
        _row("rc6", "java", "openjdk17-c2", "java", 150.0), _row("rc6", "java", "openjdk17-int", "java", 500.0),
        # serpent: 2.5x, above 2
        _row("serpent", "ref", "gcc-O3", "c", 200.0), _row("serpent", "java", "openjdk17-c2", "java", 500.0),
        # mars: the point ratio 1.9 but the interval reaches past 2: undecided
        _row("mars", "ref", "gcc-O3", "c", 100.0, spread=np.ones(21)),
        _row("mars", "java", "openjdk17-c2", "java", 190.0, spread=wide),
        # des: C measured at 64 bits only (the cell's smallest key), Java at 64 and 128: Java's 128 row is the one
        _row("des", "ref", "gcc-O3", "c", 100.0, key_size=64),
        _row("des", "java", "openjdk17-c2", "java", 180.0, key_size=64),
        _row("des", "java", "openjdk17-c2", "java", 120.0, key_size=128),
    ]
    return pd.DataFrame(r)


def test_java_against_c_takes_the_fastest_portable_hardware_cells_and_the_interval_decides(rows):
    got = {r["cipher"]: r for r in versus.java_vs_c(rows)}
    assert set(got) == {"rc6", "serpent", "mars", "des"}
    rc6 = got["rc6"]
    assert rc6["ratio"] == pytest.approx(1.5, rel=1e-6) and rc6["verdict"] == "below 2x"
    assert rc6["c"] == "ref @ gcc-O3 / host" and rc6["java"] == "java @ openjdk17-c2"
    assert rc6["c_speed"] == pytest.approx(1e4) and rc6["java_speed"] == pytest.approx(1e6 / 150)
    assert rc6["ci_low"] <= 1.5 <= rc6["ci_high"] < 2
    assert got["serpent"]["ratio"] == pytest.approx(2.5, rel=1e-6) and got["serpent"]["verdict"] == "above 2x"
    assert got["serpent"]["ci_low"] > 2
    mars = got["mars"]
    assert mars["ratio"] == pytest.approx(1.9, rel=1e-6) and mars["ci_low"] < 2 < mars["ci_high"]
    assert mars["verdict"] == "undecided"
    des = got["des"]
    assert des["key_size"] == 128 and des["ratio"] == pytest.approx(1.2, rel=1e-6)
    assert [r["cipher"] for r in versus.java_vs_c(rows)] == ["des", "rc6", "mars", "serpent"]  # by ratio


def test_machines_are_never_mixed(rows):
    other = pd.DataFrame([_row("rc6", "ref", "gcc-O3", "c", 10.0, machine="m2")])
    got = [r for r in versus.java_vs_c(pd.concat([rows, other])) if r["cipher"] == "rc6"]
    assert [(r["machine"], r["ratio"]) for r in got] == [("m1", pytest.approx(1.5, rel=1e-6))]


def test_the_key_size_rule_picks_per_cell():
    """results.at_key_size: each cell's rows at the asked size, or at the cell's own smallest size when it has
    none (DES 64, 3DES 192 beside a cell with 160 and 256), never another cell's."""
    from lab.report import tables

    sizes = {"rijndael/ref": [128, 192, 256], "des/ref": [64], "3des/ref": [192, 256], "x/ref": [160, 256],
             "y/ref": [64, 128]}
    df = pd.DataFrame([{"cell": c, "key_size": k, "estimate": float(k)} for c, ks in sizes.items() for k in ks])
    got = results.at_key_size(df, 128)
    assert dict(zip(got.cell, got.key_size)) == {"rijndael/ref": 128, "des/ref": 64, "3des/ref": 192,
                                                 "x/ref": 160, "y/ref": 128}
    assert len(got) == 5
    got = results.at_key_size(df, 256)
    assert dict(zip(got.cell, got.key_size)) == {"rijndael/ref": 256, "des/ref": 64, "3des/ref": 256,
                                                 "x/ref": 256, "y/ref": 64}


def test_welch_t_is_the_largest_unsigned_welch_statistic_over_the_uncropped_and_cropped_sets():
    """A leak hidden by one huge outlier of the fixed class: uncropped, |t| is small; cropped below the
    1 - 0.5^10 percentile (percentiles=1), it is Welch's (unequal variances) |t| of what remains, negative mean
    difference made positive."""
    from scipy.stats import ttest_ind

    rng = np.random.default_rng(46)
    classes = (rng.random(2000) < 0.25).astype(int)  # unequal classes: Welch's t is not Student's
    classes[0] = 0
    values = np.where(classes == 0, rng.normal(100, 1, 2000), rng.normal(101.5, 6, 2000))
    values[0] = 1e7  # one interrupt in the fixed class
    cut = np.percentile(values, 100 * (1 - 0.5 ** 10))
    keep = values < cut
    a, b = values[keep & (classes == 0)], values[keep & (classes == 1)]
    want = abs(ttest_ind(a, b, equal_var=False).statistic)
    whole = abs(ttest_ind(values[classes == 0], values[classes == 1], equal_var=False).statistic)
    assert whole < 2 < want and want != pytest.approx(abs(ttest_ind(a, b).statistic), rel=1e-3)
    assert ct.welch_t(values, classes, percentiles=1) == pytest.approx(want, rel=1e-9)
    assert ct.welch_t(values, classes, percentiles=0) == pytest.approx(whole, rel=1e-9)


# ------------------------------------------------------------------ compare.judge and its gauge path
def _fig(est, low, high, within, estimator="trimmed"):
    return {"estimate": est, "estimator": estimator, "ci_low": low, "ci_high": high, "confidence": 0.95,
            "within": within, "per_process": [est] * 5}


def test_compare_judges_a_cost_as_a_speed_with_its_interval_turned_round():
    """Cycles per block 100 -> 80 (B 1.25x faster), each figure +-3 % run to run: the speed-up is A/B with the
    cost ratio's interval inverted end for end (low from the cost's high), and the verdict the cost's."""
    from lab import compare, stats

    a, b = _fig(100.0, 97.0, 103.0, 0.004), _fig(80.0, 77.6, 82.4, 0.004)
    c = stats.compare_estimates(compare._estimate(a, False), compare._estimate(b, False), higher_is_better=False)
    s = compare.judge(a, b, speed=False)
    assert s.speedup == pytest.approx(1.25) and s.verdict == c.verdict == "faster"
    assert (s.ci_low, s.ci_high) == (pytest.approx(1 / c.ci_high), pytest.approx(1 / c.ci_low))
    assert 1 < s.ci_low < 1.25 < s.ci_high


def test_compare_judges_two_toolchains_of_one_run_on_the_within_run_part_alone():
    """4 % apart with +-5 % run-to-run intervals: no change between two runs; within one run (the machine's noise
    is common to both) the +-0.4 % within-run parts decide: slower."""
    from lab import compare

    a, b = _fig(1000.0, 950.0, 1050.0, 0.004), _fig(960.0, 912.0, 1008.0, 0.004)
    assert compare.judge(a, b, speed=True).verdict == "no change"
    same = compare.judge(a, b, speed=True, same_run=True)
    assert same.verdict == "slower" and same.speedup == pytest.approx(0.96)
    assert 0.95 < same.ci_low < 0.96 < same.ci_high < 0.97


def test_compare_gauge_relative_ratio_is_oriented_as_a_speed_for_costs_too():
    from lab import compare

    def frame(enc, cyc, g_enc, g_cyc):
        rows = [("encrypt_speed", math.nan, "Kbit/s", enc, g_enc), ("encrypt_per_block", 128, "cycles", cyc, g_cyc)]
        return pd.DataFrame([{"cell": "rc6/ref@gcc-O3@host", "metric": m, "key_size": 128, "n_blocks": n,
                              "status": Status.OK, "unit": u, "gauge_relative": g,
                              **_fig(v, 0.9 * v, 1.1 * v, 0.01, "min")} for m, n, u, v, g in rows])

    a, b = frame(1000.0, 250.0, 2.0, 50.0), frame(1500.0, 200.0, 3.0, 25.0)
    rows = {r.metric: r for r in compare.compare_rows(a, b, "cell", 0.03, ["encrypt_speed", "encrypt_per_block"])}
    assert rows["encrypt_speed"].gauge == pytest.approx(1.5)  # speed: B / A
    assert rows["encrypt_per_block"].gauge == pytest.approx(2.0)  # cost: A / B
    assert rows["encrypt_per_block"].speedup == pytest.approx(1.25) and rows["encrypt_per_block"].verdict == "faster"


# ------------------------------------------------------------------ the tables' vectorised mark
def test_the_vectorised_mark_compares_with_the_best_other_toolchain():
    """Encrypt-128 per block over Encrypt-1: rc6 0.3 with gcc-O3, but clang makes 0.4 of the same code (0.3 is
    not below 0.6 x 0.4): no mark; serpent 0.2 against clang's 0.9: marked; mars alone at 0.5: marked."""
    from lab.report import tables

    ratios = {("rc6", "gcc-O3"): 0.3, ("rc6", "clang-O3"): 0.4, ("rc6", "gcc-O0"): 1.0,
              ("serpent", "gcc-O3"): 0.2, ("serpent", "clang-O3"): 0.9, ("serpent", "gcc-O0"): 1.0,
              ("mars", "gcc-O3"): 0.5}
    df = pd.DataFrame([{"cell": f"{c}/ref@{tc}@host", "cipher": c, "implementation": "ref", "toolchain": tc,
                        "target": "host", "metric": "encrypt_per_block", "status": Status.OK, "n_blocks": n,
                        "estimate": 100.0 * (r if n == 128 else 1)} for (c, tc), r in ratios.items() for n in (1, 128)])
    assert tables._vectorised(df, "gcc-O3", "host", "") == {"serpent/ref@gcc-O3@host": pytest.approx(0.2),
                                                           "mars/ref@gcc-O3@host": pytest.approx(0.5)}
    assert tables._vectorised(df, "clang-O3", "host", "") == {}  # 0.4 is not below 0.6 x 0.3


# ------------------------------------------------------------------ a version step's confirmation by counts
@pytest.mark.parametrize("change,exact,want", [(0.10, 0.05, True), (0.10, 0.0, False), (0.10, -0.05, False),
                                               (-0.10, -0.05, True), (-0.10, 0.0, False), (-0.10, 0.02, False),
                                               (0.10, math.nan, None), (0.10, None, None)])
def test_a_step_is_confirmed_only_by_counts_that_move_the_same_way(change, exact, want):
    from lab.steps import Step

    s = Step("versions", "serpent", "encrypt_speed", "gcc 12.2.0", "gcc 12.3.0", change, change - 0.01,
             change + 0.01, "faster" if change > 0 else "slower", exact_change=exact)
    assert s.confirmed is want


# ------------------------------------------------------------------ the flag search's cost of constant time
def test_the_cost_of_constant_time_is_one_when_the_winner_outruns_every_leak(lab):
    """A leaking candidate slower than the constant-time winner: the fastest overall is the winner and constant
    time costs nothing (1.00x); a faster leak is the fastest and its ratio is the cost."""
    from lab import flags, stats
    from lab.flags import Candidate, CellSearch, Entry, Race

    def entry(fl, status, speed):
        return Entry(Candidate(fl, lab.toolchain("gcc-O3")), status=status,
                     estimate=stats.Estimate(speed, 0.99 * speed, 1.01 * speed, "min", 21, 0.95))

    win, tie, leak = entry(("-O2",), "winner", 1000.0), entry(("-O3",), "tied", 995.0), entry(("-Os",), "leaks", 800.0)
    found = CellSearch(None, None, [win, tie, leak], Race("encrypt_speed", 128), ct_asked=True)
    assert found.fastest is win and found.cost_of_ct().ratio == 1.0
    assert flags.ct_summary(found).endswith("the fastest candidate is constant-time (cost of constant time 1.00x)")
    fast = entry(("-Os",), "leaks", 1300.0)
    found = CellSearch(None, None, [win, tie, fast], Race("encrypt_speed", 128), ct_asked=True)
    assert found.fastest is fast and found.cost_of_ct().ratio == pytest.approx(1.3)
    assert found.cost_of_ct().verdict == "faster"


def test_a_cell_that_did_not_end_ok_is_never_the_fastest(rows):
    """results.ok_rows (every judge's and table's selection): a faster C cell that timed out mid-measurement and a
    Java cell without an estimate are not judged: rc6 stays 1.5x, and twofish, whose only Java row has no
    estimate, has no row (not a crash)."""
    bad = dict(_row("rc6", "ref", "clang-O3", "c", 10.0), status=Status.TIMEOUT)
    blank = [_row("twofish", "ref", "gcc-O3", "c", 100.0),
             dict(_row("twofish", "java", "openjdk17-c2", "java", 50.0), estimate=float("nan"))]
    judged = versus.java_vs_c(pd.concat([rows, pd.DataFrame([bad, *blank])]))
    got = [r for r in judged if r["cipher"] in ("rc6", "twofish")]
    assert [(r["c"], r["java"], r["ratio"]) for r in got] == \
        [("ref @ gcc-O3 / host", "java @ openjdk17-c2", pytest.approx(1.5, rel=1e-6))]
    assert list(results.ok_rows(pd.DataFrame([bad, *rows.to_dict("records")[:1]]), "encrypt_speed").toolchain) == \
        ["gcc-O3"]
