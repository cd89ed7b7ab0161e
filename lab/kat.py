"""build -> verify: run the `kat` program on the vectors and decide, in ONE function, whether a build is right.

:func:`verdict` is the only place the kat program's output is judged, for the
run's correctness gate and for ``python -m lab verify`` alike.  A build is
right when every applicable record of every vectors file passed, some record
applied, one n-block call equals n single-block calls (the program checks),
decryption undoes encryption on the checksum chain, and the checksum equals
the one stored in the cipher's ``cipher.yaml`` (when stored).  Builds of a
cipher with no stored checksum must agree with each other: :func:`vote`, the
second half of the same judgement, used by the run and by ``lab verify``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .backends import Backend, Completed
from . import protocol
from .config import Impl, Target
from .protocol import KatChecksum, KatFail, KatSummary
from .models import Status

_ALLOCATORS = ("malloc", "calloc", "realloc", "free", "operator new", "operator delete", "aligned_alloc",
               "posix_memalign", "strdup", "__interceptor_", "__asan_", "__ubsan_")


def sanitizer_finding(stderr: str) -> str | None:
    """A sanitizer's report on stderr (ASan, LeakSanitizer, UBSan, ...) as one line: its SUMMARY line and its
    first stack frame with a source location (else the first outside the allocator); None when there is none."""
    lines = stderr.splitlines()
    summary = next((ln.strip() for ln in lines if ln.startswith("SUMMARY: ") and "Sanitizer" in ln), None)
    if summary is None:
        return None
    frames = [ln.strip().split(" in ", 1)[1] for ln in lines
              if ln.strip().startswith("#") and " in " in ln]
    ours = [f for f in frames if not f.startswith(_ALLOCATORS)]
    # the first frame with a source location (file:line), else the first outside the allocator
    first = next((f for f in ours if not f.endswith(")")), ours[0] if ours else frames[0] if frames else None)
    return summary[len("SUMMARY: "):] + (f"; first frame: {first[:200]}" if first else "")


@dataclass
class KatOutput:
    """What one run of the kat program printed (its records validated by lab.protocol)."""

    unavailable: bool = False  # the implementation reported itself unusable on this CPU (exit 3)
    summary: KatSummary | None = None  # None when the program died before it (or printed an unreadable record)
    fails: list[KatFail] = field(default_factory=list)
    checksums: list[KatChecksum] = field(default_factory=list)  # per key size: the key-setup/encryption chain
    error: str | None = None  # why there is no summary (the program's error record, a bad record, how it died)


def read_kat(c: Completed) -> KatOutput:
    try:
        records = protocol.read(c, "kat")
    except protocol.ProtocolError as e:
        return KatOutput(error=str(e))
    out = KatOutput(unavailable=c.returncode == 3 and bool(protocol.of(records, protocol.UnavailableRecord)))
    out.summary = next(iter(protocol.of(records, KatSummary)), None)
    out.fails = protocol.of(records, KatFail)
    out.checksums = protocol.of(records, KatChecksum)
    if out.summary is None and not out.unavailable:
        err = next(iter(protocol.of(records, protocol.ErrorRecord)), None)
        out.error = err.line() if err else c.describe_failure()
    return out


@dataclass
class Verdict:
    status: Status
    reason: str | None
    files: list[str] = field(default_factory=list)
    records: int = 0
    passed: int = 0
    failed: int = 0  # failed records plus failed n-block checks
    multiblock_failed: int = 0  # failed n-block checks (one n-block call against n single-block calls)
    skipped_key_size: int = 0
    sampled_out: int = 0  # long (iterated over 100 times) records a quick gate left out (``long_every`` > 1)
    fails: list[dict] = field(default_factory=list)
    checksums: dict[int, str] = field(default_factory=dict)
    roundtrip_ok: bool = True
    facts: dict | None = None  # block_bytes, ks_bytes, table_bytes, key_bits as the program reports them

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    def line(self) -> str:
        if self.status == Status.OK:
            s = f"{self.passed} of {self.records} records passed"
            s += f" ({self.skipped_key_size} skipped: key size not supported)" if self.skipped_key_size else ""
            return s + (f" (quick gate: {self.sampled_out} long records not checked)" if self.sampled_out else "")
        return f"{self.status}: {self.reason}"


def verdict(runs: list[tuple[Path, Completed]], expected_checksums: dict[int, str] | None = None) -> Verdict:
    """The one judgement of known-answer runs (one per vectors file) of one build."""
    v = Verdict(Status.OK, None)
    if not runs:
        return Verdict(Status.KAT_FAILED, "no known-answer vectors: cannot verify, so not measured")
    for path, c in runs:
        if c.unreachable:
            return Verdict(Status.UNREACHABLE, f"kat on {path.name}: {c.describe_failure()}")
        found = sanitizer_finding(c.stderr)
        if found:  # a finding of the build's sanitizer, not a wrong answer (its records may all have passed)
            return Verdict(Status.SANITIZER, f"kat on {path.name}: {found}")
        out = read_kat(c)
        if out.unavailable:
            return Verdict(Status.UNAVAILABLE, "implementation reports itself unavailable on this CPU")
        v.files.append(path.name)
        v.fails += [{**f.model_dump(exclude_none=True), "file": path.name} for f in out.fails[:10]]  # names its file
        v.checksums.update({x.key_bits: x.checksum for x in out.checksums})
        v.roundtrip_ok &= all(x.roundtrip_ok for x in out.checksums)
        if out.summary is None:
            v.status = Status.CRASHED if c.crashed else (Status.TIMEOUT if c.timed_out else Status.KAT_FAILED)
            v.reason = f"kat on {path.name}: {out.error}"
            return v
        s = out.summary
        v.facts = s.facts()
        v.records += s.records
        v.passed += s.passed
        v.failed += s.failed
        v.multiblock_failed += s.multiblock_failed
        v.skipped_key_size += s.skipped_key_size
        v.sampled_out += s.sampled_out
    records_failed = v.failed - v.multiblock_failed
    if records_failed:
        first = next((f for f in v.fails if f.get("line")), None)
        where = f" (first: line {first['line']} of {first['file']}, {first.get('direction')}, " \
                f"{first.get('key_bits')}-bit key)" if first else ""
        v.status, v.reason = Status.KAT_FAILED, f"{records_failed} of {v.records} known-answer records failed{where}"
    elif v.multiblock_failed:
        first = next((f for f in v.fails if not f.get("line")), None)
        v.status = Status.KAT_FAILED
        v.reason = "every record passed, but the n-block check failed" + (f": {first['reason']}" if first else "")
    elif not v.roundtrip_ok:
        v.status, v.reason = Status.KAT_FAILED, "decrypt(encrypt(x)) != x on the checksum chain"
    elif not v.passed:
        v.status, v.reason = Status.KAT_FAILED, "no known-answer record applied to this implementation"
    else:
        supported = set(v.facts.get("key_bits", ()))
        missing = sorted(k for k in (expected_checksums or {}) if k in supported and k not in v.checksums)
        bad = {k: (want, v.checksums.get(k)) for k, want in (expected_checksums or {}).items()
               if v.checksums.get(k) not in (None, want)}
        if missing:  # the chain of a key size the build supports was skipped: nothing vouches for it
            v.status = Status.KAT_FAILED
            v.reason = f"no checksum printed for {missing[0]}-bit keys, which this build supports and cipher.yaml " \
                       f"stores a checksum for"
        elif bad:
            k, (want, got) = next(iter(bad.items()))
            v.status = Status.CHECKSUM_DIFFERS
            v.reason = f"checksum differs for {k}-bit keys: {got[:16]}... where cipher.yaml has {want[:16]}..."
    return v


def vote(builds: Sequence[tuple[str, bool, Verdict]]) -> None:
    """Checksum agreement between the passing builds of one run: (cipher, has a stored checksum, verdict) each.

    Where cipher.yaml stores no checksum, the builds of a cipher must at least agree with each other: a build
    whose checksum is in a minority, or where no checksum has a majority, becomes ``checksum_differs`` (a
    miscompilation the vectors miss still shows).  Verdicts that did not pass are left as they are."""
    votes: dict[tuple[str, int], Counter] = defaultdict(Counter)
    for cipher, stored, v in builds:
        if v.ok and not stored:
            for k, cs in v.checksums.items():
                votes[(cipher, k)][cs] += 1
    for cipher, _, v in builds:
        if not v.ok:
            continue
        for k, cs in sorted(v.checksums.items()):
            c = votes.get((cipher, k))
            if not c or len(c) == 1:
                continue
            top = max(c.values())
            if c[cs] < top or list(c.values()).count(top) > 1:  # in a minority, or there is no majority
                others = ", ".join(f"{x[:12]}... ({n} builds)" for x, n in c.most_common() if x != cs)
                v.status = Status.CHECKSUM_DIFFERS
                v.reason = f"checksum differs for {k}-bit keys: {cs[:12]}... where other builds of {cipher} give " \
                           f"{others}"
                break


def run_kat(backend: Backend, program: Path, impl: Impl, target: Target, timeout: float,
            files: list[Path] | None = None, env: dict | None = None, checksums: bool = True,
            long_every: int = 1) -> Verdict:
    """Runs the kat program of a build on the implementation's vectors files (or `files`) and judges it (against
    the checksums stored in cipher.yaml unless `checksums` is False: ``lab checksums`` computes them).
    ``long_every`` > 1 is a quick gate: of the long (iterated over 100 times) records only every Nth is checked."""
    files = list(files) if files is not None else list(impl.vector_files)
    quick = ["--long-every", str(long_every)] if long_every > 1 else []
    runs = []
    for f in files:
        c = backend.run_program(program, ["--impl", impl.id, "--file", str(Path(f).resolve()), *quick], target=target,
                                timeout=timeout, env=env)
        runs.append((Path(f), c))
        if read_kat(c).summary is None:
            break  # a crash or a missing file: the next file would not tell more
    return verdict(runs, dict(impl.checksums) if checksums else None)
