"""invoke bench.ct --compilers: the compiler-made leak matrix.

The cells: every implementation that claims constant time (``constant_time: true`` in cipher.yaml, or in
peer.yaml where the library claims it: only its adapter is the toolchain's build) x every gcc and clang version
a target has (toolchains/versions.yaml,
:func:`lab.ctblame.versions_of`; on the host only the installed ones) x the optimisation levels :data:`LEVELS`,
on each target (default: the host).  Each cell is built, gated and traced as ``python -m lab ct`` does it.  A cell
that leaks where the same implementation is clean with another compiler or level on that target is a leak the
compiler made (the source is constant time there): :func:`lab.ctblame.blame` names its version, flag and pass, and
its findings are stored with the cell.

One JSON line per finished target in bench/results/ct.jsonl (format ``cipherlab-bench-ct-compilers``, which the
cipher READMEs' tables of plain bench.ct results leave out): the cells with compiler, level, compiler-made and
blame, the counts (cells checked, blame probes) and the wall time.  The report's "Compiler-made leaks" section
(lab/report/ct_leaks.py) shows the latest.  A cell or a target that fails is recorded unavailable with the reason;
the sweep goes on.
"""

from __future__ import annotations

import dataclasses
import time
from fnmatch import fnmatch
from pathlib import Path

from .. import ct, ctblame, ctcheck
from ..config import Lab, Toolchain
from ..errors import UsageError
from ..plan import Cell
from . import ct as ct_bench
from . import header, store

FAMILIES = ("gcc", "clang")
LEVELS = ("-O1", "-O2", "-O3", "-Os")  # the levels of the matrix (--levels narrows them)
FORMAT = "ct-compilers"


def levels_of(given: list[str] | None) -> tuple[str, ...]:
    """--levels (O2 or -O2, comma separated) as compiler flags; the matrix's LEVELS when not given."""
    if not given:
        return LEVELS
    out = tuple(x if x.startswith("-") else f"-{x}" for x in given)
    bad = [x for x in out if not ctblame.LEVEL.fullmatch(x)]
    if bad:
        raise UsageError(f"option --levels: '{bad[0]}' is not an optimisation level (e.g. O1,O2,O3,Os)")
    return out


def version_profile(lab: Lab, version: str) -> Toolchain:
    """The profile toolchains/versions.yaml makes for a compiler version (the first by name if it has several)."""
    return lab.toolchain(next(n for n in lab.toolchain_names() if (v := lab.version_of(n)) and v.name == version))


def compiler_toolchains(lab: Lab, target, versions: list[str] | None = None,
                        levels: tuple[str, ...] = LEVELS) -> list[tuple[str, str, Toolchain]]:
    """(compiler version, level, toolchain) of every gcc and clang version the target has, narrowed to the
    `versions` patterns (gcc-12, clang-*), at each level: the version's profile with its level replaced, named
    <version>-<level> (gcc-12-O2), as the flag search and ct-blame make their variants."""
    out = []
    for family in FAMILIES:
        for name, _cc in ctblame.versions_of(lab, family, target):
            if versions and not any(fnmatch(name, p) for p in versions):
                continue
            base = version_profile(lab, name)
            for level in levels:
                flags = tuple(ctblame.with_level(base.flags, level))
                out.append((name, level, dataclasses.replace(base, name=f"{name}-{level[1:]}", flags=flags,
                                                             description=f"{name} {' '.join(flags)}")))
    return out


def compiler_made(checks: list[ctcheck.CellCheck]) -> set[str]:
    """The leaking cells whose implementation is clean with some other compiler or level on the same target."""
    clean = {(c.impl, c.target) for c in checks if c.verdict.verdict == "clean"}
    return {c.cell for c in checks if c.verdict.verdict == "leak" and (c.impl, c.target) in clean}


def _check(lab: Lab, cells: list[Cell], be, build_dir: Path, jobs: int, dudect: int, quick_gate: bool,
           say) -> list[ctcheck.CellCheck]:
    """check_cells over all cells; if it fails as a whole, one cell at a time, so one crash costs one cell."""
    run = lambda cs, j: ctcheck.check_cells(lab, cs, be, build_dir=build_dir, jobs=j,  # noqa: E731
                                            dudect_measurements=dudect, quick_gate=quick_gate, say=say)
    try:
        return run(cells, jobs)
    except Exception as e:  # noqa: BLE001 - recorded per cell below
        say(f"the check of {len(cells)} cells failed ({type(e).__name__}: {e}); checking them one at a time")
    out = []
    for cell in cells:
        try:
            out += run([cell], 1)
        except Exception as e:  # noqa: BLE001 - this cell is unavailable, the others go on
            out.append(ctcheck.unavailable(cell, f"internal error: {type(e).__name__}: {e}"))
    return out


def _blame(lab: Lab, cell: Cell, be, build_dir: Path, space: ctblame.Space, say) -> tuple[dict | None, str | None]:
    """(the blame's findings, None) or (None, why it failed)."""
    try:
        b = ctblame.blame(lab, cell, be, build_dir=build_dir, space=space, say=say)
    except Exception as e:  # noqa: BLE001 - one failed blame never stops the sweep
        return None, f"{type(e).__name__}: {e}"
    say("\n".join(b.lines()))
    return b.model_dump(), None


def sweep_target(lab: Lab, tname: str, impls: list, versions, levels, *, build_dir: Path, jobs: int, dudect: int,
                 quick_gate: bool, space: ctblame.Space, say=print) -> tuple[list[dict], list, dict]:
    """One target's rows (a CellCheck's fields plus compiler, level, compiler_made, blame, blame_error), its
    checks and its times."""
    tg = lab.target(tname)
    tcs = compiler_toolchains(lab, tg, versions, levels)
    profile = lab.profile("smoke")
    plan = [(Cell(im, tc, tg, im.key_bits, profile), version, level) for im in impls for version, level, tc in tcs]
    cells = [cell for cell, _, _ in plan]
    say(f"{tname}: {len(impls)} implementations x {len({v for v, _, _ in tcs})} compilers x {len(levels)} levels "
        f"= {len(cells)} cells")
    t0 = time.monotonic()
    blames: dict[str, tuple[dict | None, str | None]] = {}
    be = None
    try:
        try:
            be = ctcheck.ct_backend(lab, build_dir)
            be.prepare([tg])
            checks = _check(lab, cells, be, build_dir, jobs, dudect, quick_gate, say)
        except Exception as e:  # noqa: BLE001 - the target is unavailable, the other targets go on
            checks = [ctcheck.unavailable(c, f"{tname} could not be prepared: {type(e).__name__}: {e}") for c in cells]
        t1 = time.monotonic()
        made = compiler_made(checks)
        for cell in cells:
            if cell.id in made:
                say(f"blaming {cell.id} (clean with another compiler or level on {tname})")
                blames[cell.id] = _blame(lab, cell, be, build_dir, space, say)
    finally:
        if be is not None:
            be.close()
    t2 = time.monotonic()
    rows = []
    for c, (_, version, level) in zip(checks, plan):
        blame, error = blames.get(c.cell, (None, None))
        rows.append({**c.model_dump(), "compiler": version, "level": level, "compiler_made": c.cell in made,
                     "blame": blame, "blame_error": error})
    return rows, checks, {"sweep": round(t1 - t0, 1), "blame": round(t2 - t1, 1), "wall": round(t2 - t0, 1)}


def summary(rows: list[dict], checks: list[ctcheck.CellCheck]) -> dict:
    """bench.ct's summary of the cells, with the compiler-made leaks, the blames and what they spent."""
    blamed = [r for r in rows if r["blame"]]
    checked = sum(r["verdict"]["verdict"] in ("clean", "leak") for r in rows)
    probes = sum(r["blame"]["builds"] for r in blamed)
    return {**ct_bench.summary(checks),
            "compiler_made_leaks": sorted(r["cell"] for r in rows if r["compiler_made"]),
            "leaking_with_every_compiler": sorted({r["impl"] for r in rows if r["verdict"]["verdict"] == "leak"
                                           and not r["compiler_made"]}),
            "blamed": len(blamed), "blames_failed": sorted(r["cell"] for r in rows if r["blame_error"]),
            "blames_with_a_pass": sum(any(f["kind"] == "pass" for f in r["blame"]["findings"]) for r in blamed),
            "cells_checked": checked, "blame_builds": probes, "builds_and_checks": checked + probes}


def matrix_lines(rows: list[dict], levels: tuple[str, ...]) -> list[str]:
    """The matrix as text: per target, one line per implementation and compiler, a verdict per level."""
    out = []
    cells = {(r["target"], r["impl"], r["compiler"], r["level"]): r for r in rows}
    short = {"clean": "clean", "leak": "LEAK", "unavailable": "n/a"}
    for target in dict.fromkeys(r["target"] for r in rows):
        out.append(f"{target}:  " + "  ".join(f"{lv:>6}" for lv in levels))
        for impl, comp in dict.fromkeys((r["impl"], r["compiler"]) for r in rows if r["target"] == target):
            marks = []
            for lv in levels:
                r = cells.get((target, impl, comp, lv))
                m = short[r["verdict"]["verdict"]] if r else "-"
                marks.append(f"{m + ('*' if r and r['compiler_made'] else ''):>6}")
            out.append(f"  {impl} {comp}: " + "  ".join(marks))
    return out + ["(LEAK*: a compiler-made leak, blamed below)"] if any(r["compiler_made"] for r in rows) else out


def bench(lab: Lab, ciphers=None, implementations: str = "all", targets=None, versions: list[str] | None = None,
          levels: list[str] | None = None, jobs: int = 2, dudect: int = 0, out: Path | None = None,
          quick_gate: bool = False, space: ctblame.Space | None = None, build_dir: Path | None = None,
          say=print) -> dict:
    """The compiler-made leak matrix (see the module's docstring); `versions` narrows the compilers (gcc-12,
    clang-*), `levels` the levels; dudect is off unless asked for (the trace check is the verdict)."""
    from ..plan import implementations as pick

    levels_ = levels_of(levels)
    ciphers, selection = ct_bench.selected(lab, ciphers, implementations)
    impls = [im for c in ciphers for im in pick(lab, c, selection, "--implementations") if im.constant_time is True]
    if not impls:
        raise UsageError("bench.ct --compilers: no selected implementation claims constant time "
                         "(constant_time: true in cipher.yaml or peer.yaml)")
    targets = targets or ["host"]
    if versions:
        known = {cv.name for cv in lab.compiler_versions.values()}
        unknown = [p for p in versions if not any(fnmatch(k, p) for k in known)]
        if unknown:
            raise UsageError(f"option --versions: '{unknown[0]}' names no compiler version of toolchains/versions.yaml "
                             f"({', '.join(sorted(known))})")
    space = space or ctblame.load_space(lab.root / ctblame.DEFAULT_SPACE)
    build_dir = build_dir or lab.root / "build"
    doc = {**header(FORMAT), "ciphers": ciphers, "implementations": [im.id for im in impls],
           "versions": versions or "all found", "levels": list(levels_), "targets": [], "dudect_measurements": dudect,
           "inputs": ct.INPUTS, "gate": "quick" if quick_gate else "full", "wall_seconds": {}, "sweep_seconds": {},
           "blame_seconds": {}, "cells": []}
    rows: list[dict] = []
    checks: list[ctcheck.CellCheck] = []
    for tname in targets:
        got, got_checks, secs = sweep_target(lab, tname, impls, versions, levels_, build_dir=build_dir, jobs=jobs,
                                             dudect=dudect, quick_gate=quick_gate, space=space, say=say)
        rows += got
        checks += got_checks
        doc["targets"].append(tname)
        for k in ("wall", "sweep", "blame"):
            doc[f"{k}_seconds"][tname] = secs[k]
        doc["cells"] = rows
        doc["summary"] = summary(rows, checks)
        store(lab.root, doc, "ct", out, say)  # after every target: an interrupted sweep keeps what it finished
    s = doc.get("summary", {})
    say("\n".join(matrix_lines(rows, levels_)))
    for r in rows:
        if r["verdict"]["verdict"] == "leak":
            how = "compiler-made" if r["compiler_made"] else "leaks with every compiler and level here"
            blame = "; blame failed: " + r["blame_error"] if r["blame_error"] else ""
            say(f"leak: {r['cell']} ({how}): {r['verdict']['reason']}{blame}")
    say(f"wall time: {sum(doc['wall_seconds'].values()):.0f} s (sweep {sum(doc['sweep_seconds'].values()):.0f} s, "
        f"blames {sum(doc['blame_seconds'].values()):.0f} s) over {', '.join(doc['targets'])}")
    say(f"{s.get('cells')} cells: {s.get('verdicts')}; compiler-made leaks: {len(s.get('compiler_made_leaks', []))}, "
        f"blamed: {s.get('blamed')} ({s.get('blames_with_a_pass')} to a pass); builds and checks: "
        f"{s.get('cells_checked')} cells + {s.get('blame_builds')} blame probes = {s.get('builds_and_checks')}")
    return doc
