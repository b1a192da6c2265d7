"""Tests for rlvr_dynamics.p2.alignment_estimators: the GRPO direction against the score identity and finite
differences, the exact finite-difference alignment against ⟨w, g⁺ − g⁻⟩, exact (enumerated) expectations of both
estimators, the Monte Carlo bias check, and the ValueErrors."""
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from rlvr_dynamics.p2 import alignment_estimators as ae
from rlvr_dynamics.p2 import directions, gap


def problem(seed, n=8, k=2, g=4, reps=50):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    correct = np.arange(n) < k
    probs = np.broadcast_to(np.exp(theta - logsumexp(theta)), (reps, n))
    samples = directions.sample_responses(probs, g, rng)
    return theta, correct, samples, correct[samples].astype(float)


def log_softmax(theta):
    return theta - logsumexp(theta, axis=-1, keepdims=True)


@pytest.mark.parametrize("seed", range(3))
def test_direction_matches_score_identity_and_finite_differences(seed):
    theta, correct, samples, rewards = problem(seed)
    w = ae.grpo_update_direction(theta, samples, rewards, std_eps=1e-4)
    # Σ_o (e_o − π) summed over components is 0, so every w sums to 0; Σ_o π(o)∇logπ(o) = 0
    np.testing.assert_allclose(w.sum(-1), 0.0, atol=1e-14)
    scores = gap.score_matrix(np.eye(theta.size), theta)
    np.testing.assert_allclose(np.exp(log_softmax(theta)) @ scores, 0.0, atol=1e-15)
    # same as directions.direction_from_samples with explicit per-sample scores
    ref = directions.direction_from_samples(scores[samples], rewards, "grpo_no_length_norm", std_eps=1e-4)
    np.testing.assert_allclose(w, ref, atol=1e-14)
    # w is the gradient of (1/G) Σ A_i log π(o_i) with the advantages held fixed (central differences)
    adv = directions.group_advantages(rewards, "grpo_no_length_norm", std_eps=1e-4) / samples.shape[-1]
    h = 1e-6
    for r in range(3):
        f = lambda t: (adv[r] * log_softmax(t)[samples[r]]).sum()
        fd = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(theta.size)])
        np.testing.assert_allclose(fd, w[r], atol=1e-8)


def test_direction_zero_for_unmixed_groups_and_batched_prompts():
    theta = np.random.default_rng(0).normal(size=(3, 5))
    samples = np.array([[0, 1, 2], [3, 3, 4], [0, 0, 1]])
    rewards = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    w = ae.grpo_update_direction(theta, samples, rewards)
    np.testing.assert_array_equal(w[[0, 2]], 0.0)
    np.testing.assert_allclose(w[1], ae.grpo_update_direction(theta[1], samples[1], rewards[1]), atol=0)


@pytest.mark.parametrize("step_size", [1e-4, 0.5, 5.0])
def test_exact_alignment_equals_gap_alignment(step_size):
    theta, correct, samples, rewards = problem(1)
    w = ae.grpo_update_direction(theta, samples, rewards)
    exact = ae.exact_finite_difference_alignment(theta, theta + step_size * w, correct, step_size)
    dmu = gap.gap_alignment(w, gap.gradient_gap(np.eye(theta.size), theta, correct).gap)
    # log-linear: the log-normaliser change is common to all o, so equality holds at every η, not only η → 0
    np.testing.assert_allclose(exact, dmu, atol=1e-12)
    assert np.all(np.isfinite(exact)) and np.any(np.abs(dmu) > 0.05)


def test_exact_alignment_by_brute_force_for_arbitrary_theta_new():
    rng = np.random.default_rng(3)
    theta, theta_new = rng.normal(size=6), rng.normal(size=6)
    correct = np.array([1, 0, 0, 1, 0, 0], bool)
    p = np.exp(log_softmax(theta))
    delta = log_softmax(theta_new) - log_softmax(theta)
    want = (p[correct] @ delta[correct] / p[correct].sum() - p[~correct] @ delta[~correct] / p[~correct].sum()) / 0.3
    assert ae.exact_finite_difference_alignment(theta, theta_new, correct, 0.3) == pytest.approx(want, abs=1e-13)


def all_groups(theta, size):
    """Every ordered group of ``size`` responses and its probability under π_θ."""
    groups = np.array(list(itertools.product(range(theta.size), repeat=size)))
    return groups, np.exp(log_softmax(theta))[groups].prod(-1)


def test_fresh_estimator_exactly_unbiased_by_enumeration():
    theta, correct, samples, rewards = problem(2, reps=5)
    eta = 0.5
    fresh, prob = all_groups(theta, 3)
    for w in ae.grpo_update_direction(theta, samples, rewards):
        exact = ae.exact_finite_difference_alignment(theta, theta + eta * w, correct, eta)
        est, mixed = ae.fresh_alignment(theta, theta + eta * w, fresh, correct[fresh], eta)
        assert np.all(np.isnan(est) == ~mixed)
        cond_mean = (prob[mixed] * est[mixed]).sum() / prob[mixed].sum()
        assert cond_mean == pytest.approx(float(exact), abs=1e-12)


def test_bias_check_fresh_unbiased_in_sample_biased_up():
    res = ae.estimator_bias_check(n_responses=8, n_correct=2, group_size=4, fresh_samples=8, step_size=0.5,
                                  n_repeats=20000, seed=0)
    assert 0.1 <= res.success_rate <= 0.5 and res.n_fresh <= res.n_in_sample < 20000
    assert res.fresh_unbiased and res.in_sample_biased_up
    assert res.mean_exact > 0 and res.in_sample_bias > 0.3 * res.mean_exact
    # the Monte Carlo in-sample bias agrees with its exact value: enumerate all 8^4 update groups
    correct = np.arange(8) < 2
    groups, prob = all_groups(res.theta, 4)
    w = ae.grpo_update_direction(res.theta, groups, correct[groups])
    exact = ae.exact_finite_difference_alignment(res.theta, res.theta + 0.5 * w, correct, 0.5)
    est, mixed = ae.in_sample_alignment(res.theta, res.theta + 0.5 * w, groups, correct[groups], 0.5)
    bias = (prob[mixed] * (est - exact)[mixed]).sum() / prob[mixed].sum()
    mean_exact = (prob[mixed] * exact[mixed]).sum() / prob[mixed].sum()
    assert abs(res.in_sample_bias - bias) < 4 * res.in_sample_bias_se
    assert abs(res.mean_exact - mean_exact) < 0.05 * mean_exact


@pytest.mark.parametrize("kwargs, match", [
    (dict(group_size=1), "group_size"), (dict(fresh_samples=1), "fresh_samples"), (dict(step_size=0.0), "step_size"),
    (dict(step_size=-1.0), "step_size"), (dict(n_correct=0), "n_correct"), (dict(n_correct=8), "n_correct"),
    (dict(n_responses=1), "n_responses"), (dict(n_repeats=1), "n_repeats"), (dict(seed=-1), "seed"),
    (dict(group_size=2.5), "group_size"), (dict(relative_tolerance=-0.1), "relative_tolerance")])
def test_bias_check_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ae.estimator_bias_check(**{**dict(n_repeats=100), **kwargs})


def test_estimator_bad_inputs():
    theta = np.zeros(4)
    ok = dict(samples=np.array([0, 1]), rewards=np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="samples"):
        ae.grpo_update_direction(theta, np.array([0]), np.array([1.0]))
    with pytest.raises(ValueError, match="samples"):
        ae.grpo_update_direction(theta, np.array([0, 4]), ok["rewards"])
    with pytest.raises(ValueError, match="samples"):
        ae.grpo_update_direction(theta, np.array([0.0, 1.0]), ok["rewards"])
    with pytest.raises(ValueError, match="rewards"):
        ae.grpo_update_direction(theta, ok["samples"], np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="theta"):
        ae.grpo_update_direction(np.array([np.nan, 0.0]), **ok)
    with pytest.raises(ValueError, match="step_size"):
        ae.in_sample_alignment(theta, theta, ok["samples"], ok["rewards"], 0.0)
    with pytest.raises(ValueError, match="theta_new"):
        ae.fresh_alignment(theta, np.zeros(3), ok["samples"], ok["rewards"], 0.1)
    with pytest.raises(ValueError, match="correct"):
        ae.exact_finite_difference_alignment(theta, theta, np.array([True] * 4), 0.1)
