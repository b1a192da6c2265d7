"""P1's softmax bandit in closed form (P1 spec §7.2): the expected GRPO force, its stiffness at the fixed point, and
the exact finite-G mean field (expectation over the binomial group).

The bandit: two arms per prompt (arm 1 correct, r = 1; arm 0 wrong, r = 0), one logit z per prompt, p = σ(z).
With KL weight β to π_ref and std-normalised advantages the expected logit force is

    g(z, z_old) = p(1−p) [ w(p_old(1−p_old)) − β (z − z_ref) ],     w(v) = 1/sqrt(v+ε) or 1/(sqrt(v)+ε)

whose on-policy zero is Mroueh's p* (:mod:`.fixed_point`). The simulator that iterates this map with momentum,
staleness and finite groups is :mod:`.bandit_simulator`.
"""
from __future__ import annotations

import numpy as np

from .._checks import as_finite_array, check_in_range, check_int, check_positive, check_same_shape
from .fixed_point import first_root_above, logit, mroueh_fixed_point, normaliser, sigmoid

NORMALISATIONS = ("std", "none")
"""Advantage normalisations: ``std`` (GRPO, divide by the group std) or ``none`` (Dr. GRPO / RLOO-like)."""

__all__ = [
    "NORMALISATIONS", "expected_force", "analytic_stiffness", "stale_normalisation_share",
    "finite_difference_stiffness", "group_drift_factor", "finite_group_fixed_point", "expected_group_std",
    "finite_group_force", "group_gradient_variance", "finite_group_stiffness",
]

# ---------------------------------------------------------------------------------------------------------------
# Closed forms at the fixed point (§7.2)
# ---------------------------------------------------------------------------------------------------------------

def expected_force(z, z_old, p_ref, beta, eps=0.0, eps_placement: str = "inside"):
    """F(z; z_old) = p(1−p)[w(p_old(1−p_old)) − β(z − z_ref)]: the G → ∞ GRPO gradient in logit space (§7.2)."""
    z = as_finite_array("z", z)
    z_old = as_finite_array("z_old", z_old)
    p_ref = check_in_range("p_ref", p_ref, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    beta = check_in_range("beta", beta, 0.0, None)
    eps = check_in_range("eps", eps, 0.0, None)
    p, po = sigmoid(z), sigmoid(z_old)
    return p * (1 - p) * (normaliser(po * (1 - po), eps, eps_placement) - beta * (z - logit(p_ref)))


def analytic_stiffness(p_ref, beta, eps=0.0, eps_placement: str = "inside"):
    """K_z = −dF/dz (on-policy) at p* = Mroueh's fixed point (§7.2 boxed formula [D])::

        K_z = v [β + (1−2p*) v / (2 (v+ε)^{3/2})],  v = p*(1−p*)     (eps inside)
        K_z = v [β + (1−2p*) sqrt(v) / (2 (sqrt(v)+ε)²)]             (eps outside)

    >>> round(analytic_stiffness(0.1, 1.0), 5)
    0.27117
    """
    p = np.asarray(mroueh_fixed_point(p_ref, beta, eps, eps_placement))
    beta, eps = np.asarray(beta, float), np.asarray(eps, float)
    v = p * (1 - p)
    if eps_placement == "inside":
        norm_term = (1 - 2 * p) * v / (2 * (v + eps) ** 1.5)
    else:
        norm_term = (1 - 2 * p) * np.sqrt(v) / (2 * (np.sqrt(v) + eps) ** 2)
    out = v * (beta + norm_term)
    return float(out) if out.ndim == 0 else out


def stale_normalisation_share(p_ref, beta, eps=0.0, eps_placement: str = "inside"):
    """Fraction of K_z that comes from the normalisation term (the only part a stale π_old delays in the
    importance-corrected surrogate): ≈ 8.6 % at p_ref = 0.1, β = 1 (§7.2, §7.4 check 6)."""
    k = np.asarray(analytic_stiffness(p_ref, beta, eps, eps_placement))
    p = np.asarray(mroueh_fixed_point(p_ref, beta, eps, eps_placement))
    out = 1.0 - p * (1 - p) * np.asarray(beta, float) / k
    return float(out) if out.ndim == 0 else out


def finite_difference_stiffness(p_ref, beta, eps=0.0, eps_placement: str = "inside", h=1e-5):
    """−dF/dz at z* by a central difference of the on-policy force (independent check of K_z)."""
    z = logit(np.asarray(mroueh_fixed_point(p_ref, beta, eps, eps_placement)))
    f = lambda x: expected_force(x, x, p_ref, beta, eps, eps_placement)  # noqa: E731
    out = -(np.asarray(f(z + h)) - np.asarray(f(z - h))) / (2 * h)
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------------------------
# Finite-G mean field (exact expectation over the binomial group)
# ---------------------------------------------------------------------------------------------------------------

def _group_moments(p, group_size: int, eps, eps_placement, normalisation, unbiased_std):
    from scipy.stats import binom

    g = group_size
    k = np.arange(g + 1)
    p = np.asarray(p, float)
    pmf = binom.pmf(k, g, p[..., None])
    m = k / g
    s2 = m * (1 - m) * (g / (g - 1) if unbiased_std else 1.0)
    if normalisation == "std":
        s2w = np.where(s2 > 0, s2 * normaliser(np.maximum(s2, 1e-300), eps, eps_placement), 0.0)
    else:
        s2w = s2
    return pmf, s2, s2w


def group_drift_factor(p, group_size: int, eps=0.0, eps_placement: str = "inside", normalisation: str = "std",
                       unbiased_std: bool = False):
    """c_G(p) = E_k[s² w(s²)] / (v w(v)), v = p(1−p): how much a group of G shrinks the mean drive of the
    advantage term relative to G → ∞ (finite-G bias of the std estimator; mechanism (i) of §3.8). → 1 as G → ∞."""
    group_size = check_int("group_size", group_size, 2)
    p = check_in_range("p", p, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    pmf, _, s2w = _group_moments(p, group_size, eps, eps_placement, normalisation, unbiased_std)
    v = p * (1 - p)
    ref = v * normaliser(v, eps, eps_placement) if normalisation == "std" else v
    out = (pmf * s2w).sum(-1) / ref
    return float(out) if out.ndim == 0 else out


def expected_group_std(p, group_size: int, unbiased_std: bool = False):
    """E[within-group reward std] for Bernoulli(p) rewards and a group of G (< sqrt(p(1−p)); §3.8 mechanism (i)).
    Zero-variance groups (probability p^G + (1−p)^G) contribute 0."""
    group_size = check_int("group_size", group_size, 2)
    p = check_in_range("p", p, 0.0, 1.0)
    pmf, s2, _ = _group_moments(p, group_size, 0.0, "inside", "none", unbiased_std)
    out = (pmf * np.sqrt(s2)).sum(-1)
    return float(out) if out.ndim == 0 else out


def finite_group_force(z, p_ref, beta, group_size: int, eps=0.0, eps_placement: str = "inside",
                       normalisation: str = "std", unbiased_std: bool = False):
    """E_k[ĝ] on-policy at finite G: E_k[s² w(s²)] − β p(1−p)(z − z_ref) (the mean drift the finite-G bandit
    actually follows; → :func:`expected_force` as G → ∞ for std normalisation)."""
    group_size = check_int("group_size", group_size, 2)
    z = as_finite_array("z", z)
    p = sigmoid(z)
    pmf, _, s2w = _group_moments(p, group_size, eps, eps_placement, normalisation, unbiased_std)
    return (pmf * s2w).sum(-1) - np.asarray(beta, float) * p * (1 - p) * (z - logit(np.asarray(p_ref, float)))


def group_gradient_variance(p, group_size: int, eps=0.0, eps_placement: str = "inside", normalisation: str = "std",
                            unbiased_std: bool = False):
    """Var_k[ĝ] of the on-policy finite-G gradient at success rate p (exact over k ~ Binomial(G, p)): the
    per-step forcing of the bandit. Its leading 1/G term is ∝ (1−2p)², so near p = ½ the O(1/G²) part dominates."""
    group_size = check_int("group_size", group_size, 2)
    p = check_in_range("p", p, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    pmf, _, s2w = _group_moments(p, group_size, eps, eps_placement, normalisation, unbiased_std)
    m1 = (pmf * s2w).sum(-1)
    out = (pmf * s2w**2).sum(-1) - m1**2
    return float(out) if np.ndim(out) == 0 else out


def finite_group_stiffness(p_ref, beta, group_size: int, eps=0.0, eps_placement: str = "inside",
                           normalisation: str = "std", unbiased_std: bool = False, h: float = 1e-5):
    """K_G = −dE_k[ĝ]/dz at the finite-G fixed point (central difference)."""
    p = finite_group_fixed_point(p_ref, beta, group_size, eps, eps_placement, normalisation, unbiased_std)
    z = logit(np.asarray(p))
    f = lambda x: finite_group_force(x, p_ref, beta, group_size, eps, eps_placement, normalisation,  # noqa: E731
                                     unbiased_std)
    out = -(f(z + h) - f(z - h)) / (2 * h)
    return float(out) if np.ndim(out) == 0 else out


def finite_group_fixed_point(p_ref, beta, group_size: int, eps=0.0, eps_placement: str = "inside",
                             normalisation: str = "std", unbiased_std: bool = False):
    """Fixed point of the *expected* finite-G on-policy dynamics: E_k[s²w(s²)] = β p(1−p)(z − z_ref).

    For G → ∞ this is Mroueh's p*; at finite G the std-normalised drive is smaller by c_G, so the plateau is
    lower. First root above p_ref; ValueError if none."""
    group_size = check_int("group_size", group_size, 2)
    p_ref = check_in_range("p_ref", p_ref, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    beta = check_positive("beta", beta)
    shape = check_same_shape(p_ref=p_ref, beta=beta)
    pr, b = (np.broadcast_to(x, shape).astype(float) for x in (p_ref, beta))
    z_ref = logit(pr)

    def fun(z):
        p = sigmoid(z)
        pmf, _, s2w = _group_moments(p, group_size, eps, eps_placement, normalisation, unbiased_std)
        return (pmf * s2w).sum(-1) - b * p * (1 - p) * (z - z_ref)

    root, found = first_root_above(lambda z: -fun(z), z_ref, n_grid=2000)
    if not np.all(found):
        raise ValueError("beta too small: no interior finite-G fixed point")
    p = sigmoid(root)
    return float(p) if p.ndim == 0 else p
