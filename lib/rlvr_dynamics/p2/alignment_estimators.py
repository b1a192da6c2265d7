"""P2: finite-difference estimators of one step's gap alignment, and a bias check of the in-sample one.

The GRPO training callback estimates the gap alignment ``Δμ = ⟨w, g⁺ − g⁻⟩`` of one optimizer step (definitions in
:mod:`.gap`, P2 spec §2.4) by finite differences of ``log π`` over a prompt group (P2 spec §5.4, boxed estimator):
``Δμ̂ = [mean_{r_i=1} Δlogπ(o_i) − mean_{r_i=0} Δlogπ(o_i)] / η`` with ``Δlogπ(o) = log π_{θ+}(o) − log π_θ(o)``.

* **in-sample** (:func:`in_sample_alignment`): the o_i are the G rollouts the update θ → θ+ was computed from.
  Biased upward: the step raises exactly those correct samples.
* **fresh** (:func:`fresh_alignment`): F new i.i.d. samples from π_θ, independent of the update. Given the update and
  the counts, the correct fresh samples are i.i.d. from π⁺ and the incorrect ones from π⁻, so it is unbiased.
* target (:func:`exact_finite_difference_alignment`): ``[E_{π⁺}Δlogπ − E_{π⁻}Δlogπ]/η`` by enumeration.

Policies are tabular softmaxes over N responses (``φ = I``, logits θ of shape (..., N)); leading axes are independent
prompts or repeats and broadcast. For a log-linear policy the log-normaliser change is the same for every o and
cancels, so with θ+ = θ + ηw the target equals ``⟨w, g⁺ − g⁻⟩`` exactly at every η [D]; for an LLM it does not.
The GRPO step here is one plain SGD step on the un-clipped on-policy loss (no KL, no ratio), as in :mod:`.directions`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from .._checks import as_finite_array, check_in_range, check_int, check_positive
from .directions import group_advantages, sample_responses

__all__ = ["grpo_update_direction", "exact_finite_difference_alignment", "in_sample_alignment", "fresh_alignment",
           "AlignmentBiasCheck", "estimator_bias_check"]


def _log_softmax(name: str, theta: Any) -> np.ndarray:
    th = as_finite_array(name, theta)
    if th.ndim < 1 or th.shape[-1] < 2:
        raise ValueError(f"{name} must be tabular logits of shape (..., N) with N >= 2 responses, got shape {th.shape}")
    return th - logsumexp(th, axis=-1, keepdims=True)


def _pair(theta: Any, theta_new: Any) -> tuple[np.ndarray, np.ndarray]:
    logp, logp_new = _log_softmax("theta", theta), _log_softmax("theta_new", theta_new)
    if logp_new.shape[-1] != logp.shape[-1]:
        raise ValueError(f"theta_new must have shape (..., {logp.shape[-1]}) like theta, got shape {logp_new.shape}")
    return logp, logp_new


def _group(samples: Any, rewards: Any, n: int, min_size: int = 2) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(samples)
    if not np.issubdtype(s.dtype, np.integer) or s.ndim < 1 or s.shape[-1] < min_size:
        raise ValueError(f"samples must be integer response indices of shape (..., G) with G >= {min_size}, "
                         f"got dtype {s.dtype} and shape {s.shape}")
    if np.any(s < 0) or np.any(s >= n):
        raise ValueError(f"samples must lie in [0, {n - 1}] (N = {n} responses), got {s[(s < 0) | (s >= n)][:3].tolist()}")
    r = check_in_range("rewards", rewards, 0.0, 1.0)
    if r.shape != s.shape or not np.all(np.isin(r, (0.0, 1.0))):
        raise ValueError(f"rewards must be binary with the shape of samples {s.shape}, got shape {r.shape}")
    return s, r


def grpo_update_direction(theta: Any, samples: Any, rewards: Any, *, std_eps: float = 1e-4) -> np.ndarray:
    """GRPO step direction ``w = (1/G) Σ_i A_i ∇logπ(o_i)`` of a tabular softmax from one group (P2 spec §3.7, §5.4).

    ``A_i = (r_i − r̄)/(σ̂ + ε)`` with the population group std σ̂ (TRL's ``scale_rewards="group"`` uses the n−1 std:
    for a fixed G the two differ by a constant factor, which rescales w and not the estimators' bias; ε = ``std_eps``)
    via :func:`.directions.group_advantages`, and ``∇logπ(o) = e_o − π`` (``φ = I``). ``theta`` (..., N) logits,
    ``samples`` (..., G) response indices, ``rewards`` (..., G) binary; batch axes broadcast (prompts, repeats).
    A group with all-equal rewards gives ``w = 0``. The ascent step is ``θ+ = θ + η w``.
    """
    logp = _log_softmax("theta", theta)
    n = logp.shape[-1]
    s, r = _group(samples, rewards, n)
    adv = group_advantages(r, "grpo_no_length_norm", std="population", std_eps=std_eps) / s.shape[-1]
    onehot = s[..., None] == np.arange(n)
    return np.einsum("...g,...gn->...n", adv, onehot) - adv.sum(-1, keepdims=True) * np.exp(logp)


def exact_finite_difference_alignment(theta: Any, theta_new: Any, correct: Any, step_size: Any) -> np.ndarray:
    """``Δμ_exact = [E_{π_θ(·|O⁺)} Δlogπ − E_{π_θ(·|O⁻)} Δlogπ] / η`` by enumeration (P2 spec §2.4, §5.4).

    The estimand of both estimators. ``correct`` (..., N) boolean with at least one correct and one incorrect
    response; ``step_size`` η > 0. For ``θ+ = θ + ηw`` it equals ``gap.gap_alignment(w, gap.gradient_gap(I, θ,
    correct).gap)`` at every η (the normaliser cancels).
    """
    logp, logp_new = _pair(theta, theta_new)
    eta = check_positive("step_size", step_size)
    c = np.asarray(correct)
    if c.dtype != bool or c.shape[-1:] != logp.shape[-1:] or not np.all(c.any(-1) & (~c).any(-1)):
        raise ValueError(f"correct must be a boolean mask of shape (..., {logp.shape[-1]}) with at least one correct "
                         f"and one incorrect response, got {correct!r}")
    delta = logp_new - logp
    cond_p = np.exp(logp - logsumexp(np.where(c, logp, -np.inf), axis=-1, keepdims=True))
    cond_m = np.exp(logp - logsumexp(np.where(c, -np.inf, logp), axis=-1, keepdims=True))
    return ((np.where(c, cond_p, 0.0) * delta).sum(-1) - (np.where(c, 0.0, cond_m) * delta).sum(-1)) / eta


def _group_estimate(theta: Any, theta_new: Any, samples: Any, rewards: Any, step_size: Any
                    ) -> tuple[np.ndarray, np.ndarray]:
    logp, logp_new = _pair(theta, theta_new)
    eta = check_positive("step_size", step_size)
    s, r = _group(samples, rewards, logp.shape[-1])
    shape = np.broadcast_shapes(logp.shape[:-1], logp_new.shape[:-1], s.shape[:-1])
    delta = np.broadcast_to(logp_new - logp, shape + logp.shape[-1:])
    d = np.take_along_axis(delta, np.broadcast_to(s, shape + s.shape[-1:]), axis=-1)
    r = np.broadcast_to(r, d.shape)
    n_p, n_m = r.sum(-1), (1.0 - r).sum(-1)
    mixed = (n_p > 0) & (n_m > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = ((d * r).sum(-1) / n_p - (d * (1.0 - r)).sum(-1) / n_m) / eta
    return np.where(mixed, est, np.nan), mixed


def in_sample_alignment(theta: Any, theta_new: Any, samples: Any, rewards: Any, step_size: Any
                        ) -> tuple[np.ndarray, np.ndarray]:
    """In-sample ``Δμ̂`` over the update's own group (P2 spec §5.4 boxed estimator); biased upward.

    ``samples``/``rewards`` (..., G) are the rollouts θ → θ+ was computed from. Returns ``(estimate, mixed)``:
    ``estimate`` (...) is NaN exactly where ``mixed`` is False (no correct or no incorrect sample: undefined).
    """
    return _group_estimate(theta, theta_new, samples, rewards, step_size)


def fresh_alignment(theta: Any, theta_new: Any, samples: Any, rewards: Any, step_size: Any
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Fresh ``Δμ̂``: the same formula over F new samples from π_θ not used in the step (P2 spec §5.4).

    The caller guarantees independence of the update (e.g. ``directions.sample_responses``). Returns
    ``(estimate, mixed)`` as :func:`in_sample_alignment`; unbiased for :func:`exact_finite_difference_alignment`
    given the update, conditional on ``mixed``.
    """
    return _group_estimate(theta, theta_new, samples, rewards, step_size)


@dataclass(frozen=True)
class AlignmentBiasCheck:
    """Bias of the two estimators of ``Δμ`` over repeated GRPO steps from one θ (P2 spec §5.4)."""

    theta: np.ndarray
    """The fixed initial tabular logits θ (N,); the correct set is the first ``n_correct`` responses."""
    success_rate: float
    """``J`` of the fixed initial policy."""
    mean_exact: float
    """Mean of ``Δμ_exact`` over the repeats with a mixed update group."""
    in_sample_bias: float
    """Mean of ``in-sample − exact`` over repeats with a mixed update group."""
    in_sample_bias_se: float
    fresh_bias: float
    """Mean of ``fresh − exact`` over repeats whose update group and fresh group are both mixed."""
    fresh_bias_se: float
    n_in_sample: int
    """Repeats counted for the in-sample estimator."""
    n_fresh: int
    """Repeats counted for the fresh estimator."""
    fresh_unbiased: bool
    """``|fresh_bias| ≤ 3 SE`` and ``≤ relative_tolerance · |mean_exact|``."""
    in_sample_biased_up: bool
    """``in_sample_bias > 3 SE``."""


def estimator_bias_check(n_responses: int = 8, n_correct: int = 2, group_size: int = 4, fresh_samples: int = 8,
                         step_size: float = 0.5, n_repeats: int = 20000, seed: int = 0, *, std_eps: float = 1e-4,
                         relative_tolerance: float = 0.05) -> AlignmentBiasCheck:
    """Monte Carlo bias of the in-sample and fresh estimators against ``Δμ_exact`` (P2 spec §5.4, claim P2-C14).

    A random tabular θ (logits N(0,1), correct set = the first ``n_correct`` responses, shifted so that J is drawn
    uniformly in [0.1, 0.5]) is fixed by ``seed``; each of ``n_repeats`` independent repeats draws a group of
    ``group_size`` from π_θ, takes one GRPO step ``θ+ = θ + η w`` and draws ``fresh_samples`` new responses.
    Only repeats whose update group is mixed count (otherwise w = 0); for each estimator, only those where its own
    sample group is mixed (for in-sample, the same condition). Vectorised over repeats.
    """
    n = check_int("n_responses", n_responses, 2)
    k = check_int("n_correct", n_correct, 1, n - 1)
    g = check_int("group_size", group_size, 2)
    f = check_int("fresh_samples", fresh_samples, 2)
    eta = float(check_positive("step_size", step_size))
    reps = check_int("n_repeats", n_repeats, 2)
    tol = float(check_in_range("relative_tolerance", relative_tolerance, 0.0, None))
    rng = np.random.default_rng(check_int("seed", seed, 0))
    correct = np.arange(n) < k
    theta = rng.normal(size=n)
    target = rng.uniform(0.1, 0.5)
    ell = logsumexp(theta[correct]) - logsumexp(theta[~correct])
    theta[correct] += np.log(target / (1.0 - target)) - ell
    probs = np.broadcast_to(np.exp(theta - logsumexp(theta)), (reps, n))
    upd = sample_responses(probs, g, rng)
    w = grpo_update_direction(theta, upd, correct[upd], std_eps=std_eps)
    theta_new = theta + eta * w
    exact = exact_finite_difference_alignment(theta, theta_new, correct, eta)
    ins, ok_in = in_sample_alignment(theta, theta_new, upd, correct[upd], eta)
    fresh = sample_responses(probs, f, rng)
    fr, ok_fr = fresh_alignment(theta, theta_new, fresh, correct[fresh], eta)
    ok_fr = ok_fr & ok_in
    if ok_fr.sum() < 2:
        raise ValueError(f"n_repeats = {reps} gave fewer than 2 repeats with mixed groups; increase n_repeats")
    d_in, d_fr = (ins - exact)[ok_in], (fr - exact)[ok_fr]
    b_in, se_in = float(d_in.mean()), float(d_in.std(ddof=1) / np.sqrt(d_in.size))
    b_fr, se_fr = float(d_fr.mean()), float(d_fr.std(ddof=1) / np.sqrt(d_fr.size))
    mean_exact = float(exact[ok_in].mean())
    return AlignmentBiasCheck(
        theta=theta, success_rate=float(target), mean_exact=mean_exact, in_sample_bias=b_in, in_sample_bias_se=se_in,
        fresh_bias=b_fr, fresh_bias_se=se_fr, n_in_sample=int(d_in.size), n_fresh=int(d_fr.size),
        fresh_unbiased=bool(abs(b_fr) <= 3 * se_fr and abs(b_fr) <= tol * abs(mean_exact)),
        in_sample_biased_up=bool(b_in > 3 * se_in))
