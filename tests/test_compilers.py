"""Compiler versions as data (toolchains/versions.yaml): profiles made from version lines, errors naming file and
key, glob selection, a missing version `unavailable` naming its package, `lab list` and `compilers.install`, and
old and new versions of each family really building and passing their known answers (on the host; gcc-14 in the
Debian 13 image when a container engine is there).

The host tests need gcc-11 and clang-16 (`./cipherlab compilers.install gcc-11,clang-16`; ./cipherlab installs
them); they fail, naming that command, when they are missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from lab import compilers, results
from lab.config import ConfigError, Lab
from lab.errors import UsageError
from lab.run import RunRequest, plan_run, run

from .conftest import ROOT, image_or_skip

OLD_NEW = ["gcc-11-O3", "gcc-12-O3", "clang-14-O3", "clang-16-O3"]  # one old and one new version of each family


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def lab_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def need(*exes: str) -> None:
    missing = [e for e in exes if subprocess.run(["sh", "-c", f"command -v {e}"], capture_output=True).returncode]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: ./cipherlab compilers.install {','.join(missing)}")


# ------------------------------------------------------------------ versions as data
def test_each_version_line_is_a_profile_of_its_variant(lab):
    versions = yaml.safe_load((ROOT / "toolchains" / "versions.yaml").read_text())
    for line in versions["versions"]:
        name = f"{line['family']}-{line['version']}"
        for variant, bases in versions["variants"].items():
            tc, base = lab.toolchain(f"{name}-{variant}"), lab.toolchain(bases[line["family"]])
            assert (tc.cc, tc.package, tc.family_version) == (name, name, line["version"])
            assert tc.flags == base.flags and tc.family == base.family == line["family"]
            assert tc.targets == tuple(line["found"])
            assert tc.reference_tables == ()  # a newer gcc is not NIST's 1999 gcc
            assert lab.version_of(tc.name).name == name
    # the file profiles and the default run are what they were
    assert {"gcc-O3", "clang-O3", "icc-like", "gcc-djgpp1999", "sanitize"} <= set(lab.toolchain_names())
    assert lab.version_of("gcc-O3") is None and lab.toolchain("gcc-O3").cc == "gcc"
    m = lab.matrix()
    assert (m.toolchains, m.targets, m.backend) == (["gcc-O3", "clang-O3", "openjdk17-c2"], ["host"],
                                                    "host")


VERSIONS_OK = """\
    variants:
      O3: {gcc: base}
    versions:
      - {family: gcc, version: "11", found: [host]}
    """


def _tmp_lab(tmp_path: Path, versions: str) -> Lab:
    write(tmp_path / "toolchains" / "base.yaml", "description: b\nfamily: gcc\ncc: gcc\nflags: [-O3]\n")
    write(tmp_path / "targets" / "host.yaml", (ROOT / "targets" / "host.yaml").read_text())
    write(tmp_path / "toolchains" / "versions.yaml", versions)
    return Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)


@pytest.mark.parametrize("versions, key, words", [
    (VERSIONS_OK.replace("found: [host]", "found: [host], pakage: gcc-11"), "versions.0.pakage", "unknown key"),
    (VERSIONS_OK.replace("found: [host]", "found: [hots]"), "versions.0.found.0", "'hots'"),
    (VERSIONS_OK.replace('version: "11"', 'version: "eleven"'), "versions.0.version", "eleven"),
    (VERSIONS_OK.replace("{gcc: base}", "{gcc: nobase}"), "variants.O3.gcc", "no toolchain profile 'nobase'"),
    (VERSIONS_OK + '  - {family: gcc, version: "11", found: [host]}\n', "versions", "gcc-11 is listed twice"),
    (VERSIONS_OK.replace("versions:", "verions:"), "verions", "unknown key"),
])
def test_bad_versions_file_names_file_and_key(tmp_path, versions, key, words):
    with pytest.raises(ConfigError) as e:
        _tmp_lab(tmp_path, versions)
    msg = str(e.value)
    assert str(tmp_path / "toolchains" / "versions.yaml") in msg and f"key '{key}'" in msg and words in msg, msg


def test_a_version_profile_may_not_shadow_a_profile_file(tmp_path):
    write(tmp_path / "toolchains" / "gcc-11-O3.yaml", "description: x\ninherits: base\n")
    with pytest.raises(ConfigError, match="makes profile 'gcc-11-O3'.*defines too"):
        _tmp_lab(tmp_path, VERSIONS_OK)
    lab = _tmp_lab(tmp_path / "ok", VERSIONS_OK)  # a new version is one line, no Python
    assert lab.toolchain("gcc-11-O3").cc == "gcc-11"


# ------------------------------------------------------------------------ globs
def test_globs_select_toolchains(lab, tmp_path):
    clangs = sorted(n for n in lab.toolchain_names() if n.startswith("clang-1") and n.endswith("-O3"))
    assert len(clangs) >= 5
    assert lab.toolchains_matching(["clang-1*-O3"]) == clangs
    assert lab.toolchains_matching(["gcc-O3", "gcc-1[12]-O3", "gcc-O3"]) == ["gcc-O3", "gcc-11-O3", "gcc-12-O3"]
    with pytest.raises(UsageError, match="glob 'clang-2\\*-O3' matches no toolchain profile"):
        lab.toolchains_matching(["clang-2*-O3"])
    # the run plans exactly the matching profiles' cells
    _, cells = plan_run(lab, RunRequest(ciphers=["rc6"], implementations="default", toolchains=["clang-1[46]-O3"], results_dir=tmp_path,
                                        build_dir=tmp_path))
    assert [c.toolchain.name for c in cells] == ["clang-14-O3", "clang-16-O3"]
    # a matrix file takes globs too, and a glob that matches nothing names the file and key
    m = write(tmp_path / "m.yaml", "ciphers: [rc6]\nimplementations: default\ntoolchains: ['gcc-*-O3']\n")
    assert lab.matrix(m).toolchains == [n for n in lab.toolchain_names() if n.startswith("gcc-") and
                                        n.endswith("-O3") and n != "gcc-O3"]
    m.write_text("ciphers: [rc6]\nimplementations: default\ntoolchains: ['icx-*']\n")
    with pytest.raises(ConfigError, match="key 'toolchains\\[0\\]'.*'icx-\\*' matches no toolchain"):
        lab.matrix(m)


def test_versions_in_images_need_a_backend_that_uses_images(lab, tmp_path):
    def plan(backend):
        _, cells = plan_run(lab, RunRequest(ciphers=["rc6"], implementations="default", toolchains=["gcc-14-O3", "gcc-O3"],
                                            targets=["x86_64-trixie"], backend=backend, results_dir=tmp_path,
                                            build_dir=tmp_path))
        return {c.toolchain.name: c.unavailable for c in cells}

    host = plan("host")
    assert host["gcc-14-O3"] == ("gcc 14 is found in the image of x86_64-trixie (cipherlab/x86_64-trixie), and the "
                                 "host backend builds with this machine's compilers: use --backend mixed (or "
                                 "container)")
    assert host["gcc-O3"] is None  # a file profile on the host backend is what it always was
    assert plan("mixed") == plan("container") == {"gcc-14-O3": None, "gcc-O3": None}
    _, cells = plan_run(lab, RunRequest(ciphers=["rc6"], implementations="default", toolchains=["gcc-11-O3", "gcc-12-O3"], targets=["host"],
                                        backend="container", results_dir=tmp_path, build_dir=tmp_path))
    assert [c.unavailable for c in cells] == [
        "gcc 11 is found on this machine, and the container backend builds target host in the x86_64 image, which "
        "lacks it: use --backend mixed (or host)", None]


def test_the_compilers_preset_runs_each_version_where_it_is_found(lab, tmp_path):
    _, cells = plan_run(lab, RunRequest(preset="compilers", results_dir=tmp_path,
                                        build_dir=tmp_path))
    m = lab.matrix(ROOT / "presets" / "compilers.yaml")
    assert m.backend == "mixed" and m.targets == ["host", "x86_64-trixie"] and m.key_sizes == [128]
    round1 = sorted(n for n, c in lab.ciphers.items() if c.round1)
    assert sorted({c.impl.cipher for c in cells}) == round1 and len(round1) == 15
    assert all(c.impl.default for c in cells)
    versions = lab.compiler_versions.values()
    assert sorted({c.toolchain.name for c in cells}) == sorted(f"{v.name}-O3" for v in versions)
    for c in cells:
        found = c.target.name in lab.version_of(c.toolchain.name).found
        assert (c.unavailable is None) == found, c.id
    assert len(cells) == 15 * len(versions) * 2


def test_glob_matching_nothing_is_a_one_line_error():
    r = lab_cli("run", "--ciphers", "rc6", "--toolchains", "clang-2*-O3", "--no-report")
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.strip().splitlines() == [
        "error: option --toolchains: the glob 'clang-2*-O3' matches no toolchain profile (profiles: "
        + ", ".join(Lab().toolchain_names()) + "; `python -m lab list` shows them)"]


# -------------------------------------------------------------- missing versions
def _lab_with_versions(tmp_path: Path, lines: str) -> Lab:
    """The real checkout with another versions.yaml (everything else linked)."""
    root = tmp_path / "checkout"
    root.mkdir()
    for p in ROOT.iterdir():
        if p.name not in ("toolchains", "build", "results", "reports", ".git", ".venv"):
            (root / p.name).symlink_to(p)
    for p in (ROOT / "toolchains").glob("*.yaml"):
        if p.name != "versions.yaml":
            (root / "toolchains").mkdir(exist_ok=True)
            (root / "toolchains" / p.name).symlink_to(p)
    write(root / "toolchains" / "versions.yaml", "variants:\n  O3: {gcc: gcc-O3, clang: clang-O3}\nversions:\n"
          + lines)
    return Lab(root=root, shared=ROOT.parent / "shared")


def test_a_version_that_is_not_installed_is_unavailable_naming_its_package(tmp_path):
    # gcc-9 is not in Debian 12: never installed here, whatever else is
    lab = _lab_with_versions(tmp_path, '  - {family: gcc, version: "9", found: [host]}\n'
                                       '  - {family: gcc, version: "14", found: [x86_64-trixie]}\n')
    out = run(lab, RunRequest(ciphers=["rc6"], implementations="default", toolchains=["gcc-9-O3", "gcc-14-O3"], profile="smoke",
                              icount=False, results_dir=tmp_path / "results", build_dir=tmp_path / "build"))
    _, cells = results.read_run(out.run_dirs[0])
    by = {c.toolchain: c for c in cells}
    assert {c.status for c in cells} == {"unavailable"}
    assert by["gcc-9-O3"].reason == "compiler gcc-9 not found (toolchain gcc-9-O3): install gcc-9"
    assert by["gcc-14-O3"].reason.startswith("gcc 14 (gcc-14, Debian package gcc-14) is not found for target host; "
                                             "toolchains/versions.yaml has it for x86_64-trixie")
    (place,) = [p for p in compilers.where_found(lab) if p.version.name == "gcc-9"]
    assert place.version_line is None and "not installed" in place.note and "compilers.install gcc-9" in place.note
    plan = compilers.install_plan(lab, compilers.resolve(lab, ["gcc-9-O3", "gcc-1*"]))
    assert plan.packages == ["gcc-9"] and plan.images == ["x86_64-trixie"]
    assert plan.apt_command[-1] == "gcc-9" and "install" in plan.apt_command


def test_compilers_install_dry_run_and_bad_names():
    r = lab_cli("compilers-install", "--dry-run", "gcc-12", "clang-17-O3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["gcc-12: already installed", "would build the images of x86_64-trixie, "
                                     "sparc64-trixie, mips64-trixie (these versions are not packaged for the host's "
                                     "Debian)"]
    r = lab_cli("compilers-install", "gcc-99")
    assert r.returncode == 2 and r.stderr.startswith("error: 'gcc-99' names no compiler version") \
        and len(r.stderr.splitlines()) == 1, r.stderr
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "invoke"), "compilers.install", "--dry-run", "gcc-12,gcc-14"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("gcc-12: already installed\n"), (r.stdout, r.stderr)


# ------------------------------------------------------- real builds, known answers
def test_list_shows_each_version_with_its_version_line(lab):
    need("gcc-11", "gcc-12", "clang-14", "clang-16")
    r = lab_cli("list")
    assert r.returncode == 0, r.stderr
    for exe in ("gcc-11", "gcc-12", "clang-14", "clang-16"):
        line = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        assert f"\n  {exe} on host: {line}\n" in r.stdout
    assert "\n  gcc-14 on x86_64-trixie (image cipherlab/x86_64-trixie): " in r.stdout


def test_old_and_new_versions_of_each_family_pass_known_answers(lab, tmp_path):
    need("gcc-11", "gcc-12", "clang-14", "clang-16")
    out = run(lab, RunRequest(ciphers=["rc6", "idea"], implementations="default", toolchains=OLD_NEW, profile="smoke",
                              icount=False,
                              results_dir=tmp_path / "results", build_dir=tmp_path / "build"))
    meta, cells = results.read_run(out.run_dirs[0])
    assert sorted((c.cipher, c.toolchain, c.status) for c in cells) == \
        sorted((ci, t, "ok") for ci in ("rc6", "idea") for t in OLD_NEW), [(c.cell, c.reason) for c in cells]
    for c in cells:
        exe = c.toolchain.rsplit("-", 1)[0]
        assert c.build.compiler == exe and c.kat.failed == 0 and c.kat.passed > 0
        want = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        assert c.build.compiler_version == want == meta.toolchains[c.toolchain]["version"]
        # the exact Debian build (clang's --version line omits Debian's revision)
        pkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", exe], capture_output=True, text=True).stdout
        assert meta.toolchains[c.toolchain]["package"] == f"{exe} {pkg}" and pkg
    versions = {c.build.compiler_version for c in cells}
    assert len(versions) == 4  # four different compilers, not one compiler four times


# ------------------------------------------------------------ the Debian 13 image
@pytest.fixture(scope="module")
def trixie_image():
    return image_or_skip("x86_64-trixie", build_when_required=True)


@pytest.mark.container
def test_gcc_14_in_the_debian_13_image_passes_known_answers_beside_the_host(lab, tmp_path, trixie_image,
                                                                         host_plugin):
    need("gcc-12")
    out = run(lab, RunRequest(preset="compilers", ciphers=["rc6"],
                              toolchains=["gcc-12-O3", "gcc-14-O3"], profile="smoke", icount=True,
                              results_dir=tmp_path / "results", build_dir=tmp_path / "build"))
    meta, cells = results.read_run(out.run_dirs[0])
    by = {(c.toolchain, c.target): c for c in cells}
    assert len(cells) == 4
    assert by["gcc-14-O3", "host"].status == by["gcc-12-O3", "x86_64-trixie"].status == "unavailable"
    host, image = by["gcc-12-O3", "host"], by["gcc-14-O3", "x86_64-trixie"]
    assert host.status == image.status == "ok", (host.reason, image.reason)
    assert image.build.compiler_version.startswith("gcc-14 (Debian 14.") and image.kat.failed == 0
    assert host.build.compiler_version.startswith("gcc-12 (Debian 12.")
    # provenance: the image the cell ran in, by id, also in the run's backend facts
    assert image.image_id and image.image_id.startswith("sha256:") and host.image_id is None
    assert meta.toolchains["gcc-14-O3"]["package"].startswith("gcc-14-x86-64-linux-gnu 14.")
    used = meta.backend["container"]["images"]["x86_64-trixie"]
    assert used["id"] == image.image_id and used["image"] == "cipherlab/x86_64-trixie:latest"
    assert image.icount and image.icount.ops, image.icount_note  # counted by the host's QEMU: static program
    assert json.dumps(meta.matrix["toolchains"]) == '["gcc-12-O3", "gcc-14-O3"]'


@pytest.mark.container
def test_cross_gcc_14_and_clang_19_for_sparc64_in_debian_13_pass_and_are_counted(lab, tmp_path, host_plugin):
    # counted by the host's QEMU and plugin (the image's QEMU 10 loads none): without the fixture this test passed
    # only when an earlier test had copied the plugin, and failed on two workers from a fresh clone
    image_or_skip("sparc64-trixie", build_when_required=True)
    out = run(lab, RunRequest(ciphers=["rc6"], implementations="default", toolchains=["gcc-14-O3", "clang-19-O3"], targets=["sparc64-trixie"],
                              backend="mixed", profile="smoke", icount=True, results_dir=tmp_path / "results",
                              build_dir=tmp_path / "build"))
    _, cells = results.read_run(out.run_dirs[0])
    assert [(c.toolchain, c.status) for c in cells] == [("clang-19-O3", "ok"), ("gcc-14-O3", "ok")], \
        [c.reason for c in cells]
    gcc, clang = sorted(cells, key=lambda c: c.toolchain, reverse=True)
    assert gcc.build.compiler == "sparc64-linux-gnu-gcc-14" and gcc.build.compiler_version.startswith(
        "sparc64-linux-gnu-gcc-14 (Debian 14.")
    assert clang.build.compiler_version.startswith("Debian clang version 19.")
    assert gcc.kat.failed == clang.kat.failed == 0 and gcc.kat.passed == clang.kat.passed > 0
    for c in cells:  # the host's qemu-sparc64 counts them
        assert c.icount and c.icount.emulator == "qemu-sparc64" and c.icount.ops, c.icount_note


@pytest.mark.container
def test_a_debian_13_image_without_the_plugin_gates_and_times_its_cells_and_says_why_they_have_no_count(lab,
                                                                                                    tmp_path):
    # the container backend ran QEMU with the image's plugin path, which QEMU 10 there rejects ("unknown option
    # 'plugin'"), and an emulated cell whose count fails fails whole: the gated, timed cell was lost
    image_or_skip("sparc64-trixie", build_when_required=True)
    assert not lab.target("sparc64-trixie").image_plugin and lab.target("sparc64").image_plugin
    out = run(lab, RunRequest(ciphers=["rc6"], implementations="default", toolchains=["gcc-14-O3"], targets=["sparc64-trixie"],
                              backend="container", profile="smoke", icount=True, results_dir=tmp_path / "results",
                              build_dir=tmp_path / "build"))
    _, cells = results.read_run(out.run_dirs[0])
    [c] = cells
    assert c.status == "ok", c.reason
    assert c.kat.failed == 0 and c.kat.passed > 0 and c.emulated
    assert c.measurement.timing and c.measurement.timing[0].key_sizes[128]["encrypt"].ns
    assert c.icount is None
    assert "image of sparc64-trixie has no instruction-count plugin" in c.icount_note
    assert "targets/sparc64-trixie.yaml" in c.icount_note and "--backend mixed" in c.icount_note


# ------------------------------------------------------------------ images as data
def test_debian_13_images_are_bootstrapped_from_the_hosts_mirrors(tmp_path):
    from lab.images import base_images, debian_sources

    src = write(tmp_path / "debian.sources", """\
        Types: deb
        URIs: http://deb.debian.org/debian
        Suites: bookworm bookworm-updates
        Components: main
        Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

        Types: deb
        URIs: http://deb.debian.org/debian-security
        Suites: bookworm-security
        Components: main
        """)
    other = write(tmp_path / "vendor.list", "deb https://packages.example.org/apt sdk-bookworm main\n")
    text = debian_sources("trixie", paths=[src, other], host="bookworm")
    assert "Suites: trixie trixie-updates\n" in text and "Suites: trixie-security\n" in text
    assert "bookworm" not in text and "example.org" not in text
    assert debian_sources("bookworm", paths=[src, other], host="bookworm").count("bookworm") == 3
    for name in ("x86_64-trixie", "sparc64-trixie", "mips64-trixie"):
        assert base_images(ROOT / "dockerfiles" / f"Dockerfile.{name}") == ["debian:trixie"]
    assert base_images(ROOT / "dockerfiles" / "Dockerfile.x86_64") == ["debian:bookworm"]


def test_each_version_found_in_an_image_is_installed_by_its_dockerfile(lab):
    """The versions file and the Dockerfiles say the same (the image test proves the compilers run)."""
    for cv in lab.compiler_versions.values():
        for name in cv.found:
            t = lab.target(name)
            if not t.image or not name.endswith("-trixie"):
                continue
            text = (ROOT / "dockerfiles" / f"Dockerfile.{name}").read_text()
            if cv.family == "gcc" and t.runner != "native":  # the cross gcc of Debian 13 is gcc-14
                assert cv.version == "14" and f"toolchain.sh {t.triple} {t.arch}" in text, (cv.name, name)
            else:
                assert f" {cv.executable}" in text.split("apt-get install", 1)[1], (cv.name, name)


def test_a_missing_cpp_compiler_of_a_versioned_toolchain_names_its_own_package():
    """A peer adapter (C++) under gcc-11: g++-11 is a package of its own (gcc-11 does not bring it)."""
    from types import SimpleNamespace

    from lab.pipeline import _package_for

    cell = SimpleNamespace(target=SimpleNamespace(triple="x86_64-linux-gnu"),
                           toolchain=SimpleNamespace(package="gcc-11"))
    assert _package_for("g++-11", cell) == "g++-11" and _package_for("clang++-16", cell) == "clang-16"
    assert _package_for("g++", cell) == "g++" and _package_for("gcc-11", cell) == "gcc-11"
