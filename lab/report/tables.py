"""Report tables computed from the tidy results (never from running anything)."""

from __future__ import annotations

import math

import pandas as pd

A1_KEYS = (128, 192, 256)
A2_SIZES = (1, 16, 128, 1024, 32768)


def row_labels(df: pd.DataFrame) -> pd.Series:
    """Row name per result row: the cipher's label, plus the strategy when several are shown."""
    multi = df.groupby("cipher")["implementation"].transform("nunique") > 1
    return df["label"].where(~multi, df["label"] + " [" + df["implementation"] + "]")


def at_key_size(df: pd.DataFrame, key_size: int = 128) -> pd.DataFrame:
    """Per cell, the rows at key_size, or at the cell's smallest key when it has no such size
    (DES 64, 3DES 192): the one rule every table and chart uses to pick a key size."""
    if df.empty:
        return df
    has = df.groupby("cell").key_size.transform(lambda k: (k == key_size).any())
    smallest = df.groupby("cell").key_size.transform("min")
    return df[(has & (df.key_size == key_size)) | (~has & (df.key_size == smallest))]


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


def _fmt(v: float, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:,.{digits}f}"


def a1_table(df: pd.DataFrame, cells: pd.DataFrame, toolchain: str, target: str) -> dict:
    """NIST Appendix A.1: Enc/Dec Kbit/s and Key keys/s for 128/192/256-bit keys.

    Returns {"columns": [...], "rows": [{"label", "status", "reason", "cells": [{"text","title"}]}],
    "other": rows of ciphers with other key sizes (DES 64, 3DES 192 also listed by size)}.
    """
    sel = df[(df.toolchain == toolchain) & (df.target == target)].copy()
    sel["row"] = row_labels(sel) if not sel.empty else []
    cs = cells[(cells.toolchain == toolchain) & (cells.target == target)].copy()
    cs["row"] = row_labels(cs) if not cs.empty else []
    columns = [f"{op}{k}" for k in A1_KEYS for op in ("Enc", "Dec", "Key")]
    metric_of = {"Enc": "encrypt_speed", "Dec": "decrypt_speed", "Key": "key_setup_speed"}
    rows, other = [], []
    for _, c in cs.sort_values("row").iterrows():
        mine = sel[sel.cell == c.cell]
        entry = {"label": c.row, "status": c.status, "reason": c.reason, "cells": [], "cell": c.cell}
        sizes = sorted(int(k) for k in mine[mine.metric == "encrypt_speed"].key_size.dropna().unique())
        aes_like = not sizes or any(k in A1_KEYS for k in sizes)
        keys = A1_KEYS if aes_like else tuple(sizes)
        for k in keys:
            for op in ("Enc", "Dec", "Key"):
                r = mine[(mine.metric == metric_of[op]) & (mine.key_size == k)]
                if r.empty:
                    entry["cells"].append({"text": "", "title": "not measured"})
                else:
                    r = r.iloc[0]
                    entry["cells"].append({
                        "text": _fmt(r.value), "value": r.value,
                        "title": f"{op}{k}: mean within 3 sd of median = {r.value:,.1f} {r.unit}; "
                                 f"median {r['median']:,.1f}; sd {r['std']:,.1f}; n {int(r['n'])}/{int(r['n_total'])}",
                    })
        if aes_like:
            rows.append(entry)
        else:
            entry["key_sizes"] = list(keys)
            other.append(entry)
    return {"columns": columns, "rows": rows, "other": other}


def a2_table(df: pd.DataFrame, toolchain: str, target: str, key_size: int = 128, prefix: str | None = None) -> dict:
    """NIST Appendix A.2: EKey, DKey, Encrypt-n/Decrypt-n per block, Init; sorted by Encrypt-128.

    prefix "" uses the cycle counter, "insn_" guest-instruction counts; None picks the cycle
    counter when the platform has one, else instructions (emulated targets)."""
    sel = df[(df.toolchain == toolchain) & (df.target == target) & (df.status == "ok")].copy()
    if prefix is None:
        prefix = "" if (sel.metric == "ekey").any() else "insn_"
    sel = sel[sel.metric.str.startswith(prefix)] if prefix else sel[~sel.metric.str.startswith("insn_")]
    sel = sel.assign(metric=sel.metric.str.removeprefix(prefix)) if prefix else sel
    if sel.empty:
        return {"columns": [], "rows": [], "unit": None, "counter": None}
    sel["row"] = row_labels(sel)
    # ciphers without a 128-bit key (DES) use their own smallest size
    first_ks = sel[sel.metric == "ekey"].groupby("cell")["key_size"].min()
    columns = ["EKey", "DKey"] + [f"{d}-{n}" for n in A2_SIZES for d in ("Encrypt", "Decrypt")] + ["Init", "Null"]
    rows = []
    for cell, g in sel.groupby("cell"):
        ks = key_size if (g[g.metric == "ekey"].key_size == key_size).any() else first_ks.get(cell)
        g = g[g.key_size == ks]
        if g.empty:
            continue

        def val(metric, n=None):
            r = g[(g.metric == metric) & ((g.n_blocks == n) if n else g.n_blocks.isna())]
            return r.iloc[0] if not r.empty else None

        cells, sort_key = [], math.inf
        for col in columns:
            if col in ("EKey", "DKey", "Init", "Null"):
                r = val({"EKey": "ekey", "DKey": "dkey", "Init": "init", "Null": "null_overhead"}[col])
            else:
                d, n = col.split("-")
                r = val("encrypt_per_block" if d == "Encrypt" else "decrypt_per_block", int(n))
            if r is None:
                cells.append({"text": "", "title": "not measured"})
                continue
            if col == "Encrypt-128":
                sort_key = r.value
            cells.append({"text": _fmt(r.value, 0), "value": r.value,
                          "title": f"{col}: {r.value:,.1f} {r.unit}; median {r['median']:,.1f}; sd {r['std']:,.1f}; "
                                   f"n {int(r['n'])}/{int(r['n_total'])}"})
        label = g.row.iloc[0] + ("" if ks == key_size else f" ({int(ks)}-bit key)")
        rows.append({"label": label, "cells": cells, "sort": sort_key})
    rows.sort(key=lambda r: r["sort"])
    unit = sel[sel.metric == "ekey"].unit.iloc[0] if (sel.metric == "ekey").any() else None
    counter = sel[sel.metric == "ekey"].counter.iloc[0] if (sel.metric == "ekey").any() else None
    return {"columns": columns, "rows": rows, "unit": unit, "counter": counter}


def encryption_speeds(df: pd.DataFrame, toolchain: str, target: str, key_size: int = 128) -> pd.DataFrame:
    """Encrypt speed (Kbit/s) per row label at key_size (or the cipher's own size)."""
    sel = df[(df.toolchain == toolchain) & (df.target == target) & (df.metric == "encrypt_speed")].copy()
    if sel.empty:
        return pd.DataFrame(columns=["row", "value", "std", "key_size"])
    sel["row"] = row_labels(sel)
    out = at_key_size(sel, key_size)[["row", "value", "std", "key_size", "cipher"]]
    return out.sort_values("value", ascending=False).reset_index(drop=True)


def normalised_key_plus_encryption(df: pd.DataFrame, toolchain: str, target: str, key_size: int = 128) -> pd.DataFrame:
    """Section 5.1: key-setup time and encryption time per block, each divided by the best
    (smallest) in its category, summed. 2.0 = best in both; larger is slower."""
    sel = df[(df.toolchain == toolchain) & (df.target == target)
             & df.metric.isin(["encrypt_speed", "key_setup_speed"])].copy()
    if sel.empty:
        return pd.DataFrame(columns=["row", "key_norm", "enc_norm", "metric"])
    sel["row"] = row_labels(sel)
    sel = at_key_size(sel, key_size)
    t = sel.pivot_table(index=["cell", "row", "cipher", "key_size"], columns="metric", values="value").reset_index()
    if not {"encrypt_speed", "key_setup_speed"} <= set(t.columns):
        return pd.DataFrame(columns=["row", "key_norm", "enc_norm", "metric"])
    t = t.dropna(subset=["encrypt_speed", "key_setup_speed"])
    t["key_time"] = 1.0 / t.key_setup_speed  # seconds per key
    t["enc_time"] = 1.0 / t.encrypt_speed  # seconds per Kbit
    return normalise(t)


def instructions_table(df: pd.DataFrame, n_blocks: int = 128, key_size: int = 128) -> dict:
    """Guest instructions per block (Encrypt-n) for every target, one table per toolchain, with
    the host's measured encryption speed alongside: the deterministic column all targets share."""
    sel = df[(df.metric == "insn_encrypt_per_block") & (df.n_blocks == n_blocks) & (df.status == "ok")].copy()
    if sel.empty:
        return {"toolchains": []}
    sel["row"] = row_labels(sel)
    sel = at_key_size(sel, key_size)
    speed = df[(df.metric == "encrypt_speed") & (df.status == "ok") & ~df.emulated.astype(bool)].copy()
    speed["row"] = row_labels(speed) if not speed.empty else []
    out = []
    for tc, g in sel.groupby("toolchain"):
        targets = sorted(g.target.unique(), key=lambda t: (t not in ("host", "x86_64"), t))
        hw = speed[(speed.toolchain == tc)]
        hw_target = hw.target.iloc[0] if not hw.empty else None
        rows = []
        for row, gr in g.groupby("row"):
            v = {t: gr[gr.target == t].value.iloc[0] if (gr.target == t).any() else None for t in targets}
            sp = hw[(hw.row == row) & (hw.target == hw_target)]
            sp = sp[sp.key_size == key_size] if (sp.key_size == key_size).any() else sp
            rows.append({"row": row, "values": v, "speed": sp.value.iloc[0] if not sp.empty else None})
        rows.sort(key=lambda r: next((x for x in r["values"].values() if x is not None), math.inf))
        out.append({"toolchain": tc, "targets": targets, "rows": rows, "speed_target": hw_target})
    return {"toolchains": out, "n_blocks": n_blocks}
