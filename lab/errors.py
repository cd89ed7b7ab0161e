"""Errors a person can act on, and the exit codes every command uses.

A :class:`UserError` is a mistake in the input (a file, a key, an argument):
its message names the place and the fix, and the command line prints it
without a traceback (``--debug`` shows one).  Exit codes:

* 0  everything asked for was done and every cell is green (or unavailable),
* 1  the work ran, but some cell failed or some record did not match,
* 2  a usage or configuration error: nothing (more) was done,
* 130  interrupted by Ctrl-C (the run is marked interrupted and can be resumed).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Iterable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UserError(Exception):
    """A problem the user can fix; the message says what and how."""

    exit_code = EXIT_USAGE


class UsageError(UserError):
    """A command-line argument is wrong."""


class ConfigError(UserError):
    """A configuration file is wrong; the message says where and how to fix it."""

    def __init__(self, path: Path | str, key: str | None, problem: str, fix: str = ""):
        self.path, self.key, self.problem, self.fix = str(path), key, problem, fix
        where = f"{self.path}" + (f": key '{key}'" if key else "")
        super().__init__(f"{where}: {problem}" + (f" Fix: {fix}" if fix else ""))


class ConfigErrors(UserError):
    """Several configuration files are wrong (all are validated when the lab starts)."""

    def __init__(self, errors: list[ConfigError]):
        self.errors = errors
        head = f"{len(errors)} configuration files have errors:" if len(errors) > 1 else ""
        super().__init__("\n".join([head, *(f"  {e}" for e in errors)]).strip() if head else str(errors[0]))


class RunError(UserError):
    """A run cannot start or continue (a lock, a resume that does not match, a full disk...)."""


class Interrupted(Exception):
    """Ctrl-C (or SIGTERM) during a run: the current cell is abandoned and the run marked interrupted."""


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' for a close match among known names, else the list of known names."""
    known = sorted(set(known))
    close = difflib.get_close_matches(word, known, n=3, cutoff=0.6)
    if close:
        return f"did you mean {' or '.join(repr(c) for c in close)}?"
    return f"known: {', '.join(known) if known else '(none)'}"


def unknown_name(kind: str, word: str, known: Iterable[str], where: str = "") -> UsageError:
    where = f" (in {where})" if where else ""
    return UsageError(f"unknown {kind} '{word}'{where}: {did_you_mean(word, known)}")
