"""Targets as data (schema, the nine shipped targets and their Dockerfiles) and the
pieces of instruction counting that need no container: the ELF marker resolver,
the pairing of counts with deltas, Debian source extraction, build-dir ACLs."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from lab.backends import RUNNER_SCRIPT, runner_env
from lab.backends.container import CONTAINER_UID, grant_write_access
from lab.config import ConfigError, Lab
from lab.elf import MarkerError, elf_symbols, marker_addresses
from lab.errors import UsageError
from lab import protocol
from lab.icount import IcountError, fill_deltas
from lab.images import EngineError, context_files, debian_sources, detect_engine

from .conftest import ROOT, have

CROSS = {"i386", "aarch64", "armhf", "riscv64", "sparc64", "mips64", "ppc64", "s390x"}
BIG_ENDIAN = {"sparc64", "mips64", "ppc64", "s390x"}


# ------------------------------------------------------------ shipped targets
def test_the_nine_targets_exist_and_say_what_they_are(lab):
    names = set(lab.target_names())
    assert {"x86_64"} | CROSS <= names
    for name in CROSS | {"x86_64"}:
        t = lab.target(name)
        assert t.image == f"cipherlab/{name}"
        assert (t.endianness == "big") == (name in BIG_ENDIAN), name
        assert t.word_bits == (32 if name in ("i386", "armhf") else 64), name
        if name == "x86_64":
            assert t.runner == "native" and not t.emulated and t.counter == "x86_tsc"
        else:
            assert t.runner == "qemu-user" and t.qemu and t.qemu.startswith("qemu-"), name
            # emulated: static (qemu-user has no guest sysroot) and counted in guest instructions
            assert t.static and t.counter == "marker", name
    assert lab.target("mips64").triple == "mips64-linux-gnuabi64"  # n64, not o32
    assert lab.target("host").image is None  # the host backend default stays as it was


@pytest.mark.parametrize("name", sorted(CROSS | {"x86_64"}))
def test_each_target_has_a_flat_dockerfile_matching_its_data(lab, name):
    t = lab.target(name)
    text = (ROOT / "dockerfiles" / f"Dockerfile.{name}").read_text().replace("\\\n", " ")
    assert text.startswith("# cipherlab target")
    froms = re.findall(r"^FROM (\S+)", text, re.M)
    assert froms == ["debian:bookworm", "debian:bookworm"], "flat: built from the Debian base, not from each other"
    assert "CIPHERLAB_RUNNER" not in text, "how programs run is defined once, by runner_env()"
    assert "COPY dockerfiles/scripts/cipherlab-run /usr/local/bin/" in text  # the one runner entry point
    assert f"CROSS_TRIPLE={t.triple}" in text
    if t.emulated:
        m = re.search(r"toolchain\.sh (\S+) (\S+)$", text, re.M)
        assert m and m.group(1) == t.triple, "cross gcc for the target's triple"
        assert subprocess.run(["sh", "-n", str(ROOT / "dockerfiles/scripts/toolchain.sh")]).returncode == 0
    assert "USER lab" in text
    # every file the Dockerfile copies is in the build context lab/images.py assembles
    ctx = set(context_files(lab, t))
    for line in re.findall(r"^COPY (?!--from)(.+?) \S+$", text, re.M):
        for src in line.split():
            assert any(f == src or f.startswith(src.rstrip("/") + "/") for f in ctx), src


# ------------------------------------------------------------- schema errors
def _lab_with_target(tmp_path: Path, name: str, text: str) -> Lab:
    (tmp_path / "targets").mkdir(exist_ok=True)
    (tmp_path / "targets" / f"{name}.yaml").write_text(text)
    return Lab(root=tmp_path)


GOOD = """name: sparc64
description: d
triple: sparc64-linux-gnu
arch: sparc64
endianness: big
word_bits: 64
runner: qemu-user
qemu: qemu-sparc64
image: cipherlab/sparc64
families: [gcc, clang]
counter: marker
static: true
"""


def test_a_good_target_file_loads(tmp_path):
    t = _lab_with_target(tmp_path, "sparc64", GOOD).target("sparc64")
    assert t.emulated and t.endianness == "big"


@pytest.mark.parametrize("edit,key,problem", [
    (("static: true", "static: true\nendian: big"), "endian", "unknown key"),
    (("endianness: big", "endianness: middle"), "endianness", "got 'middle'"),
    (("qemu: qemu-sparc64\n", ""), None, "needs key 'qemu'"),
    (("triple: sparc64-linux-gnu\n", ""), "triple", "required key is missing"),
    (("word_bits: 64", "word_bits: 36"), "word_bits", "got 36"),
    (("families: [gcc, clang]", "families: [gcc, icc]"), "families.1", "got 'icc'"),
    (("counter: marker", "counter: rdtsc"), "counter", "got 'rdtsc'"),
    (("runner: qemu-user", "runner: ssh"), "runner", "got 'ssh'"),
    (("name: sparc64", "name: sparc"), "name", "must equal the file name"),
])
def test_target_schema_errors_name_the_file_and_key(tmp_path, edit, key, problem):
    with pytest.raises(ConfigError) as e:
        _lab_with_target(tmp_path, "sparc64", GOOD.replace(*edit))
    assert e.value.path.endswith("targets/sparc64.yaml")
    assert e.value.key == key or (key is None and problem in str(e.value))
    assert problem in str(e.value)
    if e.value.problem == "unknown key.":
        assert "endianness" in e.value.fix  # the fix lists the allowed keys


def test_unknown_target_says_did_you_mean(lab):
    with pytest.raises(UsageError, match="unknown target 'sparc'.*did you mean 'sparc64'"):
        lab.target("sparc")


# ---------------------------------------------------------------- ELF markers
def _cc_probe(tmp_path: Path, *flags: str, markers: bool = True) -> Path:
    probe = tmp_path / "probe"
    srcs = [ROOT / "c_src/qemu_plugin/selftest_probe.c"]
    srcs.append(ROOT / ("c_src/harness/counter_marker.c" if markers else "c_src/harness/counter_clock.c"))
    subprocess.run(["gcc", "-O2", *flags, "-I", str(ROOT / "c_src/harness"), *map(str, srcs), "-o", str(probe)],
                   check=True)
    return probe


def _nm(path: Path) -> dict[str, int]:
    out = subprocess.run(["nm", str(path)], capture_output=True, text=True, check=True).stdout
    return {p[2]: int(p[0], 16) for p in (ln.split() for ln in out.splitlines()) if len(p) == 3}


@pytest.mark.skipif(not have("gcc"), reason="needs gcc")
@pytest.mark.parametrize("flags", [["-static"], ["-static", "-flto"], ["-static", "-m32"]],
                         ids=["static", "static-lto", "static-i386"])
def test_marker_addresses_match_nm(tmp_path, flags):
    if "-m32" in flags and subprocess.run(["gcc", "-m32", "-print-file-name=libc.a"], capture_output=True,
                                          text=True).stdout.strip() == "libc.a":
        pytest.skip("no 32-bit libc for gcc -m32 on this host")
    probe = _cc_probe(tmp_path, *flags)
    nm = _nm(probe)
    begin, end = marker_addresses(probe)
    assert (begin, end) == (nm["cl_marker_begin"], nm["cl_marker_end"])
    assert begin != end


@pytest.mark.skipif(not have("gcc"), reason="needs gcc")
def test_marker_resolver_refuses_what_it_cannot_count(tmp_path):
    pie = _cc_probe(tmp_path, "-fPIE", "-pie")
    with pytest.raises(MarkerError, match="static non-PIE"):
        marker_addresses(pie)
    plain = _cc_probe(tmp_path, "-static", markers=False)
    with pytest.raises(MarkerError, match="no symbol cl_marker_begin"):
        marker_addresses(plain)
    with pytest.raises(MarkerError, match="not an ELF"):
        marker_addresses(ROOT / "README.md")


def _tiny_elf(machine: int, flags: int, big: bool, arm_thumb: bool = False) -> bytes:
    """A minimal ELF64/32 with .opd (ppc64) or .text and one symbol table, to test the ABI rules."""
    e = ">" if big else "<"
    is64 = machine != 40
    names = b"\0.text\0.opd\0.symtab\0.strtab\0.shstrtab\0"
    strtab = b"\0cl_marker_begin\0cl_marker_end\0"
    text_addr, opd_addr = 0x10000, 0x20000
    opd = struct.pack(e + "QQQ", 0x10100, 0x30000, 0) + struct.pack(e + "QQQ", 0x10200, 0x30000, 0)
    if is64:
        sym = lambda n, v, sh: struct.pack(e + "IBBHQQ", n, 0x12, 0, sh, v, 8)  # noqa: E731
        symtab = sym(0, 0, 0) + sym(1, opd_addr, 2) + sym(17, opd_addr + 24, 2)
    else:
        bit = 1 if arm_thumb else 0
        sym = lambda n, v, sh: struct.pack(e + "IIIBBH", n, v, 8, 0x12, 0, sh)  # noqa: E731
        symtab = sym(0, 0, 0) + sym(1, 0x10100 | bit, 1) + sym(17, 0x10200 | bit, 1)
    blobs = [b"\0" * 16, opd, symtab, strtab, names]
    ehsize, shentsize = (64, 64) if is64 else (52, 40)
    offs, pos = [], ehsize
    for blob in blobs:
        offs.append(pos)
        pos += len(blob)
    shoff = pos
    hdr = b"\x7fELF" + bytes([2 if is64 else 1, 2 if big else 1, 1]) + b"\0" * 9
    if is64:
        hdr += struct.pack(e + "HHIQQQIHHHHHH", 2, machine, 1, 0, 0, shoff, flags, ehsize, 0, 0, shentsize, 6, 5)
        sh = lambda *f: struct.pack(e + "IIQQQQIIQQ", *f)  # noqa: E731
    else:
        hdr += struct.pack(e + "HHIIIIIHHHHHH", 2, machine, 1, 0, 0, shoff, flags, ehsize, 0, 0, shentsize, 6, 5)
        sh = lambda *f: struct.pack(e + "IIIIIIIIII", *f)  # noqa: E731
    secs = sh(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    secs += sh(1, 1, 6, text_addr, offs[0], 16, 0, 0, 4, 0)
    secs += sh(7, 1, 3, opd_addr, offs[1], len(opd), 0, 0, 8, 0)
    secs += sh(12, 2, 0, 0, offs[2], len(symtab), 4, 1, 8, 24 if is64 else 16)
    secs += sh(20, 3, 0, 0, offs[3], len(strtab), 0, 0, 1, 0)
    secs += sh(28, 3, 0, 0, offs[4], len(names), 0, 0, 1, 0)
    return hdr + b"".join(blobs) + secs


def test_ppc64_elfv1_markers_resolve_through_function_descriptors(tmp_path):
    p = tmp_path / "ppc64"
    p.write_bytes(_tiny_elf(21, 1, big=True))  # EM_PPC64, ELFv1
    assert elf_symbols(p) == {"cl_marker_begin": 0x10100, "cl_marker_end": 0x10200}
    p.write_bytes(_tiny_elf(21, 2, big=True))  # ELFv2: symbols are code addresses
    assert elf_symbols(p) == {"cl_marker_begin": 0x20000, "cl_marker_end": 0x20018}


def test_arm_thumb_bit_is_cleared(tmp_path):
    p = tmp_path / "arm"
    p.write_bytes(_tiny_elf(40, 0x05000400, big=False, arm_thumb=True))
    assert elf_symbols(p) == {"cl_marker_begin": 0x10100, "cl_marker_end": 0x10200}


# ------------------------------------------------------------ pairing counts
def _records() -> list:
    return [protocol.parse({"type": "cycles", "impl": "des/spbox", "key_size": 64, "op": op, "n": n, "calls": 1,
                            "counter": "qemu-insn-region", "unit": "guest_insns", "deltas": d}, "icount")
            for op, n, d in (("null", 1, [0, 0]), ("encrypt", 16, [0, 0, 0]))]


def test_fill_deltas_drops_the_calibration_region_and_follows_the_rounds():
    # the program samples round by round: null 1, encrypt 1, null 2, encrypt 2, encrypt 3
    out = fill_deltas(_records(), [987654, 5, 700, 6, 701, 702])
    assert [r.deltas for r in out] == [[5, 6], [700, 701, 702]]
    assert out[0].counter == "qemu-insn-region" and out[1].unit == "guest_insns"
    assert fill_deltas(_records(), [5, 7, 5, 7, 7])[1].deltas == [7, 7, 7]  # no calibration region
    with pytest.raises(IcountError, match="cannot be paired"):
        fill_deltas(_records(), [1, 2, 3])


def test_runner_environment_comes_from_the_target_data(lab):
    x, s = lab.target("x86_64"), lab.target("sparc64")
    assert runner_env(x) == {"CIPHERLAB_RUNNER": "", "CIPHERLAB_EMULATOR": "qemu-x86_64",
                             "CIPHERLAB_EMULATOR_FLAGS": "-cpu max"}  # so -march=native builds run under QEMU
    assert runner_env(s, "/p.so") == {"CIPHERLAB_RUNNER": "qemu-sparc64", "CIPHERLAB_EMULATOR": "qemu-sparc64",
                                      "CIPHERLAB_EMULATOR_FLAGS": "", "CIPHERLAB_QEMU_PLUGIN": "/p.so"}


def _runner(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / RUNNER_SCRIPT), *args], capture_output=True, text=True,
                          env={**os.environ, **env})


def test_the_runner_script_pins_wraps_and_counts(tmp_path):
    plain = _runner("sh", "-c", "echo direct $0", CIPHERLAB_RUNNER="")
    assert plain.returncode == 0 and plain.stdout.strip() == "direct sh"
    wrapped = _runner("printf", "%s", CIPHERLAB_RUNNER="echo")  # the emulator runs the program
    assert wrapped.stdout.strip() == "printf %s"
    if len(os.sched_getaffinity(0)) > 1:
        pinned = _runner("--cpu", "1", "sh", "-c", "cat /proc/self/status", CIPHERLAB_RUNNER="")
        assert re.search(r"Cpus_allowed_list:\s*1$", pinned.stdout, re.M), pinned.stdout
    counted = _runner("--icount", "0x10,0x20,/tmp/out", "prog", "--x", CIPHERLAB_EMULATOR="echo",
                      CIPHERLAB_EMULATOR_FLAGS="-cpu max", CIPHERLAB_QEMU_PLUGIN="/lib/p.so")
    assert counted.stdout.split() == ["-cpu", "max", "-plugin", "/lib/p.so,begin=0x10,end=0x20,out=/tmp/out",
                                      "prog", "--x"]
    missing = _runner("--icount", "0x1,0x2,/o", "prog", CIPHERLAB_EMULATOR="echo")
    assert missing.returncode != 0 and "no icount plugin" in missing.stderr


# ----------------------------------------------------------- images helpers
def test_debian_sources_keeps_only_the_debian_suite(tmp_path):
    (tmp_path / "debian.sources").write_text(
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n\n"
        "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\nComponents: main\n")
    (tmp_path / "extra.list").write_text(
        "deb [signed-by=/k.gpg] http://deb.debian.org/debian-security bookworm-security main\n"
        "deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n# deb http://x bookworm main\n")
    text = debian_sources("bookworm", [tmp_path / "debian.sources", tmp_path / "extra.list"])
    assert text.count("Types: deb\n") == 2
    assert "Suites: bookworm bookworm-updates" in text and "Suites: bookworm-security" in text
    assert "nodesource" not in text and "cloud-sdk" not in text and "deb-src" not in text
    assert "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" in text


def test_engine_choice_errors_are_explained(monkeypatch):
    monkeypatch.setenv("CIPHERLAB_ENGINE", "lxc")
    with pytest.raises(EngineError, match="unknown container engine 'lxc'"):
        detect_engine()
    monkeypatch.delenv("CIPHERLAB_ENGINE")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(EngineError, match="apt-get install docker.io"):
        detect_engine()
    with pytest.raises(EngineError, match="podman is not installed"):
        detect_engine("podman")


def test_env_engine_overrides_the_matrix_and_podman_gets_its_conf(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}" if name == "podman" else None)
    monkeypatch.setenv("CIPHERLAB_ENGINE", "podman")
    e = detect_engine("docker", Lab(root=tmp_path))  # the matrix says docker, the environment wins
    assert e.name == "podman"
    conf = Path(e.env["CONTAINERS_CONF"]).read_text()
    assert 'runtime = "runc"' in conf and '"nofile=1024:1024", "nproc=1024:1024"' in conf


def test_unsupported_flags_are_per_family_with_a_reason(lab, tmp_path):
    for name in lab.target_names():
        t = lab.target(name)
        for family, flags in t.unsupported_flags.items():
            assert family in t.families, f"{name}: {family} is not one of its families"
            assert all(len(why) > 20 for why in flags.values()), f"{name}: say why"
    assert "-flto" in lab.target("mips64").unsupported_flags["clang"]
    with pytest.raises(ConfigError) as e:
        _lab_with_target(tmp_path, "sparc64", GOOD + "unsupported_flags:\n  icc: {-flto: x}\n")
    assert e.value.key.startswith("unsupported_flags")


@pytest.mark.skipif(os.geteuid() != 0, reason="ACLs for another uid are set when the lab runs as root")
def test_build_dir_access_is_inherited_by_folders_made_later(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "f.o").write_bytes(b"")
    grant_write_access(tmp_path, CONTAINER_UID)
    (tmp_path / "old" / "new").mkdir()  # as the Builder does on the host, after the grant
    uid = struct.pack("<I", CONTAINER_UID)
    for p in (tmp_path, tmp_path / "old", tmp_path / "old" / "new", tmp_path / "old" / "f.o"):
        acl = os.getxattr(p, "system.posix_acl_access")
        entries = {acl[i:i + 2]: acl[i + 2:i + 4] for i in range(4, len(acl), 8) if acl[i + 4:i + 8] == uid}
        assert entries, f"{p}: no ACL entry for uid {CONTAINER_UID}"
        assert entries[b"\x02\x00"][0] & 6 == 6, f"{p}: uid {CONTAINER_UID} cannot read and write"
