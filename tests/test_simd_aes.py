"""The AES-NI and VAES strategies of Rijndael (c_src/ciphers/rijndael/aesni.c, vaes.c): every vector and the
stored checksums through the kat gate, one n-block call against n single-block calls for counts that are not
multiples of the vector widths, buffers that end (or begin) at a guard page, and the CPU check."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lab import native
from lab.verify import verify

IMPLS = ["aesni", "vaes"]
TOOLCHAINS = ["gcc-O3", "clang-O3"]
# 1, 3, 17, 1023 (issue 27) and the edges of vaes's groups (4 per ZMM, 32 per loop; 16, 8, 4 groups; 0-3 on XMM)
COUNTS = [1, 3, 17, 1023, 2, 4, 5, 7, 8, 9, 15, 16, 31, 32, 33, 60, 63, 64, 65]


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def load(impl: str, toolchain: str, lab):
    try:
        return native.load("rijndael", impl, toolchain=toolchain, lab=lab)
    except native.NativeError as e:
        if "unavailable" in str(e):
            pytest.skip(str(e))
        raise


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
            ct = c.encrypt(key, data)
            singles = b"".join(c.encrypt(key, data[i:i + 16]) for i in range(0, len(data), 16))
            assert ct == singles, f"{impl} [{toolchain}] {bits}-bit key: one {n}-block encryption != {n} single"
            assert ct == ref.encrypt(key, data), f"{impl} [{toolchain}] {bits}-bit key, {n} blocks: != ttable"
            pt = c.decrypt(key, ct)
            assert pt == data, f"{impl} [{toolchain}] {bits}-bit key: {n}-block decryption"
            assert pt == b"".join(c.decrypt(key, ct[i:i + 16]) for i in range(0, len(ct), 16))


# Run in a child process: a read or write across a buffer's end kills it (SIGSEGV) instead of the test run.
GUARD_SCRIPT = textwrap.dedent("""
    import ctypes, mmap, sys
    from lab import native
    from lab.native import _ffi

    impl, toolchain, where = sys.argv[1], sys.argv[2], sys.argv[3]
    counts = [int(x) for x in sys.argv[4].split(",")]
    c = native.load("rijndael", impl, toolchain=toolchain)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = mmap.PAGESIZE

    def guarded(nbytes):
        # [PROT_NONE page][data pages][PROT_NONE page]; the buffer touches one of the guards exactly
        pages = (nbytes + page - 1) // page
        base = libc.mmap(None, (pages + 2) * page, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if base is None or base == ctypes.c_void_p(-1).value:
            sys.exit("mmap failed")
        for g in (base, base + (pages + 1) * page):
            if libc.mprotect(g, page, 0) != 0:
                sys.exit("mprotect failed")
        first = base + page
        return first if where == "start" else first + pages * page - nbytes

    ptr = lambda a: _ffi.cast("uint8_t *", a)
    for bits in (128, 192, 256):
        key = bytes(range(bits // 8))
        for n in counts:
            data = bytes((7 * i + n) & 0xFF for i in range(16 * n))
            want = c.encrypt(key, data)
            src, dst = guarded(16 * n), guarded(16 * n)
            ctypes.memmove(src, data, len(data))
            if where == "overread":  # the control: one byte past the end must kill the process
                ctypes.string_at(src + 16 * n, 1)
                sys.exit("read past the guard did not fault")
            _keep, eks = c._schedule(key, False)
            _keep2, dks = c._schedule(key, True)
            c._impl.encrypt(eks, ptr(src), ptr(dst), n)
            assert ctypes.string_at(dst, 16 * n) == want, (bits, n, "out of place")
            c._impl.decrypt(dks, ptr(dst), ptr(dst), n)  # in place
            assert ctypes.string_at(dst, 16 * n) == data, (bits, n, "in place")
    print("ok", impl, toolchain, where, len(counts))
""")


def run_guard(lab, impl, toolchain, where, counts):
    return subprocess.run([sys.executable, "-c", GUARD_SCRIPT, impl, toolchain, where, ",".join(map(str, counts))],
                          capture_output=True, text=True, cwd=lab.root, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(lab.root)})


@pytest.mark.parametrize("where", ["end", "start"])
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("impl", IMPLS)
def test_buffers_at_a_guard_page(lab, impl, toolchain, where):
    load(impl, toolchain, lab)  # builds the library (and skips where the CPU lacks the instructions)
    r = run_guard(lab, impl, toolchain, where, [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 256, 1023])
    assert r.returncode == 0, f"exit {r.returncode} (a fault is {-signal.SIGSEGV}): {r.stderr[-2000:]}"
    assert r.stdout.startswith("ok"), r.stdout


def test_the_guard_page_faults(lab):
    """The control: the same set-up kills a process that reads one byte past a buffer's end."""
    load("aesni", "gcc-O3", lab)
    r = run_guard(lab, "aesni", "gcc-O3", "overread", [3])
    assert r.returncode == -signal.SIGSEGV, f"exit {r.returncode}: {r.stdout} {r.stderr[-500:]}"
