"""Minimal ELF reader (any class, any byte order): section headers, for code sizes and symbols."""

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
