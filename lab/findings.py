"""What a report shows, gathered from stored runs and judged: the layer between the results and the report.

``gather(results_dir, runs)`` reads the runs once (their records, rows and cells), and computes every part of
the report that is a judgement rather than an arrangement of stored figures: the comparison with another run
(lab/compare.py), the steps between compiler versions (lab/trends.py), our code against the peers, against our
portable code and Java against C (lab/versus.py), and the drill-down's evidence (lab/drilldown.py).  The report
(lab/report) lays out what it is given and imports only results, models and the metric table
(docs/architecture.md, "Layers").

Each judged part is computed on its own: one that fails is kept as a SectionError, and the report's section for
it becomes an error box naming the cause while the rest of the report is shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from . import compare, drilldown, results, stats, trends, versus
from .models import Findings, SectionError


def judged(fn: Callable, *args):
    """fn(*args), or the SectionError that says why it failed."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - shown in the report as an error box, and fails the tests
        return SectionError.caught(e)


def as_platforms(df: pd.DataFrame, cells: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """With results of several machines, every (target, machine) is a platform of its own: the `target` the
    report groups by becomes "target @ machine", and cell ids carry the machine, so machines never mix."""
    machines = set(cells.machine) if not cells.empty else set()
    if len(machines) <= 1:
        return df, cells

    def fix(d: pd.DataFrame) -> pd.DataFrame:
        if d.empty:
            return d
        tagged = pd.Series([c.endswith("@" + m) for c, m in zip(d.cell, d.machine)], index=d.index)
        return d.assign(target=d.target + " @ " + d.machine, cell=d.cell.where(tagged, d.cell + "@" + d.machine))

    return fix(df), fix(cells)


def comparison(compare_with, df: pd.DataFrame, results_dir: Path) -> dict:
    """The runs against the run(s) compare_with, per cell and quantity (lab/compare.py), or not present."""
    if compare_with is None:
        return {"present": False}
    base = results.load(compare_with, results_dir)
    t = compare.compare_frames(base, df, "cell", base.run_id.iloc[0] if not base.empty else str(compare_with),
                               ", ".join(sorted(df.run_id.unique())))
    return {"present": True, "a": t.a, "b": t.b, "rows": [r.__dict__ for r in t.rows], "counts": t.counts(),
            "geomean": t.geomean, "threshold": t.threshold, "verdict_confidence": stats.VERDICT_CONFIDENCE,
            "min_effect": stats.MIN_EFFECT,
            "shift": None if t.shift is None else {"words": t.shift.words(), "cells": t.shift.cells,
                                                   "half_width": t.shift.half_width}}


def versions(df: pd.DataFrame) -> dict:
    """Compiler versions (lab/trends.py): per implementation and target, the encryption figure against compiler
    version for each family (hardware: speed; emulated targets: guest instructions per block), each point as
    (version label, estimate, interval), and the significant steps between neighbouring versions."""
    pts = trends.points(df, ("encrypt_speed",))
    out = []
    for (cipher, impl, target), g in pts.groupby(["cipher", "implementation", "target"]) if not pts.empty else []:
        emulated = bool(g.emulated.astype(bool).any())
        g = g[g.metric == ("insn_encrypt_per_block" if emulated else "encrypt_speed")]
        series = {}
        for fam, f in g.groupby("family"):
            f = f.sort_values("version", key=lambda s: s.map(tuple)).drop_duplicates("version")
            series[fam] = [(trends.version_label(fam, v), e, lo, hi)
                           for v, e, lo, hi in zip(f.version, f.estimate, f.ci_low, f.ci_high)]
        if series:
            out.append({"cipher": cipher, "implementation": impl, "target": target, "emulated": emulated,
                        "display": g.display.iloc[0], "series": series})
    return {"series": out, "steps": [s.line() for s in trends.steps(df)]}


def gather(results_dir: Path, runs=None, compare_with=None) -> Findings:
    """The runs (default: the latest) read once and judged for the report."""
    run_paths = results.resolve_runs(results_dir, runs)
    read = [results.read_run(p) for p in run_paths]
    df, cells = as_platforms(results.load(run_paths, results_dir), results.load_cells(run_paths, results_dir))
    c_df = results.by_language(df)[0]  # Java has its own section and is never ranked, compared or trended with C
    return Findings(run_paths, read, df, cells, {
        "comparison": judged(comparison, compare_with, c_df, results_dir),
        "versions": judged(versions, c_df),
        "libraries": judged(versus.versus_libraries, df),  # every language: the JVM profile is the toolchain
        "classes": judged(versus.class_speedups, c_df),
        "java_vs_c": judged(lambda: {"rows": versus.java_vs_c(df), "two": versus.TWO}),
        "drilldown": judged(drilldown.gather, run_paths, df, read),
    })


__all__ = ["gather", "judged", "as_platforms", "comparison", "versions"]
