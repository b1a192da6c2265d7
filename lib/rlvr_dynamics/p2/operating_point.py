"""P2: the critical step size at controlled operating success rates (P2-C8, spec §3.6, §5.3).

The claim: the critical step shrinks as J → 1, in the spec's form ∝ (1 − J) (§3.6:
``η ≲ (1 − J)[Δμ]₊ / (T (L + G²))``). The threshold of that box is on the scale-free step of the Theorem-1
condition ``η‖w‖²C_o ≤ [Δμ]₊`` (§3.2, open choice §6.1): for a direction ``w`` it bounds the **step length**
``η‖w‖`` (for a unit direction, η itself). REINFORCE's population direction ``∇J̄ = mean_x J_x(1 − J_x)(g⁺_x − g⁻_x)``
carries its own ``J(1 − J)`` factor, so its raw learning rate can stay under a (1 − J)-scaled threshold (the spec's
§3.7 table: "self-annealing"); the claim is tested on the step length ``η_c‖w(θ₀)‖`` at the operating point.

The model is one where the multi-step threshold *can* depend on J: a **realisable contextual log-linear bandit**
(X contexts share θ, so a step that helps one context can hurt another; sup J = 1 because the correct arm of
every context is the argmax of ``⟨θ*, φ(x, a)⟩`` for one hidden θ*). Operating points are reached by small
normalised ascent steps along ``∇J̄`` from θ = 0 and stopped exactly where ``1 − J̄`` equals each level. From each
operating point, fixed-η population REINFORCE runs for ``n_steps``; the critical η is the first collapse
(the project's one rule, :func:`rlvr_dynamics.p2.step_size.is_collapsed`: final J̄ below ``fraction`` × initial J̄)
on a grid, refined by the project's one bisection (:func:`rlvr_dynamics.p2.step_size.bisect_critical_step_size`).
Everything is one array program over (instance, operating point, η); the only Python loops are over steps.
In a bandit every response has length 1, so Dr. GRPO's population direction is REINFORCE's divided by the
constant ``L_max``: the same threshold in step-length units.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import gap as _gap
from .step_size import COLLAPSE_FRACTION, Bisection, bisect_critical_step_size, first_collapse_bracket, is_collapsed
from .._checks import check_in_range, check_int

__all__ = ["RealisableContextual", "realisable_contextual", "mean_success_and_gradient", "OperatingPoints",
           "train_to_levels", "collapsed_from", "OperatingThresholds", "critical_steps_at"]


@dataclass(frozen=True)
class RealisableContextual:
    """A batch of realisable contextual log-linear bandits ``π_θ(a | x) ∝ exp⟨θ, φ(x, a)⟩``."""

    features: np.ndarray
    """``φ``, shape (I, X, N, d): I instances, X contexts, N arms, d features."""
    correct: np.ndarray
    """Boolean (I, X, N): one correct arm per context, the argmax of ``⟨θ*_i, φ(x, a)⟩``."""
    target: np.ndarray
    """(I, d): the hidden θ* that realises every context (sup J = 1 along it)."""


def realisable_contextual(n_instances: int = 10, n_contexts: int = 8, n_arms: int = 10, dim: int = 6,
                          feature_std: float | None = None, seed: int = 0) -> RealisableContextual:
    """Draw ``n_instances`` realisable contextual bandits: ``φ(x, a) ~ N(0, feature_std²)`` (default ``9/d``, the
    spec's §5.2 scale), ``θ* ~ N(0, I_d)`` and, per context, the correct arm ``argmax_a ⟨θ*, φ(x, a)⟩``, so that
    ``J_x(sθ*) → 1`` for every context as ``s → ∞`` (sup J = 1; P2 spec §5.2 with a realisable correct set)."""
    i_n = check_int("n_instances", n_instances, 1)
    x_n = check_int("n_contexts", n_contexts, 1)
    n = check_int("n_arms", n_arms, 2)
    d = check_int("dim", dim, 1)
    sd = 3.0 / np.sqrt(d) if feature_std is None else float(check_in_range("feature_std", feature_std, 0.0, None,
                                                                             low_inclusive=False))
    rng = np.random.default_rng(seed)
    phi = sd * rng.standard_normal((i_n, x_n, n, d))
    target = rng.standard_normal((i_n, d))
    z = np.einsum("ixnd,id->ixn", phi, target)
    correct = np.zeros(z.shape, bool)
    np.put_along_axis(correct, z.argmax(-1)[..., None], True, axis=-1)
    return RealisableContextual(phi, correct, target)


def mean_success_and_gradient(features: np.ndarray, correct: np.ndarray, theta: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray]:
    """``J̄ = mean_x J_x`` and the population REINFORCE direction ``∇J̄ = mean_x J_x(1 − J_x)(g⁺_x − g⁻_x)``
    (P2 spec §2.2, §3.7) for runs with ``features`` (B, X, N, d), ``correct`` (B, X, N), ``theta`` (B, d).
    Returns ``(J̄ (B,), ∇J̄ (B, d))``."""
    gg = _gap.gradient_gap(features, np.asarray(theta, float)[..., None, :], correct)
    return gg.success_rate.mean(-1), gg.policy_gradient.mean(-2)


def _checked_problem(features: np.ndarray, correct: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The checks of :func:`mean_success_and_gradient` on the arrays that stay fixed in a loop, done once:
    ``(features, correct)`` as :func:`_mean_success_and_gradient` takes them."""
    phi, _, c = _gap._problem(features, np.asarray(theta, float)[..., None, :], correct)
    return phi, c


def _mean_success_and_gradient(phi: np.ndarray, c: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mean_success_and_gradient` on ``(phi, c)`` from :func:`_checked_problem` (or rows of them); only
    ``theta`` is checked (finite, as there). The same numbers."""
    th = _gap._check_theta(np.asarray(theta, float)[..., None, :], phi.shape[-1])
    gap, j = _gap._gap_and_success(phi, th, c)
    jj = j[..., None]
    return j.mean(-1), (jj * (1.0 - jj) * gap).mean(-2)          # GradientGap.policy_gradient, averaged


@dataclass(frozen=True)
class OperatingPoints:
    """Parameters at which each instance's mean failure rate ``1 − J̄`` equals each level."""

    theta: np.ndarray
    """(I, L, d)."""
    failure_rate: np.ndarray
    """(I, L): ``1 − J̄`` at ``theta`` (equal to the level up to the line search's precision)."""
    levels: np.ndarray
    """(L,) the requested levels, strictly decreasing in (0, 1)."""
    train_steps: np.ndarray
    """(I,) ascent steps each instance took to reach the last level."""


def train_to_levels(bandit: RealisableContextual, levels: Any, step_length: float = 0.05,
                    max_steps: int = 100_000) -> OperatingPoints:
    """Small normalised ascent steps ``θ ← θ + s ∇J̄/‖∇J̄‖`` from θ = 0 (the direction of population REINFORCE at a
    step length fixed in parameter space), stopped at each level of ``1 − J̄``: where a step crosses a level, the
    crossing point on that segment is located by 60 bisection steps (``J̄`` is monotone along a short ascent step), so
    the operating points sit on the levels. Vectorised over instances. Raises if an instance does not reach the last
    level within ``max_steps``."""
    lv = check_in_range("levels", np.atleast_1d(levels), 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if lv.ndim != 1 or np.any(np.diff(lv) >= 0):
        raise ValueError(f"levels must be strictly decreasing, got {lv.tolist()}")
    s = float(check_in_range("step_length", step_length, 0.0, None, low_inclusive=False))
    max_steps = check_int("max_steps", max_steps, 1)
    phi, cor = bandit.features, bandit.correct
    i_n, d = phi.shape[0], phi.shape[-1]
    th = np.zeros((i_n, d))
    out = np.full((i_n, lv.size, d), np.nan)
    nxt = np.zeros(i_n, int)                          # index of the next level to reach, per instance
    steps = np.zeros(i_n, int)
    phi, cor = _checked_problem(phi, cor, th)
    j, w = _mean_success_and_gradient(phi, cor, th)
    if np.any(1 - j <= lv[0]):
        raise ValueError(f"the first level {lv[0]} must lie below the starting failure rate {float((1 - j).min()):.3g}")
    for _ in range(max_steps):
        active = nxt < lv.size
        if not active.any():
            break
        norm = np.linalg.norm(w, axis=-1, keepdims=True)
        step = np.where(active[:, None], s * w / np.where(norm > 0, norm, 1.0), 0.0)
        th_new = th + step
        j_new, w_new = _mean_success_and_gradient(phi, cor, th_new)
        steps += active
        while True:                                   # one segment may cross several levels
            lvl = lv[np.minimum(nxt, lv.size - 1)]
            cross = (nxt < lv.size) & (1 - j_new <= lvl)
            if not cross.any():
                break
            idx = np.nonzero(cross)[0]
            lo, hi = np.zeros(idx.size), np.ones(idx.size)
            for _ in range(60):                       # bisection of the crossing on the segment, all at once
                mid = 0.5 * (lo + hi)
                jm, _ = _mean_success_and_gradient(phi[idx], cor[idx], th[idx] + mid[:, None] * step[idx])
                below = 1 - jm <= lvl[idx]
                hi = np.where(below, mid, hi)
                lo = np.where(below, lo, mid)
            out[idx, nxt[idx]] = th[idx] + hi[:, None] * step[idx]
            nxt[idx] += 1
        th, j, w = th_new, j_new, w_new
    if np.any(nxt < lv.size):
        raise ValueError(f"{int((nxt < lv.size).sum())} instances did not reach 1 - J = {lv[-1]} in {max_steps} steps")
    fr = 1 - mean_success_and_gradient(np.repeat(phi, lv.size, 0), np.repeat(cor, lv.size, 0),
                                       out.reshape(-1, d))[0].reshape(i_n, lv.size)
    return OperatingPoints(theta=out, failure_rate=fr, levels=lv, train_steps=steps)


def collapsed_from(bandit: RealisableContextual, instance: Any, theta0: Any, step_sizes: Any, n_steps: int,
                   fraction: float = COLLAPSE_FRACTION) -> np.ndarray:
    """Run fixed-step population REINFORCE ``θ ← θ + η ∇J̄(θ)`` for ``n_steps`` from ``theta0`` (R, d) on the
    instances ``instance`` (R,), one run per step size (R,), and return whether each collapsed by the project's one
    rule (final J̄ below ``fraction`` × initial J̄). One array program over the R runs; a run whose update is exactly
    zero (its J̄ saturated: a third of a wide grid after one step) stays where it is, so it leaves the program with its
    J̄ (the same numbers: the other runs' arithmetic is row by row)."""
    idx = np.asarray(instance, int).ravel()
    th = np.array(theta0, float).reshape(idx.size, -1)
    eta = check_in_range("step_sizes", np.asarray(step_sizes, float).ravel(), 0.0, None)
    if eta.size != idx.size:
        raise ValueError(f"one step size per run: {idx.size} runs, {eta.size} step sizes")
    n_steps = check_int("n_steps", n_steps, 1)
    phi, cor = _checked_problem(bandit.features[idx], bandit.correct[idx], th)
    j0, w = _mean_success_and_gradient(phi, cor, th)
    j, live = j0.copy(), np.arange(idx.size)               # live: the runs still moving
    for _ in range(n_steps):
        moving = np.any(w != 0, axis=-1) | ~np.isfinite(eta)
        if not moving.all():
            live, th, w, eta, phi, cor = live[moving], th[moving], w[moving], eta[moving], phi[moving], cor[moving]
            if not live.size:
                break
        th = th + eta[:, None] * w
        j[live], w = _mean_success_and_gradient(phi, cor, th)
    return is_collapsed(j, j0, fraction)


@dataclass(frozen=True)
class OperatingThresholds:
    """Critical steps at the operating points; arrays are (I, L)."""

    learning_rate: Bisection
    """The bisected critical learning rate η_c of population REINFORCE (first collapse on the grid, refined)."""
    direction_norm: np.ndarray
    """``‖∇J̄(θ₀)‖`` at each operating point."""
    step_length: np.ndarray
    """``η_c ‖∇J̄(θ₀)‖``: the critical step length in parameter space (the theory's scale-free step, §3.2);
    ``inf`` / ``nan`` where η_c is not bracketed."""
    grid_collapsed: np.ndarray
    """(I, L, E): collapse on the starting grid."""


def critical_steps_at(bandit: RealisableContextual, points: OperatingPoints, grid: Any, n_steps: int,
                      rel_tol: float = 0.02, fraction: float = COLLAPSE_FRACTION) -> OperatingThresholds:
    """Critical learning rate and step length of population REINFORCE at every operating point: the first collapse
    on the strictly increasing ``grid`` (:func:`first_collapse_bracket`), refined by
    :func:`bisect_critical_step_size` to relative width ``rel_tol`` (the definition P2-C5 and P2-C7 use)."""
    g = check_in_range("grid", np.asarray(grid, float), 0.0, None, low_inclusive=False)
    th0 = points.theta
    i_n, l_n, d = th0.shape
    inst = np.repeat(np.arange(i_n), l_n)                        # (I*L,)
    flat_th = th0.reshape(-1, d)
    col = collapsed_from(bandit, np.repeat(inst, g.size), np.repeat(flat_th, g.size, 0), np.tile(g, i_n * l_n),
                         n_steps, fraction).reshape(i_n, l_n, g.size)
    low, high = first_collapse_bracket(g, col)

    def at(etas: np.ndarray, which: np.ndarray) -> np.ndarray:
        return collapsed_from(bandit, inst[which], flat_th[which], etas, n_steps, fraction)

    b = bisect_critical_step_size(at, low, high, rel_tol, check_bracket=False)
    _, w = mean_success_and_gradient(bandit.features[inst], bandit.correct[inst], flat_th)
    wn = np.linalg.norm(w, axis=-1).reshape(i_n, l_n)
    return OperatingThresholds(learning_rate=b, direction_norm=wn, step_length=b.estimate * wn, grid_collapsed=col)
