"""invoke bench.mutation: the mutation score of the modules that compute numbers.

Runs mutmut (PyPI) over the modules named in pyproject.toml's [tool.mutmut] (statistics, quantities, results,
compare, the report's tables, analysis and 1999 comparison) with the tests that check numbers (test_stats,
test_values, test_compare_units): every mutant is a small deliberate bug; a test must fail for it.  Prints per
module killed / survived and the line ``mutation score: K/N killed (P %)``, and writes every mutant's status
(and the diff of every survivor) as JSON.  Survivors that are equivalent are listed with the reason in
docs/testing.md, one table row per mutant with the change it makes; the benchmark names every survivor that has
no such row (or whose row describes another change: mutmut numbers a function's mutants afresh when it changes).
Not in CI: it takes long (docs/benchmarks.md says how long).
"""

from __future__ import annotations

import ast
import difflib
import functools
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from ..config import Lab
from . import header, store

KILLED = {"killed", "timeout"}


@functools.lru_cache(maxsize=None)
def _functions(path: Path) -> dict[str, str]:
    """Every function's source in one of mutmut's generated files (parsed once per file)."""
    try:
        src = path.read_text()
        lines = src.splitlines()
        return {n.name: "\n".join(lines[n.lineno - 1:n.end_lineno]) for n in ast.walk(ast.parse(src))
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    except (OSError, SyntaxError):
        return {}


def _diff(root: Path, name: str) -> str:
    """The changed lines of one mutant, read from mutmut's generated file (one `mutmut show` per mutant would
    take a second each)."""
    module, func = name.rsplit(".", 1)
    funcs = _functions(root / "mutants" / (module.replace(".", "/") + ".py"))
    orig, mutant = funcs.get(func.split("__mutmut_")[0] + "__mutmut_orig"), funcs.get(func)
    if not orig or not mutant:
        return ""
    # the first line names the function (x_f__mutmut_orig / x_f__mutmut_7): compare it without the name, so that
    # a changed default argument shows
    base = func.split("__mutmut_")[0]
    lines = difflib.unified_diff(orig.replace(base + "__mutmut_orig(", base + "(", 1).splitlines(),
                                 mutant.replace(func + "(", base + "(", 1).splitlines(), lineterm="", n=0)
    return "\n".join(x for x in lines if x[:1] in "+-" and x[:3] not in ("---", "+++"))


EXPLAINED = "docs/testing.md"
_ROW = re.compile(r"^\|\s*`(lab\.\S+__mutmut_\d+)`\s*\|(.*)$")


def _norm(text: str) -> str:
    return " ".join(text.replace("\\|", "|").replace("`", "").split())


def explained(root: Path) -> dict[str, str]:
    """The survivors docs/testing.md lists as equivalent: {mutant name: its table row (the change and the
    reason)}.  A row reads | `name` | `the changed line` | why it changes nothing |."""
    try:
        text = (root / EXPLAINED).read_text()
    except OSError:
        return {}
    return {m.group(1): m.group(2) for m in map(_ROW.match, text.splitlines()) if m}


def unexplained(root: Path, survivors: dict[str, str]) -> list[str]:
    """Survivors without a row, or whose row names another change than the mutant makes now (mutmut numbers the
    mutants of a function afresh when the function changes)."""
    rows = explained(root)

    def ok(name: str, diff: str) -> bool:
        plus = [x[1:] for x in diff.splitlines() if x.startswith("+")]
        return name in rows and bool(plus) and _norm(plus[0]) in _norm(rows[name])
    return sorted(n for n, d in survivors.items() if not ok(n, d))


def _statuses(mutmut: str, lab: Lab, env: dict) -> dict[str, str]:
    listing = subprocess.run([mutmut, "results", "--all", "true"], cwd=lab.root, env=env, capture_output=True,
                             text=True).stdout
    return dict(re.findall(r"^\s*(\S+__mutmut_\d+): (.+)$", listing, re.M))


def bench(lab: Lab, out: Path | None = None, jobs: int | None = None, survivors: bool = False, say=print) -> dict:
    """A full run from scratch; or, with `survivors`, only the mutants that survived the last run are tested
    again (with the tests as they are now: the coverage of the tests is collected afresh)."""
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).parent / "mutmut")
    env = {**os.environ, "CIPHERLAB_ROOT": str(lab.root)}  # the mutated copy reads the checkout's data
    names: list[str] = []
    if survivors and (lab.root / "mutants").is_dir():
        names = sorted(n for n, s in _statuses(mutmut, lab, env).items() if s not in KILLED)
        (lab.root / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)  # new tests: map them again
        say(f"bench.mutation: testing again the {len(names)} mutants that survived")
    else:
        shutil.rmtree(lab.root / "mutants", ignore_errors=True)
    t0 = time.monotonic()
    if names or not survivors:
        subprocess.run([mutmut, "run", "--max-children", str(jobs or os.cpu_count() or 1), *names], cwd=lab.root,
                       env=env, stdout=subprocess.DEVNULL)
    return summarise(lab, time.monotonic() - t0, len(names), out, say)


def summarise(lab: Lab, seconds: float, retested: int = 0, out: Path | None = None, say=print) -> dict:
    """Score, per-module counts and every survivor's changed lines of the mutants folder as it is."""
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).parent / "mutmut")
    env = {**os.environ, "CIPHERLAB_ROOT": str(lab.root)}
    statuses = _statuses(mutmut, lab, env)
    per_module: dict[str, Counter] = defaultdict(Counter)
    for name, status in statuses.items():
        per_module[name.split(".x")[0].rsplit(".x", 1)[0] if ".x" in name else name][status] += 1
    survivors = {n: _diff(lab.root, n) for n, s in statuses.items() if s not in KILLED}
    killed = sum(1 for s in statuses.values() if s in KILLED)
    doc = {**header("mutation"), "seconds": round(seconds), "survivors_retested": retested,
           "total": len(statuses), "killed": killed,
           "score": killed / len(statuses) if statuses else 0.0,
           "modules": {m: dict(c) for m, c in sorted(per_module.items())}, "statuses": statuses,
           "survivors": survivors, "unexplained": unexplained(lab.root, survivors)}
    for m, c in sorted(per_module.items()):
        k = sum(v for s, v in c.items() if s in KILLED)
        say(f"  {m:<28} killed {k:5d}  survived {sum(c.values()) - k:5d}  ({dict(c)})")
    say(f"mutation score: {killed}/{len(statuses)} killed ({100 * doc['score']:.1f} %) in {seconds / 60:.0f} min"
        + (f" (re-testing {retested} survivors)" if retested else ""))
    for name in doc["unexplained"]:
        say(f"  not explained in {EXPLAINED}: {name}\n" + "\n".join("      " + x for x in survivors[name].splitlines()))
    say(f"survivors explained as equivalent in {EXPLAINED}: {len(survivors) - len(doc['unexplained'])}"
        f"/{len(survivors)}")
    store(lab.root, doc, "mutation", out, say)
    return doc
