"""plan -> build: run the steps of build plans through a backend, in parallel, skipping what is current.

A step (one compiler or linker call of :mod:`lab.buildplan`) runs again only
when its key changes: a content hash of its argv, the compiler's version and
the bytes of its inputs (the source and every header it may include; for a
link, the objects).  Steps shared by several plans (the harness objects) run
once.  So a re-run after touching one cipher's source rebuilds that cipher
only.  A missing compiler is reported as such, with the package to install.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .backends import Backend
from .buildplan import BuildPlan, Step, plan_build
from .config import Impl, Target, Toolchain
from .elf import code_sizes


@dataclass
class BuildResult:
    plan: BuildPlan
    ok: bool = False
    cached: bool = True  # no step had to run
    failure: str | None = None  # first error line of the step that failed
    missing: str | None = None  # the compiler that is not installed (the cell is "unavailable")
    log: str = ""
    compiler_version: str = ""
    code_bytes: dict[str, int] = field(default_factory=dict)

    @property
    def program(self) -> Path:
        return self.plan.output


@dataclass
class _StepOutcome:
    ok: bool
    ran: bool
    log: str = ""
    failure: str | None = None


def _digest(step: Step, version: str) -> str:
    h = hashlib.sha256(json.dumps([list(step.argv), version]).encode())
    for p in step.inputs:
        h.update(str(p).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _first_error(log: str) -> str:
    """The line of a failed step's log that says why: a compiler's error, else the linker's first undefined
    reference (collect2's "ld returned 1 exit status" says only that it failed), else any error, else the first."""
    out = [ln for ln in log.splitlines() if not ln.startswith("$ ")]
    for want in (lambda ln: "error" in ln.lower() and not ln.startswith("collect2"),
                 lambda ln: "undefined reference" in ln, lambda ln: "error" in ln.lower(), bool):
        hit = next((ln for ln in out if want(ln)), None)
        if hit:
            return hit[:300]
    return "build failed"


class Builder:
    """Builds plans with one backend; `jobs` steps at a time."""

    def __init__(self, root: Path, build_dir: Path, backend: Backend, jobs: int = 1, timeout: float = 600):
        self.root, self.build_dir, self.backend = Path(root), Path(build_dir), backend
        self.jobs, self.timeout = max(1, jobs), timeout

    def plan(self, impl: Impl, toolchain: Toolchain, target: Target, program: str) -> BuildPlan:
        return plan_build(impl, toolchain, target, program, root=self.root, build_dir=self.build_dir)

    def build(self, plans: list[tuple[BuildPlan, Target]], toolchains: dict[str, Toolchain] | None = None,
              on_done=None) -> list[BuildResult]:
        """Builds every plan (shared steps once, steps in parallel); results in the order given.
        on_done(index, result) is called as each plan finishes."""
        results = [BuildResult(p) for p, _ in plans]
        # steps lock their own outputs (_run_step): other runs and Dask workers may build at the same time
        if plans:
            # the compiler of every plan must exist where it runs
            for r, (p, target) in zip(results, plans):
                versions = {c: self.backend.compiler_version(c, target) for c in sorted(p.compilers)}
                missing = [c for c, v in versions.items() if not v]
                if missing:
                    r.missing = missing[0]
                r.compiler_version = versions.get(p.compiler, "")
            live = [(i, p, t) for i, ((p, t), r) in enumerate(zip(plans, results)) if not r.missing]
            # compile steps, each unique output once, in parallel; then the links
            done: dict[Path, _StepOutcome] = {}
            for kind in ("compile", "link"):
                todo: dict[Path, tuple[Step, Target, str]] = {}
                for i, p, t in live:
                    for s in p.steps:
                        if s.kind == kind and s.output not in done and s.output not in todo:
                            if all(done.get(inp, _StepOutcome(True, False)).ok for inp in s.inputs):
                                todo[s.output] = (s, t, results[i].compiler_version if s.compiler == p.compiler
                                                  else self.backend.compiler_version(s.compiler, t))
                with ThreadPoolExecutor(self.jobs) as pool:
                    outs = pool.map(lambda item: (item[0], self._run_step(*item[1])), todo.items())
                    for out, outcome in outs:
                        done[out] = outcome
            for i, p, t in live:
                r = results[i]
                steps = [done.get(s.output) for s in p.steps]
                failed = next((o for o in steps if o is None or not o.ok), None)
                r.cached = not any(o.ran for o in steps if o)
                r.log = "\n".join(o.log for o in steps if o and o.log)[-4000:]
                if failed is not None:
                    r.failure = failed.failure if failed else "an earlier step failed"
                else:
                    r.ok = True
                    r.code_bytes = code_sizes(list(p.objects))
                if on_done:
                    on_done(i, r)
        return results

    def build_one(self, impl: Impl, toolchain: Toolchain, target: Target, program: str) -> BuildResult:
        return self.build([(self.plan(impl, toolchain, target, program), target)])[0]

    def _run_step(self, step: Step, target: Target, version: str) -> _StepOutcome:
        """Runs one step unless its output is current; the output's lock file makes another process (a second
        run, a Dask worker) that needs the same output wait for this one and then find it current."""
        try:
            key = _digest(step, version)
        except OSError as e:
            return _StepOutcome(False, False, str(e), f"cannot read an input: {e}")
        stamp = step.output.with_name(step.output.name + ".key")
        if step.output.exists() and stamp.exists() and stamp.read_text() == key:
            return _StepOutcome(True, False)
        step.output.parent.mkdir(parents=True, exist_ok=True)
        with open(step.output.with_name(step.output.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if step.output.exists() and stamp.exists() and stamp.read_text() == key:
                return _StepOutcome(True, False)
            return self._execute(step, target, key, stamp)

    def _execute(self, step: Step, target: Target, key: str, stamp: Path) -> _StepOutcome:
        stamp.unlink(missing_ok=True)
        c = self.backend.exec(list(step.argv), target=target, timeout=self.timeout)
        log = f"$ {' '.join(step.argv)}\n{c.stderr.strip()}" if c.stderr.strip() else ""
        if c.returncode != 0:
            log = (log or f"$ {' '.join(step.argv)}") + f"\ncommand failed ({c.describe_failure()})"
            return _StepOutcome(False, True, log, _first_error(c.stderr or c.stdout) if (c.stderr or c.stdout)
                                else f"{step.compiler}: {c.describe_failure()}")
        stamp.write_text(key)
        return _StepOutcome(True, True, log)
