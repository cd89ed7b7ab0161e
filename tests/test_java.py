"""The Java side (lab/java.py, java_src/): every Java implementation and Java peer passes every vector and prints the
checksum stored in cipher.yaml through the same verdict as C builds; a wrong S-box byte is caught; JMH's JSON
becomes the lab's per-process samples; the interpreter profile is really slower; a missing JDK is 'unavailable'."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lab import java, protocol
from lab.errors import ConfigError
from lab.quantities import cycle_quantities, timing_quantities
from lab.schema import CipherFile, ToolchainFile, validate

ROOT = Path(__file__).resolve().parent.parent
JMH_FIXTURE = ROOT / "tests" / "fixtures" / "jmh" / "rc6-ref-c2.json"
STERBENZ_LIPP = {"mars", "rc6", "rijndael", "serpent", "twofish", "des", "3des", "idea"}
IMPLS = java.discover(__import__("lab.config", fromlist=["Lab"]).Lab())


@pytest.fixture(scope="session")
def java_build(lab, build_dir) -> java.JavaBuild:
    reason = java.unavailable()
    if reason:
        pytest.fail(reason + " (./cipherlab installs it)")
    return java.build(build_dir, java.discover(lab))


def test_ours_cover_sterbenz_and_lipp_and_every_round1_candidate_and_the_peers_are_data(lab):
    ours = {i.cipher for i in IMPLS.values() if i.impl_class != "peer"}
    assert STERBENZ_LIPP | {"cast256"} <= ours
    round1 = {name for name, c in lab.ciphers.items() if c.round1}  # NIST's slide 29: the 15 candidates
    assert len(round1) == 15 and round1 <= ours, sorted(round1 - ours)
    bc = {i.cipher for i in IMPLS.values() if i.library == "bouncycastle"}
    assert bc == {"rijndael", "serpent", "twofish", "rc6", "cast256", "des", "3des", "idea"}
    assert {i.cipher for i in IMPLS.values() if i.library == "sunjce"} == {"rijndael", "des", "3des"}
    for i in IMPLS.values():
        assert i.checksums, f"{i.id}: no checksum stored in cipher.yaml to gate it"
        assert (i.source is not None) == (i.impl_class != "peer")


@pytest.mark.parametrize("impl_id", sorted(IMPLS))
def test_known_answers_and_checksum(java_build, impl_id):
    impl = IMPLS[impl_id]
    runs = java.kat_runs(java_build, impl)
    v = java.verdict(runs, dict(impl.checksums))
    assert v.ok, v.line()
    assert v.passed == v.records - v.skipped_key_size > 0 and v.failed == 0
    # every key size printed its checksum, and each equals cipher.yaml's (the C builds' own)
    assert v.checksums == dict(impl.checksums)
    summary = next(x for _, c in runs for x in c.json_lines() if x["type"] == "kat_summary")
    assert summary["impl"] == impl_id and summary["multiblock_failed"] == 0
    assert summary["block_bytes"] * 8 == impl.block_bits and summary["key_bits"] == list(impl.key_bits)


def test_a_wrong_sbox_byte_is_caught(lab, tmp_path, java_build):
    """S1 of DES, row 0, column 3: 1 -> 0 (FIPS 46-3 p21) in a copy of java_src; the build still compiles, and
    the kat program of that build fails des and 3des, with the first failing record named."""
    src = tmp_path / "java_src"
    shutil.copytree(java.JAVA_SRC, src, ignore=shutil.ignore_patterns("*.yaml", "pom.xml"))
    core = src / "ciphers" / "des" / "DesCore.java"
    text = core.read_text()
    assert text.count("{14, 4, 13, 1, 2,") == 1
    core.write_text(text.replace("{14, 4, 13, 1, 2,", "{14, 4, 13, 0, 2,"))
    broken = java.build(tmp_path / "build", IMPLS, source_root=src)
    assert broken.key != java_build.key
    for impl_id in ("des/spbox", "3des/ede"):
        v = java.run_kat(broken, IMPLS[impl_id])
        assert v.status == "kat_failed" and v.failed > 0, v.line()
        assert re.search(r"known-answer records failed \(first: line \d+ of", v.reason)
    fails = protocol.of(java.kat_records(broken, IMPLS["des/spbox"]), protocol.KatFail)
    assert fails, "the broken S-box byte made no kat_fail record"
    assert fails[0].line > 0 and fails[0].key_bits and fails[0].direction and fails[0].expected and fails[0].got
    assert java.run_kat(broken, IMPLS["des/bouncycastle"]).ok  # the peer in the same build is unaffected


def test_jmh_json_becomes_the_labs_per_process_samples():
    """A real JMH result (rc6/ref, C2, 2 forks x 3 iterations, 128-bit keys; tests/fixtures/jmh) parsed into the
    timing and cycles programs' per-process shape, and from there into the lab's quantities."""
    raw = json.loads(JMH_FIXTURE.read_text())
    results = java.parse_jmh(JMH_FIXTURE)
    assert {r.benchmark for r in results} == set(java.BENCHMARKS)
    by = {r.benchmark: r for r in results}
    enc1 = next(x for x in raw if x["benchmark"].endswith(".encrypt1"))
    assert by["encrypt1"].forks == enc1["primaryMetric"]["rawData"]
    assert by["encrypt1"].impl == "rc6/ref" and by["encrypt1"].key_bits == 128 and len(by["encrypt1"].forks) == 2
    assert by["encrypt1"].vm_version.startswith("17.")

    procs = java.timing_processes(results, "rc6/ref")
    assert len(procs) == 2 and set(procs[0]) == {128}
    tq = {q.metric: q for q in timing_quantities(procs, 128, "jmh")}
    assert tq["encrypt_speed"].per_process == [min(f) for f in enc1["primaryMetric"]["rawData"]]
    assert tq["encrypt_speed"].unit == "Kbit/s" and tq["encrypt_speed"].rate_work == 128e6
    key = next(x for x in raw if x["benchmark"].endswith(".keySetup"))["primaryMetric"]["rawData"]
    assert tq["key_setup_speed"].per_process == [min(f) for f in key] and tq["key_setup_speed"].unit == "keys/s"
    assert len(tq["decrypt_speed"].samples) == 6

    cq = {(q.metric, q.n_blocks): q for q in cycle_quantities(java.cycle_processes(results, "rc6/ref"))}
    enc1024 = next(x for x in raw if x["benchmark"].endswith(".encrypt1024"))["primaryMetric"]["rawData"]
    assert cq[("encrypt_per_block", 1024)].per_process == pytest.approx([min(f) / 1024 for f in enc1024])
    assert cq[("encrypt_per_block", 1024)].unit == "ns" and cq[("decrypt_per_block", 1)].counter == "jmh"


def test_jmh_json_that_is_not_a_cost_per_operation_is_refused():
    raw = json.loads(JMH_FIXTURE.read_text())
    thrpt = [dict(raw[0], mode="thrpt")]
    with pytest.raises(ValueError, match="mode 'thrpt'"):
        java.parse_jmh(thrpt)
    other = [dict(raw[0], benchmark="cipherlab.bench.CipherBench.somethingElse")]
    with pytest.raises(ValueError, match="unknown benchmark"):
        java.parse_jmh(other)
    us = json.loads(json.dumps(raw[:1]))
    us[0]["primaryMetric"]["scoreUnit"] = "us/op"
    assert java.parse_jmh(us)[0].forks[0][0] == pytest.approx(raw[0]["primaryMetric"]["rawData"][0][0] * 1e3)


def test_the_interpreter_is_several_times_slower_than_c2(java_build, tmp_path):
    """The JVM profiles really differ: -Xint (no JIT) against the default tiered C2, RC6 encryption of 1024
    blocks, one fork each, short iterations.  The 1999 papers saw about 10x; a loose 3x keeps it a behaviour."""
    profs = java.profiles()
    cost = {}
    for name in ("openjdk17-c2", "openjdk17-int"):
        (r,) = java.run_jmh(java_build, IMPLS["rc6/ref"], profs[name], tmp_path / f"{name}.json", key_bits=[128],
                            benchmarks=["encrypt1024"], forks=1, warmup=3, iterations=3, iteration_ms=200)
        assert ("-Xint" in r.jvm_args) == (name == "openjdk17-int")
        cost[name] = min(r.per_process_min)
    assert cost["openjdk17-int"] >= 3 * cost["openjdk17-c2"], cost


def test_a_missing_jdk_is_unavailable_naming_the_package(monkeypatch, tmp_path, lab):
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = java.unavailable()
    assert reason and "\n" not in reason and java.JDK_PACKAGE in reason and "javac" in reason
    with pytest.raises(java.JavaUnavailable, match=java.JDK_PACKAGE):
        java.build(tmp_path / "build", IMPLS)


def test_jvm_profiles_are_data_with_a_strict_schema(tmp_path):
    """The JVM profiles are toolchain profiles of family jvm (toolchains/openjdk*.yaml): every flag set starts a
    JVM, and the schema is the toolchains' (an unknown family is refused)."""
    profs = java.profiles()
    assert {p.flags for p in profs.values()} >= {(), ("-XX:TieredStopAtLevel=1",), ("-Xint",),
                                                ("-XX:+UnlockDiagnosticVMOptions", "-XX:-UseAESIntrinsics")}
    for p in profs.values():  # every flag set starts a JVM (a diagnostic flag needs its unlock first)
        if p.image:  # a JVM in a target's image (OpenJDK 21): started there when the image is built
            assert p.java.startswith("/") and p.package
            if java.profile_unavailable(p):
                continue
            r = java.jvm_command(p, [*p.flags, "-version"], 120)
        else:
            r = subprocess.run([p.java, *p.flags, "-version"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{p.name}: {r.stderr.strip()}"
    bad = tmp_path / "fast.yaml"
    with pytest.raises(ConfigError, match="family"):
        validate(ToolchainFile, {"description": "x", "family": "hotspot", "cc": "java", "flags": []}, bad)


def test_the_java_section_of_cipher_yaml_is_strict_and_needs_its_source(lab, tmp_path):
    path = lab.ciphers["rc6"].folder / "cipher.yaml"
    import yaml

    data = yaml.safe_load(path.read_text())
    data["java"]["ref"]["inlined"] = True
    with pytest.raises(ConfigError, match=r"key 'java.ref.inlined': unknown key"):
        validate(CipherFile, data, path)
    data["java"]["ref"].pop("inlined")
    data["java"]["ref"]["default"] = False
    with pytest.raises(ConfigError, match="default: true"):
        validate(CipherFile, data, path)
    with pytest.raises(ConfigError, match=r"key 'java\.\w+': no Java source"):
        java.discover(lab, source_root=tmp_path)


@pytest.mark.parametrize("script", ["serpent/gen_bitslice.py", "cast256/gen_sboxes.py"])
def test_generated_java_equals_its_generator(script):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(java.JAVA_SRC / "ciphers" / script), "--check"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_lab_validates_the_java_data_at_start(lab, tmp_path):
    """JVM profiles inherit and add flags like the compilers' profiles; an unknown key is refused at start,
    naming the file and the key."""
    from lab.config import Lab

    for d in ("targets", "profiles", "c_src", "java_src"):
        (tmp_path / d).symlink_to(ROOT / d)
    shutil.copytree(ROOT / "toolchains", tmp_path / "toolchains")
    fresh = Lab(root=tmp_path, shared=lab.shared)
    assert set(java.profiles(fresh)) == set(java.profiles()) >= {"openjdk17-c2", "openjdk17-int", "openjdk21-c2"}
    xint = fresh.toolchain("openjdk17-int")
    assert xint.family == "jvm" and xint.cc == "java" and xint.flags == ("-Xint",)
    assert xint.package == "openjdk-17-jdk-headless"  # inherited from openjdk17-c2
    assert java.profiles(fresh)["openjdk21-c1"].image == "x86_64-trixie"  # its target's image holds the JVM
    (tmp_path / "toolchains" / "openjdk17-int.yaml").write_text(
        "description: x\ninherits: openjdk17-c2\nadd_flags: [-Xint]\nopt_level: 3\n")
    with pytest.raises(ConfigError, match=r"openjdk17-int.yaml: key 'opt_level': unknown key"):
        Lab(root=tmp_path, shared=lab.shared)


def test_a_provider_this_jvm_lacks_is_unavailable(java_build, tmp_path):
    """A JCA peer whose provider is absent reports itself unavailable (exit 3), as an AES-NI build on a CPU
    without AES-NI does, and the verdict says so.  (The registry read first on the class path names it.)"""
    sun = IMPLS["rijndael/sunjce"]
    ghost = java.JavaImpl(**{**sun.__dict__, "name": "ghost", "argument": sun.argument.replace("SunJCE", "NoSuchJCE")})
    (tmp_path / "cipherlab").mkdir()
    (tmp_path / "cipherlab" / "registry.txt").write_text(java.registry_text({ghost.id: ghost}))
    b = java.JavaBuild(tmp_path, (java_build.classes, *java_build.jars), "ghost", java_build.javac_version)
    runs = java.kat_runs(b, ghost)
    assert runs[0][1].returncode == 3
    v = java.verdict(runs, dict(ghost.checksums))
    assert v.status == "unavailable", v.line()


def test_paired_ratios_take_each_round_on_its_own():
    """Ours and the peer measured back to back per round: a machine twice as slow in round 2 changes no ratio."""
    rounds = [{"x/ours": {"encrypt1024": 100.0, "keySetup": 10.0}, "x/peer": {"encrypt1024": 125.0, "keySetup": 40.0}},
              {"x/ours": {"encrypt1024": 200.0, "keySetup": 20.0}, "x/peer": {"encrypt1024": 250.0, "keySetup": 80.0}},
              {"x/ours": {"encrypt1024": 90.0, "keySetup": 12.0}, "x/peer": {"encrypt1024": 100.0, "keySetup": 40.0}}]
    r = java.paired_ratios(rounds, "x/ours", "x/peer")
    assert r["encrypt1024"] == {"median": 0.8, "low": 0.8, "high": 0.9, "rounds": 3, "best_over_best": 0.9}
    assert r["keySetup"]["median"] == pytest.approx(0.25) and r["keySetup"]["high"] == pytest.approx(0.3)
    assert java.paired_ratios(rounds[:2], "x/ours", "x/peer")["keySetup"]["median"] == pytest.approx(0.25)
    assert java.paired_ratios(rounds, "x/ours", "y/peer") == {}


def test_interleaved_rounds_feed_paired_ratios(java_build, tmp_path):
    pair = [IMPLS["idea/ref"], IMPLS["idea/bouncycastle"]]
    rounds = java.interleaved_rounds(java_build, pair, java.profiles()["openjdk17-c2"], tmp_path, rounds=1,
                                     benchmarks=["encrypt1"], warmup=1, iterations=2, iteration_ms=100)
    assert len(rounds) == 1 and set(rounds[0]) == {"idea/ref", "idea/bouncycastle"}
    r = java.paired_ratios(rounds, "idea/ref", "idea/bouncycastle")
    assert set(r) == {"encrypt1"} and r["encrypt1"]["rounds"] == 1 and r["encrypt1"]["median"] > 0


def test_bench_ratios_are_the_per_process_minimum_estimator_with_an_interval_over_processes():
    """bench.java's Java / C ratio: each side's best process (JMH fork, C process), the lab's estimator, and the
    bootstrap interval over both sides' processes; a slow process on either side moves neither the ratio nor,
    with enough processes, the interval's lower end below what the best processes allow."""
    from lab.bench.java import ratios

    pooled = {"x/ours": {"encrypt1": [110.0, 100.0, 180.0, 101.0, 150.0], "keySetup": [10.0]},
              "c:x": {"encrypt1": [50.0, 52.0, 90.0, 51.0, 50.5], "encrypt1024": [1.0]}}
    r = ratios(pooled, "x/ours", "c:x")
    assert set(r) == {"encrypt1"}  # only what both sides measured
    e = r["encrypt1"]
    assert e["ratio"] == pytest.approx(2.0) and e["ours_ns"] == 100.0 and e["other_ns"] == 50.0
    assert e["low"] <= 2.0 <= e["high"] and e["processes"] == [5, 5]
    assert e["low"] >= 100.0 / 52.0 - 1e-9 and e["high"] <= 110.0 / 50.0 + 1e-9


def test_fork_minima_give_each_pinned_fork_its_best_iteration(java_build, tmp_path):
    """JMH as bench.java runs it: several forks pinned to one CPU, short iterations; one minimum per fork, each
    the smallest of that fork's iterations in JMH's own JSON."""
    import os

    cpu = sorted(os.sched_getaffinity(0))[-1]
    impl = IMPLS["rc6/ref"]
    out = java.fork_minima(java_build, [impl], java.profiles()["openjdk17-c2"], tmp_path, benchmarks=["encrypt1"],
                           forks=2, warmup=2, warmup_ms=20, iterations=10, iteration_ms=2, cpu=cpu)
    (raw,) = json.loads((tmp_path / "rc6_ref-openjdk17-c2.json").read_text())
    forks = raw["primaryMetric"]["rawData"]
    assert len(forks) == 2 and all(len(f) == 10 for f in forks) and raw["measurementTime"] == "2 ms"
    assert out == {"rc6/ref": {"encrypt1": [min(f) for f in forks]}}


def test_a_jvm_that_does_not_start_where_the_cell_runs_has_no_version():
    """On an SSH host without the profile's JVM the shell says "java: not found": no build line, so the cell is
    unavailable naming the package (lab/pipeline.py), not gated on a launcher that cannot start."""
    from lab.backends.base import Completed
    from lab.java import jvm_state

    missing = jvm_state("java", (), lambda argv: Completed(argv, 127, "", "sh: 1: java: not found\n", 0.0))
    assert missing["java_version"] == ""
    here = jvm_state("java", (), lambda argv: Completed(argv, 0, "     bool UseCompiler = true {product}\n",
                                                        'openjdk version "17"\nOpenJDK 64-Bit Server VM (build 17)\n',
                                                        0.0))
    assert here["java_version"] == "OpenJDK 64-Bit Server VM (build 17)" and here["jit"] == "C2"


def test_a_shared_jar_is_an_unsigned_copy_with_its_main_manifest_only(tmp_path):
    """unsigned_copy drops the signature files and the manifest's per-entry digests (a JVM verifies a signed
    jar's classes as it loads them) and keeps every other entry and the manifest's main section; the same jar
    gives the same bytes."""
    import zipfile

    src = tmp_path / "lib.jar"
    manifest = (b"Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\nName: a/B.class\r\nSHA-256-Digest: xyz\r\n\r\n")
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest)
        z.writestr("META-INF/LIB.SF", b"signature file")
        z.writestr("META-INF/LIB.DSA", b"signature block")
        z.writestr("META-INF/services/x.Provider", b"a.B\n")
        z.writestr("a/B.class", b"\xca\xfe\xba\xbe")
    java.unsigned_copy(src, tmp_path / "one.jar")
    java.unsigned_copy(src, tmp_path / "two.jar")
    with zipfile.ZipFile(tmp_path / "one.jar") as z:
        assert z.namelist() == ["META-INF/MANIFEST.MF", "META-INF/services/x.Provider", "a/B.class"]
        assert z.read("META-INF/MANIFEST.MF") == b"Manifest-Version: 1.0\nMulti-Release: true\n\n"
        assert z.read("a/B.class") == b"\xca\xfe\xba\xbe"
    assert (tmp_path / "one.jar").read_bytes() == (tmp_path / "two.jar").read_bytes()


def test_a_shared_jar_copied_before_it_was_unsigned_is_made_again(tmp_path):
    """A build folder from before unsigned_copy holds a plain copy of the signed jar: shared_jars replaces it (and a
    jar whose source changed), and leaves a current copy alone."""
    import zipfile

    src = tmp_path / "m2" / "lib.jar"
    src.parent.mkdir()
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("META-INF/LIB.SF", b"signature file")
        z.writestr("a/B.class", b"\xca\xfe\xba\xbe")
    b = java.JavaBuild(classes=tmp_path / "build" / "key" / "classes", jars=(src,), key="key", javac_version="")
    old = tmp_path / "build" / "jars" / "lib.jar"
    old.parent.mkdir(parents=True)
    shutil.copyfile(src, old)  # what shared_jars wrote before
    assert java.shared_jars(b) == [old]
    assert zipfile.ZipFile(old).namelist() == ["a/B.class"]
    made = old.stat().st_mtime_ns
    assert java.shared_jars(b) == [old] and old.stat().st_mtime_ns == made  # current: not made again
    with zipfile.ZipFile(src, "a") as z:
        z.writestr("a/C.class", b"\xca\xfe\xba\xbe")
    java.shared_jars(b)
    assert zipfile.ZipFile(old).namelist() == ["a/B.class", "a/C.class"]
