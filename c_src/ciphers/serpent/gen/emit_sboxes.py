#!/usr/bin/env python3
"""Writes the S-box circuits found by sbox_cgp.c into ../bitslice.c and ../sbox_vec.h.

Reads gen/circuits.txt (the output of sbox_cgp, one block per S-box: a header
line, "N = op A B" gate lines, an "out" line), re-evaluates every circuit on
all 16 inputs against the S-box tables of the Serpent AES submission
(Appendix A.5, PDF p21), and replaces the text between the GENERATED S-BOXES
markers of bitslice.c with one macro per S-box:

    SB0..SB7  the S-boxes, SI0..SI7  their inverses,

each taking four uint32_t lvalues x0..x3 (x0 = bit 0 of every nibble) and
replacing them by the outputs; and the whole header ../sbox_vec.h with the
same circuits as type-generic macros VSB0..VSB7, VSI0..VSI7 (temporaries of
__typeof__(x0)), for the SIMD strategies (sse2.c, avx2.c, avx512.c, vec.c),
whose words are vectors of 32-bit lanes (one block per lane).

    python3 emit_sboxes.py [circuits.txt]
    python3 emit_sboxes.py --check [circuits.txt]
        (writes nothing: compares the macros it would write with bitslice.c
        and sbox_vec.h, exit 1 naming each macro that differs, 0 when they
        are equal)
    python3 emit_sboxes.py --merge run1.txt run2.txt ... > circuits.txt
        (keeps, per S-box, the cheapest circuit of several search runs made
        with the same cost mode: lowest cost, then fewest gates, then NOTs)
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "..", "bitslice.c")
VEC_TARGET = os.path.join(HERE, "..", "sbox_vec.h")
BEGIN = "/* BEGIN GENERATED S-BOXES (gen/emit_sboxes.py) */"
END = "/* END GENERATED S-BOXES */"

# Serpent AES submission, Appendix A.5 (PDF p21).
SBOXES = {
    "SB0": [3, 8, 15, 1, 10, 6, 5, 11, 14, 13, 4, 2, 7, 0, 9, 12],
    "SB1": [15, 12, 2, 7, 9, 0, 5, 10, 1, 11, 14, 8, 6, 13, 3, 4],
    "SB2": [8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2],
    "SB3": [0, 15, 11, 8, 12, 9, 6, 3, 13, 1, 2, 4, 10, 7, 5, 14],
    "SB4": [1, 15, 8, 3, 12, 0, 11, 6, 2, 5, 4, 10, 9, 14, 7, 13],
    "SB5": [15, 5, 2, 11, 4, 10, 9, 12, 0, 3, 14, 8, 13, 6, 7, 1],
    "SB6": [7, 2, 12, 5, 8, 4, 6, 11, 14, 9, 1, 15, 13, 3, 10, 0],
    "SB7": [1, 13, 15, 0, 14, 8, 2, 11, 7, 4, 12, 10, 9, 3, 5, 6],
    "SI0": [13, 3, 11, 0, 10, 6, 5, 12, 1, 14, 4, 7, 15, 9, 8, 2],
    "SI1": [5, 8, 2, 14, 15, 6, 12, 3, 11, 4, 7, 9, 1, 13, 10, 0],
    "SI2": [12, 9, 15, 4, 11, 14, 1, 2, 0, 3, 6, 13, 5, 8, 10, 7],
    "SI3": [0, 9, 10, 7, 11, 14, 6, 13, 3, 5, 12, 2, 4, 8, 15, 1],
    "SI4": [5, 0, 8, 3, 10, 9, 7, 14, 2, 12, 11, 6, 4, 15, 13, 1],
    "SI5": [8, 15, 2, 9, 4, 1, 13, 14, 11, 6, 5, 3, 7, 12, 10, 0],
    "SI6": [15, 10, 1, 13, 5, 3, 6, 0, 4, 9, 14, 7, 2, 12, 8, 11],
    "SI7": [3, 0, 6, 13, 9, 14, 15, 8, 5, 12, 11, 7, 10, 1, 4, 2],
}
OPS = {"and": "&", "or": "|", "xor": "^"}


def parse(path):
    circuits, cur = {}, None
    lines = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(S[BI][0-7]) ", line)
            if m:
                cur = circuits[m.group(1)] = {"gates": [], "out": None, "text": []}
                cur["text"].append(line)
                continue
            cur["text"].append("  " + line)
            if line.startswith("out "):
                cur["out"] = [int(x) for x in line.split()[1:]]
                continue
            m = re.match(r"^(\d+) = (and|or|xor|not) (\d+)(?: (\d+))?$", line)
            if not m:
                sys.exit(f"{path}: cannot parse {line!r}")
            n, op, a, b = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
            assert n == 4 + len(cur["gates"]), line
            cur["gates"].append((op, a, int(b) if b is not None else a))
    return circuits


def merge(paths):
    best = {}
    for p in paths:
        for name, c in parse(p).items():
            if evaluate(c) != SBOXES[name]:
                sys.exit(f"{p}: circuit {name} does not compute the S-box")
            # sbox_cgp's own cost when the runs give it (all runs merged
            # together must use the same cost mode), else the gate count
            m = re.search(r"cost=(\d+)", c["text"][0])
            nots = sum(1 for g in c["gates"] if g[0] == "not")
            key = (int(m.group(1)) if m else len(c["gates"]), len(c["gates"]), nots)
            if name not in best or key < best[name][0]:
                best[name] = (key, c)
    for name in SBOXES:
        if name in best:
            print("\n".join(best[name][1]["text"]))


def evaluate(c):
    vals = [sum(((t >> k) & 1) << t for t in range(16)) for k in range(4)]
    for op, a, b in c["gates"]:
        x, y = vals[a], vals[b]
        vals.append({"and": x & y, "or": x | y, "xor": x ^ y, "not": ~x & 0xFFFF}[op])
    return [sum(((vals[c["out"][k]] >> t) & 1) << k for k in range(4)) for t in range(16)]


def macro(name, c, vec=False):
    def nm(n):
        return f"x{n}" if n < 4 else f"{name.lower()}_{n}"

    nots = sum(1 for g in c["gates"] if g[0] == "not")
    mname, ctype = (f"V{name}", "__typeof__(x0)") if vec else (name, "uint32_t")
    lines = [f"/* {mname}: {len(c['gates'])} gates ({nots} NOT) */",
             f"#define {mname}(x0, x1, x2, x3) \\", "    do { \\"]
    for i, (op, a, b) in enumerate(c["gates"]):
        expr = f"~{nm(a)}" if op == "not" else f"{nm(a)} {OPS[op]} {nm(b)}"
        lines.append(f"        const {ctype} {nm(4 + i)} = {expr}; \\")
    lines.append("        " + " ".join(f"x{k} = {nm(c['out'][k])};" for k in range(4)) + " \\")
    lines.append("    } while (0)")
    return "\n".join(lines)


def generated(path):
    """The whole generated block (BEGIN to END lines included) from the circuits file, every circuit checked
    against its S-box table first; and the macros by name."""
    circuits = parse(path)
    head = [BEGIN,
            "/* Bitsliced S-boxes: circuits found by gen/sbox_cgp.c (listed in",
            " * gen/circuits.txt), checked against the S-box tables of the spec (Appendix",
            " * A.5, PDF p21) by gen/emit_sboxes.py, which wrote these macros.  Each maps",
            " * the words x0..x3 (x0 = bit 0 of every nibble) to the S-box outputs. */"]
    macros, vmacros, gates = {}, {}, 0
    for name, table in SBOXES.items():
        c = circuits.get(name)
        if c is None:
            sys.exit(f"{path}: no circuit for {name}")
        if evaluate(c) != table:
            sys.exit(f"{path}: circuit {name} does not compute the S-box")
        # outputs must be gates, so the assignments above never read an
        # input that was already overwritten
        if any(o < 4 for o in c["out"]):
            sys.exit(f"{name}: an output is an input word; not supported")
        macros[name] = macro(name, c)
        vmacros["V" + name] = macro(name, c, vec=True)
        gates += len(c["gates"])
    text = "\n".join(head) + "\n\n" + "\n\n".join(macros.values()) + "\n" + END
    return text, macros, gates, vec_header(vmacros), vmacros


def vec_header(vmacros):
    """The whole text of sbox_vec.h: the circuits as type-generic macros for the SIMD strategies."""
    head = ["/* GENERATED by gen/emit_sboxes.py from gen/circuits.txt; do not edit (run",
            " * python3 gen/emit_sboxes.py).  The bitsliced S-boxes of bitslice.c as",
            " * type-generic macros VSB0..VSB7, VSI0..VSI7 for the SIMD strategies: the",
            " * temporaries take the type of x0, so the words may be uint32_t or vectors",
            " * of 32-bit lanes (GCC/Clang vector extensions, or __m128i/__m256i/__m512i,",
            " * on which both compilers allow the operators & | ^ ~).  Each maps the words",
            " * x0..x3 (x0 = bit 0 of every nibble) to the S-box outputs. */",
            "#ifndef SERPENT_SBOX_VEC_H", "#define SERPENT_SBOX_VEC_H"]
    return "\n".join(head) + "\n\n" + "\n\n".join(vmacros.values()) + "\n\n#endif\n"


def block_of(src):
    """Start and end offsets of the generated block (marker lines included) in bitslice.c's text."""
    if src.count(BEGIN) != 1 or src.count(END) != 1 or src.index(END) < src.index(BEGIN):
        sys.exit(f"{TARGET}: needs exactly one block between the lines '{BEGIN}' and '{END}'")
    return src.index(BEGIN), src.index(END) + len(END)


def check(path):
    """Exit 1 naming every macro of bitslice.c that is not what the circuits file gives."""
    text, macros, _, vtext, vmacros = generated(path)
    with open(TARGET, encoding="utf-8") as fh:
        src = fh.read()
    a, b = block_of(src)
    try:
        with open(VEC_TARGET, encoding="utf-8") as fh:
            vsrc = fh.read()
    except FileNotFoundError:
        vsrc = ""
    if src[a:b] == text and vsrc == vtext:
        print("serpent: generated S-boxes current in bitslice.c and sbox_vec.h")
        return 0
    for fname, current, full, ms in (("bitslice.c", src[a:b], text, macros), ("sbox_vec.h", vsrc, vtext, vmacros)):
        if current == full:
            continue
        differ = [name for name, m in ms.items() if m not in current] or ["the text around the macros"]
        for name in differ:
            print(f"serpent/{fname}: S-box macro {name} differs from gen/emit_sboxes.py's", file=sys.stderr)
    print("serpent: run python3 gen/emit_sboxes.py to rewrite them (after finding out which side is right)",
          file=sys.stderr)
    return 1


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--merge":
        merge(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "circuits.txt")))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "circuits.txt")
    text, _, total, vtext, _ = generated(path)
    with open(TARGET, encoding="utf-8") as fh:
        src = fh.read()
    a, b = block_of(src)
    src = src[:a] + text + src[b:]
    with open(TARGET, "w", encoding="utf-8") as fh:
        fh.write(src)
    with open(VEC_TARGET, "w", encoding="utf-8") as fh:
        fh.write(vtext)
    print(f"wrote 16 S-box macros ({total} gates in all) into {TARGET} and 16 type-generic ones into {VEC_TARGET}")


if __name__ == "__main__":
    main()
