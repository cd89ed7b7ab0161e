"""invoke tasks of the ``images`` collection (thin: the work is in lab.images / lab.icount).

    invoke images.build [--targets sparc64,mips64|all] [--engine docker|podman] [--matrix FILE]
    invoke images.host-plugin
"""

from __future__ import annotations

from pathlib import Path

from invoke import task

from .config import Lab

_LAB = Lab()


def _targets(spec: str, matrix: str) -> list[str]:
    if spec == "all":
        return [n for n in _LAB.target_names() if _LAB.target(n).image]
    if spec:
        return [t for t in spec.split(",") if t]
    return list(_LAB.matrix(Path(matrix) if matrix else None).targets)


@task(help={
    "targets": f"comma list of targets, or 'all' (default: the matrix's targets); known: {', '.join(_LAB.target_names())}",
    "engine": "docker or podman (default: env CIPHERLAB_ENGINE, the matrix's engine key, else auto-detect)",
    "matrix": "matrix file whose targets and engine are used (default matrix.yaml)",
})
def build(c, targets: str = "", engine: str = "", matrix: str = ""):
    """Build the container images the targets need (incremental: unchanged images are kept)."""
    from .images import build_images, detect_engine

    names = _targets(targets, matrix)
    chosen = detect_engine(engine, _LAB, explicit=True) if engine else \
        detect_engine(_LAB.matrix(Path(matrix) if matrix else None).engine, _LAB)
    ids = build_images(_LAB, names, chosen)
    if not ids:
        print(f"images: nothing to build (targets {', '.join(names)} run on the host, without an image)")
    for name, image_id in ids.items():
        print(f"{name}\t{image_id}")


@task(name="host-plugin")
def host_plugin(c, engine: str = ""):
    """Copy the QEMU icount plugin out of the x86_64 image for host-backend instruction counts."""
    from .icount import host_plugin as copy_plugin
    from .images import detect_engine

    print(copy_plugin(_LAB, detect_engine(engine or None, _LAB, explicit=bool(engine))))
