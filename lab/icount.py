"""Deterministic instruction counts: run a marker-counter program under qemu-user + the icount plugin.

A ``cycles`` binary built with the ``marker`` counter (c_src/harness/
counter_marker.c) calls ``cl_marker_begin``/``cl_marker_end`` around every
measured call and prints deltas of 0.  :func:`run_with_icount` reads the two
markers' addresses from the static binary's ELF symbol table, runs the
program under ``qemu-<arch> -plugin libicount.so,begin=..,end=..,out=..``
through a backend, and returns the guest instructions of each begin/end pair,
in order.  :func:`fill_deltas` puts them in place of the zero deltas.

Guest instruction counts depend only on the program and its input, so they
repeat exactly; they are the metric for emulated targets (where wall-clock
time measures the emulator) and, through qemu-x86_64, for the host too.
"""

from __future__ import annotations

import os
import shutil
import struct
import uuid
from dataclasses import dataclass
from pathlib import Path

from .backends import Backend, Completed
from .config import Target
from .elf import Elf
from .elf import parse as parse_elf

MARKER_BEGIN, MARKER_END = "cl_marker_begin", "cl_marker_end"
COUNTER_NAME, COUNTER_UNIT = "qemu-insn-region", "guest_insns"
PLUGIN_IN_IMAGE = "/opt/cipherlab/lib/libicount.so"
# The host's copy of the plugin (taken from the x86_64 image, see host_plugin()).
HOST_PLUGIN = Path("build/qemu-plugin/libicount.so")

EM_ARM, EM_PPC64 = 40, 21
SHT_SYMTAB, SHT_DYNSYM = 2, 11
ET_EXEC = 2


class IcountError(RuntimeError):
    """The program cannot be instruction-counted (no markers, not static, no plugin...)."""


# ---------------------------------------------------------------- ELF symbols
def _parse(path: Path) -> Elf:
    try:
        return parse_elf(path)
    except (ValueError, struct.error) as e:
        raise IcountError(str(e)) from None


def elf_symbols(path: Path, names: tuple[str, ...] = (MARKER_BEGIN, MARKER_END)) -> dict[str, int]:
    """Entry addresses of the named functions in an ELF executable (any class, any byte order).

    The address is where the function's first instruction is: for the ppc64
    ELFv1 ABI the symbol names a function descriptor in .opd, whose first
    word is the entry; for ARM the Thumb bit is cleared.
    """
    elf = _parse(path)
    symfmt = elf.endian + ("IBBHQQ" if elf.is64 else "IIIBBH")
    symsize = struct.calcsize(symfmt)
    elfv1 = elf.machine == EM_PPC64 and (elf.flags & 3) != 2
    found: dict[str, int] = {}
    for sec in elf.sections:
        if sec.type not in (SHT_SYMTAB, SHT_DYNSYM):
            continue
        strtab = elf.sections[sec.link]
        for off in range(sec.offset, sec.offset + sec.size, sec.entsize or symsize):
            f = struct.unpack_from(symfmt, elf.data, off)
            st_name, value, shndx = (f[0], f[4], f[3]) if elf.is64 else (f[0], f[1], f[5])
            if shndx == 0 or shndx >= len(elf.sections):
                continue  # undefined or special (absolute, common) symbol
            name = elf.cstr(strtab.offset + st_name)
            if name not in names or name in found:
                continue
            home = elf.sections[shndx]
            if elfv1 and home.name == ".opd":
                value, = struct.unpack_from(elf.endian + "Q", elf.data, home.offset + value - home.addr)
            if elf.machine == EM_ARM:
                value &= ~1
            found[name] = value
    return found


def marker_addresses(path: Path) -> tuple[int, int]:
    """(begin, end) entry addresses of the markers in a static, non-PIE executable."""
    e_type = _parse(path).type
    if e_type != ET_EXEC:
        raise IcountError(f"{path}: not a static non-PIE executable (ELF type {e_type}); link with -static")
    syms = elf_symbols(path)
    missing = [n for n in (MARKER_BEGIN, MARKER_END) if n not in syms]
    if missing:
        raise IcountError(f"{path}: no symbol {', '.join(missing)}: build it with the marker counter")
    if syms[MARKER_BEGIN] == syms[MARKER_END]:
        raise IcountError(f"{path}: the two markers share one address (folded by the linker)")
    return syms[MARKER_BEGIN], syms[MARKER_END]


# ------------------------------------------------------------------ running
def qemu_for(target: Target) -> list[str]:
    """qemu-user command for the target; x86 gets ``-cpu max`` so host-tuned code (-march=native) runs."""
    qemu = target.qemu or f"qemu-{target.arch}"
    return [qemu, "-cpu", "max"] if target.arch in ("x86_64", "i386") else [qemu]


def plugin_path(backend: Backend, root: Path | None = None) -> str:
    """Where the plugin is for this backend: in the image, or the host's copy (see :func:`host_plugin`)."""
    if backend.name == "container":
        return PLUGIN_IN_IMAGE
    env = os.environ.get("CIPHERLAB_QEMU_PLUGIN")
    if env:
        return env
    p = (Path(root) if root else Path.cwd()) / HOST_PLUGIN
    if not p.exists():
        raise IcountError(f"no icount plugin at {p}: run lab.icount.host_plugin(lab) (copies it from the x86_64 image)"
                          " or set CIPHERLAB_QEMU_PLUGIN")
    return str(p)


def host_plugin(lab, engine=None) -> Path:
    """Copies the plugin out of the x86_64 image to build/qemu-plugin/ for host-backend runs.

    The image is Debian bookworm like this host, so the plugin matches the
    host's qemu-user 7.2 (QEMU checks the plugin API version when loading).
    """
    from .images import build_images, detect_engine

    engine = engine or detect_engine(lab=lab)
    build_images(lab, ["x86_64"], engine)
    dest = lab.root / HOST_PLUGIN
    dest.parent.mkdir(parents=True, exist_ok=True)
    cid = engine.run("create", lab.target("x86_64").image, check=True).stdout.strip()
    try:
        engine.run("cp", f"{cid}:{PLUGIN_IN_IMAGE}", str(dest), check=True)
    finally:
        engine.run("rm", cid)
    return dest


def _work_dir(backend: Backend, cwd: str) -> Path:
    bd = getattr(backend, "build_dir", None)
    return Path(bd) if bd else Path(cwd) / "build"


def run_with_icount(backend: Backend, target: Target, argv: list[str], *, cwd: str, timeout: float,
                    env: dict | None = None, plugin: str | None = None,
                    out_dir: Path | None = None) -> tuple[Completed, list[int]]:
    """Runs argv (a marker-counter program, no runner prefix) under qemu + the icount plugin.

    Returns what the program printed and the guest instructions of each
    begin/end marker pair, in order ([] when the plugin wrote nothing, e.g.
    after a crash).  Works with any backend: the container's image has the
    plugin; the host needs :func:`host_plugin` once.
    """
    exe = Path(argv[0]) if Path(argv[0]).is_absolute() else Path(cwd) / argv[0]
    begin, end = marker_addresses(exe)
    plugin = plugin or plugin_path(backend, Path(cwd))
    out_dir = Path(out_dir) if out_dir else _work_dir(backend, cwd) / "icount"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{target.name}-{uuid.uuid4().hex}.counts"
    if "," in str(out) or "," in plugin:
        raise IcountError(f"QEMU splits plugin arguments at commas: {out} / {plugin}")
    cmd = [*qemu_for(target), "-plugin", f"{plugin},begin={begin:#x},end={end:#x},out={out}", *argv]
    c = backend.run(cmd, cwd=cwd, timeout=timeout, env=env, target=target)
    try:
        counts = [int(line) for line in out.read_text().split()]
    except (OSError, ValueError):
        counts = []
    finally:
        out.unlink(missing_ok=True)
    return c, counts


def icount_unavailable(c: Completed) -> str | None:
    """Why a run under qemu could not count, when that is QEMU's limit rather than the cell's fault.

    QEMU 7.2's TCG has no AVX-512 (and other recent extensions): a build with
    -march=native on such a host stops with SIGILL under qemu-x86_64 although
    it runs natively.  Such a cell's instruction count is "unavailable".
    """
    if c.signal_name == "SIGILL":
        return "QEMU cannot emulate an instruction of this build (e.g. AVX-512 from -march=native)"
    return None


def fill_deltas(records: list[dict], counts: list[int]) -> list[dict]:
    """The ``cycles`` records with their zero deltas replaced, in order, by the plugin's counts.

    ``cycles`` opens one region before its first record (the counter
    calibration, timed by the clock and so not deterministic): when there is
    exactly one count more than deltas, that first count is dropped.  Any
    other mismatch is an error.
    """
    ops = [r for r in records if r.get("type") == "cycles"]
    need = sum(len(r["deltas"]) for r in ops)
    extra = len(counts) - need
    if extra not in (0, 1):
        raise IcountError(f"{len(counts)} marked regions for {need} deltas: the counts cannot be paired")
    it = iter(counts[extra:])
    out = []
    for r in records:
        if r.get("type") == "cycles":
            r = {**r, "deltas": [next(it) for _ in r["deltas"]], "counter": COUNTER_NAME, "unit": COUNTER_UNIT}
        out.append(r)
    return out


# ------------------------------------------------------------------ building
def icount_variant(target: Target) -> Target:
    """The target as built for instruction counting: marker counter, static link."""
    if target.counter == "marker" and target.static:
        return target
    return target.model_copy(update={"counter": "marker", "static": True})


def build_for_icount(builder, cipher, strategy: str, toolchain, target: Target):
    """Builds ``cycles`` with the marker counter, statically, for any target (e.g. x86_64/host).

    Targets whose own counter is the marker use their normal build; others
    are built under ``<build_dir>/icount/`` so the two builds never mix.
    Returns the :class:`lab.build.BuildResult`.
    """
    from .build import Builder

    variant = icount_variant(target)
    if variant is not target:
        builder = Builder(builder.root, Path(builder.build_dir) / "icount", builder.backend, builder.timeout)
    return builder.build(cipher, strategy, toolchain, variant, programs=("cycles",))


def which_qemu(target: Target) -> str | None:
    """The host's qemu-user binary for the target, if installed (host-backend runs)."""
    return shutil.which(qemu_for(target)[0])


__all__ = ["run_with_icount", "fill_deltas", "icount_unavailable", "marker_addresses", "elf_symbols", "build_for_icount",
           "icount_variant", "host_plugin", "plugin_path", "IcountError"]
