"""Java cells in results/: build, gate, measure (JMH) and store Java implementations like C cells.

:func:`run_java_cells` is the one entry point (``python -m lab java-run`` / ``invoke java.run``, and the matrix
run's Java switch): for a selection of ciphers x Java implementations (ours and the peers) x JVM profiles it

* builds once (lab.java.build, content-hash cached); a cipher folder javac refuses is left out and its cells are
  ``build_failed`` with javac's error, the others still run;
* gates each implementation once per build with the Java kat program (lab.java.run_kat, the C builds' verdict),
  under the first JIT profile of the selection (the bytecode is the same under every profile); a failing
  implementation's cells are red with the verdict's reason, the run goes on;
* measures with JMH: forks are processes (per-process minima), batches of forks until every quantity's interval
  reaches the lab profile's precision (its estimator and confidence, lab.quantities.headline), or the process or
  time budget is spent; JMH's warm-up iterations let the JIT compile the hot methods first;
* measures Sterbenz & Lipp's own method (java_src/bench/cipherlab/bench/SterbenzLipp.java) in one more JVM;
* writes lab.results.CellRecord lines with ``language: java`` (toolchain = the JVM profile, target = host), the
  JVM's ``java -version`` build, its flags and the JIT state it reports (-XX:+PrintFlagsFinal) in ``java``.

A missing JDK or Maven makes every cell ``unavailable`` with the Debian package to install.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__, java, protocol, system
from .config import Lab
from .quantities import cycle_quantities, timing_quantities
from .quantities import worst_precision as quantities_worst
from .results import CellRecord, RunWriter
from .status import Status

TARGET = "host"
SCALE = 1000  # JMH's average ns per operation is stored as ns per SCALE operations, an integer (TimingOp.ns)
BLOCK_BENCHMARKS = ["encrypt1", "decrypt1", "keySetup"]
MANY_BENCHMARKS = ["encrypt1024", "decrypt1024"]
JIT_FLAGS = ("TieredCompilation", "TieredStopAtLevel", "UseCompiler", "UseAES", "UseAESIntrinsics",
             "CICompilerCount")


@dataclass
class JavaSettings:
    """How Java cells are measured.  Processes (JMH forks) and the time budget are Java's own (a JVM process
    with its JIT warm-up costs seconds, a C process milliseconds); estimator, confidence and precision are the
    lab profile's."""

    forks: int = 2  # JMH forks per batch (processes added at a time)
    min_processes: int = 3
    max_processes: int = 6
    budget_seconds: float = 180.0
    warmup: int = 3  # JMH warm-up iterations per fork: the JIT compiles the hot methods during these
    iterations: int = 5  # measured iterations per fork (the samples of a process)
    iteration_ms: int = 200
    key_bits: tuple[int, ...] | None = None  # default: every key size of the cipher
    sterbenz_lipp: bool = True
    sl_repeats: int = 128  # samples of Sterbenz & Lipp's method (theirs: 128)
    sl_buffers: int = 2048  # 1 KiB encryptions per sample (theirs: 2048)
    sl_setups: int = 1024  # key setups of each of 32 keys per sample (theirs: 1024)
    timeout: float = 1800.0


@dataclass
class JavaOutcome:
    run_dir: Path
    cells: list[str]
    counts: dict[str, int] = field(default_factory=dict)


# ------------------------------------------------------------------ selection
def select(impls: dict[str, java.JavaImpl], ciphers: list[str] | None, implementations) -> list[java.JavaImpl]:
    """ours, peers, all (default), default (each cipher's default of ours), or a list of cipher/name ids."""
    sel = implementations or "all"
    from .errors import UsageError, did_you_mean

    have = sorted({i.cipher for i in impls.values()})
    for c in ciphers or ():
        if c not in have:
            raise UsageError(f"option --ciphers: no Java code for cipher {c}: {did_you_mean(c, have)}")
    if isinstance(sel, str) and sel not in ("all", "ours", "peers", "default"):
        raise UsageError(f"option --implementations: '{sel}' (use all, ours, peers, default or cipher/name ids)")
    out = []
    for i in impls.values():
        if ciphers and i.cipher not in ciphers:
            continue
        if isinstance(sel, (list, tuple)):
            if i.id in sel:
                out.append(i)
        elif sel == "all" or (sel == "ours" and i.impl_class != "peer") or (sel == "peers" and i.impl_class == "peer") \
                or (sel == "default" and i.default):
            out.append(i)
    if isinstance(sel, (list, tuple)):
        unknown = sorted(set(sel) - {i.id for i in impls.values()})
        if unknown:
            raise UsageError(f"option --implementations: no Java implementation {unknown[0]}: "
                             f"{did_you_mean(unknown[0], sorted(impls))}")
    return out


def cell_id(impl: java.JavaImpl, profile: str) -> str:
    return f"{impl.cipher}/{impl.name}@{profile}@{TARGET}"


# ------------------------------------------------------------------ JVM facts
def jvm_state(profile: java.JvmProfile) -> tuple[str, str, dict[str, str]]:
    """(java -version build line, JIT state, the JIT's final flags) of a JVM profile, as the JVM reports them."""
    r = java.jvm_command(profile, [*profile.flags, "-XX:+PrintFlagsFinal", "-version"], 120)
    flags = {}
    for ln in r.stdout.splitlines():
        m = re.match(r"\s*\S+\s+(\w+)\s+=\s+(\S+)", ln)
        if m and m.group(1) in JIT_FLAGS:
            flags[m.group(1)] = m.group(2)
    build = (r.stderr.strip().splitlines() or [""])[-1]
    if "interpreted mode" in build or flags.get("UseCompiler") == "false":
        jit = "interpreter"
    elif flags.get("TieredCompilation") == "true" and int(flags.get("TieredStopAtLevel", "4")) < 4:
        jit = "C1"
    else:
        jit = "C2 (tiered)" if flags.get("TieredCompilation") == "true" else "C2"
    return build, jit, flags


def toolchains_meta(profiles: list[java.JvmProfile], states: dict[str, tuple] | None = None) -> dict[str, dict]:
    """run.json's `toolchains` entries of JVM profiles (the shape of a C toolchain's, cc = the java launcher), for
    a run that holds Java cells (a matrix run adds these to its own)."""
    states = states if states is not None else (
        {} if java.unavailable() else {p.name: jvm_state(p) for p in profiles if not java.profile_unavailable(p)})
    return {p.name: {"description": p.description, "family": "jvm", "cc": p.java, "flags": list(p.flags),
                     **({"image": p.image} if p.image else {}),
                     "ldflags": [], "imitates": None, "notes": list(p.notes), "reference_tables": [],
                     "package": p.package, "version": states.get(p.name, ("",))[0],
                     "jit": states.get(p.name, ("", ""))[1]} for p in profiles}


# ------------------------------------------------------------------ samples
def _int_timing(procs: list[dict], started: float, seconds: float) -> list[dict]:
    """lab.java.timing_processes' float ns per operation as lab.results.TimingProcess (integers per SCALE ops)."""
    return [{"started": started, "seconds": seconds,
             "key_sizes": {ks: {op: {"per_sample": SCALE * d["per_sample"], "ns": [round(x * SCALE) for x in d["ns"]]}
                                for op, d in ops.items()} for ks, ops in p.items()}} for p in procs]


def _int_cycles(procs: list[list[dict]], started: float, seconds: float) -> list[dict]:
    return [{"started": started, "seconds": seconds, "ticks_per_second": None,
             "ops": [{**o, "calls": SCALE * o["calls"], "deltas": [round(x * SCALE) for x in o["deltas"]]}
                     for o in ops]} for ops in procs]


def worst_precision(timing: list[dict], cycles: list[dict], block_bits: int, estimator: str,
                    confidence: float) -> float:
    """The largest relative half-width among a Java cell's quantities so far (what the stop rule judges)."""
    tq = timing_quantities([p["key_sizes"] for p in timing], block_bits, "jmh")
    cq = cycle_quantities([p["ops"] for p in cycles])
    return quantities_worst(tq + cq, estimator, confidence, empty=float("inf"))  # none yet: not precise


def measure(b: java.JavaBuild, impl: java.JavaImpl, profile: java.JvmProfile, key_bits: list[int],
            s: JavaSettings, estimator: str, confidence: float, precision: float, work: Path) -> dict:
    """JMH batches until the precision, process or time limit: the results' Measurement of one Java cell."""
    timing: list[dict] = []
    cycles: list[dict] = []
    t_start = time.monotonic()
    batch, stopped = 0, "budget"
    jmh_args = {"warmup": s.warmup, "iterations": s.iterations, "iteration_ms": s.iteration_ms,
                "timeout": s.timeout}
    while True:
        n = s.forks if timing else max(s.forks, s.min_processes)
        n = max(1, min(n, s.max_processes - len(timing)))
        started, t0 = time.time(), time.monotonic()
        stem = f"{impl.cipher}_{impl.name}-{profile.name}-{batch}"
        rs = java.run_jmh(b, impl, profile, work / f"{stem}-one.json", key_bits=key_bits,
                          benchmarks=BLOCK_BENCHMARKS, forks=n, **jmh_args)
        rs += java.run_jmh(b, impl, profile, work / f"{stem}-many.json", key_bits=key_bits[:1],
                           benchmarks=MANY_BENCHMARKS, forks=n, **jmh_args)
        secs = round(time.monotonic() - t0, 3)
        timing += _int_timing(java.timing_processes(rs, impl.id), started, secs / n)
        cycles += _int_cycles(java.cycle_processes(rs, impl.id), started, secs / n)
        batch += 1
        p = min(len(timing), len(cycles))
        if p >= s.min_processes and worst_precision(timing, cycles, impl.block_bits, estimator,
                                                    confidence) <= precision:
            stopped = "precision"
            break
        if p >= s.max_processes:
            stopped = "max_processes"
            break
        if time.monotonic() - t_start >= s.budget_seconds:
            stopped = "budget"
            break
    return {"timer": "jmh-avgt", "blocks_per_call": 1, "counter": "jmh", "unit": "ns", "timing": timing,
            "cycles": cycles, "estimator": estimator, "confidence": confidence, "precision_target": precision,
            "stopped": stopped, "seconds": round(time.monotonic() - t_start, 3), "cpu": None, "system": {}}


def sterbenz_lipp(b: java.JavaBuild, impl: java.JavaImpl, profile: java.JvmProfile, key_bits: list[int],
                  s: JavaSettings) -> list[dict]:
    """Sterbenz & Lipp's method in one JVM of the profile: per key size and operation, the samples."""
    c = java.run_program(b, "cipherlab.bench.SterbenzLipp",
                         ["--impl", impl.id, "--key-bits", ",".join(map(str, key_bits)), "--repeats",
                          str(s.sl_repeats), "--buffers", str(s.sl_buffers), "--setups", str(s.sl_setups)],
                         profile, s.timeout)
    recs = protocol.read(c, "SterbenzLipp") if c.ok else []
    if not c.ok or not protocol.of(recs, protocol.SinkRecord):
        tail = " | ".join(ln for ln in (c.stdout + c.stderr).splitlines()[-2:])
        raise RuntimeError(f"Sterbenz & Lipp's method on {impl.id} ({profile.name}): {c.describe_failure()}: "
                           f"{tail[:300]}")
    return [r.sample() for r in protocol.of(recs, protocol.SterbenzLippRecord)]


# ------------------------------------------------------------------ records
def record(lab: Lab, impl: java.JavaImpl, profile: java.JvmProfile, machine: str, status: Status, reason: str | None,
           stages: dict[str, float], *, key_sizes: list[int] | None = None, b: java.JavaBuild | None = None,
           cached: bool = False, verdict=None, measurement: dict | None = None, jvm: dict | None = None) -> CellRecord:
    """The one place a Java cell record is assembled."""
    cipher = lab.ciphers[impl.cipher]
    facts = {"impl_class": impl.impl_class, "default": impl.default, "summary": impl.summary, "language": "java",
             **({"peer": {"library": impl.library, "package": "jdk" if impl.library == "sunjce"
                          else "org.bouncycastle:bcprov-jdk18on", "code": impl.code}} if impl.library else {})}
    rec: dict = {
        "cell": cell_id(impl, profile.name), "cipher": impl.cipher, "implementation": impl.name,
        "impl_class": impl.impl_class, "display": impl.display,
        "label": impl.display if impl.impl_class != "peer" else f"{impl.display} [{impl.name}]",
        "round1": cipher.round1, "block_bits": impl.block_bits, "key_sizes": list(key_sizes or impl.key_bits),
        "toolchain": profile.name, "target": TARGET, "emulated": False, "machine": machine, "status": status,
        "reason": reason, "seconds": round(sum(stages.values()), 3), "stages": stages, "impl": facts,
        "language": "java",
    }
    if b is not None:
        rec["build"] = {"compiler": "javac", "compiler_version": b.javac_version, "cflags": ["--release", "17"],
                        "ldflags": [], "code_bytes": {}, "cached": cached, "log": None}
    if verdict is not None and verdict.records:
        rec["kat"] = {"files": verdict.files, "records": verdict.records, "passed": verdict.passed,
                      "failed": verdict.failed, "skipped_key_size": verdict.skipped_key_size,
                      "fails": verdict.fails[:10], "checksums": verdict.checksums,
                      "roundtrip_ok": verdict.roundtrip_ok}
        if verdict.facts:
            rec["impl_facts"] = verdict.facts
    if measurement is not None:
        rec["measurement"] = measurement
    if jvm is not None:
        rec["java"] = jvm
    return CellRecord.model_validate(rec)


def _build(build_dir: Path, impls: dict[str, java.JavaImpl], source_root: Path) \
        -> tuple[java.JavaBuild | None, dict[str, str], bool]:
    """(the build, {cipher: javac's error} for cipher folders javac refused, cached).  A refused cipher folder is
    left out and the rest built again; an error outside ciphers/ fails every cell (cipher "*")."""
    failed: dict[str, str] = {}
    for _ in range(len(impls) + 1):
        try:
            b = java.build(build_dir, impls, source_root, exclude=tuple(sorted(failed)))
            return b, failed, b.cached
        except java.JavaBuildFailed as e:
            bad = set()
            for f in e.files:
                try:
                    rel = f.resolve().relative_to((source_root / "ciphers").resolve())
                    bad.add(rel.parts[0])
                except ValueError:
                    return None, {"*": str(e)}, False
            if not bad or bad <= set(failed):
                return None, {"*": str(e)}, False
            for c in bad:
                failed[c] = str(e)
    return None, {"*": "javac failed"}, False


def run_java_cells(lab: Lab, *, ciphers: list[str] | None = None, implementations: str | list[str] | None = None,
                   jvm_profiles: list[str] | None = None, profile: str = "quick",
                   settings: JavaSettings | None = None, results_dir: Path | None = None,
                   build_dir: Path | None = None, writer: RunWriter | None = None, tag: str = "java",
                   source_root: Path = java.JAVA_SRC, say: Callable[[str], None] = print) -> JavaOutcome:
    """Java cells for ciphers x implementations (ours, peers, all, default or ids) x JVM profiles (default: all of
    java_src/jvm-profiles), measured with the lab profile's estimator, confidence and precision.

    With `writer` (the matrix run's RunWriter) the cells are appended to that run and it is left open, and the
    caller holds the machine's timing lock; otherwise a new run results/<machine>/<id>/ is created and closed, and
    the timing lock is taken here (after the build).  One failing cell never stops the others."""
    s = settings or JavaSettings()
    prof = lab.profile(profile)
    results_dir = Path(results_dir or lab.root / "results")
    build_dir = Path(build_dir or lab.root / "build")
    all_impls = java.discover(lab, source_root)
    chosen = select(all_impls, ciphers, implementations)
    jvms = java.profiles(source_root / "jvm-profiles")
    names = jvm_profiles or sorted(jvms)
    for n in names:
        if n not in jvms:
            from .errors import UsageError, did_you_mean

            raise UsageError(f"option --jvm-profiles: no JVM profile {n}: {did_you_mean(n, sorted(jvms))}")
    cells = [(i, jvms[n]) for i in chosen for n in names]
    machine = system.machine_id()
    own = writer is None
    reason = java.unavailable()  # javac on the host builds for every profile
    missing = {n: java.profile_unavailable(jvms[n]) for n in names} if reason is None else {}
    states = {} if reason else {n: jvm_state(jvms[n]) for n in names if not missing[n]}
    if own:
        writer = RunWriter.create(results_dir, {
            "machine_id": machine, "machine": system.machine(), "git": system.git_revision(lab.root),
            "profile": prof.model_dump(), "matrix": {"language": "java", "ciphers": ciphers, "implementations":
                                                     implementations, "jvm_profiles": names},
            "backend": {"name": "jvm"},
            "toolchains": toolchains_meta([jvms[n] for n in names], states),
            "targets": {TARGET: {**lab.target(TARGET).model_dump(), "emulated": False}},
            "cells_planned": [cell_id(i, p.name) for i, p in cells], "fingerprint": {}, "lab_version": __version__,
            "options": {"java": s.__dict__ | {"key_bits": list(s.key_bits) if s.key_bits else None}}}, tag=tag)
    counts: Counter = Counter()

    def put(rec: CellRecord) -> None:
        writer.add_cell(rec)
        counts[rec.status] += 1
        say(f"{rec.cell}: {rec.status}" + (f" ({rec.reason})" if rec.reason else ""))

    stack = contextlib.ExitStack()
    try:
        if reason is None:
            try:
                java.jars(build_dir)
            except java.JavaUnavailable as e:
                reason = str(e)
        if reason is not None:
            for i, p in cells:
                put(record(lab, i, p, machine, Status.UNAVAILABLE, reason, {}))
            return JavaOutcome(writer.dir, [cell_id(i, p.name) for i, p in cells], dict(counts))
        t0 = time.monotonic()
        b, refused, cached = _build(build_dir, all_impls, source_root)
        t_build = round(time.monotonic() - t0, 3)
        if own:  # timing is exclusive per machine (a matrix run passing its writer already holds the lock)
            from .lock import timing_lock

            stack.enter_context(timing_lock(writer.meta.run_id, lab.root, say=say))
        # the gate runs once per implementation and JVM (the host's, or an image's), under a JIT profile
        gate_profiles = {}
        for n in names:
            if not missing[n]:
                img = jvms[n].image
                if img not in gate_profiles or "-Xint" in gate_profiles[img].flags:
                    gate_profiles[img] = jvms[n]
        gates: dict[tuple, tuple] = {}
        work = build_dir / "java" / "jmh" / writer.meta.run_id
        for impl, p in cells:
            stages = {"build": t_build}
            why = refused.get("*") or (refused.get(impl.cipher) if impl.impl_class != "peer" else None)
            if b is None or why:
                put(record(lab, impl, p, machine, Status.BUILD_FAILED, why, stages))
                continue
            if missing[p.name]:
                put(record(lab, impl, p, machine, "unavailable", missing[p.name], stages))
                continue
            gate_profile = gate_profiles[p.image]
            if (impl.id, p.image) not in gates:
                t0 = time.monotonic()
                v = java.run_kat(b, impl, gate_profile, timeout=prof.timeout_seconds)
                gates[impl.id, p.image] = (v, round(time.monotonic() - t0, 3))
            v, t_kat = gates[impl.id, p.image]
            stages["verify"] = t_kat
            if not v.ok:
                put(record(lab, impl, p, machine, v.status, v.reason, stages, b=b, cached=cached, verdict=v))
                continue
            have = set((v.facts or {}).get("key_bits") or impl.key_bits)
            keys = [k for k in (s.key_bits or impl.key_bits) if k in have] or [impl.key_bits[0]]
            build_line, jit, jit_flags = states[p.name]
            jvm = {"jvm_profile": p.name, "java": p.java, "java_version": build_line, "flags": list(p.flags),
                   **({"image": java._backend(p.image).image_info(lab.target(p.image))} if p.image else {}),
                   "jit": jit, "jit_flags": jit_flags,
                   "jmh": {"version": "1.37", "mode": "avgt", "forks_per_batch": s.forks, "warmup_iterations": s.warmup,
                           "iterations": s.iterations, "iteration_ms": s.iteration_ms,
                           "gated_under": gate_profile.name}}
            t0 = time.monotonic()
            sampling = prof.sampling_for(impl.cipher)
            try:
                m = measure(b, impl, p, keys, s, sampling.estimator, sampling.confidence, sampling.precision, work)
                stages["measure"] = round(time.monotonic() - t0, 3)
                if s.sterbenz_lipp:
                    t0 = time.monotonic()
                    jvm["sterbenz_lipp"] = sterbenz_lipp(b, impl, p, keys, s)
                    stages["sterbenz_lipp"] = round(time.monotonic() - t0, 3)
            except (RuntimeError, OSError, ValueError, KeyError) as e:
                stages["measure"] = round(time.monotonic() - t0, 3)
                put(record(lab, impl, p, machine, Status.MEASURE_FAILED, str(e)[:500], stages, key_sizes=keys, b=b,
                           cached=cached, verdict=v, jvm=jvm))
                continue
            put(record(lab, impl, p, machine, Status.OK, None, stages, key_sizes=keys, b=b, cached=cached, verdict=v,
                       measurement=m, jvm=jvm))
    finally:
        stack.close()
        if own:
            writer.close("finished" if sum(counts.values()) == len(cells) else "interrupted",
                         status_counts=dict(counts))
    return JavaOutcome(writer.dir, [cell_id(i, p.name) for i, p in cells], dict(counts))
