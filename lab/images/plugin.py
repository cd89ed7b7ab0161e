"""The instruction-count plugin for the host backend, copied out of the x86_64 image."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Lab
from ..qemu_plugin import HOST_PLUGIN, PLUGIN_IN_IMAGE
from .build import build_images, image_ref
from .engine import Engine, detect_engine


def host_plugin(lab: Lab, engine: Engine | None = None) -> Path:
    """Copies the plugin out of the x86_64 image to build/qemu-plugin/ for host-backend runs.

    The image is Debian bookworm like this host, so the plugin matches the
    host's qemu-user 7.2 (QEMU checks the plugin API version when loading).
    """
    engine = engine or detect_engine(lab=lab)
    build_images(lab, ["x86_64"], engine)
    dest = lab.root / HOST_PLUGIN
    dest.parent.mkdir(parents=True, exist_ok=True)
    cid = engine.run("create", image_ref(lab.target("x86_64")), check=True).stdout.strip()
    part = dest.with_name(f".{dest.name}.{os.getpid()}")  # renamed into place: a run beside sees all or nothing
    try:
        engine.run("cp", f"{cid}:{PLUGIN_IN_IMAGE}", str(part), check=True)
        os.replace(part, dest)
    finally:
        engine.run("rm", cid)
        part.unlink(missing_ok=True)
    return dest
