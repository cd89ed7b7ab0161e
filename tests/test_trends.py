"""Compiler-version trends (lab/trends.py): the step detector on synthetic runs with a planted 10 % step and
with none, exact instruction counts confirming a timed step, emulated targets judged by counts alone, and
`compare --by compiler` printing the steps."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from lab import results, trends

from . import synth

GCC = {11: "gcc (Debian 11.3.0-12) 11.3.0", 12: "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
       13: "gcc-13 (Debian 13.3.0-13) 13.3.0"}
CLANG = {14: "Debian clang version 14.0.6", 16: "Debian clang version 16.0.6 (15)"}
LAYOUT = list(1 + np.random.default_rng(7).permutation(np.linspace(0.0, 0.04, 21)))


def _timing(enc: float) -> list[dict]:
    return synth.steady_timing(enc, enc * 1.1, 400.0, LAYOUT, blocks=1000, pairs=100)


def _icount(per_block: float) -> list[dict]:
    return [{"key_size": 128, "op": op, "n": n, "calls": 1, "counter": "qemu-insn-region", "unit": "guest_insns",
             "deltas": [int(c)]} for op, n, c in [("null", 1, 0), ("ekey", 1, 900), ("dkey", 1, 950),
                                                  ("encrypt", 128, per_block * 128), ("decrypt", 128, per_block * 128)]]


def _cell(cipher, family, v, enc, insns, target="host", emulated=False):
    text = (GCC if family == "gcc" else CLANG)[v]
    return synth.cell(cipher, "ref", f"{family}-{v}-O3", target, key_sizes=(128,), emulated=emulated,
                      timing=_timing(enc), icount=_icount(insns), compiler_version=text)


@pytest.fixture(scope="module")
def df(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trends")
    cells = []
    for v, f in [(11, 1.0), (12, 1.0), (13, 1.1)]:  # serpent: gcc 13 costs 10 % more per block
        cells.append(_cell("serpent", "gcc", v, 150.0 * f, 1200 * f))
        # QEMU's wall clock steps too, but on an emulated target only the exact counts are judged
        cells.append(_cell("serpent", "gcc", v, 9000.0 * f, 1200 * f, "sparc64", emulated=True))
        cells.append(_cell("rc6", "gcc", v, 200.0 * (1 + 0.005 * (v % 2)), 800))  # flat, within the noise
        # counts 0.5 % apart: exact, but no step (below the noise threshold, which counts share)
        cells.append(_cell("rc6", "gcc", v, 9000.0, 800 * (1 + 0.005 * (v == 12)), "sparc64", emulated=True))
    for v in (14, 16):
        cells.append(_cell("serpent", "clang", v, 140.0, 1100))
    run = synth.write_run(tmp / "results", cells)
    return {"df": results.load(run, tmp / "results"), "run": run, "tmp": tmp}


@pytest.mark.parametrize("text,want", [
    ("gcc (Debian 12.2.0-14+deb12u1) 12.2.0", ("gcc", (12, 2, 0))),
    ("gcc-14 (Debian 14.2.0-19) 14.2.0", ("gcc", (14, 2, 0))),
    ("Debian clang version 16.0.6 (15)", ("clang", (16, 0, 6))),
    ("clang version 19.1.7 (3+b1)", ("clang", (19, 1, 7))),
    ("something else 1.2", None),
    ("g++ (Debian 12.2.0-14) 12.2.0", ("gcc", (12, 2, 0))),
    ("gcc-4.9 (Debian 4.9.2-10+deb8u2) 4.9.2", ("gcc", (4, 9, 2))),  # gcc's last version, not its name's
    ("gcc (Debian 20230315-1) 13.0.1 20230315 (experimental)", ("gcc", (13, 0, 1))),  # one version only
    ("Ubuntu clang version 14.0.0-1ubuntu1.1", ("clang", (14, 0, 0))),  # clang's first
    ("clang version 7.0 (tags/RELEASE_700/final)", ("clang", (7, 0, 0))),  # no patch number: 0
])
def test_the_compiler_and_its_version_from_version_text(text, want):
    assert trends.compiler_of(text) == want


def test_a_compiler_whose_version_text_does_not_name_it_is_named_by_the_toolchain():
    assert trends.compiler_of("cc (Debian 12.2.0-14) 12.2.0", "gcc") == ("gcc", (12, 2, 0))
    assert trends.compiler_of("cc (Debian 12.2.0-14) 12.2.0") is None


def test_a_planted_10_percent_step_is_found_between_the_right_versions(df):
    found = [s for s in trends.steps(df["df"]) if s.target == "host"]
    assert [(s.cipher, s.metric, s.before, s.after, s.verdict) for s in found] == [
        ("serpent", "decrypt_speed", "gcc 12.2.0", "gcc 13.3.0", "slower"),
        ("serpent", "encrypt_speed", "gcc 12.2.0", "gcc 13.3.0", "slower")]
    enc = found[1]
    assert enc.change == pytest.approx(1 / 1.1 - 1, abs=2e-3) and enc.ci_low <= enc.change <= enc.ci_high
    assert enc.exact_change == pytest.approx(1 / 1.1 - 1, abs=1e-3) and enc.confirmed
    assert enc.line().startswith("gcc 12.2.0 → 13.3.0: SERPENT encrypt -9 % [") and enc.line().endswith("(confirms)")


def test_no_step_where_there_is_none(df):
    assert not [s for s in trends.steps(df["df"]) if s.cipher == "rc6" or s.family == "clang"]


def test_an_emulated_target_is_judged_by_its_exact_counts_only(df):
    emu = [s for s in trends.steps(df["df"]) if s.target == "sparc64"]
    assert [(s.metric, s.before, s.after) for s in emu] == [("insn_decrypt_per_block", "gcc 12.2.0", "gcc 13.3.0"),
                                                          ("insn_encrypt_per_block", "gcc 12.2.0", "gcc 13.3.0")]
    assert emu[0].change == pytest.approx(1 / 1.1 - 1, abs=1e-3) and emu[0].ci_low == emu[0].ci_high


def test_compare_by_compiler_prints_the_steps(df):
    from lab.config import Lab

    r = subprocess.run([sys.executable, "-m", "lab", "compare", str(df["run"]), "--by", "compiler",
                        "--results-dir", str(df["tmp"] / "results")], capture_output=True, text=True,
                       cwd=Lab().root)
    assert r.returncode == 0, r.stderr
    assert "gcc 12.2.0 → 13.3.0: SERPENT encrypt -9 %" in r.stdout and "4 significant steps" in r.stdout


def test_the_report_draws_the_trends_and_lists_the_steps(df):
    from lab.config import Lab
    from lab.publish import build_report
    from lab.report import errors_in

    html = build_report(Lab(), [df["run"]], results_dir=df["tmp"] / "results",
                        reports_dir=df["tmp"] / "reports").read_text()
    assert not errors_in(html)
    sec = html[html.index('<section id="versions">'):]
    sec = sec[:sec.index("</section>")]
    assert sec.count("<li>") == 4 and "gcc 12.2.0 → 13.3.0: SERPENT encrypt -9 %" in sec
    assert sec.count("<svg") == 4  # serpent and rc6 on host and on sparc64


MINOR = {"9.5.0": "gcc (Debian 9.5.0-3) 9.5.0", "10.2.1": "gcc (Debian 10.2.1-6) 10.2.1",
         "12.2.0": "gcc (Debian 12.2.0-14) 12.2.0", "12.3.0": "gcc (Debian 12.3.0-1) 12.3.0"}


def test_one_digit_majors_order_by_number_and_a_minor_step_keeps_its_minor(tmp_path):
    """Two steps, early (9.5.0 -> 10.2.1: 10 % faster) and late (12.2.0 -> 12.3.0: 10 % slower); the labels keep
    the minor version (the old label, the major alone, printed "gcc 12 → 12"), and 9 sorts before 10 (not as text)."""
    cells = []
    for v, f in [("9.5.0", 1.1), ("10.2.1", 1.0), ("12.2.0", 1.0), ("12.3.0", 1.1)]:
        cells.append(synth.cell("serpent", "ref", "gcc-" + v, "host", key_sizes=(128,), timing=_timing(150.0 * f),
                                icount=_icount(1200 * f), compiler_version=MINOR[v]))
    run = synth.write_run(tmp_path / "results", cells)
    found = [s for s in trends.steps(results.load(run, tmp_path / "results"), ("encrypt_speed",))]
    assert [(s.before, s.after, s.verdict) for s in found] == [
        ("gcc 9.5.0", "gcc 10.2.1", "faster"), ("gcc 12.2.0", "gcc 12.3.0", "slower")]
    assert found[0].change == pytest.approx(1.1 - 1, abs=3e-3)
    assert found[1].change == pytest.approx(1 / 1.1 - 1, abs=3e-3)
    assert found[1].line().startswith("gcc 12.2.0 → 12.3.0: ")


def test_a_gradual_drift_over_versions_is_no_step(tmp_path):
    """Exact counts 2 % up at each of four versions (each within the 3 % threshold of the last): no step.  The
    detector's split between versions is judged on the two versions either side of it; the versions pooled on a
    side would call the 4 % between the first two and the last two a step."""
    cells = [synth.cell("serpent", "ref", "gcc-" + v, "sparc64", key_sizes=(128,), emulated=True,
                        timing=_timing(9000.0), icount=_icount(1200 * 1.02 ** i), compiler_version=MINOR[v])
             for i, v in enumerate(["9.5.0", "10.2.1", "12.2.0", "12.3.0"])]
    run = synth.write_run(tmp_path / "results", cells)
    assert trends.steps(results.load(run, tmp_path / "results"), ("encrypt_speed",)) == []


_SEEDED = """
import re, sys
from pathlib import Path
from lab import results, trends
from lab.config import Lab
from lab.publish import build_report

run, res, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
print(trends.format_steps(trends.steps(results.load(run, res))))
html = build_report(Lab(), [run], results_dir=res, reports_dir=out).read_text()
print("\\n".join(re.findall(r"<li>.*?</li>|<table.*?</table>", html, re.S)))
"""


def test_steps_and_report_tables_are_the_same_under_two_hash_seeds(df, tmp_path):
    """Nothing a user sees follows set or dict order: the steps (compare --by compiler's text) and every table
    and list of the report, under PYTHONHASHSEED 1 and 2."""
    import os

    outs = []
    for seed in ("1", "2"):
        r = subprocess.run([sys.executable, "-c", _SEEDED, str(df["run"]), str(df["tmp"] / "results"),
                            str(tmp_path / seed)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr[-2000:]
        outs.append(r.stdout)
    assert "4 significant steps" in outs[0] and "<table" in outs[0]
    assert outs[0] == outs[1]


def test_a_step_says_itself_in_one_line_exactly():
    """Step.line, both kinds, every part: versions with the exact counts confirming or not, runs with their
    revisions (one revision: none shown), key size and block count, and a profile."""
    from lab.steps import Step

    v = Step("versions", "s", "encrypt_speed", "gcc 12.2.0", "gcc 12.3.0", -0.094, -0.112, -0.071, "slower", 128,
             display="SERPENT", implementation="bitslice", target="host", family="gcc", exact_change=-0.0512)
    assert v.line() == ("gcc 12.2.0 → 12.3.0: SERPENT encrypt -9 % [-11, -7] (bitslice on host); "
                        "guest instructions -5.1 % (confirms)")
    v.exact_change = 0.02
    assert v.line().endswith("guest instructions +2.0 % (does not confirm)")
    r = Step("runs", "rc6/ref@gcc-O3@host", "insn_encrypt_per_block", "r1", "r2", 0.1234, 0.1, 0.15, "faster",
             128, 16, revisions=("abc", "def"), profile="nist")
    assert r.line() == ("rc6/ref@gcc-O3@host insn_encrypt_per_block 128-bit key n=16: faster +12.3 % [+10.0, +15.0] "
                        "from run r2; revisions abc..def (profile nist)")
    same = Step("runs", "x", "encrypt_speed", "r1", "r2", -0.05, -0.07, -0.03, "slower", revisions=("abc", "abc"))
    assert same.line() == "x encrypt_speed: slower -5.0 % [-7.0, -3.0] from run r2"
    one = Step("runs", "x", "encrypt_speed", "r1", "r2", -0.05, -0.07, -0.03, "slower", revisions=("", "def"))
    assert one.line().endswith("from run r2; revisions ?..def")  # a run without a recorded revision
    assert Step("runs", "x", "encrypt_speed", "r1", "r2", -0.05, -0.07, -0.03, "slower",
                revisions=("abc", "")).line().endswith("from run r2; revisions abc..?")
    big = Step("versions", "s", "encrypt_speed", "gcc 12.2.0", "gcc 13.3.0", 0.75, 0.6, 0.9, "faster", 128,
               display="SERPENT", implementation="ref", target="host", family="gcc")
    assert big.line() == "gcc 12.2.0 → 13.3.0: SERPENT encrypt +75 % [+60, +90] (ref on host)"  # percent: x 100


def _figure(text, est, run="r1", lo=None, hi=None, within=0.005, metric="encrypt_speed", cipher="serpent",
            target="host", key_size=128.0, n_blocks=float("nan"), cflags="-O3", status="ok", compiler="gcc"):
    """One row of a loaded frame as trends reads it: a trimmed figure with its run-to-run interval and its
    within-run part (relative), or an exact count for an insn_ metric."""
    exact = metric.startswith("insn")
    return {"cipher": cipher, "implementation": "ref", "display": cipher.upper(), "target": target,
            "emulated": target != "host", "metric": metric, "status": status, "estimate": est,
            "estimator": "exact" if exact else "trimmed", "ci_low": est if exact else lo,
            "ci_high": est if exact else hi, "confidence": None if exact else 0.95, "within": 0.0 if exact else within,
            "per_process": None if exact else [est] * 3, "key_size": key_size, "n_blocks": n_blocks,
            "compiler_version": text, "compiler": compiler, "cflags": cflags, "run_id": run}


G12, G13, G11 = GCC[12], GCC[13], GCC[11]


def test_the_version_points_by_hand():
    """trends.points: measured rows of the asked quantities (and their instruction counts at 128 blocks a call)
    at the key size, in series of one implementation, target, family and flags with two versions or more."""
    import pandas as pd

    nan = float("nan")
    df = pd.DataFrame([
        _figure(G12, 100.0, lo=99.0, hi=101.0), _figure(G13, 90.0, lo=89.0, hi=91.0),
        _figure(G11, 95.0, lo=94.0, hi=96.0, status="crashed"),  # not measured
        _figure(G11, nan, lo=nan, hi=nan),  # no estimate
        _figure(G11, 97.0, lo=96.0, hi=98.0, key_size=256.0),  # another key size
        _figure(G11, 98.0, lo=97.0, hi=99.0, metric="decrypt_speed"),  # not asked for
        _figure(G12, 1000.0, metric="insn_encrypt_per_block", n_blocks=128.0),
        _figure(G13, 1100.0, metric="insn_encrypt_per_block", n_blocks=128.0),
        _figure(G11, 900.0, metric="insn_encrypt_per_block", n_blocks=1.0),  # one block a call
        _figure("cc (Debian 12.2.0-14) 12.2.0", 50.0, lo=49.0, hi=51.0, cipher="rc6", cflags=nan),
        _figure(G13, 55.0, lo=54.0, hi=56.0, cipher="rc6", cflags=nan),
        _figure(G13, 60.0, lo=59.0, hi=61.0, cipher="aes"),  # one version: no series
    ])
    pts = trends.points(df, ("encrypt_speed",))
    assert sorted(zip(pts.series, pts.metric, pts.version, pts.estimate)) == [
        ("rc6/ref@host gcc ", "encrypt_speed", (12, 2, 0), 50.0), ("rc6/ref@host gcc ", "encrypt_speed", (13, 3, 0), 55.0),
        ("serpent/ref@host gcc -O3", "encrypt_speed", (12, 2, 0), 100.0),
        ("serpent/ref@host gcc -O3", "encrypt_speed", (13, 3, 0), 90.0),
        ("serpent/ref@host gcc -O3", "insn_encrypt_per_block", (12, 2, 0), 1000.0),
        ("serpent/ref@host gcc -O3", "insn_encrypt_per_block", (13, 3, 0), 1100.0)]
    assert set(pts.family) == {"gcc"}
    assert trends.steps(df[df.cipher == "aes"]) == [] and trends.steps(df.iloc[:0]) == []  # no series: no step
    assert {"family", "version", "series"} <= set(trends.points(df.iloc[:0]).columns)


def test_a_timed_step_by_hand_within_one_run_and_between_two():
    """Two versions 10 % apart measured in one run are judged on their within-run parts (0.5 %): a step, 10 %
    slower, its interval z(99 %) x both parts combined, the counts' change at the same versions beside it (from
    its own series, not another's).  The same figures from two runs are judged on their run-to-run intervals
    (10 %): no step."""
    import dataclasses
    import math

    import pandas as pd
    from lab import stats
    from lab.steps import Step

    rows = [_figure(G12, 100.0, lo=90.0, hi=110.0), _figure(G13, 90.0, lo=81.0, hi=99.0),
            _figure(G12, 1000.0, metric="insn_encrypt_per_block", n_blocks=128.0),
            _figure(G13, 1100.0, metric="insn_encrypt_per_block", n_blocks=128.0),
            _figure(G12, 1000.0, metric="insn_encrypt_per_block", n_blocks=128.0, cipher="rc6"),
            _figure(G13, 2000.0, metric="insn_encrypt_per_block", n_blocks=128.0, cipher="rc6")]
    (s,) = trends.steps(pd.DataFrame(rows), ("encrypt_speed",))
    sd = 0.005 / stats.z_value(0.95)  # each side's within-run relative sd
    hw = stats.z_value(stats.VERDICT_CONFIDENCE) * math.hypot(sd, sd)
    assert (s.change, s.ci_low, s.ci_high) == pytest.approx((-0.1, 0.9 * math.exp(-hw) - 1, 0.9 * math.exp(hw) - 1))
    assert s.exact_change == pytest.approx(1000 / 1100 - 1)
    assert dataclasses.replace(s, change=0, ci_low=0, ci_high=0, exact_change=0) == Step(
        "versions", "serpent/ref@host gcc -O3", "encrypt_speed", "gcc 12.2.0", "gcc 13.3.0", 0, 0, 0, "slower",
        128.0, cipher="serpent", display="SERPENT", implementation="ref", target="host", family="gcc",
        exact_change=0)
    rows[1]["run_id"] = "r2"
    assert trends.steps(pd.DataFrame(rows), ("encrypt_speed",)) == []
    # at another key size: the same step, asked for at that size only
    at256 = pd.DataFrame(rows[:1] + [{**rows[1], "run_id": "r1"}]).assign(key_size=256.0)
    assert trends.steps(at256, ("encrypt_speed",)) == []
    assert [x.key_size for x in trends.steps(at256, ("encrypt_speed",), key_size=256)] == [256.0]


def test_a_version_of_many_runs_meets_the_next_in_the_runs_order():
    """A version's rows keep the frame's order (the runs'), also at 17 rows and more, where a sort that is not
    stable reorders equal versions: 12.2.0 in sixteen runs and 13.3.0 in the last of them, 10 % slower there.
    Paired with 12.2.0 of that same run it is a step judged on the within-run parts (0.5 %); with an earlier run
    of 12.2.0, on the run-to-run intervals (10 %), it would be none."""
    import pandas as pd

    rows = [_figure(G12, 100.0, run=f"r{i:02d}", lo=90.0, hi=110.0) for i in range(1, 17)] + \
        [_figure(G13, 90.0, run="r16", lo=81.0, hi=99.0)]
    (s,) = trends.steps(pd.DataFrame(rows), ("encrypt_speed",))
    assert (s.before, s.after, s.verdict) == ("gcc 12.2.0", "gcc 13.3.0", "slower")
    assert s.change == pytest.approx(-0.1)


def test_exact_counts_by_hand_the_threshold_and_two_runs_of_one_version():
    """An emulated target's counts: 10 % more instructions is a step at the default 3 % threshold and none at 20 %;
    two runs of one version are one point (12.2.0 measured 1000 and then 1100, with 11.3.0 at 1000 and 13.3.0 at
    1100: no pair of neighbouring versions differs), not a step inside the version."""
    import pandas as pd

    def count(text, n, run="r1"):
        return _figure(text, n, run, metric="insn_encrypt_per_block", n_blocks=128.0, target="sparc64")

    df = pd.DataFrame([count(G12, 1000.0), count(G13, 1100.0)])
    (s,) = trends.steps(df, ("encrypt_speed",))
    assert (s.before, s.after, s.verdict, s.ci_low, s.ci_high) == ("gcc 12.2.0", "gcc 13.3.0", "slower",
                                                                     s.change, s.change)
    assert s.change == pytest.approx(1000 / 1100 - 1) and s.exact_change is None
    assert trends.steps(df, ("encrypt_speed",), threshold=0.2) == []
    runs = pd.DataFrame([count(G11, 1000.0), count(G12, 1000.0), count(G12, 1100.0, "r2"), count(G13, 1100.0)])
    assert trends.steps(runs, ("encrypt_speed",)) == []


def test_the_counts_change_beside_a_timed_step_needs_a_count_above_zero():
    """_exact_change: the instruction counts' change of speed between two versions (a over b - 1); none where
    either version has no count or the later one a count of 0 (a broken count, not an infinite speed-up)."""
    import pandas as pd

    rows = [_figure(G12, 1000.0, metric="insn_encrypt_per_block", n_blocks=128.0),
            _figure(G13, 0.5, metric="insn_encrypt_per_block", n_blocks=128.0)]
    pts = trends.points(pd.DataFrame(rows), ("encrypt_speed",))
    a, b = (next(pts[pts.version.map(lambda x: x == v)].itertuples()) for v in [(12, 2, 0), (13, 3, 0)])  # noqa: B023
    assert trends._exact_change(pts, a, b, "insn_encrypt_per_block") == pytest.approx(1000 / 0.5 - 1)
    assert trends._exact_change(pts, b, a, "insn_encrypt_per_block") == pytest.approx(0.5 / 1000 - 1)
    zero = pts.assign(estimate=[1000.0, 0.0])
    assert trends._exact_change(zero, a, b, "insn_encrypt_per_block") is None
    assert trends._exact_change(pts, a, b, None) is None
    for v in [(12, 2, 0), (13, 3, 0)]:  # one of the two versions has no count: no change either way round
        one = pts[pts.version.map(lambda x: x != v)]  # noqa: B023
        assert len(one) == 1
        assert trends._exact_change(one, a, b, "insn_encrypt_per_block") is None
        assert trends._exact_change(one, b, a, "insn_encrypt_per_block") is None


def test_the_steps_text_states_the_threshold_and_the_count():
    from lab.steps import Step

    assert trends.format_steps([], 0.05) == "no significant step between neighbouring compiler versions (noise " \
                                            "threshold ±5.0 %)"
    s = Step("versions", "s", "encrypt_speed", "gcc 12.2.0", "gcc 13.3.0", -0.1, -0.12, -0.08, "slower",
             display="SERPENT", implementation="ref", target="host")
    assert trends.format_steps([s, s], 0.05).split("\n") == [s.line(), s.line(), "",
                                                             "2 significant steps (noise threshold ±5.0 %)"]
