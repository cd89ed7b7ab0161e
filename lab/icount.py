"""Deterministic instruction counts: run a marker-counter program under QEMU with the icount plugin.

A program built as ``icount`` (lab/buildplan.py: ``cycles`` with the marker
counter of c_src/harness/counter_marker.c, linked statically) calls
``cl_marker_begin``/``cl_marker_end`` around every measured call and prints
deltas of 0.  :func:`count` reads the markers' addresses from the binary's
symbol table, runs it through the backend's runner with ``--icount`` (QEMU
plus the TCG plugin, c_src/qemu_plugin), and returns the guest instructions
of each begin/end pair, in order; :func:`fill_deltas` puts them in place of
the zero deltas.

Guest instruction counts depend only on the program and its input, so they
repeat exactly; they are the metric for emulated targets (where wall-clock
time measures the emulator) and, through qemu-x86_64, for the host too.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from .backends import Backend, Completed, Icount
from .config import Target
from .elf import MarkerError, marker_addresses
from .protocol import CyclesRecord

COUNTER_NAME, COUNTER_UNIT = "qemu-insn-region", "guest_insns"


class IcountError(RuntimeError):
    """The program cannot be instruction-counted (no markers, not static, no plugin...)."""


def no_plugin(target: Target) -> str:
    """Why no plugin counts target's guest instructions here, and the fix."""
    if target.image and not target.image_plugin:
        return (f"the image of {target.name} has no instruction-count plugin (targets/{target.name}.yaml "
                "image_plugin: false, its QEMU lacks the plugin API): `--backend mixed` counts its static programs "
                "with the host's QEMU and plugin (`invoke images.host-plugin` copies the plugin)")
    from .qemu_plugin import last_failure

    return (f"no QEMU plugin here: {last_failure() or 'it was not built'}; or set CIPHERLAB_QEMU_PLUGIN to a "
            "libicount.so built for this QEMU")


def count(backend: Backend, program: Path, args: list[str], *, target: Target, timeout: float,
          counts_dir: Path) -> tuple[Completed, list[int]]:  # pragma: no mutate block (I/O: docs/testing.md)
    """Runs program (built as icount) under QEMU + the plugin; what it printed and the count of every
    marked region, in order ([] when the plugin wrote nothing, e.g. after a crash)."""
    try:
        begin, end = marker_addresses(program)
    except MarkerError as e:
        raise IcountError(str(e)) from None
    if not backend.plugin_path(target):
        raise IcountError(no_plugin(target))
    counts_dir.mkdir(parents=True, exist_ok=True)
    out = counts_dir / f"{target.name}-{uuid.uuid4().hex}.counts"
    if "," in str(out):
        raise IcountError(f"QEMU splits plugin arguments at commas: {out}")
    c = backend.run_program(program, args, target=target, timeout=timeout, icount=Icount(begin, end, out))
    try:
        counts = [int(line) for line in out.read_text().split()]
    except (OSError, ValueError):
        counts = []
    finally:
        out.unlink(missing_ok=True)
    return c, counts


def unavailable_reason(c: Completed) -> str | None:
    """Why a run under qemu could not count, when that is QEMU's limit rather than the cell's fault.

    QEMU 7.2's TCG has no AVX-512 (and other recent extensions): a build with
    -march=native on such a host stops with SIGILL under qemu-x86_64 although
    it runs natively; an implementation that checks the CPU first reports itself unavailable (exit 3) there.
    Such a cell's instruction count is "unavailable".
    """
    if c.signal_name == "SIGILL":
        return "QEMU cannot emulate an instruction of this build (e.g. AVX-512 from -march=native)"
    if c.returncode == 3 and '"type":"unavailable"' in c.stdout.replace(" ", ""):
        return "the implementation finds its instructions missing on QEMU's CPU (e.g. AVX-512 or VAES, which " \
               "QEMU 7.2 does not emulate): no instruction count"
    return None


def fill_deltas(ops: list[CyclesRecord], counts: list[int]) -> list[CyclesRecord]:
    """The ``cycles`` records with their zero deltas replaced by the plugin's counts.

    ``cycles`` opens one region before its first record (the counter rate, timed by the clock and so not
    deterministic): when there is exactly one count more than deltas, that first count is dropped.  The
    program takes its samples round by round (round r: sample r of every operation that has one, in the
    order it prints them), so the counts are dealt out in that order.  Any other mismatch is an error.
    """
    need = sum(len(r.deltas) for r in ops)
    extra = len(counts) - need
    if extra not in (0, 1):
        raise IcountError(f"{len(counts)} marked regions for {need} deltas: the counts cannot be paired")
    it = iter(counts[extra:])
    dealt: list[list[int]] = [[] for _ in ops]
    for rnd in range(max((len(r.deltas) for r in ops), default=0)):
        for i, r in enumerate(ops):
            if rnd < len(r.deltas):
                dealt[i].append(next(it))
    return [r.model_copy(update={"deltas": d, "counter": COUNTER_NAME, "unit": COUNTER_UNIT})
            for r, d in zip(ops, dealt)]


__all__ = ["count", "fill_deltas", "unavailable_reason", "IcountError", "COUNTER_NAME", "COUNTER_UNIT"]
