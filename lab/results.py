"""record: the typed cell record, its only writer and reader, and the tidy (long-format) DataFrame.

Results are stored per machine, as asv does, so runs of several machines merge
by copying folders::

    results/<machine>/<run-id>/run.json       metadata stored once (format version, machine, profile,
                                               matrix, toolchains with compiler versions, targets, git, plan)
    results/<machine>/<run-id>/cells.jsonl    one CellRecord per line, appended as each cell ends
    results/<machine>/<run-id>/flagsearch.json  a flag search's run only: its outcome (models.FlagSearch)

Format history (``version``):
  1  2026-11: cells as untyped dicts; one timing record of N long samples per key size, single-call
     cycle deltas (still read: converted on load, see _from_v1).
  2  2026-11: typed records (this module's models; unknown or missing fields are errors); raw samples
     per measuring process; impl_class; machine; measurement settings, stop reason and system state.

:func:`load` turns runs into one row per measured quantity (:data:`COLUMNS`).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from . import metrics, speed, stats
from .errors import RunError, UserError
from .models import STATUSES, CtVerdict, FlagSearch, Gauge, Status
from .quantities import (Quantity, at_reference_speed, cycle_quantities, gauge_relative, headline, lane_difference,
                         timing_quantities)

FORMAT = "cipherlab-results"
VERSION = 2
FLAG_SEARCH = "flagsearch.json"  # a flag search's outcome (models.FlagSearch), in the folder of its run


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BuildInfo(Model):
    compiler: str
    compiler_version: str
    cflags: list[str]
    ldflags: list[str]
    code_bytes: dict[str, int]
    cached: bool
    log: str | None = None
    programs: str | None = None  # hash of the measured programs and their environment (runs before 2026-11-29: none)
    library: str | None = None  # a peer's library package and version where it ran (runs before 2026-11-30: none)


class ImplFacts(Model):
    block_bytes: int
    ks_bytes: int
    table_bytes: int
    key_bits: list[int]


class KatInfo(Model):
    files: list[str]
    records: int
    passed: int
    failed: int
    skipped_key_size: int
    sampled_out: int = 0  # long records a quick gate did not check (the flag search's candidates)
    fails: list[dict[str, Any]]
    checksums: dict[int, str]
    roundtrip_ok: bool


class TimingOp(Model):
    per_sample: int  # blocks (encrypt, decrypt) or key pairs (key_setup) in one sample
    ns: list[int]


class TimingProcess(Model):
    started: float  # time.time() when the process started
    seconds: float
    key_sizes: dict[int, dict[Literal["encrypt", "decrypt", "key_setup"], TimingOp]]
    gauge: Gauge | None = None
    cpu: int | None = None  # the CPU it ran on, when the run measured on several lanes


class CycleOp(Model):
    key_size: int
    op: Literal["null", "ekey", "dkey", "init", "encrypt", "decrypt"]
    n: int
    calls: int
    counter: str
    unit: str
    deltas: list[int]


class CyclesProcess(Model):
    started: float
    seconds: float
    ticks_per_second: float | None
    ops: list[CycleOp]
    gauge: Gauge | None = None
    cpu: int | None = None  # the CPU it ran on, when the run measured on several lanes


class Measurement(Model):
    timer: str
    blocks_per_call: int
    counter: str | None
    unit: str | None
    timing: list[TimingProcess]
    cycles: list[CyclesProcess]
    estimator: str
    confidence: float
    precision_target: float | None
    run_noise: float = 0.0  # the machine's run-to-run noise the trimmed estimator's intervals took (0: older runs)
    within_scale: float = 1.0  # the machine's calibration of the within-run part the intervals took (lab.calibration)
    stopped: Literal["precision", "max_processes", "budget", "emulated", "single"]
    seconds: float
    cpu: int | None  # the CPU its processes were pinned to (the first lane's, with several)
    system: dict[str, float | int]
    lanes: int = 1  # processes measured at once, each on its own CPU (sampling.lanes)


class IcountInfo(Model):
    counter: str
    unit: str
    emulator: str
    ops: list[CycleOp]


class SterbenzLippOp(Model):
    """Sterbenz & Lipp's own timing (their section 4.1): `per_sample` operations (key setups or 16-byte blocks) per
    timed sample, each sample's total ns."""

    key_size: int
    op: Literal["encrypt", "decrypt", "key_setup_enc", "key_setup_dec"]
    per_sample: int
    ns: list[int]


class JavaInfo(Model):
    """A Java cell's JVM (language java): the profile, its flags, the `java -version` build, the JIT state the
    JVM reported (its final flags), the measuring program's settings and Sterbenz & Lipp's method's samples."""

    jvm_profile: str
    java: str
    java_version: str
    flags: list[str]
    jit: str  # interpreter, C1, C2 (tiered)
    jit_flags: dict[str, str]
    harness: dict[str, Any] = {}  # the measuring program (cipherlab.Measure) and its JIT warm-up
    jmh: dict[str, Any] | None = None  # records written when JMH measured Java cells (before the cell pipeline)
    sterbenz_lipp: list[SterbenzLippOp] = []
    image: dict[str, Any] | None = None  # a JVM in a container image (jvm profile `image:`): its ref, id, labels


class CellRecord(Model):
    """One cell: what was built, whether it is right, and every raw sample it was measured by."""

    cell: str
    cipher: str
    implementation: str
    impl_class: Literal["portable", "simd", "hardware", "peer"]
    display: str
    label: str
    round1: bool
    block_bits: int
    key_sizes: list[int]
    toolchain: str
    target: str
    emulated: bool
    machine: str
    status: Status
    reason: str | None
    seconds: float
    stages: dict[str, float]
    reused: list[str] = []  # stages answered from what an earlier walk of the same binary stored (lab.memo)
    impl: dict[str, Any]
    image_id: str | None = None
    build: BuildInfo | None = None
    impl_facts: ImplFacts | None = None
    kat: KatInfo | None = None
    measurement: Measurement | None = None
    icount: IcountInfo | None = None
    icount_note: str | None = None
    ct: CtVerdict | None = None  # the constant-time checks (lab/ct.py), when the run asked for them
    language: Literal["c", "c++", "java"] = "c"  # optional: records written before Java cells are C
    java: JavaInfo | None = None


class RunMeta(Model):
    format: Literal["cipherlab-results"]
    version: int
    run_id: str
    machine_id: str
    status: Literal["running", "interrupted", "finished"]
    started: str
    finished: str | None = None
    resumed: list[str] = []
    machine: dict[str, Any]
    git: dict[str, Any]
    profile: dict[str, Any]
    matrix: dict[str, Any]
    backend: dict[str, Any]
    toolchains: dict[str, Any]
    targets: dict[str, Any]
    cells_planned: list[str]
    fingerprint: dict[str, str]  # what a resume must find unchanged: compilers and sources per cell
    system: dict[str, Any] = {}
    status_counts: dict[str, int] = {}
    tsc_hz_measured: float | None = None
    stage_seconds: dict[str, float] = {}  # wall time of each stage of the (last) run of this folder
    lab_version: str = ""
    tag: str = ""
    options: dict[str, Any] = {}
    speed_reference: dict[str, float] = {}  # each gauge group's reference gauge (lab/speed.py); {}: raw figures


COLUMNS = {
    "run_id": "the run's folder name",
    "machine": "the machine that measured (results/<machine>/)",
    "cell": "cipher/implementation@toolchain@target",
    "cipher": "cipher folder name (rijndael, rc6, ...)",
    "display": "cipher name as in NIST's tables",
    "implementation": "implementation name (ttable, ref, ...; a peer library's name for peers)",
    "language": "c (also C++ peer adapters written before the field existed) or java (never ranked with C)",
    "impl_class": "portable, simd, hardware or peer (NIST-comparable rankings use portable only)",
    "code": "what code runs: portable, asm, simd or hardware (a peer's own kind; ours: its class)",
    "default": "True for the cipher's default implementation (None in format-1 results)",
    "label": "row label for tables (display, or e.g. DFC-64)",
    "row": "the row name every table uses: the label, plus [implementation] when the data has several of the "
           "cipher's own implementations (peers always carry their library's name)",
    "round1": "True for the 15 AES round-1 candidates",
    "block_bits": "block size in bits",
    "toolchain": "compiler profile name (toolchains/<name>.yaml)",
    "target": "target name (targets/<name>.yaml)",
    "emulated": "True when the binary ran under an emulator (never ranked with hardware)",
    "status": "cell status: " + ", ".join(STATUSES),
    "ct_trace": "constant-time trace check: clean, leak, unavailable (None: not checked)",
    "ct_divergence": "for a leak: the first divergence (branch or memory, function, file:line)",
    "ct_dudect_t": "dudect's largest |t| on this machine's CPU (None: not run)",
    "ct_dudect": "dudect's verdict: clean, leak (|t| > 4.5), unavailable",
    "metric": "what was measured (see METRICS)",
    "key_size": "key size in bits (NaN for per-implementation facts)",
    "n_blocks": "blocks per call for per-block cycle metrics (NaN otherwise)",
    "unit": "unit of the numbers of this row",
    "estimate": "headline estimate (see estimator): what rankings, charts and comparisons use",
    "ci_low": "lower end of the estimate's confidence interval",
    "ci_high": "upper end of the estimate's confidence interval",
    "estimator": "min (best case over processes), median (typical process), exact (instruction counts), fact",
    "confidence": "confidence level of the interval (the profile's; None for exact counts and facts)",
    "processes": "measuring processes behind the estimate",
    "precision": "relative half-width of the interval reached",
    "within": "trimmed: the relative half-width of the interval's within-run part alone (processes, counter "
              "steps), times within_scale; the rest is the machine's run-to-run noise (run_noise) and the speed "
              "factor's uncertainty (speed_se)",
    "run_noise": "the machine's run-to-run noise (relative sd) the interval took (lab.calibration)",
    "speed_factor": "how much slower than its reference run the machine ran in this run, by the gauges of the "
                    "cell's gauge group (lab/speed.py); the timed figures (estimate, interval, NIST's value) are at "
                    "the reference speed: costs divided by it, speeds multiplied; NaN: raw figures (no reference)",
    "within_scale": "the machine's calibration of the within-run part the interval took (lab.calibration; 1: "
                    "the Tukey-McLaughlin half-width as it is)",
    "speed_se": "the speed factor's relative standard error (its run gauge's); the interval takes it beside "
                "run_noise",
    "precision_target": "the profile's target relative half-width",
    "precision_met": "True when precision <= precision_target",
    "below_resolution": "True when the quantity is indistinguishable from the empty-call overhead",
    "bound": "for values below the counter's resolution: the upper bound (one counter step per unit)",
    "value": "NIST value: mean of the samples within 3 sd of their median (all processes)",
    "median": "median of all samples",
    "std": "standard deviation of all samples",
    "min": "smallest sample (for speeds: the slowest sample's rate)",
    "max": "largest sample (for speeds: the fastest sample's rate)",
    "n": "samples kept for value",
    "n_total": "samples taken",
    "counter": "timer or cycle counter used (clock-monotonic, x86-tsc-lfence, qemu-insn-region, ...)",
    "per_process": "each process's minimum cost behind the estimate (ns per block or key pair for speeds, counter "
                   "units otherwise); comparisons test these",
    "gauge_relative": "the quantity relative to the machine-speed gauge measured in the same processes: in each "
                      "process every round's cost over the gauge sample of the same round, their median over "
                      "rounds, the 20 % trimmed mean over processes (a speed: times the gauge's cost, i.e. divided by the "
                      "gauge's speed); NaN where no "
                      "gauge was measured (runs before it, Java, instruction counts, facts)",
    "gauge_relative_low": "lower end of gauge_relative's confidence interval (Tukey-McLaughlin, the trimmed mean's t "
                          "interval on the Winsorized variance; NaN with one process)",
    "gauge_relative_high": "upper end of gauge_relative's confidence interval",
    "steal_fraction": "CPU steal time / CPU time on the measuring CPU while the cell was measured",
    "lane_difference": "with several measuring lanes: the median per-process cost on the other lanes over that on "
                       "the first lane's CPU, minus 1 (the lanes' self-check; NaN with one lane or fewer than two "
                       "processes on either side)",
    "compiler": "compiler executable",
    "compiler_version": "first line of the compiler's --version",
    "cflags": "exact compiler flags, space separated",
    "programs": "hash of the measured programs (timing, cycles) and their environment: the same in two runs, the "
                "same code measured (compare takes the machine's shift between runs from such cells)",
    "library": "a peer's library where it ran: its Debian package and version (ours: empty)",
    "profile": "measurement profile name",
    "host": "machine hostname",
    "cpu_model": "CPU model of the machine",
    "started": "when the run started (ISO 8601, UTC): the x of a history",
    "revision": "git revision of the lab's sources the run was made from (a '+' suffix: uncommitted changes)",
}

METRICS = {m.name: m.description for m in metrics.TABLE}  # every stored metric (lab/metrics.py)


def read_jsonl(path: Path) -> list[dict]:
    """Every record of a JSON-lines file (bench/results/*.jsonl), oldest first as appended; a line that is not
    JSON is a UserError naming the file and line (no record is dropped in silence)."""
    out = []
    for n, line in enumerate(path.read_text().splitlines() if path.exists() else [], 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as e:
            raise UserError(f"{path}: line {n} is not JSON ({e}); remove or repair that line") from None
    return out


def judged_precision(df: pd.DataFrame) -> pd.DataFrame:
    """The rows a run's precision is judged on: measured figures (status ok) of timed estimators whose metric a
    cell's precision counts (lab/metrics.py: not the empty call, not Sterbenz & Lipp's published reduction, which has
    no interval of its own).  Their ``precision_met`` says which met the profile's target."""
    judged = df.metric.map(lambda x: metrics.BY_NAME[x].judged if x in metrics.BY_NAME else True).astype(bool)
    return df[df.estimator.isin(list(metrics.TIMED_ESTIMATORS)) & judged & (df.status == Status.OK)
              & df.precision_target.notna()]


# ------------------------------------------------------------------ writing
def now_iso() -> str:  # pragma: no mutate block (I/O: docs/testing.md)
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id(tag: str = "") -> str:  # pragma: no mutate block (I/O: docs/testing.md)
    """A run id that never collides: UTC time, the tag, and 24 random bits."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + (f"-{tag}" if tag else "") + \
        f"-{secrets.token_hex(3)}"


class RunWriter:  # pragma: no mutate block (I/O: docs/testing.md)
    """Writes one run folder; cells are appended, flushed and synced one by one."""

    def __init__(self, run_dir: Path, meta: RunMeta):
        self.dir = Path(run_dir)
        self.meta = meta
        self._cells = None

    @classmethod
    def create(cls, results_dir: Path, meta: dict, tag: str = "", run_id: str | None = None) -> "RunWriter":
        """A new run folder results/<machine>/<run-id>/ (a run over several machines shares one id)."""
        machine = meta["machine_id"]
        for attempt in range(10):
            run_id = run_id if run_id and attempt == 0 else new_run_id(tag)
            d = Path(results_dir) / machine / run_id
            try:
                d.mkdir(parents=True, exist_ok=False)
                break
            except FileExistsError:
                continue
            except OSError as e:
                raise RunError(f"cannot create the results folder {d}: {e.strerror}. Fix: free space or make "
                               f"{results_dir} writable") from None
        else:  # pragma: no cover - 10 collisions of 24 random bits
            raise RunError(f"could not find a free run id under {results_dir}")
        m = RunMeta(format=FORMAT, version=VERSION, run_id=run_id, status="running", started=now_iso(),
                    tag=tag, **meta)
        w = cls(d, m)
        w.write_meta()
        return w

    @classmethod
    def reopen(cls, run_dir: Path, retry: tuple[str, ...] = ()) -> "RunWriter":
        """For --resume: the run's metadata, with a truncated last cell line dropped (with a warning) and the
        cells of the `retry` statuses (e.g. unreachable) taken out, so they run again and stay recorded once."""
        meta, cells = read_run(run_dir, repair=True)
        if meta.version != VERSION:
            raise RunError(f"{run_dir} was written by format version {meta.version}; only version {VERSION} runs "
                           "can be resumed")
        if any(c.status in retry for c in cells):
            keep = [c for c in cells if c.status not in retry]
            tmp = Path(run_dir) / "cells.jsonl.tmp"
            tmp.write_text("".join(c.model_dump_json() + "\n" for c in keep))
            tmp.replace(Path(run_dir) / "cells.jsonl")
        w = cls(run_dir, meta)
        w.meta.resumed.append(now_iso())
        w.meta.status = "running"
        w.write_meta()
        return w

    def write_meta(self) -> None:
        tmp = self.dir / "run.json.tmp"
        try:
            tmp.write_text(self.meta.model_dump_json(indent=2) + "\n")
            tmp.replace(self.dir / "run.json")
        except OSError as e:
            raise RunError(f"cannot write {self.dir / 'run.json'}: {e.strerror}. Nothing already recorded is lost; "
                           "fix the disk and resume with --resume") from None

    def add_cell(self, record: CellRecord) -> None:
        line = record.model_dump_json() + "\n"
        try:
            if self._cells is None:
                self._cells = open(self.dir / "cells.jsonl", "a")
            self._cells.write(line)
            self._cells.flush()
            os.fsync(self._cells.fileno())
        except OSError as e:
            raise RunError(f"cannot write {self.dir / 'cells.jsonl'}: {e.strerror}. The cells recorded so far are "
                           f"kept; fix the disk and finish the run with --resume {self.meta.run_id}") from None

    def _speed_reference(self, cells: list[CellRecord] | None) -> dict[str, float]:
        """The run's gauge groups' references (lab/speed.py): those it carries, the machine's, or this run's own
        gauges where the machine has none yet (they become its references).  Cells unreadable (None) or the
        machine's file unwritable: the ones it carries (its figures stay at the speed it ran at where it has none)."""
        if cells is None:
            return self.meta.speed_reference
        try:
            return speed.settle(self.dir.parent.parent, self.meta.machine_id,
                                str(self.meta.machine.get("cpu_model", "unknown")), speed.run_gauges(cells),
                                self.meta.speed_reference)
        except OSError:
            return self.meta.speed_reference

    def close(self, status: str = "finished", **extra) -> None:
        if self._cells is not None:
            try:
                self._cells.close()
            except OSError:
                pass
            self._cells = None
        self.meta = self.meta.model_copy(update={"status": status, **extra})
        if status == "finished":
            self.meta.finished = now_iso()
        try:  # the cells read once: for the references and for the index
            cells = read_run(self.dir)[1]
        except (RunError, UserError, OSError, ValueError):
            cells = None
        self.meta.speed_reference = self._speed_reference(cells)
        self.write_meta()
        if status == "finished" and cells is not None:  # its tidy table, so that loading it recomputes nothing
            try:  # (derived: best effort)
                _index_run(self.dir, (self.meta, cells))
            except (RunError, UserError, OSError, ValueError):
                pass


def write_flag_search(run_dir: Path, search: FlagSearch) -> Path:  # pragma: no mutate block (I/O: docs/testing.md)
    """A flag search's outcome beside its run's cells (lab/flags.py stores the search as a run)."""
    path = Path(run_dir) / FLAG_SEARCH
    tmp = path.with_name(FLAG_SEARCH + ".tmp")
    try:
        tmp.write_text(search.json_text())
        tmp.replace(path)
    except OSError as e:
        raise RunError(f"cannot write {path}: {e.strerror}. Fix: free space or make {run_dir} writable") from None
    return path


# ------------------------------------------------------------------ reading
def read_flag_search(run_dir: Path) -> FlagSearch | None:  # pragma: no mutate block (I/O: docs/testing.md)
    """The flag search stored in a run folder; None for a run that is no flag search."""
    path = Path(run_dir) / FLAG_SEARCH
    if not path.is_file():
        return None
    try:
        return FlagSearch.model_validate_json(path.read_text())
    except OSError as e:
        raise UserError(f"{path}: cannot be read ({e.strerror})") from None
    except ValidationError as e:
        raise UserError(f"{path}: {_first_problem(e)}") from None


def _from_v1(meta: dict, cell: dict) -> dict:  # pragma: no mutate block (I/O: docs/testing.md)
    """A version-1 cell dict in version-2 form (long samples become one process)."""
    c = dict(cell)
    timing = c.pop("timing", None) or []
    cycles = c.pop("cycles", None) or {}
    c.pop("icount_note", None)
    icount = c.pop("icount", None)
    kat = c.get("kat") or None
    if kat:
        kat = {k: kat.get(k, d) for k, d in (("files", []), ("records", 0), ("passed", 0), ("failed", 0),
                                             ("skipped_key_size", 0), ("fails", []), ("checksums", {}),
                                             ("roundtrip_ok", True))}
    build = c.get("build")
    if build:
        build = {"compiler": build.get("compiler", ""), "compiler_version": build.get("compiler_version") or "",
                 "cflags": build.get("cflags", []), "ldflags": [], "code_bytes": build.get("code_bytes") or {},
                 "cached": bool(build.get("cached")), "log": build.get("log")}
    facts = c.get("impl_facts")
    out = {
        "cell": c["cell"], "cipher": c["cipher"], "implementation": c["implementation"],
        "impl_class": "hardware" if c["implementation"] == "aesni" else "portable",
        "display": c.get("display", c["cipher"]), "label": c.get("label") or c.get("display", c["cipher"]),
        "round1": bool(c.get("round1", False)), "block_bits": 8 * (facts or {}).get("block_bytes", 16),
        "key_sizes": c.get("key_sizes", []), "toolchain": c["toolchain"], "target": c["target"],
        "emulated": bool(c.get("emulated", False)), "machine": meta.get("machine", {}).get("hostname", "unknown"),
        "status": c["status"], "reason": c.get("reason"), "seconds": float(c.get("seconds") or 0.0), "stages": {},
        "impl": {}, "image_id": c.get("image_id"), "build": build, "impl_facts": facts, "kat": kat,
        "icount_note": cell.get("icount_note"),
    }
    if timing:
        proc = {"started": 0.0, "seconds": 0.0, "key_sizes": {}}
        for rec in timing:
            proc["key_sizes"][rec["key_size"]] = {
                "encrypt": {"per_sample": rec["blocks"], "ns": rec["encrypt"]},
                "decrypt": {"per_sample": rec["blocks"], "ns": rec["decrypt"]},
                "key_setup": {"per_sample": rec["key_pairs"], "ns": rec["key_setup"]}}
        ops = [{"key_size": o["key_size"], "op": o["op"], "n": o["n"], "calls": 1, "counter": o["counter"],
                "unit": o["unit"], "deltas": o["deltas"]} for o in cycles.get("ops") or []]
        counter = cycles.get("counter") or {}
        out["measurement"] = {
            "timer": timing[0].get("timer", "clock-monotonic"), "blocks_per_call": timing[0].get("blocks_per_call", 1),
            "counter": counter.get("counter"), "unit": counter.get("unit"), "timing": [proc],
            "cycles": [{"started": 0.0, "seconds": 0.0, "ticks_per_second": counter.get("ticks_per_second"),
                        "ops": ops}] if ops else [],
            "estimator": "min", "confidence": 0.95, "precision_target": None, "stopped": "single", "seconds": 0.0,
            "cpu": None, "system": {}}
    if icount:
        out["icount"] = {"counter": icount["counter"], "unit": icount["unit"], "emulator": icount.get("emulator", ""),
                         "ops": [{"key_size": o["key_size"], "op": o["op"], "n": o["n"], "calls": 1,
                                  "counter": o["counter"], "unit": o["unit"], "deltas": o["deltas"]}
                                 for o in icount["ops"]]}
    return out


def _meta_from_v1(meta: dict, run_dir: Path) -> dict:  # pragma: no mutate block (I/O: docs/testing.md)
    return {"format": FORMAT, "version": 1, "run_id": meta["run_id"],
            "machine_id": meta.get("machine", {}).get("hostname", "unknown"),
            "status": "finished" if meta.get("finished") else "interrupted", "started": meta.get("started", ""),
            "finished": meta.get("finished"), "machine": meta.get("machine", {}), "git": meta.get("git") or {},
            "profile": meta.get("profile", {}), "matrix": meta.get("matrix", {}), "backend": meta.get("backend", {}),
            "toolchains": meta.get("toolchains", {}), "targets": meta.get("targets", {}),
            "cells_planned": meta.get("cells_planned", []), "fingerprint": {},
            "status_counts": meta.get("status_counts") or {}, "tsc_hz_measured": meta.get("tsc_hz_measured")}


def read_run(run_dir: Path, repair: bool = False) -> tuple[RunMeta, list[CellRecord]]:  # pragma: no mutate block (I/O: docs/testing.md)
    """A run's metadata and cell records (format 1 or 2).  A truncated last line (a kill during a write)
    is dropped with a warning (and cut from the file when repair); a malformed record is an error."""
    run_dir = Path(run_dir)
    try:
        raw = json.loads((run_dir / "run.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{run_dir}/run.json: cannot be read ({e}). Fix: name a run folder written by the lab") \
            from None
    if raw.get("format") != FORMAT:
        raise UserError(f"{run_dir}/run.json: not a cipherlab results file")
    version = raw.get("version", 0)
    if version > VERSION:
        raise UserError(f"{run_dir}/run.json: format version {version} is newer than this lab ({VERSION}); "
                        "update the lab")
    try:
        meta = RunMeta.model_validate(raw if version == VERSION else _meta_from_v1(raw, run_dir))
    except ValidationError as e:
        raise UserError(f"{run_dir}/run.json: {_first_problem(e)}") from None
    cells: list[CellRecord] = []
    path = run_dir / "cells.jsonl"
    if not path.exists():
        return meta, cells
    text = path.read_text()
    lines = text.split("\n")
    complete, tail = lines[:-1], lines[-1]
    if tail.strip():  # no newline at the end: the last write was cut short
        warnings.warn(f"{path}: the last line is truncated (a kill during a write?); dropped", stacklevel=2)
        if repair:
            path.write_text("".join(line + "\n" for line in complete))
    seen: set[str] = set()
    for i, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            rec = CellRecord.model_validate(d if version == VERSION else _from_v1(raw, d))
        except json.JSONDecodeError:
            if i == len(complete):
                warnings.warn(f"{path}: line {i} is not complete JSON; dropped", stacklevel=2)
                if repair:
                    path.write_text("".join(x + "\n" for x in complete[:-1]))
                continue
            raise UserError(f"{path}: line {i} is not JSON. Fix: restore the file or remove that line") from None
        except ValidationError as e:
            raise UserError(f"{path}: line {i}: {_first_problem(e)}") from None
        if rec.cell in seen:
            raise UserError(f"{path}: cell {rec.cell} is recorded twice (line {i})")
        seen.add(rec.cell)
        cells.append(rec)
    return meta, cells


def _first_problem(e: ValidationError) -> str:  # pragma: no mutate block (I/O: docs/testing.md)
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    kind = "unknown field" if err["type"] == "extra_forbidden" else \
        "missing field" if err["type"] == "missing" else err["msg"]
    return f"{kind} '{where}'"


def run_dirs(results_dir: Path) -> list[Path]:  # pragma: no mutate block (I/O: docs/testing.md)
    """Every run folder: results/<machine>/<run-id>/ (and version-1 folders results/<run-id>/)."""
    results_dir = Path(results_dir)
    found = [p.parent for p in results_dir.glob("*/*/run.json")] + [p.parent for p in results_dir.glob("*/run.json")]
    return sorted(found, key=lambda p: (p.name, str(p)))


def resolve_runs(results_dir: Path, runs: Iterable[str | Path] | str | Path | None) -> list[Path]:  # pragma: no mutate block (I/O: docs/testing.md)
    """Run folders named by id (any machine), machine/id, or path; None = the latest run; 'all' = every run."""
    results_dir = Path(results_dir)
    if runs is None or runs == "latest":
        all_runs = run_dirs(results_dir)
        if not all_runs:
            raise UserError(f"no runs under {results_dir}; run `invoke matrix.run` first")
        return [all_runs[-1]]
    if runs == "all":
        return run_dirs(results_dir)
    if isinstance(runs, (str, Path)):
        runs = [runs]
    out = []
    known = run_dirs(results_dir)
    for r in runs:
        p = Path(r)
        if (p / "run.json").exists():
            out.append(p)
            continue
        matches = [d for d in known if d.name == str(r) or str(d).endswith("/" + str(r))]
        if not matches:
            from .errors import did_you_mean
            raise UserError(f"no run '{r}' under {results_dir}: {did_you_mean(str(r), [d.name for d in known])}")
        if len(matches) > 1:
            raise UserError(f"run id '{r}' exists for several machines: {[str(m) for m in matches]}; "
                            "name it as MACHINE/RUN_ID")
        out.append(matches[0])
    return out


# --------------------------------------------------------------- DataFrame
def _base(meta: RunMeta, c: CellRecord) -> dict:
    build = c.build
    m = c.measurement
    return {
        "run_id": meta.run_id, "machine": c.machine, "cell": c.cell, "cipher": c.cipher, "display": c.display,
        "implementation": c.implementation, "language": c.language, "impl_class": c.impl_class,
        "code": (c.impl.get("peer") or {}).get("code", c.impl_class), "default": c.impl.get("default"),
        "label": c.label, "round1": c.round1,
        "block_bits": c.block_bits, "toolchain": c.toolchain, "target": c.target, "emulated": c.emulated,
        "status": c.status,
        "steal_fraction": m.system.get("steal_fraction") if m else None,
        "compiler": build.compiler if build else None,
        "compiler_version": (build.compiler_version if build else None) or
        meta.toolchains.get(c.toolchain, {}).get("version"),
        "cflags": " ".join(build.cflags) if build else "",
        "programs": build.programs if build else None,
        "library": build.library if build else None,
        "profile": meta.profile.get("name"), "host": meta.machine.get("hostname"),
        "cpu_model": meta.machine.get("cpu_model"), "started": meta.started,
        "revision": (meta.git.get("revision") or "") + ("+" if meta.git.get("dirty") else ""),
        **ct_columns(c.ct),
    }


def ct_columns(v: CtVerdict | None) -> dict:
    """The constant-time verdict of a cell as the columns of its rows."""
    if v is None:
        return {"ct_trace": None, "ct_divergence": None, "ct_dudect_t": None, "ct_dudect": None}
    d, dud = v.first_divergence, v.dudect
    return {"ct_trace": v.verdict, "ct_divergence": d.line() if d else (v.reason or None),
            "ct_dudect_t": dud.t if dud and dud.ops else None, "ct_dudect": dud.verdict if dud else None}


def _fact_row(base: dict, metric: str, unit: str, value: float) -> dict:
    return {**base, "metric": metric, "unit": unit, "estimate": value, "ci_low": value, "ci_high": value,
            "estimator": "fact", "confidence": None, "processes": None, "precision": 0.0, "precision_target": None, "precision_met": True,
            "within": math.nan, "run_noise": None, "within_scale": None,
            "below_resolution": False, "bound": None, "value": value, "median": value, "std": 0.0, "min": value,
            "max": value, "n": 1, "n_total": 1, "counter": None, "per_process": None,
            "gauge_relative": math.nan, "gauge_relative_low": math.nan, "gauge_relative_high": math.nan,
            "lane_difference": math.nan,
            "speed_factor": math.nan, "speed_se": math.nan}


def quantity_row(base: dict, q: Quantity, estimator: str, confidence: float | None, target: float | None,
                 run_noise: float = 0.0, within_scale: float = 1.0) -> dict:
    """One measured quantity as a row: headline estimate + interval, NIST's value, spread.  `estimator` "exact"
    is an instruction count (one process, the smallest count; no precision target)."""
    exact = estimator == "exact"
    if exact:  # the smallest count; an exact count has no interval and no confidence level
        est = stats.Estimate(min(q.per_process), math.nan, math.nan, "exact", len(q.per_process), None)
    else:  # the headline: the same estimate the stop rule judged (a rate for speeds)
        est = headline(q, estimator, confidence, run_noise, within_scale)
    nist = stats.nist_summary(q.samples)
    value, med, mn, mx, sd = nist.value, nist.median, nist.minimum, nist.maximum, nist.std
    # a cost within one counter step of the empty call's has no value to show, only a bound: lab.quantities marks
    # it; a cost estimate at or below 0 never shows either
    below = q.below_resolution or (not exact and q.metric.endswith(("ekey", "dkey", "init", "per_block"))
                                   and est.estimate <= 0)
    if q.rate_work is not None:  # a speed: reduce the costs, then convert (NIST converted its mean time)
        value, med = q.rate_work / nist.value, q.rate_work / nist.median
        mn, mx = q.rate_work / nist.maximum, q.rate_work / nist.minimum
        sd = value * nist.std / nist.value  # costs are positive: a timed sample is never 0 ns
    row = {**base, "metric": q.metric, "key_size": q.key_size, "n_blocks": q.n_blocks, "unit": q.unit,
           "estimate": est.estimate, "ci_low": est.ci_low, "ci_high": est.ci_high,
           "estimator": est.estimator, "confidence": est.confidence, "processes": est.processes,
           "precision": 0.0 if exact else est.precision, "precision_target": None if exact else target,
           "within": est.within, "run_noise": None if exact else run_noise,
           "within_scale": None if exact else within_scale,
           "below_resolution": below, "bound": q.resolution if below else None,
           "value": value, "median": med, "std": sd, "min": mn, "max": mx, "n": nist.n, "n_total": nist.n_total,
           "counter": q.counter, "per_process": list(q.per_process), "speed_factor": math.nan, "speed_se": math.nan,
           "lane_difference": math.nan}
    g = None if exact or below else gauge_relative(q, confidence)
    row.update(gauge_relative=g.estimate if g else math.nan, gauge_relative_low=g.ci_low if g else math.nan,
               gauge_relative_high=g.ci_high if g else math.nan)
    if below:
        row.update(estimate=math.nan, ci_low=math.nan, ci_high=math.nan, value=math.nan, median=math.nan)
    row["precision_met"] = bool(exact or (target is not None and row["precision"] <= target) or below)
    return row


def measured_quantities(c: CellRecord) -> list[Quantity]:
    return [q for qs, _ in _by_program(c) for q in qs]


def _by_program(c: CellRecord) -> list[tuple[list[Quantity], list]]:
    """A cell's measured quantities, timing's and cycles', each with the processes they came from."""
    m = c.measurement
    if m is None:
        return []
    tq = timing_quantities([{ks: {op: d.model_dump() for op, d in ops.items()} for ks, ops in p.key_sizes.items()}
                            for p in m.timing], c.block_bits, m.timer,
                           gauges=[p.gauge.per_iteration() if p.gauge else None for p in m.timing],
                           cpus=[p.cpu for p in m.timing])
    cq = cycle_quantities([[o.model_dump() for o in p.ops] for p in m.cycles],
                          gauges=[p.gauge.per_iteration() if p.gauge else None for p in m.cycles],
                          cpus=[p.cpu for p in m.cycles])
    return [(tq, list(m.timing)), (cq, list(m.cycles))]


def _factor(c: CellRecord, processes: list, factors: dict[str, speed.Factor]) -> speed.Factor | None:
    """The speed factor of the gauge group these processes of c belong to (None: no gauge or no reference)."""
    units = {p.gauge.unit for p in processes if p.gauge is not None}
    return factors.get(speed.group(c, units.pop())) if len(units) == 1 else None


def sterbenz_lipp_quantities(ops: list[SterbenzLippOp], block_bits: int) -> list[Quantity]:
    """Sterbenz & Lipp's samples as quantities (one JVM: one process); their value is NIST's and theirs, the mean
    of the samples within 3 sd."""
    out = []
    for o in ops:
        costs = [x / o.per_sample for x in o.ns]
        if not costs:
            continue
        key = o.op.startswith("key_setup")
        metric = "sl_" + ("key_setup_speed_" + o.op[-3:] if key else o.op + "_speed")
        out.append(Quantity(metric, o.key_size, None, "keys/s" if key else "Kbit/s", "sterbenz-lipp",
                            per_process=[min(costs)], samples=costs, rate_work=1e9 if key else block_bits * 1e6))
    return out


def cell_rows(meta: RunMeta, c: CellRecord, factors: dict[str, speed.Factor] | None = None) -> list[dict]:
    """All measured quantities and facts of one cell record; the timed ones at the machine's reference speed
    where `factors` (lab/speed.py: its run's, by gauge group) has the cell's group."""
    base = _base(meta, c)
    rows: list[dict] = []
    if c.impl_facts:
        rows.append(_fact_row(base, "table_bytes", "bytes", c.impl_facts.table_bytes))
        rows.append(_fact_row(base, "key_schedule_bytes", "bytes", c.impl_facts.ks_bytes))
    if c.build and c.build.code_bytes:
        rows.append(_fact_row(base, "code_bytes", "bytes", c.build.code_bytes.get("text", 0)
                              + c.build.code_bytes.get("rodata", 0)))
    if c.kat:
        rows.append(_fact_row(base, "kat_passed", "records", c.kat.passed))
        rows.append(_fact_row(base, "kat_failed", "records", c.kat.failed))
    m = c.measurement
    if m is not None:
        first = m.cpu if m.lanes > 1 else None  # the lanes' self-check: the other lanes against the first
        for qs, processes in _by_program(c):
            f = _factor(c, processes, factors or {})
            for q in qs:
                lane = {"lane_difference": lane_difference(q, first)}
                if f is None:
                    rows.append({**quantity_row(base, q, m.estimator, m.confidence, m.precision_target, m.run_noise,
                                                m.within_scale), **lane})
                    continue
                # the run gauge's own uncertainty joins the run-to-run part of the interval
                rows.append({**quantity_row(base, at_reference_speed(q, f.value), m.estimator, m.confidence,
                                            m.precision_target, math.hypot(m.run_noise, f.rel_se), m.within_scale),
                             "run_noise": m.run_noise, "speed_factor": f.value, "speed_se": f.rel_se, **lane})
    if c.java is not None and c.java.sterbenz_lipp:
        for q in sterbenz_lipp_quantities(c.java.sterbenz_lipp, c.block_bits):
            rows.append(quantity_row(base, q, m.estimator if m else "min", m.confidence if m else 0.95, None))
    if c.icount is not None:
        for q in cycle_quantities([[o.model_dump() for o in c.icount.ops]], prefix="insn_"):
            rows.append(quantity_row(base, q, "exact", None, None))
    return rows


def load(runs: Iterable[str | Path] | str | Path | None = None, results_dir: Path | str = "results") -> pd.DataFrame:
    """Long-format DataFrame of the given runs (default: the latest), one row per measured quantity.

    Each run's rows come from its index (lab/index.py, quantities.parquet) when that is current; otherwise they
    are computed from the raw samples and the index is written for next time."""
    from . import index

    dirs = resolve_runs(Path(results_dir), runs)
    table = index.read_combined(Path(results_dir), dirs, VERSION, list(COLUMNS)) if len(dirs) > 1 else None
    if table is not None:
        tables = [table]
    else:
        table, stale = index.read_many(dirs, VERSION, list(COLUMNS))
        tables = [table] if table is not None else []
        if stale:  # computed from the raw samples and indexed for next time, then all read again in order
            computed = {d: _index_run(d) for d in stale}
            table, unwritten = index.read_many(dirs, VERSION, list(COLUMNS))
            tables = [table] if not unwritten else [computed[d] if d in computed else index.read(d, VERSION)
                                                             for d in dirs]
        if len(dirs) > 1 and len(tables) == 1:  # for the next load of these runs: one file instead of many
            index.write_combined(Path(results_dir), dirs, tables[0], VERSION)
    df = index.to_frame(tables, list(COLUMNS))
    return with_rows(df) if not df.empty else pd.DataFrame(columns=list(COLUMNS))


def computed_rows(run_dir: Path, run: tuple[RunMeta, list[CellRecord]] | None = None) -> pd.DataFrame:
    """A run's tidy table computed from its raw samples (what the index stores); `run`: its metadata and cells
    when the caller has them already."""
    meta, cells = run or read_run(run_dir)
    factors = speed.factors(speed.run_gauges(cells), meta.speed_reference)
    rows = [r for c in cells for r in cell_rows(meta, c, factors)]
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    for col in ("n_blocks", "key_size", "bound", "precision_target", "within", "run_noise", "confidence", "processes",
                "gauge_relative", "gauge_relative_low", "gauge_relative_high", "speed_factor", "speed_se",
                "within_scale", "lane_difference"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    return df


def _index_run(run_dir: Path, run: tuple[RunMeta, list[CellRecord]] | None = None):
    import pyarrow as pa

    from . import index

    df = computed_rows(run_dir, run)
    index.write(run_dir, df, VERSION)
    return pa.Table.from_pandas(df, preserve_index=False)


def with_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Fills the `row` column: one name per implementation, the same in every table of a report."""
    if df.empty:
        return df
    ours = df["impl_class"] != "peer"
    n = df[ours].groupby("cipher")["implementation"].nunique()
    multi = df["cipher"].map(n) > 1  # NaN (a cipher with only peers' code): not several of ours
    return df.assign(row=df["label"].where(~(multi & ours), df["label"] + " [" + df["implementation"] + "]"))


def ok_rows(df: pd.DataFrame, metric: str, estimated: bool = False) -> pd.DataFrame:
    """The rows of one metric of the cells that ended ok (with an estimate, when estimated), as a frame of their own."""
    sel = (df.metric == metric) & (df.status == Status.OK)
    return df[sel & df.estimate.notna() if estimated else sel].copy()


def at_key_size(df: pd.DataFrame, key_size: int) -> pd.DataFrame:
    """Per cell, the rows at key_size, or at the cell's smallest key when it has no such size
    (DES 64, 3DES 192): the one rule every table, chart and judge uses to pick a key size."""
    if df.empty:
        return df
    has = df.groupby("cell").key_size.transform(lambda k: (k == key_size).any())
    smallest = df.groupby("cell").key_size.transform("min")
    return df[(has & (df.key_size == key_size)) | (~has & (df.key_size == smallest))]


JAVA = "java"  # the language of the cells of JVM profiles (a row without a language is C: older loads)


def by_language(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(C rows, Java rows) of a results or cells frame: Java is never ranked with C."""
    if df.empty or "language" not in df:
        return df, df.iloc[0:0]
    java = df.language.fillna("c") == JAVA
    return df[~java], df[java]


def write_tidy(df: pd.DataFrame, cells: pd.DataFrame, out: Path) -> None:
    """The loaded rows beside a report: results.csv and results.parquet (each row's per-process values as one
    space-separated text) and cells.csv."""
    from . import index

    flat = df.assign(per_process=[" ".join(f"{x:.6g}" for x in v) if index.has_values(v) else None
                                  for v in df.per_process])
    flat.to_csv(out / "results.csv", index=False)
    flat.to_parquet(out / "results.parquet", index=False)
    cells.to_csv(out / "cells.csv", index=False)


def load_cells(runs=None, results_dir: Path | str = "results") -> pd.DataFrame:
    """One row per cell with its status and failure reason (also for cells that measured nothing)."""
    rows = []
    for d in resolve_runs(Path(results_dir), runs):
        meta, cells = read_run(d)
        for c in cells:
            m = c.measurement
            rows.append({**_base(meta, c), "reason": c.reason,
                         "kat_passed": c.kat.passed if c.kat else None,
                         "kat_failed": c.kat.failed if c.kat else None,
                         "kat_records": c.kat.records if c.kat else None, "seconds": c.seconds,
                         "processes": len(m.timing) if m else None, "stopped": m.stopped if m else None,
                         "icount_note": c.icount_note, "constant_time": c.impl.get("constant_time"),
                         **ct_columns(c.ct)})
    return with_rows(pd.DataFrame(rows))
