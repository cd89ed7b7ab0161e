"""The container backend for real: images built by lab.images, cipher builds and
known-answer runs in them, big-endian through the real qemu-sparc64, the
endian-buggy fixture red on sparc64 and green on x86_64, instruction counts
that repeat exactly.

Needs a container engine (Docker, or Podman); without one these tests are
skipped, unless CIPHERLAB_REQUIRE_CONTAINERS=1 (CI), where they fail.  The
first run builds the base image and two target images (minutes).
"""

from __future__ import annotations

import time

import pytest

from lab import icount, results
from lab.build import Builder
from lab import protocol
from lab.icount import fill_deltas
from lab.images import build_images
from lab.publish import build_report
from lab.report import errors_in
from lab.run import RunRequest, run

from .conftest import ROOT, engine_or_skip

pytestmark = pytest.mark.container
TARGETS = ["x86_64", "sparc64"]
EM_SPARCV9, EM_X86_64 = 43, 62


@pytest.fixture(scope="module")
def engine():
    return engine_or_skip()


@pytest.fixture(scope="module")
def images(fixture_lab, engine) -> dict[str, str]:
    t0 = time.monotonic()
    ids = build_images(fixture_lab, TARGETS, engine)
    print(f"images {ids} ready in {time.monotonic() - t0:.0f} s")
    return ids


@pytest.fixture(scope="module")
def backend(fixture_lab, engine, images):
    from lab.backends.container import ContainerBackend

    be = ContainerBackend(fixture_lab, engine=engine, build_dir=ROOT / "build" / "test-containers",
                          auto_build=False)
    yield be
    be.close()


@pytest.fixture(scope="module")
def builder(backend) -> Builder:
    return Builder(ROOT, backend.build_dir, backend)


def _kat(fixture_lab, builder, backend, cipher: str, toolchain: str, target: str) -> dict:
    c, tc, tg = fixture_lab.cipher(cipher), fixture_lab.toolchain(toolchain), fixture_lab.target(target)
    impl = c.impls[c.default_impl]
    b = builder.build_one(impl, tc, tg, "kat")
    assert b.ok, b.log
    exe = b.program
    head = exe.read_bytes()[:20]
    endian = ">" if head[5] == 2 else "<"
    machine = int.from_bytes(head[18:20], "big" if endian == ">" else "little")
    vectors = impl.vector_files[0]
    done = backend.run_program(exe, ["--impl", impl.id, "--file", str(vectors)], target=tg, timeout=300)
    summary = next((x for x in done.json_lines() if x.get("type") == "kat_summary"), None)
    assert summary, f"no kat summary: {done.describe_failure()}\n{done.stdout[-2000:]}"
    return {"summary": summary, "machine": machine, "big_endian": endian == ">", "completed": done}


# ------------------------------------------------------------------ sandbox
def test_containers_are_sandboxed(fixture_lab, backend):
    x = fixture_lab.target("x86_64")
    run = lambda *argv: backend.exec(list(argv), timeout=60, target=x)  # noqa: E731
    assert run("id", "-u").stdout.strip() != "0", "commands must not run as root"
    assert run("ls", "/sys/class/net").stdout.split() == ["lo"], "no network but loopback"
    assert run("touch", str(ROOT / "README.md")).returncode != 0, "the repository is read-only"
    assert run("touch", "/etc/cipherlab").returncode != 0, "the image is read-only"
    out = backend.build_dir / "sandbox-probe"
    out.unlink(missing_ok=True)
    assert run("sh", "-c", f"echo ok > {out}").returncode == 0, "the build directory is writable"
    assert out.read_text() == "ok\n"
    vectors = fixture_lab.vectors_dir / "des.kat"
    assert run("head", "-c", "1", str(vectors)).returncode == 0, "the shared vectors are visible"
    env = backend.exec(["sh", "-c", "echo $CIPHERLAB_PROBE; command -v cipherlab-run"], timeout=60,
                       env={"CIPHERLAB_PROBE": "yes"}, target=fixture_lab.target("sparc64"))
    assert env.stdout.split() == ["yes", "/usr/local/bin/cipherlab-run"], "each image has the runner entry point"


def test_timeout_kills_the_command_inside_the_container(fixture_lab, backend):
    x = fixture_lab.target("x86_64")
    t0 = time.monotonic()
    c = backend.exec(["sleep", "77"], timeout=2, target=x)
    assert c.timed_out and c.returncode is None
    assert time.monotonic() - t0 < 30
    procs = backend.exec(["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"], timeout=30, target=x)
    assert "sleep 77" not in procs.stdout
    crash = backend.exec(["sh", "-c", "kill -SEGV $$"], timeout=30, target=x)
    assert crash.crashed and crash.signal_name == "SIGSEGV"


def test_a_missing_image_fails_commands_without_raising(fixture_lab, backend):
    ghost = fixture_lab.target("sparc64").model_copy(update={"name": "ghost", "image": "cipherlab/no-such-image"})
    for _ in range(2):  # the second answer comes from the remembered failure
        c = backend.exec(["true"], timeout=30, target=ghost)
        assert c.returncode == 125 and "not built" in c.stderr and not c.crashed


def test_describe_records_engine_and_image_ids(backend, images):
    for t in TARGETS:  # the containers start on first use
        backend.exec(["true"], timeout=60, target=backend.lab.target(t))
    d = backend.describe()
    assert d["backend"] == "container" and d["engine"] in ("docker", "podman") and d["engine_version"]
    for t in TARGETS:
        info = d["images"][t]
        assert info["id"] == images[t] and info["id"].startswith("sha256:")
        assert backend.image_id(backend.lab.target(t)) == images[t]
        assert info["revision"] and len(info["content_hash"]) == 64


def test_image_builds_are_incremental(fixture_lab, engine, images):
    t0 = time.monotonic()
    lines: list[str] = []
    assert build_images(fixture_lab, TARGETS, engine, progress=lines.append) == images
    assert all("up to date" in ln for ln in lines), lines
    assert time.monotonic() - t0 < 60


# ------------------------------------------------------------- byte order
@pytest.mark.parametrize("toolchain", ["gcc-O3", "clang-O3"])
def test_des_known_answers_pass_big_endian_under_real_qemu(fixture_lab, builder, backend, toolchain):
    r = _kat(fixture_lab, builder, backend, "des", toolchain, "sparc64")
    assert r["big_endian"] and r["machine"] == EM_SPARCV9, "a big-endian SPARC binary"
    s = r["summary"]
    assert s["records"] > 100 and s["passed"] == s["records"] and s["failed"] == 0


def test_endian_bug_is_red_on_sparc64_and_green_on_x86_64(fixture_lab, builder, backend):
    le = _kat(fixture_lab, builder, backend, "endiandes", "gcc-O3", "x86_64")
    assert not le["big_endian"] and le["machine"] == EM_X86_64
    assert le["summary"]["failed"] == 0 and le["summary"]["passed"] == le["summary"]["records"] > 100
    be = _kat(fixture_lab, builder, backend, "endiandes", "gcc-O3", "sparc64")
    assert be["big_endian"]
    assert be["summary"]["passed"] == 0 and be["summary"]["failed"] >= be["summary"]["records"] > 100


def test_the_ci_path_a_container_run_then_the_report(fixture_lab, images, tmp_path):
    """What CI does with containers, as a test: a run on x86_64 and big-endian sparc64 with the container
    backend (a good cipher and an endian-buggy one), then the report of it."""
    m = tmp_path / "matrix.yaml"
    m.write_text("ciphers: [des, endiandes]\ntoolchains: [gcc-O3]\ntargets: [x86_64, sparc64]\nprofile: smoke\n"
                 "backend: container\n")
    out = run(fixture_lab, RunRequest(matrix=m, results_dir=tmp_path / "results",
                                      build_dir=ROOT / "build" / "test-containers"))
    _, cells = results.read_run(out.run_dir)
    status = {c.cell: c.status for c in cells}
    assert status == {"des/sp64@gcc-O3@x86_64": "ok", "des/sp64@gcc-O3@sparc64": "ok",
                      "endiandes/hostorder@gcc-O3@x86_64": "ok", "endiandes/hostorder@gcc-O3@sparc64": "kat_failed"}
    by = {c.cell: c for c in cells}
    assert "known-answer records failed" in by["endiandes/hostorder@gcc-O3@sparc64"].reason
    sparc = by["des/sp64@gcc-O3@sparc64"]
    assert sparc.emulated and sparc.icount and sparc.image_id == images["sparc64"]
    assert sparc.measurement.stopped == "emulated" and sparc.measurement.cycles == []  # counted, not timed
    html = build_report(fixture_lab, [out.run_dir], results_dir=tmp_path / "results",
                        reports_dir=tmp_path / "reports").read_text()
    assert not errors_in(html)
    assert "gcc-O3 on sparc64 (emulated)" in html and "kat_failed" in html
    assert "Guest instructions per block" in html and "guest_insns" in html
    assert out.exit_code == 1  # a red cell


# ------------------------------------------------------------------ limits
LIMITED = {"pids": 64, "memory_mib": 256}  # small, so the fixtures reach them fast; the defaults are 1024, 4096


def test_a_fork_bomb_and_a_memory_hog_end_at_the_container_limits(images, tmp_path):
    """Every cell container runs with the target's pids and memory limits.  A fork bomb and a memory hog as
    cells (tests/fixtures/limits/greedydes: real DES whose cipherInit runs away, each bounded so that it could
    not starve the machine even without a limit) are stopped by them: each cell ends red with the limit in its
    reason, and the run, the container and the machine go on (a good cell after them is measured)."""
    from lab.config import Lab
    from lab.schema import ContainerLimits

    lab = Lab(cipher_dirs=[ROOT / "c_src" / "ciphers", ROOT / "tests" / "fixtures" / "limits"])
    lab.targets["x86_64"] = lab.targets["x86_64"].model_copy(update={"limits": ContainerLimits(**LIMITED)})
    m = tmp_path / "matrix.yaml"
    m.write_text("ciphers: [greedydes, idea]\nimplementations: [greedydes/bomb, greedydes/hog, idea/ref]\ntoolchains: [gcc-O3]\ntargets: [x86_64]\n"
                 "profile: smoke\nbackend: container\n")
    t0 = time.monotonic()
    out = run(lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=ROOT / "build" / "test-containers",
                              timeout=10, jobs=1, icount=False))
    meta, cells = results.read_run(out.run_dir)
    by = {c.cell: c for c in cells}
    assert sorted(by) == ["greedydes/bomb@gcc-O3@x86_64", "greedydes/hog@gcc-O3@x86_64", "idea/ref@gcc-O3@x86_64"]
    bomb, hog = by["greedydes/bomb@gcc-O3@x86_64"], by["greedydes/hog@gcc-O3@x86_64"]
    assert bomb.status in ("crashed", "timeout") and "pids limit (64) was reached" in bomb.reason, bomb.reason
    assert hog.status in ("crashed", "timeout") and "memory limit (256 MiB) was reached" in hog.reason, hog.reason
    assert by["idea/ref@gcc-O3@x86_64"].status == "ok"  # the run went on, in the same container
    assert meta.backend["images"]["x86_64"]["limits"] == LIMITED  # the limits are recorded with the run
    assert out.exit_code == 1 and time.monotonic() - t0 < 600


def test_every_target_has_container_limits_and_unknown_keys_are_errors(fixture_lab, tmp_path):
    from lab.config import ConfigError
    from lab.schema import ContainerLimits, Target, validate

    assert all(t.limits.pids >= 32 and t.limits.memory_mib >= 256 for t in fixture_lab.targets.values())
    assert fixture_lab.target("sparc64").limits == ContainerLimits(pids=1024, memory_mib=4096)  # the defaults
    data = fixture_lab.target("x86_64").model_dump()
    for limits, key in [({"pids": 64, "memory": "1g"}, "limits.memory"), ({"pids": 4}, "limits.pids")]:
        with pytest.raises(ConfigError) as e:
            validate(Target, {**data, "limits": limits}, tmp_path / "x86_64.yaml")
        assert key in str(e.value), str(e.value)


# ------------------------------------------------------ instruction counts
def _cycles_counts(fixture_lab, builder, backend, target: str, toolchain: str = "gcc-O3"):
    impl, tc, tg = fixture_lab.impl("des/spbox"), fixture_lab.toolchain(toolchain), fixture_lab.target(target)
    b = builder.build_one(impl, tc, tg, "icount")
    assert b.ok, b.log
    args = ["--impl", "des/spbox", "--key-bits", "64", "--samples", "3", "--warmup", "0", "--calls", "1",
            "--sizes", "1,16"]
    runs = [icount.count(backend, b.program, args, target=tg, timeout=300, counts_dir=backend.build_dir / "icount")
            for _ in range(2)]
    for done, counts in runs:
        assert done.returncode == 0, done.describe_failure()
        assert counts, "the plugin wrote no counts"
    return runs


@pytest.mark.parametrize("target", ["sparc64", "x86_64"])
def test_instruction_counts_repeat_exactly(fixture_lab, builder, backend, target):
    (first, counts1), (_second, counts2) = _cycles_counts(fixture_lab, builder, backend, target)
    records = protocol.read(first, "icount")
    assert [r.counter for r in protocol.of(records, protocol.CounterRecord)] == ["qemu-insn-region"]
    filled = fill_deltas(protocol.of(records, protocol.CyclesRecord), counts1)
    again = fill_deltas(protocol.of(protocol.read(_second, "icount"), protocol.CyclesRecord), counts2)
    ops = {(r.op, r.n): r.deltas for r in filled}
    assert ops == {(r.op, r.n): r.deltas for r in again}, "not repeatable"
    assert all(d > 0 for ds in ops.values() for d in ds)
    # the same call gives the same count every repetition, and the counts scale with the work
    for key in (("ekey", 1), ("encrypt", 16), ("decrypt", 16)):
        assert len(set(ops[key])) == 1, f"{key}: {ops[key]}"
    null, one, sixteen = ops[("null", 1)][0], ops[("encrypt", 1)][0], ops[("encrypt", 16)][0]
    assert null < one < sixteen
    assert 10 < (sixteen - null) / (one - null) < 20, "16 blocks cost about 16 times one block"
