"""A run: config -> plan -> build -> verify -> measure -> record, each stage one function over typed values.

* :func:`plan_run` — the matrix (narrowed by the command line) into cells;
* :func:`build_stage` — every cell's programs, in parallel (``jobs``), only
  what changed (:mod:`lab.build`);
* :func:`verify_stage` — the known-answer gate of every built cell, in
  parallel (:mod:`lab.kat`), and the checksum agreement between builds;
* :func:`icount_stage` — guest-instruction counts, in parallel;
* :func:`measure_stage` — adaptive sampling, one process at a time on one
  core, under the machine's timing lock (:mod:`lab.measure`);
* :func:`make_record` — the one place a cell record is assembled; the
  writer (:mod:`lab.results`) appends it as soon as the cell is final.

A failure in one cell (compile error, wrong answer, crash, hang, unreadable
output) is that cell's status with its reason; the run goes on.  Only cells
that passed their known answers on that very target are measured.  A run
that is killed keeps every recorded cell and can be finished with
``--resume``; Ctrl-C abandons the current cell, marks the run interrupted and
exits 130.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__, disasm, icount, system
from .backends import Backend
from .build import Builder, BuildResult
from .buildplan import compiler
from .compilers import package_build
from .config import Lab
from .errors import RunError, UsageError
from .kat import FAILED, Verdict, run_kat, vote
from .measure import CellSamples, Measurer, cycles_args
from .plan import Cell, expand, narrowed
from .progress import Progress
from .results import CellRecord, RunWriter, new_run_id, read_run, resolve_runs, run_dirs
from .schema import MatrixFile

PROGRAMS = ("kat", "timing", "cycles", "icount")


@dataclass
class RunRequest:
    matrix: Path | None = None
    ciphers: list[str] | None = None
    implementations: str | list[str] | None = None
    toolchains: list[str] | None = None
    targets: list[str] | None = None
    profile: str | None = None
    backend: str | None = None
    resume: str | None = None  # a run id, or "latest" (the latest unfinished run)
    no_wait: bool = False
    jobs: int | None = None
    timeout: float | None = None  # per program run; None: the profile's
    hosts: list[str] | None = None  # SSH hosts (hosts/<name>.yaml) that measure the cells too
    local: bool = True  # measure on this machine as well (with hosts: --no-local measures on the hosts only)
    accept_new_host_keys: bool = False
    executor: str | None = None  # local (default) or dask
    scheduler: str | None = None  # tcp://HOST:PORT of a Dask scheduler (default: an embedded LocalCluster)
    tag: str = ""
    results_dir: Path = Path("results")
    build_dir: Path = Path("build")
    icount: bool = True


@dataclass
class RunOutcome:
    run_dirs: list[Path]  # one per machine
    planned: int
    counts: dict[str, int]

    @property
    def run_dir(self) -> Path:
        return self.run_dirs[0]

    @property
    def failed(self) -> int:
        return sum(n for s, n in self.counts.items() if s in FAILED)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


@dataclass
class Built:
    """A cell whose programs are built."""

    cell: Cell
    results: dict[str, BuildResult]

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


# ------------------------------------------------------------------ backends
def make_backend(lab: Lab, name: str, *, engine: str = "auto", build_dir: Path, progress=print) -> Backend:
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


# ---------------------------------------------------------------------- plan
def plan_run(lab: Lab, req: RunRequest):
    toolchains = lab.toolchains_matching(req.toolchains) if req.toolchains else None  # globs: 'clang-1*-O3'
    m = narrowed(lab.matrix(req.matrix), ciphers=req.ciphers, toolchains=toolchains, targets=req.targets,
                 implementations=req.implementations, profile=req.profile, backend=req.backend)
    if m.profile not in lab.profiles:
        lab.profile(m.profile)  # raises with "did you mean"
    for key, names, table in (("ciphers", m.ciphers if m.ciphers != "all" else [], lab.ciphers),
                              ("toolchains", m.toolchains, lab.toolchains), ("targets", m.targets, lab.targets)):
        for n in names:
            if n not in table:
                from .errors import unknown_name
                raise unknown_name(key[:-1], n, table)
    cells = expand(lab, m, str(req.matrix or "matrix.yaml"))
    missing = sorted({str(f) for c in cells if not c.unavailable for f in c.impl.vector_files if not Path(f).exists()})
    if missing:
        raise UsageError(f"known-answer file {missing[0]} does not exist ({len(missing)} missing): the shared/ "
                         f"folder (../shared/vectors) must sit beside the checkout ({lab.root})")
    if req.timeout:
        cells = [c.with_timeout(req.timeout) for c in cells]
    if not cells:
        raise UsageError("the matrix selects no cells (check ciphers/toolchains/targets and the exclude rules)")
    return m, cells


def fingerprint(cells: list[Cell], builder: Builder, backend: Backend) -> dict[str, str]:
    """What a resume must find unchanged: every compiler's version and every cell's sources."""
    fp: dict[str, str] = {}
    for cell in cells:
        if cell.unavailable:
            continue
        h = hashlib.sha256()
        for prog in PROGRAMS:
            plan = builder.plan(cell.impl, cell.toolchain, cell.target, prog)
            for exe in sorted(plan.compilers):
                fp[f"compiler {exe} ({cell.target.image or 'host'})"] = backend.compiler_version(exe, cell.target)
            for step in plan.steps:
                if step.kind == "compile":
                    h.update(" ".join(step.argv).encode())
                    for p in step.inputs:
                        h.update(p.read_bytes())
        fp[f"sources {cell.id}"] = h.hexdigest()[:16]
    return fp


# --------------------------------------------------------------------- stages
def build_stage(builder: Builder, cells: list[Cell], want_icount: bool,
                on_final: Callable[[Cell, Final], None]) -> list[Built]:
    """Every program of every cell; cells whose build failed (or whose compiler is missing) end here."""
    plans, owners = [], []
    for cell in cells:
        for prog in PROGRAMS if want_icount else PROGRAMS[:3]:
            plans.append((builder.plan(cell.impl, cell.toolchain, cell.target, prog), cell.target))
            owners.append((cell, prog))
    t0 = time.perf_counter()
    results = builder.build(plans)
    per_cell: dict[str, dict[str, BuildResult]] = defaultdict(dict)
    for (cell, prog), r in zip(owners, results):
        per_cell[cell.id][prog] = r
    built = []
    seconds = round(time.perf_counter() - t0, 3)
    for cell in cells:
        rs = per_cell[cell.id]
        core = {p: rs[p] for p in PROGRAMS[:3]}
        missing = next((r.missing for r in core.values() if r.missing), None)
        failed = next((r for r in core.values() if not r.ok and not r.missing), None)
        b = Built(cell, rs)
        if missing:
            on_final(cell, Final("unavailable", f"compiler {missing} not found (toolchain {cell.toolchain.name}): "
                                 f"install {_package_for(missing, cell)}", b, stages={"build": seconds}))
        elif cell.impl.peer and not cell.impl.peer.installed() and failed:
            on_final(cell, Final("unavailable", f"peer library {cell.impl.peer.display} is not installed: install "
                                 f"{cell.impl.peer.package}", b, stages={"build": seconds}))
        elif failed:
            on_final(cell, Final("build_failed", failed.failure, b, stages={"build": seconds}))
        else:
            built.append(b)
    return built


def _verdict_key(b: Built, backend: Backend) -> str:
    h = hashlib.sha256(b.program("kat").read_bytes())
    for f in b.cell.impl.vector_files:
        h.update(Path(f).read_bytes())
    h.update(json.dumps([b.cell.target.name, backend.describe().get("host") or system.machine_id(),
                         backend.image_id(b.cell.target), sorted(dict(b.cell.impl.checksums).items()),
                         sorted(b.cell.impl.env)]).encode())
    return h.hexdigest()[:32]


def _package_for(exe: str, cell: Cell) -> str:
    if exe.startswith(cell.target.triple + "-"):
        return f"gcc-{cell.target.triple} (or build in the target's container: --backend container)"
    return {"g++": "g++", "clang++": "clang", "clang": "clang", "gcc": "gcc"}.get(exe, cell.toolchain.package)


def verify_stage(backend: Backend, built: list[Built], jobs: int, on_final: Callable[[Cell, Final], None],
                 cache: Path | None = None) -> list[tuple[Built, Verdict, float]]:
    """The known-answer gate of every built cell (in parallel), then checksum agreement between builds.

    A passing verdict is remembered in `cache` under a hash of the program's bytes, the vectors' bytes, the
    target and the machine (or image) it ran on: the same binary on the same machine proves the same answers,
    so a re-run skips the gate of what did not change."""
    def gate(b: Built) -> tuple[Built, Verdict, float]:
        t0 = time.perf_counter()
        key = _verdict_key(b, backend) if cache else None
        if key and (cache / f"{key}.json").exists():
            v = Verdict(**json.loads((cache / f"{key}.json").read_text()))
            v.checksums = {int(k): x for k, x in v.checksums.items()}
            return b, v, 0.0
        v = run_kat(backend, b.program("kat"), b.cell.impl, b.cell.target, b.cell.profile.timeout_seconds,
                    env=dict(b.cell.impl.env))
        if key and v.ok:
            cache.mkdir(parents=True, exist_ok=True)
            (cache / f"{key}.json").write_text(json.dumps(dataclasses.asdict(v)))
        return b, v, round(time.perf_counter() - t0, 3)

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        gated = list(pool.map(gate, built))
    passed = []
    for b, v, seconds in gated:
        if v.ok:
            passed.append((b, v, seconds))
        else:
            on_final(b.cell, Final(v.status, v.reason, b, v, stages={"kat": seconds}))
    vote([(b.cell.impl.cipher, bool(b.cell.impl.checksums), v) for b, v, _ in passed])
    out = []
    for b, v, seconds in passed:
        if v.ok:
            out.append((b, v, seconds))
        else:
            on_final(b.cell, Final(v.status, v.reason, b, v, stages={"kat": seconds}))
    return out


def icount_stage(backend: Backend, gated: list[tuple[Built, Verdict]], counts_dir: Path, jobs: int) -> dict:
    """Guest-instruction counts of every verified cell (in parallel); {cell id: (icount record, note, failure)}."""
    def one(item) -> tuple[str, dict | None, str | None, tuple[str, str] | None]:
        b, _ = item
        cell = b.cell
        r = b.results.get("icount")
        if r is None:
            return cell.id, None, None, None
        if not r.ok:
            return cell.id, None, f"instruction-count build failed: {r.failure}", None
        try:
            c, counts = icount.count(backend, r.program, cycles_args(cell, icount=True), target=cell.target,
                                     timeout=cell.profile.timeout_seconds, counts_dir=counts_dir)
        except icount.IcountError as e:
            return cell.id, None, str(e), None
        if c.returncode != 0 or not counts:
            why = icount.unavailable_reason(c) or (f"the emulator is not installed ({c.stderr.strip()[-120:]})"
                                                   if c.returncode == 127 else None)
            if why or not cell.target.emulated:
                return cell.id, None, why or f"instruction count run: {c.describe_failure()}", None
            from .measure import failure_status
            return cell.id, None, None, (failure_status(c), f"instruction count run: {c.describe_failure()}")
        try:
            filled = icount.fill_deltas(c.json_lines(), counts)
        except icount.IcountError as e:
            return cell.id, None, str(e), (None if not cell.target.emulated else ("measure_failed", str(e)))
        ops = [{k: r[k] for k in ("key_size", "op", "n", "calls", "counter", "unit", "deltas")}
               for r in filled if r.get("type") == "cycles"]
        emulator = cell.target.qemu or f"qemu-{cell.target.arch}"
        return cell.id, {"counter": icount.COUNTER_NAME, "unit": icount.COUNTER_UNIT, "emulator": emulator,
                         "ops": ops}, None, None

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return {cid: (rec, note, fail) for cid, rec, note, fail in pool.map(one, gated)}


def measure_stage(backend: Backend, gated: list[tuple[Built, Verdict]], cpu: int | None,
                  on_done: Callable[[CellSamples], None], on_process=lambda cell, n: None) -> None:
    todo = [CellSamples(_supported(b.cell, v), b.program("timing"), b.program("cycles")) for b, v in gated]
    Measurer(backend, cpu, on_done, on_process).measure(todo)


def _supported(cell: Cell, v: Verdict) -> Cell:
    """The cell with the key sizes its build really supports (as the kat program reports them): a library may
    lack one of the cipher's sizes (libgcrypt's Twofish has no 192-bit keys)."""
    have = set((v.facts or {}).get("key_bits") or cell.key_sizes)
    keys = tuple(k for k in cell.key_sizes if k in have) or cell.key_sizes
    return cell if keys == cell.key_sizes else dataclasses.replace(cell, key_sizes=keys)


# --------------------------------------------------------------------- record
def make_record(cell: Cell, f: Final, machine: str, backend: Backend, cpu: int | None) -> CellRecord:
    """The one place a cell record is assembled."""
    impl, b, v = cell.impl, f.built, f.verdict
    rec: dict = {
        "cell": cell.id, "cipher": impl.cipher, "implementation": impl.name, "impl_class": impl.impl_class,
        "display": impl.display, "label": impl.label, "round1": impl.round1, "block_bits": impl.block_bits,
        "key_sizes": list(cell.key_sizes), "toolchain": cell.toolchain.name, "target": cell.target.name,
        "emulated": cell.target.emulated, "machine": machine, "status": f.status, "reason": f.reason,
        "seconds": round(sum(f.stages.values()), 3), "stages": f.stages, "impl": impl.facts(),
        "icount_note": f.icount_note,
    }
    if b is not None and "kat" in b.results:
        r = b.results["timing"] if b.results["timing"].ok else b.results["kat"]
        rec["build"] = {"compiler": r.plan.compiler, "compiler_version": r.compiler_version,
                        "cflags": list(r.plan.cflags), "ldflags": list(r.plan.ldflags),
                        "code_bytes": r.code_bytes, "cached": all(x.cached for x in b.results.values()),
                        "log": r.log or None}
        rec["image_id"] = backend.image_id(cell.target)
    if v is not None and v.records:
        rec["kat"] = {"files": v.files, "records": v.records, "passed": v.passed, "failed": v.failed,
                      "skipped_key_size": v.skipped_key_size, "fails": v.fails[:10], "checksums": v.checksums,
                      "roundtrip_ok": v.roundtrip_ok}
        if v.facts:
            rec["impl_facts"] = v.facts
    if f.samples is not None and f.samples.timing:
        rec["measurement"] = f.samples.measurement(cpu)
    if f.icount is not None:
        rec["icount"] = f.icount
    return CellRecord.model_validate(rec)


# ------------------------------------------------------------------------ run
def latest_unfinished(results_dir: Path) -> str:
    """The id of the latest run (of any machine) that did not finish."""
    for d in reversed(run_dirs(results_dir)):
        try:
            meta, _ = read_run(d)
        except Exception:  # noqa: BLE001 - an unreadable folder is simply not resumable
            continue
        if meta.version >= 2 and meta.status != "finished":
            return meta.run_id
    raise RunError(f"no unfinished run under {results_dir} to resume")


def _check_resume(meta, cells: list[Cell], fp: dict[str, str]) -> None:
    planned = [c.id for c in cells]
    if planned != meta.cells_planned:
        extra = sorted(set(planned) - set(meta.cells_planned))[:3]
        gone = sorted(set(meta.cells_planned) - set(planned))[:3]
        raise RunError(f"cannot resume {meta.run_id}: the plan changed (new cells {extra or 'none'}, "
                       f"missing {gone or 'none'}); start a new run")
    changed = [(k, meta.fingerprint.get(k), v) for k, v in fp.items() if meta.fingerprint.get(k) != v]
    if changed:
        k, old, new = changed[0]
        what = f"{k}: was '{old}', now '{new}'" if k.startswith("compiler") else f"{k} changed since the run started"
        raise RunError(f"cannot resume {meta.run_id}: {what} ({len(changed)} difference(s)); measurements made "
                       "with other compilers or sources must not be mixed: start a new run")


@dataclass
class MachineRun:
    """The part of a run that one machine measures: its cells, backend, builder and results folder."""

    machine: str
    host: str | None  # the SSH host's name, or None for this machine
    backend: Backend
    builder: Builder
    writer: RunWriter
    cells: list[Cell]
    todo: list[Cell]
    cpu: int | None
    ui: Progress
    backend_name: str = "host"  # the matrix's backend (for an SSH host: how its programs are built)
    engine: str = "auto"
    counts: Counter = field(default_factory=Counter)
    kat_seconds: dict[str, float] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    status: str = "interrupted"
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def final(self, cell: Cell, f: Final) -> None:
        """Record a cell that reached its end (thread-safe: the writer appends one line at a time)."""
        if cell.id in self.kat_seconds:
            f.stages.setdefault("kat", self.kat_seconds[cell.id])
        rec = make_record(cell, f, self.machine, self.backend, self.cpu)
        with self._lock:
            self.writer.add_cell(rec)
            self.counts[rec.status] += 1
        self.ui.cell_done(cell.id, rec.status, rec.reason, rec.seconds)


def _group_backend(lab: Lab, m: MatrixFile, host: str | None, build_dir: Path, req: RunRequest, say) -> Backend:
    if host is None:
        return make_backend(lab, m.backend, engine=m.engine, build_dir=build_dir, progress=say)
    from .backends.ssh import SshBackend
    from .buildplan import is_native

    h = lab.host(host)
    t = lab.target(h.target)
    build = make_backend(lab, "host" if is_native(t) and not t.image else "container", engine=m.engine,
                         build_dir=build_dir, progress=say)
    return SshBackend(host, h, build, accept_new_host_keys=req.accept_new_host_keys, root=lab.root)


def run(lab: Lab, req: RunRequest, ui: Progress | None = None, say: Callable[[str], None] = print) -> RunOutcome:
    """Runs (or resumes) a matrix on this machine and on the SSH hosts named; returns the run folders and the
    count of cells per status."""
    from .schema import MatrixFile

    results_dir = req.results_dir if req.results_dir.is_absolute() else lab.root / req.results_dir
    build_dir = req.build_dir if req.build_dir.is_absolute() else lab.root / req.build_dir
    jobs = req.jobs or os.cpu_count() or 1
    previous: dict[str, tuple] = {}
    if req.resume:
        run_id = latest_unfinished(results_dir) if req.resume == "latest" else \
            read_run(resolve_runs(results_dir, req.resume)[0])[0].run_id
        for d in run_dirs(results_dir):
            if d.name == run_id:
                meta, _ = read_run(d, repair=True)
                previous[meta.machine_id] = (d, meta)
        if all(meta.status == "finished" for _, meta in previous.values()):
            raise RunError(f"run {run_id} is finished; nothing to resume")
        meta0 = next(iter(previous.values()))[1]
        m = MatrixFile.model_validate(meta0.matrix)
        opts = meta0.options
        req.icount = bool(opts.get("icount", True))
        req.hosts = opts.get("hosts") or None
        req.local = bool(opts.get("local", True))
        req.timeout = opts.get("timeout")
        cells = expand(lab, m, f"run.json of {run_id}")
    else:
        m, cells = plan_run(lab, req)
        run_id = new_run_id(req.tag or f"{m.backend}-{m.profile}")
    if req.timeout:
        cells = [c.with_timeout(req.timeout) for c in cells]
    all_cells = plan_hosts(lab, cells, req.hosts, req.local)
    ui = ui or Progress(len(all_cells), "quiet")
    ui.total = len(all_cells)
    groups: list[MachineRun] = []
    before = system.cpu_snapshot()
    try:
        for host in dict.fromkeys(c.machine for c in all_cells):
            cells_h = [c for c in all_cells if c.machine == host]
            gbuild = build_dir if host is None else build_dir / "hosts" / host
            backend = _group_backend(lab, m, host, gbuild, req, say)
            builder = Builder(lab.root, gbuild, backend, jobs=jobs)
            machine = system.machine_id() if host is None else host
            backend.prepare([t for _, t in sorted({c.target.name: c.target for c in cells_h if not c.unavailable}
                                                  .items())],
                            inputs=sorted({f for c in cells_h for f in c.impl.vector_files}))
            fp = fingerprint(cells_h, builder, backend)
            cpu = backend.pick_cpu(cells_h[0].sampling.cpu) if not backend.down else None
            if machine in previous:
                run_dir, meta = previous[machine]
                _check_resume(meta, cells_h, fp)
                writer = RunWriter.reopen(run_dir, retry=("unreachable",))
                recorded = {c.cell for c in read_run(run_dir)[1]}
            else:
                writer = RunWriter.create(results_dir, {
                    "machine_id": machine, "machine": backend.machine_facts(), "git": system.git_revision(lab.root),
                    "profile": cells_h[0].profile.model_dump(), "matrix": m.model_dump(),
                    "backend": backend.describe(),
                    "toolchains": {t.name: _toolchain_meta(t, targets, backend)
                                   for t, targets in sorted(_toolchain_targets(cells_h), key=lambda x: x[0].name)},
                    "targets": {name: {**t.model_dump(), "emulated": t.emulated}
                                for name, t in sorted({c.target.name: c.target for c in cells_h}.items())},
                    "cells_planned": [c.id for c in cells_h], "fingerprint": fp, "lab_version": __version__,
                    "options": {"icount": req.icount, "jobs": jobs, "cpu": cpu, "timeout": req.timeout,
                                "hosts": req.hosts, "local": req.local}},
                    tag=req.tag, run_id=run_id)
                recorded = set()
            ui.done += len(recorded)
            groups.append(MachineRun(machine, host, backend, builder, writer, cells_h,
                                     [c for c in cells_h if c.id not in recorded], cpu, ui, m.backend, m.engine))
            groups[-1].counts.update(c.status for c in read_run(writer.dir)[1])
        executor = make_executor(req)
        executor.execute(lab, groups, req, jobs, build_dir, say)
    finally:
        ui.close()
        after = system.cpu_snapshot()
        for g in groups:
            if g.counts.get("unreachable") and g.status == "finished":
                g.status = "interrupted"  # not finished: --resume retries the cells of the unreachable host
            try:
                g.writer.close(g.status, status_counts=dict(g.counts), stage_seconds=g.stage_seconds,
                               system={**g.writer.meta.system, **after.since(before)},
                               tsc_hz_measured=_tsc_rate(g.writer.dir))
            except RunError as e:
                say(f"error: {e}")
            g.backend.close()
    return RunOutcome([g.writer.dir for g in groups], sum(len(g.cells) for g in groups),
                      dict(sum((g.counts for g in groups), Counter())))


def _toolchain_meta(t, targets: list, backend: Backend) -> dict:
    """A toolchain's facts with its compiler's --version line and Debian package where its cells build: the
    first of its cells' targets that has the compiler (none asked when every cell of it is unavailable)."""
    for where in targets:
        version = backend.compiler_version(t.cc, where)
        if version:
            return {**t.facts(), "version": version, "package": package_build(backend, compiler(t, where), where)}
    return {**t.facts(), "version": "", "package": ""}


def _toolchain_targets(cells: list[Cell]) -> list[tuple]:
    """Each toolchain with the targets of its available cells ([] when every cell of it is unavailable: nothing
    is asked of a compiler, or an image, that no cell uses)."""
    out: dict[str, tuple] = {}
    for c in cells:
        tc, targets = out.setdefault(c.toolchain.name, (c.toolchain, []))
        if not c.unavailable and c.target not in targets:
            targets.append(c.target)
    return list(out.values())


def plan_hosts(lab: Lab, cells: list[Cell], hosts: list[str] | None, local: bool = True) -> list[Cell]:
    """The cells of this machine (unless local is False) and, for every SSH host named, the same cells built for
    the host's target (statically linked) and run there."""
    out = list(cells) if local or not hosts else []
    for name in hosts or []:
        h = lab.host(name)
        target = lab.target(h.target).model_copy(update={"static": True})
        seen = set()
        for c in cells:
            key = (c.impl.id, c.toolchain.name)
            if key not in seen:
                seen.add(key)
                out.append(c.with_machine(name, target))
    return out


def run_stages(lab: Lab, g: MachineRun, req: RunRequest, jobs: int, build_dir: Path) -> None:
    """One machine's cells through the stages: build -> verify -> instruction counts -> measure."""
    g.status = "interrupted"
    for cell in g.todo:
        if cell.unavailable:
            g.final(cell, Final("unavailable", cell.unavailable))
        elif g.backend.down:
            g.final(cell, Final("unreachable", g.backend.down))
    live = [c for c in g.todo if not c.unavailable and not g.backend.down]
    where = f" on {g.host}" if g.host else ""
    clock = time.monotonic()

    def lap(stage: str) -> None:
        nonlocal clock
        g.stage_seconds[stage] = round(time.monotonic() - clock, 1)
        clock = time.monotonic()

    g.ui.stage(f"build: {len(live)} cells{where}, {jobs} jobs")
    built = build_stage(g.builder, live, req.icount, g.final)
    lap("build")
    g.backend.cancel.check()
    g.ui.stage(f"verify: {len(built)} cells{where}")
    gated = []
    for b, v, seconds in verify_stage(g.backend, built, jobs, g.final, g.builder.build_dir / "kat-cache"):
        g.kat_seconds[b.cell.id] = seconds
        gated.append((b, v))
    lap("verify")
    g.stage_seconds["disasm"] = disasm.record(g.backend, built, g.writer.dir / "asm", jobs)  # drill-down evidence
    g.backend.cancel.check()
    counted: dict = {}
    if req.icount:
        g.ui.stage(f"instruction counts: {len(gated)} cells{where}")
        counted = icount_stage(g.backend, gated, build_dir / "icount", jobs)
        lap("icount")
        g.backend.cancel.check()
    waiting = []
    for b, v in gated:
        rec, note, fail = counted.get(b.cell.id, (None, None, None))
        if fail:
            g.final(b.cell, Final(fail[0], fail[1], b, v, icount_note=note))
        else:
            waiting.append((b, v, rec, note))
    by_id = {b.cell.id: (b, v, rec, note) for b, v, rec, note in waiting}

    def measured(cs: CellSamples) -> None:
        b, v, rec, note = by_id[cs.cell.id]
        stages = {"measure": round(cs.seconds, 3)}
        status, reason = cs.failure or ("ok", None)
        g.final(cs.cell, Final(status, reason, b, v, cs, rec, note, stages))

    if waiting:
        g.ui.stage(f"measure: {len(waiting)} cells{where}, one process at a time"
                   + (f" on CPU {g.cpu}" if g.cpu is not None else ""))
        with g.backend.timing_lock(g.writer.meta.run_id, wait=not req.no_wait, say=g.ui.note):
            measure_stage(g.backend, [(b, v) for b, v, _, _ in waiting], g.cpu, measured,
                          lambda cell, n: g.ui.stage(f"  measure {cell.id}: process {n}"))
        lap("measure")
    g.status = "finished"


class LocalExecutor:
    """Each machine's stages in order (builds, gates and counts in parallel threads; timing one process at a
    time); several machines (SSH hosts) at once, one thread each.  Ctrl-C / SIGTERM cancel every backend."""

    def execute(self, lab: Lab, groups: list[MachineRun], req: RunRequest, jobs: int, build_dir: Path, say) -> None:
        in_main = threading.current_thread() is threading.main_thread()
        old_int, old_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

        def stop(signum, frame):
            for g in groups:
                g.backend.cancel.set()
            signal.signal(signal.SIGINT, old_int)  # a second Ctrl-C stops at once

        if in_main:
            signal.signal(signal.SIGINT, stop)
            signal.signal(signal.SIGTERM, stop)
        try:
            if len(groups) == 1:
                run_stages(lab, groups[0], req, jobs, build_dir)
                return
            with ThreadPoolExecutor(len(groups)) as pool:
                futures = [pool.submit(run_stages, lab, g, req, jobs, build_dir) for g in groups]
                errors = [f.exception() for f in futures]
            first = next((e for e in errors if e is not None), None)
            if first is not None:
                raise first
        finally:
            if in_main:
                signal.signal(signal.SIGINT, old_int)
                signal.signal(signal.SIGTERM, old_term)


def make_executor(req: RunRequest):
    if req.executor in (None, "local"):
        return LocalExecutor()
    if req.executor == "dask":
        from .executors import DaskExecutor

        return DaskExecutor(req.scheduler)
    raise UsageError(f"unknown executor '{req.executor}' (use local or dask)")


def _tsc_rate(run_dir: Path) -> float | None:
    try:
        _, cells = read_run(run_dir)
    except Exception:  # noqa: BLE001 - provenance is best effort here
        return None
    rates = sorted(p.ticks_per_second for c in cells if c.measurement and not c.emulated
                   for p in c.measurement.cycles if p.ticks_per_second and c.measurement.counter == "x86-tsc-lfence")
    return rates[len(rates) // 2] if rates else None
