"""Flag search (lab/flags.py) with real compilers and real measurements: one space that holds byte-identical
flag sets, an -O0 that must be dropped early, two different binaries of equal speed, and a flag the compiler
rejects; the space file's errors; the winners as toolchain profiles; with --ct, a copy of Serpent whose -Os build
leaks (tests/fixtures/ciphers/ctblame) never wins, and the cost of constant time is reported."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest
import yaml

from lab import flags
from lab.errors import UsageError, UserError
from lab.schema import ToolchainFile

SPACE = """\
base: gcc-O3
description: a test space
dimensions:
  opt: [[-O3], [-O0]]          # -O3 first: the first of a binary's flag sets is the one measured
  twice: [[], [-O3]]           # -O3 again: the same binary as without
  unwind: [[], [-fno-asynchronous-unwind-tables]]   # another binary (no .eh_frame), the same code
  bad: [[], [-fno-such-flag]]  # the compiler rejects it
"""


# The race runs beside the suite's other worker (compiles, QEMU counts) on two vCPUs that may be one core's two
# hyperthreads: a process that shares the core runs tens of percent slower for its life, so two binaries of the
# same code can stand more than the lab's 3 % apart after a few processes, and one is dropped for good.  The
# race's band here is +-RACE_BAND (cost ratios up to 1.5 are a tie), which -O0 (several times slower) is far past.
RACE_BAND = 0.5


@pytest.fixture(scope="module")
def found(lab, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flags")
    (tmp / "space.yaml").write_text(SPACE)
    (c,) = flags.search(lab, tmp / "space.yaml", ["rc6"], json_out=tmp / "out.json", results_dir=tmp / "results",
                        build_dir=tmp / "build", threshold=RACE_BAND, say=lambda s: None)
    return {"cell": c, "json": json.loads((tmp / "out.json").read_text()), "tmp": tmp}


def _by_flags(found) -> dict[tuple, dict]:
    return {tuple(e["flags"]): e for e in found["json"]["cells"][0]["candidates"]}


def test_every_combination_is_a_candidate_and_the_json_says_what_each_became(found):
    d = found["json"]["cells"][0]
    assert d["candidates_total"] == 16 and len(d["candidates"]) == 16
    assert {e["status"] for e in d["candidates"]} <= set(flags.STATUSES)
    assert d["winner"] is not None and d["quantity"] == "encrypt_speed" and d["key_size"] == 128
    assert "ct" not in d and not any("ct" in e for e in d["candidates"])  # without --ct: no constant-time part
    # each racing process ran its own copy of its candidate's program (lab.measure.OwnCopies); none is left
    assert list((found["tmp"] / "build").rglob("timing")) and not list((found["tmp"] / "build").rglob(".own-*"))
    for e in d["candidates"]:
        if e["status"] in ("winner", "tied", "slower"):
            assert e["ci_low"] <= e["estimate"] <= e["ci_high"] and e["processes"] >= 5


def test_byte_identical_flag_sets_are_one_candidate(found):
    c = _by_flags(found)
    twice = c[("-O3", "-O3")]
    assert twice["status"] == "identical" and twice["same_binary_as"] == ["-O3"] and twice["processes"] == 0
    # -O0 then -O3: the last level wins, the same binary again
    assert c[("-O0", "-O3")]["status"] == "identical" and c[("-O0", "-O3")]["same_binary_as"] == ["-O3"]
    assert found["json"]["cells"][0]["distinct_binaries"] == 4  # -O0, -O3, each with and without unwind tables


def test_O0_is_eliminated_early(found):
    c = _by_flags(found)
    for key in [("-O0",), ("-O0", "-fno-asynchronous-unwind-tables")]:
        assert c[key]["status"] == "slower" and c[key]["eliminated_round"] == 5 and c[key]["processes"] == 5
    assert [r for r, _ in found["json"]["cells"][0]["eliminations"]] == [5, 5]


def test_two_binaries_of_equal_speed_are_tied(found):
    c = _by_flags(found)
    pair = [c[("-O3",)], c[("-O3", "-fno-asynchronous-unwind-tables")]]
    assert {e["status"] for e in pair} == {"winner", "tied"}
    assert max(pair, key=lambda e: e["estimate"])["status"] == "winner"  # the best estimate, not the first
    d = found["json"]["cells"][0]
    winner = d["winner"]
    assert d["tied"] == [[*f] for f in (("-O3",), ("-O3", "-fno-asynchronous-unwind-tables")) if list(f) != winner]


def test_only_distinct_binaries_get_a_kat_program_and_a_repeat_gates_nothing_again(found, lab):
    d, build = found["json"]["cells"][0], found["tmp"] / "build"
    kats = {e["toolchain"]: (build / "host" / e["toolchain"] / "rc6").glob("*/kat") for e in d["candidates"]}
    built = {tc for tc, progs in kats.items() if any(progs)}
    assert built == {e["toolchain"] for e in d["candidates"] if e["status"] in ("winner", "tied", "slower")}
    assert set(d["stages"]) == {"build", "gate", "lock_wait", "race", "confirm", "build_cpu", "gate_cpu"}
    assert all(v >= 0 for v in d["stages"].values()) and d["stages"]["gate_cpu"] > 0  # four kat programs ran
    verdicts = {p: p.stat().st_mtime_ns for p in (build / "kat-cache").glob("*.json")}
    # one remembered quick verdict per distinct binary that passed, and the full verdicts of the winner and its tie
    assert len(verdicts) == 4 + 2
    assert {e["gate"] for e in d["candidates"] if e["status"] in ("winner", "tied")} == {"full"}
    assert {e["gate"] for e in d["candidates"] if e["status"] == "slower"} == {"quick"}
    (again,) = flags.search(lab, found["tmp"] / "space.yaml", ["rc6"], results_dir=found["tmp"] / "results",
                            build_dir=build, say=lambda s: None)
    # every program current; only the 8 candidates whose flag the compiler rejects are tried again (a failed
    # step is not remembered)
    assert again.builds == sum(e["status"] == "unavailable" for e in d["candidates"]) == 8
    # every gate answered from the remembered verdicts (a kat run would have written its verdict again)
    assert {p: p.stat().st_mtime_ns for p in (build / "kat-cache").glob("*.json")} == verdicts
    assert {e.candidate.flags: e.status for e in again.entries if e.status in ("identical", "unavailable")} == \
        {tuple(e["flags"]): e["status"] for e in d["candidates"] if e["status"] in ("identical", "unavailable")}


def test_a_flag_the_compiler_rejects_makes_its_candidates_unavailable_with_the_message(found):
    bad = [e for f, e in _by_flags(found).items() if "-fno-such-flag" in f]
    assert len(bad) == 8
    for e in bad:
        assert e["status"] == "unavailable" and "-fno-such-flag" in e["reason"] and e["estimate"] is None


def test_the_search_is_a_run_and_its_winner_a_profile(found, lab):
    from lab import results

    run = found["json"]["run"]
    df = results.load(run, found["tmp"] / "results")
    speeds = df[df.metric == "encrypt_speed"]
    assert len(speeds) == 4  # the four binaries measured, each a cell whose toolchain is the candidate
    # the race's figures are the report's: the same best-case estimate and 95 % interval as the run's row
    for e in found["json"]["cells"][0]["candidates"]:
        if e["estimate"] is not None:
            (row,) = speeds[speeds.toolchain == e["toolchain"]].itertuples()
            assert (e["estimate"], e["ci_low"], e["ci_high"]) == \
                (pytest.approx(row.estimate), pytest.approx(row.ci_low), pytest.approx(row.ci_high))
            assert row.confidence == 0.95 and row.estimator == "trimmed"  # the quick profile's, as the run stores it
    (p,) = flags.write_winner_profiles(lab, lab.toolchain("gcc-O3"), [found["cell"]], "cell",
                                       folder=found["tmp"])
    doc = yaml.safe_load(p.read_text())
    ToolchainFile.model_validate(doc)  # a valid profile
    assert doc["inherits"] == "gcc-O3" and doc["add_flags"] == found["json"]["cells"][0]["winner"]


@pytest.mark.parametrize("text,words", [
    ("base: gcc-O3\ndimensions: {opt: [[-O2]]}\nextra: 1\n", "key 'extra': Extra inputs are not permitted"),
    ("base: gcc-O3\ndimensions: {}\n", "key 'dimensions'"),
    ("base: gcc-O3\ndimensions: {opt: []}\n", "dimension 'opt' has no alternatives"),
    ("base: gcc-03\ndimensions: {opt: [[-O2]]}\n", "did you mean 'gcc-O3'"),
])
def test_a_bad_space_is_one_line_naming_file_and_key(tmp_path, lab, text, words):
    (tmp_path / "s.yaml").write_text(text)
    r = subprocess.run([sys.executable, "-m", "lab", "flags-search", "--space", str(tmp_path / "s.yaml"),
                        "--ciphers", "rc6"], capture_output=True, text=True, cwd=lab.root)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "s.yaml" in r.stderr or "toolchain" in r.stderr


def test_the_report_has_a_flag_search_section(found, lab):
    from lab.publish import build_report
    from lab.report import errors_in

    html = build_report(lab, [found["json"]["run"]], results_dir=found["tmp"] / "results",
                        reports_dir=found["tmp"] / "reports").read_text()
    assert not errors_in(html)
    sec = html[html.index('<section id="flags">'):]
    sec = sec[:sec.index("</section>")]
    d = found["json"]["cells"][0]
    assert f"<code>{' '.join(d['winner'])}</code>" in sec
    assert "16 (winner 1, tied 1, slower 2, identical 4, unavailable 8); 4 distinct binaries" in sec
    assert f"{d['processes']} measuring processes in {d['rounds']} rounds" in sec
    assert sec.count("<svg") == 1 and "-O0 -fno-asynchronous-unwind-tables [slower]" in sec


def test_bench_compilers_agreement_counts_a_tied_winner_as_the_same_answer():
    from lab.bench.compilers import _agree

    a = {"winner": ["-O3"], "tied": [["-O2"]]}
    assert _agree(a, {"winner": ["-O3"], "tied": []})
    assert _agree(a, {"winner": ["-O2"], "tied": []})  # a tie of the first's winner
    assert _agree(a, {"winner": ["-Os"], "tied": [["-O3"]]})  # the first's winner tied with the second's
    assert not _agree(a, {"winner": ["-Os"], "tied": [["-O2"]]})


def test_bench_compilers_summarises_stored_searches(found, lab):
    from lab.bench.compilers import from_runs

    run, cell = found["json"]["run"], found["cell"]
    doc = from_runs(lab, [run], [run], results_dir=found["tmp"] / "results", say=lambda s: None)
    assert doc["agreement"] == 1.0 and doc["cells_compared"] == 1 and doc["ciphers"] == ["rc6"]
    w = next(e for e in cell.entries if e.status == "winner")
    assert doc["winner_precision_max"] == pytest.approx(w.estimate.precision)
    assert doc["processes_spent"] == 2 * cell.race.processes and doc["programs_full_factorial"] == 32
    assert doc["searches"][0]["stages"]["race"] == pytest.approx(found["json"]["cells"][0]["stages"]["race"], abs=0.1)
    with pytest.raises(UsageError, match="no flag search run 'nope'"):
        from_runs(lab, [run], ["nope"], results_dir=found["tmp"] / "results", say=lambda s: None)


OLD_SEARCH = {"space": "flags/gcc-six.yaml", "base": "gcc-O3", "quantity": "encrypt_speed", "key_size": 128,
              "run": "20261101T000000-flags-gcc-six", "cells": [{
                  "cipher": "rc6", "implementation": "ref", "target": "host", "quantity": "encrypt_speed",
                  "key_size": 128, "winner": ["-O3"], "tied": [], "spread": 1.5, "candidates_total": 2, "builds": 4,
                  "distinct_binaries": 2, "rounds": 6, "processes": 12, "topped_up": 0,
                  "eliminations": [[5, "-O0"]], "seconds": 30.0, "stages": {"race": 20.0},
                  "candidates": [
                      {"flags": ["-O3"], "toolchain": "gcc-O3-flags-1", "status": "winner", "reason": None,
                       "same_binary_as": None, "processes": 6, "eliminated_round": None, "gate": "full",
                       "estimate": 900.0, "ci_low": 890.0, "ci_high": 910.0},
                      {"flags": ["-O0"], "toolchain": "gcc-O3-flags-2", "status": "slower", "reason": None,
                       "same_binary_as": None, "processes": 6, "eliminated_round": 5, "gate": "quick",
                       "estimate": 600.0, "ci_low": 590.0, "ci_high": 610.0}]}]}


def test_a_stored_search_is_read_typed_and_written_back_as_it_was_and_a_bad_one_is_named(tmp_path):
    """flagsearch.json as the search wrote it before it was typed (json.dumps of a dict) reads as a FlagSearch and
    writes back the same content, without a ct part the search was not asked for; an unknown status is an error
    naming the file and the key; a run that is no flag search has none."""
    from lab import results

    (tmp_path / "flagsearch.json").write_text(json.dumps(OLD_SEARCH, indent=1) + "\n")
    doc = results.read_flag_search(tmp_path)
    assert doc.cells[0].winner == ("-O3",) and doc.cells[0].candidates[1].eliminated_round == 5
    assert doc.cells[0].ct is None and json.loads(doc.json_text()) == OLD_SEARCH
    assert results.read_flag_search(tmp_path / "nothing") is None
    bad = json.loads(json.dumps(OLD_SEARCH))
    bad["cells"][0]["candidates"][0]["status"] = "best"
    (tmp_path / "flagsearch.json").write_text(json.dumps(bad))
    with pytest.raises(UserError, match=r"flagsearch.json: .*cells.0.candidates.0.status"):
        results.read_flag_search(tmp_path)


def test_the_race_judges_by_the_best_case_interval_as_compare_does(lab):
    # issue 26's DES row in a race: the best case 6 % slower, the slow layout mode hiding it from a U test
    from lab.flags import Candidate, Entry, Race
    from tests.test_gate_units import cell, samples
    from tests.test_stats import _two_layouts

    c = cell(lab)
    def entry(costs):
        return Entry(Candidate((), lab.toolchain("gcc-O3")), samples=samples(c, [[round(x * 1000)] for x in costs]))

    best, other = entry(_two_layouts(100.0, 10, 137.0, 10)), entry(_two_layouts(106.0, 6, 130.0, 14))
    race = Race("encrypt_speed", c.cycle_key_sizes[0])
    assert race.slower(best, other) and not race.slower(other, best)
    race.decide([other, best])
    assert (best.status, other.status) == ("winner", "slower")
    # the winner's figure is the report's headline: the best case with its 95 % interval (20 distinct processes:
    # a 90 % interval has other ends)
    from lab import stats

    costs, work = _two_layouts(100.0, 10, 137.0, 10), c.impl.block_bits * 1e6
    # the profile's estimator and the machine's run-to-run noise (a C cell's: at the reference speed), as the
    # report's headline
    s = c.sampling
    want = stats.estimate(costs, s.estimator, 0.95, run_noise=s.reference_run_noise).inverted(work)
    other90 = stats.estimate(costs, s.estimator, 0.90, run_noise=s.reference_run_noise).inverted(work)
    assert (best.estimate.ci_low, best.estimate.ci_high) == (pytest.approx(want.ci_low), pytest.approx(want.ci_high))
    assert other90.ci_low != pytest.approx(want.ci_low, rel=1e-6)
    same = [entry(_two_layouts(100.0, 10, 137.0, 10)), entry(_two_layouts(100.5, 10, 136.0, 10))]
    race.decide(same)
    assert sorted(e.status for e in same) == ["tied", "winner"]


def test_a_race_that_ends_at_its_round_limit_measures_its_best_alone_until_precise(lab):
    """bench.compilers' MARS: every candidate tied, none precise, the race stopped at its round limit with the
    winner at +-1.2 %.  The best survivor then gets processes of its own (at most max_rounds) until its interval
    meets the precision; the others keep theirs, and the ties are judged against the tighter interval."""
    import random

    from lab.flags import Candidate, Entry, Race
    from tests.test_gate_units import cell, samples, timing_process

    c = cell(lab)
    ks = c.cycle_key_sizes[0]

    class Feed:  # Measurer.one_process's contract (one process appended to the samples), costs from a generator
        def __init__(self):
            self.rng = random.Random(7)

        def one_process(self, cs):
            cs.timing.append(timing_process([round(self.rng.uniform(1000, 1100) * 1000)], ks))

    def race(precision):
        entries = [Entry(Candidate((f"-f{i}",), lab.toolchain("gcc-O3")), status="racing", samples=samples(c, []))
                   for i in range(3)]
        r = Race("encrypt_speed", ks, min_rounds=5, max_rounds=5, precision=precision)
        r.run(list(entries), Feed(), lambda rounds, alive: None)
        return r, entries

    r, entries = race(0.0005)  # out of reach of 10 processes of a 10 % spread: the whole top-up is spent
    best = next(e for e in entries if e.status == "winner")
    assert r.rounds == 5 and r.topped_up == 5 and r.processes == 20
    assert len(best.samples.timing) == 5 + r.topped_up
    assert all(len(e.samples.timing) == 5 for e in entries if e is not best)
    assert {e.status for e in entries} <= {"winner", "tied", "slower"}
    loose, _ = race(0.5)  # precise after the race: nothing more
    assert loose.topped_up == 0 and loose.processes == 15


def test_the_race_gate_is_quick_and_the_winner_and_ties_pass_every_record(lab, tmp_path):
    """MARS's vectors hold 3,840 long Monte-Carlo records (64 of them here): the race's quick gate checks every
    32nd of them (and
    every short record, the n-block check and the checksum chain); a wrong answer in one it leaves out is found
    by the full gate, which the winner and its ties pass after the race: one that fails is unavailable, and the
    winner is decided again among the measured rest (here: it fails too, so none is left)."""
    from lab.build import Builder
    from lab.pipeline import CellPipeline, Final, Prepared, Stages, make_backend
    from tests.test_gate_units import cell, samples

    def iters(r):
        return int((re.findall(r"^ITER=(\d+)$", r, re.M) or ["1"])[0])

    records = (lab.vectors_dir / "mars.kat").read_text().split("\n\n")
    assert sum(iters(r) > 1000 for r in records) == 3840
    records = [r for r in records if iters(r) <= 1000] + [r for r in records if iters(r) > 1000][:64]  # cheaper
    long = [i for i, r in enumerate(records) if iters(r) > 1000]
    bad = records[long[1]]  # the second long record: the quick gate leaves it out
    ct = re.search(r"^CT=([0-9a-f])", bad, re.M)
    records[long[1]] = bad[:ct.start(1)] + "%x" % (int(ct.group(1), 16) ^ 1) + bad[ct.end(1):]
    text = "\n\n".join(records)
    (tmp_path / "mars-bad.kat").write_text(text)
    first_field = re.search(r"^[A-Z]+=", records[long[1]], re.M).start()  # the line the kat program names
    line = text[:text.index(records[long[1]]) + first_field].count("\n") + 1

    c = cell(lab, "mars")
    backend = make_backend(lab, "host", build_dir=tmp_path / "build", progress=lambda s: None)
    builder = Builder(lab.root, tmp_path / "build", backend)
    kat = lambda n: CellPipeline(backend, builder, Stages(programs=("kat",), vectors=(tmp_path / "mars-bad.kat",),
                                                           kat_long_every=n), say=lambda s: None)
    pipes = flags.Pipelines(kat(1), kat(flags.QUICK_LONG_EVERY), kat(1))
    b = pipes.kat.build(c)
    quick = pipes.kat.gate(b)
    assert isinstance(quick, Prepared) and quick.verdict.ok
    assert quick.verdict.sampled_out == 64 - math.ceil(64 / flags.QUICK_LONG_EVERY) == 62
    assert quick.verdict.records == len([r for r in records if re.search(r"^KEY=", r, re.M)])
    assert "quick gate: 62 long records not checked" in quick.verdict.line()
    full = pipes.full.gate(b)
    assert isinstance(full, Final) and full.status == "kat_failed" and f"line {line} of mars-bad.kat" in full.reason

    race = flags.Race("encrypt_speed", 128)
    def entry(flags_, status, costs):
        return flags.Entry(flags.Candidate(flags_, lab.toolchain("gcc-O3")), status=status, gate="quick",
                           samples=samples(c, [[x] for x in costs]))
    win, tie, slow = entry(("-O3",), "winner", [1000] * 6), entry(("-O2",), "tied", [1001] * 6), \
        entry(("-O1",), "slower", [1500] * 6)
    found = flags.CellSearch(c.impl, c.target, [win, tie, slow], race)
    flags.confirm_cell(found, pipes, say=lambda s: None)
    for e in (win, tie, slow):  # the slower one became the winner once the two failed, and failed in turn
        assert e.status == "unavailable" and e.gate == "full" and e.reason.startswith("full known-answer gate: ")
        assert f"line {line} of mars-bad.kat" in e.reason
    assert found.record().winner is None and found.stages["confirm"] > 0


# ------------------------------------------------------------------ --ct: a speed bought with a leak never wins
def _leak(line: str = "tests/fixtures/ciphers/ctblame/plant.c:27"):
    from lab.models import CtVerdict, Divergence, OpVerdict

    d = Divergence(kind="branch", address="0x401a2c", function="ctblame_rs_select", location=line,
                   detail="next instruction 0x401a30 vs 0x401a40")
    return CtVerdict(verdict="leak", reason="1 of 4 ops leak", ops=(
        OpVerdict(op="ekey", key_size=128, verdict="clean", inputs=8),
        OpVerdict(op="encrypt", key_size=128, verdict="leak", inputs=8, control_differs=True, distinct=2,
                  divergence=d)))


def test_a_leaking_candidate_races_in_its_own_pool_and_is_never_the_winner_even_when_fastest(lab):
    """The unit of --ct's logic (a measurer fed from a generator): the leaking candidate is the fastest by 30 %;
    it is raced and measured, but stays `leaks` through the race and the decision; it never drops the
    constant-time candidates (against it they would be slower); the winner is the fastest constant-time one, its
    equal tied; -O0 is dropped against the best constant-time one.  The cell's JSON and line name the fastest
    overall, the winner, and the cost of constant time as stats.compare_estimates gives it."""
    import random

    from lab import stats
    from lab.flags import Candidate, CellSearch, Entry, Race
    from lab.models import CtVerdict
    from tests.test_gate_units import cell, samples, timing_process

    c = cell(lab)
    ks = c.cycle_key_sizes[0]
    base = {("-Os",): 700, ("-O2",): 1000, ("-O3",): 1000, ("-O0",): 3000}  # ns per sample
    entries = {f: Entry(Candidate(f, lab.toolchain("gcc-O3")), status="racing", samples=samples(c, []))
               for f in base}
    cost = {id(e.samples): base[f] for f, e in entries.items()}

    class Feed:  # Measurer.one_process's contract: one process appended to the samples
        def __init__(self):
            self.rng = random.Random(11)

        def one_process(self, cs):
            cs.timing.append(timing_process([round(cost[id(cs)] * self.rng.uniform(1, 1.02) * 1000)], ks))

    flags.judge_ct(entries[("-Os",)], _leak())
    for f in (("-O2",), ("-O3",), ("-O0",)):
        flags.judge_ct(entries[f], CtVerdict(verdict="clean"))
    leak, o2, o3, o0 = (entries[f] for f in base)
    assert leak.status == "leaks" and o2.status == "racing"
    assert leak.reason == ("encrypt 128: secret-dependent branch at tests/fixtures/ciphers/ctblame/plant.c:27 "
                           "(ctblame_rs_select, 0x401a2c): next instruction 0x401a30 vs 0x401a40")
    race = Race("encrypt_speed", ks, min_rounds=5, max_rounds=8, precision=0.5)
    race.run(list(entries.values()), Feed(), lambda r, n: None)
    assert race.rounds == 5  # precise at once; -O0 dropped; each pool's best known
    assert (leak.status, o0.status, o0.eliminated_round) == ("leaks", "slower", 5)
    assert {o2.status, o3.status} == {"winner", "tied"}
    assert all(len(e.samples.timing) == 5 for e in entries.values())  # the leaking one is measured as the others
    winner = o2 if o2.status == "winner" else o3
    assert leak.estimate.estimate > 1.3 * winner.estimate.estimate
    assert race.slower(leak, winner)  # one pool would have dropped every constant-time candidate
    race.decide([leak, winner])  # deciding again (after a failed full gate): still never the leak
    assert (leak.status, winner.status) == ("leaks", "winner")
    alone = Entry(Candidate(("-Os",), lab.toolchain("gcc-O3")), status="leaks", samples=leak.samples)
    race.decide([alone])
    assert alone.status == "leaks"  # no constant-time survivor: no winner at all

    found = CellSearch(c.impl, c.target, list(entries.values()), race, ct_asked=True)
    d = found.record().model_dump(mode="json")  # as stored (models.FlagCell)
    assert d["winner"] == list(winner.candidate.flags) and list(leak.candidate.flags) not in d["tied"]
    want = stats.compare_estimates(winner.estimate, leak.estimate, 0.95, higher_is_better=True)
    assert d["ct"] == {"checked": True, "not_checked_because": None, "leaking": 1, "fastest": ["-Os"],
                       "fastest_status": "leaks", "fastest_ct": d["winner"],
                       "cost_of_ct": {"ratio": pytest.approx(leak.estimate.estimate / winner.estimate.estimate),
                                      "ci_low": want.ci_low, "ci_high": want.ci_high, "p_value": want.p_value,
                                      "verdict": "faster"}}
    assert want.ci_low < want.ratio < want.ci_high and want.ci_low > 1
    assert {e["status"]: e["ct"] for e in d["candidates"]}["leaks"] == "leak"
    line = flags.summary_line(found)
    assert "constant time: 1 distinct binary leaks; fastest '-Os' (leaks)" in line
    assert f"cost of constant time {want.ratio:.3f}x [{want.ci_low:.3f}, {want.ci_high:.3f}] (significant)" in line
    # a check that cannot judge a candidate keeps it out of the race: a winner must be shown constant-time
    e = Entry(Candidate(("-march=native",), lab.toolchain("gcc-O3")), status="racing")
    flags.judge_ct(e, CtVerdict(verdict="unavailable", reason="the trace run failed: SIGILL"))
    assert (e.status, e.reason) == ("unavailable", "constant-time check: the trace run failed: SIGILL")


CT_SPACE = """\
base: gcc-O3
description: "-Os makes gcc write ctblame/rs's select (t & 0x80 ? 0x14D : 0) as a branch; -O2 keeps it a select"
dimensions:
  opt: [[-Os], [-O2]]
"""


@pytest.fixture(scope="module")
def ct_found(fixture_lab, tmp_path_factory, host_plugin):
    tmp = tmp_path_factory.mktemp("flagsct")
    (tmp / "space.yaml").write_text(CT_SPACE)
    said: list[str] = []
    found = flags.search(fixture_lab, tmp / "space.yaml", ["ctblame/rs", "rijndael/ttable"], json_out=tmp / "out.json",
                         results_dir=tmp / "results", build_dir=tmp / "build", threshold=RACE_BAND, max_rounds=8,
                         ct=True, say=said.append)
    doc = json.loads((tmp / "out.json").read_text())
    return {"cells": {c.impl.id: c for c in found}, "json": {c["cipher"]: c for c in doc["cells"]}, "doc": doc,
            "said": said, "tmp": tmp}


def test_with_ct_the_leaking_flag_set_leaks_and_the_winner_is_constant_time(ct_found):
    from tests.conftest import ROOT

    plant = ROOT / "tests" / "fixtures" / "ciphers" / "ctblame" / "plant.c"
    line = next(i for i, t in enumerate(plant.read_text().splitlines(), 1) if "PLANTED RS SELECT" in t)
    d = ct_found["json"]["ctblame"]
    c = {tuple(e["flags"]): e for e in d["candidates"]}
    os_, o2 = c[("-Os",)], c[("-O2",)]
    assert os_["status"] == "leaks" and os_["ct"] == "leak", os_
    assert os_["reason"].startswith(f"encrypt 128: secret-dependent branch at tests/fixtures/ciphers/ctblame/plant.c:"
                                    f"{line} "), os_["reason"]
    assert os_["processes"] >= 5 and os_["ci_low"] <= os_["estimate"] <= os_["ci_high"]  # raced all the same
    assert (o2["status"], o2["ct"], o2["gate"]) == ("winner", "clean", "full")
    assert d["winner"] == ["-O2"] and d["tied"] == []
    ct = d["ct"]
    assert (ct["checked"], ct["leaking"], ct["fastest_ct"]) == (True, 1, ["-O2"])
    cost = ct["cost_of_ct"]
    if os_["estimate"] > o2["estimate"]:  # -Os faster: it is the fastest overall, and gated fully as the winner
        assert (ct["fastest"], ct["fastest_status"], os_["gate"]) == (["-Os"], "leaks", "full")
        assert cost["ratio"] == pytest.approx(os_["estimate"] / o2["estimate"])
        assert cost["ci_low"] < cost["ratio"] < cost["ci_high"] and cost["verdict"] in ("faster", "no change")
    else:  # the winner is the fastest: constant time costs nothing here
        assert (ct["fastest"], ct["fastest_status"], os_["gate"]) == (["-O2"], "winner", "quick")
        assert cost == {"ratio": 1.0, "ci_low": 1.0, "ci_high": 1.0, "p_value": 1.0, "verdict": "no change"}
    assert "ct" in d["stages"] and "ct" not in ct_found["json"]["rijndael"]["stages"]
    line_rs = next(s for s in ct_found["said"] if s.startswith("ctblame/rs@host: winner '-O2'"))
    assert "; constant time: 1 distinct binary leaks; " in line_rs


def test_with_ct_an_implementation_that_claims_no_constant_time_is_not_checked(ct_found):
    d = ct_found["json"]["rijndael"]
    assert d["ct"]["checked"] is False and d["ct"]["leaking"] == 0
    assert d["ct"]["not_checked_because"] == \
        "rijndael/ttable does not claim constant time (cipher.yaml: constant_time: false)"
    assert {e["ct"] for e in d["candidates"]} == {None} and d["winner"] is not None
    assert "leaks" not in {e["status"] for e in d["candidates"]}
    line = next(s for s in ct_found["said"] if s.startswith("rijndael/ttable@host: winner"))
    assert line.endswith("; constant time not checked: rijndael/ttable does not claim constant time (cipher.yaml: "
                         "constant_time: false)")


def test_with_ct_the_stored_run_carries_the_verdicts_and_the_report_the_leaks(ct_found, fixture_lab):
    from lab import results
    from lab.publish import build_report
    from lab.report import errors_in

    tmp, doc = ct_found["tmp"], ct_found["doc"]
    (run_dir,) = results.resolve_runs(tmp / "results", doc["run"])
    meta, recs = results.read_run(run_dir)
    assert meta.options["flag_search"]["ct"] is True
    by = {(r.implementation, r.toolchain): r for r in recs}
    tc = {tuple(e["flags"]): e["toolchain"] for e in ct_found["json"]["ctblame"]["candidates"]}
    assert by[("rs", tc[("-Os",)])].ct.verdict == "leak" and by[("rs", tc[("-O2",)])].ct.verdict == "clean"
    assert len(recs) == 4 and all(r.ct is None for r in recs if r.cipher == "rijndael")
    assert json.loads((run_dir / "flagsearch.json").read_text())["cells"] == doc["cells"]
    html = build_report(fixture_lab, [doc["run"]], results_dir=tmp / "results", reports_dir=tmp / "reports").read_text()
    assert not errors_in(html)
    sec = html[html.index('<section id="flags">'):]
    sec = sec[:sec.index("</section>")]
    assert "2 (winner 1, tied 0, slower 0, leaks 1, identical 0, unavailable 0)" in sec
    assert "<th>constant time</th><td>1 distinct binary leaks; " in sec
    assert "not checked: rijndael/ttable does not claim constant time" in sec


def test_with_ct_a_binarys_verdict_is_checked_once_and_remembered(ct_found, fixture_lab):
    """Each distinct binary of the claiming implementation was traced once, its verdict kept in the per-binary
    memo; preparing the cell again (the builds current, the gates remembered) traces nothing again."""
    from lab.build import Builder
    from lab.pipeline import make_backend

    build = ct_found["tmp"] / "build"
    memo = {p: p.stat().st_mtime_ns for p in (build / "memo" / "ct").glob("*.json")}
    assert len(memo) == 2  # -Os and -O2 of ctblame/rs; rijndael/ttable is not checked
    space, base = flags.load_space(fixture_lab, ct_found["tmp"] / "space.yaml")
    backend = make_backend(fixture_lab, "host", build_dir=build, progress=lambda s: None)
    try:
        pipes = flags.Pipelines.of(backend, Builder(fixture_lab.root, build, backend), build / "kat-cache", ct=True)
        ready = flags.prepare_cell(fixture_lab, fixture_lab.impl("ctblame/rs"), fixture_lab.target("host"),
                                   flags.candidates(space, base), flags.Race("encrypt_speed", 128), pipes,
                                   say=lambda s: None)
    finally:
        backend.close()
    assert {e.candidate.flags: e.status for e in ready.racing} == {("-Os",): "leaks", ("-O2",): "racing"}
    assert ready.search.builds == 0
    assert {p: p.stat().st_mtime_ns for p in (build / "memo" / "ct").glob("*.json")} == memo
