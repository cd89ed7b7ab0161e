"""Every command line the README and the docs pages (docs/*.md) show in a shell code block is accounted for:

* a lab command (`./cipherlab TASK`, `invoke TASK`, `python -m lab COMMAND`) parses exactly as written — by invoke's
  parser over the lab's tasks, or the lab's argparse parser (issue 21: the README's `invoke compare RUN_A RUN_B`
  once failed with invoke's "No idea what ...");
* the quick ones (QUICK) run here, as written, and must succeed;
* every other task names the test file that runs it for real (RUN_BY: the file must exist and call it), or why no
  test runs it (NOT_RUN);
* a command that is not the lab's (CI's scripts) is listed in OTHER with where it runs.

So a new command line in a page needs a task that exists, options it takes, and a test that runs it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from invoke.parser import Parser

from lab import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LAB = re.compile(r"^(invoke|python -m lab|\./cipherlab) ")

#: run here as written (a few seconds each)
QUICK = {"list", "validate", "schema --check", "docs.benchmarks --check", "docs.ct-tables --check", "--list"}
#: task -> (the test file that runs it for real, a string that file must contain where it does)
RUN_BY = {
    "matrix.run": ("test_cli.py", 'lab("run"'), "report": ("test_cli.py", 'lab("report"'),
    "compare": ("test_compare.py", "compare"), "verify": ("test_verify.py", "verify"),
    "ct": ("test_ct.py", "check_cells"), "ct-blame": ("test_ct_blame.py", "commands.ct_blame("), "catalogue": ("test_cli.py", 'lab("catalogue"'),
    "schema": ("test_cli.py", '"schema"'), "compilers.install": ("test_compilers.py", "dry"),
    "images.build": ("test_containers.py", "images"), "images.host-plugin": ("conftest.py", "host_plugin"),
    "flags.search": ("test_flags.py", "flags.search("), "bisect": ("test_bisect.py", "bisect"),
    "history": ("test_history.py", "steps("),
    "bench.repeatability": ("test_bench_units.py", "repeatability.bench("),
    "bench.history": ("test_bisect.py", "bench_history"), "docs": ("test_docs.py", "site.build("),
    "docs.benchmarks": ("test_docs.py", "benchmarks.write("), "test.repeat": ("test_testrepeat.py", "testrepeat.repeat("), "docs.ct-tables": ("test_ct_readme.py", "ct_tables"),
}
#: tasks no test runs whole, and why
NOT_RUN = {
    "test": "the test suite itself",
    "bench.peers": "a benchmark (minutes of measuring); its table code is test_bench_units'",
    "bench.java": "a benchmark (JMH forks, minutes); its ratios are test_java's",
    "bench.ct": "a benchmark over the whole catalogue (about half an hour; --compilers longer); each cell's check "
                "is test_ct's, --compilers on the planted cases test_ct_matrix's",
    "java.run": "matrix.run's preset for Java cells: test_java_run runs Java cells through matrix.run itself",
    "bench.aa": "a benchmark (N + 1 quick runs); its judgement on stored runs is test_aa's",
    "bench.mainjob": "a benchmark (the main job twice); its stage sums are what test_memo asserts per record",
}
#: command lines that are not the lab's, and where they run
OTHER = {".ci/container-setup": "CI (.ci/run) runs it first", "CI=true bash .ci/run": "CI itself"}


def _lines() -> list[tuple[str, str]]:
    """(page, line) of every line of a shell code block (```sh, bash or console; a block without a language is
    a diagram or output), its comment cut off."""
    out, shell, fenced = [], False, False
    for page in PAGES:
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                fenced = not fenced
                shell = fenced and line[3:].strip() in ("sh", "bash", "console")
                continue
            line = line.split("  #")[0].strip()
            if shell and line and not line.startswith("#"):
                out.append((page.relative_to(ROOT).as_posix(), line))
    return out


LINES = _lines()
COMMANDS = [(p, x) for p, x in LINES if LAB.match(x)]


def _argv(line: str) -> list[str]:
    argv = shlex.split(line)[3 if line.startswith("python -m lab ") else 1:]
    return argv[1:] if argv and argv[0] == "--distributed" else argv  # ./cipherlab's own option


def _task(line: str) -> str:
    """The invoke task a line runs ('--list' for invoke's own options)."""
    argv = _argv(line)
    if not argv or argv[0].startswith("-"):
        return "--list"
    if line.startswith("python -m lab "):
        cmd = cli.command(argv[0])
        return cmd.invoke or cmd.name
    return argv[0]


def test_the_pages_show_commands():
    assert len(COMMANDS) >= 40 and {"README.md", "docs/running.md", "docs/compilers.md"} <= {p for p, _ in COMMANDS}
    assert any(x.startswith("./cipherlab compare") for p, x in COMMANDS if p == "README.md")


def test_the_readme_spells_every_command_one_way():
    readme = [x for p, x in COMMANDS if p == "README.md"]
    assert readme and all(x.startswith("./cipherlab ") for x in readme)


@pytest.mark.parametrize("page,line", [c for c in COMMANDS if c[1].startswith("python -m lab ")])
def test_python_m_lab_lines_parse(page, line):
    cli.parser().parse_args(_argv(line))  # argparse exits (SystemExit) on anything it cannot take


@pytest.mark.parametrize("page,line", [c for c in COMMANDS if not c[1].startswith("python -m lab ")])
def test_invoke_lines_parse(page, line):
    from tasks import ns

    argv = _argv(line)
    if not argv or argv[0].startswith("-"):
        return  # `./cipherlab --list` and the like: invoke's own options
    result = Parser(contexts=ns.to_contexts()).parse_argv(argv)
    assert argv[0] in (result[0].name, *result[0].aliases), f"{page}: {line}"  # the task named, not a value
    for ctx in result:
        missing = [a.name for a in ctx.positional_args if a.value is None]
        assert not missing, f"{page}: {line}: {ctx.name} lacks {missing}"


def test_every_command_is_run_by_a_test_or_says_why_not():
    unaccounted = []
    for page, line in COMMANDS:
        task, rest = _task(line), " ".join(_argv(line)[1:])
        if f"{task} {rest}".strip() in QUICK or task == "--list" or task in NOT_RUN:
            continue
        if task not in RUN_BY:
            unaccounted.append(f"{page}: {line}")
    assert not unaccounted, "commands no test runs (add them to RUN_BY or NOT_RUN):\n" + "\n".join(unaccounted)
    for task, (name, needle) in RUN_BY.items():
        assert needle in (ROOT / "tests" / name).read_text(), f"{task}: tests/{name} does not call '{needle}'"


def test_every_other_command_line_is_listed():
    others = sorted({x for _, x in LINES if not LAB.match(x)} - set(OTHER))
    assert not others, f"command lines that are not the lab's, not in OTHER: {others}"


QUICK_LINES = sorted({x for _, x in COMMANDS if f"{_task(x)} {' '.join(_argv(x)[1:])}".strip() in QUICK
                      or _task(x) == "--list"})


@pytest.mark.parametrize("line", QUICK_LINES)
def test_quick_commands_run_as_written(line):
    assert line.startswith("./cipherlab ")  # through invoke, as ./cipherlab does after its set-up
    r = subprocess.run([sys.executable, "-m", "invoke", *_argv(line)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"{line}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    assert r.stdout.strip()
