"""Work belongs to its inputs (issue 41): a second unchanged run repeats no known-answer gate, instruction count,
constant-time verdict (the trace check's, dudect's on this CPU) or drill-down evidence; a changed source re-gates
only its own binaries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from lab import memo

from .conftest import ROOT


def _checkout(tmp: Path) -> Path:
    """A checkout whose rc6 sources are a copy (to edit); everything else links to the real one."""
    root = tmp / "checkout"
    root.mkdir()
    (tmp / "shared").symlink_to(ROOT.parent / "shared")
    for entry in ROOT.iterdir():
        if entry.name not in ("c_src", ".git", ".venv", "build", "results", "reports"):
            (root / entry.name).symlink_to(entry)
    (root / "c_src").mkdir()
    for entry in (ROOT / "c_src").iterdir():
        if entry.name != "ciphers":
            (root / "c_src" / entry.name).symlink_to(entry)
    (root / "c_src" / "ciphers").mkdir()
    for entry in (ROOT / "c_src" / "ciphers").iterdir():
        if entry.name == "rc6":
            shutil.copytree(entry, root / "c_src" / "ciphers" / "rc6")
        else:
            (root / "c_src" / "ciphers" / entry.name).symlink_to(entry)
    return root


def _run(root: Path, tmp: Path, plugin: str) -> dict[str, dict]:
    env = {**os.environ, "CIPHERLAB_ROOT": str(root), "CIPHERLAB_LOCK_DIR": str(tmp / "locks"),
           "CIPHERLAB_QEMU_PLUGIN": plugin}
    r = subprocess.run([sys.executable, "-m", "lab", "run", "--ciphers", "rc6,serpent", "--implementations",
                        "default", "--toolchains", "gcc-O3", "--profile", "smoke", "--ct", "--no-report",
                        "--no-progress", "--results-dir", str(tmp / "results"), "--build-dir", str(tmp / "build")],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    latest = sorted(p.parent for p in (tmp / "results").glob("*/*/run.json"))[-1]
    return {c["cipher"]: c for c in map(json.loads, (latest / "cells.jsonl").read_text().splitlines())}


def test_a_second_run_reuses_every_verdict_count_and_evidence_and_a_changed_source_redoes_its_own(tmp_path,
                                                                                                   host_plugin):
    root = _checkout(tmp_path)
    first = _run(root, tmp_path, host_plugin)
    assert all(c["status"] == "ok" and c["reused"] == [] for c in first.values())
    assert all(c["ct"]["verdict"] != "unavailable" for c in first.values())
    second = _run(root, tmp_path, host_plugin)
    assert all(c.get("icount") for c in first.values())
    want = {"kat", "asm", "ct", "dudect", "icount"}
    for cipher, c in second.items():
        assert c["status"] == "ok" and set(c["reused"]) == want, (cipher, c["reused"])
        # the trace's verdict and dudect's on this CPU (a verdict of the binary, not a measurement of the run)
        assert c["ct"] == first[cipher]["ct"] and c["icount"] == first[cipher]["icount"]
        assert c["measurement"]["timing"] != first[cipher]["measurement"]["timing"]  # measuring is redone
    src = root / "c_src" / "ciphers" / "rc6" / "ref.c"
    src.write_text(src.read_text() + "\nint cipherlab_test_changed_binary(void) { return 41; }\n")
    third = _run(root, tmp_path, host_plugin)
    assert third["rc6"]["reused"] == [] and third["rc6"]["stages"]["kat"] > 0  # its binaries changed: all redone
    assert set(third["serpent"]["reused"]) == want
    # the measured programs' hash: what compare's machine shift rests on (the same code in both runs)
    programs = {n: {c: r[c]["build"]["programs"] for c in r} for n, r in (("1", first), ("2", second), ("3", third))}
    assert programs["1"] == programs["2"] and all(programs["1"].values())
    assert programs["3"]["rc6"] != programs["1"]["rc6"] and programs["3"]["serpent"] == programs["1"]["serpent"]


def test_a_memo_key_follows_the_files_contents_and_the_inputs(tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"binary")
    k = memo.key([a], ["x86_64", [1, 2]])
    assert memo.key([a], ["x86_64", [1, 2]]) == k
    assert memo.key([a], ["sparc64", [1, 2]]) != k
    os.utime(a, (1, 1))
    assert memo.key([a], ["x86_64", [1, 2]]) == k  # a file time is not an input
    a.write_bytes(b"binary2")
    assert memo.key([a], ["x86_64", [1, 2]]) != k
    calls = []
    v, hit = memo.remembered(tmp_path / "m", "kind", k, lambda: calls.append(1) or {"n": 1})
    assert (v, hit) == ({"n": 1}, False)
    assert memo.remembered(tmp_path / "m", "kind", k, lambda: calls.append(1) or {"n": 2}) == ({"n": 1}, True)
    assert memo.remembered(tmp_path / "m", "other", k, lambda: None, keep=lambda v: v is not None) == (None, False)
    assert memo.get(tmp_path / "m", "other", k) is None and calls == [1]
