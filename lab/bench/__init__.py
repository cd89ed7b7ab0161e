"""Benchmarks: they print figures and append them as one JSON line to bench/results/<name>.jsonl (never timed
tests; `./cipherlab docs.benchmarks` makes docs/benchmarks.md from those files).

* repeatability — the same matrix twice: how far apart are the numbers (issue goals: p90 <= 3 %)?
* faults        — the fault scenarios of the test suite, as a table: fault, what the lab did, cells lost.
* peers         — our implementations against the peer libraries, inside the harness.
* scale         — the container matrix serially and on a two-worker Dask LocalCluster.
* mutation      — the mutation score of the modules that compute numbers.
* java          — every Java implementation and peer under C2: ours / Bouncy Castle, our Java / our C.
"""

from pathlib import Path


def header(name: str) -> dict:
    """The fields every benchmark's JSON starts with: its format, the time and the machine's facts."""
    from datetime import datetime, timezone

    from .. import system

    return {"format": f"cipherlab-bench-{name}", "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": system.machine()}


def results_file(root: Path, name: str) -> Path:
    """The one file a benchmark's results are appended to: bench/results/<name>.jsonl, one result a line."""
    return root / "bench" / "results" / f"{name}.jsonl"


def stored(path: Path) -> list[dict]:
    """Every result of a benchmark's JSON-lines file, oldest first (lab.results.read_jsonl)."""
    from ..results import read_jsonl

    return read_jsonl(path)


def store(root: Path, doc: dict, name: str, out: Path | None = None, say=print) -> Path:
    """Appends a benchmark's figures as one JSON line to bench/results/<name>.jsonl (or to `out`).  The line
    starts with its id, <name>-<date and time to the minute> (-2, -3, ... when taken), which names it in the
    docs; earlier lines are never rewritten."""
    import fcntl
    import json

    path = out or results_file(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # two benchmarks ending at once: one id each, whole lines
        taken = {r.get("id") for r in stored(path)}
        stem = f"{name}-{doc['date'][:16].replace(':', '')}"
        rid, n = stem, 1
        while rid in taken:
            n += 1
            rid = f"{stem}-{n}"
        f.write(json.dumps({"id": rid, **doc}, default=str) + "\n")
    say(f"stored: {path} ({rid})")
    return path
