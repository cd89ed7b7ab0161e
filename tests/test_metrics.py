"""One metric table (lab/metrics.py): every metric a stored run carries is a row of it, and what each module
judges comes from it."""

from __future__ import annotations

import pytest

from lab import calibration, compare, history, metrics, quantities, results, trends

from . import synth


def test_every_stored_metric_is_a_row_and_says_which_way_is_better(tmp_path):
    icount = [{"key_size": 128, "op": op, "n": n, "calls": 1, "counter": "qemu-insn-region", "unit": "guest_insns",
               "deltas": [c]} for op, n, c in [("null", 1, 0), ("ekey", 1, 900), ("dkey", 1, 950),
                                               ("encrypt", 128, 128 * 300), ("decrypt", 128, 128 * 310)]]
    cycles = synth.layout_cycles([1.0, 1.01, 1.02], 40, lambda d: [d, d + 3],
                                 {("null", 1): (1, [40, 41]), ("ekey", 1): (1, 900.0), ("dkey", 1): (1, 950.0),
                                  ("init", 1): (1, 100.0), ("encrypt", 128): (1, 300.0), ("decrypt", 128): (1, 310.0)})
    rec = synth.cell("serpent", "ref", key_sizes=(128,), timing=synth.steady_timing(150, 160, 400, [1.0, 1.01]),
                     cycles=cycles, icount=icount)
    d = synth.write_run(tmp_path / "results", [rec])
    df = results.load(d, tmp_path / "results")
    stored = set(df.metric.unique())
    assert {"encrypt_speed", "ekey", "encrypt_per_block", "insn_ekey", "table_bytes"} <= stored
    assert stored <= set(metrics.BY_NAME)
    assert set(results.METRICS) == set(metrics.BY_NAME)
    for m in stored:
        assert metrics.higher_is_better(m) == m.endswith("speed") or metrics.get(m).kind == "fact"


def test_the_modules_read_the_table():
    assert quantities.SPEED_METRICS == {"encrypt": "encrypt_speed", "decrypt": "decrypt_speed",
                                        "key_setup": "key_setup_speed"}
    assert quantities.CYCLE_METRICS["encrypt"] == "encrypt_per_block" and quantities.CYCLE_METRICS["null"] == \
        "null_overhead"
    assert compare.DEFAULT_METRICS == calibration.TIMED == metrics.HEADLINE
    assert "init" not in metrics.HEADLINE and "null_overhead" not in metrics.HEADLINE
    assert trends.EXACT == {"encrypt_speed": "insn_encrypt_per_block", "decrypt_speed": "insn_decrypt_per_block",
                            "key_setup_speed": "insn_ekey"}
    assert history.DEFAULT_METRICS[-1] == "insn_encrypt_per_block"
    assert not metrics.get("null_overhead").judged and metrics.get("init").judged
    with pytest.raises(KeyError, match="unknown metric 'speed'"):
        metrics.get("speed")
