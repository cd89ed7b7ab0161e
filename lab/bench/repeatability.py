"""invoke bench.repeatability: the same matrix measured twice, back to back; how far apart are the numbers?

Per kind of quantity (encryption, decryption and key-setup speed, EKey/DKey, Encrypt-n/Decrypt-n per
block) it prints the |relative difference| of the headline estimate between the two runs at the 50th and
90th percentile and its maximum, and Kendall's tau between the two runs' rankings of each platform by
encryption speed.  From the same stored raw samples it also re-estimates every quantity with the other
estimators (NIST's 3-sigma mean, the median of the per-process minima, their 25th percentile), so the
choice of the headline estimator rests on data (docs/measurement.md).  Goals on the lab's 2-core VM:
p90 <= 3 %, max <= 10 %, tau >= 0.95.  The same differences of ``gauge_relative`` (each quantity relative to the
machine-speed gauge measured in its own processes) are printed beside them; their goal (issue 24 §5):
p90 <= 0.5 %, max <= 2 %.  And whether each figure's 95 % interval holds the differences (``coverage``: the
share of quantities whose difference lies beyond the two runs' half-widths combined; about 5 % when the intervals
are honest).  The figures are printed and stored as JSON.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats as sps
from scipy.stats import kendalltau

from ..models import Status
from .. import metrics, results, stats
from ..quantities import GAUGE_STATISTIC, gauge_relative_cost
from ..config import Lab, shown
from . import header, store
from ..run import RunRequest, run
from ..quantities import Quantity

KINDS = {
    "encrypt speed": ("encrypt_speed",), "decrypt speed": ("decrypt_speed",), "key setup speed": ("key_setup_speed",),
    "EKey/DKey": ("ekey", "dkey"), "Encrypt-n/Decrypt-n": ("encrypt_per_block", "decrypt_per_block"),
}
KIND = {metric: kind for kind, ms in KINDS.items() for metric in ms}  # each metric's kind
GOALS = {"p90": 0.03, "max": 0.10, "tau": 0.95}
GAUGE_GOALS = {"p90": 0.005, "max": 0.02}
DISTURBED = 0.03  # a process whose gauge is this much slower than the run's clean gauge level: its neighbours
MODE_GAP = 0.01  # groups of per-process ratios this far apart are modes
FEW_ROUNDS = 5  # a per-process median over fewer rounds than this (on average) rests on a few samples
CAUSES = {  # what moves a gauge-relative figure between two runs, in the order they are tested (anatomy())
    "counter resolution": "one counter step is >= 1 % of the cost: the figure moves in steps",
    "disturbed processes": f"some process's gauge ran >= {100 * DISTURBED:.0f} % slower than the run's clean level "
                           "(a neighbour); its cost was disturbed by another amount",
    "few samples": f"the processes measured the quantity in fewer than {FEW_ROUNDS} rounds on average (calls much "
                   "longer than a sample: Encrypt-32768 of a slow cipher), so each median over rounds rests on a few",
    "layout modes": "the per-process ratios fall in groups >= 1 % apart (a state a process keeps, which the gauge does "
                    "not share: its layout, its pages; they stay with address randomisation off); the groups' shares "
                    "differ between the runs, and the figure over processes with them",
    "other": "none of these: interference the gauge did not see, or too few processes",
}
ALTERNATIVES = {
    "nist (3-sd mean of samples)": lambda row: row.value,
    "median of per-process minima": lambda row: _per_process(row, np.median),
    "25th percentile of minima": lambda row: _per_process(row, lambda a: np.quantile(a, 0.25)),
    "min of minima (headline)": lambda row: row.estimate,
}

# the gauge-relative figure computed other ways from the same raw samples (each on costs; a quantity's two runs'
# ratio): which statistic holds on the machine at hand (docs/measurement.md, "On an AMD EPYC VM")
GAUGE_ALTERNATIVES = {
    "paired by round, trimmed mean (the lab's)": lambda q: gauge_relative_cost(q, 0.95).estimate,
    "paired by round, minimum over processes": lambda q: min(q.paired),
    "each process's two minima, trimmed mean": lambda q: float(sps.trim_mean(
        np.divide(q.per_process, q.gauge), stats.TRIM)),
    "floors: min of minima / gauge's minimum": lambda q: min(q.per_process) / min(q.gauge),
    "absolute: min of minima (the headline)": lambda q: min(q.per_process),
}


def _per_process(row, fn) -> float:
    a = np.asarray(row.per_process, dtype=float)
    v = float(fn(a))
    return row.estimate * (np.min(a) / v) if metrics.higher_is_better(row.metric) else v  # speeds: work / cost


KEYS = ["cell", "metric", "key_size", "n_blocks"]


def _merged(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The quantities measured in both runs, one row each, the two runs' columns suffixed _a and _b."""
    sel = lambda d: d[(d.status == Status.OK) & d.estimator.isin(list(metrics.TIMED_ESTIMATORS)) & (d.metric != "null_overhead")]  # noqa: E731
    return sel(a).merge(sel(b), on=KEYS, suffixes=("_a", "_b"))


def differences(a: pd.DataFrame, b: pd.DataFrame, value=lambda r: r.estimate) -> pd.DataFrame:
    """|b/a - 1| per common quantity, with its kind."""
    rows = []
    for _, r in _merged(a, b).iterrows():
        ra = pd.Series({k[:-2]: v for k, v in r.items() if k.endswith("_a")} | {k: r[k] for k in KEYS})
        rb = pd.Series({k[:-2]: v for k, v in r.items() if k.endswith("_b")} | {k: r[k] for k in KEYS})
        va, vb = value(ra), value(rb)
        if not (np.isfinite(va) and np.isfinite(vb)) or va == 0:
            continue
        kind = KIND.get(r.metric)
        if kind:
            rows.append({"kind": kind, "cell": r.cell, "metric": r.metric, "key_size": r.key_size,
                         "n_blocks": r.n_blocks, "a": va, "b": vb, "diff": abs(vb / va - 1)})
    return pd.DataFrame(rows)


INTERVALS = {"headline": ("estimate", "ci_low", "ci_high"),
             "gauge-relative": ("gauge_relative", "gauge_relative_low", "gauge_relative_high")}


def coverage(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """Whether each figure's 95 % interval is as wide as the two runs' differences say it should be: per figure
    (INTERVALS), over the quantities of KINDS with an interval in both runs, z = (b - a) / (the two half-widths
    combined, sqrt(hw_a^2 + hw_b^2), over 1.96).  Honest intervals give about 5 % of |z| beyond 1.96 and a standard
    deviation of z near 1; a difference between two zero-width intervals is beyond (infinite z).  With the median
    relative half-width, to read beside the differences' percentiles."""
    m = _merged(a, b)
    m = m[m.metric.isin(list(KIND))]
    out = {}
    for name, (col, low, high) in INTERVALS.items():
        va, vb = m[f"{col}_a"].to_numpy(float), m[f"{col}_b"].to_numpy(float)
        hwa = (m[f"{high}_a"] - m[f"{low}_a"]).to_numpy(float) / 2
        hwb = (m[f"{high}_b"] - m[f"{low}_b"]).to_numpy(float) / 2
        ok = np.isfinite(va) & np.isfinite(vb) & np.isfinite(hwa) & np.isfinite(hwb) & (va > 0)
        if not ok.any():
            continue
        diff, se = (vb - va)[ok], np.hypot(hwa, hwb)[ok] / 1.96
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(diff == 0, 0.0, diff / se)
        finite = z[np.isfinite(z)]
        out[name] = {"n": int(ok.sum()), "beyond": float(np.mean(np.abs(z) > 1.96)),
                     "sd": float(finite.std()) if finite.size > 1 else math.nan,
                     "half_width_p50": float(np.median(hwa[ok] / va[ok]))}
    return out


def summary(d: pd.DataFrame) -> dict:
    out = {}
    for kind, g in [*d.groupby("kind"), ("all", d)]:
        w = g.loc[g["diff"].idxmax()]
        out[kind] = {"n": int(len(g)), "p50": float(g["diff"].quantile(0.5)), "p90": float(g["diff"].quantile(0.9)),
                     "max": float(g["diff"].max()),
                     "worst": {"cell": w.cell, "metric": w.metric, "key_size": int(w.key_size),
                               "n_blocks": None if pd.isna(w.n_blocks) else int(w.n_blocks)}}
    return out


def taus(a: pd.DataFrame, b: pd.DataFrame) -> list[dict]:
    """Kendall's tau between the two runs' rankings of portable implementations by Enc128 per platform."""
    out = []
    sel = lambda d: d[(d.metric == "encrypt_speed") & (d.status == Status.OK) & (d.impl_class == "portable")]  # noqa: E731
    from ..results import at_key_size

    ea, eb = at_key_size(sel(a), 128), at_key_size(sel(b), 128)
    for (tc, tg), g in ea.groupby(["toolchain", "target"]):
        h = eb[(eb.toolchain == tc) & (eb.target == tg)]
        m = g.merge(h, on="cell", suffixes=("_a", "_b"))
        if len(m) >= 3:
            out.append({"toolchain": tc, "target": tg, "n": int(len(m)),
                        "tau": float(kendalltau(m.estimate_a, m.estimate_b).statistic)})
    return out


def bench(lab: Lab, ciphers=None, toolchains=None, implementations=None, targets=None, profile=None,
          out: Path | None = None, say=print, results_dir: Path | None = None, runs: list[Path] | None = None) -> dict:
    """Two runs measured back to back and compared; given `runs` (two stored run folders), those two are compared
    again without measuring (the estimators may have changed since)."""
    walls = []
    results_dir = Path(results_dir or lab.root / "results")
    if runs:
        say(f"bench.repeatability: judging the stored runs {runs[0].name} and {runs[1].name} again")
    runs = list(runs or [])
    for tag in () if runs else ("repeat-a", "repeat-b"):
        t0 = time.monotonic()
        say(f"bench.repeatability: run {tag[-1].upper()} ...")
        o = run(lab, RunRequest(ciphers=ciphers, toolchains=toolchains, implementations=implementations,
                                targets=targets, profile=profile, icount=False, tag=tag,
                                results_dir=results_dir, build_dir=lab.root / "build"))
        walls.append(time.monotonic() - t0)
        runs.append(o.run_dir)
    a, b = results.load(runs[0]), results.load(runs[1])
    d = differences(a, b)
    doc = {**header("repeatability"), "runs": [shown(r, results_dir.parent) for r in runs],
           "wall_seconds": [round(w, 1) for w in walls] or None, "options": {"ciphers": ciphers, "toolchains": toolchains,
                                                                     "implementations": implementations,
                                                                     "profile": profile or "quick"},
           "headline": summary(d), "taus": taus(a, b), "goals": GOALS,
           "gauge_relative": gauge_summary(a, b, runs), "gauge_statistic": GAUGE_STATISTIC, "gauge_goals": GAUGE_GOALS,
           "estimators": {name: summary(differences(a, b, fn))["all"] for name, fn in ALTERNATIVES.items()},
           "intervals": coverage(a, b)}
    say(format_summary(doc))
    store(lab.root, doc, "repeatability", out, say)
    return doc


def gauge_summary(a: pd.DataFrame, b: pd.DataFrame, runs: list[Path] | None = None) -> dict | None:
    """The differences of the gauge-relative figures, and of the absolute ones over the same quantities (those
    that have a gauge in both runs), so that the two are compared on equal terms; None without a gauge.  Given
    the two run folders, also the anatomy of the differences above the goal's p90 and the other gauge statistics,
    both from the runs' raw samples (read once)."""
    rel = differences(a, b, lambda r: r.gauge_relative)
    if rel.empty:
        return None
    absolute = differences(a, b).merge(rel[KEYS], on=KEYS)
    out = {"relative": summary(rel), "absolute_same_quantities": summary(absolute)}
    if runs:
        qa, qb = gauged(runs[0]), gauged(runs[1])
        out |= {"anatomy": anatomy(qa, qb, rel), "alternatives": alternatives(qa, qb, rel)}
    return out


def _common(rel: pd.DataFrame, a: dict[tuple, Quantity], b: dict[tuple, Quantity]):
    """(row, key) of each quantity of `rel` whose raw samples both runs have (`gauged`)."""
    for r in rel.itertuples():
        key = (r.cell, r.metric, int(r.key_size), None if pd.isna(r.n_blocks) else int(r.n_blocks))
        if key in a and key in b:
            yield r, key


def alternatives(a: dict[tuple, Quantity], b: dict[tuple, Quantity], rel: pd.DataFrame) -> dict:
    """p50 / p90 / max of the two runs' differences, over the quantities of `rel`, of each GAUGE_ALTERNATIVES
    statistic computed from the runs' raw samples (`gauged`)."""
    keys = [key for _, key in _common(rel, a, b)]
    out = {}
    for name, fn in GAUGE_ALTERNATIVES.items():
        d = np.array([abs(fn(b[k]) / fn(a[k]) - 1) for k in keys])
        out[name] = {"n": int(d.size)} | ({"p50": float(np.quantile(d, 0.5)), "p90": float(np.quantile(d, 0.9)),
                                           "max": float(d.max())} if d.size else {})
    return out


def gauged(run_dir: Path) -> dict[tuple, Quantity]:
    """A run's measured quantities that have a gauge in every process, by (cell, metric, key size, blocks)."""
    _, cells = results.read_run(run_dir)
    return {(c.cell, q.metric, q.key_size, q.n_blocks): q for c in cells if c.status == Status.OK
            for q in results.measured_quantities(c)
            if q.metric != "null_overhead" and q.per_process and q.gauge and all(q.gauge)}


def _process_gauges(qs: dict[tuple, Quantity]) -> list[tuple[str, float]]:
    """Each measuring process's gauge once, with its counter (the gauge's unit): the quantities of one program in
    one cell share their processes' gauges, so a process is (cell, counter, index), however many quantities it
    measured."""
    return list({(key[0], q.counter, i): (q.counter, g) for key, q in qs.items()
                 for i, g in enumerate(q.gauge)}.values())


def _clean_levels(qs: dict[tuple, Quantity]) -> dict[str, float]:
    """Per counter, the run's clean gauge level: the 5th percentile of its processes' gauges."""
    by: dict[str, list[float]] = {}
    for counter, g in _process_gauges(qs):
        by.setdefault(counter, []).append(g)
    return {k: float(np.quantile(v, 0.05)) for k, v in by.items()}


def _modal(ratios: np.ndarray) -> bool:
    """Whether the ratios fall in groups: two neighbours (sorted) at least MODE_GAP apart, two or more on each
    side."""
    r = np.sort(ratios)
    return bool(r.size >= 4 and (r[2:-1] / r[1:-2] - 1 >= MODE_GAP).any())


def cause(qa: Quantity, qb: Quantity, level_a: float, level_b: float) -> str:
    """Which of CAUSES explains the gauge-relative difference of one quantity between two runs."""
    if max(qa.resolution or 0.0, qb.resolution or 0.0) >= 0.01 * min(min(qa.per_process), min(qb.per_process)):
        return "counter resolution"
    if max(qa.gauge) > level_a * (1 + DISTURBED) or max(qb.gauge) > level_b * (1 + DISTURBED):
        return "disturbed processes"
    if any(len(q.samples) < FEW_ROUNDS * len(q.per_process) for q in (qa, qb)):
        return "few samples"
    # modes within a run (a shift between the two runs is not one)
    if any(_modal(np.asarray(q.paired)) for q in (qa, qb)):
        return "layout modes"
    return "other"


def anatomy(a: dict[tuple, Quantity], b: dict[tuple, Quantity], rel: pd.DataFrame,
            above: float = GAUGE_GOALS["p90"]) -> dict:
    """The quantities whose gauge-relative figures differ by more than `above`, counted by cause (CAUSES), from
    the runs' raw samples (`gauged`: each process's cost and gauge), with the worst quantity of each cause; and how
    many of each run's processes had a disturbed gauge."""
    la, lb = _clean_levels(a), _clean_levels(b)
    out: dict[str, dict] = {}
    for r, key in _common(rel[rel["diff"] > above].sort_values("diff", ascending=False), a, b):
        qa, qb = a[key], b[key]
        c = out.setdefault(cause(qa, qb, la[qa.counter], lb[qb.counter]), {"n": 0, "worst": None})
        c["n"] += 1
        if c["worst"] is None:
            c["worst"] = {"cell": r.cell, "metric": r.metric, "key_size": key[2], "n_blocks": key[3],
                          "diff": float(r.diff), "ratios": [[round(float(x), 4) for x in q.paired]
                                                            for q in (qa, qb)]}
    disturbed = [sum(g > lv[counter] * (1 + DISTURBED) for counter, g in gs) / max(1, len(gs))
                 for gs, lv in ((_process_gauges(a), la), (_process_gauges(b), lb))]
    return {"above": above, "quantities": int(len(rel)), "causes": {k: out[k] for k in CAUSES if k in out},
            "disturbed_processes": [round(float(x), 4) for x in disturbed]}


def format_gauge(doc: dict) -> list[str]:
    g = doc.get("gauge_relative")
    if not g:
        return ["", "no machine-speed gauge in these runs (made before it existed)"]
    lines = ["", "relative to the machine-speed gauge (the same quantities, absolute beside):",
             f"{'quantity':<22} {'n':>5} {'p50':>7} {'p90':>7} {'max':>7}   {'abs p90':>7} {'abs max':>7}"]
    for kind, s in g["relative"].items():
        ab = g["absolute_same_quantities"][kind]
        lines.append(f"{kind:<22} {s['n']:>5} {100 * s['p50']:>6.2f}% {100 * s['p90']:>6.2f}% {100 * s['max']:>6.2f}%"
                     f"   {100 * ab['p90']:>6.2f}% {100 * ab['max']:>6.2f}%")
    gg, r = doc["gauge_goals"], g["relative"]["all"]
    ok = r["p90"] <= gg["p90"] and r["max"] <= gg["max"]
    lines.append(f"gauge-relative goals p90 <= {100 * gg['p90']:.1f} %, max <= {100 * gg['max']:.0f} %: "
                 + ("met" if ok else "NOT met"))
    alt = {k: v for k, v in (g.get("alternatives") or {}).items() if v["n"]}
    if alt:
        lines += ["", "the same raw samples, other gauge statistics (on costs, the quantities above):"]
        lines += [f"  {name:<42} p50 {100 * s['p50']:5.2f}%  p90 {100 * s['p90']:5.2f}%  max {100 * s['max']:6.2f}%"
                  for name, s in alt.items()]
    an = g.get("anatomy")
    if an:
        d = an["disturbed_processes"]
        lines += ["", f"what moved the {sum(c['n'] for c in an['causes'].values())} of {an['quantities']} quantities "
                      f"that differ by more than {100 * an['above']:.1f} % (processes with a disturbed gauge: "
                      f"{100 * d[0]:.1f} % in run A, {100 * d[1]:.1f} % in run B):"]
        for name, c in an["causes"].items():
            w = c["worst"]
            lines.append(f"  {name:<20} {c['n']:>4}   worst {100 * w['diff']:.2f} % {w['cell']} {w['metric']} "
                         f"{w['key_size']}-bit" + (f" n={w['n_blocks']}" if w["n_blocks"] is not None else "")
                         + f", per-process ratios A {w['ratios'][0]} B {w['ratios'][1]}")
        lines += [f"  ({name}: {text})" for name, text in CAUSES.items() if name in an["causes"]]
    return lines


def format_intervals(iv: dict | None) -> list[str]:
    if not iv:
        return []
    lines = ["", "do the 95 % intervals hold the differences? (honest: about 5 % beyond the two runs' half-widths "
                 "combined, sd of z about 1)"]
    lines += [f"  {name:<15} {s['n']:>5} quantities: {100 * s['beyond']:5.1f} % beyond, sd of z {s['sd']:6.2f}, "
              f"median half-width {100 * s['half_width_p50']:.2f} %" for name, s in iv.items()]
    return lines


def format_summary(doc: dict) -> str:
    w = doc["wall_seconds"]
    lines = [(f"two runs of the same matrix, back to back: {w[0]:.0f} s and {w[1]:.0f} s" if w else
              "two stored runs judged again") + f" ({doc['runs'][0]}, {doc['runs'][1]})", "",
             f"{'quantity':<22} {'n':>5} {'p50':>7} {'p90':>7} {'max':>7}   worst"]
    for kind, s in doc["headline"].items():
        w = s["worst"]
        lines.append(f"{kind:<22} {s['n']:>5} {100 * s['p50']:>6.2f}% {100 * s['p90']:>6.2f}% {100 * s['max']:>6.2f}%"
                     f"   {w['cell']} {w['metric']} {w['key_size']}-bit key"
                     + (f" n={w['n_blocks']}" if w["n_blocks"] is not None else ""))
    lines += ["", "Kendall tau of the Enc128 rankings:"]
    lines += [f"  {t['toolchain']} on {t['target']}: {t['tau']:.3f} over {t['n']}" for t in doc["taus"]]
    lines += ["", "the same raw samples, other estimators (all quantities):"]
    for name, s in doc["estimators"].items():
        lines.append(f"  {name:<32} p50 {100 * s['p50']:5.2f}%  p90 {100 * s['p90']:5.2f}%  max {100 * s['max']:6.2f}%")
    lines += format_intervals(doc.get("intervals"))
    g = doc["goals"]
    h = doc["headline"]["all"]
    ok = h["p90"] <= g["p90"] and h["max"] <= g["max"] and all(t["tau"] >= g["tau"] for t in doc["taus"])
    lines += format_gauge(doc)
    lines += ["", f"goals p90 <= {100 * g['p90']:.0f} %, max <= {100 * g['max']:.0f} %, tau >= {g['tau']}: "
                  + ("met" if ok else "NOT met")]
    return "\n".join(lines)
