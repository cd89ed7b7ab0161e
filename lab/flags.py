"""Flag search: the fastest flag sets of a toolchain for each (cipher, target), by racing, with statistical ties.

A *space* (``flags/<name>.yaml``) names a ``base`` toolchain, whose compiler and settings are kept, and
``dimensions``: each a list of alternatives, each alternative a list of flags appended to the base flags.  Every
combination is a candidate.  For each cell the search

1. builds every candidate's timing program (``--jobs`` at a time); a flag the compiler rejects makes that
   candidate ``unavailable`` with the compiler's message;
2. hashes the code and data of each timing program: candidates with the same hash are one binary, measured once
   (``identical``, naming the one measured);
3. builds the kat program of every distinct binary only and gates it on its known answers, quickly (in
   parallel): every short record, the n-block check and the checksum chain, but only every
   ``QUICK_LONG_EVERY``-th long record (iterated over 100 times, ``kat --long-every``: the Monte-Carlo records
   are most of a full gate's work, and a 64-candidate space spends most of its time there otherwise); a miscompilation is
   ``unavailable`` with the reason; passing verdicts are remembered per binary, as a run's are, so a repeated
   search gates nothing again;
4. races the rest (F-race / successive halving): every surviving candidate gets one measuring process per
   round, in rotating order; from ``min_rounds`` on, a candidate whose cost is beyond the noise band of the
   best one's, by the interval of the ratio of their best cases (``stats.compare``, the lab's one test), is
   dropped (``slower``); the race ends when one candidate is left, when every survivor's interval reached the
   precision asked for, or at ``max_rounds``;
5. gates the winner (the best estimate among the survivors) and every candidate *tied* with it on every
   record (the full gate a run's cells pass); one that fails is ``unavailable`` and the winner is decided
   again among the rest; then reports the winner and its ties: those the same test cannot tell from it —
   never an arbitrary first place.  Each entry says which gate it passed (``gate``: quick or full).

With ``ct`` (``--ct``), a speed bought with a leak never wins.  For an implementation that claims constant time
(``constant_time: true`` in its cipher.yaml), every distinct binary that passes its quick gate also gets the
lab's trace check (:meth:`lab.pipeline.CellPipeline.check_ct`, remembered per binary in lab/memo.py): one that
leaks is ``leaks`` (the reason: its first leaking op and divergence), one the check cannot judge is
``unavailable``.  Leaking candidates still race, in a pool of their own: a constant-time candidate is dropped
only against the best constant-time one, a leaking one against the best of all; the winner and its ties are
constant-time candidates only.  Each cell then reports the fastest candidate overall and the fastest
constant-time one (the winner), and the cost of constant time: the ratio of their speeds with its interval
(:func:`lab.stats.compare_estimates`).  Other implementations are not checked, and their line says so.

Only the race holds the machine's timing lock (builds and gates leave other runs free to time); each cell's
stages (build, gate, lock_wait, race; and the CPU seconds of builds and gates) are timed and stored.  The search
is stored as a run (each measured candidate a cell whose toolchain is the candidate) with its outcome, a typed
``models.FlagSearch`` written and read by lab/results.py (``flagsearch.json`` beside ``cells.jsonl``); the report
and bench.compilers read it there, and the report shows it in its "Flag search" section.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import itertools
import json
import os
import resource
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import config, plan, stats, system
from .models import CANDIDATE_STATUSES, CostOfCt, CtVerdict, FlagCandidate, FlagCell, FlagCt, FlagSearch, Status
from .build import Builder
from .config import Impl, Lab, Target, Toolchain
from .elf import parse
from .errors import UsageError, UserError
from .pipeline import QUICK_LONG_EVERY, Built, CellPipeline, Final, Prepared, Stages, make_backend
from .measure import CellSamples, Measurer
from .plan import Cell, unavailable_reason
from .quantities import headline

QUANTITIES = {"encrypt": "encrypt_speed", "decrypt": "decrypt_speed", "key_setup": "key_setup_speed"}
STATUSES = CANDIDATE_STATUSES  # lab/models.py: the report reads them there


class Space(BaseModel):
    """A flag space (flags/<name>.yaml)."""

    model_config = ConfigDict(extra="forbid")
    base: str = Field(description="The toolchain whose compiler and other settings are kept (toolchains/).")
    description: str = ""
    dimensions: dict[str, list[list[str]]] = Field(
        description="name -> alternatives; each alternative a list of flags appended to the base's flags.")

    @field_validator("dimensions")
    @classmethod
    def _nonempty(cls, v: dict[str, list[list[str]]]) -> dict[str, list[list[str]]]:
        if not v:
            raise ValueError("at least one dimension is needed")
        for name, alts in v.items():
            if not alts:
                raise ValueError(f"dimension '{name}' has no alternatives")
        return v


def load_space(lab: Lab, path: Path | str) -> tuple[Space, Toolchain]:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"flag space {p} does not exist (option --space; see flags/ for examples)")
    try:
        raw = yaml.safe_load(p.read_text())
        space = Space.model_validate(raw)
    except yaml.YAMLError as e:
        raise UserError(f"{p}: not YAML ({str(e).splitlines()[0]})") from None
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(map(str, err["loc"])) or "(top)"
        raise UserError(f"{p}: key '{key}': {err['msg']} (a flag space has: base, description, dimensions)") \
            from None
    return space, lab.toolchain(space.base)


@dataclass(frozen=True)
class Candidate:
    flags: tuple[str, ...]  # appended to the base's flags
    toolchain: Toolchain

    @property
    def label(self) -> str:
        return " ".join(self.flags) or "(base flags)"


def candidates(space: Space, base: Toolchain) -> list[Candidate]:
    """Every combination of the dimensions' alternatives, in the order the file gives them."""
    out = []
    for combo in itertools.product(*space.dimensions.values()):
        flags = tuple(f for alt in combo for f in alt)
        digest = hashlib.sha256(json.dumps(flags).encode()).hexdigest()[:8]
        tc = dataclasses.replace(base, name=f"{base.name}~{digest}", flags=(*base.flags, *flags),
                                 description=f"{base.name} {' '.join(flags)}".strip())
        out.append(Candidate(flags, tc))
    return out


def binary_digest(path: Path) -> str:
    """A hash of what a program executes and reads: the contents of its loaded sections, notes excepted (a
    build id hashes the whole file, symbol names and paths included)."""
    SHF_ALLOC, SHT_NOBITS, SHT_NOTE = 2, 8, 7
    elf = parse(path)
    h = hashlib.sha256()
    for s in elf.sections:
        if s.flags & SHF_ALLOC and s.type != SHT_NOTE:
            h.update(f"{s.name}:{s.size}:".encode())
            if s.type != SHT_NOBITS:
                h.update(elf.data[s.offset:s.offset + s.size])
    return h.hexdigest()


# ------------------------------------------------------------------ the race
@dataclass
class Entry:
    candidate: Candidate
    status: str = "unavailable"  # until proven otherwise
    reason: str | None = None
    same_binary_as: tuple[str, ...] | None = None  # the flags of the candidate measured for this binary
    digest: str | None = None
    samples: CellSamples | None = None
    eliminated_round: int | None = None
    estimate: stats.Estimate | None = None
    gate: str | None = None  # the known-answer gate passed: "quick" (to race) or "full" (winner and ties)
    ct: CtVerdict | None = None  # the trace check's verdict (--ct, an implementation that claims constant time)

    @property
    def leaks(self) -> bool:
        return self.status == "leaks"

    def record(self, ct: bool = False) -> FlagCandidate:
        """What it became, as stored; its trace verdict only in a search with --ct (`ct`)."""
        e = self.estimate
        return FlagCandidate(flags=self.candidate.flags, toolchain=self.candidate.toolchain.name, status=self.status,
                             reason=self.reason, same_binary_as=self.same_binary_as,
                             processes=self.samples.processes if self.samples else 0,
                             eliminated_round=self.eliminated_round, gate=self.gate,
                             estimate=e.estimate if e else None, ci_low=e.ci_low if e else None,
                             ci_high=e.ci_high if e else None,
                             **({"ct": self.ct.verdict if self.ct else None} if ct else {}))


def judge_ct(e: Entry, v: CtVerdict) -> None:
    """A raced candidate's trace verdict: a leak makes it ``leaks`` (it races, it never wins); a check that
    cannot judge it makes it ``unavailable`` (a winner must be shown constant-time)."""
    e.ct = v
    if v.verdict == "leak":
        e.status, e.reason = "leaks", v.leaking_ops[0].line()
    elif v.verdict == "unavailable":
        e.status, e.reason = "unavailable", f"constant-time check: {v.reason}"


@dataclass
class Race:
    quantity: str  # encrypt_speed, decrypt_speed or key_setup_speed
    key_size: int
    min_rounds: int = 5
    max_rounds: int = 30
    precision: float = 0.01
    budget_seconds: float = 120.0
    threshold: float = stats.NOISE_THRESHOLD
    rounds: int = 0
    processes: int = 0
    topped_up: int = 0  # processes the best survivor got after the race (top_up)
    eliminations: list[tuple[int, str]] = field(default_factory=list)

    def estimate(self, e: Entry) -> stats.Estimate:
        s = e.samples
        return headline(s.timing_quantity(self.quantity, self.key_size), s.cell.sampling.estimator,
                        s.cell.sampling.confidence, s.run_noise, s.within_scale)

    def costs(self, e: Entry) -> list[float]:
        return e.samples.timing_quantity(self.quantity, self.key_size).per_process

    def slower(self, best: Entry, other: Entry) -> bool:
        """The other's cost beyond the noise band of the best's (speeds: higher is better)."""
        return stats.compare(self.costs(best), self.costs(other), "min", threshold=self.threshold).verdict \
            == "slower"

    def run(self, alive: list[Entry], measurer: Measurer, on_round: Callable[[int, int], None]) -> None:
        t0 = time.monotonic()
        while alive:
            self.rounds += 1
            for e in alive[self.rounds % len(alive):] + alive[:self.rounds % len(alive)]:
                self._measure(e, measurer)
            alive = [e for e in alive if e.status != "unavailable"]
            on_round(self.rounds, len(alive))
            if self.rounds < self.min_rounds or not alive:
                continue
            for e in alive:
                e.estimate = self.estimate(e)
            best_of_all = _best(alive)
            best_ct = _best([e for e in alive if not e.leaks])
            dropped = []
            for e in alive:
                # a leaking candidate is dropped against the best of all, a constant-time one against the best
                # constant-time one only (a faster leak never drops the candidate that can win)
                best = best_of_all if e.leaks else best_ct
                if e is not best and self.slower(best, e):
                    e.eliminated_round = self.rounds
                    if not e.leaks:
                        e.status = "slower"
                    self.eliminations.append((self.rounds, e.candidate.label))
                    dropped.append(e)
            alive = [e for e in alive if e not in dropped]
            precise = all(e.estimate.precision <= self.precision for e in alive)
            if self.settled(alive) or precise or self.rounds >= self.max_rounds \
                    or time.monotonic() - t0 > self.budget_seconds:
                break
        self.top_up(alive, measurer, t0)
        self.decide(alive)

    @staticmethod
    def settled(alive: list[Entry]) -> bool:
        """One survivor left in each pool (constant-time, leaking): the fastest of each is known."""
        return sum(not e.leaks for e in alive) <= 1 and sum(e.leaks for e in alive) <= 1

    def _measure(self, e: Entry, measurer: Measurer) -> bool:
        """One more measuring process of e; False (and e unavailable with the reason) when it failed."""
        measurer.one_process(e.samples)
        self.processes += 1
        if e.samples.failure:
            e.status, e.reason = "unavailable", f"{e.samples.failure[0]}: {e.samples.failure[1]}"
            return False
        return True

    def top_up(self, alive: list[Entry], measurer: Measurer, t0: float) -> None:
        """When the race stopped at its round or time limit with the best survivor's interval still wider than
        the precision asked (many candidates tied, none precise), the best alone is measured more: up to
        max_rounds processes, within the budget again.  Its cost estimate (the best case) can only fall, so
        it stays the best; the ties are then judged against its tighter interval (bench.compilers' MARS: 63
        ties, the winner at +-1.2 % after 30 rounds).

        With leaking candidates in the race, the best constant-time survivor (the winner to be) is topped up
        first, then the fastest survivor when it leaks (the other end of the cost of constant time)."""
        def fastest_leak() -> Entry | None:
            f = _best(alive)
            return f if f is not None and f.leaks else None

        # the race's survivors: none unavailable, their estimates made in its last round
        for pick in (lambda: _best([e for e in alive if not e.leaks]), fastest_leak):
            best = pick()
            for _ in range(self.max_rounds if best is not None else 0):
                if best.estimate.precision <= self.precision or time.monotonic() - t0 > 2 * self.budget_seconds:
                    break
                self.topped_up += 1
                if not self._measure(best, measurer):
                    alive.remove(best)
                    break
                best.estimate = self.estimate(best)

    def decide(self, alive: list[Entry]) -> None:
        """The winner and its ties among the survivors, by the same test (estimates the race's last round made
        are current: only missing ones are computed).  A leaking survivor stays ``leaks``: never the winner,
        never tied."""
        for e in alive:
            if e.estimate is None:
                e.estimate = self.estimate(e)
        alive = [e for e in alive if not e.leaks]
        if not alive:
            return
        winner = max(alive, key=lambda e: e.estimate.estimate)
        winner.status = "winner"
        for e in alive:
            if e is not winner:
                e.status = "slower" if self.slower(winner, e) else "tied"
                if e.status == "slower":
                    e.eliminated_round = self.rounds


def _best(entries: list[Entry]) -> Entry | None:
    return max(entries, key=lambda e: e.estimate.estimate) if entries else None


# ------------------------------------------------------------------ one cell
@dataclass
class CellSearch:
    impl: Impl
    target: Target
    entries: list[Entry]
    race: Race
    builds: int = 0
    seconds: float = 0.0
    # wall seconds of build, gate, lock_wait, race (and ct: the trace checks); CPU seconds of the compilers
    # (build_cpu), the kat programs (gate_cpu) and the trace runs (ct_cpu)
    stages: dict[str, float] = field(default_factory=dict)
    ct_asked: bool = False  # --ct
    ct_skipped: str | None = None  # --ct, but this implementation is not checked: why

    @property
    def winner(self) -> Entry | None:
        return next((e for e in self.entries if e.status == "winner"), None)

    @property
    def fastest(self) -> Entry | None:
        """The fastest candidate overall: the winner, or a measured leaking candidate with a better estimate."""
        pool = [e for e in self.entries if e.estimate is not None and (e.status == "winner" or e.leaks)]
        return _best(pool)

    def cost_of_ct(self) -> stats.Comparison | None:
        """The fastest candidate's speed over the fastest constant-time one's (the winner's), with the interval
        of the ratio (stats.compare_estimates; "faster": constant time costs speed here).  Exactly 1 when the
        fastest is the winner; None without a winner."""
        w, f = self.winner, self.fastest
        if w is None or f is None:
            return None
        if f is w:
            return stats.Comparison(1.0, 1.0, 1.0, 1.0, "no change")
        return stats.compare_estimates(w.estimate, f.estimate, w.estimate.confidence or 0.95, higher_is_better=True)

    def ct_record(self) -> FlagCt:
        f, cost = self.fastest, self.cost_of_ct()
        return FlagCt(checked=self.ct_skipped is None, not_checked_because=self.ct_skipped,
                      leaking=sum(e.ct is not None and e.ct.verdict == "leak" for e in self.entries),
                      fastest=f.candidate.flags if f else None, fastest_status=f.status if f else None,
                      fastest_ct=self.winner.candidate.flags if self.winner else None,
                      cost_of_ct=CostOfCt(**dataclasses.asdict(cost)) if cost else None)

    def record(self) -> FlagCell:
        """The cell's outcome as stored (models.FlagCell); its constant-time part only with --ct."""
        winner = self.winner
        measured = [e.estimate.estimate for e in self.entries if e.estimate and e.status != "unavailable"]
        return FlagCell(cipher=self.impl.cipher, implementation=self.impl.name, target=self.target.name,
                        quantity=self.race.quantity, key_size=self.race.key_size,
                        winner=winner.candidate.flags if winner else None,
                        tied=[e.candidate.flags for e in self.entries if e.status == "tied"],
                        spread=(max(measured) / min(measured)) if len(measured) > 1 else None,
                        candidates_total=len(self.entries), builds=self.builds,
                        distinct_binaries=sum(1 for e in self.entries if e.digest and e.status != "identical"),
                        rounds=self.race.rounds, processes=self.race.processes, topped_up=self.race.topped_up,
                        eliminations=self.race.eliminations, seconds=round(self.seconds, 1),
                        stages={k: round(v, 1) for k, v in self.stages.items()},
                        **({"ct": self.ct_record()} if self.ct_asked else {}),
                        candidates=[e.record(ct=self.ct_asked) for e in self.entries])


def _results(b: Built | Final) -> list:
    built = b.built if isinstance(b, Final) else b
    return list(built.results.values()) if built else []


@dataclass
class Pipelines:
    """The one cell pipeline over one builder: the timing programs of every candidate first, then the kat
    programs of the distinct binaries only, gated quickly before the race (``kat``) and fully after it for the
    winner and its ties (``full``); verdicts are remembered per binary and gate, as a run's are.  With --ct,
    ``ct`` is the quick gate's walk with the trace check's program beside the kat program (no dudect: the
    trace is the verdict, and the race is what times the CPU); its verdicts are remembered per binary."""

    timing: CellPipeline
    kat: CellPipeline
    full: CellPipeline
    ct: CellPipeline | None = None

    @classmethod
    def of(cls, backend, builder: Builder, kat_cache: Path | None, ct: bool = False) -> "Pipelines":
        quick = Stages(programs=("kat",), kat_cache=kat_cache, kat_long_every=QUICK_LONG_EVERY)
        checked = dataclasses.replace(quick, programs=("kat", "ct"), ct_dir=builder.build_dir / "ct",
                                      memo_dir=builder.build_dir / "memo")
        return cls(CellPipeline(backend, builder, Stages(programs=("timing",))),
                   CellPipeline(backend, builder, quick),
                   CellPipeline(backend, builder, Stages(programs=("kat",), kat_cache=kat_cache)),
                   CellPipeline(backend, builder, checked) if ct else None)


@dataclass
class Ready:
    """A cell's candidates built, hashed and gated: ready to race."""

    search: CellSearch
    racing: list[Entry]
    t0: float


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished child processes: the compilers' and kat programs'
    work, whatever else shares the machine (wall seconds depend on the load, these do not)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _distinct(entries: list[Entry], builds: list) -> tuple[dict[str, Entry], list[tuple[Entry, Built]]]:
    """The candidates whose timing programs have code and data of their own (one Entry a binary digest); the
    others are "identical" to the first with their binary, or carry their build's failure."""
    by_digest: dict[str, Entry] = {}
    distinct: list[tuple[Entry, Built]] = []
    for e, b in zip(entries, builds):
        if isinstance(b, Final):
            e.reason = b.reason if b.status == Status.UNAVAILABLE else f"build failed: {b.reason}"
            continue
        e.digest = binary_digest(b.program("timing"))
        if e.digest in by_digest:
            first = by_digest[e.digest].candidate
            e.status, e.same_binary_as = "identical", first.flags
            e.reason = f"the same binary as '{first.label}'"
            continue
        by_digest[e.digest] = e
        distinct.append((e, b))
    return by_digest, distinct


def _trace_check(racing: list[Entry], gated: list, quick, stages: dict, cpu_before: float,
                 jobs: int) -> list[Entry]:
    """The trace check of every gated binary (in parallel): each entry judged; those without a verdict leave."""
    t = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        for e, p in zip(racing, pool.map(quick.check_ct, gated)):
            judge_ct(e, p.ct or CtVerdict(verdict="unavailable", reason="no trace check was made"))
    stages["ct"] = time.monotonic() - t
    stages["ct_cpu"] = _children_cpu() - cpu_before
    return [e for e in racing if e.status != "unavailable"]


def prepare_cell(lab: Lab, impl: Impl, target: Target, cands: list[Candidate], race: Race, pipes: Pipelines,
                 say: Callable[[str], None] = print, jobs: int = 1) -> Ready:
    """Every candidate's timing program built; candidates whose programs have the same code and data are one
    binary; the kat program of each distinct binary built and gated on its known answers (in parallel)."""
    t0 = time.monotonic()
    stages: dict[str, float] = {}
    entries = [Entry(c) for c in cands]
    found = CellSearch(impl, target, entries, race, 0, 0.0, stages, ct_asked=pipes.ct is not None)
    if pipes.ct is not None and impl.constant_time is not True:
        found.ct_skipped = f"{impl.id} does not claim constant time (cipher.yaml: constant_time: " \
                           f"{'not stated' if impl.constant_time is None else 'false'})"
    checking = pipes.ct is not None and found.ct_skipped is None
    quick = pipes.ct if checking else pipes.kat  # with the trace check's program beside the kat program
    cells = [Cell(impl, c.toolchain, target, (race.key_size,), lab.profile("quick")) for c in cands]
    why = unavailable_reason(cells[0])
    if why:
        for e in entries:
            e.reason = why
        return Ready(found, [], t0)
    cpu0 = _children_cpu()
    with ThreadPoolExecutor(jobs) as pool:  # the timing programs of every candidate, in parallel
        builds = list(pool.map(pipes.timing.build, cells))
    stages["build"] = time.monotonic() - t0
    by_digest, distinct = _distinct(entries, builds)
    t1 = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:  # the kat programs of the distinct binaries only
        kats = list(pool.map(quick.build, [b.cell for _, b in distinct]))
    stages["build"] += time.monotonic() - t1
    cpu1 = _children_cpu()
    stages["build_cpu"] = cpu1 - cpu0
    found.builds = sum(not r.cached for b in (*builds, *kats) for r in _results(b))
    t2 = time.monotonic()
    racing: list[Entry] = []
    gated: list[Prepared] = []

    def gate(k: Built | Final) -> Prepared | Final:
        return k if isinstance(k, Final) else quick.gate(k)

    with ThreadPoolExecutor(jobs) as pool:  # the known-answer gates of the distinct binaries, in parallel
        for (e, b), v in zip(distinct, pool.map(gate, kats)):
            if isinstance(v, Final):
                e.reason = f"{v.status}: {v.reason}"
                continue
            e.status, e.gate = "racing", "quick"
            e.samples = CellSamples(b.cell, b.program("timing"), b.program("timing"), timing_only=True)
            racing.append(e)
            gated.append(v)
    stages["gate"] = time.monotonic() - t2
    cpu2 = _children_cpu()
    stages["gate_cpu"] = cpu2 - cpu1
    checked = ""
    if checking:  # the trace check of every binary that passed (deterministic: in parallel, outside the lock)
        racing = _trace_check(racing, gated, quick, stages, cpu2, jobs)
        checked = f", {sum(e.leaks for e in racing)} of them leak (trace check {stages['ct']:.0f} s)"
    say(f"flags: {impl.id}@{target.name}: {len(cands)} candidates, {len(by_digest)} distinct binaries, "
        f"{len(racing)} pass their known answers{checked} (build {stages['build']:.0f} s, "
        f"gates {stages['gate']:.0f} s)")
    return Ready(found, racing, t0)


def race_cell(p: Ready, measurer: Measurer, say: Callable[[str], None] = print) -> CellSearch:
    """The race of a prepared cell (the caller holds the timing lock)."""
    found, t = p.search, time.monotonic()
    found.race.run(p.racing, measurer, lambda r, n: say(f"  round {r}: {n} left") if r % 5 == 0 else None)
    found.stages["race"] = time.monotonic() - t
    for e in found.entries:
        if e.status == "racing":  # the race ended before a decision (no processes)
            e.status = "unavailable"
    found.seconds = time.monotonic() - p.t0
    return found


def confirm_cell(found: CellSearch, pipes: Pipelines, say: Callable[[str], None] = print, jobs: int = 1) -> None:
    """The full known-answer gate (every record) of the winner and its ties, after the race: one that fails is
    ``unavailable`` with the verdict, and the winner is decided again among the measured rest, until the winner
    and every tie passed it (or no candidate is left).  A leaking candidate faster than the winner (the other
    end of the cost of constant time) passes it too, or the next fastest is taken."""
    t, cpu = time.monotonic(), _children_cpu()

    def full_gate(e: Entry) -> str | None:
        b = pipes.full.build(e.samples.cell)
        v = b if isinstance(b, Final) else pipes.full.gate(b)
        return f"full known-answer gate: {v.status}: {v.reason}" if isinstance(v, Final) else None

    while True:
        todo = [e for e in found.entries if e.status in ("winner", "tied") and e.gate != "full"]
        fastest = found.fastest
        if fastest is not None and fastest.leaks and fastest.gate != "full":
            todo.append(fastest)
        if not todo:
            break
        with ThreadPoolExecutor(jobs) as pool:
            failed = [(e, why) for e, why in zip(todo, pool.map(full_gate, todo)) if why]
        for e in todo:
            e.gate = "full"
        for e, why in failed:
            e.status, e.reason = "unavailable", why
            say(f"  {e.candidate.label}: {why}")
        if not failed:
            break
        found.race.decide([e for e in found.entries if e.status in ("winner", "tied", "slower")
                           and e.samples is not None and e.samples.timing])
    found.stages["confirm"] = time.monotonic() - t
    found.stages["gate_cpu"] = found.stages.get("gate_cpu", 0.0) + _children_cpu() - cpu
    found.seconds += found.stages["confirm"]


# ----------------------------------------------------------------- the command
def search(lab: Lab, space_path: Path | str, ciphers: list[str], targets: list[str] | None = None,
           quantity: str = "encrypt", key_size: int = 128, json_out: Path | None = None,
           write_profiles: str | None = None, results_dir: Path | None = None, build_dir: Path | None = None,
           min_rounds: int = 5, max_rounds: int = 30, precision: float = 0.01, jobs: int | None = None,
           threshold: float = stats.NOISE_THRESHOLD, ct: bool = False, say=print) -> list[CellSearch]:
    from .results import new_run_id, write_flag_search

    if quantity not in QUANTITIES:
        raise UsageError(f"option --quantity: '{quantity}' is not one of {', '.join(QUANTITIES)}")
    if write_profiles not in (None, "cell", "target"):
        raise UsageError(f"option --write-profiles: '{write_profiles}' is not 'cell' or 'target'")
    if min_rounds < 2 or max_rounds < min_rounds:
        raise UsageError("options --min-rounds/--max-rounds: need 2 <= min-rounds <= max-rounds")
    space, base = load_space(lab, space_path)
    cands = candidates(space, base)
    if not ciphers:
        raise UsageError("option --ciphers: name at least one cipher")
    # CIPHER (its default) or CIPHER/IMPL: the plan's own selection, with its errors
    impls = [im for c in ciphers for im in plan.implementations(lab, c.partition("/")[0],
                                                                [c] if "/" in c else "default", "--ciphers")]
    tgts = [lab.target(t) for t in (targets or ["host"])]
    if any(t.image or t.emulated for t in tgts):
        raise UsageError("flag search measures on this machine's hardware: use --targets host")
    build_dir = Path(build_dir or lab.root / "build")
    results_dir = Path(results_dir or lab.root / "results")
    backend = make_backend(lab, "host", build_dir=build_dir, progress=say)
    out: list[CellSearch] = []
    jobs = max(1, jobs or os.cpu_count() or 1)
    measurer = Measurer(backend, backend.pick_cpu("auto"), lambda cs: None)
    try:
        backend.prepare(tgts, inputs=sorted({f for i in impls for f in i.vector_files}))
        pipes = Pipelines.of(backend, Builder(lab.root, build_dir, backend), build_dir / "kat-cache", ct=ct)
        run_id = new_run_id(f"flags-{Path(space_path).stem}")
        for t in tgts:
            for impl in impls:
                race = Race(QUANTITIES[quantity], key_size, min_rounds, max_rounds, precision, threshold=threshold)
                prepared = prepare_cell(lab, impl, t, cands, race, pipes, say, jobs)
                waited = time.monotonic()
                # only the race holds the machine's timing lock: builds and gates leave other runs free to time
                with backend.timing_lock(run_id, wait=True, say=say):
                    prepared.search.stages["lock_wait"] = time.monotonic() - waited
                    out.append(race_cell(prepared, measurer, say))
                confirm_cell(out[-1], pipes, say, jobs)  # the full gate, outside the lock
                say("  stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in out[-1].stages.items()))
        run_dir = _store(lab, backend, results_dir, run_id, space, space_path, base, out, measurer.cpus[0], ct)
    finally:
        measurer.close()  # the race's copies of the candidates' programs
        backend.close()
    doc = FlagSearch(space=shown(lab, space_path), base=base.name, quantity=QUANTITIES[quantity], key_size=key_size,
                     run=run_dir.name, cells=[c.record() for c in out])
    write_flag_search(run_dir, doc)
    if json_out:
        Path(json_out).write_text(doc.json_text())
    for c in out:
        say(summary_line(c))
    if write_profiles:
        for p in write_winner_profiles(lab, base, out, write_profiles):
            say(f"profile written: {shown(lab, p)}")
    say(f"flag search stored as run {run_dir.name} ({run_dir})")
    return out


def shown(lab: Lab, path: Path | str) -> str:
    """A space file as the records name it: relative to the checkout when it is inside (no machine paths)."""
    return config.shown(path, lab.root)


def summary_line(c: CellSearch) -> str:
    d = c.record()
    win = " ".join(d.winner) if d.winner is not None else "none"
    ties = "; ".join(" ".join(t) or "(base flags)" for t in d.tied) or "none"
    w = c.winner
    est = f" {w.estimate.estimate:,.0f} [{w.estimate.ci_low:,.0f}, {w.estimate.ci_high:,.0f}]" if w else ""
    return (f"{c.impl.id}@{c.target.name}: winner '{win or '(base flags)'}'{est}; tied: {ties}; "
            f"{d.candidates_total} candidates, {d.distinct_binaries} distinct binaries, "
            f"{d.processes} processes in {d.rounds} rounds" + (f"; {ct_summary(c)}" if c.ct_asked else ""))


def ct_summary(c: CellSearch) -> str:
    """The constant-time part of a cell's line: what leaks, the fastest overall and the cost of constant time."""
    if c.ct_skipped:
        return f"constant time not checked: {c.ct_skipped}"
    n = sum(e.ct is not None and e.ct.verdict == "leak" for e in c.entries)
    head = f"constant time: {n} distinct binar{'y leaks' if n == 1 else 'ies leak'}"
    f, cost = c.fastest, c.cost_of_ct()
    if f is None or cost is None:
        return head + "; no constant-time candidate is left"
    if f is c.winner:
        return head + "; the fastest candidate is constant-time (cost of constant time 1.00x)"
    e = f.estimate
    judged = {"faster": "significant", "no change": "within the noise"}.get(cost.verdict, cost.verdict)
    return (head + f"; fastest '{f.candidate.label}' (leaks) {e.estimate:,.0f} [{e.ci_low:,.0f}, {e.ci_high:,.0f}]; "
            f"cost of constant time {cost.ratio:.3f}x [{cost.ci_low:.3f}, {cost.ci_high:.3f}] ({judged})")


def write_winner_profiles(lab: Lab, base: Toolchain, found: list[CellSearch], per: str,
                          folder: Path | None = None) -> list[Path]:
    """The winners as toolchain profiles (toolchains/<base>-best-<cipher>-<target>.yaml, or -<target>.yaml with
    the flags that won most cells of the target), so that matrix.run can use them."""
    written = []
    groups: dict[str, list[CellSearch]] = {}
    for c in found:
        key = f"{c.impl.cipher}-{c.target.name}" if per == "cell" else c.target.name
        groups.setdefault(key, []).append(c)
    for key, cs in groups.items():
        wins = [tuple(e.candidate.flags) for c in cs for e in c.entries if e.status == "winner"]
        if not wins:
            continue
        # most cells won; a tie goes to the flags that won first in the cells' order (never to the hash seed)
        flags = collections.Counter(wins).most_common(1)[0][0]
        path = (folder or lab.root / "toolchains") / f"{base.name}-best-{key}.yaml"
        path.write_text(yaml.safe_dump({
            "description": f"{base.description}: the flags a flag search found fastest for {key} "
                           f"({', '.join(c.impl.id for c in cs)})",
            "inherits": base.name, "add_flags": list(flags),
            "notes": ["flag search winner; the candidates tied with it are listed in the search's run"]},
            sort_keys=False, width=120))
        written.append(path)
    return written


def _store(lab: Lab, backend, results_dir: Path, run_id: str, space: Space, space_path, base: Toolchain,
           found: list[CellSearch], cpu, ct: bool = False) -> Path:
    """The search as a run: every measured candidate a cell (its toolchain is the candidate), with its trace
    verdict when it was checked."""
    from .run import make_record, start_run

    measured = [(c, e) for c in found for e in c.entries if e.samples is not None and e.samples.timing]
    machine = system.machine_id()
    w = start_run(lab, results_dir, backend, [e.samples.cell for _, e in measured], machine=machine, matrix={},
                  fingerprint={}, options={"flag_search": {"space": shown(lab, space_path), "base": base.name,
                                                           "dimensions": space.dimensions,
                                                           **({"ct": True} if ct else {})}, "cpu": cpu},
                  tag="flags", run_id=run_id)
    for c, e in measured:
        cs = e.samples
        cs.stopped = "precision" if e.status in ("winner", "tied") else "budget"
        f = Final(Status.OK, None, None, None, cs, stages={"measure": round(cs.seconds, 3)}, ct=e.ct)
        w.add_cell(make_record(cs.cell, f, machine, backend, cpu))
    w.close("finished", status_counts={Status.OK: len(measured)})
    return w.dir


__all__ = ["Space", "Candidate", "load_space", "candidates", "binary_digest", "Race", "search", "prepare_cell",
           "race_cell", "confirm_cell", "judge_ct", "ct_summary"]
