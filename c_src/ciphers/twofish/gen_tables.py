#!/usr/bin/env python3
"""Generate the fixed Twofish tables used by twofish_core.c.

Everything is derived from the Twofish AES submission (Schneier, Kelsey,
Whiting, Wagner, Hall, Ferguson, 15 June 1998; shared/specs/twofish-aes-submission.pdf):
  * q0 and q1 are built from the four 4-bit S-boxes t0..t3 each, with the
    construction of Sec. 4.3.5 (PDF p10):
        a0, b0 = x/16, x mod 16
        a1 = a0 ^ b0;  b1 = a0 ^ ROR4(b0, 1) ^ 8a0 mod 16
        a2, b2 = t0[a1], t1[b1]
        a3 = a2 ^ b2;  b3 = a2 ^ ROR4(b2, 1) ^ 8a2 mod 16
        a4, b4 = t2[a3], t3[b3]
        y = 16 b4 + a4
  * the MDS matrix over GF(2^8) = GF(2)[x]/v(x), v(x) = x^8+x^6+x^5+x^3+1
    (0x169), Sec. 4.2 (PDF p7-p8);
  * the RS matrix over GF(2)[x]/w(x), w(x) = x^8+x^6+x^3+x^2+1 (0x14D),
    Sec. 4.3 (PDF p8) -- not tabulated: the C code computes the RS product
    with the generator-polynomial remainder loop of Sec. 7.12 (PDF p35),
    and this script checks that loop against the matrix.

Tables written (between the GENERATED markers of twofish_core.c):
  cl_twofish_q[2][256]     q0, q1
  cl_twofish_mq[4][256]    MDS column j times the LAST q of byte lane j
                           (lane 0: q1, lane 1: q0, lane 2: q1, lane 3: q0,
                           the final q-boxes of h(), Sec. 4.3.2 p10), as the
                           32-bit word Z = sum z_i 2^(8i).  This is the
                           "last q-box incorporated into the MDS table" of
                           the partial keying option (Sec. 5.1, PDF p12).

Usage:
  python3 gen_tables.py [--check | --print]     (see ../gentables.py)
"""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gentables as gt  # noqa: E402

# 4-bit S-boxes, Sec. 4.3.5 (PDF p10).
Q0_T = [
    [0x8, 0x1, 0x7, 0xD, 0x6, 0xF, 0x3, 0x2, 0x0, 0xB, 0x5, 0x9, 0xE, 0xC, 0xA, 0x4],
    [0xE, 0xC, 0xB, 0x8, 0x1, 0x2, 0x3, 0x5, 0xF, 0x4, 0xA, 0x6, 0x7, 0x0, 0x9, 0xD],
    [0xB, 0xA, 0x5, 0xE, 0x6, 0xD, 0x9, 0x0, 0xC, 0x8, 0xF, 0x3, 0x2, 0x4, 0x7, 0x1],
    [0xD, 0x7, 0xF, 0x4, 0x1, 0x2, 0x6, 0xE, 0x9, 0xB, 0x3, 0x0, 0x8, 0x5, 0xC, 0xA],
]
Q1_T = [
    [0x2, 0x8, 0xB, 0xD, 0xF, 0x7, 0x6, 0xE, 0x3, 0x1, 0x9, 0x4, 0x0, 0xA, 0xC, 0x5],
    [0x1, 0xE, 0x2, 0xB, 0x4, 0xC, 0x3, 0x7, 0x6, 0xD, 0xA, 0x5, 0xF, 0x9, 0x0, 0x8],
    [0x4, 0xC, 0x7, 0x5, 0x1, 0x6, 0x9, 0xA, 0x0, 0xE, 0xD, 0x8, 0x2, 0xB, 0x3, 0xF],
    [0xB, 0x9, 0x5, 0x1, 0xC, 0x3, 0xD, 0xE, 0x6, 0x4, 0x7, 0xF, 0x2, 0x0, 0x8, 0xA],
]

# MDS matrix, Sec. 4.2 (PDF p8); RS matrix, Sec. 4.3 (PDF p8).
MDS = [
    [0x01, 0xEF, 0x5B, 0x5B],
    [0x5B, 0xEF, 0xEF, 0x01],
    [0xEF, 0x5B, 0x01, 0xEF],
    [0xEF, 0x01, 0xEF, 0x5B],
]
RS = [
    [0x01, 0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E],
    [0xA4, 0x56, 0x82, 0xF3, 0x1E, 0xC6, 0x68, 0xE5],
    [0x02, 0xA1, 0xFC, 0xC1, 0x47, 0xAE, 0x3D, 0x19],
    [0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E, 0x03],
]
V_POLY = 0x169  # x^8+x^6+x^5+x^3+1
W_POLY = 0x14D  # x^8+x^6+x^3+x^2+1


def ror4(x, n):
    return ((x >> n) | (x << (4 - n))) & 0xF


def make_q(t):
    q = []
    for x in range(256):
        a0, b0 = x >> 4, x & 15
        a1 = a0 ^ b0
        b1 = a0 ^ ror4(b0, 1) ^ ((8 * a0) & 15)
        a2, b2 = t[0][a1], t[1][b1]
        a3 = a2 ^ b2
        b3 = a2 ^ ror4(b2, 1) ^ ((8 * a2) & 15)
        a4, b4 = t[2][a3], t[3][b3]
        q.append(16 * b4 + a4)
    assert sorted(q) == list(range(256)), "q is not a permutation"
    return q


Q0 = make_q(Q0_T)
Q1 = make_q(Q1_T)
LAST_Q = [Q1, Q0, Q1, Q0]  # final q of byte lanes 0..3 in h(), Sec. 4.3.2


def mds_col(j, y):
    return sum(gt.gf_mul(MDS[i][j], y, V_POLY) << (8 * i) for i in range(4))


MQ = [[mds_col(j, LAST_Q[j][x]) for x in range(256)] for j in range(4)]


def rs_matrix(m8):
    """S_i from 8 key bytes by the matrix of Sec. 4.3, as a 32-bit word."""
    word = 0
    for i in range(4):
        s = 0
        for j in range(8):
            s ^= gt.gf_mul(RS[i][j], m8[j], W_POLY)
        word |= s << (8 * i)
    return word


def rs_remainder(m8):
    """The same product by the generator-polynomial loop of Sec. 7.12 (p35).
    Column j of RS is x^(4+j) mod g(x) with s_i the coefficient of x^i, where
    g(x) = x^4 + (a + 1/a) x^3 + a x^2 + (a + 1/a) x + 1 over GF(2)[x]/w(x),
    a = x; so S = (sum_j m_j x^j) x^4 mod g(x), evaluated by Horner from m_7
    down.  This mirrors twofish_rs() in twofish_core.c."""
    r = 0
    for b in reversed(m8):
        t = ((r >> 24) ^ b) & 0xFF
        r = (r << 8) & 0xFFFFFFFF
        a = ((t << 1) ^ (W_POLY if t & 0x80 else 0)) & 0xFF      # t * a
        ainv = (t >> 1) ^ ((W_POLY >> 1) if t & 1 else 0)        # t / a
        u = a ^ ainv                                            # t * (a + 1/a)
        r ^= (u << 24) ^ (a << 16) ^ (u << 8) ^ t
    return r


def self_check():
    rng = random.Random(1998)
    for _ in range(2000):
        m8 = [rng.randrange(256) for _ in range(8)]
        assert rs_matrix(m8) == rs_remainder(m8), m8
    # Values printed in App. A.1 (PDF p66): 256-bit key 0123..EEFF gives the
    # S-box key words B89FF6F2 B255BC4B 45661061 8E4447F7.
    key = bytes.fromhex("0123456789ABCDEFFEDCBA987654321000112233445566778899AABBCCDDEEFF")
    s = [rs_remainder(list(key[8 * i:8 * i + 8])) for i in range(4)]
    assert s == [0xB89FF6F2, 0xB255BC4B, 0x45661061, 0x8E4447F7], [hex(v) for v in s]


def generate(args):
    self_check()
    return [gt.Block("twofish_core.c", "\n\n".join([
        gt.c_array_2d("const uint8_t cl_twofish_q[2][256]", [Q0, Q1], "0x%02x", 16,
                      comment="q0, q1: Sec. 4.3.5, built from the t-tables of PDF p10 by gen_tables.py."),
        gt.c_array_2d("const uint32_t cl_twofish_mq[4][256]", MQ, "0x%08x", 8, comment=(
            "MDS column j (Sec. 4.2, PDF p8, GF(2^8) mod 0x169) applied to the last q-box of\n"
            "byte lane j (q1, q0, q1, q0; Sec. 4.3.2 PDF p10), by gen_tables.py.")),
    ]))]


if __name__ == "__main__":
    gt.main(__file__, generate, __doc__)
