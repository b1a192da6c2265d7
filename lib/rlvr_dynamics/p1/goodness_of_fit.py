"""Goodness of fit of a reward-curve law (P1 spec §7.4 check 8, §7.5): R² and the Gaussian AIC/BIC that
:func:`~rlvr_dynamics.p1.laws.compare_laws` ranks the laws by."""
from __future__ import annotations

import math

import numpy as np


def r_squared(y, yhat) -> float:
    """R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)² (§7.4 check 8); NaN when y is constant (R² undefined)."""
    y, yhat = np.asarray(y, float), np.asarray(yhat, float)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0:
        return math.nan
    return 1.0 - float(np.sum((y - yhat) ** 2)) / ss_tot


def information_criteria(rss: float, n: int, k: int, scale: float = 1.0) -> tuple[float, float]:
    """(AIC, BIC) = n ln(RSS/n) + 2k, n ln(RSS/n) + k ln n. RSS is floored at n·(1e-12·scale)² so a perfect fit
    gives a large finite negative value instead of −inf."""
    rss = max(float(rss), n * (1e-12 * max(scale, 1e-300)) ** 2)
    ll = n * math.log(rss / n)
    return ll + 2 * k, ll + k * math.log(max(n, 1))
