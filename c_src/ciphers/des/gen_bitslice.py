#!/usr/bin/env python3
"""Generate the bitsliced S-box circuits of des_bitslice_sboxes.h from the FIPS 46-3 S-boxes.

    python3 gen_bitslice.py           # rewrite des_bitslice_sboxes.h
    python3 gen_bitslice.py --check   # exit 1 if the header differs from what would be written

The S-box tables are the ones typed from FIPS PUB 46-3 in gen_tables.py (Appendix 1, PDF p21-p22).
Each S-box is six inputs b1..b6 (b1 the most significant; row = b1 b6, column = b2 b3 b4 b5) and
four outputs, most significant first.

Method (our own, simple and checkable): a shared multiplexer tree over truth tables.  A function
of the six inputs is a 64-bit truth table.  For a chosen order of the variables, every output is
split on the first variable into its two cofactors f0, f1 and built as

    f0 == f1      -> the cofactor (the variable is not needed)
    f0 == 0       -> f1 & x          f1 == 0       -> f0 & ~x  (ANDNOT)
    f1 == ~f0     -> f0 ^ x          f1 == all-1   -> f0 | x
    f0 == all-1   -> ~(x & ~f1)
    otherwise     -> f0 ^ ((f0 ^ f1) & x)

recursively on the next variable (f = f1 ^ ((f0 ^ f1) & ~x) instead when only f1 exists already);
every sub-function is memoised by its truth table, so the four outputs share all common
sub-circuits, and a complement already built costs one NOT.  Per S-box, all 720 variable orders
are tried for the four outputs together, and also the outputs one after the other (four output
sequences), each with the best of the 720 orders given the gates already built; the circuit with
the fewest gates is kept.  Every emitted
circuit is then evaluated on all 64 inputs and compared with the table before anything is written.

The header defines DES_BS_S1 .. DES_BS_S8 as macros over the word type BS_W of the including file:
    DES_BS_Sn(a1, a2, a3, a4, a5, a6, y1, y2, y3, y4)
with a1..a6 expressions of type BS_W (the S-box inputs b1..b6) and y1..y4 lvalues into which the
outputs are XORed (y ^= S-box output bit), which is what the Feistel round needs.
"""
import itertools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_tables import S  # noqa: E402  (FIPS 46-3 Appendix 1)

OUT = HERE / "des_bitslice_sboxes.h"
ALL = (1 << 64) - 1
# truth table of input variable i (0 = b1 .. 5 = b6) over v = b1 b2 b3 b4 b5 b6 (b1 the MSB of v)
VAR = [sum(1 << v for v in range(64) if (v >> (5 - i)) & 1) for i in range(6)]


def sbox_value(s, v):
    row = ((v >> 5) & 1) << 1 | (v & 1)
    col = (v >> 1) & 0xF
    return S[s][row][col]


def output_tables(s):
    return [sum(1 << v for v in range(64) if (sbox_value(s, v) >> (3 - m)) & 1) for m in range(4)]


def cofactors(f, i):
    x = VAR[i]
    sh = 1 << (5 - i)
    f0 = f & ~x & ALL
    f0 |= f0 << sh
    f1 = f & x
    f1 |= f1 >> sh
    return f0, f1


class Circuit:
    """Gates as (name, op, a, b); nodes memoised by truth table."""

    def __init__(self):
        self.gates = []
        self.memo = {VAR[i]: f"a{i + 1}" for i in range(6)}

    def copy(self):
        c = Circuit()
        c.gates = list(self.gates)
        c.memo = dict(self.memo)
        return c

    def gate(self, tt, op, a, b=None):
        name = f"t{len(self.gates)}"
        self.gates.append((name, op, a, b))
        self.memo[tt] = name
        return name

    def get(self, f, order):
        if f in self.memo:
            return self.memo[f]
        if (~f & ALL) in self.memo:
            return self.gate(f, "not", self.memo[~f & ALL])
        assert f not in (0, ALL), "constant outputs do not occur in the DES S-boxes"
        for k, i in enumerate(order):
            f0, f1 = cofactors(f, i)
            if f0 != f1:
                break
        x = self.memo[VAR[i]]
        rest = order[k + 1:]
        if f0 == 0:
            return self.gate(f, "and", self.get(f1, rest), x)
        if f1 == 0:
            return self.gate(f, "andnot", self.get(f0, rest), x)
        if f1 == ~f0 & ALL:
            return self.gate(f, "xor", self.get(f0, rest), x)
        if f1 == ALL:
            return self.gate(f, "or", self.get(f0, rest), x)
        if f0 == ALL:  # ~x | f1 = ~(x & ~f1)
            t = self.gate(VAR[i] & ~f1 & ALL, "andnot", x, self.get(f1, rest))
            return self.gate(f, "not", t)
        d = self.get(f0 ^ f1, rest)
        if f1 in self.memo and f0 not in self.memo:  # f = f1 ^ ((f0 ^ f1) & ~x)
            m = self.gate((f0 ^ f1) & ~VAR[i] & ALL, "andnot", d, x)
            return self.gate(f, "xor", self.memo[f1], m)
        g0 = self.get(f0, rest)
        m = self.gate((f0 ^ f1) & VAR[i], "and", d, x)
        return self.gate(f, "xor", g0, m)


def build(s):
    """The fewest gates over: one variable order for all four outputs (720 tries), and outputs built one after
    the other, each with its own best order given the gates already there (both output sequences tried)."""
    outs = output_tables(s)
    best = None
    for order in itertools.permutations(range(6)):
        c = Circuit()
        names = [c.get(f, list(order)) for f in outs]
        if best is None or len(c.gates) < len(best[0].gates):
            best = (c, names, [order] * 4)
    for seq in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]):
        c, names, orders = Circuit(), [None] * 4, [None] * 4
        for m in seq:
            pick = None
            for order in itertools.permutations(range(6)):
                t = c.copy()
                name = t.get(outs[m], list(order))
                if pick is None or len(t.gates) < len(pick[0].gates):
                    pick = (t, name, order)
            c, names[m], orders[m] = pick
        if len(c.gates) < len(best[0].gates):
            best = (c, names, orders)
    return best


def evaluate(c, names):
    """Evaluate the gate list bit-parallel on all 64 inputs; return the four output tables."""
    env = {f"a{i + 1}": VAR[i] for i in range(6)}
    for name, op, a, b in c.gates:
        if op == "not":
            env[name] = ~env[a] & ALL
        elif op == "and":
            env[name] = env[a] & env[b]
        elif op == "andnot":
            env[name] = env[a] & ~env[b] & ALL
        elif op == "xor":
            env[name] = env[a] ^ env[b]
        elif op == "or":
            env[name] = env[a] | env[b]
    return [env[n] for n in names]


C_OP = {"and": "({a} & {b})", "andnot": "BS_ANDNOT({a}, {b})", "xor": "({a} ^ {b})",
        "or": "({a} | {b})", "not": "(~{a})"}


def emit():
    lines = [
        "/* des_bitslice_sboxes.h -- GENERATED by gen_bitslice.py from the FIPS 46-3 S-boxes; do not edit.",
        " * DES_BS_Sn(a1..a6, y1..y4): inputs b1..b6 (BS_W expressions), outputs XORed into y1..y4.",
        " * BS_ANDNOT(a, b) = a & ~b is defined by the including file (one instruction on SSE/AVX). */",
        "#ifndef DES_BITSLICE_SBOXES_H",
        "#define DES_BITSLICE_SBOXES_H",
        "",
    ]
    total = 0
    for s in range(8):
        c, names, orders = build(s)
        got = evaluate(c, names)
        if got != output_tables(s):
            sys.exit(f"gen_bitslice.py: S{s + 1}: the circuit does not match the FIPS 46-3 table")
        total += len(c.gates)
        lines.append(f"/* S{s + 1}: {len(c.gates)} gates, variable orders of outputs 1-4: "
                     + ", ".join(" ".join(f"b{i + 1}" for i in o) for o in orders) + " */")
        lines.append(f"#define DES_BS_S{s + 1}(A1, A2, A3, A4, A5, A6, Y1, Y2, Y3, Y4) \\")
        lines.append("    do { \\")
        lines.append("        const BS_W a1 = (A1), a2 = (A2), a3 = (A3), a4 = (A4), a5 = (A5), a6 = (A6); \\")
        for name, op, a, b in c.gates:
            lines.append(f"        const BS_W {name} = " + C_OP[op].format(a=a, b=b) + "; \\")
        for m, n in enumerate(names):
            lines.append(f"        (Y{m + 1}) ^= {n}; \\")
        lines.append("    } while (0)")
        lines.append("")
    lines.append(f"/* {total} gates in all, {total / 8:.1f} per S-box */")
    lines.append("#endif")
    return "\n".join(lines) + "\n", total


def main():
    text, total = emit()
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.name} differs from what gen_bitslice.py writes", file=sys.stderr)
            return 1
        print(f"{OUT.name} is up to date ({total} gates, every circuit checked on all 64 inputs)")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.name}: {total} gates, every circuit checked on all 64 inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
