"""Tests for rlvr_dynamics.token_policy: closed forms vs enumeration vs Monte Carlo, identities, collapse."""
import numpy as np
import pytest

from rlvr_dynamics.p2 import gap, step_size as ss, token_policy as tp


def test_iid_closed_form_matches_enumeration():
    m = tp.IIDTokenModel.trap(0.9, 0.3)
    th = np.array([0.3, -0.2])
    for t in (1, 3, 6):
        exact = m.as_autoregressive(t).gradient_gap_exact(th)
        cf = m.gradient_gap(th, t)
        assert cf.success_rate == pytest.approx(exact.success_rate, abs=1e-14)
        np.testing.assert_allclose(cf.gap, exact.gap, atol=1e-12)
        np.testing.assert_allclose(cf.g_plus, exact.g_plus, atol=1e-12)
        np.testing.assert_allclose(cf.g_minus, exact.g_minus, atol=1e-12)


def test_autoregressive_identities_by_finite_differences():
    rng = np.random.default_rng(0)
    v, d, t = 3, 2, 4
    pol = tp.AutoregressivePolicy(rng.normal(size=(v + 1, v, d)), t, rng.normal(size=(v + 1, v)),
                                  reward=lambda s: s.sum(-1) % 2 == 0)          # a non-product reward
    th = rng.normal(size=d)
    gg = pol.gradient_gap_exact(th)
    j = gg.success_rate
    h = 1e-5

    def J(x):
        e = pol.enumerate(x)
        return np.exp(e.log_probs)[e.rewards == 1].sum()

    fd = np.array([(J(th + h * np.eye(d)[i]) - J(th - h * np.eye(d)[i])) / (2 * h) for i in range(d)])
    np.testing.assert_allclose(fd, j * (1 - j) * gg.gap, atol=1e-10)
    e = pol.enumerate(th)
    assert np.exp(e.log_probs).sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(np.exp(e.log_probs) @ e.scores, 0.0, atol=1e-13)   # E_pi s = 0


def test_monte_carlo_gap_within_stated_error():
    m = tp.IIDTokenModel.trap(0.8, 0.3)
    pol = m.as_autoregressive(5)
    th = np.array([0.2, 0.1])
    mc = pol.gradient_gap_monte_carlo(th, 40_000, np.random.default_rng(1))
    exact = m.gradient_gap(th, 5).gap
    assert np.all(np.abs(mc.gap - exact) < 4.5 * mc.gap_standard_error)
    assert mc.success_rate == pytest.approx(m.success_rate(th, 5), abs=4.5 * mc.success_rate_standard_error)


def test_expected_directions_and_stability_near_one():
    m = tp.IIDTokenModel.trap(0.99, 0.2)
    th = np.zeros(2)
    gg = m.gradient_gap(th, 16)
    j = gg.success_rate
    np.testing.assert_allclose(m.expected_direction(th, 16, "reinforce"), j * (1 - j) * gg.gap)
    np.testing.assert_allclose(m.expected_direction(th, 16, "grpo"), np.sqrt(j * (1 - j)) * gg.gap / 16)
    np.testing.assert_allclose(m.expected_direction(th, 16, "dr_grpo", max_length="length"), j * (1 - j) * gg.gap / 16)
    # far along the ok direction J rounds to 1 but the gap stays finite (-> m_ok - m_bad)
    far = np.array([40.0, 30.0])
    g_far = m.gradient_gap(far, 8)
    assert np.all(np.isfinite(g_far.gap)) and np.isfinite(m.log_odds(far, 8))


def test_trap_model_collapses_above_and_converges_below_with_length_scaling():
    m = tp.IIDTokenModel.trap(0.9999, 0.2)
    etas = np.geomspace(1.0, 1e6, 61)
    out = tp.simulate_token_sweep(m, [4, 32], etas, "reinforce", 300, record_every=300)
    final = out["success_rate"][..., -1]
    ec = ss.empirical_critical_step_size(etas, final < 0.01)
    assert np.all(np.isfinite(ec))
    assert final[0, 0] > final[0, 0] * 0 + out["success_rate"][0, 0, 0]     # small eta improves
    assert ec[0] / ec[1] == pytest.approx(8.0, rel=0.35)                      # ~ 1/T
    out_n = tp.simulate_token_sweep(m, [4, 32], etas, "dr_grpo", 300, max_length="length", record_every=300)
    ec_n = ss.empirical_critical_step_size(etas, out_n["success_rate"][..., -1] < 0.01)
    assert ec_n[0] / ec_n[1] == pytest.approx(1.0, rel=0.35)                  # 1/|o|: flat


@pytest.mark.parametrize("call, name", [
    (lambda: tp.IIDTokenModel.trap(1.2), "ok_mass"),
    (lambda: tp.IIDTokenModel(np.zeros((0, 2)), np.zeros(0, bool)), "empty"),
    (lambda: tp.IIDTokenModel(np.eye(2), [True, True]), "correct"),
    (lambda: tp.IIDTokenModel.trap().success_rate(np.zeros(2), 0.0), "length"),
    (lambda: tp.IIDTokenModel.trap().success_rate(np.zeros(3), 4), "theta"),
    (lambda: tp.AutoregressivePolicy(np.zeros((3, 3, 1)), 2, reward=np.array([True, False, False])), "features"),
    (lambda: tp.IIDTokenModel.trap().as_autoregressive(30).enumerate(np.zeros(2)), "length"),
    (lambda: tp.IIDTokenModel.trap().expected_direction(np.zeros(2), 4, "dr_grpo", max_length="T"), "max_length"),
])
def test_invalid_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_token_sweep_pairwise_matches_the_cross_product():
    m = tp.IIDTokenModel.trap(0.999, 0.2)
    full = tp.simulate_token_sweep(m, [4, 16], [10.0, 300.0], "reinforce", 20)
    pair = tp.simulate_token_sweep(m, [4, 16], [300.0, 10.0], "reinforce", 20, pairwise=True)
    np.testing.assert_allclose(pair["success_rate"][0], full["success_rate"][0, 1])
    np.testing.assert_allclose(pair["success_rate"][1], full["success_rate"][1, 0])
