"""The bitsliced DES and 3DES strategies (c_src/ciphers/des/bitslice*.c, c_src/ciphers/3des/bitslice*.c) and the
SIMD IDEA strategies (c_src/ciphers/idea/sse2.c, avx2.c): every vector and the stored checksums through the kat gate
(gcc, clang, ASan+UBSan), one n-block call against n single-block calls and against the portable default for counts
around the group sizes, IDEA's zero fix-up, buffers that end (or begin) at a guard page, the CPU check, and the
generated S-box circuits being the ones gen_bitslice.py writes.

The guard-page script follows tests/test_simd_aes.py (its script there is written for Rijndael's 16-byte blocks and
key sizes, so it is not importable as is); this one takes the cipher, block and key size as arguments."""

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

ROOT = Path(__file__).resolve().parent.parent

# (cipher, implementation, CPU flags it needs, key bits, the portable default to compare with)
IMPLS = [
    ("des", "bitslice64", set(), 64, "spbox"),
    ("des", "bitslice_avx2", {"avx2"}, 64, "spbox"),
    ("des", "bitslice_avx512", {"avx512f"}, 64, "spbox"),
    ("3des", "bitslice64", set(), 192, "ede"),
    ("3des", "bitslice_avx2", {"avx2"}, 192, "ede"),
    ("3des", "bitslice_avx512", {"avx512f"}, 192, "ede"),
    ("idea", "sse2", {"sse2"}, 128, "ref"),
    ("idea", "avx2", {"avx2"}, 128, "ref"),
]
IDS = [f"{c}/{i}" for c, i, *_ in IMPLS]
TOOLCHAINS = ["gcc-O3", "clang-O3"]
# 1, 3, 17, 1023 (issue 27); the group sizes 8, 16 (IDEA), 64, 256, 512 (bitsliced DES) and their neighbours; the
# thresholds at which a bitsliced rest is run as one padded group (BS_PAD_MIN: 16, 22, 24, 26, 32, 44) and their
# neighbours
COUNTS = [1, 3, 17, 1023, 2, 7, 8, 9, 15, 16, 21, 22, 23, 24, 25, 26, 27, 31, 32, 33, 43, 44, 45, 63, 64, 65,
          127, 128, 129, 255, 256, 257, 511, 512, 513, 600, 1024, 1100]


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def load(cipher: str, impl: str, toolchain: str, lab):
    try:
        return native.load(cipher, impl, toolchain=toolchain, lab=lab)
    except native.NativeError as e:
        if "unavailable" in str(e):
            pytest.skip(str(e))
        raise


@pytest.mark.parametrize("toolchain", [*TOOLCHAINS, "sanitize"])
@pytest.mark.parametrize("cipher,impl,_flags,_bits,_ref", IMPLS, ids=IDS)
def test_every_vector_and_the_stored_checksums(lab, cipher, impl, _flags, _bits, _ref, toolchain):
    im = lab.cipher(cipher).impl(impl)
    stored = dict(im.checksums)
    assert stored and im.vector_files
    for f in im.vector_files:
        (r,) = verify(lab, cipher, f, impl=impl, toolchain=toolchain)
        if r.unavailable:
            pytest.skip(r.problem)
        assert r.problem is None, r.line()
        assert r.records > 0 and r.passed == r.records and r.failed == 0, r.line()
        assert r.checksums == stored, r.line()
        assert r.ok, r.line()


@pytest.mark.parametrize("cipher,impl,flags,_bits,_ref", IMPLS, ids=IDS)
def test_available_exactly_when_the_cpu_has_the_instructions(lab, cipher, impl, flags, _bits, _ref):
    want = flags <= cpu_flags()
    try:
        native.load(cipher, impl, lab=lab)
        got = True
    except native.NativeError as e:
        assert "unavailable" in str(e), str(e)
        got = False
    assert got == want, f"cpu flags {sorted(flags)}: {want}, {cipher}/{impl} available(): {got}"


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,impl,_flags,bits,ref", IMPLS, ids=IDS)
def test_n_blocks_equal_n_single_blocks(lab, cipher, impl, _flags, bits, ref, toolchain):
    c = load(cipher, impl, toolchain, lab)
    portable = native.load(cipher, ref, toolchain=toolchain, lab=lab)  # the portable default, independent code
    stream = hashlib.shake_256(f"{cipher}/{impl}/{toolchain}".encode()).digest(8 * (sum(COUNTS) + 8))
    pos = 0
    for keyno in range(2):
        key = hashlib.sha256(f"{impl}{keyno}".encode()).digest()[: bits // 8]
        for n in COUNTS:
            data = stream[pos:pos + 8 * n]
            pos = (pos + 8 * n) % (len(stream) - 8 * 1100)
            ct = c.encrypt(key, data)
            singles = b"".join(c.encrypt(key, data[i:i + 8]) for i in range(0, len(data), 8))
            assert ct == singles, f"{cipher}/{impl} [{toolchain}] key {keyno}: one {n}-block encryption != {n} single"
            assert ct == portable.encrypt(key, data), f"{cipher}/{impl} [{toolchain}] {n} blocks: != {ref}"
            pt = c.decrypt(key, ct)
            assert pt == data, f"{cipher}/{impl} [{toolchain}] key {keyno}: {n}-block decryption"
            assert pt == b"".join(c.decrypt(key, ct[i:i + 8]) for i in range(0, len(ct), 8))


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("impl", ["sse2", "avx2"])
def test_idea_zero_fix_up(lab, impl, toolchain):
    """Multiplication by 0 (= 2^16) in a lane: zero subkeys (the all-zero key, keys with zero words) and blocks
    whose X1/X4 are 0, so that the first multiplications see a zero factor on either side."""
    c = load("idea", impl, toolchain, lab)
    ref = native.load("idea", "ref", toolchain=toolchain, lab=lab)
    rnd = hashlib.shake_256(f"zero/{impl}/{toolchain}".encode()).digest(4096)
    blocks = []
    for i in range(64):
        b = rnd[8 * i:8 * i + 8]
        blocks.append(bytes(8) if i % 3 == 0 else bytes(2) + b[2:6] + bytes(2) if i % 3 == 1 else b)
    data = b"".join(blocks)
    for key in (bytes(16), bytes(8) + rnd[1000:1008], bytes(2) + rnd[2000:2014], rnd[3000:3016]):
        ct = c.encrypt(key, data)
        assert ct == ref.encrypt(key, data), f"idea/{impl} [{toolchain}] key {key.hex()}"
        assert c.decrypt(key, ct) == data


# Run in a child process: a read or write across a buffer's end kills it (SIGSEGV) instead of the test run.
GUARD_SCRIPT = textwrap.dedent("""
    import ctypes, mmap, sys
    from lab import native
    from lab.native import _ffi

    cipher, impl, toolchain, where = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    key_bytes, counts = int(sys.argv[5]), [int(x) for x in sys.argv[6].split(",")]
    c = native.load(cipher, impl, toolchain=toolchain)
    bs = c.block_size
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
    key = bytes(range(1, key_bytes + 1))
    for n in counts:
        data = bytes((7 * i + n) & 0xFF for i in range(bs * n))
        want = c.encrypt(key, data)
        src, dst = guarded(bs * n), guarded(bs * n)
        ctypes.memmove(src, data, len(data))
        if where == "overread":  # the control: one byte past the end must kill the process
            ctypes.string_at(src + bs * n, 1)
            sys.exit("read past the guard did not fault")
        _keep, eks = c._schedule(key, False)
        _keep2, dks = c._schedule(key, True)
        c._impl.encrypt(eks, ptr(src), ptr(dst), n)
        assert ctypes.string_at(dst, bs * n) == want, (n, "out of place")
        c._impl.decrypt(dks, ptr(dst), ptr(dst), n)  # in place
        assert ctypes.string_at(dst, bs * n) == data, (n, "in place")
    print("ok", cipher, impl, toolchain, where, len(counts))
""")
GUARD_COUNTS = [1, 2, 3, 7, 8, 9, 15, 16, 17, 22, 24, 26, 31, 32, 33, 44, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                511, 512, 513, 1023]


def run_guard(lab, cipher, impl, toolchain, where, key_bytes, counts):
    return subprocess.run([sys.executable, "-c", GUARD_SCRIPT, cipher, impl, toolchain, where, str(key_bytes),
                           ",".join(map(str, counts))],
                          capture_output=True, text=True, cwd=lab.root, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(lab.root)})


@pytest.mark.parametrize("where", ["end", "start"])
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("cipher,impl,_flags,bits,_ref", IMPLS, ids=IDS)
def test_buffers_at_a_guard_page(lab, cipher, impl, _flags, bits, _ref, toolchain, where):
    load(cipher, impl, toolchain, lab)  # builds the library (and skips where the CPU lacks the instructions)
    r = run_guard(lab, cipher, impl, toolchain, where, bits // 8, GUARD_COUNTS)
    assert r.returncode == 0, f"exit {r.returncode} (a fault is {-signal.SIGSEGV}): {r.stderr[-2000:]}"
    assert r.stdout.startswith("ok"), r.stdout


def test_the_guard_page_faults(lab):
    """The control: the same set-up kills a process that reads one byte past a buffer's end."""
    load("des", "bitslice64", "gcc-O3", lab)
    r = run_guard(lab, "des", "bitslice64", "gcc-O3", "overread", 8, [3])
    assert r.returncode == -signal.SIGSEGV, f"exit {r.returncode}: {r.stdout} {r.stderr[-500:]}"


def test_the_sbox_circuits_are_the_generated_ones():
    """gen_bitslice.py re-derives every circuit from the FIPS 46-3 tables, checks it on all 64 inputs, and finds
    des_bitslice_sboxes.h equal to what it would write."""
    r = subprocess.run([sys.executable, str(ROOT / "c_src/ciphers/des/gen_bitslice.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "up to date" in r.stdout
