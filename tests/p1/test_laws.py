"""Reward-curve laws and fitting (P1 spec §3.6–3.7, §7.4 check 8, §7.5)."""
import math

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from rlvr_dynamics.p1 import laws, oscillator as osc


def test_three_phase_starts_at_rest_and_matches_oscillator():
    t = np.linspace(0, 400, 4001)
    y = laws.three_phase(t, 0.2, 0.7, 50.0, 10.0)
    assert y[0] == pytest.approx(0.2)
    h = t[1] - t[0]
    # Ṙ(0) = 0 and R̈(0) = K(R∞−R0)/M = (0.5)/(T_s T_f): y(h) − y(0) = R̈(0) h²/2 + O(h³)
    assert (y[1] - y[0]) / h**2 == pytest.approx(0.5 / (50 * 10) / 2, rel=0.02)
    # equals the oscillator reward trajectory with λ− = 1/50, λ+ = 1/10: M=1, C=λ+ + λ−, K=λ+ λ−
    c = osc.Coefficients(1.0, 0.1 + 0.02, 0.1 * 0.02)
    assert np.allclose(y, osc.reward_trajectory(t, 0.2, 0.7, c), atol=1e-12)
    # symmetric in (t_slow, t_fast); critical limit is continuous
    assert np.allclose(y, laws.three_phase(t, 0.2, 0.7, 10.0, 50.0))
    crit = laws.three_phase_critical(t, 0.2, 0.7, 1 / 30)
    assert np.allclose(laws.three_phase(t, 0.2, 0.7, 30.0, 30.0 * (1 - 1e-9)), crit, atol=1e-8)
    # inflection time: the slope peaks there
    slope = np.gradient(y, t)
    assert t[np.argmax(slope)] == pytest.approx(laws.inflection_time(50.0, 10.0), abs=0.2)


def test_underdamped_form_matches_oscillator():
    t = np.linspace(0, 300, 301)
    z, w0 = 0.3, 0.05
    c = osc.Coefficients(1.0, 2 * z * w0, w0**2)
    assert np.allclose(laws.three_phase_underdamped(t, 0.1, 0.6, z, w0), osc.reward_trajectory(t, 0.1, 0.6, c),
                       atol=1e-12)


def test_overdamped_limit_converges_to_single_exponential():
    t = np.linspace(0, 500, 501)
    se = laws.single_exponential(t, 0.2, 0.7, 50.0)
    errs = [np.max(np.abs(laws.three_phase(t, 0.2, 0.7, 50.0, tf) - se)) for tf in (5.0, 0.5, 0.05)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3
    assert errs[1] / errs[2] == pytest.approx(10, rel=0.2)    # O(T_f/T_s)


def test_spec_check_8_noiseless_recovery_and_single_exponential_r2():
    t = np.arange(300.0)
    y = laws.three_phase(t, 0.2, 0.7, 50.0, 10.0)
    f = laws.fit_three_phase(t, y)
    assert f.reliable and f.r2 == pytest.approx(1.0, abs=1e-10)
    for k, v in dict(r0=0.2, r_inf=0.7, t_slow=50.0, t_fast=10.0).items():
        assert f.params[k] == pytest.approx(v, rel=1e-6)
    s = laws.fit_single_exponential(t, y)
    assert s.r2 == pytest.approx(0.997, abs=0.0006)
    assert np.allclose(f.predict(t), y, atol=1e-8)
    cmp = laws.compare_laws(t, y)
    assert cmp["winner"] == "three_phase" and cmp["delta_bic"] < -100


@settings(max_examples=12, deadline=None)
@given(r0=st.floats(0.0, 0.4), rise=st.floats(0.2, 0.5), ts=st.floats(30, 120), u=st.floats(0.1, 0.5),
       seed=st.integers(0, 1000))
@example(r0=0.0, rise=0.2, ts=87.0, u=0.5, seed=4)      # close time constants: the draw that failed a fresh clone
def test_fit_recovers_parameters_from_noisy_curves(r0, rise, ts, u, seed):
    """The plateau, the noise and the rise's mean time t_slow + t_fast are recovered. The two time constants alone
    are not when they are close (u = t_fast/t_slow near 0.5): they trade off along a valley whose floor fits the
    noisy curve better than the truth does (r0 = 0, rise 0.2, t_slow 87, u 0.5, seed 4: 74 and 52 against 87 and
    43.5, a lower squared error than the true pair), so t_slow is held to 15 % only for well separated ones."""
    t = np.arange(400.0)
    y = laws.three_phase(t, r0, r0 + rise, ts, ts * u)
    noisy = y + np.random.default_rng(seed).normal(0, 0.005, t.size)
    f = laws.fit_three_phase(t, noisy)
    assert f.reliable
    assert f.params["r_inf"] == pytest.approx(r0 + rise, abs=0.02)
    assert f.params["t_slow"] + f.params["t_fast"] == pytest.approx(ts * (1 + u), rel=0.1)
    if u <= 0.3:
        assert f.params["t_slow"] == pytest.approx(ts, rel=0.15)
    assert f.residual_std == pytest.approx(0.005, rel=0.15)


def test_single_exponential_recovery_any_scale():
    t = np.arange(200.0)
    y = 4.0 - 3.0 * np.exp(-t / 40.0) + np.random.default_rng(0).normal(0, 0.02, t.size)   # shaped reward 0–4
    f = laws.fit_single_exponential(t, y)
    assert f.reliable and f.params["r_inf"] == pytest.approx(4.0, abs=0.02)
    assert f.params["timescale"] == pytest.approx(40.0, rel=0.05)
    ff = laws.fit_single_exponential(t, y, fix_r0=True)
    assert ff.params["r0"] == y[0] and ff.n_free == 2
    # AIC/BIC formula
    rss = np.sum((y - f.predict(t)) ** 2)
    assert f.aic == pytest.approx(t.size * math.log(rss / t.size) + 6)
    assert f.bic == pytest.approx(t.size * math.log(rss / t.size) + 3 * math.log(t.size))


def test_degenerate_inputs_never_crash():
    t = np.arange(50.0)
    const = laws.fit_three_phase(t, np.full(50, 0.3))
    assert not const.reliable and "constant" in const.message
    short = laws.fit_three_phase([0, 1, 2], [0.1, 0.2, 0.25])
    assert not short.reliable and "points" in short.message
    one = laws.fit_single_exponential([0], [0.5])
    assert not one.reliable
    empty = laws.fit_single_exponential([], [])
    assert not empty.reliable
    y = laws.single_exponential(t, 0.1, 0.6, 10.0)
    y[[3, 10]] = np.nan
    f = laws.fit_single_exponential(t, y)
    assert f.reliable and f.n == 48 and "dropped 2" in f.message
    assert f.params["timescale"] == pytest.approx(10.0, rel=1e-6)
    flat = laws.fit_three_phase(t, 0.5 + 1e-3 * t)   # still rising linearly: plateau not identifiable
    assert isinstance(flat.reliable, bool)
    cmp = laws.compare_laws([0, 1, 2], [0.1, 0.2, 0.3])
    assert cmp["winner"] == "undetermined"
    with pytest.raises(ValueError, match="predict"):
        empty.predict(t)


def test_invalid_inputs_raise():
    with pytest.raises(ValueError, match="same length"):
        laws.fit_three_phase(np.arange(5.0), np.arange(4.0))
    with pytest.raises(ValueError, match="1-D"):
        laws.fit_three_phase(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="numeric"):
        laws.fit_single_exponential(["a", "b"], [1, 2])
    with pytest.raises(ValueError, match="t_slow"):
        laws.three_phase(1.0, 0, 1, -1.0, 1.0)
    with pytest.raises(ValueError, match="timescale"):
        laws.single_exponential(1.0, 0, 1, 0.0)
    with pytest.raises(ValueError, match="zeta"):
        laws.three_phase_underdamped(1.0, 0, 1, 1.5, 0.1)
    with pytest.raises(ValueError, match="r_bounds"):
        laws.fit_three_phase(np.arange(5.0), np.arange(5.0), r_bounds=(1, 0))
