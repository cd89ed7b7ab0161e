"""Every implementation passes every known-answer record, with gcc and clang, and prints the checksum
stored in its cipher.yaml (so all builds of a cipher agree, whatever order the tests run in)."""

import pytest

from lab.verify import verify

from .conftest import TOOLCHAINS, all_implementations

IMPLS = all_implementations()


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,strategy", IMPLS, ids=[f"{c}/{s}" for c, s in IMPLS])
def test_known_answers(lab, build_dir, cipher, strategy, toolchain):
    c = lab.cipher(cipher)
    files = c.impls[strategy].vector_files
    assert files, f"{cipher} has no vectors: add them or a local .kat"
    for f in files:
        (r,) = verify(lab, cipher, f, strategy, toolchain, build_dir=build_dir)
        if r.problem and "unavailable" in r.problem:
            pytest.skip(r.problem)
        assert r.problem is None, r.line()
        assert r.failed == 0, f"{r.line()}; first failures: {r.fails[:3]}"
        assert r.passed > 0, r.line()
        assert r.passed + r.skipped == r.records
        # the checksum of a fixed chain of key setups and encryptions equals the one stored for the cipher
        assert r.verdict.status == "ok", r.line()
        assert r.checksums, "the kat program printed no checksum"


@pytest.mark.parametrize("cipher", sorted({c for c, _ in IMPLS}))
def test_every_cipher_stores_the_checksum_of_every_key_size(lab, cipher):
    c = lab.cipher(cipher)
    sums = dict(c.impls[c.default_impl].checksums)
    assert set(sums) == set(c.key_bits), "run `python -m lab checksums --write`"
    assert all(len(s) == 2 * 4 * c.block_bits // 8 for s in sums.values())  # four blocks, in hex
