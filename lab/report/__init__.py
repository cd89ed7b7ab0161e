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
import pandas as pd

from .. import results
from ..config import Lab
from . import charts, tables


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
        norm_svg = charts.stacked_normalised(norm, title=f"Key setup + encryption, normalised — {title}")
        sections.append({
            "id": f"{toolchain}--{target}".replace(".", "_"), "toolchain": toolchain, "target": target,
            "emulated": emulated, "title": title, "a1": a1, "a2": a2, "bar_svg": bar,
            "norm": norm.to_dict("records"), "norm_svg": norm_svg,
        })
    status_counts = cells.status.value_counts().to_dict() if not cells.empty else {}
    failed = cells[cells.status != "ok"].sort_values("cell").to_dict("records") if not cells.empty else []
    return {
        "metas": metas, "sections": sections, "status_counts": status_counts, "failed": failed,
        "n_cells": len(cells), "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "columns": results.COLUMNS, "metrics": results.METRICS,
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
