"""Against the published numbers of 1999: like with like.

* Rankings: our portable default implementations of the round-1 candidates, built with a toolchain that
  names the NIST tables of the compiler it stands for (``reference_tables`` in its YAML, e.g. gcc-O3 ->
  the Linux/GCC tables A.1-7..9, gcc-djgpp1999 -> the DJGPP tables A.1-5..6), ranked by encryption speed
  (128-bit keys) against each of those tables: Kendall's tau with a permutation p-value.
* Cycles: per-block cost relative to the median cipher of the same set, ours next to NIST's (Visual C 6.0,
  Pentium II, Appendix A.2) and Gladman's, so 25 years of CPUs and compilers cancel out and the shape
  remains.
"""

from __future__ import annotations

import math

import pandas as pd

from .. import metrics
from ..models import Status
from . import analysis
from ..results import at_key_size
from .tables import RANKED

ROUND1_KEY = 128


def _ours(df: pd.DataFrame, metric: str, **where) -> pd.DataFrame:
    sel = df[(df.metric == metric) & (df.status == Status.OK) & (df.impl_class == RANKED) & df.round1.eq(True)
             & ~df.emulated.astype(bool)]
    for k, v in where.items():
        sel = sel[sel[k] == v]
    if sel.empty:
        return sel
    if sel["default"].notna().any():
        sel = sel[sel["default"].eq(True)]  # NaN (a format-1 run beside format-2 ones): not the default
    else:  # format-1 results do not say which implementation is the default: the fastest stands for the cipher
        best = sel.groupby(["target", "toolchain", "cipher", "key_size"]).estimate  # n_blocks: one, in `where`
        sel = sel.loc[best.idxmax() if metrics.higher_is_better(metric) else best.idxmin()]
    return at_key_size(sel, ROUND1_KEY)


def _plain(d: pd.DataFrame) -> pd.DataFrame:
    """NIST's main rows: without the 64-bit variants (DFC-64, HPC-64)."""
    return d[d.variant == ""]


def comparison(df: pd.DataFrame, metas: list) -> dict:
    from . import reference

    timing, cycles, gladman, tables = reference.timing(), reference.cycles(), reference.gladman(), \
        reference.nist_tables()
    heading = dict(zip(tables.table, tables.heading))
    refs = {}
    for meta in metas:
        for name, facts in meta.toolchains.items():
            refs.setdefault(name, list(facts.get("reference_tables") or []))
    ours = _ours(df, "encrypt_speed")
    t = _plain(timing[(timing.metric == "encrypt_speed") & (timing.key_size == ROUND1_KEY)])
    taus, ranks, unmatched = [], {}, []
    for (target, tc), g in ours.groupby(["target", "toolchain"]):
        our_rank = analysis.rank(g.set_index("cipher").estimate)
        if not refs.get(tc):
            unmatched.append(tc)
            continue
        ranks[f"{tc} on {target}"] = our_rank
        for table in refs[tc]:
            theirs = t[t.table == table]
            if theirs.empty:
                continue
            their_rank = analysis.rank(theirs.set_index("cipher").value)
            tau, n, p = analysis.kendall_tau(our_rank, their_rank)
            taus.append({"target": target, "toolchain": tc, "table": table, "heading": heading[table],
                         "tau": tau, "n": n, "p": p})
            ranks.setdefault(f"NIST {table}", their_rank)
    ciphers = sorted({c for r in ranks.values() for c in r})
    table_rows = [{"cipher": c, "ranks": {k: (r.index(c) + 1 if c in r else None) for k, r in ranks.items()}}
                  for c in ciphers]
    first = next(iter(ranks), None)
    table_rows.sort(key=lambda r: r["ranks"].get(first) or math.inf)  # stable: unranked ones by name

    # cycles per block relative to the median cipher of the common set
    side = []
    c = _plain(cycles[(cycles.metric == "encrypt_per_block") & (cycles.n_blocks == 128)])
    vc = c[(c.platform == "pii450-win98") & c.compiler.str.startswith("Visual")].set_index("cipher").value
    gl = _plain(gladman[(gladman.metric == "encrypt_per_block") & (gladman.key_size == 128)
                        & (gladman.language == "C")]).groupby("cipher").value.mean()
    oc = _ours(df, "encrypt_per_block", n_blocks=128)
    for (target, tc), g in oc.groupby(["target", "toolchain"]):
        rows = g.set_index("cipher")
        mine = rows.estimate
        common = sorted(set(mine.index) & set(vc.index))
        if len(common) < 3:
            continue
        m_med, v_med = mine[common].median(), vc[common].median()
        g_common = sorted(set(common) & set(gl.index))
        g_med = gl[g_common].median() if len(g_common) >= 3 else None
        for cipher in common:
            ours_rel, nist_rel = mine[cipher] / m_med, vc[cipher] / v_med
            side.append({"target": target, "toolchain": tc, "cipher": cipher, "ours": mine[cipher],
                         "unit": rows.unit[cipher], "ours_rel": ours_rel, "nist": vc[cipher],
                         "nist_rel": nist_rel, "change": ours_rel / nist_rel,
                         "gladman_rel": gl[cipher] / g_med if g_med and cipher in gl.index else None})
    side.sort(key=lambda r: (r["target"], r["toolchain"], r["ours_rel"]))
    return {"available": True, "taus": taus, "rank_names": list(ranks), "table": table_rows, "side": side,
            "unmatched": sorted(set(unmatched)), "sources": "lab/report/reference/SOURCES.md"}
