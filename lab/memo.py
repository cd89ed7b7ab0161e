"""Work belongs to its inputs: what is computed from a binary (an instruction count, a constant-time verdict, a
drill-down's evidence) is computed once per binary and reused by every later run, cell or walk that has the same
inputs.  Imports nothing of the lab.

A key is a hash of the files' bytes (the binaries, the plugin, the vectors) and of the other inputs as JSON (the
program's arguments, the target, the image, the machine); an entry is one file under ``<build>/memo/<kind>/``,
written atomically, so that two runs at once never read half an entry.  Only answers that belong to the inputs are
stored (a count, a verdict); a failure that may not recur (a time-out, a missing tool) is computed again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable


def key(files: Iterable[Path | str | None] = (), parts: Any = None) -> str:
    """The hash of the files' contents (None or a missing file counts as absent) and of `parts` as JSON."""
    h = hashlib.sha256()
    for f in files:
        try:
            h.update(Path(f).read_bytes() if f else b"\0")
        except OSError:
            h.update(b"\1")
    h.update(json.dumps(parts, sort_keys=True, default=str).encode())
    return h.hexdigest()[:32]


def path(root: Path, kind: str, k: str, suffix: str = ".json") -> Path:
    return Path(root) / kind / f"{k}{suffix}"


def get(root: Path | None, kind: str, k: str) -> Any | None:
    """The stored answer, or None (no memo folder, never computed, or unreadable)."""
    if root is None:
        return None
    try:
        return json.loads(path(root, kind, k).read_text())
    except (OSError, ValueError):
        return None


def put(root: Path | None, kind: str, k: str, value: Any) -> None:
    """Stores an answer (best effort: a full or read-only disk only costs the reuse)."""
    if root is None:
        return
    p = path(root, kind, k)
    tmp = p.with_suffix(f".{os.getpid()}.tmp")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(value, default=str))
        os.replace(tmp, p)
    except OSError:
        tmp.unlink(missing_ok=True)


def remembered(root: Path | None, kind: str, k: str, compute: Callable[[], Any],
               keep: Callable[[Any], bool] = lambda v: True) -> tuple[Any, bool]:
    """(the answer, whether it was reused): the stored one, or compute() stored when keep(answer)."""
    hit = get(root, kind, k)
    if hit is not None:
        return hit, True
    value = compute()
    if keep(value):
        put(root, kind, k, value)
    return value, False


__all__ = ["key", "get", "put", "remembered", "path"]
