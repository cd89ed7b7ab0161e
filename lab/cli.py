"""The command line, defined once: every command and option as data (:data:`COMMANDS`, lab/commandtable.py), turned into
argparse here (``python -m lab``) and into invoke tasks by ``tasks/`` (which reads the same table), both
calling :func:`call`, which calls the same functions in :mod:`lab.commands`.  The lab itself never
imports invoke.

Errors a person can act on are printed as one short message (the file, key or
argument and the fix) with no traceback; ``--debug`` shows the traceback.
Exit codes: see :mod:`lab.errors`.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from dataclasses import replace
from typing import Any, Callable

from .errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, Interrupted, UserError
from .commandtable import (COMMANDS, DEBUG, MATRIX_PART, REPORTS_DIR, RUN_OPTS, Command, Opt,  # noqa: F401
                           command, invoke_commands)


# -------------------------------------------------------------- conversion
def convert(opt: Opt, value: Any) -> Any:
    """A raw option value (argparse or invoke) into what lab.commands expects."""
    if opt.kind == "csv":
        if not value:
            return None
        return [x.strip() for x in str(value).split(",") if x.strip()] or None
    if opt.kind in ("int", "float"):
        if value is None or value == "":  # not given (0 is a value: --jobs 0 must reach its check)
            return opt.default
        try:
            return (int if opt.kind == "int" else float)(value)
        except (TypeError, ValueError):
            raise UserError(f"option {opt.flag}: '{value}' is not a number") from None
    if opt.kind == "optstr":
        if value in (None, False, ""):
            return None
        return "latest" if value is True else str(value)
    if opt.kind in ("flag", "switch"):
        return bool(value)
    return value or opt.default


def call(cmd: Command, raw: dict[str, Any]) -> int:
    """Runs a command with raw option values; user errors become a message and an exit code."""
    from . import commands

    debug = bool(raw.get("debug")) or os.environ.get("CIPHERLAB_DEBUG") == "1"
    fn: Callable[..., int] = getattr(commands, cmd.run)
    if not debug:
        warnings.simplefilter("default")
        warnings.formatwarning = lambda msg, cat, *a, **k: f"warning: {msg}\n"  # type: ignore[assignment]
    try:
        values = {o.name: convert(o, raw.get(o.name, o.default)) for o in cmd.options if o.name != "debug"}
        return int(fn(**values) or 0)
    except UserError as e:
        if debug:
            traceback.print_exc()
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except Interrupted:
        print("interrupted: the run is marked interrupted; finish it with --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # a bug: say so briefly, the traceback is one flag away
        if debug:
            traceback.print_exc()
        else:
            print(f"internal error: {type(e).__name__}: {e} (run again with --debug for the traceback)",
                  file=sys.stderr)
        return EXIT_FAILED + 2


# ------------------------------------------------------------------ argparse
class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: exit 2 with one line, no usage dump
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help)\n")


def _literal(help_text: str | None) -> str | None:
    """A help text as argparse shows it literally: its own '%' (as in "3 % slower") is not a format."""
    return help_text.replace("%", "%%") if help_text else help_text


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m lab", description="cipherlab: build, verify and measure block ciphers")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    for cmd in COMMANDS:
        sp = sub.add_parser(cmd.name, help=_literal(cmd.help), description=cmd.help)  # a description is not a format
        for o in cmd.options:
            o = replace(o, help=_literal(o.help))
            if o.positional:
                sp.add_argument(o.name, help=o.help, nargs=o.nargs)
            elif o.kind == "flag":
                sp.add_argument(o.flag, dest=o.name, action="store_true", help=o.help)
            elif o.kind == "switch":
                sp.add_argument(o.flag, dest=o.name, action=argparse.BooleanOptionalAction, default=o.default,
                                help=o.help)
            elif o.kind == "optstr":
                sp.add_argument(o.flag, dest=o.name, nargs="?", const=True, default=None, help=o.help)
            else:
                sp.add_argument(o.flag, dest=o.name, default=o.default, help=o.help)
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    return call(command(a.cmd), vars(a))
