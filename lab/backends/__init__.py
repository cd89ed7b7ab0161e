"""Backends run a command for a target and hand back what it printed, nothing more.

``host`` runs on this machine; ``container`` (see container.py) runs inside the
target's image.  Both return :class:`Completed`.
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..config import Target


@dataclass
class Completed:
    argv: list[str]
    returncode: int | None  # None: killed by the timeout
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    @property
    def crashed(self) -> bool:
        """Killed by a signal (negative return code from subprocess, or 128+N from a shell)."""
        rc = self.returncode
        return rc is not None and (rc < 0 or rc > 128)

    @property
    def signal_name(self) -> str | None:
        rc = self.returncode
        if rc is None or not self.crashed:
            return None
        num = -rc if rc < 0 else rc - 128
        try:
            return signal.Signals(num).name
        except ValueError:
            return f"signal {num}"

    def json_lines(self) -> list[dict]:
        """The JSON records printed on stdout (non-JSON lines are skipped)."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    def describe_failure(self) -> str:
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        if self.crashed:
            return f"crashed with {self.signal_name}"
        tail = (self.stderr.strip().splitlines() or [""])[-1][:200]
        return f"exit status {self.returncode}" + (f": {tail}" if tail else "")


class Backend(Protocol):
    name: str

    def run(self, argv: list[str], *, cwd: str, timeout: float, env: dict | None = None,
            target: "Target | None" = None) -> Completed:
        """Run argv for target (None = this machine) from cwd; never raises for a failing command."""
        ...

    def describe(self) -> dict: ...


def get_backend(name: str, **kwargs) -> Backend:
    if name == "host":
        from .host import HostBackend

        return HostBackend()  # the host needs none of the container options
    if name == "container":
        from .container import ContainerBackend  # type: ignore[import-not-found]

        return ContainerBackend(**kwargs)
    raise ValueError(f"unknown backend '{name}' (use host or container)")
