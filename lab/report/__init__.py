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


def _reference_comparison(df: pd.DataFrame, avg: pd.DataFrame) -> dict:
    """Our per-platform rankings next to the 1999 ones (timing tables, cycle tables, the slides'
    reference platform, Gladman's cycles), with Kendall's tau; and our cycles side by side."""
    try:
        from . import reference
    except ImportError:
        return {"available": False}
    try:
        timing, cycles, slides, gladman = (reference.timing(), reference.cycles(),
                                           reference.load("slides_reference"), reference.gladman())
    except Exception as e:  # a broken reference file must not kill the report
        return {"available": False, "error": str(e)}

    def plain(d):  # drop the 64-bit variants (DFC-64, HPC-64) rows: NIST's main rows
        return d[d.variant.fillna("").astype(str) == ""]

    theirs: dict[str, list[str]] = {}
    order = {"ppro200-win95": 0, "pii450-win98": 1}
    t = plain(timing[(timing.metric == "encrypt_speed") & (timing.key_size == 128)])
    for platform, g in sorted(t.groupby("platform"), key=lambda kv: (order.get(kv[0], 9), kv[0])):
        n = g.compiler.nunique()
        label = f"A.1 timing: {g.cpu.iloc[0]} {int(g.mhz.iloc[0])} MHz, {g.os.iloc[0]} (mean of {n} compiler{'s' * (n > 1)})"
        theirs[label] = analysis.rank(g.groupby("cipher").value.mean())
    c = plain(cycles[(cycles.metric == "encrypt_per_block") & (cycles.n_blocks == 128)])
    for (platform, compiler), g in sorted(c.groupby(["platform", "compiler"]), key=lambda kv: (order.get(kv[0][0], 9), kv[0])):
        label = f"A.2 cycles Encrypt-128: {g.cpu.iloc[0]} {int(g.mhz.iloc[0])} MHz, {compiler}"
        theirs[label] = analysis.rank(g.set_index("cipher").value, higher_is_better=False)
    sl = plain(slides[(slides.metric == "encrypt_per_block")])
    if not sl.empty:
        theirs["slides: reference platform cycles/block"] = analysis.rank(
            sl.groupby("cipher").value.mean(), higher_is_better=False)
    gl = plain(gladman[(gladman.metric == "encrypt_per_block") & (gladman.key_size == 128)
                       & (gladman.language == "C")])
    if not gl.empty:
        theirs["Gladman 1999, C, cycles/block"] = analysis.rank(gl.groupby("cipher").value.mean(),
                                                                  higher_is_better=False)

    ours = {target: analysis.rank(g.groupby("cipher").value.max()) for target, g in avg.groupby("target")}
    taus = []
    for target, our_rank in ours.items():
        for name, their in theirs.items():
            tau, n = analysis.kendall_tau(our_rank, their)
            taus.append({"target": target, "reference": name, "tau": tau, "n": n})
    names = list(theirs)
    main = names[:2] + [n for n in names if n.startswith(("A.2 cycles Encrypt-128: Pentium II", "Gladman"))]
    ciphers = sorted({x for r in theirs.values() for x in r} | {x for r in ours.values() for x in r})
    table = [{"cipher": x,
              "ours": {tg: (r.index(x) + 1 if x in r else None) for tg, r in ours.items()},
              "nist": {n: (theirs[n].index(x) + 1 if x in theirs[n] else None) for n in main}} for x in ciphers]
    table.sort(key=lambda r: min([v for v in r["ours"].values() if v] or [99]))

    # our Encrypt-128 per block (hardware, mean over toolchains) next to the 1999 cycle counts
    side = []
    ours_c = df[(df.metric == "encrypt_per_block") & (df.n_blocks == 128) & (df.status == "ok")
                & ~df.emulated.astype(bool) & (df.key_size == 128)]
    vc_pii = c[(c.platform == "pii450-win98") & (c.compiler.str.startswith("Visual"))].set_index("cipher").value
    gl_c = gl.groupby("cipher").value.mean() if not gl.empty else pd.Series(dtype=float)
    for (target, cipher), g in ours_c.groupby(["target", "cipher"]):
        v = g.groupby("toolchain").value.min().mean()
        side.append({"target": target, "cipher": cipher, "ours": v, "unit": g.unit.iloc[0],
                     "nist_vc_pii": vc_pii.get(cipher), "gladman": gl_c.get(cipher)})
    side.sort(key=lambda r: r["ours"])
    return {"available": True, "taus": taus, "table": table, "targets": list(ours), "nist_names": main,
            "side": side, "sources": "lab/report/reference/SOURCES.md"}


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
    top = analysis.top_performers(avg, insn=analysis.instruction_averages(df))
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
        "reference": _reference_comparison(df, avg), "headline": headline,
        "instructions": tables.instructions_table(df),
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
