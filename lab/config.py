"""Schemas and loading of everything a run is configured by.

Data lives in files, validated strictly (unknown keys are errors):

* ``toolchains/<name>.yaml``  compiler profiles (may inherit from each other)
* ``targets/<name>.yaml``     where binaries run (host arch, cross + qemu, ...)
* ``profiles/<name>.yaml``    measurement counts (N, B, K, repetitions)
* ``c_src/ciphers/<name>/cipher.yaml``  ciphers and their implementations
* ``matrix.yaml``             which cells a run covers

Every error is a :class:`ConfigError` naming the file, the key and a fix.
This module imports nothing else of the lab.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

ROOT = Path(__file__).resolve().parent.parent
NAME_RE = r"^[a-z0-9][a-z0-9_.+-]*$"
IDENT_RE = r"^[a-z0-9_]+$"


class ConfigError(Exception):
    """A configuration file is wrong; the message says where and how to fix it."""

    def __init__(self, path: Path | str, key: str | None, problem: str, fix: str = ""):
        self.path, self.key, self.problem, self.fix = str(path), key, problem, fix
        where = f"{self.path}" + (f": key '{key}'" if key else "")
        super().__init__(f"{where}: {problem}" + (f" Fix: {fix}" if fix else ""))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- toolchains
class ToolchainFile(Strict):
    """A compiler profile as written in toolchains/<name>.yaml."""

    description: str = Field(description="One line: what this profile stands for.")
    inherits: str | None = Field(None, description="Name of another profile to start from.")
    family: Literal["gcc", "clang"] | None = Field(None, description="Compiler family.")
    cc: str | None = Field(None, description="Compiler executable (host builds); a target may prefix it.")
    flags: list[str] | None = Field(None, description="Compiler flags; replaces the inherited list.")
    add_flags: list[str] = Field(default_factory=list, description="Flags appended to the inherited list.")
    remove_flags: list[str] = Field(default_factory=list, description="Inherited flags to drop.")
    ldflags: list[str] | None = Field(None, description="Extra link flags; replaces the inherited list.")
    arch_flags: dict[str, list[str]] | None = Field(
        None, description="Flags added only when building for a target arch, e.g. {i386: [-mtune=pentiumpro]}."
    )
    imitates: str | None = Field(None, description="For look-alike profiles: what compiler/behaviour it imitates.")
    notes: list[str] = Field(default_factory=list, description="Adaptations and caveats, one per item.")


@dataclass(frozen=True)
class Toolchain:
    name: str
    description: str
    family: str
    cc: str
    flags: tuple[str, ...]
    ldflags: tuple[str, ...]
    imitates: str | None
    notes: tuple[str, ...]
    path: str
    arch_flags: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def flags_for_arch(self, arch: str) -> list[str]:
        return [f for a, fl in self.arch_flags if a == arch for f in fl]

    def compiler_for(self, target: "Target") -> str:
        """The compiler executable for a target (cross prefix for gcc)."""
        if target.is_host_arch() or self.family == "clang":
            return self.cc
        return f"{target.triple}-{self.cc}"

    def target_flags(self, target: "Target") -> list[str]:
        if target.is_host_arch():
            return []
        if self.family == "clang":
            return [f"--target={target.triple}", *target.clang_flags]
        return list(target.gcc_flags)


# ------------------------------------------------------------------- targets
class Target(Strict):
    """A place binaries run: targets/<name>.yaml."""

    name: str = Field(pattern=NAME_RE)
    description: str
    triple: str = Field(description="GNU triple, e.g. x86_64-linux-gnu.")
    arch: str = Field(description="Architecture name as Debian/QEMU use it, e.g. x86_64, sparc64.")
    endianness: Literal["little", "big"]
    word_bits: Literal[32, 64]
    runner: Literal["native", "qemu-user"]
    qemu: str | None = Field(None, description="qemu-user binary for runner=qemu-user, e.g. qemu-sparc64.")
    image: str | None = Field(None, description="Container image it builds and runs in (container backend).")
    families: list[Literal["gcc", "clang"]] = Field(description="Compiler families that can build for it.")
    counter: Literal["x86_tsc", "clock", "marker"] = Field(
        description="Cycle-counter back-end of c_src/harness (marker: guest instructions counted by the QEMU plugin)."
    )
    gcc_flags: list[str] = Field(default_factory=list, description="Extra flags for gcc on this target.")
    clang_flags: list[str] = Field(default_factory=list, description="Extra flags for clang (after --target).")
    static: bool = Field(False, description="Link statically (needed for qemu-user without a sysroot).")
    unsupported_flags: dict[Literal["gcc", "clang"], dict[str, str]] = Field(
        default_factory=dict,
        description="Per compiler family, flags it cannot serve on this target, each with why; a toolchain "
                    "profile using one is recorded 'unavailable' for the target, e.g. {clang: {-flto: ...}}.",
    )

    @property
    def emulated(self) -> bool:
        return self.runner == "qemu-user"

    def is_host_arch(self) -> bool:
        import platform

        return self.runner == "native" and platform.machine() == self.arch

    @model_validator(mode="after")
    def _qemu_needs_binary(self) -> "Target":
        if self.runner == "qemu-user" and not self.qemu:
            raise ValueError("runner qemu-user needs key 'qemu' (e.g. qemu-sparc64)")
        return self


# ------------------------------------------------------------------ profiles
class TimingCounts(Strict):
    samples: int = Field(gt=0, description="N: triples per key size (NIST: 1000).")
    blocks: int = Field(gt=0, description="B: blocks encrypted/decrypted per sample (NIST: 65536).")
    key_pairs: int = Field(gt=0, description="K: key pairs set up per sample (NIST: 1000).")
    blocks_per_call: int = Field(1, gt=0, description="Blocks per blockEncrypt call (NIST: 1).")


class CycleCounts(Strict):
    reps: int = Field(gt=0, description="Repetitions per operation (NIST: 1000).")
    sizes: list[int] = Field(description="n of Encrypt-n / Decrypt-n (NIST: 1,16,128,1024,32768).")
    key_sizes: list[int] = Field([128], description="Key sizes cycle-counted (NIST: 128 only).")
    max_blocks: int = Field(1 << 20, gt=0, description="Cap reps*n per size; at least 5 reps.")


class CipherOverride(Strict):
    key_pairs: int | None = Field(None, gt=0, description="K for this cipher (NIST: 100 for FROG, HPC).")
    samples: int | None = Field(None, gt=0)
    blocks: int | None = Field(None, gt=0)
    cycles_reps: int | None = Field(None, gt=0)


class Profile(Strict):
    """Measurement counts: profiles/<name>.yaml."""

    name: str = Field(pattern=NAME_RE)
    description: str
    timing: TimingCounts
    cycles: CycleCounts
    per_cipher: dict[str, CipherOverride] = Field(
        default_factory=dict, description="Per-cipher changes, e.g. fewer key pairs for slow key schedules."
    )
    timeout_seconds: int = Field(600, gt=0, description="Limit for one program run of one cell.")

    def timing_for(self, cipher: str) -> TimingCounts:
        o = self.per_cipher.get(cipher)
        if not o:
            return self.timing
        upd = {k: v for k, v in {"key_pairs": o.key_pairs, "samples": o.samples, "blocks": o.blocks}.items() if v}
        return self.timing.model_copy(update=upd)

    def cycles_for(self, cipher: str) -> CycleCounts:
        o = self.per_cipher.get(cipher)
        if not o or not o.cycles_reps:
            return self.cycles
        return self.cycles.model_copy(update={"reps": o.cycles_reps})


# ------------------------------------------------------------------- ciphers
ImplClass = Literal["portable", "simd", "hardware", "peer"]


class Implementation(Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    sources: list[str] = Field(min_length=1, description="C files, relative to the cipher folder.")
    impl_class: ImplClass = Field(
        alias="class",
        description="portable: ANSI C any CPU runs (NIST's kind); simd: vector instructions; hardware: cipher "
                    "instructions such as AES-NI; peer: a library's implementation. NIST-comparable rankings use "
                    "portable ones only.")
    summary: str
    constant_time: bool | None = None
    word_bits: Literal[8, 16, 32, 64, 128]
    arch: list[str] = Field(["any"], description="Architectures it can run on, or [any].")
    default: bool = False
    label: str | None = Field(None, description="Row name in NIST tables, e.g. DFC-64.")

    def runs_on(self, arch: str) -> bool:
        return "any" in self.arch or arch in self.arch


class CipherFile(Strict):
    name: str = Field(pattern=IDENT_RE)
    display: str
    block_bits: Literal[64, 128]
    key_bits: list[int] = Field(min_length=1)
    vectors: str | None = Field(description="File name in shared/vectors, or null.")
    local_vectors: list[str] = Field(default_factory=list)
    round1: bool = False
    implementations: dict[str, Implementation] = Field(min_length=1)

    @field_validator("implementations")
    @classmethod
    def _names(cls, v: dict[str, Implementation]) -> dict[str, Implementation]:
        for k in v:
            if not re.match(IDENT_RE, k):
                raise ValueError(f"implementation name '{k}' must match {IDENT_RE}")
        defaults = [k for k, i in v.items() if i.default]
        if len(defaults) != 1:
            raise ValueError(f"exactly one implementation needs 'default: true' (found {defaults or 'none'})")
        return v


@dataclass(frozen=True)
class Cipher:
    spec: CipherFile
    folder: Path

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def default_impl(self) -> str:
        return next(k for k, i in self.spec.implementations.items() if i.default)

    def impl(self, strategy: str) -> Implementation:
        try:
            return self.spec.implementations[strategy]
        except KeyError:
            raise ConfigError(
                self.folder / "cipher.yaml",
                f"implementations.{strategy}",
                f"no implementation '{strategy}' of {self.name}",
                f"use one of {sorted(self.spec.implementations)}",
            ) from None

    def sources(self, strategy: str) -> list[Path]:
        return [(self.folder / s).resolve() for s in self.impl(strategy).sources]

    def vector_files(self, shared_vectors: Path) -> list[Path]:
        files = [shared_vectors / self.spec.vectors] if self.spec.vectors else []
        return files + [self.folder / v for v in self.spec.local_vectors]

    def row_label(self, strategy: str) -> str:
        return self.impl(strategy).label or self.spec.display


# -------------------------------------------------------------------- matrix
Selector = str | list[str]


class Rule(Strict):
    """A set of cells: each given axis matches one value or any value of a list."""

    cipher: Selector | None = None
    implementation: Selector | None = None
    toolchain: Selector | None = None
    target: Selector | None = None


class MatrixFile(Strict):
    """What a run covers: matrix.yaml."""

    ciphers: list[str] | Literal["all"] = Field(description="Cipher folder names, or 'all'.")
    implementations: Literal["default", "all"] | list[str] = Field(
        "default", description="'default', 'all', or a list of cipher/strategy names."
    )
    toolchains: list[str] = Field(min_length=1)
    targets: list[str] = Field(["host"], min_length=1)
    container_targets: list[str] | None = Field(
        None, description="Targets used instead of 'targets' when the backend is container and none are named."
    )
    key_sizes: list[int] | Literal["all"] = Field(
        "all", description="Key sizes to time; each cipher uses those it supports (its own if none)."
    )
    profile: str = "quick"
    backend: Literal["host", "container"] = "host"
    engine: Literal["auto", "docker", "podman"] = Field(
        "auto", description="Container engine for backend=container (auto: docker, else podman; env CIPHERLAB_ENGINE overrides)."
    )
    include: list[Rule] = Field(default_factory=list, description="Cells added after the axes product.")
    exclude: list[Rule] = Field(default_factory=list, description="Cells removed from the product.")


# ------------------------------------------------------------------- loading
def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(path, None, "file not found.", "create it or check the name") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(path, None, f"not valid YAML ({e}).", "fix the YAML syntax") from None


def _validate(model: type[BaseModel], data: Any, path: Path) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(path, None, "must be a mapping of keys to values.", "see the JSON Schema in schemas/")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or None
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(model, err["loc"][:-1])
            raise ConfigError(
                path, key, "unknown key.", f"remove it or use one of: {', '.join(allowed)}"
            ) from None
        if err["type"] == "missing":
            raise ConfigError(path, key, "required key is missing.", "add it (see schemas/)") from None
        raise ConfigError(path, key, f"{err['msg']} (got {err.get('input')!r}).", "see schemas/ for the allowed values") from None


def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    cur: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        fi = getattr(cur, "model_fields", {}).get(part)
        if fi is None:
            break
        ann = fi.annotation
        args = getattr(ann, "__args__", ()) or (ann,)
        nxt = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if nxt is None:
            for a in args:  # list[Model] / dict[str, Model]
                inner = getattr(a, "__args__", ())
                nxt = next((b for b in inner if isinstance(b, type) and issubclass(b, BaseModel)), nxt)
        if nxt is None:
            break
        cur = nxt
    return sorted(getattr(cur, "model_fields", {}))


@dataclass
class Lab:
    """Everything discovered from the data folders of one checkout."""

    root: Path = ROOT
    cipher_dirs: list[Path] = field(default_factory=list)
    shared: Path | None = None

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        if not self.cipher_dirs:
            self.cipher_dirs = [self.root / "c_src" / "ciphers"]
        if self.shared is None:
            self.shared = (self.root.parent / "shared").resolve()

    @property
    def vectors_dir(self) -> Path:
        return self.shared / "vectors"

    # toolchains ----------------------------------------------------------
    def toolchain_names(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "toolchains").glob("*.yaml"))

    def toolchain(self, name: str, _seen: tuple[str, ...] = ()) -> Toolchain:
        path = self.root / "toolchains" / f"{name}.yaml"
        if not path.exists():
            raise ConfigError(path, None, f"no toolchain profile '{name}'.", f"use one of {self.toolchain_names()}")
        if name in _seen:
            raise ConfigError(path, "inherits", f"inheritance cycle {' -> '.join(_seen + (name,))}.", "break the cycle")
        tf: ToolchainFile = _validate(ToolchainFile, _read_yaml(path), path)
        if tf.inherits:
            base = self.toolchain(tf.inherits, _seen + (name,))
            family, cc = tf.family or base.family, tf.cc or base.cc
            flags = list(tf.flags) if tf.flags is not None else list(base.flags)
            ldflags = list(tf.ldflags) if tf.ldflags is not None else list(base.ldflags)
            notes = base.notes + tuple(tf.notes)
            arch_flags = dict(base.arch_flags) if tf.arch_flags is None else {}
        else:
            if not tf.family or not tf.cc or tf.flags is None:
                missing = [k for k in ("family", "cc", "flags") if getattr(tf, k) is None]
                raise ConfigError(path, missing[0], "required key is missing (no 'inherits').", "add it or inherit")
            family, cc, flags, ldflags, notes = tf.family, tf.cc, list(tf.flags), list(tf.ldflags or []), tuple(tf.notes)
            arch_flags = {}
        arch_flags.update({a: tuple(f) for a, f in (tf.arch_flags or {}).items()})
        flags = [f for f in flags + tf.add_flags if f not in tf.remove_flags]
        return Toolchain(name, tf.description, family, cc, tuple(flags), tuple(ldflags), tf.imitates, notes, str(path),
                         tuple(sorted(arch_flags.items())))

    # targets -------------------------------------------------------------
    def target_names(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "targets").glob("*.yaml"))

    def target(self, name: str) -> Target:
        path = self.root / "targets" / f"{name}.yaml"
        if not path.exists():
            raise ConfigError(path, None, f"no target '{name}'.", f"use one of {self.target_names()}")
        data = _read_yaml(path)
        if isinstance(data, dict) and data.get("name", name) != name:
            raise ConfigError(path, "name", f"must equal the file name '{name}'.", f"set name: {name}")
        return _validate(Target, data, path)

    # profiles ------------------------------------------------------------
    def profile_names(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "profiles").glob("*.yaml"))

    def profile(self, name: str) -> Profile:
        path = self.root / "profiles" / f"{name}.yaml"
        if not path.exists():
            raise ConfigError(path, None, f"no measurement profile '{name}'.", f"use one of {self.profile_names()}")
        prof: Profile = _validate(Profile, _read_yaml(path), path)
        known = set(self.cipher_names())
        for c in prof.per_cipher:
            if c not in known:
                raise ConfigError(path, f"per_cipher.{c}", "not a known cipher.", f"use one of {sorted(known)}")
        return prof

    # ciphers -------------------------------------------------------------
    def _cipher_folders(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for d in self.cipher_dirs:
            for y in sorted(Path(d).glob("*/cipher.yaml")):
                found.setdefault(y.parent.name, y.parent)
        return found

    def cipher_names(self) -> list[str]:
        return sorted(self._cipher_folders())

    def cipher(self, name: str) -> Cipher:
        folders = self._cipher_folders()
        if name not in folders:
            raise ConfigError(
                self.cipher_dirs[0] / name / "cipher.yaml", None, f"no cipher '{name}'.", f"use one of {sorted(folders)}"
            )
        path = folders[name] / "cipher.yaml"
        spec: CipherFile = _validate(CipherFile, _read_yaml(path), path)
        if spec.name != name:
            raise ConfigError(path, "name", f"must equal the folder name '{name}'.", f"set name: {name}")
        for strategy, impl in spec.implementations.items():
            for s in impl.sources:
                if not (folders[name] / s).exists():
                    raise ConfigError(path, f"implementations.{strategy}.sources", f"file '{s}' does not exist.", "fix the path")
        return Cipher(spec, folders[name])

    def ciphers(self) -> list[Cipher]:
        return [self.cipher(n) for n in self.cipher_names()]

    # matrix --------------------------------------------------------------
    def matrix(self, path: Path | None = None) -> MatrixFile:
        path = Path(path) if path else self.root / "matrix.yaml"
        m: MatrixFile = _validate(MatrixFile, _read_yaml(path), path)
        checks = [
            ("toolchains", m.toolchains, self.toolchain_names()),
            ("targets", m.targets, self.target_names()),
            ("container_targets", m.container_targets or [], self.target_names()),
        ]
        if m.ciphers != "all":
            checks.append(("ciphers", m.ciphers, self.cipher_names()))
        for key, values, known in checks:
            for i, v in enumerate(values):
                if v not in known:
                    raise ConfigError(path, f"{key}[{i}]", f"'{v}' is not defined.", f"use one of {known}")
        if m.profile not in self.profile_names():
            raise ConfigError(path, "profile", f"'{m.profile}' is not defined.", f"use one of {self.profile_names()}")
        return m


SCHEMAS: dict[str, type[BaseModel]] = {
    "matrix": MatrixFile,
    "toolchain": ToolchainFile,
    "target": Target,
    "profile": Profile,
    "cipher": CipherFile,
}


def export_schemas(out_dir: Path) -> list[Path]:
    """Writes one JSON Schema per config file kind (for editors)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMAS.items():
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = f"cipherlab {name} file"
        p = out_dir / f"{name}.schema.json"
        p.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        written.append(p)
    return written
