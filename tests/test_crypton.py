"""CRYPTON v0.5 (c_src/ciphers/crypton): the worked values of section 7 of the facts sheet
(shared/specs/crypton-v0.5-facts.md), read out of the C key schedules, and the table generator.

The known-answer records themselves are run by test_kat.py (both strategies, gcc and clang).

Layouts (see the comments at the top of small.c and ttable.c):
  * small:  208 bytes, round key r at bytes 16r..16r+15, word i of it little-endian at 16r+4i.
            Encryption: Ke_0..Ke_12 (unfolded); decryption: Kd_0..Kd_12 (unfolded).
  * ttable: uint32_t rk[52] in host byte order.  Encryption: Ke_0..Ke_11, phi_e(Ke_12);
            decryption: Kd_0 (= phi_e(Ke_12)), Kd_1..Kd_11, Ke_0.
The intermediate values the C code does not keep (Ve, T0, T1) follow from Ee = Ke_0 | Ke_1:
XOR(Ee[0..3]) = T0 and XOR(Ee[4..7]) = T1 (the other T cancels four times), Ve[i] = Ee[i] ^ T1
(i < 4) or Ee[i] ^ T0 (i >= 4).  The cipher's intermediate states after rounds 1 and 2 are not
observable through the API; gen_tables.py checks them on its literal model (test below).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab import native

FOLDER = Path(__file__).resolve().parent.parent / "c_src" / "ciphers" / "crypton"


def W(s: str) -> list[int]:
    return [int(t, 16) for t in s.split()]


# ---- section 7 of the sheet, typed as printed ----
ZERO_EE = W("eb46ea41 e8f1fd40 58693f70 c199402d b9c4290c 930a3cde ae0c7139 a9cc1c40")
ZERO_VE_LO = W("c64892ea c5ff85eb 756747db ec973886")
ZERO_VE_HI = W("23834150 094d5482 344b1965 338b741c")
ZERO_AFTER_GAMMA_O = W("86dbebea 38478592 9767ff48 ec75c5c6")
ZERO_AFTER_GAMMA_E = W("1c658250 74195441 8b4b4d83 33340923")
ZERO_T0, ZERO_T1 = 0x9A47685C, 0x2D0E78AB
ZERO_KE = [W(s) for s in (
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
ZERO_PHI_E_KE12 = W("e64fe54a d078414d 380f6d24 adf12841")
ZERO_KD = {
    0: W("e64fe54a d078414d 380f6d24 adf12841"),
    1: W("45a0c578 634effa9 83c57ed2 bf5f3be2"),
    11: W("6d50b5d0 f5a36944 d06bc796 31e8b555"),
    12: W("cf60cc65 5458c56d 470e1225 3d54b8e4"),
}
ZERO_AFTER_ROUND12 = W("72a43bbf 4456629d 893e97f5 5e3b9d29")
ZERO_AFTER_PHI = W("39e562ec 81bc6bbb 6fc0601a c87ecbac")
ZERO_CT = "ec62e539bb6bbc811a60c06faccb7ec8"

K2_KEY = "000102030405060708090a0b0c0d0e0f"
K2_VE_LO = W("0b5003ea 52ed4942 7f0bd1bc 8f7242d8")
K2_VE_HI = W("8fd3f7a9 208441d3 1451ea0f fd52c175")
K2_T0, K2_T1 = 0xA9C4D9CC, 0x46549D00
K2_EE = W("4d049eea 14b9d442 395f4cbc c926dfd8 26172e65 8940981f bd9533c3 549618b9")
K2_KE2 = W("049eea4d 15b8d543 4cbc395f c827ded9")
K2_PT = "00112233445566778899aabbccddeeff"
K2_CT = "b2e3c68c3183e69504d4b90377d126e6"

ZERO_KEYS = [bytes(n) for n in (16, 24, 32)]  # the same words after zero padding (sheet section 7)


def small_words(ks: bytes) -> list[list[int]]:
    assert len(ks) == 208, f"small key schedule is {len(ks)} bytes, expected 13 round keys of 16"
    return [[int.from_bytes(ks[16 * r + 4 * i:16 * r + 4 * i + 4], "little") for i in range(4)] for r in range(13)]


def ttable_words(ks: bytes) -> list[list[int]]:
    assert len(ks) == 208, f"ttable key schedule is {len(ks)} bytes, expected 52 words"
    w = [int.from_bytes(ks[4 * n:4 * n + 4], sys.byteorder) for n in range(52)]
    return [w[4 * r:4 * r + 4] for r in range(13)]


def diff(what: str, got: list[int], want: list[int]) -> list[str]:
    return [f"{what} word {i}: C has {g:08x}, sheet {w:08x}" for i, (g, w) in enumerate(zip(got, want)) if g != w]


def xor(ws):
    v = 0
    for w in ws:
        v ^= w
    return v


def tau(A):
    return [sum(((A[j] >> (8 * i)) & 0xFF) << (8 * j) for j in range(4)) for i in range(4)]


N = [0xCFFCCFFC, 0x3FF33FF3, 0xFCCFFCCF, 0xF33FF33F]


def phi_e(A):
    """Sheet section 4, word formula: phi_e(A)[i] = xor_s (A[i] <<< 8s) & N_((i+1-s) mod 4)."""
    rot = lambda x, n: ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF if n else x
    return [xor(rot(A[i], 8 * s) & N[(i + 1 - s) % 4] for s in range(4)) for i in range(4)]


@pytest.fixture(scope="module")
def small():
    return native.load("crypton", "small")


@pytest.fixture(scope="module")
def ttable():
    return native.load("crypton", "ttable")


@pytest.mark.parametrize("key", ZERO_KEYS, ids=lambda k: f"zero{len(k) * 8}")
def test_small_encryption_round_keys_zero_key(small, key):
    Ke = small_words(small.key_schedule(key))
    problems = []
    for r in range(13):
        problems += diff(f"Ke_{r}", Ke[r], ZERO_KE[r])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", ZERO_KEYS, ids=lambda k: f"zero{len(k) * 8}")
def test_small_expanded_key_intermediates_zero_key(small, key):
    """Ee, T0, T1, Ve and the values after gamma (= tau of Ve) of step 1, from Ke_0 | Ke_1."""
    Ke = small_words(small.key_schedule(key))
    Ee = Ke[0] + Ke[1]
    problems = diff("Ee", Ee, ZERO_EE)
    T0, T1 = xor(Ee[:4]), xor(Ee[4:])
    if T0 != ZERO_T0:
        problems.append(f"T0: C gives {T0:08x}, sheet {ZERO_T0:08x}")
    if T1 != ZERO_T1:
        problems.append(f"T1: C gives {T1:08x}, sheet {ZERO_T1:08x}")
    ve_lo, ve_hi = [e ^ T1 for e in Ee[:4]], [e ^ T0 for e in Ee[4:]]
    problems += diff("Ve[0..3]", ve_lo, ZERO_VE_LO) + diff("Ve[4..7]", ve_hi, ZERO_VE_HI)
    problems += diff("after gamma_o", tau(ve_lo), ZERO_AFTER_GAMMA_O)
    problems += diff("after gamma_e", tau(ve_hi), ZERO_AFTER_GAMMA_E)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", ZERO_KEYS, ids=lambda k: f"zero{len(k) * 8}")
def test_small_decryption_round_keys_zero_key(small, key):
    Kd = small_words(small.key_schedule(key, decrypt=True))
    problems = []
    for r, want in ZERO_KD.items():
        problems += diff(f"Kd_{r}", Kd[r], want)
    # the rule of step 3, for the rounds the sheet does not print: Kd_r = phi(Ke_(12-r)); at least
    # the folded identities phi_e(Ke_12) = Kd_0 and phi_e(Kd_12) = Ke_0
    problems += diff("phi_e(Kd_12) vs Ke_0", phi_e(Kd[12]), ZERO_KE[0])
    assert not problems, "\n".join(problems)


def test_small_round_keys_key_000102(small):
    Ke = small_words(small.key_schedule(bytes.fromhex(K2_KEY)))
    Ee = Ke[0] + Ke[1]
    problems = diff("Ee", Ee, K2_EE) + diff("Ke_2", Ke[2], K2_KE2)
    T0, T1 = xor(Ee[:4]), xor(Ee[4:])
    if (T0, T1) != (K2_T0, K2_T1):
        problems.append(f"T0, T1: C gives {T0:08x}, {T1:08x}; sheet {K2_T0:08x}, {K2_T1:08x}")
    problems += diff("Ve[0..3]", [e ^ T1 for e in Ee[:4]], K2_VE_LO)
    problems += diff("Ve[4..7]", [e ^ T0 for e in Ee[4:]], K2_VE_HI)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", ZERO_KEYS, ids=lambda k: f"zero{len(k) * 8}")
def test_ttable_round_keys_zero_key(ttable, key):
    enc = ttable_words(ttable.key_schedule(key))
    dec = ttable_words(ttable.key_schedule(key, decrypt=True))
    problems = []
    for r in range(12):
        problems += diff(f"encryption schedule Ke_{r}", enc[r], ZERO_KE[r])
    problems += diff("encryption schedule folded last key phi_e(Ke_12)", enc[12], ZERO_PHI_E_KE12)
    for r in (0, 1, 11):
        problems += diff(f"decryption schedule Kd_{r}", dec[r], ZERO_KD[r])
    problems += diff("decryption schedule folded last key phi_e(Kd_12) = Ke_0", dec[12], ZERO_KE[0])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("strategy", ["small", "ttable"])
def test_worked_ciphertexts(strategy):
    c = native.load("crypton", strategy)
    for key in ZERO_KEYS:
        ct = c.encrypt(key, bytes(16))
        words = [int.from_bytes(ct[4 * i:4 * i + 4], "little") for i in range(4)]
        problems = diff(f"{len(key) * 8}-bit zero key: after phi_e", words, ZERO_AFTER_PHI)
        problems += diff(f"{len(key) * 8}-bit zero key: after round 12 (phi_e of the output)", phi_e(words),
                         ZERO_AFTER_ROUND12)
        assert not problems, "\n".join(problems)
        assert ct.hex() == ZERO_CT
        assert c.decrypt(key, ct) == bytes(16)
    key, pt = bytes.fromhex(K2_KEY), bytes.fromhex(K2_PT)
    assert c.encrypt(key, pt).hex() == K2_CT
    assert c.decrypt(key, bytes.fromhex(K2_CT)) == pt


def test_descriptor_sizes(small, ttable):
    assert small.key_schedule_bytes == ttable.key_schedule_bytes == 208
    # small: S0, S1 (512) + masks m0..m3 (4) + P, Q (32)
    assert small.table_bytes == 512 + 4 + 32
    # ttable: T0..T3 (4096) + S0, S1 (512) + P, Q (32) + M0..M3 (16) + N0..N3 (16)
    assert ttable.table_bytes == 4096 + 512 + 32 + 16 + 16


def test_gen_tables_check_passes():
    p = subprocess.run([sys.executable, str(FOLDER / "gen_tables.py"), "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "model reproduces every worked value" in p.stderr


def test_gen_tables_check_detects_a_changed_table(tmp_path):
    for f in ("gen_tables.py", "ttable.c", "small.c"):
        shutil.copy(FOLDER / f, tmp_path / f)
    src = (tmp_path / "small.c").read_text()
    i = src.index("static const uint8_t cs_sbox")
    j = src.index("0x", i)
    (tmp_path / "small.c").write_text(src[:j] + ("0x00" if src[j:j + 4] != "0x00" else "0x01") + src[j + 4:])
    p = subprocess.run([sys.executable, str(tmp_path / "gen_tables.py"), "--check"], capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert "small.c: generated tables are out of date" in p.stderr
