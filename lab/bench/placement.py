"""invoke bench.placement: does the physical placement of a program's file set its figures?

The code and constant tables of a program are mapped from the page cache's pages of its file, which every
process running that file shares.  This benchmark builds and gates one cell (the smoke profile's run), then runs
its cycles program on the measuring CPU as `copies` fresh copies of the file (all kept until the end, so that
no copy takes the pages another freed), `processes` processes each; and, as the control, the program itself
`copies` x `processes` times.  Per quantity (Encrypt-n, Decrypt-n, EKey, DKey) it prints how far the copies'
figures (the fastest of their processes' per-block minima) spread, how far a copy's processes lie apart, and how
many copies (or, in the control, groups of `processes` consecutive processes) landed at least 1.3 times the
median: a *mode* that every process of a copy shares.  When copies show modes the control
does not, a run whose processes all run one file takes one placement for all of them, and a figure moves between
runs where no process-level interval sees it: why lab.measure.OwnCopies gives each process its own copy.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from .. import system
from ..backends.host import HostBackend
from ..buildplan import plan_build
from ..config import Lab
from ..errors import UserError
from ..measure import OutputError, copy_program, cycles_args, parse_cycles
from ..plan import Cell
from ..request import RunRequest
from ..run import run
from . import header, store

MODE = 1.3  # a copy this many times the median (or more) took a slow placement


def per_block(ops: list[dict]) -> dict[str, float]:
    """A cycles process's operations (lab.measure.parse_cycles): each one's per-block (per-call for key setup)
    minimum over its samples; the empty call and cipherInit left out."""
    def name(o: dict) -> str:
        return f"{o['op']}-{o['n']}" if o["op"] in ("encrypt", "decrypt") else o["op"]

    return {name(o): min(o["deltas"]) / o["calls"] / o["n"] for o in ops if o["op"] not in ("null", "init")}


def summarise(table: dict[str, np.ndarray]) -> dict[str, dict]:
    """Per quantity, from its (groups x processes) figures: a group's figure is its fastest process (a placement
    every process of a copy shares moves it; one disturbed process does not), the groups' spread, how far a
    group's slowest process lies from its fastest (the median over groups), and the groups at least MODE times the
    median group."""
    rows = {}
    for q, a in table.items():
        g = np.nanmin(a, axis=1)
        med = float(np.median(g))
        rows[q] = {"median": round(med, 3),
                   "groups_spread": round(float(g.max() / g.min() - 1), 4),
                   "within_group": round(float(np.nanmedian(np.nanmax(a, axis=1) / g - 1)), 5),
                   "slow_groups": int((g >= MODE * med).sum()),
                   "slow_ratios": sorted(round(float(x / med), 2) for x in g if x >= MODE * med)}
    return rows


def bench(lab: Lab, implementation: str, toolchain: str = "gcc-O3", copies: int = 60, processes: int = 2,
          sizes: list[int] = (1, 1024), out: Path | None = None, say=print) -> dict:
    cipher = implementation.split("/")[0]
    if copies < 2 or processes < 1:
        raise UserError("options --copies and --processes: need at least 2 copies of at least 1 process")
    o = run(lab, RunRequest(ciphers=[cipher], implementations=[implementation], toolchains=[toolchain],
                            profile="smoke", icount=False, tag="placement", results_dir=lab.root / "results",
                            build_dir=lab.root / "build"))
    if o.counts.get("ok", 0) != 1:
        raise UserError(f"bench.placement: {implementation} under {toolchain} did not build and pass its known "
                        f"answers on the host ({o.counts}); see the run in {o.run_dir}")
    impl, tc, target = lab.impl(implementation), lab.toolchain(toolchain), lab.target("host")
    program = plan_build(impl, tc, target, "cycles", root=lab.root, build_dir=lab.root / "build").output
    quick = lab.profile("quick")  # the main job's cycles program, at the sizes asked
    cell = Cell(impl, tc, target, (128 if 128 in impl.key_bits else impl.key_bits[0],),
                quick.model_copy(update={"cycles": quick.cycles.model_copy(update={"sizes": sizes})}))
    cpu = system.pick_cpu("auto")
    backend = HostBackend(lab.root)
    folder = program.parent / f".placement-{os.getpid()}"

    def measure(files: list[Path]) -> dict[str, np.ndarray]:
        table: dict[str, np.ndarray] = {}
        for k, f in enumerate(files):
            for p in range(processes):
                c = backend.run_program(f, cycles_args(cell), target=target, timeout=120, cpu=cpu)
                try:
                    if c.returncode != 0:
                        raise OutputError(c.describe_failure())
                    ops = parse_cycles(c, cell)[1]
                except OutputError as e:
                    raise UserError(f"bench.placement: {f} failed: {e}") from None
                for q, v in per_block(ops).items():
                    table.setdefault(q, np.full((len(files), processes), np.nan))[k, p] = v
        return table

    try:  # every copy kept to the end: a new one never takes the pages of a freed one
        own = summarise(measure([copy_program(program, folder / f"{k:03d}" / program.name) for k in range(copies)]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    same = summarise(measure([program] * copies))
    doc = {**header("placement"), "cell": f"{implementation}@{toolchain}@host", "cpu": cpu, "copies": copies,
           "processes": processes, "sizes": ",".join(map(str, sizes)), "mode_ratio": MODE, "copies_of_the_file": own,
           "the_file_itself": same}
    say(format_table(doc))
    store(lab.root, doc, "placement", out, say)
    return doc


def format_table(d: dict) -> str:
    lines = [f"{d['cell']}: {d['copies']} copies x {d['processes']} processes, and the file itself as many times "
             f"(groups of {d['processes']} consecutive processes)",
             "| quantity | copies: spread | a copy's processes apart | copies >= 1.3x the median | the file: spread "
             "| a group's processes apart | groups >= 1.3x |", "|" + " --- |" * 7]
    for q, a in d["copies_of_the_file"].items():
        b = d["the_file_itself"].get(q, {})
        lines.append(f"| {q} | {100 * a['groups_spread']:.1f} % | {100 * a['within_group']:.2f} % | "
                     f"{a['slow_groups']} {a['slow_ratios'] or ''} | {100 * b.get('groups_spread', 0):.1f} % | "
                     f"{100 * b.get('within_group', 0):.2f} % | {b.get('slow_groups', 0)} |")
    return "\n".join(lines)
