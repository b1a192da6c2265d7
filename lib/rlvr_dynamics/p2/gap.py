"""P2: the Gradient Gap, gap alignment, cumulative gap alignment M(K) and the logistic lower bound on accuracy.

Definitions (P2 spec §2.2–2.4, the ones other modules and the GRPO-training notebooks cite):

* success rate  ``J = Σ_{o∈O⁺} π(o)``; log-odds ``ℓ = log J/(1−J)`` (computed as LSE(z⁺) − LSE(z⁻), never
  ``log1p(−J)``, P2 spec §5.1 item 3);
* ``g± = E_{π±}[∇ log π(o)]``, **Gradient Gap** ``g⁺ − g⁻ = ∇ℓ`` and ``∇J = J(1−J)(g⁺ − g⁻)`` (§2.2–2.3);
* **gap alignment** ``Δμ = ⟨w, g⁺ − g⁻⟩`` for a realised update direction ``w`` (unnormalised: the step is
  ``θ ← θ + η w``; open choice §6.1, this project uses the unnormalised ``w`` and the scale-free step condition);
* **cumulative gap alignment** ``M(K) = Σ_{k=0}^{K−1} η_k [Δμ_k]₊`` (index range 0..K−1, open choice §6.1);
* **logistic lower bound** (Theorem 1, §3.2) ``J(K) ≥ σ(ℓ(0) + M(K)/2)``.

Policies here are log-linear (softmax) over a finite response set, ``π_θ(o) ∝ exp⟨θ, φ(o)⟩`` — a tabular softmax is
the case ``φ = I``. Everything is exact by enumeration, in closed form: the score is ``s(o) = φ(o) − E_π φ``, so
``g⁺ − g⁻ = E_{π⁺}φ − E_{π⁻}φ`` and no per-response gradient is ever materialised (``score_matrix`` exists only for
tests and small problems). Autoregressive sequence policies live in :mod:`rlvr_dynamics.p2.token_policy`; for any policy
whose per-response scores are given explicitly, use :func:`gradient_gap_from_scores` (exact) or
:func:`gradient_gap_sampled` (Monte Carlo with a standard error).

Shapes broadcast: ``features`` is ``(..., N, d)``, ``theta`` is ``(..., d)``, ``correct`` is a boolean ``(..., N)``;
the leading (batch) axes broadcast together, so one call handles many runs or contexts.

>>> import numpy as np
>>> phi = np.eye(3); correct = np.array([True, False, False])
>>> round(float(success_rate(phi, np.zeros(3), correct)), 6)
0.333333
>>> cumulative_alignment([0.5, 0.5, 0.5], [2.0, -1.0, 4.0]).tolist()
[0.0, 1.0, 1.0, 3.0]
>>> round(float(logistic_lower_bound(0.5, 2.0)), 6)   # σ(0 + 2/2)
0.731059
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, logsumexp

from .._checks import as_finite_array, check_in_range, check_same_shape

__all__ = [
    "GradientGap", "logits", "policy_probs", "success_rate", "log_odds", "score_matrix", "gradient_gap",
    "policy_gradient", "gradient_gap_from_scores", "gradient_gap_sampled", "gap_alignment",
    "alignment_decomposition", "cumulative_alignment", "logistic_lower_bound", "log_odds_of",
    "cgf", "one_step_log_odds_change", "hoeffding_lower_bound", "score_bounds", "theorem1_constant",
    "step_condition_holds",
]


# ----------------------------------------------------------------------------------------------------------- checks
def _check_features(features: Any) -> np.ndarray:
    phi = as_finite_array("features", features)
    if phi.ndim < 2:
        raise ValueError(f"features must have shape (..., N, d) with N >= 1 responses, got shape {phi.shape}")
    if phi.shape[-2] == 0:
        raise ValueError("features: the response set is empty (N = 0); need at least one correct and one incorrect")
    if phi.shape[-1] == 0:
        raise ValueError("features: feature dimension d must be >= 1, got 0")
    return phi


def _check_theta(theta: Any, d: int) -> np.ndarray:
    th = as_finite_array("theta", theta)
    if th.ndim < 1 or th.shape[-1] != d:
        raise ValueError(f"theta must have shape (..., {d}) to match features (..., N, {d}), got shape {th.shape}")
    return th


def _check_correct(correct: Any, n: int) -> np.ndarray:
    c = np.asarray(correct)
    if c.dtype != bool:
        if not np.issubdtype(c.dtype, np.number) or not np.all(np.isin(c, (0, 1))):
            raise ValueError(f"correct must be a boolean mask over the N = {n} responses, got {correct!r}")
        c = c.astype(bool)
    if c.ndim < 1 or c.shape[-1] != n:
        raise ValueError(f"correct must have shape (..., {n}) to match features (..., {n}, d), got shape {c.shape}")
    if not np.all(c.any(axis=-1)) or not np.all((~c).any(axis=-1)):
        raise ValueError("correct must mark at least one correct and one incorrect response in every row "
                         "(otherwise J is 0 or 1 and g⁺ or g⁻ is undefined)")
    return c


def _problem(features: Any, theta: Any, correct: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    phi = _check_features(features)
    th = _check_theta(theta, phi.shape[-1])
    c = _check_correct(correct, phi.shape[-2])
    check_same_shape(features_batch=np.empty(phi.shape[:-2]), theta_batch=np.empty(th.shape[:-1]),
                     correct_batch=np.empty(c.shape[:-1]))
    return phi, th, c


def _expect(probs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``Σ_o probs[..., o] values[..., o, :]`` with broadcasting; a single GEMM when ``values`` is 2-D."""
    if values.ndim == 2:
        return probs @ values
    return np.matmul(probs[..., None, :], values)[..., 0, :]


# ------------------------------------------------------------------------------------------------ policy quantities
def logits(features: Any, theta: Any) -> np.ndarray:
    """``z(o) = ⟨θ, φ(o)⟩``, shape ``broadcast(batch) + (N,)``."""
    phi = _check_features(features)
    th = _check_theta(theta, phi.shape[-1])
    return _logits(phi, th)


def _logits(phi: np.ndarray, th: np.ndarray) -> np.ndarray:
    if phi.ndim == 2:
        return th @ phi.T
    return np.matmul(phi, th[..., None])[..., 0]


def policy_probs(features: Any, theta: Any) -> np.ndarray:
    """``π_θ(o) = softmax(z)(o)`` (P2 spec §5.6 ``policy``)."""
    z = logits(features, theta)
    return np.exp(z - logsumexp(z, axis=-1, keepdims=True))


def success_rate(features: Any, theta: Any, correct: Any) -> np.ndarray:
    """``J = Σ_{o∈O⁺} π_θ(o)`` (P2 spec §2.1)."""
    phi, th, c = _problem(features, theta, correct)
    z = _logits(phi, th)
    p = np.exp(z - logsumexp(z, axis=-1, keepdims=True))
    return np.where(c, p, 0.0).sum(-1)


def log_odds(features: Any, theta: Any, correct: Any) -> np.ndarray:
    """``ℓ = log J/(1−J) = LSE(z[O⁺]) − LSE(z[O⁻])`` (P2 spec §2.3), stable for J near 0 or 1."""
    phi, th, c = _problem(features, theta, correct)
    z = _logits(phi, th)
    return _log_odds_from_logits(z, c)


def _log_odds_from_logits(z: np.ndarray, c: np.ndarray) -> np.ndarray:
    return logsumexp(np.where(c, z, -np.inf), axis=-1) - logsumexp(np.where(c, -np.inf, z), axis=-1)


def log_odds_of(success: Any) -> np.ndarray:
    """``log J/(1−J)`` of given success probabilities in [0, 1] (±inf at the ends)."""
    j = check_in_range("success", success, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return np.log(j) - np.log1p(-j)


def score_matrix(features: Any, theta: Any) -> np.ndarray:
    """Per-response scores ``s(o) = ∇_θ log π_θ(o) = φ(o) − E_π φ``, shape ``(..., N, d)``.

    Materialises one gradient per response: for tests and small problems only; :func:`gradient_gap` uses the
    closed form instead.
    """
    phi = _check_features(features)
    th = _check_theta(theta, phi.shape[-1])
    z = _logits(phi, th)
    p = np.exp(z - logsumexp(z, axis=-1, keepdims=True))
    return phi - _expect(p, phi)[..., None, :]


@dataclass(frozen=True)
class GradientGap:
    """Expected scores over the correct / incorrect sets and their difference (P2 spec §2.2)."""

    g_plus: np.ndarray
    """``g⁺ = E_{π⁺}[s]``, shape (..., d)."""
    g_minus: np.ndarray
    """``g⁻ = E_{π⁻}[s]``, shape (..., d)."""
    gap: np.ndarray
    """The Gradient Gap ``g⁺ − g⁻ = ∇ℓ``, shape (..., d)."""
    success_rate: np.ndarray
    """``J``, shape (...)."""

    @property
    def policy_gradient(self) -> np.ndarray:
        """``∇J = J(1−J)(g⁺ − g⁻)``."""
        j = self.success_rate[..., None]
        return j * (1.0 - j) * self.gap


def gradient_gap(features: Any, theta: Any, correct: Any) -> GradientGap:
    """Exact ``g⁺``, ``g⁻``, Gradient Gap and ``J`` of a log-linear policy (P2 spec §2.2, closed form).

    With ``m = E_π φ`` and ``m± = E_{π±} φ``: ``g± = m± − m`` and ``g⁺ − g⁻ = m⁺ − m⁻``. Cost ``O(N d)`` per
    problem; no per-response gradient is formed. Conditional means use the log-sum-exp of each set, so they stay
    accurate when J is within 1e-300 of 0 or 1.
    """
    phi, th, c = _problem(features, theta, correct)
    return _gradient_gap(phi, th, c)


def _gradient_gap(phi: np.ndarray, th: np.ndarray, c: np.ndarray) -> GradientGap:
    """:func:`gradient_gap` on arguments already checked by :func:`_problem` (for loops that check once)."""
    z = _logits(phi, th)
    lse = _logsumexp_last(z)
    p = np.exp(z - lse)
    zp = np.where(c, z, -np.inf)
    zm = np.where(c, -np.inf, z)
    lse_p = _logsumexp_last(zp)
    lse_m = _logsumexp_last(zm)
    m = _expect(p, phi)
    m_plus = _expect(np.exp(zp - lse_p), phi)
    m_minus = _expect(np.exp(zm - lse_m), phi)
    j = expit((lse_p - lse_m)[..., 0])
    return GradientGap(g_plus=m_plus - m, g_minus=m_minus - m, gap=m_plus - m_minus, success_rate=j)


def _gap_and_success(phi: np.ndarray, th: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(gap, J)`` of :func:`_gradient_gap` without ``E_π φ`` (which only ``g±`` need): the same numbers."""
    z = _logits(phi, th)
    zp = np.where(c, z, -np.inf)
    zm = np.where(c, -np.inf, z)
    lse_p = _logsumexp_last(zp)
    lse_m = _logsumexp_last(zm)
    gap = _expect(np.exp(zp - lse_p), phi) - _expect(np.exp(zm - lse_m), phi)
    return gap, expit((lse_p - lse_m)[..., 0])


def _logsumexp_last(a: np.ndarray) -> np.ndarray:
    """``scipy.special.logsumexp(a, axis=-1, keepdims=True)`` for a real float64 array, the same operations in the
    same order (so the same bits: the largest term is taken out of the sum and added back with ``log1p``), without
    the array-API dispatch that dominates its cost on the small arrays of a training loop. The direct
    ``log(Σ exp a)`` that scipy substitutes where the result is not finite is only computed where it is needed."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_max = a.max(-1, keepdims=True)
        i_max = a == a_max
        m = i_max.sum(-1, keepdims=True).astype(a.dtype)         # how many terms equal the max (a count: exact)
        s = np.exp(np.where(i_max, -np.inf, a) - a_max).sum(-1, keepdims=True)
        s = np.where(s == 0, s, s / m)
        # scipy's sign bookkeeping (for weights b < 0) is the identity here: s >= 0 (or nan) and m >= 0
        out = np.log1p(s) + np.log(m) + a_max
        bad = ~np.isfinite(out)
        if bad.any():
            out_inf = np.log(np.exp(a).sum(-1, keepdims=True))
            out = np.where(bad, out_inf, out)
    return out


def policy_gradient(features: Any, theta: Any, correct: Any) -> np.ndarray:
    """``∇_θ J = J(1−J)(g⁺ − g⁻)`` (P2 spec §2.2)."""
    return gradient_gap(features, theta, correct).policy_gradient


def gradient_gap_from_scores(probs: Any, scores: Any, correct: Any) -> GradientGap:
    """Exact Gradient Gap of any finite policy from its per-response scores (P2 spec §2.1–2.2).

    ``probs`` (..., N) in [0, 1] summing to 1, ``scores`` (..., N, d) = ``∇ log π(o)``, ``correct`` (..., N).
    Use this for policies without a closed form (e.g. enumerated autoregressive sequence policies).
    """
    p = check_in_range("probs", probs, 0.0, 1.0)
    if p.ndim < 1 or p.shape[-1] == 0:
        raise ValueError(f"probs must have shape (..., N) with N >= 1, got shape {p.shape}")
    if not np.allclose(p.sum(-1), 1.0, atol=1e-8):
        raise ValueError(f"probs must sum to 1 over the last axis, got sums {np.ravel(p.sum(-1))[:3].tolist()}")
    s = as_finite_array("scores", scores)
    if s.ndim < 2 or s.shape[-2] != p.shape[-1]:
        raise ValueError(f"scores must have shape (..., {p.shape[-1]}, d) to match probs, got shape {s.shape}")
    c = _check_correct(correct, p.shape[-1])
    pp = np.where(c, p, 0.0)
    pm = np.where(c, 0.0, p)
    j = pp.sum(-1)
    if np.any(j <= 0) or np.any(j >= 1):
        raise ValueError("probs put all mass on one side (J = 0 or 1): g⁺ or g⁻ is undefined")
    g_plus = _expect(pp, s) / j[..., None]
    g_minus = _expect(pm, s) / (1.0 - j)[..., None]
    return GradientGap(g_plus=g_plus, g_minus=g_minus, gap=g_plus - g_minus, success_rate=j)


@dataclass(frozen=True)
class SampledGradientGap:
    """Monte Carlo estimate of ``g⁺``, ``g⁻``, the gap and ``J`` with standard errors (per component)."""

    g_plus: np.ndarray
    g_minus: np.ndarray
    gap: np.ndarray
    success_rate: float
    gap_standard_error: np.ndarray
    """Standard error of each gap component: ``sqrt(Var⁺/n⁺ + Var⁻/n⁻)`` (conditional on the counts)."""
    success_rate_standard_error: float
    n_correct: int
    n_incorrect: int


def gradient_gap_sampled(scores: Any, rewards: Any) -> SampledGradientGap:
    """Monte Carlo Gradient Gap from ``n`` on-policy samples: ``scores`` (n, d), binary ``rewards`` (n,).

    ``g±`` are the sample means of the scores of the correct / incorrect samples; each needs at least two
    samples (for the standard error).
    """
    s = as_finite_array("scores", scores)
    r = check_in_range("rewards", rewards, 0.0, 1.0)
    if s.ndim != 2 or r.ndim != 1 or s.shape[0] != r.shape[0]:
        raise ValueError(f"scores must be (n, d) and rewards (n,), got shapes {s.shape} and {r.shape}")
    if not np.all(np.isin(r, (0.0, 1.0))):
        raise ValueError("rewards must be binary (0 or 1)")
    ok = r == 1.0
    n_p, n_m = int(ok.sum()), int((~ok).sum())
    if n_p < 2 or n_m < 2:
        raise ValueError(f"rewards need >= 2 correct and >= 2 incorrect samples, got {n_p} and {n_m}")
    sp, sm = s[ok], s[~ok]
    g_p, g_m = sp.mean(0), sm.mean(0)
    se = np.sqrt(sp.var(0, ddof=1) / n_p + sm.var(0, ddof=1) / n_m)
    j = n_p / len(r)
    return SampledGradientGap(g_plus=g_p, g_minus=g_m, gap=g_p - g_m, success_rate=j,
                              gap_standard_error=se, success_rate_standard_error=float(np.sqrt(j * (1 - j) / len(r))),
                              n_correct=n_p, n_incorrect=n_m)


# ---------------------------------------------------------------------------------------------- alignment and M(K)
def gap_alignment(direction: Any, gap: Any) -> np.ndarray:
    """Gap alignment ``Δμ = ⟨w, g⁺ − g⁻⟩`` (P2 spec §2.4), over the last axis, broadcasting the rest."""
    w = as_finite_array("direction", direction)
    g = as_finite_array("gap", gap)
    if w.ndim < 1 or g.ndim < 1 or w.shape[-1] != g.shape[-1]:
        raise ValueError(f"direction and gap must share the last (parameter) axis, got shapes {w.shape} and {g.shape}")
    check_same_shape(direction=w, gap=g)
    return np.einsum("...i,...i->...", w, g)


def alignment_decomposition(features: Any, theta: Any, correct: Any, direction: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(μ⁺, μ⁻)``: mean first-order change of ``log π`` of correct / incorrect responses along ``w``.

    ``μ± = E_{π±}⟨w, s(o)⟩ = ⟨w, g±⟩`` and ``Δμ = μ⁺ − μ⁻`` (P2 spec §2.4).
    """
    gg = gradient_gap(features, theta, correct)
    w = as_finite_array("direction", direction)
    return gap_alignment(w, gg.g_plus), gap_alignment(w, gg.g_minus)


def cumulative_alignment(step_sizes: Any, alignments: Any) -> np.ndarray:
    """Cumulative gap alignment ``M(k) = Σ_{j<k} η_j [Δμ_j]₊`` for k = 0..K (P2 spec §2.4, eq. 14 [S]).

    ``step_sizes`` (η_0..η_{K−1}, >= 0; a scalar means a fixed step) and ``alignments`` (Δμ_0..Δμ_{K−1}) are
    1-D arrays (or broadcastable arrays whose last axis is the step). Returns shape ``(..., K+1)`` with
    ``M[..., 0] = 0``, so ``M[k]`` pairs with the success rate *before* step k: for a logged series where
    ``acc[k]``, ``lr[k]``, ``dmu[k]`` are measured at step k, compare ``acc`` with
    ``logistic_lower_bound(acc[0], cumulative_alignment(lr, dmu)[:-1])``.

    >>> cumulative_alignment(0.1, [1.0, 2.0]).round(6).tolist()
    [0.0, 0.1, 0.3]
    """
    eta = check_in_range("step_sizes", step_sizes, 0.0, None)
    dmu = as_finite_array("alignments", alignments)
    if dmu.ndim < 1:
        raise ValueError(f"alignments must have a step axis (shape (..., K)), got a scalar {alignments!r}")
    shape = check_same_shape(step_sizes=eta, alignments=dmu)
    if eta.ndim >= 1 and eta.shape[-1] not in (1, dmu.shape[-1]):
        raise ValueError(f"step_sizes and alignments must have the same number of steps, got {eta.shape} and {dmu.shape}")
    incr = np.broadcast_to(eta * np.maximum(dmu, 0.0), shape)
    out = np.zeros(shape[:-1] + (shape[-1] + 1,))
    np.cumsum(incr, axis=-1, out=out[..., 1:])
    return out


def logistic_lower_bound(initial_success: Any, cumulative_alignment: Any) -> np.ndarray:
    """Theorem-1 bound ``σ(ℓ(0) + M/2) = J₀ / (J₀ + (1−J₀) e^{−M/2})`` (P2 spec §3.2).

    ``initial_success`` J₀ in [0, 1] (J₀ = 0 gives 0, J₀ = 1 gives 1) and ``cumulative_alignment`` M >= 0
    broadcast together; 1-D numpy arrays of a logged run are fine.
    """
    j0 = check_in_range("initial_success", initial_success, 0.0, 1.0)
    m = check_in_range("cumulative_alignment", cumulative_alignment, 0.0, None)
    check_same_shape(initial_success=j0, cumulative_alignment=m)
    with np.errstate(divide="ignore"):
        l0 = np.log(j0) - np.log1p(-j0)
    return expit(l0 + 0.5 * m)


# ------------------------------------------------------------------------------------------ one-step exact identity
def cgf(features: Any, theta: Any, mask: Any, direction: Any, step_size: Any) -> np.ndarray:
    """``K_w(η) = log E_{π(·|mask)} exp(η⟨w, φ(o)⟩)`` (P2 spec §3.1).

    ``mask`` selects the conditioning set (``correct`` gives K⁺, ``~correct`` gives K⁻). ``step_size`` broadcasts
    against the batch axes of the problem.
    """
    phi = _check_features(features)
    th = _check_theta(theta, phi.shape[-1])
    w = _check_theta(direction, phi.shape[-1])
    msk = np.asarray(mask, dtype=bool)
    if msk.shape[-1:] != phi.shape[-2:-1] or not np.all(msk.any(-1)):
        raise ValueError(f"mask must have shape (..., {phi.shape[-2]}) and select at least one response")
    eta = as_finite_array("step_size", step_size)
    zm = np.where(msk, _logits(phi, th), -np.inf)
    x = _logits(phi, w)
    return logsumexp(zm + eta[..., None] * x, axis=-1) - logsumexp(zm, axis=-1)


def one_step_log_odds_change(features: Any, theta: Any, correct: Any, direction: Any, step_size: Any) -> np.ndarray:
    """Exact ``ℓ(θ + η w) − ℓ(θ) = K⁺_w(η) − K⁻_w(η)`` for a log-linear policy (P2 spec §3.1, [D] checked).

    ``step_size`` broadcasts against the batch axes of the problem (pass shape ``(n,)`` with an unbatched problem
    to scan η).
    """
    phi, th, c = _problem(features, theta, correct)
    w = _check_theta(direction, phi.shape[-1])
    eta = check_in_range("step_size", step_size, 0.0, None)
    z = _logits(phi, th)
    x = _logits(phi, w)
    e = eta[..., None]
    zp = np.where(c, z, -np.inf)
    zm = np.where(c, -np.inf, z)
    kp = logsumexp(zp + e * x, axis=-1) - logsumexp(zp, axis=-1)
    km = logsumexp(zm + e * x, axis=-1) - logsumexp(zm, axis=-1)
    return kp - km


def hoeffding_lower_bound(features: Any, theta: Any, correct: Any, direction: Any, step_size: Any) -> np.ndarray:
    """``η Δμ − η² R²/8`` with R the range of ``⟨w, φ⟩`` over the incorrect set (P2 spec §3.1).

    A lower bound on :func:`one_step_log_odds_change` (Hoeffding's lemma on O⁻, Jensen on O⁺).
    """
    phi, th, c = _problem(features, theta, correct)
    w = _check_theta(direction, phi.shape[-1])
    eta = check_in_range("step_size", step_size, 0.0, None)
    dmu = gap_alignment(w, gradient_gap(phi, th, c).gap)
    x = _logits(phi, w)
    rng = np.where(c, -np.inf, x).max(-1) - np.where(c, np.inf, x).min(-1)
    return eta * dmu - eta ** 2 * rng ** 2 / 8.0


# ------------------------------------------------------------------------------------- Theorem-1 step condition
def score_bounds(features: Any, theta: Any) -> tuple[np.ndarray, np.ndarray]:
    """Local assumption constants ``(G_o, L_o)`` of a log-linear policy (P2 spec §2.6 A1, §5.1 item 4).

    ``G_o = max_o ‖φ(o) − E_π φ‖`` and ``L_o = ‖Cov_π φ‖_op`` (the Hessian of ``log π(o)`` is ``−Cov_π φ`` for
    every o). Local (at θ), not global: open choice §6.2.
    """
    phi = _check_features(features)
    th = _check_theta(theta, phi.shape[-1])
    z = _logits(phi, th)
    p = np.exp(z - logsumexp(z, axis=-1, keepdims=True))
    m = _expect(p, phi)
    centred = phi - m[..., None, :]
    g_o = np.linalg.norm(centred, axis=-1).max(-1)
    cov = np.einsum("...n,...ni,...nj->...ij", p, centred, centred)
    l_o = np.linalg.eigvalsh(cov)[..., -1]
    return g_o, l_o


def theorem1_constant(score_bound: Any, smoothness: Any, form: str = "2(L+8G^2)") -> np.ndarray:
    """``C_o`` of the Theorem-1 step condition (P2 spec §3.2): ``2(L_o + 8 G_o²)`` (default) or ``2L_o + 8G_o²``.

    The printed constant is open choice §6.2; the default is the larger (safer) reading.
    """
    g = check_in_range("score_bound", score_bound, 0.0, None)
    l_ = check_in_range("smoothness", smoothness, 0.0, None)
    if form == "2(L+8G^2)":
        return 2.0 * (l_ + 8.0 * g ** 2)
    if form == "2L+8G^2":
        return 2.0 * l_ + 8.0 * g ** 2
    raise ValueError(f"form must be '2(L+8G^2)' or '2L+8G^2', got {form!r}")


def step_condition_holds(step_size: Any, direction: Any, alignment: Any, constant: Any) -> np.ndarray:
    """Scale-free Theorem-1 step condition ``η ‖w‖² C_o ≤ [Δμ]₊`` (P2 spec §3.2; reduces to ``η ≤ [Δμ]₊/C_o`` for
    unit ``w``)."""
    eta = check_in_range("step_size", step_size, 0.0, None)
    w = as_finite_array("direction", direction)
    dmu = as_finite_array("alignment", alignment)
    c = check_in_range("constant", constant, 0.0, None)
    return eta * np.einsum("...i,...i->...", w, w) * c <= np.maximum(dmu, 0.0)
