"""Every cipher folder's gen_tables.py (and serpent's gen/emit_sboxes.py, which writes the bitsliced S-box
circuits), run with --check, finds the committed tables equal to what it generates (the generators are
discovered when the tests are collected, so a folder added later is covered), and --check names the file and
table when they are not equal."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CIPHERS = Path(__file__).resolve().parent.parent / "c_src" / "ciphers"
GENERATORS = sorted(CIPHERS.glob("*/gen_tables.py")) + sorted(CIPHERS.glob("*/gen/emit_*.py"))


@pytest.mark.parametrize("script", GENERATORS, ids=[str(p.relative_to(CIPHERS).parent) for p in GENERATORS])
def test_committed_tables_are_what_the_generator_makes(script):
    p = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{script.relative_to(CIPHERS)} --check:\n{p.stdout}{p.stderr}"


def _copy(tmp_path, cipher):
    folder = tmp_path / "ciphers" / cipher
    shutil.copytree(CIPHERS / cipher, folder)
    shutil.copy(CIPHERS / "gentables.py", folder.parent)
    return folder


def _check(folder, tmp_path):
    env = {**os.environ, "FIPS197_TXT": str(tmp_path / "absent")}  # the spec cross-check is not the point here
    return subprocess.run([sys.executable, str(folder / "gen_tables.py"), "--check"], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.parametrize("cipher,file,table,other", [
    ("rijndael", "ttable.c", "rj_td", "rj_te"),                     # a block between markers, two C files
    ("sc2000", "sc2000_tab_ms.h", "sc2000_ms_tab", "ms_11_10_11"),  # a whole generated header
])
def test_check_names_the_file_and_table_that_differ(tmp_path, cipher, file, table, other):
    """On a copy of the folder with the first value of one table changed."""
    folder = _copy(tmp_path, cipher)
    path = folder / file
    src = path.read_text()
    j = src.index("0x", src.index(f" {table}["))
    digit = "1" if src[j + 2] == "0" else "0"
    path.write_text(src[:j + 2] + digit + src[j + 3:])
    p = _check(folder, tmp_path)
    assert p.returncode == 1
    assert f"{file}: table {table} differs" in p.stderr, p.stderr
    assert other not in p.stderr, p.stderr
    path.write_text(src)
    assert _check(folder, tmp_path).returncode == 0


def test_a_file_without_its_markers_is_an_error(tmp_path):
    folder = _copy(tmp_path, "rijndael")
    ttable = folder / "ttable.c"
    ttable.write_text(ttable.read_text().replace("/* END GENERATED TABLES */\n", ""))
    p = _check(folder, tmp_path)
    assert p.returncode == 1 and "ttable.c: needs exactly one block" in p.stderr, p.stderr


def test_serpent_check_names_the_s_box_macro_that_differs(tmp_path):
    """On a copy of serpent's folder with one gate of SB3 changed (xor for and): --check names SB3 only and writes
    nothing; the generator then restores the committed text."""
    folder = _copy(tmp_path, "serpent")
    path = folder / "bitslice.c"
    src = path.read_text()
    start = src.index("#define SB3(")
    j = src.index(" & ", start)
    path.write_text(src[:j] + " ^ " + src[j + 3:])
    p = subprocess.run([sys.executable, str(folder / "gen" / "emit_sboxes.py"), "--check"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1
    assert "S-box macro SB3 differs" in p.stderr and "SB2 " not in p.stderr and "SI3" not in p.stderr, p.stderr
    assert " ^ " in path.read_text()[j:j + 3]  # --check wrote nothing
    subprocess.run([sys.executable, str(folder / "gen" / "emit_sboxes.py")], check=True, capture_output=True)
    assert path.read_text() == src
