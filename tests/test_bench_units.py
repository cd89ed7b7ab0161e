"""The benchmarks' own numbers: bench.repeatability's differences between two runs, their percentiles, Kendall's
tau of the rankings and the other estimators, from synthetic runs whose answers are known (every cost of run B
is a chosen factor times run A's); one real, small repeatability run end to end; the peers table and the JSON
every benchmark stores."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from lab import results
from lab.bench import header, peers, repeatability, store, stored

from . import synth

OVERHEAD = 26
# ns per block (A), factor of run B; rc6 becomes faster than rijndael in B (one pair of the ranking swaps)
CIPHERS = {"rijndael": (100, 1.25), "rc6": (200, 0.5), "serpent": (900, 1.5)}
LAYOUT = (1.0, 1.01, 1.02, 1.03)


def _cell(cipher: str, cost: float) -> dict:
    timing = synth.steady_timing(cost, cost * 1.1, cost * 4, LAYOUT)

    def d(c, calls, n=1):
        return [OVERHEAD + round(c * calls * n), OVERHEAD + round(c * calls * n) + 52]
    cycles = [synth.cycles_process({("null", 1): (1, [OVERHEAD, OVERHEAD + 26]),
                                    ("ekey", 1): (10, d(cost * 2 * f, 10)), ("dkey", 1): (10, d(cost * 3 * f, 10)),
                                    ("init", 1): (1, [OVERHEAD, OVERHEAD]),
                                    ("encrypt", 16): (10, d(cost * f, 10, 16)),
                                    ("decrypt", 16): (10, d(cost * f, 10, 16))}) for f in LAYOUT]
    return synth.cell(cipher, "ref", key_sizes=(128,), timing=timing, cycles=cycles)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("repeat")
    a = synth.write_run(tmp / "results", [_cell(c, cost) for c, (cost, _) in CIPHERS.items()])
    b = synth.write_run(tmp / "results", [_cell(c, cost * f) for c, (cost, f) in CIPHERS.items()])
    return results.load(a, tmp / "results"), results.load(b, tmp / "results")


def test_differences_are_the_relative_change_of_every_quantity(two_runs):
    a, b = two_runs
    d = repeatability.differences(a, b)
    # per cipher: three speeds (|1/f - 1|), EKey and DKey, Encrypt-16 and Decrypt-16 per block (|f - 1|); the
    # empty call and Init (below the counter's resolution) are not differences of a cipher
    assert len(d) == 3 * 7
    assert set(d.metric) == {"encrypt_speed", "decrypt_speed", "key_setup_speed", "ekey", "dkey",
                             "encrypt_per_block", "decrypt_per_block"}
    for c, (_, f) in CIPHERS.items():
        mine = d[d.cell == f"{c}/ref@gcc-O3@host"]
        for _, r in mine.iterrows():
            want = abs(1 / f - 1) if r.metric.endswith("speed") else abs(f - 1)
            assert r["diff"] == pytest.approx(want, rel=1e-3), (c, r.metric)
            assert r["diff"] == pytest.approx(abs(r.b / r.a - 1))
    kinds = d.groupby("kind").size().to_dict()
    assert kinds == {"encrypt speed": 3, "decrypt speed": 3, "key setup speed": 3, "EKey/DKey": 6,
                     "Encrypt-n/Decrypt-n": 6}


def test_the_summary_is_the_percentiles_of_the_differences(two_runs):
    d = repeatability.differences(*two_runs)
    s = repeatability.summary(d)
    assert set(s) == {"encrypt speed", "decrypt speed", "key setup speed", "EKey/DKey", "Encrypt-n/Decrypt-n", "all"}
    for kind, g in [*d.groupby("kind"), ("all", d)]:
        diffs = g["diff"].to_numpy()
        assert s[kind]["n"] == len(diffs)
        assert s[kind]["p50"] == pytest.approx(np.quantile(diffs, 0.5))
        assert s[kind]["p90"] == pytest.approx(np.quantile(diffs, 0.9))
        assert s[kind]["max"] == pytest.approx(diffs.max())
    # the worst quantities are rc6's speeds (costs halved: speeds +100 %)
    assert s["all"]["worst"]["cell"] == "rc6/ref@gcc-O3@host" and s["all"]["max"] == pytest.approx(1.0, rel=1e-3)
    assert s["encrypt speed"]["worst"] == {"cell": "rc6/ref@gcc-O3@host", "metric": "encrypt_speed",
                                           "key_size": 128, "n_blocks": None}
    assert s["Encrypt-n/Decrypt-n"]["worst"]["n_blocks"] == 16


def test_tau_compares_the_two_rankings_of_each_platform(two_runs):
    a, b = two_runs
    (t,) = repeatability.taus(a, b)
    assert (t["toolchain"], t["target"], t["n"]) == ("gcc-O3", "host", 3)
    # A: rijndael > rc6 > serpent; B: rc6 > rijndael > serpent: one discordant pair of three
    assert t["tau"] == pytest.approx(1 / 3)
    speeds = lambda df: [df[(df.cell == f"{c}/ref@gcc-O3@host") & (df.metric == "encrypt_speed")].estimate.iloc[0]
                         for c in CIPHERS]  # noqa: E731
    assert t["tau"] == pytest.approx(kendalltau(speeds(a), speeds(b)).statistic)
    assert repeatability.taus(a, a)[0]["tau"] == 1.0
    two = a[a.cipher != "serpent"]  # fewer than three ciphers: no tau
    assert repeatability.taus(two, two) == []


def test_the_other_estimators_come_from_the_same_raw_samples(two_runs):
    a, _ = two_runs
    row = a[(a.cipher == "rijndael") & (a.metric == "encrypt_speed")].iloc[0]
    alt = repeatability.ALTERNATIVES
    assert alt["min of minima (headline)"](row) == row.estimate
    assert alt["nist (3-sd mean of samples)"](row) == row.value
    minima = np.asarray(row.per_process)
    assert alt["median of per-process minima"](row) == pytest.approx(row.estimate * minima.min() / np.median(minima))
    assert alt["25th percentile of minima"](row) == pytest.approx(row.estimate * minima.min()
                                                                  / np.quantile(minima, 0.25))
    ekey = a[(a.cipher == "rijndael") & (a.metric == "ekey")].iloc[0]  # a cost: the statistic itself
    assert alt["median of per-process minima"](ekey) == pytest.approx(np.median(ekey.per_process))
    same = repeatability.differences(a, a, alt["nist (3-sd mean of samples)"])
    assert len(same) == 21 and (same["diff"] == 0).all()


def test_the_printed_summary_says_whether_the_goals_are_met(two_runs):
    a, b = two_runs
    doc = {"wall_seconds": [12.0, 13.4], "runs": ["results/x/A", "results/x/B"], "goals": repeatability.GOALS,
           "headline": repeatability.summary(repeatability.differences(a, b)), "taus": repeatability.taus(a, b),
           "estimators": {"min of minima (headline)": repeatability.summary(repeatability.differences(a, b))["all"]}}
    text = repeatability.format_summary(doc)
    assert text.splitlines()[0] == "two runs of the same matrix, back to back: 12 s and 13 s (results/x/A, results/x/B)"
    assert "  gcc-O3 on host: 0.333 over 3" in text
    assert text.endswith("goals p90 <= 3 %, max <= 10 %, tau >= 0.95: NOT met")
    line = next(x for x in text.splitlines() if x.startswith("all "))
    assert f"{100 * doc['headline']['all']['p90']:6.2f}%" in line and "rc6/ref@gcc-O3@host" in line
    assert line.endswith("-bit key") and "n=16" in next(x for x in text.splitlines() if x.startswith("Encrypt-n"))
    same = repeatability.summary(repeatability.differences(a, a))
    ok = {**doc, "headline": same, "taus": repeatability.taus(a, a)}
    assert repeatability.format_summary(ok).endswith(": met")


def test_a_real_repeatability_run_stores_its_figures(lab, tmp_path):
    said: list[str] = []
    out = tmp_path / "repeat.jsonl"
    doc = repeatability.bench(lab, ["des", "idea", "rc6"], ["gcc-O3"], "ours", profile="smoke", out=out, say=said.append,
                              results_dir=tmp_path / "results")
    (stored,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert stored["format"] == "cipherlab-bench-repeatability" and stored["machine"]["cores"]
    assert len(stored["runs"]) == 2 and all(r.startswith("results/") for r in stored["runs"])
    assert stored["headline"]["all"]["n"] == doc["headline"]["all"]["n"] >= 3 * 5
    assert 0 <= stored["headline"]["all"]["p50"] <= stored["headline"]["all"]["p90"] <= stored["headline"]["all"]["max"]
    (t,) = stored["taus"]
    assert t["n"] == 5 and -1 <= t["tau"] <= 1  # portable rows ranked: des spbox, sp64 and bitslice64, idea, rc6
    assert said[-1].startswith(f"stored: {out}") and any(x.startswith("goals p90") for x in said[-2].splitlines())


def test_the_peers_table_and_the_stored_json(tmp_path):
    row = {"cipher": "des", "toolchain": "gcc-O3", "kind": "portable", "ours": "spbox", "ours_speed": 1234567.8,
           "peer": "botan", "peer_speed": 1300000.0, "ratio": 1.0532, "ci_low": 1.04, "ci_high": 1.0661,
           "verdict": "peer faster", "blocks": 1, "unit": "Kbit/s"}
    many = {**row, "blocks": 1024, "unit": "tsc_ticks", "ours_speed": 81.25, "peer_speed": 85.5}
    table = peers.format_table([many, row, {**row, "cipher": "3des", "ratio": 0.9}])
    lines = table.splitlines()
    assert len(lines) == 5 and lines[2].startswith("| 3des ")  # sorted by cipher, then blocks per call
    assert lines[3] == ("| des | gcc-O3 | portable | 1 | spbox | 1,234,567.8 Kbit/s | botan | 1,300,000.0 | 1.053 | "
                        "[1.040, 1.066] | peer faster |")
    assert lines[4].startswith("| des | gcc-O3 | portable | 1024 | spbox | 81.2 tsc ticks per block | botan | 85.5 |")
    h = header("x")
    assert h["format"] == "cipherlab-bench-x" and h["machine"]["cores"] and h["date"][:2] == "20"
    said = []
    p = store(tmp_path, {**h, "value": math.pi}, "x", say=said.append)
    stem = f"x-{h['date'][:16].replace(':', '')}"
    assert p == tmp_path / "bench" / "results" / "x.jsonl" and said == [f"stored: {p} ({stem})"]
    # a second result in the same minute (a re-judged pair just after a run) is appended with its own id
    store(tmp_path, {**h, "value": 2.0}, "x", say=said.append)
    store(tmp_path, {**h, "value": 3.0}, "x", say=said.append)
    lines = p.read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == [stem, f"{stem}-2", f"{stem}-3"]
    assert [r["value"] for r in stored(p)] == [math.pi, 2.0, 3.0]  # appended in order, none rewritten
    mine = tmp_path / "mine.jsonl"  # a file the user names is appended to as well
    assert store(tmp_path, {**h, "value": 4.0}, "x", mine, say=said.append) == mine
    assert [r["value"] for r in stored(mine)] == [4.0]


def _gauged(cost: float, machine: float) -> dict:
    """A timing-only cell on a machine `machine` times slower: its costs and its gauge both scale."""
    timing = synth.steady_timing(cost * machine, cost * machine, cost * 4 * machine, LAYOUT)
    for p, f in zip(timing, LAYOUT):
        p["gauge"] = {"workload": "rotl-xor-table-v1", "per_sample": 1000, "unit": "ns",
                      "samples": [round(2000 * f * machine)] * 2}
    return synth.cell("rijndael", "ref", key_sizes=(128,), timing=timing)


def test_the_gauge_summary_shows_the_relative_agreement_beside_the_absolute(tmp_path):
    # runs stored before the reference speed (raw figures): the whole machine 3 % slower in run B
    a = synth.write_run(tmp_path / "results", [_gauged(100, 1.0)], reference_speed=False)
    b = synth.write_run(tmp_path / "results", [_gauged(100, 1.03)], reference_speed=False)
    la, lb = results.load(a, tmp_path / "results"), results.load(b, tmp_path / "results")
    g = repeatability.gauge_summary(la, lb)
    assert g["relative"]["all"]["n"] == 3 and g["relative"]["all"]["max"] == pytest.approx(0, abs=1e-3)
    assert g["absolute_same_quantities"]["all"]["p50"] == pytest.approx(1 - 1 / 1.03, rel=1e-2)
    # the same two runs closed as the lab closes one now: the absolute figures at the machine's reference speed
    # agree as the gauge-relative ones do (lab/speed.py)
    ref = tmp_path / "at-reference"
    la, lb = [results.load(synth.write_run(ref, [_gauged(100, f)]), ref) for f in (1.0, 1.03)]
    assert repeatability.gauge_summary(la, lb)["absolute_same_quantities"]["all"]["max"] == pytest.approx(0, abs=1e-3)
    text = repeatability.format_gauge({"gauge_relative": g, "gauge_goals": repeatability.GAUGE_GOALS})
    assert any("gauge-relative goals" in line and line.endswith("met") and "NOT" not in line for line in text)
    assert repeatability.gauge_summary(*[results.load(synth.write_run(tmp_path / "old", [_cell("rc6", 200)]),
                                                      tmp_path / "old")] * 2) is None  # no gauge: no summary


def test_two_stored_runs_are_judged_again_without_measuring(lab, tmp_path):
    """bench.repeatability --runs: after a change to the estimators, the same two runs judged again (no run made)."""
    rd = tmp_path / "results"
    a, b = [synth.write_run(rd, [_gauged(100, f)], reference_speed=False) for f in (1.0, 1.03)]  # raw figures
    said = []
    doc = repeatability.bench(lab, runs=[a, b], out=tmp_path / "again.jsonl", say=said.append, results_dir=rd)
    assert sorted(p.name for p in rd.glob("*/*") if p.is_dir()) == sorted([a.name, b.name])  # nothing measured
    assert doc["wall_seconds"] is None and doc["runs"] == [str(a.relative_to(tmp_path)), str(b.relative_to(tmp_path))]
    assert doc["headline"]["all"]["p50"] == pytest.approx(1 - 1 / 1.03, rel=1e-2)
    assert doc["gauge_relative"]["relative"]["all"]["max"] == pytest.approx(0, abs=1e-3)
    assert "trimmed mean" in doc["gauge_statistic"]  # which statistic the stored figures come from
    assert said[0].startswith("bench.repeatability: judging the stored runs") and "judged again" in said[1]
    assert stored(tmp_path / "again.jsonl")[-1]["runs"] == doc["runs"]


def _processes(procs: list[tuple]) -> dict:
    """A timing-only cell whose process i has cost factor procs[i][0] and gauge factor procs[i][1], 9 rounds or
    procs[i][3], and where procs[i][2] is given, a first two samples that many times the others."""
    timing = [synth.steady_timing(100, 100, 400, [c], samples=(rest[1] if len(rest) > 1 else 9))[0]
              for c, _, *rest in procs]
    for p, (_, g, *rest) in zip(timing, procs):
        rounds = len(p["key_sizes"][128]["encrypt"]["ns"])
        p["gauge"] = {"workload": "rotl-xor-table-v1", "per_sample": 1000, "unit": "ns",
                      "samples": [round(2000 * g)] * rounds}
        for op in p["key_sizes"][128].values():
            op["ns"][:2] = [round(x * (rest[0] if rest else 1)) for x in op["ns"][:2]]
    return synth.cell("rijndael", "ref", key_sizes=(128,), timing=timing)


@pytest.mark.parametrize("run_a, run_b, cause", [
    # the cell's layout: two modes 4 % apart, three of five processes in the slow one in A, two in B
    ([(1, 1), (1, 1), (1.04, 1), (1.04, 1), (1.04, 1)], [(1, 1), (1, 1), (1, 1), (1.04, 1), (1.04, 1)],
     "layout modes"),
    # a neighbour: B's gauge ran 10 % slower in three processes, their costs only 2 % slower
    ([(1, 1)] * 5, [(1, 1), (1, 1), (1.02, 1.1), (1.02, 1.1), (1.02, 1.1)], "disturbed processes"),
    # three rounds per process (Encrypt-32768), two of them 1.5 % fast in three of A's processes, in two of B's
    ([(1, 1, 0.985, 3)] * 3 + [(1, 1, 1, 3)] * 2, [(1, 1, 0.985, 3)] * 2 + [(1, 1, 1, 3)] * 3, "few samples"),
    # all of B's processes 1.5 % slower, the gauge not: interference it did not see
    ([(1, 1)] * 5, [(1.015, 1)] * 5, "other"),
])
def test_the_anatomy_names_what_moved_the_gauge_relative_figures(tmp_path, run_a, run_b, cause):
    rd = tmp_path / "results"
    a, b = synth.write_run(rd, [_processes(run_a)]), synth.write_run(rd, [_processes(run_b)])
    rel = repeatability.differences(results.load(a, rd), results.load(b, rd), lambda r: r.gauge_relative)
    an = repeatability.anatomy(repeatability.gauged(a), repeatability.gauged(b), rel)
    assert list(an["causes"]) == [cause] and an["causes"][cause]["n"] == 3 == an["quantities"]
    worst = an["causes"][cause]["worst"]
    assert worst["diff"] == pytest.approx(rel["diff"].max()) and len(worst["ratios"][1]) == 5
    assert an["disturbed_processes"] == [0, 0.6 if cause == "disturbed processes" else 0]
    text = repeatability.format_gauge({"gauge_relative": {**repeatability.gauge_summary(
        results.load(a, rd), results.load(b, rd), [a, b])}, "gauge_goals": repeatability.GAUGE_GOALS})
    assert any(line.startswith(f"  {cause} ") and line.split()[len(cause.split())] == "3" for line in text)
    assert any(line.startswith("what moved the 3 of 3 quantities") for line in text)


def test_other_gauge_statistics_are_judged_on_the_same_raw_samples(tmp_path):
    """Layout modes (three of five processes 4 % slower in A, two in B) move a trimmed mean over processes and not
    a minimum; a whole machine 3 % slower in B moves the absolute figure and not the floors' ratio."""
    rd = tmp_path / "results"
    modal = [(1, 1), (1, 1), (1.04, 1), (1.04, 1), (1.04, 1)], [(1, 1), (1, 1), (1, 1), (1.04, 1), (1.04, 1)]
    a, b = (synth.write_run(rd, [_processes(x)]) for x in modal)
    rel = repeatability.differences(results.load(a, rd), results.load(b, rd), lambda r: r.gauge_relative)
    alt = repeatability.alternatives(repeatability.gauged(a), repeatability.gauged(b), rel)
    assert list(alt) == list(repeatability.GAUGE_ALTERNATIVES) and {v["n"] for v in alt.values()} == {3}
    tm = abs((1 + 1 + 1.04) / (1 + 1.04 + 1.04) - 1)  # the middle three of five
    assert alt["paired by round, trimmed mean (the lab's)"]["max"] == pytest.approx(tm, rel=1e-3)
    assert alt["each process's two minima, trimmed mean"]["p50"] == pytest.approx(tm, rel=1e-3)
    for name in ("paired by round, minimum over processes", "floors: min of minima / gauge's minimum",
                 "absolute: min of minima (the headline)"):
        assert alt[name]["max"] == pytest.approx(0, abs=1e-4), name
    # a neighbour slowing three of B's five gauges by 10 %, the costs not: the gauge's minimum (not its median)
    # holds, a minimum over paired ratios picks a disturbed one
    disturbed = [(1, 1)] * 5, [(1, 1), (1, 1), (1, 1.1), (1, 1.1), (1, 1.1)]
    a, b = (synth.write_run(rd, [_processes(x)]) for x in disturbed)
    rel = repeatability.differences(results.load(a, rd), results.load(b, rd), lambda r: r.gauge_relative)
    alt = repeatability.alternatives(repeatability.gauged(a), repeatability.gauged(b), rel)
    assert alt["floors: min of minima / gauge's minimum"]["max"] == pytest.approx(0, abs=1e-4)
    assert alt["paired by round, minimum over processes"]["p50"] == pytest.approx(1 - 1 / 1.1, rel=1e-3)
    a, b = synth.write_run(rd, [_gauged(100, 1.0)]), synth.write_run(rd, [_gauged(100, 1.03)])
    rel = repeatability.differences(results.load(a, rd), results.load(b, rd), lambda r: r.gauge_relative)
    alt = repeatability.alternatives(repeatability.gauged(a), repeatability.gauged(b), rel)
    assert alt["floors: min of minima / gauge's minimum"]["max"] == pytest.approx(0, abs=1e-3)
    assert alt["absolute: min of minima (the headline)"]["p50"] == pytest.approx(0.03, abs=1e-3)
    text = repeatability.format_gauge({"gauge_relative": repeatability.gauge_summary(
        results.load(a, rd), results.load(b, rd), [a, b]), "gauge_goals": repeatability.GAUGE_GOALS})
    i = text.index("the same raw samples, other gauge statistics (on costs, the quantities above):")
    assert [line.split("  p50")[0].strip() for line in text[i + 1:i + 6]] == list(repeatability.GAUGE_ALTERNATIVES)
    assert "p90  3.00%" in text[i + 5]


def test_the_disturbed_share_counts_processes_not_the_quantities_they_measured(tmp_path):
    """Three of one cell's five processes ran with a disturbed gauge in run B; a second cell measured three key
    sizes (nine quantities per process, the first three) in five clean processes: 3 of 10 processes, where
    counting (quantity, process) pairs would say 9 of 60."""
    def many_keys(gauges):
        procs = [synth.timing_process({ks: {"encrypt": (100, [10000] * 9), "decrypt": (100, [10000] * 9),
                                            "key_setup": (10, [4000] * 9)} for ks in (128, 192, 256)})
                 for _ in gauges]
        for pr, g in zip(procs, gauges):
            pr["gauge"] = {"workload": "rotl-xor-table-v1", "per_sample": 1000, "unit": "ns", "samples": [g] * 9}
        return synth.cell("serpent", "ref", timing=procs)
    rd = tmp_path / "results"
    a = synth.write_run(rd, [_processes([(1, 1)] * 5), many_keys([2000] * 5)])
    b = synth.write_run(rd, [_processes([(1, 1), (1, 1), (1.02, 1.1), (1.02, 1.1), (1.02, 1.1)]),
                             many_keys([2000] * 5)])
    rel = repeatability.differences(results.load(a, rd), results.load(b, rd), lambda r: r.gauge_relative)
    an = repeatability.anatomy(repeatability.gauged(a), repeatability.gauged(b), rel)
    assert an["disturbed_processes"] == [0, 0.3]


def test_modes_are_groups_at_least_one_percent_apart_with_two_on_each_side():
    assert repeatability._modal(np.array([1, 1.001, 1.05, 1.051]))
    assert not repeatability._modal(np.array([1, 1.002, 1.004, 1.006, 1.008, 1.010, 1.012]))  # a spread, no gap
    assert not repeatability._modal(np.array([1, 1.05, 1.051, 1.052]))  # one process alone is not a mode
    assert not repeatability._modal(np.array([1, 1.05, 1.051]))


def _frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([{"cell": cell, "metric": metric, "key_size": 128, "n_blocks": None, "status": status,
                          "estimator": "min", "estimate": v, "ci_low": v - hw, "ci_high": v + hw,
                          "gauge_relative": math.nan, "gauge_relative_low": math.nan, "gauge_relative_high": math.nan}
                         for cell, metric, status, v, hw in rows])


def test_the_intervals_are_judged_by_the_two_runs_differences():
    """coverage(): each difference over the two runs' half-widths combined (/1.96); beyond 1.96 is a difference
    the intervals did not hold; two zero-width intervals that differ are beyond, two equal ones agree."""
    a = _frame([("x", "encrypt_speed", "ok", 100, 1), ("y", "encrypt_speed", "ok", 100, 1),
                ("t", "ekey", "ok", 100, 1), ("z", "ekey", "ok", 100, 0), ("w", "dkey", "ok", 100, 0),
                ("v", "init", "ok", 100, 1), ("u", "encrypt_speed", "build_failed", 100, 1)])
    b = _frame([("x", "encrypt_speed", "ok", 101, 1), ("y", "encrypt_speed", "ok", 103, 1),
                ("t", "ekey", "ok", 101.3, 1), ("z", "ekey", "ok", 100, 0), ("w", "dkey", "ok", 100.5, 0),
                ("v", "init", "ok", 150, 1), ("u", "encrypt_speed", "ok", 150, 1)])
    c = repeatability.coverage(a, b)
    assert set(c) == {"headline"}  # no gauge in these runs: no gauge-relative line
    # t's z is 1.80: beyond a 90 % interval's 1.645, within the 95 % one's 1.96
    z = [d / (math.sqrt(2) / 1.96) for d in (1, 3, 1.3)] + [0.0]
    assert c["headline"]["n"] == 5 and c["headline"]["beyond"] == 0.4  # y and w; Init and the failed cell not counted
    assert c["headline"]["sd"] == pytest.approx(np.std(z))
    assert c["headline"]["half_width_p50"] == pytest.approx(0.01)  # the median of 1, 1, 1, 0, 0 % (the mean: 0.6 %)
    text = repeatability.format_intervals(c)
    assert text[-1].startswith("  headline") and " 40.0 % beyond" in text[-1]
    assert repeatability.format_intervals(None) == []


def test_placement_tells_a_mode_a_copy_shares_from_a_process_outlier():
    """bench.placement: a copy whose every process is 2x slower is one slow copy; one slow process among a copy's
    is not (the copy's figure is its fastest process); per-block figures from the cycles program's minima."""
    import numpy as np
    from lab.bench import placement

    ops = [{"op": "null", "n": 1, "calls": 1, "deltas": [26]}, {"op": "init", "n": 1, "calls": 64, "deltas": [260]},
           {"op": "ekey", "n": 1, "calls": 4, "deltas": [4000, 3600, 3900]},
           {"op": "decrypt", "n": 1024, "calls": 2, "deltas": [90_112, 88_064]}]
    assert placement.per_block(ops) == {"ekey": 900.0, "decrypt-1024": 43.0}
    a = np.array([[43.0, 43.2], [86.0, 86.4], [43.1, 90.0], [42.9, 43.0], [43.0, 43.1]])
    s = placement.summarise({"decrypt-1024": a})["decrypt-1024"]
    assert s["slow_groups"] == 1 and s["slow_ratios"] == [2.0]  # copy 1; copy 2's one slow process is not a mode
    assert s["median"] == 43.0 and s["groups_spread"] == round(86.0 / 42.9 - 1, 4)
    assert s["within_group"] == round(43.2 / 43.0 - 1, 5)  # the median copy's slowest process over its fastest
    from lab.docsite.benchmarks import placement as line
    doc = {"cell": "serpent/avx2@gcc-O3@host", "copies": 5, "processes": 2, "mode_ratio": 1.3,
           "copies_of_the_file": {"decrypt-1024": s}, "the_file_itself": {"decrypt-1024": {**s, "slow_groups": 0}}}
    assert "decrypt-1024 1 (2.00x)" in line(doc) and "the file itself, as many groups: 0" in line(doc)
