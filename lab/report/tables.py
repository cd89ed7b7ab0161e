"""Report tables computed from the tidy results (never from running anything).

Every number shown is the headline ``estimate`` (lab/stats.py); its hover
text gives the interval, the estimator, the precision reached and NIST's
3-sigma mean beside it.  NIST-comparable rankings (A.1/A.2 order, the section
5.1 metric, charts) use portable implementations only; hardware, SIMD and
peer implementations get their own labelled rows below them.
"""

from __future__ import annotations

import math

import pandas as pd

from .. import metrics
from ..results import at_key_size
from ..models import Status

ESTIMATOR_WORDS = {"min": "best case", "median": "median", "trimmed": "20 % trimmed mean of the process minima"}

A1_KEYS = (128, 192, 256)
A2_SIZES = (1, 16, 128, 1024, 32768)
RANKED = "portable"
CLASS_NAMES = {"portable": "portable C", "simd": "SIMD", "hardware": "hardware instructions",
               "peer": "peer library"}
# A multi-block call this much cheaper per block than single-block calls is noted in the cycle table.
VECTORISED = 0.6


def normalise(t: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Section 5.1: enc_time and key_time each divided by the smallest (within `by` groups),
    summed into `metric`; 2.0 = best in both, larger is slower."""
    t = t.copy()
    for col, norm in (("enc_time", "enc_norm"), ("key_time", "key_norm")):
        best = t.groupby(by)[col].transform("min") if by else t[col].min()
        t[norm] = t[col] / best
    t["metric"] = t.enc_norm + t.key_norm
    return t.sort_values([*(by or []), "metric"]).reset_index(drop=True)


def platforms(df: pd.DataFrame) -> list[tuple[str, str]]:
    """(toolchain, target) pairs in the data, hardware targets first."""
    if df.empty:
        return []
    pairs = df[["toolchain", "target", "emulated"]].drop_duplicates()
    pairs = pairs.sort_values(["emulated", "target", "toolchain"])
    return list(zip(pairs["toolchain"], pairs["target"]))


def fmt(v, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:,.{digits}f}"


def supported(v: float, half_width: float) -> str:
    """A value written to the digits its interval supports: rounded at the decade of the interval's half-width
    (230,783 ± 5,300 -> 231,000; 12.34 ± 0.3 -> 12.3); as fmt() when there is no interval."""
    if not (math.isfinite(v) and math.isfinite(half_width) and half_width > 0):
        return fmt(v)
    d = -math.floor(math.log10(half_width))
    return f"{round(v, d):,.{max(d, 0)}f}"


def level(confidence) -> str:
    """A confidence level as the report writes it: 0.95 -> "95 %"."""
    return f"{100 * confidence:g} %"


def _pct(v) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{100 * v:.1f} %"


def number(r: pd.Series, name: str, digits: int = 1) -> dict:
    """One shown number: the estimate (or '< bound'), a mark when its precision target was missed, and a
    hover text with the interval, the estimator and NIST's value."""
    unit = str(r.unit).replace("_", " ")
    if bool(r.below_resolution):
        return {"text": f"< {fmt(r.bound, 2)}", "value": r.bound, "below": True, "missed": False,
                "title": f"{name}: below the counter's resolution (indistinguishable from the empty-call overhead): "
                         f"at most {fmt(r.bound, 2)} {unit}"}
    est = r.estimate
    title = f"{name}: {fmt(est, 2)} {unit}"
    if r.estimator in metrics.TIMED_ESTIMATORS:
        title += (f", {level(r.confidence)} CI [{fmt(r.ci_low, 2)}, {fmt(r.ci_high, 2)}] ({ESTIMATOR_WORDS.get(r.estimator, r.estimator)}"
                  f" over {int(r.processes)} processes; ±{_pct(r.precision)} reached, target ±{_pct(r.precision_target)})"
                  f" | NIST value (mean within 3 sd of the median) {fmt(r.value, 2)}; median {fmt(r['median'], 2)}; "
                  f"sd {fmt(r['std'], 2)}; {int(r.n)}/{int(r.n_total)} samples")
    elif r.estimator == "exact":
        title += " (exact count)"
    missed = not bool(r.precision_met)
    if missed:
        title += " | † precision target not reached"
    # a figure with a run-to-run interval is written to the digits that interval supports (older runs as stored)
    half = (r.ci_high - r.ci_low) / 2
    shown = supported(est, half) if r.estimator == "trimmed" else fmt(est, digits)
    out = {"text": shown + (" †" if missed else ""), "value": est, "below": False, "missed": missed,
           "title": title, "ci_low": r.ci_low, "ci_high": r.ci_high, "nist": r.value}
    if r.estimator in metrics.TIMED_ESTIMATORS and isinstance(r.value, float) and math.isfinite(r.value):
        # NIST's statistic beside the headline, to the digits the headline's interval supports
        out["nist_text"] = supported(r.value, half) if r.estimator == "trimmed" else fmt(r.value, digits)
    return out


def _status_rows(cells: pd.DataFrame, toolchain: str, target: str) -> pd.DataFrame:
    cs = cells[(cells.toolchain == toolchain) & (cells.target == target)].copy()
    return cs


def a1_table(df: pd.DataFrame, cells: pd.DataFrame, toolchain: str, target: str) -> dict:
    """NIST Appendix A.1: Enc/Dec Kbit/s and Key keys/s for 128/192/256-bit keys.

    rows: portable implementations (sorted by name); other: portable ciphers with other key sizes
    (DES 64, 3DES 192); classes: {class: rows} of hardware, SIMD and peer implementations."""
    cs = _status_rows(cells, toolchain, target)
    columns = [f"{op}{k}" for k in A1_KEYS for op in ("Enc", "Dec", "Key")]
    metric_of = {"Enc": "encrypt_speed", "Dec": "decrypt_speed", "Key": "key_setup_speed"}
    rows, other, classes = [], [], {}
    by_cell = dict(tuple(df[df.cell.isin(cs.cell)].groupby("cell")))  # one pass, not one filter per row
    for _, c in cs.sort_values("row").iterrows():
        mine = by_cell.get(c.cell, df.iloc[:0])  # a cell is one toolchain on one target
        at: dict = {}
        for i, mk in enumerate(zip(mine.metric, mine.key_size)):
            at.setdefault(mk, i)  # the first row of each quantity, as a filter's iloc[0]
        entry = {"label": c.row, "status": c.status, "reason": c.reason, "cells": [], "cell": c.cell,
                 "impl_class": c.impl_class}
        sizes = sorted(int(k) for k in mine.key_size.dropna().unique())  # facts have no key size
        aes_like = not sizes or any(k in A1_KEYS for k in sizes)
        keys = A1_KEYS if aes_like else tuple(sizes)
        for k in keys:
            for op in ("Enc", "Dec", "Key"):
                i = at.get((metric_of[op], k))
                entry["cells"].append(number(mine.iloc[i], f"{op}{k}") if i is not None
                                      else {"text": "", "title": "not measured"})
        if c.impl_class != RANKED:
            entry["key_sizes"] = list(keys)
            classes.setdefault(c.impl_class, []).append(entry)
        elif aes_like:
            rows.append(entry)
        else:
            entry["key_sizes"] = list(keys)
            other.append(entry)
    return {"columns": columns, "rows": rows, "other": other,
            "classes": [{"name": CLASS_NAMES[k], "impl_class": k, "rows": v} for k, v in sorted(classes.items())]}


def _vectorised(df: pd.DataFrame, toolchain: str, target: str, prefix: str) -> dict[str, float]:
    """Cells whose Encrypt-128 costs per block much less than Encrypt-1, and less than the same implementation
    built by another toolchain does (so the compiler, not the code, did it): {cell: per-block ratio}."""
    e = df[(df.target == target) & (df.metric == prefix + "encrypt_per_block") & (df.status == Status.OK)]
    if e.empty:
        return {}
    p = e.pivot_table(index=["cell", "cipher", "implementation", "toolchain"], columns="n_blocks",
                      values="estimate", aggfunc="first").reset_index()
    if 1 not in p or 128 not in p:
        return {}
    p["ratio"] = p[128] / p[1]
    out = {}
    for _, r in p[p.toolchain == toolchain].iterrows():
        others = p[(p.cipher == r.cipher) & (p.implementation == r.implementation) & (p.toolchain != toolchain)]
        if r.ratio < VECTORISED and (others.empty or r.ratio < VECTORISED * others.ratio.min()):
            out[r.cell] = float(r.ratio)
    return out


def a2_table(df: pd.DataFrame, toolchain: str, target: str, key_size: int = 128, prefix: str | None = None) -> dict:
    """NIST Appendix A.2: EKey, DKey, Encrypt-n/Decrypt-n per block, Init, Null; sorted by Encrypt-128.

    prefix "" uses the cycle counter, "insn_" guest-instruction counts; None picks the cycle counter
    when the platform has one, else instructions (emulated targets).  Portable rows are ranked; other
    classes follow in `classes`.  `vectorised` lists rows whose multi-block calls are far cheaper per
    block than single-block calls (a compiler that vectorised the loop over blocks)."""
    sel = df[(df.toolchain == toolchain) & (df.target == target) & (df.status == Status.OK)].copy()
    if prefix is None:
        prefix = "" if (sel.metric == "ekey").any() else "insn_"
    vec = _vectorised(df, toolchain, target, prefix)
    sel = sel[sel.metric.isin([prefix + m for m in metrics.by_op("cycles").values()])]  # one counter: cycles or insns
    sel = sel.assign(metric=sel.metric.str.removeprefix(prefix))
    if sel.empty:
        return {"columns": [], "rows": [], "classes": [], "unit": None, "counter": None, "vectorised": []}
    columns = ["EKey", "DKey"] + [f"{d}-{n}" for n in A2_SIZES for d in ("Encrypt", "Decrypt")] + ["Init", "Null"]
    about = sel.drop_duplicates("cell").set_index("cell")  # a cell's row name and class
    rows, classes, notes = [], {}, []
    for cell, g in sel.groupby("cell"):
        ks = key_size if (g.key_size == key_size).any() else g.key_size.min()
        g = g[g.key_size == ks]

        at: dict = {}
        for i, (m, nb) in enumerate(zip(g.metric, g.n_blocks)):  # the first row of each quantity, looked up once
            at.setdefault((m, None if pd.isna(nb) else int(nb)), i)

        def val(metric, n=None):
            i = at.get((metric, n))
            return g.iloc[i] if i is not None else None

        shown, sort_key = [], math.inf
        for col in columns:
            if col in ("EKey", "DKey", "Init", "Null"):
                r = val({"EKey": "ekey", "DKey": "dkey", "Init": "init", "Null": "null_overhead"}[col])
            else:
                d, n = col.split("-")
                r = val("encrypt_per_block" if d == "Encrypt" else "decrypt_per_block", int(n))
            if r is None:
                shown.append({"text": "", "title": "not measured"})
                continue
            if col == "Encrypt-128" and not r.below_resolution:
                sort_key = r.estimate
            shown.append(number(r, col, 0 if prefix or r.estimate >= 100 else 1))
        label = about.row[cell] + ("" if ks == key_size else f" ({int(ks)}-bit key)")
        entry = {"label": label, "cells": shown, "sort": sort_key, "impl_class": about.impl_class[cell]}
        if cell in vec:
            entry["label"] += " ‡"
            notes.append(f"{label}: Encrypt-128 costs {vec[cell]:.2f}× Encrypt-1 per block with {toolchain}, far "
                         "less than other toolchains make of the same code: the compiler vectorised or interleaved "
                         "the loop over blocks")
        (rows if entry["impl_class"] == RANKED else classes.setdefault(entry["impl_class"], [])).append(entry)
    rows.sort(key=lambda r: r["sort"])
    # one counter (and unit) per platform and prefix: the cycle counter, or guest instructions
    return {"columns": columns, "rows": rows, "unit": ", ".join(sorted(set(sel.unit))),
            "counter": ", ".join(sorted(set(sel.counter))), "vectorised": notes,
            "classes": [{"name": CLASS_NAMES[k], "impl_class": k, "rows": sorted(v, key=lambda r: r["sort"])}
                        for k, v in sorted(classes.items())]}


def encryption_speeds(df: pd.DataFrame, toolchain: str, target: str, key_size: int = 128) -> pd.DataFrame:
    """Encryption speed estimate (Kbit/s) of the portable implementations per row label at key_size (or
    the cipher's own size), with its interval; fastest first."""
    sel = df[(df.toolchain == toolchain) & (df.target == target) & (df.metric == "encrypt_speed")
             & (df.impl_class == RANKED) & (df.status == Status.OK)].copy()
    if sel.empty:
        return pd.DataFrame(columns=["row", "estimate", "ci_low", "ci_high", "key_size", "cipher", "precision_met",
                                     "value"])
    out = at_key_size(sel, key_size)[["row", "estimate", "ci_low", "ci_high", "key_size", "cipher", "precision_met",
                                      "value"]]
    return out.sort_values("estimate", ascending=False).reset_index(drop=True)


def nist_order(speeds: pd.DataFrame, top: int = 4) -> dict:
    """The first `top` rows by the headline and by NIST's statistic (mean within 3 sd of the median, the
    ``value`` column), and whether they disagree: the sentence a table or chart carries when they do."""
    best = list(speeds.sort_values("estimate", ascending=False, kind="stable").row[:top])
    nist = list(speeds.dropna(subset=["value"]).sort_values("value", ascending=False, kind="stable").row[:top])
    return {"best_top": best, "nist_top": nist, "disagree": bool(nist) and best != nist,
            "nist_first": nist[0] if nist else None}


def key_and_encryption_times(sel: pd.DataFrame, index: list[str]) -> pd.DataFrame:
    """Per index group: enc_time (s per Kbit) and key_time (s per key) from the speed estimates."""
    speeds = sel[sel.metric.isin(["encrypt_speed", "key_setup_speed"])]
    t = speeds.pivot(index=index, columns="metric", values="estimate").reset_index()  # one estimate per group
    if not {"encrypt_speed", "key_setup_speed"}.issubset(t.columns):
        return pd.DataFrame(columns=[*index, "enc_time", "key_time"])
    t = t.dropna()  # both speeds measured
    t["key_time"] = 1.0 / t.key_setup_speed  # seconds per key
    t["enc_time"] = 1.0 / t.encrypt_speed  # seconds per Kbit
    return t


def normalised_key_plus_encryption(df: pd.DataFrame, toolchain: str, target: str,
                                   key_size: int = 128) -> pd.DataFrame:
    """Section 5.1 over the portable implementations: key-setup time and encryption time per block, each
    divided by the best (smallest) in its category, summed. 2.0 = best in both; larger is slower."""
    sel = df[(df.toolchain == toolchain) & (df.target == target) & (df.status == Status.OK) & (df.impl_class == RANKED)
             & df.metric.isin(["encrypt_speed", "key_setup_speed"])].copy()
    empty = pd.DataFrame(columns=["row", "key_norm", "enc_norm", "metric"])
    if sel.empty:
        return empty
    t = key_and_encryption_times(at_key_size(sel, key_size), ["cell", "row", "cipher", "key_size"])
    return normalise(t) if not t.empty else empty


def instructions_table(df: pd.DataFrame, n_blocks: int = 128, key_size: int = 128) -> dict:
    """Guest instructions per block (Encrypt-n) for every target, one table per toolchain, with the host's
    measured encryption speed alongside: the deterministic column all targets share."""
    sel = df[(df.metric == "insn_encrypt_per_block") & (df.n_blocks == n_blocks) & (df.status == Status.OK)].copy()
    if sel.empty:
        return {"toolchains": []}
    sel = at_key_size(sel, key_size)
    speed = df[(df.metric == "encrypt_speed") & (df.status == Status.OK) & ~df.emulated.astype(bool)].copy()
    def order(t: str) -> tuple:  # the machine itself first, then the emulated targets by name
        return t not in ("host", "x86_64"), t

    out = []
    for tc, g in sel.groupby("toolchain"):
        targets = sorted(g.target.unique(), key=order)
        hw = speed[(speed.toolchain == tc)]
        hw_target = min(hw.target.unique(), key=order) if not hw.empty else None
        rows = []
        for row, gr in g.groupby("row"):
            v = {t: gr[gr.target == t].estimate.iloc[0] if (gr.target == t).any() else None for t in targets}
            sp = hw[(hw.row == row) & (hw.target == hw_target)]
            sp = sp[sp.key_size == key_size] if (sp.key_size == key_size).any() else sp
            rows.append({"row": row, "values": v, "speed": sp.estimate.iloc[0] if not sp.empty else None})
        rows.sort(key=lambda r: next(x for x in r["values"].values() if x is not None))  # a row has a value
        out.append({"toolchain": tc, "targets": targets, "rows": rows, "speed_target": hw_target})
    return {"toolchains": out, "n_blocks": n_blocks}
