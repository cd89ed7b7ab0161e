"""Cross-cell analyses of the 1999 study: platform averages, natural breaks,
compiler comparison, correctness matrix, memory, comparison with published
rankings. Pure functions of the tidy results (and reference data)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .tables import at_key_size, normalise, row_labels

HEADLINE_KEY = 128


def _at_key(df: pd.DataFrame, metric: str, key_size: int = HEADLINE_KEY) -> pd.DataFrame:
    """Rows of one metric at key_size, or at the cipher's smallest key when it has no such size."""
    return at_key_size(df[(df.metric == metric) & (df.status == "ok")].copy(), key_size)


def platform_averages(df: pd.DataFrame, metric: str = "encrypt_speed") -> pd.DataFrame:
    """Per target: each row label's metric averaged over the toolchains (NIST Figs. 3, 5, 6)."""
    sel = _at_key(df, metric)
    if sel.empty:
        return pd.DataFrame(columns=["target", "emulated", "row", "cipher", "value", "n_toolchains", "spread"])
    sel["row"] = row_labels(sel)
    g = sel.groupby(["target", "emulated", "row", "cipher"])
    out = g.value.agg(["mean", "count", "min", "max"]).reset_index()
    out = out.rename(columns={"mean": "value", "count": "n_toolchains"})
    out["spread"] = out["max"] / out["min"]
    return out.sort_values(["target", "value"], ascending=[True, False]).reset_index(drop=True)


def instruction_averages(df: pd.DataFrame, n_blocks: int = 128) -> pd.DataFrame:
    """Per target: Encrypt-n guest instructions per block averaged over toolchains, as a rate
    (bits encrypted per 1000 guest instructions, higher is better) so it ranks like a speed."""
    sel = _at_key(df[df.n_blocks == n_blocks], "insn_encrypt_per_block")
    if sel.empty:
        return pd.DataFrame(columns=["target", "emulated", "row", "cipher", "value", "insns"])
    sel["row"] = row_labels(sel)
    sel["rate"] = sel.block_bits * 1000.0 / sel.value
    out = sel.groupby(["target", "emulated", "row", "cipher"]).agg(value=("rate", "mean"), insns=("value", "mean"))
    return out.reset_index().sort_values(["target", "value"], ascending=[True, False]).reset_index(drop=True)


def normalised_platform(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4: key-setup time and encryption time averaged over toolchains, each / best, summed."""
    enc = platform_averages(df, "encrypt_speed")
    key = platform_averages(df, "key_setup_speed")
    if enc.empty or key.empty:
        return pd.DataFrame(columns=["target", "row", "key_norm", "enc_norm", "metric"])
    m = enc.merge(key, on=["target", "emulated", "row", "cipher"], suffixes=("_enc", "_key"))
    m["enc_time"] = 1.0 / m.value_enc
    m["key_time"] = 1.0 / m.value_key
    return normalise(m, by=["target"])[["target", "emulated", "row", "cipher", "key_norm", "enc_norm", "metric"]]


def natural_breaks(values: list[float], classes: int = 3) -> list[float]:
    """Fisher-Jenks break points (jenkspy) of the values; fewer classes when there are few values."""
    vals = sorted(float(v) for v in values if v is not None and not math.isnan(v))
    k = min(classes, len(set(vals)) - 1)
    if k < 2:
        return [vals[0], vals[-1]] if vals else []
    import jenkspy

    return list(jenkspy.jenks_breaks(vals, n_classes=k))


def top_performers(avg: pd.DataFrame, classes: int = 3, insn: pd.DataFrame | None = None) -> dict:
    """Section 5.4: per platform, the top natural-breaks group of encryption speed; and the
    ciphers in the top group of every platform (hardware platforms only).

    Emulated platforms are grouped by guest instructions per block (from `insn`, see
    instruction_averages) when available, since their wall-clock speed measures QEMU."""
    groups: dict[str, dict] = {}
    emulated = set(avg[avg.emulated.astype(bool)].target) if not avg.empty else set()
    parts = [avg[~avg.target.isin(emulated)]] if emulated else [avg]
    if emulated:
        by_insn = insn[insn.target.isin(emulated)] if insn is not None and not insn.empty else insn
        have = set(by_insn.target) if by_insn is not None and not by_insn.empty else set()
        parts += [by_insn.assign(basis="guest instructions")] if have else []
        parts.append(avg[avg.target.isin(emulated - have)])
    data = pd.concat([p for p in parts if p is not None and not p.empty]) if any(
        p is not None and not p.empty for p in parts) else avg
    for target, g in data.groupby("target"):
        breaks = natural_breaks(list(g.value), classes)
        if len(breaks) < 2:
            continue
        edges = breaks[1:-1]
        group_of = {row: 1 + sum(v <= e for e in edges[::-1]) for row, v in zip(g.row, g.value)}
        # group 1 = fastest
        n_groups = len(edges) + 1
        groups[target] = {
            "emulated": bool(g.emulated.iloc[0]),
            "basis": g["basis"].iloc[0] if "basis" in g and isinstance(g["basis"].iloc[0], str) else "Kbit/s",
            "breaks": breaks,
            "groups": [[r for r, k in group_of.items() if k == i] for i in range(1, n_groups + 1)],
        }
    hw = [t for t, v in groups.items() if not v["emulated"]]
    consistent = sorted(set.intersection(*(set(groups[t]["groups"][0]) for t in hw))) if hw else []
    return {"platforms": groups, "consistent": consistent, "hardware_platforms": hw}


def compilers_relative(df: pd.DataFrame) -> pd.DataFrame:
    """Per cipher row and target: each toolchain's encryption speed / the best toolchain's."""
    sel = _at_key(df, "encrypt_speed")
    if sel.empty:
        return pd.DataFrame()
    sel["row"] = row_labels(sel)
    sel["relative"] = sel.value / sel.groupby(["target", "row"]).value.transform("max")
    return sel.pivot_table(index=["target", "row"], columns="toolchain", values="relative").sort_index()


def correctness_matrix(cells: pd.DataFrame) -> dict:
    """cipher-row x (target, toolchain) -> (status, reason)."""
    if cells.empty:
        return {"columns": [], "rows": []}
    c = cells.copy()
    c["row"] = row_labels(c)
    cols = sorted({(t, tc) for t, tc in zip(c.target, c.toolchain)})
    rows = []
    for row, g in c.groupby("row"):
        by = {(t, tc): (s, r) for t, tc, s, r in zip(g.target, g.toolchain, g.status, g.reason)}
        rows.append({"row": row, "cells": [by.get(col) for col in cols]})
    return {"columns": cols, "rows": rows}


def memory_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per implementation: static table bytes, key-schedule bytes, code bytes (gcc-O3 build when
    present), and its best encryption speed on the first hardware target."""
    facts = df[df.metric.isin(["table_bytes", "key_schedule_bytes", "code_bytes"])]
    if facts.empty:
        return pd.DataFrame()
    facts = facts.copy()
    facts["row"] = row_labels(facts)
    pref = facts.toolchain.map(lambda t: 0 if t == "gcc-O3" else 1)
    facts = facts.assign(pref=pref).sort_values("pref")
    mem = facts.groupby(["row", "cipher", "implementation", "metric"]).value.first().unstack("metric").reset_index()
    speed = _at_key(df[~df.emulated.astype(bool)], "encrypt_speed")
    if not speed.empty:
        speed = speed.copy()
        speed["row"] = row_labels(speed)
        best = speed.groupby("row").value.max().rename("encrypt_speed")
        mem = mem.merge(best, left_on="row", right_index=True, how="left")
    for col in ("table_bytes", "key_schedule_bytes", "code_bytes", "encrypt_speed"):
        if col not in mem:
            mem[col] = np.nan
    return mem.sort_values(["cipher", "implementation"]).reset_index(drop=True)


def kendall_tau(ours: list[str], theirs: list[str]) -> tuple[float, int]:
    """Kendall's tau between two rankings over their common items; (tau, n common)."""
    from scipy.stats import kendalltau

    common = [x for x in ours if x in theirs]
    if len(common) < 3:
        return float("nan"), len(common)
    a = [ours.index(x) for x in common]
    b = [theirs.index(x) for x in common]
    tau, _ = kendalltau(a, b)
    return float(tau), len(common)


def rank(values: pd.Series, higher_is_better: bool = True) -> list[str]:
    return list(values.sort_values(ascending=not higher_is_better).index)
