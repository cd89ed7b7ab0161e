"""Serpent's SIMD implementations (class simd: sse2, avx2, avx512, vec -- bitsliced across blocks, 4/8/16
blocks per register): every vector of serpent.kat and the stored checksums with gcc and clang, one n-block call
equal to n single-block calls for n that are not multiples of the vector width (the tail goes to the scalar
code), no read or write past either end of the buffers (they end at, or start after, a PROT_NONE guard page),
AddressSanitizer + UBSan, and the portable-vector version on big-endian sparc64 under QEMU.

An x86 implementation the host CPU cannot run is skipped with the reason; on a host without a container engine
the sparc64 test is skipped (as in test_containers.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from lab import native
from lab.verify import verify

from .conftest import ROOT, TOOLCHAINS

CIPHER = "serpent"
SIMD = ["sse2", "avx2", "avx512", "vec"]
# not multiples of any width (4, 8, 16 blocks per vector; 8, 16, 32 per step), the first above 32 included
COUNTS = [1, 3, 17, 1023]
EDGE_COUNTS = [1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65]


@pytest.fixture(scope="module")
def vectors(lab):
    (path,) = lab.cipher(CIPHER).impls["bitslice"].vector_files
    return path


def test_the_simd_implementations_are_listed_as_simd(lab):
    impls = lab.cipher(CIPHER).impls
    for s in SIMD:
        assert impls[s].impl_class == "simd" and impls[s].constant_time is True, s
    assert list(impls["vec"].arch) == ["any"]
    assert all(list(impls[s].arch) == ["x86_64"] for s in ("sse2", "avx2", "avx512"))


def _load(strategy: str, toolchain: str = "gcc-O3"):
    try:
        return native.load(CIPHER, strategy, toolchain=toolchain)
    except native.NativeError as e:
        if "unavailable" in str(e):
            pytest.skip(str(e))
        raise


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("strategy", SIMD)
def test_every_vector_and_the_stored_checksums(lab, vectors, strategy, toolchain):
    (r,) = verify(lab, CIPHER, vectors, strategy, toolchain)
    if r.unavailable:
        pytest.skip(r.problem)
    assert r.ok, r.line()
    assert r.records == r.passed > 10000, r.line()
    stored = dict(lab.cipher(CIPHER).impls[strategy].checksums)
    assert stored and r.checksums == stored, "checksums differ from cipher.yaml"


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("strategy", SIMD)
def test_n_blocks_equal_n_single_blocks(strategy, toolchain):
    impl = _load(strategy, toolchain)
    ref = _load("bitslice", toolchain)
    rnd = __import__("random").Random(f"{strategy}-{toolchain}")
    for key_bits in (128, 192, 256):
        key = rnd.randbytes(key_bits // 8)
        for n in COUNTS:
            pt = rnd.randbytes(16 * n)
            ct = impl.encrypt(key, pt)
            singles = b"".join(impl.encrypt(key, pt[i:i + 16]) for i in range(0, len(pt), 16))
            assert ct == singles, f"{strategy}: one {n}-block encryption differs from {n} single-block calls"
            if n > 1:  # the scalar code agrees too (for n == 1 the SIMD code hands over to it)
                assert ct[:16 * 64] == ref.encrypt(key, pt[:16 * 64]), f"{strategy}: differs from bitslice"
            back = impl.decrypt(key, ct)
            singles = b"".join(impl.decrypt(key, ct[i:i + 16]) for i in range(0, len(ct), 16))
            assert back == singles == pt, f"{strategy}: one {n}-block decryption differs or does not undo"


# Runs in a child process: an access to a guard page kills it with SIGSEGV, which the test reports.
GUARD_SCRIPT = textwrap.dedent("""
    import ctypes, mmap, sys
    from lab import native
    strategy, toolchain, counts = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    ffi = native._ffi
    c = native.load("serpent", strategy, toolchain=toolchain)
    ref = native.load("serpent", "bitslice", toolchain=toolchain)
    maps = []

    def guarded(nbytes, at_end):
        # nbytes of read-write memory with a PROT_NONE page right after its end (at_end) or right before its start
        pages = (nbytes + PAGE - 1) // PAGE
        m = mmap.mmap(-1, (pages + 2) * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        for page in (base, base + (pages + 1) * PAGE):
            if libc.mprotect(page, PAGE, 0) != 0:
                sys.exit("mprotect failed")
        maps.append(m)
        return base + (pages + 1) * PAGE - nbytes if at_end else base + PAGE

    key = bytes(range(32))
    _keep, ks = c._schedule(key, False)
    _keep2, dks = c._schedule(key, True)
    for at_end in (True, False):
        for n in counts:
            pt = bytes((7 * i + n) & 0xFF for i in range(16 * n))
            want = ref.encrypt(key, pt)
            src, dst = guarded(16 * n, at_end), guarded(16 * n, at_end)
            ctypes.memmove(src, pt, len(pt))
            c._impl.encrypt(ks, ffi.cast("uint8_t *", src), ffi.cast("uint8_t *", dst), n)
            assert ctypes.string_at(dst, 16 * n) == want, f"encrypt n={n} at_end={at_end}"
            c._impl.decrypt(dks, ffi.cast("uint8_t *", dst), ffi.cast("uint8_t *", dst), n)  # in place
            assert ctypes.string_at(dst, 16 * n) == pt, f"decrypt in place n={n} at_end={at_end}"
    print("ok", len(counts))
""")


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("strategy", SIMD)
def test_no_access_across_the_buffer_ends(strategy, toolchain):
    """Input and output end exactly at a PROT_NONE page (then start right after one); encrypt out of place,
    decrypt in place: a vector load or store past either end dies with SIGSEGV."""
    _load(strategy, toolchain)  # builds it (and skips where the CPU lacks the feature)
    p = subprocess.run([sys.executable, "-c", GUARD_SCRIPT, strategy, toolchain, ",".join(map(str, EDGE_COUNTS))],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    died = f" (killed by signal {-p.returncode}: an access across a buffer end)" if p.returncode < 0 else ""
    assert p.returncode == 0 and p.stdout.strip() == f"ok {len(EDGE_COUNTS)}", \
        f"{strategy} [{toolchain}]: exit {p.returncode}{died}\n{p.stdout}{p.stderr[-2000:]}"


def test_the_guard_page_catches_an_over_read(tmp_path):
    """The guard-page harness can fail: reading one byte past the buffer end kills the child."""
    script = GUARD_SCRIPT.replace("c._impl.encrypt(ks, ffi.cast(\"uint8_t *\", src)",
                                  "ctypes.string_at(src, 16 * n + 1); c._impl.encrypt(ks, ffi.cast(\"uint8_t *\", src)")
    assert script != GUARD_SCRIPT
    p = subprocess.run([sys.executable, "-c", script, "bitslice", "gcc-O3", "1"], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    assert p.returncode < 0, f"an over-read was not caught: exit {p.returncode}\n{p.stdout}{p.stderr[-1000:]}"


@pytest.mark.parametrize("strategy", SIMD)
def test_address_and_undefined_behaviour_sanitizers(lab, vectors, tmp_path, strategy):
    """ASan + UBSan (toolchains/sanitize.yaml): every vector and the kat program's own 37-block calls (odd count,
    unaligned, in place), without a finding."""
    env = {"ASAN_OPTIONS": f"log_path={tmp_path}/asan:halt_on_error=1", "UBSAN_OPTIONS":
           f"log_path={tmp_path}/ubsan:halt_on_error=1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        (r,) = verify(lab, CIPHER, vectors, strategy, "sanitize")
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if r.unavailable:
        pytest.skip(r.problem)
    reports = "\n".join(p.read_text(errors="replace") for p in tmp_path.glob("*san*"))
    assert r.ok and not reports, f"{r.line()}\n{reports[:3000]}"


@pytest.mark.container
def test_portable_vectors_on_big_endian_sparc64(lab, vectors):
    """vec.c (vector extensions, byte-reversed lanes on big-endian) passes every vector in the sparc64 container
    under QEMU; the x86 ones are planned "unavailable" there."""
    from lab.images import EngineError, detect_engine

    try:
        detect_engine()
    except EngineError as e:
        if os.environ.get("CIPHERLAB_REQUIRE_CONTAINERS") == "1":
            pytest.fail(f"CIPHERLAB_REQUIRE_CONTAINERS=1 but no container engine: {e}")
        pytest.skip(f"no container engine: {e}")
    (r,) = verify(lab, CIPHER, vectors, "vec", "gcc-O3", target="sparc64")
    assert r.ok and r.records == r.passed > 10000, r.line()
    (x,) = verify(lab, CIPHER, vectors, "avx2", "gcc-O3", target="sparc64")
    assert x.unavailable, x.line()
