"""The machine's reference speed (lab/speed.py): a run's timed figures at the speed of the machine's reference run,
by the gauges of the run's own processes, group by group; the references are set once and travel with the run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lab import results, speed, stats

from . import synth

GAUGES = [2.00, 2.01, 1.99, 2.02, 2.00, 2.03]  # a process's fastest gauge sample, ns per iteration
LAYOUT = [1.0, 1.04, 1.01, 1.10, 1.02, 1.03]  # each process's own layout


def _cell(slow: float, cipher: str = "serpent", cflags=("-O3",), gauges=GAUGES, layout=LAYOUT) -> dict:
    """A cell whose every cost and every gauge sample is `slow` times the reference run's: the whole machine
    slower, nothing in the code changed."""
    timing = synth.steady_timing(100.0 * slow, 110.0 * slow, 2000.0 * slow, layout, key_size=128)
    cycles = [synth.cycles_process({("null", 1): (1, [round(400 * slow)] * 2),
                                    ("encrypt", 16): (1, [round(400 * slow + 250 * f * slow * 16)] * 2)},
                                   started=float(i)) for i, f in enumerate(layout)]
    for p, q, g in zip(timing, cycles, gauges):
        p["gauge"] = {"workload": "rotl-xor-table-v1", "per_sample": 1000, "unit": "ns",
                      "samples": [round(g * slow * 1000)] * 2}
        q["gauge"] = {"workload": "rotl-xor-table-v1", "per_sample": 1000, "unit": "tsc_ticks",
                      "samples": [round(2.5 * g * slow * 1000)] * 2}
    return synth.cell(cipher, "ref", key_sizes=(128,), timing=timing, cycles=cycles, estimator="trimmed",
                      cflags=cflags)


def _run(results_dir, cells: list[dict], references: dict | None):
    """A run closed as the lab closes one, with these references (None: none, its figures raw)."""
    d = synth.write_run(results_dir, cells, reference_speed=references is not None)
    if references is not None:
        meta, _ = results.read_run(d)
        assert meta.speed_reference == references  # what its close settled: the machine's
    return d


def _timed(d):
    df = results.load(d, d.parent.parent)
    return df[df.estimator == "trimmed"].set_index(["cell", "metric", "key_size", "n_blocks"]).sort_index()


def test_a_run_of_a_slower_machine_reads_at_the_reference_speed(tmp_path):
    rd = tmp_path / "results"
    a_cells = [_cell(1.0)]
    refs = speed.settle(rd, "synth", "Synthetic CPU", speed.run_gauges(_records(a_cells)), {})
    a = _timed(_run(rd, a_cells, refs))
    b = _timed(_run(rd, [_cell(1.02)], refs))
    raw = _timed(_run(rd, [_cell(1.02)], None))
    assert set(a.index.get_level_values("metric")) >= {"encrypt_speed", "key_setup_speed", "encrypt_per_block"}
    # the slower machine's figures, speeds and costs alike, are the reference run's
    assert np.allclose(b.estimate, a.estimate, rtol=1e-3) and (b.speed_factor.round(3) == 1.02).all()
    assert (a.speed_factor == 1.0).all() and (a.speed_se == 0.0).all()  # the reference run: nothing corrected
    # without a reference the same run keeps the speed it ran at: speeds 2 % lower, costs 2 % higher
    speeds = raw.index.get_level_values("metric").str.endswith("_speed")
    assert np.allclose(raw.estimate[speeds], a.estimate[speeds] / 1.02, rtol=1e-3)
    assert np.allclose(raw.estimate[~speeds], a.estimate[~speeds] * 1.02, rtol=1e-3)
    assert raw.speed_factor.isna().all()
    # the interval takes the run gauge's uncertainty beside the run noise, and still holds the estimate
    assert (b.speed_se > 0).all() and ((b.ci_low < b.estimate) & (b.estimate < b.ci_high)).all()
    cost = b.xs("encrypt_per_block", level="metric").iloc[0]  # a cost: its interval symmetric about it
    z = stats.z_value(0.95)
    assert (cost.ci_high - cost.ci_low) / 2 / cost.estimate == pytest.approx(
        math.sqrt(cost.within ** 2 + (z * cost.run_noise) ** 2 + (z * cost.speed_se) ** 2), rel=1e-6)


def _records(cells: list[dict]) -> list:
    return [results.CellRecord.model_validate(c) for c in cells]


def test_each_gauge_group_its_own_factor_and_too_few_processes_none():
    o3 = _cell(1.02)
    o2 = _cell(1.0, cipher="rc6", cflags=("-O2",))
    tiny = _cell(1.0, cipher="mars", cflags=("-O1",), gauges=GAUGES[:2], layout=LAYOUT[:2])
    gauges = speed.run_gauges(_records([o3, o2, tiny]))
    # a group per compiled gauge and program: -O3 and -O2, each in ns (timing) and in ticks (cycles); -O1's two
    # processes are too few
    assert sorted(g.split("|")[2] + "|" + g.split("|")[3] for g in gauges) == [
        "-O2|ns", "-O2|tsc_ticks", "-O3|ns", "-O3|tsc_ticks"]
    ns_o3 = next(r for g, r in gauges.items() if g.endswith("|-O3|ns"))
    assert ns_o3.gauge == pytest.approx(np.median(GAUGES) * 1.02, rel=1e-3) and ns_o3.processes == len(GAUGES)
    lg = np.log(np.asarray(GAUGES) * 1.02)
    mad = np.median(np.abs(lg - np.median(lg)))
    assert ns_o3.rel_se == pytest.approx(1.2533 * 1.4826 * mad / math.sqrt(len(GAUGES)), rel=0.02)
    refs = {g: r.gauge / 1.02 if "-O3" in g else r.gauge for g, r in gauges.items()}
    del refs[next(g for g in refs if g.endswith("|-O2|ns"))]
    f = speed.factors(gauges, refs)
    assert sorted(round(x.value, 4) for x in f.values()) == [1.0, 1.02, 1.02]  # no reference: no factor


def test_the_first_run_sets_a_reference_that_later_runs_never_move(tmp_path):
    rd = tmp_path / "results"
    first = speed.run_gauges(_records([_cell(1.0)]))
    later = speed.run_gauges(_records([_cell(1.05)]))
    refs = speed.settle(rd, "m", "CPU A", first, {})
    assert refs == {g: r.gauge for g, r in first.items()}
    assert speed.settle(rd, "m", "CPU A", later, {}) == refs  # a slower run does not move them
    # another CPU model under the same machine name has its own references
    other = speed.settle(rd, "m", "CPU B", later, {})
    assert other == {g: r.gauge for g, r in later.items()}
    assert json.loads(speed.path(rd, "m").read_text())["CPU A"] == refs
    # a run that already carries references (a resumed run) keeps its own
    mine = {g: 1.0 for g in first}
    assert speed.settle(rd, "m", "CPU A", later, mine) == mine
    assert speed.stored(rd, "nowhere", "CPU A") == {}


def test_the_report_says_how_fast_each_run_ran_against_the_reference(tmp_path):
    from lab import report

    rd = tmp_path / "results"
    refs = speed.settle(rd, "synth", "Synthetic CPU", speed.run_gauges(_records([_cell(1.0)])), {})
    dirs = [_run(rd, [_cell(1.0)], refs), _run(rd, [_cell(1.02)], refs), _run(rd, [_cell(1.02)], None)]
    df = results.load(dirs, rd)
    metas = [results.read_run(d)[0] for d in dirs]
    got = {r["run_id"]: r["speed"] for r in report._section_system(metas, df, results.load_cells(dirs, rd))["runs"]}
    assert got[dirs[0].name] == 1.0 and got[dirs[1].name] == pytest.approx(1.02, rel=1e-3)
    assert got[dirs[2].name] is None


def test_a_pair_of_runs_at_the_reference_speed_keeps_the_ratio_it_ran_at_for_javas_noise(tmp_path):
    """calibration.paired: the log ratio of the figures at the reference speed (0 here: only the machine moved) and
    of the figures as they ran (what Java's run noise is fitted on): costs up by the machine's 2 %, speeds down."""
    from lab import calibration

    rd = tmp_path / "results"
    refs = speed.settle(rd, "synth", "Synthetic CPU", speed.run_gauges(_records([_cell(1.0)])), {})
    a, b = [results.load(_run(rd, [_cell(f)], refs), rd) for f in (1.0, 1.02)]
    p = calibration.paired(a, b).set_index("metric")
    assert np.allclose(p.log_ratio, 0, atol=1e-3)
    speeds = p.index.str.endswith("_speed")
    assert speeds.any() and (~speeds).any()
    assert np.allclose(p.raw_log_ratio[~speeds], math.log(1.02), atol=1e-3)
    assert np.allclose(p.raw_log_ratio[speeds], -math.log(1.02), atol=1e-3)
