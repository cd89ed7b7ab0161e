"""The checks every multi-block implementation must pass (Serpent's SIMD code in test_simd.py, Rijndael's AES-NI
and VAES in test_simd_aes.py, bitsliced DES/3DES and SIMD IDEA in test_simd_des_idea.py), for any block size, key
size and implementation (every vector and the stored checksums are test_kat.py's and test_sanitize.py's):

* `assert_available_exactly_with`: available() is true exactly when the CPU has the flags the code needs;
* `assert_n_blocks_equal_singles`: one n-block call equals n single-block calls and independent code, and
  decryption undoes it (in one call and block by block);
* `assert_clean_at_guard_pages`: input and output end exactly at (or start right after) a PROT_NONE guard page;
  encrypt out of place, decrypt in place, in a child process, so that a read or write across either end kills
  the child (SIGSEGV) and not the test run;
* `assert_the_guard_page_faults`: the control, the same set-up kills a child that reads one byte past the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lab import native

from .conftest import ROOT


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def load(cipher: str, impl: str, toolchain: str = "gcc-O3", lab=None) -> native.NativeCipher:
    """The implementation, built; the test is skipped where it is unavailable (the CPU lacks its instructions)."""
    try:
        return native.load(cipher, impl, toolchain=toolchain, lab=lab)
    except native.NativeError as e:
        if "unavailable" in str(e):
            pytest.skip(str(e))
        raise


def assert_available_exactly_with(lab, cipher: str, impl: str, flags: set[str]):
    """The implementation loads exactly when /proc/cpuinfo lists every one of `flags`; otherwise it says it is
    unavailable."""
    want = flags <= cpu_flags()
    try:
        native.load(cipher, impl, lab=lab)
        got = True
    except native.NativeError as e:
        assert "unavailable" in str(e), str(e)
        got = False
    assert got == want, f"cpu flags {sorted(flags)}: {want}, {cipher}/{impl} available(): {got}"


def assert_n_blocks_equal_singles(c: native.NativeCipher, ref: native.NativeCipher, key: bytes, data: bytes):
    """One call on `data` (n blocks) equals n single-block calls and `ref` (independent code); one decryption
    call gives `data` back, and so do n single-block decryptions."""
    bs, n = c.block_size, len(data) // c.block_size
    what = f"{c.name} [{c.toolchain}] {len(key) * 8}-bit key {key.hex()}"
    ct = c.encrypt(key, data)
    singles = b"".join(c.encrypt(key, data[i:i + bs]) for i in range(0, len(data), bs))
    assert ct == singles, f"{what}: one {n}-block encryption != {n} single-block encryptions"
    assert ct == ref.encrypt(key, data), f"{what}, {n} blocks: != {ref.name}"
    pt = c.decrypt(key, ct)
    assert pt == data, f"{what}: one {n}-block decryption does not undo the encryption"
    singles = b"".join(c.decrypt(key, ct[i:i + bs]) for i in range(0, len(ct), bs))
    assert singles == data, f"{what}: {n} single-block decryptions do not undo the encryption"


# The child: argv[1] is a JSON object {cipher, impl, toolchain, ref, wheres, keys (hex), counts}. It prints
# "ok N" after N checked (where, key, count) triples; "overread" places the buffers as "end" does, then reads the
# byte after the input's end, which must kill it.
GUARD_SCRIPT = textwrap.dedent("""
    import ctypes, json, mmap, sys
    from lab import native
    from lab.native import _ffi

    a = json.loads(sys.argv[1])
    c = native.load(a["cipher"], a["impl"], toolchain=a["toolchain"])
    ref = native.load(a["cipher"], a["ref"], toolchain=a["toolchain"]) if a["ref"] else c
    bs = c.block_size
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = mmap.PAGESIZE

    def guarded(nbytes, where):
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

    ptr = lambda addr: _ffi.cast("uint8_t *", addr)
    checked = 0
    for where in a["wheres"]:
        for key in map(bytes.fromhex, a["keys"]):
            _keep, eks = c._schedule(key, False)
            _keep2, dks = c._schedule(key, True)
            for n in a["counts"]:
                data = bytes((7 * i + n) & 0xFF for i in range(bs * n))
                want = ref.encrypt(key, data)
                src, dst = guarded(bs * n, where), guarded(bs * n, where)
                ctypes.memmove(src, data, len(data))
                if where == "overread":  # the control: one byte past the end must kill the process
                    ctypes.string_at(src + bs * n, 1)
                    sys.exit("read past the guard did not fault")
                c._impl.encrypt(eks, ptr(src), ptr(dst), n)
                assert ctypes.string_at(dst, bs * n) == want, (where, key.hex(), n, "out of place")
                c._impl.decrypt(dks, ptr(dst), ptr(dst), n)  # in place
                assert ctypes.string_at(dst, bs * n) == data, (where, key.hex(), n, "in place")
                checked += 1
    print("ok", checked)
""")


def run_at_guard_pages(cipher: str, impl: str, toolchain: str, wheres, keys, counts, ref: str | None = None):
    """The child process on buffers at guard pages ("end", "start" or "overread" in `wheres`), for every key and
    block count; the expected ciphertext comes from `ref` (default: the implementation itself, through its own
    buffers)."""
    arg = json.dumps({"cipher": cipher, "impl": impl, "toolchain": toolchain, "ref": ref, "wheres": list(wheres),
                      "keys": [k.hex() for k in keys], "counts": list(counts)})
    return subprocess.run([sys.executable, "-c", GUARD_SCRIPT, arg], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})


def assert_clean_at_guard_pages(cipher: str, impl: str, toolchain: str, wheres, keys, counts,
                                ref: str | None = None):
    r = run_at_guard_pages(cipher, impl, toolchain, wheres, keys, counts, ref)
    died = f" (killed by signal {-r.returncode}: an access across a buffer end)" if r.returncode < 0 else ""
    want = f"ok {len(wheres) * len(keys) * len(counts)}"
    assert r.returncode == 0 and r.stdout.strip() == want, \
        f"{cipher}/{impl} [{toolchain}] {list(wheres)}: exit {r.returncode}{died}\n{r.stdout}{r.stderr[-2000:]}"


def assert_the_guard_page_faults(cipher: str, impl: str, toolchain: str, key: bytes):
    """The control: the same set-up kills a process that reads one byte past a buffer's end."""
    r = run_at_guard_pages(cipher, impl, toolchain, ["overread"], [key], [3])
    assert r.returncode == -signal.SIGSEGV, \
        f"an over-read was not caught: exit {r.returncode}\n{r.stdout}{r.stderr[-1000:]}"
