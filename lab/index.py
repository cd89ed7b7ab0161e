"""The results index: each run's tidy table (one row per quantity, estimate and interval), stored beside
``cells.jsonl`` as ``quantities.parquet``, so that loading a run recomputes nothing.

It is derived data: the raw samples in ``cells.jsonl`` stay the source of truth.  The file carries in its metadata
the results format version, a hash of the code that computes the rows (the syntax trees of lab/results.py,
quantities.py, stats.py and index.py: comments and docstrings do not count) and a hash of the contents of
``run.json`` and ``cells.jsonl`` (never their file times: a run copied with ``cp -r`` or cloned from a repository
keeps its index); any difference makes it stale, and :func:`read` then returns None so that the
caller recomputes (and, where it can, writes it anew).  Written when a run finishes and whenever a run without a
current index is loaded.  Columnar (Parquet through pyarrow), read in one pass for many runs: :func:`read_many`
checks each file's stamp in its footer and reads all the current files as one dataset; the per-process values stay
an Arrow list column (a Python list is made only for the element a caller looks at).

Reading a thousand small files costs tens of ms each on the lab's VM, whatever their size (a footer and 60 column
chunks apiece),
so a load of several runs also leaves one combined file in the results folder, ``quantities-runs.parquet``: the
rows of exactly those runs, with every run's stamp in its metadata.  The next load of any of those runs reads it
instead (:func:`read_combined`) when the format version, the code hash and every requested run's stamp are still
the same; otherwise the runs are read one by one again and the combined file is written anew.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

FILE = "quantities.parquet"
COMBINED = "quantities-runs.parquet"  # in a results folder: the rows of the runs it last loaded together
_KEY = b"cipherlab-index"


def _code(source: str) -> str:
    """What a module computes: its syntax tree without docstrings (comments, blank lines and line numbers are not
    in a tree), so that an edit to its prose keeps every index current and one to its code does not."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and \
                ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of the code that computes a run's rows: a change to it makes every index stale by itself."""
    h = hashlib.sha256()
    for name in ("results.py", "quantities.py", "stats.py", "index.py"):
        h.update(_code((Path(__file__).parent / name).read_text()).encode())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=4096)
def _content_hash(path: str, size: int, mtime_ns: int) -> str:
    """The hash of a file's bytes, computed once per process for a given size and file time (the key only saves
    re-reading: what is compared is the content)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:32]


def _stamp(run_dir: Path, results_version: int) -> dict:
    """What a run's rows are computed from: the format version, the code and the raw files' contents."""
    out = {"results_version": results_version, "code": code_hash()}
    for name in ("run.json", "cells.jsonl"):
        p = run_dir / name
        try:
            st = p.stat()
            out[name] = _content_hash(str(p.resolve()), st.st_size, st.st_mtime_ns)
        except OSError:
            out[name] = None
    return out


def write(run_dir: Path, df: pd.DataFrame, results_version: int) -> Path | None:
    """Stores a run's tidy table; None when it cannot be written (a read-only results folder: loading still
    works, it recomputes)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({**table.schema.metadata,  # pandas' own, which from_pandas always adds
                                           _KEY: json.dumps(_stamp(run_dir, results_version)).encode()})
    tmp = run_dir / (FILE + ".tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, run_dir / FILE)
    except OSError:
        with contextlib.suppress(OSError):  # also when it was never made
            tmp.unlink()
        return None
    return run_dir / FILE


def _current(stamp_bytes: bytes | None, run_dir: Path, results_version: int) -> bool:
    try:
        return json.loads(stamp_bytes) == _stamp(run_dir, results_version)
    except (TypeError, ValueError):  # no stamp (None), or not one of ours
        return False


def read(run_dir: Path, results_version: int) -> pa.Table | None:
    """The run's stored table, or None when there is none or it is stale (one read: the stamp is in the
    table's own metadata)."""
    try:
        table = pq.read_table(run_dir / FILE)
    except (OSError, pa.ArrowInvalid):
        return None
    return table if _current((table.schema.metadata or {}).get(_KEY), run_dir, results_version) else None


def read_many(run_dirs: list[Path], results_version: int, columns: list[str]) -> tuple[pa.Table | None, list[Path]]:
    """The current tables of many runs as one Arrow table (in the order of `run_dirs`), and the runs whose index is
    missing or stale (the caller computes those).  Each file's footer is read once for its stamp and schema;
    the rows of all current files are then read as one dataset, with the schemas unified (a column that is all
    null in one run takes the type it has in the others)."""
    paths, schemas, stale = [], [], []
    for d in run_dirs:
        try:
            schema = pq.read_schema(d / FILE)
        except (OSError, pa.ArrowInvalid):
            stale.append(d)
            continue
        if _current((schema.metadata or {}).get(_KEY), d, results_version) and set(columns) <= set(schema.names):
            paths.append(str(d / FILE))
            schemas.append(schema.remove_metadata())
        else:
            stale.append(d)
    if not paths:
        return None, stale
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    return ds.dataset(paths, schema=schema).to_table(columns=columns), stale  # Parquet: the dataset's default


def _arrow_lists(t: pa.DataType):
    return pd.ArrowDtype(t) if pa.types.is_list(t) or pa.types.is_large_list(t) else None


def write_combined(results_dir: Path, run_dirs: list[Path], table: pa.Table, results_version: int) -> None:
    """Stores the rows of several runs (table, the runs' rows) as one file of the results folder, stamped with every
    run's stamp; nothing when the folder cannot be written or the runs' ids are not unique (a row names its run by
    id)."""
    ids = [d.name for d in run_dirs]
    if len(set(ids)) != len(ids):
        return
    runs = {os.path.abspath(d): {"run_id": d.name, "stamp": _stamp(d, results_version)} for d in run_dirs}
    table = table.replace_schema_metadata({_KEY: json.dumps({"runs": runs}).encode()})
    tmp = Path(results_dir) / f"{COMBINED}.{os.getpid()}.tmp"  # two loads at once never write one file
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, Path(results_dir) / COMBINED)
    except OSError:
        with contextlib.suppress(OSError):  # also when it was never made
            tmp.unlink()


def read_combined(results_dir: Path, run_dirs: list[Path], results_version: int,
                  columns: list[str]) -> pa.Table | None:
    """The rows of `run_dirs`, in their order, from the results folder's combined file; None when there is none,
    or it lacks one of the runs or a column, or any stamp differs (a run's stamp holds the format version and the
    code hash: then the caller reads the runs one by one)."""
    try:
        pf = pq.ParquetFile(Path(results_dir) / COMBINED)
        runs = json.loads((pf.schema_arrow.metadata or {})[_KEY])["runs"]
    except (OSError, KeyError, pa.ArrowInvalid, ValueError):
        return None
    if not set(columns) <= set(pf.schema_arrow.names):
        return None
    want = {}
    for i, d in enumerate(run_dirs):
        r = runs.get(os.path.abspath(d))
        if r is None or r["stamp"] != json.loads(json.dumps(_stamp(d, results_version))) or r["run_id"] in want:
            return None
        want[r["run_id"]] = i
    table = pf.read(columns=columns)
    # each row's place: its run's position among run_dirs (-1: a run not asked for), rows of a run kept in order
    enc = pc.dictionary_encode(table.column("run_id")).combine_chunks()
    rank = np.array([want.get(x, -1) for x in enc.dictionary.to_pylist()])[np.asarray(enc.indices)]
    if len(rank) and rank.min() >= 0 and (np.diff(rank) >= 0).all():
        return table  # exactly these runs, in this order: nothing to take
    rows = np.nonzero(rank >= 0)[0]
    return table.take(pa.array(rows[np.argsort(rank[rows], kind="stable")]))


def to_frame(tables: list[pa.Table], columns: list[str]) -> pd.DataFrame:
    """Many runs' tables as one DataFrame (one conversion for all).  ``per_process`` stays an Arrow list column
    (``list<double>[pyarrow]``): an element read from it is a Python list, a missing one ``pd.NA``; see
    :func:`has_values`."""
    tables = [t.select(columns) for t in tables if t.num_rows]
    if not tables:
        return pd.DataFrame(columns=columns)
    return pa.concat_tables(tables, promote_options="permissive").to_pandas(types_mapper=_arrow_lists)


def has_values(v) -> bool:
    """True for a row's per-process values (a list, from the index or from a fresh computation); False for a
    row without them (None or pd.NA: facts)."""
    return isinstance(v, (list, tuple, np.ndarray))


__all__ = ["write", "read", "read_many", "read_combined", "write_combined", "to_frame", "has_values", "FILE",
           "COMBINED"]
