"""invoke bench.peers: our implementations against the peer libraries, inside the harness.

The peers are implementations of our ciphers (c_src/peers/<library>/peer.yaml): the same build plan with the
cell's toolchain, the same known-answer gate, the same timing and cycle programs, the same results.  This
benchmark runs every cipher a peer library has, with our default implementations and every peer, and prints
the report's "versus the libraries" table: per cipher and kind of code, our fastest implementation against the
fastest peer, as the ratio of costs (below 1: ours is faster) with its interval.
"""

from __future__ import annotations

from pathlib import Path

from .. import results
from ..config import Lab
from . import header, store
from ..versus import versus_libraries
from ..run import RunRequest, run


def bench(lab: Lab, ciphers=None, toolchains=None, profile=None, out: Path | None = None, say=print) -> dict:
    with_peers = sorted({i.cipher for i in lab.all_impls() if i.impl_class == "peer"})
    ciphers = ciphers or with_peers
    o = run(lab, RunRequest(ciphers=ciphers, implementations="all", toolchains=toolchains or ["gcc-O3", "clang-O3"],
                            profile=profile, icount=False, tag="peers", results_dir=lab.root / "results",
                            build_dir=lab.root / "build"))
    df = results.load(o.run_dir)
    rows = versus_libraries(df)
    doc = {**header("peers"), "run": str(o.run_dir.relative_to(lab.root)), "counts": o.counts, "rows": rows}
    say(format_table(rows))
    say(f"run: {o.run_dir}")
    store(lab.root, doc, "peers", out, say)
    return doc


def format_table(rows: list[dict]) -> str:
    head = ("| cipher | toolchain | kind | blocks/call | ours | speed or cost | fastest peer | speed or cost "
            "| ours/peer | 95 % CI | verdict |")
    lines = [head, "|" + " --- |" * 11]
    for r in sorted(rows, key=lambda r: (r["cipher"], r["kind"], r.get("blocks", 1), r["toolchain"])):
        unit = "Kbit/s" if r.get("blocks", 1) == 1 else r.get("unit", "").replace("_", " ") + " per block"
        lines.append(f"| {r['cipher']} | {r['toolchain']} | {r['kind']} | {r.get('blocks', 1)} | {r['ours']} | "
                     f"{r['ours_speed']:,.1f} {unit} | {r['peer']} | {r['peer_speed']:,.1f} | {r['ratio']:.3f} | "
                     f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}] | {r['verdict']} |")
    return "\n".join(lines)
