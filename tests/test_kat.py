"""Every implementation passes every known-answer record, with gcc and clang,
and all builds of one cipher agree (strategies, toolchains)."""

from collections import defaultdict

import pytest

from lab.verify import verify

from .conftest import TOOLCHAINS, all_implementations

IMPLS = all_implementations()
CHECKSUMS: dict[str, dict] = defaultdict(dict)


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,strategy", IMPLS, ids=[f"{c}/{s}" for c, s in IMPLS])
def test_known_answers(lab, build_dir, cipher, strategy, toolchain):
    c = lab.cipher(cipher)
    files = c.vector_files(lab.vectors_dir)
    assert files, f"{cipher} has no vectors: add them or a local .kat"
    impl = c.impl(strategy)
    if not impl.runs_on(lab.target("host").arch):
        pytest.skip(f"{cipher}/{strategy} runs on {impl.arch} only")
    for f in files:
        (r,) = verify(lab, cipher, f, strategy, toolchain, build_dir=build_dir)
        if r.problem and "unavailable on this CPU" in r.problem:
            pytest.skip(r.problem)
        assert r.problem is None, r.line()
        assert r.failed == 0, f"{r.line()}; first failures: {r.fails[:3]}"
        assert r.passed > 0, r.line()
        assert r.passed + r.skipped == r.records
        CHECKSUMS[cipher][(strategy, toolchain)] = r.checksums


@pytest.mark.parametrize("cipher", sorted({c for c, _ in IMPLS}))
def test_all_builds_of_a_cipher_agree(lab, cipher):
    seen = CHECKSUMS.get(cipher)
    if not seen:
        pytest.skip("known-answer tests of this cipher did not run")
    distinct = {tuple(sorted(v.items())) for v in seen.values()}
    assert len(distinct) == 1, f"{cipher}: builds disagree: {seen}"
