"""Bisection: the first source revision (or compiler version) at which a quantity of one cell changed.

* **Guest instructions** (default): the ``icount`` program of the cell, built at a revision and counted under
  QEMU with the lab's plugin, gives an exact number per block: a binary search with one count per revision, no
  statistics, no quiet machine needed, on any target.  "Changed" means a count other than the good end's.
* **Time** (``--metric encrypt_speed`` …): at each probe the revision is measured against both ends, process by
  process, with the lab's comparison (``stats.compare``: the best case's ratio interval against the noise band)
  until it is like one end and unlike the other; the search refuses to call a step the test cannot decide, and
  says "no significant difference between good and bad" instead of bisecting noise.
* **Compiler versions** (``--toolchains gcc-11-O3,gcc-12-O3,…`` or a glob): the same search over the versions
  in order, built from the checkout as it is.

Revisions are checked out into temporary git worktrees of the repository; each is built with the lab's one build
plan (its own sources, this lab's backend and QEMU plugin) and must pass its known answers before it counts.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .models import Status
from . import metrics, stats
from .backends.host import HostBackend
from .build import Builder
from .config import Lab
from .errors import UsageError, UserError
from .measure import CellSamples, Measurer
from .pipeline import CellPipeline, Final, Stages, make_backend
from .plan import Cell, unavailable_reason
from .quantities import cycle_quantities

# the counts a bisection can follow: {metric: (the program's op, per block?)}; the timed speeds (lab/metrics.py)
EXACT = {m: (metrics.get(m).op, m.endswith("per_block")) for m in ("insn_encrypt_per_block", "insn_decrypt_per_block",
                                                                    "insn_ekey", "insn_dkey")}
TIMED = metrics.SPEEDS


@dataclass
class Probe:
    ref: str  # a revision's full hash, or a toolchain's name
    name: str  # what is shown: a short hash, or the toolchain
    subject: str
    value: float | None = None  # exact count (counts), or the estimate (time)
    samples: CellSamples | None = None
    failure: str | None = None


@dataclass
class Outcome:
    metric: str
    good: Probe
    bad: Probe
    first: Probe | None  # the first revision/version at which the quantity changed; None: no difference
    change: float | None  # relative change of the cost (counts) or of the speed (time), first vs good
    ci_low: float | None
    ci_high: float | None
    builds: int = 0
    counts: int = 0
    processes: int = 0
    seconds: float = 0.0
    probes: list[str] = field(default_factory=list)
    message: str = ""

    def lines(self) -> str:
        spent = (f"{self.builds} builds, {self.counts} instruction counts, {self.processes} measuring processes, "
                 f"{self.seconds:.0f} s; probed {', '.join(self.probes)}")
        return f"{self.message}\n{spent}"


def _percent(change: float) -> str:
    """A relative change with as many decimals as it takes to show it (an exact count may change by 0.001 %)."""
    digits = 2
    while digits < 6 and change and round(100 * change, digits) == 0:
        digits += 1
    return f"{100 * change:+.{digits}f} %"


class _Probe:  # pragma: no mutate block (I/O: docs/testing.md)
    """Builds, gates and measures one cell at a revision (a worktree) or with a toolchain."""

    def __init__(self, backend, cipher: str, impl: str | None, target: str, metric: str, build_root: Path,
                 threshold: float = stats.NOISE_THRESHOLD):
        self.backend, self.cipher, self.impl, self.target = backend, cipher, impl, target
        self.metric, self.build_root, self.threshold = metric, build_root, threshold
        self.builds = self.counts = self.processes = 0
        self.measurer = Measurer(backend, backend.pick_cpu("auto"), lambda cs: None)

    def cell(self, lab: Lab, toolchain: str) -> Cell:
        c = lab.cipher(self.cipher)
        im = c.impl(self.impl or c.default_impl)
        key = 128 if 128 in im.key_bits else im.key_bits[0]
        return Cell(im, lab.toolchain(toolchain), lab.target(self.target), (key,), lab.profile("quick"))

    def prepare(self, p: Probe, lab: Lab, toolchain: str, backend=None) -> None:
        """Builds (from lab.root, through `backend`: a worktree's own), gates and counts or readies p: the one
        cell pipeline, as far as the gate and the instruction count."""
        backend = backend or self.backend
        cell = self.cell(lab, toolchain)
        exact = self.metric in EXACT
        stages = Stages(programs=("kat", "icount" if exact else "timing"), counts_dir=self.build_root / "counts")
        item = CellPipeline(backend, Builder(lab.root, self.build_root / p.ref, backend), stages).prepare(cell)
        self.builds += sum(not r.cached for r in item.built.results.values()) if item.built else 0
        if isinstance(item, Final):
            p.failure = {Status.UNAVAILABLE: item.reason, Status.BUILD_FAILED: f"build failed: {item.reason}"}.get(
                item.status, f"{item.status}: {item.reason}")
            return
        if exact:
            self.counts += 1
            if item.icount is None:
                raise UserError(f"instruction count failed: {item.icount_note}")
            op, per_block = EXACT[self.metric]
            q = next(q for q in cycle_quantities([item.icount["ops"]], prefix="insn_") if q.metric == self.metric
                     and (q.n_blocks == 128 or not per_block))
            p.value = min(q.per_process)
        else:
            p.samples = CellSamples(cell, item.built.program("timing"), item.built.program("timing"), timing_only=True)

    def costs(self, p: Probe) -> list[float]:
        return p.samples.timing_quantity(self.metric, p.samples.cell.key_sizes[0]).per_process

    def compare(self, a: Probe, b: Probe) -> str:
        return stats.compare(self.costs(a), self.costs(b), threshold=self.threshold).verdict

    def more(self, probes: list[Probe], rounds: int) -> None:
        # under the machine's timing lock, as every measurement of the lab (CellPipeline.measure, the flag race):
        # another run's measuring programs beside these would slow some processes and not others
        with self.backend.timing_lock(f"bisect-{self.cipher}", say=lambda s: None):
            for _ in range(rounds):
                for p in probes:
                    self.measurer.one_process(p.samples)
                    self.processes += 1
                    if p.samples.failure:
                        raise UserError(f"{p.name}: {p.samples.failure[1]}")


class _WorktreeBackend(HostBackend):  # pragma: no mutate block (I/O: docs/testing.md)
    """Builds a revision from its worktree (commands run from its root), with this lab's QEMU plugin."""

    def __init__(self, root: Path, plugin: str | None):
        super().__init__(root)
        self._plugin = plugin

    def plugin_path(self, target=None) -> str | None:
        return self._plugin


def _worktree_backend(wlab: Lab, target: str, plugin: str | None, build_dir: Path):  # pragma: no mutate block (I/O)
    """The backend that builds a revision's worktree: this machine for the host; for a target with an image, the
    mixed backend with the worktree as its root (its container mounts the worktree; the count runs here, with this
    lab's QEMU plugin)."""
    if not wlab.target(target).image:
        return _WorktreeBackend(wlab.root, plugin)
    from .backends.mixed import MixedBackend

    be = MixedBackend(wlab, build_dir=build_dir, progress=lambda s: None)
    be.host = _WorktreeBackend(wlab.root, plugin)
    be.host.cancel = be.cancel
    return be


def _git(repo: Path, *args: str) -> str:  # pragma: no mutate block (I/O: docs/testing.md)
    p = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise UserError(f"git {' '.join(args)}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else 'failed'}")
    return p.stdout.strip()


def revisions(repo: Path, good: str, bad: str) -> list[tuple[str, str]]:  # pragma: no mutate block (I/O)
    """(hash, subject) of every revision after good up to bad, oldest first (bad last)."""
    _git(repo, "merge-base", "--is-ancestor", good, bad)
    out = _git(repo, "log", "--reverse", "--ancestry-path", "--format=%H %s", f"{good}..{bad}")
    return [tuple(line.split(" ", 1)) if " " in line else (line, "") for line in out.splitlines()]


def _check(lab: Lab, metric: str, target: str, toolchains, good, bad) -> None:
    if metric not in EXACT and metric not in TIMED:
        raise UsageError(f"option --metric: '{metric}' is not one of {', '.join([*EXACT, *TIMED])}")
    if metric in TIMED and (lab.target(target).emulated or lab.target(target).image):
        raise UsageError("a bisection on time measures this machine's hardware: use --target host, or a "
                         "guest-instruction metric")
    if bool(toolchains) == bool(good or bad):
        raise UsageError("bisect needs either --good and --bad (revisions) or --toolchains (compiler versions)")


def _revision_line(lab: Lab, pr: _Probe, backend, repo: Path, good: str, bad: str, toolchain: str, cipher: str,
                   impl: str | None, target: str, tmp: Path, worktrees: list[Path]):  # pragma: no mutate block (I/O)
    """The revisions from good to bad, and how one is made ready: its own git worktree and backend."""
    good_hash = _git(repo, "rev-parse", "--verify", f"{good}^{{commit}}")
    line = [(good_hash, _git(repo, "log", "-1", "--format=%s", good_hash))] + revisions(repo, good, bad)
    rel = lab.root.resolve().relative_to(repo.resolve()) if lab.root.resolve().is_relative_to(repo.resolve()) \
        else Path(".")

    def setup(p: Probe) -> None:
        wt = tmp / "wt" / p.ref
        _git(repo, "worktree", "add", "--detach", str(wt), p.ref)
        worktrees.append(wt)
        wlab = Lab(root=wt / rel, shared=lab.shared)
        be = _worktree_backend(wlab, target, backend.plugin_path(), tmp / "b")
        try:
            be.prepare([wlab.target(target)], inputs=sorted(set(wlab.cipher(cipher).impl(
                impl or wlab.cipher(cipher).default_impl).vector_files)))
            pr.prepare(p, wlab, toolchain, be)
        finally:
            be.close()  # a target with an image: this revision's container

    return line, setup


def _bisect_exact(out: Outcome, probes: list[Probe], ready, metric: str) -> None:
    """Exact counts: the first probe whose count differs from good's."""
    lo, hi = 0, len(probes) - 1
    g = probes[lo]
    if g.value == probes[hi].value:
        out.message = f"no difference between good and bad: {metric} {g.value:,.0f} at both"
        return
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ready(probes[mid]).value == g.value:
            lo = mid
        else:
            hi = mid
    out.first = probes[hi]
    out.change = out.first.value / g.value - 1
    out.ci_low = out.ci_high = out.change
    out.message = (f"first change at {out.first.name} ({out.first.subject}): {metric} "
                   f"{probes[lo].value:,.2f} -> {out.first.value:,.2f} ({_percent(out.change)}, exact); "
                   f"the last one like good is {probes[lo].name}")


def _bisect_timed(out: Outcome, probes: list[Probe], ready, pr: _Probe, metric: str, max_rounds: int) -> None:
    """On time: good and bad must differ by the race's verdict; then each probe is told like good or like bad."""
    lo, hi = 0, len(probes) - 1
    g, b = probes[lo], probes[hi]
    pr.more([g, b], 5)
    if _decide(pr, g, b, max_rounds) == "no change":
        out.message = "no significant difference between good and bad " \
                      f"(after {len(g.samples.timing)} processes each): nothing to bisect"
        return
    while hi - lo > 1:
        mid = (lo + hi) // 2
        m = ready(probes[mid])
        pr.more([m], 5)
        like_good, like_bad = _side(pr, m, g, b, max_rounds)
        if like_good:
            lo = mid
        elif like_bad:
            hi = mid
        else:
            raise UserError(f"{m.name}: the test cannot tell it from either end after {max_rounds} "
                            "rounds; not calling a step (try on a quieter machine, or bisect on guest "
                            "instructions)")
    out.first = probes[hi]  # measured, as the last like good is: both ends before the search, a middle when readied
    s = stats.speedup(pr.costs(probes[lo]), pr.costs(out.first))  # its size and interval (pr's verdicts decided)
    out.change, out.ci_low, out.ci_high = s.speedup - 1, s.ci_low - 1, s.ci_high - 1
    out.message = (f"first change at {out.first.name} ({out.first.subject}): {metric} "
                   f"{100 * out.change:+.1f} % [{100 * out.ci_low:+.1f}, {100 * out.ci_high:+.1f}]")


def bisect(lab: Lab, cipher: str, toolchain: str = "gcc-O3", target: str = "host", good: str | None = None,
           bad: str | None = None, impl: str | None = None, metric: str = "insn_encrypt_per_block",
           toolchains: list[str] | None = None, repo: Path | None = None, max_rounds: int = 20,
           threshold: float = stats.NOISE_THRESHOLD, say: Callable[[str], None] = print) -> Outcome:  # pragma: no mutate block (I/O)
    """The first probe at which `metric` changed; on time, "changed" is stats.compare's verdict with `threshold`
    (the noise band: the lab's 3 % by default)."""
    _check(lab, metric, target, toolchains, good, bad)
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="cipherlab-bisect-"))
    # a target with an image: the mixed backend (builds in the image, counts with this machine's QEMU and plugin,
    # which the Debian 13 images cannot load); revisions: one per worktree (_worktree_backend)
    backend = make_backend(lab, "host" if not lab.target(target).image else "mixed", build_dir=tmp / "b",
                           progress=lambda s: None)
    pr = _Probe(backend, cipher, impl, target, metric, tmp / "b" / "builds", threshold)  # under the backend's build dir
    worktrees: list[Path] = []
    repo = Path(repo or lab.root)
    try:
        backend.prepare([lab.target(target)], inputs=sorted(set(lab.cipher(cipher).impl(
            impl or lab.cipher(cipher).default_impl).vector_files)))
        if toolchains:
            line = [(n, n) for n in _versions(lab, toolchains, cipher, impl, target, say)]

            def setup(p: Probe) -> None:
                pr.prepare(p, lab, p.ref)
        else:
            line, setup = _revision_line(lab, pr, backend, repo, good, bad, toolchain, cipher, impl, target, tmp,
                                         worktrees)
        probes = [Probe(h, h if toolchains else h[:12], s) for h, s in line]

        def ready(p: Probe) -> Probe:
            if p.value is None and p.samples is None and p.failure is None:
                say(f"bisect: {p.name} ({p.subject})")
                setup(p)
                if p.failure:
                    raise UserError(f"{p.name} ({p.subject}): {p.failure}")
            out.probes.append(p.name)
            return p

        out = Outcome(metric, probes[0], probes[-1], None, None, None, None)
        ready(probes[0]), ready(probes[-1])
        if metric in EXACT:
            _bisect_exact(out, probes, ready, metric)
        else:
            _bisect_timed(out, probes, ready, pr, metric, max_rounds)
    finally:
        pr.measurer.close()  # the probes' copies of their programs
        for wt in worktrees:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(wt)], capture_output=True)
        backend.close()
        shutil.rmtree(tmp, ignore_errors=True)
    out.builds, out.counts, out.processes = pr.builds, pr.counts, pr.processes
    out.seconds = time.monotonic() - t0
    return out


def _decide(pr: _Probe, a: Probe, b: Probe, max_rounds: int) -> str:
    """faster/slower/no change of b against a, measuring both more until the verdict holds for two rounds in a
    row or max_rounds is reached."""
    last = None
    for _ in range(max_rounds):
        v = pr.compare(a, b)
        if v == last and len(a.samples.timing) >= 8:
            return v
        last = v
        pr.more([a, b], 1)
    return last or "no change"


def _side(pr: _Probe, m: Probe, g: Probe, b: Probe, max_rounds: int) -> tuple[bool, bool]:
    """Whether m is like good (no change from it, a change from bad) or like bad, measuring m more until one
    holds."""
    for _ in range(max_rounds):
        vg, vb = pr.compare(g, m), pr.compare(b, m)
        if vg == "no change" and vb != "no change":
            return True, False
        if vb == "no change" and vg != "no change":
            return False, True
        pr.more([m, g, b], 1)
    return False, False


def _versions(lab: Lab, names: list[str], cipher: str, impl: str | None, target: str,
              say: Callable[[str], None]) -> list[str]:  # pragma: no mutate block (I/O: docs/testing.md)
    """The toolchains named (names or globs, lab.toolchains_matching) that can build the cell on the target (the
    plan's own rule: a version versions.yaml does not find there is left out, and said), in version order."""
    c = lab.cipher(cipher)
    im = c.impl(impl or c.default_impl)
    picked = []
    for name in lab.toolchains_matching(names):
        why = unavailable_reason(Cell(im, lab.toolchain(name), lab.target(target), im.key_bits, lab.profile("quick")))
        if why:
            say(f"bisect: {name} left out: {why}")
        else:
            picked.append(name)
    if len(picked) < 2:
        raise UsageError(f"option --toolchains: {', '.join(names)} gives {len(picked)} toolchain(s) that can build "
                         f"{im.id} for {target}; a bisection over compiler versions needs two or more")

    def version(name: str) -> tuple:  # versions.yaml says which version a profile stands for
        return tuple(int(x) for x in (lab.toolchain(name).family_version or "0").split(".") if x.isdigit())

    fams = {lab.toolchain(n).family for n in picked}
    if len(fams) > 1:
        raise UsageError(f"option --toolchains: {', '.join(picked)} mix compiler families; bisect one at a time")
    return sorted(picked, key=version)


__all__ = ["bisect", "revisions", "Outcome"]
