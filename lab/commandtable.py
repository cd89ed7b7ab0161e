"""The command table: every command and option of the lab as data, read by the command line (lab/cli.py:
argparse for ``python -m lab``, invoke tasks in ``tasks/``) and by the docs generator.  It imports nothing of the
lab's but the run request's option table, so that anything may read it without importing the commands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .request import options_table


@dataclass(frozen=True)
class Opt:
    name: str  # python name; the flag is --name-with-dashes
    help: str
    kind: str = "str"  # str, csv, int, float, flag (default off), switch (default on), optstr (--x or --x VALUE)
    positional: bool = False
    default: Any = None
    nargs: str | None = None  # for positionals: "?" or "*"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Command:
    name: str  # python -m lab <name>; invoke task <collection>.<task>
    help: str
    run: str  # function name in lab.commands
    options: tuple[Opt, ...] = ()
    invoke: str = ""  # "collection.task" (default: the name)



# ----------------------------------------------------------- shared options (declared once)
BUILD_DIR = Opt("build_dir", "where builds go (default build/ in the checkout)")
RESULTS_DIR = Opt("results_dir", "where the results are (default results/ in the checkout)")
PROFILE = Opt("profile", "measurement profile (default: the matrix's)")
BUILD_JOBS = Opt("jobs", "builds and known-answer gates at once (default: the number of cores)", "int")
CIPHER = Opt("cipher", "cipher name", positional=True)
ANY_IMPL = Opt("impl", "default, ours, peers, all (as run --implementations), or an implementation's name")


def out(bench: str) -> Opt:
    """A benchmark's --out: the JSON-lines file its results are appended to."""
    return Opt("out", f"JSON-lines file to append to (default bench/results/{bench}.jsonl)")


def _listed(name: str, what: str, default: str | None) -> Opt:
    return Opt(name, f"comma list of {what}" + (f" (default: {default})" if default else ""), "csv")


def ciphers(default: str | None = None) -> Opt:
    return _listed("ciphers", "ciphers", default)


def toolchains(default: str | None = None) -> Opt:
    return _listed("toolchains", "toolchain profiles", default)


def targets(default: str | None = None) -> Opt:
    return _listed("targets", "targets", default)

#: how the constant-time walks (ct, bench.ct) check their cells
CT_CHECKING = (Opt("jobs", "cells checked at once (default 2)", "int"),
               Opt("quick_gate", "gate cells on every short known-answer record, the n-block check and the "
                   "checksum chain, but only every 32nd long record (iterated over 100 times), as the flag "
                   "search's race: a small part of a full gate's work, which dominates on emulated targets", "flag"))

DEBUG = Opt("debug", "show Python tracebacks of errors", "flag")
#: the part of the matrix a benchmark narrows to (bench.mainjob, bench.aa)
MATRIX_PART = (ciphers("the matrix's"),
               toolchains("the matrix's"),
               PROFILE)
REPORTS_DIR = Opt("reports_dir", "where the report goes (default reports/ in the checkout; REPORTS_DIR/latest "
                  "points at it)")
# the run's options: RunRequest's fields (lab/request.py, the one table), then what only the command line has
RUN_OPTS = (
    *(Opt(name, help, kind, default=default) for name, help, kind, default in options_table()),
    REPORTS_DIR,
    Opt("quiet", "print nothing but errors and the result", "flag"),
    Opt("progress", "live progress display on a terminal (default; --no-progress: one line per cell)", "switch",
        default=True),
    Opt("report", "write the HTML report after the run (default; --no-report to skip)", "switch", default=True),
    DEBUG,
)

COMMANDS: tuple[Command, ...] = (
    Command("run", "build, verify and measure every cell of the matrix; write results/ and the report", "run",
            RUN_OPTS, invoke="matrix.run"),
    Command("report", "(re)build the HTML report from stored results (nothing is run)", "report", (
        Opt("runs", "comma list of run ids (default: the latest run)", "csv"),
        RESULTS_DIR,
        REPORTS_DIR,
        Opt("compare", "also compare with this run (RUN_ID, MACHINE/RUN_ID or a path)"),
        DEBUG)),
    Command("compare", "compare two runs cell by cell (or the toolchains of one run with --by toolchain)",
            "compare", (
                Opt("run_a", "the baseline run (id, MACHINE/id or path)", positional=True),
                Opt("run_b", "the run compared with it (default: the latest run)", positional=True, nargs="?"),
                Opt("by", "toolchain: the toolchains of run_a against gcc-O3; compiler: the significant steps between "
                    "neighbouring compiler versions (run_a may be a comma list of runs)"),
                Opt("threshold", "noise threshold: smaller relative changes are 'no change' (default 0.03, the "
                    "lab's noise threshold)", "float"),
                Opt("metrics", "comma list of metrics (default: speeds and Encrypt-n per block)", "csv"),
                RESULTS_DIR,
                DEBUG)),
    Command("verify", "check implementations of a cipher against a known-answer file (any path)", "verify", (
        CIPHER,
        Opt("vectors", "known-answer file in the vectors format", positional=True),
        ANY_IMPL,
        Opt("toolchain", "toolchain profile (default gcc-O3)"),
        Opt("target", "target (default host; others run in their container)"),
        Opt("show", "failed records to print (default 5)", "int"),
        BUILD_DIR,
        Opt("timeout", "time limit in seconds for one kat run (default: the matrix's profile's, as in a run)",
            "float"),
        Opt("quick_gate", "every short record, the n-block check and the checksum chain, but only every 32nd long "
            "record (iterated over 100 times: about a twentieth of the work)", "flag"),
        DEBUG)),
    Command("ct", "constant-time check of a cipher's cells: secret-dependent branches and memory addresses under "
            "QEMU (every target), dudect on the host's CPU; exit 1 on a leak", "ct", (
                CIPHER,
                ANY_IMPL,
                Opt("toolchain", "toolchain profiles, comma list or globs (default gcc-O3)", "csv"),
                Opt("target", "targets, comma list (default host)", "csv"),
                Opt("dudect", "dudect measurements per block op on the host (key setup: a tenth; default 20000; "
                    "0: no dudect)", "int"),
                *CT_CHECKING,
                Opt("json", "also write every cell's verdict as JSON to this file"),
                BUILD_DIR,
                DEBUG)),
    Command("ct-blame", "why a leaking cell leaks: the compiler version, the flag and the optimisation pass that "
            "make it, each confirmed by a rebuild that passes its known answers and is clean; else 'in the source'",
            "ct_blame", (
                CIPHER,
                Opt("impl", "the implementation's name (default: the cipher's default)"),
                Opt("toolchain", "the toolchain profile of the leaking cell (default gcc-O3)"),
                Opt("target", "the target (default host)"),
                Opt("space", "flag space YAML (default flags/ct-blame.yaml)"),
                Opt("json", "also write the findings as JSON to this file"),
                BUILD_DIR,
                DEBUG)),
    Command("list", "list ciphers, implementations, toolchains, targets, profiles, hosts", "list_", (DEBUG,)),
    Command("catalogue", "markdown table of every implementation with its facts (builds with gcc-O3)",
            "catalogue", (Opt("peers", "include the peer libraries", "flag"), DEBUG)),
    Command("schema", "export the JSON Schemas of the config files into schemas/", "schema", (
        Opt("check", "write nothing: exit 1 naming every schema file in schemas/ that is missing or stale", "flag"),
        DEBUG)),
    Command("checksums", "print (or --write into cipher.yaml) every cipher's checksums from a gcc-O3 build",
            "checksums", (Opt("write", "write them into each cipher.yaml", "flag"), DEBUG)),
    Command("validate", "validate every data file of the project (what every command does first)",
            "validate", (DEBUG,)),
    Command("compilers-install", "install compiler versions of toolchains/versions.yaml: apt-get on the host, "
            "or build the image of those the host's Debian lacks", "compilers_install", (
                Opt("names", "versions (gcc-11), their profiles (gcc-11-O3) or globs ('clang-1*'); several: "
                    "separate them with commas or spaces", positional=True, nargs="*"),
                Opt("dry_run", "print what would be installed or built, change nothing", "flag"),
                Opt("images", "build the images of versions the host cannot have (default; --no-images: only "
                    "say so)", "switch", default=True),
                DEBUG), invoke="compilers.install"),
    Command("images-build", "build the container images the targets need (incremental)", "images_build", (
        Opt("targets", "comma list of targets, or 'all' (default: the matrix's container targets)", "csv"),
        Opt("engine", "docker or podman (default: env CIPHERLAB_ENGINE, the matrix's engine key, else auto)"),
        Opt("matrix", "matrix file whose targets and engine are used (default matrix.yaml; a preset: presets/NAME.yaml)"),
        DEBUG), invoke="images.build"),
    Command("bench-repeatability", "measure the same matrix twice and print how far apart the numbers are",
            "bench_repeatability", (
                ciphers("the matrix's"),
                toolchains("the matrix's"),
                Opt("implementations", "default, ours, peers, all, or a comma list"),
                targets(),
                PROFILE,
                out("repeatability"),
                Opt("runs", "RUN_A,RUN_B: judge two stored runs again instead of measuring (after a change to "
                    "the estimators)", "csv"),
                DEBUG), invoke="bench.repeatability"),
    Command("bench-mainjob", "the main job cold (empty build folder) and warm (unchanged, again): each stage's "
            "job time, reuse, the report's size and render time, the share of quantities that met their precision",
            "bench_mainjob", (
                *MATRIX_PART,
                Opt("condition", "what the result is labelled: the machine's load while it ran (default: none "
                    "given)"),
                out("mainjob"),
                DEBUG), invoke="bench.mainjob"),
    Command("bench-aa", "A/A pairs of quick runs: do the 95 % intervals cover the next run; calibrate the "
            "machine's run-to-run noise; compare's false changes and power on a planted 3 % slowdown",
            "bench_aa", (
                Opt("pairs", "A/A pairs to measure (runs: pairs + 1)", "int", default=10),
                *MATRIX_PART,
                Opt("plant", "the cipher whose encryption is made 3 % slower in a copy of the last run", "str",
                    default="serpent"),
                Opt("store", "store the fitted noise in results/<machine>/noise.json (default; --no-store)",
                    "switch", default=True),
                Opt("runs", "judge stored runs (consecutive pairs) instead of measuring", "csv"),
                Opt("busy", "CPUs kept busy (a spinning process each, not the measuring CPU) while measuring: the "
                    "condition 'one core busy' is --busy 1", "int", default=0),
                Opt("lanes", "processes measured at once, each on its own CPU (default: the profile's); the fitted "
                    "noise is stored for runs of that many lanes", "int"),
                Opt("condition", "what the results are labelled (default: 'quiet', 'N core(s) busy' from --busy, or "
                    "'N lanes' from --lanes; name the condition of stored --runs)"),
                out("aa"),
                DEBUG), invoke="bench.aa"),
    Command("bench-placement", "does the physical placement of a program's file set its figures: one cell's cycles "
            "program as fresh copies of its file against the file itself", "bench_placement", (
                Opt("implementation", "CIPHER/IMPLEMENTATION to measure (default serpent/avx2)", "str",
                    default="serpent/avx2"),
                Opt("toolchain", "toolchain profile (default gcc-O3)", "str", default="gcc-O3"),
                Opt("copies", "fresh copies of the program, all kept to the end (default 60)", "int", default=60),
                Opt("processes", "processes of each copy (default 2)", "int", default=2),
                Opt("sizes", "blocks per call of Encrypt-n and Decrypt-n (default 1,1024)", "csv"),
                out("placement"),
                DEBUG), invoke="bench.placement"),
    Command("java-run", "matrix.run's preset for Java cells: every Java implementation and Java peer (ciphers with Java "
            "code) under openjdk17-c2 unless --toolchains names other JVM (or C) profiles", "java_run", RUN_OPTS,
            invoke="java.run"),
    Command("bench-peers", "our implementations against the peer libraries, measured inside the harness",
            "bench_peers", (
                ciphers("every cipher a peer library has"),
                toolchains("gcc-O3,clang-O3"),
                PROFILE,
                out("peers"),
                DEBUG), invoke="bench.peers"),
    Command("bench-java", "every Java implementation and Java peer under C2 (JMH, short iterations, pinned forks): "
            "ours / Bouncy Castle and our Java / our portable C per finalist, with intervals over processes", "bench_java", (
                ciphers("every cipher with Java code"),
                Opt("rounds", "interleaved rounds, processes pooled (default 1)", "int"),
                Opt("forks", "JMH forks (pinned JVMs) per benchmark and round (default 5)", "int"),
                Opt("ours_only", "our Java only, without the Java peers (our Java / our C)", "flag"),
                Opt("toolchain", "the C toolchain our Java is compared with (default gcc-O3)"),
                out("java"),
                DEBUG), invoke="bench.java"),
    Command("bench-compilers", "the compiler axis: a six-flag search for five ciphers twice (time, processes, "
            "repeatability), and with --preset the compilers preset cold and warm", "bench_compilers", (
                Opt("space", "flag space (default flags/gcc-six.yaml)"),
                ciphers("serpent,mars,rc6,rijndael,twofish"),
                Opt("preset", "also run the compilers preset (presets/compilers.yaml) cold and warm (long)", "flag"),
                Opt("search", "the two flag searches (default; --no-search --preset: the preset alone)", "switch",
                    default=True),
                Opt("first", "comma list of stored flag-search runs: summarise them (with --second, their repeat) "
                    "instead of searching", "csv"),
                Opt("second", "comma list of stored flag-search runs: the repeat of --first", "csv"),
                BUILD_JOBS,
                out("compilers"), DEBUG),
            invoke="bench.compilers"),
    Command("bench-history", "the results index: build time per run, loading 10/100/1,000 runs through it; "
            "a bisection's cost over 64 commits",
            "bench_history", (
                Opt("run", "the run to copy (default: the latest in results/)"),
                Opt("copies", "how many copies to load (default 1000)", "int", default=1000),
                Opt("bisect_commits", "then bisect a scratch range of this many commits on guest instructions "
                    "and on time (default 64; 0 skips)", "int", default=64),
                out("history"), DEBUG),
            invoke="bench.history"),
    Command("bench-ct", "the constant-time check over the catalogue x toolchains x targets: wall time, leaking "
            "cells by cause, refuted claims; with --compilers the compiler-made leak matrix, each such leak blamed",
            "bench_ct", (
                ciphers("every cipher"),
                Opt("implementations", "all (default: ours and the peers), ours, default, peers or a comma list of "
                    "cipher/implementation"),
                toolchains("gcc-O3,clang-O3"),
                targets("host,sparc64,mips64; with --compilers host"),
                Opt("compilers", "the compiler-made leak matrix: the implementations claiming constant time x every "
                    "gcc and clang version each target has x -O1, -O2, -O3, -Os; every cell that leaks where the same "
                    "implementation is clean with another compiler or level is blamed (ct-blame)", "flag"),
                Opt("versions", "with --compilers: comma list of compiler versions or globs (default: every one "
                    "found, e.g. gcc-12,clang-*)", "csv"),
                Opt("levels", "with --compilers: comma list of levels (default O1,O2,O3,Os)", "csv"),
                Opt("dudect", "dudect measurements per block op on the host (default 20000, with --compilers 0; "
                    "0: none)", "int"),
                *CT_CHECKING,
                out("ct"), DEBUG),
            invoke="bench.ct"),
    Command("bench-faults", "provoke every fault a long campaign meets and print what the lab did and what was lost",
            "bench_faults", (out("faults"), DEBUG),
            invoke="bench.faults"),
    Command("bench-scale", "the container matrix serially and on a two-worker Dask LocalCluster: wall times",
            "bench_scale", (
                ciphers("every cipher"),
                toolchains("gcc-O3,clang-O3"),
                targets("x86_64,sparc64,mips64"),
                PROFILE,
                out("scale"), DEBUG), invoke="bench.scale"),
    Command("bench-mutation", "the mutation score of the modules that compute numbers (mutmut; long)",
            "bench_mutation", (Opt("jobs", "mutants tested at once (default: the core count)", "int"),
                               Opt("survivors", "test again only the mutants that survived the last run (after "
                                   "adding tests; keeps the other results)", "switch", default=False),
                               Opt("semantic", "the catalogue of hand-written plausible bugs (tests/mutations/) "
                                   "instead of mutmut's", "switch", default=False),
                               Opt("only", "with --semantic: comma list of mutation names to try", "csv"),
                               Opt("out", "JSON-lines file to append to (default bench/results/mutation.jsonl, "
                                   "with --semantic semantic-mutation.jsonl)"), DEBUG), invoke="bench.mutation"),
    Command("test-repeat", "the test command N times (or on --files), optionally beside one core-bound compile "
            "loop: failures per test", "test_repeat", (
                Opt("runs", "how many runs (default 10)", "int", default=10),
                Opt("load", "keep one gcc -O2 compile loop running beside the runs", "flag"),
                Opt("files", "comma list of test files (default: the whole suite, the README's test command)", "csv"),
                Opt("out", "JSON-lines file to append to (default bench/results/test-repeat.jsonl)"), DEBUG),
            invoke="test.repeat"),
    Command("flags-search", "the fastest flag sets of a toolchain per (cipher, target), by racing, with ties",
            "flags_search", (
                Opt("space", "flag space YAML (base: TOOLCHAIN, dimensions: {name: [[flags], ...]}), e.g. "
                    "flags/gcc-six.yaml"),
                Opt("ciphers", "comma list of ciphers (their default implementation) or CIPHER/IMPL", "csv"),
                targets("host; hardware only"),
                Opt("quantity", "encrypt (default), decrypt or key_setup: the speed to maximise", default="encrypt"),
                Opt("key_size", "key size in bits (default 128)", "int", default=128),
                Opt("json", "write the result as JSON to this file"),
                Opt("write_profiles", "cell or target: write the winners as toolchains/<base>-best-*.yaml"),
                Opt("min_rounds", "processes per candidate before the first elimination (default 5)", "int", default=5),
                Opt("max_rounds", "processes per candidate at most (default 30)", "int", default=30),
                Opt("precision", "stop when every survivor's interval is within this (default 0.01)", "float",
                    default=0.01),
                BUILD_JOBS,
                Opt("ct", "for implementations that claim constant time, trace-check every raced candidate (as lab "
                    "ct does): a leaking one is 'leaks', never the winner nor tied; report the fastest overall, "
                    "the fastest constant-time one and the cost of constant time", "flag"),
                Opt("results_dir", "where the run is written (default results/ in the checkout)"),
                BUILD_DIR, DEBUG), invoke="flags.search"),
    Command("bisect", "the first revision (or compiler version) at which a cell's quantity changed: exact on guest "
            "instructions, or measured on time", "bisect", (
                Opt("cipher", "the cipher (its default implementation unless --impl)"),
                Opt("impl", "the implementation (default: the cipher's default)"),
                Opt("toolchain", "the toolchain the revisions are built with (default gcc-O3)", default="gcc-O3"),
                Opt("target", "the target (default host)", default="host"),
                Opt("good", "a revision where the quantity is as it was"),
                Opt("bad", "a later revision where it changed"),
                Opt("toolchains", "instead of revisions: compiler versions to bisect (names or globs, one family), "
                    "e.g. 'gcc-*-O3'", "csv"),
                Opt("metric", "insn_encrypt_per_block (default; exact), insn_decrypt_per_block, insn_ekey, "
                    "insn_dkey, or a speed: encrypt_speed, decrypt_speed, key_setup_speed (measured)",
                    default="insn_encrypt_per_block"),
                Opt("repo", "the git repository whose revisions are bisected (default: this checkout)"), DEBUG),
            invoke="bisect"),
    Command("history", "every quantity over runs (one machine's), the steps between runs, and the noise of identical "
            "builds; writes reports/history/index.html", "history", (
                ciphers("all"),
                Opt("implementations", "comma list of implementations", "csv"),
                Opt("toolchains", "comma list of toolchains", "csv"),
                targets(),
                Opt("machine", "the machine whose runs (default: every machine; never mixed in one series)"),
                Opt("by", "date (default), compiler or revision (the run's git revision, in commit order): the order "
                    "of a series' points", default="date"),
                Opt("metrics", "comma list (default: the speeds and Encrypt-128 guest instructions)", "csv"),
                RESULTS_DIR,
                Opt("reports_dir", "where reports go (default reports/ in the checkout)"), DEBUG), invoke="history"),
    Command("docs", "write docs/benchmarks.md from the stored benchmark results, then build the documentation site "
            "(MkDocs, strict: a warning or dead link fails) into site/", "docs", (
                Opt("site_dir", "where the site goes (default site/ in the checkout)"), DEBUG), invoke="docs.build"),
    Command("docs-benchmarks", "write docs/benchmarks.md from bench/results/*.jsonl: the latest result per benchmark "
            "and machine kind", "docs_benchmarks", (
                Opt("check", "write nothing: exit 1 when docs/benchmarks.md is stale", "flag"), DEBUG),
            invoke="docs.benchmarks"),
    Command("docs-ct-tables", "rewrite each cipher README's constant-time table from bench/results/ct.jsonl",
            "docs_ct_tables", (Opt("check", "write nothing: exit 1 naming every stale README", "flag"), DEBUG),
            invoke="docs.ct-tables"),
    Command("images-host-plugin", "copy the QEMU icount plugin out of the x86_64 image for host-backend "
            "instruction counts", "images_host_plugin", (
                Opt("engine", "docker or podman (default: auto)"), DEBUG), invoke="images.host-plugin"),
)


def command(name: str) -> Command:
    return next(c for c in COMMANDS if c.name == name)


def invoke_commands(collection: str) -> list[tuple[str, Command]]:
    """(task name, command) of the commands an invoke collection offers ("" = the top level)."""
    out = []
    for c in COMMANDS:
        where = c.invoke or c.name
        coll, _, name = where.rpartition(".")
        if coll == collection:
            out.append((name, c))
    return out
