"""The HTML report: lays out what lab/findings.py gathered from stored runs; never runs, builds, measures or
judges anything itself (it imports only results, models and the metric table: docs/architecture.md, "Layers").

``render(findings, reports_dir)`` writes ``reports/<name>/index.html`` (self-contained: inline SVG charts and
CSS, no network) plus the runs' tidy data as CSV and Parquet, and points ``reports/latest`` at it
(lab/publish.py ``build_report`` gathers and renders in one call).  Each section is laid out by its own small
function; a section that fails, or whose judged part failed, becomes an error box naming the cause (the tests
fail on one), never a silently missing part.
"""

from __future__ import annotations

import math
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import jinja2
import numpy as np
import pandas as pd

from .. import metrics, results
from ..models import CANDIDATE_STATUSES, FlagCt, Findings, SectionError, Status
from . import analysis, charts, ct_leaks, drilldown, java, published, summary, tables

STEAL_WARNING = 0.02  # steal time above this fraction of CPU time is worth a warning
LANES_WARNING = 0.01  # lanes whose figures differ by more than this (the median quantity) are worth a warning


def _guard(name: str, fn: Callable, *args) -> dict:
    """fn(*args) as a section's context, or an error box's: fn failed, or one of its judged inputs did."""
    failed = next((a for a in args if isinstance(a, SectionError)), None)
    if failed is None:
        try:
            out = fn(*args)
            return out if isinstance(out, dict) else {"value": out}
        except Exception as e:  # noqa: BLE001 - shown in the report as an error box, and fails the tests
            failed = SectionError.caught(e)
    return {"error": failed.error, "section": name, "where": failed.where}


def _section_platform(df: pd.DataFrame, cells: pd.DataFrame, toolchain: str, target: str) -> dict:
    emulated = bool(cells[(cells.target == target)].emulated.any())
    a1 = tables.a1_table(df, cells, toolchain, target)
    a2 = tables.a2_table(df, toolchain, target)
    speeds = tables.encryption_speeds(df, toolchain, target)
    norm = tables.normalised_key_plus_encryption(df, toolchain, target)
    title = f"{toolchain} on {target}" + (" (emulated)" if emulated else "")
    est = next((e for e in df[df.metric == "encrypt_speed"].estimator.dropna().unique()), "min")
    order = tables.nist_order(speeds)
    bar = charts.hbar(
        list(speeds.row), list(speeds.estimate), interval=(list(speeds.ci_low), list(speeds.ci_high)),
        title=f"Encryption speed, 128-bit key, portable C — {title}", xlabel="Kbit/s (higher is better)",
        marks=("NIST's statistic (mean within 3 sd)", list(speeds.value)),
        note=f"Bars: headline estimate ({_estimator_words(est)}) with its {_levels(df)} interval; diamonds: NIST's "
             "statistic. Ciphers without a 128-bit key use their own key size (DES: 64, 3DES: 192)."
             + (" Emulated: measures the emulator, not the CPU; not comparable with hardware." if emulated else ""))
    norm_svg, norm_omitted = charts.stacked_normalised(norm, title=f"Key setup + encryption, normalised — {title}")
    return {"id": re.sub(r"[^A-Za-z0-9_-]+", "_", f"{toolchain}--{target}"), "toolchain": toolchain, "target": target,
            "emulated": emulated, "title": title, "a1": a1, "a2": a2, "bar_svg": bar, "nist_order": order,
            "norm": norm.to_dict("records"), "norm_svg": norm_svg, "norm_omitted": norm_omitted}


def _levels(df: pd.DataFrame) -> str:
    """The confidence level(s) of the measured rows: "95 %" (a run's profile sets it)."""
    return " / ".join(tables.level(c) for c in sorted(df.confidence.dropna().unique())) or tables.level(0.95)


def _estimator_words(est: str) -> str:
    return {"min": "the best case over measuring processes", "median": "the median over measuring processes",
            "trimmed": "the 20 % trimmed mean over measuring processes of each one's best case, with a "
                       "run-to-run interval"}.get(est, est)


def _section_platforms(df: pd.DataFrame) -> dict:
    avg = analysis.platform_averages(df, "encrypt_speed")
    norm_avg = analysis.normalised_platform(df)
    out = []
    for target, g in avg.groupby("target", sort=False):
        emulated = bool(g.emulated.iloc[0])
        n_tc = int(g.n_toolchains.max())
        fig = charts.hbar(list(g.row), list(g.value), interval=(list(g.ci_low), list(g.ci_high)),
                          title=f"Average encryption speed on {target}"
                          f" (mean over {n_tc} toolchain{'s' if n_tc > 1 else ''}, 128-bit key, portable C)",
                          xlabel="Kbit/s (higher is better)",
                          note="Emulated: measures the emulator; never ranked with hardware." if emulated else None)
        nt = norm_avg[norm_avg.target == target]
        nfig, omitted = charts.stacked_normalised(nt, title=f"Key setup + encryption, normalised, on {target}")
        out.append({"target": target, "emulated": emulated, "fig": fig, "norm_fig": nfig, "omitted": omitted,
                    "rows": g.to_dict("records")})
    return {"platforms": out, "avg": avg}


def _section_compilers(df: pd.DataFrame) -> dict:
    comp = analysis.compilers_relative(df)
    figs = []
    if not comp.empty:
        for target in comp.index.get_level_values(0).unique():
            m = comp.loc[target]
            figs.append({"target": target, "svg": charts.heatmap(
                m, title=f"Encryption speed of each toolchain / the best one, on {target}",
                cbar_label="relative speed (1 = fastest toolchain)"),
                "worst": float(np.nanmin(m.values)) if m.size else None})
    return {"figs": figs}


def _section_memory(df: pd.DataFrame) -> dict:
    mem = analysis.memory_table(df)
    return {"rows": mem.to_dict("records"),
            "svg": charts.scatter_memory(mem, title="Encryption speed vs memory (tables + key schedule)")}


def _run_speed(df: pd.DataFrame, run_id: str) -> float | None:
    """How much slower than the machine's reference run this run ran (the median of its rows' speed factors:
    results.COLUMNS "speed_factor"); None when its figures are at the speed it ran at."""
    if df.empty or "speed_factor" not in df:
        return None
    f = df.loc[df.run_id == run_id, "speed_factor"].dropna()
    return float(f.median()) if len(f) else None


def _lanes(m, df: pd.DataFrame) -> dict:
    """How a run measured: its lanes' CPUs (the first lane's first) and, with several, their self-check over its
    measured quantities (results.COLUMNS "lane_difference": the other lanes against the first)."""
    cpus = list((m.options or {}).get("cpus") or [])
    out = {"cpus": cpus, "n": 0, "median": None, "within90": None}
    if len(cpus) < 2 or df.empty or "lane_difference" not in df:
        return out
    d = results.judged_precision(df[df.run_id == m.run_id]).lane_difference.dropna()
    if len(d):
        out.update(n=int(len(d)), median=float(d.median()), within90=float(d.abs().quantile(0.9)))
    return out


def _section_system(metas: list, df: pd.DataFrame, cells: pd.DataFrame) -> dict:
    runs = []
    for m in metas:
        s = m.system or {}
        runs.append({"run_id": m.run_id, "machine": m.machine_id, "steal_fraction": s.get("steal_fraction"),
                     "context_switches": s.get("context_switches"), "status": m.status,
                     "recorded": int((cells.run_id == m.run_id).sum()) if not cells.empty else 0,
                     "planned": len(m.cells_planned), "speed": _run_speed(df, m.run_id), "lanes": _lanes(m, df)})
    noisy = []
    if not df.empty and "steal_fraction" in df:
        sf = df.dropna(subset=["steal_fraction"]).groupby("cell").steal_fraction.first()
        noisy = [{"cell": c, "steal": float(v)} for c, v in sf.items() if v > STEAL_WARNING]
    warn = [r for r in runs if (r["steal_fraction"] or 0) > STEAL_WARNING]
    lanes_apart = [r for r in runs if abs(r["lanes"]["median"] or 0) > LANES_WARNING]
    return {"runs": runs, "noisy_cells": sorted(noisy, key=lambda r: -r["steal"]), "warn": warn,
            "threshold": STEAL_WARNING, "lanes_apart": lanes_apart, "lanes_threshold": LANES_WARNING}


def _section_precision(df: pd.DataFrame) -> dict:
    m = results.judged_precision(df)
    missed = m[~m.precision_met.astype(bool)]
    # C and Java apart: each language's share (Java's JIT makes its figures wider)
    c_rows, java_rows = results.by_language(m)
    by = {lang: (1 - float((~d.precision_met.astype(bool)).mean()), int(len(d)))
          for lang, d in (("C", c_rows), ("Java", java_rows)) if len(d)}
    return {"measured": int(len(m)), "missed": int(len(missed)), "by_language": by,
            "met_share": (1 - len(missed) / len(m)) if len(m) else None,
            "cells": sorted(missed.cell.unique().tolist()),
            "estimators": sorted(m.estimator.unique().tolist()),
            "targets": sorted({float(x) for x in m.precision_target.dropna().unique()})}


def _section_classes(rows: list[dict]) -> dict:
    """SIMD and hardware code against our portable code of the same cipher, per block count per call (judged:
    lab/versus.py), and Gladman's 1999 SIMD speed-up next to today's."""
    return {"rows": rows, "gladman": analysis.simd_then_and_now(rows) if rows else []}


def _section_versions(judged: dict) -> dict:
    """Compiler versions: per implementation and target, the encryption figure against compiler version for each
    family, and the significant steps between neighbouring versions (judged: lab/findings.py versions)."""
    charts_out = [{"cipher": v["cipher"], "implementation": v["implementation"], "target": v["target"],
                   "emulated": v["emulated"],
                   "svg": charts.version_trend(
                       v["series"], title=f"{v['display']} ({v['implementation']}) on {v['target']}",
                       ylabel="guest instructions per block" if v["emulated"] else "Kbit/s, 128-bit key")}
                  for v in judged["series"]]
    return {"charts": charts_out, "steps": judged["steps"]}


def _section_flags(run_paths: list[Path]) -> dict:
    """The flag searches among the runs (their typed outcome, results.read_flag_search; lab/flags.py): per cell the
    winner, the candidates tied with it, the spread, what the race spent, and a chart of the candidates' intervals."""
    out = []
    for p in run_paths:
        search = results.read_flag_search(Path(p))
        for c in search.cells if search else ():
            measured = sorted((e for e in c.candidates if e.estimate is not None), key=lambda e: -e.estimate)
            label = lambda e: " ".join(e.flags) or "(base flags)"  # noqa: E731
            chart = charts.hbar([f"{label(e)} [{e.status}]" for e in measured], [e.estimate for e in measured],
                                title=f"{c.cipher}/{c.implementation} on {c.target}: {c.quantity} "
                                      f"{c.key_size}-bit key, base {search.base}",
                                xlabel="Kbit/s" if c.quantity != "key_setup_speed" else "keys/s",
                                interval=([e.ci_low for e in measured], [e.ci_high for e in measured]))
            # "leaks" only in a search with --ct (c.ct): a search without it never checked
            counts = {s: sum(e.status == s for e in c.candidates) for s in CANDIDATE_STATUSES
                      if s != "leaks" or c.ct is not None}
            out.append({**dict(c), "base": search.base, "run": search.run, "chart": chart, "counts": counts,
                        "ct_text": _flags_ct_text(c.ct) if c.ct is not None else None,
                        "winner_text": " ".join(c.winner) if c.winner is not None else None,
                        "tied_text": [" ".join(t) or "(base flags)" for t in c.tied]})
    return {"cells": out}


def _flags_ct_text(ct: FlagCt) -> str:
    """A flag search's constant-time row (--ct): why it was not checked, or the fastest overall against the
    fastest constant-time candidate."""
    if not ct.checked:
        return f"not checked: {ct.not_checked_because}"
    label = lambda f: " ".join(f) or "(base flags)"  # noqa: E731
    head = f"{ct.leaking} distinct binar{'y leaks' if ct.leaking == 1 else 'ies leak'}"
    cost = ct.cost_of_ct
    if cost is None:
        return f"{head}; no constant-time candidate is left"
    if ct.fastest == ct.fastest_ct:
        return f"{head}; the fastest candidate is constant-time"
    return (f"{head}; fastest overall {label(ct.fastest)} (leaks); cost of constant time {cost.ratio:.3f}x "
            f"[{cost.ci_low:.3f}, {cost.ci_high:.3f}] ({cost.verdict})")


def _context(f: Findings, metas: list, jit: dict[str, str]) -> dict:
    all_df, all_cells, judged = f.df, f.cells, f.judged
    # Java has its own section (and joins "versus the libraries"); never ranked with C
    df, cells = results.by_language(all_df)[0], results.by_language(all_cells)[0]
    sections = [_guard(f"platform {tc}/{tg}", _section_platform, df, cells, tc, tg)
                for tc, tg in tables.platforms(cells)]
    plat = _guard("platforms", _section_platforms, df)
    avg = plat.get("avg")
    top = _guard("top performers", lambda: analysis.top_performers(avg, insn=analysis.instruction_averages(df))) \
        if avg is not None else {"error": f"needs the platform averages, which failed ({plat.get('error')})",
                                 "section": "top performers"}
    status_counts = all_cells.status.value_counts().to_dict() if not all_cells.empty else {}
    failed = all_cells[all_cells.status != Status.OK].sort_values("cell").to_dict("records") \
        if not all_cells.empty else []
    headline = plat["platforms"][0]["fig"] if plat.get("platforms") else \
        (sections[0].get("bar_svg", "") if sections else "")
    planned = sum(len(m.cells_planned) for m in metas)
    precision = _guard("precision", _section_precision, all_df)  # every language's quantities
    gaps = [what for what, has in (
        ("Java", not results.by_language(all_cells)[1].empty),
        ("guest instruction counts", not df.empty and df.metric.astype(str).str.startswith("insn_").any()),
        ("peer libraries", not cells.empty and (cells.impl_class == "peer").any()),
        ("constant-time verdicts", "ct_trace" in df and df.ct_trace.notna().any())) if not has]
    box = _guard("results box", summary.results_box, df, precision, gaps)
    return {"results_box": box,
        "metas": [m.model_dump() for m in metas], "sections": sections, "status_counts": status_counts, "failed": failed,
        "n_cells": len(all_cells), "planned": planned, "partial": len(all_cells) < planned or
        any(m.status != "finished" for m in metas),
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "columns": results.COLUMNS, "metrics": results.METRICS, "platforms": plat, "top": top,
        "compilers": _guard("compilers", _section_compilers, df),
        "correctness": _guard("correctness", analysis.correctness_matrix, cells),
        "ct": _guard("constant time", analysis.ct_matrix, cells),
        "memory": _guard("memory", _section_memory, df),
        "reference": _guard("published", published.comparison, df, metas), "headline": headline,
        "instructions": _guard("instructions", tables.instructions_table, df),
        "libraries": _guard("libraries", lambda rows: {"rows": rows}, judged["libraries"]),
        "java": _guard("java", java.section, all_df, all_cells, jit, judged["java_vs_c"]),
        "classes": _guard("classes", _section_classes, judged["classes"]),
        "system": _guard("system", _section_system, metas, df, cells),
        "machines": _guard("machines", _section_machines, df, cells, metas),
        "precision": precision,
        "comparison": _guard("comparison", dict, judged["comparison"]),
        "flags": _guard("flag search", _section_flags, list(f.run_paths)),
        "versions": _guard("compiler versions", _section_versions, judged["versions"]),
        "levels": _levels(df) if not df.empty else tables.level(0.95),
        "estimator_words": _estimator_words(next(iter(df[df.estimator.isin(list(metrics.TIMED_ESTIMATORS))].estimator.unique()),
                                                 "min") if not df.empty else "min"),
        "fmt": tables.fmt, "isfinite": lambda x: x is not None and isinstance(x, (int, float)) and math.isfinite(x),
    }


def _section_machines(df: pd.DataFrame, cells: pd.DataFrame, metas: list) -> dict:
    """Per platform: the machine, its CPU, the counter its cycle figures are in, emulated or not."""
    cpu = {m.machine_id: m.machine.get("cpu_model", "?") for m in metas}
    rows = []
    for (target, machine), g in cells.groupby(["target", "machine"]) if not cells.empty else []:
        counters = sorted(df[(df.target == target) & df.counter.notna() & ~df.metric.str.startswith("insn_")
                             & ~df.metric.str.endswith("speed")].counter.unique()) if not df.empty else []
        rows.append({"platform": target, "machine": machine, "cpu": cpu.get(machine, "?"),
                     "counter": ", ".join(counters) or "—", "emulated": bool(g.emulated.any()), "cells": len(g)})
    return {"rows": rows}


def errors_in(html: str) -> list[str]:
    """The error boxes of a rendered report (a test fails on any)."""
    import re

    return re.findall(r'<div class="section-error"[^>]*>(.*?)</div>', html, re.S)


def render(f: Findings, reports_dir: Path, ct_results: Path) -> Path:
    """Writes the report of the gathered runs under reports_dir and points reports/latest at it; returns its
    index.html.  ct_results: where bench.ct stores its matrix (the compiler-made leaks section; none yet: the
    section names the command that makes one)."""
    metas = [m for m, _ in f.read]
    jit = java.jit_states([c for _, cs in f.read for c in cs])
    name = metas[0].run_id if len(metas) == 1 else "combined-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = reports_dir / name
    out.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined)
    html = env.get_template("index.html.j2").render(
        **_context(f, metas, jit),
        drilldown=_guard("drill-down", drilldown.write, out, env, f.judged["drilldown"]),
        ct_leaks=_guard("compiler-made leaks", ct_leaks.section, ct_results))
    (out / "index.html").write_text(html)
    results.write_tidy(f.df, f.cells, out)
    latest = reports_dir / "latest"
    if latest.is_symlink() or latest.exists():
        latest.unlink()
    os.symlink(name, latest)
    return out / "index.html"
