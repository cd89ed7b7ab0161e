"""The three wrong answers of issue 46, each pinned: history's x labels by compiler, the write-profiles choice."""

from __future__ import annotations

from types import SimpleNamespace

import yaml

from lab import flags, history


def _row(text: str, compiler: str = "gcc"):
    return SimpleNamespace(compiler_version=text, compiler=compiler, run_id="20261128T1200-x", revision=None)


def test_history_by_compiler_labels_each_version_on_its_own():
    labels = [history._x_label(_row(t), "compiler") for t in
              ("gcc (Debian 12.2.0-14) 12.2.0", "gcc (Debian 12.3.0-1) 12.3.0", "gcc (Debian 9.5.0-3) 9.5.0")]
    assert labels == ["gcc 12.2.0", "gcc 12.3.0", "gcc 9.5.0"]
    assert history._x_label(_row("Debian clang version 16.0.6 (15)", "clang"), "compiler") == "clang 16.0.6"


_WRITE = """
import sys
from pathlib import Path
from types import SimpleNamespace as N
from lab import flags

def cell(cipher, won):
    entries = [N(candidate=N(flags=f), status="winner" if f == won else "tied")
               for f in [("-O2", "-funroll-loops"), ("-O3", "-march=native"), ("-O3",)]]
    return N(impl=N(cipher=cipher, id=cipher + "/ref"), target=N(name="host"), entries=entries)

found = [cell("rc6", ("-O3", "-march=native")), cell("serpent", ("-O2", "-funroll-loops")), cell("mars", ("-O3",))]
base = N(name="gcc-O3", description="gcc -O3")
(p,) = flags.write_winner_profiles(None, base, found, "target", folder=Path(sys.argv[1]))
print(p.read_text())
"""


def test_write_profiles_with_a_tie_of_wins_is_the_same_under_every_hash_seed(tmp_path):
    """Three flag sets winning one cell each: the profile written is the first cell's winner, whatever the hash
    seed (the old max(set(wins), key=wins.count) followed the seed)."""
    import os
    import subprocess
    import sys

    outs = set()
    for seed in range(5):
        r = subprocess.run([sys.executable, "-c", _WRITE, str(tmp_path)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)})
        outs.add(r.stdout)
    assert len(outs) == 1
    assert yaml.safe_load(outs.pop())["add_flags"] == ["-O3", "-march=native"]
