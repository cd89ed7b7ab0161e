"""invoke compare on real runs: a toolchain built with -O0 is found slower by a known, large factor; the
same code against itself is "no change"; the CLI prints the table and the summary."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from lab import compare, results

from .conftest import ROOT


def _checkout_with_an_O0_toolchain(tmp):
    root = tmp / "checkout"
    root.mkdir()
    (tmp / "shared").symlink_to(ROOT.parent / "shared")  # the vectors beside the checkout
    for name in ("c_src", "targets", "profiles", "dockerfiles", "matrix.yaml"):
        (root / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "toolchains", root / "toolchains")
    (root / "toolchains" / "gcc-O0.yaml").write_text("description: gcc without optimisation\ninherits: gcc-O3\n"
                                                     "flags: [-O0, -std=c11]\n")
    return root


def test_by_toolchain_finds_O0_slower_and_the_cli_prints_it(tmp_path):
    root = _checkout_with_an_O0_toolchain(tmp_path)
    env = {**os.environ, "CIPHERLAB_ROOT": str(root), "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks")}
    common = ["--results-dir", str(tmp_path / "results"), "--build-dir", str(tmp_path / "build")]
    r = subprocess.run([sys.executable, "-m", "lab", "run", "--ciphers", "rc6", "--implementations", "default", "--toolchains", "gcc-O3,gcc-O0",
                        "--profile", "quick", "--no-report", "--no-icount", "--no-progress", *common],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    (run_dir,) = results.run_dirs(tmp_path / "results")
    t = compare.compare_toolchains(results.load(run_dir))
    enc = [x for x in t.rows if x.metric == "encrypt_speed" and x.key_size == 128]
    assert len(enc) == 1 and enc[0].item.endswith("gcc-O0")
    assert enc[0].verdict == "slower" and enc[0].speedup < 0.7 and enc[0].ci_high < 1 and enc[0].p_value < 0.05
    assert t.geomean < 0.8
    cli = subprocess.run([sys.executable, "-m", "lab", "compare", run_dir.name, "--by", "toolchain", *common[:2]],
                         cwd=ROOT, capture_output=True, text=True, env=env)
    assert cli.returncode == 0, cli.stderr
    assert "slower" in cli.stdout and "geometric mean of B's speed relative to A" in cli.stdout


def test_a_run_against_itself_is_no_change(tmp_path):
    env = {**os.environ, "CIPHERLAB_LOCK_DIR": str(tmp_path / "locks")}
    common = ["--results-dir", str(tmp_path / "results"), "--build-dir", str(ROOT / "build" / "test-compare")]
    r = subprocess.run([sys.executable, "-m", "lab", "run", "--ciphers", "des", "--implementations", "default", "--toolchains", "gcc-O3",
                        "--profile", "quick", "--no-report", "--no-icount", "--no-progress", *common],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    (d,) = results.run_dirs(tmp_path / "results")
    df = results.load(d)
    t = compare.compare_frames(df, df, "cell", "a", "a")
    assert t.rows and all(x.verdict == "no change" and x.speedup == 1.0 for x in t.rows)
    assert t.geomean == 1.0
