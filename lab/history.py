"""History: every quantity over runs, its steps found, and the noise of identical builds as the gauge.

A *series* is one cell (implementation, toolchain, target, machine), one measurement profile and one quantity
(a profile's sampling decides its figures: runs of the quick profile and of an experiment's are two series); its
points are the runs that measured it, ordered by the run's start, by the compiler version, or by the git revision
the run was made from (the revision's place in the repository's history, :func:`with_revision_order`; runs of one
revision by start).  One machine's figures are never drawn on another's series: the machine is part of the key,
and a history is asked for per machine.

Steps are found by the lab's one step detector (lab/steps.py: binary segmentation with a judge of the two sides
of a split).  In a timed series the runs are replicates and the units (``steps.Runs``): each run's median over its
processes, a Mann-Whitney U test over the runs at 5 % over all the splits the search could choose, a change beyond
the series' noise threshold and a bootstrap interval over the runs, with at least RUN_UNITS runs on each side, the
best-separated split judged first.  Exact instruction counts need no statistics (``steps.Counts``): a change
beyond the noise threshold, from one run on.  Each step is reported with its size and interval, the first run
after it, and the revisions between the runs on either side.

Identical builds — the same compiler version, flags and source revision — are the noise gauge: the spread of
their estimates is what a step must exceed.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .models import Status
from . import index, results, stats
from .metrics import SPEEDS, exact_twin
from .steps import RUN_UNITS, Counts, Runs, Step, segment
from .trends import compiler_of, version_label

KEY = ["cipher", "implementation", "toolchain", "target", "machine", "profile", "metric", "key_size", "n_blocks"]
DEFAULT_METRICS = (*SPEEDS, exact_twin("encrypt_speed"))  # lab/metrics.py


def series_name(r) -> str:
    return f"{r.cipher}/{r.implementation}@{r.toolchain}@{r.target}@{r.machine}"


def _profile(profile) -> str | None:
    """A run's measurement profile where it is not the default's (quick), to be named beside its series."""
    return profile if isinstance(profile, str) and profile not in ("", "quick") else None


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """The rows a history draws: measured cells with an estimate."""
    return df[(df.status == Status.OK) & df.estimate.notna()]


def load(results_dir: Path, machine: str | None = None, **where) -> pd.DataFrame:
    """Every run of results_dir (one machine's, if named) through the index, filtered by column values
    (cipher=..., implementation=..., toolchain=..., target=...)."""
    dirs = results.run_dirs(Path(results_dir))
    if machine:
        dirs = [d for d in dirs if d.parent.name == machine]
    df = results.load(dirs, results_dir) if dirs else pd.DataFrame(columns=list(results.COLUMNS))
    if df.empty:
        return df
    df = measured(df)
    for k, v in where.items():
        if v:
            df = df[df[k].isin(v if isinstance(v, (list, tuple)) else [v])]
    return df


def with_revision_order(df: pd.DataFrame, repo: Path) -> pd.DataFrame:
    """df with ``revision_order``: the position of each run's recorded revision in the repository's history
    (``git rev-list --topo-order --reverse --all``, oldest 0; a '+' suffix, uncommitted changes, ignored); NaN
    for a revision the repository does not know (a run made from another clone) or none, drawn after the known
    ones."""
    import subprocess

    try:  # not a repository: git says so on stderr, and no revision is known
        out = subprocess.run(["git", "-C", str(repo), "rev-list", "--topo-order", "--reverse", "--all"],
                             capture_output=True, text=True).stdout.split()
    except OSError:  # no git
        out = []
    rank = {h: i for i, h in enumerate(out)}

    def find(rev) -> float:
        rev = rev.rstrip("+") if isinstance(rev, str) else ""  # none recorded: NaN in a loaded frame
        if len(rev) < 7:
            return math.nan
        if rev in rank:
            return float(rank[rev])
        hit = [i for h, i in rank.items() if h.startswith(rev)]  # an abbreviated hash
        return float(hit[0]) if len(hit) == 1 else math.nan

    ranks = {r: find(r) for r in df.revision.unique()}
    return df.assign(revision_order=df.revision.map(ranks).astype(float))


def _order(g: pd.DataFrame, by: str) -> pd.DataFrame:
    if by == "revision":
        return g.sort_values(["revision_order", "started", "run_id"], na_position="last")
    if by == "compiler":
        v = [compiler_of(t, c) for t, c in zip(g.compiler_version, g.compiler)]
        return g.assign(_x=[x[1] if x else () for x in v]).sort_values(["_x", "started"])
    return g.sort_values(["started", "run_id"])


def _run_values(g: pd.DataFrame):
    """Each run's value in the series' order: its median over its processes (costs, for every timed quantity:
    speeds are converted after); NaN for a run without per-process values."""
    import numpy as np

    return np.array([float(np.median(pp)) if index.has_values(pp) and len(pp) else math.nan for pp in g.per_process])


def change_points(g: pd.DataFrame, threshold: float = stats.NOISE_THRESHOLD,
                  min_size: int | None = None) -> list[tuple]:
    """The steps of one ordered series by the lab's one detector (lab/steps.py: binary segmentation), its runs
    judged as replicates (steps.Runs: each run's median, at least RUN_UNITS a side) or, exact counts, by their
    change (steps.Counts, one run a side): [(index of the first run after the step, change, low, high,
    verdict)], in order.  The comparison's bootstrap is what costs, so a flat series needs none (187 runs of one
    cell: 29 s when every split was compared)."""
    if g.estimator.iloc[0] == "exact":
        judge = Counts(g.estimate.to_numpy(dtype=float), threshold)
    else:
        judge = Runs(_run_values(g), threshold)
    if min_size is not None:
        judge.min_size = min_size
    return [(k, s.change, s.low, s.high, s.verdict) for k, s in segment(judge, len(g))]


def series_threshold(g: pd.DataFrame) -> float:
    """A series' step threshold from its own measured run-to-run noise (stats.noise_threshold over its runs'
    interval widths); the lab's fixed NOISE_THRESHOLD for exact counts and for runs without run-to-run intervals
    (estimators min and median)."""
    timed = g[g.estimator == "trimmed"]
    if timed.empty:
        return stats.NOISE_THRESHOLD
    sig = [stats.sigma(stats.Estimate(r.estimate, r.ci_low, r.ci_high, r.estimator, 0, r.confidence))
           for r in timed.itertuples()]
    return stats.noise_threshold(sig)


def steps(df: pd.DataFrame, metrics=DEFAULT_METRICS, by: str = "date",
          threshold: float | None = None) -> list[Step]:
    """Every series' steps; `threshold` None: each series' own (:func:`series_threshold`)."""
    out: list[Step] = []
    sel = df[df.metric.isin(metrics)]
    sel = sel[~sel.metric.str.endswith("per_block") | (sel.n_blocks == 128)]
    for _, g in sel.groupby(KEY, dropna=False):
        if g.run_id.nunique() < 2:
            continue
        g = _order(g, by).reset_index(drop=True)
        for k, ch, lo, hi, v in change_points(g, series_threshold(g) if threshold is None else threshold):
            r0, r1 = g.iloc[k - 1], g.iloc[k]
            out.append(Step("runs", series_name(r1), r1.metric, r0.run_id, r1.run_id, ch, lo, hi, v,
                            int(r1.key_size) if pd.notna(r1.key_size) else None,
                            int(r1.n_blocks) if pd.notna(r1.n_blocks) else None,
                            revisions=(r0.revision, r1.revision), profile=_profile(r1.profile)))
    return out


def noise_gauge(df: pd.DataFrame, metrics=DEFAULT_METRICS) -> pd.DataFrame:
    """Identical builds (same cell, compiler version, flags and clean revision) measured in several runs: the
    spread of their estimates (max / min - 1) per quantity, what a step must exceed."""
    sel = df[df.metric.isin(metrics) & ~df.revision.fillna("").str.endswith("+") & (df.estimator != "exact")]
    keys = [*KEY, "compiler_version", "cflags", "revision"]
    grouped = sel.groupby(keys, dropna=False)
    g = grouped.estimate.agg(["count", "min", "max"]).reset_index()
    if "gauge_relative" in sel:  # the same spread relative to the machine-speed gauge (NaN without one)
        r = grouped.gauge_relative.agg(["min", "max"]).reset_index(drop=True)
        g["spread_gauge_relative"] = r["max"] / r["min"] - 1
    g = g[g["count"] >= 2]
    g["spread"] = g["max"] / g["min"] - 1
    return g


def gauge_line(gauge: pd.DataFrame) -> str:
    if gauge.empty:
        return "noise gauge: no identical build measured in two runs yet"
    q = gauge.spread.quantile([0.5, 0.9])
    line = (f"noise gauge: {len(gauge)} quantities of identical builds in several runs; spread p50 "
            f"{100 * q.iloc[0]:.2f} %, p90 {100 * q.iloc[1]:.2f} %, max {100 * gauge.spread.max():.2f} %")
    rel = gauge.get("spread_gauge_relative", pd.Series(dtype=float)).dropna()
    if len(rel):
        r = rel.quantile([0.5, 0.9])
        line += (f"; relative to the machine-speed gauge ({len(rel)} of them): p50 {100 * r.iloc[0]:.2f} %, p90 "
                 f"{100 * r.iloc[1]:.2f} %, max {100 * rel.max():.2f} %")
    return line


def format_history(found: list[Step], gauge: pd.DataFrame, threshold: float | None = None) -> str:
    band = (f"noise threshold ±{100 * threshold:.1f} %" if threshold is not None else
            "each series' noise threshold from its run-to-run intervals")
    lines = [s.line() for s in found] or [f"no step in any series ({band})"]
    return "\n".join([*lines, gauge_line(gauge)])


def page_charts(df: pd.DataFrame, found: list[Step], by: str = "date") -> list[dict]:
    """The history page's charts, each as charts.version_trend takes it: per cell, profile and quantity (encryption
    speed, instruction counts at 128 blocks a call), at the cipher's smallest key size, its runs per toolchain
    [(x label, estimate, low, high)] in the series' order (an interval that is not finite drawn as the estimate),
    the first run after each of its steps marked; beside it, where two runs or more have one, the same runs
    relative to the machine-speed gauge."""
    sel = df[df.metric.isin(["encrypt_speed", "insn_encrypt_per_block"])]
    sel = sel[~sel.metric.str.endswith("per_block") | (sel.n_blocks == 128)]
    out = []
    sel = sel.assign(profile=sel.profile.fillna(""))
    for (cipher, impl, target, machine, profile, metric), g in sel.groupby(["cipher", "implementation", "target",
                                                                             "machine", "profile", "metric"]):
        ks = g.key_size.min()  # one key size a chart: the cipher's smallest (NIST's headline size)
        g = g[g.key_size == ks] if pd.notna(ks) else g
        if g.run_id.nunique() < 2:
            continue
        where = f"{machine} [{profile}]" if _profile(profile) else machine
        series, rel, marks = {}, {}, []
        for tc, t in g.groupby("toolchain"):
            t = _order(t, by)
            series[tc] = [(_x_label(r, by), r.estimate,
                           r.ci_low if math.isfinite(r.ci_low) else r.estimate,
                           r.ci_high if math.isfinite(r.ci_high) else r.estimate) for r in t.itertuples()]
            rel[tc] = [(_x_label(r, by), r.gauge_relative, r.gauge_relative_low, r.gauge_relative_high)
                       for r in t.itertuples() if math.isfinite(r.gauge_relative)]
            first = {r.run_id: _x_label(r, by) for r in t.itertuples()}
            name = series_name(t.iloc[0])
            marks += [first[s.first_run] for s in found if s.series == name and s.metric == metric
                      and s.first_run in first and s.key_size == (int(ks) if pd.notna(ks) else None)
                      and _profile(profile) == s.profile]
        size = f", {int(ks)}-bit key" if pd.notna(ks) else ""
        unit = "guest instructions per block (exact)" if metric.startswith("insn") else "Kbit/s"
        title = f"{cipher}/{impl} on {target} @ {where}: {metric}{size}"
        out.append({"series": series, "title": title, "ylabel": unit, "marks": marks})
        rel = {tc: pts for tc, pts in rel.items() if len(pts) >= 2}
        if rel:  # beside the absolute series: the same runs relative to the machine-speed gauge
            out.append({"series": rel, "title": f"{title} relative to the machine-speed gauge",
                        "ylabel": "Kbit/s x gauge ns per iteration", "marks": marks})
    return out


def write_site(df: pd.DataFrame, found: list[Step], gauge: pd.DataFrame, reports_dir: Path,
               by: str = "date") -> Path:  # pragma: no mutate block (I/O: docs/testing.md)
    """reports/history/index.html: each quantity over runs with its interval (:func:`page_charts`), instruction
    counts as their own exact series, the steps and the noise gauge."""
    import jinja2

    from .report import charts

    figs = [charts.version_trend(**c) for c in page_charts(df, found, by)]
    out = Path(reports_dir) / "history"
    out.mkdir(parents=True, exist_ok=True)
    html = jinja2.Template(_PAGE, autoescape=True).render(
        steps=[s.line() for s in found], figs=figs, runs=df.run_id.nunique(),
        machines=sorted(df.machine.unique()), gauge=gauge_line(gauge), units=RUN_UNITS,
        threshold=f"z({100 * stats.VERDICT_CONFIDENCE:g} %) x sqrt 2 x the median relative sd, at least "
                  f"{100 * stats.MIN_EFFECT:g} %")
    (out / "index.html").write_text(html)
    return out / "index.html"


def _x_label(r, by: str) -> str:
    if by == "revision":  # a run without one (NaN in a loaded frame) is "?", not a crash of the page
        return r.revision[:10] if isinstance(r.revision, str) and r.revision else "?"
    if by == "date":
        return r.run_id[:15]
    found = compiler_of(r.compiler_version, r.compiler)  # "gcc 12.2.0", not "gcc" for every gcc version
    return version_label(*found) if found else str(r.compiler_version or "?")


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>cipherlab history</title>
<style>body{font:14px sans-serif;margin:2em;max-width:1100px} li{margin:.2em 0}</style></head><body>
<h1>History</h1>
<p>{{ runs }} runs on {{ machines|join(', ') }}. Each series is one cell on one machine in one measurement
profile; steps are change points found by binary segmentation with the lab's comparison: in a timed series each
run's median over its processes is one unit, and a step needs {{ units }} runs on each side, a Mann-Whitney U test
over the runs significant at 5 % over the splits its segment offered, and a change beyond the series' noise
threshold (from its runs' run-to-run intervals: {{ threshold }}; ±3 % for runs without them); exact instruction
counts need only a change beyond 3 %.  A dashed line marks the first run after a step;
a chart shows the cipher's smallest key size (the list names every step's).</p>
<p>{{ gauge }}</p>
<h2>Steps</h2>
{% if steps %}<ul>{% for s in steps %}<li>{{ s }}</li>{% endfor %}</ul>
{% else %}<p>No step in any series.</p>{% endif %}
<h2>Series</h2>
{% for f in figs %}{{ f|safe }}{% endfor %}
</body></html>
"""

__all__ = ["load", "with_revision_order", "steps", "change_points", "noise_gauge", "format_history", "page_charts",
           "write_site", "Step"]
