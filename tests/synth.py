"""Synthetic runs: cell records made of chosen raw samples, written by the lab's own writer, so the loader and
every report builder can be checked against values computed from the definitions."""

from __future__ import annotations

from pathlib import Path

from lab.results import CellRecord, RunWriter


def timing_process(per_key: dict[int, dict[str, tuple[int, list[int]]]], started: float = 0.0) -> dict:
    """{key_size: {"encrypt"|"decrypt"|"key_setup": (per_sample, [ns...])}} as one timing process."""
    return {"started": started, "seconds": 0.01,
            "key_sizes": {ks: {op: {"per_sample": per, "ns": ns} for op, (per, ns) in ops.items()}
                          for ks, ops in per_key.items()}}


def steady_timing(enc: float, dec: float, key: float, layout, samples: int = 2, blocks: int = 100,
                  pairs: int = 10, key_size: int = 128) -> list[dict]:
    """Timing processes whose samples are all equal within a process: ns per block (encrypt, decrypt) and per key
    pair, each process slower than the best by its factor in `layout` (how a process's memory layout acts)."""
    return [timing_process({key_size: {"encrypt": (blocks, [round(enc * blocks * f)] * samples),
                                       "decrypt": (blocks, [round(dec * blocks * f)] * samples),
                                       "key_setup": (pairs, [round(key * pairs * f)] * samples)}}, started=float(p))
            for p, f in enumerate(layout)]


def cycles_process(ops: dict[tuple[str, int], tuple[int, list[int]]], key_size: int = 128,
                   counter: str = "x86-tsc-lfence", unit: str = "tsc_ticks", started: float = 0.0) -> dict:
    """{(op, n): (calls, [deltas...])} as one cycles process."""
    return {"started": started, "seconds": 0.01, "ticks_per_second": 2.6e9,
            "ops": [{"key_size": key_size, "op": op, "n": n, "calls": calls, "counter": counter, "unit": unit,
                     "deltas": deltas} for (op, n), (calls, deltas) in ops.items()]}


def layout_cycles(layout, overhead: int, spread, ops: dict[tuple[str, int], tuple[int, float | list[int]]]
                  ) -> list[dict]:
    """One cycles process per factor f in `layout` (how much slower than the best each process's layout is).
    ops: {(op, n): (calls, cost)}; a cost in ticks per block (per key pair, per call) stands for the deltas
    spread(round(cost * f * calls * n) + overhead), a sample's best delta and the others; a list of deltas stands
    as given in every process (the empty call)."""
    def deltas(f: float, calls: int, n: int, cost):
        return list(cost) if isinstance(cost, list) else spread(round(cost * f * calls * n) + overhead)
    return [cycles_process({(op, n): (calls, deltas(f, calls, n, cost)) for (op, n), (calls, cost) in ops.items()})
            for f in layout]


def cell(cipher: str, impl: str, toolchain: str = "gcc-O3", target: str = "host", *, display: str | None = None,
         impl_class: str = "portable", round1: bool = True, block_bits: int = 128, key_sizes=(128, 192, 256),
         status: str = "ok", reason: str | None = None, timing: list[dict] | None = None,
         cycles: list[dict] | None = None, table_bytes: int = 1000, ks_bytes: int = 200, code: int = 3000,
         default: bool = True, peer_code: str | None = None, emulated: bool = False, precision: float = 0.02,
         estimator: str = "min", steal: float = 0.0, icount: list[dict] | None = None,
         compiler_version: str = "gcc (synthetic) 12", cflags=("-O3",)) -> dict:
    display = display or cipher.upper()
    rec = {
        "cell": f"{cipher}/{impl}@{toolchain}@{target}", "cipher": cipher, "implementation": impl,
        "impl_class": impl_class, "display": display, "label": display if impl_class != "peer" else
        f"{display} [{impl}]", "round1": round1, "block_bits": block_bits, "key_sizes": list(key_sizes),
        "toolchain": toolchain, "target": target, "emulated": emulated, "machine": "synth", "status": status,
        "reason": reason, "seconds": 1.0, "stages": {"measure": 1.0},
        "impl": {"impl_class": impl_class, "default": default,
                 **({"peer": {"library": impl, "package": "x", "code": peer_code}} if peer_code else {})},
        "build": {"compiler": "gcc", "compiler_version": compiler_version, "cflags": list(cflags), "ldflags": [],
                  "code_bytes": {"text": code - 100, "rodata": 100, "data": 0, "bss": 0}, "cached": True},
        "impl_facts": {"block_bytes": block_bits // 8, "ks_bytes": ks_bytes, "table_bytes": table_bytes,
                       "key_bits": list(key_sizes)},
        "kat": {"files": ["x.kat"], "records": 10, "passed": 10 if status == "ok" else 0,
                "failed": 0 if status == "ok" else 10, "skipped_key_size": 0, "fails": [], "checksums": {},
                "roundtrip_ok": True},
    }
    if timing is not None:
        rec["measurement"] = {
            "timer": "clock-monotonic", "blocks_per_call": 1, "counter": "x86-tsc-lfence", "unit": "tsc_ticks",
            "timing": timing, "cycles": cycles or [], "estimator": estimator, "confidence": 0.95,
            "precision_target": precision, "stopped": "precision", "seconds": 1.0, "cpu": 1,
            "system": {"steal_seconds": steal, "cpu_seconds": 1.0, "steal_fraction": steal, "context_switches": 10}}
    if icount is not None:
        rec["icount"] = {"counter": "qemu-insn-region", "unit": "guest_insns", "emulator": "qemu-x86_64",
                         "ops": icount}
    return CellRecord.model_validate(rec).model_dump()


def toolchain_facts(cc: str = "gcc", reference_tables: list[str] | None = None) -> dict:
    return {"description": cc, "family": cc, "cc": cc, "flags": ["-O3"], "ldflags": [], "imitates": None,
            "notes": [], "reference_tables": reference_tables or [], "version": f"{cc} (synthetic) 1"}


def write_run(results_dir: Path, cells: list[dict], *, toolchains: dict | None = None, planned: int | None = None,
              status: str = "finished", system: dict | None = None, reference_speed: bool = True,
              options: dict | None = None) -> Path:
    """A run folder of these cells, closed as the lab closes one (its gauge groups' references settled:
    lab/speed.py); reference_speed False: a run stored before the reference speed existed (raw figures)."""
    names = sorted({c["toolchain"] for c in cells})
    meta = {
        "machine_id": "synth", "machine": {"hostname": "synth", "cpu_model": "Synthetic CPU", "cores": 2,
                                           "constant_tsc": True, "hypervisor": True, "os": "test", "kernel": "0"},
        "git": {"revision": None, "dirty": False},
        "profile": {"name": "synthetic", "timing": {"blocks_per_call": 1}, "cycles": {"sizes": [1, 16, 128]},
                    "sampling": {"estimator": "min", "confidence": 0.95, "precision": 0.02, "min_processes": 5,
                                 "max_processes": 12, "budget_seconds": 3, "samples": 8, "warmup": 2,
                                 "sample_us": 100}, "per_cipher": {}},
        "matrix": {}, "backend": {"backend": "host"},
        "toolchains": toolchains or {n: toolchain_facts() for n in names},
        "targets": {}, "cells_planned": [c["cell"] for c in cells] + [f"missing/{i}@x@y" for i in
                                                                      range((planned or len(cells)) - len(cells))],
        "fingerprint": {}, "system": system or {}, "options": options or {}}
    w = RunWriter.create(results_dir, meta, tag="synthetic")
    for c in cells:
        w.add_cell(CellRecord.model_validate(c))
    w.close(status)
    if not reference_speed:
        RunWriter(w.dir, w.meta.model_copy(update={"speed_reference": {}})).write_meta()
    return w.dir
