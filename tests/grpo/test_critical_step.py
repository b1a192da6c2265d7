"""The bisection driver of real GRPO runs (grpo.critical_step), with a stand-in for training."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from rlvr_dynamics.grpo.config import RunConfig
from rlvr_dynamics.grpo.critical_step import (BisectSettings, CellBisection, group_key, load_bisection_experiment)

REPO = Path(__file__).resolve().parents[2]


def threshold_train(eta_c: float, initial: float = 0.4):
    """A stand-in for a run: the success is kept below ``eta_c`` and lost above it."""
    calls = []

    def train(cfg: RunConfig) -> float:
        calls.append(cfg.learning_rate)
        return initial if cfg.learning_rate < eta_c else 0.0
    return train, calls


@pytest.mark.parametrize("eta_c", [0.05, 1.7, 40.0])
def test_cell_bisection_brackets_then_bisects_to_the_tolerance(eta_c):
    train, calls = threshold_train(eta_c)
    job = CellBisection(RunConfig(), 0.4, BisectSettings(low=0.3, high=3.0, rel_tol=0.02), train)
    res = job.bisect(0.3, 3.0)
    assert res["low"] < eta_c <= res["high"]
    assert res["relative_width"] <= 0.02
    assert abs(res["estimate"] / eta_c - 1) <= 0.02
    assert len(job.trials) == len(calls) and all(t["collapsed"] == (t["learning_rate"] >= eta_c) for t in job.trials)
    assert len(set(calls)) == len(calls)  # no step is trained twice (the bracket moves reuse known ends)


def test_cell_bisection_gives_up_outside_the_expansion_range():
    train, _ = threshold_train(1e6)
    res = CellBisection(RunConfig(), 0.4, BisectSettings(max_expand=2), train).bisect(0.3, 3.0)
    assert res["estimate"] == math.inf
    train, _ = threshold_train(1e-9)
    res = CellBisection(RunConfig(), 0.4, BisectSettings(max_expand=2), train).bisect(0.3, 3.0)
    assert math.isnan(res["estimate"])


def test_collapse_uses_the_project_rule():
    """Collapsed iff the final success is below half the initial (p2.step_size.is_collapsed)."""
    job = CellBisection(RunConfig(), 0.4, BisectSettings(), lambda cfg: 0.2 if cfg.learning_rate > 1 else 0.19)
    assert not job.collapsed(2.0) and job.collapsed(0.5)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="bisect.rel_tol"):
        BisectSettings(rel_tol=0.0)
    with pytest.raises(ValueError, match="bisect.high"):
        BisectSettings(low=2.0, high=1.0)
    with pytest.raises(ValueError, match="unknown bisect setting"):
        BisectSettings.from_dict({"tol": 0.1})


def test_committed_length_sweep_file(tmp_path):
    name, cells, settings = load_bisection_experiment(REPO / "data" / "configs" / "grpo_p2_length.yml")
    assert name == "p2-len" and len(cells) == 60 and settings.rel_tol == 0.02
    assert sorted({c.max_completion_length for c in cells}) == [3, 7, 15, 31, 63, 127]
    assert len({group_key(c) for c in cells}) == 12  # 6 lengths x 2 algorithms, 5 seeds each
    bad = tmp_path / "x.yml"
    bad.write_text("base: {name: a}\n")
    with pytest.raises(ValueError, match="'bisect' section"):
        load_bisection_experiment(bad)
