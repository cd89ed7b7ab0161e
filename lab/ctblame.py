"""Why did a cell leak?  The compiler version, the flag and the optimisation pass, found by rebuilding and
re-checking (``python -m lab ct-blame``).

Every probe is one rebuild of the cell with another compiler or other flags, gated on its known answers and
traced by lab/ct.py's check, through the one cell pipeline (:func:`lab.ctcheck.check_cells`).  The predicate is
the trace check's own verdict on the op that leaked: the probe still leaks when that op leaks (wherever its first
divergence now is: a table lookup moves between lines with the flags), and is clean when that op is clean.

* **version**: the same flags with every version of the toolchain's family that the target has
  (toolchains/versions.yaml), oldest to newest; the first neighbouring pair whose verdicts differ.
* **flag**: the first single change of a flag space (flags/ct-blame.yaml, or ``--space``) that removes the
  leak: another optimisation level, or one switch added (if-conversion, vectorisation, scheduling...).
* **pass**: clang: ``-mllvm -opt-bisect-limit=N`` bisected to the first N that leaks; pass N of the leaking
  source file's list (``-opt-bisect-limit=-1`` prints it) is the one.  gcc: of the passes ``-fdump-passes``
  lists as ON for the leaking source file (tree passes, and the RTL passes that optimise), the one whose absence
  alone (``-fdisable-tree-NAME``/``-fdisable-rtl-NAME``) makes the op clean: the likely ones (if-conversion,
  phi and condition simplification, threading...) one at a time, then the rest in halves, at most
  MAX_PASS_PROBES rebuilds.
* every finding is **confirmed**: the build with that flag or pass off passes its known answers and is
  clean for the whole trace check (the line says so, or that the confirmation failed).
* a leak that the flag space and no pass removes is "in the source", at the divergence's line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import time
from pathlib import Path
from typing import Literal

import yaml
from . import buildplan, ctcheck
from .models import CtVerdict, Model
from .config import Lab, Toolchain
from .errors import ConfigError, UserError

DEFAULT_SPACE = Path("flags/ct-blame.yaml")
BISECT_LINE = re.compile(r"BISECT: running pass \((\d+)\) (.+?) on (.+)$")
PASS_SWITCHES = {"X86 cmov Conversion": ["-mllvm", "-x86-cmov-converter=false"]}  # a pass's own off switch


class Finding(Model):
    kind: Literal["version", "flag", "pass", "source"]
    text: str                          # the finding, as the line prints it
    name: str = ""                     # pass: the pass as the compiler names it (for tables)
    change: tuple[str, ...] = ()       # the flags that remove the leak (flag, pass)
    confirmed: bool | None = None      # None: nothing to confirm (version, source)
    confirmation: str = ""


class Blame(Model):
    cell: str
    leak: str                          # the baseline's first leaking op and divergence
    findings: tuple[Finding, ...] = ()
    builds: int = 0                    # probes: rebuilds, gates and trace checks
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [f"{self.cell}: {self.leak}"]
        for f in self.findings:
            conf = "" if f.confirmed is None else (" [confirmed: " if f.confirmed else " [NOT confirmed: ") + \
                f.confirmation + "]"
            out.append(f"  {f.kind}: {f.text}{conf}")
        out.append(f"  ({self.builds} builds and checks, {self.seconds:.0f} s)")
        return out


class Space(Model):
    description: str = ""
    levels: tuple[str, ...] = ("-O0", "-O1", "-O2", "-O3", "-Os")
    gcc: tuple[tuple[str, ...], ...] = ()
    clang: tuple[tuple[str, ...], ...] = ()


def load_space(path: Path) -> Space:
    try:
        data = yaml.safe_load(path.read_text()) or {}
        return Space(**{k: tuple(tuple(v.split()) if isinstance(v, str) else v for v in vs) if k in ("gcc", "clang")
                        else vs for k, vs in data.items()})
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(path, None, f"cannot read the flag space: {e}") from None
    except Exception as e:  # pydantic: an unknown key or a wrong type
        first = str(e).splitlines()
        raise ConfigError(path, None, f"not a ct-blame flag space ({' '.join(first[1:3]).strip()})",
                          "keys: description, levels (list), gcc and clang (lists of flag strings)") from None


# ------------------------------------------------------------------ probing
class Prober:
    """Rebuilds and checks one cell with another toolchain (compiler, flags), counting the probes."""

    def __init__(self, lab: Lab, cell, backend, build_dir: Path, say=lambda s: None):
        self.lab, self.cell, self.backend, self.build_dir, self.say = lab, cell, backend, build_dir, say
        self.builds = 0
        self._checked: dict[tuple, ctcheck.CellCheck] = {}  # (compiler, flags) -> its check: each variant once

    def variant(self, cc: str | None = None, flags: list[str] | None = None, tag: str = "") -> Toolchain:
        tc = self.cell.toolchain
        cc, flags = cc or tc.cc, tuple(flags if flags is not None else tc.flags)
        digest = hashlib.sha1(repr((cc, flags)).encode()).hexdigest()[:10]
        return dataclasses.replace(tc, name=f"{tc.name}~{tag or 'blame'}-{digest}", cc=cc, flags=flags)

    def check(self, tc: Toolchain) -> ctcheck.CellCheck:
        key = (tc.cc, tuple(tc.flags))
        if key not in self._checked:
            self.builds += 1
            cell = dataclasses.replace(self.cell, toolchain=tc)
            self._checked[key] = ctcheck.check_cells(self.lab, [cell], self.backend, build_dir=self.build_dir,
                                                     jobs=1, dudect_measurements=0, quick_gate=True)[0]
        return self._checked[key]


def signature(v: CtVerdict) -> tuple[str, int, str, str]:
    """(op, key size, divergence kind, where) of the first leaking op: what a probe must reproduce."""
    op = v.leaking_ops[0]
    d = op.divergence
    return op.op, op.key_size, d.kind if d else "", (d.location or d.function) if d else ""


def same_leak(check: ctcheck.CellCheck, sig) -> bool | None:
    """True: the op that leaked still leaks; False: it is clean; None: no verdict (build, gate or trace failed).
    A leak that moved (another line of the same table lookup, another branch) is still a leak: only a clean op
    means the change removed it."""
    v = check.verdict
    if v.verdict == "unavailable":
        return None
    op = next((o for o in v.ops if (o.op, o.key_size) == sig[:2]), None)
    if op is None:
        return None
    return op.verdict != "clean"


def _confirm(check: ctcheck.CellCheck) -> tuple[bool, str]:
    v = check.verdict
    if v.verdict == "clean":
        return True, "known answers pass, the trace check is clean"
    return False, (v.reason or v.verdict)[:160]


# ------------------------------------------------------------------- searches
def versions_of(lab: Lab, family: str, target) -> list[tuple[str, str]]:
    """(version name, cc) of a compiler family (gcc, clang) that the target has (on the host: installed), oldest
    to newest."""
    vs = [cv for cv in lab.compiler_versions.values() if cv.family == family and target.name in cv.found
          and (target.image or shutil.which(cv.executable))]
    return [(cv.name, cv.executable) for cv in sorted(vs, key=lambda cv: tuple(int(x) for x in cv.version.split(".")))]


def version_finding(p: Prober, sig, target: str) -> Finding | None:
    found = versions_of(p.lab, p.cell.toolchain.family, target)
    if len(found) < 2:
        return None
    verdicts = []
    for name, cc in found:
        r = same_leak(p.check(p.variant(cc=cc, tag=name)), sig)
        verdicts.append((name, {True: "leaks", False: "clean", None: "no verdict"}[r]))
    text = ", ".join(f"{n} {v}" for n, v in verdicts)
    pair = next(((a, b) for a, b in zip(verdicts, verdicts[1:]) if {a[1], b[1]} == {"leaks", "clean"}), None)
    text += f"; changes between {pair[0][0]} ({pair[0][1]}) and {pair[1][0]} ({pair[1][1]})" if pair else \
        "; no neighbouring pair differs"
    return Finding(kind="version", text=text)


LEVEL = re.compile(r"-O[0-3sgz]?|-Ofast")  # an optimisation level flag


def with_level(flags: tuple[str, ...], level: str) -> list[str]:
    """The flags with their optimisation level replaced by `level` (put first when they have none)."""
    if not any(LEVEL.fullmatch(f) for f in flags):
        return [level, *flags]
    return [level if LEVEL.fullmatch(f) else f for f in flags]


def flag_finding(p: Prober, sig, space: Space) -> Finding | None:
    tc = p.cell.toolchain
    level = next((f for f in tc.flags if LEVEL.fullmatch(f)), "-O0")
    changes = [(" ".join(add), [*tc.flags, *add]) for add in getattr(space, tc.family, ())]  # one switch first
    changes += [(f"{lv} instead of {level}", with_level(tc.flags, lv)) for lv in space.levels if lv != level]
    for what, flags in changes:
        check = p.check(p.variant(flags=flags, tag="flag"))
        if same_leak(check, sig) is False:
            ok, why = _confirm(check)
            return Finding(kind="flag", text=f"{what} removes it", change=tuple(flags), confirmed=ok, confirmation=why)
    return None


def _source_file(lab: Lab, sig) -> Path | None:
    loc = sig[3].split(":")[0]  # repository-relative (lab/ct.py locate)
    return lab.root / loc if loc and (lab.root / loc).is_file() else None


def _compile_listing(p: Prober, src: Path, extra: list[str]) -> str:
    """What the cell's compiler prints on stderr compiling `src` with `extra`: the executable and flags the build
    plan gives for the target (a cross gcc's prefix, clang's --target), where the cell is built."""
    tc, target, root = p.cell.toolchain, p.cell.target, p.lab.root
    argv = [buildplan.compiler(tc, target), *buildplan.effective_flags(tc, target),
            "-I", str(root / "c_src" / "include"), "-I", str(root / "c_src" / "harness"), "-I", str(src.parent),
            *extra, "-c", str(src), "-o", "/dev/null"]
    c = p.backend.exec(argv, target=target, timeout=300)
    return c.stderr


def clang_pass(p: Prober, sig, src: Path) -> Finding | None:
    passes = {}
    for line in _compile_listing(p, src, ["-mllvm", "-opt-bisect-limit=-1"]).splitlines():
        m = BISECT_LINE.search(line)
        if m:
            passes[int(m.group(1))] = (m.group(2), m.group(3))
    if not passes:
        return None
    flags = lambda n: [*p.cell.toolchain.flags, "-mllvm", f"-opt-bisect-limit={n}"]  # noqa: E731
    lo, hi = 0, max(passes)  # invariant: lo does not leak, hi leaks
    if same_leak(p.check(p.variant(flags=flags(lo), tag="bisect")), sig) is not False:
        return None  # leaks (or fails) with no optimisation pass: not a pass's doing
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = same_leak(p.check(p.variant(flags=flags(mid), tag="bisect")), sig)
        lo, hi = (mid, hi) if r is False else (lo, mid)
    name, where = passes.get(hi, ("?", "?"))
    off = PASS_SWITCHES.get(name, [])
    confirm_flags = [*p.cell.toolchain.flags, *off] if off else flags(hi - 1)
    ok, why = _confirm(p.check(p.variant(flags=confirm_flags, tag="confirm")))
    how = " ".join(off) if off else f"-mllvm -opt-bisect-limit={hi - 1} (pass {hi} and after off)"
    return Finding(kind="pass", text=f"pass {hi} '{name}' on {where} introduces it (off: {how})", name=name,
                   change=tuple(confirm_flags), confirmed=ok, confirmation=why)


# RTL passes that optimise (if-conversion, CSE, combining, scheduling, ...): the others (expand, vregs, register
# allocation, reload, final, ...) are needed to make code at all; switching one off breaks the build or makes gcc
# loop, which tells nothing about a leak
GCC_RTL_OPTIMISING = {"cse1", "cse2", "fwprop1", "fwprop2", "cprop1", "cprop2", "cprop3", "ce1", "ce2", "ce3",
                      "loop2", "loop2_invariant", "combine", "gcse2", "ree", "cmpelim", "dse1", "dse2", "csa",
                      "jump2", "peephole2", "cprop_hardreg", "bbro", "sched1", "sched2", "stv1", "stv2", "hoist",
                      "pre", "bbpart", "rtl_dce", "ud_dce", "jump_after_combine"}
MAX_PASS_PROBES = 40  # the pass search's rebuilds at most (each a build, its known answers and a trace)


def gcc_passes(p: Prober, src: Path) -> list[str]:
    """The -fdisable- switches of the passes gcc lists as ON for src with the toolchain's flags: every tree pass,
    and the RTL passes that optimise (GCC_RTL_OPTIMISING)."""
    out = []
    for line in _compile_listing(p, src, ["-fdump-passes"]).splitlines():
        m = re.match(r"\s*(tree|rtl)-(\S+?)\s*:\s*ON", line)
        if m and not m.group(2).startswith("*") and (m.group(1) == "tree" or m.group(2) in GCC_RTL_OPTIMISING):
            out.append(f"-fdisable-{m.group(1)}-{m.group(2)}")
    return list(dict.fromkeys(out))


# the passes that turn selects into branches or back (if-conversion, phi and condition simplification, jump
# threading, path splitting, tail merging, ...): tried one at a time first, as a pass's own absence is the question
# (disabling many passes at once brings back the branches an unoptimised build has, so halving can mislead)
LIKELY = re.compile(r"uncprop|phiopt|ifcvt|ifcombine|tail-merge|split-paths|dom\d|vrp|thread|ce[123]$|sink|cselim|"
                    r"forwprop|mergephi|phiprop|pre$|fre\d|sched|combine")


def gcc_pass(p: Prober, sig, src: Path) -> Finding | None:
    """The one gcc pass whose absence alone makes the leaking op clean: the likely passes one at a time, then the
    rest in halves (a half whose absence makes it clean holds the pass), within MAX_PASS_PROBES rebuilds."""
    base, start = list(p.cell.toolchain.flags), p.builds
    passes = gcc_passes(p, src)

    def clean_without(group: list[str]) -> bool | None:
        return None if p.builds - start >= MAX_PASS_PROBES else \
            same_leak(p.check(p.variant(flags=[*base, *group], tag="passes")), sig) is False

    def search(group: list[str]) -> str | None:
        if len(group) == 1:
            return group[0] if clean_without(group) else None
        if not clean_without(group):
            return None
        half = len(group) // 2
        return search(group[:half]) or search(group[half:])

    likely = [x for x in passes if LIKELY.search(x.split("-", 3)[3])]
    found = next((x for x in likely if clean_without([x])), None) or \
        search([x for x in passes if x not in likely])
    if not found:
        return None
    ok, why = _confirm(p.check(p.variant(flags=[*base, found], tag="confirm")))
    name = found.split("-", 3)[3]
    return Finding(kind="pass", text=f"pass '{name}' introduces it (off: {found})", name=name,
                   change=(*base, found), confirmed=ok, confirmation=why)


# ------------------------------------------------------------------- driver
def blame(lab: Lab, cell, backend, *, build_dir: Path, space: Space, say=lambda s: None) -> Blame:
    """The findings for one cell (a lab.plan.Cell) that leaks; a UserError when it does not."""
    t0 = time.monotonic()
    p = Prober(lab, cell, backend, build_dir, say)
    base = p.check(cell.toolchain)
    v = base.verdict
    if v.verdict != "leak":
        raise UserError(f"{cell.id} does not leak ({v.verdict}{': ' + v.reason if v.reason else ''}): nothing to blame")
    sig = signature(v)
    leak = v.leaking_ops[0].line()
    findings: list[Finding] = []
    for step in (lambda: version_finding(p, sig, cell.target), lambda: flag_finding(p, sig, space)):
        f = step()
        if f:
            findings.append(f)
            say(f"  {f.kind}: {f.text}")
    findings += _pass_or_source(p, sig, findings)
    return Blame(cell=cell.id, leak=leak, findings=tuple(findings), builds=p.builds,
                 seconds=round(time.monotonic() - t0, 1))


def _pass_or_source(p: Prober, sig, found: list[Finding]) -> list[Finding]:
    """The pass that introduces the leak, or "in the source".  A leak that no flag of the space removes and that the
    unoptimised build (-O0) has too was written in the source: no pass introduced it, so the pass search (up to
    MAX_PASS_PROBES rebuilds) is not run.  Where a flag removes the leak, -O0 leaking proves nothing (an
    unoptimised build branches on a ternary that -O2 turns into a select): the pass search runs."""
    tc = p.cell.toolchain
    flag_found = any(f.kind == "flag" for f in found)
    # with the default space the flag search has checked -O0 already (its last level): Prober remembers it
    in_source = not flag_found and same_leak(p.check(p.variant(flags=with_level(tc.flags, "-O0"), tag="flag")),
                                             sig) is True
    src = _source_file(p.lab, sig)
    if src is not None and tc.family in ("clang", "gcc") and not in_source:
        f = (clang_pass if tc.family == "clang" else gcc_pass)(p, sig, src)
        if f:
            return [f]
    if flag_found:
        return []
    why = "it leaks unoptimised (-O0) too and no flag of the space removes it" if in_source else \
        "no flag of the space and no pass removes it"
    return [Finding(kind="source", text=f"in the source: {why}; {sig[2] or 'leak'} at {sig[3] or '?'}")]


__all__ = ["Blame", "Finding", "Space", "blame", "load_space", "same_leak", "signature", "versions_of", "with_level",
           "DEFAULT_SPACE"]
