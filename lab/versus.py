"""Our code against other code of the same cipher on the same machine, each a ratio of costs with its interval
and a verdict (lab/stats.py ``compare`` over the two cells' per-process figures, the run's estimator):

* our fastest implementation of a kind against the fastest peer library of that kind (portable C or scalar
  assembly against our portable code; SIMD against SIMD; hardware against hardware);
* our fastest SIMD and hardware code against our fastest portable code (the speed-up vectors buy);
* our fastest Java against our fastest portable C (Sterbenz & Lipp: "less than a factor of two").

Judges of stored results, below the report: lab/findings.py computes them for it (docs/architecture.md).
"""

from __future__ import annotations

import pandas as pd

from . import stats
from .results import at_key_size, by_language, ok_rows

HEADLINE_KEY = 128
TWO = 2.0  # Sterbenz & Lipp: Java "less than a factor of two" slower than C


def _at_key(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of one metric of ok cells at the headline key size (or the cipher's smallest key when it has no
    such size), every class of implementation."""
    return at_key_size(ok_rows(df, metric), HEADLINE_KEY)


def _fastest(rows: pd.DataFrame) -> pd.Series:
    """The fastest row of speeds (the highest estimate)."""
    return rows.loc[rows.estimate.idxmax()]


def _per_call(df: pd.DataFrame, blocks: int) -> pd.DataFrame:
    """Hardware-target rows of encryption at `blocks` blocks per call: the timing program's speed for one block
    (NIST's blockEncrypt), the cycle program's Encrypt-n cost per block for more."""
    hw = df[~df.emulated.astype(bool)]
    if blocks == 1:
        return _at_key(hw, "encrypt_speed")
    return _at_key(hw[hw.n_blocks == blocks], "encrypt_per_block")


def _cells_per_call(df: pd.DataFrame, blocks_per_call: tuple[int, ...]):
    """(blocks, target, toolchain, cipher, rows) for every block count and hardware cell group."""
    for blocks in blocks_per_call:
        for (target, tc, cipher), g in _per_call(df, blocks).groupby(["target", "toolchain", "cipher"]):
            yield blocks, target, tc, cipher, g


def _best(rows: pd.DataFrame, blocks: int) -> pd.Series:
    return rows.loc[rows.estimate.idxmax() if blocks == 1 else rows.estimate.idxmin()]


def versus_libraries(df: pd.DataFrame, blocks_per_call: tuple[int, ...] = (1, 1024)) -> list[dict]:
    """Per hardware target, toolchain, cipher and block count per call (1: NIST's one block per call, the timing
    program; 1024: many-block calls, where SIMD code pays, Encrypt-1024 per block): our fastest implementation of
    a kind against the fastest peer of the same kind (portable C or scalar assembly against our portable code;
    SIMD against SIMD; hardware against hardware), as the ratio of costs ours / peer with its interval (below 1:
    ours is faster)."""
    kind_of_peer = {"portable": "portable", "asm": "portable", "simd": "simd", "hardware": "hardware"}
    out = []
    for blocks, target, tc, cipher, g in _cells_per_call(df, blocks_per_call):
        peers = g[g.impl_class == "peer"]
        for kind in ("portable", "simd", "hardware"):
            ours = g[g.impl_class == kind]
            theirs = peers[peers.code.map(kind_of_peer) == kind]
            if ours.empty or theirs.empty:
                continue
            a, b = _best(ours, blocks), _best(theirs, blocks)
            cmp = stats.compare(b.per_process, a.per_process, a.estimator)  # costs: ours / peer, the run's estimator
            out.append({"target": target, "toolchain": tc, "cipher": cipher, "kind": kind,
                        "ours": a.implementation, "ours_speed": a.estimate, "peer": b.implementation,
                        "peer_library": _text(b.get("library")), "peer_speed": b.estimate, "ratio": cmp.ratio,
                        "ci_low": cmp.ci_low, "ci_high": cmp.ci_high,
                        "verdict": {"faster": "ours faster", "slower": "peer faster"}.get(cmp.verdict, "tie"),
                        "blocks": blocks, "unit": a.unit})
    return out


def class_speedups(df: pd.DataFrame, blocks_per_call: tuple[int, ...] = (1, 16, 128, 1024)) -> list[dict]:
    """Per hardware target, toolchain, cipher and block count per call: our fastest SIMD and hardware
    implementation against our fastest portable one, as a speed-up (portable cost / theirs) with its interval.
    One-block calls take the scalar path of SIMD code; many-block calls show what the vectors buy."""
    out = []
    for blocks, target, tc, cipher, g in _cells_per_call(df, blocks_per_call):
        base = g[g.impl_class == "portable"]
        for kind in ("simd", "hardware"):
            ours = g[g.impl_class == kind]
            if base.empty or ours.empty:
                continue
            p, a = _best(base, blocks), _best(ours, blocks)
            c = stats.compare(a.per_process, p.per_process, a.estimator)  # costs: portable / ours
            out.append({"target": target, "toolchain": tc, "cipher": cipher, "kind": kind, "blocks": blocks,
                        "impl": a.implementation, "portable": p.implementation, "speedup": c.ratio,
                        "ci_low": c.ci_low, "ci_high": c.ci_high,
                        "verdict": {"slower": "faster than portable", "faster": "slower than portable"}.get(
                            c.verdict, "no difference")})
    return out


def java_vs_c(df: pd.DataFrame, metric: str = "encrypt_speed", key_size: int = HEADLINE_KEY) -> list[dict]:
    """Per cipher and machine: our fastest Java cell against our fastest portable C cell (hardware targets), as
    the cost ratio Java / C with its interval (the run's estimator over per-process costs)."""
    c_rows, j_rows = by_language(df)
    out = []
    c = at_key_size(ok_rows(c_rows, metric, estimated=True), key_size)
    c = c[(c.impl_class == "portable") & ~c.emulated.astype(bool)]
    j = at_key_size(ok_rows(j_rows, metric, estimated=True), key_size)
    j = j[j.impl_class == "portable"]
    for (machine, cipher), g in j.groupby(["machine", "cipher"]):
        cg = c[(c.machine == machine) & (c.cipher == cipher)]
        if cg.empty:
            continue
        a, b = _fastest(g), _fastest(cg)
        cmp = stats.compare(b.per_process, a.per_process, a.estimator)  # costs: Java / C
        verdict = "below 2x" if cmp.ci_high < TWO else "above 2x" if cmp.ci_low > TWO else "undecided"
        out.append({"machine": machine, "cipher": cipher, "display": a.display, "key_size": int(a.key_size),
                    "java": f"{a.implementation} @ {a.toolchain}", "java_speed": a.estimate,
                    "c": f"{b.implementation} @ {b.toolchain} / {b.target}", "c_speed": b.estimate,
                    "ratio": cmp.ratio, "ci_low": cmp.ci_low, "ci_high": cmp.ci_high, "verdict": verdict,
                    "processes": f"{len(a.per_process)} / {len(b.per_process)}"})
    return sorted(out, key=lambda r: (r["machine"], r["ratio"]))



__all__ = ["versus_libraries", "class_speedups", "java_vs_c", "TWO"]


def _text(v) -> str | None:
    """A text column's value, None where a row has none (NaN in a frame of older runs)."""
    return v if isinstance(v, str) and v else None
