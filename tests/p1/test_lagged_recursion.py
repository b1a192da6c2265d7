"""Exact discrete lagged heavy-ball recursion (P1 spec §3.5, §7.4 checks 3–5)."""
import numpy as np
import pytest

from rlvr_dynamics.p1 import lagged_recursion as lagged, oscillator as osc, sde

RATIO_TABLE = {  # §3.5: a_crit·d/(1−μ)
    0.0: {1: 1.00, 2: 1.24, 8: 1.48, 32: 1.55, 256: 1.57},
    0.5: {1: 1.00, 2: 1.12, 8: 1.36, 32: 1.50, 256: 1.56},
    0.9: {1: 1.00, 2: 1.025, 8: 1.12, 32: 1.30, 256: 1.52},
}


@pytest.mark.parametrize("mu", sorted(RATIO_TABLE))
def test_ratio_table(mu):
    for d, ref in RATIO_TABLE[mu].items():
        ratio = lagged.critical_eta_k(mu, d) * d / (1 - mu)
        assert ratio == pytest.approx(ref, abs=0.006 if ref != 1.025 else 0.0006)


def test_critical_gain_analytic_matches_bisection_on_roots():
    for mu in (0.0, 0.5, 0.9):
        for d in (1, 3, 7, 16):
            a = lagged.critical_eta_k(mu, d)
            assert lagged.spectral_radius(mu, a * (1 - 1e-7), d) < 1 < lagged.spectral_radius(mu, a * (1 + 1e-7), d)
    # μ = 0 tends to π/2 at large lag
    assert lagged.critical_eta_k(0.0, 2000) * 2000 == pytest.approx(np.pi / 2, rel=2e-3)


def test_spec_check_4_lags():
    assert lagged.first_unstable_delay(0.9, 1e-3) == 149
    assert lagged.first_complex_dominant_delay(0.9, 1e-3) == 26
    # the bisection agrees with a linear scan around the answer
    assert lagged.spectral_radius(0.9, 1e-3, 148) < 1 < lagged.spectral_radius(0.9, 1e-3, 149)


def test_periodic_refresh_map():
    # μ = 0: one period multiplies e by 1 − a K_ref; exact threshold a K_ref = 2 (§3.5, §7.4 check 5)
    for k in (1, 3, 10, 50):
        phi = lagged.periodic_map(0.0, 0.01, k)
        assert phi[0, 0] == pytest.approx(1 - 0.01 * k)
        assert lagged.critical_eta_k(0.0, k, lag_model="periodic") * k == pytest.approx(2.0, rel=1e-8)
    # the map reproduces a direct simulation of model B over one period
    e = lagged.simulate(0.7, 0.02, 6, 12, lag_model="periodic")[0, 0]
    phi = lagged.periodic_map(0.7, 0.02, 6)
    x = phi @ phi @ np.array([1.0, 1.0])
    assert x[0] == pytest.approx(e[12]) and x[1] == pytest.approx(e[11])
    # model B is stable well beyond the model-A threshold (effective lag ≈ K_ref/2)
    a = 1e-3
    assert lagged.periodic_spectral_radius(0.9, a, 120) < 1 < lagged.spectral_radius(0.9, a, 160)


def test_stationary_variance_check_3():
    assert lagged.ar2_stationary_variance(0.5, 0.01) == pytest.approx(100.33, abs=0.005)
    assert lagged.stationary_variance(0.5, 0.01, 0) == pytest.approx(lagged.ar2_stationary_variance(0.5, 0.01))
    c = osc.Coefficients(0.75, 0.5, 0.01)
    assert sde.stationary_variance(c, 1.0)[0] == pytest.approx(100.0)
    # long simulation within its confidence interval (batch means over independent paths)
    e = lagged.simulate(0.5, 0.01, 0, 20000, e0=0.0, noise_std=1.0, n_paths=200, seed=7)[0][:, 2000:]
    per_path = (e**2).mean(axis=1)
    m, se = per_path.mean(), per_path.std(ddof=1) / np.sqrt(per_path.size)
    assert abs(m - 100.33) < 4 * se
    # with a lag the exact variance grows (damping eroded)
    assert lagged.stationary_variance(0.5, 0.01, 10) > lagged.stationary_variance(0.5, 0.01, 0)
    with pytest.raises(ValueError, match="unstable"):
        lagged.stationary_variance(0.9, 1e-3, 200)


def test_simulate_matches_characteristic_root():
    e = lagged.simulate(0.9, 1e-3, 5, 4000)[0, 0]
    z = lagged.dominant_root(0.9, 1e-3, 5)
    rate = np.log(np.abs(e[3999] / e[3000])) / 999
    assert rate == pytest.approx(np.log(abs(z)), rel=1e-3)
    many = lagged.simulate(np.array([0.0, 0.5]), 1e-2, np.array([3, 4]), 50, n_paths=2)
    assert many.shape == (2, 2, 51)


def test_invalid_inputs():
    with pytest.raises(ValueError, match="momentum"):
        lagged.spectral_radius(1.0, 1e-3, 3)
    with pytest.raises(ValueError, match="eta_k"):
        lagged.spectral_radius(0.5, -1.0, 3)
    with pytest.raises(ValueError, match="delay"):
        lagged.spectral_radius(0.5, 1e-3, -1)
    with pytest.raises(ValueError, match="refresh_interval"):
        lagged.periodic_map(0.5, 1e-3, 0)
    with pytest.raises(ValueError, match="lag"):
        lagged.simulate(0.5, 1e-3, 0, 10, lag_model="periodic")
    with pytest.raises(ValueError, match="lag_model"):
        lagged.critical_eta_k(0.5, 3, lag_model="nope")
    with pytest.raises(ValueError, match="broadcast"):
        lagged.simulate(np.zeros(3), np.ones(2) * 1e-3, 1, 10)


def test_threshold_truncation_error_closed_form_and_exact_recursion():
    # closed form: mu 0.95, eta*K = 0.05/16 (K_ref^crit = 16): x = 0.8, (omega tau)^2 = 1.6/2.75
    assert lagged.threshold_truncation_error(0.95, 0.05 / 16) == pytest.approx(1.6 / 2.75 / 6, rel=1e-12)
    # mu = 0: x = 1/a, (omega tau)^2 = 2/(a + 1) -> 2 at small gain: error -> 1/3 (the exact ratio tends to pi/2)
    assert lagged.threshold_truncation_error(0.0, 1e-6) == pytest.approx(1 / 3, rel=1e-5)
    # vectorised, and small where the lag-mass term is small: it matches the exact discrete recursion's ratio - 1
    mus, ds = np.array([0.99, 0.99, 0.995]), np.array([5, 10, 20])
    err = lagged.threshold_truncation_error(mus, (1 - mus) / ds)
    exact = np.array([lagged.critical_eta_k(m, int(d)) * d / (1 - m) - 1 for m, d in zip(mus, ds)])
    assert err.shape == (3,)
    np.testing.assert_allclose(err, exact, rtol=0.05)


@pytest.mark.parametrize("kw", [dict(momentum=1.0, eta_k=0.1), dict(momentum=-0.1, eta_k=0.1), dict(momentum=0.5, eta_k=0.0)])
def test_threshold_truncation_error_rejects_bad_input(kw):
    with pytest.raises(ValueError, match="momentum|eta_k"):
        lagged.threshold_truncation_error(**kw)


def test_discrete_mass_closed_form_and_identification():
    mus = np.array([0.5, 0.9, 0.95])
    m = lagged.discrete_mass(mus)
    np.testing.assert_allclose(m, (1 - mus) / np.log(1 / mus), rtol=1e-12)
    # (1+mu)/2 to second order in 1-mu: the residual is -(1-mu)^2/12 + O((1-mu)^3)
    u = 1 - mus
    np.testing.assert_allclose(m - (1 + mus) / 2, -u**2 / 12, atol=0.3 * u.max() ** 3)
    assert lagged.discrete_mass(0.0) == 0.0 and lagged.discrete_mass(0.9) == pytest.approx(0.94912, abs=1e-5)
    # it is what the oscillator identification returns for the exact recursion at small gain (one-step delay)
    for mu in (0.5, 0.9):
        e = lagged.simulate(mu, 1e-4, 1, 3000).ravel()
        fit = osc.fit_modes(e[1:], 1e-4)
        assert fit.mass == pytest.approx(lagged.discrete_mass(mu), rel=2e-3)
    with pytest.raises(ValueError, match="momentum"):
        lagged.discrete_mass(1.0)
