"""The schemas of every data file, strict (an unknown key is an error), and their JSON Schemas.

* ``toolchains/<name>.yaml``              compiler profiles (may inherit from each other); family ``jvm``: a JVM
                                          and its flags, under which the Java implementations run
* ``toolchains/versions.yaml``            compiler versions, each expanded into profiles (``gcc-14-O3``)
* ``targets/<name>.yaml``                 where binaries run (host arch, cross + qemu, ...)
* ``profiles/<name>.yaml``                how to measure (sampling, precision, budgets)
* ``c_src/ciphers/<name>/cipher.yaml``    ciphers and their implementations
* ``c_src/peers/<library>/peer.yaml``     peer libraries as implementations of our ciphers
* ``java_src/peers/<library>.yaml``       Java peer libraries (Bouncy Castle, the JDK's SunJCE)
* ``hosts/<name>.yaml``                   machines reached over SSH
* ``matrix.yaml``                         which cells a run covers

:func:`validate` turns a parsed file into its model or a :class:`ConfigError`
naming the file, the key and the fix.  This module imports nothing of the lab
but its errors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import ConfigError

NAME_RE = r"^[a-z0-9][a-z0-9_.+-]*$"
IDENT_RE = r"^[a-z0-9_]+$"
ImplClass = Literal["portable", "simd", "hardware", "peer"]
Family = Literal["gcc", "clang"]
ToolchainFamily = Literal["gcc", "clang", "jvm"]  # jvm: cc is the java launcher, flags the JVM's (docs/java.md)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ---------------------------------------------------------------- toolchains
class ToolchainFile(Strict):
    """A compiler profile as written in toolchains/<name>.yaml."""

    description: str = Field(description="One line: what this profile stands for.")
    inherits: str | None = Field(None, description="Name of another profile to start from.")
    family: ToolchainFamily | None = Field(None, description="Compiler family (jvm: a JVM profile; its classes "
                                                             "are compiled by the host's javac).")
    cc: str | None = Field(None, description="C compiler executable (host builds); a target may prefix it. For a "
                                             "jvm profile: the java launcher (a name on PATH, or its path in the "
                                             "image of the profile's target).")
    package: str | None = Field(None, description="Debian package that provides the compiler (default: cc).")
    flags: list[str] | None = Field(None, description="Compiler flags; replaces the inherited list.")
    add_flags: list[str] = Field(default_factory=list, description="Flags appended to the inherited list.")
    remove_flags: list[str] = Field(default_factory=list, description="Inherited flags to drop.")
    ldflags: list[str] | None = Field(None, description="Extra link flags; replaces the inherited list.")
    arch_flags: dict[str, list[str]] | None = Field(
        None, description="Flags added only when building for a target arch, e.g. {i386: [-mtune=pentiumpro]}."
    )
    targets: list[str] | None = Field(
        None, description="Targets this profile can build for (e.g. [host] for sanitizers); default: all."
    )
    imitates: str | None = Field(None, description="For look-alike profiles: what compiler/behaviour it imitates.")
    reference_tables: list[str] | None = Field(
        None, description="NIST 1999 Appendix A tables built with the compiler this profile stands for (e.g. "
                          "[A.1-7] for Linux/GCC): the report compares like with like.")
    notes: list[str] = Field(default_factory=list, description="Adaptations and caveats, one per item.")


# ------------------------------------------------------- compiler versions
VERSION_RE = r"^[0-9]+(\.[0-9]+)*$"


class CompilerVersion(Strict):
    """One compiler version: a line of toolchains/versions.yaml."""

    family: Family
    version: str = Field(pattern=VERSION_RE, description="The version as Debian names the package, e.g. '14'.")
    cc: str | None = Field(None, description="C compiler executable (default: <family>-<version>, e.g. gcc-14).")
    package: str | None = Field(None, description="Debian package that installs it on the host (default: cc).")
    found: list[str] = Field(
        min_length=1, description="Targets whose build environment has it: 'host' (this machine; "
                                  "`compilers.install` installs the package with apt-get) or a target with an "
                                  "image that installs it (e.g. x86_64-trixie, built when a cell needs it).")
    notes: list[str] = Field(default_factory=list, description="Caveats, one per item.")

    @property
    def name(self) -> str:
        return f"{self.family}-{self.version}"

    @property
    def executable(self) -> str:
        return self.cc or self.name


class VersionsFile(Strict):
    """Compiler versions as data: toolchains/versions.yaml.  Every version x variant is a toolchain profile
    named <family>-<version>-<variant> (gcc-14-O3) that inherits the variant's profile for its family and
    replaces the compiler, the package and the targets."""

    variants: dict[str, dict[Family, str]] = Field(
        min_length=1, description="Variant name -> {family: the profile whose flags a version's profile "
                                  "inherits}, e.g. {O3: {gcc: gcc-O3, clang: clang-O3}}.")
    versions: list[CompilerVersion] = Field(min_length=1)

    @field_validator("variants")
    @classmethod
    def _variant_names(cls, v: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for k in v:
            if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.+]*$", k):
                raise ValueError(f"variant name '{k}' must be letters, digits, '_', '.', '+' (it ends a profile name)")
        return v

    @field_validator("versions")
    @classmethod
    def _unique(cls, v: list[CompilerVersion]) -> list[CompilerVersion]:
        seen = set()
        for cv in v:
            if cv.name in seen:
                raise ValueError(f"{cv.name} is listed twice")
            seen.add(cv.name)
        return v


# ------------------------------------------------------------------- targets
class ContainerLimits(Strict):
    """What the target's container may use (container backend): a runaway cell — a fork bomb, a leak — is
    stopped there (crashed, or timeout) instead of starving the machine and every other cell."""

    pids: int = Field(1024, ge=32, le=1_000_000,
                      description="Processes and threads at once in the container (its builds included).")
    memory_mib: int = Field(4096, ge=256, le=1_048_576,
                            description="Memory of the container in MiB, its /tmp (tmpfs) included; no swap.")


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
    image_plugin: bool = Field(True, description="Whether the image holds the instruction-count plugin "
                               "(c_src/qemu_plugin). false for Debian 13 images, whose QEMU 10 lacks the API it "
                               "uses: there the container backend counts nothing (the cells are still gated and "
                               "timed, with a note) and the mixed backend counts with the host's QEMU and plugin.")
    families: list[Family] = Field(description="Compiler families that can build for it.")
    counter: Literal["x86_tsc", "clock", "marker"] = Field(
        description="Cycle-counter back-end of c_src/harness (marker: guest instructions counted by the QEMU plugin)."
    )
    gcc_flags: list[str] = Field(default_factory=list, description="Extra flags for gcc on this target.")
    clang_flags: list[str] = Field(default_factory=list, description="Extra flags for clang (after --target).")
    static: bool = Field(False, description="Link statically (needed for qemu-user without a sysroot).")
    unsupported_flags: dict[Family, dict[str, str]] = Field(
        default_factory=dict,
        description="Per compiler family, flags it cannot serve on this target, each with why; a toolchain "
                    "profile using one is recorded 'unavailable' for the target, e.g. {clang: {-flto: ...}}.",
    )
    limits: ContainerLimits = Field(
        default_factory=ContainerLimits,
        description="Limits of the container the target's commands run in (container backend; a target without "
                    "an image uses x86_64's), e.g. {pids: 1024, memory_mib: 4096} (the defaults).",
    )

    @property
    def emulated(self) -> bool:
        return self.runner == "qemu-user"

    @model_validator(mode="after")
    def _qemu_needs_binary(self) -> "Target":
        if self.runner == "qemu-user" and not self.qemu:
            raise ValueError("runner qemu-user needs key 'qemu' (e.g. qemu-sparc64)")
        return self


# ------------------------------------------------------------------ profiles
class TimingSettings(Strict):
    blocks_per_call: int = Field(1, gt=0, le=256, description="Blocks per blockEncrypt call (NIST: 1).")


class CycleSettings(Strict):
    sizes: list[int] = Field(description="n of Encrypt-n / Decrypt-n (NIST: 1,16,128,1024,32768).")
    key_sizes: list[int] = Field([128], description="Key sizes cycle-counted (NIST: 128 only).")


class Sampling(Strict):
    """How many samples and processes a quantity gets, and when to stop."""

    estimator: Literal["trimmed", "min", "median"] = Field(
        "trimmed", description="Headline estimate over processes (each process's minimum first): trimmed = the 20 % "
                               "trimmed mean of the per-process minima, with a run-to-run interval (the lab's "
                               "default); min = the best case over process layouts; median = the median of the "
                               "per-process minima (see docs/measurement.md).")
    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="Confidence level of every interval.")
    precision: float = Field(gt=0, lt=1, description="Target relative half-width of the interval of every "
                                                     "quantity; sampling stops when all reach it.")
    min_processes: int = Field(5, ge=2, description="Processes per cell before the precision is checked.")
    max_processes: int = Field(20, ge=2, description="Processes per cell at most.")
    budget_seconds: float = Field(gt=0, description="Measuring time per cell at most (all its processes).")
    samples: int = Field(10, gt=0, description="Samples per quantity in one process.")
    warmup: int = Field(2, ge=0, description="Untimed rounds before the samples of a process.")
    sample_us: int = Field(100, gt=0, description="Length of one sample in microseconds (work is sized to it).")
    long_samples: int = Field(8, gt=0, description="Samples at least of an operation whose single call lasts "
                                                   "much longer than a sample (Encrypt-32768 of a slow cipher): it "
                                                   "takes fewer than `samples`, in the first rounds.")
    run_noise: float = Field(
        0.01, ge=0, lt=1, description="The machine's run-to-run noise (relative standard deviation of a figure "
                                      "between two runs) assumed until the lab has learnt this machine's own from "
                                      "A/A pairs (invoke bench.aa; results/<machine>/noise.json): it widens every "
                                      "trimmed estimator's interval, so that it covers the next run (docs/measurement.md).")
    reference_run_noise: float = Field(
        0.003, ge=0, lt=1, description="The same prior for figures given at the machine's reference speed (C and "
                                       "C++ cells, whose processes time the machine-speed gauge: lab/speed.py "
                                       "takes the machine's drift between runs out of them; on A/A pairs of the "
                                       "AMD kind what is left fitted to 0, docs/measurement.md). Java cells keep "
                                       "run_noise.")
    interleave: int = Field(
        0, ge=0, description="Cells measured together, one process each in turn (0: every cell of the run, so that "
                             "each cell's processes spread over the whole measuring time and the machine's drift "
                             "within it shows in their spread; docs/measurement.md).")
    emulated_processes: int = Field(2, ge=1, description="Processes per cell on emulated targets (their "
                                                          "timings measure QEMU; instruction counts are exact).")
    cpu: int | Literal["auto"] | None = Field(
        "auto", description="CPU the measuring processes are pinned to (auto: the last one this process may "
                            "use; null: not pinned).")
    lanes: int = Field(1, ge=1, description="Processes measured at once, each pinned to a CPU on its own physical "
                                            "core (auto: the last such CPUs this process may use; fewer when the "
                                            "machine has fewer cores). Above 1 a process shares the machine with "
                                            "another measuring one: a calibration belongs to its lane count "
                                            "(bench.aa --lanes; docs/measurement.md).")

    @model_validator(mode="after")
    def _bounds(self) -> "Sampling":
        if self.max_processes < self.min_processes:
            raise ValueError("max_processes must be >= min_processes")
        return self


class SterbenzLippSettings(Strict):
    """Sterbenz & Lipp's own timing method (their section 4.1), a stage of Java cells after the measuring."""

    repeats: int = Field(128, gt=0, description="Samples per operation (theirs: 128).")
    buffers: int = Field(2048, gt=0, description="1 KiB encryptions per sample (theirs: 2048).")
    setups: int = Field(1024, gt=0, description="Key setups of each of 32 keys per sample (theirs: 1024).")


class JvmSampling(Strict):
    """How Java cells (jvm toolchain profiles) differ from C cells: a JVM process costs a start-up and a JIT
    warm-up (about half a second), a C process milliseconds; estimator, confidence and precision are the
    profile's."""

    min_processes: int = Field(5, ge=2, description="JVM processes per cell before the precision is checked.")
    max_processes: int = Field(8, ge=2, description="JVM processes per cell at most.")
    budget_seconds: float = Field(10, gt=0, description="Measuring time per Java cell at most.")
    jit_warmup_ms: int = Field(300, ge=0, description="Untimed running of every operation in each JVM before its "
                                                      "samples, so that the JIT has compiled the hot methods.")
    measure_flags: list[str] = Field(
        ["-Xbatch"], description="JVM options of the measuring processes only (not the known-answer gate's, not the "
        "toolchain's): -Xbatch compiles in the foreground, so every JVM ends its warm-up with the same compiled code "
        "instead of whichever compilation won the race with the timed thread (docs/java.md).")
    cycle_sizes: list[int] = Field([1, 1024], description="n of Encrypt-n / Decrypt-n for Java cells.")
    sterbenz_lipp: SterbenzLippSettings | None = Field(
        None, description="Also Sterbenz & Lipp's method, in one more JVM per cell (null: not).")

    @model_validator(mode="after")
    def _bounds(self) -> "JvmSampling":
        if self.max_processes < self.min_processes:
            raise ValueError("max_processes must be >= min_processes")
        return self


class CipherOverride(Strict):
    budget_seconds: float | None = Field(None, gt=0)
    max_processes: int | None = Field(None, ge=2)
    sample_us: int | None = Field(None, gt=0)


class Profile(Strict):
    """How to measure: profiles/<name>.yaml."""

    name: str = Field(pattern=NAME_RE)
    description: str
    timing: TimingSettings = TimingSettings()
    cycles: CycleSettings
    sampling: Sampling
    per_cipher: dict[str, CipherOverride] = Field(
        default_factory=dict, description="Per-cipher changes, e.g. a larger budget for slow key schedules."
    )
    timeout_seconds: int = Field(600, gt=0, description="Limit for one program run of one cell.")
    ct: bool = Field(False, description="Check every verified cell for constant time (the trace check under QEMU; "
                                        "dudect on this machine's CPU), as --ct does.")
    jvm: JvmSampling = Field(JvmSampling(), description="Java cells (jvm toolchain profiles): processes, budget, "
                                                        "JIT warm-up, Sterbenz & Lipp's method.")

    def sampling_for(self, cipher: str, jvm: bool = False) -> Sampling:
        o = self.per_cipher.get(cipher)
        upd = {k: v for k, v in o.model_dump().items() if v is not None} if o else {}
        if jvm:  # a JVM process is costlier: Java's own process counts and budget
            upd.update(min_processes=self.jvm.min_processes, max_processes=self.jvm.max_processes,
                       budget_seconds=self.jvm.budget_seconds)
        return self.sampling.model_copy(update=upd) if upd else self.sampling


# ------------------------------------------------------------------- ciphers
class Implementation(Strict):
    sources: list[str] = Field(min_length=1, description="C files, relative to the cipher folder.")
    impl_class: ImplClass = Field(
        alias="class",
        description="portable: ANSI C any CPU runs (NIST's kind); simd: vector instructions; hardware: cipher "
                    "instructions such as AES-NI; peer: a library's implementation. NIST-comparable rankings use "
                    "portable ones only.")
    summary: str
    constant_time: bool | None = None
    word_bits: Literal[8, 16, 32, 64, 128, 256, 512]
    arch: list[str] = Field(["any"], description="Architectures it can run on, or [any].")
    default: bool = False
    label: str | None = Field(None, description="Row name in NIST tables, e.g. DFC-64.")


class JavaImplementation(Strict):
    """One of our Java implementations: java_src/ciphers/<cipher>/<Strategy>.java (Strategy: the name with its
    first letter and each letter after an underscore upper-cased, underscores dropped)."""

    impl_class: Literal["portable", "hardware"] = Field(
        alias="class", description="portable: plain Java any JVM runs; hardware: relies on JVM intrinsics.")
    summary: str
    constant_time: bool | None = None
    word_bits: Literal[8, 16, 32, 64, 128]
    default: bool = False


class CipherFile(Strict):
    name: str = Field(pattern=IDENT_RE)
    display: str
    block_bits: Literal[64, 128]
    key_bits: list[int] = Field(min_length=1)
    vectors: str | None = Field(description="File name in shared/vectors, or null.")
    local_vectors: list[str] = Field(default_factory=list)
    round1: bool = False
    checksums: dict[int, str] = Field(
        default_factory=dict, description="Key bits -> the kat program's checksum every build must print "
                                          "(python -m lab checksums --write fills it).")
    implementations: dict[str, Implementation] = Field(min_length=1)
    java: dict[str, JavaImplementation] = Field(
        default_factory=dict, description="Our Java implementations of the cipher (java_src/ciphers/<cipher>/), "
                                          "gated by the same vectors and checksums; exactly one default if any.")

    @field_validator("implementations", "java")
    @classmethod
    def _names(cls, v: dict) -> dict:
        for k in v:
            if not re.match(IDENT_RE, k):
                raise ValueError(f"implementation name '{k}' must match {IDENT_RE}")
        defaults = [k for k, i in v.items() if i.default]
        if v and len(defaults) != 1:
            raise ValueError(f"exactly one implementation needs 'default: true' (found {defaults or 'none'})")
        return v


# ---------------------------------------------------------------------- peers
class PeerImplementation(Strict):
    sources: list[str] = Field(min_length=1, description="Adapter sources, relative to the peer folder.")
    summary: str
    code: Literal["portable", "asm", "simd", "hardware"] = Field(
        description="What runs: portable C/C++, scalar assembly, vector code, or cipher instructions.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment the programs need.")
    arch: list[str] = Field(["x86_64"], description="Architectures it can run on (the library is the host's).")
    constant_time: bool | None = Field(
        None, description="The library's own claim (its documentation or source says so): true puts the peer in "
                          "the constant-time checks' claims and the compiler-made leak matrix; absent: no claim.")


class PeerOnTarget(Strict):
    """What differs where a target's image has the library under another name or version (Debian 13 ships
    Botan 3, not Botan 2): each key given replaces the peer file's own."""

    package: str | None = None
    cflags: list[str] | None = None
    libs: list[str] | None = None


class PeerFile(Strict):
    """A peer library as data: c_src/peers/<library>/peer.yaml."""

    library: str = Field(pattern=IDENT_RE)
    display: str
    package: str = Field(description="Debian package with the headers and the library.")
    language: Literal["c", "c++"]
    header: str = Field(description="A header under /usr/include whose presence proves the package is installed.")
    cflags: list[str] = Field(default_factory=list)
    libs: list[str] = Field(default_factory=list)
    targets: dict[str, PeerOnTarget] = Field(
        default_factory=dict, description="Per target (targets/<name>.yaml): its package, cflags or libs where "
                                          "they differ from the above.")
    implementations: dict[str, dict[str, PeerImplementation]] = Field(
        description="Our cipher name -> implementation name (the library, or library_variant) -> facts.")

    @field_validator("implementations")
    @classmethod
    def _names(cls, v: dict[str, dict[str, PeerImplementation]]) -> dict[str, dict[str, PeerImplementation]]:
        for impls in v.values():
            for k in impls:
                if not re.match(IDENT_RE, k):
                    raise ValueError(f"implementation name '{k}' must match {IDENT_RE}")
        return v


# ---------------------------------------------------------------- Java side
class JavaPeerImplementation(Strict):
    algorithm: str = Field(description="What the adapter instantiates: a Bouncy Castle engine class, or a JCA "
                                       "transformation and key algorithm ('AES/ECB/NoPadding AES').")
    summary: str
    code: Literal["portable", "hardware"] = Field(
        description="portable: Java code; hardware: the JIT replaces it with cipher instructions (intrinsics).")


class JavaPeerFile(Strict):
    """A Java peer library as data: java_src/peers/<library>.yaml."""

    library: str = Field(pattern=IDENT_RE)
    display: str
    adapter: Literal["BouncyCastle", "Jce"] = Field(description="Adapter class in java_src/peers/cipherlab/peers/.")
    provider: str | None = Field(None, description="JCA provider name (adapter Jce), e.g. SunJCE.")
    source: str = Field(description="Where the library comes from: a Maven coordinate in java_src/pom.xml, or "
                                    "'jdk' for the JDK's own providers.")
    implementations: dict[str, dict[str, JavaPeerImplementation]] = Field(
        description="Our cipher name -> implementation name -> facts.")

    @field_validator("implementations")
    @classmethod
    def _names(cls, v: dict) -> dict:
        for impls in v.values():
            for k in impls:
                if not re.match(IDENT_RE, k):
                    raise ValueError(f"implementation name '{k}' must match {IDENT_RE}")
        return v


# ---------------------------------------------------------------------- hosts
class HostFile(Strict):
    """A machine reached over SSH: hosts/<name>.yaml."""

    address: str = Field(description="Host name or IP address.")
    port: int = Field(22, gt=0, lt=65536)
    user: str | None = Field(None, description="Login name (default: ~/.ssh/config, else the local user).")
    identity_file: str | None = Field(None, description="Private key file (default: the SSH agent and ~/.ssh/config).")
    target: str = Field(description="A name from targets/: how to build for this machine.")
    workdir: str | None = Field(None, description="Folder on the host for the programs (default ~/.cipherlab).")
    known_hosts: str | None = Field(None, description="known_hosts file to verify the host key with "
                                                       "(default ~/.ssh/known_hosts).")
    answer_floor_seconds: float = Field(
        20, gt=0, le=3600, description="Least time any exchange with the host may take (a check, an upload, a "
                                       "program beyond its own time limit) before the host counts as not answering.")
    min_rate_kib: float = Field(
        256, gt=0, description="Slowest link to allow for, in KiB/s: sending N bytes may take answer_floor_seconds "
                               "+ N / (1024 * min_rate_kib) seconds.")


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
    implementations: Literal["default", "classes", "all", "ours", "peers"] | list[str] = Field(
        "default", description="'default', 'classes' (the default, every SIMD and hardware implementation of ours "
                               "and every peer), 'ours' (all of ours), 'peers' (our defaults and every peer), "
                               "'all', or a list of cipher/implementation names.")
    toolchains: list[str] = Field(min_length=1, description="Toolchain profile names or globs (fnmatch, e.g. "
                                                        "'clang-1*-O3'); each glob must match a profile.")
    targets: list[str] = Field(["host"], min_length=1)
    container_targets: list[str] | None = Field(
        None, description="Targets used instead of 'targets' when the backend is container and none are named."
    )
    key_sizes: list[int] | Literal["all"] = Field(
        "all", description="Key sizes to time; each cipher uses those it supports (its own if none)."
    )
    profile: str = "quick"
    backend: Literal["host", "container", "mixed"] = Field(
        "host", description="host: everything on this machine; container: every target in its image; mixed: the "
                            "host target on this machine, every other target in its image.")
    engine: Literal["auto", "docker", "podman"] = Field(
        "auto", description="Container engine for backend=container (auto: docker, else podman; env CIPHERLAB_ENGINE overrides)."
    )
    include: list[Rule] = Field(default_factory=list, description="Cells added after the axes product.")
    exclude: list[Rule] = Field(default_factory=list, description="Cells removed from the product.")


# ------------------------------------------------------------- validation
def validate(model: type[BaseModel], data: Any, path: Path) -> Any:
    """data as a model, or a ConfigError naming path, key and fix."""
    if not isinstance(data, dict):
        raise ConfigError(path, None, "must be a mapping of keys to values.", "see the JSON Schema in schemas/")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        errs = e.errors()  # a misspelt key first: it explains the "missing" one it usually causes
        err = next((x for x in errs if x["type"] == "extra_forbidden"), errs[0])
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
        fields = getattr(cur, "model_fields", {})
        fi = fields.get(part) or next((f for f in fields.values() if f.alias == part), None)
        if fi is None:
            continue  # a dict key (e.g. an implementation name): stay on the value model
        ann = fi.annotation
        args = getattr(ann, "__args__", ()) or (ann,)
        nxt = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        while nxt is None and args:
            inner = [b for a in args for b in getattr(a, "__args__", ())]  # list[Model] / dict[str, Model]
            nxt = next((b for b in inner if isinstance(b, type) and issubclass(b, BaseModel)), None)
            args = tuple(inner)
        if nxt is None:
            break
        cur = nxt
    return sorted(f.alias or name for name, f in getattr(cur, "model_fields", {}).items())


SCHEMAS: dict[str, type[BaseModel]] = {
    "matrix": MatrixFile,
    "toolchain": ToolchainFile,
    "versions": VersionsFile,
    "target": Target,
    "profile": Profile,
    "cipher": CipherFile,
    "peer": PeerFile,
    "host": HostFile,
    "java_peer": JavaPeerFile,
}


def export_schemas(out_dir: Path) -> list[Path]:
    """Writes one JSON Schema per config file kind (for editors)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMAS.items():
        schema = model.model_json_schema(by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = f"cipherlab {name} file"
        p = out_dir / f"{name}.schema.json"
        p.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        written.append(p)
    return written


def stale_schemas(schemas_dir: Path) -> list[str]:
    """The names of the schema files in schemas_dir that are missing or differ from what export_schemas writes."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return [p.name for p in export_schemas(Path(tmp))
                if not (schemas_dir / p.name).is_file() or (schemas_dir / p.name).read_text() != p.read_text()]
