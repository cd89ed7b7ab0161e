"""Per-cell drill-down for real: a run records the disassembly of each cell's encrypt and key-setup functions
(found through the descriptor's relocations, objdump through the cell's backend), LTO builds fall back to the
linked program, and the report writes a page per cell and a diff page per implementation and target."""

from __future__ import annotations

import re

import pytest

from lab import disasm
from lab.publish import build_report
from lab.report import errors_in
from lab.run import RunRequest, run

from .conftest import ROOT, image_or_skip, peer_on_host


@pytest.fixture(scope="module")
def dd_run(lab, tmp_path_factory, request):
    """rc6 (its key setup serves both directions) and rijndael/ttable (its key expansion is in another object)
    with gcc-O3, clang-O3 and icc-like (-flto), on the host; with guest-instruction counts where the host plugin
    can be had (as in CI), so that test_a_cell_page_shows_its_instruction_counts, which takes it, sees them."""
    try:
        plugin = request.getfixturevalue("host_plugin")
    except pytest.skip.Exception:
        plugin = None
    tmp = tmp_path_factory.mktemp("drilldown")
    m = tmp / "matrix.yaml"
    m.write_text("ciphers: [rc6, rijndael]\ntoolchains: [gcc-O3, clang-O3, icc-like]\ntargets: [host]\n"
                 "profile: smoke\n")
    out = run(lab, RunRequest(matrix=m, results_dir=tmp / "results", build_dir=tmp / "build",
                              icount=plugin is not None))
    assert out.counts.get("ok") == 6, out.counts
    return out.run_dir


def _ev(run_dir, cell: str) -> dict:
    return disasm.load(run_dir)[cell]  # stored compressed: <run>/asm/<cell>.json.gz


@pytest.mark.parametrize("toolchain", ["gcc-O3", "clang-O3"])
def test_encrypt_and_key_setup_are_found_through_the_descriptor_with_real_assembly(dd_run, toolchain):
    ev = _ev(dd_run, f"rc6/ref@{toolchain}@host")
    assert ev["source"] == "objects" and ev["pointer_bytes"] == 8 and ev["note"] is None
    f = ev["functions"]
    assert f["encrypt"]["symbol"] == "rc6_encrypt" and f["decrypt"]["symbol"] == "rc6_decrypt"
    assert re.search(r"^\s*[0-9a-f]+:\s+rol\s", f["encrypt"]["asm"], re.M), "RC6's rotations are x86 rol"
    assert f["encrypt"]["instructions"] == disasm.instructions(f["encrypt"]["asm"]) > 50
    assert f["set_encrypt_key"]["symbol"] == "rc6_set_key" and "ret" in f["set_encrypt_key"]["asm"]
    assert f["set_decrypt_key"] == {"symbol": "rc6_set_key", "object": "ref.o", "same_as": "set_encrypt_key"}
    assert ev["objdump"] == "objdump" and ev["objdump_version"].startswith("GNU objdump")
    # a key setup defined in another object of the implementation (relocation against an undefined symbol)
    rj = _ev(dd_run, f"rijndael/ttable@{toolchain}@host")["functions"]
    assert rj["set_encrypt_key"]["symbol"] == "cl_rj_expand_key" and rj["set_encrypt_key"]["object"] == \
        "rijndael_core.o"
    assert rj["encrypt"]["symbol"] == "rj_encrypt" and rj["set_decrypt_key"]["symbol"] == "rj_set_decrypt_key"
    assert rj["encrypt"]["asm"] != rj["decrypt"]["asm"]


def test_lto_objects_hold_ir_so_the_linked_program_is_read(dd_run):
    ev = _ev(dd_run, "rc6/ref@icc-like@host")
    assert ev["source"] == "linked program" and "from the linked timing program" in ev["note"]
    assert "file format not recognized" in ev["note"]  # why the objects could not be read: LLVM IR
    f = ev["functions"]
    assert f["encrypt"]["symbol"] == "rc6_encrypt" and re.search(r"\srol\s", f["encrypt"]["asm"])
    assert f["set_encrypt_key"]["symbol"] == "rc6_set_key"


def test_a_missing_objdump_is_recorded_and_never_fails(lab, dd_run):
    from lab.backends.host import HostBackend
    from lab.plan import Cell

    target = lab.target("host").model_copy(update={"name": "nowhere", "triple": "nowhere-linux-gnu",
                                                   "arch": "nowhere", "runner": "qemu-user"})
    cell = Cell(lab.impl("rc6/ref"), lab.toolchain("gcc-O3"), target, (128,), lab.profile("smoke"))
    objects = sorted((dd_run.parent.parent.parent / "build").glob("host/gcc-O3/rc6/ref/ref.o"))
    ev = disasm.evidence(HostBackend(lab.root), cell, objects, None)
    assert ev["objdump"] == "nowhere-linux-gnu-objdump" and ev["source"] is None and ev["functions"] == {}
    assert ev["note"].startswith("no disassembly: nowhere-linux-gnu-objdump -t -r failed")


@pytest.fixture(scope="module")
def dd_report(lab, dd_run, tmp_path_factory):
    return build_report(lab, [dd_run], results_dir=dd_run.parent.parent,
                        reports_dir=tmp_path_factory.mktemp("dd-report"))


def test_the_report_links_a_page_per_cell_and_a_diff_per_implementation(dd_report):
    html = dd_report.read_text()
    assert not errors_in(html)
    out = dd_report.parent
    assert 'href="cells/rc6_ref@gcc-O3@host.html"' in html and 'href="diff/rc6_ref@host.html"' in html
    assert len(list((out / "cells").glob("*.html"))) == 6
    page = (out / "cells" / "rc6_ref@gcc-O3@host.html").read_text()
    assert "rc6_encrypt" in page and "rc6_set_key" in page and re.search(r"\srol\s", page)
    assert "code bytes: text" in page and "static tables (bytes)" in page
    figures = page[page.index("<h2>Every figure</h2>"):page.index("<h2>Code and table bytes</h2>")]
    for label in ("encrypt", "decrypt", "key setup", "encryption key setup", "encrypt per block"):
        assert f"<td>{label}</td>" in figures, label
    assert figures.count("<tr>") >= 10
    diff = (out / "diff" / "rc6_ref@host.html").read_text()
    assert "gcc-O3 (base)" in diff and "gcc-O3 → clang-O3" in diff and "gcc-O3 → icc-like" in diff
    assert diff.count('<span class="add">+') > 10 and diff.count('<span class="del">-') > 10
    assert re.search(r"\d,\d{3},\d{3} Kbit/s", diff), "the measured speeds stand beside the diffs"
    why = diff[diff.index("<h2>Why</h2>"):diff.index("<h2>Measured</h2>")]  # before the numbers and the diffs
    assert re.search(r"<b>clang-O3</b> against gcc-O3: clang-O3 encrypts at \d+\.\d\d× the speed of gcc-O3", why)
    assert "the encrypt function, static: " in why
    assert (out / "diff" / "rijndael_ttable@host.html").exists()


def test_a_cell_page_shows_its_instruction_counts(dd_report, host_plugin):
    page = (dd_report.parent / "cells" / "rc6_ref@gcc-O3@host.html").read_text()
    assert "insn_encrypt_per_block" in page


def test_a_peer_library_records_its_adapters_functions_and_says_so(lab, build_dir):
    from lab.backends.host import HostBackend
    from lab.build import Builder
    from lab.plan import Cell

    impl = lab.impl("twofish/nettle")
    if not peer_on_host(impl.peer):
        pytest.skip(f"peer library not installed: {impl.peer.package}")
    backend = HostBackend(lab.root)
    r = Builder(lab.root, build_dir, backend).build_one(impl, lab.toolchain("gcc-O3"), lab.target("host"), "timing")
    assert r.ok, r.log
    cell = Cell(impl, lab.toolchain("gcc-O3"), lab.target("host"), (128,), lab.profile("smoke"))
    ev = disasm.evidence(backend, cell, list(r.plan.objects), r.program)
    assert ev["source"] == "objects" and "the adapter's functions" in ev["note"] and "-lnettle" in ev["note"]
    f = ev["functions"]
    assert f["encrypt"]["object"] == "nettle.o" and f["encrypt"]["instructions"] > 0
    # the call into the library is named by its relocation (objdump -d -r)
    assert re.search(r"^\s*[0-9a-f]+: R_X86_64_\w+\s+nettle_twofish_encrypt", f["encrypt"]["asm"], re.M)
    assert f["encrypt"]["instructions"] == disasm.instructions(f["encrypt"]["asm"]) < \
        len(f["encrypt"]["asm"].splitlines())


# ------------------------------------------------------------ a cross target in its container
@pytest.mark.container
@pytest.mark.parametrize("target, width, insn", [("i386", 4, "rol"), ("sparc64", 8, "sll")])
def test_a_cross_target_is_disassembled_by_its_images_binutils(lab, tmp_path, target, width, insn):
    """i386: 32-bit pointers and REL relocations (the addend in the descriptor's bytes); sparc64: big-endian."""
    image_or_skip(target)
    m = tmp_path / "matrix.yaml"
    m.write_text(f"ciphers: [rc6]\ntoolchains: [gcc-O3]\ntargets: [{target}]\nprofile: smoke\nbackend: container\n")
    out = run(lab, RunRequest(matrix=m, results_dir=tmp_path / "results", build_dir=ROOT / "build" / "test-drilldown",
                              icount=False))
    assert out.counts.get("ok") == 1, out.counts
    ev = _ev(out.run_dir, f"rc6/ref@gcc-O3@{target}")
    triple = lab.target(target).triple
    assert ev["objdump"] == f"{triple}-objdump" and ev["source"] == "objects", ev["note"]
    assert ev["pointer_bytes"] == width
    f = ev["functions"]
    assert f["encrypt"]["symbol"] == "rc6_encrypt" and f["set_encrypt_key"]["symbol"] == "rc6_set_key"
    assert re.search(rf"\s{insn}\s", f["encrypt"]["asm"])


def test_the_static_shape_counts_reads_writes_branches_and_calls():
    """x86 AT&T: a memory operand as source is a read, as the last operand a write; lea reads nothing; jmp is no
    conditional branch; SPARC/MIPS by mnemonic."""
    x86 = """0000000000001139 <f>:
    1139:\tmov    0x8(%rdi),%eax
    113c:\tmov    %eax,(%rsi)
    113e:\tadd    $0x1,%eax
    1141:\tjne    1150 <f+0x17>
    1143:\tcall   1000 <g>
\t\t\t1144: R_X86_64_PLT32\tg-0x4
    1148:\tlea    0x10(%rdi),%rax
    114c:\txor    0x400(,%rax,4),%edx
    1153:\tjmp    1160
    1155:\tret
"""
    assert disasm.shape(x86) == {"instructions": 9, "reads": 2, "writes": 1, "branches": 1, "calls": 1}
    mips = "  10:\tlw\tv0,0(a0)\n  14:\tsw\tv0,4(a1)\n  18:\tbnez\tv0,30 <f+0x30>\n  1c:\tjal\t0 <g>\n"
    assert disasm.shape(mips) == {"instructions": 4, "reads": 1, "writes": 1, "branches": 1, "calls": 1}
