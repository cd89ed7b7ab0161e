"""Bisection (lab/bisect.py) on a real scratch repository: three commits after a base, one of which adds work to
RC6's encrypt loop; found exactly on guest-instruction counts and confirmed on time; two equal revisions give
"no difference"; and a bisection over two installed compiler versions.

The timed cases run beside the suite's other worker (compiles, QEMU counts) on a machine of two vCPUs, which may
be one core's two hyperthreads: a process that shares the core with a compile runs tens of percent slower for its
whole life, so identical code can differ well past the lab's 3 % noise band (a fresh Intel VM: "cannot tell it
from either end after 20 rounds").  So the timed bisections take a band of +-TIMED_BAND (cost ratios 0.4-1.6 are
"no change") and the plant is sized far past it: a register-only multiply chain (no memory: no layout effect of
its own) of PLANT_ITERATIONS steps, about 4 cycles each, against RC6's ~100 cycles per block: the planted
revision costs about 7x the good one (6.9x measured, 2026-11-28, AMD EPYC, loaded), so a contended process of
identical code (1.6x) is still "no change" from its own end and a change from the other (6.9 / 1.6 = 4.3)."""

from __future__ import annotations

import subprocess

import pytest

from lab import bisect

GIT = ["git", "-c", "user.email=lab@example.invalid", "-c", "user.name=lab"]
PLANT_ITERATIONS = 400
# the result is thrown away: the empty asm makes each step's value needed, so the chain is neither removed nor
# folded, and the cipher's output (its known answers) is unchanged
PLANT = ("        { uint32_t w_ = a; for (int k_ = 0; k_ < %d; k_++) { w_ = w_ * 5u + 1u;"
         " __asm__ volatile(\"\" : \"+r\"(w_)); } }\n" % PLANT_ITERATIONS)
TIMED_BAND = 0.6  # identical code within 1.6x is no change; the step must cost more than 1 / (1 - 0.6) = 2.5x


@pytest.fixture(scope="module")
def repo(lab, tmp_path_factory):
    r = tmp_path_factory.mktemp("scratch") / "repo"
    r.mkdir()
    archive = subprocess.run(["git", "-C", str(lab.root), "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(r)], input=archive, check=True)
    hashes = []

    def commit(msg: str) -> None:
        subprocess.run([*GIT, "-C", str(r), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(r), "commit", "-qm", msg], check=True)
        hashes.append(subprocess.run(["git", "-C", str(r), "rev-parse", "HEAD"], capture_output=True, text=True,
                                     check=True).stdout.strip())

    subprocess.run(["git", "-C", str(r), "init", "-q"], check=True)
    commit("base")
    (r / "README.md").write_text((r / "README.md").read_text() + "\nA note.\n")
    commit("docs")
    src = r / "c_src" / "ciphers" / "rc6" / "ref.c"
    text = src.read_text()
    assert "        RC6_ENC4(1);\n" in text
    src.write_text(text.replace("        RC6_ENC4(1);\n", PLANT + "        RC6_ENC4(1);\n", 1))
    commit("rc6: extra work in the encrypt loop")
    (r / "README.md").write_text((r / "README.md").read_text() + "\nAnother note.\n")
    commit("more docs")
    return r, hashes


def test_the_commit_is_found_exactly_on_guest_instructions(lab, repo, host_plugin):
    r, h = repo
    out = bisect.bisect(lab, "rc6", good=h[0], bad=h[3], repo=r, say=lambda s: None)
    assert out.first is not None and out.first.ref == h[2] and out.first.subject.startswith("rc6: extra work")
    assert out.change > 0.5 and out.ci_low == out.ci_high == out.change  # exact: no interval
    assert out.counts == 4 and out.processes == 0
    assert out.message.startswith(f"first change at {h[2][:12]} (rc6: extra work") and h[1][:12] in out.message


def test_the_step_is_confirmed_on_time(lab, repo):
    r, h = repo
    out = bisect.bisect(lab, "rc6", good=h[0], bad=h[3], repo=r, metric="encrypt_speed", threshold=TIMED_BAND,
                        say=lambda s: None)
    assert out.first is not None and out.first.ref == h[2]
    # the plant's size: the step's speed below 1 / 2.5 of the good end's, its whole interval past the band
    assert out.change < -TIMED_BAND and out.ci_low <= out.change <= out.ci_high < -TIMED_BAND
    assert out.processes > 0 and out.counts == 0


def test_the_commit_is_found_exactly_on_a_big_endian_container_target(lab, repo, host_plugin):
    """Revisions built in the sparc64 image (each worktree mounted in its own container), counted here."""
    from .conftest import image_or_skip

    image_or_skip("sparc64", build_when_required=True)
    r, h = repo
    out = bisect.bisect(lab, "rc6", target="sparc64", good=h[0], bad=h[3], repo=r, say=lambda s: None)
    assert out.first is not None and out.first.ref == h[2] and out.change > 0.5
    assert out.counts == 4 and out.processes == 0 and out.builds >= 4


def test_two_equal_revisions_are_no_difference(lab, repo, host_plugin):
    r, h = repo
    exact = bisect.bisect(lab, "rc6", good=h[0], bad=h[1], repo=r, say=lambda s: None)
    assert exact.first is None and exact.message.startswith("no difference between good and bad")
    timed = bisect.bisect(lab, "rc6", good=h[0], bad=h[1], repo=r, metric="encrypt_speed", threshold=TIMED_BAND,
                          say=lambda s: None)
    assert timed.first is None and timed.message.startswith("no significant difference between good and bad")


def test_a_bisection_over_two_installed_compiler_versions(lab, host_plugin):
    for cc in ("gcc-11", "gcc-12"):
        if subprocess.run(["which", cc], capture_output=True).returncode:
            pytest.fail(f"{cc} is not installed: ./cipherlab installs it")
    out = bisect.bisect(lab, "serpent", toolchains=["gcc-1[12]-O3"], say=lambda s: None)
    assert out.probes[:2] == ["gcc-11-O3", "gcc-12-O3"] and out.counts == 2
    g, b = out.good.value, out.bad.value  # exact guest instructions per block of each version
    assert g > 1000 and b > 1000
    if g == b:
        assert out.first is None and out.message.startswith("no difference between good and bad")
    else:  # two versions: the change is at the second, by exactly the counts' ratio
        assert out.first.ref == "gcc-12-O3" and out.change == pytest.approx(b / g - 1)


def test_bad_arguments_are_one_line_errors(lab):
    from lab.errors import UserError

    with pytest.raises(UserError, match="either --good and --bad"):
        bisect.bisect(lab, "rc6", say=lambda s: None)
    with pytest.raises(UserError, match="needs two or more"):
        bisect.bisect(lab, "rc6", toolchains=["gcc-11-O3"], say=lambda s: None)
    with pytest.raises(UserError, match="mix compiler families"):
        bisect.bisect(lab, "rc6", toolchains=["gcc-11-O3", "clang-14-O3"], say=lambda s: None)


def test_bench_history_scratch_range_plants_one_step_among_its_commits(lab, tmp_path):
    from lab.bench import history as bench_history

    h = bench_history._scratch(lab.root, tmp_path / "repo", 6, 4)
    assert len(h) == 7  # the base and six more
    changed = [subprocess.run(["git", "-C", str(tmp_path / "repo"), "diff", "--name-only", a, b], capture_output=True,
                              text=True, check=True).stdout.split() for a, b in zip(h, h[1:])]
    assert changed[3] == ["c_src/ciphers/rc6/ref.c"] and all(c == ["README.md"] for i, c in enumerate(changed) if i != 3)
    assert bisect.revisions(tmp_path / "repo", h[0], h[-1])[3] == (h[4], "rc6: extra work")
