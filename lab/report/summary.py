"""The results box above the fold: the answers a person wants first, from the tidy results only.

The fastest portable cipher on the first hardware platform, its margin over the second with an interval, the
same question under NIST's statistic (mean within 3 sd) with a sentence when the two disagree, the best
toolchain, the figure in cycles per byte and Gbit/s beside NIST's Kbit/s, the run's precision and what it did
not measure."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..models import Status
from ..results import at_key_size
from . import tables


def rounded(value: float, lo: float | None, hi: float | None) -> str:
    """A value with the significant figures its interval supports: digits down to the interval's half-width's
    leading digit (at least two significant figures, never more than the value has)."""
    if value is None or not math.isfinite(value):
        return "—"
    half = (hi - lo) / 2 if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi) else 0
    if half <= 0:
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    step = 10 ** math.floor(math.log10(half))
    step = min(step, 10 ** (math.floor(math.log10(abs(value))) - 1)) if value else step
    r = round(value / step) * step
    decimals = max(0, -int(math.floor(math.log10(step))))
    return f"{r:,.{decimals}f}"


def _speeds(df: pd.DataFrame) -> pd.DataFrame:
    hw = df[(df.metric == "encrypt_speed") & (df.impl_class == tables.RANKED) & (df.status == Status.OK)
            & ~df.emulated.astype(bool) & df.estimate.notna()]
    return at_key_size(hw, 128)


def _ranking(g: pd.DataFrame, col: str) -> list:
    return list(g.sort_values(col, ascending=False, kind="stable").itertuples())


def results_box(df: pd.DataFrame, precision: dict, not_measured: list[str]) -> dict:
    sp = _speeds(df)
    if sp.empty:
        return {"present": False, "not_measured": not_measured, "precision": precision}
    target = sorted(sp.target.unique(), key=lambda t: (t not in ("host", "x86_64"), t))[0]
    on = sp[sp.target == target]
    geo = on.groupby("toolchain").estimate.apply(lambda s: float(np.exp(np.log(s).mean())))
    best_tc = geo.idxmax()
    g = on[on.toolchain == best_tc]
    best = _ranking(g, "estimate")
    out = {"present": True, "target": target, "toolchain": best_tc, "n_toolchains": len(geo),
           "toolchain_margin": float(geo.max() / geo.min()) if len(geo) > 1 else None,
           "worst_toolchain": geo.idxmin(), "precision": precision, "not_measured": not_measured}
    a = best[0]
    out["fastest"] = {"row": a.row, "kbit": rounded(a.estimate, a.ci_low, a.ci_high),
                      "gbit": f"{a.estimate / 1e6:.2g}", "nist_kbit": rounded(a.value, a.ci_low, a.ci_high)}
    cyc = df[(df.cell == a.cell) & (df.metric == "encrypt_per_block") & (df.n_blocks == 1)]
    cyc = at_key_size(cyc, 128)
    if not cyc.empty:
        c = cyc.iloc[0]
        out["fastest"]["per_byte"] = f"{c.estimate / (c.block_bits / 8):.3g} {str(c.unit).replace('_', ' ')} per byte"
    if len(best) > 1:
        b = best[1]
        out["second"] = b.row
        out["margin"] = a.estimate / b.estimate
        out["margin_ci"] = (a.ci_low / b.ci_high, a.ci_high / b.ci_low)
        out["margin_text"] = f"{100 * (out['margin'] - 1):.0f} %"
        out["margin_ci_text"] = f"[{100 * (out['margin_ci'][0] - 1):.0f} %, {100 * (out['margin_ci'][1] - 1):.0f} %]"
    out.update(tables.nist_order(g))
    return out
