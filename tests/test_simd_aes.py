"""The AES-NI and VAES strategies of Rijndael (c_src/ciphers/rijndael/aesni.c, vaes.c): both vector files and
the stored checksums of three key sizes (the kat gate over them is test_kat.py's and test_sanitize.py's), one n-block call against n single-block calls for counts that are not
multiples of the vector widths, buffers that end (or begin) at a guard page, and the CPU check."""

from __future__ import annotations

import hashlib

import pytest

from lab import native

from .simd_checks import (assert_available_exactly_with, assert_clean_at_guard_pages,
                          assert_n_blocks_equal_singles,
                          assert_the_guard_page_faults)
from .simd_checks import load as _load

IMPLS = ["aesni", "vaes"]
TOOLCHAINS = ["gcc-O3", "clang-O3"]
# 1, 3, 17, 1023 (issue 27) and the edges of vaes's groups (4 per ZMM, 32 per loop; 16, 8, 4 groups; 0-3 on XMM)
COUNTS = [1, 3, 17, 1023, 2, 4, 5, 7, 8, 9, 15, 16, 31, 32, 33, 60, 63, 64, 65]
GUARD_COUNTS = [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 256, 1023]


def load(impl: str, toolchain: str, lab):
    return _load("rijndael", impl, toolchain, lab)


@pytest.mark.parametrize("impl", IMPLS)
def test_both_vector_files_and_three_stored_checksums(lab, impl):
    im = lab.cipher("rijndael").impl(impl)
    assert {f.name for f in im.vector_files} == {"rijndael.kat", "fips197.kat"}
    assert set(dict(im.checksums)) == {128, 192, 256}


def test_vaes_is_available_exactly_when_the_cpu_has_avx512f_and_vaes(lab):
    assert_available_exactly_with(lab, "rijndael", "vaes", {"avx512f", "vaes", "aes"})


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("impl", IMPLS)
def test_n_blocks_equal_n_single_blocks(lab, impl, toolchain):
    c = load(impl, toolchain, lab)
    ref = native.load("rijndael", "ttable", toolchain=toolchain, lab=lab)  # portable C, independent code
    rnd = hashlib.shake_256(f"{impl}/{toolchain}".encode())
    stream = rnd.digest(32 + 16 * sum(COUNTS) * 3)
    pos = 0
    for bits in (128, 192, 256):
        key, pos = stream[pos:pos + bits // 8], pos + bits // 8
        for n in COUNTS:
            data, pos = stream[pos:pos + 16 * n], (pos + 16 * n) % (len(stream) - 16 * 1023)
            assert_n_blocks_equal_singles(c, ref, key, data)


@pytest.mark.parametrize("where", ["end", "start"])
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("impl", IMPLS)
def test_buffers_at_a_guard_page(lab, impl, toolchain, where):
    load(impl, toolchain, lab)  # builds the library (and skips where the CPU lacks the instructions)
    keys = [bytes(range(bits // 8)) for bits in (128, 192, 256)]
    assert_clean_at_guard_pages("rijndael", impl, toolchain, [where], keys, GUARD_COUNTS)


def test_the_guard_page_faults(lab):
    """The control: the same set-up kills a process that reads one byte past a buffer's end."""
    load("aesni", "gcc-O3", lab)
    assert_the_guard_page_faults("rijndael", "aesni", "gcc-O3", bytes(range(16)))
