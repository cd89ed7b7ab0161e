"""Benchmarks: they print figures and store them as JSON under bench/results/ (never timed tests).

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


def store(root: Path, doc: dict, name: str, out: Path | None = None, say=print) -> Path:
    """Writes a benchmark's figures as JSON (default bench/results/<name>-<date and time>.json, to the minute;
    a second result in the same minute gets -2, -3, ...: a default name never overwrites an earlier result)."""
    import json

    if out is None:
        stem = f"{name}-{doc['date'][:16].replace(':', '')}"
        folder = root / "bench" / "results"
        out, n = folder / f"{stem}.json", 1
        while out.exists():
            n += 1
            out = folder / f"{stem}-{n}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    say(f"stored: {out}")
    return out
