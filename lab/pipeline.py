"""One cell's walk: build -> gate -> evidence -> instruction counts -> measure, ending in a :class:`Final`.

:class:`CellPipeline` is the only code that takes a cell through the stages.  The local executor, the Dask
executor (its workers), SSH hosts (through their backend), ``lab verify``, ``lab checksums``, the flag search
and bisection all call it; executors only decide where and when each call runs.

* :meth:`CellPipeline.build` — the cell's programs through the one build plan (:mod:`lab.buildplan`,
  :mod:`lab.build`); a missing compiler or peer library is ``unavailable``, an error ``build_failed``;
* :meth:`CellPipeline.gate` — the known-answer judgement (:func:`lab.kat.run_kat`), remembered per binary;
* :meth:`CellPipeline.count` — guest-instruction counts (:mod:`lab.icount`);
* :meth:`CellPipeline.check_ct` — the constant-time trace check (:func:`lab.ct.check`) when the run or the
  profile asks for it; its dudect half times the CPU, so it runs in :meth:`CellPipeline.measure`;
* :meth:`CellPipeline.prepare` — the three above plus the drill-down evidence (:mod:`lab.disasm`);
* :class:`Agreement` — the second half of the judgement (:func:`lab.kat.vote`): the builds of a cipher
  without a stored checksum must agree, so those cells are released once every one of them is gated;
* :meth:`CellPipeline.measure` — adaptive sampling (:class:`lab.measure.Measurer`) **under the machine's
  timing lock**, whichever executor calls it: no two runs on one machine ever time at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .models import Status
from . import ct, disasm, icount, java, memo, protocol, system
from .backends import Backend
from .build import Builder, BuildResult
from .buildplan import is_native
from .ct import DUDECT_MEASUREMENTS, CtVerdict
from .errors import UsageError
from .kat import Verdict, run_kat, vote
from .measure import CellSamples, Measurer, cycles_args, failure_status
from .plan import Cell

PROGRAMS = ("kat", "timing", "cycles", "icount")
OPTIONAL = ("icount", "ct", "dudect")  # programs whose failure to build is a note, not the cell's end
CT_PROGRAMS = ("ct", "dudect")  # built when a constant-time check is asked for (dudect: this machine's CPU only)


@dataclass
class Built:
    """A cell whose programs are built."""

    cell: Cell
    results: dict[str, BuildResult]
    java: dict | None = None  # a Java cell's JVM (lab.results.JavaInfo): version, flags, JIT state, its stages' data
    library: str | None = None  # a peer's library where it runs ("package version"): the programs link it

    def runs_with(self) -> list:
        """What the programs run with besides their bytes: every verdict, count and hash of them keys on it."""
        return [self.cell.target.name, self.library] if self.library else [self.cell.target.name]

    def program(self, name: str) -> Path:
        return self.results[name].program


@dataclass
class Final:
    """What a cell ended with, before it becomes a record."""

    status: str
    reason: str | None = None
    built: Built | None = None
    verdict: Verdict | None = None
    samples: CellSamples | None = None
    icount: dict | None = None
    icount_note: str | None = None
    stages: dict[str, float] = field(default_factory=dict)
    cell: Cell | None = None
    ct: CtVerdict | None = None
    reused: list[str] = field(default_factory=list)  # stages answered from what an earlier walk stored


@dataclass
class Prepared:
    """A cell built, gated and counted: ready to be measured."""

    built: Built
    verdict: Verdict
    icount: dict | None = None
    icount_note: str | None = None
    stages: dict[str, float] = field(default_factory=dict)
    ct: CtVerdict | None = None
    reused: list[str] = field(default_factory=list)

    @property
    def cell(self) -> Cell:
        return self.built.cell

    def final(self, status: str, reason: str | None, samples: CellSamples | None = None, **stages) -> Final:
        return Final(status, reason, self.built, self.verdict, samples, self.icount, self.icount_note,
                     {**self.stages, **stages}, self.cell, self.ct, list(self.reused))


@dataclass(frozen=True)
class Stages:
    """Which stages a walk includes and where they keep their files (picklable: Dask workers receive it)."""

    programs: tuple[str, ...] = PROGRAMS  # "icount" among them: instruction counts
    vectors: tuple[Path, ...] | None = None  # known answers from these files instead of the cipher's (lab verify)
    stored_checksums: bool = True  # judge the checksum against cipher.yaml (lab checksums computes it)
    kat_timeout: float | None = None  # per kat run (default: the cell's profile)
    kat_cache: Path | None = None  # passing verdicts remembered per binary, vectors, target and machine
    kat_long_every: int = 1  # > 1: a quick gate, every Nth long (iterated) record only (the flag search's race)
    counts_dir: Path | None = None  # the instruction-count plugin's output files
    asm_dir: Path | None = None  # drill-down evidence (lab/disasm.py)
    run_id: str = ""  # the timing lock's holder
    wait: bool = True  # wait for the timing lock (else: fail when another run holds it)
    ct: bool = False  # constant-time checks of every cell (else: of the cells whose profile says ct: true)
    ct_dir: Path | None = None  # the trace plugin's output files
    dudect_measurements: int = DUDECT_MEASUREMENTS
    run_noise: float | None = None  # the machine's learnt run-to-run noise (lab.calibration); None: the profile's
    within_scale: float = 1.0  # the machine's learnt calibration of the within-run part (lab.calibration)
    raw_run_noise: float | None = None  # the same for figures at the speed they ran at (Java: no gauge)
    memo_dir: Path | None = None  # counts, verdicts and evidence remembered per binary (lab/memo.py)


QUICK_LONG_EVERY = 32  # a quick gate checks every 32nd long record (iterated over 100 times: kat --long-every)


def _timed(f, *args):
    t0 = time.perf_counter()
    out = f(*args)
    return out, round(time.perf_counter() - t0, 3)


class CellPipeline:
    """The stages of one cell on one backend (a machine: this one, a container engine, an SSH host)."""

    def __init__(self, backend: Backend, builder: Builder, stages: Stages = Stages(), say: Callable = print):
        self.backend, self.builder, self.stages, self.say = backend, builder, stages, say
        self.java = java.JavaBuilder(builder.build_dir)
        self._jvms: dict[tuple, dict] = {}
        self._jvm_lock = threading.Lock()

    # ------------------------------------------------------------ build
    def wants_ct(self, cell: Cell) -> bool:
        """--ct, or a profile that asks for it in a whole walk (a run's: the flag search's and bisection's partial
        walks build only what they race or gate)."""
        return self.stages.ct or (cell.profile.ct and {"kat", "timing"} <= set(self.stages.programs))

    def programs(self, cell: Cell) -> list[str]:
        extra = [p for p in CT_PROGRAMS if p == "ct" or is_native(cell.target)] if self.wants_ct(cell) else []
        return [*self.stages.programs, *(p for p in extra if p not in self.stages.programs)]

    def build(self, cell: Cell) -> Built | Final:
        if is_jvm(cell):
            return self._build_java(cell)
        programs = self.programs(cell)
        plans = [(self.builder.plan(cell.impl, cell.toolchain, cell.target, p), cell.target) for p in programs]
        results, seconds = _timed(self.builder.build, plans)
        b = Built(cell, dict(zip(programs, results)))
        core = [r for p, r in b.results.items() if p not in OPTIONAL]
        missing = next((r.missing for r in core if r.missing), None)
        failed = next((r for r in core if not r.ok and not r.missing), None)
        stages = {"build": seconds}
        if missing:
            return Final(Status.UNAVAILABLE, f"compiler {missing} not found (toolchain {cell.toolchain.name}): "
                         f"install {_package_for(missing, cell)}", b, stages=stages, cell=cell)
        if failed and cell.impl.peer and not self.peer_installed(cell):
            return Final(Status.UNAVAILABLE, f"peer library {cell.impl.peer.display} is not installed: install "
                         f"{cell.impl.peer.package_on(cell.target.name)}", b, stages=stages, cell=cell)
        if failed:
            return Final(Status.BUILD_FAILED, failed.failure, b, stages=stages, cell=cell)
        if cell.impl.peer:
            package = cell.impl.peer.package_on(cell.target.name)
            version = self.backend.package_version(package, cell.target)
            b.library = f"{package} {version}" if version else None
        return b

    def peer_installed(self, cell: Cell) -> bool:
        """Whether the cell's peer library is installed where its programs are built: on this machine, or in the
        target's image (its header there; a container target's image has its own packages)."""
        c = self.backend.exec(["test", "-e", f"/usr/include/{cell.impl.peer.header}"], target=cell.target,
                              timeout=60)
        return c.returncode == 0

    def _build_java(self, cell: Cell) -> Built | Final:
        """The Java build kind (lab.java.JavaBuilder): javac once per tree, the cell's launchers, its JVM's facts."""
        tc = cell.toolchain
        try:
            results = self.java.build(cell.impl, tc.cc, tc.flags, tuple(cell.profile.jvm.measure_flags))
        except java.JavaUnavailable as e:
            return Final(Status.UNAVAILABLE, str(e), cell=cell)
        except java.JavaBuildFailed as e:
            return Final(Status.BUILD_FAILED, str(e), cell=cell)
        jvm = self._jvm(cell)
        if not jvm["java_version"] or "rror" in jvm["java_version"]:
            return Final(Status.UNAVAILABLE, f"JVM {tc.cc} does not start on {cell.target.name}: install "
                         f"{tc.package}" + (f" (its image: invoke images.build --targets {cell.target.name})"
                                            if cell.target.image else ""), cell=cell)
        return Built(cell, results, {**jvm, "jvm_profile": tc.name,
                                     "harness": {"program": java.MAINS["timing"], "gated_under": f"{tc.cc} (no flags)",
                                                 "jit_warmup_ms": cell.profile.jvm.jit_warmup_ms,
                                                 "measure_flags": list(cell.profile.jvm.measure_flags)}})

    def _jvm(self, cell: Cell) -> dict:
        key = (cell.toolchain.name, cell.target.name)
        with self._jvm_lock:
            if key not in self._jvms:
                self._jvms[key] = java.jvm_state(cell.toolchain.cc, cell.toolchain.flags,
                                                 lambda argv: self.backend.run_command(argv, target=cell.target,
                                                                                       timeout=120))
            return self._jvms[key]

    # ------------------------------------------------------------- gate
    def gate(self, b: Built, build_seconds: float = 0.0) -> Prepared | Final:
        t0 = time.perf_counter()
        key = self._verdict_key(b) if self.stages.kat_cache else None
        cached = self.stages.kat_cache / f"{key}.json" if key else None
        hit = bool(cached and cached.exists())
        if hit:
            v = Verdict(**json.loads(cached.read_text()))
            v.checksums = {int(k): x for k, x in v.checksums.items()}
        else:
            cell = b.cell
            v = run_kat(self.backend, b.program("kat"), cell.impl, cell.target,
                        self.stages.kat_timeout or cell.profile.timeout_seconds,
                        files=list(self.stages.vectors) if self.stages.vectors else None, env=dict(cell.impl.env),
                        checksums=self.stages.stored_checksums, long_every=self.stages.kat_long_every)
            if cached and v.ok:
                cached.parent.mkdir(parents=True, exist_ok=True)
                cached.write_text(json.dumps(dataclasses.asdict(v)))
        p = Prepared(b, v, stages={"build": build_seconds, "kat": 0.0 if hit else round(time.perf_counter() - t0, 3)},
                     reused=["kat"] if hit else [])
        return p if v.ok else p.final(v.status, v.reason)

    def _verdict_key(self, b: Built) -> str:
        h = hashlib.sha256(b.program("kat").read_bytes())
        for f in self.stages.vectors or b.cell.impl.vector_files:
            h.update(Path(f).read_bytes())
        h.update(json.dumps([*b.runs_with(), self.backend.describe().get("host") or system.machine_id(),
                             self.backend.image_id(b.cell.target), sorted(dict(b.cell.impl.checksums).items()),
                             sorted(b.cell.impl.env), self.stages.stored_checksums,
                             *([self.stages.kat_long_every] if self.stages.kat_long_every > 1 else [])]).encode())
        return h.hexdigest()[:32]

    # ------------------------------------------------------------ count
    def count(self, p: Prepared) -> Prepared | Final:
        """Guest-instruction counts; a count that fails is a note (hardware timing still measures the cell),
        except on an emulated target, where the count is the measurement."""
        cell, r = p.cell, p.built.results.get("icount")
        if r is None or self.stages.counts_dir is None:
            return p
        t0 = time.perf_counter()
        try:
            k = memo.key([r.program, self.backend.plugin_path(cell.target)] if r.ok else [],
                         [cycles_args(cell, icount=True), *p.built.runs_with(), self.backend.image_id(cell.target)])
            (p.icount, p.icount_note, fail), hit = memo.remembered(
                self.stages.memo_dir if r.ok else None, "icount", k, lambda: list(self._count(cell, r)),
                keep=lambda v: v[0] is not None)
        finally:
            p.stages["icount"] = round(time.perf_counter() - t0, 3)
        if hit:
            p.reused.append("icount")
        return p.final(*fail) if fail else p

    def _count(self, cell: Cell, r: BuildResult) -> tuple[dict | None, str | None, tuple[str, str] | None]:
        if not r.ok:
            return None, f"instruction-count build failed: {r.failure}", None
        try:
            c, counts = icount.count(self.backend, r.program, cycles_args(cell, icount=True), target=cell.target,
                                     timeout=cell.profile.timeout_seconds, counts_dir=self.stages.counts_dir)
        except icount.IcountError as e:
            return None, str(e), None
        if c.returncode != 0 or not counts:
            why = icount.unavailable_reason(c) or (f"the emulator is not installed ({c.stderr.strip()[-120:]})"
                                                   if c.returncode == 127 else None)
            if why or not cell.target.emulated:
                return None, why or f"instruction count run: {c.describe_failure()}", None
            return None, None, (failure_status(c), f"instruction count run: {c.describe_failure()}")
        try:
            ops = [r.op_record() for r in icount.fill_deltas(
                protocol.of(protocol.read(c, "icount"), protocol.CyclesRecord), counts)]
        except (icount.IcountError, protocol.ProtocolError) as e:
            return None, str(e), ((Status.MEASURE_FAILED, str(e)) if cell.target.emulated else None)
        return {"counter": icount.COUNTER_NAME, "unit": icount.COUNTER_UNIT,
                "emulator": cell.target.qemu or f"qemu-{cell.target.arch}", "ops": ops}, None, None

    # -------------------------------------------------------- constant time
    def check_ct(self, p: Prepared) -> Prepared:
        """The trace check (deterministic, so in parallel with other cells); dudect comes with the measuring."""
        cell, r = p.cell, p.built.results.get("ct")
        if r is None:
            return p
        t0 = time.perf_counter()
        if not r.ok:
            p.ct = CtVerdict(verdict="unavailable", reason=f"the ct program did not build: {r.failure}")
        else:
            k = memo.key([r.program, self.backend.plugin_path(cell.target)],
                         [*p.built.runs_with(), self.backend.image_id(cell.target), cell.impl.id,
                          list(cell.key_sizes), sorted(dict(cell.impl.env).items())])
            v, hit = memo.remembered(self.stages.memo_dir, "ct", k, lambda: ct.check(
                self.backend, cell.target, r.program, timeout=cell.profile.timeout_seconds,
                work_dir=self.stages.ct_dir or self.builder.build_dir / "ct", impl=cell.impl.id,
                key_sizes=tuple(cell.key_sizes), env=dict(cell.impl.env)).model_dump(mode="json"),
                keep=lambda v: v["verdict"] != "unavailable")
            p.ct = CtVerdict.model_validate(v)
            if hit:
                p.reused.append("ct")
        p.stages["ct"] = round(time.perf_counter() - t0, 3)
        return p

    def dudect(self, p: Prepared) -> None:
        """dudect on this machine's CPU (the caller holds the timing lock); its verdict joins the trace's."""
        r = p.built.results.get("dudect")
        if r is None or not r.ok or p.ct is None or p.ct.verdict == "unavailable":
            return
        t0 = time.perf_counter()
        cell = p.cell
        # a verdict of this binary on this machine's CPU: remembered like the trace's, never one it could not give
        where = self.backend.describe().get("host") or [system.machine_id(), system.machine()["cpu_model"]]
        k = memo.key([r.program], [*p.built.runs_with(), where, cell.impl.id, list(cell.key_sizes),
                                   sorted(dict(cell.impl.env).items()), self.stages.dudect_measurements])
        v, hit = memo.remembered(self.stages.memo_dir, "dudect", k, lambda: ct.dudect(
            self.backend, cell.target, r.program, impl=cell.impl.id, key_sizes=tuple(cell.key_sizes),
            env=dict(cell.impl.env), timeout=cell.profile.timeout_seconds,
            measurements=self.stages.dudect_measurements).model_dump(mode="json"),
            keep=lambda v: v["verdict"] != "unavailable")
        p.ct = p.ct.model_copy(update={"dudect": ct.DudectVerdict.model_validate(v)})
        if hit:
            p.reused.append("dudect")
        p.stages["dudect"] = round(time.perf_counter() - t0, 3)

    def sterbenz_lipp(self, p: Prepared) -> tuple[str, str] | None:
        """Sterbenz & Lipp's own method in one more JVM of a Java cell, when the profile asks for it (the caller
        holds the timing lock); its samples join the cell's JVM facts.  A failure fails the cell."""
        sl = p.cell.profile.jvm.sterbenz_lipp
        if p.built.java is None or sl is None:
            return None
        t0 = time.perf_counter()
        c = self.backend.run_program(p.built.program("sterbenz_lipp"), [
            "--impl", p.cell.impl.id, "--key-bits", ",".join(map(str, p.cell.key_sizes)), "--repeats",
            str(sl.repeats), "--buffers", str(sl.buffers), "--setups", str(sl.setups)], target=p.cell.target,
            timeout=p.cell.profile.timeout_seconds)
        p.stages["sterbenz_lipp"] = round(time.perf_counter() - t0, 3)
        try:
            recs = protocol.read(c, "SterbenzLipp") if c.ok else []
        except protocol.ProtocolError as e:
            return Status.MEASURE_FAILED, str(e)
        if not protocol.of(recs, protocol.SinkRecord):
            tail = " | ".join((c.stdout + c.stderr).strip().splitlines()[-2:])
            return Status.MEASURE_FAILED, f"Sterbenz & Lipp's method: {c.describe_failure()}: {tail[:300]}"
        p.built.java["sterbenz_lipp"] = [r.sample() for r in protocol.of(recs, protocol.SterbenzLippRecord)]
        return None

    # ---------------------------------------------------------- prepare
    def prepare(self, cell: Cell) -> Prepared | Final:
        """build -> gate -> evidence -> counts -> constant-time trace."""
        self.backend.cancel.check()
        built, seconds = _timed(self.build, cell)
        if isinstance(built, Final):
            return built
        gated = self.gate(built, seconds)
        evidence_reused = self.stages.asm_dir is not None and built.java is None and disasm.record(
            self.backend, [built], self.stages.asm_dir, memo_dir=self.stages.memo_dir)[1]
        if isinstance(gated, Final):
            return gated
        if evidence_reused:
            gated.reused.append("asm")
        counted = self.count(gated)
        return counted if isinstance(counted, Final) else self.check_ct(counted)

    def prepare_all(self, cells: list[Cell], jobs: int) -> list[Prepared | Final]:
        """prepare() of every cell, `jobs` at a time, then the agreement between builds."""
        agreement = Agreement(cells)
        with ThreadPoolExecutor(max(1, jobs)) as pool:
            return [x for item in pool.map(self.prepare, cells) for x in agreement.add(item)]

    # ---------------------------------------------------------- measure
    def measure(self, items: list[Prepared], cpu: int | None | tuple[int | None, ...],
                on_final: Callable[[Final], None],
                on_process: Callable[[Cell, int], None] = lambda cell, n: None) -> None:
        """Measures the cells (interleaved as their profile asks, on the lanes' CPUs `cpu`) under the machine's
        timing lock."""
        if not items:
            return
        by_id = {p.cell.id: p for p in items}

        def done(cs: CellSamples) -> None:
            status, reason = cs.failure or (Status.OK, None)
            p = by_id[cs.cell.id]
            if status == Status.OK:
                self.dudect(p)
                status, reason = self.sterbenz_lipp(p) or (status, reason)
            f = p.final(status, reason, cs, measure=round(cs.seconds, 3))
            f.cell = cs.cell  # with the key sizes the build supports (as measured)
            on_final(f)

        todo = [CellSamples(_supported(p.cell, p.verdict), p.built.program("timing"), p.built.program("cycles"),
                            noise=self.stages.run_noise, raw_noise=self.stages.raw_run_noise,
                            scale=self.stages.within_scale) for p in items]
        with self.backend.timing_lock(self.stages.run_id, wait=self.stages.wait, say=self.say):
            Measurer(self.backend, cpu, done, on_process).measure(todo)


class Agreement:
    """The vote between builds (:func:`lab.kat.vote`) as cells arrive: a gated cell of a cipher with a stored
    checksum passes at once; those of a cipher without one wait until every cell of that cipher has arrived,
    and are then released with the vote's verdict."""

    def __init__(self, cells: list[Cell]):
        self.waiting = Counter(c.impl.cipher for c in cells if not c.impl.checksums and not c.unavailable)
        self.held: dict[str, list[Prepared | Final]] = {}

    def add(self, item: Prepared | Final) -> list[Prepared | Final]:
        cipher = item.cell.impl.cipher
        if cipher not in self.waiting:
            return [item]
        self.held.setdefault(cipher, []).append(item)
        self.waiting[cipher] -= 1
        if self.waiting[cipher] > 0:
            return []
        del self.waiting[cipher]
        batch = self.held.pop(cipher)
        gated = [x for x in batch if isinstance(x, Prepared)]
        vote([(cipher, False, p.verdict) for p in gated])
        return [p.final(p.verdict.status, p.verdict.reason) if isinstance(p, Prepared) and not p.verdict.ok else p
                for p in batch]


def is_jvm(cell: Cell) -> bool:
    """A Java cell: its toolchain is a JVM profile (family jvm)."""
    return cell.toolchain.family == "jvm"


def _supported(cell: Cell, v: Verdict) -> Cell:
    """The cell with the key sizes its build really supports (as the kat program reports them): a library may
    lack one of the cipher's sizes (libgcrypt's Twofish has no 192-bit keys)."""
    have = set((v.facts or {}).get("key_bits") or cell.key_sizes)
    keys = tuple(k for k in cell.key_sizes if k in have) or cell.key_sizes
    return cell if keys == cell.key_sizes else dataclasses.replace(cell, key_sizes=keys)


def _package_for(exe: str, cell: Cell) -> str:
    if exe.startswith(cell.target.triple + "-"):
        return f"gcc-{cell.target.triple} (or build in the target's container: --backend container)"
    m = re.fullmatch(r"(g\+\+|clang\+\+)(-\d+)?", exe)  # a C++ adapter's compiler of a versioned toolchain
    if m:  # Debian: g++-11 is its own package; clang++-16 comes with clang-16
        return ("g++" if m.group(1) == "g++" else "clang") + (m.group(2) or "")
    return {"clang": "clang", "gcc": "gcc"}.get(exe, cell.toolchain.package)


# ------------------------------------------------------------------ backends
def make_backend(lab, name: str, *, engine: str = "auto", build_dir: Path, progress=print, host: str | None = None,
                 accept_new_host_keys: bool = False) -> Backend:
    """The backend of a machine group: `name` (host, container, mixed) here, or SSH host `host` (programs built
    here: on this machine for a native target, else in the target's container)."""
    if host is not None:
        from .backends.ssh import SshBackend
        from .buildplan import is_native

        h = lab.host(host)
        t = lab.target(h.target)
        build = make_backend(lab, "host" if is_native(t) and not t.image else "container", engine=engine,
                             build_dir=build_dir, progress=progress)
        return SshBackend(host, h, build, accept_new_host_keys=accept_new_host_keys, root=lab.root)
    if name == "host":
        from .backends.host import HostBackend

        return HostBackend(lab.root)
    if name == "container":
        from .backends.container import ContainerBackend

        return ContainerBackend(lab, engine=engine, build_dir=build_dir, progress=progress)
    if name == "mixed":
        from .backends.mixed import MixedBackend

        return MixedBackend(lab, engine=engine, build_dir=build_dir, progress=progress)
    raise UsageError(f"unknown backend '{name}' (use host, container or mixed)")


__all__ = ["PROGRAMS", "Built", "Final", "Prepared", "Stages", "CellPipeline", "Agreement", "make_backend"]
