"""Versioned result records, and their tidy (long-format) DataFrame.

A run is a folder ``results/<run-id>/`` with

* ``run.json``    metadata stored once for the run (format version, machine,
                  profile, matrix, toolchains with compiler versions, targets,
                  git revision, backend);
* ``cells.jsonl`` one JSON record per cell, appended as soon as the cell is
                  done, so an interrupted run keeps every finished cell.

Format history (``version``):
  1  first version (2026-11): cells with build/kat/timing/cycles raw data.

:func:`load` turns runs into one row per measured quantity; the columns are
documented in :data:`COLUMNS` (and in the README).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import pandas as pd

from . import stats

FORMAT = "cipherlab-results"
VERSION = 1

COLUMNS = {
    "run_id": "the run's folder name under results/",
    "cell": "cipher/implementation@toolchain@target",
    "cipher": "cipher folder name (rijndael, rc6, ...)",
    "display": "cipher name as in NIST's tables",
    "implementation": "strategy name (ttable, ref, ...)",
    "label": "row label for tables (display, or e.g. DFC-64)",
    "round1": "True for the 15 AES round-1 candidates",
    "block_bits": "block size in bits, as the implementation reports it",
    "toolchain": "compiler profile name (toolchains/<name>.yaml)",
    "target": "target name (targets/<name>.yaml)",
    "emulated": "True when the binary ran under an emulator (never ranked with hardware)",
    "status": "cell status: ok, build_failed, kat_failed, crashed, timeout, unavailable, measure_failed",
    "metric": "what was measured (see METRICS)",
    "key_size": "key size in bits (NaN for per-implementation facts)",
    "n_blocks": "blocks per call for per-block cycle metrics (NaN otherwise)",
    "unit": "unit of value/median/std/min/max",
    "value": "NIST value: mean of the samples within 3 sd of the median, in unit",
    "median": "median, in unit",
    "std": "standard deviation of all samples, in unit",
    "min": "smallest sample, in unit",
    "max": "largest sample, in unit",
    "n": "samples kept for value",
    "n_total": "samples taken",
    "counter": "timer or cycle counter used (clock-monotonic, x86-tsc-lfence, ...)",
    "compiler": "compiler executable",
    "compiler_version": "first line of the compiler's --version",
    "cflags": "exact compiler flags, space separated",
    "profile": "measurement profile name",
    "host": "machine hostname",
    "cpu_model": "CPU model of the machine",
}

METRICS = {
    "encrypt_speed": "Kbit/s encrypting (timing program)",
    "decrypt_speed": "Kbit/s decrypting (timing program)",
    "key_setup_speed": "keys/s; a key = mean of one encryption and one decryption key setup",
    "ekey": "counter units per encryption key setup, overhead subtracted",
    "dkey": "counter units per decryption key setup, overhead subtracted",
    "init": "counter units per cipherInit, overhead subtracted",
    "encrypt_per_block": "counter units per block encrypting n_blocks in one call, overhead subtracted",
    "decrypt_per_block": "counter units per block decrypting n_blocks in one call, overhead subtracted",
    "null_overhead": "counter units of an empty call (Lipmaa's null function)",
    "insn_ekey, insn_dkey, insn_init, insn_encrypt_per_block, insn_decrypt_per_block, insn_null_overhead":
        "the same quantities in guest instructions, counted by qemu-user + the icount plugin (deterministic)",
    "table_bytes": "static table bytes of the implementation",
    "key_schedule_bytes": "bytes of one key schedule",
    "code_bytes": "text+rodata bytes of the implementation's objects",
    "kat_passed": "known-answer records passed",
    "kat_failed": "known-answer records failed",
}


def new_run_id(tag: str) -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + (f"-{tag}" if tag else "")


class RunWriter:
    """Writes one run folder; cells are appended and flushed one by one."""

    def __init__(self, results_dir: Path, run_id: str, meta: dict):
        self.dir = Path(results_dir) / run_id
        self.dir.mkdir(parents=True, exist_ok=False)
        self.meta = {"format": FORMAT, "version": VERSION, "run_id": run_id,
                     "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), **meta}
        self._write_meta()
        self._cells = open(self.dir / "cells.jsonl", "a")

    def _write_meta(self) -> None:
        tmp = self.dir / "run.json.tmp"
        tmp.write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n")
        tmp.replace(self.dir / "run.json")

    def add_cell(self, record: dict) -> None:
        self._cells.write(json.dumps(record, sort_keys=True) + "\n")
        self._cells.flush()

    def close(self, **extra) -> None:
        self._cells.close()
        self.meta.update(extra)
        self.meta["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._write_meta()


# ------------------------------------------------------------------ reading
def read_run(run_dir: Path) -> tuple[dict, list[dict]]:
    run_dir = Path(run_dir)
    meta = json.loads((run_dir / "run.json").read_text())
    if meta.get("format") != FORMAT:
        raise ValueError(f"{run_dir}/run.json: not a cipherlab results file")
    if meta.get("version", 0) > VERSION:
        raise ValueError(f"{run_dir}/run.json: format version {meta['version']} is newer than this lab ({VERSION})")
    cells = []
    path = run_dir / "cells.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                try:
                    cells.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut by an interrupted run
    return meta, cells


def run_dirs(results_dir: Path) -> list[Path]:
    return sorted(p.parent for p in Path(results_dir).glob("*/run.json"))


def resolve_runs(results_dir: Path, runs: Iterable[str | Path] | str | Path | None) -> list[Path]:
    """Run folders named by id or path; None = the latest run; 'all' = every run."""
    results_dir = Path(results_dir)
    if runs is None or runs == "latest":
        all_runs = run_dirs(results_dir)
        if not all_runs:
            raise FileNotFoundError(f"no runs under {results_dir}; run `invoke matrix.run` first")
        return [all_runs[-1]]
    if runs == "all":
        return run_dirs(results_dir)
    if isinstance(runs, (str, Path)):
        runs = [runs]
    out = []
    for r in runs:
        p = Path(r)
        if not (p / "run.json").exists():
            p = results_dir / str(r)
        if not (p / "run.json").exists():
            raise FileNotFoundError(f"no run '{r}' (looked for {p}/run.json)")
        out.append(p)
    return out


def _base(meta: dict, cell: dict) -> dict:
    tc = meta.get("toolchains", {}).get(cell["toolchain"], {})
    build = cell.get("build") or {}
    return {
        "run_id": meta["run_id"],
        "cell": cell["cell"],
        "cipher": cell["cipher"],
        "display": cell.get("display", cell["cipher"]),
        "implementation": cell["implementation"],
        "label": cell.get("label") or cell.get("display", cell["cipher"]),
        "round1": cell.get("round1", False),
        "block_bits": 8 * (cell.get("impl_facts") or {}).get("block_bytes", 0) or None,
        "toolchain": cell["toolchain"],
        "target": cell["target"],
        "emulated": cell.get("emulated", False),
        "status": cell["status"],
        "compiler": build.get("compiler"),
        "compiler_version": build.get("compiler_version") or tc.get("version"),
        "cflags": " ".join(build.get("cflags", [])),
        "profile": meta.get("profile", {}).get("name"),
        "host": meta.get("machine", {}).get("hostname"),
        "cpu_model": meta.get("machine", {}).get("cpu_model"),
    }


def _row(base: dict, metric: str, unit: str, s: stats.Summary | None, *, key_size=None, n_blocks=None,
         counter=None, value=None) -> dict:
    row = {**base, "metric": metric, "key_size": key_size, "n_blocks": n_blocks, "unit": unit, "counter": counter}
    if s is not None:
        row.update(value=s.value, median=s.median, std=s.std, min=s.minimum, max=s.maximum, n=s.n, n_total=s.n_total)
    else:
        row.update(value=value, median=value, std=0.0, min=value, max=value, n=1, n_total=1)
    return row


def cell_rows(meta: dict, cell: dict) -> list[dict]:
    """All measured quantities of one cell record."""
    base = _base(meta, cell)
    rows: list[dict] = []
    facts = cell.get("impl_facts") or {}
    if facts:
        rows.append(_row(base, "table_bytes", "bytes", None, value=facts.get("table_bytes")))
        rows.append(_row(base, "key_schedule_bytes", "bytes", None, value=facts.get("ks_bytes")))
    code = (cell.get("build") or {}).get("code_bytes") or {}
    if code:
        rows.append(_row(base, "code_bytes", "bytes", None, value=code.get("text", 0) + code.get("rodata", 0)))
    kat = cell.get("kat") or {}
    if kat:
        rows.append(_row(base, "kat_passed", "records", None, value=kat.get("passed", 0)))
        rows.append(_row(base, "kat_failed", "records", None, value=kat.get("failed", 0)))

    block_bits = base["block_bits"] or 128
    for rec in cell.get("timing") or []:
        ks, counter = rec["key_size"], rec.get("timer", "clock-monotonic")
        bits = rec["blocks"] * block_bits / 1000.0  # Kbit per sample
        rows.append(_row(base, "encrypt_speed", "Kbit/s", stats.speed_summary(rec["encrypt"], bits),
                         key_size=ks, counter=counter))
        rows.append(_row(base, "decrypt_speed", "Kbit/s", stats.speed_summary(rec["decrypt"], bits),
                         key_size=ks, counter=counter))
        rows.append(_row(base, "key_setup_speed", "keys/s",
                         stats.speed_summary(rec["key_setup"], 2 * rec["key_pairs"]), key_size=ks, counter=counter))

    rows += _counter_rows(base, (cell.get("cycles") or {}).get("ops") or [], prefix="")
    rows += _counter_rows(base, (cell.get("icount") or {}).get("ops") or [], prefix="insn_")
    return rows


def _counter_rows(base: dict, ops: list[dict], prefix: str) -> list[dict]:
    """Rows of the cycle-counting program's records, the empty-call overhead subtracted.

    prefix "" for the cycle counter (TSC ticks, ns), "insn_" for guest-instruction counts."""
    rows = []
    overhead: dict[int, float] = {}
    for op in ops:
        if op["op"] == "null":
            overhead[op["key_size"]] = stats.median(op["deltas"])
            rows.append(_row(base, prefix + "null_overhead", op["unit"], stats.nist_summary(op["deltas"]),
                             key_size=op["key_size"], counter=op["counter"]))
    for op in ops:
        if op["op"] == "null":
            continue
        ov = overhead.get(op["key_size"], 0.0)
        n = op["n"]
        per = [(d - ov) / n for d in op["deltas"]]
        metric = {"encrypt": "encrypt_per_block", "decrypt": "decrypt_per_block"}.get(op["op"], op["op"])
        rows.append(_row(base, prefix + metric, op["unit"], stats.nist_summary(per), key_size=op["key_size"],
                         n_blocks=n if metric.endswith("per_block") else None, counter=op["counter"]))
    return rows


def load(runs: Iterable[str | Path] | str | Path | None = None, results_dir: Path | str = "results") -> pd.DataFrame:
    """Long-format DataFrame of the given runs (default: the latest), one row per measured quantity."""
    frames = []
    for d in resolve_runs(Path(results_dir), runs):
        meta, cells = read_run(d)
        rows = [r for c in cells for r in cell_rows(meta, c)]
        frames.append(pd.DataFrame(rows, columns=list(COLUMNS)))
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True)


def load_cells(runs=None, results_dir: Path | str = "results") -> pd.DataFrame:
    """One row per cell with its status and failure reason (also for cells that measured nothing)."""
    rows = []
    for d in resolve_runs(Path(results_dir), runs):
        meta, cells = read_run(d)
        for c in cells:
            kat = c.get("kat") or {}
            rows.append({**_base(meta, c), "reason": c.get("reason"), "kat_passed": kat.get("passed"),
                         "kat_failed": kat.get("failed"), "kat_records": kat.get("records"),
                         "seconds": c.get("seconds")})
    return pd.DataFrame(rows)
