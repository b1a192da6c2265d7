"""Tests for rlvr_dynamics.p2.operating_point (P2-C8): the realisable contextual bandit, its population REINFORCE
direction against finite differences, the operating points on their levels, and the collapse threshold."""
import numpy as np
import pytest

from rlvr_dynamics.p2 import gap, operating_point as opp, step_size as ss


@pytest.fixture(scope="module")
def bandit():
    return opp.realisable_contextual(n_instances=3, n_contexts=4, n_arms=6, dim=3, seed=1)


def test_realisable_correct_arm_is_the_argmax_and_sup_j_is_one(bandit):
    z = np.einsum("ixnd,id->ixn", bandit.features, bandit.target)
    assert np.array_equal(bandit.correct, z == z.max(-1, keepdims=True))
    assert np.all(bandit.correct.sum(-1) == 1)
    j, _ = opp.mean_success_and_gradient(bandit.features, bandit.correct, 200.0 * bandit.target)
    assert np.all(1 - j < 1e-6)                       # J(s theta*) -> 1: sup J = 1


def test_population_direction_is_the_gradient_of_mean_success(bandit):
    rng = np.random.default_rng(0)
    th = rng.normal(size=(3, 3))
    j, w = opp.mean_success_and_gradient(bandit.features, bandit.correct, th)
    h = 1e-6
    fd = np.zeros_like(th)
    for k in range(3):
        e = np.zeros(3); e[k] = h
        up = gap.success_rate(bandit.features, (th + e)[:, None, :], bandit.correct).mean(-1)
        dn = gap.success_rate(bandit.features, (th - e)[:, None, :], bandit.correct).mean(-1)
        fd[:, k] = (up - dn) / (2 * h)
    np.testing.assert_allclose(w, fd, atol=1e-8)      # grad mean_x J_x = mean_x J_x(1 - J_x)(g+ - g-)
    np.testing.assert_allclose(j, gap.success_rate(bandit.features, th[:, None, :], bandit.correct).mean(-1))


def test_operating_points_sit_on_their_levels(bandit):
    levels = [0.3, 0.1, 0.01]
    pts = opp.train_to_levels(bandit, levels, step_length=0.1)
    np.testing.assert_allclose(pts.failure_rate, np.broadcast_to(levels, (3, 3)), rtol=1e-9)
    assert pts.theta.shape == (3, 3, 3) and np.all(pts.train_steps > 0)
    with pytest.raises(ValueError, match="strictly decreasing"):
        opp.train_to_levels(bandit, [0.1, 0.3])
    with pytest.raises(ValueError, match="starting failure rate"):
        opp.train_to_levels(bandit, [0.99, 0.5])


def test_two_arm_bandit_never_collapses_and_zero_step_never_does():
    # one context, two arms: l = <theta, phi_1 - phi_2> and grad J = J(1-J)(phi_1 - phi_2), so every step raises l
    phi = np.array([[[[1.0, 0.5], [-0.5, 0.2]]]])
    two = opp.RealisableContextual(phi, np.array([[[True, False]]]), np.array([[1.0, 0.0]]))
    etas = np.geomspace(1e-2, 1e6, 9)
    col = opp.collapsed_from(two, np.zeros(9, int), np.zeros((9, 2)), etas, n_steps=50)
    assert not col.any()
    b = opp.realisable_contextual(2, 4, 6, 3, seed=1)
    assert not opp.collapsed_from(b, [0, 1], np.ones((2, 3)), [0.0, 0.0], n_steps=5).any()


def test_critical_steps_bracket_the_first_collapse():
    bandit = opp.realisable_contextual(3, 8, 10, 6, seed=0)
    pts = opp.train_to_levels(bandit, [0.03, 0.01])
    grid = np.geomspace(1, 1e5, 16)
    res = opp.critical_steps_at(bandit, pts, grid, n_steps=50, rel_tol=0.05)
    b = res.learning_rate
    ok = b.bracketed
    assert ok.any()
    inst = np.repeat(np.arange(3), 2).reshape(3, 2)[ok]
    th = pts.theta[ok]
    assert not opp.collapsed_from(bandit, inst, th, b.low[ok], 50).any()      # the stable end is stable
    assert opp.collapsed_from(bandit, inst, th, b.high[ok], 50).all()         # the collapsed end collapses
    assert np.all(b.relative_width[ok] <= 0.05)
    np.testing.assert_allclose(res.step_length[ok], b.estimate[ok] * res.direction_norm[ok])
    first = ss.first_collapse_bracket(grid, res.grid_collapsed)[1]
    assert np.all(b.high[ok] <= first[ok])


def test_slope_over_units_keeps_the_finite_points_with_min_points():
    x = np.array([0.1, 0.03, 0.01, 0.003, 0.001])
    est = np.vstack([2 * x, 3 * x ** 0.5, 2 * x])
    est[0, 0] = np.inf                                 # unit 0 keeps 4 points over 2 decades
    est[2, :2] = np.inf                                # unit 2 keeps 3 points: dropped
    rng = np.random.default_rng(0)
    out = ss.slope_over_units(x, est, rng, min_points=4, min_decades=1.0)
    np.testing.assert_allclose(out.slopes, [1.0, 0.5])
    assert out.n_dropped == 1
    assert np.isnan(ss.slope_over_units(x, est, rng).slopes).size == 1      # default: any non-finite unit dropped
    with pytest.raises(ValueError):
        ss.slope_over_units(np.tile(x, (3, 1)), est, rng)                    # per-unit x needs min_points
