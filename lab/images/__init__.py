"""Container images of the targets: the engine, the base image, incremental builds.

* :func:`detect_engine` picks Docker, else Podman (``CIPHERLAB_ENGINE`` or the
  matrix's ``engine`` key override) and makes it usable: it starts ``dockerd``
  when Docker is installed but not running, and gives Podman the
  containers.conf this kind of VM needs.
* :func:`ensure_base_image` provides ``debian:bookworm`` (and ``debian:trixie``): pulled when a
  registry answers, else bootstrapped with mmdebstrap from the host's Debian
  apt sources (``dockerfiles/bootstrap-base.sh``) and imported.
* :func:`build_images` builds ``dockerfiles/Dockerfile.<target>`` for the
  targets asked for, skipping an image whose content hash label (the hash of
  its build context and base image) is already present.  Images carry
  ``org.opencontainers.image.revision`` (the git revision they were built at).
* :func:`image_id` is what results record.
* :func:`host_plugin` copies the instruction-count plugin out of the x86_64
  image for the host backend.

One module per job: engine.py, base.py, build.py, plugin.py.
"""

from .base import BASE_IMAGE, base_images, debian_sources, ensure_base_image
from .build import (LABEL_CONTENT, LABEL_REVISION, LABEL_TARGET, build_image, build_images, content_hash,
                    context_files, dockerfile, image_id, image_labels, image_ref)
from .engine import PODMAN_CONF, Engine, EngineError, detect_engine, start_dockerd

__all__ = ["BASE_IMAGE", "LABEL_CONTENT", "LABEL_REVISION", "LABEL_TARGET", "PODMAN_CONF", "Engine", "EngineError",
           "base_images", "build_image", "build_images", "content_hash", "context_files", "debian_sources",
           "detect_engine", "dockerfile", "ensure_base_image", "image_id", "image_labels", "image_ref", "start_dockerd"]
