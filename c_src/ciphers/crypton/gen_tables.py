#!/usr/bin/env python3
"""Tables, checks and a literal model of CRYPTON version 0.5 (the AES round-1 submission).

Everything here is written from the facts sheet shared/specs/crypton-v0.5-facts.md
("the sheet"; section numbers below are the sheet's):

  * S0 from the three 4-bit tables P0, P1, P2 by the 3-round nibble Feistel network (section 2),
    S1 = S0^-1.  Checked against the worked Feistel values and S0[00..0f] / S1[00..0f] typed
    below, and against the full printed S0 table parsed from the sheet when the sheet is found
    (../../../../shared/specs/crypton-v0.5-facts.md from this folder, or $CRYPTON_SHEET).
  * T_n[x] (n = 0..3), gamma merged with pi (and tau) for the ttable strategy:
    byte i of T_n[x] = S_(n mod 2)[x] & m_((i+n) mod 4), i.e. T_n[x] = (S_(n mod 2)[x] * 0x01010101) & M_n.
    Odd round:  out row j = T_j[a(0,j)] ^ T_(j+1)[a(1,j)] ^ T_(j+2)[a(2,j)] ^ T_(j+3)[a(3,j)] ^ K[j],
    even round: out row j = T_(j+1)[a(0,j)] ^ T_(j+2)[a(1,j)] ^ T_(j+3)[a(2,j)] ^ T_j[a(3,j)] ^ K[j]
    (indices mod 4), checked below against the literal gamma/pi/tau/sigma.
  * A literal model of the cipher: gamma, pi, tau, sigma, phi as defined in sections 2-4,
    rounds and encryption (section 5), key schedule (section 6, with the round-key table of
    step 2 typed in as printed), decryption keys by the rule of step 3 and direct inversion.
    It is checked against every worked value of section 7.

Usage:
  python3 gen_tables.py              run the checks, rewrite the generated blocks of ttable.c and small.c
  python3 gen_tables.py --check      run the checks; exit 1 unless the C files hold exactly these tables
  python3 gen_tables.py --kat FILE   also run the literal model over a .kat file (ECB, ITER, CBC-MCT records)
"""
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MASK32 = 0xFFFFFFFF

# ---- section 2: the three 4-bit tables (as printed) ----
P0 = [15, 9, 6, 8, 9, 9, 4, 12, 6, 2, 6, 10, 1, 3, 5, 15]
P1 = [10, 15, 4, 7, 5, 2, 14, 6, 9, 3, 12, 8, 13, 1, 11, 0]
P2 = [0, 4, 8, 4, 2, 15, 8, 13, 1, 1, 15, 7, 2, 11, 14, 15]


def feistel(x):
    """Section 2: L1 = L0 ^ P0[R0]; R2 = R0 ^ P1[L1]; L3 = L1 ^ P2[R2]; S0[x] = 16*L3 + R2."""
    l0, r0 = x >> 4, x & 15
    l1 = l0 ^ P0[r0]
    r2 = r0 ^ P1[l1]
    l3 = l1 ^ P2[r2]
    return 16 * l3 + r2


S0 = [feistel(x) for x in range(256)]
assert sorted(S0) == list(range(256)), "S0 is not a permutation"
S1 = [0] * 256
for _x in range(256):
    S1[S0[_x]] = _x
SBOX = (S0, S1)

# Section 2 / 7 check values, typed from the sheet
SHEET_S0_ROW0 = "f0 12 4c 7a 47 16 03 3a e6 9d 44 77 53 ca 7c 0f"
SHEET_S1_ROW0 = "6a d4 2b 06 d0 65 7f 96 d7 56 9a 4d 48 25 75 0f"
SHEET_FEISTEL = {0x00: 0xF0, 0x01: 0x12, 0x10: 0x9B}

# ---- section 3: masks ----
m = [0xFC, 0xF3, 0xCF, 0x3F]
M = [sum(m[(n + k) % 4] << (8 * k) for k in range(4)) for n in range(4)]
assert M == [0x3FCFF3FC, 0xFC3FCFF3, 0xF3FC3FCF, 0xCFF3FC3F], "masks differ from the sheet's table"
MI = [0xC0300C03, 0x03C0300C, 0x0C03C030, 0x300C03C0]  # complemented masks (Minier-Gilbert form)
N = [0xCFFCCFFC, 0x3FF33FF3, 0xFCCFFCCF, 0xF33FF33F]  # section 4 word formulas of phi

# ---- section 6: constants ----
P = [0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F]
Q = [0x9B05688C, 0x1F83D9AB, 0x5BE0CD19, 0xCBBB9D5D]
RC = [0x01010101 << t for t in range(6)]
# Step 2 table as printed: for Ke_r (from Ke_(r-2)), per word: ("rot", n) or ("rc", t)
KS_TABLE = {
    2: (("rot", 8), ("rc", 0), ("rot", 16), ("rc", 0)),
    3: (("rc", 0), ("rot", 16), ("rc", 0), ("rot", 24)),
    4: (("rc", 1), ("rot", 24), ("rc", 1), ("rot", 8)),
    5: (("rot", 8), ("rc", 1), ("rot", 16), ("rc", 1)),
    6: (("rot", 16), ("rc", 2), ("rot", 24), ("rc", 2)),
    7: (("rc", 2), ("rot", 24), ("rc", 2), ("rot", 8)),
    8: (("rc", 3), ("rot", 8), ("rc", 3), ("rot", 16)),
    9: (("rot", 16), ("rc", 3), ("rot", 24), ("rc", 3)),
    10: (("rot", 24), ("rc", 4), ("rot", 8), ("rc", 4)),
    11: (("rc", 4), ("rot", 8), ("rc", 4), ("rot", 16)),
    12: (("rc", 5), ("rot", 16), ("rc", 5), ("rot", 24)),
}


def ks_rule(r):
    """The 'Pattern' paragraph of step 2 as a rule (used by small.c): which words are rotated,
    by how much, and which constant the others get."""
    even_rot = r % 4 in (1, 2)  # Ke_2, Ke_5, Ke_6, Ke_9, Ke_10: words 0 and 2 rotated
    a, b = 8 * (((r - 2) % 3) + 1), 8 * (((r - 1) % 3) + 1)
    t = (r - 2) // 2
    rot_words = (0, 2) if even_rot else (1, 3)
    out = []
    for w in range(4):
        if w in rot_words:
            out.append(("rot", a if w == rot_words[0] else b))
        else:
            out.append(("rc", t))
    return tuple(out)


for _r in range(2, 13):
    assert ks_rule(_r) == KS_TABLE[_r], "pattern rule differs from the printed table at Ke_%d" % _r


# ---- the cipher, literally (sections 1-6) ----
def rotl(x, n):
    n %= 32
    return ((x << n) | (x >> (32 - n))) & MASK32 if n else x


def byte(x, j):
    return (x >> (8 * j)) & 0xFF


def gamma(A, e):
    """e = 0: gamma_o, a(i,j) -> S_((i+j) mod 2); e = 1: gamma_e, S_((i+j+1) mod 2)."""
    return [sum(SBOX[(i + j + e) % 2][byte(A[i], j)] << (8 * j) for j in range(4)) for i in range(4)]


def pi(A, e):
    """e = 0: pi_o, B[i] = xor_j A[j] & M_(i+j); e = 1: pi_e (v0.5), M_(i+j+1)."""
    out = []
    for i in range(4):
        w = 0
        for j in range(4):
            w ^= A[j] & M[(i + j + e) % 4]
        out.append(w)
    return out


def tau(A):
    return [sum(byte(A[j], i) << (8 * j) for j in range(4)) for i in range(4)]


def sigma(A, K):
    return [a ^ k for a, k in zip(A, K)]


def phi(A, e):
    return tau(pi(tau(A), e))


def phi_words(A, e):
    """Section 4 word formulas: phi(A)[i] = xor_s (A[i] <<< 8s) & N_((i+e-s) mod 4)."""
    return [_xor(rotl(A[i], 8 * s) & N[(i + e - s) % 4] for s in range(4)) for i in range(4)]


def _xor(it):
    v = 0
    for w in it:
        v ^= w
    return v


def rho(A, K, e):
    return sigma(tau(pi(gamma(A, e), e)), K)


def key_words(key):
    """Section 1: pad to 32 bytes with zeros, U[w] = little-endian word of bytes 4w..4w+3."""
    k = bytes(key) + bytes(32 - len(key))
    return [int.from_bytes(k[4 * w:4 * w + 4], "little") for w in range(8)]


def expanded_keys(key, trace=None):
    """Section 6 step 1."""
    U = key_words(key)
    a = pi([U[0], U[2], U[4], U[6]], 0)
    a = sigma(a, P)
    g_o = gamma(a, 0)
    Ve_lo = tau(g_o)
    b = pi([U[1], U[3], U[5], U[7]], 1)
    b = sigma(b, Q)
    g_e = gamma(b, 1)
    Ve_hi = tau(g_e)
    T0 = _xor(Ve_lo)
    T1 = _xor(Ve_hi)
    Ee = [v ^ T1 for v in Ve_lo] + [v ^ T0 for v in Ve_hi]
    if trace is not None:
        trace.update(U=U, sigmaP=a, gamma_o=g_o, Ve_lo=Ve_lo, sigmaQ=b, gamma_e=g_e, Ve_hi=Ve_hi,
                     T0=T0, T1=T1, Ee=Ee)
    return Ee


def enc_round_keys(key):
    """Section 6 step 2: 13 round keys Ke_0..Ke_12 (unfolded), 4 words each."""
    Ee = expanded_keys(key)
    K = [Ee[0:4], Ee[4:8]]
    for r in range(2, 13):
        prev = K[r - 2]
        row = []
        for w, (kind, v) in enumerate(KS_TABLE[r]):
            row.append(rotl(prev[w], v) if kind == "rot" else prev[w] ^ RC[v])
        K.append(row)
    return K


def dec_round_keys(Ke):
    """Section 6 step 3: Kd_r = phi_e(Ke_(12-r)) for even r, phi_o(Ke_(12-r)) for odd r."""
    return [phi(Ke[12 - r], 1 if r % 2 == 0 else 0) for r in range(13)]


def crypt(A, K, trace=None):
    """Section 5: sigma_K0, rounds 1..12 (odd/even), phi_e."""
    A = sigma(A, K[0])
    if trace is not None:
        trace.append(A)
    for r in range(1, 13):
        A = rho(A, K[r], 1 if r % 2 == 0 else 0)
        if trace is not None:
            trace.append(A)
    A = phi(A, 1)
    if trace is not None:
        trace.append(A)
    return A


def crypt_folded(A, K):
    """Section 5 folded form: round 12 = sigma_phi_e(Ke12) . tau . gamma_e (no pi, no phi)."""
    A = sigma(A, K[0])
    for r in range(1, 12):
        A = rho(A, K[r], 1 if r % 2 == 0 else 0)
    return sigma(tau(gamma(A, 1)), phi(K[12], 1))


def inverse(A, Ke):
    """Section 6 step 3, direct inversion."""
    A = phi(A, 1)
    for r in range(12, 0, -1):
        e = 1 if r % 2 == 0 else 0
        A = gamma(pi(tau(sigma(A, Ke[r])), e), 1 - e)
    return sigma(A, Ke[0])


def load(b):
    return [int.from_bytes(bytes(b[4 * i:4 * i + 4]), "little") for i in range(4)]


def store(A):
    return b"".join(a.to_bytes(4, "little") for a in A)


def encrypt(key, pt):
    return store(crypt(load(pt), enc_round_keys(key)))


def decrypt(key, ct):
    return store(crypt(load(ct), dec_round_keys(enc_round_keys(key))))


# ---- the ttable strategy's merged tables ----
TT = [[(SBOX[n % 2][x] * 0x01010101) & M[n] for x in range(256)] for n in range(4)]


def tt_round(A, K, e):
    return [TT[(j + e) % 4][byte(A[0], j)] ^ TT[(j + e + 1) % 4][byte(A[1], j)] ^
            TT[(j + e + 2) % 4][byte(A[2], j)] ^ TT[(j + e + 3) % 4][byte(A[3], j)] ^ K[j] for j in range(4)]


# ---- section 7: worked values, typed from the sheet ----
def _w(s):
    return [int(t, 16) for t in s.split()]


WORKED_ZERO = {
    "sigmaP": _w("bb67ae85 3c6ef372 a54ff53a 510e527f"),
    "gamma_o": _w("86dbebea 38478592 9767ff48 ec75c5c6"),
    "Ve_lo": _w("c64892ea c5ff85eb 756747db ec973886"),
    "sigmaQ": _w("9b05688c 1f83d9ab 5be0cd19 cbbb9d5d"),
    "gamma_e": _w("1c658250 74195441 8b4b4d83 33340923"),
    "Ve_hi": _w("23834150 094d5482 344b1965 338b741c"),
    "T0": 0x9A47685C,
    "T1": 0x2D0E78AB,
    "Ee": _w("eb46ea41 e8f1fd40 58693f70 c199402d b9c4290c 930a3cde ae0c7139 a9cc1c40"),
}
WORKED_ZERO_KE = [_w(s) for s in (
    "eb46ea41 e8f1fd40 58693f70 c199402d",
    "b9c4290c 930a3cde ae0c7139 a9cc1c40",
    "46ea41eb e9f0fc41 3f705869 c098412c",
    "b8c5280d 3cde930a af0d7038 40a9cc1c",
    "44e843e9 41e9f0fc 3d725a6b 98412cc0",
    "c5280db8 3edc9108 7038af0d 42abce1e",
    "43e944e8 45edf4f8 6b3d725a 9c4528c4",
    "c12c09bc 083edc91 743cab09 abce1e42",
    "4be14ce0 edf4f845 63357a52 28c49c45",
    "09bcc12c 0036d499 09743cab a3c6164a",
    "e04be14c fde4e855 357a5263 38d48c55",
    "19acd13c 36d49900 19642cbb 164aa3c6",
    "c06bc16c e855fde4 155a7243 5538d48c",
)]
WORKED_ZERO_PHI_KE12 = _w("e64fe54a d078414d 380f6d24 adf12841")
WORKED_ZERO_KD = {
    0: _w("e64fe54a d078414d 380f6d24 adf12841"),
    1: _w("45a0c578 634effa9 83c57ed2 bf5f3be2"),
    11: _w("6d50b5d0 f5a36944 d06bc796 31e8b555"),
    12: _w("cf60cc65 5458c56d 470e1225 3d54b8e4"),
}
WORKED_ZERO_STATES = {  # index into the crypt() trace: 0 = after sigma_Ke0, r = after round r, 13 = after phi_e
    1: _w("224be98a 7de5b915 5bcde530 0fd07bca"),
    2: _w("6b9ff714 af375e11 d84c88a2 6ba4d50c"),
    12: _w("72a43bbf 4456629d 893e97f5 5e3b9d29"),
    13: _w("39e562ec 81bc6bbb 6fc0601a c87ecbac"),
}
WORKED_ZERO_CT = "ec62e539bb6bbc811a60c06faccb7ec8"
WORKED_K2_KEY = "000102030405060708090a0b0c0d0e0f"
WORKED_K2 = {
    "U_even": _w("03020100 0b0a0908 0 0"),
    "U_odd": _w("07060504 0f0e0d0c 0 0"),
    "Ve_lo": _w("0b5003ea 52ed4942 7f0bd1bc 8f7242d8"),
    "Ve_hi": _w("8fd3f7a9 208441d3 1451ea0f fd52c175"),
    "T0": 0xA9C4D9CC,
    "T1": 0x46549D00,
    "Ee": _w("4d049eea 14b9d442 395f4cbc c926dfd8 26172e65 8940981f bd9533c3 549618b9"),
    "Ke2": _w("049eea4d 15b8d543 4cbc395f c827ded9"),
}
WORKED_K2_PT = "00112233445566778899aabbccddeeff"
WORKED_K2_CT = "b2e3c68c3183e69504d4b90377d126e6"


def check_sheet_table():
    path = os.environ.get("CRYPTON_SHEET") or os.path.join(
        HERE, "..", "..", "..", "..", "shared", "specs", "crypton-v0.5-facts.md")
    if not os.path.exists(path):
        print("note: %s not found, skipping the check against the full printed S0 table" % path,
              file=sys.stderr)
        return
    text = open(path, encoding="utf-8").read()
    i = text.index("Full S0 (row = high nibble")
    rows = {}
    for line in text[i:].splitlines()[1:]:
        mm = re.match(r"^\|\s*([0-9a-f])\s*\|((?:\s*[0-9a-f]{2}\s*\|){16})\s*$", line)
        if mm:
            rows[int(mm.group(1), 16)] = [int(v, 16) for v in mm.group(2).replace("|", " ").split()]
        elif rows and not line.startswith("|"):
            break
    assert sorted(rows) == list(range(16)), "could not parse the full S0 table of the sheet"
    printed = [rows[x >> 4][x & 15] for x in range(256)]
    for x in range(256):
        assert printed[x] == S0[x], "S0[%02x] = %02x, the sheet prints %02x" % (x, S0[x], printed[x])
    print("S0 equals the full table printed in the sheet (256 entries)", file=sys.stderr)


def self_checks():
    assert S0[:16] == _w(SHEET_S0_ROW0), "S0[00..0f] differ from the sheet"
    assert S1[:16] == _w(SHEET_S1_ROW0), "S1[00..0f] differ from the sheet"
    for x, y in SHEET_FEISTEL.items():
        assert S0[x] == y, "Feistel worked value S0[%02x]" % x
    check_sheet_table()
    # section 1 examples
    assert load(bytes.fromhex("00112233445566778899aabbccddeeff")) == _w("33221100 77665544 bbaa9988 ffeeddcc")
    assert key_words(bytes(range(16)))[:4] == _w("03020100 07060504 0b0a0908 0f0e0d0c")
    rnd = random.Random(1999)
    # section 3/4 identities
    for _ in range(200):
        A = [rnd.getrandbits(32) for _ in range(4)]
        assert pi(A, 1) == pi([A[3], A[0], A[1], A[2]], 0)
        T = _xor(A)
        assert pi(A, 0) == [_xor(A[j] & MI[(i + j) % 4] for j in range(4)) ^ T for i in range(4)]
        for e in (0, 1):
            assert pi(pi(A, e), e) == A and phi(phi(A, e), e) == A and tau(tau(A)) == A
            assert phi(A, e) == phi_words(A, e)
            assert gamma(gamma(A, e), 1 - e) == A
        K = [rnd.getrandbits(32) for _ in range(4)]
        for e in (0, 1):  # the merged tables equal the literal round
            assert tt_round(A, K, e) == rho(A, K, e)
        c = rnd.getrandbits(8) * 0x01010101
        assert phi([c] * 4, 1) == [c] * 4 and phi([c] * 4, 0) == [c] * 4
    # section 7, all-zero key (the same for all three lengths)
    for klen in (16, 24, 32):
        tr = {}
        expanded_keys(bytes(klen), tr)
        for name, want in WORKED_ZERO.items():
            assert tr[name] == want, "zero key: %s = %s, sheet %s" % (name, tr[name], want)
        Ke = enc_round_keys(bytes(klen))
        for r in range(13):
            assert Ke[r] == WORKED_ZERO_KE[r], "zero key: Ke_%d" % r
        assert phi(Ke[12], 1) == WORKED_ZERO_PHI_KE12
        Kd = dec_round_keys(Ke)
        for r, want in WORKED_ZERO_KD.items():
            assert Kd[r] == want, "zero key: Kd_%d" % r
        assert phi(Kd[12], 1) == Ke[0]
        trace = []
        ct = store(crypt([0] * 4, Ke, trace))
        assert trace[0] == Ke[0]
        for idx, want in WORKED_ZERO_STATES.items():
            assert trace[idx] == want, "zero key: state %d" % idx
        assert ct.hex() == WORKED_ZERO_CT
    tr = {}
    expanded_keys(bytes.fromhex(WORKED_K2_KEY), tr)
    U = tr["U"]
    assert [U[0], U[2], U[4], U[6]] == WORKED_K2["U_even"] and [U[1], U[3], U[5], U[7]] == WORKED_K2["U_odd"]
    for name in ("Ve_lo", "Ve_hi", "T0", "T1", "Ee"):
        assert tr[name] == WORKED_K2[name], "key 0001..0f: %s" % name
    assert enc_round_keys(bytes.fromhex(WORKED_K2_KEY))[2] == WORKED_K2["Ke2"]
    assert encrypt(bytes.fromhex(WORKED_K2_KEY), bytes.fromhex(WORKED_K2_PT)).hex() == WORKED_K2_CT
    # decryption three ways, folded form
    for _ in range(100):
        key = bytes(rnd.getrandbits(8) for _ in range(rnd.choice([16, 24, 32])))
        pt = [rnd.getrandbits(32) for _ in range(4)]
        Ke = enc_round_keys(key)
        ct = crypt(pt, Ke)
        assert crypt_folded(pt, Ke) == ct
        assert inverse(ct, Ke) == pt
        assert crypt(ct, dec_round_keys(Ke)) == pt
        Kd = dec_round_keys(Ke)
        assert crypt_folded(ct, Kd) == pt


# ---- optional: the model over a .kat file ----
def run_kat(path):
    recs, cur = [], {}
    for line in open(path, encoding="ascii"):
        line = line.strip()
        if not line:
            if cur:
                recs.append(cur)
                cur = {}
            continue
        if line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        cur[k.strip()] = v.strip()
    if cur:
        recs.append(cur)
    passed = 0
    for rec in recs:
        key = bytes.fromhex(rec["KEY"])
        n = int(rec.get("ITER", "1"))
        mode = rec.get("MODE", "ECB")
        Ke = enc_round_keys(key)
        Kd = dec_round_keys(Ke)
        pt, ct = load(bytes.fromhex(rec["PT"])), load(bytes.fromhex(rec["CT"]))
        if mode == "ECB":
            x = pt
            for _ in range(n):
                x = crypt(x, Ke)
            y = ct
            for _ in range(n):
                y = crypt(y, Kd)
            ok = x == ct and y == pt
        elif mode == "CBC-MCT-ENC":
            iv = load(bytes.fromhex(rec["IV"]))
            cv, p, c_prev = iv, pt, None
            for j in range(n):
                c = crypt(sigma(p, cv), Ke)
                p = iv if j == 0 else c_prev
                c_prev, cv = c, c
            ok = c == ct
        elif mode == "CBC-MCT-DEC":
            cv, c = load(bytes.fromhex(rec["IV"])), ct
            for j in range(n):
                p = sigma(crypt(c, Kd), cv)
                cv, c = c, p
            ok = p == pt
        else:
            raise ValueError("unknown MODE %s" % mode)
        passed += ok
        if not ok:
            print("model FAILS: %s" % rec, file=sys.stderr)
    print("model: %d of %d records of %s passed" % (passed, len(recs), path), file=sys.stderr)
    return passed == len(recs)


# ---- C output ----
def c_bytes2(name, tables, comments):
    lines = ["static const uint8_t %s[2][256] = {" % name]
    for k in range(2):
        lines.append("    /* [%d]: %s */" % (k, comments[k]))
        lines.append("    {")
        for i in range(0, 256, 16):
            lines.append("        " + ", ".join("0x%02x" % v for v in tables[k][i:i + 16]) + ",")
        lines.append("    },")
    lines.append("};")
    return "\n".join(lines)


def c_words4(name, tables, comments):
    lines = ["static const uint32_t %s[4][256] = {" % name]
    for k in range(4):
        lines.append("    /* [%d]: %s */" % (k, comments[k]))
        lines.append("    {")
        for i in range(0, 256, 6):
            lines.append("        " + ", ".join("0x%08xu" % v for v in tables[k][i:i + 6]) + ",")
        lines.append("    },")
    lines.append("};")
    return "\n".join(lines)


HEADER = ("/* Generated by gen_tables.py from the CRYPTON v0.5 facts sheet (shared/specs/\n"
          " * crypton-v0.5-facts.md): S0 by the 3-round nibble Feistel network with P0, P1, P2\n"
          " * (section 2), S1 = S0^-1; do not edit by hand. */")
S_DOCS = ["S0 (sheet section 2; equals the printed table)", "S1 = S0^-1 (sheet section 2)"]


def block_ttable():
    tt_docs = ["T%d[x] = (S%d[x] * 0x01010101) & M%d = 0x%08x (gamma merged with pi, sheet sections 2-3)"
               % (n, n % 2, n, M[n]) for n in range(4)]
    return "\n\n".join([HEADER, c_words4("ct_t", TT, tt_docs), c_bytes2("ct_s", SBOX, S_DOCS)])


def block_small():
    return "\n\n".join([HEADER, c_bytes2("cs_sbox", SBOX, S_DOCS)])


BEGIN = "/* BEGIN GENERATED TABLES (gen_tables.py) */"
END = "/* END GENERATED TABLES */"


def rewrite(fname, block, check):
    path = os.path.join(HERE, fname)
    src = open(path).read()
    i, j = src.index(BEGIN), src.index(END)
    new = src[:i + len(BEGIN)] + "\n" + block + "\n" + src[j:]
    if check:
        if new != src:
            print("%s: generated tables are out of date" % fname, file=sys.stderr)
            return False
        print("%s: generated tables are current" % fname, file=sys.stderr)
        return True
    if new != src:
        open(path, "w").write(new)
        print("%s: tables written" % fname, file=sys.stderr)
    return True


def main():
    args = sys.argv[1:]
    check = "--check" in args
    self_checks()
    print("model reproduces every worked value of the sheet (section 7)", file=sys.stderr)
    ok = True
    if "--kat" in args:
        ok = run_kat(args[args.index("--kat") + 1]) and ok
    ok = rewrite("ttable.c", block_ttable(), check) and ok
    ok = rewrite("small.c", block_small(), check) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
