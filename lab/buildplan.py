"""The one build plan: (implementation, toolchain, target, program) -> compiler and linker argv lists.

:func:`plan_build` is the only place a command line is assembled; the run,
``lab verify``, ``lab.native`` (cffi) and the peer libraries all use it.
Programs:

* ``kat``, ``timing``, ``cycles`` — the harness programs (c_src/harness), with
  the target's cycle counter for ``cycles``;
* ``icount`` — ``cycles`` with the marker counter, linked statically, for
  guest-instruction counts under QEMU (any target, the host's too);
* ``ct`` — the constant-time trace program (c_src/harness/ct.c) with the marker
  counter, linked statically and compiled with ``-g`` (for addr2line; its objects
  live apart, under ``ct-g/``), run under QEMU with the plugin in ``mode=ct``;
* ``dudect`` — the same ct.c with the target's real counter (the timing test, host);
* ``native`` — a shared library for cffi (host only, position independent).

Layout under the build directory::

    <target>/<toolchain>/harness/<counter>/<file>.o     shared by every implementation
    <target>/<toolchain>/<cipher>/<impl>/<file>.o       the implementation's objects, its registry.o
    <target>/<toolchain>/<cipher>/<impl>/<program>      programs (icount/cycles; native/ holds PIC objects, libcl.so)

Paths in argv are relative to the repository root when they are inside it
(every backend runs commands from the root), absolute otherwise.  Whether a
step must run again is decided by :mod:`lab.build` from a content hash of
its argv, its inputs and the compiler's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import Impl, Target, Toolchain, host_arch

HARNESS = Path("c_src/harness")
INCLUDE = Path("c_src/include")
MAINS = {"kat": "kat.c", "timing": "timing.c", "cycles": "cycles.c", "icount": "cycles.c", "ct": "ct.c",
         "dudect": "ct.c"}
MARKER_PROGRAMS = ("icount", "ct")  # static, with the marker counter: run under QEMU with the plugin
COUNTED_PROGRAMS = ("cycles", "icount", "ct", "dudect")  # programs linked with a counter
PROGRAMS = (*MAINS, "native")
COMMON = ("api.c", "util.c")
COUNTERS = {"x86_tsc": "counter_x86_tsc.c", "clock": "counter_clock.c", "marker": "counter_marker.c"}
# Flags that only make sense on the machine that builds: dropped for other arches.
HOST_ONLY_FLAGS = {"-march=native", "-mtune=native", "-mcpu=native"}
# Flags the cffi library cannot use (LTO objects in a shared library need the linker plugin).
NATIVE_DROPPED = {"-flto"}


@dataclass(frozen=True)
class Step:
    """One compiler or linker invocation."""

    argv: tuple[str, ...]
    output: Path            # absolute
    inputs: tuple[Path, ...]  # absolute; their content decides whether the step runs again
    compiler: str
    kind: str               # "compile" or "link"


@dataclass(frozen=True)
class BuildPlan:
    program: str
    output: Path            # absolute path of the program (or library)
    steps: tuple[Step, ...]
    compiler: str           # the C compiler
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    objects: tuple[Path, ...]  # the implementation's own objects (code size)

    @property
    def compilers(self) -> set[str]:
        return {s.compiler for s in self.steps}


def is_native(target: Target) -> bool:
    return target.runner == "native" and target.arch == host_arch()


def compiler(toolchain: Toolchain, target: Target, language: str = "c") -> str:
    """The compiler executable for a target (cross prefix for gcc)."""
    exe = toolchain.cxx if language == "c++" else toolchain.cc
    if is_native(target) or toolchain.family == "clang":
        return exe
    return f"{target.triple}-{exe}"


def effective_flags(toolchain: Toolchain, target: Target) -> list[str]:
    """The toolchain's flags adapted to the target (documented in the profiles' notes)."""
    native = is_native(target)
    flags = [f for f in toolchain.flags if native or f not in HOST_ONLY_FLAGS]
    flags += toolchain.flags_for_arch(target.arch)
    if not native:
        flags += [f"--target={target.triple}", *target.clang_flags] if toolchain.family == "clang" \
            else list(target.gcc_flags)
    return flags


def _cxx_flags(cflags: list[str]) -> list[str]:
    return [f for f in cflags if not f.startswith("-std=")] + ["-std=c++17"]


def plan_build(impl: Impl, toolchain: Toolchain, target: Target, program: str, *, root: Path,
               build_dir: Path) -> BuildPlan:
    """The compile and link steps that make `program` for impl with toolchain for target."""
    if program not in PROGRAMS:
        raise ValueError(f"unknown program '{program}' (one of {PROGRAMS})")
    root, build_dir = Path(root).resolve(), Path(build_dir).resolve()

    def arg(p: Path) -> str:
        try:
            return str(p.relative_to(root))
        except ValueError:
            return str(p)

    cc = compiler(toolchain, target)
    cflags = effective_flags(toolchain, target)
    static = target.static or program in MARKER_PROGRAMS
    if program == "native":
        cflags = [f for f in cflags if f not in NATIVE_DROPPED] + ["-fPIC"]
    if program == "ct":  # debug information for addr2line; -g does not change the code generated
        cflags = [*cflags, "-g"]
    counter = "marker" if program in MARKER_PROGRAMS else target.counter
    includes = ["-I", str(INCLUDE), "-I", str(HARNESS)]
    headers = tuple(sorted({*(root / INCLUDE).glob("*.h"), *(root / HARNESS).glob("*.h")}))
    obj_dir, harness_dir = _object_dirs(build_dir, impl, toolchain, target, program, counter)

    steps: list[Step] = []

    def compile_c(src: Path, out: Path, extra: list[str], deps: tuple[Path, ...]) -> Path:
        steps.append(Step((cc, *cflags, *includes, *extra, "-c", arg(src), "-o", arg(out)), out,
                          (src, *deps), cc, "compile"))
        return out

    harness_files = list(COMMON) + ([MAINS[program]] if program in MAINS else []) + \
        ([COUNTERS[counter]] if program in COUNTED_PROGRAMS else [])
    harness_objs = [compile_c(root / HARNESS / f, harness_dir / (Path(f).stem + ".o"), [], headers)
                    for f in harness_files]
    registry = compile_c(root / HARNESS / "registry.c", obj_dir / "registry.o",
                         [f"-DCL_IMPL_LIST=X({impl.symbol})"], headers)
    impl_objs = []
    impl_cflags, impl_libs = impl.flags_on(target.name)  # a peer library may differ in a target's image
    # the headers beside every source of the implementation: a source may include one of another folder's
    # (3des/bitslice_avx2.c includes ../des/des_bitslice_body.h), and a change there must rebuild it
    local = tuple(sorted({h for s in impl.sources for h in s.parent.glob("*.h")}))
    for src in impl.sources:
        out = obj_dir / (src.stem + ".o")
        if src.suffix in (".cpp", ".cc", ".cxx"):
            cxx = compiler(toolchain, target, "c++")
            steps.append(Step((cxx, *_cxx_flags(cflags), *includes, *impl_cflags, "-I", arg(src.parent), "-c",
                               arg(src), "-o", arg(out)), out, (src, *headers, *local), cxx, "compile"))
        else:
            compile_c(src, out, [*impl_cflags, "-I", arg(src.parent)], (*headers, *local))
        impl_objs.append(out)

    link, ldflags = _link(impl, toolchain, target, program, cflags, static, [*harness_objs, registry, *impl_objs],
                          obj_dir, arg, impl_libs)
    steps.append(link)
    return BuildPlan(program, link.output, tuple(steps), cc, tuple(cflags),
                     tuple([*ldflags, *impl_libs]), tuple(impl_objs))


def _object_dirs(build_dir: Path, impl: Impl, toolchain: Toolchain, target: Target, program: str,
                 counter: str) -> tuple[Path, Path]:
    """Where a program's objects go: the implementation's and the harness's (per counter)."""
    unit = build_dir / target.name / toolchain.name
    impl_dir = unit / impl.cipher / impl.name
    # icount links the same objects; ct's have debug information, so they live apart
    obj_dir = impl_dir / "native" if program == "native" else impl_dir / "ct-g" if program == "ct" else impl_dir
    harness_dir = unit / "harness" / (f"{counter}-pic" if program == "native" else f"{counter}-g" if program == "ct"
                                      else counter)
    return obj_dir, harness_dir


def _link(impl: Impl, toolchain: Toolchain, target: Target, program: str, cflags: list[str], static: bool,
          objs: list[Path], obj_dir: Path, arg, libs: tuple[str, ...]) -> tuple[Step, list[str]]:
    """The link step of a program (a shared library for "native"), and its link flags."""
    cxx_link = any(s.suffix in (".cpp", ".cc", ".cxx") for s in impl.sources)
    linker = compiler(toolchain, target, "c++" if cxx_link else "c")
    ldflags = [*toolchain.ldflags, *(["-static"] if static and program != "native" else [])]
    if program == "native":
        ldflags = [f for f in ldflags if f not in NATIVE_DROPPED] + ["-shared"]
        output = obj_dir / "libcl.so"
    else:
        output = obj_dir / "icount" / "cycles" if program == "icount" else obj_dir / program
    link_flags = _cxx_flags(cflags) if cxx_link else cflags
    return Step((linker, *link_flags, *(arg(o) for o in objs), *ldflags, *libs, "-o", arg(output)),
                output, tuple(objs), linker, "link"), ldflags
