"""The resolution of a logged success rate (rlvr_dynamics.runs.noise): the fewest samples a reward logged as
fractions k/n can average, and the Bernoulli step noise that implies."""
import math

import pytest

from rlvr_dynamics.runs.noise import RESOLUTION_MAX, bernoulli_sigma, resolution_samples, value_denominator


def test_value_denominator_is_the_smallest_exact_one():
    assert value_denominator(0.375) == 8
    assert value_denominator(0.0) == 1 and value_denominator(1.0) == 1
    assert value_denominator(25 / 32) == 32
    assert value_denominator(0.6345501542) is None          # a continuous reward


def test_resolution_samples_is_the_least_common_denominator():
    assert resolution_samples([0.75, 0.8125, 0.5]) == 16     # 4, 16, 2
    assert resolution_samples([0.125, 0.125, 0.0]) == 8
    assert resolution_samples([1 / 3, 0.25]) == 12
    assert resolution_samples([]) is None
    assert resolution_samples([0.5, 1.5]) is None            # not a success rate
    assert resolution_samples([1 / 997, 1 / 991]) is None    # the common denominator exceeds RESOLUTION_MAX
    assert RESOLUTION_MAX == 1024


def test_bernoulli_sigma_is_the_binomial_standard_error():
    assert bernoulli_sigma(0.125, 8) == pytest.approx(math.sqrt(0.125 * 0.875 / 8))
    assert bernoulli_sigma(0.0, 8) == 0.0 and bernoulli_sigma(1.0, 8) == 0.0
    assert bernoulli_sigma(0.5, None) == 0.0
