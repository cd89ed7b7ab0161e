"""verify -> measure: adaptive sampling of verified cells, interleaved, one process at a time per lane (CPU).

The unit of replication is the process (docs/measurement.md): the memory
layout a process gets changes a cipher's speed by up to a third on the lab's
VM, and stays fixed within the process.  So a cell is measured as several
short processes of the ``timing`` and ``cycles`` programs, and the cells of a
batch take turns (cell 1 process 1, cell 2 process 1, ..., then process 2 of
each), so drift of the machine falls on all of them alike.  By default the
batch is every cell of the run (``interleave: 0``): each cell's processes
spread over the whole measuring time, so the machine's drift within it
shows in their spread, and so in the interval, instead of moving the whole
cell unseen (docs/measurement.md, "Intervals that hold").  For the same
reason every process runs its own copy of its program file (OwnCopies): the
physical pages of a file's code and tables are shared by every process that
runs it, and they, too, move a figure.  With ``lanes`` above 1 a round's
processes run that many at a time, each pinned to its own CPU, so which CPU
(and which neighbour) a process had is part of its draw.  After each round
the headline estimate of every quantity of a cell and its interval are
recomputed (:mod:`lab.quantities`, :mod:`lab.stats`); a cell stops when every
quantity reached the profile's precision (after ``min_processes``), or at
``max_processes``, or when its time budget is spent.  CPU steal time and
context switches on the measuring CPU are recorded around every process.
"""

from __future__ import annotations

import itertools
import os
import queue
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .models import Gauge, Status
from . import protocol, system
from .backends import Backend, Completed
from .plan import Cell
from .quantities import Quantity, all_settled, cycle_quantities, timing_quantities, worst_precision


class OutputError(ValueError):
    """A measuring program printed something the lab cannot read."""


# ------------------------------------------------- harness program arguments
def timing_args(cell: Cell) -> list[str]:
    s = cell.sampling
    return ["--impl", cell.impl.id, "--key-bits", ",".join(map(str, cell.key_sizes)),
            "--blocks-per-call", str(cell.profile.timing.blocks_per_call), "--samples", str(s.samples),
            "--warmup", str(s.warmup), "--sample-us", str(s.sample_us)]


def cycles_args(cell: Cell, *, icount: bool = False) -> list[str]:
    """Options of the cycles program; for instruction counts one call per sample, one sample, no warm-up
    (counts are exact: repeating them only costs emulation time)."""
    s = cell.sampling
    args = ["--impl", cell.impl.id, "--key-bits", ",".join(map(str, cell.cycle_key_sizes)),
            "--sizes", ",".join(map(str, cell.cycle_sizes))]
    if icount:
        return args + ["--samples", "1", "--warmup", "0", "--calls", "1"]
    return args + ["--samples", str(s.samples), "--warmup", str(s.warmup), "--sample-us", str(s.sample_us),
                   "--long-samples", str(s.long_samples)]


def java_args(cell: Cell) -> list[str]:
    """Options of a Java cell's measuring program (java_src/harness/cipherlab/Measure.java): the timing
    program's and the cycles program's in one JVM, and the JIT's warm-up."""
    s = cell.sampling
    return [*timing_args(cell), "--sizes", ",".join(map(str, cell.cycle_sizes)),
            "--cycle-key-bits", ",".join(map(str, cell.cycle_key_sizes)), "--long-samples", str(s.long_samples),
            "--jit-warmup-ms", str(cell.profile.jvm.jit_warmup_ms)]


# ----------------------------------------------------------- reading output
def _records(c: Completed, program: str) -> list:
    try:
        return protocol.read(c, program)
    except protocol.ProtocolError as e:
        raise OutputError(str(e)) from None


def parse_timing(c: Completed, cell: Cell) -> dict:
    """{key_size: {"encrypt"|"decrypt"|"key_setup": {"per_sample", "ns"}}} from one timing process."""
    out = {r.key_size: r.ops() for r in protocol.of(_records(c, "timing"), protocol.TimingRecord)}
    missing = [k for k in cell.key_sizes if k not in out]
    if missing:
        raise OutputError(f"timing: no samples for {missing[0]}-bit keys in its output"
                          + (f" ({c.stdout.strip()[:120]!r})" if c.stdout.strip() else " (it printed nothing)"))
    return out


def parse_cycles(c: Completed, cell: Cell) -> tuple[float | None, list[dict]]:
    """(ticks per second, [op records in the stored form]) from one cycles process."""
    records = _records(c, "cycles")
    counter = next(iter(protocol.of(records, protocol.CounterRecord)), None)
    ops = [r.op_record() for r in protocol.of(records, protocol.CyclesRecord)]
    want = 4 + 2 * len(cell.cycle_sizes)
    if len(ops) != want * len(cell.cycle_key_sizes) or any(not o["deltas"] for o in ops):
        raise OutputError(f"cycles: {len(ops)} operation records where {want * len(cell.cycle_key_sizes)} were due"
                          + (f" ({c.stdout.strip()[:120]!r})" if not ops and c.stdout.strip() else ""))
    tps = counter.ticks_per_second if counter else None
    return (float(tps) if tps else None), ops


def parse_gauge(c: Completed, program: str) -> dict | None:
    """The machine-speed gauge of one timing or cycles process in the stored form (lab.models.Gauge); None
    when the program measured none (the instruction counter)."""
    g = next(iter(protocol.of(_records(c, program), protocol.GaugeRecord)), None)
    return g.stored() if g else None


def failure_status(c: Completed) -> str:
    if c.unreachable:
        return Status.UNREACHABLE
    if c.timed_out:
        return Status.TIMEOUT
    if c.crashed:
        return Status.CRASHED
    return Status.MEASURE_FAILED


# ------------------------------------------------------------ one cell's data
def _per_iteration(process: dict):
    """A stored process's gauge samples per iteration (lab.models.Gauge), or None."""
    g = process.get("gauge")
    return Gauge.model_validate(g).per_iteration() if g else None


@dataclass
class CellSamples:
    """Raw data of a cell's measuring processes so far, in the results' format (lab.results.Measurement)."""

    cell: Cell
    timing_program: Path
    cycles_program: Path
    timing: list[dict] = field(default_factory=list)
    cycles: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    steal: float = 0.0
    cpu_seconds: float = 0.0
    ctxt: int = 0
    failure: tuple[str, str] | None = None
    stopped: str | None = None
    timing_only: bool = False  # the flag race and bisection decide on speeds: no cycles program
    # the machine's learnt calibration (lab.calibration; None: the profile's priors): the run-to-run noise of
    # figures at its reference speed and of figures at the speed they ran at, and the within-run part's scale
    noise: float | None = None
    raw_noise: float | None = None
    scale: float = 1.0

    @property
    def counts_cycles(self) -> bool:
        """Targets whose counter is the instruction marker get their cycle table from instruction counts."""
        return not self.timing_only and self.cell.target.counter != "marker"

    def timing_quantity(self, metric: str, key_size: int) -> Quantity:
        """One speed quantity (encrypt_speed, decrypt_speed, key_setup_speed) of the processes so far."""
        qs = timing_quantities([p["key_sizes"] for p in self.timing], self.cell.impl.block_bits, "")
        return next(q for q in qs if q.metric == metric and q.key_size == key_size)

    @property
    def processes(self) -> int:
        return min(len(self.timing), len(self.cycles)) if self.counts_cycles else len(self.timing)

    def quantities(self) -> list[Quantity]:
        """The cell's quantities over its processes so far, each with its processes' gauges."""
        tq = timing_quantities([p["key_sizes"] for p in self.timing], self.cell.impl.block_bits, "",
                               gauges=[_per_iteration(p) for p in self.timing])
        return tq + cycle_quantities([p["ops"] for p in self.cycles], gauges=[_per_iteration(p) for p in self.cycles])

    @property
    def run_noise(self) -> float:
        """The machine's run-to-run noise these figures' intervals take, learnt or the profile's prior, of their
        kind: a C cell's figures are at the machine's reference speed (its processes time the gauge: lab/speed.py),
        a Java cell's at the speed they ran at."""
        s = self.cell.sampling
        if self.cell.jvm:
            return s.run_noise if self.raw_noise is None else self.raw_noise
        return s.reference_run_noise if self.noise is None else self.noise

    @property
    def within_scale(self) -> float:
        """The learnt scale of the within-run part (fitted on figures at the reference speed: 1 for Java's)."""
        return 1.0 if self.cell.jvm else self.scale

    def worst_precision(self, qs: list[Quantity] | None = None) -> float:
        """The largest relative half-width among the cell's quantities (the overhead excepted)."""
        s = self.cell.sampling
        return worst_precision(self.quantities() if qs is None else qs, s.estimator, s.confidence,
                               run_noise=self.run_noise, within_scale=self.within_scale)

    def decide(self) -> str | None:
        """Why to stop now, or None to take another process: every quantity settled (its interval meets the
        profile's precision, or more processes would no longer narrow it: quantities.settled), from min_processes
        on; max_processes; the time budget."""
        s = self.cell.sampling
        p = self.processes
        if self.cell.target.emulated:
            return "emulated" if p >= s.emulated_processes else None
        if p >= s.min_processes:
            if all_settled(self.quantities(), s.estimator, s.confidence, s.precision, self.run_noise,
                           self.within_scale):
                return "precision"
            if p >= s.max_processes:
                return "max_processes"
        if self.seconds >= s.budget_seconds and p >= 2:
            return "budget"
        return None

    def measurement(self, cpus: int | None | tuple[int | None, ...]) -> dict:
        cpus = as_lanes(cpus)
        s = self.cell.sampling
        first = next((o for p in self.cycles for o in p["ops"]), None)
        return {"timer": "java-nanotime" if self.cell.jvm else "clock-monotonic", "blocks_per_call": self.cell.profile.timing.blocks_per_call,
                "counter": first["counter"] if first else None, "unit": first["unit"] if first else None,
                "timing": self.timing, "cycles": self.cycles, "estimator": s.estimator, "confidence": s.confidence,
                "precision_target": s.precision, "run_noise": self.run_noise, "within_scale": self.within_scale,
                "stopped": self.stopped or "budget",
                "seconds": round(self.seconds, 3), "cpu": cpus[0], "lanes": len(cpus),
                "system": {"steal_seconds": round(self.steal, 3), "cpu_seconds": round(self.cpu_seconds, 3),
                           "steal_fraction": round(self.steal / self.cpu_seconds, 4) if self.cpu_seconds else 0.0,
                           "context_switches": self.ctxt}}


def as_lanes(cpu: int | None | tuple[int | None, ...] | list[int | None]) -> tuple[int | None, ...]:
    """The measuring lanes' CPUs from one CPU (one lane) or several."""
    return tuple(cpu) if isinstance(cpu, (tuple, list)) else (cpu,)


# ------------------------------------------------------- a process's program
class OwnCopies:
    """Every measuring process of a native cell runs its own copy of its program file.

    The code and constant tables of a program are mapped from the page cache's pages of its file: every process
    that runs the file shares them, and where they lie in physical memory sets conflicts in the physically
    indexed caches that move a figure, for a whole run (serpent/avx2 decryption of 1,024 blocks: 1.5-2.5x slower
    in 5 copies of 400, both processes of such a copy alike, never in 400 runs of the file itself: bench.placement,
    AMD EPYC, 2026-11-29, docs/measurement.md). A copy per process makes that placement part of the replication
    unit, as the heap's and the stack's already are, so it shows in the processes' spread instead of moving a
    whole cell between runs. A cell's copies stay until the cell ends (a new copy would otherwise take the pages
    the last one freed) and then go. Copies are made where the program lies (the build folder, which a container
    also sees), under paths of one length; a Java cell's launcher (the JIT's code is each process's own anyway),
    an emulated target's program (QEMU translates it) and a backend that ships programs elsewhere
    (`Backend.own_copies` false: an SSH host) run the program itself."""

    _cells = itertools.count()

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._folders: dict[int, list[Path]] = {}
        self._numbers: dict[int, int] = {}
        self._swept: set[Path] = set()
        self._lock = threading.Lock()  # measuring lanes ask from their own threads

    def program(self, cs: "CellSamples", program: Path, process: int) -> Path:
        """The file process number `process` of the cell runs (a fresh copy of `program`, made once)."""
        if not self.enabled or cs.cell.target.emulated or cs.cell.jvm:
            return program
        with self._lock:
            return self._copy(cs, program, process)

    def _copy(self, cs: "CellSamples", program: Path, process: int) -> Path:
        n = self._numbers.setdefault(id(cs), next(self._cells))
        if program.parent not in self._swept:
            self._swept.add(program.parent)
            _sweep(program.parent)
        folder = program.parent / f".own-{os.getpid()}-{n}"
        copy = folder / f"{process:03d}" / program.name
        if not copy.exists():
            copy_program(program, copy)
            if folder not in self._folders.setdefault(id(cs), []):
                self._folders[id(cs)].append(folder)
        return copy

    def release(self, cs: "CellSamples") -> None:
        """The cell ended: its copies go."""
        self._release(id(cs))

    def release_all(self) -> None:
        """Every cell's copies go (the measuring ended, or was stopped)."""
        for key in list(self._numbers):
            self._release(key)

    def _release(self, key: int) -> None:
        with self._lock:
            self._numbers.pop(key, None)
            folders = self._folders.pop(key, [])
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def copy_program(program: Path, copy: Path) -> Path:
    """A fresh copy of a program file (its folders made, its mode kept): new pages in the page cache."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    with system.SPAWN_LOCK:  # no child starts while the copy is open for writing (it would keep it: ETXTBSY)
        shutil.copyfile(program, copy)
    copy.chmod(program.stat().st_mode & 0o777)
    return copy


def _sweep(folder: Path) -> None:
    """Copies left beside a program by a process that died before its cells ended (killed, a lost Dask
    worker): gone, once the process that made them is."""
    for d in folder.glob(".own-*-*"):
        try:
            os.kill(int(d.name.split("-")[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (ValueError, PermissionError):
            continue


# ------------------------------------------------------------------ the loop
class Measurer:
    """Measures cells batch by batch; calls on_done(samples) as each cell finishes (or fails).  `cpu` is the CPU
    the processes are pinned to (None: not pinned), or a tuple of them: the measuring lanes, one process at a
    time on each."""

    def __init__(self, backend: Backend, cpu: int | None | tuple[int | None, ...],
                 on_done: Callable[[CellSamples], None],
                 on_process: Callable[[Cell, int], None] = lambda cell, n: None):
        self.cpus = as_lanes(cpu)
        self.backend, self.on_done, self.on_process = backend, on_done, on_process
        self.copies = OwnCopies(backend.own_copies)

    def _run(self, cs: CellSamples, program: Path, args: list[str], cpu: int | None) -> Completed:
        program = self.copies.program(cs, program, len(cs.timing))
        before = system.cpu_snapshot(cpu)
        c = self.backend.run_program(program, args, target=cs.cell.target, timeout=cs.cell.profile.timeout_seconds,
                                     env=dict(cs.cell.impl.env), cpu=cpu)
        delta = system.cpu_snapshot(cpu).since(before)
        cs.seconds += c.seconds
        cs.steal += delta["steal_seconds"]
        cs.cpu_seconds += delta["cpu_seconds"]
        cs.ctxt += delta["context_switches"]
        return c

    def one_process(self, cs: CellSamples, cpu: int | None = None) -> None:
        """One timing process and one cycles process of the cell (a Java cell: one JVM printing both) on `cpu`
        (default: the first lane's); a failure ends the cell."""
        cell = cs.cell
        both = cs.cell.jvm
        cpu = self.cpus[0] if cpu is None else cpu
        c = self._run(cs, cs.timing_program, java_args(cell) if both else timing_args(cell), cpu)
        if c.returncode != 0:
            cs.failure = (failure_status(c), f"timing: {c.describe_failure()}")
            return
        try:
            timing = parse_timing(c, cell)
        except OutputError as e:
            cs.failure = (Status.MEASURE_FAILED, str(e))
            return
        tp = {"started": c.started, "seconds": round(c.seconds, 4), "key_sizes": timing,
              "gauge": parse_gauge(c, "timing"), **({"cpu": cpu} if len(self.cpus) > 1 else {})}
        if not cs.counts_cycles:
            cs.timing.append(tp)
            return
        d = c if both else self._run(cs, cs.cycles_program, cycles_args(cell), cpu)
        if d.returncode != 0:
            cs.failure = (failure_status(d), f"cycles: {d.describe_failure()}")
            return
        try:
            tps, ops = parse_cycles(d, cell)
        except OutputError as e:
            cs.failure = (Status.MEASURE_FAILED, str(e))
            return
        cs.timing.append(tp)
        cs.cycles.append({"started": d.started, "seconds": round(d.seconds, 4), "ticks_per_second": tps, "ops": ops,
                          "gauge": parse_gauge(d, "cycles"), **({"cpu": cpu} if len(self.cpus) > 1 else {})})

    def measure(self, todo: list[CellSamples]) -> None:
        """Every cell to its stopping point, `interleave` cells at a time, round robin."""
        if not todo:
            return
        try:
            self._measure(todo)
        finally:
            self.close()

    def close(self) -> None:
        """The copies of programs still in use go (a caller that runs one_process itself calls it at its end)."""
        self.copies.release_all()

    def _measure(self, todo: list[CellSamples]) -> None:
        size = min(cs.cell.sampling.interleave or len(todo) for cs in todo)
        for start in range(0, len(todo), size):
            active = list(todo[start:start + size])
            rnd = 0
            while active:
                order = active[rnd % len(active):] + active[:rnd % len(active)]  # rotate who goes first
                self._round(order)
                still = []
                for cs in active:
                    if cs.failure is None:
                        cs.stopped = cs.decide()
                    if cs.failure is not None or cs.stopped is not None:
                        self.copies.release(cs)
                        self.on_done(cs)
                    else:
                        still.append(cs)
                active = still
                rnd += 1

    def _round(self, order: list[CellSamples]) -> None:
        """One process of every cell in `order`: in turn on one lane; on several, each lane (its own thread,
        its own CPU) takes the next cell as it comes free."""
        if len(self.cpus) == 1:
            for cs in order:
                self.one_process(cs)
                self.on_process(cs.cell, cs.processes)
            return
        free: queue.Queue = queue.Queue()
        for cpu in self.cpus:
            free.put(cpu)

        def lane(cs: CellSamples) -> None:
            cpu = free.get()
            try:
                self.one_process(cs, cpu)
            finally:
                free.put(cpu)
            self.on_process(cs.cell, cs.processes)

        with ThreadPoolExecutor(len(self.cpus)) as pool:
            for f in [pool.submit(lane, cs) for cs in order]:
                f.result()


def expected_seconds(cells: list[Cell]) -> float:
    """A rough upper bound of the measuring time, for the progress display."""
    return sum(min(c.sampling.budget_seconds, 0.15 * c.sampling.max_processes) if not c.target.emulated
               else 1.0 * c.sampling.emulated_processes for c in cells)


__all__ = ["Measurer", "CellSamples", "OwnCopies", "copy_program", "timing_args", "cycles_args", "parse_timing",
           "parse_cycles", "parse_gauge", "failure_status", "OutputError", "expected_seconds"]
