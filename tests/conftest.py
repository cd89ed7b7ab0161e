"""Shared fixtures: the real lab (real compilers, real vectors from ../shared)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lab.config import Lab

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_CIPHERS = ROOT / "tests" / "fixtures" / "ciphers"
TOOLCHAINS = ["gcc-O3", "clang-O3"]


@pytest.fixture(scope="session")
def lab() -> Lab:
    lab = Lab()
    if not lab.vectors_dir.is_dir():
        pytest.fail(f"known-answer vectors not found at {lab.vectors_dir} (shared/ must sit beside the checkout)")
    return lab


@pytest.fixture(scope="session")
def fixture_lab(lab) -> Lab:
    """The lab plus the deliberately broken test ciphers."""
    return Lab(cipher_dirs=[ROOT / "c_src" / "ciphers", FIXTURE_CIPHERS])


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("build")


@pytest.fixture(scope="session")
def small_run(fixture_lab, tmp_path_factory) -> Path:
    """A real run on the host: two good ciphers, a wrong one, a crashing one."""
    from lab.run import RunRequest, run

    tmp = tmp_path_factory.mktemp("run")
    m = tmp / "matrix.yaml"
    m.write_text(
        "ciphers: [des, wrongdes, crashdes, idea]\n"
        "toolchains: [gcc-O3, clang-O3]\n"
        "targets: [host]\n"
        "profile: smoke\n"
        "exclude:\n"
        "  - {cipher: idea, toolchain: clang-O3}\n"
    )
    req = RunRequest(matrix=m, results_dir=tmp / "results", build_dir=tmp / "build", icount=False)
    return run(fixture_lab, req).run_dir


@pytest.fixture(autouse=True)
def _report_sections_must_not_fail(request, monkeypatch):
    """A report section that fails becomes an error box in the HTML (never a silently missing part); in the
    tests it also fails the test that built the report, whatever that test checks, unless the test is marked
    `report_errors` (it provokes them).  Reports built by a subprocess are checked with errors_in()."""
    import lab.report as report

    failed: list[str] = []
    guard = report._guard

    def watched(name, fn, *args):
        out = guard(name, fn, *args)
        if "error" in out:
            failed.append(f"{name}: {out['error']}")
        return out

    monkeypatch.setattr(report, "_guard", watched)
    yield failed
    if failed and not request.node.get_closest_marker("report_errors"):
        pytest.fail("a report section failed (an error box in the HTML): " + "; ".join(failed), pytrace=False)


def all_implementations() -> list[tuple[str, str]]:
    lab = Lab()
    return [(c.name, i.name) for c in lab.ciphers.values() for i in c.ours()]


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


def peer_on_host(peer) -> bool:
    """Whether a peer library's header is on this machine (where the host target builds it)."""
    return (Path("/usr/include") / peer.header).exists()


def engine_or_skip():
    """The container engine; without one the test is skipped (it fails with CIPHERLAB_REQUIRE_CONTAINERS=1, as
    in CI)."""
    from lab.images import EngineError, detect_engine

    try:
        return detect_engine()
    except EngineError as e:
        if os.environ.get("CIPHERLAB_REQUIRE_CONTAINERS") == "1":
            pytest.fail(f"CIPHERLAB_REQUIRE_CONTAINERS=1 but no container engine: {e}")
        pytest.skip(f"no container engine: {e}")


@pytest.fixture(scope="session")
def host_plugin() -> str:
    """The QEMU plugin of host-backend counts and traces: built on this machine for its qemu-user
    (lab/qemu_plugin.py, cached under build/qemu-plugin/), or copied out of the x86_64 image; when neither
    can be had the test fails with the reason (building needs Debian's deb-src lists to answer)."""
    from lab.backends.host import HostBackend
    from lab.qemu_plugin import last_failure

    found = HostBackend().plugin_path()
    assert found, f"no QEMU plugin: {last_failure()}"
    return found


def image_or_skip(target: str, build_when_required: bool = False):
    """The engine, when one answers and the target's image is built; a missing image skips the test (with
    build_when_required and CIPHERLAB_REQUIRE_CONTAINERS=1, as in CI, it is built here)."""
    from lab.images import build_images, image_ref

    engine = engine_or_skip()
    lab = Lab()
    if not engine.image_exists(image_ref(lab.target(target))):
        if not (build_when_required and os.environ.get("CIPHERLAB_REQUIRE_CONTAINERS") == "1"):
            pytest.skip(f"image cipherlab/{target} not built (invoke images.build --targets {target})")
        build_images(lab, [target], engine)
    return engine
