"""Turn an (implementation x toolchain x target) unit into compiler commands and binaries.

Layout under the build directory (default ``build/``)::

    <target>/<toolchain>/harness/*.o            harness objects, once per toolchain+target
    <target>/<toolchain>/<cipher>/<strategy>/   implementation objects, registry.o, kat, timing, cycles

Every command is an argv list run from the repository root with relative
paths, through a backend (host or container), so the same code serves both.
A unit is rebuilt only when its commands or the content of its inputs change.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .backends import Backend, Completed
from .config import Cipher, Target, Toolchain
from .elf import parse as parse_elf

HARNESS = Path("c_src/harness")
INCLUDE = Path("c_src/include")
PROGRAMS = {
    "kat": ["kat.c"],
    "timing": ["timing.c"],
    "cycles": ["cycles.c"],
}
COMMON = ["api.c", "util.c"]
COUNTERS = {"x86_tsc": "counter_x86_tsc.c", "clock": "counter_clock.c", "marker": "counter_marker.c"}
# Flags that only make sense on the machine that builds: dropped for other arches.
HOST_ONLY_FLAGS = {"-march=native", "-mtune=native", "-mcpu=native"}


@dataclass
class BuildResult:
    ok: bool
    unit: str
    outdir: Path
    programs: dict[str, Path] = field(default_factory=dict)
    commands: list[list[str]] = field(default_factory=list)
    log: str = ""
    cflags: list[str] = field(default_factory=list)
    compiler: str = ""
    code_bytes: dict[str, int] = field(default_factory=dict)
    cached: bool = False

    @property
    def failure(self) -> str:
        lines = [ln for ln in self.log.splitlines() if "error" in ln.lower()] or self.log.splitlines()
        return (lines[0] if lines else "build failed")[:300]


def effective_flags(toolchain: Toolchain, target: Target) -> list[str]:
    """The toolchain's flags adapted to the target (documented in the profiles' notes)."""
    flags = [f for f in toolchain.flags if target.is_host_arch() or f not in HOST_ONLY_FLAGS]
    return flags + toolchain.flags_for_arch(target.arch) + toolchain.target_flags(target)


def _digest(paths: list[Path], commands: list[list[str]]) -> str:
    h = hashlib.sha256()
    for p in sorted(set(paths)):
        h.update(str(p).encode())
        h.update(p.read_bytes())
    h.update(json.dumps(commands).encode())
    return h.hexdigest()


class Builder:
    def __init__(self, root: Path, build_dir: Path, backend: Backend, timeout: float = 600):
        self.root = Path(root)
        self.build_dir = Path(build_dir)
        self.backend = backend
        self.timeout = timeout

    def _rel(self, p: Path) -> str:
        p = Path(p)
        try:
            return str(p.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(p)

    def unit_dir(self, target: Target, toolchain: Toolchain, cipher: str, strategy: str) -> Path:
        return self.build_dir / target.name / toolchain.name / cipher / strategy

    def build(self, cipher: Cipher, strategy: str, toolchain: Toolchain, target: Target,
              programs: tuple[str, ...] = ("kat", "timing", "cycles")) -> BuildResult:
        unit = f"{cipher.name}/{strategy} {toolchain.name} {target.name}"
        outdir = self.unit_dir(target, toolchain, cipher.name, strategy)
        hdir = self.build_dir / target.name / toolchain.name / "harness"
        cc = toolchain.compiler_for(target)
        cflags = effective_flags(toolchain, target)
        includes = ["-I", str(INCLUDE), "-I", str(HARNESS)]
        ldflags = list(toolchain.ldflags) + (["-static"] if target.static else [])
        symbol = f"{cipher.name}_{strategy}"

        commands: list[list[str]] = []
        objs_common: list[str] = []
        harness_src = {name: HARNESS / name for name in COMMON + [COUNTERS[target.counter]]}
        for prog in programs:
            for s in PROGRAMS[prog]:
                harness_src[s] = HARNESS / s
        harness_objs: dict[str, str] = {}
        for name, src in harness_src.items():
            obj = self._rel(hdir / (Path(name).stem + ".o"))
            harness_objs[name] = obj
            commands.append([cc, *cflags, *includes, "-c", str(src), "-o", obj])
        objs_common = [harness_objs[n] for n in COMMON]

        impl_objs = []
        for src in cipher.sources(strategy):
            obj = self._rel(outdir / (src.stem + ".o"))
            impl_objs.append(obj)
            commands.append([cc, *cflags, *includes, "-I", self._rel(src.parent), "-c", self._rel(src), "-o", obj])
        reg_obj = self._rel(outdir / "registry.o")
        commands.append([cc, *cflags, *includes, f"-DCL_IMPL_LIST=X({symbol})", "-c",
                         str(HARNESS / "registry.c"), "-o", reg_obj])
        prog_paths = {}
        for prog in programs:
            exe = outdir / prog
            extra = [harness_objs[COUNTERS[target.counter]]] if prog == "cycles" else []
            main_objs = [harness_objs[s] for s in PROGRAMS[prog]]
            commands.append([cc, *cflags, *main_objs, reg_obj, *impl_objs, *objs_common, *extra,
                             *ldflags, "-o", self._rel(exe)])
            prog_paths[prog] = exe

        inputs = [*cipher.sources(strategy), *(self.root / HARNESS).glob("*.[ch]"),
                  *(self.root / INCLUDE).glob("*.h"), *(p for src in cipher.sources(strategy)
                                                        for p in src.parent.glob("*.h"))]
        digest = _digest(inputs, commands)
        stamp = outdir / "build.json"
        result = BuildResult(False, unit, outdir, prog_paths, commands, cflags=cflags, compiler=cc)
        if stamp.exists():
            try:
                old = json.loads(stamp.read_text())
            except json.JSONDecodeError:
                old = {}
            if old.get("digest") == digest and all(p.exists() for p in prog_paths.values()):
                result.ok, result.cached, result.code_bytes = True, True, old.get("code_bytes", {})
                return result

        outdir.mkdir(parents=True, exist_ok=True)
        hdir.mkdir(parents=True, exist_ok=True)
        log = []
        for argv in commands:
            c: Completed = self.backend.run(argv, cwd=str(self.root), timeout=self.timeout, target=target)
            if c.stderr.strip():
                log.append(f"$ {' '.join(argv)}\n{c.stderr.strip()}")
            if c.returncode != 0:
                log.append(f"command failed ({c.describe_failure()}): {' '.join(argv)}")
                result.log = "\n".join(log)
                stamp.unlink(missing_ok=True)
                return result
        result.log = "\n".join(log)
        result.code_bytes = sum_sections([self.root / o for o in impl_objs])
        stamp.write_text(json.dumps({"digest": digest, "code_bytes": result.code_bytes, "commands": commands}))
        result.ok = True
        return result


# ------------------------------------------------------------ object sizes
def elf_section_sizes(path: Path) -> dict[str, int]:
    """Bytes of text / rodata / data / bss in an ELF object (any class, any byte order)."""
    SHF_WRITE, SHF_ALLOC, SHF_EXEC, SHT_NOBITS = 1, 2, 4, 8
    sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for sec in parse_elf(path).sections:
        if not sec.flags & SHF_ALLOC:
            continue
        kind = "bss" if sec.type == SHT_NOBITS else "text" if sec.flags & SHF_EXEC else \
            "data" if sec.flags & SHF_WRITE else "rodata"
        sizes[kind] += sec.size
    return sizes


def sum_sections(paths: list[Path]) -> dict[str, int]:
    total = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for p in paths:
        try:
            for k, v in elf_section_sizes(p).items():
                total[k] += v
        except (OSError, ValueError, struct.error):
            # LTO objects hold IR, not sections: code size is unknown then.
            return {}
    return total
