"""Every cipher folder's gen_tables.py, run with --check, finds the committed tables equal to what it
generates (the generators are discovered when the tests are collected, so a folder added later is
covered), and --check names the file and table when they are not equal."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CIPHERS = Path(__file__).resolve().parent.parent / "c_src" / "ciphers"
GENERATORS = sorted(CIPHERS.glob("*/gen_tables.py"))


@pytest.mark.parametrize("script", GENERATORS, ids=[p.parent.name for p in GENERATORS])
def test_committed_tables_are_what_the_generator_makes(script):
    p = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{script.parent.name}/gen_tables.py --check:\n{p.stdout}{p.stderr}"


def test_check_names_the_file_and_table_that_differ(tmp_path):
    """On a copy of the Rijndael folder (two C files, several tables each) with one value changed."""
    folder = tmp_path / "ciphers" / "rijndael"
    shutil.copytree(CIPHERS / "rijndael", folder)
    shutil.copy(CIPHERS / "gentables.py", folder.parent)
    ttable = folder / "ttable.c"
    src = ttable.read_text()
    i = src.index("static const uint32_t rj_td[4][256]")
    j = src.index("0x", i)
    digit = "1" if src[j + 2] == "0" else "0"  # the first table entry's leading digit, changed
    ttable.write_text(src[:j + 2] + digit + src[j + 3:])
    env = {**os.environ, "FIPS197_TXT": str(tmp_path / "absent")}  # the spec cross-check is not the point here
    p = subprocess.run([sys.executable, str(folder / "gen_tables.py"), "--check"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 1
    assert "ttable.c: table rj_td differs" in p.stderr, p.stderr
    assert "rj_te" not in p.stderr and "small.c" not in p.stderr, p.stderr
    # without the markers the file cannot be checked: an error naming it, not a pass
    ttable.write_text(src.replace("/* END GENERATED TABLES */\n", ""))
    p = subprocess.run([sys.executable, str(folder / "gen_tables.py"), "--check"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 1 and "ttable.c: needs exactly one block" in p.stderr, p.stderr
