"""The live RunDoctor agrees with the full-log diagnosis: same events at the same steps, each reported at the first
report whose prefix contains it; its first report comes as soon as the detectors can fire."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rlvr_dynamics.runs import diagnostics as dg
from rlvr_dynamics.runs.live import RunDoctor
from rlvr_dynamics.runs.logs import RunLog

N = 240


def _metrics(log_every: int = 1):
    rng = np.random.default_rng(11)
    s = np.arange(1, N + 1)
    r = np.where(s < 130, 0.2 + 0.5 * (1 - np.exp(-s / 30)), 0.7 * np.exp(-(s - 130) / 15))
    series = {"reward": r + rng.normal(0, 0.05, N),
              "entropy": 0.6 * (1 + (s > 120) * (s - 120) / 20),
              "grad_norm": np.exp(rng.normal(0, 0.1, N)) * (1 + 5 * (s > 120)),
              "frac_reward_zero_std": np.where(s > 170, 0.95, 0.2)}
    keep = s % log_every == 0
    return s[keep], {k: v[keep] for k, v in series.items()}


@pytest.mark.parametrize("every", [1, 7, 25])
def test_live_events_equal_the_full_log_events(every):
    steps, series = _metrics()
    doctor = RunDoctor(every=every, reward_bounds=(0.0, 1.0))
    for i, st in enumerate(steps):
        doctor.update(int(st), {k: v[i] for k, v in series.items()})
    doctor.report()       # the last partial stretch
    full = dg.diagnose(RunLog("f", steps, series, "reward"), reward_bounds=(0.0, 1.0), reading=False)
    assert full["collapse_warning"].fired and full["policy_concentration"].available
    for name in dg.DETECTORS:
        live = [e["step"] for e in doctor.events[name] if not str(e.get("reason", "")).startswith(("(c)", "(d)"))]
        assert live == [e["step"] for e in full[name].events], name
        for e in doctor.events[name]:
            assert e["step"] <= e["reported_at"] <= e["step"] + every - 1     # found by the next report
    if full["collapse_warning"].fired:
        assert doctor.fired["collapse_warning"] == full["collapse_warning"].step


def test_first_report_comes_at_eight_logged_rewards_whatever_the_log_interval():
    steps, series = _metrics(log_every=5)
    doctor = RunDoctor(every=1)
    first = None
    for i, st in enumerate(steps):
        if doctor.update(int(st), {k: v[i] for k, v in series.items()}):
            first = int(st)
            break
    assert first == 5 * dg.SIGMA_FIRST == 40


def test_flags_are_set_in_the_report_that_finds_the_event():
    steps, series = _metrics()
    doctor = RunDoctor(every=10, reward_bounds=(0.0, 1.0))
    flagged = []
    for i, st in enumerate(steps):
        out = doctor.update(int(st), {k: v[i] for k, v in series.items()})
        if out.get("dynamics/flag/collapse_warning") == 1.0:
            flagged.append(int(st))
        assert all(math.isfinite(v) for v in out.values())
    reported = sorted({e["reported_at"] for e in doctor.events["collapse_warning"]})
    assert flagged == reported and flagged


def test_invalid_arguments_name_the_argument():
    with pytest.raises(ValueError, match="min_points"):
        RunDoctor(min_points=1)
    with pytest.raises(ValueError, match="reward_bounds"):
        RunDoctor(reward_bounds=(1.0, 0.0))
