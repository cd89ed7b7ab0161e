"""The HTML report: reads stored results only, never runs anything.

``build_report(lab, runs)`` writes ``reports/<run-id>/index.html`` (self-contained:
inline SVG charts and CSS, no network) plus the run's tidy data as CSV and
Parquet, and points ``reports/latest`` at it.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd

from .. import results
from ..config import Lab
from . import analysis, charts, tables


def _reference_comparison(avg: pd.DataFrame, top: dict) -> dict:
    """Our per-platform rankings of the 15 round-1 candidates next to NIST's 1999 ones."""
    try:
        from . import reference
    except ImportError:
        return {"available": False}
    try:
        ref = reference.timing()
    except Exception as e:  # a broken reference file must not kill the report
        return {"available": False, "error": str(e)}
    ref = ref[(ref.metric == "encrypt_speed") & (ref.key_size == 128)
              & (ref.variant.fillna("").astype(str) == "")]
    nist_rankings = {}
    # the reference platform (Pentium Pro, Win95) and the Pentium II first, as the issue asks
    order = {"ppro200-win95": 0, "pii450-win98": 1}
    for platform, g in sorted(ref.groupby("platform"), key=lambda kv: (order.get(kv[0], 9), kv[0])):
        means = g.groupby("cipher").value.mean()
        label = f"{g.cpu.iloc[0]} {int(g.mhz.iloc[0])} MHz, {g.os.iloc[0]} (mean of {g.compiler.nunique()} compiler" \
                f"{'s' if g.compiler.nunique() > 1 else ''})"
        nist_rankings[label] = analysis.rank(means)
    ours = {}
    for target, g in avg.groupby("target"):
        best = g.groupby("cipher").value.max()
        ours[target] = analysis.rank(best)
    rows = []
    for target, our_rank in ours.items():
        for name, their in nist_rankings.items():
            tau, n = analysis.kendall_tau(our_rank, their)
            rows.append({"target": target, "reference": name, "tau": tau, "n": n})
    names = list(nist_rankings)
    table = []
    all_ciphers = sorted({c for r in nist_rankings.values() for c in r} | {c for r in ours.values() for c in r})
    for c in all_ciphers:
        table.append({"cipher": c,
                      "ours": {t: (r.index(c) + 1 if c in r else None) for t, r in ours.items()},
                      "nist": {n: (nist_rankings[n].index(c) + 1 if c in nist_rankings[n] else None) for n in names}})
    table.sort(key=lambda x: min([v for v in x["nist"].values() if v] or [99]))
    return {"available": True, "taus": rows, "table": table, "targets": list(ours), "nist_names": names,
            "sources": getattr(reference, "SOURCES_NOTE", "lab/report/reference/SOURCES.md")}


def _context(metas: list[dict], df: pd.DataFrame, cells: pd.DataFrame) -> dict:
    sections = []
    for toolchain, target in tables.platforms(cells):
        emulated = bool(cells[(cells.target == target)].emulated.any())
        a1 = tables.a1_table(df, cells, toolchain, target)
        a2 = tables.a2_table(df, toolchain, target)
        speeds = tables.encryption_speeds(df, toolchain, target)
        norm = tables.normalised_key_plus_encryption(df, toolchain, target)
        title = f"{toolchain} on {target}" + (" (emulated)" if emulated else "")
        bar = charts.hbar(
            list(speeds.row), list(speeds.value), errors=list(speeds["std"]),
            title=f"Encryption speed, 128-bit key — {title}", xlabel="Kbit/s (higher is better)",
            note="Ciphers without a 128-bit key use their own key size (DES: 64, 3DES: 192)."
            + (" Emulated: measures the emulator, not the CPU; not comparable with hardware." if emulated else ""),
        )
        norm_svg, norm_omitted = charts.stacked_normalised(norm, title=f"Key setup + encryption, normalised — {title}")
        sections.append({
            "id": f"{toolchain}--{target}".replace(".", "_"), "toolchain": toolchain, "target": target,
            "emulated": emulated, "title": title, "a1": a1, "a2": a2, "bar_svg": bar,
            "norm": norm.to_dict("records"), "norm_svg": norm_svg, "norm_omitted": norm_omitted,
        })

    # platform figures (NIST Figs. 3-6): averaged over the compilers of each target
    avg = analysis.platform_averages(df)
    norm_avg = analysis.normalised_platform(df)
    platforms = []
    for target, g in avg.groupby("target", sort=False):
        emulated = bool(g.emulated.iloc[0])
        n_tc = int(g.n_toolchains.max())
        fig = charts.hbar(list(g.row), list(g.value), title=f"Average encryption speed on {target}"
                          f" (mean over {n_tc} toolchain{'s' if n_tc > 1 else ''}, 128-bit key)",
                          xlabel="Kbit/s (higher is better)",
                          note="Emulated: measures the emulator; never ranked with hardware." if emulated else None)
        nt = norm_avg[norm_avg.target == target]
        nfig, omitted = charts.stacked_normalised(nt, title=f"Key setup + encryption, normalised, on {target}")
        platforms.append({"target": target, "emulated": emulated, "fig": fig, "norm_fig": nfig,
                          "omitted": omitted, "rows": g.to_dict("records")})
    top = analysis.top_performers(avg)
    comp = analysis.compilers_relative(df)
    comp_figs = []
    if not comp.empty:
        for target in comp.index.get_level_values(0).unique():
            m = comp.loc[target]
            comp_figs.append({"target": target, "svg": charts.heatmap(
                m, title=f"Encryption speed of each toolchain / the best one, on {target}",
                cbar_label="relative speed (1 = fastest toolchain)"),
                "worst": float(np.nanmin(m.values)) if m.size else None})
    mem = analysis.memory_table(df)
    mem_svg = charts.scatter_memory(mem, title="Encryption speed vs memory (tables + key schedule)")
    status_counts = cells.status.value_counts().to_dict() if not cells.empty else {}
    failed = cells[cells.status != "ok"].sort_values("cell").to_dict("records") if not cells.empty else []
    headline = platforms[0]["fig"] if platforms else (sections[0]["bar_svg"] if sections else "")
    return {
        "metas": metas, "sections": sections, "status_counts": status_counts, "failed": failed,
        "n_cells": len(cells), "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "columns": results.COLUMNS, "metrics": results.METRICS, "platforms": platforms, "top": top,
        "compilers": comp_figs, "correctness": analysis.correctness_matrix(cells),
        "memory": mem.to_dict("records") if not mem.empty else [], "memory_svg": mem_svg,
        "reference": _reference_comparison(avg, top), "headline": headline,
    }


def build_report(lab: Lab, runs=None, results_dir: Path | None = None, reports_dir: Path | None = None) -> Path:
    results_dir = results_dir or lab.root / "results"
    reports_dir = reports_dir or lab.root / "reports"
    run_paths = results.resolve_runs(results_dir, runs)
    metas = [results.read_run(p)[0] for p in run_paths]
    df = results.load(run_paths, results_dir)
    cells = results.load_cells(run_paths, results_dir)
    name = metas[0]["run_id"] if len(metas) == 1 else "combined-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = reports_dir / name
    out.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined)
    html = env.get_template("index.html.j2").render(**_context(metas, df, cells))
    (out / "index.html").write_text(html)
    df.to_csv(out / "results.csv", index=False)
    df.to_parquet(out / "results.parquet", index=False)
    cells.to_csv(out / "cells.csv", index=False)
    latest = reports_dir / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    os.symlink(name, latest)
    return out / "index.html"
