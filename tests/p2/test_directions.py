"""Tests for rlvr_dynamics.directions: closed forms of §3.7, exact finite-G expectations, sampled -> expected."""
import numpy as np
import pytest
from scipy.stats import binom

from rlvr_dynamics.p2 import directions as dirs, gap


def problem(seed=0, n=10, d=3):
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=(n, d))
    theta = 0.5 * rng.normal(size=d)
    correct = np.zeros(n, bool)
    correct[:4] = True
    lengths = rng.integers(1, 9, size=n).astype(float)
    return phi, theta, correct, lengths


def test_grpo_group_advantages_closed_form():
    g = 8
    for k in range(1, g):
        r = np.r_[np.ones(k), np.zeros(g - k)]
        a = dirs.group_advantages(r, "grpo")
        p = k / g
        assert a[0] == pytest.approx(np.sqrt((1 - p) / p), abs=1e-14)
        assert a[-1] == pytest.approx(-np.sqrt(p / (1 - p)), abs=1e-14)
    a = dirs.group_advantages(np.r_[np.ones(7), 0.0], "grpo")
    assert a[-1] == pytest.approx(-2.6458, abs=5e-5) and a[-1] == pytest.approx(-np.sqrt(7), abs=1e-14)
    # unbiased std scales the advantages by sqrt((G-1)/G)
    au = dirs.group_advantages(np.r_[np.ones(7), 0.0], "grpo", std="unbiased")
    assert au[-1] == pytest.approx(-np.sqrt(7) * np.sqrt(7 / 8), abs=1e-14)
    np.testing.assert_array_equal(dirs.group_advantages(np.ones(8), "grpo"), 0.0)
    np.testing.assert_allclose(dirs.group_advantages([1, 0, 0, 1], "dr_grpo"), [0.5, -0.5, -0.5, 0.5])
    np.testing.assert_allclose(dirs.group_advantages([1, 0, 0, 1], "reinforce"), [1, 0, 0, 1])


def test_population_directions_match_spec_closed_forms():
    phi, theta, correct, lengths = problem()
    gg = gap.gradient_gap(phi, theta, correct)
    j = gg.success_rate
    rf = dirs.expected_direction(phi, theta, correct, "reinforce")
    np.testing.assert_allclose(rf, j * (1 - j) * gg.gap, atol=1e-15)
    np.testing.assert_allclose(rf, gap.policy_gradient(phi, theta, correct), atol=1e-15)
    nl = dirs.expected_direction(phi, theta, correct, "grpo_no_length_norm")
    np.testing.assert_allclose(nl, np.sqrt(j * (1 - j)) * gg.gap, atol=1e-15)
    dr = dirs.expected_direction(phi, theta, correct, "dr_grpo", max_length=16.0)
    np.testing.assert_allclose(dr, j * (1 - j) * gg.gap / 16.0, atol=1e-15)
    # GRPO with 1/|o|: sqrt(J(1-J)) (a+ - a-), a± = E_pi±[s/|o|], checked against explicit scores
    ln = dirs.expected_direction(phi, theta, correct, "grpo", lengths=lengths)
    s = gap.score_matrix(phi, theta) / lengths[:, None]
    p = gap.policy_probs(phi, theta)
    a_p = p[correct] @ s[correct] / j
    a_m = p[~correct] @ s[~correct] / (1 - j)
    np.testing.assert_allclose(ln, np.sqrt(j * (1 - j)) * (a_p - a_m), atol=1e-15)


def test_finite_group_coefficients():
    j = 0.3
    assert dirs.expected_coefficient(j, "reinforce", 4) == pytest.approx(0.21)
    assert dirs.expected_coefficient(j, "dr_grpo", 4) == pytest.approx(0.75 * 0.21)
    k = np.arange(9)
    p = k / 8
    ref = np.sum(binom.pmf(k, 8, j) * np.sqrt(p * (1 - p)))
    assert dirs.expected_coefficient(j, "grpo", 8) == pytest.approx(ref, abs=1e-15)
    big = dirs.expected_coefficient(j, "grpo", 4000)
    assert big == pytest.approx(np.sqrt(j * (1 - j)), rel=1e-3)


@pytest.mark.parametrize("algorithm", dirs.ALGORITHMS)
def test_sampled_directions_converge_to_expected(algorithm):
    phi, theta, correct, lengths = problem(2)
    rng = np.random.default_rng(5)
    reps = 40_000
    exact = dirs.expected_direction(phi, theta, correct, algorithm, group_size=8, lengths=lengths)
    thetas = np.broadcast_to(theta, (reps, 3))
    w, arms, rewards = dirs.sampled_direction(phi, thetas, correct, algorithm, 8, rng, lengths=lengths)
    assert arms.shape == (reps, 8) and rewards.shape == (reps, 8)
    mean, se = w.mean(0), w.std(0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(mean - exact) < 4.5 * se + 1e-12)


def test_sampled_error_shrinks_with_group_size():
    phi, theta, correct, _ = problem(3)
    exact_inf = dirs.expected_direction(phi, theta, correct, "grpo_no_length_norm")
    errs = []
    for g in (4, 32, 256):
        w, _, _ = dirs.sampled_direction(phi, np.broadcast_to(theta, (400, 3)), correct, "grpo_no_length_norm", g,
                                      np.random.default_rng(g))
        errs.append(np.sqrt(np.mean(np.sum((w - exact_inf) ** 2, -1))))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.35 * errs[0]


def test_direction_from_samples_uses_lengths():
    s = np.array([[[1.0, 0.0], [0.0, 2.0]]])
    r = np.array([[1.0, 0.0]])
    w = dirs.direction_from_samples(s, r, "grpo", lengths=np.array([[2.0, 4.0]]))
    # advantages +1, -1 ; w = (1/2)(s0/2 - s1/4)
    np.testing.assert_allclose(w, [[0.25, -0.25]])
    w2 = dirs.direction_from_samples(s, r, "dr_grpo", max_length=4.0)
    np.testing.assert_allclose(w2, [[0.5 * 0.5 / 4, -0.5 * 2 * 0.5 / 4]])


@pytest.mark.parametrize("call, name", [
    (lambda: dirs.group_advantages([1.5, 0.0], "grpo"), "rewards"),
    (lambda: dirs.group_advantages([1.0, 0.0], "ppo"), "algorithm"),
    (lambda: dirs.group_advantages([1.0, 0.0], "grpo", std="sample"), "std"),
    (lambda: dirs.group_advantages([1.0, 0.0], "grpo", std_eps=-1.0), "std_eps"),
    (lambda: dirs.expected_coefficient(-0.1, "grpo"), "success_rate"),
    (lambda: dirs.expected_coefficient(0.5, "grpo", 1), "group_size"),
    (lambda: dirs.expected_direction(np.eye(3), np.zeros(3), [True, False, False], "grpo", lengths=[1, 2]), "lengths"),
    (lambda: dirs.expected_direction(np.eye(3), np.zeros(3), [True, False, False], "grpo", lengths=[1, 0, 2]), "lengths"),
    (lambda: dirs.direction_from_samples(np.zeros((3, 2)), np.zeros(2), "grpo"), "scores"),
    (lambda: dirs.sample_responses([0.5, 0.5], 4, 0), "rng"),
])
def test_invalid_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()
