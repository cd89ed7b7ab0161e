"""System state as metadata: machine, CPU, TSC, OS, compilers, git revision, and /proc counters.

:func:`machine` describes the machine (read once); :func:`cpu_snapshot`
reads the scheduler counters that say how quiet it was (CPU steal time and
context switches from /proc/stat), so a run can record them around every
measuring process and the report can warn when the hypervisor took time.
"""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

#: Held while this process writes a file a child may execute (a program's own copy: lab.measure) and while it
#: starts a child (lab.backends.host.run_process).  A child forked while another thread has such a file open for
#: writing keeps that descriptor until its own exec, and an exec of the file meanwhile fails with ETXTBSY ("Text
#: file busy"; seen once in CI with two measuring lanes).  Popen returns once its child has exec'd, so under
#: this lock no child holds a writer's descriptor when the file is run.
SPAWN_LOCK = threading.Lock()


USER_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str:  # pragma: no mutate block (I/O: docs/testing.md)
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def parse_machine(cpuinfo: str, os_release: str, hostname: str, arch: str, cores: int | None, kernel: str,
                  governor: str | None = None, clocksource: str | None = None) -> dict:
    """Machine facts from the texts of /proc/cpuinfo and /etc/os-release (also used for remote hosts)."""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M) or re.search(r"^cpu\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^(?:flags|Features)\s*:\s*(.+)$", cpuinfo, re.M)
    flagset = set(flags.group(1).split()) if flags else set()
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)$", cpuinfo, re.M)
    rel = dict(line.split("=", 1) for line in os_release.splitlines() if "=" in line)
    invariant = "constant_tsc" in flagset and "nonstop_tsc" in flagset
    return {
        "hostname": hostname,
        "machine_id": machine_id(hostname),
        "arch": arch,
        "cpu_model": model.group(1).strip() if model else "unknown",
        "cpu_mhz_reported": float(mhz.group(1)) if mhz else None,
        "cores": cores,
        "constant_tsc": "constant_tsc" in flagset,
        "nonstop_tsc": "nonstop_tsc" in flagset,
        "invariant_tsc": invariant,
        "tsc_known_freq": "tsc_known_freq" in flagset,
        "hypervisor": "hypervisor" in flagset,
        "aes_ni": "aes" in flagset,
        "governor": governor or None,
        "clocksource": clocksource or None,
        "os": rel.get("PRETTY_NAME", "").strip('"') or "unknown",
        "kernel": kernel,
        "pmu_note": "no PMU in this VM: the cycle counter is the TSC (reference ticks, not core cycles)"
        if "hypervisor" in flagset else None,
        "cpu_cores": cpu_cores(cpuinfo),
    }


def cpu_cores(cpuinfo: str) -> dict[int, str]:
    """The physical core each CPU is on ("package:core", from /proc/cpuinfo's physical id and core id; two CPUs
    with one core are threads of it); {} where cpuinfo does not say (ARM, POWER, ...)."""
    out = {}
    for block in re.split(r"\n\s*\n", cpuinfo):
        f = dict((k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in block.splitlines() if ":" in line))
        if f.get("processor", "").isdigit() and "core id" in f:
            out[int(f["processor"])] = f"{f.get('physical id', '0')}:{f['core id']}"
    return out


@lru_cache(maxsize=None)
def machine() -> dict:  # pragma: no mutate block (I/O: docs/testing.md)
    facts = parse_machine(
        _read("/proc/cpuinfo"), _read("/etc/os-release"), socket.gethostname(), platform.machine(), os.cpu_count(),
        platform.release(), _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").strip(),
        _read("/sys/devices/system/clocksource/clocksource0/current_clocksource").strip())
    facts["python"] = platform.python_version()
    return facts


def machine_id(hostname: str | None = None) -> str:
    """The folder name of a machine's results (results/<machine>/<run-id>/): CIPHERLAB_MACHINE or the hostname."""
    raw = os.environ.get("CIPHERLAB_MACHINE") or hostname or socket.gethostname()
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-.") or "machine"


@dataclass(frozen=True)
class CpuSnapshot:
    """Scheduler counters at one moment: steal and busy time (seconds) of one CPU or all, context switches."""

    steal: float
    total: float
    ctxt: int

    def since(self, earlier: "CpuSnapshot") -> dict:
        total = self.total - earlier.total
        steal = self.steal - earlier.steal
        return {"steal_seconds": round(steal, 3), "cpu_seconds": round(total, 3),
                "steal_fraction": round(steal / total, 4) if total > 0 else 0.0,
                "context_switches": self.ctxt - earlier.ctxt}


def parse_proc_stat(text: str, cpu: int | None = None) -> CpuSnapshot:
    """/proc/stat's line of one CPU (cpuN) or of all ('cpu'): steal is the 8th value, in USER_HZ ticks."""
    key = f"cpu{cpu}" if cpu is not None else "cpu"
    steal = total = 0.0
    ctxt = 0
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == key:
            values = [int(x) for x in parts[1:]]
            total = sum(values[:8]) / USER_HZ
            steal = (values[7] if len(values) > 7 else 0) / USER_HZ
        elif parts and parts[0] == "ctxt":
            ctxt = int(parts[1])
    return CpuSnapshot(steal, total, ctxt)


def cpu_snapshot(cpu: int | None = None) -> CpuSnapshot:  # pragma: no mutate block (I/O: docs/testing.md)
    return parse_proc_stat(_read("/proc/stat"), cpu)


def allowed_cpus() -> list[int]:
    """The CPUs this process may use."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def pick_cpu(setting, allowed: list[int] | None = None) -> int | None:
    """The CPU measuring processes are pinned to: a number, 'auto' (the last CPU of `allowed`, by default those
    this process may use), or None."""
    if setting is None:
        return None
    allowed = allowed_cpus() if allowed is None else allowed
    if setting == "auto":
        return allowed[-1] if len(allowed) > 1 else None
    return int(setting) if int(setting) in allowed else None


def pick_cpus(setting, lanes: int = 1, allowed: list[int] | None = None,
              cores: dict[int, str] | None = None) -> tuple[int | None, ...]:
    """The CPUs of `lanes` measuring lanes: with one lane pick_cpu's; with more, the CPU pick_cpu names first,
    then the last others of `allowed` on a physical core no lane has yet (`cores`: CPU -> its core, as
    cpu_cores reads them; two threads of one core would measure each other), fewer when there are fewer;
    (None,) * lanes when not pinned."""
    if setting is None:
        return (None,) * max(1, lanes)
    allowed = allowed_cpus() if allowed is None else allowed
    first = pick_cpu(setting, allowed)
    if lanes <= 1 or first is None:
        return (first,)
    cores = {int(c): core for c, core in (cores or {}).items()}  # run.json's facts have the numbers as text
    picked = [first]
    for c in reversed(allowed):
        if len(picked) < lanes and c not in picked and (
                c not in cores or cores[c] not in {cores.get(p) for p in picked}):
            picked.append(c)
    return tuple(picked)


@lru_cache(maxsize=None)
def git_revision(root: Path) -> dict:  # pragma: no mutate block (I/O: docs/testing.md)
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    rev = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"revision": rev or None, "dirty": dirty}
