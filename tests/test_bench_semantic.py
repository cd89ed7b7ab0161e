"""bench.mutation --semantic: the catalogue is valid and applies to the code as it is; one plausible bug is caught
by the number tests and a harmless change is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lab.bench import semantic
from lab.errors import UserError

ROOT = Path(__file__).resolve().parent.parent


def test_the_catalogue_is_valid_applies_and_covers_every_module_that_judges_numbers():
    muts = semantic.catalogue(ROOT)
    assert len(muts) >= 30
    for name, m in muts.items():
        assert m.models and "\n" not in m.models, name
    files = {m.file for m in muts.values()}
    for module in ("lab/stats.py", "lab/quantities.py", "lab/results.py", "lab/compare.py", "lab/kat.py",
                   "lab/measure.py", "lab/report/analysis.py", "lab/report/published.py"):
        assert module in files, module
    assert set(semantic.number_tests(ROOT)) >= {"tests/test_values_separating.py", "tests/test_gate_defects.py"}


def _fake_root(tmp: Path, entry: str) -> Path:
    root = tmp / "root"
    (root / "tests" / "mutations").mkdir(parents=True)
    (root / "lab").mkdir()
    (root / "lab" / "x.py").write_text("a = 1\nb = 1\n")
    (root / "tests" / "mutations" / "01-x.yaml").write_text(entry)
    return root


@pytest.mark.parametrize("entry,words", [
    ("models: m\nfile: lab/x.py\nfind: 'c = 1'\nreplace: 'c = 2'\n", "occurs 0 times in lab/x.py"),
    ("models: m\nfile: lab/x.py\nfind: ' = 1'\nreplace: ' = 2'\n", "occurs 2 times in lab/x.py"),
    ("models: m\nfile: lab/x.py\nfind: 'a = 1'\nreplace: 'a = 1'\n", "changes nothing"),
    ("models: m\nfile: lab/x.py\nfind: 'a = 1'\nreplace: 'a = 2'\nwhy: x\n", "key 'why': Extra inputs are not permitted"),
])
def test_a_stale_or_bad_entry_is_named(tmp_path, entry, words):
    with pytest.raises(UserError) as e:
        semantic.catalogue(_fake_root(tmp_path, entry))
    assert "tests/mutations/01-x.yaml" in str(e.value) and words in str(e.value)


def test_a_plausible_bug_is_caught_and_a_harmless_change_is_not(tmp_path):
    from lab.config import Lab

    tree = semantic._tree(ROOT, tmp_path / "tree", Lab().shared)
    muts = semantic.catalogue(ROOT)
    bug = next(m for m in muts.values() if m.replace == 'return float(a[0]) if estimator == "min" else float(np.mean(a))')
    quick = ["tests/test_stats.py::test_median_estimate_uses_the_order_statistic_interval"]
    semantic.baseline(tree, quick, timeout=600)  # unmutated, the test passes
    r = semantic._run_one(tree, bug, quick, timeout=600)
    assert r["caught"] and r["by"].startswith("tests/test_stats.py::")
    harmless = semantic.Mutation(models="a comment reworded", file="lab/stats.py",
                                 find="# ----------------------------------------------------------------- NIST 1999",
                                 replace="# NIST 1999")
    assert not semantic._run_one(tree, harmless, quick, timeout=600)["caught"]
    assert (tree / "lab" / "stats.py").read_text() == (ROOT / "lab" / "stats.py").read_text()  # restored
    (tree / "lab" / "stats.py").write_text("raise ImportError('broken')\n")  # a tree whose tests fail unmutated
    with pytest.raises(UserError, match="the number tests fail without any mutation"):
        semantic.baseline(tree, quick, timeout=600)
    shutil.rmtree(tree)
