"""The edges of the numbers: boundaries, defaults, the rarer branches of the statistics, the loader, the
comparisons and the report tables, each checked against a value computed here from its definition.  Written
from the mutants that survived test_values (docs/testing.md): each test names what it pins."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from lab import compare, quantities, results, stats, versus
from lab.report import analysis, published, tables

from . import synth
from .test_values import _cycles, _timing, _timing_keys


def _load(tmp: Path, cells: list[dict], **kw) -> pd.DataFrame:
    return results.load(synth.write_run(tmp, cells, **kw).name, tmp)


# ------------------------------------------------------------------ statistics
def test_estimate_defaults_and_the_constant_shortcut_only_for_constant_data():
    xs = [3.0, 1.0, 2.0, 5.0]
    assert stats.estimate(xs) == stats.estimate(xs, "min", 0.95) != stats.estimate(xs, "median", 0.95)
    # the best case of two: a resample without the 1 has chance 1/4, so the upper end is the 2
    assert stats.estimate([2.0, 1.0]) == stats.Estimate(1.0, 1.0, 2.0, "min", 2, 0.95)
    # one value differs from all the others: not constant, the interval reaches it
    e = stats.estimate([1.0, 2.0, 2.0, 2.0, 2.0, 2.0], "median")
    assert (e.estimate, e.ci_low, e.ci_high) == (2.0, 1.0, 2.0)
    e = stats.estimate([1.0, 1.0, 1.0, 1.0, 1.0, 2.0], "median")
    assert (e.estimate, e.ci_low, e.ci_high) == (1.0, 1.0, 2.0)
    e = stats.estimate([1.0, 2.0, 3.0], "median")  # too few for a 95 % interval of the median: NaN, not inf
    assert e.estimate == 2.0 and math.isnan(e.ci_low) and math.isnan(e.ci_high) and e.precision == math.inf
    assert stats.estimate([4.0] * 5, "median") == stats.Estimate(4.0, 4.0, 4.0, "median", 5, 0.95)


def test_inverting_an_estimate_swaps_the_ends_and_keeps_its_provenance():
    e = stats.Estimate(0.5, 0.25, 1.0, "median", 7, 0.9).inverted(2.0)
    assert e == stats.Estimate(4.0, 2.0, 8.0, "median", 7, 0.9)  # costs below 1 too
    z = stats.Estimate(0.0, 0.0, 1.0, "min", 3, 0.95).inverted(1.0)
    assert (z.estimate, z.ci_low, z.ci_high) == (math.inf, 1.0, math.inf)  # a zero cost: an infinite rate
    n = stats.Estimate(2.0, math.nan, math.nan, "min", 1, 0.95).inverted(4.0)
    assert n.estimate == 2.0 and math.isnan(n.ci_low) and math.isnan(n.ci_high)


def test_compare_with_the_median_and_its_own_threshold():
    a = [10.0, 10.0, 10.0, 20.0, 20.0, 20.0, 20.0]
    b = [10.0, 10.0, 10.0, 22.0, 22.0, 22.0, 22.0]
    assert stats.compare(a, b).ratio == 1.0  # the best cases agree
    c = stats.compare(a, b, "median", threshold=0.05)
    assert c.ratio == pytest.approx(1.1) and c.verdict == "no change"  # not significant with 7 against 7
    d = stats.compare([20.0 + i / 10 for i in range(8)], [22.0 + i / 10 for i in range(8)], "median",
                      threshold=0.05)
    assert d.ratio == pytest.approx(22.35 / 20.35) and d.verdict == "slower" and d.p_value < 0.05
    assert stats.compare([20.0 + i / 10 for i in range(8)], [22.0 + i / 10 for i in range(8)], "median",
                         threshold=0.2).verdict == "no change"  # 10 % is inside a 20 % noise threshold


# ------------------------------------------------------------------ raw samples -> quantities
def _op(op, deltas, n=1, calls=1, ks=128):
    return {"key_size": ks, "op": op, "n": n, "calls": calls, "counter": "c", "unit": "u", "deltas": deltas}


def test_below_resolution_is_marked_by_the_raw_counts():
    # exact counts (step 1): a cost equal to the empty call's is below resolution, one instruction more is not
    got = {q.metric: q for q in quantities.cycle_quantities(
        [[_op("null", [0, 0]), _op("ekey", [7, 9]), _op("dkey", [0]), _op("init", [1])]], prefix="insn_")}
    assert got["insn_null_overhead"].below_resolution is False  # the overhead itself is never a bound
    assert got["insn_dkey"].below_resolution is True
    assert got["insn_init"].below_resolution is False and got["insn_init"].per_process == [1.0]
    got = {q.metric: q for q in quantities.cycle_quantities(
        [[_op("null", [10]), _op("ekey", [10, 12]), _op("dkey", [11])]], prefix="insn_")}
    assert (got["insn_ekey"].below_resolution, got["insn_dkey"].below_resolution) == (True, False)
    # a counter of 26 ticks, the median estimator: one process at the overhead marks the quantity, even though
    # the others are well above it
    procs = [[_op("null", [26, 52]), _op("ekey", [26 + 26 * k, 52 + 26 * k])] for k in (0, 4, 5)]
    (null, ekey) = sorted(quantities.cycle_quantities(procs), key=lambda q: q.metric != "null_overhead")
    assert ekey.per_process == [0.0, 104.0, 130.0] and ekey.below_resolution is True and ekey.resolution == 26
    row = results.quantity_row({}, ekey, "median", 0.95, 0.02)
    assert row["below_resolution"] is True and row["bound"] == 26 and math.isnan(row["estimate"])


def test_cycle_costs_without_an_empty_call_and_per_call_ops_ignore_n():
    # no null measured in this process: nothing to subtract
    (q,) = quantities.cycle_quantities([[_op("ekey", [260, 520], calls=2)]])
    assert q.per_process == [130.0] and q.samples == [130.0, 260.0] and q.n_blocks is None
    # n only counts blocks for encrypt/decrypt; ekey of two processes that printed n 1 and 4 is one quantity
    qs = quantities.cycle_quantities([[_op("ekey", [100], n=1)], [_op("ekey", [200], n=4)]], prefix="insn_")
    assert [(q.metric, q.n_blocks, q.per_process) for q in qs] == [("insn_ekey", None, [100.0, 200.0])]
    (e,) = quantities.cycle_quantities([[_op("encrypt", [800], n=4, calls=2)]], prefix="insn_")
    assert (e.n_blocks, e.per_process, e.resolution) == (4, [100.0], 1 / 8)


# ------------------------------------------------------------------ the loader
def test_every_row_has_every_column_and_the_facts_say_what_they_are(tmp_path):
    c = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0), cycles=_cycles(250.0),
                   ks_bytes=176, table_bytes=0, code=2000,
                   icount=[_op("null", [10]) | {"counter": "qemu-insn-region", "unit": "guest_insns"},
                           _op("encrypt", [128 * 300 + 10], n=128) | {"counter": "qemu-insn-region",
                                                                       "unit": "guest_insns"}])
    c["build"]["code_bytes"] = {"rodata": 64, "data": 0, "bss": 0}  # no text section reported
    c["kat"]["failed"], c["kat"]["passed"] = 2, 8
    df = _load(tmp_path, [c])
    facts = df[df.estimator == "fact"].set_index("metric")
    assert facts.unit.to_dict() == {"table_bytes": "bytes", "key_schedule_bytes": "bytes", "code_bytes": "bytes",
                                    "kat_passed": "records", "kat_failed": "records"}
    assert facts.estimate.to_dict() == {"table_bytes": 0, "key_schedule_bytes": 176, "code_bytes": 64,
                                        "kat_passed": 8, "kat_failed": 2}
    for col in ("confidence", "processes", "precision_target", "bound", "counter", "per_process", "key_size",
                "n_blocks"):
        assert facts[col].isna().all(), col  # a fact has no processes, target, bound, counter or key size
    assert (facts.precision_met.all(), facts.below_resolution.any(), set(facts["n"]), set(facts["std"])) == \
        (True, False, {1}, {0.0})
    enc = df[df.metric == "encrypt_speed"].iloc[0]
    assert (enc.estimator, enc.confidence, enc.precision_target, enc.processes) == ("min", 0.95, 0.02, 5)
    insn = df[df.metric == "insn_encrypt_per_block"].iloc[0]
    assert (insn.estimator, insn.estimate, insn.processes, insn.counter) == ("exact", 300.0, 1, "qemu-insn-region")
    assert pd.isna(insn.precision_target) and pd.isna(insn.confidence)
    meta, (cell,) = results.read_run(synth.write_run(tmp_path / "b", [c]))
    rows = results.cell_rows(meta, cell)
    for r in rows:  # the row name is the loader's; a fact has no key size or block count
        assert set(r) == set(results.COLUMNS) - {"row"} - ({"key_size", "n_blocks"} if r["estimator"] == "fact"
                                                          else set()), r["metric"]
    assert len(rows) == len(df)


def test_the_default_results_folder_and_a_toolchain_the_run_does_not_describe(tmp_path, monkeypatch):
    failed = synth.cell("des", "ref", "icc-like", status="build_failed", reason="no icx", key_sizes=(64,),
                        block_bits=64)
    failed["build"] = None
    ok = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0))
    run = synth.write_run(tmp_path / "results", [ok, failed], toolchains={"gcc-O3": synth.toolchain_facts("gcc")})
    monkeypatch.chdir(tmp_path)
    df, cells = results.load(run.name), results.load_cells(run.name)  # ./results, as the CLI uses it
    assert set(df.cipher) == {"rc6", "des"} and len(cells) == 2
    des = cells.set_index("cipher").loc["des"]
    assert pd.isna(des.compiler_version) and des.reason == "no icx"  # no build, no facts of icc-like: unknown
    assert results.load_cells(synth.write_run(tmp_path / "e", []).name, tmp_path / "e").empty


def test_precision_met_at_the_target_exactly():
    q = quantities.Quantity("ekey", 128, None, "tsc_ticks", "c", per_process=[5.0] * 4, samples=[5.0] * 4)
    assert results.quantity_row({}, q, "median", 0.95, 0.0)["precision_met"] is True  # 0 reached, 0 asked
    r = results.quantity_row({}, q, "min", 0.8, 0.01)
    varied = quantities.Quantity("ekey", 128, None, "tsc_ticks", "c", per_process=[5.0, 6.0, 7.0, 5.5, 8.0, 9.0],
                                 samples=[5.0, 6.0, 7.0, 5.5, 8.0, 9.0])
    e80 = stats.estimate(varied.per_process, "min", 0.8)
    r = results.quantity_row({}, varied, "min", 0.8, 0.01)
    assert (r["ci_low"], r["ci_high"], r["precision"]) == (e80.ci_low, e80.ci_high, e80.precision)
    assert (r["ci_low"], r["ci_high"]) != (stats.estimate(varied.per_process).ci_low,
                                           stats.estimate(varied.per_process).ci_high)  # 80 %, not the default


# ------------------------------------------------------------------ comparisons
def _row(cell, metric, est, pp, estimator="min", n_blocks=math.nan, ks=128.0):
    return {"cell": cell, "metric": metric, "key_size": ks, "n_blocks": n_blocks, "unit": "u", "estimate": est,
            "estimator": estimator, "per_process": pp, "status": "ok"}


def test_comparison_rows_exact_on_either_side_sorted_by_blocks():
    a = pd.DataFrame([_row("c", "encrypt_per_block", 100.0, [100.0, 101.0], "exact", n) for n in (128.0, 16.0, 1.0)]
                     + [_row("c", "ekey", 50.0, [50.0, 52.0], "min")])
    b = pd.DataFrame([_row("c", "encrypt_per_block", 50.0, [50.0, 51.0], "min", n) for n in (1.0, 16.0, 128.0)]
                     + [_row("c", "ekey", 100.0, [100.0, 101.0], "exact")])
    rows = compare.compare_rows(a, b, "cell", 0.03, ["encrypt_per_block", "ekey"])
    assert [(r.metric, r.key_size, r.n_blocks) for r in rows] == [
        ("ekey", 128.0, rows[0].n_blocks), ("encrypt_per_block", 128.0, 1.0), ("encrypt_per_block", 128.0, 16.0),
        ("encrypt_per_block", 128.0, 128.0)] and math.isnan(rows[0].n_blocks)
    for r in rows:  # one side an exact count: compared exactly, no test
        assert (r.ci_low, r.ci_high, r.p_value) == (r.speedup, r.speedup, 0.0)
    assert [r.speedup for r in rows] == [0.5, 2.0, 2.0, 2.0] and [r.verdict for r in rows] == [
        "slower", "faster", "faster", "faster"]
    t = compare.compare_frames(a, b, "cell", "A", "B", 0.03, ["ekey"])
    assert (t.a, t.b, t.threshold, len(t.rows)) == ("A", "B", 0.03, 1)


def test_a_median_run_is_compared_by_its_medians(tmp_path):
    def proc(x):
        return synth.timing_process({128: {"encrypt": (1, [int(x), int(x) + 1])}})
    a = _load(tmp_path / "a", [synth.cell("rc6", "ref", key_sizes=(128,), estimator="median",
                                          timing=[proc(x) for x in (100, 100, 100, 150, 150, 150, 150)])])
    b = _load(tmp_path / "b", [synth.cell("rc6", "ref", key_sizes=(128,), estimator="median",
                                          timing=[proc(x) for x in (100, 100, 100, 100, 100, 100, 100)])])
    (r,) = compare.compare_frames(a, b, "cell", "A", "B", metrics=["encrypt_speed"]).rows
    assert r.speedup == pytest.approx(1.5)  # medians 150 and 100 ns; the best cases would agree (1.0)
    (r,) = compare.compare_frames(a, b, "cell", "A", "B", threshold=0.6, metrics=["encrypt_speed"]).rows
    assert r.verdict == "no change"  # the threshold asked for, not the default


def test_toolchains_compared_on_the_metrics_asked_for_and_an_empty_run_says_so(tmp_path):
    cells = [synth.cell("rc6", "ref", tc, key_sizes=(128,), timing=_timing(100.0 * f, 400.0), cycles=_cycles(250.0))
             for tc, f in (("gcc-O3", 1.0), ("clang-O3", 0.8))]
    df = _load(tmp_path, cells)
    t = compare.compare_toolchains(df, metrics=["key_setup_speed"])
    assert [(r.item, r.metric) for r in t.rows] == [("rc6/ref@host clang-O3", "key_setup_speed")]
    with pytest.raises(compare.UserError, match="^the run has no measured cells to compare$"):
        compare.compare_toolchains(df.iloc[0:0])


# ------------------------------------------------------------------ key sizes
def _two_keys(tmp: Path) -> pd.DataFrame:
    """A cipher measured at 64- and 128-bit keys (the table's size is not its smallest), one at 128 and 256."""
    ops = lambda ks, per: [_op("null", [10], ks=ks) | {"counter": "qemu-insn-region", "unit": "guest_insns"},  # noqa
                           _op("encrypt", [128 * per + 10], n=128, ks=ks) | {"counter": "qemu-insn-region",
                                                                             "unit": "guest_insns"}]
    cells = [synth.cell("rc5", "ref", key_sizes=(64, 128), timing=_timing_keys({64: 50.0, 128: 100.0}),
                        icount=ops(64, 300) + ops(128, 400)),
             synth.cell("rc6", "ref", key_sizes=(128, 256), timing=_timing_keys({128: 200.0, 256: 400.0}),
                        icount=ops(128, 500) + ops(256, 600))]
    return _load(tmp, cells)


def test_every_table_picks_the_key_size_asked_for(tmp_path):
    df = _two_keys(tmp_path)
    speeds = tables.encryption_speeds(df, "gcc-O3", "host")
    assert dict(zip(speeds.cipher, speeds.key_size)) == {"rc5": 128, "rc6": 128}
    speeds = tables.encryption_speeds(df, "gcc-O3", "host", key_size=256)
    assert dict(zip(speeds.cipher, speeds.key_size)) == {"rc5": 64, "rc6": 256}  # rc5 has no 256: its smallest
    norm = tables.normalised_key_plus_encryption(df, "gcc-O3", "host")
    assert dict(zip(norm.cipher, norm.key_size)) == {"rc5": 128, "rc6": 128}
    norm = tables.normalised_key_plus_encryption(df, "gcc-O3", "host", key_size=256)
    assert dict(zip(norm.cipher, norm.key_size)) == {"rc5": 64, "rc6": 256}
    it = tables.instructions_table(df)["toolchains"][0]["rows"]
    assert [(r["row"], r["values"]["host"]) for r in it] == [("RC5", 400.0), ("RC6", 500.0)]
    it = tables.instructions_table(df, key_size=256)["toolchains"][0]["rows"]
    assert [(r["row"], r["values"]["host"]) for r in it] == [("RC5", 300.0), ("RC6", 600.0)]
    pa = analysis.platform_averages(df, "encrypt_speed").set_index("cipher")
    assert pa.value.to_dict() == pytest.approx({"rc5": 1.28e6, "rc6": 0.64e6}, rel=1e-3)  # the 128-bit key
    assert published._ours(df, "encrypt_speed").set_index("cipher").key_size.to_dict() == {"rc5": 128,
                                                                                         "rc6": 128}


def test_the_instruction_table_orders_targets_and_takes_the_speed_of_its_key(tmp_path):
    ins = {"counter": "qemu-insn-region", "unit": "guest_insns"}
    ops = lambda per, ks=128: [_op("null", [10], ks=ks) | ins, _op("encrypt", [128 * per + 10], n=128, ks=ks) | ins]  # noqa
    cells = [synth.cell("rc6", "ref", target=t, emulated=t not in ("host", "x86_64"), key_sizes=(128,),
                        timing=_timing(100.0, 400.0), icount=ops(p))
             for t, p in (("sparc64", 320), ("mips64", 330), ("x86_64", 310), ("host", 300))]
    cells.append(synth.cell("idea", "ref", key_sizes=(128, 256), timing=_timing_keys({256: 50.0, 128: 200.0}),
                            icount=ops(100)))
    broken = synth.cell("idea", "ref", "gcc-O3", target="x86_64", key_sizes=(128,), timing=_timing(1.0, 1.0),
                        status="crashed", reason="SIGSEGV", icount=ops(100))
    cells.append(broken)
    df = _load(tmp_path, cells)
    (gcc,) = tables.instructions_table(df)["toolchains"]
    assert gcc["targets"] == ["host", "x86_64", "mips64", "sparc64"]  # hardware first, then by name
    assert gcc["speed_target"] == "host"  # the same order, whatever order the cells ran in
    rows = {r["row"]: r for r in gcc["rows"]}
    assert [r["row"] for r in gcc["rows"]] == ["IDEA", "RC6"]  # by the first target's count
    assert rows["IDEA"]["speed"] == pytest.approx(128 / 200 * 1e6, rel=1e-3)  # its 128-bit key, not 256
    assert rows["IDEA"]["values"]["x86_64"] is None  # the crashed cell shows nothing
    assert rows["RC6"]["speed"] == pytest.approx(1.28e6, rel=1e-3)  # encryption, not decryption
    board = synth.cell("rc6", "ref", target="arm-board", key_sizes=(128,), timing=_timing(50.0, 400.0),
                       icount=ops(290))  # a second machine of real hardware (an SSH host)
    (gcc,) = tables.instructions_table(_load(tmp_path / "b", cells + [board]))["toolchains"]
    assert gcc["targets"] == ["host", "x86_64", "arm-board", "mips64", "sparc64"] and gcc["speed_target"] == "host"
    des = _load(tmp_path / "d", [synth.cell("des", "ref", key_sizes=(64,), block_bits=64,
                                            timing=_timing_keys({64: 50.0}), icount=ops(90, 64))])
    (only,) = tables.instructions_table(des)["toolchains"][0]["rows"]
    assert only["speed"] == pytest.approx(64 / 50 * 1e6, rel=1e-3)  # no 128-bit key: its own


# ------------------------------------------------------------------ A.1 and A.2
def test_a1_rows_name_their_class(tmp_path):
    cells = [synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0)),
             synth.cell("rc6", "hw", impl_class="hardware", default=False, key_sizes=(128,),
                        timing=_timing(10.0, 400.0)),
             synth.cell("rc6", "ref", "clang-O3", target="sparc64", emulated=True, key_sizes=(128,),
                        timing=_timing(900.0, 900.0))]
    run = synth.write_run(tmp_path, cells)
    df, cs = results.load(run.name, tmp_path), results.load_cells(run.name, tmp_path)
    a1 = tables.a1_table(df, cs, "gcc-O3", "host")
    assert [(r["label"], r["impl_class"]) for r in a1["rows"]] == [("RC6 [ref]", "portable")]
    assert [(c["impl_class"], [r["impl_class"] for r in c["rows"]]) for c in a1["classes"]] == [
        ("hardware", ["hardware"])]
    assert a1["rows"][0]["cells"][0]["value"] == pytest.approx(1.28e6, rel=1e-3)
    other = tables.a1_table(df, cs, "clang-O3", "sparc64")
    assert other["rows"][0]["cells"][0]["value"] == pytest.approx(128e6 / 900, rel=1e-3)  # that cell's own


def _cyc(tmp: Path, specs: list[tuple]) -> pd.DataFrame:
    """Cells with cycle counts: (cipher, impl, toolchain, impl_class, {n: ticks per block}, ks list)."""
    cells = []
    for cipher, impl, tc, cls, per, kss in specs:
        procs = []
        for p in range(3):
            ops = []
            for ks in kss:
                ops += [_op("null", [26], ks=ks) | {"counter": "x86-tsc-lfence", "unit": "tsc_ticks"},
                        _op("ekey", [26 + 260], ks=ks) | {"counter": "x86-tsc-lfence", "unit": "tsc_ticks"}]
                ops += [_op("encrypt", [26 + v * n], n=n, ks=ks) | {"counter": "x86-tsc-lfence", "unit": "tsc_ticks"}
                        for n, v in per.items()]
            procs.append({"started": float(p), "seconds": 0.01, "ticks_per_second": 2.6e9, "ops": ops})
        cells.append(synth.cell(cipher, impl, tc, impl_class=cls, default=impl == "ref", key_sizes=tuple(kss),
                                timing=_timing(100.0, 400.0), cycles=procs))
    return _load(tmp, cells)


def test_a2_rounding_class_order_notes_and_one_counter(tmp_path):
    df = _cyc(tmp_path, [("rc6", "ref", "gcc-O3", "portable", {1: 100, 128: 100}, (128,)),
                         ("mars", "ref", "gcc-O3", "portable", {1: 99, 128: 99}, (128,)),
                         ("rc6", "hw2", "gcc-O3", "hardware", {1: 30, 128: 30}, (128,)),
                         ("rc6", "hw1", "gcc-O3", "hardware", {1: 20, 128: 20}, (128,)),
                         ("twofish", "ref", "gcc-O3", "portable", {1: 400, 128: 100}, (128,)),
                         ("twofish", "ref", "clang-O3", "portable", {1: 400, 128: 380}, (128,)),
                         ("loki97", "ref", "gcc-O3", "portable", {1: 300, 128: 290}, (192, 256)),
                         ("rc5", "ref", "gcc-O3", "portable", {1: 500, 128: 500}, (64, 128))])
    t = tables.a2_table(df, "gcc-O3", "host")
    col = t["columns"].index("Encrypt-1")
    cells = {r["label"]: r["cells"][col]["text"] for r in t["rows"]}
    assert cells["RC6 [ref]"] == "100" and cells["MARS"] == "99.0"  # whole ticks from 100 on
    assert [r["label"] for r in t["rows"]] == ["MARS", "RC6 [ref]", "TWOFISH ‡", "LOKI97 (192-bit key)", "RC5"]
    assert [r["label"] for r in t["classes"][0]["rows"]] == ["RC6 [hw1]", "RC6 [hw2]"]  # fastest first
    assert t["vectorised"] == ["TWOFISH: Encrypt-128 costs 0.25× Encrypt-1 per block with gcc-O3, far less than "
                               "other toolchains make of the same code: the compiler vectorised or interleaved the "
                               "loop over blocks"]
    assert (t["unit"], t["counter"]) == ("tsc_ticks", "x86-tsc-lfence")  # the counter's, not the timer's
    other = df.copy()
    mars = other.cipher == "mars"
    other.loc[mars, "counter"], other.loc[mars, "unit"] = "x86-rdtscp", "ref_cycles"  # two counters: both named
    two = tables.a2_table(other, "gcc-O3", "host")
    assert (two["counter"], two["unit"]) == ("x86-rdtscp, x86-tsc-lfence", "ref_cycles, tsc_ticks")


def test_a2_shows_one_counter_and_skips_cells_without_it(tmp_path):
    ins = {"counter": "qemu-insn-region", "unit": "guest_insns"}
    both = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0), cycles=_cycles(250.0),
                      icount=[_op("null", [10]) | ins, _op("encrypt", [128 * 300 + 10], n=128) | ins])
    only_insn = synth.cell("idea", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0),
                           icount=[_op("null", [10]) | ins, _op("ekey", [510]) | ins])
    df = _load(tmp_path, [both, only_insn])
    cyc = tables.a2_table(df, "gcc-O3", "host")
    assert [r["label"] for r in cyc["rows"]] == ["RC6"] and cyc["unit"] == "tsc_ticks"
    insn = tables.a2_table(df, "gcc-O3", "host", prefix="insn_")
    assert sorted(r["label"] for r in insn["rows"]) == ["IDEA", "RC6"] and insn["unit"] == "guest_insns"
    assert {r["label"]: r["cells"][0]["text"] for r in insn["rows"]} == {"IDEA": "500", "RC6": ""}


def test_vectorised_needs_both_block_counts_this_target_and_a_clear_margin():
    def rows(target, tc, cipher, r1, r128, ks=128):
        return [{"cell": f"{cipher}/ref@{tc}@{target}", "cipher": cipher, "implementation": "ref", "toolchain": tc,
                 "target": target, "metric": "encrypt_per_block", "status": "ok", "n_blocks": n, "estimate": v,
                 "key_size": ks} for n, v in ((1, r1), (128, r128))]

    df = pd.DataFrame(rows("A", "gcc", "x", 100.0, 50.0) + rows("A", "clang", "x", 100.0, 90.0)
                      + rows("B", "clang", "x", 100.0, 40.0) + rows("B", "gcc", "x", 100.0, 40.0))
    assert tables._vectorised(df, "gcc", "A", "") == {"x/ref@gcc@A": 0.5}  # B's clang does not count on A
    assert tables._vectorised(df[df.n_blocks != 128], "gcc", "A", "") == {}
    edge = pd.DataFrame(rows("A", "gcc", "x", 100.0, 30.0) + rows("A", "clang", "x", 100.0, 50.0))
    assert tables._vectorised(edge, "gcc", "A", "") == {}  # 0.3 is exactly 0.6 x 0.5: not clearly less
    keys = pd.DataFrame(rows("A", "gcc", "x", 100.0, 50.0) + rows("A", "gcc", "x", 100.0, 100.0, ks=256))
    assert tables._vectorised(keys, "gcc", "A", "") == {"x/ref@gcc@A": 0.5}  # the first key size's ratio


# ------------------------------------------------------------------ section 5.1 and Figure 4
def test_normalised_tables_and_their_empty_shapes(tmp_path):
    df = _load(tmp_path, [synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0)),
                          synth.cell("mars", "ref", key_sizes=(128,), timing=_timing(200.0, 100.0))])
    n = tables.normalised_key_plus_encryption(df, "gcc-O3", "host")
    assert list(n.index) == [0, 1] and "index" not in n.columns
    assert list(n.row) == ["MARS", "RC6"] and list(n.metric) == pytest.approx([3.0, 5.0], rel=1e-3)
    empty_cols = ["row", "key_norm", "enc_norm", "metric"]
    assert list(tables.normalised_key_plus_encryption(df, "gcc-O3", "sparc64").columns) == empty_cols
    no_keys = tables.normalised_key_plus_encryption(df[df.metric != "key_setup_speed"], "gcc-O3", "host")
    assert no_keys.empty and list(no_keys.columns) == empty_cols
    t = tables.key_and_encryption_times(df[df.metric == "encrypt_speed"], ["cell"])
    assert t.empty and list(t.columns) == ["cell", "enc_time", "key_time"]
    fig = analysis.normalised_platform(df[df.metric != "encrypt_speed"])
    assert fig.empty and list(fig.columns) == ["target", "emulated", "row", "cipher", "key_norm", "enc_norm",
                                               "metric"]
    ia = analysis.instruction_averages(df)
    assert list(ia.columns) == ["target", "emulated", "row", "cipher", "value", "insns"]


# ------------------------------------------------------------------ analyses
def test_top_performers_with_counts_of_every_platform():
    def plat(target, values, emulated=False):
        return pd.DataFrame({"target": target, "emulated": emulated, "row": list(values),
                             "value": list(values.values())})
    avg = pd.concat([plat("A", {"R1": 100, "R2": 99, "R3": 10}), plat("E", {"R1": 1, "R2": 9, "R3": 8}, True)])
    insn = pd.concat([plat("A", {"R1": 1, "R2": 50, "R3": 51}), plat("E", {"R1": 90, "R2": 10, "R3": 11}, True)])
    top = analysis.top_performers(avg, insn=insn)["platforms"]
    assert (top["A"]["basis"], top["A"]["groups"][0]) == ("Kbit/s", ["R1", "R2"])  # counts only for emulation
    assert (top["E"]["basis"], top["E"]["groups"][0]) == ("guest instructions", ["R1"])
    one = analysis.top_performers(plat("E", {"R1": 3}, True), insn=plat("E", {"R1": 7}, True))
    assert one["platforms"]["E"]["groups"] == [["R1"]] and one["platforms"]["E"]["basis"] == "guest instructions"


def test_memory_prefers_gcc_and_shows_every_class_speed(tmp_path):
    cells = [synth.cell("rc6", "ref", "clang-O3", key_sizes=(128,), timing=_timing(125.0, 400.0), code=2500),
             synth.cell("rc6", "ref", "gcc-O3", key_sizes=(128,), timing=_timing(100.0, 400.0), code=2000),
             synth.cell("rc6", "ref", "icc-like", key_sizes=(128,), timing=_timing(100.0, 400.0), code=2700),
             synth.cell("rc6", "hw", "gcc-O3", impl_class="hardware", default=False, key_sizes=(128,),
                        timing=_timing(10.0, 400.0), code=900),
             synth.cell("mars", "ref", "clang-O3", key_sizes=(128,), timing=_timing(300.0, 400.0), code=4000)]
    df = _load(tmp_path, cells)
    mem = analysis.memory_table(df).set_index("row")
    assert mem.code_bytes.to_dict() == {"MARS": 4000, "RC6 [hw]": 900, "RC6 [ref]": 2000}  # MARS: clang only
    assert mem.encrypt_speed.to_dict() == pytest.approx({"MARS": 128e6 / 300, "RC6 [hw]": 12.8e6,
                                                         "RC6 [ref]": 1.28e6}, rel=1e-3)
    nks = analysis.memory_table(df[df.metric != "key_schedule_bytes"])
    assert nks.key_schedule_bytes.isna().all() and list(nks.memory_bytes) == list(nks.table_bytes)
    no_speed = analysis.memory_table(df[df.metric != "encrypt_speed"])
    assert no_speed.encrypt_speed.isna().all() and len(no_speed) == 3
    none = analysis.memory_table(df[df.metric == "encrypt_speed"])
    assert none.empty and list(none.columns) == list(mem.reset_index().columns)


def test_versus_libraries_simd_against_simd_and_a_tie(tmp_path):
    cells = [synth.cell("rc6", "sse", impl_class="simd", default=False, key_sizes=(128,), timing=_timing(50.0, 400.0)),
             synth.cell("rc6", "libs", impl_class="peer", peer_code="simd", default=False, key_sizes=(128,),
                        timing=_timing(50.0, 400.0)),
             synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0))]
    vs = versus.versus_libraries(_load(tmp_path, cells))
    assert [(v["kind"], v["ours"], v["peer"], v["verdict"]) for v in vs] == [("simd", "sse", "libs", "tie")]
    assert vs[0]["ratio"] == pytest.approx(1.0)


def test_kendall_tau_is_scipys_exact_permutation_p_value():
    from scipy.stats import kendalltau

    ours, theirs = ["a", "b", "c", "d", "e"], ["b", "a", "c", "e", "d"]
    tau, n, p = analysis.kendall_tau(ours, theirs)
    want = kendalltau([0, 1, 2, 3, 4], [1, 0, 2, 4, 3], method="exact", alternative="greater")
    assert (tau, n, p) == (pytest.approx(want.statistic), 5, pytest.approx(want.pvalue))
    assert tau == pytest.approx(0.6)  # 2 of 10 pairs discordant: (8 - 2) / 10
    assert p == pytest.approx(14 / 120)  # orderings of 5 with at most 2 inversions: 1 + 4 + 9 of 120
    many = [f"c{i:02d}" for i in range(40)]  # more than scipy's "auto" computes exactly
    shuffled = many[5:] + many[:5]
    tau, n, p = analysis.kendall_tau(many, shuffled)
    want = kendalltau(range(40), [shuffled.index(x) for x in many], method="exact", alternative="greater")
    assert (tau, n, p) == (pytest.approx(want.statistic), 40, pytest.approx(want.pvalue, rel=1e-9))
    t2, n2, p2 = analysis.kendall_tau(["a", "b"], ["a", "b", "c"])
    assert n2 == 2 and math.isnan(t2) and math.isnan(p2)


# ------------------------------------------------------------------ the 1999 comparison
def _round1(tmp: Path, ciphers: list[str], toolchains: dict, default=True, extra: list[dict] = ()) -> tuple:
    cells = [synth.cell(c, "ref", tc, key_sizes=(128,), default=default, timing=_timing(100.0 + 10 * i, 400.0),
                        cycles=_cycles(200.0 + 50 * i)) for tc in toolchains for i, c in enumerate(ciphers)]
    run = synth.write_run(tmp, cells + list(extra), toolchains=toolchains)
    return results.load(run.name, tmp), [results.read_run(run)[0]]


def test_the_side_table_needs_three_ciphers_and_gladman_three_of_his(tmp_path):
    from lab.report import reference

    gl = set(reference.gladman().cipher)
    three = ["rc6", "mars", "twofish"]
    assert set(three) <= gl
    df, metas = _round1(tmp_path / "a", three, {"gcc-O3": synth.toolchain_facts("gcc", ["A.1-7"])})
    cmp = published.comparison(df, metas)
    assert sorted(r["cipher"] for r in cmp["side"]) == sorted(three)
    assert all(r["gladman_rel"] is not None for r in cmp["side"]) and {r["unit"] for r in cmp["side"]} == {
        "tsc_ticks"}
    assert (Path(__file__).parent.parent / cmp["sources"]).is_file()
    two = published.comparison(_round1(tmp_path / "b", three[:2], {"gcc-O3": synth.toolchain_facts("gcc")})[0],
                               metas)
    assert two["side"] == []
    few = ["rc6", "mars", "loki97", "e2"]  # four of NIST's, two of Gladman's: no Gladman column
    assert set(few) - gl == {"loki97", "e2"}
    side = published.comparison(_round1(tmp_path / "c", few, {"gcc-O3": synth.toolchain_facts("gcc")})[0],
                                metas)["side"]
    assert len(side) == 4 and all(r["gladman_rel"] is None for r in side)


def test_a_toolchain_without_reference_tables_does_not_stop_the_others(tmp_path):
    # gcc-O3 names a cycles table first (no speeds to rank against) and then A.1-7
    tcs = {"clang-O3": synth.toolchain_facts("clang"), "gcc-O3": synth.toolchain_facts("gcc", ["A.2-1", "A.1-7"])}
    df, metas = _round1(tmp_path, ["rc6", "mars", "twofish", "serpent"], tcs)
    cmp = published.comparison(df, metas)
    assert cmp["unmatched"] == ["clang-O3"] and [(t["toolchain"], t["table"]) for t in cmp["taus"]] == [
        ("gcc-O3", "A.1-7")]
    assert cmp["taus"][0]["heading"] and cmp["taus"][0]["heading"] != "A.1-7"  # NIST's heading of the table
    assert [r["cipher"] for r in cmp["table"]][0] == "rc6"  # ordered by our rank: the fastest first


def test_format_1_data_picks_the_fastest_and_the_smallest_cost(tmp_path):
    tcs = {"gcc-O3": synth.toolchain_facts("gcc", ["A.1-7"])}
    slow = [synth.cell("rc6", "slow", key_sizes=(128,), timing=_timing(300.0, 400.0), cycles=_cycles(900.0))]
    df, metas = _round1(tmp_path, ["rc6", "mars", "twofish"], tcs, extra=slow)
    df["default"] = None  # what a format-1 run gives
    speed = published._ours(df, "encrypt_speed").set_index("cipher")
    assert speed.implementation.to_dict()["rc6"] == "ref"
    cyc = published._ours(df, "encrypt_per_block", n_blocks=128).set_index("cipher")
    assert cyc.implementation.to_dict()["rc6"] == "ref"  # the smaller cost, not the larger
    mixed = df.copy()
    mixed.loc[mixed.implementation == "ref", "default"] = True  # one format-2 run beside: NaN is not a default
    assert set(published._ours(mixed, "encrypt_speed").implementation) == {"ref"}


def test_the_report_states_the_confidence_level_the_profile_asked_for(tmp_path):
    from lab.config import Lab
    from lab.publish import build_report

    c = synth.cell("rc6", "ref", key_sizes=(128,), timing=_timing(100.0, 400.0))
    c["measurement"]["confidence"] = 0.9
    run = synth.write_run(tmp_path / "results", [c])
    df = results.load(run.name, tmp_path / "results")
    assert set(df[df.metric == "encrypt_speed"].confidence) == {0.9}
    e = df[df.metric == "encrypt_speed"].iloc[0]
    want = stats.estimate(list(e.per_process), "min", 0.9).inverted(128e6)
    assert (e.ci_low, e.ci_high) == (pytest.approx(want.ci_low), pytest.approx(want.ci_high))
    html = build_report(Lab(), [run], results_dir=tmp_path / "results", reports_dir=tmp_path / "reports").read_text()
    assert "with a 90 % confidence" in html and "90 % CI [" in html and "95 % CI [" not in html


@pytest.mark.parametrize("value,half,want", [(230783.0, 5300.0, "231,000"), (230783.0, 53.0, "230,780"),
                                             (12.34, 0.3, "12.3"), (12.34, 0.05, "12.34"), (99.96, 0.4, "100.0"),
                                             (1234.5, 0.0, "1,234.5"), (1234.5, math.nan, "1,234.5")])
def test_a_figure_is_written_to_the_digits_its_interval_supports(value, half, want):
    assert tables.supported(value, half) == want


def test_the_tables_round_a_trimmed_figure_to_its_interval_and_keep_older_ones_as_stored(tmp_path):
    """The same processes under the trimmed estimator (run-to-run interval) and the best case: the first written
    to its interval's digits, the second with its one decimal as before."""
    layout = [1.0, 1.01, 1.02, 1.03, 1.05, 1.08]
    shown = {}
    for est in ("trimmed", "min"):
        rec = synth.cell("rijndael", "ref", key_sizes=(128,), estimator=est,
                         timing=synth.steady_timing(100.0, 110.0, 400.0, layout))
        rec["measurement"]["run_noise"] = 0.01
        rd = tmp_path / est
        d = synth.write_run(rd, [rec])
        df = results.load(d, rd)
        r = df[(df.metric == "encrypt_speed") & (df.key_size == 128)].iloc[0]
        shown[est] = (tables.number(r, "Enc128")["text"], r)
    text, r = shown["trimmed"]
    half = (r.ci_high - r.ci_low) / 2
    d = -math.floor(math.log10(half))
    assert text.replace(" †", "") == f"{round(r.estimate, d):,.{max(d, 0)}f}" and d < 0  # ±1 % of 1.25e6 Kbit/s
    text, r = shown["min"]
    assert text.replace(" †", "") == f"{r.estimate:,.1f}"
