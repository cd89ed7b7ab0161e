"""The searches that judge by probing, on their pure logic: bisect's binary search over exact counts and its
like-good-or-like-bad rule on time (lab/bisect.py), and ct-blame's version, flag and pass searches (lab/ctblame.py)
with a compiler whose verdicts are a known function of its version and flags, so every finding has one right
answer and its plausible neighbours (the other end of the step, the first pair that differs in any way, a level
change before a one-switch change, the last pass that keeps it clean, the rest before the likely passes) give
another.  The real builds, traces and revisions are tests/test_bisect.py's and tests/test_ct_blame.py's."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from lab import bisect, ctblame, stats
from lab.errors import UsageError, UserError
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


class _Machine:
    """bisect's timed prober on a known machine: probe r's n-th process costs COST[r] x (1 + 0.001 x (n mod 3)),
    so the best case of every probe is its cost exactly and stats.compare decides a pair the same way at any
    number of processes; `measured` counts the processes."""

    def __init__(self, cost: dict[str, float], threshold: float = 0.03):
        self.cost, self.threshold, self.measured = cost, threshold, 0

    def more(self, probes, rounds):
        for _ in range(rounds):
            for p in probes:
                if p.samples is None:
                    p.samples = SimpleNamespace(timing=[])
                p.samples.timing.append({})
                self.measured += 1

    def costs(self, p):
        return [self.cost[p.ref] * (1 + 0.001 * (n % 3)) for n in range(len(p.samples.timing))]

    def compare(self, a, b):
        return stats.compare(self.costs(a), self.costs(b), threshold=self.threshold).verdict


def _timed(costs: list[float], max_rounds: int = 20):
    """Probes r0 .. r(n-1) of these costs, good and bad measured first (as bisect readies both ends), and the
    probes the search readied."""
    probes = [bisect.Probe(f"r{i}", f"r{i}", f"commit {i}") for i in range(len(costs))]
    pr = _Machine({p.ref: c for p, c in zip(probes, costs)})
    out = bisect.Outcome("encrypt_speed", probes[0], probes[-1], None, None, None, None)
    seen = []

    def ready(p):
        seen.append(p.name)
        return p
    bisect._bisect_timed(out, probes, ready, pr, "encrypt_speed", max_rounds)
    return out, seen, pr


def test_bisect_on_time_finds_the_first_probe_like_bad_and_its_change_from_the_last_like_good():
    # r1 and r2 within the 3 % band of good, r3 the step (25 % dearer), r4 .. r6 within the band of bad
    costs = [100, 101, 102, 127.5, 128, 129, 130]
    out, seen, pr = _timed(costs)
    assert seen == ["r3", "r1", "r2"]  # a binary search: the middle, then the halves
    assert out.first.name == "r3"
    p = {x: bisect.Probe(x, x, "", samples=SimpleNamespace(timing=[{}] * 5)) for x in ("r2", "r3")}
    s = stats.speedup(pr.costs(p["r2"]), pr.costs(p["r3"]), threshold=0.03)  # r2 (last like good) against r3
    assert out.change == pytest.approx(102 / 127.5 - 1) and out.change == pytest.approx(s.speedup - 1)
    assert (out.ci_low, out.ci_high) == pytest.approx((s.ci_low - 1, s.ci_high - 1))
    assert out.ci_low < out.change < out.ci_high  # an interval: the processes differ by up to 0.2 %
    assert out.message == (f"first change at r3 (commit 3): encrypt_speed {100 * out.change:+.1f} % "
                           f"[{100 * out.ci_low:+.1f}, {100 * out.ci_high:+.1f}]")
    # good and bad 5 processes each, then 2 more each until the verdict held twice with 8; 5 for each probe
    # readied, which _side told at once (no more rounds)
    assert pr.measured == 2 * 5 + 3 * 2 + 3 * 5


@pytest.mark.parametrize("costs,first,seen", [
    ([100, 130, 130, 130], "r1", ["r1"]),  # the step right after good
    ([100, 100, 100, 130], "r3", ["r1", "r2"]),  # the step at bad itself: the change is from r2's processes
])
def test_bisect_on_time_finds_a_step_next_to_either_end(costs, first, seen):
    out, got, _ = _timed(costs)
    assert got == seen and out.first.name == first
    assert out.change == pytest.approx(100 / 130 - 1)
    assert f"encrypt_speed {100 * (100 / 130 - 1):+.1f} %" in out.message


@pytest.mark.parametrize("max_rounds,processes", [(20, 8), (2, 7)])
def test_bisect_on_time_with_ends_alike_is_nothing_to_bisect(max_rounds, processes):
    """Good and bad within the band: 5 processes each, one more a round until the verdict held twice with 8
    processes or the rounds ran out (2 rounds: 7)."""
    out, seen, pr = _timed([100, 130, 101], max_rounds)
    assert out.first is None and out.change is None and seen == []
    assert pr.measured == 2 * processes
    assert out.message == (f"no significant difference between good and bad (after {processes} processes each): "
                           "nothing to bisect")


def test_bisect_on_time_refuses_a_probe_like_neither_end():
    with pytest.raises(UserError) as e:
        _timed([100, 115, 130], max_rounds=3)
    assert str(e.value) == ("r1: the test cannot tell it from either end after 3 rounds; not calling a step (try "
                            "on a quieter machine, or bisect on guest instructions)")


class _Said:
    """A comparator with one verdict per round (the last repeats): for bisect._decide."""

    def __init__(self, verdicts: list[str]):
        self.verdicts, self.rounds = verdicts, 0

    def compare(self, a, b):
        return self.verdicts[min(self.rounds, len(self.verdicts) - 1)]

    def more(self, probes, rounds):
        for p in probes:
            p.samples.timing.extend([{}] * rounds)
        self.rounds += 1


def _pair(processes: int):
    return [bisect.Probe(x, x, "", samples=SimpleNamespace(timing=[{}] * processes)) for x in "ab"]


@pytest.mark.parametrize("verdicts,processes,max_rounds,want,rounds", [
    (["slower"], 8, 20, "slower", 1),  # the same verdict twice: decided
    (["slower"], 5, 20, "slower", 3),  # ... but not before 8 processes
    (["slower", "faster", "slower", "slower"], 8, 20, "slower", 3),  # a verdict that changed starts again
    (["slower", "faster"], 8, 2, "faster", 2),  # the rounds ran out: the last verdict
    (["faster"], 8, 0, "no change", 0),  # no round at all
])
def test_bisect_decides_good_against_bad_when_the_verdict_holds_twice(verdicts, processes, max_rounds, want, rounds):
    a, b = _pair(processes)
    pr = _Said(verdicts)
    assert bisect._decide(pr, a, b, max_rounds) == want
    assert pr.rounds == rounds and len(a.samples.timing) == len(b.samples.timing) == processes + rounds


@pytest.mark.parametrize("change,shown", [
    (0.1234, "+12.34 %"), (-0.05, "-5.00 %"), (0.0, "+0.00 %"),
    (0.00001234, "+0.001 %"),  # an exact count's change of 0.001 %: as many decimals as it takes
    (0.0000497, "+0.005 %"),  # 0.00497 % is 0.00 at two decimals
    (-0.0000004, "-0.00004 %"), (3e-9, "+0.000000 %"),  # at most 6
])
def test_bisect_shows_a_change_with_the_decimals_it_needs(change, shown):
    assert bisect._percent(change) == shown


def test_bisect_on_counts_says_the_change_with_its_decimals():
    probes, out, ready, _ = _exact([1_000_000, 1_000_000, 1_000_010])
    bisect._bisect_exact(out, probes, ready, "insn_encrypt_per_block")
    assert out.message == ("first change at r2 (commit 2): insn_encrypt_per_block 1,000,000.00 -> 1,000,010.00 "
                           "(+0.001 %, exact); the last one like good is r1")


def test_bisect_outcome_lines_say_what_it_cost():
    out = bisect.Outcome("encrypt_speed", None, None, None, None, None, None, builds=3, counts=2, processes=40,
                         seconds=61.6, probes=["r0", "r6", "r3"], message="first change at r3")
    assert out.lines() == ("first change at r3\n3 builds, 2 instruction counts, 40 measuring processes, 62 s; "
                           "probed r0, r6, r3")


def test_bisect_checks_its_arguments_before_building_anything():
    targets = {"host": SimpleNamespace(emulated=False, image=None),
               "sparc64": SimpleNamespace(emulated=True, image="sparc64"),
               "armhf-box": SimpleNamespace(emulated=False, image="armhf"),
               "qemu-only": SimpleNamespace(emulated=True, image=None)}
    lab = SimpleNamespace(target=targets.get)
    ok = [("insn_encrypt_per_block", "sparc64", None, "a", "b"), ("encrypt_speed", "host", None, "a", "b"),
          ("insn_dkey", "host", ["gcc-11", "gcc-12"], None, None), ("decrypt_speed", "host", None, "a", None)]
    for metric, target, toolchains, good, bad in ok:
        bisect._check(lab, metric, target, toolchains, good, bad)  # no error
    known = ", ".join([*bisect.EXACT, *bisect.TIMED])  # every count and every timed speed
    assert "insn_ekey" in known and "encrypt_speed" in known
    with pytest.raises(UsageError, match=f"^option --metric: 'cycles' is not one of {re.escape(known)}$"):
        bisect._check(lab, "cycles", "host", None, "a", "b")
    for target in ("sparc64", "armhf-box", "qemu-only"):  # emulated, or built in an image: not this hardware
        with pytest.raises(UsageError, match=r"^a bisection on time measures this machine's hardware: use --target "
                                             r"host, or a guest-instruction metric$"):
            bisect._check(lab, "encrypt_speed", target, None, "a", "b")
    for toolchains, good, bad in ((None, None, None), (["gcc-11", "gcc-12"], "a", None), (["gcc-11"], None, "b")):
        with pytest.raises(UsageError, match=r"^bisect needs either --good and --bad \(revisions\) or --toolchains "
                                             r"\(compiler versions\)$"):
            bisect._check(lab, "insn_ekey", "host", toolchains, good, bad)


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
        target = target or lab.target("host")
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
