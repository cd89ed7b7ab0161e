"""Steps: the lab's one step detector and the one type it reports.

A *series* is an ordered list of points — compiler versions (lab/trends.py: ``compare --by compiler``, the
report's "Compiler versions") or runs (lab/history.py: ``history``, ``history --by compiler``).  Its steps are
found by **binary segmentation** (:func:`segment`, the method ruptures calls Binseg) with a pluggable judge of
the two sides of a split (:class:`Judge`): in a segment the judge names the splits whose sides differ beyond the
noise threshold (below it the verdict can only be "no change"), in the order it wants them tried; the first it
calls "faster" or "slower" is the segment's change point, and both sides are searched again.  A split with
fewer than the judge's ``min_size`` points on a side ends the segment's search when its turn comes.

The judges, by what a point is:

* :class:`Runs` — runs of one build, replicates: a side is the pooled runs' values (each run's median over its
  processes), compared by ``stats.speedup`` with a Mann-Whitney U test at 5 % over all the splits the search
  could choose and a bootstrap interval; at least RUN_UNITS runs a side; the best-separated split first
  (:func:`separations`).
* :class:`Counts` — exact instruction counts: a change beyond the threshold, from one point a side.
* :class:`Neighbours` — points that are different programs (compiler versions): a split is judged on the two
  versions either side of it alone (trends pass ``compare.judge`` of the two figures).  Pooling several versions
  on a side would make a gradual drift, each version within the noise of the last, a "step".

Every step is a :class:`Step` and says itself in one line."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Literal, Protocol

import numpy as np

from . import stats
from .metrics import label

# Two segments of a timed series are compared on their runs' values, each run's median over its processes, with
# the median's verdict, whatever the runs' headline estimator: the best case (min) of many runs gets better with
# their number alone, so a segment of fifty runs came out "faster" than one of one run by the spread of the
# processes' minima.  A step needs RUN_UNITS runs on each side: on the lab's VM two runs of one build differ by the
# machine's speed (2-7 % at one block per call), which a test over pooled processes takes for a difference and one
# or two runs cannot tell from a step; the U test's level is 5 % over all the splits of the segment (Runs.judge).
# On 187 runs of five Rijndael cells (gcc-O3, quick profile and experiments'): 792 "steps" with the pooled best
# case and one run a side, 635 with the pooled median, 33 this way.  Exact counts need one run on each side.
SEGMENT_ESTIMATOR = "median"
RUN_UNITS = 3


@dataclass(frozen=True)
class Split:
    """A judged split: the speed of the points after it over those before (e.g. -0.09: 9 % slower), its
    interval, and the verdict (faster, slower, no change)."""

    change: float
    low: float
    high: float
    verdict: str


class Judge(Protocol):
    min_size: int  # points a side a split needs

    def candidates(self, lo: int, hi: int) -> list[int]:
        """The splits k of points[lo:hi] (lo < k < hi) whose sides differ beyond the noise threshold, in the
        order they are to be judged."""

    def judge(self, lo: int, k: int, hi: int, splits: int) -> Split:
        """points[k:hi] against points[lo:k]; `splits`: how many the search could have chosen in the segment."""


def segment(judge: Judge, n: int) -> list[tuple[int, Split]]:
    """Binary segmentation of a series of n points: [(index of the first point after a step, its split)], in
    order.  The judge's candidates of each segment are judged in turn; the first called is the segment's change
    point and its two sides are searched again.  The likeliest split leaving too few points on a side ends the
    segment's search: no other split stands in for it (two slow last runs must not make a step one run early)."""
    found: dict[int, Split] = {}
    size = judge.min_size

    def search(lo: int, hi: int) -> None:  # the segment points[lo:hi]
        for k in judge.candidates(lo, hi):
            if min(k - lo, hi - k) < size:
                return
            s = judge.judge(lo, k, hi, splits=hi - lo - 2 * size + 1)
            if s.verdict != "no change":
                found[k] = s
                search(lo, k)
                search(k, hi)
                return

    search(0, n)
    return _between_neighbours(judge, sorted(found.items()), n)


def _between_neighbours(judge: Judge, found: list[tuple[int, Split]], n: int) -> list[tuple[int, Split]]:
    """Each step judged again between its neighbouring change points: found in a segment that still held another
    step, its change was diluted by it (100, 100, 80, 80, 100, 100: the first split sees 100 against a median of
    90, +11 %, where the step is +25 %).  A step the second judgement does not confirm keeps its first."""
    bounds = [0, *(k for k, _ in found), n]
    out = []
    for i, (k, first) in enumerate(found):
        lo, hi = bounds[i], bounds[i + 2]
        again = judge.judge(lo, k, hi, splits=hi - lo - 2 * judge.min_size + 1)
        out.append((k, again if again.verdict == first.verdict else first))
    return out


def separations(x) -> np.ndarray:
    """For every split j of x (x[:j] against x[j:], j = 0 .. len(x)), |z| of the Mann-Whitney U statistic of the
    two sides' finite values (normal approximation; ties get the average rank, i.e. count half): from one ranking
    and its prefix sums, O(n log n) for all the splits.  A median or a best case is the same for every split of
    a plateau; the separation peaks at the step."""
    from scipy.stats import rankdata

    x = np.asarray(x)
    finite = np.isfinite(x)
    ranks = np.zeros(x.size)
    ranks[finite] = rankdata(x[finite])
    n = int(finite.sum())
    n1 = np.concatenate([[0], np.cumsum(finite)])  # finite values left of each split
    r1 = np.concatenate([[0.0], np.cumsum(ranks)])  # their rank sum
    n2 = n - n1
    u = r1 - n1 * (n1 + 1) / 2
    sd = np.sqrt(n1 * n2 * (n + 1) / 12)
    return np.abs(u - n1 * n2 / 2) / np.where(sd > 0, sd, 1)  # sd is 0 only with a side empty: u is 0 there


def _best_separated(values: np.ndarray, lo: int, hi: int, change: Callable[[int], float | None]) -> list[int]:
    """The splits k of values[lo:hi] with a change beyond the threshold (`change(k)`: |speed change|, None when
    within it or not judgeable), the best-separated first (the largest separation), then the larger change."""
    z = separations(values[lo:hi])
    out = []
    for k in range(lo + 1, hi):
        c = change(k)
        if c is not None:
            out.append((float(z[k - lo]), c, k))
    return [k for *_, k in sorted(out, key=lambda c: (-c[0], -c[1], c[2]))]


@dataclass
class Runs:
    """Timed runs of one series: `values` each run's median cost over its processes (NaN: a run without them)."""

    values: np.ndarray
    threshold: float = stats.NOISE_THRESHOLD
    min_size: int = RUN_UNITS

    def sides(self, lo: int, k: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """The runs' values either side of k (the runs are the units, so that the machine's speed from one run
        to the next is part of the noise)."""
        a, b = self.values[lo:k], self.values[k:hi]
        return a[np.isfinite(a)], b[np.isfinite(b)]

    def _change(self, k: int, lo: int, hi: int) -> float | None:
        left, right = self.sides(lo, k, hi)
        if left.size == 0 or right.size == 0:
            return None
        ea, eb = stats.point(left, SEGMENT_ESTIMATOR), stats.point(right, SEGMENT_ESTIMATOR)
        if not ea > 0 or not eb > 0:
            return None
        return abs(ea / eb - 1) if abs(eb / ea - 1) > self.threshold else None  # the comparison judges costs

    def candidates(self, lo: int, hi: int) -> list[int]:
        return _best_separated(self.values, lo, hi, lambda k: self._change(k, lo, hi))

    def judge(self, lo: int, k: int, hi: int, splits: int) -> Split:
        """The U test's level is 5 % over all the `splits` the search could have chosen (Bonferroni): the
        best-separated of many splits of a flat series is always separated somewhat.  A split the search judges
        has min_size points a side, so `splits` is at least 1."""
        s = stats.speedup(*self.sides(lo, k, hi), SEGMENT_ESTIMATOR, self.threshold, alpha=0.05 / splits)
        return Split(s.speedup - 1, s.ci_low - 1, s.ci_high - 1, s.verdict)


@dataclass
class Counts:
    """Exact counts (costs) of one series: a change beyond the threshold, from one point a side."""

    values: np.ndarray
    threshold: float = stats.NOISE_THRESHOLD
    min_size: int = 1

    def _speedup(self, lo: int, k: int, hi: int) -> float:
        """The speed of points[k:hi] over points[lo:k]: their medians' ratio turned over."""
        return float(np.median(self.values[lo:k])) / float(np.median(self.values[k:hi]))

    def candidates(self, lo: int, hi: int) -> list[int]:
        def change(k: int) -> float | None:
            sp = self._speedup(lo, k, hi)
            return abs(sp - 1) if stats.exact_verdict(sp, self.threshold) != "no change" else None

        return _best_separated(self.values, lo, hi, change)

    def judge(self, lo: int, k: int, hi: int, splits: int) -> Split:
        sp = self._speedup(lo, k, hi)
        return Split(sp - 1, sp - 1, sp - 1, stats.exact_verdict(sp, self.threshold))


@dataclass
class Neighbours:
    """Points that are different programs (compiler versions): a split is judged on its two neighbouring points,
    `pair(i, j)` (point j against point i), each pair once."""

    pair: Callable[[int, int], Split]
    min_size: int = 1
    _judged: dict[int, Split] = field(default_factory=dict, init=False, repr=False)

    def _at(self, k: int) -> Split:
        if k not in self._judged:
            self._judged[k] = self.pair(k - 1, k)
        return self._judged[k]

    def judge(self, lo: int, k: int, hi: int, splits: int) -> Split:
        return self._at(k)  # the segment does not matter: only the two points either side

    def candidates(self, lo: int, hi: int) -> list[int]:
        """Every split whose neighbours differ, in order: each is judged on its own pair (and judged here), so
        the search finds every one of them whatever the order."""
        return [k for k in range(lo + 1, hi) if self._at(k).verdict != "no change"]


@dataclass
class Step:
    """A step the detector found in a series, as trends and history report it: between which points, its change
    of speed with the interval, the verdict, and where the series is."""

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


__all__ = ["Step", "Split", "Judge", "segment", "separations", "Runs", "Counts", "Neighbours",
           "RUN_UNITS", "SEGMENT_ESTIMATOR"]
