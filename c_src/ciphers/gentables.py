"""gentables.py -- the parts every cipher folder's gen_tables.py shares (standard library only).

A generator computes its tables (running its own checks on the way) and returns what each
output file should hold; this module formats C arrays, finds the generated block in a C file,
writes it, or compares it table by table.  In c_src/ciphers/<cipher>/gen_tables.py:

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # c_src/ciphers
    import gentables as gt

    def generate(args):
        return [gt.Block("ref.c", gt.c_array("static const uint8_t f_tab[256]", F, "0x%02x", 16))]

    if __name__ == "__main__":
        gt.main(__file__, generate, __doc__)

Output kinds:
    Block(file, text)      the text between the marker lines BEGIN and END (below) in the file,
                           which a file holds once
    WholeFile(file, text)  the whole file (generated headers)

The command line of every generator (main):
    python3 gen_tables.py            write the generated text into the file(s)
    python3 gen_tables.py --check    generate in memory and compare with the file(s): exit 1 with
                                     one line per file and table that differs, 0 when all are equal
    python3 gen_tables.py --print    print the generated text instead of writing it
plus any options the generator adds (add_arguments).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

BEGIN = "/* BEGIN GENERATED TABLES (gen_tables.py) */"
END = "/* END GENERATED TABLES */"


# ------------------------------------------------------------------ C formatting
def rows(values: Sequence[int], fmt: str, per_line: int, indent: str = "    ") -> list[str]:
    """Lines of `per_line` values each, every value formatted with fmt (%-style) and followed by a comma."""
    return [indent + ", ".join(fmt % v for v in values[i:i + per_line]) + ","
            for i in range(0, len(values), per_line)]


def c_array(decl: str, values: Sequence[int], fmt: str, per_line: int, comment: str | None = None) -> str:
    """`decl = { ... };` for a one-dimensional array, decl like "static const uint8_t f[256]";
    comment (text without the comment delimiters, may span lines) goes on the lines above."""
    return "\n".join(_comment(comment) + [decl + " = {"] + rows(values, fmt, per_line) + ["};"])


def c_array_2d(decl: str, tables: Sequence[Sequence[int]], fmt: str, per_line: int,
               comment: str | None = None, row_comments: Sequence[str] | None = None,
               inline: bool = False) -> str:
    """`decl = { {...}, ... };` for an array of arrays.  Each sub-array is a braced block of rows
    (per_line values a line), preceded by its row_comments entry when given; with inline=True each
    sub-array is one line `{a, b, ...},` instead."""
    lines = _comment(comment) + [decl + " = {"]
    for k, t in enumerate(tables):
        if row_comments:
            lines.append(f"    /* {row_comments[k]} */")
        if inline:
            lines.append("    {" + ", ".join(fmt % v for v in t) + "},")
        else:
            lines += ["    {"] + rows(t, fmt, per_line, indent="        ") + ["    },"]
    return "\n".join(lines + ["};"])


def _comment(text: str | None) -> list[str]:
    if not text:
        return []
    body = text.split("\n")
    if len(body) == 1:
        return [f"/* {body[0]} */"]
    return [f"/* {body[0]}"] + [f" * {ln}" if ln else " *" for ln in body[1:-1]] + [f" * {body[-1]} */"]


# ------------------------------------------------------------------ arithmetic
def gf_mul(a: int, b: int, poly: int) -> int:
    """a times b as polynomials over GF(2) (bit i = coefficient of x^i) modulo poly, whose degree
    n = poly.bit_length() - 1 bounds the operands (a, b < 2^n): GF(2^8) with poly 0x11B, LOKI97's
    GF(2^13) and GF(2^11), ..."""
    n = poly.bit_length() - 1
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if (a >> n) & 1:
            a ^= poly
    return r


# ------------------------------------------------------------------ outputs
@dataclass(frozen=True)
class Block:
    """The generated block of a C file: the lines strictly between BEGIN and END."""
    file: str
    text: str


@dataclass(frozen=True)
class WholeFile:
    """A file that is generated entirely."""
    file: str
    text: str


Output = Block | WholeFile


class GenError(Exception):
    """A file cannot take the generated text (no markers, two blocks, ...)."""


def find_block(src: str, file: str) -> tuple[int, int]:
    """Start and end offsets of the block's text in src (after the BEGIN line, before the END line)."""
    starts = [m.end() for m in re.finditer(re.escape(BEGIN) + r"\n", src)]
    ends = [m.start() for m in re.finditer(r"^" + re.escape(END) + r"$", src, re.M)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise GenError(f"{file}: needs exactly one block between the lines '{BEGIN}' and '{END}' "
                       f"(found {len(starts)} BEGIN, {len(ends)} END)")
    return starts[0], ends[0]


def render(out: Output, current: str | None) -> str:
    """The whole new content of out.file, given its current content (None if it does not exist)."""
    text = out.text if out.text.endswith("\n") else out.text + "\n"
    if isinstance(out, WholeFile):
        return text
    if current is None:
        raise GenError(f"{out.file}: does not exist")
    a, b = find_block(current, out.file)
    return current[:a] + text + current[b:]


# ------------------------------------------------------------------ naming what differs
_DECL = re.compile(r"^[A-Za-z_][^=;]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)+=\s*\{")
_DEFINE = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)")


def _code(line: str) -> str:
    return re.sub(r"/\*.*?\*/", "", line)


def tables(text: str) -> dict[str, str]:
    """The named pieces of generated C: each array or macro definition with the comment and
    preprocessor lines just above it; lines after the last one are under '(end of block)'."""
    out: dict[str, list[str]] = {}
    pending: list[str] = []
    name, depth, macro = None, 0, False
    for line in text.splitlines():
        if name is None:
            m = _DECL.match(line) or _DEFINE.match(line)
            if not m:
                pending.append(line)
                continue
            name, macro = m.group(1), line.startswith("#")
            out[name], pending, depth = pending + [line], [], 0
        else:
            out[name].append(line)
        if macro:
            if not line.endswith("\\"):
                name = None
        else:
            depth += _code(line).count("{") - _code(line).count("}")
            if depth <= 0 and _code(line).rstrip().endswith(";"):
                name = None
    if pending:
        out["(end of block)"] = pending
    return {k: "\n".join(v) for k, v in out.items()}


def differences(file: str, current: str, new: str) -> list[str]:
    """One message per table of file whose committed text differs from the generated one."""
    old_t, new_t = tables(current), tables(new)
    msgs = []
    for name in new_t:
        if name not in old_t:
            msgs.append(f"{file}: table {name} is generated but not in the file")
        elif old_t[name] != new_t[name]:
            msgs.append(f"{file}: table {name} differs from the generated one")
    msgs += [f"{file}: table {name} is in the file but not generated" for name in old_t if name not in new_t]
    return msgs or [f"{file}: the order of the generated tables differs"]


def check(folder: Path, outputs: Iterable[Output]) -> list[str]:
    """Messages naming each file and table that differs from the generated text (empty: all equal)."""
    msgs = []
    for out in outputs:
        path = folder / out.file
        current = path.read_text() if path.exists() else None
        if current is None:
            msgs.append(f"{out.file}: does not exist")
            continue
        new = render(out, current)
        if new == current:
            continue
        if isinstance(out, Block):
            a, b = find_block(current, out.file)
            current = current[a:b]
        msgs += differences(out.file, current, out.text)
    return msgs


def write(folder: Path, outputs: Iterable[Output]) -> list[str]:
    """Writes every output; returns the files that changed."""
    changed = []
    for out in outputs:
        path = folder / out.file
        current = path.read_text() if path.exists() else None
        new = render(out, current)
        if new != current:
            path.write_text(new)
            changed.append(out.file)
    return changed


# ------------------------------------------------------------------ command line
def main(script: str, generate: Callable[[argparse.Namespace], list[Output]], doc: str | None = None,
         add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
         argv: list[str] | None = None) -> None:
    """The command line shared by every gen_tables.py (see the module docstring); exits."""
    folder = Path(script).resolve().parent
    ap = argparse.ArgumentParser(prog=f"{folder.name}/{Path(script).name}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare the generated tables with the files; exit 1 naming each that differs")
    mode.add_argument("--print", action="store_true", help="print the generated text instead of writing it")
    if add_arguments:
        add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        outputs = generate(args)
        if args.print:
            for out in outputs:
                print(f"/* ---- {out.file}{'' if isinstance(out, WholeFile) else ' (generated block)'} */")
                sys.stdout.write(out.text if out.text.endswith("\n") else out.text + "\n")
            sys.exit(0)
        if args.check:
            msgs = check(folder, outputs)
            for m in msgs:
                print(f"{folder.name}/{m}", file=sys.stderr)
            if msgs:
                print(f"{folder.name}: run python3 {Path(script).name} to rewrite them (after finding out "
                      "which side is right)", file=sys.stderr)
                sys.exit(1)
            print(f"{folder.name}: generated tables current in {', '.join(o.file for o in outputs)}")
            sys.exit(0)
        changed = write(folder, outputs)
        print(f"{folder.name}: wrote {', '.join(changed)}" if changed else f"{folder.name}: unchanged")
    except GenError as e:
        print(f"{folder.name}/{e}", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
