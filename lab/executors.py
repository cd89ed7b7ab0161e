"""Executors: they only schedule the one cell pipeline (:class:`lab.pipeline.CellPipeline`) of each machine.

* :class:`LocalExecutor` — per machine: :meth:`~lab.pipeline.CellPipeline.prepare` of every cell in parallel
  threads (``jobs``), the agreement between builds, then one :meth:`~lab.pipeline.CellPipeline.measure` of the
  cells that passed (the machine's timing lock held around it); several machines (SSH hosts) at once.
* :class:`DaskExecutor` (``--executor dask``) — per cell, one task prepares it on any worker (in parallel) and,
  when it passed (and the agreement released it), one task measures it.  Measuring tasks ask for the resource
  ``timing-<machine>`` (one unit), which exactly one worker per machine offers, so no two timings of one run
  overlap on one machine; and the measuring task takes the machine's timing lock like a local run, so a Dask
  run and a local run (or two Dask runs) never time at once either.  The client records each cell as soon as
  its last task ends, so an interrupted distributed run resumes like a local one.  A measuring task is a whole
  cell: if its worker dies, the scheduler runs it again elsewhere (once: ``allowed-failures`` is 1) and the cell
  is measured again from the start, never half kept.

The default cluster is an embedded LocalCluster of two worker processes (the first offers this machine's
timing resource); ``--scheduler tcp://HOST:PORT`` uses a running one, whose workers must be started with the
lab's checkout at the same path and ``--resources timing-<machine>=1`` on one worker per machine.  Dask is an
optional dependency: ``pip install -e .[distributed]``.

Cancellation (Ctrl-C) and recording are the run's (:func:`lab.run.cancellation`, :meth:`lab.run.MachineRun.final`),
the same for every executor.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .models import Status
from .errors import UsageError
from .pipeline import Agreement, Final, Prepared, Stages

_WORKER_CACHE: dict = {}  # per worker process: the machine group's pipeline


class LocalExecutor:
    """Each machine's cells prepared in parallel threads, then measured one process at a time; several machines
    (SSH hosts) at once, one thread each."""

    def execute(self, lab, groups, jobs: int, say) -> None:
        if len(groups) == 1:
            self.machine(groups[0], jobs)
            return
        with ThreadPoolExecutor(len(groups)) as pool:
            errors = [f.exception() for f in [pool.submit(self.machine, g, jobs) for g in groups]]
        first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first

    @staticmethod
    def machine(g, jobs: int) -> None:
        g.status = "interrupted"
        live = g.live()
        g.ui.stage(f"prepare (build, verify, instruction counts): {len(live)} cells{g.where}, {jobs} jobs")
        t0 = time.monotonic()
        ready = []
        for item in g.pipeline.prepare_all(live, jobs):
            ready.append(item) if isinstance(item, Prepared) else g.final(item)
        g.stage_seconds["prepare"] = round(time.monotonic() - t0, 1)
        for stage in ("build", "kat", "icount", "ct"):  # the cells' own stage times, summed over the threads
            if any(stage in p.stages for p in ready):
                g.stage_seconds[f"{stage} (cell sum)"] = round(sum(p.stages.get(stage, 0.0) for p in ready), 1)
        g.backend.cancel.check()
        if ready:
            g.ui.stage(f"measure: {len(ready)} cells{g.where}, {_lanes(g.cpus)}")
            t0 = time.monotonic()
            g.pipeline.measure(ready, g.cpus, g.final, lambda cell, n: g.ui.stage(f"  measure {cell.id}: process {n}"))
            g.stage_seconds["measure"] = round(time.monotonic() - t0, 1)
        g.status = "finished"


def _lanes(cpus: tuple[int | None, ...]) -> str:
    """How the measuring runs, for the progress line."""
    pinned = [c for c in cpus if c is not None]
    if len(cpus) == 1:
        return "one process at a time" + (f" on CPU {pinned[0]}" if pinned else "")
    return f"{len(cpus)} processes at a time" + (f" on CPUs {', '.join(map(str, pinned))}" if pinned else "")


@dataclass(frozen=True)
class GroupSpec:
    """What a worker needs to rebuild a machine group's pipeline (backends do not travel)."""

    root: str
    cipher_dirs: tuple[str, ...]
    shared: str
    hosts_dir: str
    backend: str
    engine: str
    build_dir: str
    host: str | None
    accept_new_host_keys: bool
    stages: Stages


def _worker_say(line: str) -> None:
    """A worker's notes (e.g. waiting for the timing lock) on its stderr, which an embedded cluster shares with
    the run."""
    print(f"dask worker: {line}", file=sys.stderr, flush=True)


def _pipeline(spec: GroupSpec):
    if spec not in _WORKER_CACHE:
        from .build import Builder
        from .config import Lab
        from .pipeline import CellPipeline, make_backend

        lab = Lab(root=spec.root, cipher_dirs=[Path(d) for d in spec.cipher_dirs], shared=spec.shared,
                  hosts_dir=spec.hosts_dir)
        backend = make_backend(lab, spec.backend, engine=spec.engine, build_dir=Path(spec.build_dir),
                               progress=lambda s: None, host=spec.host, accept_new_host_keys=spec.accept_new_host_keys)
        backend.prepare([])
        _WORKER_CACHE[spec] = CellPipeline(backend, Builder(lab.root, Path(spec.build_dir), backend), spec.stages,
                                           _worker_say)
    return _WORKER_CACHE[spec]


def prepare_task(spec: GroupSpec, cell):
    """build -> verify -> evidence -> instruction counts of one cell: a Prepared or a Final."""
    pipeline = _pipeline(spec)
    pipeline.backend.prepare([cell.target], inputs=list(cell.impl.vector_files))
    return pipeline.prepare(cell)


def measure_task(spec: GroupSpec, prepared: Prepared, cpus):
    """One cell's measurement, start to end, on the worker that holds the machine's timing resource (and, inside,
    the machine's timing lock)."""
    done: list[Final] = []
    _pipeline(spec).measure([prepared], cpus, done.append)
    return done[0]


def _lost(future) -> str | None:
    """Why a finished task gave no result (None when it did)."""
    if future.status != "error":
        return None
    e = future.exception()
    if type(e).__name__ == "KilledWorker":
        return "the Dask worker running it died, and again on the retry (KilledWorker); --resume runs it again"
    return f"the Dask task failed: {type(e).__name__}: {e}; --resume runs it again"


class DaskExecutor:
    def __init__(self, scheduler: str | None = None, workers: int = 2):
        self.scheduler, self.workers = scheduler, workers

    def _client(self, machines: list[str]):
        try:
            import dask
            from distributed import Client, Nanny, Scheduler, SpecCluster
        except ImportError:
            raise UsageError("--executor dask needs Dask distributed: pip install -e '.[distributed]' (or "
                             "./cipherlab --distributed)") from None
        dask.config.set({"distributed.scheduler.allowed-failures": 1, "distributed.worker.daemon": False,
                         "logging": {"distributed": "error"}})
        if self.scheduler:
            client = Client(self.scheduler, timeout=30)
            offered = {r for w in client.scheduler_info()["workers"].values() for r in w.get("resources", {})}
            missing = [f"timing-{m}" for m in machines if f"timing-{m}" not in offered]
            if missing:
                client.close()
                raise UsageError(f"the cluster at {self.scheduler} offers no {missing[0]} resource: start one worker "
                                 f"per machine with --resources {missing[0]}=1")
            return client, None
        # one timing resource per machine, each on exactly one worker (round robin over the workers)
        res: list[dict] = [{} for _ in range(self.workers)]
        for i, m in enumerate(machines):
            res[i % self.workers][f"timing-{m}"] = 1
        workers = {f"w{i}": {"cls": Nanny, "options": {"nthreads": 2, "resources": res[i], "host": "127.0.0.1",
                                                       "silence_logs": 40}}
                   for i in range(self.workers)}
        cluster = SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": None,
                                                                       "host": "127.0.0.1"}},
                              workers=workers, asynchronous=False, silence_logs=40)
        return Client(cluster), cluster

    def execute(self, lab, groups, jobs: int, say) -> None:
        from distributed import as_completed

        client, cluster = self._client([g.machine for g in groups])
        started = time.monotonic()
        try:
            say(f"dask: {client.dashboard_link or client.scheduler.address}: "
                f"{len(client.scheduler_info()['workers'])} workers")
            futures: dict = {}  # future -> (machine run, spec, cell, agreement)
            for g in groups:
                spec = GroupSpec(str(lab.root), tuple(map(str, lab.cipher_dirs)), str(lab.shared), str(lab.hosts_dir),
                                 g.backend_name, g.engine, str(g.builder.build_dir), g.host,
                                 getattr(g.backend, "accept_new", False), g.pipeline.stages)
                live = g.live()
                agreement = Agreement(live)
                for cell in live:
                    f = client.submit(prepare_task, spec, cell, pure=False, key=f"prepare-{g.machine}-{cell.id}")
                    futures[f] = (g, spec, cell, agreement)
            pending = as_completed(list(futures))
            for f in pending:
                g, spec, cell, agreement = futures.pop(f)
                g.backend.cancel.check()
                lost = _lost(f)
                # its worker died twice (or the task raised): the cell is retried by --resume
                result = Final(Status.UNREACHABLE, lost, cell=cell) if lost else f.result()
                if agreement is None:  # a measuring task
                    g.final(result)
                    continue
                for item in agreement.add(result):
                    if isinstance(item, Final):
                        g.final(item)
                        continue
                    m = client.submit(measure_task, spec, item, g.cpus, pure=False,
                                      resources={f"timing-{g.machine}": 1}, key=f"measure-{g.machine}-{item.cell.id}")
                    futures[m] = (g, spec, item.cell, None)
                    pending.add(m)
            for g in groups:
                g.status = "finished"
                g.stage_seconds["prepare and measure (dask)"] = round(time.monotonic() - started, 1)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def make_executor(req):
    if req.executor in (None, "local"):
        return LocalExecutor()
    if req.executor == "dask":
        return DaskExecutor(req.scheduler)
    raise UsageError(f"unknown executor '{req.executor}' (use local or dask)")


__all__ = ["LocalExecutor", "DaskExecutor", "GroupSpec", "prepare_task", "measure_task", "make_executor"]
