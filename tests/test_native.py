"""The cffi API: real implementations, ECB over whole blocks, all strategies agree."""

import os

import pytest

from lab import native

from .conftest import all_implementations

CIPHERS = sorted({c for c, _ in all_implementations()})


@pytest.mark.parametrize("cipher", CIPHERS)
def test_roundtrip_and_strategies_agree(lab, cipher):
    strategies = native.implementations(cipher)
    objs = []
    for s in strategies:
        try:
            objs.append(native.load(cipher, s))
        except native.NativeError as e:
            if "unavailable" in str(e):
                continue
            raise
    assert objs
    first = objs[0]
    for ks in first.key_sizes:
        for trial in range(20):
            key = os.urandom(ks // 8)
            data = os.urandom(first.block_size * (1 + trial % 5))
            ct = first.encrypt(key, data)
            assert ct != data
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
