"""docs/benchmarks.md from the stored benchmark results (bench/results/<benchmark>.jsonl): the latest result of each
benchmark on each kind of machine, its figures, its date and the line it comes from; then the detail tables of the
latest peers and Java results.  Nothing here is typed by hand: `./cipherlab docs.benchmarks` rewrites the page and
`--check` says whether it is current (a test runs that)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..bench import stored

PAGE = Path("docs") / "benchmarks.md"


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.2f} %"


def _dist(d: dict | None) -> str:
    return "–" if not d else f"p90 {_pct(d.get('p90'))} / max {_pct(d.get('max'))} over {d.get('n')} quantities"


def repeatability(d: dict) -> str:
    rel = (d.get("gauge_relative") or {}).get("relative", {}).get("all")
    taus = ", ".join(f"{t['tau']:.2f}" for t in d.get("taus") or [])
    walls = d.get("wall_seconds") or []
    wall = f"; {' and '.join(f'{w:.0f} s' for w in walls)} a run" if isinstance(walls, list) and walls else ""
    return (f"headline {_dist((d.get('headline') or {}).get('all'))}; gauge-relative {_dist(rel)}; "
            f"Kendall τ {taus or '–'}{wall}")


def peers(d: dict) -> str:
    verdicts: dict[str, int] = {}
    for r in d.get("rows") or []:
        verdicts[r.get("verdict", "?")] = verdicts.get(r.get("verdict", "?"), 0) + 1
    return f"{len(d.get('rows') or [])} comparisons: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))


def ct(d: dict) -> str:
    s = d.get("summary") or {}
    walls = d.get("wall_seconds") or {}
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted((s.get("verdicts") or {}).items()))
    return (f"{s.get('cells')} cells on {', '.join(d.get('targets') or [])} ({d.get('gate', 'full')} gate): "
            f"{verdicts}; claims refuted: {len(s.get('refuted_true_claims') or [])}; "
            f"{sum(walls.values()):.0f} s")


def ct_compilers(d: dict) -> str:
    s = d.get("summary") or {}
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted((s.get("verdicts") or {}).items()))
    return (f"{s.get('cells')} cells ({len(d.get('implementations') or [])} implementations claiming constant time x "
            f"compilers x {len(d.get('levels') or [])} levels) on {', '.join(d.get('targets') or [])}: {verdicts}; "
            f"compiler-made leaks {len(s.get('compiler_made_leaks') or [])}, blamed {s.get('blamed')} "
            f"({s.get('blames_with_a_pass')} to a pass); {sum((d.get('wall_seconds') or {}).values()):.0f} s")


def faults(d: dict) -> str:
    rows = d.get("rows") or []
    return f"{len(rows)} fault scenarios, cells lost: {sum(r.get('lost') or 0 for r in rows)}"


def history(d: dict) -> str:
    load, first = d.get("load_seconds") or {}, d.get("first_load_seconds") or {}
    steps = (d.get("steps") or {}).get("1000") or {}
    out = (f"{d.get('rows')} rows a run; 1,000 runs loaded in {load.get('1000', '–')} s "
           f"({first.get('1000', '–')} s the first time; goal {d.get('goal_1000_runs_seconds')} s)")
    return out + (f"; steps over 1,000 runs {steps['seconds']} s" if steps else "")


def java(d: dict) -> str:
    def worst(rows, key):
        vals = [r.get(key) for r in rows if r.get(key) is not None]
        return f"{max(vals):.2f}" if vals else "–"
    jc, op = d.get("java_vs_c") or [], d.get("ours_vs_peers") or []
    return (f"our Java / our C: {len(jc)} ratios, the largest {worst(jc, 'ratio')}; ours / Java peers: "
            f"{len(op)} ratios, the largest {worst(op, 'ratio')} ({d.get('jvm_profile', '–')})")


def mutation(d: dict) -> str:
    return (f"{d.get('killed')} of {d.get('total')} mutants killed ({_pct(d.get('score'))}), "
            f"{(d.get('seconds') or 0) / 60:.0f} min")


def semantic_mutation(d: dict) -> str:
    return f"{d.get('caught')} of {d.get('total')} semantic mutants caught, {(d.get('seconds') or 0) / 60:.1f} min"


def scale(d: dict) -> str:
    rows = ", ".join(f"{r['executor']} {r['seconds']} s" for r in d.get("rows") or [])
    return f"{rows}: speed-up {d.get('speedup')}×"


def compilers(d: dict) -> str:
    parts = [f"{s['kind']} {s['seconds'] / 60:.1f} min" for s in d.get("searches") or []]
    if d.get("searches"):
        parts.append(f"same or tied winner in {_pct(d.get('agreement'))} of {d.get('cells_compared')} cells; "
                     f"winners within ±{_pct(d.get('winner_precision_max'))}")
    for kind, p in (d.get("preset") or {}).items():
        parts.append(f"compilers preset {kind} {p['seconds'] / 60:.1f} min")
    return "; ".join(parts)


def aa(d: dict) -> str:
    """Held-out coverage (the noise fitted on the first half of the pairs, the second half judged), then compare's
    verdicts calibrated on all pairs."""
    h, c = d.get("held_out") or {}, d.get("calibrated") or {}
    cp = c.get("planted") or {}
    out = f"{d.get('pairs')} A/A pairs, {d.get('quantities')} differences"
    if h:
        robust = f" (robust {h['robust_sd_z']:.2f})" if h.get("robust_sd_z") is not None else ""
        scale = f", within-run parts x {h['within_scale']:.2f}" if (h.get("within_scale") or 1) < 1 else ""
        out += (f"; held out: {_pct(h.get('beyond'))} beyond the 95 % intervals, sd of z {h.get('sd_z', 0):.2f}"
                f"{robust} (run-to-run noise {_pct(h.get('run_noise'))}{scale})")
    if c:
        out += (f"; compare calibrated: A/A no change {_pct(c.get('aa_no_change'))}, others changed "
                f"{_pct(cp.get('others_changed'))}, power on a planted {_pct((cp.get('factor') or 1) - 1)} "
                f"{_pct(cp.get('power'))}")
    return out


def test_repeat(d: dict) -> str:
    runs = d.get("per_run") or []
    secs = [r.get("seconds") or 0 for r in runs]
    load = d.get("load") or {}
    what = ", ".join(f.split("/")[-1] for f in _subject(d, "files")) or "the whole suite"
    failed = ", ".join(f"{t} {v.get('failed')} of {v.get('runs')}" for t, v in sorted((d.get("failures") or {}).items()))
    return (f"{what}: {len(runs)} runs, failures: {failed or 'none'}; {min(secs, default=0):.0f}-"
            f"{max(secs, default=0):.0f} s a run" + (f"; {load.get('compiles')} compiles beside them" if load else ""))


def mainjob(d: dict) -> str:
    parts = []
    for kind in ("cold", "warm"):
        r = d.get(kind) or {}
        if r:
            p = r.get("precision") or {}
            b = r.get("browser") or {}
            shown = f", laid out in Chromium in {b['seconds']:.1f} s" if b else ""
            parts.append(f"{kind} {r.get('run_seconds', 0):.0f} s + report {r.get('report_seconds', 0):.0f} s{shown}, "
                         f"{r.get('cells')} cells, precision met {_pct(p.get('share_met'))}")
    return "; ".join(parts) or "–"


def placement(d: dict) -> str:
    """The copies that took a slow placement (a mode shared by a copy's processes) against the file itself."""
    own, same = d.get("copies_of_the_file") or {}, d.get("the_file_itself") or {}
    slow = [f"{q} {a['slow_groups']} ({', '.join(f'{x:.2f}x' for x in a.get('slow_ratios') or [])})"
            for q, a in own.items() if a.get("slow_groups")]
    within = max((a.get("within_group", 0) for a in own.values()), default=0)
    return (f"{d.get('cell')}: {d.get('copies')} copies x {d.get('processes')} processes; copies at least "
            f"{d.get('mode_ratio')}x the median: {'; '.join(slow) or 'none'}; the file itself, as many groups: "
            f"{sum(a.get('slow_groups', 0) for a in same.values())}; a copy's processes "
            f"{_pct(within)} apart (the median copy; the quantity where they lie furthest)")


#: benchmark (its file's name, or FILE_OF's) -> what the invoke task is and the one line of figures of a result
FIGURES: dict[str, tuple[str, Callable[[dict], str]]] = {
    "repeatability": ("bench.repeatability", repeatability), "peers": ("bench.peers", peers),
    "ct": ("bench.ct", ct), "ct-compilers": ("bench.ct --compilers", ct_compilers),
    "faults": ("bench.faults", faults), "history": ("bench.history", history),
    "java": ("bench.java", java), "mutation": ("bench.mutation", mutation),
    "semantic-mutation": ("bench.mutation --semantic", semantic_mutation), "scale": ("bench.scale", scale),
    "compilers": ("bench.compilers", compilers), "mainjob": ("bench.mainjob", mainjob), "aa": ("bench.aa", aa),
    "placement": ("bench.placement", placement),
    "test-repeat": ("test.repeat", test_repeat),
}


#: benchmarks whose results are appended to another's file (bench.ct --compilers to ct.jsonl)
FILE_OF = {"ct-compilers": "ct"}


def _stored(root: Path, name: str) -> list[dict]:
    """A benchmark's results; in a shared file, the ones of its own format (bench.header: cipherlab-bench-NAME)."""
    file = FILE_OF.get(name, name)
    found = stored(root / "bench" / "results" / f"{file}.jsonl")
    if file not in FILE_OF.values():
        return found
    return [d for d in found if d.get("format") == f"cipherlab-bench-{name}"]


def machine_kind(d: dict) -> str:
    m = d.get("machine") or {}
    return f"{m.get('cpu_model', '?')}, {m.get('cores', '?')} cores"


def _condition(d: dict) -> str:
    """The condition a result was measured in, as its first words (bench.aa --condition): quiet, one core busy."""
    c = str(d.get("condition") or "").split("(")[0].split(":")[0].strip()
    return f" ({c})" if c else ""


#: what else makes a row of its own, besides test.repeat's files
SUBJECT = {"ct-compilers": "targets", "placement": "cell"}


def _subject(d: dict, subject: str) -> list[str]:
    """What a result is about (a list of names, or one name: test.repeat stored "the whole suite" as a string)."""
    v = d.get(subject)
    if isinstance(v, str):
        return [] if v == "the whole suite" else [v]
    return list(v or [])


def latest(results: list[dict], subject: str = "files") -> dict[tuple[str, str], dict]:
    """The newest result per kind of machine and condition, and per subject where results name one (test.repeat's
    files, the targets of bench.ct --compilers, bench.placement's cell), keyed (machine and condition, subject), by
    the date each records; a result judged again from the same stored runs (bench.aa --runs) replaces the first judgement of
    them, and a result stored part-way (bench.ct --compilers after each of its targets) gives way to the whole."""
    ordered = sorted(results, key=lambda d: (d.get("date", ""), d.get("id", "")))
    newest = {tuple(d["runs"]): d for d in ordered if isinstance(d.get("runs"), list)}
    whole = {d.get("date"): set(_subject(d, subject)) for d in ordered}  # the last (largest) of each invocation
    out: dict[tuple[str, str], dict] = {}
    for d in ordered:
        if isinstance(d.get("runs"), list) and newest[tuple(d["runs"])] is not d:
            continue
        if set(_subject(d, subject)) < whole[d.get("date")]:
            continue
        out[(machine_kind(d) + _condition(d), ",".join(_subject(d, subject)))] = d
    return out


def _detail_peers(d: dict) -> list[str]:
    head = ["| cipher | toolchain | kind | blocks a call | ours | peer | peer ÷ ours [95 %] | verdict |",
            "| --- | --- | --- | ---: | --- | --- | --- | --- |"]
    rows = sorted(d.get("rows") or [], key=lambda r: (r["cipher"], r.get("blocks", 1), r["toolchain"], r["kind"]))
    return head + [f"| {r['cipher']} | {r['toolchain']} | {r['kind']} | {r.get('blocks', 1)} | {r['ours']} | "
                   f"{r['peer']} | {r['ratio']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] | {r['verdict']} |"
                   for r in rows]


def _detail_java(d: dict) -> list[str]:
    head = ["| cipher | benchmark | compared with | ratio [95 %] | ns, ours / other |",
            "| --- | --- | --- | --- | --- |"]
    rows = [(r, "our C " + str(r.get("c", ""))) for r in d.get("java_vs_c") or []]
    rows += [(r, str(r.get("peer", ""))) for r in d.get("ours_vs_peers") or []]
    return head + [f"| {r['cipher']} | {r['benchmark']} | {other} | {r['ratio']:.2f} [{r['low']:.2f}, "
                   f"{r['high']:.2f}] | {r.get('ours_ns', 0):.0f} / {r.get('other_ns', 0):.0f} |"
                   for r, other in rows if r.get("ratio") is not None]


DETAILS = {"peers": ("Peers: the latest full comparison", _detail_peers),
           "java": ("Java: the latest full comparison", _detail_java)}


def _what() -> list[str]:
    """One line per benchmark task, from the command table (lab/commandtable.py): the help its --help prints."""
    from ..commandtable import invoke_commands

    return [f"* `./cipherlab bench.{name}`: {cmd.help}." for name, cmd in invoke_commands("bench")]


def _full(results: list[dict], name: str) -> dict | None:
    """The latest result of a benchmark with the most rows (a full run, not a run of a few ciphers)."""
    key = {"peers": lambda d: len(d.get("rows") or []),
           "java": lambda d: len(d.get("java_vs_c") or []) + len(d.get("ours_vs_peers") or [])}[name]
    return max(sorted(results, key=lambda d: d.get("date", ""), reverse=True), key=key, default=None)  # newest


def page(root: Path) -> str:
    out = ["# Benchmarks", "",
           "Generated by `./cipherlab docs.benchmarks` from `bench/results/<benchmark>.jsonl` (one result a line, "
           "appended by each `./cipherlab bench.*` run); do not edit by hand. Each row is the latest result of a "
           "benchmark on one kind of machine; the id names its line in the file. Figures measured on shared "
           "virtual machines (2 vCPUs) are noisy: compare rows of one machine kind only.", "",
           "| benchmark | machine | date | figures | file, id |", "| --- | --- | --- | --- | --- |"]
    every = {name: _stored(root, name) for name in FIGURES}
    for name, (task, figures) in FIGURES.items():
        for (kind, _), d in sorted(latest(every[name], SUBJECT.get(name, "files")).items()):
            out.append(f"| `{task}` | {kind} | {d.get('date', '')[:10]} | {figures(d)} | "
                       f"`bench/results/{FILE_OF.get(name, name)}.jsonl`, `{d.get('id')}` |")
    out += ["", "## What each benchmark measures", "", *_what()]
    for name, (title, table) in DETAILS.items():
        d = _full(every[name], name)
        if d:
            out += ["", f"## {title}", "", f"`bench/results/{name}.jsonl`, `{d['id']}` ({d['date'][:10]}, "
                    f"{machine_kind(d)}).", "", *table(d)]
    return "\n".join(out) + "\n"


def write(root: Path, check: bool = False, say=print) -> int:
    """Writes docs/benchmarks.md; with check, writes nothing and returns 1 when it is stale."""
    path, text = root / PAGE, page(root)
    current = path.exists() and path.read_text() == text
    if check:
        say(f"{PAGE}: {'current' if current else 'stale (run ./cipherlab docs.benchmarks)'}")
        return 0 if current else 1
    path.write_text(text)
    say(f"written: {PAGE}")
    return 0
