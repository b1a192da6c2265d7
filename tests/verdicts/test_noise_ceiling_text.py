"""P1-C8's criterion states the noise ceiling each setting's code computes (book/claims.yml, text of 2026-12-04):
the formulas it names are checked here against the functions it names, on a curve where the three differ."""
from __future__ import annotations

import numpy as np
import pytest

from rlvr_dynamics import runs as R
from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts.grpo_rows import panel_noise_ceiling

Y = np.array([0.10, 0.16, 0.15, 0.24, 0.31, 0.30, 0.41, 0.45, 0.47, 0.52, 0.50, 0.55])


def test_the_statistic_states_one_formula_and_the_functions_that_compute_it():
    text = claims.criterion("P1-C8")["criterion"]["statistic"]
    for words in ("one formula in every setting", "sigma^2 = std(r_{t+1} - r_t)^2/2", "sample variance",
                  "rlvr_dynamics.runs.noise_ceiling", "mean squared binomial SE",
                  "rlvr_dynamics.verdicts.grpo_rows.panel_noise_ceiling"):
        assert words in text
    assert "population variance" not in text and "mean((r_{t+1} - r_t)^2)/2" not in text


def test_the_exact_bandit_notebook_uses_the_one_formula():
    """p1_three_phase computes its curves' ceilings with runs.noise_ceiling, not a formula of its own."""
    import nbformat

    from rlvr_dynamics.paths import REPO_ROOT

    nb = nbformat.read(REPO_ROOT / "notebooks" / "p1_three_phase.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "from rlvr_dynamics.runs import noise_ceiling" in code and "def noise_ceiling" not in code


def test_the_panel_formula_without_a_larger_binomial_se_is_runs_noise_ceiling():
    ceiling, _, _ = panel_noise_ceiling(Y, np.full(Y.size, 1e-6))
    assert ceiling == pytest.approx(R.noise_ceiling(Y))


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
