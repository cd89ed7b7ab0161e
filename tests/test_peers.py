"""The peer libraries inside the harness: each peer implementation (c_src/peers/<library>/peer.yaml) is built by
the one build plan, passes the same known answers as ours, and a run measures it beside ours."""

import subprocess

import pytest

from lab import results
from lab.config import Lab
from lab.publish import build_report
from lab.report import errors_in
from lab.run import RunRequest, run
from lab.verify import verify

from .conftest import peer_on_host
from .html_tables import find

PEERS = [(i.cipher, i.name) for i in Lab().all_impls() if i.impl_class == "peer"]


def test_every_library_is_data_and_every_peer_is_an_implementation(lab):
    assert {"cryptopp", "botan", "nettle", "tomcrypt", "gcrypt", "openssl", "mcrypt"} <= set(lab.peers)
    for cipher, name in PEERS:
        im = lab.cipher(cipher).impls[name]
        assert im.peer and im.peer.library in name and im.impl_class == "peer" and im.peer.code in (
            "portable", "asm", "simd", "hardware")
        assert not im.default


@pytest.mark.parametrize("cipher,name", PEERS, ids=[f"{c}/{n}" for c, n in PEERS])
def test_peer_passes_the_known_answers(lab, build_dir, cipher, name):
    im = lab.cipher(cipher).impls[name]
    if not peer_on_host(im.peer):
        pytest.fail(f"{im.peer.package} is not installed (./cipherlab installs it)")
    # the quick gate (every short record, every 32nd iterated one, the n-block check, the stored checksum): a run
    # gates a peer's cell on every record before it times it
    (r,) = verify(lab, cipher, im.vector_files[0], name, "gcc-O3", build_dir=build_dir, quick=True)
    if r.unavailable:
        pytest.skip(r.problem)  # e.g. an AES-NI variant whose environment switch is not set
    assert r.ok, r.line()
    assert r.passed > 0 and r.failed == 0


def test_a_run_measures_peers_beside_ours_and_the_report_compares(fixture_lab, tmp_path):
    out = run(fixture_lab, RunRequest(ciphers=["twofish"], implementations="peers", toolchains=["gcc-O3"],
                                      profile="smoke", icount=False, results_dir=tmp_path / "results",
                                      build_dir=tmp_path / "build"))
    _, cells = results.read_run(out.run_dir)
    by = {c.implementation: c for c in cells}
    assert {"full", "cryptopp", "botan", "nettle", "tomcrypt", "gcrypt", "mcrypt"} <= set(by)
    assert all(c.status == "ok" for c in cells), [(c.cell, c.reason) for c in cells if c.status != "ok"]
    assert by["gcrypt"].key_sizes == [128, 256]  # libgcrypt's Twofish has no 192-bit keys: not timed at 192
    assert by["nettle"].impl["peer"]["code"] == "portable" and by["nettle"].impl_class == "peer"
    # each peer's library as it ran: its package and the version dpkg knows (ours link none)
    nettle = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "nettle-dev"], capture_output=True, text=True)
    assert by["nettle"].build.library == f"nettle-dev {nettle.stdout.strip()}" and nettle.stdout.strip()
    assert by["full"].build.library is None
    html = build_report(fixture_lab, [out.run_dir], results_dir=tmp_path / "results",
                        reports_dir=tmp_path / "reports").read_text()
    assert not errors_in(html)
    (row,) = find(html, "libs", "libraries")[0].rows
    peer = row[6].text.split(" (")[0]
    assert row[2].text == "twofish" and row[4].text == "full" and peer in by
    assert row[6].text == f"{peer} ({by[peer].build.library})"  # the fastest peer with its library's version
    a1 = find(html, "a1-classes")[0]
    assert any(r[0].text == "peer library (peer)" for r in a1.rows)


def _peer_dir(tmp_path, targets: dict):
    """A copy of the OpenSSL peer whose peer.yaml names per-target builds."""
    import shutil

    import yaml

    src = Lab().root / "c_src" / "peers" / "openssl"
    d = tmp_path / "peers" / "openssl"
    shutil.copytree(src, d)
    doc = yaml.safe_load((d / "peer.yaml").read_text())
    doc["targets"] = targets
    (d / "peer.yaml").write_text(yaml.safe_dump(doc))
    return d.parent


def test_a_peer_builds_against_the_library_a_targets_image_has(tmp_path):
    """peer.yaml's targets: a target whose image ships the library under another version (Debian 13's Botan 3)
    builds with its own package, flags and libraries; every other target with the file's own."""
    from lab.buildplan import plan_build

    lab = Lab(peer_dirs=[_peer_dir(tmp_path, {"x86_64-trixie": {"package": "libssl3-dev-x", "cflags": ["-DX=1"],
                                                                 "libs": ["-lcrypto", "-lz"]}})])
    im = lab.cipher("rijndael").impls["openssl"]
    assert im.flags_on("x86_64-trixie") == (("-DX=1",), ("-lcrypto", "-lz"))
    assert im.flags_on("host") == ((), ("-lcrypto",))
    assert (im.peer.package_on("x86_64-trixie"), im.peer.package_on("host")) == ("libssl3-dev-x", "libssl-dev")

    def steps(target):
        p = plan_build(im, lab.toolchain("gcc-O3"), lab.target(target), "ct", root=lab.root,
                       build_dir=tmp_path / "b")
        return p.steps[-2].argv, p.steps[-1].argv  # the adapter's compile, the link

    (cc, link), (cc_h, link_h) = steps("x86_64-trixie"), steps("host")
    assert "-DX=1" in cc and "-DX=1" not in cc_h
    assert link[-3:-2] == ("-lz",) and "-lz" not in link_h and "-lcrypto" in link_h


def test_a_peer_file_naming_an_unknown_target_is_a_clear_error(tmp_path):
    from lab.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        Lab(peer_dirs=[_peer_dir(tmp_path, {"x86_64-forky": {"libs": ["-lcrypto"]}})])
    assert "peer.yaml" in str(e.value) and "targets.x86_64-forky" in str(e.value) and "not a target" in str(e.value)


def test_a_peer_whose_library_is_missing_where_it_is_built_is_unavailable_with_the_package_to_install(lab, tmp_path):
    """A failed build of a peer cell asks where the cell's programs are built (this machine, or the target's
    image) whether the library's header is there: missing, the cell is unavailable and names the package for
    that target; present, the failure is the build's."""
    import dataclasses

    from lab.backends import Completed
    from lab.build import Builder
    from lab.pipeline import CellPipeline, Stages, make_backend
    from lab.plan import Cell

    im = lab.cipher("twofish").impls["botan"]
    broken = dataclasses.replace(im, cflags=(*im.cflags, "-include", "no-such-library/none.h"))
    c = Cell(broken, lab.toolchain("gcc-O3"), lab.target("host"), (128,), lab.profile("smoke"))
    backend = make_backend(lab, "host", build_dir=tmp_path / "build", progress=lambda s: None)
    asked = []
    real_exec = backend.exec

    def exec_(argv, *, target, timeout, env=None):
        if argv[:2] == ["test", "-e"]:
            asked.append((argv[2], target.name))
            return Completed(argv, 0 if header_there else 1, "", "", 0.0)
        return real_exec(argv, target=target, timeout=timeout, env=env)

    backend.exec = exec_
    pipe = CellPipeline(backend, Builder(lab.root, tmp_path / "build", backend), Stages(), say=lambda s: None)
    header_there = False
    f = pipe.build(c)
    assert f.status == "unavailable" and asked == [(f"/usr/include/{im.peer.header}", "host")]
    assert f.reason == f"peer library {im.peer.display} is not installed: install {im.peer.package_on('host')}"
    header_there = True
    f = pipe.build(c)
    assert f.status == "build_failed" and "none.h" in f.reason


def test_a_new_version_of_a_peers_library_is_new_work(tmp_path):
    """A peer's programs link its library: the version where they run is part of what a known-answer verdict,
    a constant-time verdict, a count and the programs' hash belong to (an upgraded library is checked again and
    is not "the same code" to compare); ours link none and keep their keys."""
    from lab.build import Builder
    from lab.pipeline import CellPipeline, Stages, make_backend
    from lab.plan import Cell

    lab = Lab()
    if not peer_on_host(lab.impl("twofish/botan").peer):
        pytest.skip("libbotan-2-dev is not installed (./cipherlab installs it)")
    backend = make_backend(lab, "host", build_dir=tmp_path / "build", progress=lambda s: None)
    version = {"v": "2.19.3+dfsg-2"}
    backend.package_version = lambda package, target: version["v"] if package == "libbotan-2-dev" else ""
    pipe = CellPipeline(backend, Builder(lab.root, tmp_path / "build", backend),
                        Stages(programs=("kat",), kat_cache=tmp_path / "kat"), say=lambda s: None)
    cell = lambda impl: Cell(lab.impl(impl), lab.toolchain("gcc-O3"), lab.target("host"), (128,), lab.profile("smoke"))
    b = pipe.build(cell("twofish/botan"))
    ours = pipe.build(cell("twofish/full"))
    assert b.library == "libbotan-2-dev 2.19.3+dfsg-2" and ours.library is None
    assert b.runs_with() == ["host", "libbotan-2-dev 2.19.3+dfsg-2"] and ours.runs_with() == ["host"]
    before, ours_before = pipe._verdict_key(b), pipe._verdict_key(ours)
    binary = b.program("kat").read_bytes()
    version["v"] = "3.0.0"
    b2 = pipe.build(cell("twofish/botan"))
    assert b2.program("kat").read_bytes() == binary  # the same binary ...
    assert pipe._verdict_key(b2) != before  # ... run with another library: its verdict is not reused
    assert pipe._verdict_key(pipe.build(cell("twofish/full"))) == ours_before
    version["v"] = ""  # not a Debian package here (built from source): no version, the binary alone
    assert pipe.build(cell("twofish/botan")).library is None
