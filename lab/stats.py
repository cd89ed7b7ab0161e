"""Statistics of the 1999 NIST study (section 3.1), and unit conversions.

NIST sorted the samples, took the median, computed the standard deviation,
and reported the mean of the samples within three standard deviations of the
median.  We keep all of those, plus n (samples used) and n_total, so every
reported value carries its spread.  Imports nothing of the lab.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence


@dataclass(frozen=True)
class Summary:
    value: float  # mean of the samples within 3 standard deviations of the median
    median: float
    std: float  # sample standard deviation (n-1) of all samples
    minimum: float
    maximum: float
    n: int  # samples kept (within 3 sd of the median)
    n_total: int

    def as_dict(self) -> dict:
        return asdict(self)

    def scaled(self, factor: float) -> "Summary":
        """The same summary with every location/spread value multiplied by factor."""
        return Summary(
            self.value * factor, self.median * factor, self.std * abs(factor),
            self.minimum * factor, self.maximum * factor, self.n, self.n_total,
        )


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    mid = n // 2
    return float(s[mid]) if n % 2 else (s[mid - 1] + s[mid]) / 2.0


def stdev(xs: Sequence[float]) -> float:
    """Sample standard deviation (divisor n-1); 0 for fewer than two samples."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = sum(xs) / n
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))


def nist_summary(xs: Sequence[float]) -> Summary:
    """NIST's reduction: mean of the samples within 3 sd of the median."""
    if not xs:
        raise ValueError("no samples")
    med, sd = median(xs), stdev(xs)
    kept = [x for x in xs if abs(x - med) <= 3 * sd]
    return Summary(sum(kept) / len(kept), med, sd, float(min(xs)), float(max(xs)), len(kept), len(xs))


def kbit_per_s(seconds: float, blocks: int, block_bits: int) -> float:
    """Kbit/s (1 Kbit = 1000 bits, as the 1999 tables: 8 Mbit in 0.5 s = 16777.2)."""
    return blocks * block_bits / seconds / 1000.0


def keys_per_s(seconds_for_pairs: float, pairs: int) -> float:
    """Keys/s where a key is the average of one encryption and one decryption key setup."""
    return 2 * pairs / seconds_for_pairs


def speed_summary(times_ns: Sequence[float], work: float) -> Summary:
    """Summary of a rate = work / time per sample, reduced the NIST way on times.

    NIST reduced the *times* and converted the resulting mean; the spread is
    reported in the rate unit via first-order propagation (std_rate =
    rate * std_time / mean_time), median converted directly.
    """
    t = nist_summary(times_ns)
    rate = work / (t.value * 1e-9)
    return Summary(
        value=rate,
        median=work / (t.median * 1e-9),
        std=rate * t.std / t.value if t.value else 0.0,
        minimum=work / (t.maximum * 1e-9),
        maximum=work / (t.minimum * 1e-9),
        n=t.n,
        n_total=t.n_total,
    )
