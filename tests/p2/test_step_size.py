"""Tests for rlvr_dynamics.step_size: catastrophic instance (§3.5 numbers), CGF root, empirical threshold, fits."""
import numpy as np
import pytest

from rlvr_dynamics.p2 import gap, step_size as ss


def test_catastrophic_instance_reference_values():
    run = ss.curved_instance([0.5, 0.9, 0.99, 1.01, 1.1, 1.5], 400)
    np.testing.assert_allclose(run.success_rate[:3, -1], [0.622, 0.711, 0.729], atol=5e-4)
    assert run.success_rate[3, 100] == pytest.approx(2.6e-6, rel=0.02)
    for i in range(3):                                   # below threshold: strictly rising
        assert np.all(np.diff(run.success_rate[i]) > 0)
    for i in range(3, 6):                                # above: log-odds strictly falling until -inf
        lo = run.log_odds[i]
        fin = lo[np.isfinite(lo)]
        assert np.all(np.diff(fin) < 0)
        assert run.success_rate[i, -1] < 1e-6
    # the threshold is exactly 2 / curvature = 1
    assert ss.curved_instance_threshold(0.0) == 1.0
    # alignment of w = grad f with the gap grad f is |grad f|^2 > 0 at every step (perfectly aligned)
    assert np.all(run.alignment > 0)


def test_catastrophic_instance_gradient_norm_sum():
    run = ss.curved_instance([1.2], 400)
    assert (1.2 * run.grad_norm_sq).sum() == pytest.approx(0.52, abs=5e-3)
    assert np.all(run.local_threshold < 1.2)


def test_adaptive_step_converges_where_fixed_step_stalls():
    kw = dict(n_steps=6000, curvature_growth=0.05, noise=1e-3, seed=0)
    fixed = ss.curved_instance([1.0], **kw)
    adapt = ss.curved_instance([1.0], adaptive=0.5, **kw)
    assert 1 - fixed.success_rate[0, -1000:].mean() > 0.3
    assert 1 - adapt.success_rate[0, -1] < 0.25
    assert np.all(adapt.step_sizes <= 1.0 + 1e-15)


def test_critical_step_size_is_a_root_and_inf_without_trap():
    phi = np.array([[1.0, 0.0], [-1.0, 0.0], [1.5, -1.0]])
    correct = np.array([True, False, False])
    theta = np.array([-1.0, 1.0])
    g = gap.gradient_gap(phi, theta, correct).gap
    w = g / np.linalg.norm(g)
    eta = ss.critical_step_size(phi, theta, correct, w)
    assert np.isfinite(eta) and eta > 0
    assert abs(gap.one_step_log_odds_change(phi, theta, correct, w, eta)) < 1e-10
    assert gap.one_step_log_odds_change(phi, theta, correct, w, 0.5 * eta) > 0
    # two arms, correct arm furthest along w: no root
    assert ss.critical_step_size(np.array([[1.0], [0.0]]), np.zeros(1), [True, False], np.ones(1)) == np.inf
    # a descent direction has threshold 0
    assert ss.critical_step_size(phi, theta, correct, -w) == 0.0


def test_empirical_critical_step_and_power_law():
    eta = np.array([1.0, 2.0, 4.0, 8.0])
    col = np.array([[False, False, True, True], [False, False, False, False], [True, True, True, True]])
    out = ss.empirical_critical_step_size(eta, col)
    assert out[0] == pytest.approx(np.sqrt(2.0 * 4.0)) and np.isinf(out[1]) and np.isnan(out[2])  # geometric midpoint of [2, 4]
    assert ss.is_collapsed(0.09, 0.2) and not ss.is_collapsed(0.11, 0.2) and ss.is_collapsed(0.001, 0.2, fraction=0.01)
    x = np.array([4.0, 8, 16, 32])
    fit = ss.fit_power_law(x, 3.0 / x)
    assert fit.exponent == pytest.approx(-1.0, abs=1e-12) and fit.prefactor == pytest.approx(3.0)
    assert fit.r_squared == pytest.approx(1.0)
    np.testing.assert_allclose(ss.token_level_step_bound([4.0, 8.0], 0.5, 2.0, 1.0, 1.0), [0.125, 0.0625])


@pytest.mark.parametrize("call, name", [
    (lambda: ss.curved_instance([-1.0]), "step_sizes"),
    (lambda: ss.curved_instance([1.0], algorithm="ppo"), "algorithm"),
    (lambda: ss.curved_instance([1.0], adaptive=3.0), "adaptive"),
    (lambda: ss.empirical_critical_step_size([2.0, 1.0], [False, True]), "step_sizes"),
    (lambda: ss.fit_power_law([1.0, 2.0], [1.0, 2.0]), "x and y"),
    (lambda: ss.fit_power_law([1.0, 2.0, 3.0], [1.0, -2.0, 1.0]), "y"),
    (lambda: ss.token_level_step_bound(4.0, 1.5, 1.0), "success_rate"),
])
def test_invalid_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_bisection_locates_a_known_threshold_to_tolerance():
    thresholds = np.array([[0.3, 2.0], [7.0, 55.0]])
    calls = []

    def collapsed(steps, idx):
        calls.append(steps.size)
        return steps > thresholds.ravel()[idx]

    b = ss.bisect_critical_step_size(collapsed, np.full((2, 2), 0.1), 100.0, rel_tol=0.02)
    assert b.bracketed.all() and b.estimate.shape == (2, 2)
    assert np.all(b.relative_width <= 0.02)
    assert np.all((b.low <= thresholds) & (thresholds < b.high))           # the bracket holds the true threshold
    np.testing.assert_allclose(b.estimate, thresholds, rtol=0.02)
    assert b.n_calls == len(calls) and calls[0] == 8                       # endpoints of all 4 brackets in one call
    assert max(calls[1:]) == 4                                             # one vectorised call per iteration


def test_bisection_unbracketed_and_nan_conventions_match_the_grid_estimate():
    b = ss.bisect_critical_step_size(lambda e, i: e > 5.0, [1.0, 6.0, 0.5], [4.0, 9.0, 20.0])
    assert np.isinf(b.estimate[0]) and np.isnan(b.estimate[1]) and np.isfinite(b.estimate[2])
    assert b.bracketed.tolist() == [False, False, True]
    eta = np.array([1.0, 2.0, 4.0, 8.0])
    col = np.array([[False, False, True, True], [False, False, False, False], [True, True, True, True]])
    low, high = ss.first_collapse_bracket(eta, col)
    assert low[0] == 2.0 and high[0] == 4.0 and np.isinf(high[1]) and np.isnan(low[2])
    b = ss.bisect_critical_step_size(lambda e, i: e > 3.0, low, high, rel_tol=1e-6, check_bracket=False)
    assert b.estimate[0] == pytest.approx(3.0, rel=1e-6) and np.isinf(b.estimate[1]) and np.isnan(b.estimate[2])
    # the grid estimate is the geometric midpoint of the same bracket
    assert ss.empirical_critical_step_size(eta, col)[0] == pytest.approx(np.sqrt(low[0] * high[0]))


def test_bisection_of_the_curved_instance_finds_eta_star_one():
    def collapsed(steps, idx):
        run = ss.curved_instance(steps, 2000)
        return ss.is_collapsed(run.success_rate[:, -1], run.success_rate[:, 0])
    b = ss.bisect_critical_step_size(collapsed, 0.5, 2.0, rel_tol=1e-3)
    assert b.low < b.high and b.relative_width <= 1e-3
    assert b.estimate == pytest.approx(1.0, abs=2e-3)           # multi-step threshold -> 1 as the horizon grows


@pytest.mark.parametrize("call, name", [
    (lambda: ss.bisect_critical_step_size(lambda e, i: e > 1, 2.0, 1.0), "low and high"),
    (lambda: ss.bisect_critical_step_size(lambda e, i: e > 1, 0.5, 2.0, rel_tol=0.0), "rel_tol"),
    (lambda: ss.bisect_critical_step_size(lambda e, i: [True], [0.5, 0.6], 2.0), "one boolean"),
    (lambda: ss.first_collapse_bracket([1.0, 1.0], [False, True]), "step_sizes"),
])
def test_bisection_invalid_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_curved_instance_schedule_scales_the_step():
    run = ss.curved_instance([1.5], 50, schedule=np.full(50, 0.5))
    np.testing.assert_allclose(run.step_sizes, 0.75)
    assert run.success_rate[0, -1] > run.success_rate[0, 0]          # 0.75 < eta* = 1: rises
    with pytest.raises(ValueError, match="schedule"):
        ss.curved_instance([1.0], 10, schedule=np.ones(3))
