"""A reader of the vectors format (../shared/vectors/README.md) for tests: the single-block ECB records."""

from __future__ import annotations

from pathlib import Path


def ecb_records(path: Path, limit: int | None = None) -> list[tuple[bytes, bytes, bytes]]:
    """(key, plaintext, ciphertext) of records without MODE and with ITER absent or 1, in file order."""
    out, rec = [], {}

    def flush():
        if {"KEY", "PT", "CT"} <= rec.keys() and rec.get("MODE", "ECB") == "ECB" and rec.get("ITER", "1") == "1":
            out.append((bytes.fromhex(rec["KEY"]), bytes.fromhex(rec["PT"]), bytes.fromhex(rec["CT"])))

    for line in Path(path).read_text().splitlines() + [""]:
        line = line.strip()
        if line.startswith("#"):
            continue
        if not line:
            flush()
            rec = {}
            if limit and len(out) >= limit:
                break
            continue
        field, _, value = line.partition("=")
        rec[field] = value
    return out
