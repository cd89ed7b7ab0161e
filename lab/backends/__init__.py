"""Backends run commands and built programs for a target and hand back what they printed.

``host`` runs on this machine; ``container`` runs inside the target's image
(Docker or Podman); ``ssh`` (lab/backends/ssh.py) on a machine reached over
SSH.  All implement :class:`Backend`; callers never test which one they have.
"""

from __future__ import annotations

from .base import RUNNER_SCRIPT, Backend, Cancel, Completed, Icount, runner_env

__all__ = ["Backend", "Cancel", "Completed", "Icount", "RUNNER_SCRIPT", "runner_env"]
