"""Check an implementation against a vectors file: the `python -m lab verify` command."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .backends import get_backend
from .build import Builder
from .config import Lab
from .kat import read_kat
from .run import runner_prefix


@dataclass
class VerifyResult:
    impl: str
    toolchain: str
    target: str
    records: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    problem: str | None = None  # build failure, crash, unavailable...
    fails: list | None = None
    checksums: dict | None = None  # key bits -> hex of the deterministic encryption chain

    @property
    def ok(self) -> bool:
        return self.problem is None and self.failed == 0 and self.passed > 0

    def line(self) -> str:
        head = f"{self.impl} [{self.toolchain}, {self.target}]: "
        if self.problem:
            return head + self.problem
        s = f"{self.passed} of {self.records} records passed"
        if self.failed:
            s += f", {self.failed} FAILED"
        if self.skipped:
            s += f" ({self.skipped} skipped: key size not supported)"
        return head + s


def verify(lab: Lab, cipher_name: str, vectors: Path, impl: str | None = None, toolchain: str = "gcc-O3",
           target: str = "host", backend: str | None = None, build_dir: Path | None = None) -> list[VerifyResult]:
    cipher = lab.cipher(cipher_name)
    vectors = Path(vectors).resolve()
    if not vectors.exists():
        raise FileNotFoundError(f"vectors file {vectors} does not exist")
    strategies = list(cipher.spec.implementations) if impl == "all" else [impl or cipher.default_impl]
    tc, tg = lab.toolchain(toolchain), lab.target(target)
    build_dir = Path(build_dir or lab.root / "build")
    be = get_backend(backend or ("host" if tg.runner == "native" and tg.is_host_arch() and not tg.image
                                 else "container"), lab=lab, build_dir=build_dir, targets=[tg.name])
    builder = Builder(lab.root, build_dir, be)
    out = []
    for strategy in strategies:
        cipher.impl(strategy)  # raises a clear error for an unknown strategy
        r = VerifyResult(f"{cipher.name}/{strategy}", tc.name, tg.name)
        out.append(r)
        if not cipher.impl(strategy).runs_on(tg.arch):
            r.problem = f"unavailable: runs on {cipher.impl(strategy).arch} only"
            continue
        b = builder.build(cipher, strategy, tc, tg, programs=("kat",))
        if not b.ok:
            r.problem = f"build failed: {b.failure}"
            continue
        c = be.run(runner_prefix(tg) + [str(b.programs["kat"]), "--impl", r.impl, "--file", str(vectors)],
                   cwd=str(lab.root), timeout=1800, target=tg)
        k = read_kat(c)
        if k.unavailable:
            r.problem = "unavailable on this CPU"
        elif k.summary is None:
            r.problem = k.error
        else:
            r.records, r.passed, r.failed = k.summary["records"], k.summary["passed"], k.summary["failed"]
            r.skipped = k.summary["skipped_key_size"]
            r.fails, r.checksums = k.fails, k.checksums
            if not k.roundtrip_ok:
                r.problem = "decrypt(encrypt(x)) != x on the checksum chain"
    return out
