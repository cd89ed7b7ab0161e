"""System state as metadata: machine, CPU, TSC, OS, compilers, git revision."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
from functools import lru_cache
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


@lru_cache(maxsize=None)
def machine() -> dict:
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    flagset = set(flags.group(1).split()) if flags else set()
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)$", cpuinfo, re.M)
    gov = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").strip() or None
    os_release = dict(
        line.split("=", 1) for line in _read("/etc/os-release").splitlines() if "=" in line
    )
    return {
        "hostname": socket.gethostname(),
        "arch": platform.machine(),
        "cpu_model": model.group(1).strip() if model else platform.processor() or "unknown",
        "cpu_mhz_reported": float(mhz.group(1)) if mhz else None,
        "cores": os.cpu_count(),
        "constant_tsc": "constant_tsc" in flagset,
        "nonstop_tsc": "nonstop_tsc" in flagset,
        "hypervisor": "hypervisor" in flagset,
        "aes_ni": "aes" in flagset,
        "governor": gov,
        "os": os_release.get("PRETTY_NAME", "").strip('"') or platform.platform(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "pmu_note": "no PMU in this VM: the cycle counter is the TSC (reference ticks, not core cycles)"
        if "hypervisor" in flagset else None,
    }


@lru_cache(maxsize=None)
def compiler_version(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    return out.splitlines()[0].strip() if out else "unknown"


def git_revision(root: Path) -> dict:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    rev = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"revision": rev or None, "dirty": dirty}
