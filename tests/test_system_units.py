"""System state as the results record it, from known texts of /proc and /etc: steal time, CPU time and context
switches between two snapshots (the report's steal warning), the machine facts the provenance section shows
(CPU, invariant TSC, AES-NI, hypervisor), the results folder's machine name and the CPU timings are pinned to."""

from __future__ import annotations

import os

import pytest

from lab import system

HZ = system.USER_HZ
STAT = """cpu  88427 23 12859 61092 629 0 200 50 0 0
cpu0 40101 10 5253 36115 82 0 25 19 0 0
cpu1 48326 13 7606 24977 546 0 175 31 7 5
intr 1252488 0 0 0
ctxt 2424033
btime 1795593201
"""


def test_proc_stat_of_one_cpu_and_of_all():
    one = system.parse_proc_stat(STAT, 1)
    assert one == system.CpuSnapshot(steal=31 / HZ, total=(48326 + 13 + 7606 + 24977 + 546 + 0 + 175 + 31) / HZ,
                                     ctxt=2424033)  # guest times (the 9th and 10th values) are inside user time
    every = system.parse_proc_stat(STAT)
    assert every.steal == 50 / HZ and every.total == (88427 + 23 + 12859 + 61092 + 629 + 200 + 50) / HZ
    old_kernel = system.parse_proc_stat("cpu0 10 0 5 100 0 0 0\nctxt 9\n", 0)  # no steal column
    assert old_kernel == system.CpuSnapshot(0.0, 115 / HZ, 9)
    assert system.parse_proc_stat("cpu0 10 0 5 100 0 0 0 4\n", 0) == system.CpuSnapshot(4 / HZ, 119 / HZ, 0)
    assert system.parse_proc_stat("", 3) == system.CpuSnapshot(0.0, 0.0, 0)
    assert system.parse_proc_stat(STAT, 7) == system.CpuSnapshot(0.0, 0.0, 2424033)  # a CPU this machine lacks


def test_a_snapshot_difference_is_what_the_report_warns_about():
    a, b = system.CpuSnapshot(1.0, 100.0, 50), system.CpuSnapshot(1.25, 102.0, 57)
    assert b.since(a) == {"steal_seconds": 0.25, "cpu_seconds": 2.0, "steal_fraction": 0.125, "context_switches": 7}
    c = system.CpuSnapshot(1.0 + 1 / 3, 103.0, 50)
    assert c.since(a) == {"steal_seconds": 0.333, "cpu_seconds": 3.0, "steal_fraction": round(1 / 9, 4),
                          "context_switches": 0}
    assert a.since(a)["steal_fraction"] == 0.0  # no CPU time: no fraction, not a division by zero
    short = system.CpuSnapshot(1.1, 100.50049, 50).since(a)  # half a second of CPU time, rounded to the ms
    assert short["cpu_seconds"] == 0.5 and short["steal_fraction"] == round(0.1 / 0.50049, 4)
    assert system.CpuSnapshot(2.0, 99.0, 50).since(a)["steal_fraction"] == 0.0  # a counter that went back


CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
cpu MHz\t\t: 2449.998
flags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc tsc_known_freq aes hypervisor sse2
"""
OS = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'


def test_machine_facts_from_cpuinfo_and_os_release(monkeypatch):
    monkeypatch.delenv("CIPHERLAB_MACHINE", raising=False)
    f = system.parse_machine(CPUINFO, OS, "lab-1", "x86_64", 2, "6.1.0", "performance", "tsc")
    assert f == {"hostname": "lab-1", "machine_id": "lab-1", "arch": "x86_64", "cpu_model": "AMD EPYC 7B13",
                 "cpu_mhz_reported": 2449.998, "cores": 2, "constant_tsc": True, "nonstop_tsc": True,
                 "invariant_tsc": True, "tsc_known_freq": True, "hypervisor": True, "aes_ni": True,
                 "governor": "performance", "clocksource": "tsc", "os": "Debian GNU/Linux 12 (bookworm)",
                 "kernel": "6.1.0",
                 "pmu_note": "no PMU in this VM: the cycle counter is the TSC (reference ticks, not core cycles)",
                 "cpu_cores": {}}
    bare = system.parse_machine("processor : 0\ncpu : POWER9 (raw), altivec supported\n", "", "p9", "ppc64", None,
                                "5.10", "", None)
    assert bare["cpu_model"] == "POWER9 (raw), altivec supported" and bare["cpu_mhz_reported"] is None
    assert bare["os"] == "unknown" and bare["governor"] is None and bare["clocksource"] is None
    assert not any(bare[k] for k in ("constant_tsc", "invariant_tsc", "aes_ni", "hypervisor", "pmu_note"))
    eq = system.parse_machine("", 'PRETTY_NAME="Xubuntu a=b"\n', "h", "x", 1, "k")
    assert eq["os"] == "Xubuntu a=b"  # the value after the first '=', quotes removed
    half = system.parse_machine("model name : X\nFeatures : constant_tsc aes\n", "", "h", "aarch64", 4, "6")
    assert half["constant_tsc"] and not half["nonstop_tsc"] and not half["invariant_tsc"] and half["aes_ni"]
    assert system.parse_machine("", "", "h", "x", 1, "k")["cpu_model"] == "unknown"


def test_the_machine_name_is_a_folder_name(monkeypatch):
    monkeypatch.delenv("CIPHERLAB_MACHINE", raising=False)
    assert system.machine_id("bench arm/7.example") == "bench-arm-7.example"
    assert system.machine_id("..") == "machine"
    assert system.machine_id("-x-") == "x"
    assert system.machine_id("X-Lab.eXample.") == "X-Lab.eXample"  # capitals kept; only - and . trimmed
    monkeypatch.setenv("CIPHERLAB_MACHINE", "ci runner")
    assert system.machine_id("ignored") == "ci-runner"


def test_the_measuring_cpu(monkeypatch):
    monkeypatch.setattr(system.os, "sched_getaffinity", lambda pid: {0, 1, 3} if pid == 0 else set())
    assert system.pick_cpu(None) is None
    assert system.pick_cpu("auto") == 3  # the last CPU this process may use
    assert system.pick_cpu(1) == 1 and system.pick_cpu("1") == 1
    assert system.pick_cpu(2) is None  # not allowed here: not pinned
    monkeypatch.setattr(system.os, "sched_getaffinity", lambda pid: {5})
    assert system.pick_cpu("auto") is None  # one CPU: pinning would only share it with the lab
    monkeypatch.setattr(system.os, "sched_getaffinity", lambda pid: {2, 7})
    assert system.pick_cpu("auto") == 7
    monkeypatch.delattr(system.os, "sched_getaffinity")  # not Linux: never pinned
    assert system.pick_cpu("auto") is None and system.pick_cpu(0) is None


def test_the_measuring_lanes_cpus(monkeypatch):
    monkeypatch.setattr(system.os, "sched_getaffinity", lambda pid: {0, 1, 3})
    assert system.pick_cpus("auto") == (3,) == system.pick_cpus("auto", 1)  # one lane: pick_cpu's
    assert system.pick_cpus("auto", 2) == (3, 1)  # the last CPUs this process may use, from the last
    assert system.pick_cpus("auto", 3) == (3, 1, 0)
    assert system.pick_cpus("auto", 5) == (3, 1, 0)  # no more lanes than CPUs
    assert system.pick_cpus(1, 2) == (1, 3)  # a CPU named goes first
    assert system.pick_cpus(None, 2) == (None, None)  # not pinned: two lanes all the same
    assert system.pick_cpus(2, 2) == (None,)  # not allowed here: one unpinned lane
    assert system.pick_cpus("auto", 2, allowed=[0, 1]) == (1, 0)  # another machine's CPUs (an SSH host's)
    monkeypatch.setattr(system.os, "sched_getaffinity", lambda pid: {5})
    assert system.pick_cpus("auto", 2) == (None,)  # one CPU: one lane, unpinned


SMT = "".join(f"processor\t: {cpu}\nmodel name\t: X\nphysical id\t: {pkg}\ncore id\t\t: {core}\n\n"
              for cpu, pkg, core in [(0, 0, 0), (1, 0, 1), (2, 0, 0), (3, 0, 1), (4, 1, 0)])


def test_two_lanes_never_share_a_physical_core():
    """Two threads of one core would measure each other: the lanes take CPUs on cores no lane has yet."""
    cores = system.cpu_cores(SMT)
    assert cores == {0: "0:0", 1: "0:1", 2: "0:0", 3: "0:1", 4: "1:0"}  # package 1's core 0 is another core
    assert system.pick_cpus("auto", 2, [0, 1, 2, 3], cores) == (3, 2)  # 3 is core 1; 2 is core 0
    assert system.pick_cpus(0, 2, [0, 1, 2, 3], cores) == (0, 3)  # 2 is 0's own core: skipped
    assert system.pick_cpus(1, 2, [0, 1, 2, 3], cores) == (1, 2)  # 3 is 1's own core: skipped
    assert system.pick_cpus("auto", 3, [0, 1, 2, 3], cores) == (3, 2)  # two cores: two lanes at most
    assert system.pick_cpus("auto", 3, [0, 1, 2, 3, 4], cores) == (4, 3, 2)
    assert system.pick_cpus("auto", 2, [0, 2], {"0": "0:0", "2": "0:0"}) == (2,)  # as run.json keeps them
    assert system.pick_cpus("auto", 2, [0, 1], {}) == (1, 0)  # cpuinfo silent: every CPU its own core
    assert system.cpu_cores("processor : 0\ncpu : POWER9\n") == {}


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux only")
def test_this_machine_reads():
    snap = system.cpu_snapshot()
    assert snap.total > 0 and snap.ctxt > 0
    assert system.machine()["cores"] == os.cpu_count()


def test_no_child_starts_while_a_programs_copy_is_open_for_writing(tmp_path, monkeypatch):
    """ETXTBSY (CI, two lanes: "taskset: failed to execute .../timing: Text file busy"): a child forked by one lane
    while the other lane wrote a program's copy kept the writer's descriptor until its exec, and the copy could
    not be run.  Writing a copy and starting a child both hold system.SPAWN_LOCK, and the lock is free again after
    each (a real copy and a real child here; only the calls under the lock are watched)."""
    import shutil
    import subprocess

    from lab import measure, system
    from lab.backends import host

    seen = []
    real_copy, real_popen = shutil.copyfile, subprocess.Popen
    monkeypatch.setattr(measure.shutil, "copyfile",
                        lambda *a, **k: seen.append(("copy", system.SPAWN_LOCK.locked())) or real_copy(*a, **k))

    def popen(*a, **k):
        seen.append(("start", system.SPAWN_LOCK.locked()))
        return real_popen(*a, **k)

    monkeypatch.setattr(host.subprocess, "Popen", popen)
    src = tmp_path / "prog"
    src.write_text("#!/bin/sh\necho ran\n")
    src.chmod(0o755)
    copy = measure.copy_program(src, tmp_path / "own" / "001" / "prog")
    c = host.run_process([str(copy)], cwd=tmp_path, timeout=30, env=None, cancel=None)
    assert (c.returncode, c.stdout) == (0, "ran\n") and copy.stat().st_mode & 0o777 == 0o755
    assert seen == [("copy", True), ("start", True)] and not system.SPAWN_LOCK.locked()
