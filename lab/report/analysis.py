"""Cross-cell analyses of the 1999 study on the headline estimates: platform averages, natural breaks,
compiler comparison, correctness matrix, memory, our implementations against the peer libraries.
Pure functions of the tidy results.  Rankings use portable implementations only."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..results import at_key_size, ok_rows
from .tables import RANKED, key_and_encryption_times, normalise

HEADLINE_KEY = 128


def _at_key(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of one metric of ok cells at the headline key size (or the cipher's smallest key when it has no
    such size), every class of implementation."""
    return at_key_size(ok_rows(df, metric), HEADLINE_KEY)


def _portable(df: pd.DataFrame) -> pd.DataFrame:
    """The implementations that are ranked: portable C."""
    return df[df.impl_class == RANKED]


def platform_averages(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per target: each portable row's estimate averaged over the toolchains (NIST Figs. 3, 5, 6), with the
    mean of the interval ends as its interval."""
    sel = _at_key(_portable(df), metric)
    cols = ["target", "emulated", "row", "cipher", "value", "ci_low", "ci_high", "n_toolchains", "spread"]
    if sel.empty:
        return pd.DataFrame(columns=cols)
    g = sel.groupby(["target", "emulated", "row", "cipher"])
    out = g.agg(value=("estimate", "mean"), ci_low=("ci_low", "mean"), ci_high=("ci_high", "mean"),
                n_toolchains=("estimate", "count"), lo=("estimate", "min"), hi=("estimate", "max")).reset_index()
    out["spread"] = out["hi"] / out["lo"]
    return out[cols].sort_values(["target", "value"], ascending=[True, False]).reset_index(drop=True)


def instruction_averages(df: pd.DataFrame, n_blocks: int = 128) -> pd.DataFrame:
    """Per target: Encrypt-n guest instructions per block averaged over toolchains, as a rate (bits encrypted
    per 1000 guest instructions, higher is better) so it ranks like a speed."""
    sel = _at_key(_portable(df[df.n_blocks == n_blocks]), "insn_encrypt_per_block")
    if sel.empty:
        return pd.DataFrame(columns=["target", "emulated", "row", "cipher", "value", "insns"])
    sel["rate"] = sel.block_bits * 1000.0 / sel.estimate
    out = sel.groupby(["target", "emulated", "row", "cipher"]).agg(value=("rate", "mean"), insns=("estimate", "mean"))
    return out.reset_index().sort_values(["target", "value"], ascending=[True, False]).reset_index(drop=True)


def normalised_platform(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4: key-setup time and encryption time averaged over toolchains, each / best, summed."""
    enc = platform_averages(df, "encrypt_speed")
    key = platform_averages(df, "key_setup_speed")
    cols = ["target", "emulated", "row", "cipher", "key_norm", "enc_norm", "metric"]
    m = enc.merge(key, on=["target", "emulated", "row", "cipher"], suffixes=("_enc", "_key"))
    # times are reciprocal speeds; only their ratio to the best counts
    m["enc_time"], m["key_time"] = np.reciprocal(m.value_enc), np.reciprocal(m.value_key)
    return normalise(m, by=["target"])[cols]


def natural_breaks(values: list[float], classes: int = 3) -> list[float]:
    """Fisher-Jenks break points (jenkspy) of the values; fewer classes when there are few values."""
    vals = sorted(float(v) for v in values if v is not None and not math.isnan(v))
    k = min(classes, len(set(vals)) - 1)
    if k < 2:
        return [vals[0], vals[-1]] if vals else []
    import jenkspy

    return list(jenkspy.jenks_breaks(vals, n_classes=k))


def top_performers(avg: pd.DataFrame, classes: int = 3, insn: pd.DataFrame | None = None) -> dict:
    """Section 5.4: per platform, the top natural-breaks group of encryption speed; and the ciphers in the top
    group of every hardware platform.  Emulated platforms are grouped by guest instructions per block (from
    `insn`) when available, since their wall-clock speed measures QEMU."""
    groups: dict[str, dict] = {}
    emulated = set(avg[avg.emulated.astype(bool)].target)
    parts = [avg[~avg.target.isin(emulated)]]
    have: set = set()
    if emulated and insn is not None:
        by_insn = insn[insn.target.isin(emulated)]
        have = set(by_insn.target)
        parts.append(by_insn)
    parts.append(avg[avg.target.isin(emulated - have)])
    nonempty = [p for p in parts if not p.empty]
    data = pd.concat(nonempty) if nonempty else avg
    for target, g in data.groupby("target"):
        breaks = natural_breaks(list(g.value), classes)  # at least [lowest, highest]: g has a row
        edges = breaks[1:-1]
        group_of = {row: 1 + sum(v <= e for e in edges) for row, v in zip(g.row, g.value)}  # 1 = fastest
        n_groups = len(edges) + 1
        groups[target] = {
            "emulated": bool(g.emulated.iloc[0]),
            "basis": "guest instructions" if target in have else "Kbit/s",
            "breaks": breaks,
            "groups": [sorted(r for r, k in group_of.items() if k == i) for i in range(1, n_groups + 1)],
        }
    hw = [t for t, v in groups.items() if not v["emulated"]]
    consistent = sorted(set.intersection(*(set(groups[t]["groups"][0]) for t in hw))) if hw else []
    return {"platforms": groups, "consistent": consistent, "hardware_platforms": hw}


def compilers_relative(df: pd.DataFrame) -> pd.DataFrame:
    """Per row and target: each toolchain's encryption speed estimate / the best toolchain's."""
    sel = _at_key(df, "encrypt_speed")
    if sel.empty:
        return pd.DataFrame()
    sel["relative"] = sel.estimate / sel.groupby(["target", "row"]).estimate.transform("max")
    return sel.pivot_table(index=["target", "row"], columns="toolchain", values="relative").sort_index()


def correctness_matrix(cells: pd.DataFrame) -> dict:
    """cipher-row x (target, toolchain) -> (status, reason)."""
    if cells.empty:
        return {"columns": [], "rows": []}
    c = cells.copy()
    cols = sorted({(t, tc) for t, tc in zip(c.target, c.toolchain)})
    rows = []
    for row, g in c.groupby("row"):
        by = {(t, tc): (s, r) for t, tc, s, r in zip(g.target, g.toolchain, g.status, g.reason)}
        rows.append({"row": row, "cells": [by.get(col) for col in cols]})
    return {"columns": cols, "rows": rows}


def ct_matrix(cells: pd.DataFrame) -> dict:
    """implementation row x (target, toolchain) -> the constant-time verdicts of the cells that were checked:
    (trace verdict, first divergence or reason, dudect |t|, dudect verdict); with the rows whose claim
    (constant_time in cipher.yaml) a cell refutes, and those claimed not constant time that every check passed."""
    if cells.empty or "ct_trace" not in cells or cells.ct_trace.isna().all():
        return {"columns": [], "rows": [], "refuted": [], "raisable": []}
    c = cells[cells.ct_trace.notna()]
    cols = sorted({(t, tc) for t, tc in zip(c.target, c.toolchain)})
    rows, refuted, raisable = [], [], []
    for row, g in c.groupby("row"):
        by = {(t, tc): (v, d, dt if pd.notna(dt) else None, dv)
              for t, tc, v, d, dt, dv in zip(g.target, g.toolchain, g.ct_trace, g.ct_divergence, g.ct_dudect_t,
                                             g.ct_dudect)}
        raw = g.constant_time.iloc[0] if "constant_time" in g else None
        claim = None if raw is None or pd.isna(raw) else bool(raw)  # numpy booleans are not `True`
        leaks = (g.ct_trace == "leak") | (g.ct_dudect == "leak")
        if claim is True and leaks.any():
            refuted.append(row)
        if claim is False and not leaks.any() and (g.ct_trace == "clean").all():
            raisable.append(row)
        rows.append({"row": row, "claim": claim, "cells": [by.get(col) for col in cols]})
    return {"columns": cols, "rows": rows, "refuted": refuted, "raisable": raisable}


def memory_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per implementation: static table bytes, key-schedule bytes, code bytes (gcc-O3 build when present),
    their sum, and its best encryption speed estimate on hardware.  Sorted by cipher, so versions of a
    cipher (CRYPTON and CRYPTON v1.0) stand next to each other."""
    sizes = ["table_bytes", "key_schedule_bytes", "code_bytes"]
    facts = df[df.metric.isin(sizes)]
    cols = ["row", "cipher", "implementation", "impl_class", *sizes, "memory_bytes", "encrypt_speed"]
    if facts.empty:
        return pd.DataFrame(columns=cols)
    gcc = facts.toolchain == "gcc-O3"
    facts = pd.concat([facts[gcc], facts[~gcc]])  # the gcc-O3 build's sizes first: `first` takes them
    keys = ["row", "cipher", "implementation", "impl_class"]
    mem = facts.groupby([*keys, "metric"]).estimate.first().unstack("metric").reindex(columns=sizes).reset_index()
    mem["memory_bytes"] = mem.table_bytes.fillna(0) + mem.key_schedule_bytes.fillna(0)
    best = _at_key(df[~df.emulated.astype(bool)], "encrypt_speed").groupby("row").estimate.max()
    mem["encrypt_speed"] = mem.row.map(best)  # NaN: no hardware speed
    return mem[cols].sort_values(["cipher", "implementation"]).reset_index(drop=True)


#: SIMD ÷ scalar speed-ups published in 1999/2000: cipher -> (speed-up, what, the words printed). One sentence of
#: ../shared/papers/gladman-aes-round2-implementation.txt (prose, not a table, so not in reference/: the extract
#: tool reads tables); test_reference checks the printed words are in the paper.
SIMD_1999 = {"serpent": (1.36, "MMX against the previous best Pentium II/III result", "36% speed up")}


def simd_then_and_now(speedups: list[dict]) -> list[dict]:
    """Gladman 1999 against today: a cipher's SIMD ÷ scalar speed-up then (the reference data: MMX on a Pentium
    II/III) and now (our SIMD implementations at 1024 blocks per call, per toolchain)."""
    out = []
    for cipher, (value, what, _printed) in SIMD_1999.items():
        now = [s for s in speedups if s["cipher"] == cipher and s["kind"] == "simd" and s["blocks"] == 1024]
        out.append({"cipher": cipher, "then": value, "then_what": what,
                    "now": [{"toolchain": s["toolchain"], "impl": s["impl"], "speedup": s["speedup"],
                             "ci_low": s["ci_low"], "ci_high": s["ci_high"]} for s in now]})
    return out


def kendall_tau(ours: list[str], theirs: list[str]) -> tuple[float, int, float]:
    """Kendall's tau between two rankings over their common items: (tau, n common, p-value).  Positions in a
    ranking never tie, so the p-value is scipy's exact one: the share of all n! orderings whose tau is at least
    this large (a permutation test that enumerates every permutation), one-sided."""
    from scipy.stats import kendalltau

    common = [x for x in ours if x in theirs]
    if len(common) < 3:
        return math.nan, len(common), math.nan
    a = [ours.index(x) for x in common]
    b = [theirs.index(x) for x in common]
    res = kendalltau(a, b, method="exact", alternative="greater")
    return float(res.statistic), len(common), float(res.pvalue)


def rank(values: pd.Series, higher_is_better: bool = True) -> list[str]:
    return list(values.sort_values(ascending=not higher_is_better).index)


__all__ = ["platform_averages", "instruction_averages", "normalised_platform", "natural_breaks", "top_performers",
           "compilers_relative", "correctness_matrix", "memory_table", "simd_then_and_now", "kendall_tau", "rank",
           "key_and_encryption_times"]
