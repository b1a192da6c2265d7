"""P2, "Gradient gap and step size thresholds": the gap, its alignment with each update, and the safe step size.

Modules (one concept each; notebook aliases in brackets):

- :mod:`.gap` [``gap``]: the gradient gap, alignment, cumulative alignment M, the one-step identity and Theorem 1's
  step condition (spec §2–§4).
- :mod:`.directions` [``dirs``]: update directions of REINFORCE, GRPO, Dr. GRPO … in expectation and sampled.
- :mod:`.token_policy` [``tp``]: token-level (autoregressive) policies and the response-length sweep.
- :mod:`.gap_bandits` [``gb``]: the vectorised log-linear bandit sweep over algorithms × step sizes × seeds.
- :mod:`.step_size` [``ss``]: critical step sizes, the one collapse rule, the curved instance, power-law fits.
- :mod:`.alignment_estimators` [``ae``]: in-sample vs fresh finite-difference estimators of one step's gap
  alignment (spec §5.4) and their bias check.
- :mod:`.operating_point` [``opp``]: the critical step at controlled operating success rates of a realisable
  contextual bandit (P2-C8, spec §3.6).
- :mod:`.verdicts`: the deciding part of a composite pass rule (the statistic an evidence row records).

Naming: P2's η is ``step_size`` (a per-step schedule η_k in the theorems), the optimizer's η elsewhere is
``learning_rate`` (docs/CONTRIBUTING.md).
"""
from . import directions, gap, gap_bandits, step_size, token_policy
from .gap import GradientGap, cumulative_alignment, gap_alignment, gradient_gap, logistic_lower_bound
from .gap_bandits import LogLinearBandit, collapse_fraction
from .gap_bandits import simulate as simulate_sweep
from . import alignment_estimators, operating_point, verdicts
from .alignment_estimators import AlignmentBiasCheck, estimator_bias_check
from .step_size import COLLAPSE_FRACTION, critical_step_size, empirical_critical_step_size, is_collapsed

__all__ = [
    "gap", "directions", "token_policy", "gap_bandits", "step_size", "GradientGap", "gradient_gap",
    "gap_alignment", "cumulative_alignment", "logistic_lower_bound", "LogLinearBandit", "simulate_sweep",
    "collapse_fraction", "COLLAPSE_FRACTION", "is_collapsed", "critical_step_size", "empirical_critical_step_size",
]
__all__ += ["alignment_estimators", "AlignmentBiasCheck", "estimator_bias_check", "operating_point", "verdicts"]
