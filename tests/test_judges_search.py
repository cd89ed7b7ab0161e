"""The searches that judge by probing, on their pure logic: bisect's binary search over exact counts and its
like-good-or-like-bad rule on time (lab/bisect.py), and ct-blame's version, flag and pass searches (lab/ctblame.py)
with a compiler whose verdicts are a known function of its version and flags, so every finding has one right
answer and its plausible neighbours (the other end of the step, the first pair that differs in any way, a level
change before a one-switch change, the last pass that keeps it clean, the rest before the likely passes) give
another.  The real builds, traces and revisions are tests/test_bisect.py's and tests/test_ct_blame.py's."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from lab import bisect, ctblame
from lab.models import CtVerdict, Divergence, OpVerdict
from lab.schema import CompilerVersion


# ------------------------------------------------------------------ bisect
def _exact(counts: list[float]):
    probes = [bisect.Probe(f"r{i}", f"r{i}", f"commit {i}", value=v) for i, v in enumerate(counts)]
    out = bisect.Outcome("insn_encrypt_per_block", probes[0], probes[-1], None, None, None, None)
    seen = []

    def ready(p):
        seen.append(p.name)
        return p
    return probes, out, ready, seen


@pytest.mark.parametrize("counts,first,last_good", [
    ([100, 100, 110, 110, 120, 120], "r2", "r1"),  # two steps, early and late: the first is the answer
    ([100, 100, 100, 100, 100, 125], "r5", "r4"),  # one step at the very end
    ([100, 80, 80, 80, 80, 80, 80], "r1", "r0"),  # one step at once, a cheaper count
])
def test_bisect_on_counts_finds_the_first_change_from_good_and_its_exact_size(counts, first, last_good):
    probes, out, ready, seen = _exact(counts)
    bisect._bisect_exact(out, probes, ready, "insn_encrypt_per_block")
    i = int(first[1:])
    assert out.first.name == first
    # the change of the cost (counts): after / before - 1, exact (no interval)
    assert out.change == pytest.approx(counts[i] / counts[0] - 1) and out.ci_low == out.ci_high == out.change
    assert f"the last one like good is {last_good}" in out.message
    assert f"{counts[0]:,.2f} -> {counts[i]:,.2f}" in out.message
    assert len(seen) <= 3  # a binary search: log2 of the probes between the ends


def test_bisect_on_counts_with_equal_ends_is_no_difference_even_with_a_change_between():
    probes, out, ready, seen = _exact([100, 110, 100])
    bisect._bisect_exact(out, probes, ready, "insn_encrypt_per_block")
    assert out.first is None and out.change is None and seen == []
    assert out.message == "no difference between good and bad: insn_encrypt_per_block 100 at both"


class _Verdicts:
    """A comparator for bisect's timed rule: the verdict of each (a, b) pair in turn, round by round."""

    def __init__(self, rounds: list[dict]):
        self.rounds, self.i, self.measured = rounds, 0, 0

    def compare(self, a, b):
        return self.rounds[min(self.i, len(self.rounds) - 1)][(a, b)]

    def more(self, probes, rounds):
        self.measured += rounds * len(probes)
        self.i += 1


def test_bisect_on_time_calls_a_probe_like_one_end_only_when_it_differs_from_the_other():
    nc, slower = "no change", "slower"
    # like good and unlike bad at once: like good
    assert bisect._side(_Verdicts([{("g", "m"): nc, ("b", "m"): slower}]), "m", "g", "b", 5) == (True, False)
    assert bisect._side(_Verdicts([{("g", "m"): slower, ("b", "m"): nc}]), "m", "g", "b", 5) == (False, True)
    # no change from either end for every round: neither (the search refuses the step), after max_rounds
    pr = _Verdicts([{("g", "m"): nc, ("b", "m"): nc}])
    assert bisect._side(pr, "m", "g", "b", 4) == (False, False) and pr.measured == 4 * 3
    # undecided for two rounds, then unlike good and like bad
    pr = _Verdicts([{("g", "m"): nc, ("b", "m"): nc}] * 2 + [{("g", "m"): "faster", ("b", "m"): nc}])
    assert bisect._side(pr, "m", "g", "b", 5) == (False, True) and pr.measured == 2 * 3


# ------------------------------------------------------------------ ct-blame
SIG = ("encrypt", 128, "branch", "c_src/ciphers/x/ref.c:27")
SRC = Path("c_src/ciphers/x/ref.c")  # only named on the compile line


def _verdict(leaks: bool | None) -> CtVerdict:
    if leaks is None:
        return CtVerdict(verdict="unavailable", reason="build failed")
    d = Divergence(kind="branch", address="0x401a2c", function="x_select", location=SIG[3])
    return CtVerdict(verdict="leak" if leaks else "clean", ops=(
        OpVerdict(op="ekey", key_size=128, verdict="clean", inputs=8),
        OpVerdict(op="encrypt", key_size=128, verdict="leak" if leaks else "clean", inputs=8,
                  divergence=d if leaks else None)))


class _Compiler(ctblame.Prober):
    """A Prober whose probes are judged by `leaks(cc, flags)` (True, False, or None: no verdict) instead of a
    rebuild and a trace; `listing` is what the compiler prints for a pass listing."""

    def __init__(self, lab, leaks, flags=("-O2",), family="gcc", listing="", target=None):
        tc = dataclasses.replace(lab.toolchain("gcc-O3" if family == "gcc" else "clang-O3"), flags=tuple(flags))
        target = target or SimpleNamespace(name="host", image=None)
        cell = SimpleNamespace(toolchain=tc, target=target, id="x/ref@test@host")
        backend = SimpleNamespace(exec=lambda argv, target=None, timeout=None: SimpleNamespace(stderr=listing))
        super().__init__(lab, cell, backend, build_dir=None)
        self.leaks, self.probed = leaks, []

    def check(self, tc):
        self.builds += 1
        self.probed.append(tc.flags)
        return SimpleNamespace(verdict=_verdict(self.leaks(tc.cc, tc.flags)))


def test_ct_blame_versions_are_ordered_by_number_and_the_pair_is_a_leak_next_to_a_clean_build(lab):
    """gcc 9 gives no verdict, 10 and 12.2 leak, 12.3 is clean: the versions in numeric order (9 before 10,
    12.2 before 12.3) and the one neighbouring pair of a leak and a clean build, not the first pair that differs
    in any way (9's missing verdict beside 10's leak)."""
    versions = {cv.name: cv for cv in (CompilerVersion(family="gcc", version=v, found=["img"])
                                       for v in ("12.3", "9", "12.2", "10"))}
    versions["clang-16"] = CompilerVersion(family="clang", version="16", found=["img"])
    fake_lab = SimpleNamespace(compiler_versions=versions, toolchain=lab.toolchain)
    target = SimpleNamespace(name="img", image="img:latest")
    assert [n for n, _ in ctblame.versions_of(fake_lab, "gcc", target)] == ["gcc-9", "gcc-10", "gcc-12.2", "gcc-12.3"]
    verdict = {"gcc-9": None, "gcc-10": True, "gcc-12.2": True, "gcc-12.3": False}
    p = _Compiler(fake_lab, lambda cc, flags: verdict[cc], target=target)
    f = ctblame.version_finding(p, SIG, target)
    assert f.kind == "version" and p.builds == 4
    assert f.text == ("gcc-9 no verdict, gcc-10 leaks, gcc-12.2 leaks, gcc-12.3 clean; "
                      "changes between gcc-12.2 (leaks) and gcc-12.3 (clean)")


SPACE = ctblame.Space(levels=("-O0", "-O1", "-O2", "-O3", "-Os"),
                      gcc=(("-fbroken",), ("-fno-tree-vectorize",), ("-fno-if-conversion",)))


def test_ct_blame_flags_try_one_switch_before_another_level_and_a_failed_build_removes_nothing(lab):
    """-O2 leaks; -fbroken fails to build (no verdict), -fno-if-conversion and -O0/-O1 remove the leak: the
    smallest change, the switch, is the finding, with its flags and its confirmation."""
    def leaks(cc, flags):
        if "-fbroken" in flags:
            return None
        return not ("-fno-if-conversion" in flags or "-O0" in flags or "-O1" in flags)

    p = _Compiler(lab, leaks)
    f = ctblame.flag_finding(p, SIG, SPACE)
    assert (f.kind, f.text, f.change) == ("flag", "-fno-if-conversion removes it", ("-O2", "-fno-if-conversion"))
    assert f.confirmed is True and p.builds == 3
    only_levels = _Compiler(lab, lambda cc, flags: "-O1" not in flags)  # no switch helps; the first level that does
    f = ctblame.flag_finding(only_levels, SIG, SPACE)
    assert (f.text, f.change) == ("-O1 instead of -O2 removes it", ("-O1",))


def _clang_listing(names: list[str]) -> str:
    return "\n".join(f"BISECT: running pass ({i}) {n} on function (x_select)" for i, n in enumerate(names, 1))


def test_ct_blame_clang_pass_is_the_first_bisect_limit_that_leaks(lab):
    """opt-bisect-limit=N runs passes 1..N: clean up to 6, leaking from 7 on: pass 7 is the one (not 6, the last
    that keeps it clean), and the confirmation build stops before it."""
    names = ["SROAPass", "EarlyCSEPass", "InstCombinePass", "SimplifyCFGPass", "GVNPass", "LICMPass",
             "SelectOptimize", "LoopUnrollPass", "MachineCSE", "X86 cmov Conversion"]

    def leaks(cc, flags):
        limit = next((int(f.split("=")[1]) for f in flags if f.startswith("-opt-bisect-limit=")), 99)
        return limit >= 7

    p = _Compiler(lab, leaks, family="clang", listing=_clang_listing(names))
    f = ctblame.clang_pass(p, SIG, src=SRC)
    assert (f.kind, f.name) == ("pass", "SelectOptimize")
    assert f.text == ("pass 7 'SelectOptimize' on function (x_select) introduces it "
                      "(off: -mllvm -opt-bisect-limit=6 (pass 7 and after off))")
    assert f.change[-2:] == ("-mllvm", "-opt-bisect-limit=6") and f.confirmed is True


def _gcc_listing(passes: list[str]) -> str:
    return "\n".join(f"   {p}  :  ON" for p in passes) + "\n   rtl-expand  :  ON\n   tree-dce1  :  OFF"


def test_ct_blame_gcc_pass_tries_the_likely_passes_one_at_a_time_first(lab):
    """Switching off phiopt2 (a likely pass) or ccp1 (another) each removes the leak: the likely pass is the
    finding; the other passes are searched only when no likely one does it, in halves."""
    passes = ["tree-ccp1", "tree-forwprop1", "tree-phiopt2", "tree-copyprop1", "rtl-ce1", "rtl-combine", "rtl-cse1"]

    def leaks(cc, flags):
        return not ({"-fdisable-tree-phiopt2", "-fdisable-tree-ccp1"} & set(flags))

    p = _Compiler(lab, leaks, listing=_gcc_listing(passes))
    assert ctblame.gcc_passes(p, SRC) == [f"-fdisable-{x}" for x in passes]  # ON only; rtl-expand is needed
    f = ctblame.gcc_pass(p, SIG, SRC)
    assert (f.name, f.change) == ("phiopt2", ("-O2", "-fdisable-tree-phiopt2")) and f.confirmed is True
    # forwprop1 tried first (likely, no effect), then phiopt2: two probes and the confirmation
    assert p.probed == [("-O2", "-fdisable-tree-forwprop1"), ("-O2", "-fdisable-tree-phiopt2"),
                        ("-O2", "-fdisable-tree-phiopt2")]
    rest = _Compiler(lab, lambda cc, flags: "-fdisable-tree-copyprop1" not in flags, listing=_gcc_listing(passes))
    f = ctblame.gcc_pass(rest, SIG, SRC)
    assert f.name == "copyprop1"
