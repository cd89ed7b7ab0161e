"""Per-cell evidence of why a cell is fast: the disassembly of its encrypt, decrypt and key-setup functions.

Called once per run, after the known-answer gate, for every built cell (:func:`record`); it writes
``<run dir>/asm/<cell id, safe characters>.json.gz`` and never fails a cell: what could not be found is a
``note`` (or a per-function ``missing``) in the evidence.

Which function is which comes from the descriptor ``cl_impl_<cipher>_<strategy>`` (c_src/include/cipherlab.h):
its pointer fields point at the functions.  In the implementation's objects (``BuildPlan.objects``) those
pointers are relocations (``objdump -r``), against a function's symbol or against its section plus an addend
(the addend in the relocation on RELA targets, in the section's bytes on REL ones), mapped to the function
symbols of the symbol tables (``objdump -t``).  The disassembly (``objdump -d -r``) shows each instruction's
relocation under it, so calls into a library and loads from tables name their symbol.  With ``-flto`` the
objects hold compiler IR: the linked timing program (not stripped) is read instead, the descriptor's pointer
values taken from its bytes.  The tools are the target's binutils (``objdump`` natively, ``<triple>-objdump``
across), run through the cell's backend so a container target uses its image's.
"""

from __future__ import annotations

import gzip
import json
import re
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import elf, memo
from .buildplan import is_native

FORMAT = 1
# The descriptor's fields in order (cipherlab.h `cl_impl`): every field takes one pointer's width on LP64 and
# ILP32 alike (block_bytes is padded up to the next pointer), so field i is at offset i * pointer bytes.
FIELDS = ("cipher", "strategy", "block_bytes", "key_bits", "ks_bytes", "table_bytes", "available",
          "set_encrypt_key", "set_decrypt_key", "encrypt", "decrypt", "init_hook")
ROLES = ("encrypt", "set_encrypt_key", "set_decrypt_key", "decrypt")
TIMEOUT = 120
_HEADER = re.compile(r"^(\S.*?):\s+file format (\S+)\s*$")
_SYM = re.compile(r"^([0-9a-fA-F]+) (.{7}) (\S+)\s+([0-9a-fA-F]+)\s+(?:\S+\s+)?(\S+)$")
_RELOC = re.compile(r"^([0-9a-fA-F]+)\s+(\S+)\s+(\S.*)$")
_VALUE = re.compile(r"^(.*?)(?:([+-])0x([0-9a-fA-F]+))?$")
_LABEL = re.compile(r"^[0-9a-fA-F]+ <(.+)>:$")
_RELOC_LINE = re.compile(r"^\s*[0-9a-fA-F]+: R_\S+\s")
_ADDRESS = re.compile(r"^\s*[0-9a-fA-F]+:\s*")


def safe_name(cell_id: str) -> str:
    """A cell id as a file name: cipher/impl@tc@target -> cipher_impl@tc@target."""
    return re.sub(r"[^A-Za-z0-9@._+-]+", "_", cell_id)


def objdump_for(target) -> str:
    return "objdump" if is_native(target) else f"{target.triple}-objdump"


@dataclass
class Symbol:
    name: str
    value: int
    section: str
    size: int
    func: bool
    defined: bool
    is_section: bool


@dataclass
class ObjectFile:
    path: str
    fmt: str = ""
    symbols: list[Symbol] = field(default_factory=list)
    relocs: dict[str, list[tuple[int, str, int | None]]] = field(default_factory=dict)  # section -> (off, sym, add)
    functions: dict[str, list[str]] = field(default_factory=dict)  # disassembly per function label


class Missing(Exception):
    """Why the evidence (or one function's) cannot be had; recorded, never raised past record()."""


# ------------------------------------------------------------------ parsing objdump's output
def _split_files(text: str) -> dict[str, tuple[str, list[str]]]:
    """objdump output of several files: {path: (format, lines)}."""
    out: dict[str, tuple[str, list[str]]] = {}
    cur = None
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            cur = m.group(1)
            out[cur] = (m.group(2), [])
        elif cur is not None:
            out[cur][1].append(line)
    return out


def parse_tables(path: str, fmt: str, lines: list[str]) -> ObjectFile:
    """`objdump -t -r` of one file: its symbols and its relocations per section."""
    o = ObjectFile(path, fmt)
    section = None
    for line in lines:
        if line.startswith("RELOCATION RECORDS FOR ["):
            section = line[len("RELOCATION RECORDS FOR ["):].rstrip("]:")
            o.relocs[section] = []
            continue
        if section is None:
            m = _SYM.match(line)
            if m:
                flags, sec = m.group(2), m.group(3)
                o.symbols.append(Symbol(m.group(5), int(m.group(1), 16), sec, int(m.group(4), 16), "F" in flags,
                                        sec != "*UND*", flags[5] == "d"))
        else:
            m = _RELOC.match(line)
            if m and not line.startswith("OFFSET"):
                v = _VALUE.match(m.group(3).strip())
                add = None if v.group(2) is None else int(v.group(3), 16) * (-1 if v.group(2) == "-" else 1)
                o.relocs[section].append((int(m.group(1), 16), v.group(1), add))
    return o


def parse_disassembly(lines: list[str]) -> dict[str, list[str]]:
    """`objdump -d --no-show-raw-insn` of one file: {function label: its lines}."""
    out: dict[str, list[str]] = {}
    cur = None
    for line in lines:
        m = _LABEL.match(line)
        if m:
            cur = m.group(1)
            out[cur] = []
        elif cur is not None and line.strip() and not line.startswith("Disassembly of section"):
            out[cur].append(line.rstrip())
    return out


def is_relocation(line: str) -> bool:
    """A relocation shown under its instruction (`objdump -d -r`): the symbol a call or a table load names."""
    return bool(_RELOC_LINE.match(line))


def instructions(asm: str) -> int:
    return sum(1 for line in asm.splitlines() if not is_relocation(line))


_MNEMONIC = re.compile(r"^\s*[0-9a-f]+:\s+([a-z][a-z0-9.,]*)\s*(.*)$")


def shape(asm: str) -> dict[str, int]:
    """A function's static shape from its disassembly (objdump -d, AT&T syntax on x86; SPARC and MIPS by their
    mnemonics): instructions, memory reads and writes, conditional branches and calls.  What a reader wants before
    a raw diff: where two builds' code differs in kind.  x86: an operand in parentheses is memory, read when it is
    the source, written when it is the last operand; SPARC/MIPS: ld*/l[bhwd]* read, st*/s[bhwd] write."""
    out = {"instructions": 0, "reads": 0, "writes": 0, "branches": 0, "calls": 0}
    for line in asm.splitlines():
        m = _MNEMONIC.match(line)
        if not m or is_relocation(line):
            continue
        op, args = m.group(1), m.group(2).split("#")[0].strip()
        out["instructions"] += 1
        if op.startswith("call") or op in ("jal", "jalr"):
            out["calls"] += 1
        elif (op.startswith("j") and op not in ("jmp", "jmpq", "j", "jr")) or \
                (op.startswith("b") and op not in ("bswap", "bt", "bts", "btr", "btc", "bsf", "bsr", "bzhi", "blsr",
                                                   "blsi", "blsmsk", "bextr", "b", "ba", "ba,a")):
            out["branches"] += 1
        if "(" in args and "%" in args:  # x86 AT&T (registers named with %)
            operands = re.split(r",(?![^(]*\))", args)
            if "(" in operands[-1] and len(operands) > 1:
                out["writes"] += 1
            if any("(" in o for o in operands[:-1]) or (len(operands) == 1 and not op.startswith(("j", "call",
                                                                                                  "lea", "nop"))):
                out["reads"] += 1 if not op.startswith("lea") else 0
        elif re.match(r"^(ld|lw|lh|lb|lwu|lhu|lbu|ldx|lduw|ldub|lduh|ldsw|ldsh|ldsb)$", op):
            out["reads"] += 1
        elif re.match(r"^(st|sw|sh|sb|sd|stx|stw|sth|stb)$", op):
            out["writes"] += 1
    return out


def instruction_text(line: str) -> str:
    """An instruction (or relocation) line without its address (what a diff between builds compares)."""
    return _ADDRESS.sub("", line).strip()


# ------------------------------------------------------------------ the tools, through the backend
class Tools:
    def __init__(self, backend, target):
        self.backend, self.target, self.exe = backend, target, objdump_for(target)

    def run(self, args: list[str], files: list[str]) -> dict[str, tuple[str, list[str]]]:
        c = self.backend.exec([self.exe, *args, *files], target=self.target, timeout=TIMEOUT)
        if c.returncode != 0 and not c.stdout.strip():
            raise Missing(f"{self.exe} {' '.join(args)} failed: {c.describe_failure()[-300:]}")
        got = _split_files(c.stdout)
        if not got:
            raise Missing(f"{self.exe} {' '.join(args)} printed nothing usable: {(c.stderr or '').strip()[-300:]}")
        return got

    def version(self) -> str:
        c = self.backend.exec([self.exe, "--version"], target=self.target, timeout=TIMEOUT)
        return c.stdout.strip().splitlines()[0] if c.returncode == 0 and c.stdout.strip() else ""


def _in_place(path: str, section: str, offset: int, width: int) -> int:
    """The addend a REL target keeps in the relocated bytes."""
    e = elf.parse(Path(path))
    s = next(s for s in e.sections if s.name == section)
    return struct.unpack_from(e.endian + ("Q" if width == 8 else "I"), e.data, s.offset + offset)[0]


def _function_at(o: ObjectFile, section: str, value: int) -> Symbol | None:
    fs = [s for s in o.symbols if s.func and s.defined and s.section == section and
          (s.value == value or s.value & ~1 == value & ~1)]  # & ~1: Thumb functions have bit 0 set
    return min(fs, key=lambda s: (s.name.startswith("."), len(s.name))) if fs else None


def from_objects(tools: Tools, objects: list[str], descriptor: str) -> tuple[dict, int]:
    """{role: (object, symbol) or (None, why)} from the descriptor's relocations; and the pointer width."""
    tables = {p: parse_tables(p, fmt, lines) for p, (fmt, lines) in tools.run(["-t", "-r"], objects).items()}
    home = next(((o, s) for o in tables.values() for s in o.symbols if s.name == descriptor and s.defined), None)
    if home is None:
        formats = sorted({o.fmt for o in tables.values()})
        raise Missing(f"no {descriptor} in the implementation's objects (formats {', '.join(formats) or 'none'})")
    o, d = home
    width = 8 if elf.parse(Path(o.path)).is64 else 4
    relocs = {off: (sym, add) for off, sym, add in o.relocs.get(d.section, [])}
    found: dict = {}
    for role in ROLES:
        off = d.value + FIELDS.index(role) * width
        if off not in relocs:
            found[role] = (None, "a null pointer in the descriptor")
            continue
        sym, add = relocs[off]
        sec = next((s for s in o.symbols if s.is_section and s.name == sym), None)
        if sec is not None:
            addend = add if add is not None else _in_place(o.path, d.section, off, width)
            f = _function_at(o, sec.section, addend)
            found[role] = (o.path, f.name) if f else (None, f"no function symbol at {sym}+{addend:#x}")
            continue
        owner = next((x for x in tables.values() for s in x.symbols if s.name == sym and s.defined and s.func),
                     None)
        found[role] = (owner.path, sym) if owner else (None, f"{sym} is not in the implementation's objects")
    return found, width


def from_program(tools: Tools, program: str, descriptor: str) -> tuple[dict, int]:
    """The same from a linked program: the descriptor's pointer values read from its bytes."""
    (fmt, lines), = tools.run(["-t"], [program]).values()
    o = parse_tables(program, fmt, lines)
    d = next((s for s in o.symbols if s.name == descriptor and s.defined), None)
    if d is None:
        raise Missing(f"no {descriptor} in the linked program either")
    e = elf.parse(Path(program))
    width = 8 if e.is64 else 4
    sec = next(s for s in e.sections if s.name == d.section)
    found: dict = {}
    for role in ROLES:
        at = sec.offset + d.value - sec.addr + FIELDS.index(role) * width
        addr = struct.unpack_from(e.endian + ("Q" if width == 8 else "I"), e.data, at)[0]
        f = next((s for s in o.symbols if s.func and s.defined and s.value & ~1 == addr & ~1 and s.value), None)
        found[role] = (program, f.name) if f else (None, "a null pointer in the descriptor" if addr == 0 else
                                                  f"no function symbol at {addr:#x}")
    return found, width


# ------------------------------------------------------------------ one cell
def evidence(backend, cell, objects: list[Path], program: Path | None) -> dict:
    """The evidence of one built cell (never raises)."""
    t0 = time.perf_counter()
    tools = Tools(backend, cell.target)
    descriptor = f"cl_impl_{cell.impl.symbol}"
    ev: dict = {"format": FORMAT, "cell": cell.id, "objdump": tools.exe, "descriptor": descriptor,
                "source": None, "note": None, "pointer_bytes": None, "functions": {}}
    notes = []
    if cell.impl.peer:
        notes.append(f"peer library {cell.impl.peer.display}: these are the adapter's functions; the library's "
                     f"own code ({', '.join(cell.impl.libs) or 'its shared library'}) is not disassembled")
    try:
        ev["objdump_version"] = tools.version()
        try:
            found, width = from_objects(tools, [str(p) for p in objects], descriptor)
            ev["source"] = "objects"
        except (Missing, StopIteration, ValueError, struct.error) as e:
            if program is None:
                raise Missing(str(e)) from None
            notes.append(f"from the linked timing program: {e}")
            found, width = from_program(tools, str(program), descriptor)
            ev["source"] = "linked program"
        ev["pointer_bytes"] = width
        wanted = sorted({p for p, _ in found.values() if p})
        asm = {p: parse_disassembly(lines) for p, (_, lines) in
               tools.run(["-d", "-r", "--no-show-raw-insn"], wanted).items()} if wanted else {}
        seen: dict[tuple[str, str], str] = {}
        for role in ROLES:
            path, name = found[role]
            if path is None:
                ev["functions"][role] = {"symbol": None, "missing": name}
                continue
            rel = Path(path).name
            if (path, name) in seen:
                ev["functions"][role] = {"symbol": name, "object": rel, "same_as": seen[(path, name)]}
                continue
            seen[(path, name)] = role
            lines = asm.get(path, {}).get(name)
            if lines is None:
                ev["functions"][role] = {"symbol": name, "object": rel, "missing": "not in the disassembly"}
                continue
            ev["functions"][role] = {"symbol": name, "object": rel, "instructions": instructions("\n".join(lines)),
                                     "asm": "\n".join(lines)}
    except (Missing, StopIteration, ValueError, struct.error, OSError) as e:
        notes.append(f"no disassembly: {e}")
    except Exception as e:  # noqa: BLE001 - evidence is optional: a surprise is recorded, the cell goes on
        notes.append(f"no disassembly: {type(e).__name__}: {e}")
    ev["note"] = "; ".join(notes) or None
    ev["seconds"] = round(time.perf_counter() - t0, 3)
    return ev


def record(backend, built: list, asm_dir: Path, jobs: int = 1, memo_dir: Path | None = None) -> tuple[float, bool]:
    """Writes the evidence of every built cell (lab.pipeline.Built) into asm_dir; returns the seconds it took and
    whether every cell's evidence was reused (lab.memo: evidence belongs to the cell's binary and objects)."""
    t0 = time.perf_counter()
    asm_dir.mkdir(parents=True, exist_ok=True)

    def one(b) -> bool:
        r = b.results.get("timing") or b.results.get("kat")
        prog = r.program if r is not None and r.ok else None
        objects = list(r.plan.objects) if r is not None else []
        k = memo.key([prog, *objects], [FORMAT, b.cell.id, b.cell.target.name])
        ev, hit = memo.remembered(memo_dir if prog else None, "evidence", k,
                                  lambda: evidence(backend, b.cell, objects, prog))
        try:  # gzip: a default run's evidence is ~5 MB as text, ~0.5 MB compressed; best effort on a full disk
            with gzip.open(asm_dir / f"{safe_name(b.cell.id)}.json.gz", "wt") as f:
                json.dump(ev, f)
        except OSError:
            (asm_dir / f"{safe_name(b.cell.id)}.json.gz").unlink(missing_ok=True)
        return hit

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        hits = list(pool.map(one, built))
    return round(time.perf_counter() - t0, 3), bool(hits) and all(hits)


def load(run_dir: Path) -> dict[str, dict]:
    """The evidence of a run: {cell id: evidence} (empty when the run recorded none)."""
    out = {}
    for f in sorted((Path(run_dir) / "asm").glob("*.json*")):
        try:
            ev = json.loads(gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_text())
        except (OSError, ValueError, EOFError):
            continue
        if isinstance(ev, dict) and "cell" in ev:
            out[ev["cell"]] = ev
    return out
