"""The statuses a cell can end with: one enum, used everywhere (a StrEnum: stored and compared as its text).

Listed in the order a report shows them.  ``FAILED`` are the red ones (a run with any exits 1); ``ok`` and
``unavailable`` (the cell cannot exist here: a missing compiler, an instruction set this CPU lacks) are not.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    OK = "ok"
    UNAVAILABLE = "unavailable"
    BUILD_FAILED = "build_failed"
    KAT_FAILED = "kat_failed"
    CHECKSUM_DIFFERS = "checksum_differs"
    SANITIZER = "sanitizer"
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    MEASURE_FAILED = "measure_failed"
    UNREACHABLE = "unreachable"


STATUSES = tuple(Status)
FAILED = frozenset(STATUSES) - {Status.OK, Status.UNAVAILABLE}

__all__ = ["Status", "STATUSES", "FAILED"]
