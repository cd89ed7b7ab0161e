"""The drill-down's evidence: why a cell is fast (the report's pages beside index.html show it, lab/report/drilldown.py).

* a cell page's content — one per cell with stored evidence (``<run>/asm/*.json``, written by
  :mod:`lab.disasm` during the run): the encrypt and key-setup disassembly (decrypt too), the code and table
  bytes of the cell record, and the guest instructions per block of its icount rows;
* a diff page's content — for an implementation and target built by two toolchains or more:
  each toolchain's encrypt function against the first (gcc-O3 when present, else the first by name) as a
  unified diff, next to their measured speeds and guest instructions.

Reads stored results only (lab/findings.py gathers it for the report).
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path

import pandas as pd

from . import disasm, metrics, results

BASE_TOOLCHAIN = "gcc-O3"
_JUMP = re.compile(r"\b[0-9a-fA-F]+ <([^>+]+)\+0x[0-9a-fA-F]+>")


def _num(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def normalised(asm: str) -> list[str]:
    """The instructions of a function without addresses (jump targets keep the function, lose the offset):
    what differs between two builds is then the code, not where it sits."""
    return [_JUMP.sub(r"<\1+…>", disasm.instruction_text(line)) for line in asm.splitlines()]


def _rows(df: pd.DataFrame, run_id: str, machine: str, cell_ids: set[str]) -> pd.DataFrame:
    if df.empty:
        return df
    return df[(df.run_id == run_id) & (df.machine == machine) & df.cell.isin(cell_ids)]


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _speed(rows: pd.DataFrame) -> dict | None:
    """Encryption speed at a 128-bit key (else the smallest measured key), with its interval."""
    s = rows[(rows.metric == "encrypt_speed") & rows.estimate.notna()] if not rows.empty else rows
    if s.empty:
        return None
    r = s.iloc[(s.key_size - 128).abs().argsort().iloc[0]]
    est, lo, hi = _num(r.estimate), _num(r.ci_low), _num(r.ci_high)
    return {"estimate": est, "ci_low": lo, "ci_high": hi, "unit": r.unit, "key_size": int(r.key_size),
            "estimator": r.estimator, "text": f"{_fmt(est)} {r.unit}",
            "interval": f"[{_fmt(lo)}, {_fmt(hi)}]" if lo is not None and hi is not None else ""}


def _figures(rows: pd.DataFrame) -> list[dict]:
    """Every timed figure of the cell (speeds at every key size, costs per call and per block at every size),
    with its interval, processes and whether it met its precision target, in the metric table's order."""
    order = {m: i for i, m in enumerate(metrics.BY_NAME)}
    g = rows[rows.estimator.isin(metrics.TIMED_ESTIMATORS)] if not rows.empty else rows
    g = g.assign(_o=g.metric.map(order)).sort_values(["_o", "key_size", "n_blocks"]) if not g.empty else g
    return [{"metric": r.metric, "label": metrics.label(r.metric), "key_size": None if pd.isna(r.key_size) else
             int(r.key_size), "n_blocks": None if pd.isna(r.n_blocks) else int(r.n_blocks),
             "text": "below the counter's resolution" if bool(r.below_resolution) else _fmt(_num(r.estimate)),
             "interval": f"[{_fmt(_num(r.ci_low))}, {_fmt(_num(r.ci_high))}]" if _num(r.ci_low) is not None else "",
             "unit": str(r.unit).replace("_", " "), "processes": None if pd.isna(r.processes) else int(r.processes),
             "met": bool(r.precision_met)} for r in g.itertuples()]


def _insns(rows: pd.DataFrame) -> list[dict]:
    g = rows[rows.metric.astype(str).str.startswith("insn_")] if not rows.empty else rows
    return [{"metric": r.metric, "key_size": None if pd.isna(r.key_size) else int(r.key_size),
             "n_blocks": None if pd.isna(r.n_blocks) else int(r.n_blocks), "estimate": _num(r.estimate),
             "unit": r.unit} for r in g.itertuples()]


def _insn_per_block(insns: list[dict]) -> float | None:
    enc = [r for r in insns if r["metric"] == "insn_encrypt_per_block" and r["estimate"] is not None]
    return max(enc, key=lambda r: (r["n_blocks"] or 0, -(abs((r["key_size"] or 128) - 128))))["estimate"] \
        if enc else None


def collect(run_paths: list[Path], df: pd.DataFrame, read: list | None = None) -> list[dict]:
    """Every cell with evidence: its record's facts, its evidence, its speed and guest instructions.
    read: the runs as results.read_run gave them (read once by the caller), else read here."""
    out = []
    read = read if read is not None else [results.read_run(p) for p in run_paths]
    multi = len({meta.machine_id for meta, _ in read}) > 1
    for p, (meta, recs) in zip(run_paths, read):
        evidence = disasm.load(p)
        if not evidence:
            continue
        for rec in recs:
            ev = evidence.get(rec.cell)
            if ev is None:
                continue
            rows = _rows(df, meta.run_id, meta.machine_id, {rec.cell, f"{rec.cell}@{meta.machine_id}"})
            insns = _insns(rows)
            suffix = f"@{meta.machine_id}" if multi and not rec.cell.endswith("@" + meta.machine_id) else ""
            out.append({
                "cell": rec.cell + suffix, "impl": f"{rec.cipher}/{rec.implementation}", "display": rec.display,
                "toolchain": rec.toolchain, "target": rec.target + (f" @ {meta.machine_id}" if multi else ""),
                "status": rec.status, "reason": rec.reason, "run_id": meta.run_id, "emulated": rec.emulated,
                "href": f"cells/{disasm.safe_name(rec.cell + suffix)}.html",
                "build": rec.build.model_dump() if rec.build else None,
                "table_bytes": rec.impl_facts.table_bytes if rec.impl_facts else None,
                "ks_bytes": rec.impl_facts.ks_bytes if rec.impl_facts else None,
                "ev": ev, "speed": _speed(rows), "insns": insns, "insn_per_block": _insn_per_block(insns),
                "figures": _figures(rows),
            })
    return out


def _ratio_text(a: float | None, b: float | None, what: str, fewer: str, more: str) -> str | None:
    if not a or not b:
        return None
    r = b / a
    if abs(r - 1) < 0.005:
        return f"the same {what}"
    return f"{abs(r - 1) * 100:.0f} % {fewer if r < 1 else more} {what}"


def why(base: dict, other: dict) -> list[str]:
    """Why one build is faster than the other, before the raw diff: the measured speed ratio, the exact guest
    instructions per block, and the encrypt function's static shape (instructions, memory reads and writes,
    conditional branches, calls: disasm.shape), each as other against base."""
    out = []
    sa, sb = base.get("speed"), other.get("speed")
    if sa and sb and sa.get("estimate") and sb.get("estimate"):
        r = sb["estimate"] / sa["estimate"]
        out.append(f"{other['toolchain']} encrypts at {r:.2f}× the speed of {base['toolchain']}")
    t = _ratio_text(base.get("insn_per_block"), other.get("insn_per_block"), "guest instructions per block (exact)",
                    "fewer", "more")
    if t:
        out.append(t)
    ka, kb = (disasm.shape(x["ev"]["functions"]["encrypt"]["asm"]) for x in (base, other))
    words = {"instructions": "instructions", "reads": "memory reads", "writes": "memory writes",
             "branches": "conditional branches", "calls": "calls"}
    changed = [f"{words[k]} {ka[k]} → {kb[k]}" for k in words if ka[k] != kb[k]]
    out.append("the encrypt function, static: " + ("; ".join(changed) if changed else
                                                   f"the same shape ({ka['instructions']} instructions)"))
    return out


def diffs(entries: list[dict]) -> list[dict]:
    """Per implementation and target built by two toolchains or more: each toolchain's encrypt function
    against the base toolchain's (gcc-O3 when present, else the first by name)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for e in entries:
        if e["ev"]["functions"].get("encrypt", {}).get("asm"):
            groups.setdefault((e["impl"], e["target"]), []).append(e)
    out = []
    for (impl, target), es in sorted(groups.items()):
        if len({e["toolchain"] for e in es}) < 2:
            continue
        es = sorted(es, key=lambda e: (e["toolchain"] != BASE_TOOLCHAIN, e["toolchain"]))
        base = es[0]
        a = normalised(base["ev"]["functions"]["encrypt"]["asm"])
        pairs = []
        for e in es[1:]:
            b = normalised(e["ev"]["functions"]["encrypt"]["asm"])
            name = lambda x: f"{x['toolchain']}: {x['ev']['functions']['encrypt']['symbol']}"  # noqa: E731
            lines = list(difflib.unified_diff(a, b, name(base), name(e), n=3, lineterm=""))
            pairs.append({"other": e, "lines": lines, "added": sum(1 for x in lines[2:] if x.startswith("+")),
                          "removed": sum(1 for x in lines[2:] if x.startswith("-")), "why": why(base, e)})
        name = disasm.safe_name(f"{impl}@{target}".replace(" @ ", "@"))
        out.append({"impl": impl, "target": target, "base": base, "entries": es, "pairs": pairs,
                    "href": f"diff/{name}.html"})
    return out


def gather(run_paths: list[Path], df: pd.DataFrame, read: list | None = None) -> dict:
    """What the drill-down pages show: every cell with evidence, the diffs between toolchains, and the roles
    of the disassembly's functions."""
    entries = collect(list(run_paths), df, read)
    return {"entries": entries, "diffs": diffs(entries), "roles": disasm.ROLES}
