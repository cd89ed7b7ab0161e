"""Container engines: Docker (its daemon started when needed) or Podman, chosen once."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ROOT
from ..errors import UserError

PODMAN_CONF = """\
# Written by lab/images.py: what Podman needs on a VM without CAP_SYS_RESOURCE.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
"""


class EngineError(UserError):
    """No usable container engine, or an engine command failed; the message says what to do."""


@dataclass
class Engine:
    """A container engine command line (docker or podman) and its environment."""

    name: str
    exe: str
    env: dict[str, str] = field(default_factory=dict)

    def argv(self, *args: str) -> list[str]:
        return [self.exe, *args]

    def run(self, *args: str, timeout: float | None = 120, check: bool = False, **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        p = subprocess.run(self.argv(*args), env={**os.environ, **self.env}, timeout=timeout, **kw)
        if check and p.returncode != 0:
            err = (p.stderr or "").strip() if isinstance(p.stderr, str) else ""
            raise EngineError(f"{self.name} {' '.join(args[:2])} failed ({p.returncode}): {err[-500:]}")
        return p

    def version(self) -> str:
        fmt = "{{.Server.Version}}" if self.name == "docker" else "{{.Version}}"
        p = self.run("version", "--format", fmt, timeout=30)
        return p.stdout.strip() if p.returncode == 0 else "unknown"

    def image_exists(self, ref: str) -> bool:
        return self.run("image", "inspect", ref, timeout=30).returncode == 0

    def inspect(self, ref: str, fmt: str) -> str | None:
        p = self.run("image", "inspect", "--format", fmt, ref, timeout=30)
        return p.stdout.strip() if p.returncode == 0 else None

    def image_id(self, ref: str) -> str | None:
        """The image's id as ``sha256:<hex>`` (Podman prints the bare hex)."""
        raw = self.inspect(ref, "{{.Id}}")
        return (raw if raw.startswith("sha256:") else f"sha256:{raw}") if raw else None


def _build_dir(lab) -> Path:
    return (lab.root if lab else ROOT) / "build"


def _docker_responds(exe: str) -> bool:
    try:
        return subprocess.run([exe, "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def start_dockerd(log: Path, wait: float = 60) -> None:
    """Starts dockerd in the background (as root), logging to ``log``, and waits for its socket."""
    dockerd = shutil.which("dockerd")
    if not dockerd:
        raise EngineError("Docker's daemon is not installed. Fix: apt-get install docker.io")
    if os.geteuid() != 0:
        raise EngineError("dockerd is not running and only root can start it. Fix: sudo dockerd & (or use podman)")
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as f:
        subprocess.Popen([dockerd], stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    docker = shutil.which("docker") or "docker"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if Path("/var/run/docker.sock").exists() and _docker_responds(docker):
            return
        time.sleep(0.5)
    raise EngineError(f"dockerd did not answer within {wait:.0f} s; see {log}")


def detect_engine(preferred: str | None = None, lab=None, explicit: bool = False) -> Engine:
    """The engine to use: env CIPHERLAB_ENGINE, else ``preferred`` (the matrix's key), else auto.

    With ``explicit`` (a command-line option), ``preferred`` wins over the
    environment.  auto is Docker when its client and daemon are installed
    (the daemon is started if it is not running), else Podman.
    """
    if explicit and preferred:
        choice = preferred
    else:
        choice = os.environ.get("CIPHERLAB_ENGINE") or preferred or "auto"
    if choice not in ("auto", "docker", "podman"):
        raise EngineError(f"unknown container engine '{choice}' (use docker, podman or auto)")
    docker, podman = shutil.which("docker"), shutil.which("podman")
    if choice == "auto":
        if docker and (shutil.which("dockerd") or _docker_responds(docker)):
            choice = "docker"
        elif podman:
            choice = "podman"
        else:
            raise EngineError("no container engine found. Fix: apt-get install docker.io mmdebstrap "
                              "(or podman); the host backend needs none")
    if choice == "docker":
        if not docker:
            raise EngineError("docker is not installed. Fix: apt-get install docker.io")
        if not _docker_responds(docker):
            start_dockerd(_build_dir(lab) / "dockerd.log")
        return Engine("docker", docker)
    if not podman:
        raise EngineError("podman is not installed. Fix: apt-get install podman")
    conf = _build_dir(lab) / "podman" / "containers.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    if not conf.exists() or conf.read_text() != PODMAN_CONF:
        conf.write_text(PODMAN_CONF)
    return Engine("podman", podman, {"CONTAINERS_CONF": str(conf)})


