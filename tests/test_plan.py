"""Matrix expansion: axes product, exclude and include rules, key sizes."""

from lab.plan import expand
from lab.schema import MatrixFile, Rule


def ids(cells):
    return {c.id for c in cells}


def test_product_minus_exclude_plus_include(lab):
    m = MatrixFile(ciphers=["des", "rijndael"], toolchains=["gcc-O3", "clang-O3"], targets=["host"],
                   exclude=[Rule(cipher="rijndael", toolchain="clang-O3")],
                   include=[Rule(cipher="rijndael", implementation="small", toolchain="clang-O3")])
    got = ids(expand(lab, m))
    assert got == {"des/sp64@gcc-O3@host", "des/sp64@clang-O3@host", "rijndael/ttable@gcc-O3@host",
                   "rijndael/small@clang-O3@host"}


def test_implementations_all_and_globs(lab):
    m = MatrixFile(ciphers=["sc2000"], implementations="ours", toolchains=["gcc-O3"],
                   exclude=[Rule(implementation="sbox16*")])
    got = ids(expand(lab, m))
    assert len(got) == len(lab.cipher("sc2000").ours()) - 1
    assert not any("sbox16_16" in i for i in got)


def test_key_sizes_intersect_with_what_the_cipher_supports(lab):
    m = MatrixFile(ciphers=["rijndael", "des"], toolchains=["gcc-O3"], key_sizes=[128, 256])
    cells = {c.impl.cipher: c for c in expand(lab, m)}
    assert cells["rijndael"].key_sizes == (128, 256)
    assert cells["des"].key_sizes == (64,)  # none of the wanted sizes: its own


def test_cells_that_cannot_exist_are_planned_unavailable_with_the_reason(lab):
    m = MatrixFile(ciphers=["rijndael"], implementations=["rijndael/aesni"], toolchains=["icc-like"],
                   targets=["sparc64", "mips64", "host"])
    by = {c.target.name: c for c in expand(lab, m)}
    assert "runs on x86_64, i386, not sparc64" in by["sparc64"].unavailable
    assert by["host"].unavailable is None
    m = MatrixFile(ciphers=["des"], toolchains=["icc-like"], targets=["mips64"])
    (cell,) = expand(lab, m)
    assert "-flto" in cell.unavailable  # targets/mips64.yaml: clang -flto does not link there


def test_a_compile_step_depends_on_the_headers_beside_every_source_of_its_implementation(lab, tmp_path):
    # 3des/bitslice_avx2.c includes ../des/des_bitslice_body.h: a change there must rebuild the 3DES objects
    from lab.buildplan import plan_build

    impl = lab.cipher("3des").impl("bitslice_avx2")
    plan = plan_build(impl, lab.toolchain("gcc-O3"), lab.target("host"), "timing", root=lab.root, build_dir=tmp_path)
    step = next(s for s in plan.steps if s.output.name == "bitslice_avx2.o")
    body = lab.root / "c_src" / "ciphers" / "des" / "des_bitslice_body.h"
    assert body.is_file() and body.resolve() in {p.resolve() for p in step.inputs}
