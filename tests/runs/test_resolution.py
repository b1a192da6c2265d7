"""The resolution of a logged success rate (rlvr_dynamics.runs.noise): the fewest samples a reward logged as
fractions k/n can average, and the Bernoulli step noise that implies."""
import math

import pytest

import numpy as np

from rlvr_dynamics.runs.noise import (RESOLUTION_MAX, bernoulli_sigma, resolution_samples, running_resolution,
                                    value_denominator, wilson_upper)


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


def test_running_resolution_is_the_grid_shown_so_far():
    assert running_resolution([0.0, 0.0, 0.25, 0.625, 1.0]).tolist() == [0, 0, 4, 8, 8]
    assert running_resolution([0.0, 1.0, 1.0]).tolist() == [0, 0, 0]          # 0 and 1 lie on every grid
    assert running_resolution([0.5, 0.6345501542, 0.5]).tolist() == [2, 0, 0]  # off every grid: continuous for good
    assert running_resolution([1 / 997, 1 / 991]).tolist() == [997, 0]        # past RESOLUTION_MAX


def test_wilson_upper_bound_closed_forms():
    z = 2.0
    for n in (8, 16, 64):                                    # 0 of n: z²/(n + z²)
        assert float(wilson_upper(0.0, n, z)) == pytest.approx(z * z / (n + z * z))
    assert float(wilson_upper(1.0, 8, z)) == pytest.approx(1.0)
    p, n = 0.3, 50
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert float(wilson_upper(p, n, z)) == pytest.approx((centre + half) / (1 + z * z / n))
    grows = wilson_upper(np.full(3, 0.1), np.array([8, 80, 800]), z)
    assert np.all(np.diff(grows) < 0) and grows[-1] > 0.1    # more trials, a tighter bound, always above p


def test_a_success_rate_stored_as_float32_keeps_its_grid():
    """TensorBoard event files keep 32-bit floats: 1/6 (one prompt × 6 completions) is stored as 0.16666667163, 31/80
    (TRL's ``logging_steps = 10`` over 8 completions) as 0.38749998808. Each is read as the fraction it was, within
    float32's rounding; a continuous reward still is none."""
    for n in (6, 12, 80, 96, 640):
        values = (np.arange(n + 1) / n).astype(np.float32).astype(float)
        assert resolution_samples(values) == n
        assert running_resolution(values)[-1] == n
    assert value_denominator(float(np.float32(1 / 6))) == 6
    assert value_denominator(float(np.float32(0.6345501542))) is None
    rng = np.random.default_rng(0)
    assert resolution_samples(rng.random(20).astype(np.float32).astype(float)) is None


def test_a_reward_read_from_tensorboard_event_files_keeps_its_grid(tmp_path):
    """End to end: a one-prompt × 6 reward written to an event file as TRL's ``train/reward`` reads on its grid of
    sixths, so the collapse report's resolution floor holds (it read none: the values were off every grid)."""
    pytest.importorskip("tensorboard")
    import time

    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    from rlvr_dynamics.doctor.detectors.collapse import CollapseTracker
    from rlvr_dynamics.runs.logs import load_log

    k = [1, 0, 2, 0, 0, 1, 3, 0, 5, 1, 0, 0]
    writer = EventFileWriter(str(tmp_path / "runs" / "Dec07_vm"))
    for step, hits in enumerate(k, start=1):
        value = summary_pb2.Summary.Value(tag="train/reward", simple_value=hits / 6)
        writer.add_event(event_pb2.Event(step=step, wall_time=time.time(), summary=summary_pb2.Summary(value=[value])))
    writer.close()
    log = load_log(tmp_path)
    steps, reward = log.reward_curve()
    assert reward[0] != 1 / 6 and reward[0] == pytest.approx(1 / 6)         # float32, as stored
    assert resolution_samples(reward) == 6
    tracker = CollapseTracker((0.0, 1.0))
    for s, r in zip(steps, reward):
        tracker.push(int(s), float(r))
    assert tracker.resolution_sigma(len(k)) == pytest.approx(bernoulli_sigma(sum(k) / 6 / len(k), 6))
