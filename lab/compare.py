"""Compare two runs (of one machine or of two), or the toolchains of one run, quantity by quantity.

For every cell and quantity both sides measured: the ratio B/A of the headline estimates with an interval and a
verdict — faster, slower or no change — from the lab's one judge of a change (:func:`judge`): figures with
run-to-run intervals (the trimmed estimator) are judged on those intervals at stats.VERDICT_CONFIDENCE with a
MIN_EFFECT floor (``invoke bench.aa`` measures the false changes of two identical runs and the power on a planted
slowdown); exact counts by a change beyond the noise threshold; older figures (min, median) over their processes.
Ratios are oriented as speeds: above 1 means B is faster (for costs such as cycles per block, A/B).  The geometric
mean over all common quantities summarises.  Used by ``invoke compare``, the report's comparison section and the
compiler-version trends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .models import Status
from . import index, results, stats
from .metrics import HEADLINE, higher_is_better
from .errors import UserError

DEFAULT_METRICS = HEADLINE


@dataclass
class Row:
    item: str  # the cell (or implementation@target with --by toolchain)
    metric: str
    key_size: float
    n_blocks: float | None
    unit: str
    a: float
    b: float
    speedup: float  # > 1: B is faster
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str
    gauge: float = math.nan  # B vs A (speed) of the gauge-relative figures; NaN where a side has no gauge


@dataclass(frozen=True)
class Shift:
    """The machine's speed in run B against run A (one machine, two runs): every cell of a run shares it, none of
    its processes can show it.  Estimated from the cells both runs measured with the same programs (the
    `programs` hash): the median over those cells of each cell's median log cost ratio."""

    log: float  # log(cost in B / cost in A) the machine alone makes: > 0, B's machine was slower
    sd: float  # the estimate's standard error (of a median: 1.2533 sd / sqrt(cells))
    cells: int  # the unchanged cells it rests on

    @property
    def factor(self) -> float:
        """B's costs over A's that the machine alone makes (> 1: B's machine was slower)."""
        return math.exp(self.log)

    @property
    def half_width(self) -> float:
        """The relative half-width of the shift at the verdict's confidence."""
        return stats.z_value(stats.VERDICT_CONFIDENCE) * self.sd

    def words(self) -> str:
        """'2.27 % slower' or '0.50 % faster'."""
        return f"{100 * abs(self.factor - 1):.2f} % " + ("slower" if self.factor > 1 else "faster")


@dataclass
class Table:
    a: str
    b: str
    threshold: float
    rows: list[Row] = field(default_factory=list)
    shift: Shift | None = None  # the machine's shift the verdicts are relative to (None: whole intervals)

    @property
    def geomean(self) -> float:
        ok = [r.speedup for r in self.rows if r.speedup > 0 and math.isfinite(r.speedup)]
        return float(np.exp(np.mean(np.log(ok)))) if ok else math.nan

    def counts(self) -> dict[str, int]:
        out = {"faster": 0, "slower": 0, "no change": 0}
        for r in self.rows:
            out[r.verdict] += 1
        return out


def _select(df: pd.DataFrame, metrics) -> pd.DataFrame:
    sel = df[df.metric.isin(metrics or DEFAULT_METRICS) & (df.status == Status.OK) & df.estimate.notna()]
    if not metrics:  # per-block costs: the NIST Encrypt-128 column
        sel = sel[~sel.metric.str.endswith("per_block") | (sel.n_blocks == 128)]
    return sel


MIN_SHIFT_CELLS = 5  # unchanged cells at least for the machine's shift; fewer: the whole intervals judge


def machine_shift(a: pd.DataFrame, b: pd.DataFrame, metrics=None) -> Shift | None:
    """The machine's shift between two runs of one machine (:class:`Shift`), or None: other machines, runs before
    the programs hash, or fewer than MIN_SHIFT_CELLS cells measured with the same programs in both."""
    if a.empty or b.empty or not {"machine", "programs"} <= set(a.columns) & set(b.columns) \
            or set(a.machine) != set(b.machine):
        return None
    on = ["cell", "metric", "key_size", "n_blocks"]
    sa, sb = _select(a, metrics), _select(b, metrics)
    m = sa.merge(sb, on=on, suffixes=("_a", "_b"))
    m = m[m.programs_a.notna() & (m.programs_a == m.programs_b) & (m.estimator_a == "trimmed")
          & (m.estimator_b == "trimmed")]
    if m.empty:
        return None
    r = np.log(m.estimate_b.astype(float) / m.estimate_a.astype(float))
    cost = pd.Series(np.where([higher_is_better(x) for x in m.metric], -r, r), index=m.index)
    per_cell = cost.groupby(m.cell).median()
    per_cell = per_cell[np.isfinite(per_cell)]
    if len(per_cell) < MIN_SHIFT_CELLS:
        return None
    sd = 1.4826 * float(np.median(np.abs(per_cell - per_cell.median())))  # robust: a changed cell does not widen it
    return Shift(float(per_cell.median()), 1.2533 * sd / math.sqrt(len(per_cell)), int(len(per_cell)))


def compare_frames(a: pd.DataFrame, b: pd.DataFrame, key: str, a_name: str, b_name: str,
                   threshold: float = stats.NOISE_THRESHOLD, metrics=None) -> Table:
    """Quantities of b against the same quantities of a, matched on `key` + metric, key size, n_blocks.  Two runs of
    one machine with cells measured by the same programs in both are judged relative to the machine's shift between
    them (:func:`machine_shift`), on the figures' within-run parts and the shift's own uncertainty: the shift is
    what the run-to-run part of their intervals stands for, and the unchanged cells measure it."""
    shift = machine_shift(a, b, metrics) if key == "cell" else None
    return Table(a_name, b_name, threshold, compare_rows(a, b, key, threshold, metrics, shift=shift), shift)


SIDE_FIELDS = ("estimate", "estimator", "ci_low", "ci_high", "confidence", "within", "per_process")


def side(r, suffix: str = "") -> dict:
    """One figure's fields from a row (of a frame, or of a merge with `suffix` "_a"/"_b")."""
    return {f: (r[f + suffix] if (f + suffix) in r else math.nan) for f in SIDE_FIELDS}


def _estimate(r: dict, same_run: bool, scale: float = 1.0, extra_sd: float = 0.0) -> stats.Estimate:
    """A figure with its interval: the whole run-to-run interval between two runs; within one run only its
    within-run part (the machine's run-to-run noise is common to both sides of the comparison).  With the machine's
    shift between two runs known (`scale`, `extra_sd`: the figure as the other run's machine would have given it,
    and the shift's relative sd), its within-run part widened by the shift's uncertainty."""
    est, conf = float(r["estimate"]) * scale, float(r["confidence"])
    if not same_run:
        return stats.Estimate(est, float(r["ci_low"]), float(r["ci_high"]), "trimmed", 0, conf)
    hw = math.hypot(float(r["within"]), stats.z_value(conf) * extra_sd) * est
    return stats.Estimate(est, est - hw, est + hw, "trimmed", 0, conf)


def judge(a: dict, b: dict, speed: bool, threshold: float = stats.NOISE_THRESHOLD,
          same_run: bool = False, shift: Shift | None = None) -> stats.Speedup:
    """The lab's one verdict on a change of one quantity, B against A (each a figure's fields, :func:`side`), as a
    speedup (> 1: B is faster):

    * exact counts (or a side without per-process values): a change beyond `threshold`;
    * two figures with run-to-run intervals (the trimmed estimator): :func:`stats.compare_estimates` on the two
      intervals (or their within-run parts: ``same_run``, or two runs whose machine's `shift` between them is
      known, B's figure then taken back to A's machine), at the verdict's confidence (stats.VERDICT_CONFIDENCE);
    * older figures (min, median): :func:`stats.speedup` over the per-process values with `threshold`.

    Used by compare, the report's comparison section and the compiler-version trends."""
    exact = a["estimator"] == "exact" or b["estimator"] == "exact"
    if exact or not index.has_values(a["per_process"]) or not index.has_values(b["per_process"]):
        ratio = b["estimate"] / a["estimate"] if speed else a["estimate"] / b["estimate"]
        verdict = stats.exact_verdict(ratio, threshold)
        return stats.Speedup(ratio, ratio, ratio, 0.0 if verdict != "no change" else 1.0, verdict)
    if a["estimator"] == "trimmed" and b["estimator"] == "trimmed":
        if shift is not None and not same_run:  # B's figure on A's machine: costs divided by its factor
            ea, eb = _estimate(a, True), _estimate(b, True, shift.factor if speed else 1 / shift.factor, shift.sd)
        else:
            ea, eb = _estimate(a, same_run), _estimate(b, same_run)
        c = stats.compare_estimates(ea, eb, higher_is_better=speed)
        if speed:
            return stats.Speedup(c.ratio, c.ci_low, c.ci_high, c.p_value, c.verdict)
        return stats.Speedup(1 / c.ratio, 1 / c.ci_high, 1 / c.ci_low, c.p_value, c.verdict)
    # cost ratio B/A from per-process values, estimated by "min" or "median" (older runs)
    return stats.speedup(list(a["per_process"]), list(b["per_process"]), a["estimator"], threshold)


def compare_rows(a: pd.DataFrame, b: pd.DataFrame, key: str, threshold: float, metrics,
                 same_run: bool = False, shift: Shift | None = None) -> list[Row]:
    """One row per quantity both frames measured, sorted by item, metric, key size and blocks per call; figures of
    one run (same_run) are compared on their intervals' within-run parts."""
    on = [key, "metric", "key_size", "n_blocks"]
    sa, sb = _select(a, metrics), _select(b, metrics)
    m = sa.merge(sb, on=on, suffixes=("_a", "_b"))
    rows: list[Row] = []
    for _, r in m.iterrows():
        speed = higher_is_better(r.metric)
        ga, gb = r.get("gauge_relative_a", math.nan), r.get("gauge_relative_b", math.nan)
        gauge = (gb / ga if speed else ga / gb) if ga > 0 and gb > 0 else math.nan  # NaN compares False
        s = judge(side(r, "_a"), side(r, "_b"), speed, threshold, same_run, shift)
        rows.append(Row(r[key], r.metric, r.key_size, r.n_blocks, r.unit_a, r.estimate_a, r.estimate_b, s.speedup,
                        s.ci_low, s.ci_high, s.p_value, s.verdict, gauge))
    rows.sort(key=lambda x: (x.item, x.metric, x.key_size, x.n_blocks))  # n_blocks: NaN except for per-block rows
    return rows


def compare_runs(results_dir: Path, run_a: str, run_b: str | None = None, by: str | None = None,
                 threshold: float = stats.NOISE_THRESHOLD,
                 metrics=None) -> Table:  # pragma: no mutate block (I/O: docs/testing.md)
    if by == "toolchain":
        return compare_toolchains(results.load(run_a, results_dir), threshold, metrics)
    if not run_a:
        raise UserError("compare needs RUN_A (a run id, MACHINE/RUN_ID or a path)")
    da = results.load(run_a, results_dir)
    db = results.load(run_b, results_dir)  # None: the latest run
    name_b = db.run_id.iloc[0] if not db.empty else str(run_b)
    return compare_frames(da, db, "cell", da.run_id.iloc[0] if not da.empty else run_a, name_b, threshold, metrics)


def compare_toolchains(df: pd.DataFrame, threshold: float = stats.NOISE_THRESHOLD, metrics=None,
                       baseline: str | None = None) -> Table:
    """Within one run: every toolchain against the baseline (gcc-O3 when present), implementation by
    implementation on each target."""
    if df.empty:
        raise UserError("the run has no measured cells to compare")
    toolchains = sorted(df.toolchain.unique())
    base = baseline or ("gcc-O3" if "gcc-O3" in toolchains else toolchains[0])
    df = df.assign(item=df.cipher + "/" + df.implementation + "@" + df.target)
    a = df[df.toolchain == base]
    out = Table(base, "other toolchains", threshold)
    for tc in toolchains:
        if tc == base:
            continue
        for r in compare_rows(a, df[df.toolchain == tc], "item", threshold, metrics, same_run=True):
            r.item = f"{r.item} {tc}"
            out.rows.append(r)
    return out


def format_table(t: Table) -> str:  # pragma: no mutate block (I/O: docs/testing.md)
    gauged = [r.gauge for r in t.rows if math.isfinite(r.gauge)]
    head = ["cell", "quantity", f"A ({t.a})", f"B ({t.b})", "B vs A (speed)", "interval", "p", "verdict"] + \
        (["gauge-relative B vs A"] if gauged else [])
    body = []
    for r in t.rows:
        q = r.metric + (f" {int(r.key_size)}" if r.key_size == r.key_size else "") + \
            (f" n={int(r.n_blocks)}" if r.n_blocks == r.n_blocks and r.n_blocks is not None else "")
        body.append([r.item, q, f"{r.a:,.4g}", f"{r.b:,.4g}", f"{r.speedup:.3f}", f"[{r.ci_low:.3f}, {r.ci_high:.3f}]",
                     f"{r.p_value:.3g}", r.verdict] + ([f"{r.gauge:.3f}" if math.isfinite(r.gauge) else "-"]
                                                       if gauged else []))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)] if body else [len(h) for h in head]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    counts = t.counts()
    summary = (f"{len(t.rows)} quantities: {counts['faster']} faster, {counts['slower']} slower, "
               f"{counts['no change']} no change (figures with run-to-run intervals: their {100 * stats.VERDICT_CONFIDENCE:g} % "
               f"interval of the ratio excludes 1 and the change is at least {100 * stats.MIN_EFFECT:g} %; exact counts and "
               f"older figures: beyond ±{100 * t.threshold:.1f} %); "
               f"geometric mean of B's speed relative to A: {t.geomean:.3f}")
    if t.shift is not None:
        summary += (f"\nrelative to the machine's speed between the runs: B's machine {t.shift.words()} "
                    f"(±{100 * t.shift.half_width:.2f} %), from the {t.shift.cells} cells measured with the same "
                    f"programs in both; the verdicts, ratios and geometric mean are on the figures' within-run parts "
                    f"with that shift taken out")
    if gauged:  # beside the headline, not instead of it: the gauge removes the machine's speed, not the code's
        summary += (f"\nrelative to the machine-speed gauge of each side's own processes ({len(gauged)} quantities): "
                    f"geometric mean {float(np.exp(np.mean(np.log(gauged)))):.3f}")
    return "\n".join([line(head), line(["-" * w for w in widths]), *(line(b) for b in body), "", summary])
