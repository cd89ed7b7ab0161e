"""invoke bench.java: every Java implementation and Java peer under the C2 profile, and our Java against our C.

Issue 25's goals: each of our Java implementations within 1.0x of Bouncy Castle's for the same cipher (portable
Java against portable Java), and our Java <= 2.0x our portable C for every finalist.

Both sides are sampled alike: the C side is the lab's timing program (a quick run on the host, gcc-O3: per
process the minimum over many 100-us samples, the processes pinned to one CPU); the Java side is JMH with many
short iterations (2 ms, after a 20 x 20 ms warm-up in which C2 compiles the hot methods), several forks, each
fork pinned to the same CPU, and per fork the minimum over its iterations.  Forks and processes are the units of
replication on both sides: a ratio is the lab's per-process-minimum estimator of one side over the other's, with
its bootstrap interval over processes (lab.stats.compare).  With more than one round the rounds interleave Java
and C and their processes are pooled.  Everything is gated first (the Java kat program, the C build's gate), and
JMH runs under the machine's timing lock, as the C run does.
"""

from __future__ import annotations

from pathlib import Path

from .. import java, results, stats
from ..config import Lab
from ..lock import timing_lock
from ..models import Status
from ..system import pick_cpu
from . import header, store

FINALISTS = ("mars", "rc6", "rijndael", "serpent", "twofish")
BENCHMARKS = ["encrypt1", "encrypt1024", "keySetup"]
C2 = "openjdk17-c2"


# JMH as the C side samples: many short iterations per fork, the minimum per fork, forks pinned to one CPU
JMH_SETTINGS = {"forks": 5, "warmup": 20, "warmup_ms": 20, "iterations": 100, "iteration_ms": 2}


def _c_round(lab: Lab, ciphers: list[str], work: Path, toolchain: str) -> dict[str, dict[str, list[float]]]:
    """One quick run of our default portable C of `ciphers` on the host: {"c:<cipher>": {encrypt1: ns per block,
    encrypt1024: ns per 1024-block call, keySetup: ns per key pair}}, each a list of per-process minima."""
    from ..run import RunRequest, run

    o = run(lab, RunRequest(ciphers=ciphers, implementations="default", toolchains=[toolchain], targets=["host"],
                            profile="quick", icount=False, tag="bench-java-c", results_dir=work / "results",
                            build_dir=lab.root / "build"))
    df = results.load(o.run_dir, work / "results")
    out: dict[str, dict[str, list[float]]] = {}
    for metric, bench in (("encrypt_speed", "encrypt1"), ("key_setup_speed", "keySetup")):
        sel = df[(df.metric == metric) & (df.status == Status.OK) & (df.impl_class == "portable")]
        for cipher, g in sel.groupby("cipher"):
            r = g.sort_values("key_size").iloc[0]  # the first key size, as the Java runs use
            out.setdefault(f"c:{cipher}", {})[bench] = [float(x) for x in r.per_process]
    # Encrypt-1024 (the cycles program, TSC ticks per block) in ns per 1024-block call, with the TSC rate the run
    # measured: JMH's encrypt1024 is one such call
    hz = results.read_run(o.run_dir)[0].tsc_hz_measured
    sel = df[(df.metric == "encrypt_per_block") & (df.n_blocks == 1024) & (df.status == Status.OK)
             & (df.impl_class == "portable") & (df.unit == "tsc_ticks")]
    for cipher, g in sel.groupby("cipher") if hz else []:
        r = g.sort_values("key_size").iloc[0]
        out.setdefault(f"c:{cipher}", {})["encrypt1024"] = [float(x) / hz * 1e9 * 1024 for x in r.per_process]
    return out


def _pool(into: dict[str, dict[str, list[float]]], more: dict[str, dict[str, list[float]]]) -> None:
    for impl, benches in more.items():
        for b, xs in benches.items():
            into.setdefault(impl, {}).setdefault(b, []).extend(xs)


def ratios(pooled: dict[str, dict[str, list[float]]], ours: str, other: str) -> dict[str, dict]:
    """Cost ratio ours / other per benchmark: the per-process-minimum estimator of each side and the bootstrap
    interval over both sides' processes (lab.stats.compare, confidence 0.95)."""
    out = {}
    for b in sorted(set(pooled.get(ours, {})) & set(pooled.get(other, {}))):
        xo, xt = pooled[ours][b], pooled[other][b]
        if not xo or not xt:
            continue
        c = stats.compare(xt, xo, "min")
        out[b] = {"ratio": c.ratio, "low": c.ci_low, "high": c.ci_high, "ours_ns": min(xo), "other_ns": min(xt),
                  "processes": [len(xo), len(xt)]}
    return out


def bench(lab: Lab, ciphers: list[str] | None = None, rounds: int = 1, toolchain: str = "gcc-O3",
          out: Path | None = None, say=print, ours_only: bool = False, **jmh) -> dict:
    """`ours_only`: our Java implementations without the Java peers (only our Java against our C)."""
    impls = java.discover(lab)
    prof = java.profiles()[C2]
    b = java.build(lab.root / "build", impls)
    chosen = [i for i in impls.values() if (not ciphers or i.cipher in ciphers)
              and not (ours_only and i.impl_class == "peer")]
    gated, refused = [], {}
    for i in chosen:
        v = java.run_kat(b, i, prof)
        (gated.append(i) if v.ok else refused.__setitem__(i.id, v.line()))
    by_cipher: dict[str, list[java.JavaImpl]] = {}
    for i in gated:
        by_cipher.setdefault(i.cipher, []).append(i)
    fin = [c for c in FINALISTS if c in by_cipher and any(i.impl_class == "portable" for i in by_cipher[c])]
    work = lab.root / "build" / "bench-java"
    cpu = pick_cpu("auto")  # the CPU the quick profile pins the C side's processes to
    settings = {**JMH_SETTINGS, **jmh}
    pooled: dict[str, dict[str, list[float]]] = {}
    for rnd in range(rounds):
        for cipher, group in sorted(by_cipher.items()):
            say(f"round {rnd + 1}/{rounds}: {cipher} ({', '.join(i.name for i in group)})")
            with timing_lock(f"bench-java-{cipher}", lab.root, say=say):
                _pool(pooled, java.fork_minima(b, group, prof, work / "jmh", benchmarks=BENCHMARKS, tag=f"-{rnd}",
                                               cpu=cpu, **settings))
        if fin:
            say(f"round {rnd + 1}/{rounds}: portable C of {', '.join(fin)} ({toolchain})")
            _pool(pooled, _c_round(lab, fin, work, toolchain))
    peers_rows, c_rows = [], []
    for cipher, group in sorted(by_cipher.items()):
        for ours in (i for i in group if i.impl_class == "portable"):
            for peer in (i for i in group if i.impl_class == "peer"):
                for bname, r in ratios(pooled, ours.id, peer.id).items():
                    peers_rows.append({"cipher": cipher, "ours": ours.id, "peer": peer.id, "peer_code": peer.code,
                                       "benchmark": bname, **r,
                                       "goal": "<= 1.0" if peer.library == "bouncycastle" else None,
                                       "met": r["ratio"] <= 1.0 if peer.library == "bouncycastle" else None})
            if cipher in fin:
                for bname, r in ratios(pooled, ours.id, f"c:{cipher}").items():
                    c_rows.append({"cipher": cipher, "ours": ours.id, "c": f"{cipher} default portable C, "
                                   f"{toolchain}", "benchmark": bname, **r, "goal": "<= 2.0",
                                   "met": r["ratio"] <= 2.0})
    doc = {**header("java"), "jvm_profile": C2, "java_version": java.java_version(), "rounds": rounds,
           "ours_only": ours_only,
           "jmh": settings, "cpu": cpu, "refused": refused, "ours_vs_peers": peers_rows, "java_vs_c": c_rows,
           "per_process_minima": pooled,
           "note": "cost ratios (below 1: ours is cheaper): the per-process-minimum estimator of each side, JMH "
                   "forks and C processes pinned to one CPU, with the 95 % bootstrap interval over processes; "
                   "'met' judges the point estimate; the machine is shared and noisy"}
    say(format_table(peers_rows, "peer"))
    say(format_table(c_rows, "c"))
    store(lab.root, doc, "java", out, say)
    return doc


def format_table(rows: list[dict], other: str) -> str:
    lines = [f"| cipher | ours | {other} | benchmark | ours ns | {other} ns | ours/{other} [95 % interval] | "
             "processes | goal |", "|" + " --- |" * 9]
    for r in rows:
        goal = f"{r['goal']}: {'met' if r['met'] else 'not met'}" if r.get("goal") else ""
        lines.append(f"| {r['cipher']} | {r['ours']} | {r[other]} | {r['benchmark']} | {r['ours_ns']:.1f} | "
                     f"{r['other_ns']:.1f} | {r['ratio']:.2f} [{r['low']:.2f}, {r['high']:.2f}] | "
                     f"{r['processes'][0]}+{r['processes'][1]} | {goal} |")
    return "\n".join(lines)
