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
    assert got == {"des/spbox@gcc-O3@host", "des/spbox@clang-O3@host", "rijndael/ttable@gcc-O3@host",
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
