"""The Dask executor: the same stages as tasks on a Dask distributed cluster (``--executor dask``).

Per cell, one task prepares it (build, known-answer gate, instruction counts) on any worker — these run in
parallel — and, when it passed, one task measures it.  Measuring tasks ask for the resource
``timing-<machine>`` (one unit), which exactly one worker per machine offers, so no two timings ever overlap
on one machine; timings of different machines (SSH hosts) run at once.  Each task returns typed values; the
client records each cell as soon as its last task ends, so an interrupted distributed run resumes like a
local one.  A measuring task is a whole cell: if its worker dies, the scheduler runs it again elsewhere (once:
``allowed-failures`` is 1) and the cell is measured again from the start, never half kept.

The default cluster is an embedded LocalCluster of two worker processes (the first offers this machine's
timing resource); ``--scheduler tcp://HOST:PORT`` uses a running one, whose workers must be started with the
lab's checkout at the same path and ``--resources timing-<machine>=1`` on one worker per machine.  Dask is an
optional dependency: ``pip install -e .[distributed]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

_WORKER_CACHE: dict = {}  # per worker process: (lab, backend, builder) by machine group


@dataclass(frozen=True)
class GroupSpec:
    """What a worker needs to rebuild a machine group's backend and builder (backends do not travel)."""

    root: str
    cipher_dirs: tuple[str, ...]
    shared: str
    hosts_dir: str
    backend: str
    engine: str
    build_dir: str
    host: str | None
    accept_new_host_keys: bool


def _context(spec: GroupSpec):
    if spec not in _WORKER_CACHE:
        from .build import Builder
        from .config import Lab
        from .run import RunRequest, _group_backend
        from .schema import MatrixFile

        lab = Lab(root=spec.root, cipher_dirs=[Path(d) for d in spec.cipher_dirs], shared=spec.shared,
                  hosts_dir=spec.hosts_dir)
        m = MatrixFile(ciphers="all", toolchains=["gcc-O3"], backend=spec.backend, engine=spec.engine)
        req = RunRequest(accept_new_host_keys=spec.accept_new_host_keys)
        backend = _group_backend(lab, m, spec.host, Path(spec.build_dir), req, lambda s: None)
        backend.prepare([])
        _WORKER_CACHE[spec] = (lab, backend, Builder(lab.root, Path(spec.build_dir), backend, jobs=1))
    return _WORKER_CACHE[spec]


def prepare_task(spec: GroupSpec, cell, want_icount: bool, counts_dir: str, asm_dir: str | None = None):
    """build -> verify -> instruction counts of one cell: ("final", Final) or ("measure", (built, verdict,
    kat seconds, icount record, note))."""
    from . import disasm
    from .run import Final, build_stage, icount_stage, verify_stage

    lab, backend, builder = _context(spec)
    backend.prepare([cell.target], inputs=list(cell.impl.vector_files))
    finals = []
    built = build_stage(builder, [cell], want_icount, lambda c, f: finals.append(f))
    if finals:
        return "final", finals[0]
    gated = verify_stage(backend, built, 1, lambda c, f: finals.append(f), builder.build_dir / "kat-cache")
    if asm_dir:  # drill-down evidence (lab/disasm.py), as run_stages records it
        disasm.record(backend, built, Path(asm_dir))
    if finals:
        return "final", finals[0]
    (b, v, seconds), = gated
    rec, note, fail = (None, None, None)
    if want_icount:
        rec, note, fail = icount_stage(backend, [(b, v)], Path(counts_dir), 1)[cell.id]
    if fail:
        return "final", Final(fail[0], fail[1], b, v, icount_note=note, stages={"kat": seconds})
    return "measure", (b, v, seconds, rec, note)


def measure_task(spec: GroupSpec, built, verdict, cpu):
    """One cell's measurement, start to end, on the worker that holds the machine's timing resource."""
    from .run import measure_stage

    lab, backend, builder = _context(spec)
    done = []
    measure_stage(backend, [(built, verdict)], cpu, done.append)
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

    def execute(self, lab, groups, req, jobs: int, build_dir: Path, say) -> None:
        from distributed import as_completed

        from .run import Final

        client, cluster = self._client([g.machine for g in groups])
        try:
            say(f"dask: {client.dashboard_link or client.scheduler.address}: "
                f"{len(client.scheduler_info()['workers'])} workers")
            specs = {}
            futures = {}
            for g in groups:
                specs[g.machine] = GroupSpec(str(lab.root), tuple(map(str, lab.cipher_dirs)), str(lab.shared),
                                             str(lab.hosts_dir), g.backend_name, g.engine, str(g.builder.build_dir),
                                             g.host, req.accept_new_host_keys)
                for cell in g.todo:
                    if cell.unavailable:
                        g.final(cell, Final("unavailable", cell.unavailable))
                    elif g.backend.down:
                        g.final(cell, Final("unreachable", g.backend.down))
                    else:
                        f = client.submit(prepare_task, specs[g.machine], cell, req.icount,
                                          str(build_dir / "icount"), str(g.writer.dir / "asm"), pure=False,
                                          key=f"prepare-{g.machine}-{cell.id}")
                        futures[f] = (g, cell, None)
            pending = as_completed(list(futures))
            for f in pending:
                g, cell, prepared = futures.pop(f)
                g.backend.cancel.check()
                lost = _lost(f)
                if lost:  # its worker died twice (or the task raised): the cell is retried by --resume
                    g.final(cell, Final("unreachable", lost))
                    continue
                if prepared is None:
                    kind, value = f.result()
                    if kind == "final":
                        g.final(cell, value)
                        continue
                    b, v, seconds, rec, note = value
                    g.kat_seconds[cell.id] = seconds
                    m = client.submit(measure_task, specs[g.machine], b, v, g.cpu, pure=False,
                                      resources={f"timing-{g.machine}": 1}, key=f"measure-{g.machine}-{cell.id}")
                    futures[m] = (g, cell, (b, v, rec, note))
                    pending.add(m)
                else:
                    b, v, rec, note = prepared
                    cs = f.result()
                    status, reason = cs.failure or ("ok", None)
                    g.final(cell, Final(status, reason, b, v, cs, rec, note, {"measure": round(cs.seconds, 3)}))
            for g in groups:
                g.status = "finished"
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


__all__ = ["DaskExecutor", "GroupSpec", "prepare_task", "measure_task"]
