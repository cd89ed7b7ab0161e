"""The run's options, typed, in one table: :class:`RunRequest`.

Each field is one option of ``python -m lab run`` / ``invoke matrix.run``: its help, its kind on the command line
(``csv``, ``int``, ``float``, ``flag``, ``switch``, ``optstr``, or a plain string) and its default live here, and
:mod:`lab.cli` builds the argparse options and the invoke task from these fields.  The command's function builds
the request from the values (:meth:`RunRequest.from_options`: a bad value is a one-line error naming the option),
run.json stores it (``options.request``), and ``--resume`` rebuilds it from there (:meth:`RunRequest.resumed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import UsageError

SELECTIONS = ("default", "classes", "ours", "peers", "all")  # the words of --implementations


def opt(help: str, kind: str = "str", default: Any = None, **kw) -> Any:
    return Field(default, description=help, json_schema_extra={"kind": kind}, **kw)


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    matrix: Path | None = opt("matrix file (default matrix.yaml)")
    preset: str | None = opt("a named matrix instead of matrix.yaml: presets/<name>.yaml (compilers, compilers-cross, "
                             "full)")
    ciphers: list[str] | None = opt("comma list of ciphers (default: the matrix's)", "csv")
    implementations: str | list[str] | None = opt(
        "default, ours, peers, all, or a comma list of cipher/implementation")
    toolchains: list[str] | None = opt("comma list of toolchain profiles or globs ('clang-1*-O3')", "csv")
    targets: list[str] | None = opt("comma list of targets", "csv")
    profile: str | None = opt("measurement profile (quick, nist, smoke, ...)")
    backend: Literal["host", "container", "mixed"] | None = opt(
        "host (default), container, or mixed (the host target here, targets with an image in it)")
    resume: str | None = opt("finish an interrupted run: the latest unfinished one, or RUN_ID", "optstr")
    no_wait: bool = opt("refuse instead of waiting when another run holds the machine's timing lock", "flag", False)
    jobs: int | None = opt("parallel builds, known-answer gates and instruction counts (default: the core count)",
                           "int", gt=0)
    lanes: int | None = opt("processes measured at once, each on its own CPU (default: the profile's sampling.lanes)",
                            "int", gt=0)
    timeout: float | None = opt("time limit in seconds for one program run of a cell (default: the profile's)",
                                "float", gt=0)
    hosts: list[str] | None = opt("comma list of SSH hosts (hosts/<name>.yaml) that measure the cells too", "csv")
    local: bool = opt("measure on this machine as well (default; --no-local with --hosts: on the hosts only)",
                      "switch", True)
    accept_new_host_keys: bool = opt("accept (and remember) the key of an SSH host seen for the first time", "flag",
                                     False)
    executor: Literal["local", "dask"] | None = opt("local (default) or dask (pip install -e .[distributed])")
    scheduler: str | None = opt("tcp://HOST:PORT of a running Dask scheduler (default: an embedded LocalCluster)")
    results_dir: Path = opt("where results go (default results/ in the checkout)", "str", Path("results"))
    build_dir: Path = opt("where builds go (default build/ in the checkout)", "str", Path("build"))
    tag: str = opt("a word added to the run id", "str", "")
    icount: bool = opt("guest-instruction counts through QEMU (default; --no-icount to skip)", "switch", True)
    ct: bool = opt("constant-time checks of every verified cell: the trace check under QEMU, dudect on this "
                   "machine's CPU (a profile can ask for them too: ct: true)", "flag", False)

    @field_validator("implementations", mode="before")
    @classmethod
    def _selection(cls, v):
        if isinstance(v, str) and v not in SELECTIONS:
            return [x.strip() for x in v.split(",") if x.strip()]
        return v

    @model_validator(mode="after")
    def _one_matrix(self):
        if self.preset and self.matrix:
            raise ValueError("matrix_and_preset")
        return self

    def matrix_path(self, root: Path) -> Path | None:
        """The matrix file asked for: --matrix, or the preset's file under presets/ (None: matrix.yaml)."""
        if not self.preset:
            return self.matrix
        path = root / "presets" / f"{self.preset}.yaml"
        if not path.is_file():
            from .errors import unknown_name
            raise unknown_name("preset", self.preset, sorted(p.stem for p in (root / "presets").glob("*.yaml")))
        return path

    @field_validator("tag", mode="before")
    @classmethod
    def _tag(cls, v):
        return v or ""

    @classmethod
    def from_options(cls, **values) -> "RunRequest":
        """The request from option values (None: not given); a bad value is a UsageError naming the option."""
        given = {k: v for k, v in values.items() if v is not None}
        try:
            return cls(**given)
        except ValidationError as e:
            err = e.errors()[0]
            if "matrix_and_preset" in err["msg"]:
                raise UsageError("options --matrix and --preset: give one of them (a preset is a matrix file under "
                                 "presets/)") from None
            name = str(err["loc"][0]) if err["loc"] else "?"
            if err["type"] == "greater_than":
                what = "needs a positive number"
            elif err["type"] == "literal_error":
                what = f"'{given.get(name)}' is not one of {(err.get('ctx') or {}).get('expected', '')}"
            else:
                what = f"'{given.get(name)}': {err['msg'].lower()}"
            raise UsageError(f"option --{name.replace('_', '-')}: {what}") from None

    #: what a resumed run takes from the command line; every other option is the stored request's
    RESUMABLE: ClassVar[tuple[str, ...]] = ("resume", "no_wait", "jobs", "executor", "scheduler", "accept_new_host_keys", "results_dir",
                 "build_dir")

    def resumed(self, stored: "RunRequest") -> "RunRequest":
        """The stored request of the run being resumed, with this request's scheduling options."""
        return stored.model_copy(update={k: getattr(self, k) for k in self.RESUMABLE})

    def stored(self) -> dict:
        return self.model_dump(mode="json")


def options_table() -> list[tuple[str, str, str, Any]]:
    """(name, help, kind, default) of every run option, in order: the table lab.cli builds the CLI from."""
    return [(name, f.description or "", (f.json_schema_extra or {}).get("kind", "str"),  # type: ignore[union-attr]
             None if isinstance(f.default, Path) else f.default)  # a folder not given: the checkout's
            for name, f in RunRequest.model_fields.items()]


__all__ = ["RunRequest", "SELECTIONS", "options_table"]
