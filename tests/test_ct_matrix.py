"""invoke bench.ct --compilers (lab/bench/ct_compilers.py) and the report's "Compiler-made leaks" section
(lab/report/ct_leaks.py).  The sweep runs for real (real compilers, builds, known answers, the trace check under
QEMU, ct-blame) on the planted cases of tests/fixtures/ciphers/ctblame, narrowed to a few compilers and two levels;
the whole sweep is a benchmark and never runs here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jinja2
import pytest

from lab import ctblame
from lab.bench import ct_compilers
from lab.errors import UsageError
from lab.report import ct_leaks

LEAK = "ctblame/select@clang-16-O3@host"


@pytest.fixture(scope="module")
def narrow_sweep(fixture_lab, build_dir, host_plugin, tmp_path_factory):
    """ctblame/select (clang 16, not 14 nor gcc 12, makes its masked select a branch) and crashdes/segv (dies in encrypt) x gcc-12,
    clang-14, clang-16 x -O1, -O3 on the host, stored in a JSON-lines file of its own."""
    if not (shutil.which("clang-16") and shutil.which("clang-14") and shutil.which("gcc-12")):
        pytest.skip("needs gcc-12, clang-14 and clang-16 installed")
    out = tmp_path_factory.mktemp("ct-matrix") / "ct.jsonl"
    said: list[str] = []
    # the blames' flag space one level (the flag search is test_ct_blame's; the pass search is what names the
    # cause here): the fixture took 137 s with the whole space, 122 s with this one (AMD EPYC VM, 2026-11-30)
    doc = ct_compilers.bench(fixture_lab, implementations="ctblame/select,crashdes/segv", targets=["host"],
                             versions=["gcc-12", "clang-1[46]"], levels=["O1", "-O3"], out=out, build_dir=build_dir,
                             space=ctblame.Space(levels=("-O2",)), say=said.append)
    return doc, out, said


def test_the_sweep_finds_the_compiler_made_leak_and_blames_its_pass(narrow_sweep):
    doc, out, said = narrow_sweep
    rows = {r["cell"]: r for r in doc["cells"]}
    select = {c: r for c, r in rows.items() if r["impl"] == "ctblame/select"}
    assert sorted((r["compiler"], r["level"]) for r in select.values()) == [
        ("clang-14", "-O1"), ("clang-14", "-O3"), ("clang-16", "-O1"), ("clang-16", "-O3"),
        ("gcc-12", "-O1"), ("gcc-12", "-O3")]
    assert {c for c, r in select.items() if r["verdict"]["verdict"] == "leak"} == {LEAK, LEAK.replace("O3", "O1")}
    leak = rows[LEAK]
    assert leak["compiler_made"] and rows[LEAK.replace("O3", "O1")]["compiler_made"]
    assert "ctblame/plant.c:" in leak["verdict"]["reason"]
    passes = [f for f in leak["blame"]["findings"] if f["kind"] == "pass"]
    assert passes and passes[0]["name"] == "X86 cmov Conversion" and passes[0]["confirmed"], leak["blame"]
    assert leak["blame"]["builds"] >= 5 and leak["blame_error"] is None
    s = doc["summary"]
    assert LEAK in s["compiler_made_leaks"] and s["blamed"] == len(s["compiler_made_leaks"]) >= 1
    assert s["builds_and_checks"] == s["cells_checked"] + s["blame_builds"] > len(select)
    assert any(line.startswith(f"leak: {LEAK} (compiler-made)") for line in said)
    assert any(line.startswith("wall time: ") for line in said) and doc["wall_seconds"]["host"] > 0


def test_a_crashing_cell_is_unavailable_and_the_sweep_goes_on(narrow_sweep):
    doc, _, _ = narrow_sweep
    crash = [r for r in doc["cells"] if r["impl"] == "crashdes/segv"]
    assert len(crash) == 6 and all(r["verdict"]["verdict"] == "unavailable" for r in crash)
    assert all(r["verdict"]["reason"] and not r["compiler_made"] and r["blame"] is None for r in crash)


def test_the_stored_result_makes_the_report_table(narrow_sweep):
    doc, out, _ = narrow_sweep
    stored = [json.loads(line) for line in out.read_text().splitlines()]
    assert stored[-1]["format"] == ct_leaks.FORMAT and stored[-1]["id"].startswith("ct-")
    t = ct_leaks.section(out)
    assert t["present"] and t["columns"] == [("host", "-O1"), ("host", "-O3")]
    rows = {(r["impl"], r["compiler"]): r["cells"] for r in t["rows"]}
    assert [c["text"] for c in rows[("ctblame/select", "clang-14")]] == ["clean", "clean"]
    for c in rows[("ctblame/select", "clang-16")]:  # clang 16 makes the branch at -O1 and -O3 alike
        assert c["cls"] == "bad" and c["text"].startswith("branch in ctblame_masked_select (tests/fixtures/ciphers/"
                                                          "ctblame/plant.c:")
        assert c["text"].endswith(": pass 'X86 cmov Conversion'"), c


def test_the_compilers_of_a_target_come_from_versions_yaml(lab):
    tcs = ct_compilers.compiler_toolchains(lab, lab.target("sparc64"))
    assert [(v, lv) for v, lv, _ in tcs] == [(v, lv) for v in ("gcc-12", "clang-14") for lv in ct_compilers.LEVELS]
    by = {tc.name: tc for _, _, tc in tcs}
    assert by["gcc-12-Os"].cc == "gcc-12" and by["gcc-12-Os"].flags[0] == "-Os" and "-O3" not in by["gcc-12-Os"].flags
    assert by["clang-14-O3"].flags == lab.toolchain("clang-14-O3").flags
    host = ct_compilers.compiler_toolchains(lab, lab.target("host"), ["clang-*"], ("-O1",))
    assert host and all(v.startswith("clang-") and shutil.which(v) for v, _, _ in host)
    with pytest.raises(UsageError, match="--levels: '-O9' is not an optimisation level"):
        ct_compilers.levels_of(["O9"])


def _row(impl, compiler, level, verdict, made=False, blame=None, error=None):
    div = {"kind": "branch", "function": "ctblame_masked_select", "location": "plant.c:21", "address": "0x4011a0"}
    ops = [{"op": "encrypt", "key_size": 128, "verdict": verdict, "divergence": div if verdict == "leak" else None}]
    return {"cell": f"{impl}@{compiler}-{level[1:]}@host", "impl": impl, "compiler": compiler, "level": level,
            "target": "host", "verdict": {"verdict": verdict, "reason": "" if verdict != "unavailable" else
                                          "known-answer gate: crashed", "ops": ops},
            "compiler_made": made, "blame": blame, "blame_error": error}


def test_the_report_table_from_a_small_stored_result(tmp_path):
    blame = {"findings": [{"kind": "version", "text": "clang-14 clean, clang-16 leaks"},
                          {"kind": "pass", "text": "pass 512 'X86 cmov Conversion' on function (f) introduces it",
                           "name": "X86 cmov Conversion", "confirmed": True}], "builds": 14}
    doc = {"format": ct_leaks.FORMAT, "id": "ct-2026-11-28T2300", "date": "2026-11-28T23:00:00+00:00",
           "targets": ["host"], "levels": ["-O2", "-O3"], "wall_seconds": {"host": 61.4},
           "summary": {"cells": 6, "compiler_made_leaks": ["x"], "blamed": 1, "builds_and_checks": 20},
           "cells": [_row("a/select", "clang-16", "-O2", "clean"),
                     _row("a/select", "clang-16", "-O3", "leak", True, blame),
                     _row("a/select", "clang-14", "-O3", "clean"),
                     _row("a/rs", "gcc-12", "-O2", "leak", True, None, "UserError: does not leak (clean)"),
                     _row("a/rs", "gcc-12", "-O3", "unavailable"),
                     _row("a/tt", "gcc-12", "-O2", "leak")]}
    t = ct_leaks.table(doc)
    assert [(r["impl"], r["compiler"]) for r in t["rows"]] == [("a/rs", "gcc-12"), ("a/select", "clang-14"),
                                                              ("a/select", "clang-16"), ("a/tt", "gcc-12")]
    rows = {(r["impl"], r["compiler"]): r["cells"] for r in t["rows"]}
    assert rows[("a/select", "clang-16")][0]["text"] == "clean"
    assert rows[("a/select", "clang-16")][1]["text"] == \
        "branch in ctblame_masked_select (plant.c:21): pass 'X86 cmov Conversion'"
    assert rows[("a/select", "clang-14")][0] is None  # a cell the result does not hold is left blank
    assert rows[("a/rs", "gcc-12")][0]["text"].endswith("blame failed: UserError: does not leak (clean)")
    assert rows[("a/rs", "gcc-12")][1] == {"cls": "na", "text": "unavailable", "title": "known-answer gate: crashed"}
    assert rows[("a/tt", "gcc-12")][0]["text"].endswith("leaks with every compiler and level here: not blamed")
    assert (t["leaks"], t["blamed"], t["builds"], t["wall_seconds"]) == (1, 1, 20, 61)

    path = tmp_path / "ct.jsonl"
    older = {**doc, "id": "ct-2026-11-27T1000", "date": "2026-11-27T10:00:00+00:00", "cells": []}
    plain = {"format": "cipherlab-bench-ct", "id": "ct-2026-11-29T1000", "date": "2026-11-29T10:00:00+00:00"}
    path.write_text("".join(json.dumps(d) + "\n" for d in (older, doc, plain)))
    assert ct_leaks.section(path)["id"] == "ct-2026-11-28T2300"  # the latest --compilers result, not a plain one

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(ct_leaks.__file__).parent / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.get_template("ct_leaks_section.html.j2").render(ct_leaks=ct_leaks.section(path))
    assert "<table" in html and "pass &#39;X86 cmov Conversion&#39;" in html and "ct-2026-11-28T2300" in html
    empty = env.get_template("ct_leaks_section.html.j2").render(ct_leaks=ct_leaks.section(tmp_path / "none.jsonl"))
    assert "<table" not in empty and "<code>./cipherlab bench.ct --compilers</code> makes one" in empty


def test_a_peer_that_claims_constant_time_is_in_the_matrix_and_one_that_does_not_is_not(lab):
    """peer.yaml's constant_time is the library's claim: Botan's and OpenSSL's AES claim it (their sources say
    so), Nettle states none; the matrix takes the claimed ones beside ours."""
    from lab.plan import implementations as pick

    rij = {im.name: im for im in pick(lab, "rijndael", "all", "--implementations")}
    assert {n for n, im in rij.items() if im.peer and im.constant_time} == \
        {"botan", "botan_vperm", "botan_portable", "openssl", "openssl_vpaes"}
    assert rij["nettle"].constant_time is None and rij["openssl_noaesni"].constant_time is None
    assert rij["bitslice64"].constant_time is True and rij["ttable"].constant_time is False
