"""What the `kat` program printed, read once for both users (the run's gate and `lab verify`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .backends import Completed


@dataclass
class KatOutput:
    unavailable: bool = False  # the implementation reported itself unusable on this CPU (exit 3)
    summary: dict | None = None  # the kat_summary record; None when the program died before it
    fails: list[dict] = field(default_factory=list)  # kat_fail records
    checksums: dict[int, str] = field(default_factory=dict)  # key bits -> encryption-chain checksum
    roundtrip_ok: bool = True  # every checksum chain decrypted back to its start
    error: str | None = None  # why there is no summary (the program's error record, or how it died)


def read_kat(c: Completed) -> KatOutput:
    lines = c.json_lines()
    out = KatOutput(unavailable=c.returncode == 3 and any(x.get("type") == "unavailable" for x in lines))
    out.summary = next((x for x in lines if x.get("type") == "kat_summary"), None)
    out.fails = [x for x in lines if x.get("type") == "kat_fail"]
    sums = [x for x in lines if x.get("type") == "kat_checksum"]
    out.checksums = {x["key_bits"]: x["encrypt_chain_1000"] for x in sums}
    out.roundtrip_ok = all(x.get("roundtrip_ok", True) for x in sums)
    if out.summary is None and not out.unavailable:
        err = next((x for x in lines if x.get("type") == "error"), None)
        out.error = (err["message"] + (f" ({err['detail']})" if err.get("detail") else "")) if err \
            else c.describe_failure()
    return out
