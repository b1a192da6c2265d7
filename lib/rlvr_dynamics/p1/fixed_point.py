"""Mroueh's GRPO fixed point p* (P1 spec §3.9; Mroueh 2025, arXiv:2503.06639) and the bandit stiffness at it.

With mean+std normalised group advantages and KL weight β to π_ref, the success probability follows
p_n = h(p_{n−1}) with [S]::

    h(p) = σ( z_ref + w(p(1−p)) / β ),   z_ref = logit(p_ref),
    w(v) = 1/sqrt(v + ε)   ("inside", Mroueh's convention)   or   1/(sqrt(v) + ε)   ("outside", TRL's std + ε)

and p* = h(p*). In the 2-arm softmax bandit (§7.2) p* is exactly the on-policy gradient-flow fixed point [D].
Small β can give p* ≈ 1 or no interior fixed point; this module returns the *first* fixed point above p_ref
(the stable one reached from the reference policy) and raises ValueError when there is none below 1 − 1e-15.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._checks import check_in_range, check_int, check_positive, check_same_shape

__all__ = ["EPS_PLACEMENTS", "normaliser", "mroueh_h", "mroueh_iterate", "mroueh_fixed_point", "has_fixed_point",
           "first_root_above", "logit", "sigmoid"]

EPS_PLACEMENTS = ("inside", "outside")
"""Where ε_std enters the advantage normalisation: ``inside`` 1/sqrt(v+ε) (Mroueh), ``outside`` 1/(sqrt(v)+ε)."""

_Z_MAX = 34.538776394910684  # logit(1 - 1e-15)


def sigmoid(z):
    """σ(z) = 1/(1+e^{−z}), overflow-safe."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=float)))


def logit(p):
    """log(p/(1−p))."""
    p = np.asarray(p, dtype=float)
    return np.log(p) - np.log1p(-p)


def _check_placement(eps_placement: str) -> str:
    if eps_placement not in EPS_PLACEMENTS:
        raise ValueError(f"eps_placement must be one of {EPS_PLACEMENTS}, got {eps_placement!r}")
    return eps_placement


def normaliser(v, eps=0.0, eps_placement: str = "inside"):
    """w(v): the advantage normalisation 1/std as a function of the reward variance v = p(1−p) (§3.9)."""
    _check_placement(eps_placement)
    v = np.asarray(v, dtype=float)
    with np.errstate(divide="ignore"):
        if eps_placement == "inside":
            return 1.0 / np.sqrt(v + eps)
        return 1.0 / (np.sqrt(v) + eps)


def _args(p_ref, beta, eps):
    p_ref = check_in_range("p_ref", p_ref, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    beta = check_positive("beta", beta)
    eps = check_in_range("eps", eps, 0.0, None)
    shape = check_same_shape(p_ref=p_ref, beta=beta, eps=eps)
    return p_ref, beta, eps, shape


def mroueh_h(p, p_ref, beta, eps=0.0, eps_placement: str = "inside"):
    """h_{ε,p_ref}(p) = σ(z_ref + w(p(1−p))/β) (P1 §3.9 boxed recursion)."""
    p = check_in_range("p", p, 0.0, 1.0)
    p_ref, beta, eps, _ = _args(p_ref, beta, eps)
    out = sigmoid(logit(p_ref) + normaliser(p * (1 - p), eps, eps_placement) / beta)
    return float(out) if np.ndim(out) == 0 else out


def mroueh_iterate(p_ref, beta, n_iter: int, eps=0.0, eps_placement: str = "inside") -> np.ndarray:
    """The sequence p_0 = p_ref, p_n = h(p_{n−1}), n = 0..n_iter; shape (n_iter+1, *broadcast shape)."""
    p_ref, beta, eps, shape = _args(p_ref, beta, eps)
    n_iter = check_int("n_iter", n_iter, 0)
    p = np.broadcast_to(p_ref, shape).astype(float)
    out = [p]
    for _ in range(n_iter):
        p = sigmoid(logit(p_ref) + normaliser(p * (1 - p), eps, eps_placement) / beta)
        out.append(p)
    return np.array(out)


def first_root_above(fun: Callable[[np.ndarray], np.ndarray], z_start: np.ndarray, *, z_max: float = _Z_MAX,
                     n_grid: int = 4000, xtol: float = 1e-15):
    """Vectorised: the first z > z_start where ``fun`` changes sign (scan of ``n_grid`` points up to z_max, then
    bisection to ``xtol`` in z). ``fun`` maps an array of z (same shape as z_start) to values. Returns
    (root, found) arrays; where not found, root is z_max."""
    z_start = np.asarray(z_start, dtype=float)
    u = np.linspace(0.0, 1.0, n_grid)
    span = z_max - z_start
    f_prev = fun(z_start)
    lo = np.full(z_start.shape, np.nan)
    hi = np.full(z_start.shape, np.nan)
    found = np.zeros(z_start.shape, dtype=bool)
    z_prev = z_start.copy()
    for j in range(1, n_grid):
        z = z_start + u[j] * span
        f = fun(z)
        cross = (~found) & (np.sign(f) != np.sign(f_prev)) & np.isfinite(f)
        lo = np.where(cross, z_prev, lo)
        hi = np.where(cross, z, hi)
        found |= cross
        if found.all():
            break
        z_prev, f_prev = z, f
    lo_ = np.where(found, lo, z_start)
    hi_ = np.where(found, hi, z_start + 1e-3)
    f_lo = fun(lo_)
    for _ in range(200):
        mid = 0.5 * (lo_ + hi_)
        fm = fun(mid)
        same = np.sign(fm) == np.sign(f_lo)
        lo_ = np.where(same, mid, lo_)
        f_lo = np.where(same, fm, f_lo)
        hi_ = np.where(same, hi_, mid)
        if np.all(hi_ - lo_ <= xtol * np.maximum(1.0, np.abs(mid))):
            break
    root = np.where(found, 0.5 * (lo_ + hi_), z_max)
    return root, found


def _fp_fun(p_ref, beta, eps, eps_placement):
    z_ref = logit(p_ref)

    def fun(z):
        p = sigmoid(z)
        return z - z_ref - normaliser(p * (1 - p), eps, eps_placement) / beta
    return fun, z_ref


def has_fixed_point(p_ref, beta, eps=0.0, eps_placement: str = "inside"):
    """True where an interior fixed point p* < 1 − 1e-15 exists above p_ref."""
    p_ref, beta, eps, shape = _args(p_ref, beta, eps)
    _check_placement(eps_placement)
    pr, b, e = (np.broadcast_to(x, shape).astype(float) for x in (p_ref, beta, eps))
    fun, z_ref = _fp_fun(pr, b, e, eps_placement)
    _, found = first_root_above(fun, z_ref)
    return bool(found) if found.ndim == 0 else found


def mroueh_fixed_point(p_ref, beta, eps=0.0, eps_placement: str = "inside"):
    """p* = h(p*), the first fixed point above p_ref, solved in logit space to |Δz| ≤ 1e-15 (|p* − h(p*)| ≲ 1e-15).

    >>> round(mroueh_fixed_point(0.1, 1.0), 5)
    0.45305

    Raises ValueError naming ``beta`` when some (p_ref, beta) has no interior fixed point (small β: the success
    rate runs away to 1).
    """
    p_ref, beta, eps, shape = _args(p_ref, beta, eps)
    _check_placement(eps_placement)
    pr, b, e = (np.broadcast_to(x, shape).astype(float) for x in (p_ref, beta, eps))
    fun, z_ref = _fp_fun(pr, b, e, eps_placement)
    root, found = first_root_above(fun, z_ref)
    if not np.all(found):
        bad = np.argwhere(~np.atleast_1d(found))[:3].ravel().tolist()
        raise ValueError(f"beta too small: no interior fixed point p* < 1 for p_ref={np.atleast_1d(pr)[bad]}, "
                         f"beta={np.atleast_1d(b)[bad]} (allowed: beta large enough that p - h(p) changes sign)")
    p = sigmoid(root)
    return float(p) if p.ndim == 0 else p
