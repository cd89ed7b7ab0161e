"""The QEMU plugin built on this machine (lab/qemu_plugin.py), and the trace check and instruction counts on the
host with no container engine at all: real apt (Debian's qemu source package), real make, real QEMU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab import qemu_plugin

from .conftest import ROOT

ENGINES = ("docker", "dockerd", "podman", "containerd")


@pytest.fixture(scope="module")
def no_engine_path(tmp_path_factory) -> str:
    """A PATH with every program of this machine's PATH but no container engine."""
    bin_dir = tmp_path_factory.mktemp("bin-without-engines")
    for d in [str(Path(sys.executable).parent)] + os.environ["PATH"].split(os.pathsep):
        for f in Path(d).glob("*") if Path(d).is_dir() else []:
            if not f.name.startswith(ENGINES) and not (bin_dir / f.name).exists():
                (bin_dir / f.name).symlink_to(f)
    path = str(bin_dir)
    assert shutil.which("docker", path=path) is None and shutil.which("qemu-x86_64", path=path)
    return path


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A checkout-shaped folder holding only what building the plugin reads (and the header, fetched once)."""
    tmp = tmp_path_factory.mktemp("checkout")
    for part in ("c_src/qemu_plugin", "c_src/harness"):
        shutil.copytree(ROOT / part, tmp / part)
    return tmp


def _copy(checkout: Path, tmp: Path) -> Path:
    shutil.copytree(checkout, tmp / "c")
    return tmp / "c"


def test_the_plugin_is_built_from_debians_qemu_source_once_and_cached_by_content(checkout):
    root = checkout
    said: list[str] = []
    p = qemu_plugin.build_plugin(root, said.append)
    binary, source = qemu_plugin.qemu_versions()
    assert p == root / qemu_plugin.PLUGIN_BUILD / qemu_plugin.content_hash(root, binary) / "libicount.so"
    assert (p.parent / "qemu-version").read_text().strip() == binary
    assert (root / qemu_plugin.PLUGIN_BUILD / "include" / source.replace(":", "_") / "qemu-plugin.h").exists()
    assert len(said) == 1 and "building the QEMU plugin" in said[0]
    mtime = p.stat().st_mtime_ns
    assert qemu_plugin.build_plugin(root, said.append) == p and p.stat().st_mtime_ns == mtime and len(said) == 1
    assert qemu_plugin.built_plugin(root) == p
    # another plugin source is another binary: a new hash, built beside (the header is not fetched again)
    src = root / "c_src/qemu_plugin/icount.c"
    src.write_text(src.read_text() + "\n/* changed */\n")
    assert qemu_plugin.built_plugin(root) is None
    q = qemu_plugin.build_plugin(root, said.append)
    assert q != p and q.exists() and p.exists()


def test_a_failed_build_is_one_line_naming_the_step(checkout, tmp_path, monkeypatch):
    root = _copy(checkout, tmp_path)
    (root / "c_src/qemu_plugin/icount.c").write_text("#include <qemu-plugin.h>\nint broken(\n")
    monkeypatch.setattr(qemu_plugin, "_failed", {})
    assert qemu_plugin.host_plugin(root) is None
    why = qemu_plugin.last_failure()
    assert why.startswith("building the QEMU plugin: make (c_src/qemu_plugin) failed (exit 2)") and "\n" not in why


def _lab(path: str, *args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CIPHERLAB_QEMU_PLUGIN"}
    env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_trace_check_runs_on_the_host_without_a_container_engine(no_engine_path, tmp_path, host_plugin):
    c = _lab(no_engine_path, "ct", "rijndael", "--impl", "ttable,bitslice64", "--dudect", "0",
             "--build-dir", str(tmp_path / "b"), "--json", str(tmp_path / "ct.json"))
    assert "container engine" not in c.stdout + c.stderr, c.stderr
    assert c.returncode == 1, c.stdout + c.stderr   # the T-table leaks
    got = {r["impl"]: r["verdict"] for r in json.loads((tmp_path / "ct.json").read_text())}
    assert got["rijndael/ttable"]["verdict"] == "leak" and got["rijndael/bitslice64"]["verdict"] == "clean"
    assert "ttable.c:" in c.stdout


def test_instruction_counts_on_the_host_without_a_container_engine(no_engine_path, tmp_path, host_plugin):
    c = _lab(no_engine_path, "run", "--ciphers", "rc6", "--implementations", "rc6/ref", "--toolchains", "gcc-O3",
             "--profile", "smoke", "--results-dir", str(tmp_path / "r"), "--no-report", "--quiet")
    assert c.returncode == 0, c.stdout + c.stderr
    rec = json.loads(next((tmp_path / "r").rglob("cells.jsonl")).read_text().splitlines()[0])
    assert rec["status"] == "ok" and rec["icount"]["unit"] == "guest_insns", rec.get("icount_note")
    enc = next(o for o in rec["icount"]["ops"] if o["op"] == "encrypt")
    assert len(set(enc["deltas"])) == 1 and enc["deltas"][0] > 100  # exact: every sample the same count
