"""Flag search (lab/flags.py) with real compilers and real measurements: one space that holds byte-identical
flag sets, an -O0 that must be dropped early, two different binaries of equal speed, and a flag the compiler
rejects; the space file's errors; the winners as toolchain profiles."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest
import yaml

from lab import flags
from lab.errors import UsageError
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
    from lab.report import build_report, errors_in

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
    s = c.sampling  # the profile's estimator and the machine's run-to-run noise, as the report's headline
    want = stats.estimate(costs, s.estimator, 0.95, run_noise=s.run_noise).inverted(work)
    other90 = stats.estimate(costs, s.estimator, 0.90, run_noise=s.run_noise).inverted(work)
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
    assert found.json()["winner"] is None and found.stages["confirm"] > 0
