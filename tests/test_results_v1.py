"""Format-1 results (the first version of the lab) still load: their long samples become one process."""

import json

from lab import results


def test_a_format_1_run_loads_with_its_numbers(tmp_path):
    d = tmp_path / "20261122T100000Z-host-quick"
    d.mkdir()
    (d / "run.json").write_text(json.dumps({
        "format": "cipherlab-results", "version": 1, "run_id": d.name, "started": "2026-11-22T10:00:00+00:00",
        "finished": "2026-11-22T10:05:00+00:00", "machine": {"hostname": "old", "cpu_model": "X"},
        "profile": {"name": "quick"}, "toolchains": {"gcc-O3": {"version": "gcc 12"}}, "cells_planned": ["rc6/ref@gcc-O3@host"]}))
    cell = {"cell": "rc6/ref@gcc-O3@host", "cipher": "rc6", "display": "RC6", "implementation": "ref", "label": "RC6",
            "round1": True, "toolchain": "gcc-O3", "target": "host", "emulated": False, "key_sizes": [128],
            "status": "ok", "reason": None, "seconds": 2.0,
            "build": {"compiler": "gcc", "compiler_version": "gcc 12", "cflags": ["-O3"], "code_bytes": {"text": 900,
                                                                                                    "rodata": 100}},
            "impl_facts": {"block_bytes": 16, "ks_bytes": 176, "table_bytes": 0, "key_bits": [128]},
            "kat": {"files": ["rc6.kat"], "records": 10, "passed": 10, "failed": 0},
            "timing": [{"key_size": 128, "blocks": 1000, "key_pairs": 100, "blocks_per_call": 1,
                        "encrypt": [100000, 100000, 100000], "decrypt": [110000] * 3, "key_setup": [50000] * 3}],
            "cycles": {"counter": {"counter": "x86-tsc-lfence", "unit": "tsc_ticks", "ticks_per_second": 2.6e9},
                       "ops": [{"key_size": 128, "op": "null", "n": 1, "counter": "x86-tsc-lfence", "unit": "tsc_ticks",
                                "deltas": [26, 26]},
                               {"key_size": 128, "op": "encrypt", "n": 16, "counter": "x86-tsc-lfence",
                                "unit": "tsc_ticks", "deltas": [1626, 1626]}]}}
    (d / "cells.jsonl").write_text(json.dumps(cell) + "\n")
    meta, cells = results.read_run(d)
    assert meta.version == 1 and meta.status == "finished" and cells[0].measurement.stopped == "single"
    df = results.load(d, tmp_path)
    enc = df[(df.metric == "encrypt_speed")].iloc[0]
    assert enc.estimate == 128 * 1e6 / 100.0  # 1000 blocks in 100000 ns: 100 ns per block
    assert enc.processes == 1 and enc.impl_class == "portable"
    assert df[(df.metric == "encrypt_per_block")].iloc[0].estimate == (1626 - 26) / 16
    assert df[(df.metric == "code_bytes")].iloc[0].estimate == 1000
