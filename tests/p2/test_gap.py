"""Tests for rlvr_dynamics.gap: identities vs finite differences, M(K) and the logistic bound by hand, ValueErrors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import expit

from rlvr_dynamics.p2 import gap


def random_problem(seed, n=12, d=4, batch=()):
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=batch + (n, d))
    theta = rng.normal(size=batch + (d,))
    correct = np.zeros(batch + (n,), bool)
    correct[..., : max(1, n // 3)] = True
    return phi, theta, correct


def central_diff(f, theta, h=1e-5):
    out = np.zeros_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = h
        out[i] = (f(theta + e) - f(theta - e)) / (2 * h)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_identities_against_finite_differences(seed):
    phi, theta, correct = random_problem(seed)
    gg = gap.gradient_gap(phi, theta, correct)
    j = gg.success_rate
    fd_j = central_diff(lambda t: gap.success_rate(phi, t, correct), theta)
    fd_l = central_diff(lambda t: gap.log_odds(phi, t, correct), theta)
    assert np.max(np.abs(fd_j - j * (1 - j) * gg.gap)) < 1e-10
    assert np.max(np.abs(fd_l - gg.gap)) < 1e-9
    # E_pi s = 0  =>  J g+ + (1-J) g- = 0, g+ = (1-J) gap, g- = -J gap
    np.testing.assert_allclose(j * gg.g_plus + (1 - j) * gg.g_minus, 0, atol=1e-14)
    np.testing.assert_allclose(gg.g_plus, (1 - j) * gg.gap, atol=1e-14)
    np.testing.assert_allclose(gg.g_minus, -j * gg.gap, atol=1e-14)


def test_closed_form_matches_explicit_scores_and_batches():
    phi, theta, correct = random_problem(7, batch=(3,))
    gg = gap.gradient_gap(phi, theta, correct)
    s = gap.score_matrix(phi, theta)
    p = gap.policy_probs(phi, theta)
    np.testing.assert_allclose(np.einsum("bn,bnd->bd", p, s), 0, atol=1e-14)
    ref = gap.gradient_gap_from_scores(p, s, correct)
    np.testing.assert_allclose(ref.gap, gg.gap, atol=1e-13)
    for b in range(3):
        one = gap.gradient_gap(phi[b], theta[b], correct[b])
        np.testing.assert_allclose(one.gap, gg.gap[b], atol=1e-14)
    # shared features, batch of thetas
    thetas = np.random.default_rng(1).normal(size=(5, 4))
    gb = gap.gradient_gap(phi[0], thetas, correct[0])
    np.testing.assert_allclose(gb.gap[2], gap.gradient_gap(phi[0], thetas[2], correct[0]).gap, atol=1e-14)


def test_log_odds_is_stable_near_one():
    phi = np.array([[1.0], [0.0]])
    correct = np.array([True, False])
    theta = np.array([60.0])                 # J = sigmoid(60): 1 - J underflows log1p(-J)
    assert gap.log_odds(phi, theta, correct) == pytest.approx(60.0, abs=1e-12)
    gg = gap.gradient_gap(phi, theta, correct)
    assert gg.gap[0] == pytest.approx(1.0)


def test_sampled_gap_converges_with_stated_standard_error():
    phi, theta, correct = random_problem(3, n=8, d=3)
    p = gap.policy_probs(phi, theta)
    rng = np.random.default_rng(0)
    idx = rng.choice(8, size=200_000, p=p)
    s = gap.score_matrix(phi, theta)[idx]
    est = gap.gradient_gap_sampled(s, correct[idx].astype(float))
    exact = gap.gradient_gap(phi, theta, correct).gap
    z = (est.gap - exact) / est.gap_standard_error
    assert np.all(np.abs(z) < 4.5)
    assert np.all(est.gap_standard_error < 0.02)


def test_cumulative_alignment_by_hand():
    m = gap.cumulative_alignment([0.5, 1.0, 2.0, 0.1], [2.0, -3.0, 0.25, 10.0])
    np.testing.assert_allclose(m, [0.0, 1.0, 1.0, 1.5, 2.5])
    # fixed step as a scalar, batch of series
    m2 = gap.cumulative_alignment(0.2, np.array([[1.0, 1.0], [-1.0, 5.0]]))
    np.testing.assert_allclose(m2, [[0.0, 0.2, 0.4], [0.0, 0.0, 1.0]])


def test_logistic_lower_bound_by_hand():
    # J0 = 0.2: l0 = log(1/4); M = 2 log 4  =>  sigma(-log4 + log4) = 0.5
    assert gap.logistic_lower_bound(0.2, 2 * np.log(4.0)) == pytest.approx(0.5, abs=1e-15)
    np.testing.assert_allclose(gap.logistic_lower_bound(np.array([0.1, 0.5]), np.array([0.0, 2.0])),
                               [0.1, expit(1.0)], atol=1e-15)
    assert gap.logistic_lower_bound(0.0, 5.0) == 0.0
    assert gap.logistic_lower_bound(1.0, 0.0) == 1.0
    # the documented pairing for logged series (M[k] = sum over steps before k)
    acc = np.array([0.3, 0.4, 0.5])
    bound = gap.logistic_lower_bound(acc[0], gap.cumulative_alignment([0.1, 0.1, 0.1], [1.0, 1.0, 1.0])[:-1])
    assert bound.shape == acc.shape and bound[0] == pytest.approx(0.3)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), eta=st.floats(1e-4, 3.0))
def test_one_step_identity_and_hoeffding(seed, eta):
    phi, theta, correct = random_problem(seed, n=7, d=3)
    w = np.random.default_rng(seed + 1).normal(size=3)
    exact = gap.one_step_log_odds_change(phi, theta, correct, w, eta)
    direct = gap.log_odds(phi, theta + eta * w, correct) - gap.log_odds(phi, theta, correct)
    assert exact == pytest.approx(direct, abs=1e-10)
    assert exact >= gap.hoeffding_lower_bound(phi, theta, correct, w, eta) - 1e-10
    kp = gap.cgf(phi, theta, correct, w, eta)
    km = gap.cgf(phi, theta, ~correct, w, eta)
    assert kp - km == pytest.approx(exact, abs=1e-12)


def test_first_order_term_is_gap_alignment():
    phi, theta, correct = random_problem(11)
    w = np.random.default_rng(2).normal(size=4)
    dmu = gap.gap_alignment(w, gap.gradient_gap(phi, theta, correct).gap)
    mu_p, mu_m = gap.alignment_decomposition(phi, theta, correct, w)
    assert mu_p - mu_m == pytest.approx(dmu, abs=1e-14)
    etas = np.array([1e-3, 1e-4, 1e-5])
    ratio = gap.one_step_log_odds_change(phi, theta, correct, w, etas) / etas
    errs = np.abs(ratio - dmu)
    assert errs[2] < 1e-4 * max(1, abs(dmu)) and errs[2] < errs[1] < errs[0]


def test_score_bounds_match_definition():
    phi, theta, _ = random_problem(4)
    g_o, l_o = gap.score_bounds(phi, theta)
    s = gap.score_matrix(phi, theta)
    p = gap.policy_probs(phi, theta)
    assert g_o == pytest.approx(np.linalg.norm(s, axis=1).max())
    assert l_o == pytest.approx(np.linalg.eigvalsh((p[:, None] * s).T @ s)[-1])
    assert gap.theorem1_constant(1.0, 2.0) == 20.0
    assert gap.theorem1_constant(1.0, 2.0, "2L+8G^2") == 12.0
    assert gap.step_condition_holds(0.1, [1.0, 0.0], 2.0, 20.0)
    assert not gap.step_condition_holds(0.11, [1.0, 0.0], 2.0, 20.0)
    assert not gap.step_condition_holds(0.0001, [1.0, 0.0], -1.0, 20.0)


@pytest.mark.parametrize("call, name", [
    (lambda: gap.cumulative_alignment([-0.1, 0.1], [1.0, 1.0]), "step_sizes"),
    (lambda: gap.cumulative_alignment([0.1, 0.1, 0.1], [1.0, 1.0]), "step"),
    (lambda: gap.cumulative_alignment([0.1, np.nan], [1.0, 1.0]), "step_sizes"),
    (lambda: gap.logistic_lower_bound(1.2, 1.0), "initial_success"),
    (lambda: gap.logistic_lower_bound(-0.1, 1.0), "initial_success"),
    (lambda: gap.logistic_lower_bound(0.5, -1.0), "cumulative_alignment"),
    (lambda: gap.success_rate(np.zeros((0, 3)), np.zeros(3), np.zeros(0, bool)), "empty"),
    (lambda: gap.success_rate(np.eye(3), np.zeros(2), [True, False, False]), "theta"),
    (lambda: gap.success_rate(np.eye(3), np.zeros(3), [True, False]), "correct"),
    (lambda: gap.gradient_gap(np.eye(3), np.zeros(3), [True, True, True]), "correct"),
    (lambda: gap.gap_alignment(np.ones(3), np.ones(2)), "direction"),
    (lambda: gap.one_step_log_odds_change(np.eye(2), np.zeros(2), [True, False], np.ones(2), -1.0), "step_size"),
    (lambda: gap.gradient_gap_from_scores([0.5, 0.6], np.zeros((2, 1)), [True, False]), "probs"),
    (lambda: gap.gradient_gap_from_scores([1.5, -0.5], np.zeros((2, 1)), [True, False]), "probs"),
    (lambda: gap.theorem1_constant(1.0, 1.0, "other"), "form"),
])
def test_invalid_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
