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

import hashlib
import os
import signal
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__, icount, system
from .backends import Backend
from .build import Builder, BuildResult
from .config import Lab
from .errors import Interrupted, RunError, UsageError
from .kat import FAILED, Verdict, run_kat
from .lock import timing_lock
from .measure import CellSamples, Measurer, cycles_args
from .plan import Cell, expand, narrowed
from .progress import Progress
from .results import CellRecord, RunWriter, read_run, resolve_runs, run_dirs

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
    tag: str = ""
    results_dir: Path = Path("results")
    build_dir: Path = Path("build")
    icount: bool = True


@dataclass
class RunOutcome:
    run_dir: Path
    planned: int
    counts: dict[str, int]

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
    raise UsageError(f"unknown backend '{name}' (use host or container)")


# ---------------------------------------------------------------------- plan
def plan_run(lab: Lab, req: RunRequest):
    m = narrowed(lab.matrix(req.matrix), ciphers=req.ciphers, toolchains=req.toolchains, targets=req.targets,
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


def _package_for(exe: str, cell: Cell) -> str:
    if exe.startswith(cell.target.triple + "-"):
        return f"gcc-{cell.target.triple} (or build in the target's container: --backend container)"
    return {"g++": "g++", "clang++": "clang", "clang": "clang", "gcc": "gcc"}.get(exe, cell.toolchain.package)


def verify_stage(backend: Backend, built: list[Built], jobs: int,
                 on_final: Callable[[Cell, Final], None]) -> list[tuple[Built, Verdict, float]]:
    """The known-answer gate of every built cell (in parallel), then checksum agreement between builds."""
    def gate(b: Built) -> tuple[Built, Verdict, float]:
        t0 = time.perf_counter()
        v = run_kat(backend, b.program("kat"), b.cell.impl, b.cell.target, b.cell.profile.timeout_seconds,
                    env=dict(b.cell.impl.env))
        return b, v, round(time.perf_counter() - t0, 3)

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        gated = list(pool.map(gate, built))
    passed = []
    for b, v, seconds in gated:
        if v.ok:
            passed.append((b, v, seconds))
        else:
            on_final(b.cell, Final(v.status, v.reason, b, v, stages={"kat": seconds}))
    # builds of one cipher without a stored checksum must at least agree with each other
    votes: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for b, v, _ in passed:
        if not b.cell.impl.checksums:
            for k, cs in v.checksums.items():
                votes[(b.cell.impl.cipher, k)][cs] += 1

    def disagreement(b: Built, v: Verdict) -> str | None:
        for k, cs in sorted(v.checksums.items()):
            c = votes.get((b.cell.impl.cipher, k))
            if not c or len(c) == 1:
                continue
            top = max(c.values())
            if c[cs] < top or list(c.values()).count(top) > 1:  # in a minority, or there is no majority
                others = ", ".join(f"{x[:12]}... ({n} builds)" for x, n in c.most_common() if x != cs)
                return f"checksum differs for {k}-bit keys: {cs[:12]}... where other builds of " \
                       f"{b.cell.impl.cipher} give {others}"
        return None

    out = []
    for b, v, seconds in passed:
        why = disagreement(b, v)
        if why:
            v.status, v.reason = "checksum_differs", why
            on_final(b.cell, Final(v.status, v.reason, b, v, stages={"kat": seconds}))
        else:
            out.append((b, v, seconds))
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
    todo = [CellSamples(b.cell, b.program("timing"), b.program("cycles")) for b, _ in gated]
    Measurer(backend, cpu, on_done, on_process).measure(todo)


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
def latest_unfinished(results_dir: Path) -> Path:
    for d in reversed(run_dirs(results_dir)):
        try:
            meta, _ = read_run(d)
        except Exception:  # noqa: BLE001 - an unreadable folder is simply not resumable
            continue
        if meta.version >= 2 and meta.status != "finished":
            return d
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


def run(lab: Lab, req: RunRequest, ui: Progress | None = None, say: Callable[[str], None] = print) -> RunOutcome:
    """Runs (or resumes) a matrix; returns the run folder and the count of cells per status."""
    results_dir = req.results_dir if req.results_dir.is_absolute() else lab.root / req.results_dir
    build_dir = req.build_dir if req.build_dir.is_absolute() else lab.root / req.build_dir
    jobs = req.jobs or os.cpu_count() or 1
    resumed_meta = None
    if req.resume:
        run_dir = latest_unfinished(results_dir) if req.resume == "latest" else resolve_runs(results_dir, req.resume)[0]
        resumed_meta, done_cells = read_run(run_dir, repair=True)
        if resumed_meta.status == "finished":
            raise RunError(f"run {resumed_meta.run_id} is finished; nothing to resume")
        from .schema import MatrixFile
        m = MatrixFile.model_validate(resumed_meta.matrix)
        cells = expand(lab, m, f"{run_dir}/run.json")
        if resumed_meta.options.get("timeout"):
            cells = [c.with_timeout(resumed_meta.options["timeout"]) for c in cells]
        req.icount = bool(resumed_meta.options.get("icount", True))
    else:
        m, cells = plan_run(lab, req)
    backend = make_backend(lab, m.backend, engine=m.engine, build_dir=build_dir, progress=say)
    builder = Builder(lab.root, build_dir, backend, jobs=jobs)
    machine = system.machine_id()
    cpu = system.pick_cpu(cells[0].sampling.cpu)
    before = system.cpu_snapshot()
    try:
        backend.prepare([t for _, t in sorted({c.target.name: c.target for c in cells}.items())],
                        inputs=sorted({f for c in cells for f in c.impl.vector_files}))
        fp = fingerprint(cells, builder, backend)
        if resumed_meta is not None:
            _check_resume(resumed_meta, cells, fp)
            writer = RunWriter.reopen(run_dir)
            recorded = {c.cell for c in read_run(run_dir)[1]}
        else:
            writer = RunWriter.create(results_dir, {
                "machine_id": machine, "machine": backend.machine_facts(), "git": system.git_revision(lab.root),
                "profile": cells[0].profile.model_dump(), "matrix": m.model_dump(), "backend": backend.describe(),
                "toolchains": {t.name: {**t.facts(), "version": backend.compiler_version(t.cc, cells[0].target)}
                               for t in sorted({c.toolchain for c in cells}, key=lambda t: t.name)},
                "targets": {name: {**t.model_dump(), "emulated": t.emulated}
                            for name, t in sorted({c.target.name: c.target for c in cells}.items())},
                "cells_planned": [c.id for c in cells], "fingerprint": fp, "lab_version": __version__,
                "options": {"icount": req.icount, "jobs": jobs, "cpu": cpu, "timeout": req.timeout}},
                tag=req.tag or f"{m.backend}-{m.profile}")
            recorded = set()
        todo = [c for c in cells if c.id not in recorded]
        ui = ui or Progress(len(cells), "quiet")
        ui.total, ui.done = len(cells), len(recorded)
        return _run_stages(lab, writer, backend, builder, todo, req, ui, machine, cpu, jobs, build_dir, before, say)
    finally:
        backend.close()


def _run_stages(lab, writer: RunWriter, backend: Backend, builder: Builder, todo: list[Cell], req: RunRequest,
                ui: Progress, machine: str, cpu: int | None, jobs: int, build_dir: Path, before, say) -> RunOutcome:
    counts: Counter = Counter(c.status for c in read_run(writer.dir)[1])
    kat_seconds: dict[str, float] = {}

    def final(cell: Cell, f: Final) -> None:
        if cell.id in kat_seconds:
            f.stages.setdefault("kat", kat_seconds[cell.id])
        rec = make_record(cell, f, machine, backend, cpu)
        writer.add_cell(rec)
        counts[rec.status] += 1
        ui.cell_done(cell.id, rec.status, rec.reason, rec.seconds)

    old_int, old_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        backend.cancel.set()
        signal.signal(signal.SIGINT, old_int)  # a second Ctrl-C stops at once

    in_main = _is_main_thread()
    if in_main:
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
    status = "interrupted"
    try:
        for cell in todo:
            if cell.unavailable:
                final(cell, Final("unavailable", cell.unavailable))
        live = [c for c in todo if not c.unavailable]
        ui.stage(f"build: {len(live)} cells, {jobs} jobs")
        built = build_stage(builder, live, req.icount, final)
        backend.cancel.check()
        ui.stage(f"verify: {len(built)} cells")
        gated = []
        for b, v, seconds in verify_stage(backend, built, jobs, final):
            kat_seconds[b.cell.id] = seconds
            gated.append((b, v))
        backend.cancel.check()
        counted: dict = {}
        if req.icount:
            ui.stage(f"instruction counts: {len(gated)} cells")
            counted = icount_stage(backend, gated, build_dir / "icount", jobs)
            backend.cancel.check()
        waiting = []
        for b, v in gated:
            rec, note, fail = counted.get(b.cell.id, (None, None, None))
            if fail:
                final(b.cell, Final(fail[0], fail[1], b, v, icount_note=note))
            else:
                waiting.append((b, v, rec, note))
        by_id = {b.cell.id: (b, v, rec, note) for b, v, rec, note in waiting}

        def measured(cs: CellSamples) -> None:
            b, v, rec, note = by_id[cs.cell.id]
            stages = {"measure": round(cs.seconds, 3)}
            if cs.failure:
                final(cs.cell, Final(cs.failure[0], cs.failure[1], b, v, cs, rec, note, stages))
            else:
                final(cs.cell, Final("ok", None, b, v, cs, rec, note, stages))

        if waiting:
            ui.stage(f"measure: {len(waiting)} cells, one process at a time"
                     + (f" on CPU {cpu}" if cpu is not None else ""))
            with timing_lock(writer.meta.run_id, lab.root, wait=not req.no_wait, say=ui.note):
                measure_stage(backend, [(b, v) for b, v, _, _ in waiting], cpu, measured,
                              lambda cell, n: ui.stage(f"  measure {cell.id}: process {n}"))
        status = "finished"
    except Interrupted:
        status = "interrupted"
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
        ui.close()
        after = system.cpu_snapshot()
        try:
            writer.close(status, status_counts=dict(counts), system={**writer.meta.system, **after.since(before)},
                         tsc_hz_measured=_tsc_rate(writer.dir))
        except RunError as e:
            say(f"error: {e}")
    return RunOutcome(writer.dir, len(writer.meta.cells_planned), dict(counts))


def _tsc_rate(run_dir: Path) -> float | None:
    try:
        _, cells = read_run(run_dir)
    except Exception:  # noqa: BLE001 - provenance is best effort here
        return None
    rates = sorted(p.ticks_per_second for c in cells if c.measurement and not c.emulated
                   for p in c.measurement.cycles if p.ticks_per_second and c.measurement.counter == "x86-tsc-lfence")
    return rates[len(rates) // 2] if rates else None


def _is_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
