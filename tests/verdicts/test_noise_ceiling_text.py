"""P1-C8's criterion states the noise ceiling each setting's code computes (book/claims.yml, text of 2026-12-04):
the formulas it names are checked here against the functions it names, on a curve where the three differ."""
from __future__ import annotations

import numpy as np
import pytest

from rlvr_dynamics import runs as R
from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts.grpo_rows import panel_noise_ceiling

Y = np.array([0.10, 0.16, 0.15, 0.24, 0.31, 0.30, 0.41, 0.45, 0.47, 0.52, 0.50, 0.55])


def test_the_statistic_names_each_settings_formula_and_function():
    text = claims.criterion("P1-C8")["criterion"]["statistic"]
    for words in ("exact bandit", "sigma^2 = mean((r_{t+1} - r_t)^2)/2", "population variance",
                  "sigma^2 = std(r_{t+1} - r_t)^2/2", "sample variance", "rlvr_dynamics.runs.noise_ceiling",
                  "mean squared binomial SE", "rlvr_dynamics.verdicts.grpo_rows.panel_noise_ceiling"):
        assert words in text


def test_the_grpo_training_curve_formula_is_runs_noise_ceiling():
    d = np.diff(Y)
    assert R.noise_ceiling(Y) == pytest.approx(1 - np.std(d, ddof=1) ** 2 / 2 / np.var(Y, ddof=1))
    # not the exact bandit's formula (uncentred mean square over the population variance) on this curve
    assert R.noise_ceiling(Y) != pytest.approx(1 - np.mean(d ** 2) / 2 / np.var(Y), rel=1e-3)


@pytest.mark.parametrize("se, which", [(np.full(Y.size, 0.001), "difference"), (np.full(Y.size, 0.2), "binomial")])
def test_the_panel_formula_takes_the_larger_noise(se, which):
    ceiling, var_b, var_d = panel_noise_ceiling(Y, se)
    assert var_b == pytest.approx(np.mean(se ** 2))
    assert var_d == pytest.approx(np.std(np.diff(Y), ddof=1) ** 2 / 2)
    assert ceiling == pytest.approx(1 - (var_d if which == "difference" else var_b) / np.var(Y, ddof=1))
