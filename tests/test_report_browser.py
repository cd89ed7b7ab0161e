"""The report in a real browser (Debian's Chromium, headless, via Playwright):
no console errors, every chart renders, navigation targets exist; a screenshot
is saved for a person to look at."""

import shutil
from pathlib import Path

import pytest

from lab.report import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./cipherlab installs it)")
def test_report_renders_in_chromium(fixture_lab, small_run, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    index = build_report(fixture_lab, [small_run], results_dir=small_run.parent, reports_dir=tmp_path)
    problems: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.goto(index.as_uri())
        page.wait_for_load_state("load")
        sizes = page.evaluate("Array.from(document.querySelectorAll('svg')).map(s => {"
                              " const r = s.getBoundingClientRect(); return [r.width, r.height]; })")
        images = page.evaluate("Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0])")
        anchors = page.evaluate("Array.from(document.querySelectorAll('nav a')).map(a => a.getAttribute('href'))")
        missing = [a for a in anchors if not page.query_selector(a)]
        # sorting a table by clicking its header must not raise
        page.click("table.sortable th >> nth=1")
        shot = Path(__file__).resolve().parent.parent / "build" / "report-screenshot.png"
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert not problems, problems
    assert len(sizes) >= 4 and all(w > 50 and h > 50 for w, h in sizes), sizes
    assert all(ok for _, ok in images), images
    assert not missing, f"nav links without target: {missing}"
    assert shot.stat().st_size > 10_000
