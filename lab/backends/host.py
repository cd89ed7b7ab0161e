"""The host backend: run commands directly on this machine."""

from __future__ import annotations

import os
import subprocess
import time

from . import Completed


class HostBackend:
    name = "host"

    def run(self, argv: list[str], *, cwd: str, timeout: float, env: dict | None = None, target=None) -> Completed:
        t0 = time.perf_counter()
        full_env = {**os.environ, **(env or {})}
        try:
            p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full_env,
                               errors="replace")
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return Completed(argv, None, out, err, time.perf_counter() - t0, timed_out=True)
        except FileNotFoundError as e:
            return Completed(argv, 127, "", f"{e}", time.perf_counter() - t0)
        return Completed(argv, p.returncode, p.stdout, p.stderr, time.perf_counter() - t0)

    def describe(self) -> dict:
        return {"backend": "host"}
