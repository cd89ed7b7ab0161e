"""The report's "Compiler-made leaks" section, from the latest ``invoke bench.ct --compilers`` result in
bench/results/ct.jsonl (lab/bench/ct_compilers.py writes it): implementation x compiler version (rows) x target x
level (columns), each cell "clean", or the leaking function and line with the pass its blame names.  Without such
a result the section says how to make one.
"""

from __future__ import annotations

from pathlib import Path

from ..results import read_jsonl

FORMAT = "cipherlab-bench-ct-compilers"
COMMAND = "./cipherlab bench.ct --compilers"


def latest(path: Path) -> dict | None:
    """The newest bench.ct --compilers result of a JSON-lines file (by the date it records), or None."""
    docs = [d for d in read_jsonl(path) if d.get("format") == FORMAT]
    return max(docs, key=lambda d: (d.get("date", ""), d.get("id", "")), default=None)


def _version_key(name: str) -> tuple:
    family, _, version = name.partition("-")
    return family, tuple(int(x) if x.isdigit() else x for x in version.split("."))


def named_pass(blame: dict | None) -> str | None:
    """The pass a blame names (its pass finding), else "in the source" when it found no flag or pass."""
    findings = (blame or {}).get("findings") or []
    p = next((f for f in findings if f["kind"] == "pass"), None)
    if p:
        return f"pass '{p.get('name')}'" if p.get("name") else p["text"]
    if any(f["kind"] == "source" for f in findings):
        return "in the source"
    flag = next((f for f in findings if f["kind"] == "flag"), None)
    return f"no pass named; {flag['text']}" if flag else None


def cell(row: dict) -> dict:
    """One cell of the table: its class (ok, bad, na), its text and its hover title."""
    v = row["verdict"]
    if v["verdict"] == "clean":
        return {"cls": "ok", "text": "clean", "title": row["cell"]}
    if v["verdict"] != "leak":
        return {"cls": "na", "text": "unavailable", "title": v.get("reason") or ""}
    op = next((o for o in v.get("ops") or [] if o.get("verdict") == "leak"), {})
    d = op.get("divergence") or {}
    function = d.get("function") or d.get("symbol") or ""
    line = f"({d['location']})" if d.get("location") else ""
    where = " ".join(x for x in (function, line) if x) or "regions differ"
    if not row.get("compiler_made"):
        why = "leaks with every compiler and level here: not blamed"
    elif row.get("blame_error"):
        why = f"blame failed: {row['blame_error']}"
    else:
        why = named_pass(row.get("blame")) or "no finding"
    return {"cls": "bad", "text": f"{d.get('kind', 'leak')} in {where}: {why}", "title": v.get("reason") or ""}


def table(doc: dict) -> dict:
    """Rows (implementation, compiler version) x columns (target, level) of one stored result."""
    rows = doc.get("cells") or []
    levels = list(doc.get("levels") or dict.fromkeys(r["level"] for r in rows))
    targets = list(doc.get("targets") or dict.fromkeys(r["target"] for r in rows))
    columns = [(t, lv) for t in targets for lv in levels]
    at = {(r["impl"], r["compiler"], r["target"], r["level"]): r for r in rows}
    keys = sorted({(r["impl"], r["compiler"]) for r in rows}, key=lambda k: (k[0], _version_key(k[1])))
    body = [{"impl": impl, "compiler": comp,
             "cells": [cell(at[(impl, comp, t, lv)]) if (impl, comp, t, lv) in at else None for t, lv in columns]}
            for impl, comp in keys]
    s = doc.get("summary") or {}
    return {"present": True, "id": doc.get("id"), "date": doc.get("date", "")[:10], "columns": columns,
            "targets": targets, "levels": levels, "rows": body,
            "leaks": len(s.get("compiler_made_leaks") or []), "blamed": s.get("blamed", 0),
            "cells": s.get("cells", len(rows)), "builds": s.get("builds_and_checks"),
            "wall_seconds": round(sum((doc.get("wall_seconds") or {}).values()))}


def section(path: Path) -> dict:
    """The section's context: the latest result's table, or the command that makes one."""
    doc = latest(path)
    if doc is None:
        return {"present": False, "command": COMMAND}
    return {**table(doc), "command": COMMAND}
