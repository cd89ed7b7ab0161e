"""The Java side: the Java build kind of the cell pipeline, and the JMH tools of bench.java.

* :func:`discover` — our Java implementations (the ``java:`` section of each ``cipher.yaml``; the class is
  ``java_src/ciphers/<cipher>/<Strategy>.java``) and the Java peers (``java_src/peers/<library>.yaml``);
  :func:`impls_of` — the same, once per lab, by cipher, for the plan;
* :func:`profiles` — the JVM profiles: the toolchain profiles of family ``jvm`` (``toolchains/openjdk*.yaml``);
* :func:`build` — one javac step over ``java_src`` (the interface, the kat and measuring programs, the
  implementations, the peer adapters and the JMH benchmarks), keyed by a hash of the sources, the registry,
  javac's version and the jars, so an unchanged tree is not compiled again; the jars are the ones
  ``java_src/pom.xml`` pins, fetched once by Maven into ``~/.m2`` and used offline after that;
* :class:`JavaBuilder` — the build kind :class:`lab.pipeline.CellPipeline` uses for a cell of a jvm toolchain:
  the build above (once per tree, a cipher folder javac refuses left out) and one small launcher script per
  program (``kat``: cipherlab.Kat; ``timing``: cipherlab.Measure, which prints the timing and the cycles records
  of one JVM process; ``sterbenz_lipp``) that any backend runs as it runs a C program;
* :func:`run_kat` — the Java ``kat`` program on the cipher's vectors, judged by :func:`lab.kat.verdict`;
* :func:`run_jmh` / :func:`parse_jmh` — JMH for bench.java (forks are separate JVMs) and its JSON.

A missing JDK or Maven is a one-line :func:`unavailable` reason naming the Debian package.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import protocol
from .backends.base import LAUNCH_SUFFIX, Completed
from .config import ROOT, Lab, read_yaml
from .errors import ConfigError, UserError
from .kat import Verdict, read_kat, verdict
from .build import BuildResult
from .buildplan import BuildPlan
from .schema import CipherFile, JavaPeerFile, validate

JAVA_SRC = ROOT / "java_src"
JDK_PACKAGE = "openjdk-17-jdk-headless"  # the host's javac and the JVM of the openjdk17-* toolchain profiles
MAVEN_PACKAGE = "maven"
SOURCE_FOLDERS = ("harness", "ciphers", "peers", "bench")
# JMH benchmark method -> (lab operation, blocks per call)
BENCHMARKS = {"encrypt1": ("encrypt", 1), "decrypt1": ("decrypt", 1), "encrypt1024": ("encrypt", 1024),
              "decrypt1024": ("decrypt", 1024), "keySetup": ("key_setup", None)}


class JavaUnavailable(UserError):
    """Java cannot run here (no JDK, no Maven, jars that cannot be fetched): the reason is one line."""


class JavaBuildFailed(UserError):
    """javac refused the sources: the message holds its first errors; `files` are the sources javac named."""

    def __init__(self, message: str, files: tuple[Path, ...] = ()):
        super().__init__(message)
        self.files = files


# ------------------------------------------------------------------ values
@dataclass(frozen=True)
class JavaImpl:
    """One Java implementation of a cipher: ours (a class per strategy) or a peer library's (an adapter)."""

    cipher: str
    name: str
    display: str
    impl_class: str  # portable, hardware (ours) or peer
    summary: str
    class_name: str  # what the registry instantiates
    argument: str | None  # the peer adapter's argument
    block_bits: int
    key_bits: tuple[int, ...]
    vector_files: tuple[Path, ...]
    checksums: tuple[tuple[int, str], ...] = ()
    default: bool = False
    library: str | None = None  # peers: bouncycastle, sunjce
    code: str = "portable"  # portable Java, or hardware (JIT intrinsics)
    source: Path | None = None  # ours: the .java file
    round1: bool = False
    root: Path = JAVA_SRC  # the java_src tree it is built from
    language = "java"
    env: tuple = ()  # the C side's per-implementation environment: none for Java
    peer = None  # a C peer library (lab.config.PeerInfo): Java peers are classes of the same build

    @property
    def id(self) -> str:
        return f"{self.cipher}/{self.name}"

    @property
    def label(self) -> str:
        return self.display if self.impl_class != "peer" else f"{self.display} [{self.name}]"

    def facts(self) -> dict:
        """The record's `impl` facts (as lab.config.Impl.facts)."""
        return {"impl_class": self.impl_class, "default": self.default, "summary": self.summary, "language": "java",
                **({"peer": {"library": self.library, "package": "jdk" if self.library == "sunjce"
                             else "org.bouncycastle:bcprov-jdk18on", "code": self.code}} if self.library else {})}


@dataclass(frozen=True)
class JvmProfile:
    name: str
    description: str
    java: str
    package: str
    flags: tuple[str, ...]
    notes: tuple[str, ...]
    image: str | None = None  # a target whose container image holds this JVM; None: the host's


@dataclass(frozen=True)
class JavaBuild:
    classes: Path
    jars: tuple[Path, ...]
    key: str
    javac_version: str
    cached: bool = False  # found complete in the build folder: javac did not run

    @property
    def classpath(self) -> str:
        return os.pathsep.join([str(self.classes), *map(str, self.jars)])


# -------------------------------------------------------------- discovery
def strategy_class(name: str) -> str:
    """The class name of a strategy: ttable -> Ttable, full_keying -> FullKeying."""
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def package_of(cipher: str) -> str:
    """The Java package of a cipher folder (a leading digit gets an underscore: 3des -> _3des)."""
    return "cipherlab.ciphers." + (f"_{cipher}" if cipher[:1].isdigit() else cipher)


def discover(lab: Lab, source_root: Path = JAVA_SRC) -> dict[str, JavaImpl]:
    """Every Java implementation and peer, by id; a listed class without its file is a ConfigError."""
    out: dict[str, JavaImpl] = {}
    for cname, cipher in sorted(lab.ciphers.items()):
        path = cipher.folder / "cipher.yaml"
        cf: CipherFile = validate(CipherFile, read_yaml(path), path)
        vectors = next(iter(cipher.impls.values())).vector_files
        for name, ji in cf.java.items():
            src = source_root / "ciphers" / cname / f"{strategy_class(name)}.java"
            if not src.is_file():
                raise ConfigError(path, f"java.{name}", f"no Java source {src.relative_to(source_root.parent)}.",
                                  "write the class or remove the entry")
            out[f"{cname}/{name}"] = JavaImpl(
                cname, name, cipher.display, ji.impl_class, ji.summary, f"{package_of(cname)}.{strategy_class(name)}",
                None, cipher.block_bits, cipher.key_bits, vectors, tuple(sorted(cf.checksums.items())), ji.default,
                source=src, round1=cipher.round1, root=source_root)
    for path in sorted((source_root / "peers").glob("*.yaml")):
        pf: JavaPeerFile = validate(JavaPeerFile, read_yaml(path), path)
        for cname, impls in pf.implementations.items():
            if cname not in lab.ciphers:
                raise ConfigError(path, f"implementations.{cname}", "not a known cipher.",
                                  f"use one of {sorted(lab.ciphers)}")
            cipher = lab.ciphers[cname]
            some = next(iter(cipher.impls.values()))
            keys = ",".join(map(str, cipher.key_bits))
            for name, pi in impls.items():
                if pf.adapter == "Jce":
                    transformation, key_alg = pi.algorithm.split()
                    arg = f"{pf.provider} {transformation} {key_alg} {cipher.block_bits // 8} {keys}"
                else:
                    arg = f"{pi.algorithm} {keys}"
                out[f"{cname}/{name}"] = JavaImpl(
                    cname, name, cipher.display, "peer", pi.summary, f"cipherlab.peers.{pf.adapter}", arg,
                    cipher.block_bits, cipher.key_bits, some.vector_files, some.checksums, library=pf.library,
                    code=pi.code, round1=cipher.round1, root=source_root)
    _DISCOVERED[Path(source_root).resolve()] = out
    return out


_DISCOVERED: dict[Path, dict[str, JavaImpl]] = {}  # java_src tree -> every implementation (the build's registry)


def impls_of(lab: Lab) -> dict[str, list[JavaImpl]]:
    """Every Java implementation of the lab's java_src by cipher (discovered once per Lab)."""
    if getattr(lab, "_java_impls", None) is None:
        by: dict[str, list[JavaImpl]] = {}
        for i in discover(lab, lab.root / "java_src").values():
            by.setdefault(i.cipher, []).append(i)
        lab._java_impls = by  # type: ignore[attr-defined]
    return lab._java_impls  # type: ignore[attr-defined]


def select(impls: list[JavaImpl], selection) -> list[JavaImpl]:
    """What a selection of matrix.run --implementations picks among one cipher's Java implementations, as
    lab.plan.implementations does among its C ones: default, ours, peers (the default and every peer), all, or a
    list of cipher/name (the cipher's default when the list names none of it)."""
    ours = [i for i in impls if i.impl_class != "peer"]
    default = [i for i in ours if i.default][:1]
    if selection == "default":
        return default
    if selection == "ours":
        return ours
    if selection in ("peers", "classes"):  # Java has one class of our code: classes = the default and the peers
        return default + [i for i in impls if i.impl_class == "peer"]
    if selection == "all":
        return list(impls)
    picked = [i for i in impls if i.id in selection]
    return picked or ([] if any(x.startswith(f"{impls[0].cipher}/") for x in selection) else default)


def profiles(lab: Lab | None = None) -> dict[str, JvmProfile]:
    """The JVM profiles: the lab's toolchain profiles of family jvm (one whose targets have an image runs there)."""
    lab = lab or _image_lab()
    out = {}
    for name, tc in sorted(lab.toolchains.items()):
        if tc.family == "jvm":
            image = next((t for t in tc.targets or () if lab.target(t).image), None)
            out[name] = JvmProfile(name, tc.description, tc.cc, tc.package, tc.flags, tc.notes, image)
    return out


def registry_text(impls: dict[str, JavaImpl]) -> str:
    lines = ["# written by lab/java.py: id <TAB> class [<TAB> adapter argument]"]
    for i in impls.values():
        lines.append("\t".join([i.id, i.class_name] + ([i.argument] if i.argument else [])))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------- toolchain
def unavailable(java: str = "java") -> str | None:
    """Why Java cannot run here (one line naming the Debian package to install), or None."""
    if not shutil.which("javac") or not shutil.which(java):
        missing = "javac" if not shutil.which("javac") else java
        return f"Java not found ({missing} is not on PATH): install the Debian package {JDK_PACKAGE}"
    return None


def java_version(java: str = "java", profile: JvmProfile | None = None) -> str:
    """The `java -version` build line, e.g. 'OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, ...)'
    (of the profile's JVM when given: in its image for an image profile)."""
    r = jvm_command(profile, ["-version"], 60) if profile else \
        subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    return lines[-1] if lines else ""


# ------------------------------------------------------ JVMs in an image
_backends: dict = {}  # image target -> ContainerBackend (one container per target, removed at exit)


@functools.lru_cache(maxsize=1)
def _image_lab() -> Lab:
    """The configuration image profiles look their target up in: read once, not per JVM started."""
    return Lab()


def _backend(image: str):
    from .backends.container import ContainerBackend

    if image not in _backends:
        _backends[image] = ContainerBackend(_image_lab(), auto_build=False, progress=lambda _: None)
    return _backends[image]


def profile_unavailable(profile: JvmProfile) -> str | None:
    """Why this profile's JVM cannot run here (one line naming the package, or the image holding it), or None."""
    if not profile.image:
        return unavailable(profile.java)
    from .images import EngineError, detect_engine, image_ref

    try:
        engine = detect_engine()
        ref = image_ref(_image_lab().target(profile.image))
    except (EngineError, ConfigError, KeyError) as e:
        return f"{profile.package} runs in the image of target {profile.image}, and no container engine answers: {e}"
    if not engine.image_exists(ref):
        return (f"{profile.package} is in the image {ref}, which is not built: "
                f"invoke images.build --targets {profile.image}")
    if not jvm_command(profile, ["-version"], 120).ok:  # an image built from an older Dockerfile
        return (f"the image {ref} has no {profile.java} ({profile.package}): it is older than its Dockerfile; "
                f"invoke images.build --targets {profile.image}")
    return None


def image_classpath(b: JavaBuild, backend) -> str:
    """The build's classpath as a container sees it: the jars (in ~/.m2, which the image's user cannot read)
    copied once beside the classes, into the build folder the container mounts."""
    if not backend._visible(b.classes):
        raise JavaUnavailable(f"the Java build {b.classes} is outside the build folder {backend.build_dir} the "
                              "container mounts: build into it (the default build/)")
    return shared_classpath(b)


def jvm_command(profile: JvmProfile, args: list[str], timeout: float, cpu: int | None = None) -> Completed:
    """The profile's launcher with `args` (no flags added): on the host, or inside its image."""
    argv = [profile.java, *args]
    if profile.image:
        be = _backend(profile.image)
        pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
        return be.exec(pin + argv, target=be.lab.target(profile.image), timeout=timeout)
    pin_fn = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    t0, started = time.monotonic(), time.time()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=pin_fn)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return Completed(argv, None, out, "", time.monotonic() - t0, timed_out=True, started=started)
    return Completed(argv, r.returncode, r.stdout, r.stderr, time.monotonic() - t0, started=started)


def pinned_artifacts(pom: Path = JAVA_SRC / "pom.xml") -> list[str]:
    """group:artifact:version of every dependency java_src/pom.xml pins."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.parse(pom).getroot()
    return [":".join(d.findtext(f"m:{k}", namespaces=ns) for k in ("groupId", "artifactId", "version"))
            for d in root.findall("m:dependencies/m:dependency", ns)]


def jars(build_dir: Path, pom: Path = JAVA_SRC / "pom.xml") -> tuple[Path, ...]:
    """The jars of the pinned dependencies and theirs, from ~/.m2; Maven fetches them the first time only."""
    key = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    listing = (build_dir / "java" / f"classpath-{key}.txt").resolve()
    if listing.is_file():
        paths = tuple(Path(p) for p in listing.read_text().strip().split(os.pathsep) if p)
        if all(p.is_file() for p in paths):
            return paths
    if not shutil.which("mvn"):
        raise JavaUnavailable(f"Maven not found (mvn is not on PATH): install the Debian package {MAVEN_PACKAGE}")
    listing.parent.mkdir(parents=True, exist_ok=True)
    tail = ""
    for offline in (True, False):  # offline first: after the first fetch nothing goes to the network
        argv = ["mvn", "-q", "-B", "-Dstyle.color=never", *(["-o"] if offline else []), "-f", str(pom), "dependency:build-classpath",
                f"-Dmdep.outputFile={listing}"]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        if r.returncode == 0 and listing.is_file():
            return tuple(Path(p) for p in listing.read_text().strip().split(os.pathsep) if p)
        tail = ((r.stdout + r.stderr).strip().splitlines() or [""])[-1][:200]
    raise JavaUnavailable(f"Maven could not fetch the jars of {pom.name} ({', '.join(pinned_artifacts(pom))}): {tail}")


# ----------------------------------------------------------------- build
def _sources(source_root: Path, exclude: tuple[str, ...] = ()) -> list[Path]:
    return sorted(p for d in SOURCE_FOLDERS for p in (source_root / d).rglob("*.java")
                  if not (d == "ciphers" and p.relative_to(source_root / d).parts[0] in exclude))


def _digest(source_root: Path, sources: list[Path]):
    h = hashlib.sha256()
    for p in sources:
        h.update(str(p.relative_to(source_root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h


def source_digest(source_root: Path) -> str:
    """A hash of every Java source of a tree (what a resume must find unchanged for a Java cell)."""
    return _digest(Path(source_root), _sources(Path(source_root))).hexdigest()[:16]


def build(build_dir: Path, impls: dict[str, JavaImpl], source_root: Path = JAVA_SRC,
          exclude: tuple[str, ...] = ()) -> JavaBuild:
    """javac over source_root's harness, ciphers, peers and bench folders (content-hash cached).  `exclude`:
    cipher folders left out (their classes are then missing at run time: the registry creates classes by name)."""
    reason = unavailable()
    if reason:
        raise JavaUnavailable(reason)
    jar_paths = jars(build_dir)
    sources = _sources(source_root, exclude)
    javac_v = subprocess.run(["javac", "-version"], capture_output=True, text=True, timeout=60)
    javac_version = (javac_v.stdout + javac_v.stderr).strip()
    registry = registry_text(impls)
    h = _digest(source_root, sources)
    h.update(registry.encode() + javac_version.encode() + os.pathsep.join(map(str, jar_paths)).encode())
    key = h.hexdigest()[:20]
    out = (build_dir / "java" / key / "classes").resolve()
    if (out.parent / "complete").is_file():
        out.chmod(0o755)  # one built before the mode was set (below) is readable in a container too
        return JavaBuild(out, jar_paths, key, javac_version, cached=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="classes.", dir=out.parent))
    cp = os.pathsep.join(map(str, jar_paths))
    argv = ["javac", "--release", "17", "-encoding", "UTF-8", "-nowarn", "-d", str(tmp), "-cp", cp,
            "-processorpath", cp, *map(str, sources)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        errors = [ln for ln in (r.stdout + r.stderr).splitlines() if ": error:" in ln]
        files = tuple(dict.fromkeys(Path(ln.split(":", 1)[0]) for ln in errors))
        raise JavaBuildFailed("javac failed: " + ("; ".join(errors[:3]) or (r.stdout + r.stderr).strip()[-300:]),
                              files)
    (tmp / "cipherlab").mkdir(exist_ok=True)
    (tmp / "cipherlab" / "registry.txt").write_text(registry)
    shutil.rmtree(out, ignore_errors=True)
    tmp.chmod(0o755)  # mkdtemp makes it 0700: a container's non-root user (the JDK 21 image) must read the classes
    tmp.rename(out)
    (out.parent / "complete").write_text(" ".join(argv[:-len(sources)]) + "\n")
    return JavaBuild(out, jar_paths, key, javac_version)


# ------------------------------------------------------ the build kind
MAINS = {"kat": "cipherlab.Kat", "timing": "cipherlab.Measure", "sterbenz_lipp": "cipherlab.bench.SterbenzLipp"}
JIT_FLAGS = ("TieredCompilation", "TieredStopAtLevel", "UseCompiler", "UseAES", "UseAESIntrinsics",
             "CICompilerCount")


def build_excluding(build_dir: Path, impls: dict[str, JavaImpl], source_root: Path) \
        -> tuple[JavaBuild | None, dict[str, str]]:
    """(the build, {cipher: javac's error} for the cipher folders javac refused).  A refused cipher folder is left
    out and the rest built again; an error outside ciphers/ fails every cell (cipher "*")."""
    failed: dict[str, str] = {}
    for _ in range(len(impls) + 1):
        try:
            return build(build_dir, impls, source_root, exclude=tuple(sorted(failed))), failed
        except JavaBuildFailed as e:
            bad = set()
            for f in e.files:
                try:
                    bad.add(f.resolve().relative_to((source_root / "ciphers").resolve()).parts[0])
                except ValueError:
                    return None, {"*": str(e)}
            if not bad or bad <= set(failed):
                return None, {"*": str(e)}
            failed.update({c: str(e) for c in bad})
    return None, {"*": "javac failed"}


def jvm_state(java: str, flags: tuple[str, ...], run=None) -> dict:
    """The JVM's `java -version` build line, its JIT state (interpreter, C1, C2) and the JIT's final flags, as the
    JVM reports them (-XX:+PrintFlagsFinal); `run(argv)` runs it where the cell runs (default: here)."""
    argv = [java, *flags, "-XX:+PrintFlagsFinal", "-version"]
    r = run(argv) if run else subprocess.run(argv, capture_output=True, text=True, timeout=120)
    jit_flags = {}
    for ln in r.stdout.splitlines():
        m = re.match(r"\s*\S+\s+(\w+)\s+=\s+(\S+)", ln)
        if m and m.group(1) in JIT_FLAGS:
            jit_flags[m.group(1)] = m.group(2)
    # a JVM that does not start (not installed where the cell runs: "java: not found") has no build line
    build_line = (r.stderr.strip().splitlines() or [""])[-1] if r.returncode == 0 else ""
    if "interpreted mode" in build_line or jit_flags.get("UseCompiler") == "false":
        jit = "interpreter"
    elif jit_flags.get("TieredCompilation") == "true" and int(jit_flags.get("TieredStopAtLevel", "4")) < 4:
        jit = "C1"
    else:
        jit = "C2 (tiered)" if jit_flags.get("TieredCompilation") == "true" else "C2"
    return {"java": java, "java_version": build_line, "flags": list(flags), "jit": jit, "jit_flags": jit_flags}


def _write_once(path: Path, text: str, mode: int) -> None:
    """Writes `text` to `path` unless it holds it already (atomically: cells are prepared in parallel)."""
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(text)
        tmp.chmod(mode)
        tmp.rename(path)


def _launcher(path: Path, java: str, flags: tuple[str, ...], classpath: str, main: str,
              jars: tuple[Path, ...] = ()) -> Path:
    """A shell script that starts `main` in a JVM: the program a backend runs for a Java cell (rewritten only
    when it changes, so that its bytes, which key the verdict cache, change with the build or the flags).  Beside
    it, its launch spec (lab/backends/base.py launch_spec): the same JVM command with the classpath as files, so
    that a backend on another machine (SSH) ships the jars and starts the JVM there."""
    _write_once(path, "#!/bin/sh\n# written by lab/java.py\nexec " + " ".join(
        shlex.quote(x) for x in (java, *flags, "-cp", classpath, main)) + ' "$@"\n', 0o755)
    spec = {"java": java, "flags": list(flags), "classpath": [str(j) for j in jars], "main": main}
    _write_once(path.with_name(path.name + LAUNCH_SUFFIX), json.dumps(spec, indent=1) + "\n", 0o644)
    return path


def classes_jar(b: JavaBuild) -> Path:
    """The build's classes as one jar (stored entries in name order with a fixed date: the same bytes for the
    same classes), made once beside them: what an SSH host receives instead of a folder."""
    path = b.classes.parent / "classes.jar"
    if not path.is_file():
        tmp = path.with_name(f".classes.jar.{os.getpid()}.{threading.get_ident()}")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as z:
            for f in sorted(p for p in b.classes.rglob("*") if p.is_file()):
                z.writestr(zipfile.ZipInfo(f.relative_to(b.classes).as_posix(), (1980, 1, 1, 0, 0, 0)),
                           f.read_bytes())
        tmp.rename(path)
    return path


_SIGNATURE = re.compile(r"META-INF/[^/]+\.(SF|RSA|DSA|EC)$")


def unsigned_copy(src: Path, dest: Path) -> None:
    """`src` without its signature (META-INF/*.SF, .RSA, .DSA, .EC) and with only the main section of its
    manifest (Multi-Release and the like; the per-entry digests go): a JVM verifies a signed jar's entries as it
    loads their classes, which cost Bouncy Castle's jar 0.33 s of every JVM's start (0.63 -> 0.30 s a measuring
    process, quiet AMD VM), and no cell uses the signature (the JDK's providers live in the JDK).  The same
    bytes for the same jar (entries in their order, their own dates)."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}")
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            if _SIGNATURE.match(info.filename):
                continue
            data = z.read(info)
            if info.filename == "META-INF/MANIFEST.MF":
                main = data.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
                data = main.rstrip(b"\n") + b"\n\n"
            out.writestr(info, data)
    tmp.rename(dest)


def shared_jars(b: JavaBuild) -> list[Path]:
    """The build's jars (in ~/.m2, which a container does not mount) beside the classes, into the build folder
    every backend sees, each as its :func:`unsigned_copy` (made again when its source's size changes)."""
    folder = b.classes.parent.parent / "jars"
    folder.mkdir(parents=True, exist_ok=True)
    copies = []
    for j in b.jars:
        dest, source = folder / j.name, folder / f".{j.name}.from"
        stamp = f"{j.stat().st_size} unsigned\n"
        if not dest.is_file() or not source.is_file() or source.read_text() != stamp:
            unsigned_copy(j, dest)
            source.write_text(stamp)
        copies.append(dest)
    return copies


def shared_classpath(b: JavaBuild, jars: list[Path] | None = None) -> str:
    """The build's classes and its shared jars (:func:`shared_jars`) as a classpath."""
    return os.pathsep.join([str(b.classes), *map(str, shared_jars(b) if jars is None else jars)])


class JavaBuilder:
    """The Java build kind of the cell pipeline: javac once per java_src tree (a refused cipher folder left out),
    and per cell the launchers of its programs with the cell's JVM and flags.  Thread-safe: cells are prepared
    in parallel."""

    def __init__(self, build_dir: Path):
        self.build_dir = Path(build_dir)
        self._lock = threading.Lock()
        self._trees: dict[Path, tuple[JavaBuild | None, dict[str, str], float]] = {}

    def compiled(self, root: Path) -> tuple[JavaBuild | None, dict[str, str], float]:
        """(the build, refused cipher folders, seconds javac took) of a java_src tree, built once."""
        root = Path(root).resolve()
        with self._lock:
            if root not in self._trees:
                t0 = time.monotonic()
                impls = _DISCOVERED.get(root) or discover(Lab(root=root.parent), root)
                b, refused = build_excluding(self.build_dir, impls, root)
                self._trees[root] = (b, refused, round(time.monotonic() - t0, 3))
            return self._trees[root]

    def build(self, impl: JavaImpl, java: str, flags: tuple[str, ...],
              measure_flags: tuple[str, ...] = ()) -> dict[str, BuildResult]:
        """The cell's programs as build results (raises JavaUnavailable, JavaBuildFailed).  The kat launcher takes
        the JVM without the profile's flags: the bytecode and so the verdict are the same under every flag set,
        and one gate (cached per launcher) serves every profile of one JVM.  The measuring program (timing) also
        takes the measurement profile's `measure_flags`, before the toolchain's (which so win a conflict)."""
        reason = unavailable()
        if reason:
            raise JavaUnavailable(reason)
        b, refused, _ = self.compiled(impl.root)
        why = refused.get("*") or (refused.get(impl.cipher) if impl.impl_class != "peer" else None)
        if b is None or why:
            raise JavaBuildFailed(why or "javac failed")
        jars = shared_jars(b)
        cp = shared_classpath(b, jars)
        shipped = (classes_jar(b), *jars)  # what an SSH host receives
        out = {}
        for program, main in MAINS.items():
            fl = () if program == "kat" else (*measure_flags, *flags) if program == "timing" else flags
            tag = hashlib.sha256(json.dumps([java, list(fl)]).encode()).hexdigest()[:12]
            folder = b.classes.parent / "bin" / (tag if fl else hashlib.sha256(java.encode()).hexdigest()[:12])
            plan = BuildPlan(program, _launcher(folder / program, java, fl, cp, main, shipped), (), "javac",
                             ("--release", "17"), (), ())
            out[program] = BuildResult(plan, ok=True, cached=b.cached, compiler_version=b.javac_version)
        out["cycles"] = out["timing"]  # one JVM prints both (cipherlab.Measure): one process, one JIT
        return out


# ------------------------------------------------------------ the gate
def run_program(b: JavaBuild, main: str, args: list[str], profile: JvmProfile | None = None,
                timeout: float = 600, cpu: int | None = None) -> Completed:
    """One JVM of the profile (the host's `java` without one; inside its image for an image profile); `cpu`:
    pinned to that CPU (and so are the processes it starts: JMH's forks), as the C side's measuring processes
    are."""
    profile = profile or JvmProfile("host", "", "java", JDK_PACKAGE, (), ())
    cp = image_classpath(b, _backend(profile.image)) if profile.image else b.classpath
    return jvm_command(profile, [*profile.flags, "-cp", cp, main, *args], timeout, cpu)


def kat_runs(b: JavaBuild, impl: JavaImpl, profile: JvmProfile | None = None, files: list[Path] | None = None,
             timeout: float = 600) -> list[tuple[Path, Completed]]:
    """The kat program's run on each vectors file (its typed records: ``lab.kat.read_kat``)."""
    runs = []
    for f in (files if files is not None else impl.vector_files):
        c = run_program(b, "cipherlab.Kat", ["--impl", impl.id, "--file", str(Path(f).resolve())], profile, timeout)
        runs.append((Path(f), c))
        if read_kat(c).summary is None:  # no tally: lab.kat.verdict says why
            break
    return runs


def kat_records(b: JavaBuild, impl: JavaImpl, profile: JvmProfile | None = None,
                files: list[Path] | None = None, timeout: float = 600) -> list[protocol.Record]:
    """Every record the kat program printed (kat_fail, kat_checksum, kat_summary, error, unavailable), typed."""
    return [rec for _, c in kat_runs(b, impl, profile, files, timeout) for rec in protocol.read(c, "Kat")]


def run_kat(b: JavaBuild, impl: JavaImpl, profile: JvmProfile | None = None, files: list[Path] | None = None,
            timeout: float = 600) -> Verdict:
    """The known-answer gate of one Java implementation, judged exactly as a C build is."""
    return verdict(kat_runs(b, impl, profile, files, timeout), dict(impl.checksums))


# ---------------------------------------------------------------- timing
@dataclass
class JmhResult:
    """One JMH benchmark of one implementation and key size: the scores of every fork (ns per operation)."""

    impl: str
    key_bits: int
    benchmark: str  # encrypt1, decrypt1, encrypt1024, decrypt1024, keySetup
    op: str  # encrypt, decrypt, key_setup
    n_blocks: int | None
    unit: str
    forks: list[list[float]] = field(default_factory=list)  # per fork (process): its measured iterations
    jvm: str = ""
    vm_version: str = ""
    jvm_args: list[str] = field(default_factory=list)
    warmup_iterations: int = 0
    warmup_time: str = ""
    measurement_time: str = ""

    @property
    def per_process_min(self) -> list[float]:
        return [min(f) for f in self.forks if f]


def parse_jmh(data: list | str | Path) -> list[JmhResult]:
    """JMH's ``-rf json`` output (a path, its text or the parsed list) as one JmhResult per benchmark."""
    if isinstance(data, Path):
        data = data.read_text()
    if isinstance(data, str):
        data = json.loads(data)
    out = []
    for r in data:
        method = r["benchmark"].rsplit(".", 1)[-1]
        if method not in BENCHMARKS:
            raise ValueError(f"JMH result of an unknown benchmark {r['benchmark']!r}")
        if r.get("mode") != "avgt":
            raise ValueError(f"JMH result {r['benchmark']!r} in mode {r.get('mode')!r}, expected avgt")
        pm = r["primaryMetric"]
        unit = pm["scoreUnit"]
        scale = {"ns/op": 1.0, "us/op": 1e3, "ms/op": 1e6, "s/op": 1e9}.get(unit)
        if scale is None:
            raise ValueError(f"JMH result {r['benchmark']!r} in unit {unit!r}, expected a time per operation")
        op, n = BENCHMARKS[method]
        out.append(JmhResult(
            impl=r["params"]["impl"], key_bits=int(r["params"]["keyBits"]), benchmark=method, op=op, n_blocks=n,
            unit="ns/op", forks=[[float(x) * scale for x in fork] for fork in pm["rawData"]], jvm=r.get("jvm", ""),
            vm_version=r.get("vmVersion", ""), jvm_args=list(r.get("jvmArgs", [])),
            warmup_iterations=int(r.get("warmupIterations", 0)), warmup_time=r.get("warmupTime", ""),
            measurement_time=r.get("measurementTime", "")))
    return out


def timing_processes(results: list[JmhResult], impl: str) -> list[dict]:
    """Per fork, the timing program's per-process shape for lab.quantities.timing_quantities:
    ``{key_size: {"encrypt"|"decrypt"|"key_setup": {"per_sample": 1, "ns": [ns per block or key pair, ...]}}}``
    from the one-block benchmarks and keySetup (NIST's blocks_per_call of 1).  Fork i of each benchmark is
    process i: each quantity's per-process minima come from separate JVMs, as the lab's do from processes."""
    mine = [r for r in results if r.impl == impl and r.benchmark in ("encrypt1", "decrypt1", "keySetup")]
    nforks = min((len(r.forks) for r in mine), default=0)
    procs = []
    for i in range(nforks):
        proc: dict = {}
        for r in mine:
            proc.setdefault(r.key_bits, {})[r.op] = {"per_sample": 1, "ns": list(r.forks[i])}
        procs.append({k: v for k, v in proc.items() if len(v) == 3})
    return [p for p in procs if p]


def cycle_processes(results: list[JmhResult], impl: str) -> list[list[dict]]:
    """Per fork, the cycles program's per-process shape for lab.quantities.cycle_quantities: Encrypt-n and
    Decrypt-n (n = 1, 1024) as ns per call, counter ``jmh`` (no empty-call record: JMH subtracts nothing and
    its per-call overhead is part of the cost, as the C programs' is before the null call is taken off)."""
    mine = [r for r in results if r.impl == impl and r.op in ("encrypt", "decrypt")]
    nforks = min((len(r.forks) for r in mine), default=0)
    return [[{"key_size": r.key_bits, "op": r.op, "n": r.n_blocks, "calls": 1, "counter": "jmh", "unit": "ns",
              "deltas": list(r.forks[i])} for r in mine] for i in range(nforks)]


def run_jmh(b: JavaBuild, impl: JavaImpl, profile: JvmProfile, out_json: Path, key_bits: list[int] | None = None,
            benchmarks: list[str] | None = None, forks: int = 2, warmup: int = 3, iterations: int = 5,
            iteration_ms: int = 200, timeout: float = 1800, warmup_ms: int | None = None,
            cpu: int | None = None) -> list[JmhResult]:
    """JMH over one implementation: every benchmark x key size, `forks` JVMs each (the profile's flags);
    warm-up iterations of `warmup_ms` (default `iteration_ms`); `cpu`: JMH and its forks pinned to it."""
    keys = [k for k in (key_bits or impl.key_bits) if k in impl.key_bits]
    names = benchmarks or list(BENCHMARKS)
    regex = r"cipherlab\.bench\.CipherBench\.(" + "|".join(map(re.escape, names)) + r")$"
    out_json.parent.mkdir(parents=True, exist_ok=True)
    args = [regex, "-p", f"impl={impl.id}", "-p", f"keyBits={','.join(map(str, keys))}", "-f", str(forks),
            "-wi", str(warmup), "-i", str(iterations), "-w", f"{warmup_ms or iteration_ms}ms", "-r", f"{iteration_ms}ms",
            "-foe", "true", "-rf", "json", "-rff", str(out_json),
            "-jvm", profile.java if profile.image else shutil.which(profile.java) or profile.java]
    if profile.flags:
        args += ["-jvmArgsAppend", " ".join(profile.flags)]
    deadline = time.monotonic() + timeout
    # the JMH host runs where its forks run (an image profile's JVM: in its image), without the fork flags
    host = replace(profile, flags=()) if profile.image else None
    while True:  # JMH refuses to run beside another JMH (its lock file): wait for it, as for the lab's timing lock
        c = run_program(b, "org.openjdk.jmh.Main", args, host, max(1.0, deadline - time.monotonic()), cpu)
        if "Unable to acquire the JMH lock" not in c.stdout + c.stderr or time.monotonic() > deadline:
            break
        time.sleep(2)
    if not c.ok or not out_json.is_file():
        tail = [ln for ln in (c.stdout + c.stderr).splitlines() if ln.strip()][-3:]
        raise RuntimeError(f"JMH on {impl.id} ({profile.name}): {c.describe_failure()}: {' | '.join(tail)[:400]}")
    return parse_jmh(out_json)


# ------------------------------------------------------- ours against a peer
def paired_ratios(rounds: list[dict[str, dict[str, float]]], ours: str, peer: str) -> dict[str, dict]:
    """Cost ratios ours / peer per benchmark from interleaved rounds ({impl: {benchmark: best ns/op}} each, the
    two measured back to back): the median over rounds with the smallest and largest (a drift of the machine
    between rounds cancels within a round), and the ratio of the best costs over all rounds."""
    out = {}
    names = sorted({b for r in rounds for b in r.get(ours, {})} & {b for r in rounds for b in r.get(peer, {})})
    for b in names:
        rs = sorted(r[ours][b] / r[peer][b] for r in rounds if b in r.get(ours, {}) and b in r.get(peer, {}))
        mid = len(rs) // 2
        median = rs[mid] if len(rs) % 2 else (rs[mid - 1] + rs[mid]) / 2
        best = min(r[ours][b] for r in rounds if b in r.get(ours, {})) / \
            min(r[peer][b] for r in rounds if b in r.get(peer, {}))
        out[b] = {"median": median, "low": rs[0], "high": rs[-1], "rounds": len(rs), "best_over_best": best}
    return out


def fork_minima(b: JavaBuild, impls: list[JavaImpl], profile: JvmProfile, out_dir: Path,
                benchmarks: list[str] | None = None, tag: str = "", **jmh) -> dict[str, dict[str, list[float]]]:
    """One JMH run per implementation in turn (first key size): {impl: {benchmark: [each fork's minimum over its
    iterations, ns/op]}}, the per-process minima the lab's estimator (lab.stats.estimate / compare) reads."""
    out: dict[str, dict[str, list[float]]] = {}
    for impl in impls:
        rs = run_jmh(b, impl, profile, out_dir / f"{impl.cipher}_{impl.name}-{profile.name}{tag}.json",
                     key_bits=[impl.key_bits[0]], benchmarks=benchmarks, **jmh)
        out[impl.id] = {r.benchmark: r.per_process_min for r in rs}
    return out


def interleaved_rounds(b: JavaBuild, impls: list[JavaImpl], profile: JvmProfile, out_dir: Path, rounds: int = 3,
                       benchmarks: list[str] | None = None, **jmh) -> list[dict[str, dict[str, float]]]:
    """`rounds` rounds of one JMH run per implementation in turn (first key size, one fork unless given): per
    round {impl: {benchmark: best ns/op over its forks}}, the input of :func:`paired_ratios`."""
    jmh = {"forks": 1, "warmup": 4, "iterations": 5, "iteration_ms": 300, **jmh}
    return [{i: {bench: min(minima) for bench, minima in by.items()}
             for i, by in fork_minima(b, impls, profile, out_dir, benchmarks, tag=f"-{rnd}", **jmh).items()}
            for rnd in range(rounds)]
