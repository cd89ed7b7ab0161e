"""Every figure of the report, from synthetic raw samples with known answers: the loader's numbers and the
numbers the rendered HTML shows, each computed here from its definition (NIST's 3-sd mean, Kbit/s, keys/s,
overhead subtraction, the best case over processes and its interval, normalisation by the best, Jenks
groups, Kendall's tau against scipy, compiler ratios, memory sums, the ratio against a library)."""

from __future__ import annotations

import dataclasses
import math
import os
import statistics

import numpy as np
import pytest
from scipy.stats import kendalltau

from lab import results, versus
from lab.publish import build_report
from lab.report import errors_in
from lab.report import reference as ref

from . import synth
from .html_tables import find, number

P = 5  # processes per cell
# ns per block (encrypt; decrypt 10 % more), ns per key pair, TSC ticks per block at n=128 of each portable cipher
SPEEDS = {"rijndael": (98.0, 400.0, 250.0), "twofish": (101.0, 2000.0, 260.0), "rc6": (200.0, 100.0, 500.0),
          "serpent": (990.0, 800.0, 2500.0), "magenta": (1000.0, 500.0, 2600.0)}
DISPLAY = {"rijndael": "Rijndael", "twofish": "Twofish", "rc6": "RC6", "serpent": "Serpent", "magenta": "MAGENTA"}
# per process: how much slower than the best each process's best sample is (process 5 has the best layout)
LAYOUT = [1.02, 1.04, 1.01, 1.025, 1.0]
OVERHEAD = 26  # TSC ticks: the counter reads around an empty call
BLOCKS, PAIRS = 1000, 100  # per timing sample


def _timing(enc: float, key: float) -> list[dict]:
    out = []
    for p, f in enumerate(LAYOUT):
        def samples(cost, per):
            best = cost * f * per
            return [int(best * 1.01), int(best), int(best * 2.5)]  # one sample hit by an interruption
        out.append(synth.timing_process({128: {"encrypt": (BLOCKS, samples(enc, BLOCKS)),
                                               "decrypt": (BLOCKS, samples(enc * 1.1, BLOCKS)),
                                               "key_setup": (PAIRS, samples(key, PAIRS))}}, started=float(p)))
    return out


def _cycles(per_block: float, layout=LAYOUT) -> list[dict]:
    return synth.layout_cycles(layout, OVERHEAD, lambda best: [best + 26, best, best * 3], {
        ("null", 1): (1, [OVERHEAD + 26, OVERHEAD, OVERHEAD]),
        ("ekey", 1): (10, 200.0), ("dkey", 1): (10, 300.0),
        ("init", 1): (1, [OVERHEAD, OVERHEAD, OVERHEAD + 26]),  # indistinguishable from the overhead
        ("encrypt", 1): (100, per_block * 1.2), ("decrypt", 1): (100, per_block * 1.2),
        ("encrypt", 16): (10, per_block), ("decrypt", 16): (10, per_block),
        ("encrypt", 128): (10, per_block), ("decrypt", 128): (10, per_block)})


@pytest.fixture(scope="module", autouse=True)
def _no_svg_rendering():
    """The numbers are in the tables; the charts are drawn and checked by test_run and test_report_browser.
    Skipping matplotlib's SVG writer halves the time of a report here (it matters under mutation testing)."""
    from lab.report import charts

    def svg(fig):
        charts.plt.close(fig)
        return "<svg></svg>"

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(charts, "_svg", svg)
        yield


@pytest.fixture(scope="module")
def _synthetic_once(tmp_path_factory):
    return _build(tmp_path_factory)


@pytest.fixture
def synthetic(request, tmp_path_factory):
    """Built once per module; rebuilt for every test in mutmut's coverage pass (MUTANT_UNDER_TEST=stats), so that
    each report function is linked to every test that reads its numbers, not only to the first test."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        return _build(tmp_path_factory)
    return request.getfixturevalue("_synthetic_once")


def _build(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("values")
    cells = [synth.cell(c, "ref", display=DISPLAY[c], key_sizes=(128,), timing=_timing(e, k), cycles=_cycles(cy))
             for c, (e, k, cy) in SPEEDS.items()]
    # the same Rijndael code, 25 % slower with another compiler
    cells.append(synth.cell("rijndael", "ref", "clang-O3", display="Rijndael", key_sizes=(128,),
                            timing=_timing(98.0 * 1.25, 400.0), cycles=_cycles(250.0 * 1.25)))
    # hardware instructions: far faster, never in a portable ranking
    cells.append(synth.cell("rijndael", "hw", display="Rijndael", impl_class="hardware", key_sizes=(128,),
                            default=False, timing=_timing(10.0, 50.0), cycles=_cycles(20.0), table_bytes=0))
    # a peer library's portable code, twice as fast as ours
    cells.append(synth.cell("rijndael", "libx", display="Rijndael", impl_class="peer", peer_code="portable",
                            key_sizes=(128,), default=False, timing=_timing(49.0, 400.0), cycles=_cycles(125.0)))
    cells.append(synth.cell("deal", "ref", display="DEAL", status="kat_failed", reason="3 of 10 records failed"))
    toolchains = {"gcc-O3": synth.toolchain_facts("gcc", ["A.1-7"]), "clang-O3": synth.toolchain_facts("clang")}
    run = synth.write_run(tmp / "results", cells, toolchains=toolchains)
    html = build_report(None_lab(), [run], results_dir=tmp / "results", reports_dir=tmp / "reports").read_text()
    return {"run": run, "df": results.load(run, tmp / "results"), "html": html, "tmp": tmp}


def None_lab():
    from lab.config import Lab

    return Lab()


def row(df, cipher, metric, impl="ref", toolchain="gcc-O3", n=None):
    sel = df[(df.cipher == cipher) & (df.implementation == impl) & (df.toolchain == toolchain) & (df.metric == metric)]
    if n is not None:
        sel = sel[sel.n_blocks == n]
    assert len(sel) == 1, (cipher, metric, len(sel))
    return sel.iloc[0]


def nist_mean(xs) -> float:
    med, sd = statistics.median(xs), statistics.stdev(xs)
    kept = [x for x in xs if abs(x - med) <= 3 * sd]
    return sum(kept) / len(kept)


def min_interval(per_process: list[float]) -> tuple[float, float]:
    """The bootstrap percentile interval of the minimum of 5 values: P(min* <= x(k)) = 1 - (1 - k/5)^5 is
    0.672, 0.922, 0.990 for k = 1, 2, 3, so the 2.5 % and 97.5 % points are x(1) and x(3)."""
    s = sorted(per_process)
    return s[0], s[2]


# ------------------------------------------------------------------ loader
def test_speed_estimate_interval_and_nist_value(synthetic):
    df = synthetic["df"]
    enc, key, _ = SPEEDS["rijndael"]
    r = row(df, "rijndael", "encrypt_speed")
    per_block = [int(enc * f * BLOCKS) / BLOCKS for f in LAYOUT]  # each process's best sample, ns per block
    assert r.estimate == pytest.approx(128 * 1e6 / min(per_block))  # Kbit/s of the best case
    lo, hi = min_interval(per_block)
    assert (r.ci_low, r.ci_high) == (pytest.approx(128e6 / hi), pytest.approx(128e6 / lo))
    assert r.processes == P and r.estimator == "min" and r.unit == "Kbit/s"
    samples = [x / BLOCKS for p in _timing(enc, key) for x in p["key_sizes"][128]["encrypt"]["ns"]]
    assert r.value == pytest.approx(128e6 / nist_mean(samples))  # NIST: reduce the times, then convert
    assert r.value < r.estimate  # the interrupted samples pull NIST's mean, not the best case
    assert r.n_total == 3 * P
    k = row(df, "rijndael", "key_setup_speed")
    pairs = [int(key * f * PAIRS) / PAIRS for f in LAYOUT]
    assert k.estimate == pytest.approx(2e9 / min(pairs)) and k.unit == "keys/s"  # a key = half a pair


def test_cycle_counts_subtract_the_overhead_once_per_sample(synthetic):
    df = synthetic["df"]
    ekey = row(df, "rijndael", "ekey")
    # best sample of the best process: 200 * 10 calls + overhead; minus the overhead, per call
    assert ekey.estimate == pytest.approx(200.0)
    e128 = row(df, "rijndael", "encrypt_per_block", n=128)
    assert e128.estimate == pytest.approx(250.0, abs=0.01)
    null = row(df, "rijndael", "null_overhead")
    assert null.estimate == OVERHEAD and null.unit == "tsc_ticks"


def test_a_quantity_indistinguishable_from_the_overhead_is_below_resolution(synthetic):
    init = row(synthetic["df"], "rijndael", "init")
    assert init.below_resolution and math.isnan(init.estimate) and math.isnan(init.value)
    assert init.bound == 26.0  # one counter step per call
    assert init.precision_met  # not a precision failure: a bound


def test_facts_and_memory_rows(synthetic):
    df = synthetic["df"]
    assert row(df, "rijndael", "table_bytes").estimate == 1000
    assert row(df, "rijndael", "code_bytes").estimate == 3000  # text + rodata
    assert row(df, "rijndael", "kat_passed").estimate == 10


# ------------------------------------------------------------------- report
def test_the_report_renders_every_section_without_an_error(synthetic):
    assert not errors_in(synthetic["html"])


def test_a1_shows_the_estimate_and_the_interval_and_nist_value_on_hover(synthetic):
    a1 = find(synthetic["html"], "a1", "gcc-O3--host")[0]
    enc, key, _ = SPEEDS["rijndael"]
    r = row(synthetic["df"], "rijndael", "encrypt_speed")
    c = a1.cell("Rijndael [ref]", "Enc128")
    assert number(c.text) == pytest.approx(round(r.estimate, 1))
    assert f"[{r.ci_low:,.2f}, {r.ci_high:,.2f}]" in c.title and f"{r.value:,.2f}" in c.title
    assert "best case over 5 processes" in c.title
    labels = [x[0].text for x in a1.rows]
    assert labels == sorted(["Rijndael [ref]", "Twofish", "RC6", "Serpent", "MAGENTA", "DEAL"])
    assert "Rijndael [hw]" not in labels and "Rijndael [libx]" not in labels  # never in the ANSI C table
    assert "not measured — kat_failed: 3 of 10 records failed" in a1.row("DEAL")[1].text
    classes = find(synthetic["html"], "a1-classes", "gcc-O3--host")[0]
    assert any(x[0].text == "hardware instructions (hardware)" for x in classes.rows)
    hw = classes.row("Rijndael [hw]")
    assert number(hw[2].text) == pytest.approx(round(128e6 / 10.0, 1), rel=1e-6)


def test_a2_shows_cycles_sorted_by_encrypt_128_with_the_bound(synthetic):
    a2 = find(synthetic["html"], "a2", "gcc-O3--host")[0]
    ranked = [r[0].text for r in a2.rows]
    ranked = ranked[:ranked.index("not ranked: hardware instructions")]
    by_cost = sorted(DISPLAY, key=lambda c: SPEEDS[c][2])
    assert ranked == [DISPLAY[c] if c != "rijndael" else "Rijndael [ref]" for c in by_cost]
    assert number(a2.cell("Rijndael [ref]", "EKey").text) == 200
    assert number(a2.cell("Rijndael [ref]", "Encrypt-128").text) == 250
    assert a2.cell("Rijndael [ref]", "Init").text == "< 26.00"
    assert number(a2.cell("Rijndael [hw]", "Encrypt-128").text) == 20


def test_normalised_metric_divides_by_the_best(synthetic):
    norm = find(synthetic["html"], "norm", "gcc-O3--host")[0]
    enc = {c: v[0] for c, v in SPEEDS.items()}
    key = {c: v[1] for c, v in SPEEDS.items()}
    # the best case of each is its fifth process (layout factor 1.0): the times are the table's own
    for c in SPEEDS:
        want_enc, want_key = enc[c] / min(enc.values()), key[c] / min(key.values())
        r = norm.row(DISPLAY[c] if c != "rijndael" else "Rijndael [ref]")
        assert number(r[1].text) == pytest.approx(want_key, abs=0.006)
        assert number(r[2].text) == pytest.approx(want_enc, abs=0.006)
        assert number(r[3].text) == pytest.approx(want_key + want_enc, abs=0.011)
    # RC6 2.04 + 1 = 3.04 < Rijndael 1 + 4 = 5 < MAGENTA 10.2 + 5 < Serpent 10.1 + 8 < Twofish 1.03 + 20
    assert [r[0].text for r in norm.rows] == ["RC6", "Rijndael [ref]", "MAGENTA", "Serpent", "Twofish"]


def test_top_performers_are_the_clear_top_group_of_portable_code(synthetic):
    import re

    m = re.search(r"Top group on every hardware platform: <b>([^<]*)</b>", synthetic["html"])
    assert m and m.group(1) == "Rijndael [ref], Twofish"  # 98 and 101 ns/block; the hardware code is not in it


def test_kendall_tau_against_nist_matches_scipy(synthetic):
    taus = find(synthetic["html"], "taus", "published")[0]
    (r,) = [x for x in taus.rows if x[2].text.startswith("A.1-7")]
    ours = sorted(SPEEDS, key=lambda c: SPEEDS[c][0])  # fastest first
    t = ref.timing()
    nist = t[(t.table == "A.1-7") & (t.metric == "encrypt_speed") & (t.key_size == 128) & (t.variant == "")]
    theirs = list(nist.sort_values("value", ascending=False).cipher)
    common = [c for c in ours if c in theirs]
    want = kendalltau([ours.index(c) for c in common], [theirs.index(c) for c in common]).statistic
    assert number(r[3].text) == pytest.approx(want, abs=0.005) and int(r[5].text) == len(common)
    # the p-value from its definition: the share of all orderings of our ranking whose tau is at least as large
    import itertools

    b = [theirs.index(c) for c in common]
    taus = [kendalltau(list(perm), b).statistic for perm in itertools.permutations(range(len(common)))]
    p = sum(t >= want - 1e-12 for t in taus) / len(taus)
    assert len(common) >= 4 and number(r[4].text) == pytest.approx(p, abs=0.0005 + 0.005 * p)


def test_cycles_relative_to_the_median_cipher(synthetic):
    side = find(synthetic["html"], "side", "published")[0]
    mine = {c: SPEEDS[c][2] for c in SPEEDS}
    med = float(np.median(list(mine.values())))
    c = ref.cycles()
    vc = c[(c.platform == "pii450-win98") & c.compiler.str.startswith("Visual") & (c.metric == "encrypt_per_block")
           & (c.n_blocks == 128) & (c.variant == "")].set_index("cipher").value
    vmed = float(np.median([vc[x] for x in mine]))
    for r in side.rows:
        cipher = r[2].text
        assert number(r[4].text) == pytest.approx(mine[cipher] / med, abs=0.006)
        assert number(r[5].text) == pytest.approx(vc[cipher] / vmed, abs=0.006)


def test_compilers_compared_by_their_ratio(synthetic):
    import re

    m = re.search(r"the slowest toolchain reaches (\d+)% of the fastest", synthetic["html"])
    assert m and int(m.group(1)) == 80  # 98 vs 122.5 ns per block


def test_memory_table_sums_tables_and_key_schedule(synthetic):
    mem = find(synthetic["html"], "mem", "memory")[0]
    r = mem.row("Rijndael [ref]")
    assert number(r[2].text) == 1000 and number(r[3].text) == 200 and number(r[4].text) == 1200
    assert number(r[6].text) == pytest.approx(round(128e6 / 98.0), abs=1)  # its best speed


def test_versus_the_libraries_ratio_of_costs(synthetic):
    libs = find(synthetic["html"], "libs", "libraries")[0]
    (r,) = [x for x in libs.rows if x[1].text == "gcc-O3"]
    assert r[4].text == "ref" and r[6].text == "libx"
    assert number(r[8].text) == pytest.approx(2.0, abs=0.001)  # our 98 ns per block / the peer's 49
    assert r[10].text == "peer faster"


def test_a_partial_run_says_so(tmp_path):
    cells = [synth.cell("rc6", "ref", display="RC6", key_sizes=(128,), timing=_timing(200.0, 100.0),
                        cycles=_cycles(500.0))]
    run = synth.write_run(tmp_path / "results", cells, planned=3, status="interrupted")
    html = build_report(None_lab(), [run], results_dir=tmp_path / "results", reports_dir=tmp_path / "r").read_text()
    assert "partial: 1 of 3 cells" in html and not errors_in(html)


def test_precision_misses_and_steal_are_shown(tmp_path):
    cells = [synth.cell("rc6", "ref", display="RC6", key_sizes=(128,), timing=_timing(200.0, 100.0),
                        cycles=_cycles(500.0), precision=0.001, steal=0.2)]
    run = synth.write_run(tmp_path / "results", cells, system={"steal_fraction": 0.1})
    html = build_report(None_lab(), [run], results_dir=tmp_path / "results", reports_dir=tmp_path / "r").read_text()
    a1 = find(html, "a1")[0]
    assert a1.cell("RC6", "Enc128").text.endswith("†")  # 1 % spread between processes > 0.1 % target
    assert "missed their precision target" in html
    assert "CPU steal time was high" in html and "rc6/ref@gcc-O3@host (20.0 %)" in html


def _on_lanes(c: dict, other: float, cpus=(1, 0)) -> dict:
    """c measured on two lanes: its processes alternately on cpus[0] and cpus[1] (timing and cycles of a process
    on one CPU), the other lane's costs `other` times the first's."""
    m = c["measurement"]
    m.update(cpu=cpus[0], lanes=2)
    for kind in ("timing", "cycles"):
        for i, p in enumerate(m[kind]):
            p["cpu"] = cpus[i % 2]
            if i % 2:
                for ops in p.get("key_sizes", {}).values():
                    for d in ops.values():
                        d["ns"] = [round(x * other) for x in d["ns"]]
                for op in p.get("ops", []):
                    if op["op"] != "null":
                        op["deltas"] = [round((x - OVERHEAD) * other) + OVERHEAD for x in op["deltas"]]
    return c


def test_two_lanes_check_each_other_in_every_row_and_the_report(tmp_path):
    """With two lanes each quantity's row says how far the other lane's processes are from the first's (their
    medians); the report's System section shows the run's lanes, their median difference, and warns when the
    lanes disagree; a one-lane run has no difference (NaN), and its report says one lane."""
    from lab import quantities

    def rc6(other):  # six processes of one layout: the lanes' difference is all there is between them
        return _on_lanes(synth.cell("rc6", "ref", display="RC6", key_sizes=(128,),
                                    timing=synth.steady_timing(200.0, 220.0, 100.0, [1.0] * 6, key_size=128),
                                    cycles=_cycles(500.0, [1.0] * 6)), other)

    rd = tmp_path / "results"
    apart = synth.write_run(rd, [rc6(1.05)], options={"cpus": [1, 0]})
    df = results.load(apart.name, rd)
    speed = df[df.metric.isin(["encrypt_speed", "decrypt_speed", "key_setup_speed"])].lane_difference
    assert len(speed) == 3 and speed.to_numpy() == pytest.approx(0.05, abs=0.002)
    enc = df[(df.metric == "encrypt_per_block") & (df.n_blocks == 128)].lane_difference.iloc[0]
    assert enc == pytest.approx(0.05, abs=0.002)
    html = build_report(None_lab(), [apart], results_dir=rd, reports_dir=tmp_path / "r1").read_text()
    assert not errors_in(html)
    row = [r for r in find(html, "run-state")[0].rows if r[0].text == apart.name][0]
    assert row[7].text == "2 (1, 0)" and row[8].text.startswith("+5.0")
    assert "The measuring lanes disagree" in html and "+5.0 % against CPU 1" in html
    agree = synth.write_run(rd, [rc6(1.0)], options={"cpus": [1, 0]})
    html = build_report(None_lab(), [agree], results_dir=rd, reports_dir=tmp_path / "r2").read_text()
    row = [r for r in find(html, "run-state")[0].rows if r[0].text == agree.name][0]
    assert row[8].text.startswith("+0.00 %") and "lanes disagree" not in html
    for other, warned in ((1.008, False), (1.015, True)):  # the warning begins past 1 %
        near = synth.write_run(rd, [rc6(other)], options={"cpus": [1, 0]})
        html = build_report(None_lab(), [near], results_dir=rd, reports_dir=tmp_path / f"r{other}").read_text()
        assert ("The measuring lanes disagree" in html) is warned, other
    one = synth.write_run(rd, [synth.cell("rc6", "ref", display="RC6", key_sizes=(128,), timing=_timing(200.0, 100.0),
                                          cycles=_cycles(500.0))], options={"cpus": [1]})
    assert results.load(one.name, rd).lane_difference.isna().all()
    html = build_report(None_lab(), [one], results_dir=rd, reports_dir=tmp_path / "r3").read_text()
    row = [r for r in find(html, "run-state")[0].rows if r[0].text == one.name][0]
    assert row[7].text == "1 (1)" and row[8].text == "—"
    # fewer than two processes on a lane say nothing of the lanes
    q = quantities.Quantity("encrypt_speed", 128, None, "Kbit/s", "t", per_process=[1.0, 1.1, 1.0], cpus=[1, 0, 1])
    assert math.isnan(quantities.lane_difference(q, 1))
    assert quantities.lane_difference(dataclasses.replace(q, per_process=[1.0, 1.1, 1.0, 1.1], cpus=[1, 0, 1, 0]),
                                      1) == pytest.approx(0.1)
    assert math.isnan(quantities.lane_difference(dataclasses.replace(q, cpus=[]), 1))
    # medians, not means: one slow process on each lane moves neither (means would give +27 %)
    skew = dataclasses.replace(q, per_process=[1.0, 1.1, 1.0, 1.1, 1.3, 2.0], cpus=[1, 0, 1, 0, 1, 0])
    assert quantities.lane_difference(skew, 1) == pytest.approx(0.1)


def test_the_lanes_summary_is_the_median_and_the_90_percent_range_of_the_judged_quantities():
    """The System section's figures for a run: the median lane difference over the run's judged quantities (a
    skewed set, where the mean is not the median), the 90th percentile of their absolute values (not the 95th,
    nor the largest), and the count; facts and other runs' rows do not count."""
    import pandas as pd

    from lab.report import _lanes
    from lab.results import RunMeta

    d = np.array([(i / 20) ** 2 * (-1 if i % 3 == 0 else 1) for i in range(20)])
    rows = pd.DataFrame({"run_id": "a", "metric": "encrypt_speed", "estimator": "trimmed", "status": "ok",
                         "precision_target": 0.03, "lane_difference": d})
    noise = pd.DataFrame({"run_id": ["a", "b"], "metric": ["table_bytes", "encrypt_speed"],
                          "estimator": ["fact", "trimmed"], "status": "ok", "precision_target": [None, 0.03],
                          "lane_difference": [5.0, 5.0]})
    m = RunMeta.model_construct(run_id="a", options={"cpus": [1, 0]})
    got = _lanes(m, pd.concat([rows, noise], ignore_index=True))
    assert got["cpus"] == [1, 0] and got["n"] == 20
    assert got["median"] == pytest.approx(float(np.median(d))) and abs(np.mean(d) - np.median(d)) > 0.01
    assert got["within90"] == pytest.approx(float(np.quantile(np.abs(d), 0.9)))
    assert abs(np.quantile(np.abs(d), 0.95) - np.quantile(np.abs(d), 0.9)) > 0.01
    assert _lanes(RunMeta.model_construct(run_id="a", options={"cpus": [1]}), rows)["median"] is None


def test_comparison_section_and_its_verdicts(synthetic, tmp_path):
    cells = [synth.cell(c, "ref", display=DISPLAY[c], key_sizes=(128,),
                        timing=_timing(e * (1.5 if c == "rc6" else 1.0), k), cycles=_cycles(cy))
             for c, (e, k, cy) in SPEEDS.items()]
    run_b = synth.write_run(synthetic["tmp"] / "results", cells)
    html = build_report(None_lab(), [run_b], results_dir=synthetic["tmp"] / "results", reports_dir=tmp_path,
                        compare_with=synthetic["run"].name).read_text()
    assert not errors_in(html)
    cmp = find(html, "cmp", "comparison")[0]
    rc6 = [r for r in cmp.rows if r[0].text == "rc6/ref@gcc-O3@host" and r[1].text == "encrypt_speed 128"][0]
    assert number(rc6[4].text) == pytest.approx(1 / 1.5, abs=0.01) and rc6[7].text == "slower"
    same = [r for r in cmp.rows if r[0].text == "twofish/ref@gcc-O3@host" and r[1].text == "encrypt_speed 128"][0]
    assert same[7].text == "no change" and number(same[4].text) == pytest.approx(1.0)


def test_the_1999_comparison_ranks_only_like_with_like(tmp_path):
    """Only ok, portable, round-1, hardware-target default implementations are ranked against 1999; each
    toolchain against the tables it names; cycles relative to the median of the ciphers both sides have."""
    from lab.report import published

    cells = [synth.cell(c, "ref", display=DISPLAY[c], key_sizes=(128,), timing=_timing(e, k), cycles=_cycles(cy))
             for c, (e, k, cy) in SPEEDS.items()]
    decoys = [  # each one, if it were ranked, would take first place
        synth.cell("serpent", "fast", key_sizes=(128,), default=False, timing=_timing(1.0, 1.0), cycles=_cycles(1.0)),
        synth.cell("magenta", "ref", target="sparc64", emulated=True, key_sizes=(128,), timing=_timing(1.0, 1.0),
                   cycles=_cycles(1.0)),
        synth.cell("des", "ref", round1=False, key_sizes=(128,), timing=_timing(1.0, 1.0), cycles=_cycles(1.0)),
        synth.cell("mars", "ref", status="kat_failed", key_sizes=(128,), timing=_timing(1.0, 1.0), cycles=_cycles(1.0)),
        synth.cell("rc6", "hw", impl_class="hardware", default=False, key_sizes=(128,), timing=_timing(1.0, 1.0),
                   cycles=_cycles(1.0)),
        synth.cell("twofish", "libx", impl_class="peer", peer_code="portable", default=False, key_sizes=(128,),
                   timing=_timing(1.0, 1.0), cycles=_cycles(1.0)),
        synth.cell("rijndael", "ref", "clang-O3", key_sizes=(128,), timing=_timing(1.0, 1.0), cycles=_cycles(1.0)),
    ]
    toolchains = {"gcc-O3": synth.toolchain_facts("gcc", ["A.1-7", "A.1-8"]), "clang-O3": synth.toolchain_facts("clang")}
    run = synth.write_run(tmp_path / "results", cells + decoys, toolchains=toolchains)
    meta, _ = results.read_run(run)
    df = results.load(run, tmp_path / "results")
    got = published.comparison(df, [meta])

    ours = sorted(SPEEDS, key=lambda c: SPEEDS[c][0])  # fastest first
    t = ref.timing()
    assert got["unmatched"] == ["clang-O3"]
    assert [(x["target"], x["toolchain"], x["table"]) for x in got["taus"]] == [("host", "gcc-O3", "A.1-7"),
                                                                              ("host", "gcc-O3", "A.1-8")]
    assert got["rank_names"] == ["gcc-O3 on host", "NIST A.1-7", "NIST A.1-8"]
    for x in got["taus"]:
        nist = t[(t.table == x["table"]) & (t.metric == "encrypt_speed") & (t.key_size == 128) & (t.variant == "")]
        theirs = list(nist.sort_values("value", ascending=False).cipher)
        common = [c for c in ours if c in theirs]
        want = kendalltau([ours.index(c) for c in common], [theirs.index(c) for c in common])
        assert x["n"] == len(common) == 5 and x["tau"] == pytest.approx(want.statistic)
        assert x["heading"] and x["heading"] != x["table"]
        if x["table"] == "A.1-7":
            ranks7 = theirs
    # the rank table: every cipher of either ranking, ours first, sorted by our rank
    rows = got["table"]
    assert [r["cipher"] for r in rows][:5] == ours
    for r in rows:
        assert r["ranks"]["gcc-O3 on host"] == (ours.index(r["cipher"]) + 1 if r["cipher"] in ours else None)
        assert r["ranks"]["NIST A.1-7"] == ranks7.index(r["cipher"]) + 1
    assert len(rows) == len(ranks7) and [r["cipher"] for r in rows][5:] == sorted(set(ranks7) - set(ours))
    assert all(r["ranks"]["gcc-O3 on host"] is None for r in rows[5:])

    # cycles relative to the median, ours next to NIST's Visual C on the Pentium II and Gladman's C figures
    c = ref.cycles()
    vc = c[(c.platform == "pii450-win98") & c.compiler.str.startswith("Visual") & (c.metric == "encrypt_per_block")
           & (c.n_blocks == 128) & (c.variant == "")].set_index("cipher").value
    g = ref.gladman()
    gl = g[(g.metric == "encrypt_per_block") & (g.key_size == 128) & (g.language == "C")
           & (g.variant.fillna("").astype(str) == "")].groupby("cipher").value.mean()
    mine = {x: SPEEDS[x][2] for x in SPEEDS}
    med, vmed = float(np.median(list(mine.values()))), float(np.median([vc[x] for x in mine]))
    common_g = [x for x in mine if x in gl.index]
    gmed = float(np.median([gl[x] for x in common_g]))
    side = got["side"]
    assert [s["cipher"] for s in side] == sorted(mine, key=lambda x: mine[x])  # by ours / median
    assert {(s["target"], s["toolchain"]) for s in side} == {("host", "gcc-O3")}
    for s in side:
        x = s["cipher"]
        assert s["ours"] == pytest.approx(mine[x], rel=1e-9) and s["unit"] == "tsc_ticks"
        assert s["ours_rel"] == pytest.approx(mine[x] / med) and s["nist"] == vc[x]
        assert s["nist_rel"] == pytest.approx(vc[x] / vmed)
        assert s["change"] == pytest.approx((mine[x] / med) / (vc[x] / vmed))
        assert s["gladman_rel"] == (pytest.approx(gl[x] / gmed) if x in gl.index else None)

    # results without the "default" flag (format 1): the fastest implementation stands for its cipher
    old = df.assign(default=None)
    old = old[~old.cell.str.startswith("serpent/fast@")]
    got1 = published.comparison(old, [meta])
    assert [r["cipher"] for r in got1["table"]][:5] == ours
    fastest = published.comparison(df.assign(default=None), [meta])
    assert [r["cipher"] for r in fastest["table"]][0] == "serpent"  # its "fast" implementation now stands for it


def test_a_shown_number_and_its_hover_text_exactly():
    import pandas as pd

    from lab.report import tables

    base = dict(unit="tsc_ticks", below_resolution=False, bound=None, estimate=1234.567, estimator="min",
                ci_low=1200.0, ci_high=1250.5, confidence=0.95, processes=7, precision=0.0203, precision_target=0.02, value=1300.25,
                median=1290.0, std=12.5, n=40, n_total=42, precision_met=True)
    got = tables.number(pd.Series(base), "Encrypt")
    assert got == {"text": "1,234.6", "value": 1234.567, "below": False, "missed": False, "ci_low": 1200.0,
                   "ci_high": 1250.5, "nist": 1300.25, "nist_text": "1,300.2",
                   "title": "Encrypt: 1,234.57 tsc ticks, 95 % CI [1,200.00, 1,250.50] (best case over 7 processes; "
                            "±2.0 % reached, target ±2.0 %) | NIST value (mean within 3 sd of the median) 1,300.25; "
                            "median 1,290.00; sd 12.50; 40/42 samples"}
    med = tables.number(pd.Series({**base, "estimator": "median", "precision_met": False, "precision": math.inf,
                                   "confidence": 0.9}), "Decrypt", digits=0)
    assert med["text"] == "1,235 †" and med["missed"] is True
    assert med["title"] == ("Decrypt: 1,234.57 tsc ticks, 90 % CI [1,200.00, 1,250.50] (median over 7 processes; "
                            "±n/a reached, target ±2.0 %) | NIST value (mean within 3 sd of the median) 1,300.25; "
                            "median 1,290.00; sd 12.50; 40/42 samples | † precision target not reached")
    exact = tables.number(pd.Series({**base, "estimator": "exact", "unit": "guest_insns", "estimate": 300.0}), "Insns")
    assert exact["title"] == "Insns: 300.00 guest insns (exact count)" and exact["text"] == "300.0"
    low = tables.number(pd.Series({**base, "below_resolution": True, "bound": 0.8125}), "Init")
    assert low == {"text": "< 0.81", "value": 0.8125, "below": True, "missed": False,
                   "title": "Init: below the counter's resolution (indistinguishable from the empty-call overhead): "
                            "at most 0.81 tsc ticks"}
    assert tables.fmt(None) == "" and tables.fmt(math.nan) == "" and tables.fmt(1234.5, 0) == "1,234"
    assert tables.fmt(2.0) == "2.0"


def test_one_row_per_cell_with_its_status_and_reason(tmp_path):
    ok = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0), cycles=_cycles(250.0))
    ok["icount_note"] = "icc-like: AVX-512 in QEMU"
    broken = synth.cell("des", "ref", status="build_failed", reason="error: x.c:1: expected ';'")
    broken["kat"] = None
    older = synth.write_run(tmp_path, [ok, broken])
    other = synth.write_run(tmp_path, [synth.cell("idea", "ref", status="timeout", reason="past 60 s")])
    cells = results.load_cells(older.name, tmp_path).set_index("cipher")
    assert sorted(cells.index) == ["des", "rc6"]
    r, b = cells.loc["rc6"], cells.loc["des"]
    assert (r.status, r.kat_passed, r.kat_failed, r.kat_records, r.seconds, r.processes, r.stopped,
            r.icount_note) == ("ok", 10, 0, 10, 1.0, 5, "precision", "icc-like: AVX-512 in QEMU")
    assert r.reason is None or math.isnan(r.reason)
    assert (b.status, b.reason, b.seconds) == ("build_failed", "error: x.c:1: expected ';'", 1.0)
    assert all(v is None or (isinstance(v, float) and math.isnan(v))
               for v in (b.kat_passed, b.kat_failed, b.kat_records, b.processes, b.stopped, b.icount_note))
    assert r["row"] and r.toolchain == "gcc-O3" and r.target == "host"
    named = results.load_cells(other.name, tmp_path)  # each run by its name, whichever is the latest
    assert list(named.cipher) == ["idea"] and list(named.reason) == ["past 60 s"]
    empty = synth.write_run(tmp_path / "empty", [])
    assert results.load_cells(empty.name, tmp_path / "empty").empty


def test_kendall_tau_needs_three_common_items():
    from lab.report import analysis

    tau, n, p = analysis.kendall_tau(["a", "b", "x"], ["b", "a", "y"])
    assert n == 2 and math.isnan(tau) and math.isnan(p)
    tau, n, p = analysis.kendall_tau(["a", "b", "c", "x"], ["a", "b", "c"])
    assert (tau, n) == (1.0, 3) and p == pytest.approx(1 / 6)  # one of the 3! orderings is at least as concordant


def test_key_size_rule_and_section_5_1_normalisation_by_hand():
    import pandas as pd

    from lab.report import tables

    df = pd.DataFrame({"cell": ["aes", "aes", "aes", "des", "3des", "x"], "key_size": [128, 192, 256, 64, 192, 256],
                       "v": [1, 2, 3, 4, 5, 6]})
    picked = results.at_key_size(df, 128)
    assert list(picked.v) == [1, 4, 5, 6]  # 128 where the cell has it, else the cell's smallest
    assert list(results.at_key_size(df, 192).v) == [2, 4, 5, 6]
    assert results.at_key_size(df.iloc[0:0], 128).empty
    t = pd.DataFrame({"g": ["a", "a", "b", "b"], "enc_time": [2.0, 4.0, 10.0, 30.0], "key_time": [8.0, 2.0, 1.0, 3.0],
                      "name": ["p", "q", "r", "s"]})
    whole = tables.normalise(t)  # each column divided by its smallest over all rows
    assert list(whole.name) == ["q", "r", "p", "s"] and list(whole.index) == [0, 1, 2, 3]
    assert list(whole.metric) == pytest.approx([4 / 2 + 2 / 1, 10 / 2 + 1 / 1, 2 / 2 + 8 / 1, 30 / 2 + 3 / 1])
    grouped = tables.normalise(t, by=["g"])  # within each group
    assert list(grouped.name) == ["q", "p", "r", "s"]
    assert list(grouped.enc_norm) == pytest.approx([2.0, 1.0, 1.0, 3.0])
    assert list(grouped.key_norm) == pytest.approx([1.0, 4.0, 1.0, 3.0])
    assert list(grouped.metric) == pytest.approx([3.0, 5.0, 2.0, 6.0])
    assert "name" in grouped and "g" in grouped


def _timing_keys(costs: dict[int, float]) -> list[dict]:
    """Five processes; per key size k: encrypt costs[k] ns/block, decrypt 1.1x, key pair 4x (best of 3)."""
    return [synth.timing_process({k: {"encrypt": (BLOCKS, [int(c * f * BLOCKS * 1.01), int(c * f * BLOCKS)]),
                                      "decrypt": (BLOCKS, [int(c * 1.1 * f * BLOCKS)] * 2),
                                      "key_setup": (PAIRS, [int(4 * c * f * PAIRS)] * 2)} for k, c in costs.items()},
                                 started=float(p)) for p, f in enumerate(LAYOUT)]


def test_a1_rows_columns_and_classes_from_the_data(tmp_path):
    from lab.report import tables

    cells = [synth.cell("rc6", "ref", key_sizes=(128, 192, 256), timing=_timing_keys({128: 100, 192: 110, 256: 120})),
             synth.cell("des", "spbox", key_sizes=(64,), block_bits=64, timing=_timing_keys({64: 300})),
             synth.cell("aes", "hw", impl_class="hardware", key_sizes=(128,), timing=_timing_keys({128: 10})),
             synth.cell("aes", "libx", impl_class="peer", peer_code="portable", key_sizes=(128,),
                        timing=_timing_keys({128: 50})),
             synth.cell("mars", "ref", status="kat_failed", reason="3 of 10 records failed"),
             synth.cell("rc6", "ref", "clang-O3", timing=_timing_keys({128: 1})),  # another platform
             synth.cell("rc6", "ref", target="sparc64", emulated=True, timing=_timing_keys({128: 1}))]
    run = synth.write_run(tmp_path, cells)
    df, cs = results.load(run.name, tmp_path), results.load_cells(run.name, tmp_path)
    t = tables.a1_table(df, cs, "gcc-O3", "host")
    assert t["columns"] == ["Enc128", "Dec128", "Key128", "Enc192", "Dec192", "Key192", "Enc256", "Dec256", "Key256"]
    assert [r["label"] for r in t["rows"]] == ["MARS", "RC6"]
    mars, rc6 = t["rows"]
    assert (mars["status"], mars["reason"]) == ("kat_failed", "3 of 10 records failed")
    assert all(c == {"text": "", "title": "not measured"} for c in mars["cells"])
    mine = df[df.cell == "rc6/ref@gcc-O3@host"]
    metric = {"Enc": "encrypt_speed", "Dec": "decrypt_speed", "Key": "key_setup_speed"}
    for col, shown in zip(t["columns"], rc6["cells"]):
        r = mine[(mine.metric == metric[col[:3]]) & (mine.key_size == int(col[3:]))].iloc[0]
        assert shown == tables.number(r, col)
    per = {"Enc": 128 / 100 * 1e6, "Dec": 128 / 110 * 1e6, "Key": 2e9 / 400}  # Kbit/s, keys/s at 128-bit keys
    assert [c["value"] for c in rc6["cells"][:3]] == pytest.approx([per["Enc"], per["Dec"], per["Key"]], rel=1e-3)
    assert rc6["cells"][3]["value"] == pytest.approx(128 / 110 * 1e6, rel=1e-3)
    (des,) = t["other"]
    assert des["label"] == "DES" and des["key_sizes"] == [64] and len(des["cells"]) == 3
    assert des["cells"][0]["value"] == pytest.approx(64 / 300 * 1e6, rel=1e-3)
    assert [(c["name"], c["impl_class"], [r["label"] for r in c["rows"]]) for c in t["classes"]] == \
        [("hardware instructions", "hardware", ["AES"]), ("peer library", "peer", ["AES [libx]"])]
    hw = t["classes"][0]["rows"][0]
    assert hw["key_sizes"] == [128, 192, 256] and hw["cells"][0]["value"] == pytest.approx(12.8e6, rel=1e-3)
    assert hw["cells"][3] == {"text": "", "title": "not measured"}


def _cycles_ratio(per1: float, per128: float) -> list[dict]:
    return [synth.cycles_process({("null", 1): (1, [OVERHEAD] * 3), ("ekey", 1): (10, [2000 + OVERHEAD] * 3),
                                  ("encrypt", 1): (100, [int(per1 * 100) + OVERHEAD] * 3),
                                  ("encrypt", 128): (10, [int(per128 * 1280) + OVERHEAD] * 3)}, started=float(p))
            for p in range(5)]


def test_a2_marks_a_compiler_that_vectorised_the_loop_over_blocks(tmp_path):
    from lab.report import tables

    cells = [synth.cell("rc6", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles_ratio(400.0, 200.0)),  # 0.5x per block with gcc ...
             synth.cell("rc6", "ref", "clang-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles_ratio(400.0, 400.0)),  # ... 1.0x with clang: the compiler did it
             synth.cell("des", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles_ratio(400.0, 200.0)),
             synth.cell("des", "ref", "clang-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles_ratio(400.0, 220.0)),  # both cheap: the code, not the compiler
             synth.cell("idea", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles_ratio(400.0, 240.0)),  # 0.6x: not below the 0.6 mark
             synth.cell("e2", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles_ratio(400.0, 100.0)),  # no other toolchain: marked on its own
             synth.cell("rc6", "ref", "gcc-O3", target="sparc64", emulated=True, key_sizes=(128,),
                        timing=_timing(100.0, 400.0), cycles=_cycles_ratio(400.0, 400.0))]
    df = results.load(synth.write_run(tmp_path, cells).name, tmp_path)
    t = tables.a2_table(df, "gcc-O3", "host")
    assert [r["label"] for r in t["rows"]] == ["E2 ‡", "DES", "RC6 ‡", "IDEA"]  # by Encrypt-128
    assert len(t["vectorised"]) == 2 and t["vectorised"][0].startswith("E2: Encrypt-128 costs 0.25× Encrypt-1")
    assert t["vectorised"][1].startswith("RC6: Encrypt-128 costs 0.50× Encrypt-1 per block with gcc-O3, far less")
    assert tables.a2_table(df, "clang-O3", "host")["vectorised"] == []
    assert (t["unit"], t["counter"]) == ("tsc_ticks", "x86-tsc-lfence")


def test_a2_every_column_from_the_data(synthetic, tmp_path):
    from lab.report import tables

    df = synthetic["df"]
    t = tables.a2_table(df, "gcc-O3", "host")
    assert t["columns"] == ["EKey", "DKey", "Encrypt-1", "Decrypt-1", "Encrypt-16", "Decrypt-16", "Encrypt-128",
                            "Decrypt-128", "Encrypt-1024", "Decrypt-1024", "Encrypt-32768", "Decrypt-32768", "Init",
                            "Null"]
    metric = {"EKey": ("ekey", None), "DKey": ("dkey", None), "Init": ("init", None), "Null": ("null_overhead", None)}
    for c in t["columns"][2:-2]:
        d, n = c.split("-")
        metric[c] = ("encrypt_per_block" if d == "Encrypt" else "decrypt_per_block", int(n))
    for row in t["rows"]:
        cipher = {v: k for k, v in DISPLAY.items()}[row["label"].split(" [")[0]]
        mine = df[(df.cell == f"{cipher}/ref@gcc-O3@host") & (df.key_size == 128)]
        for col, shown in zip(t["columns"], row["cells"]):
            m, n = metric[col]
            r = mine[(mine.metric == m) & ((mine.n_blocks == n) if n else mine.n_blocks.isna())]
            if r.empty:
                assert shown == {"text": "", "title": "not measured"}, col
            else:
                want = tables.number(r.iloc[0], col, 0 if r.iloc[0].estimate >= 100 else 1)
                assert shown == want, col
    # hardware and peer code in their own groups, each sorted by Encrypt-128
    assert [(c["impl_class"], [r["label"] for r in c["rows"]]) for c in t["classes"]] == \
        [("hardware", ["Rijndael [hw]"]), ("peer", ["Rijndael [libx]"])]
    assert [r["sort"] for r in t["rows"]] == sorted(r["sort"] for r in t["rows"])

    # a cell without 128-bit keys shows its own size; an emulated target shows instruction counts
    ops = [{"key_size": 64, "op": op, "n": n, "calls": 1, "counter": "qemu-insn-region", "unit": "guest_insns",
            "deltas": [d]} for op, n, d in (("null", 1, 10), ("ekey", 1, 510), ("dkey", 1, 610), ("encrypt", 1, 310),
                                            ("encrypt", 128, 128 * 250 + 10), ("decrypt", 128, 128 * 260 + 10))]
    des = synth.cell("des", "ref", target="sparc64", emulated=True, key_sizes=(64,), block_bits=64,
                     timing=_timing_keys({64: 300}), icount=ops)
    emu = results.load(synth.write_run(tmp_path, [des]).name, tmp_path)
    e = tables.a2_table(emu, "gcc-O3", "sparc64")
    (row,) = e["rows"]
    assert row["label"] == "DES (64-bit key)" and (e["unit"], e["counter"]) == ("guest_insns", "qemu-insn-region")
    shown = dict(zip(e["columns"], (c["text"] for c in row["cells"])))
    assert (shown["EKey"], shown["DKey"], shown["Encrypt-1"], shown["Encrypt-128"], shown["Decrypt-128"],
            shown["Null"]) == ("500", "600", "300", "250", "260", "10")
    assert shown["Decrypt-1"] == shown["Encrypt-16"] == shown["Init"] == ""
    assert tables.a2_table(emu, "gcc-O3", "host") == {"columns": [], "rows": [], "classes": [], "unit": None,
                                                      "counter": None, "vectorised": []}


def test_encryption_speeds_times_and_instruction_table_from_the_data(synthetic, tmp_path):
    from lab.report import tables

    df = synthetic["df"]
    sp = tables.encryption_speeds(df, "gcc-O3", "host")
    assert list(sp.columns) == ["row", "estimate", "ci_low", "ci_high", "key_size", "cipher", "precision_met", "value"]
    assert list(sp.cipher) == sorted(SPEEDS, key=lambda c: SPEEDS[c][0]) and list(sp.index) == list(range(5))
    assert list(sp.estimate) == pytest.approx([128 / SPEEDS[c][0] * 1e6 for c in sp.cipher], rel=1e-3)
    assert (sp.key_size == 128).all() and (sp.ci_low <= sp.estimate).all() and (sp.estimate <= sp.ci_high).all()
    assert list(tables.encryption_speeds(df, "clang-O3", "host").cipher) == ["rijndael"]
    none = tables.encryption_speeds(df, "icc", "host")
    assert none.empty and list(none.columns) == list(sp.columns)

    sel = df[(df.toolchain == "gcc-O3") & (df.impl_class == "portable") & (df.status == "ok") & (df.key_size == 128)]
    t = tables.key_and_encryption_times(sel, ["cipher"]).set_index("cipher")
    for c, (e, k, _) in SPEEDS.items():
        assert t.loc[c, "enc_time"] == pytest.approx(e / 128 / 1e6, rel=1e-3)  # seconds per Kbit
        assert t.loc[c, "key_time"] == pytest.approx(k / 2 / 1e9, rel=1e-3)  # seconds per key
    bare = tables.key_and_encryption_times(sel[sel.metric != "key_setup_speed"], ["cipher"])
    assert bare.empty and list(bare.columns) == ["cipher", "enc_time", "key_time"]

    def ops(per_block: int) -> list[dict]:
        return [{"key_size": 128, "op": op, "n": n, "calls": 1, "counter": "qemu-insn-region", "unit": "guest_insns",
                 "deltas": [d]} for op, n, d in (("null", 1, 10), ("encrypt", 128, 128 * per_block + 10),
                                                 ("encrypt", 16, 16 * 999 + 10))]
    cells = [synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0), icount=ops(300)),
             synth.cell("rc6", "ref", target="sparc64", emulated=True, key_sizes=(128,), timing=_timing(1.0, 1.0),
                        icount=ops(320)),
             synth.cell("idea", "ref", target="sparc64", emulated=True, key_sizes=(128,), icount=ops(200)),
             synth.cell("rc6", "ref", "clang-O3", target="mips64", emulated=True, key_sizes=(128,), icount=ops(310)),
             synth.cell("des", "ref", status="kat_failed", key_sizes=(128,), icount=ops(1))]
    d = results.load(synth.write_run(tmp_path, cells).name, tmp_path)
    it = tables.instructions_table(d)
    assert it["n_blocks"] == 128 and [x["toolchain"] for x in it["toolchains"]] == ["clang-O3", "gcc-O3"]
    clang, gcc = it["toolchains"]
    assert gcc["targets"] == ["host", "sparc64"] and gcc["speed_target"] == "host"
    assert [(r["row"], r["values"]) for r in gcc["rows"]] == [("IDEA", {"host": None, "sparc64": 200.0}),
                                                              ("RC6", {"host": 300.0, "sparc64": 320.0})]
    assert gcc["rows"][1]["speed"] == pytest.approx(1.28e6, rel=1e-3) and gcc["rows"][0]["speed"] is None
    assert clang["targets"] == ["mips64"] and clang["speed_target"] is None and clang["rows"][0]["speed"] is None
    assert tables.instructions_table(d, n_blocks=16)["toolchains"][1]["rows"][0]["values"]["sparc64"] == 999.0
    assert tables.instructions_table(d[d.metric != "insn_encrypt_per_block"]) == {"toolchains": []}


def test_platform_and_instruction_averages_over_toolchains(tmp_path):
    from lab.report import analysis

    def ops(per_block: int, ks: int = 128) -> list[dict]:
        return [{"key_size": ks, "op": op, "n": n, "calls": 1, "counter": "qemu-insn-region", "unit": "guest_insns",
                 "deltas": [d]} for op, n, d in (("null", 1, 10), ("encrypt", 128, 128 * per_block + 10),
                                                 ("encrypt", 16, 16 * 7 + 10))]
    cells = [synth.cell("rc6", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0), icount=ops(300)),
             synth.cell("rc6", "ref", "clang-O3", key_sizes=(128,), timing=_timing(200.0, 400.0), icount=ops(500)),
             synth.cell("des", "ref", "gcc-O3", key_sizes=(64,), block_bits=64, timing=_timing_keys({64: 50}),
                        icount=ops(100, 64)),
             synth.cell("rc6", "hw", "gcc-O3", impl_class="hardware", key_sizes=(128,), timing=_timing(1.0, 1.0),
                        icount=ops(1)),
             synth.cell("rc6", "ref", "gcc-O3", target="sparc64", emulated=True, key_sizes=(128,),
                        timing=_timing(900.0, 900.0), icount=ops(320))]
    df = results.load(synth.write_run(tmp_path, cells).name, tmp_path)
    pa = analysis.platform_averages(df, "encrypt_speed")
    assert list(pa.columns) == ["target", "emulated", "row", "cipher", "value", "ci_low", "ci_high", "n_toolchains",
                                "spread"]
    assert [(r.target, r.cipher, r.n_toolchains) for r in pa.itertuples()] == [("host", "des", 1), ("host", "rc6", 2),
                                                                             ("sparc64", "rc6", 1)]
    rc6 = pa[(pa.target == "host") & (pa.cipher == "rc6")].iloc[0]
    a, b = 1.28e6, 0.64e6  # Kbit/s with gcc and clang
    assert rc6.value == pytest.approx((a + b) / 2, rel=1e-3) and rc6.spread == pytest.approx(a / b, rel=1e-3)
    both = df[(df.cipher == "rc6") & (df.target == "host") & (df.metric == "encrypt_speed") & (df.impl_class == "portable")]
    assert rc6.ci_low == pytest.approx(both.ci_low.mean()) and rc6.ci_high == pytest.approx(both.ci_high.mean())
    assert pa[pa.cipher == "des"].value.iloc[0] == pytest.approx(64 / 50 * 1e6, rel=1e-3)  # its own key size
    assert list(pa.index) == [0, 1, 2]
    ia = analysis.instruction_averages(df)
    assert list(ia.columns) == ["target", "emulated", "row", "cipher", "value", "insns"]
    assert [(r.target, r.cipher) for r in ia.itertuples()] == [("host", "des"), ("host", "rc6"), ("sparc64", "rc6")]
    got = ia.set_index(["target", "cipher"])
    assert got.loc[("host", "rc6"), "insns"] == pytest.approx(400.0)
    assert got.loc[("host", "rc6"), "value"] == pytest.approx((128000 / 300 + 128000 / 500) / 2)
    assert got.loc[("host", "des"), "value"] == pytest.approx(64000 / 100)
    assert got.loc[("sparc64", "rc6"), "value"] == pytest.approx(128000 / 320) and list(ia.index) == [0, 1, 2]
    assert analysis.instruction_averages(df, n_blocks=16).insns.tolist() == [7.0, 7.0, 7.0]
    empty = analysis.instruction_averages(df[df.metric != "insn_encrypt_per_block"])
    assert empty.empty and list(empty.columns) == ["target", "emulated", "row", "cipher", "value", "insns"]
    e2 = analysis.platform_averages(df[df.metric != "encrypt_speed"], "encrypt_speed")
    assert e2.empty and list(e2.columns) == list(pa.columns)


def test_natural_breaks_and_top_performers_by_platform():
    import jenkspy
    import pandas as pd

    from lab.report import analysis

    vals = [1, 2, 3, 10, 11, 12, 30, 31, 32]
    assert analysis.natural_breaks(vals + [None, math.nan]) == list(jenkspy.jenks_breaks(vals, n_classes=3)) \
        == [1, 3, 12, 32]
    assert analysis.natural_breaks([5, 1, 9, 9], 3) == list(jenkspy.jenks_breaks([1, 5, 9, 9], n_classes=2))
    assert analysis.natural_breaks([4, 4, 8], 3) == [4, 8] and analysis.natural_breaks([3, 3]) == [3, 3]
    assert analysis.natural_breaks([]) == [] and analysis.natural_breaks([1, 2, 3, 4, 5], 2) == \
        list(jenkspy.jenks_breaks([1, 2, 3, 4, 5], n_classes=2))

    def plat(target, values, emulated=False):
        return pd.DataFrame({"target": target, "emulated": emulated, "row": list(values), "value": list(values.values())})

    a = plat("A", {"R1": 100, "R2": 98, "R3": 50, "R4": 49, "R5": 10, "R6": 9})
    b = plat("B", {"R1": 100, "R3": 99, "R2": 50, "R4": 48, "R5": 10, "R6": 9})
    e = plat("E", {"R1": 1, "R2": 1.1, "R3": 5, "R4": 5.2, "R5": 9, "R6": 9.1}, emulated=True)
    f = plat("F", {"R1": 9, "R2": 9.1, "R3": 5, "R4": 5.1, "R5": 1, "R6": 1.2}, emulated=True)
    insn = plat("E", {"R5": 900, "R6": 880, "R3": 400, "R4": 410, "R1": 100, "R2": 90}, emulated=True)
    top = analysis.top_performers(pd.concat([a, b, e, f]), insn=insn)
    assert top["hardware_platforms"] == ["A", "B"] and top["consistent"] == ["R1"]
    p = top["platforms"]
    assert p["A"]["groups"] == [["R1", "R2"], ["R3", "R4"], ["R5", "R6"]] and p["B"]["groups"][0] == ["R1", "R3"]
    assert p["A"]["breaks"] == list(jenkspy.jenks_breaks(sorted(a.value), n_classes=3))
    assert (p["A"]["emulated"], p["A"]["basis"]) == (False, "Kbit/s")
    assert (p["E"]["emulated"], p["E"]["basis"]) == (True, "guest instructions")  # not QEMU's wall clock
    assert p["E"]["groups"][0] == ["R5", "R6"]
    assert (p["F"]["basis"], p["F"]["groups"][0]) == ("Kbit/s", ["R1", "R2"])  # no counts: its speeds
    two = analysis.top_performers(pd.concat([a, b]), classes=2)
    assert two["platforms"]["A"]["groups"] == [["R1", "R2"], ["R3", "R4", "R5", "R6"]]
    one = analysis.top_performers(plat("C", {"R1": 5, "R2": 5}))
    assert one["platforms"]["C"]["groups"] == [["R1", "R2"]] and one["consistent"] == ["R1", "R2"]
    none = analysis.top_performers(plat("C", {}))
    assert none == {"platforms": {}, "consistent": [], "hardware_platforms": []}
    only_emulated = analysis.top_performers(e, insn=None)
    assert only_emulated["consistent"] == [] and only_emulated["platforms"]["E"]["basis"] == "Kbit/s"


def test_figure_4_normalises_within_each_platform(tmp_path):
    from lab.report import analysis

    cells = [synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0)),
             synth.cell("des", "ref", key_sizes=(128,), timing=_timing(200.0, 100.0)),
             synth.cell("rc6", "ref", target="sparc64", emulated=True, key_sizes=(128,), timing=_timing(1000.0, 8000.0)),
             synth.cell("des", "ref", target="sparc64", emulated=True, key_sizes=(128,), timing=_timing(4000.0, 2000.0))]
    df = results.load(synth.write_run(tmp_path, cells).name, tmp_path)
    n = analysis.normalised_platform(df)
    assert list(n.columns) == ["target", "emulated", "row", "cipher", "key_norm", "enc_norm", "metric"]
    got = {(r.target, r.cipher): (r.enc_norm, r.key_norm, r.metric) for r in n.itertuples()}
    assert got[("host", "rc6")] == pytest.approx((1.0, 4.0, 5.0), rel=1e-3)
    assert got[("host", "des")] == pytest.approx((2.0, 1.0, 3.0), rel=1e-3)
    assert got[("sparc64", "rc6")] == pytest.approx((1.0, 4.0, 5.0), rel=1e-3)
    assert got[("sparc64", "des")] == pytest.approx((4.0, 1.0, 5.0), rel=1e-3)
    assert [(r.target, r.cipher) for r in n.itertuples()][:2] == [("host", "des"), ("host", "rc6")]
    assert analysis.normalised_platform(df[df.metric != "key_setup_speed"]).empty


def test_compilers_correctness_memory_and_libraries_from_the_data(tmp_path):
    from lab.report import analysis

    cells = [synth.cell("rc6", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0), table_bytes=0,
                        ks_bytes=176, code=2000),
             synth.cell("rc6", "ref", "clang-O3", key_sizes=(128,), timing=_timing(125.0, 400.0), table_bytes=0,
                        ks_bytes=176, code=2500),
             synth.cell("rc6", "hw", "gcc-O3", impl_class="hardware", default=False, key_sizes=(128,),
                        timing=_timing(10.0, 400.0), table_bytes=0, ks_bytes=0, code=900),
             synth.cell("rc6", "libp", "gcc-O3", impl_class="peer", peer_code="asm", default=False, key_sizes=(128,),
                        timing=_timing(80.0, 400.0)),
             synth.cell("rc6", "libh", "gcc-O3", impl_class="peer", peer_code="hardware", default=False,
                        key_sizes=(128,), timing=_timing(20.0, 400.0)),
             synth.cell("rc6", "ref", "gcc-O3", target="sparc64", emulated=True, key_sizes=(128,),
                        timing=_timing(1.0, 1.0), table_bytes=0, ks_bytes=176, code=2222),
             synth.cell("des", "ref", "gcc-O3", key_sizes=(64,), block_bits=64, timing=_timing_keys({64: 50}),
                        table_bytes=2048, ks_bytes=128, code=1500),
             synth.cell("des", "ref", "clang-O3", status="build_failed", reason="no compiler", key_sizes=(64,),
                        block_bits=64)]
    run = synth.write_run(tmp_path, cells)
    df, cs = results.load(run.name, tmp_path), results.load_cells(run.name, tmp_path)

    rel = analysis.compilers_relative(df)
    assert rel.loc[("host", "RC6 [ref]"), "gcc-O3"] == pytest.approx(1.0)
    assert rel.loc[("host", "RC6 [ref]"), "clang-O3"] == pytest.approx(100 / 125, rel=1e-3)
    assert rel.loc[("host", "RC6 [hw]"), "gcc-O3"] == pytest.approx(1.0)  # every class, not only ranked code
    assert analysis.compilers_relative(df[df.metric != "encrypt_speed"]).empty

    cm = analysis.correctness_matrix(cs)
    assert cm["columns"] == [("host", "clang-O3"), ("host", "gcc-O3"), ("sparc64", "gcc-O3")]
    rows = {r["row"]: r["cells"] for r in cm["rows"]}
    assert rows["DES"][0] == ("build_failed", "no compiler") and rows["DES"][1][0] == "ok" and rows["DES"][2] is None
    assert [c[0] for c in rows["RC6 [ref]"]] == ["ok", "ok", "ok"]
    assert analysis.correctness_matrix(cs.iloc[0:0]) == {"columns": [], "rows": []}

    mem = analysis.memory_table(df).set_index("row")
    assert list(mem.columns) == ["cipher", "implementation", "impl_class", "table_bytes", "key_schedule_bytes",
                                 "code_bytes", "memory_bytes", "encrypt_speed"]
    des, ref = mem.loc["DES"], mem.loc["RC6 [ref]"]
    assert (des.table_bytes, des.key_schedule_bytes, des.code_bytes, des.memory_bytes) == (2048, 128, 1500, 2176)
    assert ref.code_bytes == 2000  # the gcc-O3 build's code, not clang's or the emulated target's
    assert ref.memory_bytes == 176 and ref.encrypt_speed == pytest.approx(1.28e6, rel=1e-3)  # best on hardware
    assert des.encrypt_speed == pytest.approx(64 / 50 * 1e6, rel=1e-3)
    assert list(mem.cipher) == sorted(mem.cipher)
    only_tables = analysis.memory_table(df[df.metric != "code_bytes"])
    assert only_tables.code_bytes.isna().all()
    assert list(only_tables.memory_bytes) == list(analysis.memory_table(df).memory_bytes)
    no_tables = analysis.memory_table(df[df.metric != "table_bytes"])
    assert list(no_tables.memory_bytes) == list(no_tables.key_schedule_bytes)  # a missing size counts 0
    assert analysis.memory_table(df[~df.metric.isin(["table_bytes", "key_schedule_bytes", "code_bytes"])]).empty

    vs = versus.versus_libraries(df)
    assert [(v["target"], v["toolchain"], v["cipher"], v["kind"], v["ours"], v["peer"]) for v in vs] == [
        ("host", "gcc-O3", "rc6", "portable", "ref", "libp"), ("host", "gcc-O3", "rc6", "hardware", "hw", "libh")]
    port, hw = vs
    assert port["ratio"] == pytest.approx(100 / 80, rel=1e-3) and port["verdict"] == "peer faster"  # asm counts as portable
    assert hw["ratio"] == pytest.approx(10 / 20, rel=1e-3) and hw["verdict"] == "ours faster"
    assert port["ci_low"] <= port["ratio"] <= port["ci_high"]
    assert versus.versus_libraries(df[df.impl_class != "peer"]) == []
    # the peer's library as it ran; none where a row has none (NaN in a frame of older runs), never "nan"
    named = df.assign(library=[("libp-dev 1.0" if i == "libp" else np.nan) for i in df.implementation])
    assert [v["peer_library"] for v in versus.versus_libraries(named)] == ["libp-dev 1.0", None]


def test_every_row_carries_its_provenance(tmp_path):
    ok = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0), steal=0.125)
    ok["build"]["cflags"] = ["-O3", "-march=x86-64"]
    peer = synth.cell("rc6", "libp", impl_class="peer", peer_code="asm", default=False, key_sizes=(128,),
                      timing=_timing(80.0, 400.0))
    peer["build"]["compiler_version"] = ""
    failed = synth.cell("des", "ref", "clang-O3", status="build_failed", reason="x", key_sizes=(64,), block_bits=64,
                        round1=False)
    failed["build"] = None
    tcs = {"gcc-O3": {**synth.toolchain_facts("gcc"), "version": "gcc 12.2"},
           "clang-O3": {**synth.toolchain_facts("clang"), "version": "clang 14.0"}}
    run = synth.write_run(tmp_path, [ok, peer, failed], toolchains=tcs)
    df = results.load(run.name, tmp_path)
    r = df[(df.cell == ok["cell"]) & (df.metric == "encrypt_speed")].iloc[0]
    assert {k: r[k] for k in ("run_id", "machine", "cell", "cipher", "display", "implementation", "impl_class", "code",
                              "default", "label", "round1", "block_bits", "toolchain", "target", "emulated", "status",
                              "steal_fraction", "compiler", "compiler_version", "cflags", "profile", "host",
                              "cpu_model")} == {
        "run_id": run.name, "machine": "synth", "cell": "rc6/ref@gcc-O3@host", "cipher": "rc6", "display": "RC6",
        "implementation": "ref", "impl_class": "portable", "code": "portable", "default": True, "label": "RC6",
        "round1": True, "block_bits": 128, "toolchain": "gcc-O3", "target": "host", "emulated": False, "status": "ok",
        "steal_fraction": 0.125, "compiler": "gcc", "compiler_version": "gcc (synthetic) 12",
        "cflags": "-O3 -march=x86-64", "profile": "synthetic", "host": "synth", "cpu_model": "Synthetic CPU"}
    p = df[df.cell == peer["cell"]].iloc[0]
    assert (p.code, p["default"], p.compiler_version) == ("asm", False, "gcc 12.2")  # the toolchain's version
    cells = results.load_cells(run.name, tmp_path).set_index("cipher")
    f = cells.loc["des"]
    assert (f.cflags, f.compiler_version, f.round1, f.block_bits) == ("", "clang 14.0", False, 64)
    assert f.compiler is None or math.isnan(f.compiler)
    assert f.steal_fraction is None or math.isnan(f.steal_fraction)


def test_fact_rows_and_the_timer_as_counter(synthetic):
    df = synthetic["df"]
    mine = df[df.cell == "rc6/ref@gcc-O3@host"]
    t = mine[mine.metric == "table_bytes"].iloc[0]
    assert {k: t[k] for k in ("unit", "estimate", "ci_low", "ci_high", "estimator", "precision", "precision_met",
                              "below_resolution", "value", "median", "std", "min", "max", "n", "n_total")} == {
        "unit": "bytes", "estimate": 1000, "ci_low": 1000, "ci_high": 1000, "estimator": "fact", "precision": 0.0,
        "precision_met": True, "below_resolution": False, "value": 1000, "median": 1000, "std": 0.0, "min": 1000,
        "max": 1000, "n": 1, "n_total": 1}
    facts = mine[mine.metric.isin(["table_bytes", "key_schedule_bytes", "code_bytes"])].set_index("metric")
    assert facts.estimate.to_dict() == {"table_bytes": 1000, "key_schedule_bytes": 200, "code_bytes": 3000}
    assert set(mine[mine.metric == "encrypt_speed"].counter) == {"clock-monotonic"}
    assert set(mine[mine.metric == "ekey"].counter) == {"x86-tsc-lfence"}


def test_quantity_row_from_its_definitions():
    from lab import stats
    from lab.quantities import Quantity

    pp = [100.0, 102.0, 101.0, 105.0, 103.0, 104.0, 101.5]
    samples = pp + [110.0, 99.0, 160.0, 101.0]
    q = Quantity("encrypt_speed", 128, None, "Kbit/s", "clock-monotonic", per_process=pp, samples=samples,
                 rate_work=128e6, resolution=0.01)
    row = results.quantity_row({"cell": "c"}, q, "median", 0.9, 0.02)
    est = stats.estimate(pp, "median", 0.9).inverted(128e6)
    nist = stats.nist_summary(samples)
    assert nist.n < nist.n_total  # 160 is beyond 3 sd: NIST's value leaves it out
    want = {"cell": "c", "metric": "encrypt_speed", "key_size": 128, "n_blocks": None, "unit": "Kbit/s",
            "estimate": est.estimate, "ci_low": est.ci_low, "ci_high": est.ci_high, "estimator": "median",
            "confidence": 0.9, "processes": 7, "precision": est.precision, "precision_target": 0.02,
            "run_noise": 0.0, "below_resolution": False,
            "bound": None, "value": 128e6 / nist.value, "median": 128e6 / nist.median,
            "std": 128e6 / nist.value * nist.std / nist.value, "min": 128e6 / 160.0, "max": 128e6 / 99.0,
            "n": nist.n, "n_total": len(samples), "counter": "clock-monotonic", "per_process": pp,
            "precision_met": est.precision <= 0.02}
    gauge = [row.pop(k) for k in ("gauge_relative", "gauge_relative_low", "gauge_relative_high")]
    assert all(g != g for g in gauge)  # NaN: these processes measured no machine-speed gauge (tests/test_gauge.py)
    within = row.pop("within")
    assert within != within  # NaN: only the trimmed estimator's interval has a within-run part
    assert row.pop("within_scale") == 1.0  # a machine never calibrated takes the within-run part as it is
    speed = [row.pop(k) for k in ("speed_factor", "speed_se")]
    assert all(s != s for s in speed)  # NaN: a row at the speed it ran at until its run has a reference (test_speed)
    lane = row.pop("lane_difference")
    assert lane != lane  # NaN: the lanes' self-check is the cell's (cell_rows), never a lone quantity's
    assert row.keys() == want.keys()
    for k, v in want.items():
        assert row[k] == (pytest.approx(v, rel=1e-12) if isinstance(v, float) else v), k
    assert results.quantity_row({}, q, "median", 0.9, 1.0)["precision_met"] is True
    assert results.quantity_row({}, q, "median", 0.9, None)["precision_met"] is False  # no target: not met
    assert results.quantity_row({}, q, "min", 0.95, 0.02)["estimate"] == pytest.approx(128e6 / 100.0)

    # a cost: no conversion; one below the counter's resolution is a bound, never 0 or negative
    c = Quantity("ekey", 128, None, "tsc_ticks", "x86-tsc-lfence", per_process=[0.0, -1.0, 2.0, 0.5, 1.0, 0.0],
                 samples=[0.0, -1.0, 2.0, 0.5, 1.0, 0.0, 3.0], resolution=2.6)
    low = results.quantity_row({}, c, "min", 0.95, 0.02)
    assert low["below_resolution"] is True and low["bound"] == 2.6 and low["precision_met"] is True
    assert all(math.isnan(low[k]) for k in ("estimate", "ci_low", "ci_high", "value", "median"))
    assert (low["min"], low["max"], low["std"]) == (-1.0, 3.0, pytest.approx(stats.nist_summary(c.samples).std))
    flagged = Quantity("encrypt_per_block", 128, 16, "tsc_ticks", "x86-tsc-lfence", per_process=[50.0] * 6,
                       samples=[50.0] * 6, resolution=1.6, below_resolution=True)
    assert results.quantity_row({}, flagged, "min", 0.95, 0.02)["bound"] == 1.6
    fine = Quantity("encrypt_per_block", 128, 16, "tsc_ticks", "x86-tsc-lfence", per_process=[50.0, 51.0] * 3,
                    samples=[50.0, 51.0] * 3, resolution=1.6)
    r = results.quantity_row({}, fine, "min", 0.95, 0.02)
    assert (r["below_resolution"], r["bound"], r["estimate"], r["value"], r["median"], r["std"]) == \
        (False, None, 50.0, 50.5, 50.5, pytest.approx(stats.nist_summary(fine.samples).std))
    for m in ("dkey", "init", "encrypt_per_block", "decrypt_per_block"):  # every other cost is checked too
        z = Quantity(m, 128, None, "tsc_ticks", "x", per_process=[0.0] * 6, samples=[0.0] * 6, resolution=2.6)
        assert results.quantity_row({}, z, "min", 0.95, 0.02)["below_resolution"] is True
    speed0 = Quantity("null_overhead", 128, None, "tsc_ticks", "x", per_process=[0.0] * 6, samples=[0.0] * 6)
    assert results.quantity_row({}, speed0, "min", 0.95, 0.02)["below_resolution"] is False  # the overhead itself

    # exact counts: the one value, no interval to reach, no target
    ex = Quantity("insn_encrypt_per_block", 128, 128, "guest_insns", "qemu-insn-region", per_process=[300.0],
                  samples=[300.0], resolution=1 / 128)
    e = results.quantity_row({}, ex, "exact", 0.95, 0.02)
    assert (e["estimate"], e["estimator"], e["precision"], e["precision_target"], e["precision_met"]) == \
        (300.0, "exact", 0.0, None, True)
    assert (e["confidence"], e["processes"], math.isnan(e["ci_low"]), math.isnan(e["ci_high"])) == (None, 1, True, True)
    two = Quantity("insn_ekey", 128, None, "guest_insns", "q", per_process=[310.0, 300.0], samples=[310.0, 300.0])
    assert results.quantity_row({}, two, "exact", None, None)["estimate"] == 300.0  # the smallest count
    zero = Quantity("insn_ekey", 128, None, "guest_insns", "q", per_process=[0.0], samples=[0.0], resolution=1)
    assert results.quantity_row({}, zero, "exact", 0.95, 0.02)["below_resolution"] is False


def test_loader_rows_code_bytes_and_row_names(tmp_path):
    a = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0), code=3000)
    a["build"]["code_bytes"] = {"text": 2000}  # no read-only data
    b = synth.cell("rc6", "libp", impl_class="peer", peer_code="portable", default=False, key_sizes=(128,),
                   timing=_timing(80.0, 400.0))
    c = synth.cell("idea", "libq", impl_class="peer", peer_code="portable", default=False, key_sizes=(128,),
                   timing=_timing(80.0, 400.0))  # a cipher only a library implements
    d = synth.cell("serpent", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0))
    d["build"]["code_bytes"] = {}
    e1 = synth.cell("aes", "ttable", display="AES", key_sizes=(128,), timing=_timing(100.0, 400.0))
    e2 = synth.cell("aes", "small", display="AES", key_sizes=(128,), default=False, timing=_timing(150.0, 400.0))
    r1 = synth.write_run(tmp_path, [a, b, c])
    r2 = synth.write_run(tmp_path, [d, e1, e2])
    df = results.load([r1.name, r2.name], tmp_path)
    assert list(df.columns) == list(results.COLUMNS) and list(df.index) == list(range(len(df)))
    code = df[df.metric == "code_bytes"].set_index("cell").estimate.to_dict()
    assert code["rc6/ref@gcc-O3@host"] == 2000 and "serpent/ref@gcc-O3@host" not in code
    assert code["rc6/libp@gcc-O3@host"] == 3000  # text 2900 + rodata 100 (synth)
    rows = df.drop_duplicates("cell").set_index("cell").row.to_dict()
    assert rows == {"rc6/ref@gcc-O3@host": "RC6", "rc6/libp@gcc-O3@host": "RC6 [libp]",
                    "idea/libq@gcc-O3@host": "IDEA [libq]", "serpent/ref@gcc-O3@host": "SERPENT",
                    "aes/ttable@gcc-O3@host": "AES [ttable]", "aes/small@gcc-O3@host": "AES [small]"}
    empty = results.load(synth.write_run(tmp_path / "e", []).name, tmp_path / "e")
    assert empty.empty and list(empty.columns) == list(results.COLUMNS)


def test_raw_samples_to_quantities_exactly():
    from lab import quantities as qs

    procs = [{128: {"encrypt": {"per_sample": 4, "ns": [400]},  # one sample is a sample
                    "decrypt": {"per_sample": 4, "ns": []},  # none: skipped, the others still read
                    "key_setup": {"per_sample": 2, "ns": [1000, 900]}}},
             {128: {"encrypt": {"per_sample": 4, "ns": [420, 404]}, "decrypt": {"per_sample": 4, "ns": [440]},
                    "key_setup": {"per_sample": 2, "ns": [950]}}}]
    got = {q.metric: q for q in qs.timing_quantities(procs, 64, "clock-monotonic")}
    assert set(got) == {"encrypt_speed", "decrypt_speed", "key_setup_speed"}
    e, d, k = got["encrypt_speed"], got["decrypt_speed"], got["key_setup_speed"]
    assert (e.per_process, e.samples, e.unit, e.rate_work, e.counter) == ([100.0, 101.0], [100.0, 105.0, 101.0],
                                                                         "Kbit/s", 64e6, "clock-monotonic")
    assert (d.per_process, k.per_process, k.unit, k.rate_work) == ([110.0], [450.0, 475.0], "keys/s", 2e9)
    ops = [{"key_size": 128, "op": "encrypt", "n": 4, "calls": 2, "counter": "c", "unit": "u", "deltas": []},
           {"key_size": 128, "op": "null", "n": 1, "calls": 1, "counter": "c", "unit": "u", "deltas": [10, 12]},
           {"key_size": 128, "op": "encrypt", "n": 16, "calls": 2, "counter": "c", "unit": "u",
            "deltas": [10 + 32 * 300, 10 + 32 * 301]}]
    null, enc = sorted(qs.cycle_quantities([ops], prefix="insn_"), key=lambda q: q.metric != "insn_null_overhead")
    assert (null.metric, null.per_process, null.resolution) == ("insn_null_overhead", [10.0], 1.0)
    assert (enc.metric, enc.n_blocks, enc.per_process, enc.samples, enc.resolution) == \
        ("insn_encrypt_per_block", 16, [300.0], [300.0, 301.0], 1 / 32)  # exact counts: one instruction
