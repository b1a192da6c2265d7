"""A reward with declared bounds is read as its share of that range (``rlvr_dynamics.runs.noise.unit_rewards``): the
same run logged at another scale, its bounds declared, gets the same status, collapse events and live stop as the
success rate (``bench/stress_reward_scale.py`` measures the runs without bounds)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rlvr_dynamics.doctor.detectors.collapse import collapse_events
from rlvr_dynamics.doctor.live import RunDoctor
from rlvr_dynamics.doctor.status import decide_status
from rlvr_dynamics.runs.logs import RunLog, load_log
from rlvr_dynamics.runs.noise import resolution_samples, unit_rewards

RUNS = Path(__file__).resolve().parents[2] / "data" / "runs"
MAPS = ((2.0, -1.0), (10.0, 0.0), (3.0, 1.5), (0.5, -3.0))
"""(a, b) of a·r + b: a reward of ±1, a sum of terms, an offset, a reward below 0 throughout."""


def _one_prompt(seed: int, rows: int) -> RunLog:
    """A healthy one-prompt × 8 run on a hard task learnt slowly (success 5 % → 30 % over 200 steps, the prompt's
    difficulty drawn around it), its first ``rows`` rows."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, 201)
    p = 0.05 + 0.25 * t / 200
    k = rng.binomial(8, rng.beta(2 * p, 2 * (1 - p)))
    return RunLog("one-prompt", t[:rows].astype(float),
                  {"reward": (k / 8)[:rows], "frac_reward_zero_std": ((k == 0) | (k == 8)).astype(float)[:rows]},
                  "reward")


def _rescaled(log: RunLog, a: float, b: float) -> RunLog:
    series = dict(log.series)
    series[log.reward_column] = a * np.asarray(series[log.reward_column], dtype=float) + b
    return replace(log, series=series)


def _events(log: RunLog, bounds) -> list[tuple]:
    steps, y = log.reward_curve()
    return [(e.step, e.reported_step, e.kind) for e in collapse_events(steps, y, bounds)]


def test_unit_rewards_are_shares_of_the_declared_range():
    shares = unit_rewards([-1.0, -0.75, 0.5, 1.0], (-1.0, 1.0))
    np.testing.assert_allclose(shares, [0.0, 0.125, 0.75, 1.0])
    assert resolution_samples(shares) == 8                # eighths of the range: one prompt × 8
    assert resolution_samples([-1.0, -0.75, 0.5, 1.0]) is None
    np.testing.assert_array_equal(unit_rewards([2.0, 3.5], None), [2.0, 3.5])


@pytest.mark.parametrize("a, b", MAPS)
def test_a_declared_scale_reads_as_the_success_rate(a, b):
    """Status (state and step) and collapse events are the same for a·r + b with bounds (b, a + b) as for r in
    [0, 1]: a collapse from the first update of a tiny model at a high learning rate (before the resolution was read
    on shares it read ``diverged`` at step 2 at three of these scales and ``collapsed`` 15 steps late at ×10: its
    guards and Bernoulli floor saw no grid), and a noisy healthy one-prompt run."""
    logs = [load_log(RUNS / "p2-lr-25ca9def36" / "metrics.csv"), _one_prompt(10, 120)]
    for log in logs:
        want = decide_status(log, (0.0, 1.0))
        scaled = _rescaled(log, a, b)
        got = decide_status(scaled, (b, a + b))
        assert (got.state, got.step) == (want.state, want.step), log.source
        assert _events(scaled, (b, a + b)) == _events(log, (0.0, 1.0)), log.source


def test_a_declared_reward_of_plus_minus_one_is_not_stopped_at_its_start():
    """One prompt × 8 at a low success rate logs 5/8, 1/8, then 0 for six steps: which prompts came, not a fall (the
    guard of a success rate of few completions). Declared as ±1, the run was stopped as ``diverged`` at step 8
    (its −1 rewards had no grid of eighths); now it reads as the success rate does."""
    unit = _one_prompt(10, 30)
    assert unit.reward[:8].tolist() == [0.625, 0.125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    finals = []
    for log, bounds in ((unit, (0.0, 1.0)), (_rescaled(unit, 2.0, -1.0), (-1.0, 1.0))):
        doc = RunDoctor(every=10 ** 9, stop_on_instability=True, reward_bounds=bounds)
        for i, step in enumerate(log.steps):
            doc.update(int(step), {k: float(v[i]) for k, v in log.series.items()})
        assert not doc.should_stop, doc.stop_reason
        finals.append((doc.status.state, doc.status.step))
    assert finals[0] == finals[1]
