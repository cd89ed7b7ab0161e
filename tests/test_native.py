"""The cffi API on real implementations: a known answer of every cipher through every implementation,
strategies of one cipher agree on random data, ECB over whole blocks, errors."""

import os

import pytest

from lab import native

from .conftest import all_implementations
from .kat_file import ecb_records

IMPLS = all_implementations()


@pytest.mark.parametrize("cipher,strategy", IMPLS, ids=[f"{c}/{s}" for c, s in IMPLS])
def test_known_answers_through_cffi(lab, cipher, strategy):
    impl = lab.cipher(cipher).impls[strategy]
    try:
        n = native.load(cipher, strategy, lab=lab)
    except native.NativeError as e:
        if "unavailable" in str(e):
            pytest.skip(str(e))
        raise
    records = [r for f in impl.vector_files for r in ecb_records(f, limit=40)]
    records = [r for r in records if len(r[0]) * 8 in n.key_sizes]
    assert records, f"{cipher}: no single-block record with a supported key size"
    for key, pt, ct in records[:20]:
        assert n.encrypt(key, pt).hex() == ct.hex(), f"{impl.id}: E(key={key.hex()}, pt={pt.hex()})"
        assert n.decrypt(key, ct).hex() == pt.hex(), f"{impl.id}: D(key={key.hex()}, ct={ct.hex()})"
    assert n.block_size * 8 == impl.block_bits and n.key_sizes == impl.key_bits


MULTI = sorted({c for c, _ in IMPLS if sum(1 for x, _ in IMPLS if x == c) > 1})


@pytest.mark.parametrize("cipher", MULTI)
def test_strategies_of_a_cipher_agree(lab, cipher):
    objs = []
    for s in native.implementations(cipher, lab):
        try:
            objs.append(native.load(cipher, s, lab=lab))
        except native.NativeError as e:
            if "unavailable" not in str(e):
                raise
    assert len(objs) >= 2, f"{cipher}: fewer than two strategies load here"
    first = objs[0]
    for ks in first.key_sizes:
        for trial in range(10):
            key = os.urandom(ks // 8)
            data = os.urandom(first.block_size * (1 + trial % 5))
            ct = first.encrypt(key, data)
            assert first.decrypt(key, ct) == data
            for other in objs[1:]:
                assert other.encrypt(key, data) == ct, f"{other.name} differs from {first.name}"
                assert other.decrypt(key, ct) == data


def test_des_known_answer_and_errors(lab):
    des = native.load("des")
    assert des.block_size == 8 and des.key_sizes == (64,)
    # FIPS-81 style check: key 0123456789abcdef, plaintext "Now is t"
    assert des.encrypt(bytes.fromhex("0123456789abcdef"), b"Now is t").hex() == "3fa40e8a984d4815"
    with pytest.raises(ValueError, match="multiple of 8"):
        des.encrypt(bytes(8), bytes(5))
    with pytest.raises(ValueError, match="key of 128 bits"):
        des.encrypt(bytes(16), bytes(8))
