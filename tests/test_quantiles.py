"""The scipy-free quantiles of ``rlvr_dynamics._quantiles`` against scipy's, and their argument checks."""
from __future__ import annotations

import pytest
from scipy.special import ndtri, stdtrit

from rlvr_dynamics._quantiles import normal_quantile, t_quantile


@pytest.mark.parametrize("p", [1e-6, 0.025, 0.1, 0.5, 0.9, 0.975, 1 - 1e-9])
def test_normal_quantile_matches_scipy(p):
    assert normal_quantile(p) == pytest.approx(float(ndtri(p)), rel=1e-12, abs=1e-12)


def test_t_quantile_within_1e5_of_scipy_for_every_df_to_400():
    for df in range(1, 401):
        for p in (0.9, 0.975, 0.995, 0.025):
            assert t_quantile(p, df) == pytest.approx(float(stdtrit(df, p)), rel=1e-5), (df, p)
    assert t_quantile(0.5, 7) == 0.0


@pytest.mark.parametrize("p,df", [(0.0, 3), (1.0, 3), (0.5, 0.5), (float("nan"), 3)])
def test_bad_arguments_name_themselves(p, df):
    with pytest.raises(ValueError, match="p must|df must"):
        t_quantile(p, df)
