"""From raw samples to quantities: what the timing and cycle programs printed, per process, per unit.

The one place that knows how a raw sample becomes a cost: ns per block
(encryption, decryption), ns per key pair (key setup), counter units per
call (EKey, DKey, Init) or per block (Encrypt-n, Decrypt-n) after the
empty-call overhead of the same process is subtracted.  For each quantity it
returns the per-process minima (what the headline estimate summarises), all
samples (NIST's value) and, for speeds, the work that turns a cost into a
rate.  The adaptive sampling and the results loader both use it, so the
stopping rule judges exactly the numbers the report shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import metrics, stats
from .stats import counter_step

SPEED_METRICS = metrics.by_op("timing")  # {op: metric}: encrypt -> encrypt_speed ... (lab/metrics.py)
CYCLE_METRICS = metrics.by_op("cycles")  # ekey -> ekey, encrypt -> encrypt_per_block, null -> null_overhead ...


@dataclass
class Quantity:
    metric: str
    key_size: int
    n_blocks: int | None
    unit: str  # the unit of the reported number (Kbit/s, keys/s, tsc_ticks, ns, guest_insns)
    counter: str
    per_process: list[float] = field(default_factory=list)  # each process's minimum cost
    samples: list[float] = field(default_factory=list)  # every sample's cost (NIST's reduction)
    rate_work: float | None = None  # speeds: rate = rate_work / cost
    resolution: float | None = None  # one counter step per unit of this quantity, per process (largest)
    below_resolution: bool = False  # indistinguishable from the overhead in some process
    gauge: list[float | None] = field(default_factory=list)  # each process's gauge cost (its minimum), beside per_process
    paired: list[float | None] = field(default_factory=list)  # each process's median over rounds of the sample's cost
    # over the gauge sample of the same round (gauge_relative)
    cpus: list[int | None] = field(default_factory=list)  # each process's CPU beside per_process (None: one lane)

    @property
    def key(self) -> tuple:
        return (self.metric, self.key_size, self.n_blocks)


def at_reference_speed(q: Quantity, factor: float) -> Quantity:
    """q as the machine would have measured it at its reference speed (lab/speed.py): every cost divided by
    `factor` (how much slower the run was), a counter step too; the gauge pairs are ratios and stay."""
    return replace(q, per_process=[v / factor for v in q.per_process], samples=[v / factor for v in q.samples],
                   resolution=q.resolution / factor if q.resolution else q.resolution)


def headline(q: Quantity, estimator: str, confidence: float, run_noise: float = 0.0,
             within_scale: float = 1.0) -> stats.Estimate:
    """The headline estimate the report shows for q, with its interval: the estimator over the per-process
    costs, turned into a rate for speeds.  The stop rule judges the precision of exactly this estimate (a rate's
    relative half-width differs from its cost's: the inversion makes the interval asymmetric).  trimmed's
    interval is run-to-run: it takes the machine's `run_noise` and the counter's resolution (stats.run_to_run)."""
    return _as_reported(q, stats.estimate(q.per_process, estimator, confidence, run_noise=run_noise,
                                          resolution=q.resolution or 0.0, within_scale=within_scale))


NOISE_FLOOR = 0.5  # the stop rule's "more processes no longer help": the within-run half-width at most this share
# of the run-to-run part's (a 12 % wider interval at most than infinitely many processes would give)


def settled(e: stats.Estimate, target: float, run_noise: float) -> bool:
    """Whether a quantity needs no more processes: its interval meets the target, or (trimmed) what more
    processes could narrow is already small beside the machine's run-to-run noise, which no process count
    removes."""
    if e.precision <= target:
        return True
    return math.isfinite(e.within) and e.within <= NOISE_FLOOR * stats.z_value(e.confidence or 0.95) * run_noise


def _as_reported(q: Quantity, e: stats.Estimate) -> stats.Estimate:
    """An estimate over per-process costs as the report shows it: a rate for speeds, the cost otherwise."""
    return e.inverted(q.rate_work) if q.rate_work is not None else e


GAUGE_STATISTIC = (f"per process the median over rounds of each round's cost over the same round's gauge sample; "
                   f"over processes the {round(100 * stats.TRIM)} % trimmed mean (Tukey-McLaughlin interval)")


def gauge_relative(q: Quantity, confidence: float) -> stats.Estimate | None:
    """q relative to the machine-speed gauge of its own processes: in each process, every round's cost over the
    gauge's sample of the same round, and their median over the rounds; over processes the 20 % trimmed mean, with
    its Tukey–McLaughlin interval (stats.trimmed_mean; a speed: rate_work over it, i.e. the rate divided by the
    gauge's speed).

    Paired by round, because the machine changes speed within a process (two speed modes 2.4 % apart on the
    lab's VM, the same for every workload, switching between two rounds of one process): a sample and the gauge sample of
    its own round share the mode, a process's two minima need not.  Medians, because a sample or a gauge sample
    that a neighbour disturbed must not decide the figure (the minimum over ratios picks the most disturbed
    gauge); over processes, because the process is the unit of replication; a trimmed mean there, because the
    processes' own layouts spread their ratios without outliers (a median of ten lands on one of them) while a few
    disturbed processes sit at the ends.  bench.repeatability, two quick runs back to back, p90 / max of the
    differences: docs/measurement.md.  None when some process has no gauge."""
    e = gauge_relative_cost(q, confidence)
    return None if e is None else _as_reported(q, e)


def gauge_relative_cost(q: Quantity, confidence: float) -> stats.Estimate | None:
    """gauge_relative on costs (a speed not yet turned into a rate): the statistic itself (GAUGE_STATISTIC), which
    bench.repeatability judges beside others on the same raw samples."""
    if not q.paired or len(q.paired) != len(q.per_process) or any(r is None for r in q.paired):
        return None
    return stats.trimmed_mean(q.paired, confidence)


def lane_difference(q: Quantity, first: int | None) -> float:
    """With several measuring lanes, the lanes' self-check: the median cost of q's processes on the other lanes over
    that of its processes on the `first` lane's CPU, minus 1 (+0.02: the other lanes measured it 2 % slower).  NaN
    with one lane, or with fewer than two processes on either side (a difference of single processes says nothing
    of the lanes)."""
    if first is None or len(q.cpus) != len(q.per_process):
        return math.nan
    on_first = [v for v, c in zip(q.per_process, q.cpus) if c == first]
    others = [v for v, c in zip(q.per_process, q.cpus) if c is not None and c != first]
    if len(on_first) < 2 or len(others) < 2 or float(np.median(on_first)) <= 0:
        return math.nan
    return float(np.median(others) / np.median(on_first) - 1)


def _pair(costs: np.ndarray, gauge: np.ndarray | None) -> tuple[float | None, float | None]:
    """(the gauge's minimum, the median over rounds of cost / gauge) of one process; sample i of an operation
    was taken in round i (an operation with fewer samples took them in the first rounds)."""
    if gauge is None or gauge.size < costs.size or costs.size == 0:
        return None, None
    return float(gauge.min()), float(np.median(costs / gauge[:costs.size]))


def timing_quantities(processes: list[dict], block_bits: int, timer: str,
                      gauges: list[np.ndarray | None] | None = None,
                      cpus: list[int | None] | None = None) -> list[Quantity]:
    """processes: [{key_size: {"encrypt"|"decrypt"|"key_setup": {"per_sample": k, "ns": [...]}}}]; gauges: each
    process's gauge samples (ns per iteration, one per round) or None; cpus: the CPU each process ran on."""
    out: dict[tuple, Quantity] = {}
    for i, proc in enumerate(processes):
        for ks, ops in proc.items():
            for op, data in ops.items():
                metric = SPEED_METRICS[op]
                per = data["per_sample"]
                costs = np.asarray(data["ns"], dtype=float) / per
                if costs.size == 0:
                    continue
                unit, work = ("keys/s", 2e9) if op == "key_setup" else ("Kbit/s", block_bits * 1e6)
                q = out.setdefault((metric, int(ks)), Quantity(metric, int(ks), None, unit, timer, rate_work=work))
                q.per_process.append(float(costs.min()))
                q.cpus.append(cpus[i] if cpus else None)
                g, r = _pair(costs, gauges[i] if gauges else None)
                q.gauge.append(g)
                q.paired.append(r)
                q.samples.extend(costs.tolist())
    return list(out.values())


def cycle_quantities(processes: list[list[dict]], prefix: str = "",
                     gauges: list[np.ndarray | None] | None = None,
                     cpus: list[int | None] | None = None) -> list[Quantity]:
    """processes: [[{"key_size", "op", "n", "calls", "counter", "unit", "deltas": [...]}, ...], ...].

    Costs are counter units per call (per block for Encrypt-n/Decrypt-n) after the
    process's empty-call overhead (its smallest `null` delta) is subtracted once per
    sample.  A quantity whose cost in some process is within one counter step of the
    overhead is marked below the counter's resolution.  gauges: each process's gauge samples (counter units per
    iteration, one per round) or None; cpus: the CPU each process ran on."""
    out: dict[tuple, Quantity] = {}
    for i, ops in enumerate(processes):
        # guest-instruction counts ("insn_") are exact: their resolution is one instruction
        step = 1 if prefix else counter_step([d for op in ops for d in op["deltas"]])
        overhead = {op["key_size"]: min(op["deltas"]) for op in ops if op["op"] == "null" and op["deltas"]}
        for op in ops:
            if not op["deltas"]:
                continue
            metric = prefix + CYCLE_METRICS[op["op"]]
            per_block = op["op"] in ("encrypt", "decrypt")
            n = int(op["n"])
            ks = int(op["key_size"])
            d = np.asarray(op["deltas"], dtype=float)
            if op["op"] == "null":
                units, ov = 1.0, 0.0
            else:
                units, ov = float(op["calls"]) * (n if per_block else 1), overhead.get(ks, 0.0)
            q = out.setdefault((metric, ks, n if per_block else None),
                               Quantity(metric, ks, n if per_block else None, op["unit"], op["counter"]))
            q.per_process.append(float((d.min() - ov) / units))
            q.cpus.append(cpus[i] if cpus else None)
            g, r = _pair((d - ov) / units, gauges[i] if gauges else None)
            q.gauge.append(g)
            q.paired.append(r)
            q.samples.extend(((d - ov) / units).tolist())
            q.resolution = max(q.resolution or 0.0, step / units)
            if op["op"] != "null" and d.min() - ov < step:
                q.below_resolution = True
    return list(out.values())


def _judged(qs: list[Quantity]) -> list[Quantity]:
    """The quantities a cell's precision is judged on: the empty-call overhead and what is below the counter's
    resolution excepted."""
    return [q for q in qs if metrics.get(q.metric).judged and not q.below_resolution]


def worst_precision(qs: list[Quantity], estimator: str, confidence: float, empty: float = 0.0,
                    run_noise: float = 0.0, within_scale: float = 1.0) -> float:
    """The largest relative half-width of the headline estimates among `qs` (_judged).  `empty` when none."""
    widths = [headline(q, estimator, confidence, run_noise, within_scale).precision for q in _judged(qs)]
    return max(widths) if widths else empty


def all_settled(qs: list[Quantity], estimator: str, confidence: float, target: float, run_noise: float,
                within_scale: float = 1.0) -> bool:
    """What the stop rule of a cell judges: every quantity (_judged) settled."""
    return all(settled(headline(q, estimator, confidence, run_noise, within_scale), target, run_noise)
               for q in _judged(qs))
