"""Timing is exclusive per machine: a lock that says who holds it.

Two runs that time at once on one machine time each other.  The lock is a
file in a machine-wide folder (``CIPHERLAB_LOCK_DIR``, default
``/tmp/cipherlab-locks``), held with ``flock`` for the whole measuring stage
and carrying the holder's pid, run id, start time and checkout.  A second run
waits with a message saying for whom (or refuses with ``no_wait``).  The
kernel releases a dead holder's lock; its stale record is then taken over
with a message.  Builds, known-answer gates and instruction counts do not
take it.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from .errors import RunError


def lock_dir() -> Path:
    return Path(os.environ.get("CIPHERLAB_LOCK_DIR") or "/tmp/cipherlab-locks")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe(holder: dict) -> str:
    return (f"run {holder.get('run_id', '?')} (pid {holder.get('pid', '?')}, started {holder.get('started', '?')}"
            + (f", {holder.get('root')}" if holder.get("root") else "") + ")")


@contextmanager
def timing_lock(run_id: str, root: Path, *, wait: bool = True, say: Callable[[str], None] = print,
                name: str = "timing") -> Iterator[dict]:
    """Hold the machine's timing lock while the body runs."""
    d = lock_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o1777) if os.stat(d).st_uid == os.geteuid() else None
    except OSError as e:
        raise RunError(f"cannot create the lock folder {d}: {e.strerror}. Fix: set CIPHERLAB_LOCK_DIR") from None
    path = d / f"{name}.lock"
    f = open(path, "a+")
    me = {"pid": os.getpid(), "run_id": run_id, "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
          "host": socket.gethostname(), "root": str(root)}
    announced = False
    try:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _read(f)
                if not wait:
                    raise RunError(f"timing is busy on this machine: {describe(holder)} holds the lock "
                                   f"({path}). Wait for it, or run without --no-wait to queue") from None
                if not announced:
                    say(f"waiting for the timing lock: held by {describe(holder)}")
                    announced = True
                # wait in the kernel's queue: a blocked flock is woken as the holder lets go, so a holder that
                # takes the lock again at once (one cipher after another) cannot starve a waiter (polling every
                # 2 s did: a flag search waited through one hold after another of a benchmark)
                fcntl.flock(f, fcntl.LOCK_EX)
                break
        old = _read(f)
        if old.get("pid") and old.get("pid") != me["pid"] and not _alive(int(old["pid"])):
            say(f"taking over the timing lock of {describe(old)}: that process is no longer running")
        f.seek(0)
        f.truncate()
        f.write(json.dumps(me))
        f.flush()
        yield me
    finally:
        try:
            f.seek(0)
            f.truncate()
            f.flush()
            fcntl.flock(f, fcntl.LOCK_UN)
        finally:
            f.close()


def _read(f) -> dict:
    try:
        f.seek(0)
        text = f.read()
        return json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}


def holder(name: str = "timing") -> dict:
    """Who holds the lock now ({} when free)."""
    path = lock_dir() / f"{name}.lock"
    if not path.exists():
        return {}
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(f, fcntl.LOCK_UN)
            return {}
        except BlockingIOError:
            return _read(f)
