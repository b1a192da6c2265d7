"""``runs.analysis.block_bootstrap_spearman``: the point estimate is scipy's pooled Spearman ρ, the interval covers
it, is wide for unrelated series and narrow for strongly related ones; bad input is refused."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from rlvr_dynamics.runs.analysis import block_bootstrap_spearman


def _groups(slope, seed=0, n_runs=5, n=60):
    rng = np.random.default_rng(seed)
    return [(np.arange(n) + rng.normal(0, 3, n), slope * np.arange(n) + rng.normal(0, 10, n)) for _ in range(n_runs)]


def test_point_estimate_is_pooled_spearman_and_interval_covers_it():
    g = _groups(0.5)
    rho, lo, hi = block_bootstrap_spearman(g, block=8, n_boot=500)
    ref = spearmanr(np.concatenate([x for x, _ in g]), np.concatenate([y for _, y in g])).statistic
    assert rho == pytest.approx(ref, abs=1e-12)
    assert lo <= rho <= hi


def test_unrelated_series_give_an_interval_around_zero_related_ones_a_high_one():
    rho0, lo0, hi0 = block_bootstrap_spearman(_groups(0.0, seed=1), n_boot=500)
    assert lo0 < 0 < hi0
    rho1, lo1, hi1 = block_bootstrap_spearman(_groups(2.0, seed=2), n_boot=500)
    assert lo1 > 0.8 and hi1 - lo1 < 0.2


def test_non_finite_pairs_are_dropped():
    g = _groups(1.0, seed=3)
    x, y = g[0]
    x, y = x.copy(), y.copy()
    x[5], y[9] = np.nan, np.inf
    rho, _, _ = block_bootstrap_spearman([(x, y)] + g[1:], n_boot=200)
    keep = np.isfinite(x) & np.isfinite(y)
    ref = spearmanr(np.concatenate([x[keep]] + [a for a, _ in g[1:]]),
                    np.concatenate([y[keep]] + [b for _, b in g[1:]])).statistic
    assert rho == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("kw, match", [({"groups": []}, "non-empty"), ({"block": 0}, "block"), ({"level": 1.0}, "level")])
def test_bad_input_is_refused(kw, match):
    args = {"groups": _groups(1.0), **kw}
    with pytest.raises(ValueError, match=match):
        block_bootstrap_spearman(args.pop("groups"), **args)
