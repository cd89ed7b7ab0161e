#!/usr/bin/env python3
"""Generate the Rijndael constant tables used by ttable.c and small.c.

Everything is derived from the definitions in FIPS-197 (rijndael-fips197.pdf):
  * GF(2^8) with the reduction polynomial m(x) = x^8 + x^4 + x^3 + x + 1
    (Sec. 4.2, PDF p14-p15 / printed p10-p11);
  * S-box = multiplicative inverse ({00} -> {00}) followed by the affine map
    b'_i = b_i ^ b_(i+4) ^ b_(i+5) ^ b_(i+6) ^ b_(i+7) ^ c_i, c = {63}
    (Sec. 5.1.1, eq. 5.1, PDF p19 / printed p15);
  * inverse S-box = inverse permutation (Sec. 5.3.2, PDF p26);
  * MixColumns coefficients {02},{01},{01},{03} (Sec. 5.1.3, eq. 5.6, PDF p21-p22)
    and InvMixColumns {0e},{09},{0d},{0b} (Sec. 5.3.3, eq. 5.10, PDF p27).

Word convention of the C code: a state column is one 32-bit word loaded
big-endian, so row 0 is the most significant byte.  Then
  Te0[x] = (02*S[x], S[x], S[x], 03*S[x])          (bytes from MSB to LSB)
  Td0[x] = (0e*Si[x], 09*Si[x], 0d*Si[x], 0b*Si[x])
and Te_k / Td_k = Te0 / Td0 rotated right by 8k bits (input byte in row k).

Usage:
  python3 gen_tables.py            rewrite the generated blocks in ttable.c and small.c
  python3 gen_tables.py --check    exit 1 if the C files differ from what would be written
Optionally cross-checks S and Si against Fig. 7 and Fig. 14 of the FIPS-197 text
(../../../../shared/specs/rijndael-fips197.txt, or the path in $FIPS197_TXT) when present.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def gmul(a, b):
    """Multiplication in GF(2^8) modulo x^8+x^4+x^3+x+1 (FIPS-197 Sec. 4.2)."""
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        if a & 0x100:
            a ^= 0x11B
        b >>= 1
    return r


def ginv(a):
    """Multiplicative inverse; {00} maps to {00} (Sec. 5.1.1 step 1)."""
    if a == 0:
        return 0
    # a^254 = a^-1 in GF(2^8)*
    r, e, base = 1, 254, a
    while e:
        if e & 1:
            r = gmul(r, base)
        base = gmul(base, base)
        e >>= 1
    assert gmul(r, a) == 1
    return r


def affine(b):
    """Eq. 5.1: b'_i = b_i ^ b_(i+4)%8 ^ b_(i+5)%8 ^ b_(i+6)%8 ^ b_(i+7)%8 ^ c_i, c = 0x63."""
    c = 0x63
    out = 0
    for i in range(8):
        bit = ((b >> i) ^ (b >> ((i + 4) % 8)) ^ (b >> ((i + 5) % 8)) ^ (b >> ((i + 6) % 8))
               ^ (b >> ((i + 7) % 8)) ^ (c >> i)) & 1
        out |= bit << i
    return out


SBOX = [affine(ginv(x)) for x in range(256)]
INV_SBOX = [0] * 256
for _x, _y in enumerate(SBOX):
    INV_SBOX[_y] = _x
assert sorted(SBOX) == list(range(256))
# Values quoted in the FIPS-197 text: S[{53}] = {ed} (PDF p20), S[{00}] = {63}.
assert SBOX[0x53] == 0xED and SBOX[0x00] == 0x63


def word(b0, b1, b2, b3):
    return (b0 << 24) | (b1 << 16) | (b2 << 8) | b3


def rotr(w, n):
    return ((w >> n) | (w << (32 - n))) & 0xFFFFFFFF


TE0 = [word(gmul(s, 2), s, s, gmul(s, 3)) for s in SBOX]
TD0 = [word(gmul(s, 0x0E), gmul(s, 0x09), gmul(s, 0x0D), gmul(s, 0x0B)) for s in INV_SBOX]
TE = [[rotr(w, 8 * k) if k else w for w in TE0] for k in range(4)]
TD = [[rotr(w, 8 * k) if k else w for w in TD0] for k in range(4)]
# Last encryption round: Se_k[x] = S[x] alone in row k (shifted left 24 - 8k),
# so SubBytes + ShiftRows of a column is four lookups XORed, no shifts.
SE = [[s << (24 - 8 * k) for s in SBOX] for k in range(4)]


def cross_check_with_spec():
    path = os.environ.get("FIPS197_TXT") or os.path.join(
        HERE, "..", "..", "..", "..", "shared", "specs", "rijndael-fips197.txt")
    if not os.path.exists(path):
        print(f"note: {path} not found, skipping the cross-check against Fig. 7/14", file=sys.stderr)
        return
    text = open(path, encoding="utf-8", errors="replace").read()

    def figure(start_marker, end_marker):
        i = text.index(start_marker)
        j = text.index(end_marker, i)
        rows = {}
        for line in text[i:j].splitlines():
            m = re.match(r"^\s*([0-9a-f])\s+((?:[0-9a-f]{2}\s+){15}[0-9a-f]{2})\s*$", line)
            if m:
                rows[int(m.group(1), 16)] = [int(v, 16) for v in m.group(2).split()]
        assert sorted(rows) == list(range(16)), f"could not parse {start_marker!r}"
        return [rows[x >> 4][x & 15] for x in range(256)]

    fig7 = figure("The S-box used in the SubBytes()", "Figure 7.")
    fig14 = figure("The inverse S-box used in the InvSubBytes()", "Figure 14.")
    assert fig7 == SBOX, "generated S-box differs from FIPS-197 Fig. 7"
    assert fig14 == INV_SBOX, "generated inverse S-box differs from FIPS-197 Fig. 14"
    print("S-box and inverse S-box equal FIPS-197 Fig. 7 and Fig. 14", file=sys.stderr)


def c_bytes(name, vals, comment):
    lines = [f"/* {comment} */", f"static const uint8_t {name}[256] = {{"]
    for i in range(0, 256, 16):
        lines.append("    " + ", ".join(f"0x{v:02x}" for v in vals[i:i + 16]) + ",")
    lines.append("};")
    return "\n".join(lines)


def c_words(name, vals, comment):
    lines = [f"/* {comment} */", f"static const uint32_t {name}[256] = {{"]
    for i in range(0, 256, 6):
        lines.append("    " + ", ".join(f"0x{v:08x}u" for v in vals[i:i + 6]) + ",")
    lines.append("};")
    return "\n".join(lines)


def c_words4(name, tables, comments):
    """Four 256-word tables as one [4][256] array: one base address for all
    four (frees registers in the unrolled rounds), sub-table k = name[k]."""
    lines = [f"static const uint32_t {name}[4][256] = {{"]
    for k in range(4):
        lines.append(f"    /* [{k}]: {comments[k]} */")
        lines.append("    {")
        for i in range(0, 256, 6):
            lines.append("        " + ", ".join(f"0x{v:08x}u" for v in tables[k][i:i + 6]) + ",")
        lines.append("    },")
    lines.append("};")
    return "\n".join(lines)


HEADER = ("/* Generated by gen_tables.py from the S-box definition of FIPS-197 Sec. 5.1.1\n"
          " * (GF(2^8) inverse + affine map, eq. 5.1); do not edit by hand. */")

S_DOC = "S-box, FIPS-197 Fig. 7 (PDF p20)"
SI_DOC = "inverse S-box, FIPS-197 Fig. 14 (PDF p26)"


def block_ttable():
    parts = [HEADER, c_bytes("rj_sbox", SBOX, S_DOC), c_bytes("rj_inv_sbox", INV_SBOX, SI_DOC)]
    parts.append(c_words4("rj_te", TE, [
        f"Te{k}[x]: MixColumns column of S[x] entering in row {k}"
        + (" = (02*S, S, S, 03*S) from MSB" if k == 0 else f" = Te0 rotated right {8 * k}") for k in range(4)]))
    parts.append(c_words4("rj_se", SE, [
        f"Se{k}[x]: S[x] alone in row {k} (last round), = S[x] << {24 - 8 * k}" for k in range(4)]))
    parts.append(c_words4("rj_td", TD, [
        f"Td{k}[x]: InvMixColumns column of Si[x] entering in row {k}"
        + (" = (0e*Si, 09*Si, 0d*Si, 0b*Si) from MSB" if k == 0 else f" = Td0 rotated right {8 * k}") for k in range(4)]))
    return "\n\n".join(parts)


def block_small():
    return "\n\n".join([HEADER, c_bytes("rj_sbox", SBOX, S_DOC), c_bytes("rj_inv_sbox", INV_SBOX, SI_DOC)])


BEGIN = "/* BEGIN GENERATED TABLES (gen_tables.py) */"
END = "/* END GENERATED TABLES */"


def rewrite(fname, block, check):
    path = os.path.join(HERE, fname)
    src = open(path).read()
    i, j = src.index(BEGIN), src.index(END)
    new = src[:i + len(BEGIN)] + "\n" + block + "\n" + src[j:]
    if check:
        if new != src:
            print(f"{fname}: generated tables are out of date", file=sys.stderr)
            return False
        return True
    if new != src:
        open(path, "w").write(new)
        print(f"{fname}: tables written", file=sys.stderr)
    return True


def main():
    check = "--check" in sys.argv[1:]
    cross_check_with_spec()
    ok = rewrite("ttable.c", block_ttable(), check)
    ok = rewrite("small.c", block_small(), check) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
