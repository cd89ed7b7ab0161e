#!/usr/bin/env python3
"""Generate the DES tables of des_core.c from the FIPS 46-3 tables, and check
the bit tricks des_core uses against a plain table-driven DES.

    python3 gen_tables.py [--check | --print]   # the generated block of des_core.c (../gentables.py)

The tables below are typed from FIPS PUB 46-3 (shared/specs/des-fips46-3.pdf;
page numbers are PDF pages): IP p14, E p17, P p19 (repeated p22), S1..S8
Appendix 1 p21-p22, PC-1 p23, shift schedule and PC-2 p25.  Bits are numbered
1..n from the left (the most significant bit), as in the standard.

Representation used by des_core (everything below is checked here):
  * a 32-bit half H (bit 1 = MSB) is kept rotated left by one bit, H' = rotl(H, 1).
    Then the eight 6-bit groups of E(H) are contiguous fields:
    S2,S4,S6,S8 = bits 29..24, 21..16, 13..8, 5..0 of H',
    S1,S3,S5,S7 = the same fields of rotr(H', 4).
  * round key n is two words: ko (the 6-bit key groups of S1,S3,S5,S7 in the
    low 6 bits of bytes 3,2,1,0) and ke (S2,S4,S6,S8 likewise).
  * SP[i][b] = rotl(P(S_{i+1}(b) in its output nibble), 1): S-box and P merged,
    already in the rotated representation.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gentables as gt  # noqa: E402

IP = [58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4,
      62, 54, 46, 38, 30, 22, 14, 6, 64, 56, 48, 40, 32, 24, 16, 8,
      57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3,
      61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7]
E = [32, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9, 8, 9, 10, 11, 12, 13,
     12, 13, 14, 15, 16, 17, 16, 17, 18, 19, 20, 21, 20, 21, 22, 23, 24, 25,
     24, 25, 26, 27, 28, 29, 28, 29, 30, 31, 32, 1]
P = [16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
     2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25]
S = [
    [[14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7],
     [0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8],
     [4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0],
     [15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13]],
    [[15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10],
     [3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5],
     [0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15],
     [13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9]],
    [[10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8],
     [13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1],
     [13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7],
     [1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12]],
    [[7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15],
     [13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9],
     [10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4],
     [3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14]],
    [[2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9],
     [14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6],
     [4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14],
     [11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3]],
    [[12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11],
     [10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8],
     [9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6],
     [4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13]],
    [[4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1],
     [13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6],
     [1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2],
     [6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12]],
    [[13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7],
     [1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2],
     [7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8],
     [2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11]],
]
PC1 = [57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18,
       10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
       63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22,
       14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4]
SHIFTS = [1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1]
PC2 = [14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10,
       23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
       41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48,
       44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32]

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


def permute(x, table, nin):
    """Bit i of the result (1 = MSB of len(table) bits) is bit table[i] of x (nin bits)."""
    out = 0
    for src in table:
        out = (out << 1) | ((x >> (nin - src)) & 1)
    return out


def rotl32(x, n):
    n %= 32
    return ((x << n) | (x >> (32 - n))) & M32 if n else x


def rotr32(x, n):
    return rotl32(x, 32 - n % 32)


def sbox(i, b):
    """S_{i+1} of a 6-bit block b: row from the outer bits, column from the middle four."""
    return S[i][((b >> 4) & 2) | (b & 1)][(b >> 1) & 15]


# ---- plain DES, exactly as the standard reads ------------------------------------

def subkeys(key):
    cd = permute(key, PC1, 64)
    c, d = cd >> 28, cd & 0xFFFFFFF
    out = []
    for s in SHIFTS:
        c = ((c << s) | (c >> (28 - s))) & 0xFFFFFFF
        d = ((d << s) | (d >> (28 - s))) & 0xFFFFFFF
        out.append(permute((c << 28) | d, PC2, 56))
    return out


def f(r, k):
    x = permute(r, E, 32) ^ k
    s = 0
    for i in range(8):
        s = (s << 4) | sbox(i, (x >> (42 - 6 * i)) & 63)
    return permute(s, P, 32)


def des_plain(block, key, decrypt=False):
    ks = subkeys(key)
    if decrypt:
        ks = ks[::-1]
    x = permute(block, IP, 64)
    l, r = x >> 32, x & M32
    for k in ks:
        l, r = r, l ^ f(r, k)
    pre = (r << 32) | l
    ipinv = [IP.index(i) + 1 for i in range(1, 65)]
    return permute(pre, ipinv, 64)


# ---- the representation of des_core ----------------------------------------------

def sp_table(i):
    """SP[i][b]: S_{i+1}(b) placed in output nibble i, then P, then rotl 1."""
    return [rotl32(permute(sbox(i, b) << (28 - 4 * i), P, 32), 1) for b in range(64)]


SP = [sp_table(i) for i in range(8)]


def split_key(k48):
    """48-bit round key -> (ko, ke) words as described in the module docstring."""
    g = [(k48 >> (42 - 6 * i)) & 63 for i in range(8)]  # g[0] = S1 group
    ko = (g[0] << 24) | (g[2] << 16) | (g[4] << 8) | g[6]
    ke = (g[1] << 24) | (g[3] << 16) | (g[5] << 8) | g[7]
    return ko, ke


def f_fast(rr, ko, ke):
    """f in the rotated representation: rr = rotl(R,1); returns rotl(f(R,K),1)."""
    t = rotr32(rr, 4) ^ ko
    u = rr ^ ke
    return (SP[0][(t >> 24) & 63] ^ SP[2][(t >> 16) & 63] ^ SP[4][(t >> 8) & 63] ^ SP[6][t & 63] ^
            SP[1][(u >> 24) & 63] ^ SP[3][(u >> 16) & 63] ^ SP[5][(u >> 8) & 63] ^ SP[7][u & 63])


# ---- the 64-bit expanded representation of des_sp64.h (strategy sp64) ------------
# A rotated half h' is kept as the 64-bit word X(h') = (rotr(h',4) << 32 | h') & 0x3f..3f: byte j holds the
# 6-bit group of E(h) of S-box SP64_ORDER[j]+1 in its low six bits (X is E itself, spread over bytes).  X is
# linear, so X(l' ^ f') = X(l') ^ X(f'): with tables that return X(SP) a round needs no rotation, no mask and
# no expansion -- one XOR with the round key (ko << 32 | ke) and eight byte-indexed loads.

M6 = 0x3F3F3F3F3F3F3F3F
SP64_ORDER = [7, 5, 3, 1, 6, 4, 2, 0]  # byte j (0 = least significant) of X -> S-box index of SP


def expand64(h):
    return ((rotr32(h, 4) << 32) | h) & M6


def compress64(x):
    return (x & 0x3F3F3F3F) | (rotl32((x >> 32) & M32, 4) & 0xC0C0C0C0)


SP64 = [[expand64(v) for v in SP[SP64_ORDER[j]]] for j in range(8)]


def f64(x, k64):
    """f with the eight entries combined by | and + as well as ^ (des_sp64.h mixes the three; they agree because
    the entries have disjoint bits, checked in check())."""
    t = x ^ k64
    v = [SP64[j][(t >> (8 * j)) & 0xFF] for j in range(8)]
    return (((v[0] | v[1]) + (v[2] | v[3])) | ((v[4] | v[5]) + (v[6] | v[7]))) & M64


def des_sp64(block, key):
    l, r = ip64_load(block)
    for ko, ke in subkeys_fast(key):
        l, r = r, l ^ f64(r, (ko << 32) | ke)
    l, r = fp_swaps(compress64(r), compress64(l))
    return (l << 32) | r


# IP of des_sp64.h (cl_des64_load), by multiplication, with C's 64-bit wrap-around.
# The block as C loads it, little-endian: byte k (the k-th of the 8 bytes, FIPS bits 8k+1..8k+8) in bits 8k..8k+7.
def bytes_le(block):
    return int.from_bytes(block.to_bytes(8, "big"), "little")


def column64(x, p):
    """cl_des64_column: bit p of the eight bytes in the product's top byte (bit 56 + k = byte k's bit)."""
    return (((x >> p) & 0x0101010101010101) * 0x0102040810204080) & M64


def expanded_half64(c3, c2, c1, c0):
    """cl_des64_expanded_half: X(rotl(H, 1)) put together from the columns of H's bytes 3..0."""
    m = 0x3F3F3F3F
    lo = ((c3 >> 31) & 0xFE000000 & m) | ((c2 >> 39) & 0x01FE0000 & m) | ((c1 >> 47) & 0x0001FE00 & m) | \
        ((c0 >> 55) & 0x000001FE & m) | (c3 >> 63)
    hi = ((c3 >> 35) & 0x1FE00000 & m) | ((c2 >> 43) & 0x001FE000 & m) | ((c1 >> 51) & 0x00001FE0 & m) | \
        ((c0 >> 59) & M32) | ((c0 >> 27) & 0xE0000000 & m)
    return (hi << 32) | lo


def ip64_load(block):
    x = bytes_le(block)
    c = [column64(x, p) for p in range(8)]
    return expanded_half64(c[6], c[4], c[2], c[0]), expanded_half64(c[7], c[5], c[3], c[1])


# The initial permutation as a sequence of "delta swaps" between the two halves
# (exchange the bits of l selected by mask<<s with the bits of r selected by mask).
# IP sends row-major bit (byte j, bit i) of the block to a column-major place;
# the swaps below are the usual 8x8 bit-matrix transpose by blocks of 4, 2, 1,
# ending in the rotated representation.  des_core.h has the same steps in C.
IP_STEPS = [  # (which half is shifted, shift, mask)
    ("l", 4, 0x0F0F0F0F), ("l", 16, 0x0000FFFF), ("r", 2, 0x33333333), ("r", 8, 0x00FF00FF),
]


def ip_swaps(l, r):
    for who, s, m in IP_STEPS:
        if who == "l":
            t = ((l >> s) ^ r) & m
            r ^= t
            l ^= (t << s) & M32
        else:
            t = ((r >> s) ^ l) & m
            l ^= t
            r ^= (t << s) & M32
    r = rotl32(r, 1)
    t = (l ^ r) & 0xAAAAAAAA
    l ^= t
    r ^= t
    l = rotl32(l, 1)
    return l, r  # = (rotl(R0,1), rotl(L0,1)) -- see check_ip()


def fp_swaps(l, r):
    """Exact inverse of ip_swaps (steps reversed)."""
    l = rotr32(l, 1)
    t = (l ^ r) & 0xAAAAAAAA
    l ^= t
    r ^= t
    r = rotr32(r, 1)
    for who, s, m in reversed(IP_STEPS):
        if who == "l":
            t = ((l >> s) ^ r) & m
            r ^= t
            l ^= (t << s) & M32
        else:
            t = ((r >> s) ^ l) & m
            l ^= t
            r ^= (t << s) & M32
    return l, r


def transpose8(x):
    """8x8 bit matrix transpose of a 64-bit word: bit 8i+j -> bit 8j+i."""
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AA
    x ^= t ^ (t << 7)
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCC
    x ^= t ^ (t << 14)
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0
    x ^= t ^ (t << 28)
    return x & M64


def pc1_fast(key):
    """PC-1 as des_core does it: y = transpose8(key bytes loaded little-endian)."""
    kb = key.to_bytes(8, "big")
    y = transpose8(int.from_bytes(kb, "little"))
    c = y >> 36
    d = (((y >> 8) & 0xFF) << 20) | (((y >> 16) & 0xFF) << 12) | (((y >> 24) & 0xFF) << 4) | ((y >> 32) & 0xF)
    return c, d


def pc2_nibble_tables():
    """PC2C[j][v] / PC2D[j][v]: the round-key bits selected by nibble j (j = 0 is the
    first four bits) of C resp. D when it has value v, as a word
    C: S1 group | S3 group | S2 group | S4 group (bytes 3..0),
    D: S5 group | S7 group | S6 group | S8 group."""
    def word(k48, first):
        g = [(k48 >> (42 - 6 * i)) & 63 for i in range(8)]
        a, b, c, d = (0, 2, 1, 3) if first else (4, 6, 5, 7)
        return (g[a] << 24) | (g[b] << 16) | (g[c] << 8) | g[d]
    tc, td = [], []
    for j in range(7):
        tc.append([word(permute((v << (52 - 4 * j)), PC2, 56), True) for v in range(16)])
        td.append([word(permute((v << (24 - 4 * j)), PC2, 56), False) for v in range(16)])
    return tc, td


PC2C, PC2D = pc2_nibble_tables()


def subkeys_fast(key):
    c, d = pc1_fast(key)
    out = []
    for s in SHIFTS:
        c = ((c << s) | (c >> (28 - s))) & 0xFFFFFFF
        d = ((d << s) | (d >> (28 - s))) & 0xFFFFFFF
        cw = dw = 0
        for j in range(7):
            cw |= PC2C[j][(c >> (24 - 4 * j)) & 15]
            dw |= PC2D[j][(d >> (24 - 4 * j)) & 15]
        out.append(((cw & 0xFFFF0000) | (dw >> 16), ((cw << 16) & M32) | (dw & 0xFFFF)))
    return out


def des_fast(block, key):
    l, r = ip_swaps(block >> 32, block & M32)
    for ko, ke in subkeys_fast(key):
        l, r = r, l ^ f_fast(r, ko, ke)
    # (l, r) = rotl(L16, 1), rotl(R16, 1); the preoutput is R16 L16
    l, r = fp_swaps(r, l)
    return (l << 32) | r


def check():
    import random
    rnd = random.Random(46)
    # the PC-2 nibble tables of C (resp. D) pick 24 distinct round-key bits
    for tab in (PC2C, PC2D):
        acc = 0
        for j in range(7):
            assert acc & tab[j][15] == 0
            acc |= tab[j][15]
        assert bin(acc).count("1") == 24
    # the SP64 tables have pairwise disjoint bits (des_sp64.h combines them with |, + and ^ alike)
    support = [0] * 8
    for j in range(8):
        for v in SP64[j]:
            support[j] |= v
    for j in range(8):
        for i in range(j):
            assert support[i] & support[j] == 0, "SP64 tables overlap"
    # IP: ip_swaps(L_in, R_in) must be (rotl(IP-left,1), rotl(IP-right,1)) in some order
    for _ in range(2000):
        x = rnd.getrandbits(64)
        y = permute(x, IP, 64)
        l, r = ip_swaps(x >> 32, x & M32)
        assert (l, r) == (rotl32(y >> 32, 1), rotl32(y & M32, 1)), "IP swap sequence"
        assert fp_swaps(l, r) == (x >> 32, x & M32)
        # des_sp64.h's IP by multiplication: the same halves, expanded
        assert ip64_load(x) == (expand64(rotl32(y >> 32, 1)), expand64(rotl32(y & M32, 1))), "IP by multiplication"
    for _ in range(300):
        key = rnd.getrandbits(64)
        assert [split_key(k) for k in subkeys(key)] == subkeys_fast(key), "key schedule"
        r = rnd.getrandbits(32)
        k = subkeys(key)[0]
        assert f_fast(rotl32(r, 1), *split_key(k)) == rotl32(f(r, k), 1), "f"
        pt = rnd.getrandbits(64)
        ct = des_plain(pt, key)
        assert des_fast(pt, key) == ct
        assert des_sp64(pt, key) == ct, "sp64"
        h = rnd.getrandbits(32)
        assert compress64(expand64(h)) == h and expand64(h) & ~M6 == 0, "expand64/compress64"
        assert f64(expand64(rotl32(r, 1)), (split_key(k)[0] << 32) | split_key(k)[1]) == \
            expand64(rotl32(f(r, k), 1)), "f64"
        assert des_plain(ct, key, decrypt=True) == pt
    # one record of ../../../../shared/vectors/des.kat, as an anchor for the byte order
    assert des_plain(0x95F8A5E5DD31D900, 0x0101010101010101) == 0x8000000000000000


def generated_block():
    return "\n\n".join([
        gt.c_array_2d("const uint32_t cl_des_sp[8][64]", SP, "0x%08xu", 6, comment=(
            "SP[i][b] = rotl(P(S_{i+1}(b) in output nibble i), 1): FIPS 46-3 S-boxes (Appendix 1,\n"
            "PDF p21-p22) merged with P (p19), generated by gen_tables.py -- do not edit.")),
        gt.c_array_2d("static const uint32_t pc2_c[7][16]", PC2C, "0x%08xu", 4, comment=(
            "PC-2 (FIPS 46-3 PDF p25) as nibble tables: round-key bits chosen by nibble j of C\n"
            "(resp. D) = v; generated by gen_tables.py -- do not edit.")),
        gt.c_array_2d("static const uint32_t pc2_d[7][16]", PC2D, "0x%08xu", 4)])


def generate(args):
    check()
    return [gt.Block("des_core.c", generated_block()),
            gt.Block("des_sp64.c", gt.c_array_2d("const uint64_t cl_des_sp64[8][64]", SP64, "0x%016xull", 4, comment=(
                "SP64[j][b] = X(SP[i][b]), i = 7,5,3,1,6,4,2,0 for byte j: the SP boxes of des_core.c in the\n"
                "64-bit expanded form of des_sp64.h; generated by gen_tables.py -- do not edit.")))]


if __name__ == "__main__":
    gt.main(__file__, generate, __doc__)
