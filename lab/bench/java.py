"""invoke bench.java: every Java implementation and Java peer under the C2 profile, and our Java against our C.

Issue 25's goals: each of our Java implementations within 1.0x of Bouncy Castle's for the same cipher (portable
Java against portable Java), and our Java <= 2.0x our portable C for every finalist.  All are cost ratios from
interleaved rounds (lab.java.interleaved_rounds, lab.java.paired_ratios): in each round every Java implementation
of a cipher runs back to back under JMH (one fork, the first key size), then our portable C of the finalists
(the lab's timing program through a quick run on the host, gcc-O3); the ratio is taken within each round, so a
drift of a shared machine between rounds cancels, and the median with the smallest and largest over rounds is
reported.  Everything is gated first (the Java kat program, the C build's gate).
"""

from __future__ import annotations

from pathlib import Path

from .. import java, results
from ..config import Lab
from ..status import Status
from . import header, store

FINALISTS = ("mars", "rc6", "rijndael", "serpent", "twofish")
BENCHMARKS = ["encrypt1", "encrypt1024", "keySetup"]
C2 = "openjdk17-c2"


def _c_round(lab: Lab, ciphers: list[str], work: Path, toolchain: str) -> dict[str, dict[str, float]]:
    """One quick run of our default portable C of `ciphers` on the host: {"c:<cipher>": {encrypt1: ns per block,
    keySetup: ns per key pair}} (the best process, as JMH's best fork is taken)."""
    from ..run import RunRequest, run

    o = run(lab, RunRequest(ciphers=ciphers, implementations="default", toolchains=[toolchain], targets=["host"],
                            profile="quick", icount=False, tag="bench-java-c", results_dir=work / "results",
                            build_dir=lab.root / "build"))
    df = results.load(o.run_dir, work / "results")
    out: dict[str, dict[str, float]] = {}
    for metric, bench in (("encrypt_speed", "encrypt1"), ("key_setup_speed", "keySetup")):
        sel = df[(df.metric == metric) & (df.status == Status.OK) & (df.impl_class == "portable")]
        for cipher, g in sel.groupby("cipher"):
            r = g.sort_values("key_size").iloc[0]  # the first key size, as the Java rounds use
            out.setdefault(f"c:{cipher}", {})[bench] = float(min(r.per_process))
    # Encrypt-1024 (the cycles program, TSC ticks per block) in ns per 1024-block call, with the TSC rate the run
    # measured: JMH's encrypt1024 is one such call
    hz = results.read_run(o.run_dir)[0].tsc_hz_measured
    sel = df[(df.metric == "encrypt_per_block") & (df.n_blocks == 1024) & (df.status == Status.OK)
             & (df.impl_class == "portable") & (df.unit == "tsc_ticks")]
    for cipher, g in sel.groupby("cipher") if hz else []:
        r = g.sort_values("key_size").iloc[0]
        out.setdefault(f"c:{cipher}", {})["encrypt1024"] = float(min(r.per_process)) / hz * 1e9 * 1024
    return out


def bench(lab: Lab, ciphers: list[str] | None = None, rounds: int = 3, toolchain: str = "gcc-O3",
          out: Path | None = None, say=print, **jmh) -> dict:
    impls = java.discover(lab)
    prof = java.profiles()[C2]
    b = java.build(lab.root / "build", impls)
    chosen = [i for i in impls.values() if not ciphers or i.cipher in ciphers]
    gated, refused = [], {}
    for i in chosen:
        v = java.run_kat(b, i, prof)
        (gated.append(i) if v.ok else refused.__setitem__(i.id, v.line()))
    by_cipher: dict[str, list[java.JavaImpl]] = {}
    for i in gated:
        by_cipher.setdefault(i.cipher, []).append(i)
    fin = [c for c in FINALISTS if c in by_cipher and any(i.impl_class == "portable" for i in by_cipher[c])]
    work = lab.root / "build" / "bench-java"
    settings = {"forks": 1, "warmup": 3, "iterations": 5, "iteration_ms": 200, **jmh}
    all_rounds: list[dict[str, dict[str, float]]] = []
    for rnd in range(rounds):
        cur: dict[str, dict[str, float]] = {}
        for cipher, group in sorted(by_cipher.items()):
            say(f"round {rnd + 1}/{rounds}: {cipher} ({', '.join(i.name for i in group)})")
            cur.update(java.interleaved_rounds(b, group, prof, work / "jmh" / f"r{rnd}", rounds=1,
                                               benchmarks=BENCHMARKS, **settings)[0])
        if fin:
            say(f"round {rnd + 1}/{rounds}: portable C of {', '.join(fin)} ({toolchain})")
            cur.update(_c_round(lab, fin, work, toolchain))
        all_rounds.append(cur)
    peers_rows, c_rows = [], []
    for cipher, group in sorted(by_cipher.items()):
        for ours in (i for i in group if i.impl_class == "portable"):
            for peer in (i for i in group if i.impl_class == "peer"):
                for bname, r in java.paired_ratios(all_rounds, ours.id, peer.id).items():
                    peers_rows.append({"cipher": cipher, "ours": ours.id, "peer": peer.id, "peer_code": peer.code,
                                       "benchmark": bname, **r,
                                       "goal": "<= 1.0" if peer.library == "bouncycastle" else None,
                                       "met": r["high"] <= 1.0 if peer.library == "bouncycastle" else None})
            if cipher in fin:
                for bname, r in java.paired_ratios(all_rounds, ours.id, f"c:{cipher}").items():
                    c_rows.append({"cipher": cipher, "ours": ours.id, "c": f"{cipher} default portable C, "
                                   f"{toolchain}", "benchmark": bname, **r, "goal": "<= 2.0",
                                   "met": r["high"] <= 2.0})
    doc = {**header("java"), "jvm_profile": C2, "java_version": java.java_version(), "rounds": rounds,
           "jmh": settings, "refused": refused, "ours_vs_peers": peers_rows, "java_vs_c": c_rows,
           "raw_rounds": all_rounds,
           "note": "cost ratios (below 1: ours is cheaper); median over rounds with [smallest, largest]; "
                   "the machine is shared and noisy"}
    say(format_table(peers_rows, "peer"))
    say(format_table(c_rows, "c"))
    store(lab.root, doc, "java", out, say)
    return doc


def format_table(rows: list[dict], other: str) -> str:
    lines = [f"| cipher | ours | {other} | benchmark | ours/{other} (median) | [min, max] over rounds | goal |",
             "|" + " --- |" * 7]
    for r in rows:
        goal = f"{r['goal']}: {'met' if r['met'] else 'not met'}" if r.get("goal") else ""
        lines.append(f"| {r['cipher']} | {r['ours']} | {r[other]} | {r['benchmark']} | {r['median']:.2f} | "
                     f"[{r['low']:.2f}, {r['high']:.2f}] | {goal} |")
    return "\n".join(lines)
