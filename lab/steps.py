"""A step: a change of one quantity of one series between two neighbouring points, the one type the lab's
step finders return — between compiler versions (lab/trends.py, ``compare --by compiler`` and the report's
"Compiler versions") and between runs (lab/history.py, ``history``).  Both judge each candidate with the lab's
one judge of a change (compare.judge for neighbouring versions; the same intervals' noise for history's
thresholds) and say it in one line."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from .metrics import label


@dataclass
class Step:
    kind: Literal["versions", "runs"]  # what the points are: compiler versions or runs
    series: str
    metric: str
    before: str  # the last point before the step: a version label ("gcc 12.2.0") or a run id
    after: str  # the first point after it
    change: float  # relative change of speed (costs and counts: of their reciprocal), e.g. -0.11
    ci_low: float
    ci_high: float
    verdict: str  # faster or slower
    key_size: float | None = None
    n_blocks: int | None = None  # blocks per call (Encrypt-n counts)
    # versions: where the series is and what the exact counts say at the same versions
    cipher: str = ""
    display: str = ""
    implementation: str = ""
    target: str = ""
    family: str = ""
    exact_change: float | None = None  # the guest instructions' change of speed at the same versions
    # runs: the revisions of the last run before and the first after, the series' profile where not quick
    revisions: tuple[str, str] = ("", "")
    profile: str | None = None

    @property
    def first_run(self) -> str:
        return self.after

    @property
    def before_run(self) -> str:
        return self.before

    @property
    def confirmed(self) -> bool | None:
        """Versions: do the exact counts move the same way (None where not counted)."""
        if self.exact_change is None or not math.isfinite(self.exact_change):
            return None
        return (self.exact_change < 0) == (self.change < 0) and abs(self.exact_change) > 1e-9

    def quantity(self) -> str:
        """The metric with its key size and blocks per call: a cell's 128- and 256-bit series are two series."""
        return self.metric + "".join(f" {word}" for v, word in (
            (self.key_size, f"{self.key_size}-bit key"), (self.n_blocks, f"n={self.n_blocks}"))
            if v is not None and v == v)

    def line(self) -> str:
        if self.kind == "runs":
            revs = f"; revisions {self.revisions[0] or '?'}..{self.revisions[1] or '?'}" \
                if self.revisions[0] != self.revisions[1] else ""
            return (f"{self.series} {self.quantity()}: {self.verdict} {100 * self.change:+.1f} % "
                    f"[{100 * self.ci_low:+.1f}, {100 * self.ci_high:+.1f}] from run {self.after}{revs}"
                    + (f" (profile {self.profile})" if self.profile else ""))
        s = (f"{self.before} → {self.after.split(' ', 1)[1]}: {self.display} {label(self.metric)} "
             f"{100 * self.change:+.0f} % [{100 * self.ci_low:+.0f}, {100 * self.ci_high:+.0f}] "
             f"({self.implementation} on {self.target})")
        if self.exact_change is not None:
            s += f"; guest instructions {100 * self.exact_change:+.1f} %" + \
                 (" (confirms)" if self.confirmed else " (does not confirm)")
        return s


__all__ = ["Step"]
