"""Each cipher README's constant-time table is what the stored `invoke bench.ct` results say
(lab/docsite/ct_tables.py, `./cipherlab docs.ct-tables`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab.docsite.ct_tables", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_every_readme_table_matches_the_stored_results():
    r = run("--check")
    assert r.returncode == 0, f"stale constant-time tables (run ./cipherlab docs.ct-tables):\n{r.stdout}{r.stderr}"


def _tree(tmp_path: Path, cells: list[dict]) -> Path:
    """A copy of RC6's README and cipher.yaml and one stored result holding `cells`."""
    (tmp_path / "c_src" / "ciphers").mkdir(parents=True)
    shutil.copytree(ROOT / "c_src" / "ciphers" / "rc6", tmp_path / "c_src" / "ciphers" / "rc6",
                    ignore=shutil.ignore_patterns("*.c", "*.h"))
    (tmp_path / "bench" / "results").mkdir(parents=True)
    doc = {"id": "ct-test", "format": "cipherlab-bench-ct", "date": "2030-01-01T00:00:00+00:00", "gate": "quick",
           "cells": cells}
    (tmp_path / "bench" / "results" / "ct.jsonl").write_text(json.dumps(doc) + "\n")
    return tmp_path


def _cell(verdict: str, divergence: dict | None = None) -> dict:
    ops = [{"op": "encrypt", "key_size": 128, "verdict": verdict, "divergence": divergence}]
    return {"cell": "rc6/ref@gcc-O3@mips64", "impl": "rc6/ref", "toolchain": "gcc-O3", "target": "mips64",
            "claim": True, "verdict": {"verdict": verdict, "ops": ops}}


def test_a_new_result_makes_the_table_stale_and_the_rewrite_shows_its_divergence(tmp_path):
    div = {"kind": "branch", "location": "c_src/ciphers/rc6/ref.c:99", "function": "rc6_encrypt"}
    root = _tree(tmp_path, [_cell("leak", div)])
    readme = root / "c_src" / "ciphers" / "rc6" / "README.md"
    before = readme.read_text()
    r = run("--check", "--root", str(root))
    assert r.returncode == 1 and "stale: c_src/ciphers/rc6/README.md" in r.stdout
    assert readme.read_text() == before                      # --check writes nothing
    assert run("--root", str(root)).returncode == 0
    after = readme.read_text()
    row = next(ln for ln in after.splitlines() if ln.startswith("| ref | gcc-O3 | mips64 |"))
    assert "**leak**" in row and "encrypt: branch at `c_src/ciphers/rc6/ref.c:99` (rc6_encrypt)" in row
    assert "2030-01-01 (quick gate: ct-test)" in after       # the result named by its id
    assert "What leaks and why:" in after and after.split("<!-- ct:end -->")[1] == before.split("<!-- ct:end -->")[1]
    assert run("--check", "--root", str(root)).returncode == 0   # rewritten: current


def test_no_stored_result_is_an_error_naming_the_file(tmp_path):
    r = run(str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "missing.jsonl" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "ct.jsonl"
    bad.write_text('{"format": "cipherlab-bench-ct"}\n{"cut off\n')
    r = run(str(bad))
    assert r.returncode == 2 and "ct.jsonl: line 2 is not JSON" in r.stderr and "Traceback" not in r.stderr
