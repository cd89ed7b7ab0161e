"""Invoke tasks made from lab.cli's command table: the same options, the same code path as python -m lab."""

from __future__ import annotations

import inspect

from invoke import Collection, Exit, task

from lab.cli import Command, call, invoke_commands


def make_task(cmd: Command, name: str):
    params = [inspect.Parameter("c", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for o in cmd.options:
        # numbers default to None (invoke then reads the value as text, which convert() turns into a number):
        # a default of 0 could not be told from "--jobs 0"
        default = {"flag": False, "switch": o.default, "int": None, "float": None, "optstr": False}.get(o.kind, "")
        if o.positional and o.nargs != "?":
            default = None  # invoke fills only positionals whose value is still None (an optional one stays "")
        params.append(inspect.Parameter(o.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))

    def body(c, **raw):
        code = call(cmd, raw)
        if code:
            raise Exit(code=code)

    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__name__ = name.replace("-", "_")
    body.__doc__ = cmd.help[0].upper() + cmd.help[1:] + "."
    return task(body, name=name, positional=[o.name for o in cmd.options if o.positional and o.nargs != "?"],
                optional=[o.name for o in cmd.options if o.kind == "optstr"],
                help={o.name: o.help for o in cmd.options})


def collection(name: str, default: str | None = None) -> Collection:
    """The invoke collection of the commands whose invoke name is '<name>.<task>'."""
    coll = Collection(name)
    for task_name, cmd in invoke_commands(name):
        coll.add_task(make_task(cmd, task_name), default=task_name == default)
    return coll


def top_level() -> list:
    return [make_task(cmd, name) for name, cmd in invoke_commands("")]
