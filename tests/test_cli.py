"""Every command of `python -m lab`, run as a user runs it (a subprocess): what it prints and its exit code.

run, report, list, catalogue, schema, verify, validate and checksums here; compare in test_compare, bad input
of every command in test_faults, the bench commands in their own benchmarks.  Expected values come from the
data files themselves (the folders, the YAML, the README), not from the lab's own loaders.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lab import cli, results
from lab.errors import UsageError
from lab.report import errors_in

from .conftest import FIXTURE_CIPHERS, ROOT
from .html_tables import tables as tables_of

pytestmark = pytest.mark.timeout(900)

VECTORS = ROOT.parent / "shared" / "vectors"


def lab(*args: str, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    """A mistake: exit 2, one line on stderr naming what is wrong, nothing on stdout, no traceback."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""
    for w in words:
        assert w in r.stderr, r.stderr


def stems(folder: str) -> list[str]:
    return sorted(p.stem for p in (ROOT / folder).glob("*.yaml"))


def peer_files() -> list[dict]:
    return [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "c_src" / "peers").glob("*/peer.yaml"))]


def cipher_files() -> dict[str, dict]:
    files = sorted((ROOT / "c_src" / "ciphers").glob("*/cipher.yaml"))
    return {p.parent.name: yaml.safe_load(p.read_text()) for p in files}


# ------------------------------------------------------------------- run, report
def test_run_prints_where_and_what_then_report_rebuilds_the_same_numbers(tmp_path):
    env = {"CIPHERLAB_CIPHER_DIRS": str(FIXTURE_CIPHERS), "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks"),
           "CIPHERLAB_MACHINE": "cli"}
    res, rep = tmp_path / "results", tmp_path / "reports"
    r = lab("run", "--ciphers", "des,wrongdes", "--implementations", "default", "--toolchains", "gcc-O3",
            "--profile", "smoke", "--no-icount", "--no-progress", "--results-dir", str(res), "--reports-dir",
            str(rep), "--build-dir", str(ROOT / "build" / "test-cli"), env=env)
    assert r.returncode == 1, r.stderr  # one red cell: exit 1, and the run still finished and reported
    (run_dir,) = results.run_dirs(res)
    assert run_dir.parent == res / "cli"
    report = rep / run_dir.name / "index.html"
    assert r.stdout.splitlines() == [f"results: {run_dir}", "2 of 2 cells: kat_failed 1, ok 1", f"report: {report}"]
    assert (rep / "latest").resolve() == (rep / run_dir.name).resolve()
    html = report.read_text()
    assert run_dir.name in html and not errors_in(html)
    assert "wrongdes/flipbit@gcc-O3@host" in html and "known-answer records failed" in html

    again = tmp_path / "again"
    r = lab("report", "--runs", run_dir.name, "--results-dir", str(res), "--reports-dir", str(again), env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"report: {again / run_dir.name / 'index.html'}\n"
    rebuilt = (again / run_dir.name / "index.html").read_text()
    # the same numbers: every table of the report, cell for cell (only the generation time differs)
    assert tables_of(rebuilt) == tables_of(html) and len(tables_of(html)) > 5

    latest = lab("report", "--results-dir", str(res), "--reports-dir", str(tmp_path / "latest"), env=env)
    assert latest.returncode == 0 and latest.stdout.strip().endswith(f"{run_dir.name}/index.html"), latest.stderr
    one_line_error(lab("report", "--runs", "no-such-run", "--results-dir", str(res), "--reports-dir",
                       str(again), env=env), "no-such-run")
    one_line_error(lab("report", "--results-dir", str(tmp_path / "empty"), "--reports-dir", str(again), env=env))


def test_run_without_a_red_cell_exits_0_and_quiet_prints_only_the_result(tmp_path):
    env = {"CIPHERLAB_LOCK_DIR": str(tmp_path / "locks"), "CIPHERLAB_MACHINE": "cli"}
    r = lab("run", "--ciphers", "idea", "--implementations", "default", "--toolchains", "clang-O3", "--profile", "smoke", "--no-icount", "--quiet",
            "--no-report", "--results-dir", str(tmp_path / "results"), "--build-dir",
            str(ROOT / "build" / "test-cli"), env=env)
    assert r.returncode == 0, r.stderr
    (run_dir,) = results.run_dirs(tmp_path / "results")
    assert r.stdout.splitlines() == [f"results: {run_dir}", "1 of 1 cells: ok 1"]
    assert r.stderr == ""
    assert not (tmp_path / "reports").exists()


# ------------------------------------------------------------------- list, validate
def test_list_names_every_data_file_and_every_implementation(tmp_path):
    r = lab("list", env={"CIPHERLAB_HOSTS_DIR": str(tmp_path / "none")})
    assert r.returncode == 0, r.stderr
    got = dict(line.split(": ", 1) for line in r.stdout.splitlines() if not line.startswith("  "))
    assert list(got) == ["ciphers", "peer implementations", "toolchains", "targets", "profiles", "hosts",
                         "compiler versions"]
    ours = {name: [i for i, d in y["implementations"].items()] for name, y in cipher_files().items()}
    listed = dict(re.findall(r"(\w+)\[([^\]]*)\]", got["ciphers"]))
    assert set(listed) == set(ours)
    for name, impls in ours.items():
        assert listed[name].split(",") == impls, name
    peers = sorted(f"{c}/{i}" for y in peer_files() for c, impls in y["implementations"].items() for i in impls)
    assert sorted(got["peer implementations"].split(", ")) == peers
    for key, folder in (("targets", "targets"), ("profiles", "profiles")):
        assert got[key].split(", ") == stems(folder), key
    # every profile file, and one profile per compiler version x variant of toolchains/versions.yaml
    versions = yaml.safe_load((ROOT / "toolchains" / "versions.yaml").read_text())
    made = [f"{v['family']}-{v['version']}-{variant}" for v in versions["versions"] for variant in versions["variants"]]
    assert got["toolchains"].split(", ") == sorted([s for s in stems("toolchains") if s != "versions"] + made)
    assert got["hosts"] == "(none: add hosts/<name>.yaml)"

    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / "bench-arm.yaml").write_text("address: 127.0.0.1\nport: 2222\ntarget: aarch64\n")
    r = lab("list", env={"CIPHERLAB_HOSTS_DIR": str(hosts)})
    assert r.returncode == 0 and "hosts: bench-arm\n" in r.stdout, r.stderr


def test_validate_counts_every_data_file(tmp_path):
    r = lab("validate", env={"CIPHERLAB_HOSTS_DIR": str(tmp_path / "none")})
    assert r.returncode == 0, r.stderr
    n = {k: len(stems(k)) for k in ("toolchains", "targets", "profiles")}
    n["ciphers"] = len(cipher_files())
    n["peer libraries"] = len(peer_files())
    versions = yaml.safe_load((ROOT / "toolchains" / "versions.yaml").read_text())
    nv = len(versions["versions"])
    profiles = n["toolchains"] - 1 + nv * len(versions["variants"])
    assert r.stdout == (f"{sum(n.values())} data files valid: {n['toolchains']} toolchains ({profiles} profiles, "
                        f"{nv} compiler versions), {n['targets']} targets, "
                        f"{n['profiles']} profiles, {n['ciphers']} ciphers, {n['peer libraries']} peer libraries, "
                        "0 hosts\n")


# ------------------------------------------------------------------- catalogue
def cpu_flags() -> set[str]:
    return set(Path("/proc/cpuinfo").read_text().split()) if Path("/proc/cpuinfo").exists() else set()


NEEDS = {"avx512": {"avx512f"}, "vaes": {"vaes", "avx512f"}, "aesni": {"aes"}}  # strategy word -> CPU flags


def lacks(strategy: str) -> bool:
    """Whether an implementation's code needs a CPU feature this machine lacks (by its strategy's name)."""
    return any(word in strategy and not need <= cpu_flags() for word, need in NEEDS.items())


def test_catalogue_prints_the_table_the_readme_shows():
    """docs/ciphers.md says `./cipherlab catalogue` prints its table of the ciphers: it must, row for row (so the
    page's table bytes are what the builds have, and a new implementation shows in both)."""
    from lab.system import machine

    r = lab("catalogue")
    assert r.returncode == 0, r.stderr
    printed = r.stdout.splitlines()
    readme = (ROOT / "docs" / "ciphers.md").read_text().splitlines()
    start = readme.index(printed[0])
    assert len(printed) == 2 + sum(len(y["implementations"]) for y in cipher_files().values())
    flags = cpu_flags()
    if machine()["aes_ni"] and {"avx512f", "vaes"} <= flags:  # every implementation loads here, as on docs/ciphers.md
        assert readme[start:start + len(printed)] == printed
        assert "n/a here" not in r.stdout
    else:  # code for a CPU feature this one lacks cannot load: its sizes are unknown, every other cell is the page's
        differ = [(a.split(" | "), b.split(" | ")) for a, b in zip(readme[start:start + len(printed)], printed) if a != b]
        assert differ and all(b[5:7] == ["n/a here"] * 2 and lacks(b[1]) and a[:5] + a[7:] == b[:5] + b[7:]
                              for a, b in differ), differ
    rows = [line.split(" | ") for line in printed[2:]]
    assert all(re.fullmatch(r"[\d,]+", row[5]) and re.fullmatch(r"[\d,]+", row[6]) for row in rows
               if not lacks(row[1]))


# ------------------------------------------------------------------- schema
def _checkout_copy(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("c_src", "toolchains", "targets", "profiles", "dockerfiles", "matrix.yaml"):
        (root / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "schemas", root / "schemas")
    return root


def test_schema_writes_the_schemas_and_check_names_the_stale_ones(tmp_path):
    assert lab("schema", "--check").returncode == 0  # the committed schemas are current

    root = _checkout_copy(tmp_path)
    env = {"CIPHERLAB_ROOT": str(root)}
    committed = sorted((ROOT / "schemas").glob("*.schema.json"))
    assert len(committed) >= 5
    stale, gone = root / "schemas" / "toolchain.schema.json", root / "schemas" / "matrix.schema.json"
    stale.write_text(stale.read_text().replace('"additionalProperties": false', '"additionalProperties": true', 1))
    gone.unlink()
    r = lab("schema", "--check", env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"schemas/{p.name} is missing or stale: run `invoke schema` to rewrite it" for p in sorted([gone, stale])]

    r = lab("schema", env=env)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == sorted(str(root / "schemas" / p.name) for p in committed)
    for p in committed:
        assert (root / "schemas" / p.name).read_text() == p.read_text(), p.name
    r = lab("schema", "--check", env=env)
    assert r.returncode == 0 and r.stdout == "schemas/: every JSON Schema is current\n" and r.stderr == ""


# ------------------------------------------------------------------- verify
def test_verify_prints_each_implementation_and_the_first_failures():
    r = lab("verify", "des", str(VECTORS / "des.kat"), "--impl", "all", "--toolchain", "clang-O3")
    assert r.returncode == 0, r.stderr
    # every line passes, or is code for a CPU feature this machine lacks (AVX-512 DES on a CPU without AVX-512)
    assert all("305 of 305 records passed" in line or (line.endswith(": unavailable on this CPU")
                                                        and lacks(line.split(" [")[0].split("/")[1]))
               for line in r.stdout.splitlines()), r.stdout
    peers = [i for y in peer_files() for i in y["implementations"].get("des", {})]
    ours = list(cipher_files()["des"]["implementations"])
    assert len(r.stdout.splitlines()) == len(ours) + len(peers) > 2
    # the words of matrix.run --implementations: ours, peers (the default and every peer), or a name
    for word, names in [("ours", ours), ("peers", [*ours[:1], *peers]), ("spbox", ["spbox"])]:
        r = lab("verify", "des", str(VECTORS / "des.kat"), "--impl", word, "--toolchain", "clang-O3")
        assert r.returncode == 0, r.stderr
        assert sorted(ln.split(" [")[0] for ln in r.stdout.splitlines()) == sorted(f"des/{n}" for n in names), \
            (word, r.stdout)
    one_line_error(lab("verify", "des", str(VECTORS / "des.kat"), "--impl", "spbx"), "spbx", "spbox")

    env = {"CIPHERLAB_CIPHER_DIRS": str(FIXTURE_CIPHERS)}
    bad = lab("verify", "wrongdes", str(VECTORS / "des.kat"), "--show", "2", env=env)
    assert bad.returncode == 1, bad.stderr
    head, *fails = bad.stdout.splitlines()
    m = re.search(r"(\d+) of 305 records passed", head)
    assert m and int(m.group(1)) < 305, head
    assert len(fails) == 2, fails
    assert all(re.match(r"  line \d+: \w+ .* expected [0-9a-f]+ got [0-9a-f]+$", f) for f in fails), fails

    one_line_error(lab("verify", "des", str(VECTORS / "des.kat"), "--toolchain", "gcc-03"), "gcc-03", "gcc-O3")
    one_line_error(lab("verify", "dse", str(VECTORS / "des.kat")), "dse", "des")


# ------------------------------------------------------------------- checksums
def test_checksums_prints_the_stored_checksum_of_every_cipher():
    r = lab("checksums")
    assert r.returncode == 0, r.stdout + r.stderr
    printed = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    files = cipher_files()
    assert set(printed) == set(files)
    for name, y in files.items():
        want = ", ".join(f"{k}: {s[:16]}..." for k, s in sorted(y["checksums"].items()))
        assert printed[name] == want, name


def test_the_run_options_are_one_table_the_request_is_built_and_resumed_from():
    """RunRequest's fields are the run command's options (argparse and invoke alike); run.json stores the typed
    request, and --resume rebuilds it from there, taking only the scheduling options from the command line."""
    from lab.cli import RUN_OPTS
    from lab.request import RunRequest
    from lab.run import stored_request

    assert [o.name for o in RUN_OPTS][:len(RunRequest.model_fields)] == list(RunRequest.model_fields)
    parsed = cli.parser().parse_args(["run", "--ciphers", "des,idea", "--jobs", "3", "--no-icount"])
    values = {o.name: cli.convert(o, getattr(parsed, o.name)) for o in RUN_OPTS if o.name in RunRequest.model_fields}
    req = RunRequest.from_options(**values)
    assert (req.ciphers, req.jobs, req.icount, req.local) == (["des", "idea"], 3, False, True)
    req = RunRequest.from_options(ciphers=["des"], timeout=8.0, icount=False, hosts=["h1"], local=False, jobs=3,
                                  implementations="des/spbox,idea/ref", tag="x")
    assert req.implementations == ["des/spbox", "idea/ref"]
    stored = json.loads(json.dumps(req.stored()))  # as run.json holds it
    again = RunRequest(resume="latest", jobs=1, results_dir=Path("/r")).resumed(stored_request({"request": stored}))
    assert (again.ciphers, again.timeout, again.icount, again.hosts, again.local, again.tag) == \
        (["des"], 8.0, False, ["h1"], False, "x")
    assert (again.resume, again.jobs, again.results_dir) == ("latest", 1, Path("/r"))
    old = stored_request({"icount": False, "hosts": None, "local": True, "timeout": 5})  # a run.json from before
    assert (old.icount, old.timeout, old.hosts) == (False, 5, None)
    with pytest.raises(UsageError, match=r"^option --jobs: needs a positive number$"):
        RunRequest.from_options(jobs=0)
    with pytest.raises(UsageError, match=r"^option --lanes: needs a positive number$"):
        RunRequest.from_options(lanes=0)
    assert RunRequest.from_options(lanes=2).lanes == 2


def test_bench_aa_calibrates_one_condition_at_a_time(monkeypatch):
    from lab import commands

    with pytest.raises(UsageError, match=r"^options --busy and --lanes: .*one at a time$"):
        commands.bench_aa(busy=1, lanes=2)
    with pytest.raises(UsageError, match=r"^option --lanes: 0 is not a number of measuring lanes"):
        commands.bench_aa(lanes=0)
    asked = {}
    monkeypatch.setattr("lab.bench.aa.bench", lambda *a, **kw: asked.update(kw))
    commands.bench_aa(busy=1)  # the quick profile measures on two lanes; a busy core goes beside one
    assert asked["busy"] == 1 and asked["lanes"] == 1
    commands.bench_aa()
    assert asked["busy"] == 0 and asked["lanes"] is None  # the profile's


def test_every_help_text_is_printed_as_written_a_percent_sign_too():
    """argparse formats help texts with %: "made 3 % slower" once printed a dict of argparse's internals."""
    from lab.commandtable import COMMANDS

    cmd = next(c for c in COMMANDS if any("%" in (o.help or "") for o in c.options))
    out = subprocess.run([sys.executable, "-m", "lab", cmd.name, "--help"], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "COLUMNS": "400"}).stdout
    for o in cmd.options:
        assert " ".join((o.help or "").split()) in " ".join(out.split()), o.name
    assert "option_strings" not in out and "%%" not in out
    assert " ".join(cmd.help.split()) in " ".join(out.split())  # the description too
