"""Each cipher README's constant-time section, from stored `invoke bench.ct` results.

    ./cipherlab docs.ct-tables                    # rewrite from every result in bench/results/ct.jsonl, by date
    ./cipherlab docs.ct-tables --check            # write nothing; exit 1 naming every stale README (a test runs this)
    python -m lab.docsite.ct_tables FILES...      # rewrite from the results in these JSON-lines files

The section sits between ``<!-- ct:begin -->`` and ``<!-- ct:end -->`` in ``c_src/ciphers/<cipher>/README.md``.
Its "What leaks and why" sentences are the cipher's own (written by hand, kept as they are); the sentence that
names the results and the table are made here: one row per implementation of ours x toolchain x target, the
verdict of the last file given that holds the cell (so list files oldest first), in cipher.yaml's order, each
distinct first divergence once per operation, and dudect's largest |t| where the host ran it.  Cells planned
out (an x86 implementation on sparc64, ...) are left out; code this CPU cannot run says so.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from ..bench import results_file, stored as stored_lines
from ..errors import UserError

ROOT = Path(__file__).resolve().parent.parent.parent
BEGIN, END = "<!-- ct:begin -->", "<!-- ct:end -->"
HEADER = ("| strategy | toolchain | target | claim | trace verdict | first divergence per op | dudect max abs t |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")


def stored(files: list[Path]) -> list[dict]:
    """Every bench.ct result of these JSON-lines files, oldest first by the date it records."""
    found = [d for f in files for d in stored_lines(f)]
    return sorted((d for d in found if d.get("format") == "cipherlab-bench-ct"),
                  key=lambda d: (d.get("date", ""), d.get("id", "")))


def load(docs: list[dict]) -> tuple[dict[str, dict], list[tuple[str, str, str]]]:
    """The newest verdict of each cell, and (date, gate, id) of every result that gave one."""
    cells: dict[str, dict] = {}
    sources = []
    for doc in docs:
        used = 0
        for c in doc.get("cells", []):
            v = c["verdict"]
            if v["verdict"] in ("clean", "leak") or "unavailable on this CPU" in (v.get("reason") or ""):
                if v["verdict"] in ("clean", "leak") or c["cell"] not in cells:
                    cells[c["cell"]] = c
                    used += 1
        if used:
            sources.append((doc.get("date", "")[:10], doc.get("gate", "full"), doc.get("id", "?")))
    return cells, sources


def divergences(c: dict) -> str:
    if c["verdict"]["verdict"] == "unavailable":
        return "the implementation is unavailable on this CPU"
    seen, out = set(), []
    for o in c["verdict"].get("ops") or []:
        d = o.get("divergence")
        if o.get("verdict") != "leak":
            continue
        if d is None:
            key = (o["op"], "regions differ")
            text = f"{o['op']}: regions differ (no trace)"
        else:
            key = (o["op"], d["kind"], d.get("location"), d.get("function") or d.get("symbol"))
            text = f"{o['op']}: {d['kind']} at `{d.get('location') or d.get('address')}` ({key[3]})"
        if key not in seen:
            seen.add(key)
            out.append(text)
    return "; ".join(out) or "–"


def dudect_t(c: dict) -> str:
    d = c["verdict"].get("dudect") or {}
    ts = [o["t"] for o in d.get("ops") or [] if o.get("t") is not None]
    return f"{max(abs(t) for t in ts):.1f}" if ts else "–"


def impl_order(root: Path, cipher: str) -> list[str]:
    doc = yaml.safe_load((root / "c_src" / "ciphers" / cipher / "cipher.yaml").read_text())
    return list(doc.get("implementations") or {})


def rows(root: Path, cipher: str, cells: dict[str, dict]) -> list[str]:
    order = impl_order(root, cipher)
    rank = {n: i for i, n in enumerate(order)}
    mine = sorted((c for c in cells.values() if c["impl"].split("/")[0] == cipher),
                  key=lambda c: (rank.get(c["impl"].split("/", 1)[1], len(rank)), c["impl"], c["target"] != "host",
                                 c["target"], c["toolchain"]))
    out = []
    for c in mine:
        claim = {True: "yes", False: "no"}.get(c.get("claim"), "–")
        out.append(f"| {c['impl'].split('/', 1)[1]} | {c['toolchain']} | {c['target']} | {claim} | "
                   f"**{c['verdict']['verdict']}** | {divergences(c)} | {dudect_t(c)} |")
    return out


def section(root: Path, old: str, cipher: str, cells: dict[str, dict], sources: list[tuple[str, str, str]]) -> str:
    heading = next((ln for ln in old.splitlines() if ln.startswith("## ")),
                   f"## Constant time: what the check finds (`python -m lab ct {cipher} --impl ours`)")
    why = re.search(r"What leaks and why:.*?(?= From `invoke bench\.ct`|\n\n|$)", old, re.S)
    why_text = why.group(0).strip() if why else "What leaks and why: (not written yet)."
    by = defaultdict(list)
    for d, g, n in sources:
        by[(d, g)].append(n)
    dates = ", ".join(f"{d} ({g} gate: {', '.join(ns)})" for (d, g), ns in sorted(by.items()))
    body = [heading, "", f"{why_text}  From `invoke bench.ct` on {dates} (trace check under QEMU with 8 random "
            "keys and 8 random blocks per key size; the results are lines of `bench/results/ct.jsonl`, named by id; each distinct first divergence once; dudect's largest |t| on "
            "the host, noisy on the shared VM, 4.5 the threshold; cells that cannot run on a target left out):",
            "", HEADER, *rows(root, cipher, cells)]
    return "\n".join(body)


def rewrite(root: Path, docs: list[dict], check: bool) -> int:
    cells, sources = load(docs)
    stale = []
    for readme in sorted((root / "c_src" / "ciphers").glob("*/README.md")):
        text = readme.read_text()
        if BEGIN not in text or END not in text:
            continue
        cipher = readme.parent.name
        if not any(c["impl"].split("/")[0] == cipher for c in cells.values()):
            continue
        head, rest = text.split(BEGIN, 1)
        old, tail = rest.split(END, 1)
        new = f"{head}{BEGIN}\n{section(root, old, cipher, cells, sources)}\n{END}{tail}"
        if new != text:
            stale.append(readme.relative_to(root))
            if not check:
                readme.write_text(new)
    for p in stale:
        print(("stale: " if check else "written: ") + str(p))
    if not stale:
        print("every cipher README's constant-time table is current")
    return 1 if check and stale else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path,
                    help="bench.ct JSON-lines files (default: bench/results/ct.jsonl)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale README")
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)  # the tests' copy of the tree
    a = ap.parse_args(argv)
    missing = [str(f) for f in a.files if not f.is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        return rewrite(a.root, stored(a.files or [results_file(a.root, "ct")]), a.check)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code


if __name__ == "__main__":
    sys.exit(main())
