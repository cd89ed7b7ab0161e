"""Drill-down pages beside index.html: why a cell is fast.

* ``cells/<cell>.html`` — one per cell with stored evidence (``<run>/asm/*.json``, written by
  :mod:`lab.disasm` during the run): the encrypt and key-setup disassembly (decrypt too), the code and table
  bytes of the cell record, and the guest instructions per block of its icount rows;
* ``diff/<implementation>@<target>.html`` — for an implementation and target built by two toolchains or more:
  each toolchain's encrypt function against the first (gcc-O3 when present, else the first by name) as a
  unified diff, next to their measured speeds and guest instructions.

The evidence comes gathered (lab/drilldown.py); index.html gets a small "Drill-down" section of links
(:func:`write` returns it).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path


def write(out: Path, env, evidence: dict) -> dict:
    """Writes the drill-down pages under out (beside index.html); returns the index's section context.
    evidence: lab/drilldown.py gather's (the cells with evidence, the diffs, the functions' roles)."""
    entries, ds = evidence["entries"], evidence["diffs"]
    diff_of = {(d["impl"], d["target"]): d["href"] for d in ds}
    cache = out.parent / ".pages"  # shared by every report under reports/: a page is found by its content
    if entries:
        (out / "cells").mkdir(exist_ok=True)
        for e in entries:
            ctx = {"e": e, "roles": evidence["roles"], "diff_href": diff_of.get((e["impl"], e["target"]))}
            _page(env, "drilldown_cell.html.j2", ctx, out / e["href"], cache)
    if ds:
        (out / "diff").mkdir(exist_ok=True)
        for d in ds:
            _page(env, "drilldown_diff.html.j2", {"d": d}, out / d["href"], cache)
    table: dict[tuple[str, str], dict] = {}
    for e in entries:
        row = table.setdefault((e["impl"], e["target"]), {"impl": e["impl"], "target": e["target"], "cells": {},
                                                           "diff": diff_of.get((e["impl"], e["target"]))})
        row["cells"][e["toolchain"]] = e
    return {"rows": [table[k] for k in sorted(table)], "toolchains": sorted({e["toolchain"] for e in entries}),
            "n_cells": len(entries), "n_diffs": len(ds)}


def _page(env, template: str, ctx: dict, path: Path, cache: Path) -> None:
    """Writes one drill-down page, rendered once per content: the key hashes the template's source and
    everything the page shows (its evidence, speeds, counts), so a page of an unchanged binary and figures is
    copied from the cache on the next render, never rendered or diffed again."""
    source = env.loader.get_source(env, template)[0] + env.loader.get_source(env, "_drilldown_style.html.j2")[0]
    key = hashlib.sha256((source + json.dumps(ctx, sort_keys=True, default=str)).encode()).hexdigest()
    hit = cache / f"{key}.html"
    if not hit.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = hit.with_suffix(f".tmp{id(ctx)}")
        tmp.write_text(env.get_template(template).render(**ctx))
        tmp.replace(hit)
    shutil.copyfile(hit, path)
