"""invoke tasks: thin wrappers over the lab package (all logic lives in lab/).

    invoke matrix.run [--ciphers rijndael,rc6] [--toolchains gcc-O3] [--profile nist] ...
    invoke report [--runs RUN_ID]
    invoke test
    invoke schema
    invoke bench.peers

Toolchains, targets, profiles and ciphers are discovered from their folders,
so `invoke --help matrix.run` lists every profile that exists as a file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from invoke import Collection, task

from lab.config import Lab

_LAB = Lab()


def _csv(s: str | None) -> list[str] | None:
    return [x for x in s.split(",") if x] if s else None


def _choices(names: list[str]) -> str:
    return ", ".join(names) if names else "(none)"


@task(help={
    "ciphers": f"comma list of ciphers (default from matrix.yaml); known: {_choices(_LAB.cipher_names())}",
    "implementations": "default, all, or a comma list of cipher/strategy",
    "toolchains": f"comma list of toolchain profiles; known: {_choices(_LAB.toolchain_names())}",
    "targets": f"comma list of targets; known: {_choices(_LAB.target_names())}",
    "profile": f"measurement profile; known: {_choices(_LAB.profile_names())}",
    "backend": "host (default) or container",
    "matrix": "path of the matrix file (default matrix.yaml)",
    "report": "write the HTML report after the run (default yes)",
    "progress": "show the progress bar (default yes)",
})
def run(c, ciphers: str = "", implementations: str = "", toolchains: str = "", targets: str = "",
        profile: str = "", backend: str = "", matrix: str = "", report: bool = True, progress: bool = True):
    """Build, verify and measure every cell of the matrix; write results/ and reports/latest/."""
    from lab.run import RunOptions, run_matrix

    impls: str | list[str] | None = implementations or None
    if impls and impls not in ("default", "all"):
        impls = _csv(impls)
    opts = RunOptions(backend=backend or None, profile=profile or None, ciphers=_csv(ciphers),
                      implementations=impls, toolchains=_csv(toolchains), targets=_csv(targets),
                      progress=progress and sys.stderr.isatty())
    run_dir = run_matrix(_LAB, opts, Path(matrix) if matrix else None)
    print(f"results: {run_dir}")
    if report:
        from lab.report import build_report

        print(f"report: {build_report(_LAB, [run_dir])}")


@task(name="report", help={"runs": "comma list of run ids under results/ (default: the latest)"})
def report_(c, runs: str = ""):
    """Rebuild the HTML report from stored results (nothing is run)."""
    from lab.report import build_report

    print(f"report: {build_report(_LAB, _csv(runs))}")


@task(help={"args": "extra pytest arguments, e.g. '-k kat -x'"})
def test(c, args: str = ""):
    """Run the test suite (real compilers, real vectors)."""
    c.run(f"{sys.executable} -m pytest {args}", pty=False)


@task
def schema(c):
    """Export the JSON Schemas of the config files into schemas/."""
    from lab.config import export_schemas

    for p in export_schemas(_LAB.root / "schemas"):
        print(p)


matrix = Collection("matrix")
matrix.add_task(run, default=True)

ns = Collection(matrix, report_, test, schema)

from lab import tasks_images  # noqa: E402  (invoke images.build, images.host-plugin)

ns.add_collection(Collection.from_module(tasks_images, name="images"))

try:  # optional collections added by later work
    from lab.bench import peers_task

    bench = Collection("bench")
    bench.add_task(peers_task, name="peers")
    ns.add_collection(bench)
except ImportError:
    pass
