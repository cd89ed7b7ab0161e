"""Report figures on fixtures that separate the plausible alternatives (issue 26, docs/testing.md "Fixtures that
separate alternatives").  Each figure is computed here from its definition on data where the wrong alternative
gives a different number:

* 21 processes with distinct per-process minima: a 90 % and a 95 % bootstrap interval have different ends;
* three toolchains with unequal speeds (factors 1, 1.15, 1.9): a mean over toolchains differs from a median,
  a maximum from a minimum;
* two implementations of one class with different speeds (ours: ttable and small, aesni and vaesx; peers:
  libfast and libslow): picking the slowest gives another row;
* interrupted samples that reorder NIST's 3-sd mean against the best case (twofish has the second best case
  but the worst NIST mean): a ranking by the wrong column differs;
* defaults called as users call them (no confidence, threshold, classes, key size or block count passed).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from lab import compare, results, stats, versus
from lab.report import analysis, published, tables

from . import synth

P = 21
LAYOUT = list(1 + np.random.default_rng(26).permutation(np.linspace(0.0, 0.2, P)))  # distinct, best 1.0
TOOLCHAINS = {"gcc-O3": 1.0, "clang-O3": 1.15, "icc-like": 1.9}
# best-case ns per block and per key pair, and how hard interruptions hit (NIST's mean follows them)
PORTABLE = {"rijndael": (100.0, 400.0, 1.0), "twofish": (104.0, 2000.0, 10.0), "serpent": (150.0, 800.0, 1.0),
            "rc6": (200.0, 100.0, 1.0), "mars": (260.0, 700.0, 1.0), "magenta": (1000.0, 500.0, 1.0)}
BLOCKS, PAIRS, OVERHEAD = 1000, 100, 26


def _timing(enc: float, key: float, hit: float) -> list[dict]:
    out = []
    for p, f in enumerate(LAYOUT):
        def samples(cost, per):
            best = cost * f * per
            # two clean samples, then one interrupted: `hit` times longer than usual (NIST's mean keeps it)
            return [int(best), int(best * 1.01), int(best * (1.05 + 0.25 * hit))]
        out.append(synth.timing_process({128: {"encrypt": (BLOCKS, samples(enc, BLOCKS)),
                                               "decrypt": (BLOCKS, samples(enc * 1.1, BLOCKS)),
                                               "key_setup": (PAIRS, samples(key, PAIRS))}}, started=float(p)))
    return out


def _cycles(per_block: float) -> list[dict]:
    return synth.layout_cycles(LAYOUT, OVERHEAD, lambda best: [best + 26, best], {
        ("null", 1): (1, [OVERHEAD, OVERHEAD + 26]), ("ekey", 1): (10, 200.0), ("dkey", 1): (10, 300.0),
        ("encrypt", 128): (10, per_block), ("decrypt", 128): (10, per_block)})


def _icount(per_block: float) -> list[dict]:
    n = 128
    return [{"key_size": 128, "op": op, "n": k, "calls": 1, "counter": "qemu-insn-region", "unit": "guest_insns",
             "deltas": [int(c)]} for op, k, c in [("null", 1, 0), ("ekey", 1, 500), ("dkey", 1, 600),
                                                  ("encrypt", n, per_block * n), ("decrypt", n, per_block * n)]]


def _cell(cipher, impl, tc, enc, key, hit=1.0, **kw) -> dict:
    f = TOOLCHAINS[tc]
    return synth.cell(cipher, impl, tc, key_sizes=(128,), timing=_timing(enc * f, key * f, hit),
                      cycles=_cycles(enc * f * 2.5), icount=_icount(enc * f * 10), **kw)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("separating")
    cells = []
    for tc in TOOLCHAINS:
        cells += [_cell(c, "ref", tc, e, k, hit) for c, (e, k, hit) in PORTABLE.items() if c != "rijndael"]
        cells += [_cell("rijndael", "ttable", tc, 100.0, 400.0),
                  _cell("rijndael", "small", tc, 180.0, 300.0, default=False),
                  _cell("rijndael", "aesni", tc, 10.0, 50.0, impl_class="hardware", default=False),
                  _cell("rijndael", "vaesx", tc, 14.0, 60.0, impl_class="hardware", default=False),
                  _cell("rijndael", "libfast", tc, 90.0, 400.0, impl_class="peer", peer_code="portable",
                        default=False),
                  _cell("rijndael", "libslow", tc, 300.0, 400.0, impl_class="peer", peer_code="portable",
                        default=False)]
    facts = {"gcc-O3": synth.toolchain_facts("gcc", ["A.1-7"]), "clang-O3": synth.toolchain_facts("clang"),
             "icc-like": synth.toolchain_facts("gcc")}
    d = synth.write_run(tmp / "results", cells, toolchains=facts)
    meta, _ = results.read_run(d)
    return {"df": results.load(d, tmp / "results"), "meta": meta, "dir": d, "results": tmp / "results"}


def _row(df, cipher, metric, impl="ref", tc="gcc-O3"):
    sel = df[(df.cipher == cipher) & (df.implementation == impl) & (df.toolchain == tc) & (df.metric == metric)]
    assert len(sel) == 1
    return sel.iloc[0]


def _min_bootstrap(costs, level):
    ci = sps.bootstrap((np.sort(costs),), np.min, confidence_level=level, method="percentile", n_resamples=4999,
                       vectorized=True, rng=np.random.default_rng(1999)).confidence_interval
    return ci.low, ci.high


def test_the_interval_is_the_95_percent_one_and_a_90_percent_one_differs(run):
    r = _row(run["df"], "serpent", "encrypt_speed")
    costs = [int(150.0 * f * BLOCKS) / BLOCKS for f in LAYOUT]  # ns per block of each process's best sample
    lo, hi = _min_bootstrap(costs, 0.95)
    assert r.estimate == pytest.approx(128e6 / min(costs))  # Kbit/s: 128 bits per block
    assert (r.ci_low, r.ci_high) == (pytest.approx(128e6 / hi), pytest.approx(128e6 / lo))
    lo90, hi90 = _min_bootstrap(costs, 0.90)
    assert abs(hi90 - hi) / hi > 1e-3  # the fixture tells the levels apart
    assert r.confidence == 0.95 and r.processes == P
    # the same defaults a user gets from the function itself
    e = stats.estimate(costs)
    assert (e.estimator, e.confidence, e.ci_high) == ("min", 0.95, pytest.approx(hi))


def test_nist_value_is_the_3sd_mean_and_orders_twofish_behind_serpent(run):
    df = run["df"]
    tw, se = _row(df, "twofish", "encrypt_speed"), _row(df, "serpent", "encrypt_speed")
    assert tw.estimate > se.estimate and tw.value < se.value  # the fixture reorders the two columns
    costs = [c for f in LAYOUT for c in (int(104.0 * f * BLOCKS), int(104.0 * f * BLOCKS * 1.01),
                                           int(104.0 * f * BLOCKS * 3.55))]
    a = np.asarray(costs, dtype=float) / BLOCKS
    med, sd = np.median(a), np.std(a, ddof=1)
    assert tw.value == pytest.approx(128e6 / a[np.abs(a - med) <= 3 * sd].mean())


def test_platform_averages_are_means_over_three_unequal_toolchains(run):
    df = run["df"]
    avg = analysis.platform_averages(df, "encrypt_speed").set_index("row")
    for cipher in ("serpent", "rc6"):
        rows = [_row(df, cipher, "encrypt_speed", tc=tc) for tc in TOOLCHAINS]
        est = [r.estimate for r in rows]
        a = avg.loc[rows[0].row]
        assert a.value == pytest.approx(np.mean(est)) and abs(np.mean(est) - np.median(est)) > 0.05 * a.value
        assert a.ci_low == pytest.approx(np.mean([r.ci_low for r in rows]))
        assert a.ci_high == pytest.approx(np.mean([r.ci_high for r in rows]))
        assert a.n_toolchains == 3 and a.spread == pytest.approx(max(est) / min(est))
    # portable rows only, the default and the other implementation of Rijndael alike, fastest first
    assert "Rijndael [small]" in avg.index or any("small" in r for r in avg.index)
    assert not any("aesni" in r or "libfast" in r for r in avg.index)
    assert list(avg.value) == sorted(avg.value, reverse=True)


def test_instruction_averages_at_128_blocks_by_default(run):
    df = run["df"]
    ins = analysis.instruction_averages(df).set_index("row")  # the default block count, as the report calls it
    rows = [_row(df, "mars", "insn_encrypt_per_block", tc=tc) for tc in TOOLCHAINS]
    assert all(r.n_blocks == 128 for r in rows)
    r = ins.loc[rows[0].row]
    assert r.insns == pytest.approx(np.mean([x.estimate for x in rows]))
    assert r.value == pytest.approx(np.mean([128 * 1000.0 / x.estimate for x in rows]))


def test_compilers_relative_to_the_best_toolchain(run):
    rel = analysis.compilers_relative(run["df"])
    r = rel.loc[("host", _row(run["df"], "rc6", "encrypt_speed").row)]
    assert r["gcc-O3"] == pytest.approx(1.0)
    # the costs scale by the factors; a best case over processes keeps the scale
    assert r["clang-O3"] == pytest.approx(1 / 1.15, rel=1e-3) and r["icc-like"] == pytest.approx(1 / 1.9, rel=1e-3)


def test_normalised_platform_divides_the_averages_by_the_best(run):
    df = run["df"]
    norm = analysis.normalised_platform(df).set_index("row")
    enc = analysis.platform_averages(df, "encrypt_speed").set_index("row").value
    key = analysis.platform_averages(df, "key_setup_speed").set_index("row").value
    row = _row(df, "magenta", "encrypt_speed").row
    assert norm.loc[row, "enc_norm"] == pytest.approx(enc.max() / enc[row])
    assert norm.loc[row, "key_norm"] == pytest.approx(key.max() / key[row])


def test_memory_table_shows_the_best_speed_over_toolchains(run):
    df = run["df"]
    mem = analysis.memory_table(df).set_index("implementation")
    best = max(_row(df, "rijndael", "encrypt_speed", "small", tc).estimate for tc in TOOLCHAINS)
    assert mem.loc["small", "encrypt_speed"] == pytest.approx(best)


def test_versus_libraries_picks_the_fastest_of_each_side(run):
    df = run["df"]
    rows = {(r["toolchain"], r["kind"]): r for r in versus.versus_libraries(df) if r["blocks"] == 1}
    r = rows[("clang-O3", "portable")]
    assert (r["ours"], r["peer"]) == ("ttable", "libfast")  # not small, not libslow
    ours, peer = _row(df, "rijndael", "encrypt_speed", "ttable", "clang-O3"), \
        _row(df, "rijndael", "encrypt_speed", "libfast", "clang-O3")
    c = stats.compare(peer.per_process, ours.per_process, "min")
    assert r["ratio"] == pytest.approx(c.ratio) and r["ratio"] == pytest.approx(100 / 90, rel=1e-3)
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(c.ci_low), pytest.approx(c.ci_high))
    assert r["verdict"] == "peer faster" and r["ci_low"] > 1 + stats.NOISE_THRESHOLD
    assert ("clang-O3", "hardware") not in rows  # no hardware peer: nothing to compare with


def test_the_1999_ranking_uses_the_headline_estimate(run):
    got = published.comparison(run["df"], [run["meta"]])
    col = got["rank_names"].index("gcc-O3 on host")
    ranked = {r["cipher"]: r["ranks"]["gcc-O3 on host"] for r in got["table"] if r["ranks"]["gcc-O3 on host"]}
    assert col == 0
    ours = sorted(ranked, key=ranked.get)
    by_estimate = sorted(PORTABLE, key=lambda c: PORTABLE[c][0])  # the best case: rijndael, twofish, serpent...
    assert ours == by_estimate
    by_nist = list(run["df"].query("metric == 'encrypt_speed' and toolchain == 'gcc-O3' and implementation in "
                                   "['ref', 'ttable']").sort_values("value", ascending=False).cipher)
    assert by_nist != by_estimate  # the fixture tells the columns apart


def test_top_performers_with_the_default_three_classes(run):
    import jenkspy

    avg = analysis.platform_averages(run["df"], "encrypt_speed")
    top = analysis.top_performers(avg)  # as the report calls it
    values = sorted(avg.value)
    edges = jenkspy.jenks_breaks(values, n_classes=3)[1:-1]
    want = sorted(r for r, v in zip(avg.row, avg.value) if v > edges[-1])
    assert top["platforms"]["host"]["groups"][0] == want and len(top["platforms"]["host"]["groups"]) == 3


def test_compare_defaults_to_the_lab_noise_threshold(run):
    df = run["df"]
    # every toolchain against gcc-O3 as users call it: the default threshold is the lab's 3 %
    t = compare.compare_toolchains(df)
    assert t.threshold == stats.NOISE_THRESHOLD == 0.03
    (r,) = [x for x in t.rows if x.item == "rc6/ref@host clang-O3" and x.metric == "encrypt_speed"]
    assert r.speedup == pytest.approx(1 / 1.15, rel=1e-3) and r.verdict == "slower"


def test_a2_and_a1_read_the_default_key_size(run):
    df = run["df"]
    a2 = tables.a2_table(df, "gcc-O3", "host")  # default key size 128, as the report calls it
    assert a2["rows"], a2
    assert math.isfinite(_row(df, "rc6", "encrypt_per_block").estimate)


def _simd_cell(impl, cls, one, n1024, **kw):
    cyc = []
    for f in LAYOUT:
        d = lambda cost, calls, n=1: [int(round(cost * f * calls * n)) + OVERHEAD]  # noqa: E731
        cyc.append(synth.cycles_process({("null", 1): (1, [OVERHEAD, OVERHEAD + 26]),
                                         ("ekey", 1): (10, d(200.0, 10)), ("dkey", 1): (10, d(300.0, 10)),
                                         ("encrypt", 1024): (2, d(n1024, 2, 1024)),
                                         ("decrypt", 1024): (2, d(n1024, 2, 1024))}))
    return synth.cell("serpent", impl, key_sizes=(128,), impl_class=cls, default=impl == "bitslice",
                      timing=_timing(one, 800.0, 1.0), cycles=cyc, **kw)


def test_simd_rows_against_portable_code_the_libraries_at_1024_blocks_and_gladman(tmp_path):
    # ns per block at one block per call (SIMD code takes its scalar path: the same), ticks per block at 1024
    cells = [_simd_cell("bitslice", "portable", 150.0, 400.0), _simd_cell("avx2", "simd", 151.0, 60.0),
             _simd_cell("sse2", "simd", 150.5, 120.0),
             _simd_cell("botan", "peer", 160.0, 75.0, peer_code="simd"),
             _simd_cell("slowlib", "peer", 300.0, 300.0, peer_code="simd")]
    d = synth.write_run(tmp_path / "results", cells)
    df = results.load(d, tmp_path / "results")
    speed = {(r["kind"], r["blocks"]): r for r in versus.class_speedups(df)}
    many = speed[("simd", 1024)]
    assert (many["impl"], many["portable"]) == ("avx2", "bitslice")  # the fastest of two SIMD implementations
    assert many["speedup"] == pytest.approx(400 / 60, rel=2e-3) and many["ci_low"] <= many["speedup"] <= \
        many["ci_high"] and many["verdict"] == "faster than portable"
    one = speed[("simd", 1)]
    assert one["speedup"] == pytest.approx(150 / 150.5, rel=2e-3) and one["verdict"] == "no difference"
    libs = {r["blocks"]: r for r in versus.versus_libraries(df) if r["kind"] == "simd"}
    assert (libs[1024]["ours"], libs[1024]["peer"]) == ("avx2", "botan")
    assert libs[1024]["ratio"] == pytest.approx(60 / 75, rel=2e-3) and libs[1024]["verdict"] == "ours faster"
    assert libs[1024]["unit"] == "tsc_ticks" and libs[1]["unit"] == "Kbit/s"
    (g,) = analysis.simd_then_and_now(versus.class_speedups(df))
    assert g["cipher"] == "serpent" and g["then"] == pytest.approx(1.36)
    assert [n["impl"] for n in g["now"]] == ["avx2"] and g["now"][0]["speedup"] == pytest.approx(many["speedup"])
    from lab.config import Lab
    from lab.publish import build_report
    from lab.report import errors_in

    html = build_report(Lab(), [d], results_dir=tmp_path / "results", reports_dir=tmp_path / "rep").read_text()
    assert not errors_in(html) and "Gladman 1999 vs today" in html and "avx2 (gcc-O3): 6.7×" in html


def test_nist_statistic_beside_the_headline_in_a1_and_its_order_sentence(run, tmp_path):
    """NIST's statistic is shown under each A.1 figure (its own value, not the headline's) and the platform
    section says how it orders the first four when it disagrees with the headline: here twofish has the
    second best case but falls behind serpent under NIST's mean."""
    df = run["df"]
    speeds = tables.encryption_speeds(df, "gcc-O3", "host")
    order = tables.nist_order(speeds)
    by_value = list(speeds.sort_values("value", ascending=False).row[:4])
    by_best = list(speeds.sort_values("estimate", ascending=False).row[:4])
    assert by_value != by_best  # the fixture separates the two orders
    assert (order["best_top"], order["nist_top"], order["disagree"]) == (by_best, by_value, True)
    assert tables.nist_order(speeds.assign(value=speeds.estimate))["disagree"] is False
    tw = _row(df, "twofish", "encrypt_speed")
    cell = tables.number(tw, "Enc128")
    assert cell["nist_text"] == tables.fmt(tw.value) != cell["text"]
    from lab.config import Lab
    from lab.publish import build_report

    from .html_tables import find

    html = build_report(Lab(), [run["dir"]], results_dir=run["results"], reports_dir=tmp_path).read_text()
    a1 = find(html, "a1", "gcc-O3--host")[0]
    shown = a1.cell("TWOFISH", "Enc128")
    assert shown.text == cell["text"] and shown.nist == cell["nist_text"]
    sentence = f"the headline ranks {' > '.join(by_best)}, NIST's statistic {' > '.join(by_value)}"
    assert sentence in __import__("html").unescape(html)
