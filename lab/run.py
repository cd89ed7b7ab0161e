"""Drive each cell: build -> known-answer gate -> timing -> cycle counting -> record.

A failure in one cell (compile error, wrong answer, crash, hang) is recorded
for that cell and the run goes on; only cells that pass their known answers
on that very target are measured.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import icount, system
from .backends import Backend, Completed, get_backend
from .build import Builder, BuildResult
from .config import Cipher, Lab, MatrixFile, Profile, Target, Toolchain
from .kat import read_kat
from .plan import Cell, expand
from .results import RunWriter, new_run_id


@dataclass
class RunOptions:
    backend: str | None = None
    profile: str | None = None
    ciphers: list[str] | None = None
    implementations: str | list[str] | None = None
    toolchains: list[str] | None = None
    targets: list[str] | None = None
    results_dir: Path = Path("results")
    build_dir: Path = Path("build")
    tag: str = ""
    progress: bool = True
    extra: dict = field(default_factory=dict)


def narrowed(m: MatrixFile, o: RunOptions) -> MatrixFile:
    upd = {}
    for key in ("ciphers", "toolchains", "targets", "implementations"):
        v = getattr(o, key)
        if v:
            upd[key] = v
    if o.profile:
        upd["profile"] = o.profile
    if o.backend:
        upd["backend"] = o.backend
    if upd.get("backend", m.backend) == "container" and not o.targets and m.container_targets:
        upd["targets"] = list(m.container_targets)
    return m.model_copy(update=upd)


def runner_prefix(target: Target) -> list[str]:
    return [target.qemu] if target.emulated and target.qemu else []


def _failure_status(c: Completed) -> str:
    if c.timed_out:
        return "timeout"
    if c.crashed:
        return "crashed"
    return "measure_failed"


class CellRunner:
    def __init__(self, lab: Lab, profile: Profile, backend: Backend, builder: Builder):
        self.lab, self.profile, self.backend, self.builder = lab, profile, backend, builder

    def _compiler_version(self, cc: str, target: Target) -> str:
        if hasattr(self.backend, "compiler_version"):
            return self.backend.compiler_version(cc, target)
        return system.compiler_version(cc)

    def _exec(self, target: Target, argv: list[str], timeout: float | None = None) -> Completed:
        return self.backend.run(runner_prefix(target) + argv, cwd=str(self.lab.root),
                                timeout=timeout or self.profile.timeout_seconds, target=target)

    def run_cell(self, cell: Cell, phase: Callable[[str], None] = lambda s: None) -> dict:
        t0 = time.perf_counter()
        cipher: Cipher = self.lab.cipher(cell.cipher)
        impl = cipher.impl(cell.implementation)
        toolchain: Toolchain = self.lab.toolchain(cell.toolchain)
        target: Target = self.lab.target(cell.target)
        rec: dict = {
            "cell": cell.id, "cipher": cipher.name, "display": cipher.spec.display,
            "implementation": cell.implementation, "label": cipher.row_label(cell.implementation),
            "round1": cipher.spec.round1, "toolchain": toolchain.name, "target": target.name,
            "emulated": target.emulated, "key_sizes": list(cell.key_sizes), "status": "ok", "reason": None,
        }

        def done(status: str, reason: str | None = None) -> dict:
            rec["status"], rec["reason"] = status, reason
            rec["seconds"] = round(time.perf_counter() - t0, 3)
            return rec

        if not impl.runs_on(target.arch):
            return done("unavailable", f"implementation runs on {impl.arch}, not {target.arch}")
        if toolchain.family not in target.families:
            return done("unavailable", f"target {target.name} has no {toolchain.family} toolchain")
        bad = target.unsupported_flags.get(toolchain.family, {})
        used = [f for f in (*toolchain.flags, *toolchain.ldflags) if f in bad]
        if used:
            return done("unavailable", f"{toolchain.family} {used[0]} on {target.name}: {bad[used[0]]}")

        if hasattr(self.backend, "image_id"):
            rec["image_id"] = self.backend.image_id(target)
        phase("build")
        b: BuildResult = self.builder.build(cipher, cell.implementation, toolchain, target)
        rec["build"] = {"compiler": b.compiler, "compiler_version": self._compiler_version(b.compiler, target),
                        "cflags": b.cflags,
                        "code_bytes": b.code_bytes, "cached": b.cached, "log": b.log[-4000:] or None}
        if not b.ok:
            return done("build_failed", b.failure)
        rel = {k: str(p) for k, p in b.programs.items()}

        # ---- correctness gate
        phase("kat")
        vector_files = cipher.vector_files(self.lab.vectors_dir)
        if not vector_files:
            return done("kat_failed", "no known-answer vectors: cannot verify, so not measured")
        kat = {"files": [], "records": 0, "passed": 0, "failed": 0, "skipped_key_size": 0, "fails": [],
               "checksums": {}}
        for vf in vector_files:
            c = self._exec(target, [rel["kat"], "--impl", cell.impl_name, "--file", str(vf)])
            out = read_kat(c)
            if out.unavailable:
                return done("unavailable", "implementation reports itself unavailable on this CPU")
            kat["files"].append(vf.name)
            kat["fails"] += out.fails[:10]
            kat["checksums"].update({str(k): v for k, v in out.checksums.items()})
            if not out.roundtrip_ok:
                kat["fails"].append({"reason": "decrypt(encrypt) checksum chain does not return to its start"})
            rec["kat"] = kat
            if out.summary is None:
                status = "crashed" if c.crashed else ("timeout" if c.timed_out else "kat_failed")
                return done(status, f"kat on {vf.name}: {out.error}")
            summary = out.summary
            rec["impl_facts"] = {k: summary[k] for k in ("block_bytes", "ks_bytes", "table_bytes", "key_bits")}
            for k in ("records", "passed", "failed", "skipped_key_size"):
                kat[k] += summary[k]
            kat["roundtrip_ok"] = kat.get("roundtrip_ok", True) and out.roundtrip_ok
        if kat["failed"] or not kat["roundtrip_ok"]:
            first = kat["fails"][0] if kat["fails"] else {}
            where = f" (first: line {first.get('line')} of {kat['files'][0]}, {first.get('direction')}," \
                    f" {first.get('key_bits')}-bit key)" if first.get("line") else ""
            return done("kat_failed", f"{kat['failed']} of {kat['records']} known-answer records failed{where}")
        if not kat["passed"]:
            return done("kat_failed", "no known-answer record applied to this implementation")

        # ---- timing (section 3.1)
        phase("timing")
        tc = self.profile.timing_for(cipher.name)
        argv = [rel["timing"], "--impl", cell.impl_name, "--key-bits", ",".join(map(str, cell.key_sizes)),
                "--samples", str(tc.samples), "--blocks", str(tc.blocks), "--keys", str(tc.key_pairs),
                "--blocks-per-call", str(tc.blocks_per_call)]
        c = self._exec(target, argv)
        rec["timing"] = [x for x in c.json_lines() if x.get("type") == "timing"]
        if c.returncode != 0:
            return done(_failure_status(c), f"timing: {c.describe_failure()}")

        # ---- cycle counting (section 3.2); on emulated targets: guest instructions
        phase("cycles")
        cc = self.profile.cycles_for(cipher.name)
        sizes = [k for k in cc.key_sizes if k in cell.key_sizes] or [cell.key_sizes[0]]
        args = ["--impl", cell.impl_name, "--key-bits", ",".join(map(str, sizes)), "--reps", str(cc.reps),
                "--sizes", ",".join(map(str, cc.sizes)), "--max-blocks", str(cc.max_blocks)]
        if target.counter == "marker":
            status = self._icount(rec, target, [rel["cycles"], *args])
            return done(*status) if status else done("ok")
        c = self._exec(target, [rel["cycles"], *args])
        lines = c.json_lines()
        rec["cycles"] = {"counter": next((x for x in lines if x.get("type") == "counter"), None),
                         "ops": [x for x in lines if x.get("type") == "cycles"]}
        if c.returncode != 0:
            return done(_failure_status(c), f"cycles: {c.describe_failure()}")

        # ---- the same deterministic instruction counts on hardware, through qemu-user
        phase("icount")
        try:
            ib = icount.build_for_icount(self.builder, cipher, cell.implementation, toolchain, target)
            if not ib.ok:
                rec["icount_note"] = f"instruction-count build failed: {ib.failure}"
            else:
                self._icount(rec, target, [str(ib.programs["cycles"]), *args], hardware=True)
        except icount.IcountError as e:
            rec["icount_note"] = str(e)
        return done("ok")

    def _icount(self, rec: dict, target: Target, argv: list[str], hardware: bool = False):
        """Runs a marker-counter `cycles` under qemu + the plugin; fills rec["icount"].
        Returns (status, reason) when the cell failed, None when fine."""
        try:
            c, counts = icount.run_with_icount(self.backend, target, argv, cwd=str(self.lab.root),
                                               timeout=self.profile.timeout_seconds)
        except icount.IcountError as e:
            if hardware:
                rec["icount_note"] = str(e)
                return None
            return ("measure_failed", f"instruction count: {e}")
        lines = c.json_lines()
        if c.returncode != 0 or not counts:
            why = icount.icount_unavailable(c)
            if hardware or why:
                rec["icount_note"] = why or f"instruction count run: {c.describe_failure()}"
                return None
            return (_failure_status(c), f"instruction count run: {c.describe_failure()}")
        try:
            filled = icount.fill_deltas(lines, counts)
        except icount.IcountError as e:
            rec["icount_note"] = str(e)
            return None if hardware else ("measure_failed", str(e))
        rec["icount"] = {"counter": icount.COUNTER_NAME, "unit": icount.COUNTER_UNIT,
                         "emulator": icount.qemu_for(target)[0] if hardware else target.qemu,
                         "ops": [x for x in filled if x.get("type") == "cycles"]}
        return None


def run_metadata(lab: Lab, m: MatrixFile, profile: Profile, backend: Backend, cells: list[Cell]) -> dict:
    toolchains = {}
    for name in sorted({c.toolchain for c in cells}):
        t = lab.toolchain(name)
        toolchains[name] = {"description": t.description, "family": t.family, "cc": t.cc, "flags": list(t.flags),
                            "ldflags": list(t.ldflags), "imitates": t.imitates, "notes": list(t.notes),
                            "version": system.compiler_version(t.cc)}
    targets = {}
    for name in sorted({c.target for c in cells}):
        t = lab.target(name)
        # the emulator that runs the target, or that counts its instructions (qemu-x86_64 on hardware)
        qemu = icount.qemu_for(t)[0]
        v = backend.run([qemu, "--version"], cwd=str(lab.root), timeout=60, target=t)
        first = v.stdout.strip().splitlines()[0] if v.returncode == 0 and v.stdout.strip() else "not installed"
        targets[name] = {**t.model_dump(), "emulated": t.emulated, "qemu_version": f"{qemu}: {first}"}
    return {
        "machine": system.machine(),
        "git": system.git_revision(lab.root),
        "profile": profile.model_dump(),
        "matrix": m.model_dump(),
        "backend": backend.describe(),
        "toolchains": toolchains,
        "targets": targets,
        "cells_planned": [c.id for c in cells],
    }


class _Progress:
    """cells done / total and the current cell (tqdm when available)."""

    def __init__(self, total: int, enabled: bool):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass

    def phase(self, cell: Cell, phase: str) -> None:
        if self.bar:
            self.bar.set_description(f"{cell.id} [{phase}]")

    def step(self, cell: Cell, status: str) -> None:
        if self.bar:
            self.bar.set_postfix_str(f"last: {status}")
            self.bar.update(1)

    def close(self) -> None:
        if self.bar:
            self.bar.close()


def run_matrix(lab: Lab, options: RunOptions, matrix_path: Path | None = None) -> Path:
    """Runs every cell of the (narrowed) matrix and returns the run folder."""
    m = narrowed(lab.matrix(matrix_path), options)
    profile = lab.profile(m.profile)
    build_dir = options.build_dir if options.build_dir.is_absolute() else lab.root / options.build_dir
    backend = get_backend(m.backend, lab=lab, engine=m.engine, build_dir=build_dir, targets=list(m.targets))
    cells = expand(lab, m)
    if not cells:
        raise ValueError("the matrix selects no cells (check ciphers/toolchains/targets and exclude rules)")
    builder = Builder(lab.root, build_dir, backend)
    runner = CellRunner(lab, profile, backend, builder)
    results_dir = options.results_dir if options.results_dir.is_absolute() else lab.root / options.results_dir
    writer = RunWriter(results_dir, new_run_id(options.tag or f"{m.backend}-{profile.name}"),
                       run_metadata(lab, m, profile, backend, cells))
    progress = _Progress(len(cells), options.progress)
    counts: dict[str, int] = {}
    tsc_rates: list[float] = []
    try:
        for cell in cells:
            try:
                rec = runner.run_cell(cell, lambda ph, c=cell: progress.phase(c, ph))
            except Exception as e:  # a bug in one cell must not lose the others
                rec = {"cell": cell.id, "cipher": cell.cipher, "implementation": cell.implementation,
                       "toolchain": cell.toolchain, "target": cell.target, "status": "measure_failed",
                       "reason": f"lab error: {type(e).__name__}: {e}"}
            writer.add_cell(rec)
            counts[rec["status"]] = counts.get(rec["status"], 0) + 1
            counter = (rec.get("cycles") or {}).get("counter") or {}
            if counter.get("counter") == "x86-tsc-lfence" and not rec.get("emulated"):
                tsc_rates.append(counter["ticks_per_second"])
            progress.step(cell, rec["status"])
    finally:
        progress.close()
        tsc = sorted(tsc_rates)[len(tsc_rates) // 2] if tsc_rates else None
        writer.close(status_counts=counts, tsc_hz_measured=tsc)
    return writer.dir
