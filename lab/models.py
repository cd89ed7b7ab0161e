"""The typed values shared by several layers, at the bottom of the lab: they import nothing of ours.

Records that a stage produces and a later one stores or reads (the constant-time verdict a run records, the
machine-speed gauge of a measuring process, a flag search's outcome) live here, so that the module that makes
them and the one that stores them both import down (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict


# ------------------------------------------------------------------ the statuses a cell can end with
# One enum, used everywhere (a StrEnum: stored and compared as its text), listed in the order a report shows them.
# FAILED are the red ones (a run with any exits 1); ok and unavailable (the cell cannot exist here: a missing
# compiler, an instruction set this CPU lacks) are not.
class Status(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"
    BUILD_FAILED = "build_failed"
    KAT_FAILED = "kat_failed"
    CHECKSUM_DIFFERS = "checksum_differs"
    SANITIZER = "sanitizer"
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    MEASURE_FAILED = "measure_failed"
    UNREACHABLE = "unreachable"


STATUSES = tuple(Status)
FAILED = frozenset(STATUSES) - {Status.OK, Status.UNAVAILABLE}


# ------------------------------------------------------------------ constant time (lab/ct.py makes these)
INPUTS = 8  # secret inputs per op of the trace check
DUDECT_THRESHOLD = 4.5  # |t| above which dudect calls a leak


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Divergence(Model):
    """Where the event streams of two secret inputs first part."""

    kind: Literal["branch", "memory"]   # a branch that went another way / a secret-dependent access address
    address: str                        # the instruction (hex): the branch, or the accessing instruction
    function: str = ""                  # innermost function (inlined ones included) by addr2line
    symbol: str = ""                    # the function symbol holding the instruction
    location: str = ""                  # file:line by addr2line ("" when it knows none)
    event: int = 0                      # index of the first differing event of the region's stream
    inputs: tuple[int, int] = (0, 1)    # the two inputs compared
    detail: str = ""                    # e.g. "next instruction 0x4011a0 vs 0x4011c4", "load 8 bytes"

    def line(self) -> str:
        what = "secret-dependent branch" if self.kind == "branch" else "secret-dependent memory access"
        where = self.location or "?"
        fn = self.function or self.symbol or "?"
        return f"{what} at {where} ({fn}, {self.address})" + (f": {self.detail}" if self.detail else "")


class OpVerdict(Model):
    op: str
    key_size: int
    verdict: Literal["clean", "leak"]
    inputs: int
    control_differs: bool = False       # the instruction-address hashes differ
    memory_differs: bool = False        # the memory-access hashes differ
    distinct: int = 1                   # distinct (control, memory) hash pairs among the inputs
    divergence: Divergence | None = None

    def line(self, untraced: str = "the regions differ") -> str:
        """The op and where it leaks, as every tool of the lab prints it: "encrypt 128: secret-dependent branch at
        FILE:LINE (function, address)"; `untraced` where no divergence was traced."""
        return f"{self.op} {self.key_size}: " + (self.divergence.line() if self.divergence else untraced)


class DudectOp(Model):
    op: str
    key_size: int
    measurements: int                   # after dropping warm-up measurements
    t: float                            # the largest |t| over the uncropped and cropped tests
    verdict: Literal["clean", "leak"]


class DudectVerdict(Model):
    verdict: Literal["clean", "leak", "unavailable"]
    reason: str = ""
    threshold: float = DUDECT_THRESHOLD
    counter: str = ""
    ops: tuple[DudectOp, ...] = ()

    @property
    def t(self) -> float:
        return max((o.t for o in self.ops), default=0.0)


class CtVerdict(Model):
    """The trace verdict of one cell: clean (every op hashed alike for every input), leak, or unavailable."""

    verdict: Literal["clean", "leak", "unavailable"]
    reason: str = ""                    # why unavailable, or a one-line summary of the leak
    inputs: int = INPUTS
    ops: tuple[OpVerdict, ...] = ()
    dudect: DudectVerdict | None = None

    @property
    def first_divergence(self) -> Divergence | None:
        return next((o.divergence for o in self.ops if o.divergence), None)

    @property
    def leaking_ops(self) -> list[OpVerdict]:
        return [o for o in self.ops if o.verdict == "leak"]



# ------------------------------------------------------------------ a flag search (lab/flags.py makes these)
#: what a flag search's candidate ends as, in the order a report lists them
CandidateStatus = Literal["winner", "tied", "slower", "leaks", "identical", "unavailable"]
CANDIDATE_STATUSES: tuple[str, ...] = get_args(CandidateStatus)


class FlagCandidate(Model):
    """One candidate flag set of a searched cell and what it became."""

    flags: tuple[str, ...]
    toolchain: str  # the candidate's toolchain profile (the stored run's cells name it)
    status: CandidateStatus
    reason: str | None = None
    same_binary_as: tuple[str, ...] | None = None  # identical: the flags of the candidate measured for the binary
    processes: int = 0
    eliminated_round: int | None = None
    gate: Literal["quick", "full"] | None = None  # the known-answer gate it passed
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ct: Literal["clean", "leak", "unavailable"] | None = None  # set only in a search with --ct


class CostOfCt(Model):
    """The fastest candidate's speed over the fastest constant-time one's, with the ratio's interval."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str


class FlagCt(Model):
    """A cell's constant-time part (--ct): whether it was checked, what leaks, the cost of constant time."""

    checked: bool
    not_checked_because: str | None = None
    leaking: int = 0
    fastest: tuple[str, ...] | None = None
    fastest_status: CandidateStatus | None = None
    fastest_ct: tuple[str, ...] | None = None
    cost_of_ct: CostOfCt | None = None


class FlagCell(Model):
    """One searched (implementation, target): the winner, its ties, what the race spent, every candidate."""

    cipher: str
    implementation: str
    target: str
    quantity: str
    key_size: int
    winner: tuple[str, ...] | None
    tied: tuple[tuple[str, ...], ...] = ()
    spread: float | None = None  # the best measured estimate over the worst
    candidates_total: int
    builds: int = 0
    distinct_binaries: int = 0
    rounds: int = 0
    processes: int = 0
    topped_up: int = 0
    eliminations: tuple[tuple[int, str], ...] = ()
    seconds: float = 0.0
    stages: dict[str, float] = {}  # wall (and CPU) seconds of each stage
    ct: FlagCt | None = None  # set only in a search with --ct
    candidates: tuple[FlagCandidate, ...] = ()


class FlagSearch(Model):
    """A flag search's outcome, stored beside its run's cells (results.write_flag_search)."""

    space: str
    base: str
    quantity: str
    key_size: int
    run: str
    cells: tuple[FlagCell, ...] = ()

    def json_text(self) -> str:
        """As stored: the fields of --ct (``ct``) only where the search was asked for them (set)."""
        return self.model_dump_json(indent=1, exclude_unset=True) + "\n"


# ------------------------------------------------------------------ the machine-speed gauge (lab/measure.py)


class Gauge(BaseModel):
    """The machine-speed gauge's raw samples in one measuring process (None in runs made before it existed)."""
    model_config = ConfigDict(extra="forbid")
    workload: str  # the reference workload's name (c_src/harness/util.h): gauges of different ones never mix
    per_sample: int  # iterations in one sample
    unit: str  # ns (timing) or the cycles program's counter unit
    samples: list[int]

    def per_iteration(self) -> np.ndarray:
        """The samples per iteration, one per round (what a cell's samples of the same round are paired with)."""
        return np.asarray(self.samples, dtype=float) / self.per_sample


# ------------------------------------------------------------------ what a report shows (lab/findings.py makes these)
@dataclass(frozen=True)
class SectionError:
    """A judged part of a report that could not be computed: the section that shows it becomes an error box
    naming the cause (never a silently missing part)."""

    error: str               # "ZeroDivisionError: ..."
    where: list[str]         # the last frames of the traceback

    @classmethod
    def caught(cls, e: Exception) -> SectionError:
        """The exception being handled, as an error box shows it."""
        return cls(f"{type(e).__name__}: {e}", traceback.format_exc(limit=-1).strip().splitlines()[-3:-1])


@dataclass
class Findings:
    """Stored runs gathered for a report (lab/findings.py): their records and rows, and every figure the report
    shows that is judged rather than arranged (comparisons, steps, ratios with intervals, the drill-down's
    evidence). The report (lab/report) only lays these out; a judged part that failed is a SectionError."""

    run_paths: list                  # the run folders, in the order given
    read: list                       # per run: (RunMeta, [cell records]), as results.read_run gives them
    df: Any                          # the rows (results.load), every (target, machine) a platform of its own
    cells: Any                       # the cells (results.load_cells), likewise
    judged: dict[str, Any] = field(default_factory=dict)  # section -> its judged content, or a SectionError
