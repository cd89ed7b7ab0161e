"""Target images: one flat Dockerfile per target, built incrementally (content-hash label), labelled with
the source revision."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable

from ..config import Lab, Target
from ..system import git_revision
from .base import base_images, ensure_base_image
from .engine import Engine, EngineError, _build_dir, detect_engine

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
    base_ids: dict[str, str] = {}
    out = {}
    for t in targets:
        bases = base_images(dockerfile(lab, t)) if dockerfile(lab, t).exists() else []
        for b in bases:
            if b not in base_ids:
                base_ids[b] = ensure_base_image(engine, lab, progress, b)
        # the hash of a bookworm-only Dockerfile's image is what it always was (one base id)
        out[t.name] = build_image(lab, t, engine, "+".join(base_ids[b] for b in bases), progress)
    return out
