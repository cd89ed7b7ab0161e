"""Python access to the C implementations (cffi, ABI mode) for experiments and tests.

    >>> from lab import native
    >>> aes = native.load("rijndael")                # default implementation, gcc-O3
    >>> ct = aes.encrypt(bytes(16), bytes(16))       # ECB over whole blocks

Each implementation is built into a shared library by the one build plan
(lab/buildplan.py, program "native"), rebuilt when a source changes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from cffi import FFI

from .config import Impl, Lab

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
    void (*release)(void *ks);
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
            self._release(ks)
            raise ValueError(f"{self.name}: key setup refused the key (code {rc})")
        return raw, ks

    def _run(self, key: bytes, data: bytes, decrypt: bool) -> bytes:
        if len(data) % self.block_size:
            raise ValueError(f"{self.name}: data length {len(data)} is not a multiple of {self.block_size}")
        _keep, ks = self._schedule(bytes(key), decrypt)
        out = _ffi.new("uint8_t[]", max(len(data), 1))
        fn = self._impl.decrypt if decrypt else self._impl.encrypt
        try:
            fn(ks, bytes(data), out, len(data) // self.block_size)
        finally:
            self._release(ks)
        return bytes(_ffi.buffer(out, len(data)))

    def _release(self, ks) -> None:
        """What a peer library allocated for the schedule (cl_impl.release; NULL for ours)."""
        if self._impl.release != _ffi.NULL:
            self._impl.release(ks)

    def encrypt(self, key: bytes, data: bytes) -> bytes:
        return self._run(key, data, False)

    def key_schedule(self, key: bytes, decrypt: bool = False) -> bytes:
        """The ks_bytes the implementation's set_encrypt_key (or set_decrypt_key) writes for key,
        e.g. to check round keys against worked values of a specification."""
        _keep, ks = self._schedule(bytes(key), decrypt)
        try:
            return bytes(_ffi.buffer(ks, self.key_schedule_bytes))
        finally:
            self._release(ks)

    def decrypt(self, key: bytes, data: bytes) -> bytes:
        return self._run(key, data, True)


def _build_library(lab: Lab, impl: Impl, toolchain: str) -> Path:
    """The implementation as a shared library, built by the one build plan (program "native", host only)."""
    from .backends.host import HostBackend
    from .build import Builder

    r = Builder(lab.root, lab.root / "build", HostBackend(lab.root)).build_one(
        impl, lab.toolchain(toolchain), lab.target("host"), "native")
    if r.missing:
        raise NativeError(f"compiler {r.missing} not found (toolchain {toolchain})")
    if not r.ok:
        raise NativeError(f"building {impl.id} with {toolchain} failed: {r.failure}\n{r.log[-2000:]}")
    return r.program


@lru_cache(maxsize=None)
def _open(path: str):
    return _ffi.dlopen(path)


def load(cipher: str, impl: str | None = None, toolchain: str = "gcc-O3", lab: Lab | None = None) -> NativeCipher:
    """The implementation `impl` (default: the cipher's default) of `cipher`, built with `toolchain`."""
    lab = lab or Lab()
    c = lab.cipher(cipher)
    im = c.impl(impl or c.default_impl)
    lib = _open(str(_build_library(lab, im, toolchain)))
    ptr = lib.cl_find_impl(im.id.encode())
    if ptr == _ffi.NULL:
        raise NativeError(f"{im.id} is not in the library")
    if not lib.cl_impl_available(ptr):
        raise NativeError(f"{im.id} is unavailable on this CPU")
    return NativeCipher(lib, ptr, im.id, toolchain)


def implementations(cipher: str, lab: Lab | None = None, peers: bool = False) -> list[str]:
    lab = lab or Lab()
    return [i.name for i in lab.cipher(cipher).impls.values() if peers or i.impl_class != "peer"]
