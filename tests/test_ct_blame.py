"""ct-blame (lab/ctblame.py) with real compilers, real builds, real known answers and the real trace check under
QEMU: a compiler-made branch per family, planted in a copy of Serpent (tests/fixtures/ciphers/ctblame), blamed
to the pass that writes it and confirmed clean with it off; a T-table leak blamed "in the source"."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from lab import ctblame, ctcheck
from lab.errors import ConfigError, UserError
from lab.plan import Cell

from .conftest import ROOT


def _blame(lab, impl: str, toolchain: str, build_dir, flags: tuple[str, ...] | None = None,
           space: ctblame.Space | None = None) -> ctblame.Blame:
    tc = lab.toolchain(toolchain)
    if flags is not None:
        tc = dataclasses.replace(tc, name=f"{tc.name}{''.join(flags)}", flags=flags)
    im = lab.impl(impl)
    cell = Cell(im, tc, lab.target("host"), im.key_bits, lab.profile("smoke"))
    be = ctcheck.ct_backend(lab, build_dir)
    try:
        return ctblame.blame(lab, cell, be, build_dir=build_dir,
                             space=space or ctblame.load_space(ROOT / ctblame.DEFAULT_SPACE))
    finally:
        be.close()


def _finding(b: ctblame.Blame, kind: str) -> ctblame.Finding:
    return next(f for f in b.findings if f.kind == kind)


@pytest.mark.skipif(not (shutil.which("clang-16") and shutil.which("clang-14")), reason="clang-14 and clang-16")
def test_clangs_select_branch_is_blamed_on_the_cmov_conversion_and_confirmed(fixture_lab, build_dir, host_plugin):
    """clang 16 (not 14) makes the masked select's load of p[0] conditional: X86 cmov Conversion."""
    b = _blame(fixture_lab, "ctblame/select", "clang-16-O3", build_dir)
    assert b.leak.startswith("encrypt 128: secret-dependent branch at tests/fixtures/ciphers/ctblame/plant.c:")
    v = _finding(b, "version").text
    assert "clang-14 clean" in v and "clang-16 leaks" in v
    assert "changes between clang-1" in v and "(clean) and clang-16 (leaks)" in v
    p = _finding(b, "pass")
    assert "'X86 cmov Conversion' on function (ctblame_masked_select)" in p.text and p.confirmed, p
    f = _finding(b, "flag")
    assert f.text == "-mllvm -x86-cmov-converter=false removes it" and f.confirmed
    assert not any(f.kind == "source" for f in b.findings)
    assert b.builds >= 5


@pytest.mark.heavy  # a search over gcc's passes (40 rebuilds and traces, 1-2 min): clang's case stays in the default run
def test_gccs_select_branch_at_os_is_blamed_on_its_pass_and_confirmed(fixture_lab, build_dir, host_plugin):
    """gcc -Os compiles Twofish's RS select (t & 0x80 ? 0x14D : 0) into a branch; the pass search finds the
    tree pass whose absence leaves it branch-free, and the rebuild without it is clean."""
    # a space of one level: the flag finding in one probe (the pass search is what this test is about)
    b = _blame(fixture_lab, "ctblame/rs", "gcc-12-O3", build_dir, flags=("-Os", "-std=c11"),
               space=ctblame.Space(levels=("-O2",)))
    assert "secret-dependent branch at tests/fixtures/ciphers/ctblame/plant.c:" in b.leak
    p = _finding(b, "pass")
    assert p.text.startswith("pass 'uncprop1' introduces it (off: -fdisable-tree-uncprop1)") and p.confirmed, p
    assert "-fdisable-tree-uncprop1" in p.change
    f = _finding(b, "flag")
    assert f.confirmed and f.text.endswith("removes it")


def test_a_t_table_leak_is_in_the_source(fixture_lab, build_dir, host_plugin, tmp_path):
    from lab import commands

    out, space = tmp_path / "blame.json", tmp_path / "space.yaml"
    space.write_text("levels: [-O1, -Os]\ngcc: [-fno-tree-vectorize]\n")  # a small space: every change still leaks
    assert commands.ct_blame("rijndael", impl="ttable", toolchain="gcc-O3", build_dir=str(build_dir),
                             space=str(space), json=str(out), lab=fixture_lab) == 0
    b = ctblame.Blame(**json.loads(out.read_text()))
    kinds = [f.kind for f in b.findings]
    assert "source" in kinds and "pass" not in kinds and "flag" not in kinds, b.findings
    src = _finding(b, "source").text
    assert src.startswith("in the source: it leaks unoptimised (-O0) too") and "memory at c_src/ciphers/rijndael/" in src
    # the lookup is there at -O0: no pass search (which would spend up to MAX_PASS_PROBES rebuilds); the builds are
    # the cell, its compiler's versions, the two levels and the switch of the space, and -O0
    found = ctblame.versions_of(fixture_lab, "gcc", fixture_lab.targets["host"])
    assert b.builds == 1 + (len(found) if len(found) >= 2 else 0) + 3 + 1, b


def test_a_clean_cell_and_a_bad_space_are_one_line_errors(fixture_lab, build_dir, tmp_path, host_plugin):
    with pytest.raises(UserError, match="does not leak \\(clean\\): nothing to blame"):
        _blame(fixture_lab, "rc6/ref", "gcc-O3", build_dir)
    bad = tmp_path / "space.yaml"
    bad.write_text("levels: [-O2]\nicc: [-fast]\n")
    with pytest.raises(ConfigError, match="space.yaml: not a ct-blame flag space"):
        ctblame.load_space(bad)


@pytest.mark.parametrize("family", ["gcc", "clang"])
def test_the_pass_listing_on_a_cross_target_comes_from_its_own_compiler(fixture_lab, build_dir, family):
    """On sparc64 the pass search lists the passes of the compiler the cell is built with, in its image: gcc's
    cross compiler (sparc64-linux-gnu-gcc; plain `gcc` is not in the image: the search once listed nothing there
    and so never ran) and clang with --target (its pass numbers, which -opt-bisect-limit bisects)."""
    from .conftest import image_or_skip

    image_or_skip("sparc64")
    tc = fixture_lab.toolchain(f"{family}-O3")
    im = fixture_lab.impl("ctblame/rs")
    cell = Cell(im, tc, fixture_lab.target("sparc64"), im.key_bits, fixture_lab.profile("smoke"))
    be = ctcheck.ct_backend(fixture_lab, build_dir)
    try:
        p = ctblame.Prober(fixture_lab, cell, be, build_dir, lambda s: None)
        src = ROOT / "tests" / "fixtures" / "ciphers" / "ctblame" / "plant.c"
        if family == "gcc":
            passes = ctblame.gcc_passes(p, src)
            assert "-fdisable-tree-uncprop1" in passes and len(passes) > 50, passes[:5]
        else:
            listing = ctblame._compile_listing(p, src, ["-mllvm", "-opt-bisect-limit=-1"])
            assert ctblame.BISECT_LINE.search(listing), listing[:300]
            assert "sparc" in listing.lower(), listing[:300]
    finally:
        be.close()
