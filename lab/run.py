"""A run: config -> plan -> cells walked by the one cell pipeline -> records, per machine.

* :func:`plan_run` — the matrix (narrowed by the command line) into cells; :func:`plan_hosts` adds the cells
  of SSH hosts;
* :func:`run` — per machine a :class:`MachineRun` (backend, builder, :class:`lab.pipeline.CellPipeline`,
  results writer, progress), handed to an executor (:mod:`lab.executors`: local threads or Dask) that only
  schedules the pipeline's calls; Ctrl-C / SIGTERM cancel every machine's backend, whichever the executor;
* :func:`make_record` — the one place a cell record is assembled; the writer (:mod:`lab.results`) appends it
  as soon as the cell is final (:meth:`MachineRun.final`).

A failure in one cell (compile error, wrong answer, crash, hang, unreadable
output) is that cell's status with its reason; the run goes on.  Only cells
that passed their known answers on that very target are measured.  A run
that is killed keeps every recorded cell and can be finished with
``--resume``; Ctrl-C abandons the current cell, marks the run interrupted and
exits 130.
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from .models import FAILED, Status
from . import __version__, calibration, java, memo, system
from .backends import Backend
from .build import Builder
from .buildplan import compiler
from .compilers import package_build
from .config import Lab
from .errors import RunError, UsageError
from .pipeline import PROGRAMS, CellPipeline, Final, Stages, make_backend
from .plan import Cell, expand, narrowed
from .progress import Progress
from .request import RunRequest
from .results import CellRecord, RunWriter, new_run_id, read_run, resolve_runs, run_dirs


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


# ---------------------------------------------------------------------- plan
def plan_run(lab: Lab, req: RunRequest):
    toolchains = lab.toolchains_matching(req.toolchains) if req.toolchains else None  # globs: 'clang-1*-O3'
    matrix = req.matrix_path(lab.root)
    m = narrowed(lab.matrix(matrix), ciphers=req.ciphers, toolchains=toolchains, targets=req.targets,
                 implementations=req.implementations, profile=req.profile, backend=req.backend)
    if m.profile not in lab.profiles:
        lab.profile(m.profile)  # raises with "did you mean"
    for key, names, table in (("ciphers", m.ciphers if m.ciphers != "all" else [], lab.ciphers),
                              ("toolchains", m.toolchains, lab.toolchains), ("targets", m.targets, lab.targets)):
        for n in names:
            if n not in table:
                from .errors import unknown_name
                raise unknown_name(key[:-1], n, table)
    cells = expand(lab, m, str(matrix or "matrix.yaml"))
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
        if cell.jvm:  # the JVM's version where it runs, and the Java tree (javac compiles all of it at once)
            tc = cell.toolchain
            fp[f"jvm {tc.cc} ({cell.target.image or 'host'})"] = backend.compiler_version(tc.cc, cell.target)
            fp[f"sources {cell.id}"] = java.source_digest(cell.impl.root)
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


# --------------------------------------------------------------------- record
def make_record(cell: Cell, f: Final, machine: str, backend: Backend,
                cpus: int | None | tuple[int | None, ...]) -> CellRecord:
    """The one place a cell record is assembled."""
    impl, b, v = cell.impl, f.built, f.verdict
    rec: dict = {
        "cell": cell.id, "cipher": impl.cipher, "implementation": impl.name, "impl_class": impl.impl_class,
        "display": impl.display, "label": impl.label, "round1": impl.round1, "block_bits": impl.block_bits,
        "key_sizes": list(cell.key_sizes), "toolchain": cell.toolchain.name, "target": cell.target.name,
        "emulated": cell.target.emulated, "machine": machine, "status": f.status, "reason": f.reason,
        "seconds": round(sum(f.stages.values()), 3), "stages": f.stages, "impl": impl.facts(),
        "icount_note": f.icount_note, "reused": f.reused,
    }
    if b is not None and "kat" in b.results:
        r = b.results["timing"] if b.results["timing"].ok else b.results["kat"]
        rec["build"] = {"compiler": r.plan.compiler, "compiler_version": r.compiler_version,
                        "cflags": list(r.plan.cflags), "ldflags": list(r.plan.ldflags),
                        "code_bytes": r.code_bytes, "cached": all(x.cached for x in b.results.values()),
                        "log": r.log or None,
                        "programs": memo.key([b.program(p) for p in ("timing", "cycles") if p in b.results],
                                             [*b.runs_with(), sorted(impl.env)]),
                        **({"library": b.library} if b.library else {})}
        rec["image_id"] = backend.image_id(cell.target)
    if v is not None and v.records:
        rec["kat"] = {"files": v.files, "records": v.records, "passed": v.passed, "failed": v.failed,
                      "skipped_key_size": v.skipped_key_size, "sampled_out": v.sampled_out, "fails": v.fails[:10],
                      "checksums": v.checksums,
                      "roundtrip_ok": v.roundtrip_ok}
        if v.facts:
            rec["impl_facts"] = v.facts
    if f.samples is not None and f.samples.timing:
        rec["measurement"] = f.samples.measurement(cpus)
    if f.icount is not None:
        rec["icount"] = f.icount
    if f.ct is not None:
        rec["ct"] = f.ct
    if cell.jvm:
        rec["language"] = "java"
        if b is not None and b.java is not None:
            rec["java"] = b.java
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


def stored_request(options: dict) -> RunRequest:
    """The request a run was started with, from its run.json; runs written before the request was stored
    (options icount, hosts, local, timeout only) are read as they were."""
    if "request" in options:
        return RunRequest.model_validate(options["request"])
    return RunRequest(icount=bool(options.get("icount", True)), hosts=options.get("hosts") or None,
                      local=bool(options.get("local", True)), timeout=options.get("timeout"))


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
    """The part of a run that one machine measures, and the context every executor uses for it: its cells,
    backend, builder, pipeline, results folder, progress and counts."""

    machine: str
    host: str | None  # the SSH host's name, or None for this machine
    backend: Backend
    builder: Builder
    pipeline: CellPipeline
    writer: RunWriter
    cells: list[Cell]
    todo: list[Cell]
    cpus: tuple[int | None, ...]  # the measuring lanes' CPUs (one lane: one CPU, or None: not pinned)
    ui: Progress
    backend_name: str = "host"  # the matrix's backend (for an SSH host: how its programs are built)
    engine: str = "auto"
    counts: Counter = field(default_factory=Counter)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    status: str = "interrupted"
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def where(self) -> str:
        return f" on {self.host}" if self.host else ""

    def final(self, f: Final) -> None:
        """Record a cell that reached its end (thread-safe: the writer appends one line at a time)."""
        assert f.cell is not None
        rec = make_record(f.cell, f, self.machine, self.backend, self.cpus)
        with self._lock:
            self.writer.add_cell(rec)
            self.counts[rec.status] += 1
        self.ui.cell_done(f.cell.id, rec.status, rec.reason, rec.seconds)

    def live(self) -> list[Cell]:
        """The cells still to walk; those that cannot (unavailable here, the host is down) are recorded."""
        out = []
        for cell in self.todo:
            if cell.unavailable:
                self.final(Final(Status.UNAVAILABLE, cell.unavailable, cell=cell))
            elif self.backend.down:
                self.final(Final(Status.UNREACHABLE, self.backend.down, cell=cell))
            else:
                out.append(cell)
        return out


@contextmanager
def cancellation(groups: list[MachineRun]) -> Iterator[None]:
    """Ctrl-C / SIGTERM cancel every machine's backend (the current program is stopped, the cell abandoned);
    a second Ctrl-C stops at once.  Only in the main thread (signals cannot be caught elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old_int, old_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        for g in groups:
            g.backend.cancel.set()
        signal.signal(signal.SIGINT, old_int)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


def _planned(lab: Lab, req: RunRequest, results_dir: Path):
    """(request, matrix, cells, run id, {machine: (folder, meta)} of the run being resumed): a new plan, or the
    stored one of --resume."""
    from .schema import MatrixFile

    previous: dict[str, tuple] = {}
    if not req.resume:
        m, cells = plan_run(lab, req)
        return req, m, cells, new_run_id(req.tag or f"{m.backend}-{m.profile}"), previous
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
    req = req.resumed(stored_request(meta0.options))
    return req, m, expand(lab, m, f"run.json of {run_id}"), run_id, previous


def _machine_run(lab: Lab, req: RunRequest, m, host: str | None, cells_h: list[Cell], dirs: tuple[Path, Path],
                 run_id: str, previous: dict, jobs: int, ui: Progress, say) -> MachineRun:
    """One machine's share of the run: its backend prepared, its run folder started (or reopened), its pipeline."""
    results_dir, build_dir = dirs
    gbuild = build_dir if host is None else build_dir / "hosts" / host
    backend = make_backend(lab, m.backend, engine=m.engine, build_dir=gbuild, progress=say, host=host,
                           accept_new_host_keys=req.accept_new_host_keys)
    builder = Builder(lab.root, gbuild, backend)
    machine = system.machine_id() if host is None else host
    backend.prepare([t for _, t in sorted({c.target.name: c.target for c in cells_h if not c.unavailable}.items())],
                    inputs=sorted({f for c in cells_h for f in c.impl.vector_files}))
    fp = fingerprint(cells_h, builder, backend)
    sampling = cells_h[0].sampling
    cpus = backend.pick_cpus(sampling.cpu, req.lanes or sampling.lanes) if not backend.down else (None,)
    if machine in previous:
        run_dir, meta = previous[machine]
        _check_resume(meta, cells_h, fp)
        writer = RunWriter.reopen(run_dir, retry=(Status.UNREACHABLE,))
        recorded = {c.cell for c in read_run(run_dir)[1]}
    else:
        writer = start_run(lab, results_dir, backend, cells_h, machine=machine, matrix=m.model_dump(),
                           fingerprint=fp, options={"request": req.stored(), "jobs": jobs, "cpus": list(cpus)},
                           tag=req.tag, run_id=run_id)
        recorded = set()
    ui.done += len(recorded)
    stages = Stages(programs=PROGRAMS if req.icount else PROGRAMS[:3], kat_cache=gbuild / "kat-cache",
                    counts_dir=build_dir / "icount", asm_dir=writer.dir / "asm", run_id=run_id,
                    wait=not req.no_wait, ct=req.ct, ct_dir=gbuild / "ct",
                    memo_dir=gbuild / "memo", **_learned_noise(results_dir, machine, say, len(cpus)))
    g = MachineRun(machine, host, backend, builder, CellPipeline(backend, builder, stages, ui.note), writer, cells_h,
                   [c for c in cells_h if c.id not in recorded], cpus, ui, m.backend, m.engine)
    g.counts.update(c.status for c in read_run(writer.dir)[1])
    return g


def _close(groups: list[MachineRun], before, say) -> None:
    """Every machine's run folder closed with its status, counts and system figures; its backend closed."""
    after = system.cpu_snapshot()
    for g in groups:
        if g.counts.get(Status.UNREACHABLE) and g.status == "finished":
            g.status = "interrupted"  # not finished: --resume retries the cells of the unreachable host
        try:
            g.writer.close(g.status, status_counts=dict(g.counts), stage_seconds=g.stage_seconds,
                           system={**g.writer.meta.system, **after.since(before)},
                           tsc_hz_measured=_tsc_rate(g.writer.dir))
        except RunError as e:
            say(f"error: {e}")
        g.backend.close()


def run(lab: Lab, req: RunRequest, ui: Progress | None = None, say: Callable[[str], None] = print) -> RunOutcome:
    """Runs (or resumes) a matrix on this machine and on the SSH hosts named; returns the run folders and the
    count of cells per status."""
    results_dir = req.results_dir if req.results_dir.is_absolute() else lab.root / req.results_dir
    build_dir = req.build_dir if req.build_dir.is_absolute() else lab.root / req.build_dir
    jobs = req.jobs or os.cpu_count() or 1
    req, m, cells, run_id, previous = _planned(lab, req, results_dir)
    if req.timeout:
        cells = [c.with_timeout(req.timeout) for c in cells]
    all_cells = plan_hosts(lab, cells, req.hosts, req.local)
    ui = ui or Progress(len(all_cells), "quiet")
    ui.total = len(all_cells)
    groups: list[MachineRun] = []
    before = system.cpu_snapshot()
    try:
        for host in dict.fromkeys(c.machine for c in all_cells):
            groups.append(_machine_run(lab, req, m, host, [c for c in all_cells if c.machine == host],
                                       (results_dir, build_dir), run_id, previous, jobs, ui, say))
        from .executors import make_executor

        with cancellation(groups):
            make_executor(req).execute(lab, groups, jobs, say)
    finally:
        ui.close()
        _close(groups, before, say)
    return RunOutcome([g.writer.dir for g in groups], sum(len(g.cells) for g in groups),
                      dict(sum((g.counts for g in groups), Counter())))


def start_run(lab: Lab, results_dir: Path, backend: Backend, cells: list[Cell], *, machine: str, matrix: dict,
              fingerprint: dict[str, str], options: dict, tag: str = "", run_id: str | None = None) -> RunWriter:
    """The one place a run's metadata (lab.results.RunMeta) is made: a matrix run's machine (C and Java cells
    alike) and a flag search's run; `cells` are the planned cells (their toolchains, targets and profile)."""
    return RunWriter.create(results_dir, {
        "machine_id": machine, "machine": backend.machine_facts(), "git": system.git_revision(lab.root),
        "profile": cells[0].profile.model_dump() if cells else lab.default_profile().model_dump(),
        "matrix": matrix, "backend": backend.describe(),
        "toolchains": {t.name: _toolchain_meta(t, targets, backend)
                       for t, targets in sorted(_toolchain_targets(cells), key=lambda x: x[0].name)},
        "targets": {name: {**t.model_dump(), "emulated": t.emulated}
                    for name, t in sorted({c.target.name: c.target for c in cells}.items())},
        "cells_planned": [c.id for c in cells], "fingerprint": fingerprint, "lab_version": __version__,
        "options": options}, tag=tag, run_id=run_id)


def _toolchain_meta(t, targets: list, backend: Backend) -> dict:
    """A toolchain's facts with its compiler's --version line and Debian package where its cells build: the
    first of its cells' targets that has the compiler (none asked when every cell of it is unavailable)."""
    for where in targets:
        version = backend.compiler_version(t.cc, where)
        if version:
            return {**t.facts(), "version": version, "package": t.package if t.family == "jvm"
                    else _package(backend, compiler(t, where), where)}
    return {**t.facts(), "version": "", "package": ""}


def _package(backend: Backend, exe: str, target) -> str:
    """package_build once per compiler and target (a flag search's candidates share their compiler)."""
    cache = backend.__dict__.setdefault("_packages", {})
    if (exe, target.name) not in cache:
        cache[exe, target.name] = package_build(backend, exe, target)
    return cache[exe, target.name]


def _toolchain_targets(cells: list[Cell]) -> list[tuple]:
    """Each toolchain with the targets of its available cells ([] when every cell of it is unavailable: nothing
    is asked of a compiler, or an image, that no cell uses)."""
    out: dict[str, tuple] = {}
    for c in cells:
        tc, targets = out.setdefault(c.toolchain.name, (c.toolchain, []))
        if not c.unavailable and c.target not in targets:
            targets.append(c.target)
    return list(out.values())


def _learned_noise(results_dir: Path, machine: str, say, lanes: int = 1) -> dict:
    """This machine's run-to-run noise and within-run scale as last calibrated for runs of `lanes` measuring lanes
    (``invoke bench.aa``), as the stages take them; {} (the profile's prior noise, the within-run part as it is)
    when never calibrated in that condition."""
    n = calibration.learned(results_dir, machine, lanes)
    if n is None:
        return {}
    scale = f", within-run parts x {n.within_scale:.2f}" if n.within_scale < 1 else ""
    on = f", {lanes} lanes" if lanes > 1 else ""
    say(f"run-to-run noise of {machine}{on}: {100 * n.run_noise:.2f} %{scale} (calibrated {n.measured[:10]} from "
        f"{n.pairs} A/A pairs)")
    return {"run_noise": n.run_noise, "within_scale": n.within_scale,
            "raw_run_noise": n.run_noise if n.raw_run_noise is None else n.raw_run_noise}


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


def _tsc_rate(run_dir: Path) -> float | None:
    try:
        _, cells = read_run(run_dir)
    except Exception:  # noqa: BLE001 - provenance is best effort here
        return None
    rates = sorted(p.ticks_per_second for c in cells if c.measurement and not c.emulated
                   for p in c.measurement.cycles if p.ticks_per_second and c.measurement.counter == "x86-tsc-lfence")
    return rates[len(rates) // 2] if rates else None
