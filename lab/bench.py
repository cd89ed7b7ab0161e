"""Peer benchmark: our implementations against the best portable C/C++ of the same cipher.

    invoke bench.peers                                   # every cipher a peer library has
    invoke bench.peers --ciphers rijndael,des --toolchains gcc-O3 --json peers.json

For each (cipher, our implementation, toolchain) this builds bench/peers/peers.cpp
linked with that ONE implementation (harness registry with
-DCL_IMPL_LIST=X(<cipher>_<strategy>)) and the peer libraries, runs it once per
group of peers, and prints a table: cipher | ours | toolchain | ours ticks/B |
peer | peer ticks/B | ratio (ours/peer; < 1 means we are faster) | same ciphertext.

The program checks that both sides give the same ciphertext for the same key and
4 KiB buffer, then times ECB encryption of that buffer in one call per side,
interleaved in one process, and reports medians in TSC ticks per byte (on a VM
without a PMU: reference ticks, not core cycles).  Our C files are built with the
toolchain profile's compiler and flags; peers.cpp with the matching C++ compiler
(g++ for gcc, clang++ for clang) and the same flags with -std=c++17.  The peer
libraries are the distribution's prebuilt ones, the same for every toolchain.

Peer libraries are Debian packages (PEER_LIBRARIES); the task does not install
them, it names the missing ones.  It is a benchmark, not a test: nothing asserts
the ratio.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json as _json
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from invoke import task

from .build import COMMON, HARNESS, INCLUDE, effective_flags
from .config import ConfigError, Lab

BENCH_SRC = Path("bench/peers/peers.cpp")
BUILD_SUBDIR = Path("build/bench/peers")


@dataclass(frozen=True)
class PeerLibrary:
    package: str          # Debian package that provides headers + library
    header: str           # a header that proves it is installed
    libs: tuple[str, ...]  # link flags
    define: str           # -D for peers.cpp


# Debian packages the benchmark needs (the project's installer should add them).
PEER_LIBRARIES: dict[str, PeerLibrary] = {
    "cryptopp": PeerLibrary("libcrypto++-dev", "/usr/include/cryptopp/cryptlib.h", ("-lcryptopp",), "PEERS_CRYPTOPP"),
    "tomcrypt": PeerLibrary("libtomcrypt-dev", "/usr/include/tomcrypt.h", ("-ltomcrypt",), "PEERS_TOMCRYPT"),
    "openssl": PeerLibrary("libssl-dev", "/usr/include/openssl/evp.h", ("-lcrypto",), "PEERS_OPENSSL"),
    "nettle": PeerLibrary("nettle-dev", "/usr/include/nettle/aes.h", ("-lnettle",), "PEERS_NETTLE"),
}
# C++ compiler per toolchain family, and the Debian package that has it.
CXX = {"gcc": ("g++", "g++"), "clang": ("clang++", "clang")}
APT_PACKAGES = sorted({p.package for p in PEER_LIBRARIES.values()} | {pkg for _, pkg in CXX.values()})


@dataclass(frozen=True)
class Pairing:
    peer: str      # peer id understood by peers.cpp
    ours: str      # "portable" (our default / every non-hardware implementation) or a strategy name
    env: tuple[tuple[str, str], ...] = ()  # environment the peer needs (own process)

    @property
    def library(self) -> str:
        return self.peer.split("-")[0]


# What each peer library really has (Crypto++ 8.7, libtomcrypt 1.18.2, OpenSSL 3,
# Nettle 3.8 on Debian 12).  Our hardware (AES-NI) implementation is compared with
# the peers' AES-NI code; our portable implementations with their non-AES-NI code.
_NOAESNI = (("NETTLE_FAT_OVERRIDE", "none"),)
CATALOGUE: dict[str, list[Pairing]] = {
    "rijndael": [
        Pairing("cryptopp-noaesni", "portable"),
        Pairing("tomcrypt", "portable"),
        Pairing("nettle-noaesni", "portable", _NOAESNI),
        Pairing("openssl", "aesni"),
        Pairing("cryptopp-aesni", "aesni"),
        Pairing("nettle", "aesni"),
    ],
    "rc6": [Pairing("cryptopp", "portable"), Pairing("tomcrypt", "portable")],
    "mars": [Pairing("cryptopp", "portable")],
    "serpent": [Pairing("cryptopp", "portable"), Pairing("nettle", "portable")],
    "twofish": [Pairing("cryptopp", "portable"), Pairing("tomcrypt", "portable"), Pairing("nettle", "portable")],
    "cast256": [Pairing("cryptopp", "portable")],
    "saferplus": [Pairing("tomcrypt", "portable")],
    "des": [Pairing("cryptopp", "portable"), Pairing("tomcrypt", "portable"), Pairing("openssl", "portable"),
            Pairing("nettle", "portable")],
    "3des": [Pairing("cryptopp", "portable"), Pairing("tomcrypt", "portable"), Pairing("openssl", "portable"),
             Pairing("nettle", "portable")],
    "idea": [Pairing("cryptopp", "portable"), Pairing("openssl", "portable")],
}
# Our implementations that need a CPU feature: compared only with the peers named for them.
HARDWARE_STRATEGIES = {"aesni"}


class BenchError(RuntimeError):
    """The benchmark cannot run at all (missing packages, unknown names)."""


@dataclass
class Row:
    cipher: str
    ours: str
    toolchain: str
    peer: str
    status: str  # ok, mismatch, skipped, build_failed, run_failed, unavailable
    ours_per_byte: float | None = None
    peer_per_byte: float | None = None
    ratio: float | None = None
    same_ciphertext: bool | None = None
    reason: str = ""
    record: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("cipher", "ours", "toolchain", "peer", "status", "ours_per_byte",
                                           "peer_per_byte", "ratio", "same_ciphertext", "reason")}
        d.update({k: v for k, v in self.record.items() if k not in d and k != "type"})
        return d


# ------------------------------------------------------------------ checks
def missing_packages(libraries: set[str], families: set[str]) -> list[str]:
    """Debian packages that are needed for these peer libraries and compiler families but absent."""
    missing = [PEER_LIBRARIES[lib].package for lib in sorted(libraries) if not Path(PEER_LIBRARIES[lib].header).exists()]
    missing += [pkg for fam, (cxx, pkg) in sorted(CXX.items()) if fam in families and not shutil.which(cxx)]
    return sorted(set(missing))


# ------------------------------------------------------------------ build
def _run(argv: list[str], cwd: Path, timeout: float = 600) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:.0f}s: {' '.join(argv)}"
    except OSError as e:
        return 127, f"{e}: {' '.join(argv)}"
    return p.returncode, (p.stdout + p.stderr)


def _cxx_flags(cflags: list[str]) -> list[str]:
    return [f for f in cflags if not f.startswith("-std=")] + ["-std=c++17"]


class PeerBuilder:
    """Builds build/bench/peers/<toolchain>/<cipher>/<strategy>/peers (cached by a digest of inputs+commands)."""

    def __init__(self, lab: Lab, libraries: set[str]):
        self.lab = lab
        self.root = lab.root
        self.libraries = sorted(libraries)
        self.host = lab.target("host")
        self.counter = "counter_x86_tsc.c" if platform.machine() in ("x86_64", "i386", "i686") else "counter_clock.c"

    def build(self, cipher_name: str, strategy: str, toolchain_name: str) -> tuple[Path | None, str]:
        """(path of the program, "") or (None, reason)."""
        try:
            cipher = self.lab.cipher(cipher_name)
            sources = cipher.sources(strategy)
            tc = self.lab.toolchain(toolchain_name)
        except ConfigError as e:
            return None, str(e)
        cxx = CXX[tc.family][0]
        cc = tc.cc
        cflags = effective_flags(tc, self.host)
        inc = ["-I", str(INCLUDE), "-I", str(HARNESS)]
        outdir = BUILD_SUBDIR / toolchain_name / cipher_name / strategy
        common = BUILD_SUBDIR / toolchain_name / "common"
        defines = [f"-D{PEER_LIBRARIES[lib].define}" for lib in self.libraries]
        libs = [f for lib in self.libraries for f in PEER_LIBRARIES[lib].libs]

        cmds: list[list[str]] = []
        objs: list[str] = []
        for name in [*COMMON, self.counter]:
            o = str(common / (Path(name).stem + ".o"))
            cmds.append([cc, *cflags, *inc, "-c", str(HARNESS / name), "-o", o])
            objs.append(o)
        peers_o = str(common / "peers.o")
        cmds.append([cxx, *_cxx_flags(cflags), *inc, *defines, "-c", str(BENCH_SRC), "-o", peers_o])
        rel_sources = [s.relative_to(self.root.resolve()) if s.is_relative_to(self.root.resolve()) else s
                       for s in sources]
        for src in rel_sources:
            o = str(outdir / (Path(src).stem + ".o"))
            cmds.append([cc, *cflags, *inc, "-I", str(Path(src).parent), "-c", str(src), "-o", o])
            objs.append(o)
        reg = str(outdir / "registry.o")
        cmds.append([cc, *cflags, *inc, f"-DCL_IMPL_LIST=X({cipher_name}_{strategy})", "-c",
                     str(HARNESS / "registry.c"), "-o", reg])
        exe = outdir / "peers"
        cmds.append([cxx, *_cxx_flags(cflags), peers_o, reg, *objs, *tc.ldflags, *libs, "-o", str(exe)])

        inputs = [*sources, self.root / BENCH_SRC, *(self.root / HARNESS).glob("*.[ch]"),
                  *(self.root / INCLUDE).glob("*.h"), *(h for s in sources for h in s.parent.glob("*.h"))]
        h = hashlib.sha256(_json.dumps(cmds).encode())
        for p in sorted(set(inputs)):
            h.update(str(p).encode())
            h.update(p.read_bytes())
        digest = h.hexdigest()
        stamp = self.root / outdir / "build.json"
        if stamp.exists() and (self.root / exe).exists():
            try:
                if _json.loads(stamp.read_text()).get("digest") == digest:
                    return self.root / exe, ""
            except ValueError:
                pass
        (self.root / outdir).mkdir(parents=True, exist_ok=True)
        (self.root / common).mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        for argv in cmds:
            # The shared objects (harness, peers.o) are rebuilt when out of date for this toolchain.
            if argv[-1].startswith(str(common)) and self._fresh(argv):
                continue
            rc, out = _run(argv, self.root)
            if rc != 0:
                err = [ln for ln in out.splitlines() if "error" in ln.lower()] or out.splitlines() or ["failed"]
                return None, f"build failed ({' '.join(argv[:1] + argv[-3:])}): {err[0][:300]}"
            if argv[-1].startswith(str(common)):
                self._mark(argv)
        stamp.write_text(_json.dumps({"digest": digest, "commands": cmds}))
        return self.root / exe, ""

    # shared objects: fresh when the same command was used on the same source content
    def _key(self, argv: list[str]) -> str:
        src = self.root / argv[argv.index("-c") + 1]
        deps = [src, *(self.root / HARNESS).glob("*.h"), *(self.root / INCLUDE).glob("*.h")]
        h = hashlib.sha256(_json.dumps(argv).encode())
        for p in deps:
            h.update(p.read_bytes())
        return h.hexdigest()

    def _fresh(self, argv: list[str]) -> bool:
        obj = self.root / argv[-1]
        mark = obj.with_suffix(".digest")
        return obj.exists() and mark.exists() and mark.read_text() == self._key(argv)

    def _mark(self, argv: list[str]) -> None:
        (self.root / argv[-1]).with_suffix(".digest").write_text(self._key(argv))


# ------------------------------------------------------------------ plan + run
@dataclass
class Plan:
    units: list[tuple[str, str, list[Pairing]]]  # (cipher, our strategy, pairings)
    notes: list[str]


def plan(lab: Lab, ciphers: list[str] | None, impls: str = "default", peers: list[str] | None = None) -> Plan:
    """Which of our implementations meet which peers; ciphers without a cipher.yaml are skipped with a note."""
    notes: list[str] = []
    wanted = ciphers or list(CATALOGUE)
    known = set(lab.cipher_names())
    units: list[tuple[str, str, list[Pairing]]] = []
    for name in wanted:
        if name not in CATALOGUE:
            notes.append(f"{name}: no peer library here has it (peers exist for {', '.join(CATALOGUE)})")
            continue
        if name not in known:
            folder = lab.cipher_dirs[0] / name
            why = "no folder" if not folder.exists() else "folder has no cipher.yaml yet"
            notes.append(f"{name}: skipped, {why}")
            continue
        try:
            spec = lab.cipher(name)
        except ConfigError as e:
            notes.append(f"{name}: skipped, {e}")
            continue
        strategies = list(spec.spec.implementations)
        pairings = [p for p in CATALOGUE[name] if not peers or p.peer in peers or p.library in peers]
        by_impl: dict[str, list[Pairing]] = {}
        for p in pairings:
            if p.ours == "portable":
                if impls == "default":
                    chosen = [spec.default_impl] if spec.default_impl not in HARDWARE_STRATEGIES else []
                elif impls == "all":
                    chosen = [s for s in strategies if s not in HARDWARE_STRATEGIES]
                else:
                    chosen = [s for s in impls.split(",") if s in strategies and s not in HARDWARE_STRATEGIES]
            else:
                chosen = [p.ours] if p.ours in strategies and (impls in ("default", "all") or p.ours in impls.split(",")) else []
                if not chosen and p.ours not in strategies:
                    notes.append(f"{name}: no '{p.ours}' implementation in cipher.yaml yet; {p.peer} not compared")
            for s in chosen:
                by_impl.setdefault(s, []).append(p)
        if impls not in ("default", "all") and not set(impls.split(",")) & set(strategies):
            notes.append(f"{name}: none of the implementations '{impls}' exists (has {', '.join(strategies)})")
        for s in strategies:
            if s in by_impl:
                units.append((name, s, by_impl[s]))
    return Plan(units, list(dict.fromkeys(notes)))


def _vectors(lab: Lab, cipher: str) -> Path | None:
    """The cipher's known-answer file (shared/vectors), used to check both sides' byte conventions."""
    try:
        files = [f for f in lab.cipher(cipher).vector_files(lab.vectors_dir) if f.exists()]
    except ConfigError:
        return None
    return files[0] if files else None


def _groups(pairings: list[Pairing]) -> list[tuple[dict[str, str], list[str]]]:
    """Peers grouped by the environment their process needs."""
    out: dict[tuple, list[str]] = {}
    for p in pairings:
        out.setdefault(p.env, []).append(p.peer)
    return [(dict(env), ps) for env, ps in out.items()]


def _run_group(argv: list[str], env: dict[str, str], group: list[str], cipher: str, ours: str, tname: str,
               kat: Path | None, repeat: int) -> tuple[list[Row], list[str]]:
    """Runs one timing program `repeat` times; per peer keeps the run with the median ratio."""
    rows: list[Row] = []
    notes: list[str] = []
    comparisons: dict[str, list[dict]] = {}
    seen: set[str] = set()
    run_env = {k: v for k, v in os.environ.items() if k != "NETTLE_FAT_OVERRIDE"} | env
    for rep in range(max(1, repeat)):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=run_env)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except (subprocess.TimeoutExpired, OSError) as e:
            out, rc, err = "", 124, str(e)
        for line in out.splitlines():
            try:
                rec = _json.loads(line)
            except ValueError:
                continue
            kind = rec.get("type")
            if kind == "comparison":
                comparisons.setdefault(rec["peer"], []).append(rec)
                seen.add(rec["peer"])
            elif rep:
                continue  # skips and errors are the same every run
            elif kind == "skip":
                rows.append(Row(cipher, ours, tname, rec["peer"], "skipped", reason=rec.get("reason", "")))
                seen.add(rec["peer"])
            elif kind == "unavailable":
                rows += [Row(cipher, ours, tname, g, "unavailable", reason=rec.get("reason", "")) for g in group]
                seen.update(group)
            elif kind == "error":
                notes.append(f"{ours} {tname}: {rec.get('message')} {rec.get('detail', '')}")
        if rep == 0 and rc not in (0, 1):
            break  # 1 = a ciphertext mismatch (reported per row); anything else will not improve
    for g in group:
        if g not in seen:
            tail = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
            rows.append(Row(cipher, ours, tname, g, "run_failed", reason=f"exit {rc}: {tail[:300]}"))
    for peer, recs in comparisons.items():
        recs.sort(key=lambda r: r["ratio"])
        rec = dict(recs[(len(recs) - 1) // 2])
        rec["runs"] = len(recs)
        rec["ratios_all_runs"] = [r["ratio"] for r in recs]
        same = all(bool(r["same_ciphertext"]) for r in recs)
        rows.append(Row(cipher, ours, tname, peer, "ok" if same else "mismatch", rec["ours_per_byte"],
                        rec["peer_per_byte"], rec["ratio"], same,
                        "" if same else "ciphertexts differ: byte conventions or a bug", record=rec))
        n = rec.get("kat_records", 0)
        for side in ("ours", "peer"):
            if n and rec.get(f"{side}_kat_passed") != n:
                who = ours if side == "ours" else peer
                notes.append(f"{who} ({tname}): {rec.get(f'{side}_kat_passed')} of {n} single-block known answers "
                             f"of {kat.name if kat else '?'} pass")
    order = {g: i for i, g in enumerate(group)}
    rows.sort(key=lambda r: order.get(r.peer, len(order)))
    return rows, notes


def run_peers(lab: Lab, ciphers: list[str] | None = None, toolchains: list[str] | None = None,
              impls: str = "default", peers: list[str] | None = None, rounds: int = 200, warmup: int = 20,
              nbytes: int = 4096, cpu: int | None = None, repeat: int = 1,
              echo=print) -> tuple[list[Row], list[str]]:
    """Builds and runs every comparison; returns the rows and notes (nothing raised for one cipher's failure)."""
    toolchains = toolchains or ["gcc-O3", "clang-O3"]
    for t in toolchains:
        if t not in lab.toolchain_names():
            raise BenchError(f"no toolchain profile '{t}'; known: {', '.join(lab.toolchain_names())}")
    if peers:
        bad = [p for p in peers if p not in {q.peer for ps in CATALOGUE.values() for q in ps} | set(PEER_LIBRARIES)]
        if bad:
            raise BenchError(f"unknown peer(s) {bad}; use library names {sorted(PEER_LIBRARIES)} or peer ids")
    pl = plan(lab, ciphers, impls, peers)
    libraries = {p.library for _, _, ps in pl.units for p in ps} or set(PEER_LIBRARIES)
    families = {lab.toolchain(t).family for t in toolchains}
    missing = missing_packages(libraries, families)
    if cpu is not None and not shutil.which("taskset"):
        missing.append("util-linux")
    if missing:
        raise BenchError("missing Debian packages for the peer benchmark: " + " ".join(missing)
                         + f"\n  install them with: apt-get install {' '.join(missing)}"
                         + f"\n  (the benchmark needs: {' '.join(APT_PACKAGES)})")
    builder = PeerBuilder(lab, set(PEER_LIBRARIES) - set(
        lib for lib in PEER_LIBRARIES if not Path(PEER_LIBRARIES[lib].header).exists()))
    rows: list[Row] = []
    notes = list(pl.notes)
    for cipher, strategy, pairings in pl.units:
        ours = f"{cipher}/{strategy}"
        for tname in toolchains:
            echo(f"  {ours} {tname}: building", flush=True)
            exe, why = builder.build(cipher, strategy, tname)
            if exe is None:
                rows += [Row(cipher, ours, tname, p.peer, "build_failed", reason=why) for p in pairings]
                continue
            kat = _vectors(lab, cipher)
            for env, group in _groups(pairings):
                argv = [str(exe), "--peers", ",".join(group), "--rounds", str(rounds), "--warmup", str(warmup),
                        "--bytes", str(nbytes), "--toolchain", tname, *(["--kat", str(kat)] if kat else [])]
                if cpu is not None:
                    argv = ["taskset", "-c", str(cpu), *argv]
                echo(f"  {ours} {tname}: timing against {', '.join(group)}"
                     + (f" ({' '.join(f'{k}={v}' for k, v in env.items())})" if env else "")
                     + (f", {repeat} runs" if repeat > 1 else ""), flush=True)
                new_rows, new_notes = _run_group(argv, env, group, cipher, ours, tname, kat, repeat)
                rows += new_rows
                notes += new_notes
    return rows, list(dict.fromkeys(notes))


# ------------------------------------------------------------------ output
def _fmt(v: float | None, nd: int = 2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def _short_version(rec: dict) -> str:
    v = rec.get("peer_version", "")
    if v.startswith("OpenSSL "):  # "OpenSSL 3.0.x <date>"
        v = v.split()[1]
    return f"{rec.get('peer_library', '?')} {v}; {rec.get('peer_code', '?')}"


def format_table(rows: list[Row]) -> str:
    head = ["cipher", "ours impl", "toolchain", "ours ticks/B", "peer", "peer ticks/B", "ratio", "same ciphertext",
            "KAT ours/peer"]
    body = []
    for r in rows:
        peer = f"{r.peer} ({_short_version(r.record)})" if r.record else r.peer
        same = {True: "yes", False: "NO", None: "-"}[r.same_ciphertext]
        ratio = _fmt(r.ratio, 3) + (" *" if r.ratio is not None and r.ratio > 1.0 else "")
        if r.status not in ("ok", "mismatch"):
            ratio, same = r.status, "- (see notes)"
        n = r.record.get("kat_records")
        kat = f"{r.record.get('ours_kat_passed')}/{r.record.get('peer_kat_passed')} of {n}" if n else "-"
        body.append([r.cipher, r.ours, r.toolchain, _fmt(r.ours_per_byte), peer, _fmt(r.peer_per_byte), ratio, same,
                     kat])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), sep, *(line(b) for b in body)])


def _machine() -> dict:
    try:
        from .system import machine

        return machine()
    except Exception:  # noqa: BLE001 - provenance is best effort
        return {"arch": platform.machine()}


@task(help={
    "ciphers": f"comma list (default: every cipher a peer has: {', '.join(CATALOGUE)})",
    "toolchains": "comma list of toolchain profiles for OUR code (default gcc-O3,clang-O3)",
    "impls": "which of our implementations meet the portable peers: default (the cipher's default), all, "
             "or a comma list of strategies; the AES-NI one always meets the AES-NI peers",
    "peers": f"comma list of peer libraries or ids (default all: {', '.join(PEER_LIBRARIES)})",
    "rounds": "timed rounds per side, interleaved (default 200; the median is reported)",
    "warmup": "untimed rounds first (default 20)",
    "bytes": "buffer size in bytes (default 4096)",
    "json": "also write the rows (and provenance) as JSON to this path",
    "cpu": "pin the timing program to this CPU number with taskset (default: not pinned)",
    "repeat": "run each timing program this many times and keep, per peer, the run with the median ratio "
              "(default 1: one process run)",
})
def peers_task(c, ciphers="", toolchains="gcc-O3,clang-O3", impls="default", peers="", rounds=200, warmup=20,
               bytes=4096, json="", cpu="", repeat=1):  # noqa: A002 - option names seen by the user
    """Time our ECB encryption against Crypto++, libtomcrypt, OpenSSL and Nettle on the same 4 KiB buffer.

    Same key, same buffer, same process, interleaved; checks the ciphertexts are
    equal; prints cipher | ours | toolchain | ours ticks/B | peer | peer ticks/B |
    ratio (ours/peer, <= 1.0 is the target) | same ciphertext.  Needs the Debian
    packages libcrypto++-dev libtomcrypt-dev libssl-dev nettle-dev g++ clang.
    """
    lab = Lab()
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()] or None  # noqa: E731
    started = _dt.datetime.now().astimezone()
    try:
        rows, notes = run_peers(lab, split(ciphers), split(toolchains), impls or "default", split(peers),
                                int(rounds), int(warmup), int(bytes), int(cpu) if str(cpu).strip() else None,
                                int(repeat))
    except BenchError as e:
        raise SystemExit(f"bench.peers: {e}") from None
    print()
    print(f"peer benchmark, {started:%Y-%m-%d %H:%M %Z}, {_machine().get('cpu_model', '?')}; "
          "ECB encryption of one buffer per call, median of interleaved rounds, TSC ticks per byte")
    print(format_table(rows) if rows else "(no comparison ran)")
    if any(r.ratio is not None and r.ratio > 1.0 for r in rows):
        print("* ratio > 1.0: the peer is faster")
    shown = set()
    for r in rows:
        if r.status not in ("ok", "mismatch"):
            who = f"{r.ours} {r.toolchain}" if r.status == "build_failed" else f"{r.ours} {r.toolchain} vs {r.peer}"
            if (who, r.reason) not in shown:
                shown.add((who, r.reason))
                print(f"note: {who}: {r.status}: {r.reason}")
    for n in notes:
        print(f"note: {n}")
    if any(r.status == "mismatch" for r in rows):
        print("WARNING: some peers gave a DIFFERENT ciphertext for the same key and buffer (rows with 'NO')")
    if json:
        doc = {"format": "cipherlab-peers", "started": started.isoformat(), "machine": _machine(),
               "options": {"ciphers": ciphers, "toolchains": toolchains, "impls": impls, "peers": peers, "cpu": cpu,
                           "repeat": int(repeat),
                           "rounds": int(rounds), "warmup": int(warmup), "bytes": int(bytes)},
               "notes": notes, "rows": [r.as_dict() for r in rows]}
        Path(json).parent.mkdir(parents=True, exist_ok=True)
        Path(json).write_text(_json.dumps(doc, indent=1) + "\n")
        print(f"rows: {json}")
    if any(r.status == "mismatch" for r in rows):
        raise SystemExit(1)
