"""The host backend: commands run directly on this machine, from the repository root."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from ..config import ROOT, Target
from ..errors import Interrupted
from ..system import SPAWN_LOCK
from .base import RUNNER_SCRIPT, Backend, Completed
from ..qemu_plugin import HOST_PLUGIN  # its home; named here for the backend's callers

# Where `invoke images.host-plugin` puts the plugin copied from the x86_64 image (used when there); otherwise
# the lab builds its own for this machine's QEMU (lab/qemu_plugin.py, cached by content hash).


def run_process(argv: list[str], *, cwd: Path | str, timeout: float, env: dict | None, cancel) -> Completed:
    """Run argv in its own process group; kill the whole group on timeout or cancel."""
    if cancel is not None:
        cancel.check()  # Ctrl-C arrived: start nothing new
    t0, wall = time.perf_counter(), time.time()
    try:
        with SPAWN_LOCK:  # no program file is open for writing while the child is between fork and exec
            p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 errors="replace", env={**os.environ, **(env or {})}, start_new_session=True)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as e:
        return Completed(list(argv), 127, "", str(e), time.perf_counter() - t0, started=wall)
    deadline = t0 + timeout
    timed_out = False
    while True:
        try:
            out, err = p.communicate(timeout=min(0.5, max(0.01, deadline - time.perf_counter())))
            break
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.event.is_set():
                _kill_group(p)
                p.communicate()
                raise Interrupted()
            if time.perf_counter() >= deadline:
                timed_out = True
                _kill_group(p)
                out, err = p.communicate()
                break
    seconds = time.perf_counter() - t0
    if timed_out:
        return Completed(list(argv), None, out, err, seconds, timed_out=True, started=wall)
    return Completed(list(argv), p.returncode, out, err, seconds, started=wall)


def _kill_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class HostBackend(Backend):
    name = "host"

    def __init__(self, root: Path = ROOT):
        super().__init__()
        self.root = Path(root)

    def prepare(self, targets: list[Target], inputs=()) -> None:
        pass  # the host sees every file; its compilers are checked per cell

    def exec(self, argv: list[str], *, target: Target, timeout: float, env: dict | None = None) -> Completed:
        return run_process(argv, cwd=self.root, timeout=timeout, env=env, cancel=self.cancel)

    def runner(self) -> str:
        return str(self.root / RUNNER_SCRIPT)

    def plugin_path(self, target: Target | None = None) -> str | None:
        env = os.environ.get("CIPHERLAB_QEMU_PLUGIN")
        if env:
            return env
        from ..qemu_plugin import built_plugin, host_plugin

        built = built_plugin(self.root)
        if built:
            return str(built)
        p = self.root / HOST_PLUGIN
        return str(p) if p.exists() else host_plugin(self.root, say=print)

    def describe(self) -> dict:
        return {"backend": "host"}
