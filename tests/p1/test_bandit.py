"""P1 softmax-bandit GRPO (P1 spec §7.2, §7.4 checks 1, 2, 6)."""
import numpy as np
import pytest

from rlvr_dynamics.p1 import lagged_recursion as lagged, fixed_point as fp, bandit_theory as bt, bandit_simulator as bsim

TABLE = [(0.1, 1, 0.45305, 0.27117), (0.2, 2, 0.4087, 0.528), (0.3, 4, 0.4158, 1.013), (0.5, 2, 0.7647, 0.248)]


def test_stiffness_table_and_finite_difference():
    pr, b = [r[0] for r in TABLE], [r[1] for r in TABLE]
    k = bt.analytic_stiffness(pr, b)
    for got, row in zip(k, TABLE):
        assert got == pytest.approx(row[3], abs=1e-5 if row[3] == 0.27117 else 1e-3)
    assert np.allclose(bt.finite_difference_stiffness(pr, b), k, rtol=1e-7)
    assert bt.stale_normalisation_share(0.1, 1.0) == pytest.approx(0.086, abs=0.001)   # check 6 (≈ 9 %)
    # eps outside: also matches its own finite difference
    assert bt.analytic_stiffness(0.2, 2.0, 1e-2, "outside") == pytest.approx(
        bt.finite_difference_stiffness(0.2, 2.0, 1e-2, "outside"), rel=1e-7)


def test_measured_stiffness_equals_analytic():
    pr, b = np.array([0.1, 0.2, 0.3, 0.5]), np.array([1.0, 2.0, 4.0, 2.0])
    m = bsim.measure_stiffness(pr, b, n_steps=2000)
    assert np.allclose(m.stiffness, bt.analytic_stiffness(pr, b), rtol=2e-4)
    assert np.allclose(m.fixed_point, fp.mroueh_fixed_point(pr, b), atol=1e-10)


def test_exact_bandit_plateau_is_mroueh_fixed_point():
    pr = np.array([0.1, 0.2, 0.3, 0.5])
    b = np.array([1.0, 2.0, 4.0, 2.0])
    run = bsim.simulate(3000, learning_rate=0.05, momentum=0.9, beta=b, lag=1, p_ref=pr[:, None])
    assert np.allclose(run.reward[:, -1], fp.mroueh_fixed_point(pr, b), atol=1e-12)


def test_vectorised_equals_python_loop_bitwise_in_exact_mode():
    for lm, kref in (("delay", 0), ("delay", 7), ("periodic", 5), ("surrogate", 4)):
        run = bsim.simulate(400, learning_rate=0.2, momentum=0.9, beta=1.0, lag=kref, p_ref=0.1,
                          lag_model=lm)
        ref = bsim.simulate_loop(400, learning_rate=0.2, momentum=0.9, beta=1.0, lag=kref, p_ref=0.1,
                               lag_model=lm)
        assert np.max(np.abs(run.reward[0] - ref)) < 1e-14


def test_small_displacement_follows_the_exact_delay_recursion():
    # linear regime: logit displacement obeys e_{k+1} = (1+μ)e_k − μ e_{k−1} − ηK e_{k−d}
    k_z = bt.analytic_stiffness(0.1, 1.0)
    z_star = fp.logit(fp.mroueh_fixed_point(0.1, 1.0))
    eta = 2e-3 / k_z
    for d in (0, 3, 30):
        run = bsim.simulate(1500, learning_rate=eta, momentum=0.9, lag=d, p_ref=0.1,
                          z0=z_star + 1e-5, record_logits=True)
        e = (run.logits[0, 0] - z_star) / 1e-5
        ref = lagged.simulate(0.9, 2e-3, d, 1500)[0, 0]
        assert np.max(np.abs(e - ref)) < 2e-3


def test_model_b_threshold_mu0_is_two():
    # periodic refresh, μ = 0: stable iff ηK K_ref < 2 (small displacement)
    k_z = bt.analytic_stiffness(0.1, 1.0)
    z_star = fp.logit(fp.mroueh_fixed_point(0.1, 1.0))
    kref = 10
    etas = np.array([1.8, 2.2]) / (k_z * kref)
    run = bsim.simulate(2000, learning_rate=etas, lag=kref, p_ref=0.1, lag_model="periodic",
                      z0=z_star + 1e-6, record_logits=True)
    e = np.abs(run.logits[:, 0] - z_star)
    assert e[0, -1] < 1e-6 and e[1, -1] > 1e-5


def test_finite_g_mean_and_group_std_match_finite_g_theory():
    gs = np.array([4] * 300 + [16] * 300)
    run = bsim.simulate(2500, learning_rate=0.05, momentum=0.9, lag=1, p_ref=0.1, group_size=gs,
                      seed=3)
    late = run.reward[:, -1000:]
    for g, sl in ((4, slice(0, 300)), (16, slice(300, 600))):
        mean = late[sl].mean()
        se = late[sl].mean(1).std(ddof=1) / np.sqrt(300)
        assert abs(mean - bt.finite_group_fixed_point(0.1, 1.0, g)) < 4 * se + 2e-3
        # within-group std: E over the stationary distribution of p of E[std_G | p] (concave in p)
        diff = run.group_std[sl, -999:] - bt.expected_group_std(run.reward[sl, -1001:-2], g)
        assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(diff.size)
        pred = bt.expected_group_std(late[sl], g).mean()
        assert pred < np.sqrt(mean * (1 - mean))
    # the unbiased (leave-one-out) advantage without std normalisation has a G-free mean drive
    assert bt.group_drift_factor(0.4, 4, normalisation="none", unbiased_std=True) == pytest.approx(1.0)
    assert bt.group_drift_factor(0.4, 4, normalisation="none") == pytest.approx(0.75)
    assert bt.group_drift_factor(0.4, 4) < bt.group_drift_factor(0.4, 16) < 1.0
    assert bt.finite_group_fixed_point(0.1, 1.0, 4000) == pytest.approx(fp.mroueh_fixed_point(0.1, 1.0), abs=2e-4)


def test_multi_prompt_and_shapes():
    run = bsim.simulate(50, learning_rate=np.array([0.1, 0.2, 0.3]), p_ref=[0.1, 0.3], group_size=8, seed=0,
                      record_every=5, record_logits=True)
    assert run.reward.shape == (3, 11) and run.logits.shape == (3, 2, 11)
    assert run.reward[0, 0] == pytest.approx(0.2)
    assert np.isnan(run.sampled_reward[0, 0]) and np.all(np.isfinite(run.sampled_reward[:, 1:]))
    # same seed, same result
    again = bsim.simulate(50, learning_rate=np.array([0.1, 0.2, 0.3]), p_ref=[0.1, 0.3], group_size=8, seed=0,
                        record_every=5)
    assert np.array_equal(run.reward, again.reward)


@pytest.mark.parametrize("kwargs,name", [
    (dict(learning_rate=0.0), "learning_rate"), (dict(momentum=1.0), "momentum"),
    (dict(group_size=1), "group_size"), (dict(lag=-1), "lag"),
    (dict(lag=0, lag_model="periodic"), "lag"), (dict(p_ref=1.0), "p_ref"),
    (dict(learning_rate=np.nan), "learning_rate"), (dict(lag_model="x"), "lag_model"),
    (dict(learning_rate=np.ones(3), momentum=np.zeros(2)), "broadcast"), (dict(beta=-1.0), "beta"),
    (dict(lag=1.5), "lag"),
])
def test_invalid_inputs(kwargs, name):
    args = dict(learning_rate=0.1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        bsim.simulate(10, **args)
