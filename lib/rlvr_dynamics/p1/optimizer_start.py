"""How large an optimizer's first updates are next to its steady update: whether it starts at rest (P1 spec §3.5–3.6).

P1's slow start (Proposition 14: Ṙ(0) = 0, then a rise, then a plateau) is inertia: the velocity of the heavy-ball
update starts at rest and builds up. Under a constant gradient g the update of step k (1-based) is

* **heavy-ball SGD** as torch implements it (buffer b_1 = g, b_k = μ b_{k−1} + g, no dampening): step_k = η b_k =
  η g (1 − μ^k)/(1 − μ), i.e. the fraction **1 − μ^k** of the steady step η g/(1 − μ): 1 − μ = 0.1 at step 1 for
  μ = 0.9, and 90 % of the steady step after ln 0.1/ln μ ≈ 22 steps;
* **Adam with bias correction** (m̂_k = m_k/(1 − β1^k), v̂_k = v_k/(1 − β2^k)): m̂_k = g and v̂_k = g² exactly, so
  every update, the first included, is the steady one, η g/(|g| + ε): the fraction **1** at every step, whatever β1;
* **plain SGD** (μ = 0): the fraction 1 at every step, and no inertia at all.

Only the first starts at rest, so only the first can show the slow start; a warm-up of the learning rate would play
the same role for Adam (the project's runner uses none).
"""
from __future__ import annotations

import numpy as np

from .._checks import check_in_range, check_int

__all__ = ["OPTIMIZERS", "update_growth", "starts_at_rest"]

OPTIMIZERS = ("sgd", "adamw")
"""Optimizers of the GRPO runner (``RunConfig.optimizer``): heavy-ball SGD and Adam(W) with bias correction."""


def update_growth(optimizer: str, momentum: float, steps: int) -> np.ndarray:
    """Update of steps 1..``steps`` under a constant gradient, as a fraction of the steady update (module docstring).

    ``sgd``: 1 − momentum^k (torch's heavy-ball buffer starts at the first gradient); ``adamw``: 1 at every step
    (bias correction). ``momentum`` is the heavy-ball μ or Adam's β1, in [0, 1).

    >>> update_growth("sgd", 0.9, 3).round(3).tolist()
    [0.1, 0.19, 0.271]
    >>> update_growth("adamw", 0.9, 2).tolist()
    [1.0, 1.0]
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    mu = float(check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False))
    n = check_int("steps", steps, 1)
    k = np.arange(1, n + 1, dtype=float)
    if optimizer == "adamw":
        return np.ones(n)
    return 1.0 - mu ** k


def starts_at_rest(optimizer: str, momentum: float) -> bool:
    """True when the first update is smaller than the steady one (heavy-ball SGD with momentum > 0): the setting in
    which P1's slow start can appear. False for Adam with bias correction and for plain SGD."""
    return bool(update_growth(optimizer, momentum, 1)[0] < 1.0)
