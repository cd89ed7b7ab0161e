"""Compiler-version trends: speed against compiler version per family, and the significant steps between
neighbouring versions, judged by the lab's one verdict on a change (``compare.judge``: the figures' run-to-run
intervals, or the noise threshold for exact counts and older figures).

A *series* is one implementation on one target, one quantity, one compiler family and one set of flags (the
flags must be equal for a version change to be the only change): its points are the versions measured, in
version order.  A *step* is a pair of neighbouring versions whose comparison is "faster" or "slower", found by
the lab's one step detector (lab/steps.py: binary segmentation, each split judged on its two versions).  Guest
instruction counts are exact: a step there needs no statistics (a change beyond the threshold), and a timing
step is reported with the instruction counts' change at the same versions, which confirms it when it points the
same way.  Used by ``invoke compare RUN --by compiler`` and the report's "Compiler versions" section.
"""

from __future__ import annotations

import itertools
import re

import pandas as pd

from .models import Status
from . import stats
from .metrics import SPEEDS, exact_twin, higher_is_better
from .steps import Neighbours, Split, Step, segment
from .compare import judge, side

TIMED = SPEEDS
EXACT = {m: exact_twin(m) for m in TIMED}  # each speed's guest-instruction count
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def compiler_of(version_text: str | None, compiler: str | None = None) -> tuple[str, tuple[int, ...]] | None:
    """(family, version) from the first line of a compiler's --version ("gcc (Debian 12.2.0-14) 12.2.0" ->
    ("gcc", (12, 2, 0)); "Debian clang version 16.0.6 (15)" -> ("clang", (16, 0, 6))); None when unknown."""
    text = version_text or ""
    low = f"{text} {compiler or ''}".lower()
    family = "clang" if "clang" in low else "gcc" if ("gcc" in low or "g++" in low) else None
    found = _VERSION.findall(text)
    if family is None or not found:
        return None
    # gcc ends with its version, after the distribution's package version; clang starts with it
    major, minor, patch = found[-1] if family == "gcc" else found[0]
    return family, tuple(int(x) for x in (major, minor, patch or 0))


def version_label(family: str, version: tuple[int, ...]) -> str:
    """"gcc 12.2.0": the whole version, so that a step between minor releases (12.2.0 -> 12.3.0) is told apart."""
    return f"{family} {'.'.join(str(x) for x in version)}"


def points(df: pd.DataFrame, metrics=TIMED, key_size: int = 128) -> pd.DataFrame:
    """The measured rows that belong to a version series, with family, version and series columns; only series
    with two versions or more."""
    sel = df[df.metric.isin(list(metrics) + [EXACT[m] for m in metrics if m in EXACT]) & (df.status == Status.OK)
             & df.estimate.notna() & ((df.key_size == key_size) | df.key_size.isna())].copy()
    sel = sel[~sel.metric.str.endswith("per_block") | (sel.n_blocks == 128)]
    if sel.empty:  # the columns below cannot be built from no rows (a float column has no string "+")
        return sel.assign(family=[], version=[], series=[])
    parsed = [compiler_of(v, c) for v, c in zip(sel.compiler_version, sel.compiler)]
    sel["family"] = [p[0] if p else None for p in parsed]
    sel["version"] = [p[1] if p else None for p in parsed]
    sel = sel[sel.family.notna()]
    # the flags without the compiler's own name: gcc-12 and gcc-13 builds with -O3 are one series
    sel["series"] = sel.cipher + "/" + sel.implementation + "@" + sel.target + " " + sel.family + " " + \
        sel.cflags.fillna("")
    n = sel.groupby(["series", "metric"]).version.transform(lambda v: len(set(v)))
    return sel[n >= 2]


def steps(df: pd.DataFrame, metrics=TIMED, threshold: float = stats.NOISE_THRESHOLD, key_size: int = 128) \
        -> list[Step]:
    """Every significant step between neighbouring versions of every series, in series then version order."""
    pts = points(df, metrics, key_size)
    out: list[Step] = []
    exact_metrics = [EXACT[m] for m in metrics if m in EXACT]
    for (series, metric), g in pts[pts.metric.isin([*metrics, *exact_metrics])].groupby(["series", "metric"]):
        emulated = bool(g.emulated.astype(bool).any())
        if (metric in exact_metrics) != emulated:
            continue  # hardware: timed steps (counts confirm them); emulated: only the exact counts mean anything
        out += _series_steps(pts, g, metric, threshold)
    return out


def _series_steps(pts: pd.DataFrame, g: pd.DataFrame, metric: str, threshold: float) -> list[Step]:
    """One series' steps by the lab's one detector (lab/steps.py), its points the versions (a version's rows
    together) and each split judged on the two versions either side of it (steps.Neighbours): a version is
    another program, and versions pooled on a side would make a drift of small changes a step."""
    g = g.sort_values("version", kind="stable")  # versions are tuples: (9, 5, 0) < (10, 2, 1)
    rows = list(g.itertuples())
    versions = [list(vs) for _, vs in itertools.groupby(rows, key=lambda r: tuple(r.version))]

    def pair(i: int, j: int) -> Split:
        # the lab's one verdict (compare.judge): counts are costs and exact, a change beyond the threshold;
        # figures with run-to-run intervals on those intervals; older figures on their processes
        # two versions measured in one run share its machine speed: their within-run parts judge them
        a, b = versions[i][-1], versions[j][0]
        s = judge(side(a._asdict()), side(b._asdict()), speed=higher_is_better(metric), threshold=threshold,
                  same_run=a.run_id == b.run_id)
        return Split(s.speedup - 1, s.ci_low - 1, s.ci_high - 1, s.verdict)

    out = []
    for k, s in segment(Neighbours(pair), len(versions)):
        a, b = versions[k - 1][-1], versions[k][0]
        # a timed step: what the exact counts say at the same versions (an exact one has no twin: None)
        exact = _exact_change(pts, a, b, EXACT.get(metric))
        out.append(Step("versions", a.series, metric, version_label(a.family, a.version),
                        version_label(b.family, b.version), s.change, s.low, s.high, s.verdict, a.key_size,
                        cipher=a.cipher, display=a.display, implementation=a.implementation, target=a.target,
                        family=a.family, exact_change=exact))
    return out


def _exact_change(pts: pd.DataFrame, a, b, metric: str | None) -> float | None:
    """The change of speed the guest-instruction counts show between a's and b's builds (counts are costs)."""
    if metric is None:
        return None
    sel = pts[(pts.metric == metric) & (pts.series == a.series)]
    ca = sel[sel.version.map(tuple) == tuple(a.version)].estimate
    cb = sel[sel.version.map(tuple) == tuple(b.version)].estimate
    if ca.empty or cb.empty or not cb.iloc[0] > 0:
        return None
    return float(ca.iloc[0] / cb.iloc[0] - 1)


def format_steps(found: list[Step], threshold: float = stats.NOISE_THRESHOLD) -> str:
    if not found:
        return (f"no significant step between neighbouring compiler versions (noise threshold ±"
                f"{100 * threshold:.1f} %)")
    return "\n".join(s.line() for s in found) + \
        f"\n\n{len(found)} significant steps (noise threshold ±{100 * threshold:.1f} %)"


__all__ = ["compiler_of", "points", "steps", "Step", "format_steps", "version_label"]  # Step: lab/steps.py
