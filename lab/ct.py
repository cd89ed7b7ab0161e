"""Constant-time checks of one built cell: a deterministic trace check under QEMU, and dudect on the host.

**Trace check** (:func:`check`).  The ``ct`` program (c_src/harness/ct.c,
static, marker counter, ``-g``) runs every op on several secret inputs, one
marked region per input: key setup for encryption and for decryption of
``inputs`` random keys, encryption and decryption of ``inputs`` random blocks
under one key, per key size.  QEMU runs it with the lab's plugin in
``mode=ct`` (c_src/qemu_plugin/icount.c), which hashes each region's executed
instruction addresses (control flow) and memory accesses (address, size,
load/store).  The regions of one op must hash alike; where they do not, the
first input that differs from input 0 is run again with both regions traced,
and the first divergence of the two event streams is located: the branch
that went another way, or the instruction whose access address depends on
the secret, named by ``addr2line`` (the target's binutils, run through the
backend).  The inputs come from a fixed seed, so a binary gets the same
verdict every time.  What it cannot see: instructions whose latency depends
on their operands (multiplication, division, variable rotations on some
CPUs); cache and predictor effects beyond the addresses themselves.

**dudect** (:func:`dudect`).  The ``dudect`` program (the same ct.c with the
target's real counter) times one call per measurement, the class of each
(fixed input: all zero; or random) drawn at random and interleaved; Welch's
t-test on the two classes, uncropped and cropped at 100 percentiles as
dudect does; the largest |t| is the statistic, and |t| > 4.5 a leak.  A
second opinion on real hardware (host targets only), noisy by nature.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np

from . import protocol
from .backends import Backend, Completed, Icount
from .buildplan import is_native
from .config import Target
from .elf import MarkerError, marker_addresses
from .icount import no_plugin
from .models import (DUDECT_THRESHOLD, INPUTS, CtVerdict, Divergence, DudectOp, DudectVerdict,  # noqa: F401
                     OpVerdict)

DUDECT_MEASUREMENTS = 20000
DUDECT_PERCENTILES = 100
OPS = ("ekey", "dkey", "encrypt", "decrypt")
INSN, LOAD, STORE = 0, 1, 2


class CtError(RuntimeError):
    pass


# ------------------------------------------------------------------ running
def _run(backend: Backend, target: Target, program: Path, args: list[str], *, timeout: float, work_dir: Path,
         traced: tuple[int, ...] = (), env: dict | None = None
         ) -> tuple[Completed, list[tuple[int, str, str, int]], dict[int, np.ndarray]]:
    """One run of the ct program under QEMU + the plugin in mode=ct: what it printed, the plugin's line per
    region (instructions, control hash, memory hash, accesses) and the event streams of the traced regions."""
    try:
        begin, end = marker_addresses(program)
    except MarkerError as e:
        raise CtError(str(e)) from None
    plugin = backend.plugin_path(target)
    if not plugin:
        raise CtError(no_plugin(target))
    work_dir.mkdir(parents=True, exist_ok=True)
    out = work_dir / f"{target.name}-{uuid.uuid4().hex}.ct"
    if "," in str(out):
        raise CtError(f"QEMU splits plugin arguments at commas: {out}")
    plugin_args = ",".join([plugin, "mode=ct", *(f"trace={r}" for r in traced)])
    c = backend.run_program(program, args, target=target, timeout=timeout, icount=Icount(begin, end, out),
                            env={**(env or {}), "CIPHERLAB_QEMU_PLUGIN": plugin_args})
    regions: list[tuple[int, str, str, int]] = []
    traces: dict[int, np.ndarray] = {}
    try:
        for line in out.read_text().splitlines():
            n, ctrl, mem, acc = line.split()
            regions.append((int(n), ctrl, mem, int(acc)))
        for r in traced:
            p = Path(f"{out}.trace{r}")
            traces[r] = np.fromfile(p, dtype=np.uint64).reshape(-1, 2) if p.exists() else np.zeros((0, 2), np.uint64)
    except (OSError, ValueError):
        regions = []
    finally:
        out.unlink(missing_ok=True)
        for r in traced:
            Path(f"{out}.trace{r}").unlink(missing_ok=True)
    return c, regions, traces


def _key_bits_args(key_sizes: tuple[int, ...]) -> list[str]:
    """--key-bits for the ct and dudect modes (the program leaves out sizes the implementation lacks)."""
    return ["--key-bits", ",".join(map(str, key_sizes))] if key_sizes else []


def _failure(c: Completed, records: list[protocol.Record]) -> str:
    """Why a run failed: its exit, and the program's own error line when it printed one."""
    err = next(iter(protocol.of(records, protocol.ErrorRecord)), None)
    return c.describe_failure() + (f": {err.line()}" if err else "")


def _records(c: Completed, program: str) -> list[protocol.Record]:
    """The program's typed records; an unreadable one makes the check unavailable with the protocol's message."""
    try:
        return protocol.read(c, program)
    except protocol.ProtocolError as e:
        raise CtError(str(e)) from None


def first_divergence(a: np.ndarray, b: np.ndarray) -> tuple[str, int, int, str]:
    """(kind, event index, instruction address, detail) of the first difference of two event streams."""
    n = min(len(a), len(b))
    diff = np.nonzero(np.any(a[:n] != b[:n], axis=1))[0]
    k = int(diff[0]) if len(diff) else n
    if k == n and len(a) == len(b):
        raise CtError("the two traced regions are identical although their hashes differ")
    insns = np.nonzero(a[:k, 1] == INSN)[0]
    last = int(a[insns[-1], 0]) if len(insns) else 0     # the last instruction both executed
    if k == n:
        return "branch", k, last, "one input's region ends earlier"
    ta, tb = int(a[k, 1]) & 0xff, int(b[k, 1]) & 0xff
    if ta == INSN and tb == INSN:
        return "branch", k, last, f"next instruction {int(a[k, 0]):#x} vs {int(b[k, 0]):#x}"
    if ta == tb:
        size = 1 << (int(a[k, 1]) >> 8)
        what = "load" if ta == LOAD else "store"
        return "memory", k, last, f"{what} of {size} byte(s) at {int(a[k, 0]):#x} vs {int(b[k, 0]):#x}"
    return "branch", k, last, "one input makes a memory access where the other does not"


def addr2line_for(target: Target) -> str:
    return "addr2line" if is_native(target) else f"{target.triple}-addr2line"


def locate(backend: Backend, target: Target, program: Path, address: int) -> tuple[str, str, str]:
    """(innermost function, its file:line, the enclosing function symbol) of an address, by addr2line."""
    c = backend.exec([addr2line_for(target), "-f", "-C", "-i", "-e", str(program), f"{address:#x}"], target=target,
                     timeout=60)
    lines = [ln.strip() for ln in c.stdout.splitlines() if ln.strip()]
    if c.returncode != 0 or len(lines) < 2:
        return "", "", ""
    fn, loc = lines[0], lines[1].split(" (discriminator")[0]
    if loc.startswith("??"):
        loc = ""
    elif loc.startswith("/"):  # an absolute path loses its machine part: relative to the repository
        loc = _repository_relative(loc)
    return ("" if fn == "??" else fn), loc, ("" if lines[-2] == "??" else lines[-2])


def _repository_relative(path: str) -> str:
    root = str(Path(__file__).resolve().parent.parent) + "/"
    if path.startswith(root):
        return path[len(root):]
    for top in ("/c_src/", "/tests/fixtures/"):  # compiled where the repository is mounted elsewhere
        if top in path:
            return top[1:] + path.split(top, 1)[1]
    return "/".join(path.split("/")[-3:])


# ------------------------------------------------------------------- checks
def check(backend: Backend, target: Target, program: Path, *, timeout: float, work_dir: Path, impl: str,
          key_sizes: tuple[int, ...] = (), inputs: int = INPUTS, dudect_program: Path | None = None,
          dudect_measurements: int = DUDECT_MEASUREMENTS, env: dict | None = None) -> CtVerdict:
    """The constant-time verdict of one built cell.

    program: the cell's ``ct`` build; impl: its id (cipher/strategy); key_sizes: () for every size it
    supports; work_dir: a folder the backend's programs can write (the plugin's output goes there);
    dudect_program: the cell's ``dudect`` build, run when the target is this machine's own CPU; env: the
    implementation's environment (a peer's OPENSSL_ia32cap mask, ...), as every program of the cell gets it.
    Never raises for a cell's failure: a crash or a missing plugin is "unavailable" with the reason.
    """
    args = ["--impl", impl, "--inputs", str(inputs)] + _key_bits_args(key_sizes)
    dud = dudect(backend, target, dudect_program, impl=impl, key_sizes=key_sizes, env=env,
                 timeout=timeout, measurements=dudect_measurements) if dudect_program else None
    try:
        c, regions, _ = _run(backend, target, program, args, timeout=timeout, work_dir=work_dir, env=env)
    except CtError as e:
        return CtVerdict(verdict="unavailable", reason=str(e), inputs=inputs, dudect=dud)
    try:
        recs = _records(c, "ct")
    except CtError as e:
        return CtVerdict(verdict="unavailable", reason=str(e), inputs=inputs, dudect=dud)
    if protocol.of(recs, protocol.UnavailableRecord):
        return CtVerdict(verdict="unavailable", reason="the implementation is unavailable on this CPU",
                         inputs=inputs, dudect=dud)
    meta = protocol.of(recs, protocol.CtRegionRecord)
    if not c.ok or not meta or len(meta) != len(regions):
        why = _failure(c, recs) if not c.ok else \
            f"{len(regions)} marked regions for {len(meta)} inputs: {(c.stderr or '').strip()[-200:]}"
        if "SIGILL" in why:
            why += (f" (an instruction {target.qemu or 'qemu-' + target.arch} does not emulate: QEMU has no AVX-512, "
                    "which -march=native emits on a CPU that has it)")
        return CtVerdict(verdict="unavailable", reason=f"the trace run failed: {why}", inputs=inputs, dudect=dud)
    groups: dict[tuple[int, str], list[int]] = {}
    for r in meta:
        groups.setdefault((r.key_size, r.op), []).append(r.region)
    ops = []
    for (kb, op), idx in groups.items():
        hs = [regions[i][1:3] for i in idx]
        if len(set(hs)) == 1:
            ops.append(OpVerdict(op=op, key_size=kb, verdict="clean", inputs=len(idx)))
            continue
        j = next(j for j, h in enumerate(hs) if h != hs[0])
        div = _divergence(backend, target, program, args, timeout, work_dir, idx[0], idx[j], (0, j), env=env)
        ops.append(OpVerdict(op=op, key_size=kb, verdict="leak", inputs=len(idx),
                             control_differs=len({h[0] for h in hs}) > 1, memory_differs=len({h[1] for h in hs}) > 1,
                             distinct=len(set(hs)), divergence=div))
    leaks = [o for o in ops if o.verdict == "leak"]
    reason = ""
    if leaks:
        first = leaks[0]
        reason = f"{len(leaks)} of {len(ops)} ops leak; {first.line()}"
    return CtVerdict(verdict="leak" if leaks else "clean", reason=reason, inputs=inputs, ops=tuple(ops), dudect=dud)


def _divergence(backend, target, program, args, timeout, work_dir, ra: int, rb: int,
                inputs: tuple[int, int], env: dict | None = None) -> Divergence | None:
    try:
        c, _, traces = _run(backend, target, program, args, timeout=timeout * 4, work_dir=work_dir, traced=(ra, rb),
                             env=env)
        kind, k, addr, detail = first_divergence(traces[ra], traces[rb])
    except (CtError, KeyError):
        return None
    fn, loc, sym = locate(backend, target, program, addr)
    return Divergence(kind=kind, address=f"{addr:#x}", function=fn, symbol=sym, location=loc, event=k,
                      inputs=inputs, detail=detail)


def welch_t(values: np.ndarray, classes: np.ndarray, percentiles: int = DUDECT_PERCENTILES) -> float:
    """dudect's statistic: the largest |Welch t| of fixed (0) against random (1) over the uncropped
    measurements and those below each of `percentiles` thresholds (1 - 0.5^(10 (i+1)/percentiles))."""
    import warnings

    from scipy.stats import ttest_ind

    warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
    best = 0.0
    cuts = [np.inf] + [float(np.percentile(values, 100 * (1 - 0.5 ** (10 * (i + 1) / percentiles))))
                       for i in range(percentiles)]
    for cut in cuts:
        keep = values < cut if np.isfinite(cut) else np.ones(len(values), bool)
        a, b = values[keep & (classes == 0)], values[keep & (classes == 1)]
        if len(a) < 10 or len(b) < 10 or (np.var(a) == 0 and np.var(b) == 0):
            continue
        t = abs(float(ttest_ind(a, b, equal_var=False).statistic))
        if np.isfinite(t):
            best = max(best, t)
    return best


def dudect(backend: Backend, target: Target, program: Path | None, *, impl: str, key_sizes: tuple[int, ...] = (),
           timeout: float, measurements: int = DUDECT_MEASUREMENTS, env: dict | None = None) -> DudectVerdict:
    """dudect on the machine's own CPU (fixed-vs-random, interleaved at random; Welch t with cropping), at the
    first of key_sizes the implementation supports (its first size when none are given)."""
    if program is None or not is_native(target):
        return DudectVerdict(verdict="unavailable", reason=f"{target.name} is emulated: timing measures QEMU")
    args = ["--impl", impl, "--dudect", str(measurements)] + _key_bits_args(key_sizes)
    c = backend.run_program(program, args, target=target, timeout=timeout, env=env)
    try:
        every = _records(c, "dudect")
    except CtError as e:
        return DudectVerdict(verdict="unavailable", reason=f"the dudect run failed: {e}")
    recs = protocol.of(every, protocol.DudectRecord)
    if not c.ok or not recs:
        return DudectVerdict(verdict="unavailable", reason=f"the dudect run failed: {_failure(c, every)}")
    ops = []
    for r in recs:
        d = np.asarray(r.deltas, dtype=float)
        cls = np.frombuffer(r.classes.encode(), dtype=np.uint8) - ord("0")
        warm = max(1, len(d) // 100)  # the first measurements warm caches and predictors: dropped
        d, cls = d[warm:], cls[warm:len(d) + warm]
        t = welch_t(d, cls)
        ops.append(DudectOp(op=r.op, key_size=r.key_size, measurements=len(d), t=round(t, 3),
                            verdict="leak" if t > DUDECT_THRESHOLD else "clean"))
    leak = any(o.verdict == "leak" for o in ops)
    return DudectVerdict(verdict="leak" if leak else "clean", counter=recs[0].counter,
                         ops=tuple(ops))


__all__ = ["check", "dudect", "welch_t", "first_divergence", "locate",
           "CtVerdict", "OpVerdict", "Divergence", "DudectVerdict", "DudectOp", "CtError", "INPUTS",
           "DUDECT_MEASUREMENTS", "DUDECT_THRESHOLD"]
