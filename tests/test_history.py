"""History (lab/history.py): a planted 10 % step in a series of synthetic runs is found at the right run by binary
segmentation with the lab's comparison; a flat noisy series gives none; machines never share a series; the noise
gauge of identical builds; the history page."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from lab import history, results, steps

from . import synth

LAYOUT = list(1 + np.random.default_rng(3).permutation(np.linspace(0.0, 0.04, 21)))


def _run(rd, n: int, serpent: float, rc6: float, machine: str = "synth", revision: str = "abc",
         dirty: bool = False, layout=None) -> None:
    layout = LAYOUT if layout is None else layout
    cells = [synth.cell(c, "ref", key_sizes=(128,), timing=synth.steady_timing(cost, cost * 1.1, 400.0, layout,
                                                                                 blocks=1000, pairs=100))
             for c, cost in (("serpent", serpent), ("rc6", rc6))]
    for c in cells:
        c["machine"] = machine
    d = synth.write_run(rd, cells)
    meta = json.loads((d / "run.json").read_text())
    meta.update(started=f"2026-11-{n + 1:02d}T00:00:00+00:00", git={"revision": revision, "dirty": dirty},
                machine_id=machine)
    (d / "run.json").write_text(json.dumps(meta))
    if machine != "synth":
        (rd / machine).mkdir(exist_ok=True)
        d.rename(rd / machine / d.name)


@pytest.fixture(scope="module")
def rd(tmp_path_factory):
    rd = tmp_path_factory.mktemp("hist") / "results"
    rng = np.random.default_rng(11)
    for n in range(8):  # serpent 10 % slower from run 5 on; rc6 flat within 1 %
        _run(rd, n, 150.0 * (1.1 if n >= 5 else 1.0), 200.0 * (1 + 0.01 * rng.random()),
             revision="r1" if n < 5 else "r2")
    for n in (8, 9):  # two runs from uncommitted sources: not identical builds, whatever their revision says
        _run(rd, n, 150.0 * 1.1, 200.0 * 1.003, revision="r2", dirty=True)
    for n in (10, 11, 12, 13):  # another machine, much faster: never on the same series (enough runs for a step)
        _run(rd, n, 100.0, 100.0, machine="other")
    return rd


def test_a_planted_step_is_found_at_the_run_where_it_starts(rd):
    df = history.load(rd, "synth")
    found = history.steps(df, ("encrypt_speed",))
    assert [(s.series.split("@")[0], s.verdict) for s in found] == [("serpent/ref", "slower")]
    s = found[0]
    runs = sorted(df.run_id.unique(), key=lambda r: df[df.run_id == r].started.iloc[0])
    assert s.first_run == runs[5] and s.before_run == runs[4]
    assert s.change == pytest.approx(1 / 1.1 - 1, abs=3e-3) and s.ci_low <= s.change <= s.ci_high
    assert s.revisions == ("r1", "r2") and "revisions r1..r2" in s.line()


def test_a_flat_noisy_series_gives_none_and_machines_never_mix(rd):
    df = history.load(rd)  # every machine
    found = history.steps(df, ("encrypt_speed",))
    assert not [s for s in found if s.series.startswith("rc6")]
    assert all(s.series.endswith("@synth") for s in found)  # the other machine's faster run is not a "step"
    assert set(history.load(rd, "other").machine) == {"other"}


def test_runs_of_one_build_on_a_noisy_machine_give_no_step_and_a_slowdown_of_the_last_five_is_one(tmp_path):
    """Thirty runs of one build, each with ten processes of their own layouts (0-6 % slower than the best) and its
    own machine speed (+-1 %, and one run in five 5 % faster, as AES-NI's runs on the lab's VM): the best case over
    a segment of many runs beats the best case over a few (it holds a fast run), and the runs' speeds differ more
    than a test over their pooled processes allows; neither is a step (pooled, they gave dozens).  Serpent 10 %
    slower in the last five runs is one, found at the first."""
    rd = tmp_path / "results"
    rng = np.random.default_rng(5)
    for n in range(30):
        speed = (0.95 if rng.random() < 0.2 else 1.0) * (1 + rng.uniform(-0.01, 0.01))
        _run(rd, n, 150.0 * speed * (1.1 if n >= 25 else 1.0), 200.0 * speed,
             layout=list(1 + rng.uniform(0.0, 0.06, 10)))
    df = history.load(rd, "synth")
    found = history.steps(df, ("encrypt_speed", "decrypt_speed"))
    assert sorted((s.series.split("@")[0], s.metric, s.verdict) for s in found) == [
        ("serpent/ref", "decrypt_speed", "slower"), ("serpent/ref", "encrypt_speed", "slower")]
    runs = sorted(df.run_id.unique(), key=lambda r: df[df.run_id == r].started.iloc[0])
    assert all(s.first_run == runs[25] and -0.12 < s.change < -0.06 and s.ci_low <= s.change <= s.ci_high
               for s in found)


def test_exact_counts_step_where_the_counts_change_not_where_a_median_first_moves():
    """Exact series, counts 100, 100, 110, 110 (a plateau of medians: splits 1, 2 and 3 all see 100 against
    110): the step is at the third run, the split that separates the runs."""
    import pandas as pd

    g = pd.DataFrame({"estimator": ["exact"] * 4, "estimate": [100.0, 100.0, 110.0, 110.0],
                      "per_process": [None] * 4})
    ((k, change, *_),) = history.change_points(g)
    assert k == 2 and change == pytest.approx(100 / 110 - 1)


def _series(costs) -> "pd.DataFrame":
    """A timed series as change_points takes it: each run two processes, its cost and 1 % more."""
    import pandas as pd

    return pd.DataFrame({"estimator": ["min"] * len(costs), "estimate": costs,
                         "per_process": [[c, c * 1.01] for c in costs]})


def test_a_step_needs_three_runs_a_side_and_the_u_test_over_every_split_the_search_could_choose():
    # two runs 20 % slower after 28 are no step, however far off; three are, at the first of them
    assert history.change_points(_series([100.0] * 28 + [120.0] * 2)) == []
    ((k, change, *_, verdict),) = history.change_points(_series([100.0] * 27 + [120.0] * 3))
    assert (k, verdict) == (27, "slower") and change == pytest.approx(100 / 120 - 1)
    # twelve runs of one build (0-8 % noise): the best-separated split, 3.2 % apart, has a U test p below 5 % but
    # not below 5 % over the 7 splits the search could choose: no step
    flat = [104.7, 106.7, 105.8, 102.9, 103.6, 102.9, 100.9, 101.6, 102.3, 102.5, 102.5, 104.6]
    assert history.change_points(_series(flat)) == []
    from scipy.stats import mannwhitneyu

    assert 0.05 / 7 < mannwhitneyu(flat[:3], flat[3:]).pvalue < 0.05


def test_the_separation_of_every_split_is_the_mann_whitney_statistic_standardised():
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(7)
    for _ in range(50):
        x = rng.integers(0, 5, int(rng.integers(2, 14))).astype(float)  # many ties
        x[rng.integers(0, x.size)] = np.nan  # a run without values
        z = steps.separations(x)
        assert z[0] == z[-1] == 0.0 and len(z) == x.size + 1
        for j in range(1, x.size):
            a, b = x[:j][~np.isnan(x[:j])], x[j:][~np.isnan(x[j:])]
            if a.size and b.size:
                u = mannwhitneyu(a, b).statistic
                n1, n2 = a.size, b.size
                assert z[j] == pytest.approx(abs(u - n1 * n2 / 2) / np.sqrt(n1 * n2 * (n1 + n2 + 1) / 12))


def test_the_noise_gauge_and_the_page(rd, tmp_path):
    df = history.load(rd, "synth")
    gauge = history.noise_gauge(df)
    rc6 = gauge[(gauge.cipher == "rc6") & (gauge.metric == "encrypt_speed")]
    assert len(rc6) == 2 and rc6["count"].sum() == 8  # r1 (5 runs) and r2 (3 runs): identical builds each
    for rev, g in rc6.groupby("revision"):  # the spread: the fastest of the identical builds / the slowest - 1
        est = df[(df.cipher == "rc6") & (df.metric == "encrypt_speed") & (df.revision == rev)].estimate
        assert g.spread.iloc[0] == pytest.approx(est.max() / est.min() - 1) and 0 < g.spread.iloc[0] < 0.011
    text = history.format_history(history.steps(df), gauge)
    assert "noise gauge:" in text and "serpent/ref@gcc-O3@host@synth encrypt_speed 128-bit key: slower" in text
    page = history.write_site(df, history.steps(df), gauge, tmp_path).read_text()
    assert "serpent/ref@gcc-O3@host@synth encrypt_speed 128-bit key: slower" in page and page.count("<svg") >= 2


def _two_key_sizes(rd, n: int, costs: dict[str, dict[int, float]]) -> None:
    """One run of cells measured at 128- and 256-bit keys, every process alike: {cipher: {key size: ns a block}}."""
    cells = []
    for cipher, by_size in costs.items():
        procs = [synth.timing_process({ks: {"encrypt": (1000, [round(c * 1000 * f)] * 2),
                                             "decrypt": (1000, [round(c * 1100 * f)] * 2),
                                             "key_setup": (100, [round(400 * 100 * f)] * 2)}
                                        for ks, c in by_size.items()}, started=float(p))
                 for p, f in enumerate(LAYOUT[:10])]
        cells.append(synth.cell(cipher, "ref", key_sizes=tuple(by_size), timing=procs))
    d = synth.write_run(rd, cells)
    meta = json.loads((d / "run.json").read_text())
    meta.update(started=f"2026-11-{n + 1:02d}T00:00:00+00:00", git={"revision": "r1", "dirty": False})
    (d / "run.json").write_text(json.dumps(meta))


def test_a_step_names_its_key_size_and_the_page_marks_it_on_its_own_chart(tmp_path):
    """Serpent 10 % slower at 128-bit keys from run 4 on, RC6 at 256-bit keys: each step's line names its key size
    (a cell's 128- and 256-bit series are two), and the page draws one key size a chart (the smallest, not the
    three mixed on one line) with a dashed line at the first run after a step - on Serpent's chart, not RC6's."""
    rd = tmp_path / "results"
    for n in range(8):
        slow = 1.1 if n >= 4 else 1.0
        _two_key_sizes(rd, n, {"serpent": {128: 150.0 * slow, 256: 200.0}, "rc6": {128: 100.0, 256: 130.0 * slow}})
    df = history.load(rd, "synth")
    found = history.steps(df, ("encrypt_speed",))
    assert sorted((s.series.split("@")[0], s.key_size) for s in found) == [("rc6/ref", 256), ("serpent/ref", 128)]
    assert all(f"encrypt_speed {s.key_size}-bit key: slower" in s.line() for s in found)
    page = history.write_site(df, found, history.noise_gauge(df), tmp_path / "reports").read_text()
    charts = {t: c for c in page.split("<svg")[1:] for t in ("serpent/ref", "rc6/ref") if t in c}
    assert "encrypt_speed, 128-bit key" in charts["serpent/ref"] and "encrypt_speed, 128-bit key" in charts["rc6/ref"]
    assert "stroke-dasharray" in charts["serpent/ref"] and "stroke-dasharray" not in charts["rc6/ref"]
    # the 256-bit figures (640,000 Kbit/s and less) are not on Serpent's 128-bit line (775,758-853,333)
    ticks = [float(t.replace(",", "")) for t in re.findall(r">(\d{3},\d{3})<", charts["serpent/ref"])]
    assert ticks and min(ticks) > 700_000


def test_a_chart_of_many_runs_keeps_the_page_width_and_writes_every_kth_label():
    from lab.report import charts

    pts = [(f"run{i:03d}", 100.0 + i % 7, 99.0, 108.0) for i in range(200)]
    svg = charts.version_trend({"gcc-O3": pts}, title="t", ylabel="y", marks=["run100"])
    width_pt = float(svg.split('width="', 1)[1].split("pt", 1)[0])
    assert width_pt <= 72 * charts.MAX_WIDTH_IN * 1.05  # 0.7 in a point would have made it 142 in wide
    written = [f"run{i:03d}" for i in range(200) if f">run{i:03d}<" in svg]
    assert 2 <= len(written) <= charts.MAX_X_LABELS and "run000" in written
    assert svg.count("stroke-dasharray") == 1


def test_a_history_reads_the_index_and_no_raw_samples(rd, monkeypatch):
    history.load(rd)  # runs whose run.json the fixture rewrote are indexed anew here
    assert all((d / "quantities.parquet").is_file() for d in results.run_dirs(rd))

    def recompute(*a, **k):
        raise AssertionError("a raw sample was read")

    monkeypatch.setattr(results, "cell_rows", recompute)
    assert not history.load(rd).empty


def _repository(tmp_path, commits: int):
    """A git repository of `commits` commits of one file: (its folder, their hashes, oldest first)."""
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True,  # noqa: E731
                                    check=True).stdout.strip()
    git("init", "-q")
    revs = []
    for i in range(commits):
        (repo / "f").write_text(str(i))
        git("add", "f")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{i}")
        revs.append(git("rev-parse", "HEAD"))
    return repo, revs


def test_a_history_by_revision_follows_the_commits_not_the_dates(tmp_path):
    repo, revs = _repository(tmp_path, 3)
    rd = tmp_path / "results"
    # measured in the order c2, c0, c1, c2, c0, c1 (abbreviated, uncommitted changes), c2 (by date), c2 slower by
    # 10 %: three runs on each side of the step, as a timed series needs; and one run from an unknown clone
    order = [(revs[2], 165.0), (revs[0], 150.0), (revs[1], 150.0), (revs[2], 165.0), (revs[0], 150.0),
             (revs[1][:10] + "+", 150.0), (revs[2], 165.0), ("f" * 40, 150.0)]
    for n, (rev, cost) in enumerate(order):
        _run(rd, n, cost, 200.0, revision=rev.rstrip("+"), dirty=rev.endswith("+"))
    df = history.with_revision_order(history.load(rd, "synth", cipher="serpent"), repo)
    pts = history._order(df[df.metric == "encrypt_speed"], "revision")
    assert [r.rstrip("+")[:10] for r in pts.revision] == [revs[0][:10]] * 2 + [revs[1][:10]] * 2 + [revs[2][:10]] * 3 \
        + ["f" * 10]
    assert pts.revision_order.tolist()[:7] == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 2.0] and np.isnan(pts.revision_order.iloc[7])
    # the step from c1 to c2 is found at c2's first run in commit order (by date c2 was measured first)
    known = df[df.revision_order.notna()]
    (s,) = history.steps(known, ("encrypt_speed",), by="revision")
    assert s.verdict == "slower" and s.revisions == (revs[1][:10] + "+", revs[2])
    assert s.first_run == pts.run_id.iloc[4] and s.change == pytest.approx(150 / 165 - 1, abs=3e-3)
    # by date the same runs alternate, and no three on either side of any split differ: no step
    assert history.steps(known, ("encrypt_speed",), by="date") == []


def test_two_steps_early_and_late_are_both_found_with_their_changes():
    """Three runs at 100, twenty at 120, four at 100: a step at the fourth run (slower) and one at the 24th
    (faster), each at its own change; exact counts 100, 110 x3, 121 step at the second and the fifth run."""
    import pandas as pd

    found = history.change_points(_series([100.0] * 3 + [120.0] * 20 + [100.0] * 4))
    assert [(k, v) for k, _, _, _, v in found] == [(3, "slower"), (23, "faster")]
    assert found[0][1] == pytest.approx(100 / 120 - 1) and found[1][1] == pytest.approx(120 / 100 - 1)
    assert all(lo <= ch <= hi for _, ch, lo, hi, _ in found)
    g = pd.DataFrame({"estimator": ["exact"] * 5, "estimate": [100.0, 110.0, 110.0, 110.0, 121.0],
                      "per_process": [None] * 5})
    assert [(k, round(ch, 6)) for k, ch, *_ in history.change_points(g)] == [
        (1, round(100 / 110 - 1, 6)), (4, round(110 / 121 - 1, 6))]


def test_a_series_threshold_is_its_median_run_to_run_sd_by_hand():
    """history.series_threshold from the trimmed rows' intervals alone: z(99 %) * sqrt(2) * the median of their
    relative sds (half-width / z(95 %)), at least 1 %; rows of other estimators, rows without an interval and an
    exact count play no part; no trimmed row: the lab's 3 %."""
    import math

    import pandas as pd
    from scipy.stats import norm

    from lab import history

    def row(est, lo, hi, estimator="trimmed", confidence=0.95):
        return {"estimate": est, "ci_low": lo, "ci_high": hi, "estimator": estimator, "confidence": confidence}

    rows = [row(100.0, 98.0, 102.0), row(200.0, 192.0, 208.0), row(50.0, 48.5, 51.5), row(80.0, 70.0, 90.0),
            row(100.0, 60.0, 140.0, "median"), row(100.0, float("nan"), float("nan")),
            row(1e4, 1e4, 1e4, "exact", None)]
    # relative half-widths 2 %, 4 %, 3 %, 12.5 % (the others play no part): median sd 3.5 % / z(95 %)
    want = norm.ppf(0.995) * math.sqrt(2) * (0.035 / norm.ppf(0.975))
    assert history.series_threshold(pd.DataFrame(rows)) == pytest.approx(want, rel=1e-9)
    tiny = [row(100.0, 99.9, 100.1), row(100.0, 99.95, 100.05)]
    assert history.series_threshold(pd.DataFrame(tiny)) == 0.01  # the effect floor
    assert history.series_threshold(pd.DataFrame(rows[4:])) == 0.03  # nothing with a run-to-run interval


def test_the_noise_gauge_line_by_hand():
    """gauge_line's figures from a known gauge: the spreads' median, 90th percentile (linear) and maximum, and the
    same of the gauge-relative spreads that exist."""
    import pandas as pd

    from lab import history

    g = pd.DataFrame({"spread": [0.01, 0.02, 0.03, 0.10], "spread_gauge_relative": [0.005, 0.015, None, 0.02]})
    assert history.gauge_line(g) == (
        "noise gauge: 4 quantities of identical builds in several runs; spread p50 2.50 %, p90 7.90 %, max 10.00 %; "
        "relative to the machine-speed gauge (3 of them): p50 1.50 %, p90 1.90 %, max 2.00 %")
    assert history.gauge_line(g.drop(columns="spread_gauge_relative")).endswith("max 10.00 %")
    assert history.gauge_line(g.iloc[:0]) == "noise gauge: no identical build measured in two runs yet"


def test_the_step_detectors_judges_by_hand():
    """lab/steps.py's judges on series whose answers are known: exact counts (costs) with two steps, a change
    under the threshold, and timed runs (each run's median cost) with one step, under and over the threshold."""
    import numpy as np

    from lab import steps

    two = steps.segment(steps.Counts(np.array([100.0, 100, 80, 80, 100, 100])), 6)
    assert [(k, round(s.change, 6), s.verdict) for k, s in two] == [(2, 0.25, "faster"), (4, -0.2, "slower")]
    assert steps.segment(steps.Counts(np.array([100.0, 100, 98, 98])), 4) == []  # 2 %: under the 3 % threshold
    assert steps.segment(steps.Counts(np.array([100.0, 100, 98, 98]), threshold=0.01), 4)[0][0] == 2

    runs = steps.Runs(np.array([10.0, 10.1, 9.9, 10.0, 10.05, 9.95, 11.0, 11.1, 10.9, 11.0, 11.05, 10.95]))
    assert runs.candidates(0, 12)[0] == 6  # the best-separated split first
    (k, s), = steps.segment(runs, 12)
    assert k == 6 and s.verdict == "slower" and s.change == pytest.approx(10.0 / 11.0 - 1, abs=0.005)
    assert s.low <= s.change <= s.high
    flat = steps.Runs(np.array([10.0, 10.1, 9.9, 10.0, 10.2, 10.3, 10.1, 10.2]))  # +2 %: under the threshold
    assert flat.candidates(0, 8) == [] and steps.segment(flat, 8) == []
    # two runs after a step are too few to call it (RUN_UNITS a side): no step one run early either
    assert steps.segment(steps.Runs(np.array([10.0, 10.1, 9.9, 10.0, 10.1, 11.0, 11.1])), 7) == []


class _Scripted:
    """A judge of lab/steps.py's search with given candidates {(lo, hi): [k, ...]} and verdicts {(lo, k, hi):
    verdict} ("no change" where none is given); it records every judgement (lo, k, hi, splits), and each split it
    returns carries the number of its judgement as its change."""

    def __init__(self, min_size, candidates, verdicts):
        self.min_size, self.cands, self.verdicts, self.calls = min_size, candidates, verdicts, []

    def candidates(self, lo, hi):
        return self.cands.get((lo, hi), [])

    def judge(self, lo, k, hi, splits):
        from lab import steps

        self.calls.append((lo, k, hi, splits))
        n = float(len(self.calls))
        return steps.Split(n, n, n, self.verdicts.get((lo, k, hi), "no change"))


def test_the_binary_segmentation_by_hand():
    """segment on 20 points, 3 a side: the first called candidate of a segment is its change point and both sides
    are searched again; a "no change" passes to the next candidate; a candidate with too few points a side ends
    the segment's search (the next is never judged); `splits` is hi - lo - 2 x 3 + 1.  Then each step is judged
    again between its neighbouring change points, and keeps its first judgement where the second differs."""
    from lab import steps

    judge = _Scripted(3, {(0, 20): [10], (0, 10): [5], (5, 10): [7], (10, 20): [15, 12, 17]},
                      {(0, 10, 20): "slower", (0, 5, 10): "faster"})
    found = steps.segment(judge, 20)
    assert judge.calls == [(0, 10, 20, 15), (0, 5, 10, 5), (10, 15, 20, 5),  # the search
                           (0, 5, 10, 5), (5, 10, 20, 10)]  # each step between its neighbours
    # 5: judged again alike (the fourth judgement); 10: "no change" between 5 and 20, so its first stays
    assert found == [(5, steps.Split(4.0, 4.0, 4.0, "faster")), (10, steps.Split(1.0, 1.0, 1.0, "slower"))]


def test_the_splits_a_search_tries_and_their_order_by_hand():
    """_best_separated: the splits lo < k < hi, those with a change (not None) best-separated first, then the
    larger change, then the earlier split."""
    import numpy as np

    from lab import steps

    asked = []

    def change(table):
        def c(k):
            asked.append(k)
            return table.get(k)
        return c

    # 100, 130, 100: both splits equally separated (|z| 0.61), the larger change first
    assert steps._best_separated(np.array([100.0, 130, 100]), 0, 3, change({1: 0.15, 2: 0.13})) == [1, 2]
    assert steps._best_separated(np.array([100.0, 130, 100]), 0, 3, change({1: 0.13, 2: 0.15})) == [2, 1]
    # 100, 100, 130, 130: the middle best separated; the other two tie, also in their change: the earlier first
    assert steps._best_separated(np.array([100.0, 100, 130, 130]), 0, 4, change({1: 0.5, 2: 0.1, 3: 0.5})) == [2, 1, 3]
    asked.clear()
    # a segment inside the series: only its own splits, and None is no candidate
    assert steps._best_separated(np.array([0.0, 0, 100, 130, 100]), 2, 5, change({3: 0.1})) == [3]
    assert asked == [3, 4]


def test_the_separation_of_every_split_by_hand():
    """|z| of the U statistic at every split; a non-finite value has no rank and counts on neither side, and a
    split with no finite value on a side is 0."""
    import math

    import numpy as np

    from lab import steps

    z = steps.separations([math.nan, 1.0, 2.0, 3.0])  # finite ranks 1, 2, 3
    # split 2: [1] against [2, 3]: U = 0, n1 n2 / 2 = 1, sd = sqrt(1 x 2 x 4 / 12)
    assert z == pytest.approx([0.0, 0.0, 1 / math.sqrt(2 / 3), 1 / math.sqrt(2 / 3), 0.0])
    assert np.isfinite(z).all()


def test_the_runs_judge_by_hand():
    """Runs: a split's change (|left / right - 1| of the sides' median costs, None within the threshold, for a
    side without a finite value or with a cost not above 0), its candidates and its judgement, inside a segment
    of a longer series; the U test's level 5 % over the segment's splits."""
    import numpy as np

    from lab import stats, steps

    nan = float("nan")
    R = lambda *v, **kw: steps.Runs(np.array(v, dtype=float), **kw)  # noqa: E731
    assert R(nan, nan, 100, 125, 130, 140)._change(3, 0, 6) == pytest.approx(1 - 100 / 130)  # the median, not min
    assert R(100, 100, 100, 125, nan, nan)._change(3, 0, 6) == pytest.approx(0.2)  # one run a side is enough
    assert R(nan, nan, nan, 125, 125, 125)._change(3, 0, 6) is None
    assert R(0, 0, 0, 100, 100, 100)._change(3, 0, 6) is None and R(100, 100, 100, 0, 0, 0)._change(3, 0, 6) is None
    assert R(0.5, 0.5, 0.5, 0.6, 0.6, 0.6)._change(3, 0, 6) == pytest.approx(1 / 6)  # costs below 1 are costs
    assert R(100, 100, 100, 125, 125, 125, threshold=0.25)._change(3, 0, 6) is None  # exactly at the threshold
    assert R(100, 100, 100, 125, 125, 125, threshold=0.2)._change(3, 0, 6) == pytest.approx(0.2)
    # a segment inside a series: only its own runs count
    inner = R(50, 50, 50, 100, 100, 100, 125, 125, 125, 50, 50, 50)
    assert inner._change(6, 3, 9) == pytest.approx(0.2)
    flat_inside = R(125, 125, 125, 100, 100, 100, 100, 100, 100, 50, 50, 50)
    assert flat_inside.candidates(3, 9) == []
    # in the whole series 3 and 9 are both wholly apart (3 runs against 9): the larger change, 100 -> 50, first
    assert flat_inside.candidates(0, 12)[:2] == [9, 3]
    left, right = np.array([100.0, 101, 99]), np.array([125.0, 126, 124])
    s = stats.speedup(left, right, "median", stats.NOISE_THRESHOLD, alpha=0.05)
    got = R(50, 50, 50, *left, *right, 50, 50, 50).judge(3, 6, 9, splits=1)
    assert got == steps.Split(s.speedup - 1, s.ci_low - 1, s.ci_high - 1, s.verdict)
    assert got.change == pytest.approx(100 / 125 - 1) and got.low < got.change < got.high
    # five runs a side wholly apart: U test p = 2 / 252 = 0.0079, significant at 5 % over 5 splits, not over 7
    five = R(100, 101, 99, 100.5, 99.5, 125, 126, 124, 125.5, 124.5)
    assert five.judge(0, 5, 10, splits=5).verdict == "slower" and five.judge(0, 5, 10, splits=7).verdict == "no change"


def test_the_counts_judge_by_hand():
    """Counts: the splits beyond the threshold inside a segment (its own points only: flat inside, none), best
    separated first, then the larger change: 100, 110, 130 has both splits equally separated and 105 -> 130
    (-19 %) beyond 100 -> 120 (-17 %); so has 130, 110, 100."""
    import numpy as np

    from lab import steps

    C = lambda *v: steps.Counts(np.array(v, dtype=float))  # noqa: E731
    early, late = C(200, 200, 100, 100, 100, 100), C(100, 100, 100, 100, 50, 50)
    assert early.candidates(2, 6) == [] and late.candidates(0, 4) == []
    assert early.candidates(0, 6)[0] == 2 and late.candidates(0, 6)[0] == 4
    assert C(100, 110, 130).candidates(0, 3) == [2, 1]
    assert C(130, 110, 100).candidates(0, 3) == [1, 2]  # getting cheaper: 130 -> 105 (+24 %) beyond 120 -> 100 (+20 %)


def test_a_series_order_and_its_x_labels_by_date_revision_and_compiler():
    """history's three orders of one series' runs and the label each run gets: by date (start, then id), by
    revision (position in the repository's history, unknown revisions last, ties by start), by compiler (the
    whole version as numbers: 9 < 12.2 < 12.10, ties by start)."""
    import pandas as pd

    from lab import history

    g = pd.DataFrame({
        "run_id": ["20260101T000003Z-c", "20260101T000001Z-a", "20260101T000002Z-b", "20260101T000004Z-d"],
        "started": [3.0, 1.0, 2.0, 4.0],
        "revision": ["c" * 40, "a" * 40, None, "d" * 40 + "+"],
        "revision_order": [0.0, 2.0, float("nan"), 1.0],
        "compiler": ["gcc"] * 4,
        "compiler_version": ["gcc (Debian 12.10.0-1) 12.10.0", "gcc (Debian 12.2.0-14) 12.2.0",
                             "gcc (Debian 9.5.0-3) 9.5.0", "gcc (Debian 12.2.0-14) 12.2.0"]})
    ids = lambda by: [r[-1] for r in history._order(g, by).run_id]  # noqa: E731
    assert ids("date") == ["a", "b", "c", "d"]
    assert ids("revision") == ["c", "d", "a", "b"]
    assert ids("compiler") == ["b", "a", "d", "c"]
    r = g.iloc[0]
    assert history._x_label(r, "date") == "20260101T000003" and history._x_label(r, "revision") == "c" * 10
    assert history._x_label(r, "compiler") == "gcc 12.10.0"
    assert history._x_label(g.iloc[2], "revision") == "?"


def test_the_noise_gauge_by_hand():
    """noise_gauge: identical builds (cell, compiler version, flags, clean revision) in several runs, their
    spread max / min - 1; a dirty revision, an exact count, a quantity of one run and another compiler version
    are not identical builds of it."""
    import pandas as pd

    from lab import history

    def row(run, est, rel=None, rev="abc", cv="gcc 12.2.0", metric="encrypt_speed", estimator="trimmed"):
        return {"cipher": "rc6", "implementation": "ref", "toolchain": "gcc-O3", "target": "host", "machine": "m",
                "profile": "quick", "metric": metric, "key_size": 128.0, "n_blocks": float("nan"),
                "compiler_version": cv, "cflags": "-O3", "revision": rev, "estimate": est,
                "estimator": estimator, "gauge_relative": rel, "run_id": run}

    df = pd.DataFrame([row("r1", 100.0, 2.00), row("r2", 104.0, 2.02), row("r3", 102.0, 2.04),
                       row("r4", 50.0, 0.5, rev="abc+"),  # uncommitted changes: not the same build
                       row("r5", 90.0, 0.9, cv="gcc 13.1.0"),  # another compiler: one run of its own, left out
                       row("r1", 1e4, metric="insn_encrypt_per_block", estimator="exact"),
                       row("r2", 2e4, metric="insn_encrypt_per_block", estimator="exact"),
                       row("r6", 80.0, 1.0, rev="def"), row("r7", 88.0, 1.1, rev="def")])  # two runs are enough
    g = history.noise_gauge(df)
    assert len(g) == 2
    r, d = (next(g[g.revision == v].itertuples()) for v in ("abc", "def"))  # noqa: B023
    assert (r.count, r.min, r.max, d.count) == (3, 100.0, 104.0, 2)
    assert r.spread == pytest.approx(0.04) and r.spread_gauge_relative == pytest.approx(0.02)
    assert d.spread == pytest.approx(0.1) and d.spread_gauge_relative == pytest.approx(0.1)
    # runs without a recorded revision, in an object column (pandas 2's strings; None, not a string NA): clean
    # builds of one (unknown) revision, not a crash
    df = pd.DataFrame([row("r8", 100.0, 1.0, rev=None), row("r9", 103.0, 1.0, rev=None),
                       row("r10", 60.0, 1.0, rev="abc+")]).astype({"revision": object})
    g = history.noise_gauge(df)
    assert len(g) == 1 and g.iloc[0]["count"] == 2 and g.iloc[0].spread == pytest.approx(0.03)


def test_the_page_charts_by_hand():
    """history.page_charts from a known frame: one chart per cell, profile and quantity with two runs or more
    (encryption speed; instruction counts at 128 blocks a call only), at the smallest key size, each toolchain's
    runs in order with an interval that is not finite drawn as the estimate, the first run after each of the
    chart's own steps marked (not a step at another key size or in another profile), and beside it the runs
    relative to the machine-speed gauge where a toolchain has two of them."""
    import pandas as pd

    from lab import history
    from lab.steps import Step

    nan = float("nan")

    def row(cipher, tc, run, est, lo, hi, ks=128.0, metric="encrypt_speed", nb=nan, profile="quick", rel=nan,
            rev=None):
        return {"cipher": cipher, "implementation": "ref", "toolchain": tc, "target": "host", "machine": "m",
                "profile": profile, "metric": metric, "key_size": ks, "n_blocks": nb, "run_id": f"2026110{run}T000000Z-x",
                "started": float(run), "revision": rev, "revision_order": nan, "compiler": "gcc",
                "compiler_version": "gcc (Debian 12.2.0-14) 12.2.0", "estimate": est, "ci_low": lo, "ci_high": hi,
                "gauge_relative": rel, "gauge_relative_low": rel - 0.25, "gauge_relative_high": rel + 0.25}

    df = pd.DataFrame([
        row("aes", "gcc-O2", 1, 90.0, 89.0, 91.0),  # one run: no chart
        row("rc6", "gcc-O2", 2, 100.0, 99.0, 101.0, rel=2.0),
        row("rc6", "gcc-O2", 1, 110.0, nan, nan, rel=2.5),  # started first; no interval
        row("rc6", "gcc-O2", 3, 50.0, 49.0, 51.0, ks=256.0),  # another key size: not on the 128-bit chart
        row("rc6", "gcc-O3", 1, 120.0, 118.0, 122.0, rel=3.0),  # one gauge-relative figure: no gauge chart line
        row("rc6", "gcc-O2", 4, 70.0, 69.0, 71.0, profile="nist"),
        row("rc6", "gcc-O2", 5, 75.0, 74.0, 76.0, profile="nist"),
        row("rc6", "gcc-O2", 6, 1.0, 1.0, 1.0, metric="decrypt_speed"),  # not drawn
        row("rc6", "gcc-O2", 7, 1.0, 1.0, 1.0, metric="decrypt_speed"),
        row("serpent", "gcc-O2", 1, 5000.0, 5000.0, 5000.0, nan, "insn_encrypt_per_block", 128.0, None),
        row("serpent", "gcc-O2", 2, 5500.0, 5500.0, 5500.0, nan, "insn_encrypt_per_block", 128.0, None),
        row("serpent", "gcc-O2", 3, 7000.0, 7000.0, 7000.0, nan, "insn_encrypt_per_block", 1.0, None),  # n=1
    ])
    o2, o3 = "rc6/ref@gcc-O2@host@m", "rc6/ref@gcc-O3@host@m"

    def step(series, first, ks=128, profile=None, metric="encrypt_speed"):
        return Step("runs", series, metric, "a", f"2026110{first}T000000Z-x", 0.1, 0.05, 0.15, "faster", ks,
                    profile=profile)

    found = [step(o2, 2), step(o3, 1), step(o2, 2, ks=256), step(o2, 2, profile="nist"), step(o2, 5, profile="nist"),
             step(o2, 5), step("serpent/ref@gcc-O2@host@m", 2, ks=None, metric="insn_encrypt_per_block")]
    charts = history.page_charts(df, found)
    assert charts == [  # in the order of cell, profile ("nist" before "quick") and quantity
        {"series": {"gcc-O2": [("20261104T000000", 70.0, 69.0, 71.0), ("20261105T000000", 75.0, 74.0, 76.0)]},
         "title": "rc6/ref on host @ m [nist]: encrypt_speed, 128-bit key", "ylabel": "Kbit/s",
         "marks": ["20261105T000000"]},
        {"series": {"gcc-O2": [("20261101T000000", 110.0, 110.0, 110.0), ("20261102T000000", 100.0, 99.0, 101.0)],
                    "gcc-O3": [("20261101T000000", 120.0, 118.0, 122.0)]},
         "title": "rc6/ref on host @ m: encrypt_speed, 128-bit key", "ylabel": "Kbit/s",
         "marks": ["20261102T000000", "20261101T000000"]},
        {"series": {"gcc-O2": [("20261101T000000", 2.5, 2.25, 2.75), ("20261102T000000", 2.0, 1.75, 2.25)]},
         "title": "rc6/ref on host @ m: encrypt_speed, 128-bit key relative to the machine-speed gauge",
         "ylabel": "Kbit/s x gauge ns per iteration", "marks": ["20261102T000000", "20261101T000000"]},
        {"series": {"gcc-O2": [("20261101T000000", 5000.0, 5000.0, 5000.0),
                               ("20261102T000000", 5500.0, 5500.0, 5500.0)]},
         "title": "serpent/ref on host @ m: insn_encrypt_per_block",
         "ylabel": "guest instructions per block (exact)", "marks": ["20261102T000000"]}]
    # by revision: the runs in their revisions' order, labelled by revision
    rc6 = df[(df.cipher == "rc6") & (df.profile == "nist")].assign(revision=["b" * 40, "a" * 40],
                                                                   revision_order=[1.0, 0.0])
    (chart,) = history.page_charts(rc6, [], by="revision")
    assert chart["series"] == {"gcc-O2": [("a" * 10, 75.0, 74.0, 76.0), ("b" * 10, 70.0, 69.0, 71.0)]}


def _count(cipher, run, count, n_blocks=128.0, key_size=float("nan"), profile="quick", revision=None):
    """One exact instruction count of a run, as a loaded frame holds it."""
    return {"cipher": cipher, "implementation": "ref", "toolchain": "gcc-O3", "target": "host", "machine": "m",
            "profile": profile, "metric": "insn_encrypt_per_block", "key_size": key_size, "n_blocks": n_blocks,
            "run_id": f"2026110{run}T000000Z-x", "started": float(run), "revision": revision or f"rev{run}",
            "estimator": "exact", "estimate": count, "ci_low": count, "ci_high": count, "confidence": None,
            "per_process": None}


def test_a_history_of_exact_counts_by_hand():
    """history.steps over exact counts: a step from one run a side (two runs make a series), named with its
    series, runs, revisions, key size, blocks per call and profile; counts of one block a call and a series of one
    run play no part; the threshold passed replaces each series' own (3 % for counts)."""
    import pandas as pd

    from lab.steps import Step

    df = pd.DataFrame([_count("aes", 1, 500.0),  # one run: no series
                       _count("rc6", 1, 100.0), _count("rc6", 2, 110.0),
                       _count("rc6", 1, 100.0, n_blocks=1.0), _count("rc6", 2, 200.0, n_blocks=1.0),
                       _count("serpent", 1, 100.0, key_size=128.0, profile="nist"),
                       _count("serpent", 2, 90.0, key_size=128.0, profile="nist", revision="rev1")])
    found = history.steps(df)
    ch1, ch2 = 100 / 110 - 1, 100 / 90 - 1
    assert found == [
        Step("runs", "rc6/ref@gcc-O3@host@m", "insn_encrypt_per_block", "20261101T000000Z-x", "20261102T000000Z-x",
             ch1, ch1, ch1, "slower", None, 128, revisions=("rev1", "rev2"), profile=None),
        Step("runs", "serpent/ref@gcc-O3@host@m", "insn_encrypt_per_block", "20261101T000000Z-x",
             "20261102T000000Z-x", ch2, ch2, ch2, "faster", 128, 128, revisions=("rev1", "rev1"), profile="nist")]
    assert history.steps(df, threshold=0.105) == found[1:] and history.steps(df, threshold=0.2) == []


def test_change_points_take_the_threshold_and_the_side_size_they_are_given():
    import pandas as pd

    two_percent = _series([100.0] * 6 + [102.0] * 6)  # under 3 %, over 1 %
    assert history.change_points(two_percent) == []
    assert [k for k, *_ in history.change_points(two_percent, threshold=0.01)] == [6]
    three_after = _series([100.0] * 27 + [120.0] * 3)
    assert [k for k, *_ in history.change_points(three_after)] == [27]
    assert history.change_points(three_after, min_size=4) == []
    counts = pd.DataFrame({"estimator": ["exact"] * 3, "estimate": [100.0, 110.0, 110.0], "per_process": [None] * 3})
    assert [k for k, *_ in history.change_points(counts)] == [1] and history.change_points(counts, 0.2) == []
    # a run without per-process values is no unit of a timed series
    assert np.isnan(history._run_values(pd.DataFrame({"per_process": [[1.0, 3.0], None, []]}))).tolist() == [
        False, True, True]
    assert history._run_values(pd.DataFrame({"per_process": [[1.0, 3.0, 8.0]]})).tolist() == [3.0]


def test_format_history_states_the_threshold_it_used():
    import pandas as pd

    none = pd.DataFrame({"spread": []})
    gauge = "noise gauge: no identical build measured in two runs yet"
    assert history.format_history([], none, 0.05) == f"no step in any series (noise threshold ±5.0 %)\n{gauge}"
    assert history.format_history([], none) == \
        f"no step in any series (each series' noise threshold from its run-to-run intervals)\n{gauge}"
    from lab.steps import Step

    s = [Step("runs", "x", "encrypt_speed", "r1", "r2", -0.05, -0.07, -0.03, "slower")] * 2
    assert history.format_history(s, none).split("\n") == [s[0].line(), s[0].line(), gauge]


def test_measured_rows_and_a_history_of_no_runs():
    import pandas as pd

    df = pd.DataFrame({"status": ["ok", "ok", "crashed"], "estimate": [1.0, float("nan"), 2.0]})
    assert history.measured(df).estimate.tolist() == [1.0]


def test_load_by_machine_and_by_a_list_of_values(rd, tmp_path):
    from lab import index

    assert history.load(rd, "nowhere").empty  # not the latest run of another machine
    assert history.steps(history.load(rd, "nowhere")) == [] and history.steps(history.load(tmp_path)) == []
    assert set(history.load(rd, "synth", cipher=["serpent", "rc6"]).cipher) == {"serpent", "rc6"}
    assert set(history.load(rd, "synth", cipher="rc6").cipher) == {"rc6"}
    assert (rd / index.COMBINED).is_file()  # the runs read together once are one file of this results folder


def test_revision_order_by_hand(tmp_path, monkeypatch):
    """A revision's place in the repository's history, found by its full hash, a 7-character abbreviation or a
    '+' suffix; too short, unknown, missing (NaN: a run without one), outside a repository or without git: NaN."""
    import pandas as pd

    repo, revs = _repository(tmp_path, 2)
    df = pd.DataFrame({"revision": [revs[1], revs[0][:7], revs[1][:7] + "+", revs[0][:6], "f" * 40, None]})
    order = history.with_revision_order(df, repo).revision_order.tolist()
    assert order[:3] == [1.0, 0.0, 1.0] and all(np.isnan(order[3:]))
    assert all(np.isnan(history.with_revision_order(df, tmp_path).revision_order))  # not a repository
    monkeypatch.setenv("PATH", "")  # no git
    assert all(np.isnan(history.with_revision_order(df, repo).revision_order))


def test_a_compiler_order_and_label_of_a_version_text_without_the_compiler_name():
    """By compiler: `cc --version` names no compiler, the toolchain's compiler does (gcc 9.5.0 before 12.2.0); a
    text with no known compiler is labelled by itself and ordered first."""
    import pandas as pd

    g = pd.DataFrame({"run_id": ["a", "b", "c"], "started": [1.0, 2.0, 3.0], "compiler": ["gcc", "gcc", "icc"],
                      "compiler_version": ["cc (Debian 12.2.0-14) 12.2.0", "cc (Debian 9.5.0-3) 9.5.0", "icc 1999"]})
    assert list(history._order(g, "compiler").run_id) == ["c", "b", "a"]
    assert [history._x_label(r, "compiler") for r in g.itertuples()] == ["gcc 12.2.0", "gcc 9.5.0", "icc 1999"]
