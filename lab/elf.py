"""Minimal ELF reader (any class, any byte order): sections, code sizes, function symbols.

Used for the code bytes of the memory table (:func:`code_sizes`) and for the
addresses of the instruction-count markers in a static executable
(:func:`marker_addresses`)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass(frozen=True)
class Elf:
    data: bytes
    endian: str  # "<" or ">"
    is64: bool
    type: int
    machine: int
    flags: int
    sections: list[Section]

    def cstr(self, off: int) -> str:
        return self.data[off:self.data.index(b"\0", off)].decode(errors="replace")


def parse(path: Path) -> Elf:
    b = Path(path).read_bytes()
    if b[:4] != b"\x7fELF":
        raise ValueError(f"{path}: not an ELF file")
    is64, end = b[4] == 2, "<" if b[5] == 1 else ">"
    e_type, e_machine = struct.unpack_from(end + "HH", b, 16)
    if is64:
        e_flags, = struct.unpack_from(end + "I", b, 0x30)
        shoff, = struct.unpack_from(end + "Q", b, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", b, 0x3A)
        fmt = end + "IIQQQQIIQQ"
    else:
        e_flags, = struct.unpack_from(end + "I", b, 0x24)
        shoff, = struct.unpack_from(end + "I", b, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", b, 0x2E)
        fmt = end + "IIIIIIIIII"
    raw = [struct.unpack_from(fmt, b, shoff + i * shentsize) for i in range(shnum)]
    elf = Elf(b, end, is64, e_type, e_machine, e_flags, [])
    names = raw[shstrndx][4] if 0 < shstrndx < len(raw) else None
    for r in raw:  # name, type, flags, addr, offset, size, link, info, addralign, entsize
        elf.sections.append(Section(elf.cstr(names + r[0]) if names is not None else "",
                                     r[1], r[2], r[3], r[4], r[5], r[6], r[9]))
    return elf


# ------------------------------------------------------------ code sizes
def section_sizes(path: Path) -> dict[str, int]:
    """Bytes of text / rodata / data / bss in an ELF object (any class, any byte order)."""
    SHF_WRITE, SHF_ALLOC, SHF_EXEC, SHT_NOBITS = 1, 2, 4, 8
    sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for sec in parse(path).sections:
        if not sec.flags & SHF_ALLOC:
            continue
        kind = "bss" if sec.type == SHT_NOBITS else "text" if sec.flags & SHF_EXEC else \
            "data" if sec.flags & SHF_WRITE else "rodata"
        sizes[kind] += sec.size
    return sizes


def code_sizes(paths: list[Path]) -> dict[str, int]:
    """Summed section sizes of objects; {} when one is not ELF (LTO objects hold IR: size unknown)."""
    total = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for p in paths:
        try:
            for k, v in section_sizes(p).items():
                total[k] += v
        except (OSError, ValueError, struct.error):
            return {}
    return total


# ----------------------------------------------------- instruction-count markers
MARKER_BEGIN, MARKER_END = "cl_marker_begin", "cl_marker_end"


class MarkerError(RuntimeError):
    """The program cannot be instruction-counted (not static, no markers)."""


EM_ARM, EM_PPC64 = 40, 21
SHT_SYMTAB, SHT_DYNSYM = 2, 11
ET_EXEC = 2


def _parse(path: Path) -> Elf:
    try:
        return parse(path)
    except (OSError, ValueError, struct.error) as e:
        raise MarkerError(str(e)) from None


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
        raise MarkerError(f"{path}: not a static non-PIE executable (ELF type {e_type}); link with -static")
    syms = elf_symbols(path)
    missing = [n for n in (MARKER_BEGIN, MARKER_END) if n not in syms]
    if missing:
        raise MarkerError(f"{path}: no symbol {', '.join(missing)}: build it with the marker counter")
    if syms[MARKER_BEGIN] == syms[MARKER_END]:
        raise MarkerError(f"{path}: the two markers share one address (folded by the linker)")
    return syms[MARKER_BEGIN], syms[MARKER_END]


