#!/usr/bin/env python3
"""Generate the LOKI97 S-box tables used by ref.c.

From L. Brown, J. Pieprzyk, "Introducing the new LOKI97 Block Cipher"
(June 12 1998), shared/specs/loki97-aes-submission.pdf, Sec. 2.4 (PDF p5):

    S1[x] = ((x xor 1FFF)^3 mod 2911) & FF   in GF(2^13)
    S2[x] = ((x xor 7FF)^3  mod AA7)  & FF   in GF(2^11)

(all constants hex, arithmetic on polynomials over GF(2)), and the
permutation P of Sec. 2.3 (PDF p5), which sends input bit 63-8a-b to output
bit 56+a-8b: bit j of the a-th S-box output byte of Sa (a = 0 for the S-box
fed by bits [63-56]) lands on output bit 8j+a.  So P(Sa) is the OR over a of
spread(Sa_a) << a with spread(v) = sum_j bit_j(v) << 8j.

Tables written between the GENERATED markers of ref.c:
  loki97_s1[8192], loki97_s2[2048]   S1, S2 (bytes)
  loki97_s2p[2048]                   spread(S2[x]): S2 with P already applied
                                     (64-bit, shifted left by a at the use)
  loki97_spread[256]                 spread(v), applied to S1 outputs

Why S2 is merged with P and S1 is not: a merged S1 would be a 64 KiB table,
larger than a typical L1 data cache; measured on the lab's x86-64 host the
all-merged variant lost ~25% in a dependent chain of encryptions and did not
gain in ECB, while merging only S2 (16 KiB) kept the best of both (README).

Usage:
  python3 gen_tables.py [--check | --print]     (see ../gentables.py)
"""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gentables as gt  # noqa: E402


def sbox(n, poly, mask):
    out = []
    for x in range(1 << n):
        y = x ^ mask
        out.append(gt.gf_mul(gt.gf_mul(y, y, poly), y, poly) & 0xFF)
    return out


S1 = sbox(13, 0x2911, 0x1FFF)
S2 = sbox(11, 0xAA7, 0x7FF)


def spread(v):
    return sum(((v >> j) & 1) << (8 * j) for j in range(8))


# P as listed in Sec. 2.3 (PDF p5): output position of input bits 63, 62, ..., 0.
P_LIST = [56, 48, 40, 32, 24, 16, 8, 0, 57, 49, 41, 33, 25, 17, 9, 1,
          58, 50, 42, 34, 26, 18, 10, 2, 59, 51, 43, 35, 27, 19, 11, 3,
          60, 52, 44, 36, 28, 20, 12, 4, 61, 53, 45, 37, 29, 21, 13, 5,
          62, 54, 46, 38, 30, 22, 14, 6, 63, 55, 47, 39, 31, 23, 15, 7]


def p_perm(x):
    return sum(((x >> (63 - k)) & 1) << P_LIST[k] for k in range(64))


def self_check():
    rng = random.Random(97)
    for _ in range(500):
        sa = [rng.randrange(256) for _ in range(8)]
        word = sum(sa[a] << (56 - 8 * a) for a in range(8))
        assert p_perm(word) == sum(spread(sa[a]) << a for a in range(8))


def generate(args):
    self_check()
    return [gt.Block("ref.c", "\n\n".join([
        gt.c_array("static const uint8_t loki97_s1[8192]", S1, "0x%02x", 16, comment=(
            "S1[x] = ((x ^ 0x1FFF)^3 mod 0x2911) & 0xFF in GF(2^13), Sec. 2.4 (PDF p5), by gen_tables.py.")),
        gt.c_array("static const uint8_t loki97_s2[2048]", S2, "0x%02x", 16, comment=(
            "S2[x] = ((x ^ 0x7FF)^3 mod 0xAA7) & 0xFF in GF(2^11), Sec. 2.4 (PDF p5), by gen_tables.py.")),
        gt.c_array("static const uint64_t loki97_s2p[2048]", [spread(v) for v in S2], "0x%016xu", 4, comment=(
            "spread(S2[x]): bit j of S2[x] at bit 8j, i.e. S2 followed by P (Sec. 2.3, PDF p5)\n"
            "for the S-box in Sa position 0; position a uses it shifted left by a.  By gen_tables.py.")),
        gt.c_array("static const uint64_t loki97_spread[256]", [spread(v) for v in range(256)], "0x%016xu", 4,
                   comment="spread(v): bit j of v at bit 8j (P applied to one S1 output byte).  By gen_tables.py."),
    ]))]


if __name__ == "__main__":
    gt.main(__file__, generate, __doc__)
