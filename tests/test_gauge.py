"""The machine-speed gauge (issue 24 §5): a fixed reference workload sampled inside every timing and cycles
process, once per round, stored per process, and `gauge_relative` in results.load (each process's costs over its
own gauge samples of the same rounds)."""

from __future__ import annotations


import math

import pytest

from lab import compare, protocol, results
from lab.backends.base import Completed

from . import synth


def _gauge(cost_per_iter: float, per_sample: int = 1000, unit: str = "ns", rounds=(1.0, 1.0)) -> dict:
    """One process's gauge, a sample per round (the synthetic processes take two): cost_per_iter times each
    round's factor."""
    return {"workload": "rotl-xor-table-v1", "per_sample": per_sample, "unit": unit,
            "samples": [round(cost_per_iter * per_sample * f) for f in rounds]}


def _processes(layout: list[float], gauge: list[float] | None):
    """Timing and cycles processes whose costs scale with `layout` (ns per block 100, per key pair 2000; ticks per
    block 250 at n=16, per EKey 500), each with the gauge cost of the same position (None: no gauge)."""
    timing = synth.steady_timing(100.0, 100.0, 2000.0, layout)
    cycles = [synth.cycles_process({("null", 1): (1, [40, 41]), ("ekey", 1): (1, [40 + round(500 * f)] * 2),
                                    ("encrypt", 16): (1, [40 + round(250 * f * 16)] * 2)}, started=float(i))
              for i, f in enumerate(layout)]
    if gauge is not None:
        for p, q, g in zip(timing, cycles, gauge):
            p["gauge"] = _gauge(g)
            q["gauge"] = _gauge(g * 2.5, unit="tsc_ticks")
    return timing, cycles


def _load(tmp_path, layout, gauge):
    timing, cycles = _processes(layout, gauge)
    d = synth.write_run(tmp_path / "results", [synth.cell("serpent", "ref", key_sizes=(128,), timing=timing,
                                                          cycles=cycles)])
    df = results.load(d, tmp_path / "results")
    return df


def test_gauge_relative_is_each_process_cost_over_its_own_gauge(tmp_path):
    # the second process is 20 % slower in everything, its gauge too: relative to the gauge both agree
    df = _load(tmp_path, [1.0, 1.2, 1.1], [2.0, 2.4, 2.2])
    enc = df[df.metric == "encrypt_speed"].iloc[0]
    # a speed divided by the gauge's speed: (128e6 / 100 ns) * 2 ns = 128e6 / (100 / 2)
    assert enc.estimate == pytest.approx(128e6 / 100)
    assert enc.gauge_relative == pytest.approx(128e6 / 50)
    # three processes that agree relative to their gauges: a trimmed mean's interval as narrow as their agreement
    assert enc.gauge_relative_low <= enc.gauge_relative <= enc.gauge_relative_high
    assert enc.gauge_relative_high / enc.gauge_relative_low - 1 < 1e-6
    key = df[df.metric == "key_setup_speed"].iloc[0]
    assert key.gauge_relative == pytest.approx(2e9 / (2000 / 2))
    ekey = df[df.metric == "ekey"].iloc[0]  # a cost divided by the gauge's cost: 500 ticks / 5 ticks
    assert ekey.estimate == pytest.approx(500) and ekey.gauge_relative == pytest.approx(100)
    per_block = df[(df.metric == "encrypt_per_block") & (df.n_blocks == 16)].iloc[0]
    assert per_block.gauge_relative == pytest.approx(250 / 5)
    facts = df[df.estimator.isin(["fact", "exact"])]
    assert len(facts) and facts.gauge_relative.isna().all()


def test_gauge_relative_pairs_each_sample_with_its_rounds_gauge_so_speed_modes_and_lone_bursts_cancel(tmp_path):
    """The lab's VM switches between two speeds 2.4 % apart within a process, for every workload at once; and a
    single sample sometimes runs a few percent fast alone (a burst the gauge, sampled at another moment of the
    round, does not see).  Five rounds per process: in each process two rounds in the fast mode (cost and gauge
    alike) and one lone burst on the cell's sample in a slow round.  The minima give the burst over the fast
    gauge, the medians the fast mode's cost over the slow gauge (their rounds differ); the median of the rounds'
    paired ratios gives the cell's cost over the gauge."""
    procs = []
    for i in range(3):
        mode = [1.0] * 5
        mode[i] = mode[(i + 1) % 5] = 1 / 1.024  # these rounds ran in the fast mode
        burst = [1.0] * 5
        burst[(i + 2) % 5] = 0.965  # this sample alone ran 3.5 % fast
        ns = [round(100 * 100 * m * b) for m, b in zip(mode, burst)]
        p = synth.timing_process({128: {"encrypt": (100, ns), "decrypt": (100, ns), "key_setup": (10, [20000] * 5)}},
                                 started=float(i))
        p["gauge"] = _gauge(2.0, rounds=mode)
        procs.append(p)
    d = synth.write_run(tmp_path / "results", [synth.cell("serpent", "ref", key_sizes=(128,), timing=procs,
                                                          cycles=[])])
    enc = results.load(d, tmp_path / "results").query("metric == 'encrypt_speed'").iloc[0]
    assert enc.gauge_relative == pytest.approx(128e6 / 50, rel=1e-3)  # 100 ns per block over 2 ns
    minima = 100 * 0.965 / (2.0 / 1.024)  # what each process's two minima would have said (the burst over the
    assert abs(128e6 / minima / enc.gauge_relative - 1) > 0.01  # fast mode's gauge): 1.2 % off, above the goal
    medians = 100 / 1.024 / 2.0  # each process's median cost (a fast round) over its median gauge (a slow one)
    assert abs(128e6 / medians / enc.gauge_relative - 1) > 0.02


def test_an_operation_with_fewer_samples_than_rounds_is_paired_with_the_rounds_it_took_them_in(tmp_path):
    """A call much longer than a sample (Encrypt-32768) takes its few samples in the first rounds: they are paired
    with those rounds' gauge samples.  Here the first two rounds ran in the fast mode, the other three not."""
    fast = 1 / 1.024
    timing, _ = _processes([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
    cycles = []
    for i in range(3):
        q = synth.cycles_process({("null", 1): (1, [40] * 5),
                                  ("encrypt", 32768): (1, [40 + round(10 * 32768 * fast)] * 2)}, started=float(i))
        q["gauge"] = _gauge(2.5, unit="tsc_ticks", rounds=(fast, fast, 1.0, 1.0, 1.0))
        cycles.append(q)
    d = synth.write_run(tmp_path / "results", [synth.cell("serpent", "ref", key_sizes=(128,), timing=timing,
                                                          cycles=cycles)])
    df = results.load(d, tmp_path / "results")
    long = df[(df.metric == "encrypt_per_block") & (df.n_blocks == 32768)].iloc[0]
    assert long.gauge_relative == pytest.approx(10 / 2.5, rel=1e-3)  # not 10 * fast / 2.5 (the last rounds)


def test_gauge_relative_over_processes_is_the_20_percent_trimmed_mean_with_its_tukey_mclaughlin_interval(tmp_path):
    """Ten processes whose EKey over gauge ratios are 100 (six), 103 (three) and 150 (one, disturbed): the median
    would say 100, the mean 105.9; the 20 % trimmed mean cuts two from each end and says 101.  Its interval is
    Student's t (n - 2g - 1 = 5 degrees of freedom) on the Winsorized values (100 x 6, 103 x 4), computed here by
    hand."""
    factors = [1.0] * 6 + [1.03] * 3 + [1.5]
    df = _load(tmp_path, [1.0] * 10, [2.0 / f for f in factors])
    ekey = df[df.metric == "ekey"].iloc[0]
    assert ekey.gauge_relative == pytest.approx(101, rel=1e-3)
    w = [100.0] * 6 + [103.0] * 4
    mean = sum(w) / 10
    sd = math.sqrt(sum((x - mean) ** 2 for x in w) / 9)
    half = 2.5706 * sd / (0.6 * math.sqrt(10))  # t(0.975, 5) = 2.5706
    assert ekey.gauge_relative_low == pytest.approx(101 - half, rel=1e-3)
    assert ekey.gauge_relative_high == pytest.approx(101 + half, rel=1e-3)


def test_one_process_gives_a_gauge_relative_figure_without_an_interval(tmp_path):
    ekey = _load(tmp_path, [1.0], [2.0]).query("metric == 'ekey'").iloc[0]
    assert ekey.gauge_relative == pytest.approx(100)
    assert math.isnan(ekey.gauge_relative_low) and math.isnan(ekey.gauge_relative_high)


def test_gauge_relative_removes_a_slower_machine_the_absolute_figure_keeps(tmp_path):
    fast = _load(tmp_path / "a", [1.0, 1.05, 1.1], [2.0, 2.1, 2.2])
    slow = _load(tmp_path / "b", [1.04, 1.09, 1.14], [2.08, 2.18, 2.28])  # the whole machine 4 % slower
    a, b = (d[d.metric == "encrypt_speed"].iloc[0] for d in (fast, slow))
    assert b.estimate / a.estimate == pytest.approx(1 / 1.04)
    assert b.gauge_relative / a.gauge_relative == pytest.approx(1.0, abs=1e-3)


def test_gauge_relative_over_processes_trims_the_ends_so_two_disturbed_gauges_do_not_move_it(tmp_path):
    # twelve processes, every cost and gauge in the same proportion but in two of them a neighbour slowed the gauge
    # by 30 % and the cell by only 5 %: the minimum over the ratios would follow those two, the trimmed mean cuts them
    layout = [1.0, 1.02, 1.0, 1.05, 1.01, 1.0, 1.03, 1.05, 1.0, 1.02, 1.04, 1.0]
    gauge = [2.0 * f for f in layout]
    gauge[3], gauge[7] = 2.0 * 1.3, 2.0 * 1.3
    enc = _load(tmp_path, layout, gauge).query("metric == 'encrypt_speed'").iloc[0]
    assert enc.gauge_relative == pytest.approx(128e6 / 50)
    assert enc.gauge_relative_low <= enc.gauge_relative <= enc.gauge_relative_high  # twelve processes bound it
    assert enc.gauge_relative_high / enc.gauge_relative < 1.01  # the two disturbed processes sit outside it


def test_a_run_without_a_gauge_still_loads_with_gauge_relative_nan(tmp_path):
    df = _load(tmp_path, [1.0, 1.1], None)
    assert df[df.metric == "encrypt_speed"].estimate.iloc[0] == pytest.approx(128e6 / 100)
    assert df.gauge_relative.isna().all() and df.gauge_relative_low.isna().all()


def test_a_run_with_some_processes_without_a_gauge_gets_none(tmp_path):
    timing, cycles = _processes([1.0, 1.1], [2.0, 2.2])
    del timing[1]["gauge"]
    d = synth.write_run(tmp_path / "results", [synth.cell("serpent", "ref", key_sizes=(128,), timing=timing,
                                                          cycles=cycles)])
    df = results.load(d, tmp_path / "results")
    assert df[df.metric == "encrypt_speed"].gauge_relative.isna().all()
    assert df[df.metric == "ekey"].gauge_relative.notna().all()  # the cycles processes had theirs


def test_the_gauge_record_is_read_and_a_broken_one_named():
    line = '{"type":"gauge","workload":"rotl-xor-table-v1","per_sample":4096,"unit":"ns","samples":[9000,8800]}'
    c = Completed(argv=["timing"], returncode=0, stdout=line + "\n", stderr="", seconds=0.1)
    (g,) = protocol.of(protocol.read(c, "timing"), protocol.GaugeRecord)
    assert g.stored() == {"workload": "rotl-xor-table-v1", "per_sample": 4096, "unit": "ns", "samples": [9000, 8800]}
    assert list(results.Gauge.model_validate(g.stored()).per_iteration()) == pytest.approx([9000 / 4096, 8800 / 4096])
    with pytest.raises(protocol.ProtocolError, match=r"timing: record 1 \(gauge\) is unreadable: missing field "
                                                     r"'samples'"):
        protocol.parse({"type": "gauge", "workload": "w", "per_sample": 1, "unit": "ns"}, "timing")


def test_a_real_run_stores_the_gauge_of_every_process(fixture_lab, tmp_path):
    """The real timing and cycles programs, built by the real compiler, print the gauge; the run stores it for
    every process and gauge_relative comes out finite and positive."""
    from lab.run import RunRequest, run

    m = tmp_path / "matrix.yaml"
    m.write_text("ciphers: [des]\ntoolchains: [gcc-O3]\ntargets: [host]\nprofile: smoke\n")
    d = run(fixture_lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=tmp_path / "build",
                                    icount=False)).run_dir
    _, (cell,) = results.read_run(d)
    procs = cell.measurement.timing + cell.measurement.cycles
    assert procs and all(p.gauge and p.gauge.workload == "rotl-xor-table-v1" and (p.gauge.per_iteration() > 0).all()
                         for p in procs)
    assert {p.gauge.unit for p in cell.measurement.timing} == {"ns"}
    df = results.load(d, tmp_path / "results")
    timed = df[df.metric.isin(["encrypt_speed", "ekey"]) & ~df.below_resolution]
    assert len(timed) >= 2 and (timed.gauge_relative > 0).all()
    # the smoke profile's few processes cannot bound a median at 95 %: ends unknown (NaN) or around the figure
    assert ((timed.gauge_relative_low <= timed.gauge_relative) | timed.gauge_relative_low.isna()).all()
    assert ((timed.gauge_relative <= timed.gauge_relative_high) | timed.gauge_relative_high.isna()).all()


def test_compare_and_history_show_the_gauge_relative_figures_beside_the_absolute(tmp_path):
    from lab import compare, history

    rd = tmp_path / "results"
    runs = []
    for machine in (1.0, 1.04, 1.0):  # the middle run on a machine 4 % slower; the same build in all three
        timing, cycles = _processes([machine * f for f in (1.0, 1.05, 1.1)], [2.0 * machine * f for f in
                                                                              (1.0, 1.05, 1.1)])
        runs.append(synth.write_run(rd, [synth.cell("serpent", "ref", key_sizes=(128,), timing=timing,
                                                    cycles=cycles)], reference_speed=False))  # raw figures
    t = compare.compare_runs(rd, str(runs[0]), str(runs[1]), metrics=["encrypt_speed"])
    (row,) = t.rows
    assert row.speedup == pytest.approx(1 / 1.04, rel=1e-3) and row.gauge == pytest.approx(1.0, abs=1e-3)
    text = compare.format_table(t)
    assert "gauge-relative B vs A" in text.splitlines()[0] and "geometric mean 1.000" in text
    df = history.load(rd)
    line = history.gauge_line(history.noise_gauge(df, ("encrypt_speed",)))
    assert "spread p50 4.00 %" in line and "relative to the machine-speed gauge (1 of them): p50 0.00 %" in line
    page = history.write_site(df, [], history.noise_gauge(df), tmp_path / "reports").read_text()
    assert "encrypt_speed, 128-bit key relative to the machine-speed gauge" in page  # beside the absolute one


def test_the_cycles_program_takes_long_samples_of_a_call_much_longer_than_a_sample(fixture_lab, tmp_path):
    """--long-samples (the profile's long_samples) is the fewest samples of an operation whose call lasts much
    longer than a sample (LONG_CALL = 4 sample lengths): Encrypt-32768 of DES (about a millisecond) with 20 rounds
    of 10 us fills LONG_FILL = 16 sample lengths a round, 3.2 ms, in fewer than 6 calls, so it takes exactly 6; the
    short operations all 20; the gauge has a sample per round to pair them with.  With 200 rounds of 30 us (96 ms to
    fill) it takes more than 6 and fewer than 200 for any call of 0.48 to 16 ms: DES's is about 1 ms on the Intel
    VM and 2.3 on the AMD one, and the sizing reading (the better of two calls) may be disturbed by load; the
    window is the mechanism's (R x LONG_FILL x U / t between L and R), wide enough for a reading slowed 7-fold.
    (64 rounds, a 0.48-5.1 ms window, failed once with CI's suite and another suite on both cores: 6 samples.)"""
    import subprocess

    from lab.run import RunRequest, run

    m = tmp_path / "matrix.yaml"
    m.write_text("ciphers: [des]\ntoolchains: [gcc-O3]\ntargets: [host]\nprofile: smoke\n")
    run(fixture_lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=tmp_path / "build",
                                icount=False))
    (program,) = (tmp_path / "build").rglob("cycles")
    out = subprocess.run([str(program), "--impl", "des", "--key-bits", "64", "--sizes", "1,32768", "--samples", "20",
                          "--sample-us", "10", "--long-samples", "6"], capture_output=True, text=True, check=True).stdout
    records = protocol.read(Completed([str(program)], 0, out, "", 0.1), "cycles")
    taken = {(r.op, r.n): len(r.deltas) for r in protocol.of(records, protocol.CyclesRecord)}
    assert taken[("encrypt", 32768)] == taken[("decrypt", 32768)] == 6
    assert taken[("encrypt", 1)] == taken[("ekey", 1)] == 20
    (g,) = protocol.of(records, protocol.GaugeRecord)
    assert len(g.samples) == 20
    # with 64 calls per sample (--calls), Encrypt-128 samples last about 0.5 ms, 25 times a sample, but each call
    # about 8 us: they were not disturbed, and keep every round; Encrypt-32768's calls of a millisecond do not
    out = subprocess.run([str(program), "--impl", "des", "--key-bits", "64", "--sizes", "128,32768", "--samples", "20",
                          "--sample-us", "20", "--long-samples", "6", "--calls", "64"],
                         capture_output=True, text=True, check=True).stdout
    records = protocol.read(Completed([str(program)], 0, out, "", 0.1), "cycles")
    taken = {(r.op, r.n): (r.calls, len(r.deltas)) for r in protocol.of(records, protocol.CyclesRecord)}
    assert taken[("encrypt", 128)] == taken[("decrypt", 128)] == (64, 20)
    assert taken[("encrypt", 32768)] == taken[("decrypt", 32768)] == (64, 6)
    out = subprocess.run([str(program), "--impl", "des", "--key-bits", "64", "--sizes", "1,32768", "--samples", "200",
                          "--sample-us", "30", "--long-samples", "6"], capture_output=True, text=True, check=True).stdout
    records = protocol.read(Completed([str(program)], 0, out, "", 0.1), "cycles")
    taken = {(r.op, r.n): len(r.deltas) for r in protocol.of(records, protocol.CyclesRecord)}
    assert 6 < taken[("encrypt", 32768)] < 200 and 6 < taken[("decrypt", 32768)] < 200
    assert taken[("encrypt", 1)] == 200


def test_compares_gauge_path_orients_costs_and_speeds_and_leaves_a_side_without_a_gauge_out(tmp_path):
    """B's code 10 % faster on a machine 4 % slower: absolute speed 1.1 / 1.04 = 1.0577 at the speed each run ran
    at; relative to the gauge 1.1 for speeds AND for costs (a cost's ratio turned over, A/B); a run without a gauge
    on one side: NaN.  At the machine's reference speed (lab/speed.py) the absolute figures say 1.1 too."""
    rd = tmp_path / "results"
    layout = (1.0, 1.05, 1.1)

    def run(machine: float, code: float, gauged: bool = True, at_reference: bool = False, into=rd):
        timing, cycles = _processes([machine * code * f for f in layout],
                                    [2.0 * machine * f for f in layout] if gauged else None)
        return synth.write_run(into, [synth.cell("serpent", "ref", key_sizes=(128,), timing=timing, cycles=cycles)],
                               reference_speed=at_reference)

    ref = tmp_path / "at-reference"
    a2, b2 = run(1.0, 1.0, at_reference=True, into=ref), run(1.04, 1 / 1.1, at_reference=True, into=ref)
    for r in compare.compare_runs(ref, str(a2), str(b2), metrics=["encrypt_speed", "encrypt_per_block", "ekey"]).rows:
        assert r.speedup == pytest.approx(1.1, rel=2e-3) and r.gauge == pytest.approx(1.1, rel=2e-3), r.metric

    a, b, c = run(1.0, 1.0), run(1.04, 1 / 1.1), run(1.04, 1 / 1.1, gauged=False)
    t = compare.compare_runs(rd, str(a), str(b), metrics=["encrypt_speed", "encrypt_per_block", "ekey"])
    rows = {r.metric: r for r in t.rows}
    assert set(rows) == {"encrypt_speed", "encrypt_per_block", "ekey"}
    for m, r in rows.items():
        assert r.speedup == pytest.approx(1.1 / 1.04, rel=2e-3), m
        assert r.gauge == pytest.approx(1.1, rel=2e-3), m
    t2 = compare.compare_runs(rd, str(a), str(c), metrics=["encrypt_speed", "ekey"])
    assert t2.rows and all(math.isnan(r.gauge) for r in t2.rows)
    assert "gauge-relative" not in compare.format_table(t2).splitlines()[0]
