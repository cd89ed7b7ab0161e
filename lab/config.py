"""Everything a checkout is configured by, loaded once and resolved into typed values.

:class:`Lab` discovers the data folders, validates **every** file when it is
created (used or not; all problems are reported together) and resolves them:

* :class:`Toolchain` — a compiler profile with inheritance applied (files in ``toolchains/``, and one per
  compiler version x variant of ``toolchains/versions.yaml``),
* :class:`Impl` — one implementation of a cipher (ours from ``cipher.yaml``,
  or a peer library's from ``c_src/peers/<library>/peer.yaml``) with its
  sources, flags, facts and vectors,
* :class:`Cipher` — a cipher and its implementations,
* ``Target``, ``Profile``, ``HostFile``, ``MatrixFile`` — the schema models.

Nothing downstream reads YAML again: the plan carries these values.
"""

from __future__ import annotations

import fnmatch
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

import yaml

from .errors import ConfigError, ConfigErrors, UsageError, unknown_name
from .schema import (CipherFile, CompilerVersion, HostFile, JavaPeerFile, MatrixFile, PeerFile, Profile,
                     Target, ToolchainFile, VersionsFile, export_schemas, validate)

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")
VERSIONS_FILE = "versions.yaml"  # in toolchains/: compiler versions, not a profile

__all__ = ["Lab", "Toolchain", "Impl", "Cipher", "PeerInfo", "Target", "Profile", "HostFile", "MatrixFile",
           "ConfigError", "export_schemas", "ROOT", "host_arch"]


def shown(path: Path | str, root: Path) -> str:
    """A path as stored records and messages name it: relative to `root` (the checkout) when it is inside, so that
    no machine path lands in the repository; else as given."""
    p, r = Path(path).resolve(), Path(root).resolve()
    return str(p.relative_to(r)) if p.is_relative_to(r) else str(path)


def host_arch() -> str:
    return platform.machine()


# ------------------------------------------------------------------ values
@dataclass(frozen=True)
class Toolchain:
    name: str
    description: str
    family: str
    cc: str
    package: str
    flags: tuple[str, ...]
    ldflags: tuple[str, ...]
    imitates: str | None
    notes: tuple[str, ...]
    path: str
    arch_flags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    targets: tuple[str, ...] | None = None  # None: every target
    reference_tables: tuple[str, ...] = ()
    family_version: str | None = None  # the compiler version a versions.yaml profile stands for, e.g. "14"

    def flags_for_arch(self, arch: str) -> list[str]:
        return [f for a, fl in self.arch_flags if a == arch for f in fl]

    @property
    def cxx(self) -> str:
        """The C++ driver of the same compiler (for peer adapters written in C++): clang -> clang++, gcc -> g++."""
        if self.family == "clang":
            return self.cc.replace("clang", "clang++", 1) if "clang" in self.cc else "clang++"
        return self.cc.replace("gcc", "g++", 1) if "gcc" in self.cc else "g++"

    def facts(self) -> dict:
        return {"description": self.description, "family": self.family, "cc": self.cc, "flags": list(self.flags),
                "ldflags": list(self.ldflags), "imitates": self.imitates, "notes": list(self.notes),
                "reference_tables": list(self.reference_tables),
                **({"family_version": self.family_version} if self.family_version else {})}


@dataclass(frozen=True)
class PeerInfo:
    library: str
    display: str
    package: str
    header: str
    code: str  # portable, asm, simd, hardware
    packages: tuple[tuple[str, str], ...] = ()  # (target, package) where a target's image has another

    def package_on(self, target: str) -> str:
        """The Debian package with the library in a target's image (the host's own: `package`)."""
        return dict(self.packages).get(target, self.package)


@dataclass(frozen=True)
class Impl:
    """One implementation of a cipher, with everything a build and a table need."""

    cipher: str
    name: str
    display: str
    label: str
    round1: bool
    block_bits: int
    key_bits: tuple[int, ...]
    impl_class: str
    summary: str
    constant_time: bool | None
    word_bits: int
    arch: tuple[str, ...]
    default: bool
    folder: Path
    sources: tuple[Path, ...]
    vector_files: tuple[Path, ...]
    checksums: tuple[tuple[int, str], ...] = ()
    cflags: tuple[str, ...] = ()
    libs: tuple[str, ...] = ()
    language: str = "c"
    env: tuple[tuple[str, str], ...] = ()
    peer: PeerInfo | None = None
    on_targets: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()  # (target, cflags, libs) that differ

    def flags_on(self, target: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(cflags, libs) of the build for a target: a peer's library may differ in a target's image."""
        return next(((c, lib) for t, c, lib in self.on_targets if t == target), (self.cflags, self.libs))

    @property
    def id(self) -> str:
        return f"{self.cipher}/{self.name}"

    @property
    def symbol(self) -> str:
        return f"{self.cipher}_{self.name}"

    def runs_on(self, arch: str) -> bool:
        return "any" in self.arch or arch in self.arch

    def facts(self) -> dict:
        return {"impl_class": self.impl_class, "default": self.default, "summary": self.summary,
                "constant_time": self.constant_time,
                "word_bits": self.word_bits, "arch": list(self.arch),
                **({"peer": {"library": self.peer.library, "package": self.peer.package, "code": self.peer.code}}
                   if self.peer else {})}


@dataclass(frozen=True)
class Cipher:
    name: str
    display: str
    block_bits: int
    key_bits: tuple[int, ...]
    round1: bool
    folder: Path
    impls: dict[str, Impl] = field(hash=False, compare=False)

    @property
    def default_impl(self) -> str:
        return next(k for k, i in self.impls.items() if i.default)

    def impl(self, name: str) -> Impl:
        try:
            return self.impls[name]
        except KeyError:
            raise unknown_name(f"implementation of {self.name}", name, self.impls) from None

    def ours(self) -> list[Impl]:
        return [i for i in self.impls.values() if i.impl_class != "peer"]

    def peers(self) -> list[Impl]:
        return [i for i in self.impls.values() if i.impl_class == "peer"]


# ------------------------------------------------------------------ loading
def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(path, None, "file not found.", "create it or check the name") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(path, None, f"not valid YAML ({str(e).splitlines()[0]}; "
                                      f"{' '.join(str(e).split())[-80:]}).", "fix the YAML syntax") from None


class Lab:
    """Everything discovered from the data folders of one checkout, validated and resolved.

    The checkout is this package's, or ``CIPHERLAB_ROOT``; cipher folders: ``c_src/ciphers`` plus those named
    in ``CIPHERLAB_CIPHER_DIRS`` (a path list, e.g. for ciphers kept outside the checkout); SSH hosts:
    ``hosts/`` or ``CIPHERLAB_HOSTS_DIR`` (addresses and user names may be better kept out of the repository)."""

    def __init__(self, root: Path | str | None = None, cipher_dirs: list[Path] | None = None,
                 peer_dirs: list[Path] | None = None, shared: Path | str | None = None,
                 hosts_dir: Path | str | None = None):
        self.root = Path(root or os.environ.get("CIPHERLAB_ROOT") or ROOT)
        extra = [Path(d) for d in os.environ.get("CIPHERLAB_CIPHER_DIRS", "").split(os.pathsep) if d]
        self.cipher_dirs = [Path(d) for d in (cipher_dirs or [self.root / "c_src" / "ciphers", *extra])]
        self.peer_dirs = [Path(d) for d in (peer_dirs if peer_dirs is not None else [self.root / "c_src" / "peers"])]
        self.shared = Path(shared).resolve() if shared else (self.root.parent / "shared").resolve()
        errors: list[ConfigError] = []

        def each(paths, load: Callable[[Path], T]) -> dict[str, T]:
            out = {}
            for p in sorted(paths):
                try:
                    out[p.stem if p.name != "cipher.yaml" and p.name != "peer.yaml" else p.parent.name] = load(p)
                except ConfigError as e:
                    errors.append(e)
            return out

        self._toolchain_files = each([p for p in (self.root / "toolchains").glob("*.yaml") if p.name != VERSIONS_FILE],
                                     lambda p: validate(ToolchainFile, read_yaml(p), p))
        self._toolchain_paths = {n: self.root / "toolchains" / f"{n}.yaml" for n in self._toolchain_files}
        self.versions_path = self.root / "toolchains" / VERSIONS_FILE
        self.compiler_versions: dict[str, CompilerVersion] = {}  # "gcc-14" -> its line
        self._version_of: dict[str, CompilerVersion] = {}  # generated profile name -> its version
        if self.versions_path.exists():
            try:
                self._add_versions(validate(VersionsFile, read_yaml(self.versions_path), self.versions_path))
            except ConfigError as e:
                errors.append(e)
        self.toolchains: dict[str, Toolchain] = {}
        for name in self._toolchain_files:
            try:
                self.toolchains[name] = self._resolve_toolchain(name, ())
            except ConfigError as e:
                errors.append(e)
        self.targets: dict[str, Target] = each((self.root / "targets").glob("*.yaml"), self._load_target)
        self.profiles: dict[str, Profile] = each((self.root / "profiles").glob("*.yaml"), self._load_profile)
        self.hosts_dir = Path(hosts_dir or os.environ.get("CIPHERLAB_HOSTS_DIR") or self.root / "hosts")
        self.hosts: dict[str, HostFile] = each(self.hosts_dir.glob("*.yaml"),
                                               lambda p: validate(HostFile, read_yaml(p), p))
        folders: dict[str, Path] = {}
        for d in self.cipher_dirs:
            for y in sorted(d.glob("*/cipher.yaml")):
                folders.setdefault(y.parent.name, y.parent)
        self.ciphers: dict[str, Cipher] = each([f / "cipher.yaml" for f in folders.values()], self._load_cipher)
        peer_files = [y for d in self.peer_dirs for y in sorted(d.glob("*/peer.yaml"))]
        self._peer_paths = {y.parent.name: y for y in reversed(peer_files)}  # the first folder's wins, as in each()
        self.peers: dict[str, PeerFile] = each(peer_files, lambda p: self._load_peer(p, errors))
        # the Java side's data (lab/java.py reads them), validated with the rest
        java_src = self.root / "java_src"
        self.java_peer_files: dict[str, JavaPeerFile] = each(
            (java_src / "peers").glob("*.yaml"), lambda p: validate(JavaPeerFile, read_yaml(p), p))
        errors += self._cross_references()
        if errors:
            raise errors[0] if len(errors) == 1 else ConfigErrors(errors)

    def _cross_references(self) -> list[ConfigError]:
        """Names one file gives that another must define: hosts' and toolchains' targets, the versions' targets,
        the profiles' ciphers."""
        errors = []
        targets = sorted(self.targets)
        for name, host in self.hosts.items():
            if host.target not in self.targets:
                errors.append(ConfigError(self.hosts_dir / f"{name}.yaml", "target",
                                          f"'{host.target}' is not a target.", f"use one of {targets}"))
        for name, pf in self.peers.items():
            errors += [ConfigError(self._peer_paths[name], f"targets.{t}", f"'{t}' is not a target.",
                                   f"use one of {targets}") for t in pf.targets if t not in self.targets]
        for name, tc in self.toolchains.items():
            if name in self._version_of:
                continue
            errors += [ConfigError(tc.path, "targets", f"'{t}' is not a target.", f"use one of {targets}")
                       for t in tc.targets or () if t not in self.targets]
        for i, cv in enumerate(self.compiler_versions.values()):
            errors += [ConfigError(self.versions_path, f"versions.{i}.found.{j}", f"'{t}' ({cv.name}) is not a target.",
                                   f"use one of {targets}") for j, t in enumerate(cv.found) if t not in self.targets]
        for name, prof in self.profiles.items():
            errors += [ConfigError(self.root / "profiles" / f"{name}.yaml", f"per_cipher.{c}", "not a known cipher.",
                                   f"use one of {sorted(self.ciphers)}") for c in prof.per_cipher
                       if c not in self.ciphers]
        return errors

    @property
    def vectors_dir(self) -> Path:
        return self.shared / "vectors"

    # ---------------------------------------------------------- loaders
    def _add_versions(self, vf: VersionsFile) -> None:
        """One profile per version x variant: <family>-<version>-<variant>, inheriting the variant's profile
        for the family, with the version's compiler, package and targets (where it is found)."""
        path = self.versions_path
        for variant, bases in vf.variants.items():
            for family, base in bases.items():
                if base not in self._toolchain_files:
                    raise ConfigError(path, f"variants.{variant}.{family}", f"no toolchain profile '{base}'.",
                                      f"use one of {sorted(self._toolchain_files)}")
        for cv in vf.versions:
            self.compiler_versions[cv.name] = cv
            for variant, bases in vf.variants.items():
                base = bases.get(cv.family)
                if base is None:
                    continue
                name = f"{cv.name}-{variant}"
                if name in self._toolchain_files:
                    raise ConfigError(path, "versions", f"{cv.name} with variant {variant} makes profile '{name}', "
                                      f"which toolchains/{name}.yaml defines too.", "rename one of them")
                self._toolchain_files[name] = ToolchainFile(
                    description=f"{cv.family} {cv.version}, flags of {base} "
                                f"({self._toolchain_files[base].description})",
                    inherits=base, cc=cv.executable, package=cv.package or cv.executable, targets=list(cv.found),
                    notes=list(cv.notes))
                self._toolchain_paths[name] = path
                self._version_of[name] = cv

    def version_of(self, toolchain: str) -> CompilerVersion | None:
        """The compiler version a profile made from toolchains/versions.yaml stands for (None for a file)."""
        return self._version_of.get(toolchain)

    def _resolve_toolchain(self, name: str, seen: tuple[str, ...]) -> Toolchain:
        if name not in self._toolchain_files:
            raise ConfigError(self._toolchain_paths[seen[-1]], "inherits",
                              f"no toolchain profile '{name}'.", f"use one of {sorted(self._toolchain_files)}")
        path = self._toolchain_paths[name]
        if name in seen:
            raise ConfigError(path, "inherits", f"inheritance cycle {' -> '.join(seen + (name,))}.", "break the cycle")
        tf: ToolchainFile = self._toolchain_files[name]
        if tf.inherits:
            base = self._resolve_toolchain(tf.inherits, seen + (name,))
            family, cc = tf.family or base.family, tf.cc or base.cc
            flags = list(tf.flags) if tf.flags is not None else list(base.flags)
            ldflags = list(tf.ldflags) if tf.ldflags is not None else list(base.ldflags)
            notes = base.notes + tuple(tf.notes)
            arch_flags = dict(base.arch_flags) if tf.arch_flags is None else {}
            package = tf.package or (base.package if not tf.cc else tf.cc)
            targets = tuple(tf.targets) if tf.targets is not None else base.targets
            refs = tuple(tf.reference_tables) if tf.reference_tables is not None else ()
        else:
            if not tf.family or not tf.cc or tf.flags is None:
                missing = [k for k in ("family", "cc", "flags") if getattr(tf, k) is None]
                raise ConfigError(path, missing[0], "required key is missing (no 'inherits').", "add it or inherit")
            family, cc, flags, ldflags, notes = tf.family, tf.cc, list(tf.flags), list(tf.ldflags or []), tuple(tf.notes)
            arch_flags, package = {}, tf.package or tf.cc
            targets = tuple(tf.targets) if tf.targets is not None else None
            refs = tuple(tf.reference_tables or ())
        arch_flags.update({a: tuple(f) for a, f in (tf.arch_flags or {}).items()})
        flags = [f for f in flags + tf.add_flags if f not in tf.remove_flags]
        cv = self._version_of.get(name)
        return Toolchain(name, tf.description, family, cc, package, tuple(flags), tuple(ldflags), tf.imitates, notes,
                         str(path), tuple(sorted(arch_flags.items())), targets, refs, cv.version if cv else None)

    def _load_target(self, path: Path) -> Target:
        data = read_yaml(path)
        if isinstance(data, dict) and data.get("name", path.stem) != path.stem:
            raise ConfigError(path, "name", f"must equal the file name '{path.stem}'.", f"set name: {path.stem}")
        return validate(Target, data, path)

    def _load_profile(self, path: Path) -> Profile:
        data = read_yaml(path)
        if isinstance(data, dict) and data.get("name", path.stem) != path.stem:
            raise ConfigError(path, "name", f"must equal the file name '{path.stem}'.", f"set name: {path.stem}")
        return validate(Profile, data, path)

    def _vector_files(self, spec: CipherFile, folder: Path) -> tuple[Path, ...]:
        files = [self.vectors_dir / spec.vectors] if spec.vectors else []
        return tuple(files + [folder / v for v in spec.local_vectors])

    def _load_cipher(self, path: Path) -> Cipher:
        folder = path.parent
        spec: CipherFile = validate(CipherFile, read_yaml(path), path)
        if spec.name != folder.name:
            raise ConfigError(path, "name", f"must equal the folder name '{folder.name}'.", f"set name: {folder.name}")
        impls = {}
        for strategy, impl in spec.implementations.items():
            for s in impl.sources:
                if not (folder / s).exists():
                    raise ConfigError(path, f"implementations.{strategy}.sources", f"file '{s}' does not exist.",
                                      "fix the path")
            impls[strategy] = Impl(
                cipher=spec.name, name=strategy, display=spec.display, label=impl.label or spec.display,
                round1=spec.round1, block_bits=spec.block_bits, key_bits=tuple(spec.key_bits),
                impl_class=impl.impl_class, summary=impl.summary, constant_time=impl.constant_time,
                word_bits=impl.word_bits, arch=tuple(impl.arch), default=impl.default, folder=folder,
                sources=tuple((folder / s).resolve() for s in impl.sources),
                vector_files=self._vector_files(spec, folder), checksums=tuple(sorted(spec.checksums.items())))
        return Cipher(spec.name, spec.display, spec.block_bits, tuple(spec.key_bits), spec.round1, folder, impls)

    def _load_peer(self, path: Path, errors: list[ConfigError]) -> PeerFile:
        folder = path.parent
        pf: PeerFile = validate(PeerFile, read_yaml(path), path)
        if pf.library != folder.name:
            raise ConfigError(path, "library", f"must equal the folder name '{folder.name}'.",
                              f"set library: {folder.name}")
        for cname, impls in pf.implementations.items():
            cipher = self.ciphers.get(cname)
            if cipher is None:
                errors.append(ConfigError(path, f"implementations.{cname}", "not one of our ciphers.",
                                          f"use one of {sorted(self.ciphers)}"))
                continue
            for iname, pi in impls.items():
                where = f"implementations.{cname}.{iname}"
                if iname in cipher.impls:
                    errors.append(ConfigError(path, where, f"{cname} already has an implementation '{iname}'.",
                                              "rename it (library or library_variant)"))
                    continue
                missing = [s for s in pi.sources if not (folder / s).exists()]
                if missing:
                    errors.append(ConfigError(path, f"{where}.sources", f"file '{missing[0]}' does not exist.",
                                              "fix the path"))
                    continue
                base = next(iter(cipher.impls.values()))
                cipher.impls[iname] = Impl(
                    cipher=cname, name=iname, display=cipher.display, label=f"{cipher.display} [{iname}]",
                    round1=cipher.round1, block_bits=cipher.block_bits, key_bits=cipher.key_bits,
                    impl_class="peer", summary=pi.summary, constant_time=pi.constant_time, word_bits=32, arch=tuple(pi.arch),
                    default=False, folder=folder, sources=tuple((folder / s).resolve() for s in pi.sources),
                    vector_files=base.vector_files, checksums=base.checksums, cflags=tuple(pf.cflags),
                    libs=tuple(pf.libs), language=pf.language, env=tuple(sorted(pi.env.items())),
                    peer=PeerInfo(pf.library, pf.display, pf.package, pf.header, pi.code,
                                  tuple((t, o.package) for t, o in sorted(pf.targets.items()) if o.package)),
                    on_targets=tuple((t, tuple(pf.cflags if o.cflags is None else o.cflags),
                                      tuple(pf.libs if o.libs is None else o.libs))
                                     for t, o in sorted(pf.targets.items())))
        return pf

    # ------------------------------------------------------------ lookups
    def _get(self, kind: str, table: dict[str, T], name: str) -> T:
        try:
            return table[name]
        except KeyError:
            raise unknown_name(kind, name, table) from None

    def toolchain(self, name: str) -> Toolchain:
        return self._get("toolchain", self.toolchains, name)

    def target(self, name: str) -> Target:
        return self._get("target", self.targets, name)

    def profile(self, name: str) -> Profile:
        return self._get("profile", self.profiles, name)

    def default_profile(self) -> Profile:
        """The profile matrix.yaml names: what a command outside a run (verify, checksums) times its programs by."""
        return self.profile(self.matrix().profile)

    def cipher(self, name: str) -> Cipher:
        return self._get("cipher", self.ciphers, name)

    def host(self, name: str) -> HostFile:
        return self._get("host", self.hosts, name)

    def impl(self, ident: str) -> Impl:
        """'cipher/implementation' (or 'cipher' for its default)."""
        cname, _, iname = ident.partition("/")
        c = self.cipher(cname)
        return c.impl(iname or c.default_impl)

    def toolchain_names(self) -> list[str]:
        return sorted(self.toolchains)

    def toolchain_files(self) -> list[Path]:
        """The files toolchain profiles come from: one per file profile, and toolchains/versions.yaml."""
        return sorted(set(self._toolchain_paths.values()))

    def toolchains_matching(self, patterns: list[str], where: str = "option --toolchains") -> list[str]:
        """Profile names for names or globs (fnmatch: 'clang-1*-O3'), in the order given, each once; a name that
        is not a profile or a glob that matches none is a UsageError naming it."""
        out: list[str] = []
        for pat in patterns:
            if any(ch in pat for ch in "*?["):
                hits = [n for n in self.toolchain_names() if fnmatch.fnmatchcase(n, pat)]
                if not hits:
                    raise UsageError(f"{where}: the glob '{pat}' matches no toolchain profile (profiles: "
                                     f"{', '.join(self.toolchain_names())}; `python -m lab list` shows them)")
            elif pat in self.toolchains:
                hits = [pat]
            else:
                raise unknown_name("toolchain", pat, self.toolchains, where)
            out += [h for h in hits if h not in out]
        return out

    def target_names(self) -> list[str]:
        return sorted(self.targets)

    def profile_names(self) -> list[str]:
        return sorted(self.profiles)

    def cipher_names(self) -> list[str]:
        return sorted(self.ciphers)

    def host_names(self) -> list[str]:
        return sorted(self.hosts)

    def all_impls(self, peers: bool = True) -> list[Impl]:
        return [i for c in self.ciphers.values() for i in c.impls.values() if peers or i.impl_class != "peer"]

    def matrix(self, path: Path | None = None) -> MatrixFile:
        path = Path(path) if path else self.root / "matrix.yaml"
        m: MatrixFile = validate(MatrixFile, read_yaml(path), path)
        for i, pat in enumerate(m.toolchains):  # names or globs (fnmatch)
            if any(ch in pat for ch in "*?[") and not fnmatch.filter(self.toolchain_names(), pat):
                raise ConfigError(path, f"toolchains[{i}]", f"the glob '{pat}' matches no toolchain profile.",
                                  "use a glob that matches one (`python -m lab list` shows them)")
            if not any(ch in pat for ch in "*?[") and pat not in self.toolchains:
                raise ConfigError(path, f"toolchains[{i}]", f"'{pat}' is not defined.",
                                  unknown_name("name", pat, self.toolchains).args[0].split(": ", 1)[1])
        checks = [
            ("targets", m.targets, self.target_names()),
            ("container_targets", m.container_targets or [], self.target_names()),
        ]
        if m.ciphers != "all":
            checks.append(("ciphers", m.ciphers, self.cipher_names()))
        for key, values, known in checks:
            for i, v in enumerate(values):
                if v not in known:
                    raise ConfigError(path, f"{key}[{i}]", f"'{v}' is not defined.", unknown_name("name", v, known)
                                      .args[0].split(": ", 1)[1])
        if m.profile not in self.profiles:
            raise ConfigError(path, "profile", f"'{m.profile}' is not defined.", f"use one of {self.profile_names()}")
        return m.model_copy(update={"toolchains": self.toolchains_matching(m.toolchains)})  # globs -> names
