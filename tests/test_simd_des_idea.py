"""The bitsliced DES and 3DES strategies (c_src/ciphers/des/bitslice*.c, c_src/ciphers/3des/bitslice*.c) and the
SIMD IDEA strategies (c_src/ciphers/idea/sse2.c, avx2.c): one n-block call against n single-block calls and against the portable default for counts
around the group sizes, IDEA's zero fix-up, buffers that end (or begin) at a guard page, the CPU check, and the
generated S-box circuits being the ones gen_bitslice.py writes (the n-block and guard-page checks are
tests/simd_checks.py's, shared with test_simd.py and test_simd_aes.py).  Every vector and the stored checksums
through the kat gate are test_kat.py's (gcc, clang) and test_sanitize.py's (ASan+UBSan), which take every
implementation."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from lab import native

from .conftest import ROOT
from .simd_checks import (assert_available_exactly_with, assert_clean_at_guard_pages,
                          assert_n_blocks_equal_singles,
                          assert_the_guard_page_faults, load)

# (cipher, implementation, CPU flags it needs, key bits, the portable default to compare with)
IMPLS = [
    ("des", "bitslice64", set(), 64, "spbox"),
    ("des", "bitslice_avx2", {"avx2"}, 64, "spbox"),
    ("des", "bitslice_avx512", {"avx512f"}, 64, "spbox"),
    ("3des", "bitslice64", set(), 192, "ede"),
    ("3des", "bitslice_avx2", {"avx2"}, 192, "ede"),
    ("3des", "bitslice_avx512", {"avx512f"}, 192, "ede"),
    ("idea", "sse2", {"sse2"}, 128, "ref"),
    ("idea", "avx2", {"avx2"}, 128, "ref"),
]
IDS = [f"{c}/{i}" for c, i, *_ in IMPLS]
TOOLCHAINS = ["gcc-O3", "clang-O3"]
# 1, 3, 17, 1023 (issue 27); the group sizes 8, 16 (IDEA), 64, 256, 512 (bitsliced DES) and their neighbours; the
# thresholds at which a bitsliced rest is run as one padded group (BS_PAD_MIN: 16, 22, 24, 26, 32, 44) and their
# neighbours
COUNTS = [1, 3, 17, 1023, 2, 7, 8, 9, 15, 16, 21, 22, 23, 24, 25, 26, 27, 31, 32, 33, 43, 44, 45, 63, 64, 65,
          127, 128, 129, 255, 256, 257, 511, 512, 513, 600, 1024, 1100]


@pytest.mark.parametrize("cipher,impl,flags,_bits,_ref", IMPLS, ids=IDS)
def test_available_exactly_when_the_cpu_has_the_instructions(lab, cipher, impl, flags, _bits, _ref):
    assert_available_exactly_with(lab, cipher, impl, flags)


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,impl,_flags,bits,ref", IMPLS, ids=IDS)
def test_n_blocks_equal_n_single_blocks(lab, cipher, impl, _flags, bits, ref, toolchain):
    c = load(cipher, impl, toolchain, lab)
    portable = native.load(cipher, ref, toolchain=toolchain, lab=lab)  # the portable default, independent code
    stream = hashlib.shake_256(f"{cipher}/{impl}/{toolchain}".encode()).digest(8 * (sum(COUNTS) + 8))
    pos = 0
    for keyno in range(2):
        key = hashlib.sha256(f"{impl}{keyno}".encode()).digest()[: bits // 8]
        for n in COUNTS:
            data = stream[pos:pos + 8 * n]
            pos = (pos + 8 * n) % (len(stream) - 8 * 1100)
            assert_n_blocks_equal_singles(c, portable, key, data)


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("impl", ["sse2", "avx2"])
def test_idea_zero_fix_up(lab, impl, toolchain):
    """Multiplication by 0 (= 2^16) in a lane: zero subkeys (the all-zero key, keys with zero words) and blocks
    whose X1/X4 are 0, so that the first multiplications see a zero factor on either side."""
    c = load("idea", impl, toolchain, lab)
    ref = native.load("idea", "ref", toolchain=toolchain, lab=lab)
    rnd = hashlib.shake_256(f"zero/{impl}/{toolchain}".encode()).digest(4096)
    blocks = []
    for i in range(64):
        b = rnd[8 * i:8 * i + 8]
        blocks.append(bytes(8) if i % 3 == 0 else bytes(2) + b[2:6] + bytes(2) if i % 3 == 1 else b)
    data = b"".join(blocks)
    for key in (bytes(16), bytes(8) + rnd[1000:1008], bytes(2) + rnd[2000:2014], rnd[3000:3016]):
        ct = c.encrypt(key, data)
        assert ct == ref.encrypt(key, data), f"idea/{impl} [{toolchain}] key {key.hex()}"
        assert c.decrypt(key, ct) == data


GUARD_COUNTS = [1, 2, 3, 7, 8, 9, 15, 16, 17, 22, 24, 26, 31, 32, 33, 44, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                511, 512, 513, 1023]


@pytest.mark.parametrize("where", ["end", "start"])
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,impl,_flags,bits,_ref", IMPLS, ids=IDS)
def test_buffers_at_a_guard_page(lab, cipher, impl, _flags, bits, _ref, toolchain, where):
    load(cipher, impl, toolchain, lab)  # builds the library (and skips where the CPU lacks the instructions)
    assert_clean_at_guard_pages(cipher, impl, toolchain, [where], [bytes(range(1, bits // 8 + 1))], GUARD_COUNTS)


def test_the_guard_page_faults(lab):
    """The control: the same set-up kills a process that reads one byte past a buffer's end."""
    load("des", "bitslice64", "gcc-O3", lab)
    assert_the_guard_page_faults("des", "bitslice64", "gcc-O3", bytes(range(1, 9)))


def test_the_sbox_circuits_are_the_generated_ones():
    """gen_bitslice.py re-derives every circuit from the FIPS 46-3 tables, checks it on all 64 inputs, and finds
    des_bitslice_sboxes.h equal to what it would write."""
    r = subprocess.run([sys.executable, str(ROOT / "c_src/ciphers/des/gen_bitslice.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "up to date" in r.stdout
