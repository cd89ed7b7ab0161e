"""The mixed backend: the ``host`` target on this machine, every target with an image in its container.

For runs that compare this machine's compilers with those only another Debian release ships (the
``compilers`` preset: gcc-11..12 and clang-13..19 on the host, gcc-13..14 and clang-17..19 in the
Debian 13 image ``x86_64-trixie``).  Both halves run programs on this machine, so they share its timing
lock, CPU and facts, and their timings are comparable.  The container half (and its image) is made only
when a cell needs a target with an image.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..config import Lab, Target
from .base import Backend, Completed, Icount, runner_env
from .host import HostBackend


class MixedBackend(Backend):
    name = "mixed"

    def __init__(self, lab: Lab, engine: str = "auto", build_dir: Path | None = None, progress=print):
        super().__init__()
        self.lab, self.engine, self.build_dir, self.progress = lab, engine, build_dir, progress
        self.host = HostBackend(lab.root)
        self.host.cancel = self.cancel
        self._container = None
        self.auto_build = True  # the container half's: whether a missing image is built (made only when needed)

    @staticmethod
    def in_container(target: Target) -> bool:
        return bool(target.image)

    @property
    def container(self):
        if self._container is None:
            from .container import ContainerBackend

            self._container = ContainerBackend(self.lab, engine=self.engine, build_dir=self.build_dir,
                                               progress=self.progress)
            self._container.cancel = self.cancel
            self._container.auto_build = self.auto_build
        return self._container

    def _for(self, target: Target) -> Backend:
        return self.container if self.in_container(target) else self.host

    # -------------------------------------------------------------- protocol
    def prepare(self, targets: list[Target], inputs=()) -> None:
        self.host.prepare([t for t in targets if not self.in_container(t)], inputs)
        imaged = [t for t in targets if self.in_container(t)]
        if imaged:
            self.container.prepare(imaged, inputs)

    def exec(self, argv: list[str], *, target: Target, timeout: float, env: dict | None = None) -> Completed:
        return self._for(target).exec(argv, target=target, timeout=timeout, env=env)

    def run_program(self, program: Path | str, args: list[str], *, target: Target, timeout: float,
                    env: dict | None = None, cpu: int | None = None, icount: Icount | None = None) -> Completed:
        be = self.host if icount is not None and self.counts_here(target) else self._for(target)
        return be.run_program(program, args, target=target, timeout=timeout, env=env, cpu=cpu, icount=icount)

    def counts_here(self, target: Target) -> bool:
        """Whether this machine counts the target's guest instructions: icount programs are static, so the
        host's QEMU and plugin count the programs of any image (Debian 13's QEMU 10 does not load the plugin)."""
        return bool(self.host.plugin_path()) and shutil.which(runner_env(target)["CIPHERLAB_EMULATOR"]) is not None

    def runner(self) -> str:
        return self.host.runner()

    def plugin_path(self, target: Target | None = None) -> str | None:
        """The plugin of the half that runs target's counted programs (run_program's choice): the host's when
        it counts there, the image's for an imaged target, none for a host target without the host's plugin.
        Without a target: the host's when it is there, else the images'."""
        if target is None:
            return self.host.plugin_path() or (self.container.plugin_path() if self._container else None)
        if self.counts_here(target):
            return self.host.plugin_path()
        return self.container.plugin_path(target) if self.in_container(target) else None

    def image_id(self, target: Target) -> str | None:
        return self.container.image_id(target) if self.in_container(target) else None

    def describe(self) -> dict:
        out = {"backend": "mixed", "local": self.host.describe()}
        if self._container is not None:
            out["container"] = self._container.describe()
        return out

    def close(self) -> None:
        if self._container is not None:
            self._container.close()
