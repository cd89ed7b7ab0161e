"""Python access to the C implementations (cffi, ABI mode) for experiments and tests.

    >>> from lab import native
    >>> aes = native.load("rijndael")                # default implementation, gcc-O3
    >>> ct = aes.encrypt(bytes(16), bytes(16))       # ECB over whole blocks

The cipher's implementations are built into one shared library per
(cipher, toolchain) under build/native/, rebuilt when a source changes.
"""

from __future__ import annotations

import hashlib
import subprocess
from functools import lru_cache
from pathlib import Path

from cffi import FFI

from .build import COMMON, HARNESS, INCLUDE, effective_flags
from .config import Lab

_CDEF = """
typedef struct cl_impl {
    const char *cipher;
    const char *strategy;
    unsigned block_bytes;
    const unsigned short *key_bits;
    size_t ks_bytes;
    size_t table_bytes;
    int (*available)(void);
    int (*set_encrypt_key)(void *ks, const uint8_t *key, unsigned key_bits);
    int (*set_decrypt_key)(void *ks, const uint8_t *key, unsigned key_bits);
    void (*encrypt)(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks);
    void (*decrypt)(const void *ks, const uint8_t *in, uint8_t *out, size_t nblocks);
    void (*init_hook)(const void *ks);
} cl_impl;
const cl_impl *cl_find_impl(const char *name);
int cl_impl_available(const cl_impl *impl);
"""
_ffi = FFI()
_ffi.cdef(_CDEF)


class NativeError(RuntimeError):
    pass


class NativeCipher:
    """One implementation: block_size (bytes), key_sizes (bits), encrypt/decrypt (ECB)."""

    def __init__(self, lib, impl, name: str, toolchain: str):
        self._lib, self._impl = lib, impl
        self.name, self.toolchain = name, toolchain
        self.block_size = int(impl.block_bytes)
        ks, i = [], 0
        while impl.key_bits[i]:
            ks.append(int(impl.key_bits[i]))
            i += 1
        self.key_sizes = tuple(ks)
        self.key_schedule_bytes = int(impl.ks_bytes)
        self.table_bytes = int(impl.table_bytes)

    def __repr__(self) -> str:
        return f"<NativeCipher {self.name} [{self.toolchain}] block={self.block_size} keys={self.key_sizes}>"

    def _schedule(self, key: bytes, decrypt: bool):
        if len(key) * 8 not in self.key_sizes:
            raise ValueError(f"{self.name}: key of {len(key) * 8} bits; supported: {self.key_sizes}")
        raw = _ffi.new("uint8_t[]", self.key_schedule_bytes + 64)
        addr = int(_ffi.cast("uintptr_t", raw))
        ks = _ffi.cast("void *", (addr + 63) // 64 * 64)
        fn = self._impl.set_decrypt_key if decrypt else self._impl.set_encrypt_key
        rc = fn(ks, key, len(key) * 8)
        if rc != 0:
            raise ValueError(f"{self.name}: key setup refused the key (code {rc})")
        return raw, ks

    def _run(self, key: bytes, data: bytes, decrypt: bool) -> bytes:
        if len(data) % self.block_size:
            raise ValueError(f"{self.name}: data length {len(data)} is not a multiple of {self.block_size}")
        _keep, ks = self._schedule(bytes(key), decrypt)
        out = _ffi.new("uint8_t[]", max(len(data), 1))
        fn = self._impl.decrypt if decrypt else self._impl.encrypt
        fn(ks, bytes(data), out, len(data) // self.block_size)
        return bytes(_ffi.buffer(out, len(data)))

    def encrypt(self, key: bytes, data: bytes) -> bytes:
        return self._run(key, data, False)

    def key_schedule(self, key: bytes, decrypt: bool = False) -> bytes:
        """The ks_bytes the implementation's set_encrypt_key (or set_decrypt_key) writes for key,
        e.g. to check round keys against worked values of a specification."""
        _keep, ks = self._schedule(bytes(key), decrypt)
        return bytes(_ffi.buffer(ks, self.key_schedule_bytes))

    def decrypt(self, key: bytes, data: bytes) -> bytes:
        return self._run(key, data, True)


def _build_library(lab: Lab, cipher_name: str, toolchain: str) -> Path:
    cipher = lab.cipher(cipher_name)
    tc = lab.toolchain(toolchain)
    host = lab.target("host")
    sources = sorted({s for strat in cipher.spec.implementations for s in cipher.sources(strat)})
    symbols = " ".join(f"X({cipher.name}_{s})" for s in cipher.spec.implementations)
    flags = [f for f in effective_flags(tc, host) if f != "-flto"]
    argv = [tc.cc, *flags, "-fPIC", "-shared", "-I", str(lab.root / INCLUDE), "-I", str(lab.root / HARNESS),
            f"-DCL_IMPL_LIST={symbols}", str(lab.root / HARNESS / "registry.c"),
            *(str(lab.root / HARNESS / c) for c in COMMON), *map(str, sources)]
    h = hashlib.sha256(" ".join(argv).encode())
    headers = {hdr for s in sources for hdr in s.parent.glob("*.h")}
    for p in [*sources, *(lab.root / INCLUDE).glob("*.h"), *(lab.root / HARNESS).glob("*.[ch]"), *sorted(headers)]:
        h.update(Path(p).read_bytes())
    out = lab.root / "build" / "native" / toolchain / f"libcl_{cipher.name}-{h.hexdigest()[:16]}.so"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([*argv, "-o", str(out)], capture_output=True, text=True)
        if p.returncode != 0:
            raise NativeError(f"building {out.name} with {toolchain} failed:\n{p.stderr[-2000:]}")
    return out


@lru_cache(maxsize=None)
def _open(path: str):
    return _ffi.dlopen(path)


def load(cipher: str, impl: str | None = None, toolchain: str = "gcc-O3", lab: Lab | None = None) -> NativeCipher:
    """The implementation `impl` (default: the cipher's default) of `cipher`, built with `toolchain`."""
    lab = lab or Lab()
    c = lab.cipher(cipher)
    strategy = impl or c.default_impl
    c.impl(strategy)
    lib = _open(str(_build_library(lab, cipher, toolchain)))
    ptr = lib.cl_find_impl(f"{cipher}/{strategy}".encode())
    if ptr == _ffi.NULL:
        raise NativeError(f"{cipher}/{strategy} is not in the library")
    if not lib.cl_impl_available(ptr):
        raise NativeError(f"{cipher}/{strategy} is unavailable on this CPU")
    return NativeCipher(lib, ptr, f"{cipher}/{strategy}", toolchain)


def implementations(cipher: str, lab: Lab | None = None) -> list[str]:
    lab = lab or Lab()
    return list(lab.cipher(cipher).spec.implementations)
