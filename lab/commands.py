"""What each command does, given its options (already converted by lab.cli); returns the exit code.

Used by ``python -m lab`` and by the invoke tasks alike.  Output for people
goes to stdout; errors are raised as :class:`lab.errors.UserError`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from .config import Lab
from .errors import EXIT_FAILED, UsageError
from .stats import NOISE_THRESHOLD


def _lab() -> Lab:
    return Lab()  # validates every data file of the project, used or not


def _dir(lab: Lab, value, default: str) -> Path:
    return Path(value).expanduser().resolve() if value else lab.root / default


def run(reports_dir=None, quiet=False, progress=True, report=True, **options) -> int:
    """`options`: RunRequest's fields (lab/request.py), as the command line gave them."""
    from .progress import Progress, mode_for
    from .request import RunRequest
    from .run import run as run_matrix

    lab = _lab()
    if options.get("matrix") and not Path(options["matrix"]).is_file():
        raise UsageError(f"option --matrix: {options['matrix']} does not exist")
    req = RunRequest.from_options(**{**options, "results_dir": _dir(lab, options.get("results_dir"), "results"),
                                     "build_dir": _dir(lab, options.get("build_dir"), "build")})
    ui = Progress(0, mode_for(quiet, progress))
    outcome = run_matrix(lab, req, ui, say=(lambda s: None) if quiet else (lambda s: print(s, file=sys.stderr)))
    counts = ", ".join(f"{s} {n}" for s, n in sorted(outcome.counts.items()))
    for d in outcome.run_dirs:
        print(f"results: {d}")
    print(f"{sum(outcome.counts.values())} of {outcome.planned} cells: {counts}")
    if report:
        from .publish import build_report

        html = build_report(lab, outcome.run_dirs, results_dir=req.results_dir,
                            reports_dir=_dir(lab, reports_dir, "reports"))
        print(f"report: {html}")
    return outcome.exit_code


def report(runs=None, compare=None, results_dir=None, reports_dir=None) -> int:
    from .publish import build_report

    lab = _lab()
    html = build_report(lab, runs, results_dir=_dir(lab, results_dir, "results"),
                        reports_dir=_dir(lab, reports_dir, "reports"), compare_with=compare)
    print(f"report: {html}")
    return 0


def compare(run_a=None, run_b=None, by=None, threshold=None, metrics=None, results_dir=None) -> int:
    from . import compare as cmp

    lab = _lab()
    if by not in (None, "toolchain", "compiler"):
        raise UsageError(f"option --by: '{by}' is not supported (use toolchain or compiler)")
    threshold = NOISE_THRESHOLD if threshold is None else threshold
    if by == "compiler":  # the steps between neighbouring compiler versions of one run (or of several)
        from . import results, trends

        df = results.load(run_a.split(",") if run_a else None, _dir(lab, results_dir, "results"))
        print(trends.format_steps(trends.steps(df, threshold=threshold), threshold))
        return 0
    table = cmp.compare_runs(_dir(lab, results_dir, "results"), run_a, run_b, by=by, threshold=threshold,
                             metrics=metrics)
    print(cmp.format_table(table))
    return 0


def verify(cipher=None, vectors=None, impl=None, toolchain=None, target=None, show=None, build_dir=None,
           timeout=None, quick_gate=False) -> int:
    from .verify import verify as verify_cipher

    lab = _lab()
    results = verify_cipher(lab, cipher, Path(vectors), impl, toolchain or "gcc-O3", target or "host",
                            build_dir=_dir(lab, build_dir, "build"), timeout=timeout, quick=quick_gate)
    for res in results:
        print(res.line())
        for f in res.fails[: show if show is not None else 5]:
            print(f"  line {f.get('line')}: {f.get('direction')} {f.get('reason')}"
                  f" expected {f.get('expected')} got {f.get('got')}")
    return 0 if all(x.ok or x.unavailable for x in results) and any(x.ok for x in results) else EXIT_FAILED


def ct(cipher=None, impl=None, toolchain=None, target=None, dudect=None, jobs=None, json=None,
       build_dir=None, quick_gate=False) -> int:
    import json as json_
    from . import ctcheck
    from .plan import Cell
    from .verify import implementations

    lab = _lab()
    lab.cipher(cipher)
    impls = [im for word in (impl or "default").split(",") for im in implementations(lab, cipher, word.strip())]
    tcs = [lab.toolchain(n) for n in (lab.toolchains_matching(toolchain, "option --toolchain") if toolchain
                                      else ["gcc-O3"])]
    tgs = [lab.target(t) for t in (target or ["host"])]
    if jobs is not None and jobs < 1:
        raise UsageError("option --jobs: needs a positive number")
    if dudect is not None and dudect < 0:
        raise UsageError("option --dudect: needs a number of measurements (0: none)")
    profile = lab.profile("smoke") if "smoke" in lab.profiles else next(iter(lab.profiles.values()))
    cells = [Cell(im, tc, tg, im.key_bits, profile) for tg in tgs for tc in tcs for im in impls]
    bdir = _dir(lab, build_dir, "build")
    be = ctcheck.ct_backend(lab, bdir)
    try:
        be.prepare(tgs)
        checks = ctcheck.check_cells(lab, cells, be, build_dir=bdir, jobs=jobs or 2,
                                     dudect_measurements=ctcheck.DUDECT_MEASUREMENTS if dudect is None else dudect,
                                     quick_gate=quick_gate, say=print)
    finally:
        be.close()
    if json:
        Path(json).write_text(json_.dumps([c.model_dump() for c in checks], indent=1) + "\n")
    leaks = [c for c in checks if c.verdict.verdict == "leak"]
    refuted = [c.cell for c in leaks if c.refutes_claim]
    unavailable = sum(c.verdict.verdict == "unavailable" for c in checks)
    print(f"{len(checks)} cells: {len(checks) - len(leaks) - unavailable} clean, {len(leaks)} leak, "
          f"{unavailable} unavailable" + (f"; constant_time: true refuted by {', '.join(refuted)}" if refuted else ""))
    return EXIT_FAILED if leaks else 0


def ct_blame(cipher=None, impl=None, toolchain=None, target=None, space=None, json=None, build_dir=None,
             lab=None) -> int:
    from . import ctblame, ctcheck
    from .plan import Cell
    from .verify import implementations

    lab = lab or _lab()
    lab.cipher(cipher)
    impls = implementations(lab, cipher, impl or "default")
    if len(impls) != 1:
        raise UsageError(f"option --impl: ct-blame takes one implementation, not {len(impls)}")
    tc, tg = lab.toolchain(toolchain or "gcc-O3"), lab.target(target or "host")
    profile = lab.profile("smoke") if "smoke" in lab.profiles else next(iter(lab.profiles.values()))
    cell = Cell(impls[0], tc, tg, impls[0].key_bits, profile)
    sp = ctblame.load_space(Path(space) if space else lab.root / ctblame.DEFAULT_SPACE)
    bdir = _dir(lab, build_dir, "build")
    be = ctcheck.ct_backend(lab, bdir)
    try:
        be.prepare([tg])
        found = ctblame.blame(lab, cell, be, build_dir=bdir, space=sp, say=print)
    finally:
        be.close()
    print("\n".join(found.lines()))
    if json:
        Path(json).write_text(found.model_dump_json(indent=1) + "\n")
    return 0


def list_() -> int:
    lab = _lab()
    print("ciphers:", ", ".join(f"{c.name}[{','.join(i.name for i in c.ours())}]" for c in lab.ciphers.values()))
    peers = [i.id for i in lab.all_impls() if i.impl_class == "peer"]
    print("peer implementations:", ", ".join(peers) if peers else "(none)")
    print("toolchains:", ", ".join(lab.toolchain_names()))
    print("targets:", ", ".join(lab.target_names()))
    print("profiles:", ", ".join(lab.profile_names()))
    print("hosts:", ", ".join(lab.host_names()) or "(none: add hosts/<name>.yaml)")
    if lab.compiler_versions:
        from .compilers import where_found

        print(f"compiler versions: {len(lab.compiler_versions)} in toolchains/versions.yaml, each a profile "
              "<version>-<variant> (e.g. gcc-12-O3); where each is found, with its --version:")
        for place in where_found(lab):
            print(f"  {place.version.name} on {place.where}: {place.version_line or place.note}")
    return 0


def catalogue(peers=False) -> int:
    from . import native

    lab = _lab()
    print("| cipher | implementation | class | block | keys | table bytes | key-schedule bytes | constant time | summary |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for c in lab.ciphers.values():
        for im in c.impls.values():
            if im.impl_class == "peer" and not peers:
                continue
            try:
                n = native.load(c.name, im.name, lab=lab)
                tb, ks = f"{n.table_bytes:,}", f"{n.key_schedule_bytes:,}"
            except native.NativeError:
                tb = ks = "n/a here"
            ct = {True: "yes", False: "no", None: "?"}[im.constant_time]
            mark = " (default)" if im.default else ""
            print(f"| {c.display} | {im.name}{mark} | {im.impl_class} | {c.block_bits} | "
                  f"{'/'.join(map(str, c.key_bits))} | {tb} | {ks} | {ct} | {im.summary} |")
    return 0


def schema(check=False) -> int:
    from .schema import export_schemas, stale_schemas

    lab = _lab()
    if not check:
        for path in export_schemas(lab.root / "schemas"):
            print(path)
        return 0
    stale = stale_schemas(lab.root / "schemas")
    for name in stale:
        print(f"schemas/{name} is missing or stale: run `invoke schema` to rewrite it", file=sys.stderr)
    if not stale:
        print("schemas/: every JSON Schema is current")
    return EXIT_FAILED if stale else 0


def validate() -> int:
    lab = _lab()
    files = len(lab.toolchain_files())
    n = files + len(lab.targets) + len(lab.profiles) + len(lab.ciphers) + len(lab.peers) + len(lab.hosts)
    versions = f" ({len(lab.toolchains)} profiles, {len(lab.compiler_versions)} compiler versions)" \
        if lab.compiler_versions else ""
    print(f"{n} data files valid: {files} toolchains{versions}, {len(lab.targets)} targets, "
          f"{len(lab.profiles)} profiles, {len(lab.ciphers)} ciphers, {len(lab.peers)} peer libraries, "
          f"{len(lab.hosts)} hosts")
    return 0


def checksums(write=False) -> int:
    """Each cipher's checksums from its default implementation built with gcc-O3 on the host: the one cell
    pipeline as far as the gate, judged without the stored checksums (they are what is computed here)."""
    from .backends.host import HostBackend
    from .build import Builder
    from .pipeline import CellPipeline, Final, Stages
    from .plan import Cell

    lab = _lab()
    be = HostBackend(lab.root)
    pipeline = CellPipeline(be, Builder(lab.root, lab.root / "build", be),
                            Stages(programs=("kat",), stored_checksums=False))
    tc, tg, profile = lab.toolchain("gcc-O3"), lab.target("host"), lab.default_profile()
    cells = [Cell(c.impls[c.default_impl], tc, tg, c.impls[c.default_impl].key_bits, profile)
             for c in lab.ciphers.values()]
    bad = 0
    for item in pipeline.prepare_all(cells, jobs=os.cpu_count() or 1):
        name = item.cell.impl.cipher
        if isinstance(item, Final):
            print(f"{name}: {item.status}: {item.reason}")
            bad += 1
            continue
        sums = item.verdict.checksums
        print(f"{name}: " + ", ".join(f"{k}: {s[:16]}..." for k, s in sorted(sums.items())))
        if write:
            _write_checksums(lab.cipher(name).folder / "cipher.yaml", sums)
    return EXIT_FAILED if bad else 0


def _write_checksums(path: Path, sums: dict[int, str]) -> None:
    text = path.read_text()
    block = "checksums:  # the kat program's checksum per key size (python -m lab checksums --write)\n" + \
        "".join(f"  {k}: {s}\n" for k, s in sorted(sums.items()))
    text = re.sub(r"^checksums:.*\n(?:  \S.*\n)*", "", text, flags=re.M)
    text = text.replace("\nimplementations:", "\n" + block + "implementations:", 1)
    path.write_text(text)


def compilers_install(names=None, dry_run=False, images=True) -> int:
    from .compilers import install, resolve

    lab = _lab()
    if not names:
        raise UsageError("name the compiler versions to install, e.g. gcc-11 clang-16 (or gcc-11-O3, 'clang-1*'); "
                         "`python -m lab list` shows them")
    names = [n for raw in ([names] if isinstance(names, str) else names) for n in raw.replace(",", " ").split()]
    install(lab, resolve(lab, names), dry_run=dry_run, images=images)
    return 0


def images_build(targets=None, engine=None, matrix=None) -> int:
    from .images import build_images, detect_engine

    lab = _lab()
    m = lab.matrix(Path(matrix) if matrix else None)
    if targets == ["all"]:
        names = [n for n, t in lab.targets.items() if t.image]
    else:
        names = [lab.target(t).name for t in targets] if targets else list(m.container_targets or m.targets)
    chosen = detect_engine(engine, lab, explicit=True) if engine else detect_engine(m.engine, lab)
    ids = build_images(lab, names, chosen)
    if not ids:
        print(f"images: nothing to build (targets {', '.join(names)} run on the host, without an image)")
    for name, image_id in ids.items():
        print(f"{name}\t{image_id}")
    return 0


def images_host_plugin(engine=None) -> int:
    from .images import detect_engine
    from .images.plugin import host_plugin

    lab = _lab()
    print(host_plugin(lab, detect_engine(engine or None, lab, explicit=bool(engine))))
    return 0


def bench_mainjob(ciphers=None, toolchains=None, profile=None, condition=None, out=None) -> int:
    from .bench import mainjob

    mainjob.bench(_lab(), Path(out) if out else None, condition=condition, ciphers=ciphers, toolchains=toolchains,
                  profile=profile)
    return 0


def bench_aa(pairs=10, ciphers=None, toolchains=None, profile=None, plant="serpent", store=True, runs=None,
             out=None, busy=0, lanes=None, condition=None) -> int:
    from . import results
    from .bench import aa

    lab = _lab()
    stored = results.resolve_runs(lab.root / "results", runs) if runs else None
    if stored is not None and len(stored) < 2:
        raise UsageError("option --runs: takes at least two run ids (consecutive runs are the A/A pairs)")
    if busy < 0:
        raise UsageError(f"option --busy: {busy} is not a number of CPUs (0 or more)")
    if lanes is not None and lanes < 1:
        raise UsageError(f"option --lanes: {lanes} is not a number of measuring lanes (1 or more)")
    if busy and (lanes or 1) > 1:
        raise UsageError("options --busy and --lanes: a busy core and a second measuring lane are two conditions; "
                         "calibrate one at a time")
    if busy:  # a busy core beside one measuring lane, whatever the profile's lanes
        lanes = 1
    aa.bench(lab, pairs, stored, plant, store, Path(out) if out else None, busy=busy, condition=condition,
             ciphers=ciphers, toolchains=toolchains, profile=profile, lanes=lanes)
    return 0


def bench_placement(implementation="serpent/avx2", toolchain="gcc-O3", copies=60, processes=2, sizes=None,
                    out=None) -> int:
    from .bench import placement

    try:
        blocks = [int(x) for x in sizes or (1, 1024)]
    except ValueError:
        raise UsageError(f"option --sizes: '{','.join(sizes)}' is not a comma list of block counts") from None
    placement.bench(_lab(), implementation, toolchain, copies, processes, blocks, Path(out) if out else None)
    return 0


def bench_repeatability(ciphers=None, toolchains=None, implementations=None, targets=None, profile=None,
                        out=None, runs=None) -> int:
    from . import results
    from .bench import repeatability

    lab = _lab()
    if runs is not None and len(runs) != 2:
        raise UsageError(f"option --runs: takes two run ids (RUN_A,RUN_B), not {len(runs)}: {','.join(runs)}")
    doc = repeatability.bench(lab, ciphers, toolchains, implementations, targets, profile, Path(out) if out else None,
                              runs=results.resolve_runs(lab.root / "results", runs) if runs else None)
    return 0 if doc else 1


def java_run(**options) -> int:
    """matrix.run with the Java cells' defaults: JVM profile openjdk17-c2, every implementation (ours and the Java
    peers), the ciphers with Java code, run id tag java; any option given wins."""
    from . import java

    defaults = {"toolchains": ["openjdk17-c2"], "implementations": "all", "tag": "java",
                "ciphers": sorted(java.impls_of(_lab())), "targets": ["host"]}
    return run(**{**options, **{k: v for k, v in defaults.items() if not options.get(k)}})


def bench_peers(ciphers=None, toolchains=None, profile=None, out=None) -> int:
    from .bench import peers

    peers.bench(_lab(), ciphers, toolchains, profile, Path(out) if out else None)
    return 0


def bench_java(ciphers=None, rounds=None, toolchain=None, out=None, forks=None, ours_only=False) -> int:
    from .bench import java as java_bench

    if rounds is not None and rounds < 1:
        raise UsageError("option --rounds: needs a positive number")
    if forks is not None and forks < 2:
        raise UsageError("option --forks: needs at least 2 (an interval needs two processes)")
    java_bench.bench(_lab(), ciphers, rounds or 1, toolchain or "gcc-O3", Path(out) if out else None,
                     ours_only=bool(ours_only), **({"forks": forks} if forks else {}))
    return 0


def bench_ct(ciphers=None, implementations=None, toolchains=None, targets=None, compilers=False, versions=None,
             levels=None, dudect=None, jobs=None, out=None, quick_gate=False) -> int:
    from .bench import ct as ct_bench
    from .ct import DUDECT_MEASUREMENTS

    if compilers:
        from .bench import ct_compilers

        if toolchains:
            raise UsageError("option --toolchains: --compilers makes its own (every gcc and clang version x level); "
                             "narrow them with --versions and --levels")
        ct_compilers.bench(_lab(), ciphers, implementations or "all", targets, versions, levels, jobs or 2,
                           0 if dudect is None else dudect, Path(out) if out else None, quick_gate=quick_gate)
        return 0
    if versions or levels:
        raise UsageError("options --versions and --levels narrow --compilers, which is not given")
    ct_bench.bench(_lab(), ciphers, implementations or "all", toolchains, targets, jobs or 2,
                   DUDECT_MEASUREMENTS if dudect is None else dudect, Path(out) if out else None,
                   quick_gate=quick_gate)
    return 0


def bench_faults(out=None) -> int:
    from .bench import faults

    doc = faults.bench(_lab(), Path(out) if out else None)
    return 0 if all(r["lost"] in (0, None) for r in doc["rows"]) else EXIT_FAILED


def test_repeat(runs=10, load=False, files=None, out=None) -> int:
    from .bench import testrepeat

    doc = testrepeat.repeat(_lab().root, runs, load, files, Path(out) if out else None)
    return EXIT_FAILED if doc["failures"] else 0


def bench_scale(ciphers=None, toolchains=None, targets=None, profile=None, out=None) -> int:
    from .bench import scale

    scale.bench(_lab(), ciphers, toolchains, targets, profile, Path(out) if out else None)
    return 0


def bench_mutation(jobs=None, survivors=False, semantic=False, only=None, out=None) -> int:
    from .bench import mutation, semantic as semantic_bench

    if semantic:
        doc = semantic_bench.bench(_lab(), Path(out) if out else None, jobs, only=only)
        return 0 if doc["caught"] == doc["total"] else EXIT_FAILED
    if only:
        raise UsageError("option --only goes with --semantic")
    mutation.bench(_lab(), Path(out) if out else None, jobs, survivors=survivors)
    return 0


def flags_search(space=None, ciphers=None, targets=None, quantity=None, key_size=None, json=None,
                 write_profiles=None, min_rounds=None, max_rounds=None, precision=None, jobs=None, ct=False,
                 results_dir=None, build_dir=None) -> int:
    from . import flags

    if not space:
        raise UsageError("flags.search needs --space FILE (see flags/ for examples)")
    lab = _lab()
    found = flags.search(lab, space, ciphers or [], targets, quantity, key_size, Path(json) if json else None,
                         write_profiles, _dir(lab, results_dir, "results"), _dir(lab, build_dir, "build"),
                         min_rounds, max_rounds, precision, jobs, ct=bool(ct))
    return 0 if all(any(e.status == "winner" for e in c.entries) for c in found) else EXIT_FAILED


def bench_compilers(space=None, ciphers=None, preset=False, search=True, jobs=None, first=None, second=None,
                    out=None) -> int:
    from .bench import compilers

    compilers.bench(_lab(), space, ciphers, bool(preset), Path(out) if out else None, jobs, search is not False,
                    first, second)
    return 0


def bench_history(run=None, copies=None, out=None, bisect_commits=None) -> int:
    from .bench import history

    history.bench(_lab(), run, copies, Path(out) if out else None,
                  bisect_commits=64 if bisect_commits is None else bisect_commits)
    return 0


def bisect(cipher=None, impl=None, toolchain=None, target=None, good=None, bad=None, toolchains=None, metric=None,
           repo=None) -> int:
    from . import bisect as bis

    if not cipher:
        raise UsageError("bisect needs --cipher")
    lab = _lab()
    out = bis.bisect(lab, cipher, toolchain, target, good, bad, impl, metric, toolchains,
                     Path(repo).resolve() if repo else None)
    print(out.lines())
    return 0


def history(ciphers=None, implementations=None, toolchains=None, targets=None, machine=None, by=None, metrics=None,
            results_dir=None, reports_dir=None) -> int:
    from . import history as hist

    if by not in ("date", "compiler", "revision"):
        raise UsageError(f"option --by: '{by}' is not supported (use date, compiler or revision)")
    lab = _lab()
    df = hist.load(_dir(lab, results_dir, "results"), machine, cipher=ciphers, implementation=implementations,
                   toolchain=toolchains, target=targets)
    if df.empty:
        raise UsageError("no measured runs match (see results/ and the filters given)")
    if by == "revision":
        df = hist.with_revision_order(df, lab.root)
    found = hist.steps(df, tuple(metrics) if metrics else hist.DEFAULT_METRICS, by)
    gauge = hist.noise_gauge(df)
    print(hist.format_history(found, gauge))
    page = hist.write_site(df, found, gauge, _dir(lab, reports_dir, "reports"), by)
    print(f"history: {page}")
    return 0


def docs(site_dir=None) -> int:
    from .docsite import site

    lab = _lab()
    return site.build(lab.root, _dir(lab, site_dir, "site"))


def docs_benchmarks(check=False) -> int:
    from .docsite import benchmarks

    return benchmarks.write(_lab().root, check)


def docs_ct_tables(check=False) -> int:
    from .docsite import ct_tables

    return ct_tables.main(["--check"] if check else [])
