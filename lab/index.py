"""The results index: each run's tidy table (one row per quantity, estimate and interval), stored beside
``cells.jsonl`` as ``quantities.parquet``, so that loading a run recomputes nothing.

It is derived data: the raw samples in ``cells.jsonl`` stay the source of truth.  The file carries in its
metadata the results format version, a hash of the code that computes the rows
(lab/results.py, quantities.py, stats.py) and the size and modification time of ``run.json`` and
``cells.jsonl``; any difference makes it stale, and :func:`read` then returns None so that the caller recomputes
(and, where it can, writes it anew).  Written when a run finishes and whenever a run without a current index is
loaded.  Columnar (Parquet through pyarrow), read in one pass for many runs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

FILE = "quantities.parquet"
_KEY = b"cipherlab-index"


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of the code that computes a run's rows: a change to it makes every index stale by itself."""
    h = hashlib.sha256()
    for name in ("results.py", "quantities.py", "stats.py", "index.py"):
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()[:16]


def _stamp(run_dir: Path, results_version: int) -> dict:
    out = {"results_version": results_version, "code": code_hash()}
    for name in ("run.json", "cells.jsonl"):
        try:
            st = (run_dir / name).stat()
            out[name] = [st.st_size, st.st_mtime_ns]
        except OSError:
            out[name] = None
    return out


def write(run_dir: Path, df: pd.DataFrame, results_version: int) -> Path | None:
    """Stores a run's tidy table; None when it cannot be written (a read-only results folder: loading still
    works, it recomputes)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           _KEY: json.dumps(_stamp(run_dir, results_version)).encode()})
    tmp = run_dir / (FILE + ".tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, run_dir / FILE)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return None
    return run_dir / FILE


def read(run_dir: Path, results_version: int) -> pa.Table | None:
    """The run's stored table, or None when there is none or it is stale (one read: the stamp is in the
    table's own metadata)."""
    try:
        table = pq.read_table(run_dir / FILE)
    except (OSError, pa.ArrowInvalid):
        return None
    try:
        stamp = json.loads((table.schema.metadata or {}).get(_KEY, b"{}"))
    except ValueError:
        return None
    return table if stamp == _stamp(run_dir, results_version) else None


def to_frame(tables: list[pa.Table], columns: list[str]) -> pd.DataFrame:
    """Many runs' tables as one DataFrame (one conversion for all)."""
    tables = [t.select(columns) for t in tables if t.num_rows]
    if not tables:
        return pd.DataFrame(columns=columns)
    df = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    # lists come back as numpy arrays: the per-process values as plain lists, as results.cell_rows makes them
    df["per_process"] = df["per_process"].map(lambda v: None if v is None else v.tolist())
    return df


__all__ = ["write", "read", "to_frame", "FILE"]
