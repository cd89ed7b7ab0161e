"""invoke bench.mainjob: the main job as a new user meets it, cold and then warm, stage by stage.

Cold: an empty build folder (so no build, verdict, count, trace or evidence to reuse); warm: the same run again,
unchanged, on that build folder (only measuring is redone).  Each prints and stores: the wall time of the run and
of the report's rendering, the job time of each stage summed over cells (build, known-answer gate, instruction
count, constant-time trace, dudect, measuring per class of code), the cells and stages reused, the report's size,
the share of measured quantities that met the profile's precision target, and how long headless Chromium takes
to lay the whole report out.  Package installation is not part
of it (``./cipherlab`` prints its own set-up).  JSON in bench/results/.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from .. import results
from ..config import Lab
from ..request import RunRequest
from ..run import run
from . import header, store


def _stages(run_dir: Path) -> dict:
    """Job seconds per stage (measuring split by class of code) and reuse counts, from the cells' records."""
    seconds: dict[str, float] = defaultdict(float)
    reused: Counter = Counter()
    cells = [json.loads(x) for x in (run_dir / "cells.jsonl").read_text().splitlines() if x.strip()]
    for c in cells:
        for stage, s in c.get("stages", {}).items():
            key = f"measure ({c.get('language', 'c')} {c['impl_class']})" if stage == "measure" else stage
            seconds[key] += float(s)
        reused.update(c.get("reused", []))
    return {"cells": len(cells), "statuses": dict(Counter(c["status"] for c in cells)),
            "stage_seconds": {k: round(v, 1) for k, v in sorted(seconds.items())}, "reused": dict(reused)}


def _precision(run_dir: Path) -> dict:
    df = results.load(run_dir, run_dir.parent.parent)
    timed = results.judged_precision(df)
    met = timed.precision_met.astype(bool)
    return {"quantities": int(len(timed)), "met": int(met.sum()),
            "share_met": round(float(met.mean()), 4) if len(timed) else None}


def browser_render(html: Path) -> dict | None:
    """The report as a reader gets it: headless Chromium (Playwright) opens index.html and lays the whole page out
    (its full height); seconds from navigation to that, the page's height and its DOM nodes.  None without
    Playwright or Chromium (./cipherlab installs both)."""
    import shutil

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if exe is None:
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        t0 = time.monotonic()
        page.goto(Path(html).resolve().as_uri(), wait_until="load")
        height = page.evaluate("document.documentElement.scrollHeight")  # forces the whole page's layout
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # painted
        seconds = time.monotonic() - t0
        nodes = page.evaluate("document.getElementsByTagName('*').length")
        browser.close()
    return {"seconds": round(seconds, 2), "height_px": int(height), "dom_nodes": int(nodes)}


def one(lab: Lab, build_dir: Path, results_dir: Path, reports_dir: Path, say, **request) -> dict:
    from ..publish import build_report

    t0 = time.monotonic()
    o = run(lab, RunRequest(results_dir=results_dir, build_dir=build_dir, **request), say=lambda s: None)
    wall = time.monotonic() - t0
    t1 = time.monotonic()
    html = build_report(lab, o.run_dirs, results_dir=results_dir, reports_dir=reports_dir)
    render = time.monotonic() - t1
    size = sum(p.stat().st_size for p in Path(html).parent.rglob("*") if p.is_file())
    doc = {"run_seconds": round(wall, 1), "report_seconds": round(render, 1),
           "report_bytes": {"index.html": Path(html).stat().st_size, "all": size},
           **_stages(o.run_dirs[0]), "precision": _precision(o.run_dirs[0]), "browser": browser_render(Path(html))}
    say(f"  run {doc['run_seconds']} s + report {doc['report_seconds']} s; {doc['cells']} cells {doc['statuses']}; "
        f"precision met by {doc['precision']['met']} of {doc['precision']['quantities']} quantities")
    if doc["browser"]:
        b = doc["browser"]
        say(f"  the report in Chromium: whole page laid out in {b['seconds']} s ({b['height_px']:,} px tall, "
            f"{b['dom_nodes']:,} DOM nodes)")
    say("  job seconds: " + ", ".join(f"{k} {v}" for k, v in doc["stage_seconds"].items()))
    if doc["reused"]:
        say("  reused: " + ", ".join(f"{k} {v}" for k, v in sorted(doc["reused"].items())))
    return doc


def bench(lab: Lab, out: Path | None = None, say=print, condition: str | None = None, **request) -> dict:
    doc = {**header("mainjob"), "request": {k: v for k, v in request.items() if v is not None}}
    if condition:
        doc["condition"] = condition
    with tempfile.TemporaryDirectory(prefix="cipherlab-mainjob-") as tmp:
        base = Path(tmp)
        for phase in ("cold", "warm"):
            say(f"bench.mainjob: {phase} ...")
            doc[phase] = one(lab, base / "build", base / "results", base / "reports", say, **request)
    store(lab.root, doc, "mainjob", out, say)
    return doc
