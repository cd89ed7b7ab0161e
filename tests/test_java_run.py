"""Java cells are cells (lab/pipeline.py's Java build kind, lab/report/java.py): one matrix run holds C and Java
cells walked by the same pipeline; Java rows load with their language, appear in their own report section and
never in the C views; a Java cell that fails to compile or fails its vectors is red with its reason while the
others are measured; a missing JDK is `unavailable` naming the package; the JIT profiles really differ; `verify`
gates Java code on any vectors file; `--resume` finishes a run with Java cells.  One cipher (RC6), the smoke
profile."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab import java, results
from lab.backends.base import LAUNCH_SUFFIX
from lab.publish import build_report
from lab.report import errors_in
from lab.request import RunRequest
from lab.run import run

ROOT = Path(__file__).resolve().parent.parent
JAVA_CELLS = {"rc6/ref@openjdk17-c2@host", "rc6/ref@openjdk17-int@host", "rc6/bouncycastle@openjdk17-c2@host",
              "rc6/bouncycastle@openjdk17-int@host"}


def matrix(tmp: Path, text: str) -> Path:
    p = tmp / "matrix.yaml"
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def runs(lab, build_dir, tmp_path_factory) -> dict:
    """One matrix run of RC6 (smoke): our C (gcc-O3), and our Java and Bouncy Castle's RC6 under C2 and -Xint."""
    if java.unavailable():
        pytest.fail(java.unavailable() + " (./cipherlab installs it)")
    tmp = tmp_path_factory.mktemp("javarun")
    m = matrix(tmp, "ciphers: [rc6]\nimplementations: [rc6/ref, rc6/bouncycastle]\n"
                    "toolchains: [gcc-O3, openjdk17-c2, openjdk17-int]\ntargets: [host]\nprofile: smoke\n")
    out = run(lab, RunRequest(matrix=m, results_dir=tmp / "results", build_dir=build_dir, icount=False),
              say=lambda s: None)
    return {"run": out.run_dir, "outcome": out, "tmp": tmp}


def test_java_rows_load_with_their_language(runs):
    out = runs["outcome"]
    assert out.counts == {"ok": 5}, out.counts
    df = results.load([runs["run"]], runs["run"].parent.parent)
    assert "language" in df.columns
    j = df[df.language == "java"]
    assert set(j.cell) == JAVA_CELLS
    assert set(df[df.language == "c"].toolchain) == {"gcc-O3"} and set(j.toolchain) == {"openjdk17-c2",
                                                                                        "openjdk17-int"}
    enc = j[(j.metric == "encrypt_speed") & (j.key_size == 128)]
    assert len(enc) == 4 and (enc.estimate > 0).all() and (enc.processes == 2).all()  # smoke: jvm processes 2
    assert (enc.ci_low <= enc.estimate).all() and (enc.estimate <= enc.ci_high).all()
    # the lab profile's estimator and interval over JVM processes (each its own JIT)
    assert set(enc.estimator) == {"min"} and set(enc.confidence) == {0.95}
    # Encrypt-n per block at the profile's Java sizes, from the same JVMs (counter java-nanotime, ns)
    per_block = j[j.metric == "encrypt_per_block"]
    assert set(per_block.n_blocks) == {1, 16} and set(per_block.counter) == {"java-nanotime"}
    # Sterbenz & Lipp's own method as extra quantities: value = the mean within 3 sd of their samples
    sl = j[j.metric.str.startswith("sl_")]
    assert set(sl.metric) == {"sl_encrypt_speed", "sl_decrypt_speed", "sl_key_setup_speed_enc",
                              "sl_key_setup_speed_dec"}
    assert (sl.n_total == 3).all() and (sl.value > 0).all()  # smoke: jvm.sterbenz_lipp.repeats 3
    peers = j[j.implementation == "bouncycastle"]
    assert set(peers.impl_class) == {"peer"} and set(peers.code) == {"portable"}
    # the provenance: java -version's build, the flags and the JIT state the JVM reported
    _, cells = results.read_run(runs["run"])
    by = {c.cell: c for c in cells}
    c2, xint = by["rc6/ref@openjdk17-c2@host"].java, by["rc6/ref@openjdk17-int@host"].java
    assert xint.flags == ["-Xint"] and xint.jit == "interpreter" and "interpreted mode" in xint.java_version
    assert c2.flags == [] and c2.jit.startswith("C2") and "mixed mode" in c2.java_version
    assert c2.jit_flags["TieredCompilation"] == "true"


def test_a_mixed_run_walks_java_and_c_cells_through_the_same_pipeline(runs):
    """The C cell and the Java cells of one run: one run.json (RunMeta) planning both, the same stages recorded
    (build, kat, measure: CellPipeline.prepare and .measure), the same gate's verdict on the same vectors file
    (every record of rc6.kat judged by lab.kat.verdict), the same measuring loop's records (processes with their
    start times, a stop reason), and the same record assembly (make_record: build facts, image, kat)."""
    meta, cells = results.read_run(runs["run"])
    assert set(meta.cells_planned) == JAVA_CELLS | {"rc6/ref@gcc-O3@host"} and meta.status == "finished"
    assert meta.toolchains["openjdk17-int"]["family"] == "jvm" and meta.toolchains["openjdk17-int"]["flags"] == ["-Xint"]
    assert meta.toolchains["gcc-O3"]["family"] == "gcc"
    by = {c.cell: c for c in cells}
    c_cell = by["rc6/ref@gcc-O3@host"]
    for cell in JAVA_CELLS:
        j = by[cell]
        assert {"build", "kat", "measure"} <= set(j.stages) and {"build", "kat", "measure"} <= set(c_cell.stages)
        assert j.language == "java" and c_cell.language == "c"
        assert j.kat.files == c_cell.kat.files == ["rc6.kat"] and j.kat.records == c_cell.kat.records > 5000
        assert j.kat.passed == c_cell.kat.passed and j.kat.checksums == c_cell.kat.checksums  # cipher.yaml's
        assert j.build.compiler == "javac" and j.build.compiler_version.startswith("javac ")
        m = j.measurement
        assert m.timer == "java-nanotime" and c_cell.measurement.timer == "clock-monotonic"
        assert len(m.timing) == len(m.cycles) == 2 and m.stopped in ("precision", "max_processes", "budget")
        assert m.precision_target == c_cell.measurement.precision_target
        assert all(p.started > 0 for p in m.timing) and set(m.timing[0].key_sizes) == {128, 192, 256}
        assert "sterbenz_lipp" in j.stages and j.java.sterbenz_lipp
        # the measuring JVMs compile in the foreground (the profile's jvm.measure_flags), the gate's does not
        assert j.java.harness["measure_flags"] == ["-Xbatch"]
    assert c_cell.java is None and "sterbenz_lipp" not in c_cell.stages


def test_only_the_measuring_jvm_takes_the_profiles_measure_flags(lab, build_dir):
    """The launcher of cipherlab.Measure starts the JVM with the profile's measure_flags before the toolchain's
    (which win a conflict); the known-answer gate's and Sterbenz & Lipp's launchers take neither; the launcher's
    bytes (which key the caches) change with them."""
    impl = next(i for i in java.impls_of(lab)["rc6"] if i.name == "ref")
    builder = java.JavaBuilder(build_dir)
    out = builder.build(impl, "java", ("-Xint",), ("-Xbatch",))
    launch = {p: json.loads(Path(str(r.plan.output) + LAUNCH_SUFFIX).read_text()) for p, r in out.items()}
    assert launch["timing"]["flags"] == ["-Xbatch", "-Xint"]
    assert launch["kat"]["flags"] == [] and launch["sterbenz_lipp"]["flags"] == ["-Xint"]
    plain = builder.build(impl, "java", ("-Xint",))
    assert plain["timing"].plan.output != out["timing"].plan.output
    assert plain["kat"].plan.output == out["kat"].plan.output


def test_older_records_without_a_language_are_c(runs, tmp_path):
    """The field is optional: a cells.jsonl written before it existed still loads, as C."""
    src = runs["run"]
    old = tmp_path / "results" / src.parent.name / src.name
    old.mkdir(parents=True)
    shutil.copy(src / "run.json", old / "run.json")
    lines = [json.loads(x) for x in (src / "cells.jsonl").read_text().splitlines()]
    lines = [d for d in lines if d["language"] == "c"]
    for d in lines:
        d.pop("language", None)
        d.pop("java", None)
    (old / "cells.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines))
    df = results.load([old], tmp_path / "results")
    assert not df.empty and set(df.language) == {"c"}


def test_the_jit_profiles_really_differ(runs):
    """-Xint is several times slower than C2 (the 1999 papers: about 10x); a loose 3x keeps it a behaviour."""
    df = results.load([runs["run"]], runs["run"].parent.parent)
    enc = df[(df.metric == "encrypt_speed") & (df.implementation == "ref") & (df.key_size == 128)
             & (df.language == "java")].set_index("toolchain").estimate
    assert enc["openjdk17-c2"] >= 3 * enc["openjdk17-int"], enc.to_dict()


def test_java_rows_are_in_their_own_report_section_never_in_the_c_views(lab, runs, tmp_path):
    index = build_report(lab, [runs["run"]], results_dir=runs["run"].parent.parent, reports_dir=tmp_path)
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
    index = build_report(lab, [runs["run"]], results_dir=runs["run"].parent.parent, reports_dir=tmp_path)
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
    """In a checkout whose java_src is a copy: a wrong DES S-box byte (the class compiles, its vectors fail) and
    a syntax error in IDEA (javac refuses it).  Both cells are red with their reasons; Bouncy Castle's DES, in the
    same build, is gated and measured."""
    from lab.config import Lab

    for d in ("toolchains", "targets", "profiles", "c_src", "dockerfiles"):
        (tmp_path / d).symlink_to(ROOT / d)
    src = tmp_path / "java_src"
    shutil.copytree(java.JAVA_SRC, src)
    core = src / "ciphers" / "des" / "DesCore.java"
    core.write_text(core.read_text().replace("{14, 4, 13, 1, 2,", "{14, 4, 13, 0, 2,", 1))
    idea = src / "ciphers" / "idea" / "Ref.java"
    idea.write_text(idea.read_text().replace("{", "{ int broken = ;", 1))
    copy = Lab(root=tmp_path, shared=lab.shared)
    m = matrix(tmp_path, "ciphers: [des, idea]\nimplementations: [des/spbox, idea/ref, des/bouncycastle]\n"
                         "toolchains: [openjdk17-c2]\ntargets: [host]\nprofile: smoke\n")
    out = run(copy, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=tmp_path / "build",
                               icount=False), say=lambda s: None)
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
    m = matrix(tmp_path, "ciphers: [rc6]\nimplementations: all\ntoolchains: [openjdk17-c2, openjdk17-int]\n"
                         "targets: [host]\nprofile: smoke\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = run(lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=tmp_path / "build",
                              icount=False), say=lambda s: None)
    _, cells = results.read_run(out.run_dir)
    assert len(cells) == 4 and {c.status for c in cells} == {"unavailable"}
    assert all(java.JDK_PACKAGE in c.reason and "\n" not in c.reason for c in cells)
    assert out.counts == {"unavailable": 4}


def test_jmh_waits_for_another_jmh_instead_of_failing(lab, tmp_path):
    """JMH refuses to start while another JMH holds its lock file (bench.java beside another): lab.java.run_jmh
    waits for it, as runs wait for the lab's timing lock, instead of failing.  The lock is JMH's own: a POSIX
    lock on java.io.tmpdir/jmh.lock, held here for 3 s."""
    import fcntl
    import tempfile
    import threading

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


def test_a_jvm_in_an_image_is_unavailable_on_the_host_naming_package_and_image(lab, tmp_path, build_dir):
    """OpenJDK 21 is in the x86_64-trixie image: its profile's cells on target host are `unavailable` with a
    one-line reason naming the package and the image's target (and how to run them), and the host's profile
    still runs."""
    m = matrix(tmp_path, "ciphers: [rc6]\nimplementations: [rc6/ref]\ntoolchains: [openjdk21-c2, openjdk17-c2]\n"
                         "targets: [host]\nprofile: smoke\n")
    out = run(lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=build_dir, icount=False),
              say=lambda s: None)
    by = {c.cell: c for c in results.read_run(out.run_dir)[1]}
    jdk21 = by["rc6/ref@openjdk21-c2@host"]
    assert jdk21.status == "unavailable" and "\n" not in jdk21.reason
    assert "openjdk-21-jre-headless" in jdk21.reason and "--targets x86_64-trixie --backend mixed" in jdk21.reason
    assert by["rc6/ref@openjdk17-c2@host"].status == "ok"


def test_verify_gates_java_code_on_any_vectors_file(lab, tmp_path, build_dir, capsys):
    """`python -m lab verify rc6 FILE --impl all --toolchain openjdk17-c2`: our Java and Bouncy Castle's RC6 pass a
    copy of the vectors; in a copy with one ciphertext byte changed, both fail that very record (exit 1)."""
    from lab import commands
    from lab.verify import verify

    good = tmp_path / "mine.kat"
    shutil.copy(lab.vectors_dir / "rc6.kat", good)
    res = verify(lab, "rc6", good, "all", "openjdk17-c2", build_dir=build_dir)
    assert {r.impl for r in res} == {"rc6/ref", "rc6/bouncycastle"}
    assert all(r.ok and r.passed == r.records > 5000 for r in res), [r.line() for r in res]
    lines = good.read_text().splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.startswith("CT="))
    ct = lines[i][3:]
    lines[i] = "CT=" + ("0" if ct[0] != "0" else "1") + ct[1:]
    bad = tmp_path / "wrong.kat"
    bad.write_text("\n".join(lines) + "\n")
    res = verify(lab, "rc6", bad, "all", "openjdk17-c2", build_dir=build_dir)
    for r in res:
        assert not r.ok and r.failed == 1 and r.verdict.status == "kat_failed", r.line()
        assert r.fails[0]["direction"] == "encrypt" and r.fails[0]["file"] == "wrong.kat"
        assert r.fails[0]["line"] <= i + 1 and "1 FAILED" in r.line()
    assert commands.verify("rc6", str(bad), "all", "openjdk17-c2", build_dir=str(build_dir)) == 1
    assert "rc6/bouncycastle [openjdk17-c2, host]" in capsys.readouterr().out


def test_an_unknown_jvm_profile_is_a_one_line_error(tmp_path):
    for args in (["run", "--toolchains", "openjdk17-c9", "--ciphers", "rc6", "--no-report"],
                 ["verify", "rc6", str(ROOT / "README.md"), "--toolchain", "openjdk17-c9"]):
        r = subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        (line,) = r.stderr.strip().splitlines()
        assert "unknown toolchain 'openjdk17-c9'" in line and "openjdk17-c2" in line, line


def test_sigkill_of_a_run_with_java_cells_then_resume_records_every_cell_once(lab, tmp_path, build_dir):
    """A run of C and Java cells killed (SIGKILL) after its first cells: `--resume` finds the same plan and the
    same JVM and sources (its fingerprint), keeps what was recorded and measures the rest, each cell once."""
    m = matrix(tmp_path, "ciphers: [rc6, idea]\nimplementations: all\ntoolchains: [gcc-O3, openjdk17-c2]\n"
                         "targets: [host]\nprofile: smoke\n")
    args = ["run", "--matrix", str(m), "--results-dir", str(tmp_path / "results"), "--build-dir", str(build_dir),
            "--no-report", "--no-icount", "--no-progress", "--jobs", "1"]
    env = {**__import__("os").environ, "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks")}
    p = subprocess.Popen([sys.executable, "-m", "lab", *args], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 300:
        dirs = results.run_dirs(tmp_path / "results")
        if dirs and (dirs[0] / "cells.jsonl").exists() and (dirs[0] / "cells.jsonl").read_text().count("\n") >= 2:
            break
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    run_dir = dirs[0]
    before = (run_dir / "cells.jsonl").read_text().splitlines()
    meta, _ = results.read_run(run_dir)
    java_planned = [c for c in meta.cells_planned if "@openjdk17-c2@" in c]
    assert meta.status == "running" and len(before) < len(meta.cells_planned) and len(java_planned) >= 4
    assert any(k.startswith("jvm java") for k in meta.fingerprint)
    r = subprocess.run([sys.executable, "-m", "lab", *args, "--resume"], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    after = (run_dir / "cells.jsonl").read_text().splitlines()
    assert after[:len(before)] == before
    meta, cells = results.read_run(run_dir)
    assert sorted(c.cell for c in cells) == sorted(meta.cells_planned) and len(meta.resumed) == 1
    assert meta.status == "finished" and all(c.status == "ok" for c in cells if c.cell in java_planned)


@pytest.mark.container
def test_one_java_cell_under_openjdk21_passes_its_gate_in_the_trixie_image(lab, tmp_path):
    """The openjdk21-c2 profile: RC6 gated (every vector and the checksum chain) and measured by JDK 21 inside the
    x86_64-trixie image (target x86_64-trixie, the mixed backend), on the classes the host's javac compiled; the
    provenance says JDK 21 and the image.  Skipped without the engine or the image, unless
    CIPHERLAB_REQUIRE_CONTAINERS=1."""
    from .conftest import image_or_skip

    image_or_skip("x86_64-trixie", build_when_required=True)
    m = matrix(tmp_path, "ciphers: [rc6]\nimplementations: [rc6/ref]\ntoolchains: [openjdk21-c2]\n"
                         "targets: [x86_64-trixie]\nprofile: smoke\nbackend: mixed\n")
    out = run(lab, RunRequest(matrix=m, results_dir=tmp_path / "results", icount=False),  # build/: mounted
              say=lambda s: None)
    meta, (cell,) = results.read_run(out.run_dir)
    assert cell.status == "ok", cell.reason
    assert cell.cell == "rc6/ref@openjdk21-c2@x86_64-trixie"
    assert cell.kat.failed == 0 and cell.kat.passed > 0 and cell.kat.checksums
    assert re.search(r"\b21\.\d", cell.java.java_version) and cell.image_id.startswith("sha256:")
    assert cell.java.jit == "C2 (tiered)" and meta.toolchains["openjdk21-c2"]["family"] == "jvm"


def test_java_cells_sample_by_the_profiles_jvm_settings(lab):
    """A Java cell's processes, budget and Encrypt-n sizes are the profile's jvm: section (a JVM process costs
    a start-up and a JIT warm-up); a C cell's stay the profile's sampling."""
    from lab.plan import Cell

    quick = lab.profile("quick")
    impl = java.impls_of(lab)["rc6"][0]
    j = Cell(impl, lab.toolchain("openjdk17-c2"), lab.target("host"), (128,), quick)
    c = Cell(lab.cipher("rc6").impls["ref"], lab.toolchain("gcc-O3"), lab.target("host"), (128,), quick)
    assert (j.sampling.min_processes, j.sampling.max_processes, j.sampling.budget_seconds) == (5, 12, 8)
    assert (c.sampling.min_processes, c.sampling.max_processes, c.sampling.budget_seconds) == (8, 12, 6)
    # the same run-to-run interval for both languages: the profile's estimator and the machine's noise prior
    assert (j.sampling.estimator, j.sampling.run_noise) == (c.sampling.estimator, c.sampling.run_noise) == \
        ("trimmed", 0.01)
    assert j.cycle_sizes == (1, 1024) and c.cycle_sizes == (1, 16, 128, 1024, 32768)
    assert j.sampling.precision == c.sampling.precision == 0.03 and j.sampling.samples == c.sampling.samples
