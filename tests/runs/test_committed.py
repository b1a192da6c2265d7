"""The project's committed runs load as typed CommittedRun objects; analysis helpers against closed forms."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlvr_dynamics import runs
from rlvr_dynamics.grpo.config import RunConfig
from rlvr_dynamics.paths import RUNS_DIR


def test_every_committed_run_loads_with_its_config_and_refresh_interval():
    loaded = runs.load_committed_runs(complete_only=False)
    assert len(loaded) == sum(1 for d in RUNS_DIR.iterdir() if (d / "config.json").exists())
    for run in loaded:
        info = json.loads((run.path / "config.json").read_text())
        assert isinstance(run.config, RunConfig)
        assert run.id == run.config.run_id() == info["run_id"]       # the hash reproduces the folder name
        assert run.refresh_interval == info["refresh_interval"] == run.config.steps_per_generation * run.config.num_iterations
        assert np.all(np.diff(run.log.steps) > 0)


def test_series_and_evaluations():
    run = runs.load_committed_runs("p1-long")[0]
    t, y = run.series("reward", dropna=True)
    assert t.shape == y.shape and np.isfinite(y).all()
    steps, acc = run.evaluations()
    assert np.all(np.diff(steps) > 0) and ((acc >= 0) & (acc <= 1)).all()
    assert 0 < run.initial_success < 1
    with pytest.raises(ValueError, match="no column 'nope'"):
        run.series("nope")


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="has no config.json"):
        runs.load_committed_run(tmp_path)


def test_noise_ceiling_closed_form():
    # a pure linear ramp has sigma = 0 (differences constant): ceiling 1
    assert runs.noise_ceiling(np.linspace(0, 1, 200)) == pytest.approx(1.0)
    # white noise around a constant: Var(r) = sigma^2, so the ceiling is ~0
    rng = np.random.default_rng(0)
    assert abs(runs.noise_ceiling(rng.normal(0.5, 0.1, 20000))) < 0.03
    # ramp of range 1 over n steps plus noise sigma: ceiling ~ 1 - sigma^2 / (1/12 + sigma^2)
    n, sigma = 20000, 0.1
    y = np.linspace(0, 1, n) + rng.normal(0, sigma, n)
    assert runs.noise_ceiling(y) == pytest.approx(1 - sigma ** 2 / (1 / 12 + sigma ** 2), abs=0.01)
    assert runs.step_sigma(y, robust=False) == pytest.approx(sigma, rel=0.02)
    assert math.isnan(runs.noise_ceiling(np.ones(10)))
    assert runs.step_sigma([1.0, 2.0]) == 0.0 and math.isnan(runs.noise_ceiling([1.0, 2.0]))   # too short: no noise
    # the robust sigma ignores a single large step (a fast rise), the plain one does not
    y = np.r_[np.zeros(500), np.ones(500)] + rng.normal(0, 0.01, 1000)
    assert runs.step_sigma(y) == pytest.approx(0.01, rel=0.1) and runs.step_sigma(y, robust=False) > 0.02


def test_reward_bounds_rule():
    from rlvr_dynamics.doctor.pipeline import resolve_reward_bounds

    assert resolve_reward_bounds(np.array([0.1, 0.9])) == (0.0, 1.0)
    assert resolve_reward_bounds(np.array([0.1, 1.5])) is None
    assert resolve_reward_bounds(np.array([0.1, 0.9]), None) is None
    assert resolve_reward_bounds(np.array([0.1, 0.9]), (-1, 2)) == (-1.0, 2.0)
    for bad in ("x", (1, 0), (0, math.inf), 3):
        with pytest.raises(ValueError, match="reward_bounds"):
            resolve_reward_bounds(np.array([0.5]), bad)
