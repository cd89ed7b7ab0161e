"""Container images of the targets: the engine, the base image, incremental builds.

* :func:`detect_engine` picks Docker, else Podman (``CIPHERLAB_ENGINE`` or the
  matrix's ``engine`` key override) and makes it usable: it starts ``dockerd``
  when Docker is installed but not running, and gives Podman the
  containers.conf this kind of VM needs.
* :func:`ensure_base_image` provides ``debian:bookworm``: pulled when a
  registry answers, else bootstrapped with mmdebstrap from the host's Debian
  apt sources (``dockerfiles/bootstrap-base.sh``) and imported.
* :func:`build_images` builds ``dockerfiles/Dockerfile.<target>`` for the
  targets asked for, skipping an image whose content hash label (the hash of
  its build context and base image) is already present.  Images carry
  ``org.opencontainers.image.revision`` (the git revision they were built at).
* :func:`image_id` is what results record.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .config import Lab, Target
from .system import git_revision

BASE_IMAGE = "debian:bookworm"
LABEL_REVISION = "org.opencontainers.image.revision"
LABEL_CONTENT = "org.cipherlab.content-hash"
LABEL_TARGET = "org.cipherlab.target"
# The repository files a Dockerfile's build context holds (besides the Dockerfile).
CONTEXT_FILES = [
    "dockerfiles/scripts/*",
    "c_src/qemu_plugin/icount.c",
    "c_src/qemu_plugin/Makefile",
    "c_src/qemu_plugin/selftest.sh",
    "c_src/qemu_plugin/selftest_probe.c",
    "c_src/harness/counter.h",
    "c_src/harness/counter_marker.c",
]
# Podman on this kind of VM: crun and the default ulimits fail without CAP_SYS_RESOURCE.
PODMAN_CONF = """\
# Written by lab/images.py: what Podman needs on a VM without CAP_SYS_RESOURCE.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
"""


class EngineError(RuntimeError):
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


# ------------------------------------------------------------------ engines
def _build_dir(lab: Lab | None) -> Path:
    return (lab.root if lab else Lab().root) / "build"


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


def detect_engine(preferred: str | None = None, lab: Lab | None = None, explicit: bool = False) -> Engine:
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


# --------------------------------------------------------------- base image
def debian_sources(suite: str = "bookworm", paths: list[Path] | None = None) -> str:
    """The host's apt entries for Debian ``suite`` (and its -updates/-security), in deb822 form.

    Entries of other suites and other vendors (e.g. a cloud SDK's repository)
    are left out; one-line ``deb`` entries are converted.
    """
    if paths is None:
        paths = sorted(Path("/etc/apt/sources.list.d").glob("*.sources")) + \
            sorted(Path("/etc/apt/sources.list.d").glob("*.list")) + [Path("/etc/apt/sources.list")]

    def ours(suites: list[str]) -> list[str]:
        return [s for s in suites if s == suite or s.startswith(suite + "-")]

    stanzas: list[str] = []
    for p in paths:
        try:
            text = p.read_text()
        except OSError:
            continue
        if p.suffix == ".sources":
            for block in text.split("\n\n"):
                fields: dict[str, str] = {}
                for line in block.splitlines():
                    if line.strip() and not line.startswith(("#", " ", "\t")) and ":" in line:
                        k, v = line.split(":", 1)
                        fields[k.strip().lower()] = v.strip()
                if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
                    continue
                suites = ours(fields.get("suites", "").split())
                if suites and fields.get("uris"):
                    stanza = f"Types: deb\nURIs: {fields['uris']}\nSuites: {' '.join(suites)}\n" \
                             f"Components: {fields.get('components', 'main')}\n"
                    if fields.get("signed-by"):
                        stanza += f"Signed-By: {fields['signed-by']}\n"
                    stanzas.append(stanza)
        else:
            for line in text.splitlines():
                parts = line.split("#", 1)[0].split()
                if len(parts) < 3 or parts[0] != "deb":
                    continue
                opts = []
                if parts[1].startswith("["):
                    while parts and not parts[1].endswith("]"):
                        opts.append(parts.pop(1))
                    opts.append(parts.pop(1))
                if len(parts) >= 3 and ours([parts[2]]):
                    stanzas.append(f"Types: deb\nURIs: {parts[1]}\nSuites: {parts[2]}\n"
                                   f"Components: {' '.join(parts[3:]) or 'main'}\n")
    return "\n".join(stanzas)


def ensure_base_image(engine: Engine, lab: Lab, progress: Callable[[str], None] = print) -> str:
    """Makes sure ``debian:bookworm`` exists (pull, else bootstrap + import); returns its id."""
    if not engine.image_exists(BASE_IMAGE):
        progress(f"images: {BASE_IMAGE} is missing; trying to pull it")
        try:
            pulled = engine.run("pull", BASE_IMAGE, timeout=300).returncode == 0
        except subprocess.TimeoutExpired:
            pulled = False
        if not pulled:
            out = _build_dir(lab) / "images" / "debian-bookworm-minbase.tar"
            if not out.exists():
                sources = out.with_suffix(".sources")
                out.parent.mkdir(parents=True, exist_ok=True)
                text = debian_sources("bookworm")
                if not text:
                    raise EngineError("no Debian bookworm entry in the host's apt sources to bootstrap from")
                sources.write_text(text)
                progress(f"images: no registry; bootstrapping {BASE_IMAGE} with mmdebstrap (a few minutes)")
                t0 = time.monotonic()
                tmp = out.with_name(out.stem + "-partial.tar")
                p = subprocess.run([str(lab.root / "dockerfiles" / "bootstrap-base.sh"), str(tmp), str(sources),
                                    "bookworm"], capture_output=True, text=True)
                if p.returncode != 0:
                    raise EngineError(f"bootstrap of {BASE_IMAGE} failed: {p.stderr.strip()[-800:]}")
                tmp.rename(out)
                progress(f"images: bootstrapped {BASE_IMAGE} in {time.monotonic() - t0:.0f} s")
            engine.run("import", "--change", 'CMD ["bash"]', "--change",
                       "LABEL org.cipherlab.bootstrap=mmdebstrap-minbase", str(out), BASE_IMAGE,
                       timeout=600, check=True)
    return engine.image_id(BASE_IMAGE) or ""


# ------------------------------------------------------------------- images
def dockerfile(lab: Lab, target: Target) -> Path:
    return lab.root / "dockerfiles" / f"Dockerfile.{target.name}"


def image_ref(target: Target) -> str:
    if not target.image:
        raise EngineError(f"target {target.name} has no image (key 'image' in targets/{target.name}.yaml)")
    return target.image if ":" in target.image.rsplit("/", 1)[-1] else f"{target.image}:latest"


def context_files(lab: Lab, target: Target) -> list[str]:
    """Repository-relative paths of the files in the target's build context (sorted)."""
    files = {f"dockerfiles/Dockerfile.{target.name}"}
    for pattern in CONTEXT_FILES:
        files |= {str(p.relative_to(lab.root)) for p in lab.root.glob(pattern) if p.is_file()}
    return sorted(files)


def content_hash(lab: Lab, target: Target, base_id: str) -> str:
    """Hash of everything an image is made of: its context files (names, bytes, modes) and base image id."""
    h = hashlib.sha256(base_id.encode())
    for rel in context_files(lab, target):
        p = lab.root / rel
        h.update(f"\0{rel}\0{p.stat().st_mode & 0o111:o}\0".encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _prepare_context(lab: Lab, target: Target, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    for rel in context_files(lab, target):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lab.root / rel, dest / rel)


def image_id(target: Target, engine: Engine | None = None, lab: Lab | None = None) -> str | None:
    """The id of the target's image (sha256:...), or None when it is not built."""
    engine = engine or detect_engine(lab=lab)
    return engine.image_id(image_ref(target))


def image_labels(target: Target, engine: Engine) -> dict[str, str]:
    import json

    raw = engine.inspect(image_ref(target), "{{json .Config.Labels}}")
    try:
        return json.loads(raw) or {} if raw else {}
    except ValueError:
        return {}


def build_image(lab: Lab, target: Target, engine: Engine, base_id: str,
                progress: Callable[[str], None] = print) -> str:
    """Builds one target's image unless an image with the same content hash exists; returns its id."""
    ref = image_ref(target)
    digest = content_hash(lab, target, base_id)
    if image_labels(target, engine).get(LABEL_CONTENT) == digest:
        progress(f"images: {target.name}: up to date ({ref})")
        return engine.image_id(ref) or ""
    df = dockerfile(lab, target)
    if not df.exists():
        raise EngineError(f"{df} does not exist (one Dockerfile per target)")
    ctx = _build_dir(lab) / "images" / "context" / engine.name / target.name
    _prepare_context(lab, target, ctx)
    log = _build_dir(lab) / "images" / f"{target.name}.{engine.name}.log"
    rev = git_revision(lab.root)
    revision = (rev.get("revision") or "unknown") + ("-dirty" if rev.get("dirty") else "")
    progress(f"images: {target.name}: building {ref} (log: {log})")
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = engine.run("build", "-f", str(ctx / "dockerfiles" / df.name), "-t", ref,
                       "-t", f"{ref.rsplit(':', 1)[0]}:{digest[:12]}",
                       "--label", f"{LABEL_REVISION}={revision}", "--label", f"{LABEL_CONTENT}={digest}",
                       "--label", f"{LABEL_TARGET}={target.name}", str(ctx),
                       timeout=3600, capture_output=False, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-15:]
        raise EngineError(f"image build for {target.name} failed (see {log}):\n" + "\n".join(tail))
    progress(f"images: {target.name}: built in {time.monotonic() - t0:.0f} s")
    _drop_stale_tags(engine, ref.rsplit(":", 1)[0], keep={"latest", digest[:12]})
    return engine.image_id(ref) or ""


def _drop_stale_tags(engine: Engine, repo: str, keep: set[str]) -> None:
    """Untags the target's images of older content hashes (the engine frees them when unused)."""
    p = engine.run("images", "--format", "{{.Repository}}:{{.Tag}}", repo, timeout=60)
    for ref in p.stdout.split() if p.returncode == 0 else []:
        name, _, tag = ref.rpartition(":")
        if name.endswith(repo) and tag not in keep:
            engine.run("rmi", ref, timeout=120)


def build_images(lab: Lab, target_names: list[str], engine: Engine | str | None = None,
                 progress: Callable[[str], None] = print) -> dict[str, str]:
    """Builds (incrementally) the images of the named targets; returns {target: image id}.

    Targets without an image (e.g. ``host``) are skipped.
    """
    if not isinstance(engine, Engine):
        engine = detect_engine(engine, lab)
    targets = [lab.target(n) for n in target_names]
    targets = [t for t in targets if t.image]
    if not targets:
        return {}
    base_id = ensure_base_image(engine, lab, progress)
    return {t.name: build_image(lab, t, engine, base_id, progress) for t in targets}
