"""invoke bench.mutation --semantic: a catalogue of hand-written plausible bugs, each one must be caught.

mutmut flips tokens; people make other mistakes: a 90 % interval where 95 % was asked for, a mean over
toolchains where the median was meant, the slowest of two implementations picked, a ranking by the wrong
column.  Each entry of ``tests/mutations/*.yaml`` is one such bug as a small patch (``file``, the exact text to
``find`` once, its ``replace``ment) with one line saying what mistake it ``models``.  A private copy of the
checkout is made (code and data), the number tests (the same selection as mutmut's, pyproject.toml) must pass on
it unmutated, then each mutant is patched in and the tests run again; a test must fail.  Prints
``semantic mutants: K/N caught`` and stores every outcome as JSON.

Whoever adds a module that computes or judges numbers adds its plausible bugs to the catalogue
(docs/testing.md).
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ..config import Lab
from ..errors import UserError
from . import header, store

CATALOGUE = Path("tests") / "mutations"
# the number tests, in one process (the pyproject's -n auto would start workers for a few seconds of tests)
PYTEST = (sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-n", "0")
SKIPPED = (".git", ".venv", "build", "results", "reports", "mutants")  # not copied into a private tree


class Mutation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: str  # the mistake, in one line
    file: str  # relative to the checkout
    find: str  # occurs exactly once in the file
    replace: str


def catalogue(root: Path) -> dict[str, Mutation]:
    """Every mutation of the catalogue by name (its file's stem), validated: a find text that no longer occurs
    exactly once is an error naming the file, so the catalogue cannot rot silently."""
    out = {}
    for f in sorted((root / CATALOGUE).glob("*.yaml")):
        try:
            m = Mutation.model_validate(yaml.safe_load(f.read_text()))
        except ValidationError as e:
            err = e.errors()[0]
            raise UserError(f"{f.relative_to(root)}: key '{'.'.join(map(str, err['loc'])) or '(top)'}': {err['msg']} "
                            f"(a mutation has exactly: models, file, find, replace)") from None
        except yaml.YAMLError as e:
            raise UserError(f"{f.relative_to(root)}: not YAML ({str(e).splitlines()[0]})") from None
        target = root / m.file
        n = target.read_text().count(m.find) if target.is_file() else -1
        if n != 1:
            raise UserError(f"{f.relative_to(root)}: key 'find' occurs {max(n, 0)} times in {m.file} (it must occur "
                            f"exactly once: update the mutation to the code as it is now)")
        if m.find == m.replace:
            raise UserError(f"{f.relative_to(root)}: 'replace' equals 'find': that changes nothing")
        out[f.stem] = m
    if not out:
        raise UserError(f"no mutations in {root / CATALOGUE}")
    return out


def number_tests(root: Path) -> list[str]:
    """The tests that check numbers: the selection pyproject.toml gives mutmut (one list for both)."""
    conf = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mutmut"]
    return list(conf["pytest_add_cli_args_test_selection"])


def _tree(root: Path, where: Path, shared: Path) -> Path:
    """A private copy of the checkout (code and data: a change to the checkout during a long run must not leak
    into it) with the shared folder beside it, as in a clone."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    for entry in root.iterdir():
        if entry.name in SKIPPED:
            continue
        if entry.is_dir():
            shutil.copytree(entry, where / entry.name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(entry, where / entry.name)
    link = where.parent / "shared"
    if not link.exists():
        link.symlink_to(shared)
    return where


def baseline(tree: Path, tests: list[str], timeout: float) -> None:
    """The number tests must pass on the unmutated copy, or no mutant's failure would mean anything."""
    env = {**os.environ, "CIPHERLAB_ROOT": str(tree), "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.run([*PYTEST, *tests], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise UserError(f"the number tests fail without any mutation ({_first_failure(p.stdout) or p.stdout[-300:]}):"
                        " fix them first")


def _run_one(tree: Path, m: Mutation, tests: list[str], timeout: float) -> dict:
    target = tree / m.file
    original = target.read_text()
    target.write_text(original.replace(m.find, m.replace, 1))
    env = {**os.environ, "CIPHERLAB_ROOT": str(tree), "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    try:
        p = subprocess.run([*PYTEST, *tests], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
        caught, how = p.returncode != 0, _first_failure(p.stdout)
        if p.returncode not in (0, 1):  # 2: interrupted or could not collect; a mutant that breaks imports
            how = f"pytest exit {p.returncode}: {how}"
    except subprocess.TimeoutExpired:
        caught, how = True, f"the tests timed out after {timeout:.0f} s"
    finally:
        target.write_text(original)
    return {"caught": caught, "by": how, "seconds": round(time.monotonic() - t0, 1)}


def _first_failure(out: str) -> str:
    for line in out.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0].split(" ", 1)[1]
    return ""


def bench(lab: Lab, out: Path | None = None, jobs: int | None = None, only: list[str] | None = None,
          timeout: float = 900, say=print) -> dict:
    root = lab.root
    muts = catalogue(root)
    if only:
        unknown = sorted(set(only) - set(muts))
        if unknown:
            raise UserError(f"unknown mutation(s) {', '.join(unknown)} (see {CATALOGUE})")
        muts = {k: v for k, v in muts.items() if k in only}
    tests = number_tests(root)
    jobs = max(1, min(jobs or 2, len(muts)))
    trees = [_tree(root, root / "build" / "semantic" / f"tree{i}", lab.shared) for i in range(jobs)]
    say(f"bench.mutation --semantic: {len(muts)} mutants, tests: {' '.join(tests)}")
    baseline(trees[0], tests, timeout)
    t0 = time.monotonic()
    names = list(muts)

    free: queue.Queue = queue.Queue()
    for t in trees:
        free.put(t)

    def one(n: str) -> tuple[str, dict]:
        tree = free.get()
        try:
            return n, _run_one(tree, muts[n], tests, timeout)
        finally:
            free.put(tree)

    outcome: dict[str, dict] = {}
    with ThreadPoolExecutor(jobs) as pool:
        for n, r in pool.map(one, names):  # in catalogue order, each line as soon as its turn is done
            outcome[n] = r
            say(f"  {'caught' if r['caught'] else 'MISSED':<6}  {n:<44} {r['seconds']:6.1f} s  {r['by'] or ''}")
            if not r["caught"]:
                say(f"          models: {muts[n].models}")
    caught = sum(r["caught"] for r in outcome.values())
    seconds = time.monotonic() - t0
    say(f"semantic mutants: {caught}/{len(muts)} caught in {seconds / 60:.1f} min")
    doc = {**header("semantic-mutation"), "seconds": round(seconds), "total": len(muts), "caught": caught,
           "tests": tests, "mutants": {n: {"models": muts[n].models, "file": muts[n].file, **outcome[n]}
                                       for n in names}}
    if not only:
        store(root, doc, "semantic-mutation", out, say)
    return doc
