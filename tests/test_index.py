"""The results index (lab/index.py): a run's tidy table stored beside cells.jsonl equals a fresh recomputation
from the raw samples, loading uses it, and anything that changes the raw data or the code makes it stale."""

from __future__ import annotations

import os
import shutil
import time

import pandas as pd
import pytest

from lab import index, results

from . import synth
from .test_values_separating import _cell


@pytest.fixture
def run(tmp_path):
    cells = [_cell("serpent", "ref", tc, 150.0, 800.0) for tc in ("gcc-O3", "clang-O3")] + \
        [_cell("rc6", "ref", "gcc-O3", 200.0, 100.0, hit=5.0)]
    return synth.write_run(tmp_path / "results", cells), tmp_path / "results"


def test_a_finished_run_has_its_index_and_it_equals_a_fresh_recomputation(run):
    d, rd = run
    assert (d / index.FILE).is_file()  # written when the run closed
    stored = results.load(d, rd)
    fresh = results.with_rows(results.computed_rows(d))
    # the per-process values stay an Arrow list column in the loaded frame: compared element by element
    assert [v if index.has_values(v) else None for v in stored.per_process] == fresh.per_process.tolist()
    pd.testing.assert_frame_equal(stored.drop(columns="per_process").reset_index(drop=True),
                                  fresh.drop(columns="per_process").reset_index(drop=True), check_dtype=False)
    assert len(stored) > 50 and sum(map(index.has_values, stored.per_process)) > 30
    assert isinstance(stored.per_process.dtype, pd.ArrowDtype)  # no Python list made for rows nobody reads


def test_loading_uses_the_index_and_recomputes_nothing(run, monkeypatch):
    d, rd = run
    before = results.load(d, rd)

    def boom(*a, **k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(results, "cell_rows", boom)
    monkeypatch.setattr(results, "read_run", boom)
    pd.testing.assert_frame_equal(results.load(d, rd), before)  # neither the records nor the samples were read


def test_a_changed_run_or_code_makes_the_index_stale(run, monkeypatch):
    d, rd = run
    assert index.read(d, results.VERSION) is not None
    assert index.read(d, results.VERSION + 1) is None  # another results format
    st = (d / "cells.jsonl").stat()
    os.utime(d / "cells.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new file time: not a change
    assert index.read(d, results.VERSION) is not None
    with open(d / "cells.jsonl", "a") as f:
        f.write("\n")  # the raw data changed
    assert index.read(d, results.VERSION) is None
    results.load(d, rd)  # recomputed, and the index written anew
    assert index.read(d, results.VERSION) is not None
    monkeypatch.setattr(index, "code_hash", lambda: "another")  # the code that computes the rows changed
    assert index.read(d, results.VERSION) is None


def test_a_raw_file_changed_behind_an_old_file_time_or_size_is_still_a_change(run):
    """The content hash is remembered per file, size and file time: a change that keeps the size (a new time) or
    the time (a new size) is read again, and makes the index stale."""
    d, _ = run
    raw = d / "cells.jsonl"
    assert index.read(d, results.VERSION) is not None
    st = raw.stat()
    data = raw.read_bytes()
    raw.write_bytes(data.replace(b"{", b"[", 1))  # the same size
    os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert raw.stat().st_size == st.st_size and index.read(d, results.VERSION) is None
    raw.write_bytes(data)
    os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert index.read(d, results.VERSION) is not None  # as it was
    raw.write_bytes(data + b"\n")  # another size, behind the old time
    os.utime(raw, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert index.read(d, results.VERSION) is None

def test_the_code_hash_follows_code_not_prose():
    src = '''"""A module."""
import math


def f(x):
    """Twice x."""
    return 2 * x  # doubled
'''
    same = [src.replace("# doubled", "# twice"), src.replace("Twice x.", "Two times x."),
            src.replace("import math\n", "import math\n\n"), src.replace('"""A module."""\n', "")]
    other = [src.replace("2 * x", "3 * x"), src.replace("(x)", "(y)").replace("* x", "* y"),
             src.replace("import math", "import cmath"), src.replace('"""Twice x."""', '"""Twice x."""\n    x = -x')]
    assert all(index._code(s) == index._code(src) for s in same)
    assert all(index._code(s) != index._code(src) for s in other)
    assert index._code('def g():\n    """Only a docstring."""\n') != index._code("def g():\n    return 1\n")


def test_a_results_folder_that_cannot_be_written_still_loads(run, monkeypatch):
    d, rd = run
    (d / index.FILE).unlink()

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index.pq, "write_table", full)  # root ignores a read-only folder: fail the write itself
    assert not results.load(d, rd).empty and not (d / index.FILE).exists()
    assert not list(d.glob("*.tmp"))


def test_many_runs_load_in_their_order_also_when_one_is_recomputed(tmp_path):
    rd = tmp_path / "results"
    dirs = [synth.write_run(rd, [_cell("serpent", "ref", "gcc-O3", 150.0 + i, 800.0)]) for i in range(3)]
    (dirs[1] / index.FILE).unlink()  # the middle run has no index: computed, indexed, and still in the middle
    df = results.load(list(reversed(dirs)), rd)
    assert list(dict.fromkeys(df.run_id)) == [d.name for d in reversed(dirs)]
    assert (dirs[1] / index.FILE).is_file()
    assert df.groupby("run_id", sort=False).size().nunique() == 1


def _three_runs(tmp_path):
    rd = tmp_path / "results"
    return rd, [synth.write_run(rd, [_cell("serpent", "ref", "gcc-O3", 150.0 + 10 * i, 800.0)]) for i in range(3)]


def test_a_second_load_of_the_same_runs_reads_one_combined_file(tmp_path, monkeypatch):
    rd, dirs = _three_runs(tmp_path)
    first = results.load(dirs, rd)
    assert (rd / index.COMBINED).is_file()

    def boom(*a, **k):
        raise AssertionError("read run by run")

    monkeypatch.setattr(index, "read_many", boom)
    monkeypatch.setattr(results, "read_run", boom)
    again = results.load(dirs, rd)
    pd.testing.assert_frame_equal(again, first)
    # a subset, in another order: the same file, its rows taken in the order asked
    sub = results.load([dirs[2], dirs[0]], rd)
    assert list(dict.fromkeys(sub.run_id)) == [dirs[2].name, dirs[0].name]
    pd.testing.assert_frame_equal(sub.reset_index(drop=True), pd.concat(
        [first[first.run_id == dirs[2].name], first[first.run_id == dirs[0].name]]).reset_index(drop=True))


def test_the_combined_file_is_stale_when_a_run_or_the_code_changes(tmp_path, monkeypatch):
    rd, dirs = _three_runs(tmp_path)
    results.load(dirs, rd)
    cols = list(results.COLUMNS)
    assert index.read_combined(rd, dirs, results.VERSION, cols) is not None
    assert index.read_combined(rd, dirs, results.VERSION + 1, cols) is None  # another results format
    assert index.read_combined(rd, [*dirs, tmp_path / "elsewhere"], results.VERSION, cols) is None  # a run not in it
    with open(dirs[1] / "cells.jsonl", "a") as f:
        f.write("\n")  # one run's raw data changed
    assert index.read_combined(rd, dirs, results.VERSION, cols) is None
    fresh = results.load(dirs, rd)  # read run by run (that one recomputed), the combined file written anew
    assert index.read_combined(rd, dirs, results.VERSION, cols) is not None
    assert fresh.run_id.nunique() == 3
    monkeypatch.setattr(index, "code_hash", lambda: "another")  # the code that computes the rows changed
    assert index.read_combined(rd, dirs, results.VERSION, cols) is None


def test_a_copied_run_loads_through_its_index_without_recomputing(run, tmp_path, monkeypatch):
    """cp -r (or a clone) gives every file a new time; the index belongs to the content, not to file times."""
    d, rd = run
    before = results.load(d, rd)
    copy = tmp_path / "copied" / d.parent.name / d.name
    shutil.copytree(d, copy)  # new file times
    later = time.time() + 3600
    for f in copy.iterdir():
        os.utime(f, (later, later))

    def boom(*a, **k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(results, "cell_rows", boom)
    pd.testing.assert_frame_equal(results.load(copy, tmp_path / "copied"), before)


def test_the_same_run_in_three_folders_loads_the_same_rows_every_time(run, tmp_path):
    d, _ = run
    rd = tmp_path / "three"
    dirs = []
    for machine in ("a", "b", "c"):
        dirs.append(rd / machine / d.name)
        shutil.copytree(d, dirs[-1])
    one = len(results.load(d, run[1]))
    counts = [len(results.load(dirs, rd)) for _ in range(3)] + [len(results.load("all", rd)) for _ in range(2)]
    assert counts == [3 * one] * 5 and one > 50


def test_a_suffix_a_prefix_and_one_run_of_the_combined_file_are_exactly_their_rows(tmp_path, monkeypatch):
    """Runs already in order but not all of them (the last two, the first two, the middle one): only their rows,
    never the combined file whole (a suffix's ranks, -1 then 0 and 1, are already non-decreasing)."""
    rd, dirs = _three_runs(tmp_path)
    first = results.load(dirs, rd)
    monkeypatch.setattr(results, "read_run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("run by run")))
    for part in ([dirs[1], dirs[2]], [dirs[0], dirs[1]], [dirs[1]]):
        got = results.load(part, rd)
        want = pd.concat([first[first.run_id == d.name] for d in part])
        assert list(dict.fromkeys(got.run_id)) == [d.name for d in part]
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))


def test_the_combined_file_gives_the_columns_asked_and_nothing_from_a_file_it_did_not_write(tmp_path):
    """read_combined: only the columns asked, in their order; None for a column the file lacks, and for a file of
    the same rows without the lab's metadata, with another key's, or with the lab's key but no runs' stamps."""
    import json

    import pyarrow.parquet as pq

    rd, dirs = _three_runs(tmp_path)
    first = results.load(dirs, rd)
    got = index.read_combined(rd, [dirs[2], dirs[0]], results.VERSION, ["estimate", "run_id"])
    assert got.column_names == ["estimate", "run_id"]
    want = pd.concat([first[first.run_id == d.name] for d in (dirs[2], dirs[0])])
    assert got.column("estimate").to_pylist() == want.estimate.tolist()
    assert index.read_combined(rd, dirs, results.VERSION, ["run_id", "no_such_column"]) is None
    cols = list(results.COLUMNS)
    table = pq.read_table(rd / index.COMBINED)
    for meta in (None, {b"other": b"{}"}, {b"cipherlab-index": json.dumps({"code": "x"}).encode()}):
        pq.write_table(table.replace_schema_metadata(meta), rd / index.COMBINED)  # the rows, without the runs' stamps
        assert pq.read_schema(rd / index.COMBINED).names == table.column_names
        assert index.read_combined(rd, dirs, results.VERSION, cols) is None


def _frame_run(rd, name, df):
    """A run folder holding only an index of `df` (no raw files: its stamp names none)."""
    d = rd / name
    d.mkdir(parents=True)
    assert index.write(d, df, results.VERSION) == d / index.FILE
    return d


def test_many_runs_read_as_one_table_with_their_columns_unified(tmp_path):
    """read_many: the current runs' rows in their order, only the columns asked, a missing or unstamped index
    stale (and the runs after it still read); a column all null in one run, or whole numbers in one and
    fractions in another, takes the type that holds both."""
    import pyarrow.parquet as pq

    rd = tmp_path / "results"
    a = _frame_run(rd, "a", pd.DataFrame({"run_id": ["a", "a"], "estimate": [1.0, 2.0], "n_blocks": [128, 16],
                                          "profile": [None, None], "extra": [0, 0]}))
    missing = rd / "missing"
    missing.mkdir()
    unstamped = _frame_run(rd, "unstamped", pd.DataFrame({"run_id": ["u"], "estimate": [9.0], "n_blocks": [1],
                                                          "profile": ["x"]}))
    table = pq.read_table(unstamped / index.FILE)
    pq.write_table(table.replace_schema_metadata(None), unstamped / index.FILE)  # rows without the lab's stamp
    assert index.read(unstamped, results.VERSION) is None
    b = _frame_run(rd, "b", pd.DataFrame({"run_id": ["b"], "estimate": [3.0], "n_blocks": [float("nan")],
                                          "profile": ["nist"]}))
    got, stale = index.read_many([a, missing, unstamped, b], results.VERSION, ["run_id", "n_blocks", "profile"])
    assert stale == [missing, unstamped]
    assert got.column_names == ["run_id", "n_blocks", "profile"]
    assert got.to_pydict() == {"run_id": ["a", "a", "b"], "n_blocks": [128.0, 16.0, None],
                               "profile": [None, None, "nist"]}
    back, _ = index.read_many([b, a], results.VERSION, ["run_id"])  # the order asked, whichever file came first
    assert back.column("run_id").to_pylist() == ["b", "a", "a"]
    df = index.to_frame([index.read(a, results.VERSION), index.read(b, results.VERSION)], ["run_id", "n_blocks"])
    assert df.run_id.tolist() == ["a", "a", "b"] and df.n_blocks.tolist()[:2] == [128.0, 16.0]
    assert pd.isna(df.n_blocks.iloc[2])
    assert index.to_frame([], ["run_id", "n_blocks"]).columns.tolist() == ["run_id", "n_blocks"]


def test_an_index_holds_the_frames_columns_whatever_its_row_labels(tmp_path):
    df = pd.DataFrame({"run_id": ["r", "r"], "estimate": [3.0, 1.0]}, index=[7, 3])  # as left by a filter
    d = _frame_run(tmp_path / "results", "r", df)
    assert index.read(d, results.VERSION).to_pydict() == {"run_id": ["r", "r"], "estimate": [3.0, 1.0]}


def test_the_combined_file_that_cannot_be_written_leaves_nothing_and_loads(tmp_path, monkeypatch):
    rd, dirs = _three_runs(tmp_path)
    before = results.load(dirs[0], rd)

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index.pq, "write_table", full)
    df = results.load(dirs, rd)
    assert list(dict.fromkeys(df.run_id)) == [d.name for d in dirs] and len(df) == 3 * len(before)
    assert not (rd / index.COMBINED).exists() and not list(rd.glob("*.tmp"))


def test_the_combined_file_read_in_its_own_order_takes_no_rows(tmp_path, monkeypatch):
    """Exactly the runs of the combined file, in its order: the table as read (a copy of every row of a large
    file is what the combined file saves); any other choice or order takes its rows."""
    import pyarrow

    rd, dirs = _three_runs(tmp_path)
    results.load(dirs, rd)

    class NoTake:
        def __getattr__(self, name):
            if name == "array":
                raise AssertionError("rows taken")
            return getattr(pyarrow, name)

    monkeypatch.setattr(index, "pa", NoTake())
    cols = list(results.COLUMNS)
    assert index.read_combined(rd, dirs, results.VERSION, cols).num_rows > 0
    for other in ([dirs[1], dirs[0], dirs[2]], dirs[1:]):
        with pytest.raises(AssertionError, match="rows taken"):
            index.read_combined(rd, other, results.VERSION, cols)
