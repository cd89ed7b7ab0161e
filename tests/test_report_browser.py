"""The report in a real browser (Debian's Chromium, headless, via Playwright):
no console errors, every chart renders, navigation targets exist; a screenshot
is saved for a person to look at."""

import shutil
from pathlib import Path

import pytest

from lab.publish import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


# the labels of every chart (matplotlib's SVG keeps text as <text>): pairs whose boxes overlap by more than a
# fifth of the smaller one, with the chart's title
OVERLAPS_JS = """() => { const out = [];
  for (const svg of document.querySelectorAll('svg')) {
    if (svg.closest('details:not([open])') || !svg.getClientRects().length) continue;  // not laid out
    const boxes = Array.from(svg.querySelectorAll('text')).map(t => [t.textContent.trim(), t.getBoundingClientRect()])
      .filter(([s, r]) => s && r.width > 0 && r.height > 0);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i], [b, q] = boxes[j];
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 0 && h > 0 && w * h > 0.2 * Math.min(p.width * p.height, q.width * q.height))
        out.push([boxes[0] ? boxes[0][0] : '', a, b]);
    } }
  return out; }"""


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
        overlaps = page.evaluate(OVERLAPS_JS)
        # every navigation target lands below the sticky navigation bar, in view
        hidden = []
        nav_h = page.evaluate("document.querySelector('nav').getBoundingClientRect().height")
        for a in anchors:
            page.click(f"nav a[href='{a}']")
            page.wait_for_timeout(50)
            top = page.evaluate(f"document.querySelector('{a}').getBoundingClientRect().top")
            if not (nav_h - 2 <= top <= 900):
                hidden.append((a, top))
        # sorting a table by clicking its header must not raise
        page.click("table.sortable th >> nth=1")
        shot = Path(__file__).resolve().parent.parent / "build" / "report-screenshot.png"
        shot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        # at 900 px the page does not scroll sideways (wide tables scroll in their own box)
        page.set_viewport_size({"width": 900, "height": 900})
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        sideways = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        browser.close()
    assert not problems, problems
    assert len(sizes) >= 4 and all(w > 50 and h > 50 for w, h in sizes), sizes
    assert all(ok for _, ok in images), images
    assert not missing, f"nav links without target: {missing}"
    assert not hidden, f"navigation targets under the bar or out of view after the jump: {hidden}"
    assert not overlaps, f"chart labels that overlap: {overlaps[:10]}"
    assert sideways <= 0, f"the page scrolls {sideways} px sideways at 900 px"
    assert shot.stat().st_size > 10_000
    # bench.mainjob's figure of the same: the whole page laid out, its height and DOM nodes
    from lab.bench.mainjob import browser_render

    b = browser_render(index)
    assert b["seconds"] > 0 and b["height_px"] > 900 and b["dom_nodes"] > 100, b


#: what a section says when the run did not give it anything: none may appear in the main job's report
EMPTY = ["No Java cell", "No instruction counts", "No peer library", "No hardware speed", "No cycle counts",
         "not measured: Java", "section failed"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./cipherlab installs it)")
def test_the_main_jobs_report_has_every_section_filled(lab, tmp_path):
    """The default run (matrix.yaml: every class, the peers, two C compilers and a JVM; constant time from the
    profile; instruction counts with the host's plugin) narrowed to one cipher and the smoke profile: in a real
    browser, no section of the report says it has nothing, and the sections a new user looks for have rows."""
    import os
    import subprocess
    import sys

    playwright = pytest.importorskip("playwright.sync_api")
    rd = tmp_path / "results"
    env = {**os.environ, "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks")}
    r = subprocess.run([sys.executable, "-m", "lab", "run", "--ciphers", "rijndael", "--profile", "smoke", "--ct",
                        "--no-progress", "--results-dir", str(rd), "--reports-dir", str(tmp_path / "reports"),
                        "--build-dir", str(lab.root / "build" / "test-main-job")],
                       cwd=lab.root, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    index = tmp_path / "reports" / "latest" / "index.html"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.as_uri())
        page.wait_for_load_state("load")
        text = page.inner_text("body")
        rows = page.evaluate("""() => { const out = {};
            for (const h of document.querySelectorAll('h2')) {
              let n = 0, el = h.nextElementSibling;
              while (el && el.tagName !== 'H2') { n += el.querySelectorAll('tbody tr').length; el = el.nextElementSibling; }
              out[h.textContent.trim()] = n; }
            return out; }""")
        browser.close()
    said = [e for e in EMPTY if e in text]
    assert said == [], said
    for section in ("Versus the libraries", "Guest instructions per block", "Constant time", "Java"):
        got = [n for h, n in rows.items() if h.startswith(section)]
        assert got and got[0] > 0, (section, rows)
    assert "Precision:" in text and "measured quantities met their target" in text
