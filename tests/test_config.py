"""Schemas: every data file validates, and bad input gets an error naming file, key and fix."""

import json
import textwrap
from pathlib import Path

import pytest

from lab.config import ConfigError, Lab
from lab.errors import ConfigErrors, UsageError
from lab.schema import SCHEMAS, export_schemas


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_every_shipped_data_file_validates(lab):
    assert lab.toolchain_names() and lab.target_names() and lab.profile_names()
    for name in lab.toolchain_names():
        tc = lab.toolchain(name)
        assert tc.flags or (tc.family == "jvm" and tc.cc), name  # a JVM as it ships has no flags of its own
    for name in lab.target_names():
        lab.target(name)
    for name in lab.profile_names():
        lab.profile(name)
    for cipher in lab.ciphers.values():
        assert cipher.default_impl in cipher.impls
    m = lab.matrix()
    assert m.profile in lab.profile_names()


def test_unknown_key_in_matrix_names_file_key_and_fix(lab, tmp_path):
    p = write(tmp_path / "matrix.yaml", """\
        ciphers: [des]
        toolchains: [gcc-O3]
        tolchains: [clang-O3]
        """)
    with pytest.raises(ConfigError) as e:
        lab.matrix(p)
    msg = str(e.value)
    assert str(p) in msg
    assert "'tolchains'" in msg and "unknown key" in msg
    assert "toolchains" in msg.split("Fix:")[1]  # the fix lists the allowed keys


PROFILE = """\
    name: p
    description: x
    cycles: {sizes: [1]}
    sampling: {precision: 0.1, budget_seconds: 1}
    """


def test_unknown_nested_key_in_profile(tmp_path):
    write(tmp_path / "profiles" / "p.yaml", PROFILE + "timing: {blcoks_per_call: 1}\n")
    with pytest.raises(ConfigError) as e:  # every file is validated when the lab starts
        Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)
    assert "timing.blcoks_per_call" in str(e.value)
    assert "blocks_per_call" in str(e.value)


def test_every_bad_file_is_reported_at_once_used_or_not(tmp_path):
    write(tmp_path / "profiles" / "p.yaml", PROFILE)
    write(tmp_path / "toolchains" / "broken.yaml", "description: [unclosed\n")
    write(tmp_path / "toolchains" / "typo.yaml", "description: d\nfamily: gcc\ncc: gcc\nflags: []\nflgs: []\n")
    with pytest.raises(ConfigErrors) as e:
        Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)
    msg = str(e.value)
    assert "broken.yaml" in msg and "not valid YAML" in msg
    assert "typo.yaml: key 'flgs': unknown key" in msg


def test_undefined_toolchain_in_matrix_is_named(lab, tmp_path):
    p = write(tmp_path / "m.yaml", "ciphers: [des]\ntoolchains: [gcc-O9]\n")
    with pytest.raises(ConfigError, match=r"toolchains\[0\].*gcc-O9.*Fix: did you mean 'gcc-O3'"):
        lab.matrix(p)


def test_bad_value_type_is_reported_with_its_key(lab, tmp_path):
    p = write(tmp_path / "m.yaml", "ciphers: [des]\ntoolchains: [gcc-O3]\nbackend: cloud\n")
    with pytest.raises(ConfigError, match="key 'backend'"):
        lab.matrix(p)


def test_toolchain_inheritance_and_missing_keys(tmp_path):
    write(tmp_path / "toolchains" / "base.yaml", "description: b\nfamily: gcc\ncc: gcc\nflags: [-O2, -g]\n")
    write(tmp_path / "toolchains" / "child.yaml",
          "description: c\ninherits: base\nadd_flags: [-funroll-loops]\nremove_flags: [-g]\n")
    lab = Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)
    child = lab.toolchain("child")
    assert child.flags == ("-O2", "-funroll-loops") and child.cc == "gcc"
    write(tmp_path / "toolchains" / "orphan.yaml", "description: o\nfamily: gcc\n")
    with pytest.raises(ConfigError, match="orphan.yaml: key 'cc'"):
        Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)


def test_unknown_names_get_did_you_mean(lab):
    with pytest.raises(UsageError, match="unknown toolchain 'gcc-03'.*did you mean 'gcc-O3'"):
        lab.toolchain("gcc-03")
    with pytest.raises(UsageError, match="unknown cipher 'rijndeal'.*did you mean 'rijndael'"):
        lab.cipher("rijndeal")
    with pytest.raises(UsageError, match="did you mean 'ttable'"):
        lab.impl("rijndael/tttable")
    with pytest.raises(UsageError, match="unknown profile 'quik'.*'quick'"):
        lab.profile("quik")


def test_target_schema_errors(tmp_path):
    def lab():
        return Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)

    base = textwrap.dedent("""\
        name: t
        description: d
        triple: sparc64-linux-gnu
        arch: sparc64
        endianness: big
        word_bits: 64
        runner: qemu-user
        families: [gcc]
        counter: clock
        """)
    write(tmp_path / "targets" / "t.yaml", base)
    with pytest.raises(ConfigError, match="qemu"):  # qemu-user runner needs the qemu binary
        lab()
    write(tmp_path / "targets" / "t.yaml", base + "qemu: qemu-sparc64\nendianess: big\n")
    with pytest.raises(ConfigError, match="key 'endianess'.*unknown key"):
        lab()
    write(tmp_path / "targets" / "t.yaml", base.replace("endianness: big", "endianness: middle") + "qemu: q\n")
    with pytest.raises(ConfigError, match="key 'endianness'"):
        lab()


def test_cipher_yaml_must_name_existing_sources(tmp_path):
    d = tmp_path / "ciphers" / "toy"
    write(d / "cipher.yaml", """\
        name: toy
        display: Toy
        block_bits: 64
        key_bits: [64]
        vectors: null
        implementations:
          ref: {sources: [missing.c], class: portable, summary: s, word_bits: 32, default: true}
        """)
    with pytest.raises(ConfigError, match="implementations.ref.sources.*missing.c"):
        Lab(root=tmp_path, cipher_dirs=[tmp_path / "ciphers"], shared=tmp_path)


def test_exported_json_schemas_are_current(lab, tmp_path):
    written = export_schemas(tmp_path)
    assert {p.stem for p in written} == {f"{k}.schema" for k in SCHEMAS}
    for p in written:
        committed = lab.root / "schemas" / p.name
        assert committed.exists(), f"run `invoke schema` to create {committed.name}"
        assert json.loads(committed.read_text()) == json.loads(p.read_text()), f"{p.name} is stale: run `invoke schema`"
    schema = json.loads((tmp_path / "matrix.schema.json").read_text())
    assert schema["additionalProperties"] is False


def test_profiles_adapt_sampling_per_cipher_as_data(lab):
    nist = lab.profile("nist")
    assert nist.sampling.precision == 0.01 and nist.sampling_for("frog").budget_seconds == 60
    assert nist.sampling_for("rc6").budget_seconds == nist.sampling.budget_seconds
    assert nist.cycles.sizes == [1, 16, 128, 1024, 32768]
    assert lab.profile("quick").sampling.precision == 0.03


def test_profile_override_must_name_a_known_cipher(tmp_path):
    write(tmp_path / "profiles" / "p.yaml", PROFILE + "per_cipher: {frgo: {budget_seconds: 10}}\n")
    with pytest.raises(ConfigError, match="per_cipher.frgo.*not a known cipher"):
        Lab(root=tmp_path, cipher_dirs=[tmp_path / "none"], shared=tmp_path)


def test_container_backend_uses_the_container_targets(lab):
    from lab.plan import narrowed

    m = lab.matrix()
    assert narrowed(m).targets == m.targets
    if m.container_targets:
        assert narrowed(m, backend="container").targets == m.container_targets
    assert narrowed(m, backend="container", targets=["sparc64"]).targets == ["sparc64"]
    full = lab.matrix(lab.root / "presets" / "full.yaml")
    assert {"x86_64", "i386", "aarch64", "armhf", "riscv64", "sparc64", "mips64", "ppc64", "s390x"} <= set(full.targets)


def test_every_preset_is_a_valid_matrix_and_is_chosen_by_name(lab):
    """presets/<name>.yaml: each a valid matrix; --preset NAME plans from it; an unknown name or --preset with
    --matrix is a one-line error."""
    from lab.errors import UsageError
    from lab.request import RunRequest

    names = sorted(p.stem for p in (lab.root / "presets").glob("*.yaml"))
    assert names == ["compilers", "compilers-cross", "full", "toolchains"]
    for n in names:
        lab.matrix(lab.root / "presets" / f"{n}.yaml")
    assert RunRequest(preset="full").matrix_path(lab.root) == lab.root / "presets" / "full.yaml"
    assert RunRequest().matrix_path(lab.root) is None  # matrix.yaml
    with pytest.raises(UsageError, match="compilers"):
        RunRequest(preset="compiler").matrix_path(lab.root)  # did you mean 'compilers'
    with pytest.raises(UsageError, match="--matrix and --preset"):
        RunRequest.from_options(matrix="matrix.yaml", preset="full")
