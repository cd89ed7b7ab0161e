"""bench.mutation's bookkeeping: a survivor's changed lines read from mutmut's generated file, and which
survivors docs/testing.md explains (by name and by the change the mutant makes now)."""

from __future__ import annotations

from pathlib import Path

from lab.bench import mutation

GENERATED = '''
def x_f__mutmut_orig(a, b=2):
    c = a + b
    return c


def x_f__mutmut_1(a, b=3):
    c = a + b
    return c


def x_f__mutmut_2(a, b=2):
    c = a - b
    return c


def x_f__mutmut_3(a, b=2):
    c = a | b
    return c
'''


def test_the_changed_lines_of_a_mutant_and_of_its_signature(tmp_path: Path):
    (tmp_path / "mutants" / "lab").mkdir(parents=True)
    (tmp_path / "mutants" / "lab" / "m.py").write_text(GENERATED)
    mutation._functions.cache_clear()
    assert mutation._diff(tmp_path, "lab.m.x_f__mutmut_2") == "-    c = a + b\n+    c = a - b"
    assert mutation._diff(tmp_path, "lab.m.x_f__mutmut_1") == "-def x_f(a, b=2):\n+def x_f(a, b=3):"
    assert mutation._diff(tmp_path, "lab.m.x_f__mutmut_9") == ""  # not generated (any more)


def test_a_survivor_is_explained_only_by_a_row_that_names_its_change(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "testing.md").write_text(
        "| mutant | change | why |\n| --- | --- | --- |\n"
        "| `lab.m.x_f__mutmut_2` | `c = a - b` | b is always 0 |\n"
        "| `lab.m.x_f__mutmut_3` | `c = a \\| b` | a and b never share a bit |\n"
        "| `lab.m.x_f__mutmut_4` | `c = a * b` | stale: mutmut numbered the mutants afresh |\n")
    assert set(mutation.explained(tmp_path)) == {"lab.m.x_f__mutmut_2", "lab.m.x_f__mutmut_3",
                                                 "lab.m.x_f__mutmut_4"}
    survivors = {"lab.m.x_f__mutmut_2": "-    c = a + b\n+    c = a - b",
                 "lab.m.x_f__mutmut_3": "-    c = a + b\n+    c = a | b",
                 "lab.m.x_f__mutmut_4": "-    c = a + b\n+    c = a // b",
                 "lab.m.x_f__mutmut_5": "-    c = a + b\n+    c = None"}
    assert mutation.unexplained(tmp_path, survivors) == ["lab.m.x_f__mutmut_4", "lab.m.x_f__mutmut_5"]
    assert mutation.unexplained(tmp_path / "nowhere", {"lab.m.x_f__mutmut_2": "+ c"}) == ["lab.m.x_f__mutmut_2"]
