"""The portable strategies that run two blocks side by side in a many-block call (issue 27 §2: des/sp64,
3des/sp64, twofish/full, rijndael/ttable, cast256/ref): one n-block call equal to n single-block calls and to independent code for odd and even
n (the odd block takes the one-block path), decryption undoing it, and buffers that end at (or start after) a
guard page.  The checks are tests/simd_checks.py's; every vector and the stored checksums through the kat gate
are test_kat.py's (gcc, clang) and test_sanitize.py's (ASan+UBSan), which take every implementation."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from lab import native

from .conftest import ROOT
from .simd_checks import assert_clean_at_guard_pages, assert_n_blocks_equal_singles, load

# (cipher, implementation, key sizes, independent code of the same cipher to compare with)
IMPLS = [
    ("des", "sp64", [64], "spbox"),
    ("3des", "sp64", [192], "ede"),
    ("twofish", "full", [128, 192, 256], "compact"),
    ("rijndael", "ttable", [128, 192, 256], "small"),
    ("cast256", "ref", [128, 192, 256], None),
]
IDS = [f"{c}/{i}" for c, i, *_ in IMPLS]
TOOLCHAINS = ["gcc-O3", "clang-O3"]
COUNTS = [1, 2, 3, 4, 5, 16, 17, 1023, 1024]


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,impl,bits,ref", IMPLS, ids=IDS)
def test_n_blocks_equal_n_single_blocks(lab, cipher, impl, bits, ref, toolchain):
    c = load(cipher, impl, toolchain, lab)
    # CAST-256 has one implementation: its n single-block calls (the one-block path) are the reference
    other = native.load(cipher, ref, toolchain=toolchain, lab=lab) if ref else c
    bs = c.block_size
    stream = hashlib.shake_256(f"{cipher}/{impl}/{toolchain}".encode()).digest(bs * sum(COUNTS))
    pos = 0
    for key_bits in bits:
        key = hashlib.sha256(f"{impl}{key_bits}".encode()).digest()[: key_bits // 8]
        for n in COUNTS:
            data = stream[pos:pos + bs * n]
            pos = (pos + bs * n) % (len(stream) - bs * 1024)
            assert_n_blocks_equal_singles(c, other, key, data)


@pytest.mark.parametrize("where", ["end", "start"])
@pytest.mark.parametrize("cipher,impl,bits,_ref", IMPLS, ids=IDS)
def test_buffers_at_a_guard_page(lab, cipher, impl, bits, _ref, where):
    load(cipher, impl, "gcc-O3", lab)
    assert_clean_at_guard_pages(cipher, impl, "gcc-O3", [where], [bytes(range(1, bits[0] // 8 + 1))],
                                [1, 2, 3, 17, 1023])


def test_the_sp64_tables_are_the_generated_ones():
    """des/gen_tables.py re-derives the 64-bit SP tables, checks the expanded rounds against a plain DES, and finds
    des_sp64.c equal to what it would write."""
    r = subprocess.run([sys.executable, str(ROOT / "c_src/ciphers/des/gen_tables.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
