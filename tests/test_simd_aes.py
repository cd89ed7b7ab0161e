"""The AES-NI and VAES strategies of Rijndael (c_src/ciphers/rijndael/aesni.c, vaes.c): every vector and the
stored checksums through the kat gate, one n-block call against n single-block calls for counts that are not
multiples of the vector widths, buffers that end (or begin) at a guard page, and the CPU check."""

from __future__ import annotations

import hashlib

import pytest

from lab import native
from lab.verify import verify

from .simd_checks import (assert_clean_at_guard_pages, assert_n_blocks_equal_singles, assert_the_guard_page_faults,
                          cpu_flags)
from .simd_checks import load as _load

IMPLS = ["aesni", "vaes"]
TOOLCHAINS = ["gcc-O3", "clang-O3"]
# 1, 3, 17, 1023 (issue 27) and the edges of vaes's groups (4 per ZMM, 32 per loop; 16, 8, 4 groups; 0-3 on XMM)
COUNTS = [1, 3, 17, 1023, 2, 4, 5, 7, 8, 9, 15, 16, 31, 32, 33, 60, 63, 64, 65]
GUARD_COUNTS = [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 256, 1023]


def load(impl: str, toolchain: str, lab):
    return _load("rijndael", impl, toolchain, lab)


@pytest.mark.parametrize("toolchain", [*TOOLCHAINS, "sanitize"])
@pytest.mark.parametrize("impl", IMPLS)
def test_every_vector_and_the_stored_checksums(lab, impl, toolchain):
    im = lab.cipher("rijndael").impl(impl)
    stored = dict(im.checksums)
    assert {f.name for f in im.vector_files} == {"rijndael.kat", "fips197.kat"} and set(stored) == {128, 192, 256}
    for f in im.vector_files:
        (r,) = verify(lab, "rijndael", f, impl=impl, toolchain=toolchain)
        if r.unavailable:
            pytest.skip(r.problem)
        assert r.problem is None, r.line()
        assert r.records > 0 and r.passed == r.records and r.failed == 0, r.line()
        # the gate compares them with cipher.yaml too; say so here as well, key size by key size
        assert r.checksums == stored, r.line()
        assert r.ok, r.line()


def test_vaes_is_available_exactly_when_the_cpu_has_avx512f_and_vaes(lab):
    flags = cpu_flags()
    want = {"avx512f", "vaes", "aes"} <= flags
    try:
        native.load("rijndael", "vaes", lab=lab)
        got = True
    except native.NativeError as e:
        assert "unavailable" in str(e), str(e)
        got = False
    assert got == want, f"cpu flags avx512f/vaes/aes: {want}, vaes available(): {got}"


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
