#!/usr/bin/env python3
"""Tables, checks and a literal reference model for CRYPTON version 1.0.

Source: C.H. Lim, "Specification and Analysis of CRYPTON Version 1.0", Dec 22 1998
(shared/specs/crypton-v1.0-spec-lim1998.pdf).  PDF page numbers below.

  * The involution S-box S (Figure 5, p11): 4-bit P-boxes P0, P1, a linear involution on
    8 bits, then P0^-1 / P1^-1.  S0(x) = S(x) <<< 1, S1(x) = S(x) <<< 3, S2(x) = S(x <<< 7),
    S3(x) = S(x <<< 5) (8-bit rotations, Figure 6 p12).  Checked against Table 7 (p20-21)
    when the specification text is available (pass its path as --spec).
  * The 32-bit lookup tables SS0..SS3 of Section 4.1 (p16): gamma merged with pi.
  * The round-key constants of Table 6 (p19): Ce[r] ^ MC_i (encryption) and
    Cd[r] <<< (32 - 8i) ^ MC_i (decryption), computed from Sections 2.3.2-2.3.3 (p7-p9) and
    compared with the values printed in Table 6 (typed below).
  * A literal model of the cipher (gamma, pi, tau, sigma as defined on p3-p7, decryption
    round keys by equation (3) p6) used to check the fast decryption key schedule of
    Section 2.3.3 and to write model_selfcheck.kat (--kat FILE).

Writes the tables between the GENERATED TABLES markers of ref.c (see ../gentables.py):
    python3 gen_tables.py [--check | --print] [--spec SPEC.txt] [--kat model_selfcheck.kat]
"""
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gentables as gt  # noqa: E402

# Figure 5 (p11)
P0 = [15, 14, 10, 1, 11, 5, 8, 13, 9, 3, 2, 7, 0, 6, 4, 12]
P1 = [11, 10, 13, 7, 8, 14, 0, 5, 15, 6, 3, 4, 1, 9, 2, 12]
# Section 2.1.2 (p4): masking vectors; m0..m3 are their bytes
M = [0x3FCFF3FC, 0xFC3FCFF3, 0xF3FC3FCF, 0xCFF3FC3F]
m = [0xFC, 0xF3, 0xCF, 0x3F]
MASK = 0xFFFFFFFF

# Table 6 (p19), constant column, as printed
TABLE6_ENC = [
    0x09e35996, 0xfc16ac63, 0x17fd4788, 0xc02a905f,
    0x4d124400, 0xb8e7b1f5, 0x530c5a1e, 0x84db8dc9,
    0xb28170b2, 0x47748547, 0xac9f6eac, 0x7b48b97b,
    0xf630633c, 0x03c596c9, 0xe82e7d22, 0x3ff9aaf5,
    0x3ba76fae, 0xce529a5b, 0x25b971b0, 0xf26ea667,
    0x7fd61ad8, 0x8a23ef2d, 0x61c804c6, 0xb61fd311,
    0xa345054a, 0x56b0f0bf, 0xbd5b1b54, 0x6a8ccc83,
    0xe0f431f4, 0x1501c401, 0xfeea2fea, 0x293df83d,
    0x246b3c66, 0xd19ec993, 0x3a752278, 0xeda2f5af,
    0x699a2890, 0x9c6fdd65, 0x7784368e, 0xa053e159,
    0xad09db02, 0x58fc2ef7, 0xb317c51c, 0x64c012cb,
    0x92b8c78c, 0x674d3279, 0x8ca6d992, 0x5b710e45,
    0xd62ff23e, 0x23da07cb, 0xc831ec20, 0x1fe63bf7,
]
# Table 6 (p19), constant column, as printed
TABLE6_DEC = [
    0x0bd72bc2, 0x37fe22de, 0x35dc15c9, 0x1ee20bc2,
    0xfaa1efd5, 0x200f541a, 0xf1cbe4bf, 0x68261c33,
    0x6cf756b0, 0x459902a3, 0x48ae72e9, 0x3e9f79a5,
    0xe351ea13, 0xe616a41f, 0xf40dfd4f, 0x9823da2a,
    0x613b7d32, 0xc794ce88, 0x632c7f25, 0xf2b4fba8,
    0x34e12521, 0xd4c114d0, 0x3b3f2aff, 0x28ece8fd,
    0xe22fcca8, 0x5d17da39, 0xd2b6fc31, 0xe605612b,
    0x9d75b033, 0xc6688045, 0xae2d836b, 0xbc79fa54,
    0xf273ea36, 0xc307861f, 0xf428ec6d, 0xba23ff3b,
    0xaaedb769, 0x9c5f1842, 0xa977b4f3, 0x247ea063,
    0x43734180, 0x75b686b4, 0x5f9e5d6d, 0xba88498a,
    0x1b551a4f, 0xbaeea0ef, 0x0451054b, 0x9cd386d2,
    0xf00fa47e, 0x8b05fa51, 0xba60ee11, 0xc66db739,
]


def inv(p):
    return [p.index(i) for i in range(16)]


def s_involution(x):
    """Figure 5: (z7..z4) = P1(x7..x4), (z3..z0) = P0(x3..x0); linear involution; inverse P-boxes."""
    z = [(P0[x & 15] >> i) & 1 for i in range(4)] + [(P1[x >> 4] >> i) & 1 for i in range(4)]
    w = [0] * 8
    w[3] = z[7] ^ z[4] ^ z[2]
    w[2] = z[6] ^ z[0]
    w[1] = z[0] ^ z[3] ^ z[5]
    w[0] = z[1] ^ z[7]
    w[7] = z[3] ^ z[5]
    w[6] = z[2] ^ z[1] ^ z[7]
    w[5] = z[4] ^ z[2]
    w[4] = z[5] ^ z[6] ^ z[0]
    lo = sum(w[i] << i for i in range(4))
    hi = sum(w[4 + i] << i for i in range(4))
    return inv(P0)[lo] | (inv(P1)[hi] << 4)


def rol8(x, n):
    return ((x << n) | (x >> (8 - n))) & 0xFF


S = [s_involution(x) for x in range(256)]
assert all(S[S[x]] == x for x in range(256)), "S is not an involution"
SB = [
    [rol8(S[x], 1) for x in range(256)],
    [rol8(S[x], 3) for x in range(256)],
    [S[rol8(x, 7)] for x in range(256)],
    [S[rol8(x, 5)] for x in range(256)],
]


def check_table7(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.index("          0 1 2 3 4 5 6 7 8 9 a b c d e f")
    seg = text[start:text.index("Table 7: The CRYPTON S-boxes", start)]
    vals = []
    for line in seg.splitlines()[1:]:
        toks = [t for t in line.split() if re.fullmatch(r"[0-9a-f]{2}", t)]
        if len(toks) >= 16:
            vals += [int(t, 16) for t in toks[-16:]]
    assert len(vals) == 1024, len(vals)
    for k in range(4):
        assert vals[256 * k:256 * (k + 1)] == SB[k], "S%d differs from Table 7" % k


# ---- the cipher, literally (p3-p7) ----
def rotl(x, n):
    n %= 32
    return ((x << n) | (x >> (32 - n))) & MASK if n else x


def rotb(x, n):
    """X <<<b n: every byte rotated left by n bits."""
    return sum(rol8((x >> (8 * j)) & 0xFF, n) << (8 * j) for j in range(4))


def gamma(A, p):  # p = 0: gamma_o, p = 1: gamma_e (Figure 2)
    return [sum(SB[(i + j + 2 * p) % 4][(A[i] >> (8 * j)) & 0xFF] << (8 * j) for j in range(4))
            for i in range(4)]


def pi(A, p):  # pi_o: B[i] = xor_k A[k] & M[(i+k) mod 4]; pi_e: masks shifted by 2 (p4)
    out = []
    for i in range(4):
        w = 0
        for k in range(4):
            w ^= A[k] & M[(i + k + 2 * p) % 4]
        out.append(w)
    return out


def tau(A):
    return [sum(((A[j] >> (8 * i)) & 0xFF) << (8 * j) for j in range(4)) for i in range(4)]


def sigma(A, K):
    return [a ^ k for a, k in zip(A, K)]


def rho(A, K, p):
    return sigma(tau(pi(gamma(A, p), p)), K)


def phi(A, p):
    return tau(pi(tau(A), p))


MC = [0xACACACAC]
for _ in range(3):
    MC.append(rotb(MC[-1], 1))
CE = [0xA54FF53A]
for _ in range(12):
    CE.append((CE[-1] + 0x3C6EF372) & MASK)


def expanded_keys(key):
    """Section 2.3.1 (p7); key byte string index n = k_n, missing bytes are zero."""
    k = list(key) + [0] * (32 - len(key))
    U = [k[8 * i] | k[8 * i + 2] << 8 | k[8 * i + 4] << 16 | k[8 * i + 6] << 24 for i in range(4)]
    V = [k[8 * i + 1] | k[8 * i + 3] << 8 | k[8 * i + 5] << 16 | k[8 * i + 7] << 24 for i in range(4)]
    Up, Vp = rho(U, [0] * 4, 0), rho(V, [0] * 4, 1)
    T0 = Up[0] ^ Up[1] ^ Up[2] ^ Up[3]
    T1 = Vp[0] ^ Vp[1] ^ Vp[2] ^ Vp[3]
    return [u ^ T1 for u in Up] + [v ^ T0 for v in Vp]


def enc_round_keys(E):
    """Section 2.3.2 (p7-p8): 13 round keys of 4 words."""
    E = list(E)
    K = [0] * 52
    for i in range(4):
        K[i] = E[i] ^ CE[0] ^ MC[i]
        K[4 + i] = E[4 + i] ^ CE[1] ^ MC[i]
    for r in range(2, 13):
        if r % 2 == 0:
            E[3], E[2], E[1], E[0] = rotb(E[0], 6), rotb(E[3], 6), rotl(E[2], 16), rotl(E[1], 24)
            base = 0
        else:
            E[7], E[6], E[5], E[4] = rotl(E[6], 16), rotl(E[5], 8), rotb(E[4], 2), rotb(E[7], 2)
            base = 4
        for i in range(4):
            K[4 * r + i] = E[base + i] ^ CE[r] ^ MC[i]
    return [K[4 * r:4 * r + 4] for r in range(13)]


def dec_round_keys_eq3(Ke):
    """Equation (3) p6: Kd^(12-i) = phi_e(Ke^i) for even i, phi_o(Ke^i) for odd i."""
    return [phi(Ke[12 - r], 1 if (12 - r) % 2 == 0 else 0) for r in range(13)]


def phi_i(i, X):
    A = [0] * 4
    A[i] = X
    return phi(A, 0)[i]


def cd_constants():
    return [phi_i(2, CE[12 - i]) if i % 2 == 0 else phi_i(0, CE[12 - i]) for i in range(13)]


def dec_round_keys_fast(Ee):
    """Section 2.3.3 (p8-p9)."""
    E = [0] * 8
    E[3], E[2], E[1], E[0] = (rotb(phi_i(0, Ee[1]), 2), phi_i(1, Ee[0]),
                              rotb(phi_i(1, Ee[3]), 2), rotb(phi_i(2, Ee[2]), 4))
    E[7], E[6], E[5], E[4] = (rotb(phi_i(2, Ee[6]), 4), rotb(phi_i(0, Ee[5]), 4),
                              rotb(phi_i(1, Ee[4]), 6), rotb(phi_i(0, Ee[7]), 6))
    Cd = cd_constants()
    K = [0] * 52
    for i in range(4):
        K[i] = E[i] ^ rotl(Cd[0], 32 - 8 * i) ^ MC[i]
        K[4 + i] = E[4 + i] ^ rotl(Cd[1], 32 - 8 * i) ^ MC[i]
    for r in range(2, 13):
        if r % 2 == 0:
            E[3], E[2], E[1], E[0] = rotb(E[2], 2), rotl(E[1], 8), rotl(E[0], 16), rotb(E[3], 2)
            base = 0
        else:
            E[7], E[6], E[5], E[4] = rotb(E[4], 6), rotl(E[7], 24), rotl(E[6], 16), rotb(E[5], 6)
            base = 4
        for i in range(4):
            K[4 * r + i] = E[base + i] ^ rotl(Cd[r], 32 - 8 * i) ^ MC[i]
    return [K[4 * r:4 * r + 4] for r in range(13)]


def crypt(A, K):
    """Equations (1)/(2) p6: sigma_K0, rho_o/rho_e alternately, then phi_e."""
    A = sigma(A, K[0])
    for r in range(1, 13):
        A = rho(A, K[r], 0 if r % 2 else 1)
    return phi(A, 1)


def load(b):  # block byte 4i+j = a_ij (byte j of row A[i]); see README
    return [int.from_bytes(bytes(b[4 * i:4 * i + 4]), "little") for i in range(4)]


def store(A):
    return b"".join(a.to_bytes(4, "little") for a in A)


def encrypt(pt, key):
    return store(crypt(load(pt), enc_round_keys(expanded_keys(key))))


def decrypt(ct, key):
    return store(crypt(load(ct), dec_round_keys_eq3(enc_round_keys(expanded_keys(key)))))


def self_checks():
    flat = lambda K: [w for r in K for w in r]
    assert flat(enc_round_keys([0] * 8)) == TABLE6_ENC, "encryption constants differ from Table 6"
    assert flat(dec_round_keys_fast([0] * 8)) == TABLE6_DEC, "decryption constants differ from Table 6"
    assert flat(dec_round_keys_eq3(enc_round_keys([0] * 8))) == TABLE6_DEC
    rnd = random.Random(1998)
    for _ in range(200):
        Ee = [rnd.getrandbits(32) for _ in range(8)]
        assert dec_round_keys_fast(Ee) == dec_round_keys_eq3(enc_round_keys(Ee))
    for j in range(4):  # phi_i(X) = phi_0(X) <<< (32 - 8i) (shift property, p8)
        X = rnd.getrandbits(32)
        assert phi_i(j, X) == rotl(phi_i(0, X), 32 - 8 * j)
    for _ in range(50):
        key = bytes(rnd.getrandbits(8) for _ in range(rnd.choice([16, 24, 32])))
        pt = bytes(rnd.getrandbits(8) for _ in range(16))
        assert decrypt(encrypt(pt, key), key) == pt


def write_kat(path):
    rnd = random.Random(20240601)
    lines = [
        "# model_selfcheck.kat -- CRYPTON v1.0 SELF-GENERATED regression vectors (NOT an external source).",
        "# Produced by gen_tables.py --kat from its literal model of the v1.0 specification (Lim, Dec 1998):",
        "# gamma/pi/tau/sigma exactly as defined on p3-p6, key schedule p7-p8, decryption keys by eq. (3).",
        "# The specification prints no plaintext/ciphertext pair; what the model reproduces from the spec is",
        "# Table 7 (all four S-boxes) and every constant of Table 6.  Block/key byte order: byte 4i+j = a_ij,",
        "# key byte n = k_n (the v0.5 KAT convention; see README).  These records only show that ref.c agrees",
        "# with the independent literal model; they are not evidence from the designer.",
        "",
    ]
    for kl in (16, 24, 32):
        for n in range(4):
            key = bytes(16 * [0] + [0] * (kl - 16)) if n == 0 else bytes(rnd.getrandbits(8) for _ in range(kl))
            pt = bytes(16) if n == 0 else bytes(rnd.getrandbits(8) for _ in range(16))
            lines += ["KEY=" + key.hex(), "PT=" + pt.hex(), "CT=" + encrypt(pt, key).hex(), ""]
    open(path, "w").write("\n".join(lines))


def c_tables():
    order = {0: (3, 2, 1, 0), 1: (0, 3, 2, 1), 2: (1, 0, 3, 2), 3: (2, 1, 0, 3)}  # masks m_a..m_d, byte 3..0
    ss = []
    for k in range(4):
        a, b, c, d = order[k]
        ss.append([(s & m[a]) << 24 | (s & m[b]) << 16 | (s & m[c]) << 8 | (s & m[d]) for s in SB[k]])
    out = [
        gt.c_array_2d("static const uint32_t CR_SS[4][256]", ss, "0x%08x", 6, comment=(
            "generated by gen_tables.py -- SS_k[x] = (S_k[x] & m_a) << 24 | (S_k[x] & m_b) << 16 |\n"
            "(S_k[x] & m_c) << 8 | (S_k[x] & m_d), (a,b,c,d) = (3,2,1,0), (0,3,2,1), (1,0,3,2), (2,1,0,3)\n"
            "for k = 0..3 (spec Section 4.1, p16); S_k of Figures 5-6 (p11-12) = Table 7 (p20-21).")),
        gt.c_array_2d("static const uint8_t CR_S[4][256]", SB, "0x%02x", 16, comment=(
            "generated by gen_tables.py -- the S-boxes S0..S3 (Table 7, p20-21) for the last round")),
    ]
    for name, vals, what in (("CR_KC_ENC", TABLE6_ENC, "Ce[r] ^ MC_i"),
                             ("CR_KC_DEC", TABLE6_DEC, "Cd[r] <<< (32-8i) ^ MC_i")):
        out.append(gt.c_array("static const uint32_t %s[52]" % name, vals, "0x%08x", 4, comment=(
            "round-key constants %s, word 4r+i (Table 6, p19; recomputed by gen_tables.py)" % what)))
    return "\n\n".join(out)


def add_arguments(ap):
    ap.add_argument("--spec", help="crypton-v1.0-spec-lim1998.txt, to check Table 7")
    ap.add_argument("--kat", help="write the self-generated regression vectors here")


def generate(args):
    if args.spec:
        check_table7(args.spec)
    self_checks()
    if args.kat:
        write_kat(args.kat)
    return [gt.Block("ref.c", c_tables())]


if __name__ == "__main__":
    gt.main(__file__, generate, __doc__, add_arguments)
