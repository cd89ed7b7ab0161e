"""The constant-time check of many cells (``python -m lab ct``, ``invoke bench.ct``): each cell built, gated and
checked through the one cell pipeline, then dudect under the machine's timing lock.  lab/ct.py checks one built
cell and sits below the pipeline; this walk sits above it.
"""

from __future__ import annotations

import time
from pathlib import Path

from .backends import Backend
from .build import Builder
from .ct import DUDECT_MEASUREMENTS
from .models import CtVerdict, DudectVerdict, Model
from .pipeline import QUICK_LONG_EVERY, CellPipeline, Final, Stages, make_backend
from .plan import unavailable_reason
from .results import new_run_id


class CellCheck(Model):
    """One cell's checks, for the command line and the benchmark (the run pipeline calls :func:`check`)."""

    cell: str
    impl: str
    toolchain: str
    target: str
    claim: bool | None                  # constant_time: in cipher.yaml or peer.yaml (None: not stated)
    verdict: CtVerdict
    seconds: float = 0.0                # the check itself (trace runs, addr2line, dudect)
    gate_seconds: float = 0.0           # its share of the builds plus its known-answer gate

    @property
    def refutes_claim(self) -> bool:
        return self.claim is True and self.verdict.verdict == "leak"

    def lines(self) -> list[str]:
        v = self.verdict
        claim = {True: "claimed constant time", False: "claimed not constant time", None: "no claim"}[self.claim]
        dud = f"; dudect max |t| {v.dudect.t:.1f} ({v.dudect.verdict})" if v.dudect and v.dudect.ops else ""
        head = f"{self.cell}: {v.verdict.upper()} ({claim}){dud}"
        if v.verdict == "unavailable":
            return [f"{head}: {v.reason}"]
        out = [head]
        return out + [f"  {o.line('regions differ (no trace)')}" for o in v.leaking_ops]


def unavailable(cell, reason: str, gate_seconds: float = 0.0) -> CellCheck:
    """A cell the check could not judge, with the reason."""
    return CellCheck(cell=cell.id, impl=cell.impl.id, toolchain=cell.toolchain.name, target=cell.target.name,
                     claim=cell.impl.constant_time, verdict=CtVerdict(verdict="unavailable", reason=reason),
                     gate_seconds=round(gate_seconds, 2))


def check_cells(lab, cells: list, backend: Backend, *, build_dir: Path, jobs: int = 1, timeout: float = 600,
                dudect_measurements: int = DUDECT_MEASUREMENTS, quick_gate: bool = False,
                say=lambda s: None) -> list[CellCheck]:
    """Builds, gates (known answers) and checks cells (lab.plan.Cell) through the one cell pipeline
    (lab.pipeline: build -> gate -> trace check, in `jobs` threads; then dudect one cell at a time under the
    machine's timing lock); one cell's failure is that cell's "unavailable", never the end of the others.
    ``quick_gate``: every short record, the n-block check and the checksum chain, but only every
    ``QUICK_LONG_EVERY``-th long (iterated) record (``kat --long-every``), as the flag search's race."""
    cells = [c.with_timeout(timeout) for c in cells]
    pipeline = CellPipeline(backend, Builder(lab.root, build_dir, backend),
                            Stages(programs=("kat",), ct=True, ct_dir=build_dir / "ct", kat_cache=build_dir / "kat-cache",
                                   dudect_measurements=dudect_measurements, run_id=new_run_id("ct"),
                                   kat_long_every=QUICK_LONG_EVERY if quick_gate else 1), say)
    out: dict[str, CellCheck] = {}
    live = []
    for cell in cells:
        why = cell.unavailable or unavailable_reason(cell)
        if why:
            out[cell.id] = unavailable(cell, f"unavailable: {why}")
        else:
            live.append(cell)
    t0 = time.monotonic()
    done = pipeline.prepare_all(live, jobs)
    share = (time.monotonic() - t0) / max(1, len(live))
    checked = []
    for item in done:
        cell = item.cell
        if isinstance(item, Final):
            what = {"unavailable": "unavailable", "build_failed": "build failed"}.get(
                item.status, f"known-answer gate: {item.status}")
            out[cell.id] = unavailable(cell, f"{what}: {item.reason}", share)
        else:
            checked.append(item)
    if dudect_measurements and any("dudect" in p.built.results for p in checked):
        with backend.timing_lock(pipeline.stages.run_id, say=say):  # dudect times the CPU: nothing else of ours
            for p in checked:
                try:
                    pipeline.dudect(p)
                except Exception as e:  # one failing cell never kills the others
                    p.ct = p.ct.model_copy(update={"dudect": DudectVerdict(
                        verdict="unavailable", reason=f"internal error: {type(e).__name__}: {e}")})
    for p in checked:
        cell = p.cell
        out[cell.id] = CellCheck(cell=cell.id, impl=cell.impl.id, toolchain=cell.toolchain.name,
                                 target=cell.target.name, claim=cell.impl.constant_time, verdict=p.ct,
                                 seconds=round(p.stages.get("ct", 0) + p.stages.get("dudect", 0), 2),
                                 gate_seconds=round(share, 2))
    result = [out[c.id] for c in cells]
    for r in result:
        say("\n".join(r.lines()))
    return result


def ct_backend(lab, build_dir: Path, engine: str = "auto") -> Backend:
    """The backend the ct command uses: the mixed backend (the host target here, every target with an image
    in its container), whose static ct programs run under this machine's QEMU and plugin for every target
    (images built before the plugin had mode=ct cannot trace).  Images are not rebuilt by a check."""
    be = make_backend(lab, "mixed", engine=engine, build_dir=build_dir, progress=lambda s: None)
    be.auto_build = False  # type: ignore[attr-defined]  (no engine is looked for until a target needs one)
    return be
