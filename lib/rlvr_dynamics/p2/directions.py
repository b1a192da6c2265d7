"""P2: update directions of REINFORCE, GRPO (with / without per-response length normalisation) and Dr. GRPO.

P2 spec §3.7. Single prompt, a group ``o_1..o_G ~ π_θ``, binary rewards ``r_i``, group mean ``r̄`` and std ``σ̂``;
on-policy, **no clipping, no KL, no importance ratio** (one gradient step per group, plain SGD: ``θ ← θ + η w``).
Sampled ascent directions:

====================== ==========================================================================================
``reinforce``          ``w = (1/G) Σ r_i s(o_i)``                                   (no baseline)
``dr_grpo``            ``w = (1/G) Σ (r_i − r̄) s(o_i) / L_max``                     (token sum over a constant)
``grpo``               ``w = (1/G) Σ (r_i − r̄)/(σ̂ + ε) · s(o_i)/|o_i|``              (std + length normalised)
``grpo_no_length_norm``  ``w = (1/G) Σ (r_i − r̄)/(σ̂ + ε) · s(o_i)``
====================== ==========================================================================================

Expected directions, exact for every finite G [D]: given k of G correct, a correct ``o_i`` is distributed as π⁺
and an incorrect one as π⁻, independently of the rest, so ``E[w] = c_G(J) (ā⁺ − ā⁻)`` with ``ā± = E_{π±}[s/len]``
(``len = |o|`` for ``grpo``, ``L_max`` for ``dr_grpo``, 1 otherwise) and the scalar

* ``reinforce``:   ``c = J(1−J)``   (any G; ``E[r s] = J g⁺ = J(1−J)(g⁺−g⁻)``),
* ``dr_grpo``:     ``c = (1 − 1/G) J(1−J)``,
* ``grpo*``:       ``c = E_k[p̂(1−p̂)/(σ̂(p̂) + ε)]``, ``p̂ = k/G``, ``k ~ Bin(G, J)``, which tends to ``√(J(1−J))``
  (population std, ε = 0) as G → ∞ — the spec's population directions (§3.7, §5.1 item 2).

``std="population"`` is the original GRPO group std ``√(p̂(1−p̂))``; ``std="unbiased"`` is TRL's ``n−1`` std
(open choice §6.6; both configurable).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from . import gap as _gap
from .._checks import as_finite_array, check_in_range, check_int

ALGORITHMS = ("reinforce", "dr_grpo", "grpo", "grpo_no_length_norm")
"""Algorithm names, as keys of :data:`rlvr_dynamics.plotting.ALGO_COLORS`."""
STD_CONVENTIONS = ("population", "unbiased")

__all__ = ["ALGORITHMS", "STD_CONVENTIONS", "group_advantages", "expected_coefficient", "expected_direction",
           "sampled_direction", "sample_responses", "direction_from_samples", "group_std"]


def _check_algorithm(algorithm: str) -> str:
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    return algorithm


def _check_std(std: str) -> str:
    if std not in STD_CONVENTIONS:
        raise ValueError(f"std must be one of {STD_CONVENTIONS}, got {std!r}")
    return std


def group_std(success_fraction: Any, group_size: int, std: str = "population") -> np.ndarray:
    """Group std of binary rewards with a fraction ``p̂`` correct: ``√(p̂(1−p̂))`` or ``√(p̂(1−p̂) G/(G−1))``."""
    p = check_in_range("success_fraction", success_fraction, 0.0, 1.0)
    g = check_int("group_size", group_size, 2)
    var = p * (1.0 - p)
    if _check_std(std) == "unbiased":
        var = var * g / (g - 1)
    return np.sqrt(var)


def group_advantages(rewards: Any, algorithm: str, *, std: str = "population", std_eps: float = 0.0) -> np.ndarray:
    """Per-response advantages of a group, ``rewards`` of shape (..., G) with values in [0, 1] (P2 spec §3.7).

    ``reinforce``: ``r``; ``dr_grpo``: ``r − r̄``; ``grpo`` / ``grpo_no_length_norm``: ``(r − r̄)/(σ̂ + ε)``, and 0
    for a group with ``σ̂ = 0`` (all correct or all wrong) when ``ε = 0``. Length factors are applied by
    :func:`direction_from_samples`, not here.

    >>> group_advantages([1, 1, 1, 1, 1, 1, 1, 0], "grpo").round(4).tolist()[-1]   # k = G−1: −√(G−1)
    -2.6458
    """
    r = check_in_range("rewards", rewards, 0.0, 1.0)
    if r.ndim < 1 or r.shape[-1] < 1:
        raise ValueError(f"rewards must have shape (..., G) with G >= 1, got shape {r.shape}")
    _check_algorithm(algorithm)
    eps = float(check_in_range("std_eps", std_eps, 0.0, None))
    if algorithm == "reinforce":
        return r.copy()
    centred = r - r.mean(-1, keepdims=True)
    if algorithm == "dr_grpo":
        return centred
    g = r.shape[-1]
    if g < 2:
        raise ValueError("rewards: GRPO needs a group of G >= 2 responses")
    sd = np.sqrt((centred ** 2).sum(-1, keepdims=True) / (g - 1 if _check_std(std) == "unbiased" else g))
    denom = sd + eps
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, centred / np.where(denom > 0, denom, 1.0), 0.0)


def expected_coefficient(success_rate: Any, algorithm: str, group_size: int | None = None, *,
                         std: str = "population", std_eps: float = 0.0) -> np.ndarray:
    """Scalar ``c`` with ``E[w] = c (ā⁺ − ā⁻)`` (module docstring); ``group_size=None`` means G → ∞.

    >>> round(float(expected_coefficient(0.25, "grpo")), 6)      # √(J(1−J))
    0.433013
    >>> round(float(expected_coefficient(0.25, "dr_grpo", 8)), 6)  # (1−1/G) J(1−J)
    0.164062
    """
    j = check_in_range("success_rate", success_rate, 0.0, 1.0)
    _check_algorithm(algorithm)
    _check_std(std)
    eps = float(check_in_range("std_eps", std_eps, 0.0, None))
    if algorithm == "reinforce":
        return j * (1.0 - j)
    if group_size is None:
        if algorithm == "dr_grpo":
            return j * (1.0 - j)
        return j * (1.0 - j) / (np.sqrt(j * (1.0 - j)) + eps) if eps > 0 else np.sqrt(j * (1.0 - j))
    g = check_int("group_size", group_size, 2)
    if algorithm == "dr_grpo":
        return (1.0 - 1.0 / g) * j * (1.0 - j)
    k = np.arange(1, g)                      # mixed groups only; k = 0 or G contribute 0
    p_hat = k / g
    sd = group_std(p_hat, g, std) + eps
    weight = p_hat * (1.0 - p_hat) / sd      # (G−1,)
    pmf = binom.pmf(k, g, j[..., None])      # (..., G−1)
    return pmf @ weight


def _length_factors(lengths: Any, n: int, algorithm: str, max_length: float | None) -> np.ndarray | float:
    """Per-response divisor of the score: |o| (grpo), L_max (dr_grpo), 1 otherwise."""
    if lengths is None:
        lens = None
    else:
        lens = check_in_range("lengths", lengths, 0.0, None, low_inclusive=False)
        if lens.shape[-1:] != (n,):
            raise ValueError(f"lengths must have shape (..., {n}) (one length per response), got {lens.shape}")
    if algorithm == "grpo":
        return 1.0 if lens is None else lens
    if algorithm == "dr_grpo":
        if max_length is not None:
            return float(check_in_range("max_length", max_length, 0.0, None, low_inclusive=False))
        return 1.0 if lens is None else lens.max(-1, keepdims=True)
    return 1.0


def expected_direction(features: Any, theta: Any, correct: Any, algorithm: str, *, group_size: int | None = None,
                       lengths: Any = None, max_length: float | None = None, std: str = "population",
                       std_eps: float = 0.0) -> np.ndarray:
    """Exact expected direction ``E[w]`` of ``algorithm`` on a log-linear policy (P2 spec §3.7, §5.6).

    ``lengths`` (..., N) are the response lengths |o| (default 1: a bandit); ``max_length`` is Dr. GRPO's
    L_max (default ``max(lengths)``). Closed form ``ā± = E_{π±}[φ/len] − E_π φ · E_{π±}[1/len]``: no
    per-response gradients.
    """
    _check_algorithm(algorithm)
    phi, th, c = _gap._problem(features, theta, correct)
    n = phi.shape[-2]
    lf = _length_factors(lengths, n, algorithm, max_length)
    gg = _gap.gradient_gap(phi, th, c)
    coef = expected_coefficient(gg.success_rate, algorithm, group_size, std=std, std_eps=std_eps)[..., None]
    if np.ndim(lf) == 0:
        return coef * gg.gap / float(lf)
    inv = 1.0 / np.broadcast_to(lf, c.shape)
    z = _gap._logits(phi, th)
    p = np.exp(z - logsumexp(z, axis=-1, keepdims=True))
    m = _gap._expect(p, phi)
    zp, zm = np.where(c, z, -np.inf), np.where(c, -np.inf, z)
    pp = np.exp(zp - logsumexp(zp, axis=-1, keepdims=True))
    pm = np.exp(zm - logsumexp(zm, axis=-1, keepdims=True))
    a_plus = _gap._expect(pp * inv, phi) - m * (pp * inv).sum(-1, keepdims=True)
    a_minus = _gap._expect(pm * inv, phi) - m * (pm * inv).sum(-1, keepdims=True)
    return coef * (a_plus - a_minus)


def sample_responses(probs: Any, group_size: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``group_size`` i.i.d. draws from each row of ``probs`` (..., N) → (..., G), by inverse CDF."""
    p = check_in_range("probs", probs, 0.0, 1.0)
    g = check_int("group_size", group_size, 1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    cdf = np.cumsum(p, axis=-1)
    u = rng.random(p.shape[:-1] + (g,)) * cdf[..., -1:]
    idx = (u[..., :, None] >= cdf[..., None, :]).sum(-1)
    return np.minimum(idx, p.shape[-1] - 1)


def direction_from_samples(scores: Any, rewards: Any, algorithm: str, *, lengths: Any = None,
                           max_length: float | None = None, std: str = "population", std_eps: float = 0.0
                           ) -> np.ndarray:
    """Sampled direction from explicit per-sample scores ``(..., G, d)`` and rewards ``(..., G)`` (P2 spec §3.7).

    ``lengths`` (..., G) are the sampled |o_i|; ``max_length`` is Dr. GRPO's L_max (default ``max`` over the
    group when lengths are given, else 1).
    """
    s = as_finite_array("scores", scores)
    r = check_in_range("rewards", rewards, 0.0, 1.0)
    if s.ndim < 2 or s.shape[:-1] != r.shape:
        raise ValueError(f"scores must have shape rewards.shape + (d,), got {s.shape} and {r.shape}")
    adv = group_advantages(r, algorithm, std=std, std_eps=std_eps)
    lf = _length_factors(lengths, r.shape[-1], algorithm, max_length)
    weights = adv / lf / r.shape[-1]
    return np.einsum("...g,...gd->...d", weights, s)


def sampled_direction(features: Any, theta: Any, correct: Any, algorithm: str, group_size: int,
                      rng: np.random.Generator, *, lengths: Any = None, max_length: float | None = None,
                      std: str = "population", std_eps: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One sampled direction per problem in the batch: returns ``(w, arms, rewards)``.

    Draws ``group_size`` responses from ``π_θ`` (rows of the batch independently), scores them in closed form
    ``s = φ(o) − E_π φ`` (only the G drawn responses), and applies :func:`direction_from_samples`.
    """
    _check_algorithm(algorithm)
    phi, th, c = _gap._problem(features, theta, correct)
    z = _gap._logits(phi, th)
    p = np.exp(z - logsumexp(z, axis=-1, keepdims=True))
    c_b = np.broadcast_to(c, p.shape)
    arms = sample_responses(p, group_size, rng)
    rewards = np.take_along_axis(c_b, arms, axis=-1).astype(float)
    phi_b = np.broadcast_to(phi, p.shape + (phi.shape[-1],))
    m = _gap._expect(p, phi)
    scores = np.take_along_axis(phi_b, arms[..., None], axis=-2) - m[..., None, :]
    lens = None
    lmax = max_length
    if lengths is not None:
        lens_all = np.broadcast_to(check_in_range("lengths", lengths, 0.0, None, low_inclusive=False), p.shape)
        lens = np.take_along_axis(lens_all, arms, axis=-1)
        if algorithm == "dr_grpo" and max_length is None:
            lmax = float(lens_all.max())
    w = direction_from_samples(scores, rewards, algorithm, lengths=lens, max_length=lmax, std=std, std_eps=std_eps)
    return w, arms, rewards
