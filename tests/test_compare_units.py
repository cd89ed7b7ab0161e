"""lab.compare on synthetic runs with known answers: orientation of ratios, the noise threshold, the geometric
mean, exact instruction counts, toolchains within one run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from lab import compare, results

from . import synth
from .test_values import _cycles, _timing


def _run(tmp, factor: dict[str, float], toolchain: str = "gcc-O3"):
    cells = [synth.cell(c, "ref", toolchain, key_sizes=(128,), timing=_timing(100.0 * f, 400.0),
                        cycles=_cycles(250.0 * f)) for c, f in factor.items()]
    return results.load(synth.write_run(tmp, cells))


def test_ratios_are_speeds_and_the_threshold_decides(tmp_path):
    a = _run(tmp_path / "a", {"rc6": 1.0, "des": 1.0, "idea": 1.0})
    b = _run(tmp_path / "b", {"rc6": 1.25, "des": 0.5, "idea": 1.01})
    t = compare.compare_frames(a, b, "cell", "A", "B", threshold=0.03)
    enc = {r.item.split("/")[0]: r for r in t.rows if r.metric == "encrypt_speed"}
    assert enc["rc6"].speedup == pytest.approx(1 / 1.25, rel=1e-3) and enc["rc6"].verdict == "slower"
    assert enc["des"].speedup == pytest.approx(2.0, rel=1e-3) and enc["des"].verdict == "faster"
    assert enc["idea"].verdict == "no change"  # 1 % is below the 3 % noise threshold
    cyc = {r.item.split("/")[0]: r for r in t.rows if r.metric == "encrypt_per_block"}
    assert cyc["rc6"].speedup == pytest.approx(1 / 1.25, rel=1e-2)  # a cost: oriented as a speed (A/B)
    assert cyc["des"].verdict == "faster"
    for r in t.rows:
        assert r.ci_low <= r.speedup <= r.ci_high
    want = math.exp(sum(math.log(r.speedup) for r in t.rows) / len(t.rows))
    assert t.geomean == pytest.approx(want)
    counts = t.counts()
    assert counts["faster"] + counts["slower"] + counts["no change"] == len(t.rows) and counts["slower"] > 0
    text = compare.format_table(t)
    assert "slower" in text and f"{t.geomean:.3f}" in text


def test_toolchains_of_one_run_against_the_baseline(tmp_path):
    cells = [synth.cell("rc6", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0),
                        cycles=_cycles(250.0)),
             synth.cell("rc6", "ref", "clang-O3", key_sizes=(128,), timing=_timing(80.0, 400.0),
                        cycles=_cycles(200.0))]
    df = results.load(synth.write_run(tmp_path, cells))
    t = compare.compare_toolchains(df)
    assert t.a == "gcc-O3"
    enc = [r for r in t.rows if r.metric == "encrypt_speed"]
    assert enc and enc[0].item == "rc6/ref@host clang-O3" and enc[0].speedup == pytest.approx(1.25, rel=1e-3)
    assert enc[0].verdict == "faster"


def test_exact_counts_compare_without_a_test(tmp_path):
    ops = [{"key_size": 128, "op": "null", "n": 1, "calls": 1, "counter": "qemu-insn-region",
            "unit": "guest_insns", "deltas": [10]},
           {"key_size": 128, "op": "encrypt", "n": 128, "calls": 1, "counter": "qemu-insn-region",
            "unit": "guest_insns", "deltas": [128 * 300 + 10]}]
    a = results.load(synth.write_run(tmp_path / "a", [synth.cell("rc6", "ref", key_sizes=(128,), icount=ops)]))
    ops[1] = {**ops[1], "deltas": [128 * 600 + 10]}
    b = results.load(synth.write_run(tmp_path / "b", [synth.cell("rc6", "ref", key_sizes=(128,), icount=ops)]))
    t = compare.compare_frames(a, b, "cell", "A", "B", metrics=["insn_encrypt_per_block"])
    (r,) = t.rows
    assert r.speedup == pytest.approx(0.5) and r.verdict == "slower" and r.a == 300 and r.b == 600


def _expected(a, b, threshold, metrics=None):
    """compare_frames's rows computed here from the definitions, one per quantity both runs measured."""
    import numpy as np

    from lab import stats

    def sel(df):
        df = df[df.metric.isin(metrics or compare.DEFAULT_METRICS) & (df.status == "ok") & df.estimate.notna()]
        return df if metrics else df[~df.metric.str.endswith("per_block") | (df.n_blocks == 128)]

    out = {}
    for _, x in sel(a).iterrows():
        y = sel(b)
        y = y[(y.cell == x.cell) & (y.metric == x.metric) & (y.key_size == x.key_size)
              & ((y.n_blocks == x.n_blocks) | (y.n_blocks.isna() & np.isnan(x.n_blocks)))]
        if y.empty:
            continue
        y = y.iloc[0]
        c = stats.compare(list(x.per_process), list(y.per_process), x.estimator, threshold=threshold)
        out[(x.cell, x.metric, x.key_size, 0 if np.isnan(x.n_blocks) else x.n_blocks)] = (x, y, c)
    return out


def test_every_row_of_a_comparison_from_its_definition(tmp_path):
    a = _run(tmp_path / "a", {"rc6": 1.0, "des": 1.0, "idea": 1.0, "mars": 1.0})
    b = _run(tmp_path / "b", {"rc6": 1.25, "des": 0.5, "idea": 1.01, "mars": 0.9})
    b.loc[b.cell.str.startswith("mars/"), "status"] = "crashed"  # a failed cell is not compared
    b.loc[(b.cell.str.startswith("idea/")) & (b.metric == "ekey"), "estimate"] = float("nan")  # nor a missing value
    t = compare.compare_frames(a, b, "cell", "A", "B", threshold=0.05)
    assert (t.a, t.b, t.threshold) == ("A", "B", 0.05)
    want = _expected(a, b, 0.05)
    def nb(r):
        return 0 if r.n_blocks is None or math.isnan(r.n_blocks) else r.n_blocks

    keys = [(r.item, r.metric, r.key_size, nb(r)) for r in t.rows]
    assert keys == sorted(want) and len(keys) == 3 * 7 - 1  # 3 cells x (3 speeds, ekey, dkey, Enc/Dec-128)
    for r in t.rows:
        x, y, c = want[(r.item, r.metric, r.key_size, nb(r))]
        assert (r.unit, r.a, r.b) == (x.unit, x.estimate, y.estimate)
        assert r.speedup == pytest.approx(1 / c.ratio, rel=1e-12)
        assert (r.ci_low, r.ci_high) == (pytest.approx(1 / c.ci_high, rel=1e-12), pytest.approx(1 / c.ci_low, rel=1e-12))
        assert (r.p_value, r.verdict) == (c.p_value, c.verdict)
        # a speed up means a larger speed, or a smaller cost
        orient = y.estimate / x.estimate if r.metric.endswith("speed") else x.estimate / y.estimate
        assert r.speedup == pytest.approx(orient, rel=1e-9)
    verdicts = {(r.item.split("/")[0], r.metric): r.verdict for r in t.rows}
    assert verdicts[("rc6", "encrypt_speed")] == "slower" and verdicts[("des", "encrypt_per_block")] == "faster"
    assert verdicts[("idea", "encrypt_speed")] == "no change"
    # asked for by name, every block count of a per-block cost is compared
    t2 = compare.compare_frames(a, b, "cell", "A", "B", metrics=["encrypt_per_block"])
    assert sorted({r.n_blocks for r in t2.rows}) == [1.0, 16.0, 128.0] and len(t2.rows) == 3 * 3


def test_a_value_without_samples_compares_exactly_against_the_threshold(tmp_path):
    a = _run(tmp_path / "a", {"rc6": 1.0})
    b = _run(tmp_path / "b", {"rc6": 1.0})
    enc = (b.metric == "encrypt_speed")
    b.loc[enc, "estimate"] = a.loc[a.metric == "encrypt_speed", "estimate"].iloc[0] * 1.25
    b.loc[enc, "per_process"] = None  # e.g. a version-1 run: no per-process values
    dec = (b.metric == "decrypt_speed")
    b.loc[dec, "estimate"] = a.loc[a.metric == "decrypt_speed", "estimate"].iloc[0] * 0.75
    b.loc[dec, "per_process"] = None
    rows = {r.metric: r for r in compare.compare_frames(a, b, "cell", "A", "B", threshold=0.25).rows}
    e, d = rows["encrypt_speed"], rows["decrypt_speed"]
    assert (e.speedup, e.ci_low, e.ci_high, e.p_value, e.verdict) == (1.25, 1.25, 1.25, 1.0, "no change")
    assert (d.speedup, d.p_value, d.verdict) == (0.75, 1.0, "no change")
    rows = {r.metric: r for r in compare.compare_frames(a, b, "cell", "A", "B", threshold=0.2).rows}
    assert (rows["encrypt_speed"].verdict, rows["encrypt_speed"].p_value) == ("faster", 0.0)
    assert (rows["decrypt_speed"].verdict, rows["decrypt_speed"].p_value) == ("slower", 0.0)
    assert rows["encrypt_speed"].unit == "Kbit/s"


def test_toolchains_baseline_names_and_every_other_toolchain(tmp_path):
    cells = [synth.cell("rc6", "ref", tc, key_sizes=(128,), timing=_timing(100.0 * f, 400.0), cycles=_cycles(250.0 * f))
             for tc, f in (("gcc-O3", 1.0), ("clang-O3", 0.8), ("gcc-O2", 1.25))]
    df = results.load(synth.write_run(tmp_path, cells))
    t = compare.compare_toolchains(df, threshold=0.04)
    assert (t.a, t.b, t.threshold) == ("gcc-O3", "other toolchains", 0.04)
    enc = {r.item: r for r in t.rows if r.metric == "encrypt_speed"}
    assert set(enc) == {"rc6/ref@host clang-O3", "rc6/ref@host gcc-O2"}
    assert enc["rc6/ref@host clang-O3"].speedup == pytest.approx(1.25, rel=1e-3)
    assert enc["rc6/ref@host gcc-O2"].speedup == pytest.approx(0.8, rel=1e-3)
    assert len(t.rows) == 2 * 7
    t = compare.compare_toolchains(df, baseline="clang-O3")
    enc = {r.item: r for r in t.rows if r.metric == "encrypt_speed"}
    assert t.a == "clang-O3" and set(enc) == {"rc6/ref@host gcc-O3", "rc6/ref@host gcc-O2"}
    assert enc["rc6/ref@host gcc-O3"].speedup == pytest.approx(0.8, rel=1e-3)
    # without gcc-O3 the first toolchain by name is the baseline
    t = compare.compare_toolchains(df[df.toolchain != "gcc-O3"])
    assert t.a == "clang-O3" and {r.item for r in t.rows} == {"rc6/ref@host gcc-O2"}
    with pytest.raises(compare.UserError):
        compare.compare_toolchains(df.iloc[0:0])


def test_counts_and_geomean_of_a_table():
    rows = [compare.Row("x", "m", 128, None, "u", 1, 1, s, s, s, 1.0, v)
            for s, v in ((2.0, "faster"), (0.5, "slower"), (1.0, "no change"), (1.0, "no change"))]
    t = compare.Table("A", "B", 0.03, rows)
    assert t.counts() == {"faster": 1, "slower": 1, "no change": 2}
    assert t.geomean == pytest.approx(1.0)
    t.rows.append(compare.Row("y", "m", 128, None, "u", 1, 1, 8.0, 8, 8, 0.0, "faster"))
    assert t.geomean == pytest.approx(8 ** 0.2)
    t.rows.append(compare.Row("z", "m", 128, None, "u", 1, 1, math.nan, 0, 0, 1.0, "no change"))
    assert t.geomean == pytest.approx(8 ** 0.2)  # undefined ratios are left out
    assert math.isnan(compare.Table("A", "B", 0.03).geomean)


CIPHERS8 = ("rc6", "des", "idea", "mars", "serpent", "twofish", "e2", "cast256")


def _pair(tmp, changed: dict[str, float], machine: float = 1.02):
    """Run A, and run B on a machine `machine` times slower whose `changed` ciphers also cost that much more
    (their programs differ: new code); every figure's within-run part 0.5 %."""
    a = _run(tmp / "a", {c: 1.0 for c in CIPHERS8})
    b = _run(tmp / "b", {c: machine * changed.get(c, 1.0) for c in CIPHERS8})
    def trimmed(d):  # run-to-run intervals: within 0.5 %, run noise 1 % (the prior)
        t = d.estimator == "min"
        h = t * 0.0 + (0.005 ** 2 + (1.96 * 0.01) ** 2) ** 0.5
        return d.assign(estimator=d.estimator.where(~t, "trimmed"), within=0.005, confidence=0.95,
                        ci_low=d.estimate.where(~t, d.estimate * (1 - h)),
                        ci_high=d.estimate.where(~t, d.estimate * (1 + h)))

    a = trimmed(a.assign(programs=a.cell))
    b = trimmed(b.assign(programs=b.cell.where(~b.cipher.isin(list(changed)), b.cell + "-new")))
    return a, b


def test_the_machines_shift_between_two_runs_comes_from_the_unchanged_cells(tmp_path):
    """Two runs of one machine: the cells measured with the same programs in both measure the machine's shift,
    and the changed cell is judged relative to it on the within-run parts (a 4 % slowdown under a machine 2 %
    slower: slower; the unchanged cells, every one 2 % slower: no change)."""
    a, b = _pair(tmp_path, {"rc6": 1.04})
    t = compare.compare_frames(a, b, "cell", "A", "B")
    assert t.shift is not None and t.shift.cells == 7 and math.exp(t.shift.log) == pytest.approx(1.02, rel=1e-3)
    timed = [r for r in t.rows if r.metric in ("encrypt_speed", "encrypt_per_block")]
    assert {r.verdict for r in timed if r.item.startswith("rc6/")} == {"slower"}
    assert {r.verdict for r in timed if not r.item.startswith("rc6/")} == {"no change"}
    rc6 = next(r for r in timed if r.item.startswith("rc6/") and r.metric == "encrypt_speed")
    assert rc6.speedup == pytest.approx(1 / 1.04, rel=1e-3)  # the code's own change, the machine's taken out
    assert rc6.ci_low <= rc6.speedup <= rc6.ci_high
    assert "B's machine 2.00 % slower" in compare.format_table(t) and "from the 7 cells" in compare.format_table(t)


def test_no_shift_without_enough_unchanged_cells_of_one_machine(tmp_path):
    a, b = _pair(tmp_path, {"rc6": 1.04, "des": 1.04, "idea": 1.04, "mars": 1.04})  # 4 unchanged: too few
    assert compare.machine_shift(a, b) is None
    a, b = _pair(tmp_path / "5", {"rc6": 1.04, "des": 1.04, "idea": 1.04})  # 5 unchanged: enough
    assert compare.machine_shift(a, b).cells == compare.MIN_SHIFT_CELLS == 5
    a, b = _pair(tmp_path / "2", {"rc6": 1.04})
    assert compare.machine_shift(a, b.assign(machine="other")) is None  # two machines: not a shift
    assert compare.machine_shift(a.drop(columns=["programs"]), b) is None  # runs before the programs hash
    assert compare.machine_shift(a.assign(programs=None), b.assign(programs=None)) is None
    t = compare.compare_frames(a, b.assign(machine="other"), "cell", "A", "B")
    assert t.shift is None and "machine" not in compare.format_table(t).split("\n")[-1]
    # the judge itself: with a shift, B's figure on A's machine and the shift's uncertainty in its interval
    s = compare.Shift(math.log(1.02), 0.001, 7)
    row = a[a.cell.str.startswith("des/") & (a.metric == "encrypt_speed")].iloc[0]  # unchanged
    brow = b[(b.cell == row.cell) & (b.metric == "encrypt_speed") & (b.key_size == row.key_size)].iloc[0]
    wide = compare.judge(compare.side(row), compare.side(brow), True, shift=compare.Shift(s.log, 0.02, 7))
    narrow = compare.judge(compare.side(row), compare.side(brow), True, shift=s)
    assert narrow.speedup == pytest.approx(1.0, rel=1e-3) and narrow.verdict == "no change"
    assert (wide.ci_high - wide.ci_low) > 3 * (narrow.ci_high - narrow.ci_low)


def test_the_reports_comparison_carries_the_machines_shift(tmp_path, monkeypatch):
    from jinja2 import Environment

    from lab import findings
    from lab.report import __file__ as report_py

    a, b = _pair(tmp_path, {"rc6": 1.04})
    monkeypatch.setattr(findings.results, "load", lambda run, results_dir: a)
    c = findings.comparison("A", b, tmp_path)
    assert c["shift"]["cells"] == 7 and c["shift"]["words"] == "2.00 % slower"
    template = Path(report_py).parent / "templates" / "index.html.j2"
    line = next(ln for ln in template.read_text().splitlines()
                if "comparison.shift" in ln)
    html = Environment().from_string(line).render(comparison=c)
    assert "B's machine 2.00 % slower than A's" in html and "7 cells were measured with the same programs" in html
    assert "machine" not in Environment().from_string(line).render(comparison={**c, "shift": None}).split("geometric")[0]


def test_the_shift_is_the_median_cell_and_its_error_that_of_a_median(tmp_path):
    """Cells whose machine moved unevenly (1.00 to 1.20): the shift is the median cell's, not the mean; its standard
    error 1.2533 x the cells' robust sd (1.4826 x MAD) / sqrt(cells); and the judge widens B's within-run part by
    that error at the figure's own confidence before the verdict's z combines both sides."""
    from lab import stats
    from lab.metrics import higher_is_better

    a, _ = _pair(tmp_path, {})
    f = dict(zip(CIPHERS8, (1.00, 1.01, 1.02, 1.02, 1.03, 1.05, 1.10, 1.20)))
    by_cell = a.cipher.map(f).astype(float)
    b = a.assign(estimate=a.estimate.where([higher_is_better(m) for m in a.metric], a.estimate * by_cell)
                 .where([not higher_is_better(m) for m in a.metric], a.estimate / by_cell))
    s = compare.machine_shift(a, b)
    logs = np.log(sorted(f.values()))
    med = (logs[3] + logs[4]) / 2
    assert s.cells == 8 and s.log == pytest.approx(med, rel=1e-9)  # the mean would be 0.0545, not 0.0246
    mad = np.median(np.abs(logs - med))
    assert s.sd == pytest.approx(1.2533 * 1.4826 * mad / math.sqrt(8), rel=1e-9)
    row = a[a.cell.str.startswith("des/") & (a.metric == "encrypt_speed")].iloc[0]
    j = compare.judge(compare.side(row), compare.side(row), True, shift=compare.Shift(0.0, 0.02, 8))
    z95, z99 = stats.z_value(0.95), stats.z_value(stats.VERDICT_CONFIDENCE)
    sa, sb = 0.005 / z95, math.hypot(0.005, z95 * 0.02) / z95
    assert j.speedup == pytest.approx(1.0) and j.ci_high == pytest.approx(math.exp(z99 * math.hypot(sa, sb)), rel=1e-9)
