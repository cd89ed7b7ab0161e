"""lab.compare on synthetic runs with known answers: orientation of ratios, the noise threshold, the geometric
mean, exact instruction counts, toolchains within one run."""

from __future__ import annotations

import math

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
