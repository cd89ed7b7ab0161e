"""`python -m lab verify` and the kat gate beyond the vectors."""

import subprocess
import sys

from lab.verify import verify


def test_multiblock_bug_is_caught_although_every_vector_passes(fixture_lab, build_dir):
    (r,) = verify(fixture_lab, "lastblockdes", fixture_lab.vectors_dir / "des.kat", build_dir=build_dir)
    assert r.passed == r.records  # single-block vectors cannot see the bug...
    assert r.failed >= 1 and not r.ok  # ...the n-block consistency check does
    assert any("single-block calls" in f["reason"] for f in r.fails)


def test_cli_exit_status_and_count(lab):
    ok = subprocess.run([sys.executable, "-m", "lab", "verify", "des", str(lab.vectors_dir / "des.kat")],
                        capture_output=True, text=True, cwd=lab.root)
    assert ok.returncode == 0, ok.stderr
    assert "305 of 305 records passed" in ok.stdout
    # vectors of another cipher (128-bit keys): no record applies, so DES is not verified: non-zero
    bad = subprocess.run([sys.executable, "-m", "lab", "verify", "des", str(lab.vectors_dir / "idea.kat")],
                         capture_output=True, text=True, cwd=lab.root)
    assert bad.returncode != 0
    unknown = subprocess.run([sys.executable, "-m", "lab", "verify", "des", "nope.kat"],
                             capture_output=True, text=True, cwd=lab.root)
    assert unknown.returncode == 2 and "nope.kat" in unknown.stderr
