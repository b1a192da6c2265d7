"""P1's panel-curve rows (rlvr_dynamics.verdicts.grpo_p1.panel_row, issue 23) on synthetic panel curves whose
answers are known: a noise-free three-phase curve, binomial noise of known size, an injected overshoot."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts import grpo_p1 as g1, grpo_rows
from rlvr_dynamics.grpo.config import RunConfig
from rlvr_dynamics.grpo.panel import binomial_se, panel_schedule
from rlvr_dynamics.p1 import laws

N_PANEL = 256


def fake_run(**cfg):
    config = RunConfig(name="synthetic-panel", model="smollm2-135m", max_steps=150, **cfg)
    return SimpleNamespace(id="synthetic-panel-0", config=config, refresh_interval=1)


def curve(noise_seed=None, *, r0=0.2, r_inf=0.7, t_slow=12.0, t_fast=3.0, bump=None):
    """The grid's panel schedule (steps 0, 2, ..., 150) on a three-phase law; binomial noise of a 256-prompt panel
    when ``noise_seed`` is given; ``bump=(step, size)`` adds ``size`` at one step."""
    t = np.array([0] + panel_schedule("2:20,5:60,10", 150), dtype=float)
    p = laws.three_phase(t, r0, r_inf, t_slow, t_fast)
    if bump:
        p = p + np.where(t == bump[0], bump[1], 0.0)
    y = p if noise_seed is None else np.random.default_rng(noise_seed).binomial(N_PANEL, p) / N_PANEL
    se = np.array([binomial_se(v, N_PANEL) for v in y])
    return {"step": t.tolist(), "reward": y.tolist(), "se": se.tolist()}


def test_the_schedule_is_the_pre_registered_28_points():
    assert len(curve()["step"]) == 28


def test_noise_free_three_phase_curve_is_fitted_exactly():
    w = g1.panel_row(fake_run(), curve(), late_steps=50, min_rise_frac=0.2)
    assert w["r2_tp"] > 0.9999
    assert w["early"] == pytest.approx(0.2)
    late_t = np.array([100, 110, 120, 130, 140, 150], dtype=float)
    assert w["late"] == pytest.approx(float(np.mean(laws.three_phase(late_t, 0.2, 0.7, 12.0, 3.0))))
    assert w["rise"] == pytest.approx(w["late"] - 0.2)
    # R'(0)/max R' on integer steps, as on every training curve (np.gradient: the first slope is f(1) - f(0))
    dense = np.arange(151.0)
    slope = np.abs(np.gradient(laws.three_phase(dense, 0.2, 0.7, 12.0, 3.0), dense))
    assert w["slow_start"] == pytest.approx(slope[0] / slope.max(), rel=0.02)
    assert w["slow_start"] < 0.3


def test_ceiling_takes_the_larger_noise_estimate():
    y = np.array([0.1, 0.3, 0.2, 0.5, 0.4, 0.6])
    se_small = np.full(6, 0.001)
    c, vb, vd = grpo_rows.panel_noise_ceiling(y, se_small)
    assert vb == pytest.approx(1e-6)
    assert vd == pytest.approx(np.var(np.diff(y), ddof=1) / 2)
    assert c == pytest.approx(1 - vd / np.var(y, ddof=1))
    se_big = np.full(6, 0.2)
    c2, vb2, _ = grpo_rows.panel_noise_ceiling(y, se_big)
    assert c2 == pytest.approx(1 - 0.04 / np.var(y, ddof=1))
    assert math.isnan(grpo_rows.panel_noise_ceiling(np.full(6, 0.5), se_small)[0])


def test_binomial_noise_gives_the_ceiling_the_issue_expects():
    # rise 0.5 sampled at 256 prompts: sigma <= 0.031; the ceiling is ~0.9 or more, R^2 close to it
    rows = [g1.panel_row(fake_run(), curve(s), late_steps=50, min_rise_frac=0.2) for s in range(5)]
    for w in rows:
        assert 0.85 < w["ceiling"] < 1
        assert w["sigma_binomial"] <= 0.0313
        assert w["r2_tp"] <= 1 and w["r2_tp"] > w["ceiling"] - 0.1
        assert w["detectable"] and w["detect_frac"] == pytest.approx(3 * w["mean_se"] / abs(w["rise"]))


def test_an_injected_overshoot_is_measured_in_point_se():
    base = g1.panel_row(fake_run(), curve(), late_steps=50, min_rise_frac=0.2)
    w = g1.panel_row(fake_run(), curve(bump=(40, 0.15)), late_steps=50, min_rise_frac=0.2)
    assert base["overshoot_se"] < 1
    assert w["overshoot_se"] > 3
    # one bump is not an oscillation: the rule as amended (claims.yml, 2026-12-02) gives PARTIAL, not FAIL
    check = g1.c12_verdict([w], claims.criterion("P1-C12")["criterion"]["values"])
    assert check.verdict == "PARTIAL"


def test_a_damped_oscillation_fails_p1_c12():
    # P1's underdamped response (zeta 0.2) sampled on the panel schedule: the full oscillation signature
    c = curve()
    c["reward"] = laws.three_phase_underdamped(np.asarray(c["step"]), 0.2, 0.7, 0.2, 0.1).tolist()
    w = g1.panel_row(fake_run(), c, late_steps=50, min_rise_frac=0.2)
    check = g1.c12_verdict([w], claims.criterion("P1-C12")["criterion"]["values"])
    assert w["d_bic_osc"] < -10 and w["osc_regime"] == "underdamped"
    assert check.verdict == "FAIL"


def test_adam_runs_stay_inconclusive_for_the_slow_start():
    w = g1.panel_row(fake_run(optimizer="adamw"), curve(1), late_steps=50, min_rise_frac=0.2)
    assert w["first_step_full"]
    v8 = claims.criterion("P1-C8")["criterion"]["values"]
    assert g1.c8_verdict([w], v8).verdict == "INCONCLUSIVE"


def test_bad_input_is_named():
    c = curve()
    with pytest.raises(ValueError, match="step-0"):
        g1.panel_row(fake_run(), {k: v[1:] for k, v in c.items()}, late_steps=50, min_rise_frac=0.2)
    with pytest.raises(ValueError, match="late_steps"):
        g1.panel_row(fake_run(), c, late_steps=0, min_rise_frac=0.2)
