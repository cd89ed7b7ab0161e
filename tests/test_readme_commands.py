"""Every command line the README shows in a code block parses exactly as written: `python -m lab ...` by the lab's
argparse parser, `invoke ...` and `./cipherlab ...` by invoke's parser over the lab's tasks (issue 21: the
README's `invoke compare RUN_A RUN_B` once failed with invoke's "No idea what ..."). Parsing only: running each
would be the whole test suite again."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from invoke.parser import Parser

from lab import cli

ROOT = Path(__file__).resolve().parent.parent


def _lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if re.match(r"^(invoke|python -m lab|\./cipherlab) ", line):
                out.append(line)
    return out


LINES = _lines()


def test_the_readme_shows_commands():
    assert len(LINES) >= 10 and any(x.startswith("invoke compare") for x in LINES)


def _placeholders(argv: list[str]) -> list[str]:
    return [a.replace("…", "x") for a in argv]


@pytest.mark.parametrize("line", [x for x in LINES if x.startswith("python -m lab ")])
def test_python_m_lab_lines_parse(line):
    argv = _placeholders(shlex.split(line)[3:])
    cli.parser().parse_args(argv)  # argparse exits (SystemExit) on anything it cannot take


@pytest.mark.parametrize("line", [x for x in LINES if x.startswith(("invoke ", "./cipherlab "))])
def test_invoke_lines_parse(line):
    from tasks import ns

    argv = _placeholders(shlex.split(line)[1:])
    if argv and argv[0] == "--distributed":  # ./cipherlab's own option
        argv = argv[1:]
    if not argv or argv[0].startswith("-"):
        return  # `./cipherlab --list` and the like: invoke's own options
    result = Parser(contexts=ns.to_contexts()).parse_argv(argv)
    assert argv[0] in (result[0].name, *result[0].aliases), line  # the task named, not swallowed as a value
    for ctx in result:
        missing = [a.name for a in ctx.positional_args if a.value is None]
        assert not missing, f"{line}: {ctx.name} lacks {missing}"
