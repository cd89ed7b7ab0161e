"""Every cipher's default implementation passes every known-answer record with gcc, and every implementation the
quick gate with gcc and clang (every short record, the n-block check and the checksum chain, every 32nd record
iterated over 100 times; every record for the others with gcc is a `heavy` sweep: the main job's gate checks every
record of its cells, SIMD and hardware ones included), and prints the
checksum stored in its cipher.yaml (so all builds of a cipher agree, whatever order the tests run in); the two
toolchains that imitate other compilers (icc-like: -march=native, unrolling, LTO; gcc-djgpp1999: NIST's 1999
DJGPP flags, -O2 -pedantic) pass the quick gate on a representative set: every kind of code the ciphers hold.
(The main job, `matrix.run`, gates its cells with every record, with all four toolchains.)"""

import pytest

from lab.config import Lab
from lab.verify import verify

from .conftest import TOOLCHAINS, all_implementations

IMPLS = all_implementations()
OTHERS = [(c, s) for c, s in IMPLS if Lab().cipher(c).default_impl != s]  # not their cipher's default


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,strategy", IMPLS, ids=[f"{c}/{s}" for c, s in IMPLS])
def test_known_answers(lab, build_dir, cipher, strategy, toolchain):
    full = toolchain == "gcc-O3" and (cipher, strategy) not in OTHERS
    _passes_every_vector(lab, build_dir, cipher, strategy, toolchain, quick=not full)


@pytest.mark.heavy  # 167 s of the suite's 2,405 (AMD, 2026-11-30): bitsliced and SIMD code iterated 400 x 10,000
@pytest.mark.parametrize("cipher,strategy", OTHERS, ids=[f"{c}/{s}" for c, s in OTHERS])
def test_every_record_with_gcc_for_every_other_implementation(lab, build_dir, cipher, strategy):
    _passes_every_vector(lab, build_dir, cipher, strategy, "gcc-O3")


# one cipher per kind of code: T-tables and AES-NI intrinsics (rijndael), byte code (safer+), 64-bit blocks and
# SP boxes (des), bitslicing (serpent), multiplications and data-dependent rotations (rc6, mars), key-dependent
# tables (twofish), 16-bit arithmetic (idea), 64-bit arithmetic on 32-bit words (dfc), uint64_t words (hpc,
# loki97), big tables built at key setup (sc2000), byte permutations (frog)
REPRESENTATIVE = ["rijndael", "saferplus", "des", "serpent", "rc6", "mars", "twofish", "idea", "dfc", "hpc",
                  "loki97", "sc2000", "frog"]
IMITATED = [(c, s) for c, s in IMPLS if c in REPRESENTATIVE]


@pytest.mark.parametrize("toolchain", ["icc-like", "gcc-djgpp1999"])
@pytest.mark.parametrize("cipher,strategy", IMITATED, ids=[f"{c}/{s}" for c, s in IMITATED])
def test_known_answers_with_the_imitating_toolchains(lab, build_dir, cipher, strategy, toolchain):
    _passes_every_vector(lab, build_dir, cipher, strategy, toolchain, quick=True)


def _passes_every_vector(lab, build_dir, cipher, strategy, toolchain, quick=False):
    c = lab.cipher(cipher)
    files = c.impls[strategy].vector_files
    assert files, f"{cipher} has no vectors: add them or a local .kat"
    for f in files:
        (r,) = verify(lab, cipher, f, strategy, toolchain, build_dir=build_dir, quick=quick)
        if r.problem and "unavailable" in r.problem:
            pytest.skip(r.problem)
        assert r.problem is None, r.line()
        assert r.failed == 0, f"{r.line()}; first failures: {r.fails[:3]}"
        assert r.passed > 0, r.line()
        assert r.passed + r.skipped + r.verdict.sampled_out == r.records
        assert quick or not r.verdict.sampled_out
        # the checksum of a fixed chain of key setups and encryptions equals the one stored for the cipher
        assert r.verdict.status == "ok", r.line()
        assert r.checksums, "the kat program printed no checksum"


@pytest.mark.parametrize("cipher", sorted({c for c, _ in IMPLS}))
def test_every_cipher_stores_the_checksum_of_every_key_size(lab, cipher):
    c = lab.cipher(cipher)
    sums = dict(c.impls[c.default_impl].checksums)
    assert set(sums) == set(c.key_bits), "run `python -m lab checksums --write`"
    assert all(len(s) == 2 * 4 * c.block_bits // 8 for s in sums.values())  # four blocks, in hex
