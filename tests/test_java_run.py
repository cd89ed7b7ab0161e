"""Java cells in results/ and in the report (lab/javarun.py, lab/report/java.py): Java rows load with their
language, appear in their own report section and never in the C views; a Java cell that fails to compile or fails
its vectors is red with its reason while the others are measured; a missing JDK is `unavailable` naming the
package; the JIT profiles really differ.  One cipher (RC6), short JMH settings."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lab import java, results
from lab.javarun import JavaSettings, run_java_cells
from lab.report import build_report, errors_in

QUICK = JavaSettings(forks=1, min_processes=2, max_processes=2, warmup=1, iterations=2, iteration_ms=100,
                     key_bits=(128,), sl_repeats=3, sl_buffers=16, sl_setups=16)


@pytest.fixture(scope="module")
def runs(lab, tmp_path_factory) -> dict:
    """A C run (rc6 default, gcc-O3, host, smoke) and a Java run (rc6/ref and Bouncy Castle's RC6 under C2 and
    -Xint) in one results folder."""
    from lab.run import RunRequest, run

    if java.unavailable():
        pytest.fail(java.unavailable() + " (./cipherlab installs it)")
    tmp = tmp_path_factory.mktemp("javarun")
    m = tmp / "matrix.yaml"
    m.write_text("ciphers: [rc6]\ntoolchains: [gcc-O3]\ntargets: [host]\nprofile: smoke\n")
    c_run = run(lab, RunRequest(matrix=m, results_dir=tmp / "results", build_dir=tmp / "build", icount=False)).run_dir
    out = run_java_cells(lab, ciphers=["rc6"], implementations=["rc6/ref", "rc6/bouncycastle"],
                         jvm_profiles=["openjdk17-c2", "openjdk17-int"], profile="smoke", settings=QUICK,
                         results_dir=tmp / "results", build_dir=tmp / "build", say=lambda s: None)
    return {"c": c_run, "java": out.run_dir, "outcome": out, "tmp": tmp}


def test_java_rows_load_with_their_language(runs):
    out = runs["outcome"]
    assert out.counts == {"ok": 4}, out.counts
    df = results.load([runs["c"], runs["java"]], runs["c"].parent.parent)
    assert "language" in df.columns
    j = df[df.language == "java"]
    assert set(j.cell) == {"rc6/ref@openjdk17-c2@host", "rc6/ref@openjdk17-int@host",
                           "rc6/bouncycastle@openjdk17-c2@host", "rc6/bouncycastle@openjdk17-int@host"}
    assert set(df[df.language == "c"].toolchain) == {"gcc-O3"} and set(j.toolchain) == {"openjdk17-c2",
                                                                                        "openjdk17-int"}
    enc = j[(j.metric == "encrypt_speed") & (j.key_size == 128)]
    assert len(enc) == 4 and (enc.estimate > 0).all() and (enc.processes == 2).all()
    assert (enc.ci_low <= enc.estimate).all() and (enc.estimate <= enc.ci_high).all()
    # the lab profile's estimator and interval, JMH's per-process minima
    assert set(enc.estimator) == {"min"} and set(enc.confidence) == {0.95}
    # Sterbenz & Lipp's own method as extra quantities: value = the mean within 3 sd of their samples
    sl = j[j.metric.str.startswith("sl_")]
    assert set(sl.metric) == {"sl_encrypt_speed", "sl_decrypt_speed", "sl_key_setup_speed_enc",
                              "sl_key_setup_speed_dec"}
    assert (sl.n_total == QUICK.sl_repeats).all() and (sl.value > 0).all()
    peers = j[j.implementation == "bouncycastle"]
    assert set(peers.impl_class) == {"peer"} and set(peers.code) == {"portable"}
    # the provenance: java -version's build, the flags and the JIT state the JVM reported
    _, cells = results.read_run(runs["java"])
    by = {c.cell: c for c in cells}
    c2, xint = by["rc6/ref@openjdk17-c2@host"].java, by["rc6/ref@openjdk17-int@host"].java
    assert xint.flags == ["-Xint"] and xint.jit == "interpreter" and "interpreted mode" in xint.java_version
    assert c2.flags == [] and c2.jit.startswith("C2") and "mixed mode" in c2.java_version
    assert c2.jit_flags["TieredCompilation"] == "true"


def test_older_records_without_a_language_are_c(runs, tmp_path):
    """The field is optional: a cells.jsonl written before it existed still loads, as C."""
    src = runs["c"]
    old = tmp_path / "results" / src.parent.name / src.name
    old.mkdir(parents=True)
    shutil.copy(src / "run.json", old / "run.json")
    lines = [json.loads(x) for x in (src / "cells.jsonl").read_text().splitlines()]
    for d in lines:
        d.pop("language", None)
        d.pop("java", None)
    (old / "cells.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines))
    df = results.load([old], tmp_path / "results")
    assert not df.empty and set(df.language) == {"c"}


def test_the_jit_profiles_really_differ(runs):
    """-Xint is several times slower than C2 (the 1999 papers: about 10x); a loose 3x keeps it a behaviour."""
    df = results.load([runs["java"]], runs["java"].parent.parent)
    enc = df[(df.metric == "encrypt_speed") & (df.implementation == "ref")].set_index("toolchain").estimate
    assert enc["openjdk17-c2"] >= 3 * enc["openjdk17-int"], enc.to_dict()


def test_java_rows_are_in_their_own_report_section_never_in_the_c_views(lab, runs, tmp_path):
    index = build_report(lab, [runs["c"], runs["java"]], results_dir=runs["c"].parent.parent, reports_dir=tmp_path)
    html = index.read_text()
    assert not errors_in(html)
    start = html.index('<section id="java">')
    java_part = html[start:html.index("</section>", start)]
    rest = html[:start] + html[html.index("</section>", start):]
    for prof in ("openjdk17-c2", "openjdk17-int"):
        assert f'data-profile="{prof}"' in java_part
    assert 'data-cell="rc6/ref@openjdk17-c2@host"' in java_part
    assert 'data-cell="rc6/bouncycastle@openjdk17-c2@host"' in java_part
    # Java against C: RC6 has both here, with a ratio and an interval and a verdict against 2x
    m = re.search(r'<table class="sortable java-vs-c">.*?</table>', java_part, re.S)
    assert m and "RC6" in m.group(0) and re.search(r"\[\d+\.\d\d, \d+\.\d\d\]", m.group(0))
    assert re.search(r"below 2x|above 2x|undecided", m.group(0))
    # the interpreter and C2 side by side
    assert re.search(r'<table class="sortable java-jit">.*openjdk17-int.*openjdk17-c2', java_part, re.S)
    # the C views (platform sections, averages, top performers) never show a Java cell; the libraries table
    # compares Bouncy Castle with our Java under the JVM profile
    libs = re.search(r'<section id="libraries">.*?</section>', rest, re.S).group(0)
    assert re.search(r"<td>openjdk17-c2</td><td>rc6</td><td>portable</td><td>ref</td>", libs)
    rest_wo_libs = rest.replace(libs, "")
    assert "@openjdk17" not in rest_wo_libs.split('id="provenance"')[0]
    assert "platform" in rest_wo_libs and "rc6/ref@gcc-O3@host" in rest_wo_libs


def test_the_java_section_renders_in_chromium(lab, runs, tmp_path):
    from tests.test_report_browser import ARGS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (./cipherlab installs it)")
    playwright = pytest.importorskip("playwright.sync_api")
    index = build_report(lab, [runs["c"], runs["java"]], results_dir=runs["c"].parent.parent, reports_dir=tmp_path)
    problems: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.goto(index.as_uri())
        page.wait_for_load_state("load")
        assert page.query_selector('nav a[href="#java"]') is not None
        rows = page.evaluate("Array.from(document.querySelectorAll('#java table.java-a1 tbody tr'))"
                             ".map(r => r.innerText)")
        box = page.evaluate("(() => { const r = document.querySelector('#java').getBoundingClientRect();"
                            " return [r.width, r.height]; })()")
        page.click("#java table.java-jit th >> nth=1")  # sorting a Java table must not raise
        browser.close()
    assert not problems, problems
    assert len(rows) == 2 and all(r.startswith("RC6") for r in rows), rows
    assert box[0] > 300 and box[1] > 300, box


def test_a_failing_java_cell_is_red_with_its_reason_and_the_run_goes_on(lab, tmp_path):
    """In a copy of java_src: a wrong DES S-box byte (the class compiles, its vectors fail) and a syntax error in
    IDEA (javac refuses it).  Both cells are red with their reasons; Bouncy Castle's DES, in the same build, is
    gated and measured."""
    src = tmp_path / "java_src"
    shutil.copytree(java.JAVA_SRC, src)
    core = src / "ciphers" / "des" / "DesCore.java"
    core.write_text(core.read_text().replace("{14, 4, 13, 1, 2,", "{14, 4, 13, 0, 2,", 1))
    idea = src / "ciphers" / "idea" / "Ref.java"
    idea.write_text(idea.read_text().replace("{", "{ int broken = ;", 1))
    out = run_java_cells(lab, implementations=["des/spbox", "idea/ref", "des/bouncycastle"],
                         jvm_profiles=["openjdk17-c2"], profile="smoke",
                         settings=JavaSettings(**{**QUICK.__dict__, "key_bits": None, "sterbenz_lipp": False}),
                         results_dir=tmp_path / "results", build_dir=tmp_path / "build", source_root=src,
                         say=lambda s: None)
    meta, cells = results.read_run(out.run_dir)
    by = {c.cell: c for c in cells}
    assert meta.status == "finished" and len(cells) == 3
    des, bad_idea, bc = (by[f"{i}@openjdk17-c2@host"] for i in ("des/spbox", "idea/ref", "des/bouncycastle"))
    assert des.status == "kat_failed" and re.search(r"known-answer records failed \(first: line \d+", des.reason)
    assert des.kat.failed > 0 and des.measurement is None
    assert bad_idea.status == "build_failed" and "javac failed" in bad_idea.reason and "Ref.java" in bad_idea.reason
    assert bc.status == "ok" and bc.kat.failed == 0 and bc.measurement is not None
    statuses = results.load_cells([out.run_dir], tmp_path / "results").set_index("cell").status
    assert statuses.to_dict() == {c: by[c].status for c in by}


def test_a_missing_jdk_makes_every_cell_unavailable_naming_the_package(lab, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = run_java_cells(lab, ciphers=["rc6"], jvm_profiles=["openjdk17-c2", "openjdk17-int"], profile="smoke",
                         results_dir=tmp_path / "results", build_dir=tmp_path / "build", say=lambda s: None)
    _, cells = results.read_run(out.run_dir)
    assert len(cells) == 4 and {c.status for c in cells} == {"unavailable"}
    assert all(java.JDK_PACKAGE in c.reason and "\n" not in c.reason for c in cells)
    assert out.counts == {"unavailable": 4}


def test_jmh_waits_for_another_jmh_instead_of_failing(lab, tmp_path):
    """JMH refuses to start while another JMH holds its lock file (two Java runs at once, or a run beside
    bench.java): lab.java.run_jmh waits for it, as runs wait for the lab's timing lock, instead of failing the
    cell.  The lock is JMH's own: a POSIX lock on java.io.tmpdir/jmh.lock, held here for 3 s."""
    import fcntl
    import tempfile
    import threading
    import time

    b = java.build(tmp_path / "build", java.discover(lab))
    impl = java.discover(lab)["idea/ref"]
    lock = open(Path(tempfile.gettempdir()) / "jmh.lock", "a")
    fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    release = threading.Timer(3.0, lambda: (fcntl.lockf(lock, fcntl.LOCK_UN), lock.close()))
    release.start()
    t0 = time.monotonic()
    try:
        (r,) = java.run_jmh(b, impl, java.profiles()["openjdk17-c2"], tmp_path / "idea.json", key_bits=[128],
                            benchmarks=["encrypt1"], forks=1, warmup=1, iterations=1, iteration_ms=50)
    finally:
        release.join()
    assert time.monotonic() - t0 >= 3.0 and r.per_process_min[0] > 0


def test_a_jvm_in_an_image_without_an_engine_is_unavailable_naming_package_and_image(lab, tmp_path, monkeypatch):
    """OpenJDK 21 runs in the x86_64-trixie image: with the host's JDK but without the container engine the lab
    is told to use (CIPHERLAB_ENGINE=podman, not installed here), its cells are `unavailable` with a one-line
    reason naming the package and the image's target, and the host's profile still runs."""
    if shutil.which("podman"):
        pytest.skip("podman is installed: no engine is missing here")
    monkeypatch.setenv("CIPHERLAB_ENGINE", "podman")
    out = run_java_cells(lab, implementations=["rc6/ref"], jvm_profiles=["openjdk21-c2", "openjdk17-c2"],
                         profile="smoke", settings=JavaSettings(**{**QUICK.__dict__, "sterbenz_lipp": False}),
                         results_dir=tmp_path / "results", build_dir=tmp_path / "build", say=lambda s: None)
    by = {c.cell: c for c in results.read_run(out.run_dir)[1]}
    jdk21 = by["rc6/ref@openjdk21-c2@host"]
    assert jdk21.status == "unavailable" and "\n" not in jdk21.reason
    assert "openjdk-21-jre-headless" in jdk21.reason and "x86_64-trixie" in jdk21.reason
    assert by["rc6/ref@openjdk17-c2@host"].status == "ok"


@pytest.mark.container
def test_one_java_cell_under_openjdk21_passes_its_gate_in_the_trixie_image(lab, tmp_path):
    """The openjdk21-c2 profile: RC6 gated (every vector and the checksum chain) and measured by JDK 21 inside the
    x86_64-trixie image, on the classes the host's javac compiled; the provenance says JDK 21 and the image.
    Skipped without the engine or the image, unless CIPHERLAB_REQUIRE_CONTAINERS=1."""
    from .conftest import image_or_skip

    image_or_skip("x86_64-trixie", build_when_required=True)
    out = run_java_cells(lab, implementations=["rc6/ref"], jvm_profiles=["openjdk21-c2"], profile="smoke",
                         settings=JavaSettings(**{**QUICK.__dict__, "sterbenz_lipp": False}),
                         results_dir=tmp_path / "results", say=lambda s: None)  # build/: the container mounts it
    meta, (cell,) = results.read_run(out.run_dir)
    assert cell.status == "ok", cell.reason
    assert cell.kat.failed == 0 and cell.kat.passed > 0 and cell.kat.checksums
    assert re.search(r"\b21\.\d", cell.java.java_version) and cell.java.image["id"].startswith("sha256:")
    assert cell.java.jit == "C2 (tiered)" and meta.toolchains["openjdk21-c2"]["image"] == "x86_64-trixie"
