"""The report's Java section (rows with language java: the cells of JVM profiles, lab/pipeline.py): Java is
never ranked with C.

* A.1-form tables per JVM profile (our Java implementations ranked among themselves; the Java peers apart);
* our best Java against our best portable C per cipher on the same machine: the cost ratio with its interval,
  and whether it is still "less than 2x" (Sterbenz & Lipp's claim), judged by lab/versus.py;
* the interpreter, C1 and C2 side by side per implementation (the 1999 papers' interpreter-vs-JIT factor);
* Kendall's tau (with its p-value) of our ranking against Sterbenz & Lipp's appendix (their method, measured
  today: the sl_* quantities) and against NIST's slide 29 (the NIST API timing: encrypt_speed), like with like.

Bouncy Castle and SunJCE appear in the report's "versus the libraries" (lab/versus.py over the Java rows: the
JVM profile is the toolchain, so Java never meets C there either).
"""

from __future__ import annotations

import math

import pandas as pd
from scipy import stats as sps

from ..models import Status
from ..results import at_key_size, by_language, ok_rows
from . import reference, tables

JIT_ORDER = {"interpreter": 0, "C1": 1, "C2": 2, "C2 (tiered)": 2}
# the key sizes each table printed for DES and 3DES (keys with parity bits in the lab: 64, 192)
REF_KEYS = {"des": 56, "3des": 168}


def jit_side_by_side(df: pd.DataFrame, jit: dict[str, str], metric: str = "encrypt_speed",
                     key_size: int = 128) -> dict:
    """Per implementation (ours and peers): the speed under each JVM profile, the profiles ordered interpreter,
    C1, C2, and the factor of the fastest JIT profile over the interpreter."""
    _, j = by_language(df)
    j = at_key_size(ok_rows(j, metric, estimated=True), key_size)
    profiles = sorted(j.toolchain.unique(), key=lambda p: (JIT_ORDER.get(jit.get(p, ""), 3), p))
    rows = []
    for (machine, row), g in j.groupby(["machine", "row"]):
        by = {r.toolchain: r for r in g.itertuples()}
        speeds = {p: (by[p].estimate if p in by else None) for p in profiles}
        interp = [by[p].estimate for p in by if jit.get(p) == "interpreter"]
        jits = [by[p].estimate for p in by if jit.get(p) not in (None, "interpreter")]
        factor = max(jits) / max(interp) if interp and jits else None
        rows.append({"machine": machine, "row": row, "impl_class": g.impl_class.iloc[0], "speeds": speeds,
                     "factor": factor})
    factors = [r["factor"] for r in rows if r["factor"]]
    return {"profiles": [{"name": p, "jit": jit.get(p, "?")} for p in profiles], "rows": rows,
            "median_factor": float(pd.Series(factors).median()) if factors else None}


def _ranking(ours: pd.DataFrame, ref: pd.DataFrame, metric_ours: str, metric_ref: str, use: str) -> dict | None:
    """Kendall's tau between our speeds and a table's, over the ciphers both have (at the table's key sizes)."""
    pairs = []
    for cipher, g in ref[ref.metric == metric_ref].groupby("cipher"):
        ks = 128 if cipher not in REF_KEYS else REF_KEYS[cipher]
        r = g[g.key_size.astype(float) == ks]
        mine = at_key_size(ours[(ours.cipher == cipher) & (ours.metric == metric_ours)], 128)
        if r.empty or mine.empty:
            continue
        pairs.append((cipher, float(r.value.iloc[0]), float(mine.iloc[0][use])))
    if len(pairs) < 3:
        return None
    t = sps.kendalltau([p[1] for p in pairs], [p[2] for p in pairs])
    return {"tau": float(t.statistic), "p": float(t.pvalue), "n": len(pairs),
            "rows": [{"cipher": c, "theirs": a, "ours": b} for c, a, b in sorted(pairs, key=lambda p: -p[1])]}


def rank_correlations(df: pd.DataFrame, jit: dict[str, str]) -> list[dict]:
    """Per JIT profile (the papers timed JITs): our default Java implementations ranked against Sterbenz & Lipp's
    appendix (by their method: sl_* values, the mean within 3 sd) and NIST's slide 29 (encrypt and key-setup
    speeds by the lab's timing), 128-bit keys (DES 56/64, 3DES 168/192)."""
    _, j = by_language(df)
    j = j[(j.status == Status.OK) & (j.impl_class == "portable") & (j.default.astype("boolean").fillna(False))]
    out = []
    sl = reference.sterbenz()
    sl = sl[sl.table == "Appendix"]
    slides = reference.slides_java()
    for prof, g in j.groupby("toolchain"):
        if jit.get(prof) == "interpreter":
            continue
        for name, ref, mo, mr, use in (
                ("Sterbenz & Lipp appendix, encryption (their method)", sl, "sl_encrypt_speed", "encrypt_speed",
                 "value"),
                ("Sterbenz & Lipp appendix, decryption (their method)", sl, "sl_decrypt_speed", "decrypt_speed",
                 "value"),
                ("Sterbenz & Lipp appendix, encryption key setup (their method)", sl, "sl_key_setup_speed_enc",
                 "key_setup_speed_enc", "value"),
                ("NIST slide 29, encryption (JDK 1.1.6 JIT; lab timing)", slides, "encrypt_speed", "encrypt_speed",
                 "estimate"),
                ("NIST slide 29, decryption (JDK 1.1.6 JIT; lab timing)", slides, "decrypt_speed", "decrypt_speed",
                 "estimate")):
            r = _ranking(g, ref, mo, mr, use)
            if r is not None:
                out.append({"profile": prof, "reference": name, **r})
    return out


def section(df: pd.DataFrame, cells: pd.DataFrame, jit: dict[str, str], vs_c: dict) -> dict:
    """Everything the Java section shows (empty when no Java cell was run); vs_c: Java against C, judged
    (lab/versus.py java_vs_c: its rows and the factor it is judged against)."""
    _, j = by_language(df)
    _, jc = by_language(cells)
    if jc.empty:
        return {"present": False}
    profiles = []
    for (tc, tg) in tables.platforms(jc):
        a1 = tables.a1_table(j, jc, tc, tg)
        profiles.append({"profile": tc, "target": tg, "jit": jit.get(tc, "?"), "a1": a1})
    failed = jc[jc.status != Status.OK].sort_values("cell").to_dict("records")
    return {"present": True, "profiles": profiles, "failed": failed, "vs_c": vs_c["rows"],
            "jit": jit_side_by_side(df, jit), "ranks": rank_correlations(df, jit), "two": vs_c["two"],
            "n_cells": len(jc)}


def jit_states(metas_cells: list) -> dict[str, str]:
    """{JVM profile: JIT state} from the cell records (lab.results.JavaInfo.jit)."""
    out: dict[str, str] = {}
    for c in metas_cells:
        if getattr(c, "java", None) is not None:
            out.setdefault(c.toolchain, c.java.jit)
    return out


def finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)
