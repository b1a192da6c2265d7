"""P1 oscillator: coefficients, thresholds, closed forms, stationary variance, SDE (P1 spec §3.3–3.8, §7.4)."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from rlvr_dynamics.p1 import lagged_recursion as lagged, oscillator as osc, sde


def test_coefficients_closed_form_and_broadcast():
    c = osc.coefficients(1e-3, 0.9, 1.0, 1)
    assert c.mass == pytest.approx(0.95 + 0.0005)
    assert c.damping == pytest.approx(0.099)
    assert c.stiffness_eff == pytest.approx(1e-3)
    c0 = osc.coefficients(1e-3, 0.9, 1.0, 1, lag_mass=False)
    assert c0.mass == pytest.approx(0.95)
    arr = osc.coefficients(np.array([1e-3, 2e-3]), 0.5, 2.0, np.array([[1], [4]]))
    assert np.shape(arr.mass) == (2, 2)
    # delta rescales M by δ², C by δ, leaves ζ unchanged
    c2 = osc.coefficients(1e-3, 0.9, 1.0, 5, delta=0.1)
    c1 = osc.coefficients(1e-3, 0.9, 1.0, 5, delta=1.0)
    assert c2.mass == pytest.approx(c1.mass * 0.01)
    assert c2.damping == pytest.approx(c1.damping * 0.1)
    assert osc.damping_ratio(1e-3, 0.9, 1.0, 5, delta=0.1) == pytest.approx(osc.damping_ratio(1e-3, 0.9, 1.0, 5))


def test_spec_thresholds():
    # §3.5 / §7.4 check 4: predicted K_ref^crit = 100, onset 38.4 (no mass) and 27.3 (mass)
    assert osc.critical_refresh_interval(1e-3, 0.9, 1.0) == pytest.approx(100.0)
    assert osc.oscillation_onset(1e-3, 0.9, 1.0, lag_mass=False) == pytest.approx(38.36, abs=0.01)
    assert osc.oscillation_onset(1e-3, 0.9, 1.0, lag_mass=True) == pytest.approx(27.28, abs=0.01)
    # ζ = 1 exactly at the onset, ζ = 0 at the critical refresh interval, in both conventions
    for lm in (True, False):
        k_osc = osc.oscillation_onset(1e-3, 0.9, 1.0, lag_mass=lm)
        assert osc.damping_ratio(1e-3, 0.9, 1.0, k_osc, lag_mass=lm) == pytest.approx(1.0, abs=1e-12)
        assert osc.damping_ratio(1e-3, 0.9, 1.0, 100.0, lag_mass=lm) == pytest.approx(0.0, abs=1e-12)
    # §7.4 check 7
    assert osc.critical_damping_eta_k(0.9) == pytest.approx(0.1**2 / (2 * 1.9))
    assert osc.critical_damping_eta_k(0.9) == pytest.approx(2.63e-3, abs=5e-6)
    assert osc.critical_damping_eta_k(0.9, 1.0) == pytest.approx(2.50e-3, abs=5e-6)
    assert osc.critical_damping_eta_k(0.9, 1.0, lag_mass=False) == pytest.approx(2.50e-3, abs=5e-6)
    a = osc.critical_damping_eta_k(0.9, 3.0)
    assert osc.damping_ratio(a, 0.9, 1.0, 3.0) == pytest.approx(1.0, abs=1e-10)
    assert osc.critical_learning_rate(0.9, 2.0, 50) == pytest.approx(0.1 / 100)


def test_regimes_and_roots():
    r = osc.regime(1e-3, 0.9, 1.0, np.array([1, 30, 150]))
    assert list(r) == ["overdamped", "underdamped", "unstable"]
    assert osc.regime(1e-3, 0.9, 1.0, osc.oscillation_onset(1e-3, 0.9, 1.0)) == "critical"
    lp, lm = osc.characteristic_roots(1e-3, 0.9, 1.0, 10)
    c = osc.coefficients(1e-3, 0.9, 1.0, 10)
    assert (lp * lm).real == pytest.approx(c.stiffness_eff / c.mass)
    assert osc.damped_frequency(1e-3, 0.9, 1.0, 10) == 0.0   # overdamped
    wd = osc.damped_frequency(1e-3, 0.9, 1.0, 50)
    assert wd == pytest.approx(abs(osc.characteristic_roots(1e-3, 0.9, 1.0, 50)[0].imag))


@settings(max_examples=40, deadline=None)
@given(eta=st.floats(1e-4, 5e-2), mom=st.floats(0, 0.97), kref=st.floats(1, 200), lm=st.booleans())
def test_closed_form_satisfies_ode_and_starts_at_rest(eta, mom, kref, lm):
    c = osc.coefficients(eta, mom, 1.0, kref, lag_mass=lm)
    t = np.linspace(0, 20 / np.sqrt(c.stiffness_eff / c.mass), 2001)
    h = 1e-4 * (t[1] - t[0]) + 1e-6
    u = osc.unit_response(t, c)
    assert not np.any(np.isnan(u))          # strongly unstable cases may overflow to ±inf, never NaN
    assert u[0] == pytest.approx(1.0)
    assert osc.unit_response_velocity(0.0, c) == 0.0
    assume(np.all(np.isfinite(u)) and np.abs(u).max() < 1e100)
    # residual of M ü + C u' + K u via the analytic velocity and a central difference of it
    v = osc.unit_response_velocity(t + h, c)
    vm = osc.unit_response_velocity(np.maximum(t - h, 0), c)
    acc = (v - vm) / (t + h - np.maximum(t - h, 0))
    vel = osc.unit_response_velocity(t, c)
    resid = c.mass * acc + c.damping * vel + c.stiffness_eff * u
    scale = c.stiffness_eff * np.maximum(np.abs(u).max(), 1.0)
    assert np.max(np.abs(resid[1:])) / scale < 1e-4
    # the velocity matches a difference of the response
    du = (osc.unit_response(t[1:-1] + h, c) - osc.unit_response(t[1:-1] - h, c)) / (2 * h)
    assert np.allclose(du, vel[1:-1], atol=1e-6 * np.abs(u).max() * np.sqrt(c.stiffness_eff / c.mass) + 1e-12)


def test_regime_forms_match_textbook():
    t = np.linspace(0, 300, 301)
    # underdamped
    c = osc.coefficients(1e-3, 0.9, 1.0, 60)
    z = osc.damping_ratio(1e-3, 0.9, 1.0, 60)
    w0 = osc.natural_frequency(1e-3, 0.9, 1.0, 60)
    wd = w0 * np.sqrt(1 - z**2)
    ref = np.exp(-z * w0 * t) * (np.cos(wd * t) + z * w0 / wd * np.sin(wd * t))
    assert np.allclose(osc.unit_response(t, c), ref, atol=1e-12)
    # critical (ζ = 1): (1 + ω0 t) e^{−ω0 t}
    k = osc.oscillation_onset(1e-3, 0.9, 1.0)
    c = osc.coefficients(1e-3, 0.9, 1.0, k)
    w0 = np.sqrt(c.stiffness_eff / c.mass)
    assert np.allclose(osc.unit_response(t, c), (1 + w0 * t) * np.exp(-w0 * t), atol=1e-9)
    # overdamped: (λ+ e^{−λ− t} − λ− e^{−λ+ t})/(λ+ − λ−)
    lp, lm = (x.real for x in osc.characteristic_roots(1e-3, 0.9, 1.0, 2))
    c = osc.coefficients(1e-3, 0.9, 1.0, 2)
    assert np.allclose(osc.unit_response(t, c), (lp * np.exp(-lm * t) - lm * np.exp(-lp * t)) / (lp - lm),
                       atol=1e-12)
    # unstable grows
    c = osc.coefficients(1e-3, 0.9, 1.0, 150)
    assert np.max(np.abs(osc.unit_response(np.linspace(2000, 4000, 200), c))) > 50


def test_overdamped_limit_is_single_exponential():
    # M → 0 at fixed C, K: e(t) → exp(−K t / C)
    t = np.linspace(0, 500, 501)
    for m in (1e-1, 1e-2, 1e-3):
        c = osc.Coefficients(m, 0.1, 1e-3)
        err = np.max(np.abs(osc.unit_response(t, c) - np.exp(-t * 1e-3 / 0.1)))
        assert err < 3 * m * 1e-3 / 0.1**2 + 1e-12     # O(M K / C²)
    assert osc.trajectory(10.0, 0.5, 1e-3, 0.9, 1.0, 1) == pytest.approx(0.5 * osc.unit_response(10.0, osc.coefficients(1e-3, 0.9, 1.0, 1)))


def test_stationary_variance_formula_and_sde_within_ci():
    # §3.8: Var(e) = D/(2 G C K), Var(ė) = D/(2 G C M); §7.4 check 3: μ = 0.5, ηK = 0.01 → 100 s²
    c = osc.coefficients(0.01, 0.5, 1.0, 1, lag_mass=False)
    c = osc.Coefficients(c.mass, 0.5, 0.01)           # zero lag
    ve, vv = sde.stationary_variance(c, 1.0)
    assert ve == pytest.approx(100.0)
    assert vv == pytest.approx(1.0 / (2 * 0.5 * 0.75))
    assert sde.stationary_variance(c, 4.0, group_size=4)[0] == pytest.approx(100.0)
    # SDE: 4000 paths, time average over the second half; CI from path-to-path spread
    res = sde.sde_ensemble(c, 1.0, e0=0.0, n_paths=4000, n_steps=6000, dt=0.2, seed=3, record_every=100)
    est = res.time_avg_var.ravel()
    m, se = est.mean(), est.std(ddof=1) / np.sqrt(est.size)
    assert abs(m - ve) < 4 * se + 0.02 * ve       # 2 % allowance for the O(dt) Euler bias
    with pytest.raises(ValueError, match="damping"):
        sde.stationary_variance(osc.Coefficients(1.0, -0.1, 1.0), 1.0)


def test_sde_mean_follows_closed_form_and_threads_do_not_change_results():
    c = osc.coefficients(np.array([2e-3, 1e-3]), 0.9, 1.0, np.array([5, 40]))
    res1 = sde.sde_ensemble(c, 0.0, e0=1.0, n_paths=3, n_steps=4000, dt=0.05, seed=1, record_every=400)
    ref = osc.unit_response(res1.t[None, :], osc.Coefficients(*(np.asarray(x)[:, None] for x in c)))
    assert np.allclose(res1.mean, ref, atol=2e-3)
    a = sde.sde_ensemble(c, 0.01, n_paths=9000, n_steps=50, seed=5, n_threads=1)
    b = sde.sde_ensemble(c, 0.01, n_paths=9000, n_steps=50, seed=5, n_threads=2)
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.var, b.var)


def test_discrete_recursion_agrees_with_continuum_for_small_lag_gain():
    # small η K K_ref: the exact model-A recursion follows the continuum closed form (with the lag-mass term)
    for mom, a, d in ((0.9, 1e-4, 2), (0.95, 5e-5, 4), (0.5, 1e-4, 1)):
        e = lagged.simulate(mom, a, d, 20000)[0, 0]
        t = np.arange(e.size)
        u = osc.unit_response(t, osc.coefficients(a, mom, 1.0, d))
        assert np.max(np.abs(e - u)) < 0.02
    # and the agreement degrades as η K K_ref grows
    e = lagged.simulate(0.9, 1e-3, 60, 3000)[0, 0]
    u = osc.unit_response(np.arange(e.size), osc.coefficients(1e-3, 0.9, 1.0, 60))
    assert np.max(np.abs(e - u)) > 0.05


def test_fit_coefficients_recovers_closed_form():
    for kref in (5, 40):
        c = osc.coefficients(1e-3, 0.9, 1.0, kref)
        t = np.arange(0, 1500.0)
        e = 0.3 * osc.unit_response(t, c)
        f = osc.fit_coefficients(t, e, 1e-3)
        assert f.mass == pytest.approx(c.mass, rel=1e-5)
        assert f.damping == pytest.approx(c.damping, rel=1e-5)
        assert f.damping_ratio == pytest.approx(osc.damping_ratio(1e-3, 0.9, 1.0, kref), rel=1e-5)


@pytest.mark.parametrize("kwargs,name", [
    (dict(learning_rate=0.0), "learning_rate"), (dict(learning_rate=-1.0), "learning_rate"), (dict(momentum=1.0), "momentum"),
    (dict(momentum=-0.1), "momentum"), (dict(refresh_interval=0.5), "refresh_interval"),
    (dict(stiffness=0.0), "stiffness"), (dict(learning_rate=np.nan), "learning_rate"), (dict(stiffness=np.inf), "stiffness"),
    (dict(delta=0.0), "delta"),
])
def test_invalid_inputs_name_the_argument(kwargs, name):
    args = dict(learning_rate=1e-3, momentum=0.9, stiffness=1.0, refresh_interval=1, delta=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        osc.coefficients(**args)


def test_invalid_shapes_and_sde_args():
    with pytest.raises(ValueError, match="broadcast"):
        osc.coefficients(np.ones(3) * 1e-3, np.zeros(2), 1.0, 1)
    c = osc.coefficients(1e-3, 0.9, 1.0, 1)
    with pytest.raises(ValueError, match="n_paths"):
        sde.sde_ensemble(c, 0.1, n_paths=0)
    with pytest.raises(ValueError, match="dt"):
        sde.sde_ensemble(c, 0.1, dt=-1)
    with pytest.raises(ValueError, match="noise_std"):
        sde.sde_ensemble(c, np.nan)
    with pytest.raises(ValueError, match="refresh_interval"):
        osc.critical_learning_rate(0.9, 1.0, 0)


def test_fit_modes_recovers_coefficients_with_free_initial_state():
    """A sampled closed-form solution (any initial state) returns (M, C) exactly, with tiny SEs."""
    t = np.arange(800.0)
    for mom, kref in ((0.9, 1), (0.5, 4), (0.95, 30)):
        c = osc.coefficients(1e-3, mom, 1.0, kref)
        e = 0.7 * osc.unit_response(t, c) - 3.0 * np.asarray(osc.unit_response_velocity(t, c))
        f = osc.fit_modes(e, 1e-3)
        assert not f.at_bound
        assert f.mass == pytest.approx(c.mass, rel=1e-6) and f.damping == pytest.approx(c.damping, rel=1e-6)
        assert f.mass_rel_se < 1e-6 and f.damping_rel_se < 1e-6


def test_fit_modes_flags_modes_without_a_continuum_counterpart():
    # e_{k+2} = -0.5 e_{k+1}: a negative real root has no continuum decay rate
    e = (-0.5) ** np.arange(40.0) + 0.9 ** np.arange(40.0)
    f = osc.fit_modes(e, 1e-3)
    assert f.at_bound and f.mass_rel_se == np.inf and f.damping_rel_se == np.inf


def test_fit_modes_rejects_short_input():
    with pytest.raises(ValueError, match="at least 6"):
        osc.fit_modes(np.ones(5), 1e-3)
    with pytest.raises(ValueError, match="stiffness_eff"):
        osc.fit_modes(np.ones(10), -1.0)


def test_oscillator_fit_standard_errors_default_to_inf_without_covariance():
    f = osc.OscillatorFit(0.1, 0.01, 1.0, 0.0, 1e-3)
    assert f.mass_rel_se == np.inf and f.damping_rel_se == np.inf and f.v0 == 0.0
