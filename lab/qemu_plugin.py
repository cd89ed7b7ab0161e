"""The QEMU plugin (c_src/qemu_plugin) built on this machine, for the host's own qemu-user.

Instruction counts (lab/icount.py) and the constant-time trace (lab/ct.py) run programs under this machine's
QEMU with the lab's TCG plugin.  QEMU loads a plugin only when it was compiled against its own plugin API
header, ``qemu-plugin.h``, which Debian 12 ships in no binary package: it comes from Debian's ``qemu``
source package of exactly the installed version, as the images do it (dockerfiles/scripts/build-qemu-plugin.sh).
Here that takes no container engine and changes nothing of the system's apt set-up: a private apt
configuration (the system's sources as ``deb-src``, lists under build/) downloads the source package,
``dpkg-source`` unpacks it, the header is kept, the rest deleted.  The plugin is built once per content
hash (its source files and the QEMU version), proven by its self-test (c_src/qemu_plugin/selftest.sh) and
renamed into place: ``build/qemu-plugin/<hash>/libicount.so``.  About 30 s the first time, nothing after.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from .errors import UserError

PLUGIN_SOURCE = Path("c_src/qemu_plugin")
PLUGIN_BUILD = Path("build/qemu-plugin")

# where the plugin lives: copied out of the x86_64 image for the host backend (lab/images/plugin.py), and inside
# the images (the container backend)
HOST_PLUGIN = Path("build/qemu-plugin/libicount.so")
PLUGIN_IN_IMAGE = "/opt/cipherlab/lib/libicount.so"
TOOLS = ("apt-get", "dpkg-source", "dpkg-query", "make", "cc", "qemu-x86_64")
_lock = threading.Lock()
_failed: dict[str, str] = {}  # root -> why the build failed (tried once per process)
_last_failure = ""


class PluginBuildError(UserError):
    """The plugin could not be built here; the message is one line with the cause and the fix."""


def _run(argv: list[str], *, cwd: Path | None = None, what: str) -> str:
    try:
        c = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PluginBuildError(f"building the QEMU plugin: {what} failed: {e}") from None
    if c.returncode != 0:
        tail = " ".join((c.stderr or c.stdout).strip().splitlines()[-2:])[-240:]
        raise PluginBuildError(f"building the QEMU plugin: {what} failed (exit {c.returncode}): {tail}")
    return c.stdout


def qemu_versions() -> tuple[str, str]:
    """(the installed qemu-user's version, its source package's version)."""
    if not shutil.which("dpkg-query"):
        raise PluginBuildError("building the QEMU plugin needs Debian's dpkg: run ./cipherlab on a Debian machine, "
                               "or set CIPHERLAB_QEMU_PLUGIN to a libicount.so built for this QEMU")
    try:
        out = _run(["dpkg-query", "-W", "-f=${Version} ${source:Version}", "qemu-user"], what="dpkg-query qemu-user")
    except PluginBuildError:
        raise PluginBuildError("qemu-user is not installed: run ./cipherlab (it installs qemu-user), "
                               "or apt-get install qemu-user") from None
    binary, source = out.split()
    return binary, source


def content_hash(root: Path, qemu_version: str) -> str:
    """What the plugin binary depends on: its source folder's files and the QEMU it is built for."""
    h = hashlib.sha256(qemu_version.encode())
    for p in sorted((root / PLUGIN_SOURCE).iterdir()):
        if p.is_file() and p.suffix != ".md":
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def built_plugin(root: Path) -> Path | None:
    """The cached plugin for this checkout and this QEMU, when it has been built."""
    try:
        binary, _ = qemu_versions()
    except PluginBuildError:
        return None
    p = root / PLUGIN_BUILD / content_hash(root, binary) / "libicount.so"
    return p if p.exists() else None


def _deb_src_config(work: Path) -> list[str]:
    """apt options of a private configuration: the system's Debian sources as deb-src, lists under work."""
    parts = work / "sources.list.d"
    parts.mkdir(parents=True)
    for f in Path("/etc/apt/sources.list.d").glob("*.sources"):
        text = f.read_text()
        if "Types: deb" in text:
            (parts / f.name).write_text(text.replace("Types: deb\n", "Types: deb-src\n"))
    legacy = Path("/etc/apt/sources.list")
    lines = [ln.replace("deb ", "deb-src ", 1) for ln in (legacy.read_text().splitlines() if legacy.exists() else [])
             if ln.startswith("deb ")]
    (work / "sources.list").write_text("\n".join(lines) + "\n")
    for d in ("lists/partial", "archives/partial"):
        (work / d).mkdir(parents=True)
    return ["-o", f"Dir::Etc::SourceList={work / 'sources.list'}", "-o", f"Dir::Etc::SourceParts={parts}",
            "-o", f"Dir::State::Lists={work / 'lists'}", "-o", f"Dir::Cache::Archives={work / 'archives'}"]


def plugin_header(root: Path, source_version: str) -> Path:
    """qemu-plugin.h of Debian's qemu source package at source_version (downloaded and unpacked once)."""
    dest = root / PLUGIN_BUILD / "include" / source_version.replace(":", "_") / "qemu-plugin.h"
    if dest.exists():
        return dest
    for tool in TOOLS:
        if not shutil.which(tool):
            raise PluginBuildError(f"building the QEMU plugin needs `{tool}`: run ./cipherlab (it installs "
                                   "dpkg-dev, make, gcc and qemu-user)")
    with tempfile.TemporaryDirectory(prefix="qemu-src-") as tmp:
        work = Path(tmp)
        opts = _deb_src_config(work / "apt")
        _run(["apt-get", *opts, "-qq", "update"], what="apt-get update (Debian's deb-src lists)")
        _run(["apt-get", *opts, "-qq", "source", "--download-only", f"qemu={source_version}"], cwd=work,
             what=f"apt-get source qemu={source_version}")
        dsc = next(work.glob("qemu_*.dsc"))
        _run(["dpkg-source", "-q", "-x", dsc.name, "src"], cwd=work, what=f"dpkg-source -x {dsc.name}")
        header = work / "src" / "include" / "qemu" / "qemu-plugin.h"
        if not header.exists():
            raise PluginBuildError(f"building the QEMU plugin: qemu-plugin.h is not in Debian's qemu {source_version} "
                                   "source package (include/qemu/)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(header, dest)
    return dest


def build_plugin(root: Path, say=lambda s: None) -> Path:
    """The plugin for this machine's qemu-user: the cached one, else built, self-tested and cached."""
    binary, source = qemu_versions()
    final = root / PLUGIN_BUILD / content_hash(root, binary) / "libicount.so"
    if final.exists():
        return final
    final.parent.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two processes: one builds, the other finds it built
        if final.exists():
            return final
        say(f"building the QEMU plugin for qemu-user {binary} (once; Debian's qemu source package for its header)")
        header = plugin_header(root, source)
        tmp = Path(tempfile.mkdtemp(prefix=".plugin-", dir=final.parent.parent))
        try:
            _run(["make", "-s", "-C", str(root / PLUGIN_SOURCE), f"QEMU_PLUGIN_INCLUDE={header.parent}",
                  f"OUT={tmp}"], what="make (c_src/qemu_plugin)")
            _run([str(root / PLUGIN_SOURCE / "selftest.sh"), f"{tmp}/libicount.so"], what="the plugin's self-test")
            (tmp / "qemu-version").write_text(binary + "\n")
            tmp.rename(final.parent)  # into place whole: a reader sees all or nothing
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def host_plugin(root: Path, say=lambda s: None) -> str | None:
    """The host-built plugin, built now when it is not yet (at most one try per checkout and process; why it
    failed is :func:`last_failure`)."""
    global _last_failure
    key = str(root)
    with _lock:
        if key in _failed:
            return None
        try:
            return str(build_plugin(root, say))
        except PluginBuildError as e:
            _failed[key] = _last_failure = str(e)
            return None


def last_failure() -> str:
    """Why the last build of the plugin in this process failed ("" when none did)."""
    return _last_failure


__all__ = ["PluginBuildError", "build_plugin", "built_plugin", "content_hash", "host_plugin", "last_failure",
           "plugin_header", "qemu_versions", "PLUGIN_BUILD"]
