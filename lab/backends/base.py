"""What every backend offers: prepare, run a command with a time limit, run a built program, describe itself.

A backend runs commands for a target and hands back what they printed
(:class:`Completed`), nothing more; it never raises for a failing command.
Built programs always start through the one runner entry point
``cipherlab-run`` (dockerfiles/scripts/cipherlab-run), which runs them the
way the target runs programs (natively or under its qemu-user emulator),
optionally pinned to a CPU or under QEMU with the instruction-count plugin.
:func:`runner_env` is the one place that says which emulator that is.
"""

from __future__ import annotations

import json
import signal
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Target
from ..errors import Interrupted

RUNNER_SCRIPT = Path("dockerfiles/scripts/cipherlab-run")
# A program that is a launcher (a Java cell's: a JVM command over the build folder's classes) has its launch spec
# beside it, <program>.launch.json: {"java", "flags", "classpath" (files), "main"}; a backend on another machine
# ships the classpath's files and starts the same command there (lab/backends/ssh.py).
LAUNCH_SUFFIX = ".launch.json"
TIMED_OUT = 124  # coreutils timeout's status when it had to stop the command


def launch_spec(program: Path | str) -> dict | None:
    """The launch spec of a launcher program, None for a built binary."""
    path = Path(str(program) + LAUNCH_SUFFIX)
    return json.loads(path.read_text()) if path.is_file() else None


@dataclass
class Completed:
    argv: list[str]
    returncode: int | None  # None: killed by the time limit
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    started: float = 0.0  # wall-clock time.time() at start (overlap checks across machines)
    unreachable: bool = False  # the machine did not answer (SSH hosts): nothing ran, or its end is unknown
    note: str | None = None  # what the machine adds about the end, e.g. a container limit that was reached

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def signal_number(self) -> int | None:
        """The signal that ended the program: a negative return code (subprocess), or 128+N from a shell
        that reported its child's death (only for N in the range of real signals)."""
        rc = self.returncode
        if rc is None:
            return None
        if rc < 0:
            return -rc
        if 128 < rc < 128 + 65 and rc - 128 in {s.value for s in signal.Signals}:
            return rc - 128
        return None

    @property
    def crashed(self) -> bool:
        return self.signal_number is not None

    @property
    def signal_name(self) -> str | None:
        num = self.signal_number
        if num is None:
            return None
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
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(rec, dict):
                    out.append(rec)
        return out

    def describe_failure(self) -> str:
        if self.unreachable:
            return self.stderr or "the machine did not answer"
        note = f" ({self.note})" if self.note else ""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s{note}"
        if self.crashed:
            return f"crashed with {self.signal_name}{note}"
        tail = (self.stderr.strip().splitlines() or [""])[-1][:300]
        return f"exit status {self.returncode}" + (f": {tail}" if tail else "") + note


@dataclass(frozen=True)
class Icount:
    """Run under QEMU with the instruction-count plugin: marker addresses and the counts file."""

    begin: int
    end: int
    out: Path


def runner_env(target: Target, plugin: str | None = None) -> dict[str, str]:
    """How the target runs programs, for cipherlab-run: its emulator (if emulated), the emulator that
    counts its instructions (the same, or qemu-<arch> for a native target) and the plugin."""
    emulator = target.qemu or f"qemu-{target.arch}"
    env = {"CIPHERLAB_RUNNER": target.qemu if target.emulated else "", "CIPHERLAB_EMULATOR": emulator,
           # x86 code built with -march=native needs every extension QEMU knows
           "CIPHERLAB_EMULATOR_FLAGS": "-cpu max" if target.arch in ("x86_64", "i386") else ""}
    if plugin:
        env["CIPHERLAB_QEMU_PLUGIN"] = plugin
    return env


def runner_args(cpu: int | None, icount: Icount | None) -> list[str]:
    args = []
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    if icount is not None:
        args += ["--icount", f"{icount.begin:#x},{icount.end:#x},{icount.out}"]
    return args


@dataclass
class Cancel:
    """Set by a Ctrl-C handler: running commands are killed and raise Interrupted."""

    event: threading.Event = field(default_factory=threading.Event)

    def set(self) -> None:
        self.event.set()

    def check(self) -> None:
        if self.event.is_set():
            raise Interrupted()


class Backend(ABC):
    """Runs commands and built programs for targets on one machine."""

    name: str = "?"
    # whether a measuring process may run its own copy of a program (lab.measure.OwnCopies): the program's file
    # is where it runs (this machine, or a container that mounts the build folder)
    own_copies: bool = True

    def __init__(self) -> None:
        self.cancel = Cancel()
        self._versions: dict[tuple[str, str], str] = {}

    # -------------------------------------------------------- to implement
    @abstractmethod
    def prepare(self, targets: list[Target], inputs: list[Path] = ()) -> None:
        """Make the targets usable (images, containers, connections) and input files visible."""

    @abstractmethod
    def exec(self, argv: list[str], *, target: Target, timeout: float, env: dict | None = None) -> Completed:
        """Run a command (compiler, tool) for target from the repository root; never raises for a failure."""

    @abstractmethod
    def runner(self) -> str:
        """Path of cipherlab-run where the programs run."""

    @abstractmethod
    def plugin_path(self, target: Target | None = None) -> str | None:
        """Where the instruction-count plugin is for the programs this backend runs for target (None: not
        available)."""

    @abstractmethod
    def describe(self) -> dict:
        """Backend facts for the run's metadata."""

    def machine_facts(self) -> dict:
        """Facts of the machine programs run on (the lab's own machine unless remote)."""
        from .. import system

        return system.machine()

    def image_id(self, target: Target) -> str | None:
        return None

    @property
    def down(self) -> str | None:
        """Why the machine cannot be used at all (an unreachable host), else None."""
        return None

    def allowed_cpus(self) -> list[int]:
        """The CPUs measuring may use on the machine programs run on."""
        from .. import system

        return system.allowed_cpus()

    def pick_cpu(self, setting) -> int | None:
        """The CPU measuring processes are pinned to on the machine programs run on."""
        from .. import system

        return system.pick_cpu(setting, self.allowed_cpus())

    def pick_cpus(self, setting, lanes: int = 1) -> tuple[int | None, ...]:
        """The CPUs of the measuring lanes on the machine programs run on (system.pick_cpus)."""
        from .. import system

        return system.pick_cpus(setting, lanes, self.allowed_cpus(), self.machine_facts().get("cpu_cores"))

    def timing_lock(self, run_id: str, wait: bool = True, say=print):
        """Exclusive timing on the machine programs run on (this machine's lock; remote hosts override)."""
        from ..lock import timing_lock

        return timing_lock(run_id, Path.cwd(), wait=wait, say=say)

    def close(self) -> None:
        pass

    def __enter__(self) -> "Backend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -------------------------------------------------------------- shared
    def run_command(self, argv: list[str], *, target: Target, timeout: float) -> Completed:
        """Run a command where the programs run (a JVM's facts, say): here, where they are also built; a remote
        host overrides it."""
        return self.exec(argv, target=target, timeout=timeout)

    def run_program(self, program: Path | str, args: list[str], *, target: Target, timeout: float,
                    env: dict | None = None, cpu: int | None = None, icount: Icount | None = None) -> Completed:
        """Run a built program through cipherlab-run (natively or under the target's emulator)."""
        full_env = {**runner_env(target, self.plugin_path(target) if icount else None), **(env or {})}
        argv = [self.runner(), *runner_args(cpu, icount), str(program), *args]
        return self.exec(argv, target=target, timeout=timeout, env=full_env)

    def compiler_version(self, exe: str, target: Target) -> str:
        """First line of ``exe --version`` where the target's programs are built ('' when missing)."""
        key = (target.image or "host", exe)
        if key not in self._versions:
            c = self.exec([exe, "--version"], target=target, timeout=60)
            lines = c.stdout.strip().splitlines()
            self._versions[key] = lines[0].strip() if c.returncode == 0 and lines else ""
        return self._versions[key]

    def package_version(self, package: str, target: Target) -> str:
        """The Debian version of a package where the target's programs are built and run ('' when not installed
        or not a Debian system): a peer library's provenance."""
        key = (target.image or "host", f"package {package}")
        if key not in self._versions:
            c = self.exec(["dpkg-query", "-W", "-f=${Version}", package], target=target, timeout=60)
            self._versions[key] = c.stdout.strip() if c.returncode == 0 else ""
        return self._versions[key]
