"""P1, "Predictable GRPO": the damped-oscillator model of GRPO's mean reward and everything that tests it.

Modules (one concept each; notebooks import them with the aliases in brackets):

- :mod:`.oscillator` [``osc``]: M, C, K from learning rate, momentum, refresh interval and curvature; regimes,
  thresholds, closed-form trajectories, coefficient fits (spec §3.3–3.6).
- :mod:`.sde` [``sde``]: stationary variances and the vectorised SDE ensemble (spec §3.8).
- :mod:`.lagged_recursion` [``lagged``]: the exact discrete heavy-ball recursion with a stale force (spec §3.2, §3.5).
- :mod:`.fixed_point` [``fp``]: Mroueh's fixed point p* of std-normalised GRPO (spec §3.1, §7.2).
- :mod:`.bandit_theory` [``bt``]: the softmax bandit's force, stiffness and exact finite-G mean field (spec §7.2).
- :mod:`.bandit_simulator` [``bsim``]: the vectorised softmax-bandit GRPO simulator and stiffness measurement.
- :mod:`.laws` [``laws``]: the three-phase and single-exponential reward laws, fits and comparison (spec §3.6–3.7).

The most used names are promoted here (``p1.coefficients``, ``p1.simulate_bandit``, ``p1.compare_laws`` …).
"""
from . import bandit_simulator, bandit_theory, fixed_point, lagged_recursion, laws, oscillator, sde
from .bandit_simulator import BanditRun, measure_stiffness
from .bandit_simulator import simulate as simulate_bandit
from .bandit_theory import analytic_stiffness, expected_group_std, finite_group_fixed_point
from .fixed_point import mroueh_fixed_point
from .laws import FitResult, compare_laws, fit_single_exponential, fit_three_phase, single_exponential, three_phase
from .oscillator import (Coefficients, coefficients, critical_learning_rate, critical_refresh_interval,
                         damping_ratio, regime)
from .sde import sde_ensemble, stationary_variance

__all__ = [
    "oscillator", "sde", "lagged_recursion", "fixed_point", "bandit_theory", "bandit_simulator", "laws",
    "Coefficients", "coefficients", "damping_ratio", "regime", "critical_refresh_interval", "critical_learning_rate",
    "sde_ensemble", "stationary_variance", "mroueh_fixed_point", "analytic_stiffness", "expected_group_std",
    "finite_group_fixed_point", "BanditRun", "simulate_bandit", "measure_stiffness", "FitResult", "three_phase",
    "single_exponential", "fit_three_phase", "fit_single_exponential", "compare_laws",
]
