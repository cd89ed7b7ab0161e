"""invoke bench.ct: the constant-time check over the catalogue x toolchains x targets.

Every implementation (ours and the peers'; peers run on the host only) with each toolchain on each target:
the same build plan, known-answer gate and :func:`lab.ct.check` as ``python -m lab ct``.  Prints and stores the
wall time (and how much of it the check itself took, apart from the builds and gates a matrix run does anyway),
the leaking cells by cause (secret-dependent memory addresses, branches, both), the ``constant_time: true``
claims the check refutes, the ``false`` claims no cell refutes, and the implementations whose verdict
depends on the toolchain or target (a compiler's doing, when the same source is clean elsewhere).  JSON is
written after every target, so an interrupted benchmark keeps what it finished.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from .. import ct, ctcheck
from ..config import Lab
from ..plan import Cell
from . import header, store

TARGETS = ["host", "sparc64", "mips64"]
TOOLCHAINS = ["gcc-O3", "clang-O3"]


def cause(c: ctcheck.CellCheck) -> str:
    kinds = {o.divergence.kind if o.divergence else "unlocated" for o in c.verdict.leaking_ops}
    return "+".join(sorted(kinds))


def summary(checks: list[ctcheck.CellCheck]) -> dict:
    by_impl: dict[str, list[ctcheck.CellCheck]] = {}
    for c in checks:
        by_impl.setdefault(c.impl, []).append(c)
    leaks = [c for c in checks if c.verdict.verdict == "leak"]
    mixed = {}
    for impl, cs in by_impl.items():
        verdicts = {c.verdict.verdict for c in cs} - {"unavailable"}
        if verdicts == {"clean", "leak"}:
            mixed[impl] = {"clean": [f"{c.toolchain}@{c.target}" for c in cs if c.verdict.verdict == "clean"],
                           "leak": [f"{c.toolchain}@{c.target}: " + (c.verdict.first_divergence.line()
                                                                    if c.verdict.first_divergence else "")
                                    for c in cs if c.verdict.verdict == "leak"]}
    return {
        "cells": len(checks),
        "verdicts": dict(Counter(c.verdict.verdict for c in checks)),
        "leaks_by_cause": dict(Counter(cause(c) for c in leaks)),
        "leaks_by_target": dict(Counter(c.target for c in leaks)),
        "refuted_true_claims": sorted({c.impl for c in leaks if c.claim is True}),
        "false_claims_clean_everywhere": sorted(
            i for i, cs in by_impl.items() if cs[0].claim is False and any(c.verdict.verdict == "clean" for c in cs)
            and all(c.verdict.verdict in ("clean", "unavailable") for c in cs)),
        "peers_clean_everywhere": sorted(
            i for i, cs in by_impl.items() if cs[0].claim is None and any(c.verdict.verdict == "clean" for c in cs)
            and all(c.verdict.verdict in ("clean", "unavailable") for c in cs)),
        "verdict_depends_on_toolchain_or_target": mixed,
        "dudect_leaks": sorted(c.cell for c in checks if c.verdict.dudect and c.verdict.dudect.verdict == "leak"),
        "check_seconds": round(sum(c.seconds for c in checks), 1),
        "gate_seconds": round(sum(c.gate_seconds for c in checks), 1),
    }


def selected(lab: Lab, ciphers, implementations: str) -> tuple[list[str], str | list[str]]:
    """(ciphers, the implementation selection) of --ciphers and --implementations (all, ours, default, peers or a
    comma list of cipher/implementation, which narrows the ciphers to theirs)."""
    selection = implementations if implementations in ("all", "ours", "default", "peers") else \
        [x.strip() for x in implementations.split(",") if x.strip()]  # a list of cipher/implementation
    if isinstance(selection, list):
        ciphers = sorted({x.split("/")[0] for x in selection} & set(ciphers or lab.ciphers))
    return ciphers or sorted(lab.ciphers), selection


def bench(lab: Lab, ciphers=None, implementations: str = "all", toolchains=None, targets=None, jobs: int = 2,
          dudect: int = ct.DUDECT_MEASUREMENTS, out: Path | None = None, quick_gate: bool = False,
          say=print) -> dict:
    from ..plan import implementations as pick

    ciphers, selection = selected(lab, ciphers, implementations)
    toolchains, targets = toolchains or TOOLCHAINS, targets or TARGETS
    profile = lab.profile("smoke")
    doc = {**header("ct"), "ciphers": ciphers, "implementations": implementations, "toolchains": toolchains,
           "targets": [], "dudect_measurements": dudect, "inputs": ct.INPUTS, "wall_seconds": {}, "cells": [],
           "gate": "quick" if quick_gate else "full"}
    build_dir = lab.root / "build"
    checks: list[ctcheck.CellCheck] = []
    for tname in targets:
        tg = lab.target(tname)
        cells = [Cell(im, lab.toolchain(tc), tg, im.key_bits, profile) for tc in toolchains for c in ciphers
                 for im in pick(lab, c, selection, "--implementations")]
        say(f"{tname}: {len(cells)} cells")
        t0 = time.monotonic()
        be = ctcheck.ct_backend(lab, build_dir)
        try:
            be.prepare([tg])
            got = ctcheck.check_cells(lab, cells, be, build_dir=build_dir, jobs=jobs, dudect_measurements=dudect,
                                 quick_gate=quick_gate, say=say)
        finally:
            be.close()
        doc["wall_seconds"][tname] = round(time.monotonic() - t0, 1)
        doc["targets"].append(tname)
        checks += got
        doc["cells"] = [c.model_dump() for c in checks]
        doc["summary"] = summary(checks)
        doc["summary_by_target"] = {t: summary([c for c in checks if c.target == t]) for t in doc["targets"]}
        store(lab.root, doc, "ct", out, say)
    s = doc.get("summary", {})
    say(f"wall time: {doc['wall_seconds']} s; check itself {s.get('check_seconds')} s, builds and gates "
        f"{s.get('gate_seconds')} s")
    say(f"verdicts: {s.get('verdicts')}; leaking cells by cause: {s.get('leaks_by_cause')}")
    say(f"constant_time: true refuted: {s.get('refuted_true_claims')}")
    say(f"constant_time: false yet clean everywhere checked: {s.get('false_claims_clean_everywhere')}")
    return doc
