"""Tests for rlvr_dynamics.gap_bandits: the vectorised sweep against per-run references and the bound."""
import numpy as np
import pytest

from rlvr_dynamics.p2 import directions as dirs, gap, gap_bandits as gb


def test_many_armed_defaults():
    b = gb.LogLinearBandit.many_armed(seed=0)
    assert b.features.shape == (1, 100, 10) and b.correct.sum() == 10
    assert b.success_rate(np.zeros(10))[0] == pytest.approx(0.1)
    assert b.features.std() == pytest.approx(3 / np.sqrt(10), rel=0.05)


def test_expected_sweep_matches_a_hand_loop():
    b = gb.LogLinearBandit.contextual(n_contexts=3, n_arms=12, dim=4, n_correct=3, seed=2)
    res = gb.simulate(b, ["reinforce", "grpo"], [0.5, 2.0], group_size=None, n_steps=30)
    for a_i, alg in enumerate(["reinforce", "grpo"]):
        for e_i, eta in enumerate([0.5, 2.0]):
            th = np.zeros(4)
            m = 0.0
            for k in range(30):
                w = np.mean([dirs.expected_direction(b.features[x], th, b.correct[x], alg) for x in range(3)], 0)
                dmu = [gap.gap_alignment(w, gap.gradient_gap(b.features[x], th, b.correct[x]).gap) for x in range(3)]
                m = m + eta * np.maximum(dmu, 0)
                th = th + eta * w
            np.testing.assert_allclose(res.success_rate[a_i, e_i, 0, -1], b.success_rate(th), atol=1e-12)
            np.testing.assert_allclose(res.cumulative_alignment[a_i, e_i, 0, -1], m, atol=1e-12)


def test_sampled_sweep_is_seeded_and_bound_holds_under_theorem1_steps():
    b = gb.LogLinearBandit.many_armed(n_arms=30, dim=5, n_correct=3, seed=1)
    kw = dict(n_steps=200, group_size=8, n_seeds=3, seed=7)
    r1 = gb.simulate(b, dirs.ALGORITHMS, [0.5, 1.0], step_rule="theorem1", **kw)
    r2 = gb.simulate(b, dirs.ALGORITHMS, [0.5, 1.0], step_rule="theorem1", **kw)
    np.testing.assert_array_equal(r1.success_rate, r2.success_rate)
    assert r1.step_condition_always[..., -1, :].all()
    assert np.all(r1.success_rate >= r1.bound() - 1e-12)
    # different seeds in the seed axis really differ
    assert not np.allclose(r1.success_rate[0, 0, 0], r1.success_rate[0, 0, 1])


def test_length_normalisation_changes_only_grpo():
    lens = np.random.default_rng(0).integers(1, 6, size=30).astype(float)
    b = gb.LogLinearBandit.many_armed(n_arms=30, dim=5, n_correct=3, seed=1, lengths=lens)
    res = gb.simulate(b, ["grpo", "grpo_no_length_norm"], [1.0], group_size=None, n_steps=5)
    th = np.zeros(5)
    w = dirs.expected_direction(b.features[0], th, b.correct[0], "grpo", lengths=lens)
    np.testing.assert_allclose(res.alignment[0, 0, 0, 0, 0], gap.gap_alignment(w, b.gradient_gap(th).gap[0]),
                               atol=1e-14)
    assert not np.allclose(res.success_rate[0], res.success_rate[1])


def test_collapse_fraction():
    # the one collapse rule: final < 0.5 x initial (initial 0.2 -> threshold 0.1)
    np.testing.assert_allclose(gb.collapse_fraction([[0.0, 0.5, 0.001, 0.1]], 0.2), [0.5])
    np.testing.assert_allclose(gb.collapse_fraction([[0.0, 0.5, 0.001, 0.1]], 0.2, fraction=0.004), [0.25])


@pytest.mark.parametrize("call, name", [
    (lambda: gb.simulate(gb.LogLinearBandit.many_armed(), ["reinforce"], [-1.0], n_steps=2), "step_sizes"),
    (lambda: gb.simulate(gb.LogLinearBandit.many_armed(), ["ppo"], [1.0], n_steps=2), "algorithm"),
    (lambda: gb.simulate(gb.LogLinearBandit.many_armed(), ["grpo"], [1.0], n_steps=0), "n_steps"),
    (lambda: gb.simulate(gb.LogLinearBandit.many_armed(), ["grpo"], [1.0], n_steps=2, step_rule="x"), "step_rule"),
    (lambda: gb.simulate(gb.LogLinearBandit.many_armed(), ["grpo"], [1.0], n_steps=2, schedule=[1.0]), "schedule"),
    (lambda: gb.LogLinearBandit.many_armed(n_correct=100), "n_correct"),
    (lambda: gb.LogLinearBandit(np.zeros((1, 0, 3)), np.zeros((1, 0), bool)), "empty"),
    (lambda: gb.collapse_fraction([1.5], 0.2), "final_success"),
    (lambda: gb.collapse_fraction([0.5], 0.2, fraction=1.0), "fraction"),
])
def test_invalid_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_step_condition_per_step_and_running_and_agree():
    res = gb.simulate(gb.LogLinearBandit.many_armed(seed=0), ["reinforce"], [0.005, 3.0], group_size=None, n_steps=30)
    now, always = res.step_condition[..., :-1, :], res.step_condition_always[..., 1:, :]
    np.testing.assert_array_equal(always, np.logical_and.accumulate(now, axis=-2))
    assert now[0, 0].all() and not now[0, 1].all() and not res.step_condition[..., -1, :].any()


def test_few_arm_softmax_is_the_masked_one_bit_for_bit():
    """Exponentiating only the kept arms (and writing the zeros exp(−∞) gives) changes no bit of lse or p, with one
    context or several, finite or huge logits; the shortcut is taken only for equal counts of at most a quarter."""
    rng = np.random.default_rng(5)
    for x_n, scale in ((1, 1.0), (3, 40.0), (2, 1e3)):
        keep = np.zeros((x_n, 40), bool)
        for x in range(x_n):
            keep[x, rng.choice(40, 7, replace=False)] = True
        columns = gb._few_arm_columns(keep)
        assert columns is not None and columns.size == 7 * x_n
        z = rng.normal(size=(50, x_n, 40)) * scale
        keep_b = np.broadcast_to(keep, z.shape)
        lse_a, p_a = gb._masked_softmax(z, keep_b, None)
        lse_b, p_b = gb._masked_softmax(z, keep_b, columns)
        assert np.array_equal(lse_a, lse_b) and np.array_equal(p_a, p_b)
        assert np.all(p_b[~keep_b] == 0.0)
    uneven = np.zeros((2, 40), bool)
    uneven[0, :3], uneven[1, :4] = True, True
    assert gb._few_arm_columns(uneven) is None
    assert gb._few_arm_columns(np.arange(40)[None] < 11) is None       # more than a quarter of the arms
