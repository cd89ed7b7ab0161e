"""NIST statistics against values computed by hand."""

import math

import pytest

from lab import stats


def test_median_odd_and_even():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 3, 2]) == 2.5


def test_stdev_is_sample_standard_deviation():
    # mean 5, squared deviations 9+1+1+9 = 20, / (n-1)=3 -> sqrt(6.666...)
    assert stats.stdev([2, 4, 6, 8]) == pytest.approx(math.sqrt(20 / 3))
    assert stats.stdev([7]) == 0.0


def test_nist_summary_drops_samples_beyond_three_sd_of_median():
    # 19 samples of 10 and one of 1000: mean 59.5; squared deviations
    # 19 * 49.5^2 + 940.5^2 = 46554.75 + 884540.25 = 931095; / 19 = 49005; sqrt = 221.3707
    xs = [10.0] * 19 + [1000.0]
    sd = math.sqrt(49005)
    s = stats.nist_summary(xs)
    assert s.median == 10
    assert s.std == pytest.approx(sd)
    assert s.n == 19 and s.n_total == 20  # |1000 - 10| = 990 > 3 * 221.36 = 664.1
    assert s.value == 10.0


def test_nist_summary_keeps_everything_when_spread_is_even():
    s = stats.nist_summary([1, 2, 3, 4, 5])
    assert (s.value, s.median, s.n) == (3.0, 3.0, 5)
    assert s.std == pytest.approx(math.sqrt(2.5))


def test_kbit_per_s_matches_the_1999_tables():
    # 65536 blocks of 128 bits in 0.5 s is DJGPP's 16777.2 Kbit/s (1 Kbit = 1000 bits)
    assert stats.kbit_per_s(0.5, 65536, 128) == pytest.approx(16777.216)


def test_keys_per_s_counts_one_key_as_the_mean_of_a_pair():
    # 1000 pairs in 0.1 s: 2000 key setups in 0.1 s -> 20000 keys/s
    assert stats.keys_per_s(0.1, 1000) == pytest.approx(20000)


def test_speed_summary_reduces_times_then_converts():
    # times in ns: 1e9 ns three times and one outlier; work = 8000 Kbit per sample
    s = stats.speed_summary([1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e12], 8000)
    assert s.value == pytest.approx(8000)  # the outlier is dropped, 8000 Kbit in 1 s
    assert s.n == 9
    with pytest.raises(ValueError):
        stats.nist_summary([])
