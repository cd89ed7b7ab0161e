"""config -> plan: expand a matrix (axes + include/exclude rules) into typed cells, in one place.

A :class:`Cell` carries everything the later stages need — the resolved
implementation, toolchain, target, key sizes, the sampling settings for its
cipher — so nothing downstream looks anything up in the configuration again.
Cells that cannot exist (an implementation for another CPU, a compiler family
the target lacks, a flag the target cannot serve) are planned with their
reason and recorded as ``unavailable`` without being built.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from .config import Impl, Lab, MatrixFile, Profile, Target, Toolchain
from .errors import ConfigError, unknown_name
from .schema import Rule, Sampling


@dataclass(frozen=True, eq=False)
class Cell:
    """One (implementation x toolchain x target) measurement, fully resolved."""

    impl: Impl
    toolchain: Toolchain
    target: Target
    key_sizes: tuple[int, ...]
    profile: Profile
    machine: str | None = None  # an SSH host's name; None: the machine the lab runs on
    unavailable: str | None = None  # why this cell cannot exist, decided from data alone

    @property
    def id(self) -> str:
        return f"{self.impl.id}@{self.toolchain.name}@{self.target.name}" + (f"@{self.machine}" if self.machine else "")

    @property
    def jvm(self) -> bool:
        """A Java cell: its toolchain is a JVM profile."""
        return self.toolchain.family == "jvm"

    @property
    def sampling(self) -> Sampling:
        return self.profile.sampling_for(self.impl.cipher, jvm=self.jvm)

    @property
    def cycle_sizes(self) -> tuple[int, ...]:
        """n of Encrypt-n / Decrypt-n (a Java cell's are the profile's jvm.cycle_sizes)."""
        return tuple(self.profile.jvm.cycle_sizes if self.jvm else self.profile.cycles.sizes)

    @property
    def cycle_key_sizes(self) -> tuple[int, ...]:
        sizes = tuple(k for k in self.profile.cycles.key_sizes if k in self.key_sizes)
        return sizes or self.key_sizes[:1]

    def sort_key(self) -> tuple:
        return (self.machine or "", self.target.name, self.toolchain.name, self.impl.cipher, self.impl.name)

    def with_timeout(self, seconds: float) -> "Cell":
        """The cell with another time limit for one program run."""
        profile = self.profile.model_copy(update={"timeout_seconds": max(1, int(seconds))})
        return Cell(self.impl, self.toolchain, self.target, self.key_sizes, profile, self.machine, self.unavailable)

    def with_machine(self, machine: str | None, target: Target) -> "Cell":
        c = Cell(self.impl, self.toolchain, target, self.key_sizes, self.profile, machine, None)
        return Cell(c.impl, c.toolchain, c.target, c.key_sizes, c.profile, machine, unavailable_reason(c))


def unavailable_reason(cell: Cell) -> str | None:
    """Why a cell cannot be built or run at all, from the data of its implementation, toolchain and target."""
    impl, tc, tg = cell.impl, cell.toolchain, cell.target
    if (impl.language == "java") != (tc.family == "jvm"):
        return f"a {impl.language} implementation cannot run under {tc.family} profile {tc.name}"
    if tc.family == "jvm":
        return _jvm_unavailable(cell)
    if not impl.runs_on(tg.arch):
        return f"implementation runs on {', '.join(impl.arch)}, not {tg.arch}"
    if tc.targets is not None and tg.name not in tc.targets:
        if tc.family_version:  # a profile of toolchains/versions.yaml: say where that compiler is
            return (f"{tc.family} {tc.family_version} ({tc.cc}, Debian package {tc.package}) is not found for "
                    f"target {tg.name}; toolchains/versions.yaml has it for {', '.join(tc.targets)} "
                    f"(--targets {tc.targets[0]})")
        return f"toolchain {tc.name} builds for {', '.join(tc.targets)} only"
    if tc.family not in tg.families:
        return f"target {tg.name} has no {tc.family} toolchain"
    bad = tg.unsupported_flags.get(tc.family, {})  # type: ignore[call-overload]
    used = [f for f in (*tc.flags, *tc.ldflags) if f in bad]
    if used:
        return f"{tc.family} {used[0]} on {tg.name}: {bad[used[0]]}"
    if impl.peer and tg.runner != "native":
        return f"peer library {impl.peer.display} is the build machine's; {tg.name} is emulated"
    return None


def _jvm_unavailable(cell: Cell) -> str | None:
    """Why a Java cell cannot exist: a JVM runs where its profile says (the host, or a target's image), on a
    native target (on an SSH host: its own JVM, the classes and jars shipped to it)."""
    tc, tg = cell.toolchain, cell.target
    if tc.targets is not None and tg.name not in tc.targets:
        where = tc.targets[0]
        return (f"JVM profile {tc.name} ({tc.package}) runs on target {where} only"
                + (" (the JVM is in its image: --targets " + where + " --backend mixed)" if where != "host" else ""))
    if tg.runner != "native":
        return f"target {tg.name} is emulated: the JVM profiles run natively"
    return None


def _needs_image(cell: Cell, backend: str) -> str | None:
    """Where a compiler version of toolchains/versions.yaml is found must be where the backend builds: the host
    backend uses this machine's compilers for every target; the container backend builds the host target in the
    x86_64 image."""
    tc, tg = cell.toolchain, cell.target
    if not tc.family_version:
        return None
    if backend == "host" and tg.image:
        return (f"{tc.family} {tc.family_version} is found in the image of {tg.name} ({tg.image}), and the host "
                "backend builds with this machine's compilers: use --backend mixed (or container)")
    if backend == "container" and not tg.image and "x86_64" not in (tc.targets or ()):
        return (f"{tc.family} {tc.family_version} is found on this machine, and the container backend builds "
                f"target {tg.name} in the x86_64 image, which lacks it: use --backend mixed (or host)")
    return None


def _matches(sel, value: str) -> bool:
    if sel is None:
        return True
    values = [sel] if isinstance(sel, str) else sel
    return any(fnmatch.fnmatchcase(value, v) for v in values)


def rule_matches(rule: Rule, cipher: str, impl: str, toolchain: str, target: str) -> bool:
    return (
        _matches(rule.cipher, cipher)
        and (_matches(rule.implementation, impl) or _matches(rule.implementation, f"{cipher}/{impl}"))
        and _matches(rule.toolchain, toolchain)
        and _matches(rule.target, target)
    )


def _key_sizes(impl: Impl, wanted) -> tuple[int, ...]:
    own = tuple(impl.key_bits)
    if wanted == "all":
        return own
    both = tuple(k for k in own if k in wanted)
    return both or own  # a cipher with none of the wanted sizes (DES) keeps its own


def implementations(lab: Lab, cipher: str, selection, source: str, jvm: bool = False) -> list[Impl]:
    """The implementations of cipher a selection picks: default, classes (the default, every SIMD and hardware
    implementation of ours, and every peer library's: each class beside the peers, the main job's), ours, peers
    (the default and every peer library's), all, or a list of cipher/implementation (the matrix's axis; `lab
    verify --impl` too).  `jvm`: its Java implementations (lab.java.select), for the cells of a JVM profile."""
    if jvm:
        from . import java

        return java.select(java.impls_of(lab).get(cipher, []), selection) if cipher in java.impls_of(lab) else []
    c = lab.cipher(cipher)
    if selection == "default":
        return [c.impls[c.default_impl]]
    if selection == "classes":
        return [c.impls[c.default_impl], *(i for i in c.ours() if i.impl_class in ("simd", "hardware")),
                *c.peers()]
    if selection == "ours":
        return c.ours()
    if selection == "peers":
        return [c.impls[c.default_impl], *c.peers()]
    if selection == "all":
        return list(c.impls.values())
    picked = []
    for name in selection:
        cname, _, iname = name.partition("/")
        if cname not in lab.ciphers:
            raise ConfigError(source, "implementations", f"'{name}': {unknown_name('cipher', cname, lab.ciphers)}",
                              "write cipher/implementation")
        if cname == cipher:
            if iname not in c.impls and _is_java(lab, cname, iname):
                continue  # a Java implementation: the JVM profiles' cells
            if iname not in c.impls:
                raise ConfigError(source, "implementations", f"'{name}' is not an implementation.",
                                  unknown_name("implementation", iname, c.impls).args[0].split(": ", 1)[1])
            picked.append(c.impls[iname])
    return picked or [c.impls[c.default_impl]]


def _is_java(lab: Lab, cipher: str, name: str) -> bool:
    from . import java

    return any(i.name == name for i in java.impls_of(lab).get(cipher, []))


def expand(lab: Lab, m: MatrixFile, source: str = "matrix.yaml") -> list[Cell]:
    """Product of the axes, minus excluded cells, plus included ones (deduplicated, sorted)."""
    profile = lab.profile(m.profile)
    cipher_names = lab.cipher_names() if m.ciphers == "all" else list(m.ciphers)
    cells: dict[str, Cell] = {}

    def add(impl: Impl, tc: str, tg: str) -> None:
        c = Cell(impl, lab.toolchain(tc), lab.target(tg), _key_sizes(impl, m.key_sizes), profile)
        c = Cell(c.impl, c.toolchain, c.target, c.key_sizes, c.profile, None,
                 unavailable_reason(c) or _needs_image(c, m.backend))
        cells[c.id] = c

    for cname in cipher_names:
        for tc in m.toolchains:
            for impl in implementations(lab, cname, m.implementations, source, lab.toolchain(tc).family == "jvm"):
                for tg in m.targets:
                    if not any(rule_matches(r, cname, impl.name, tc, tg) for r in m.exclude):
                        add(impl, tc, tg)
    # include rules add cells over every known value of the axes they leave open
    for rule in m.include:
        for cname in lab.cipher_names():
            if not _matches(rule.cipher, cname):
                continue
            cipher = lab.cipher(cname)
            for impl in cipher.impls.values():
                if rule.implementation is None and rule.cipher is not None and not impl.default:
                    continue
                for tc in m.toolchains if rule.toolchain is None else lab.toolchain_names():
                    for tg in m.targets if rule.target is None else lab.target_names():
                        if rule_matches(rule, cname, impl.name, tc, tg):
                            add(impl, tc, tg)
    return sorted(cells.values(), key=Cell.sort_key)


def narrowed(m: MatrixFile, **options) -> MatrixFile:
    """The matrix with the axes a command line named replaced (None/empty: keep the matrix's)."""
    upd = {k: v for k, v in options.items() if v not in (None, "", [])}
    if upd.get("backend", m.backend) == "container" and not options.get("targets") and m.container_targets:
        upd["targets"] = list(m.container_targets)
    return m.model_copy(update=upd)
