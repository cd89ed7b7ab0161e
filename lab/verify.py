"""Check implementations against a vectors file: the ``python -m lab verify`` command.

The same stages as a run, for one cipher: plan the cells (so a cell that
cannot exist on the target is "unavailable" with the reason), build the
``kat`` program with the one build plan, judge its output with the one
verdict (:func:`lab.kat.verdict` and :func:`lab.kat.vote`).  The vectors file may be anywhere on the
machine: the container backend mounts its folder read-only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from .models import Status
from . import plan
from .build import Builder
from .buildplan import is_native
from .config import Impl, Lab
from .errors import UsageError, unknown_name
from .kat import Verdict
from .pipeline import QUICK_LONG_EVERY, CellPipeline, Final, Stages, make_backend
from .plan import Cell, unavailable_reason

# statuses of a gate that are a problem of the build or the machine, not a count of wrong answers
PROBLEMS = (Status.UNAVAILABLE, Status.SANITIZER, Status.CRASHED, Status.TIMEOUT, Status.UNREACHABLE)


@dataclass
class VerifyResult:
    impl: str
    toolchain: str
    target: str
    verdict: Verdict | None = None
    problem: str | None = None  # unavailable, build failure, crash, wrong answers...

    @property
    def records(self) -> int:
        return self.verdict.records if self.verdict else 0

    @property
    def passed(self) -> int:
        return self.verdict.passed if self.verdict else 0

    @property
    def failed(self) -> int:
        return self.verdict.failed if self.verdict else 0

    @property
    def skipped(self) -> int:
        return self.verdict.skipped_key_size if self.verdict else 0

    @property
    def fails(self) -> list:
        return self.verdict.fails if self.verdict else []

    @property
    def checksums(self) -> dict:
        return self.verdict.checksums if self.verdict else {}

    @property
    def ok(self) -> bool:
        return self.problem is None and self.verdict is not None and self.verdict.ok

    @property
    def unavailable(self) -> bool:
        return bool(self.problem and self.problem.startswith("unavailable"))

    def line(self) -> str:
        head = f"{self.impl} [{self.toolchain}, {self.target}]: "
        if self.problem:
            return head + self.problem
        assert self.verdict is not None
        v = self.verdict
        s = f"{v.passed} of {v.records} records passed"
        if v.failed - v.multiblock_failed:
            s += f", {v.failed - v.multiblock_failed} FAILED"
        if v.skipped_key_size:
            s += f" ({v.skipped_key_size} skipped: key size not supported)"
        if v.sampled_out:
            s += f" (quick gate: {v.sampled_out} long records not checked)"
        if not v.ok and not v.failed:
            s += f"; {v.status}: {v.reason}"
        return head + s


SELECTIONS = ("default", "ours", "peers", "all")  # the words of matrix.run --implementations


def implementations(lab: Lab, cipher_name: str, impl: str | None, jvm: bool = False) -> list[Impl]:
    """What ``--impl`` picks: a word of ``matrix.run --implementations`` (default, ours, peers: the default
    and every peer library's, all) or one implementation's name (``ttable`` or ``rijndael/ttable``); `jvm`: among
    the cipher's Java implementations and Java peers (for a JVM profile)."""
    cipher = lab.cipher(cipher_name)
    word = impl or "default"
    if word in SELECTIONS:
        return plan.implementations(lab, cipher_name, word, "--impl", jvm)
    name = word.removeprefix(f"{cipher_name}/")
    if jvm:
        from .java import impls_of

        have = {i.name: i for i in impls_of(lab).get(cipher_name, [])}
        if name in have:
            return [have[name]]
        raise UsageError(f"--impl {word}: {unknown_name(f'Java implementation of {cipher_name}', name, have).args[0]}"
                         f" (or one of {', '.join(SELECTIONS)})")
    try:
        return [cipher.impl(name)]
    except UsageError as e:
        raise UsageError(f"--impl {word}: {e} (or one of {', '.join(SELECTIONS)})") from None


def _problem(f: Final) -> str | None:
    """What keeps a build from a count of right and wrong answers (None: its verdict counts them)."""
    if f.verdict is None:  # it did not build, or cannot exist here: "build failed: ...", "unavailable: ..."
        return f"{f.status.replace('_', ' ')}: {f.reason}"
    if f.status == Status.UNAVAILABLE:  # the kat program found its instructions missing
        return "unavailable on this CPU"
    if f.status in PROBLEMS or (f.status == Status.KAT_FAILED and not f.verdict.records):
        return f"{f.status.replace('_', ' ')}: {f.reason}"
    return None


def verify(lab: Lab, cipher_name: str, vectors: Path | str, impl: str | None = None, toolchain: str = "gcc-O3",
           target: str = "host", backend: str | None = None, build_dir: Path | None = None,
           engine: str = "auto", timeout: float | None = None, quick: bool = False) -> list[VerifyResult]:
    """Each selected implementation's cell through the one cell pipeline, as far as its gate: build the ``kat``
    program, run it on `vectors`, judge it (the agreement between builds included).  `timeout`: per kat run
    (default: the run's default profile's, as ``matrix.run`` gives its gates).  `quick`: the quick gate (every
    short record, the n-block check and the checksum chain; every ``QUICK_LONG_EVERY``-th long record)."""
    lab.cipher(cipher_name)  # an unknown name is an error with a did-you-mean, before anything is built
    vectors = Path(vectors).expanduser().resolve()
    if not vectors.is_file():
        raise UsageError(f"vectors file {vectors} does not exist (argument VECTORS)")
    tc, tg = lab.toolchain(toolchain), lab.target(target)
    impls = implementations(lab, cipher_name, impl, tc.family == "jvm")
    if not impls:
        raise UsageError(f"--toolchain {toolchain}: {cipher_name} has no Java implementation to run under it")
    build_dir = Path(build_dir or lab.root / "build")
    chosen = backend or ("host" if is_native(tg) and not tg.image else "container")
    be = make_backend(lab, chosen, engine=engine, build_dir=build_dir, progress=lambda s: None)
    profile = lab.default_profile()
    cells = [Cell(im, tc, tg, im.key_bits, profile) for im in impls]
    cells = [dataclasses.replace(c, unavailable=unavailable_reason(c)) for c in cells]
    out = {c.id: VerifyResult(c.impl.id, tc.name, tg.name) for c in cells}
    try:
        be.prepare([tg], inputs=[vectors])
        pipeline = CellPipeline(be, Builder(lab.root, build_dir, be),
                                Stages(programs=("kat",), vectors=(vectors,), kat_timeout=timeout,
                                       kat_long_every=QUICK_LONG_EVERY if quick else 1))
        for c in cells:
            if c.unavailable:
                out[c.id].problem = f"unavailable: {c.unavailable}"
        for item in pipeline.prepare_all([c for c in cells if not c.unavailable], jobs=1):
            r = out[item.cell.id]
            r.verdict = item.verdict
            if isinstance(item, Final):
                r.problem = _problem(item)
    finally:
        be.close()
    return list(out.values())
