"""P2: critical step sizes — the exact single-step CGF root, the catastrophic-failure instance, empirical thresholds
from sweeps, and the token-level scaling law.

* :func:`critical_step_size` — smallest ``η* > 0`` with ``K⁺_w(η) = K⁻_w(η)`` (P2 spec §3.1, §5.1 item 5): the
  exact step beyond which a single step along ``w`` lowers the log-odds. Grid scan + ``brentq``.
* :func:`curved_instance` — the project's Theorem-2 instance (spec §3.5, open choice §6.3):
  ``J = σ(f)``, ``f = c + εθ₂ − θ₁² e^{κθ₂}``. With ``κ = 0`` it is the spec's instance: steps along the Gradient
  Gap ``∇f`` (perfect alignment) converge for ``η < 1`` and decay monotonically to 0 for ``η > 1``. With ``κ > 0``
  [D, ours] the curvature grows as J → 1 so the local threshold of the gap direction is
  ``η*(θ) = e^{−κθ₂}`` ≈ ``e^{c}(1 − J)`` (κ = ε) — the §3.4 / §3.6 mechanism of fixed-η stagnation made exact.
* :func:`empirical_critical_step_size` — the largest step of a sorted grid below the first collapse (open choice
  §6.9: collapse means the final success rate fell below a floor); :func:`first_collapse_bracket` gives that bracket.
* :func:`bisect_critical_step_size` — the one bisection of a threshold: refines brackets ``[stable, collapsed]``
  (vectorised over many brackets) in log space until their relative width is below a tolerance.
* :func:`fit_power_law` — log-log least squares for ``η_c ∝ T^α`` or ``∝ (1 − J)^β``.
* :func:`token_level_step_bound` — Theorem-3 form ``(1 − J)[Δμ]₊ / (T (L + G²))`` (spec §3.6; constants [?]).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from . import gap as _gap
from .._checks import as_finite_array, check_in_range, check_int

__all__ = ["critical_step_size", "first_root", "CurvedRun", "curved_instance", "curved_instance_threshold",
           "empirical_critical_step_size", "first_collapse_bracket", "Bisection", "bisect_critical_step_size",
           "PowerLawFit", "fit_power_law", "token_level_step_bound"]


def critical_step_size(features: Any, theta: Any, correct: Any, direction: Any, *, eta_max: float = 1e3,
                       n_grid: int = 2000) -> float:
    """Exact single-step critical step ``η*`` along ``direction`` (P2 spec §3.1): the smallest root ``η > 0`` of
    ``Δℓ(η) = K⁺_w(η) − K⁻_w(η)``; ``inf`` if ``Δℓ > 0`` on ``(0, eta_max]``; ``0.0`` if ``w`` is not an ascent
    direction (``Δμ ≤ 0``). Scans a log grid from ``eta_max·1e-9`` then refines with ``brentq`` (the difference of
    two convex CGFs can dip below 0 at intermediate η even without a trap, so the scan is needed).
    """
    phi, th, c = _gap._problem(features, theta, correct)
    if phi.ndim != 2:
        raise ValueError(f"features must be (N, d) for a single problem, got shape {phi.shape}")
    w = _gap._check_theta(direction, phi.shape[-1])
    emax = float(check_in_range("eta_max", eta_max, 0.0, None, low_inclusive=False))
    n = check_int("n_grid", n_grid, 10)
    dmu = float(_gap.gap_alignment(w, _gap.gradient_gap(phi, th, c).gap))
    if dmu <= 0:
        return 0.0
    return first_root(lambda e: _gap.one_step_log_odds_change(phi, th, c, w, e), eta_max=emax, n_grid=n)


def first_root(log_odds_change: Any, *, eta_max: float = 1e3, n_grid: int = 2000) -> float:
    """Smallest ``η > 0`` where a one-step log-odds change ``Δℓ(η)`` (a vectorised callable, ``Δℓ(0) = 0``,
    positive for small η) returns to ``≤ 0``: log-grid scan on ``[eta_max·1e-9, eta_max]`` + ``brentq``.
    ``inf`` if it stays positive."""
    emax = float(check_in_range("eta_max", eta_max, 0.0, None, low_inclusive=False))
    n = check_int("n_grid", n_grid, 10)
    grid = np.geomspace(emax * 1e-9, emax, n)
    vals = np.asarray(log_odds_change(grid), float)
    neg = np.nonzero(~(vals > 0))[0]
    if neg.size == 0:
        return float("inf")
    i = int(neg[0])
    if i == 0:
        return float(grid[0])
    f = lambda e: float(np.asarray(log_odds_change(np.array([e])), float)[0])  # noqa: E731
    if not np.isfinite(f(grid[i])):
        hi = grid[i]
        return float(brentq(lambda e: np.nan_to_num(f(e), nan=-1.0, neginf=-1e300), grid[i - 1], hi,
                            xtol=1e-14, rtol=1e-12))
    return float(brentq(f, grid[i - 1], grid[i], xtol=1e-14, rtol=1e-12))


@dataclass(frozen=True)
class CurvedRun:
    """Trajectories of :func:`curved_instance`; arrays are (E, n_steps + 1) for E step sizes."""

    success_rate: np.ndarray
    log_odds: np.ndarray
    theta: np.ndarray
    """(E, n_steps + 1, 2)."""
    step_sizes: np.ndarray
    """(E, n_steps): the realised η_k (differs from the base step with ``adaptive=True``)."""
    alignment: np.ndarray
    """(E, n_steps): Δμ_k = ⟨w_k, ∇f(θ_k)⟩."""
    grad_norm_sq: np.ndarray
    """(E, n_steps): ‖∇J(θ_k)‖²."""
    local_threshold: np.ndarray
    """(E, n_steps): the local critical step of the θ₁ mode for this direction, 1/(a_k e^{κθ₂})."""


def curved_instance_threshold(theta2: Any = 0.0, curvature_growth: float = 0.0) -> np.ndarray:
    """Local critical step of the gap direction ``w = ∇f``: ``e^{−κ θ₂}`` (= 1 for the §3.5 instance)."""
    t2 = as_finite_array("theta2", theta2)
    k = float(check_in_range("curvature_growth", curvature_growth, 0.0, None))
    return np.exp(-k * t2)


def curved_instance(step_sizes: Any, n_steps: int = 400, *, offset: float = 0.0, slope: float = 0.05,
                    curvature_growth: float = 0.0, theta0: tuple[float, float] = (0.5, 0.0),
                    algorithm: str = "gap", adaptive: float | None = None, noise: float = 0.0,
                    seed: int | np.random.Generator = 0, schedule: Any = None) -> CurvedRun:
    """Two-outcome policy ``π(correct) = J = σ(f(θ))``, ``f = c + εθ₂ − θ₁² e^{κθ₂}`` (P2 spec §3.5; κ > 0 [D]).

    The Gradient Gap is ``∇f`` (a two-outcome policy has scores ``(1−J)∇f`` and ``−J∇f``). Directions:
    ``algorithm="gap"`` ``w = ∇f`` (perfectly aligned, §3.5); ``"reinforce"`` ``w = J(1−J)∇f``; ``"grpo"``
    ``w = √(J(1−J))∇f`` (population GRPO, §3.7). ``adaptive=ρ`` replaces the fixed step by
    ``η_k = min(η, ρ·[Δμ_k]₊ / (‖w_k‖² L_k))`` with ``L_k = 2e^{κθ₂}`` the local curvature of f — the Theorem-1
    form of a step that adapts to alignment and curvature (ρ < 2 is stable). ``noise=σ`` adds gradient noise
    ``w = a(∇f + σξ)``, ξ ~ N(0, I) from ``seed`` (a stand-in for sampling noise: it keeps θ₁ off exact 0 so that an
    unstable mode always regrows, as it does in sampled training). ``schedule`` (n_steps,) factors multiply the
    base step at each step (a decaying η_k = η·schedule[k]; None: constant). Vectorised over ``step_sizes``.
    With (c, ε, θ₀, κ) = (0, 0.05, (0.5, 0), 0) and 400 steps, η = 0.5, 0.9, 0.99 give J = 0.622, 0.711, 0.729.
    """
    eta = check_in_range("step_sizes", np.atleast_1d(step_sizes), 0.0, None)
    n_steps = check_int("n_steps", n_steps, 1)
    c = float(as_finite_array("offset", offset))
    eps = float(as_finite_array("slope", slope))
    kap = float(check_in_range("curvature_growth", curvature_growth, 0.0, None))
    if algorithm not in ("gap", "reinforce", "grpo"):
        raise ValueError(f"algorithm must be 'gap', 'reinforce' or 'grpo', got {algorithm!r}")
    rho = None if adaptive is None else float(check_in_range("adaptive", adaptive, 0.0, 2.0, low_inclusive=False,
                                                             high_inclusive=False))
    t0 = as_finite_array("theta0", theta0)
    if t0.shape != (2,):
        raise ValueError(f"theta0 must be a pair (theta1, theta2), got {theta0!r}")
    sigma = float(check_in_range("noise", noise, 0.0, None))
    factors = np.ones(n_steps) if schedule is None else check_in_range("schedule", schedule, 0.0, None)
    if factors.shape != (n_steps,):
        raise ValueError(f"schedule must give one factor per step, shape ({n_steps},), got {factors.shape}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    e_n = eta.shape[0]
    # The loop carries only the recursion θ_k → θ_{k+1}, on one (E,) array per coordinate, with the same float
    # operations in the same order as the stacked (E, 2) form (a sum over the two coordinates is one addition).
    # Everything else (f, ∇f, Δμ, ‖∇J‖², the local threshold) is an elementwise function of θ_k and the noise and
    # is evaluated once on the whole trajectory afterwards: the same numbers. The noise is one
    # (n_steps, E, 2) draw, which gives the same numbers in the same order as one (E, 2) draw per step.
    xi = sigma * rng.standard_normal((n_steps, e_n, 2)) if sigma > 0 else None
    t1s = np.empty((e_n, n_steps + 1))
    t2s = np.empty((e_n, n_steps + 1))
    t1s[:, 0], t2s[:, 0] = t0
    steps = np.empty((e_n, n_steps))
    with np.errstate(over="ignore", invalid="ignore"):
        t1, t2 = t1s[:, 0].copy(), t2s[:, 0].copy()
        for k in range(n_steps):
            h = np.exp(kap * t2)
            t1sq = t1 ** 2
            j = expit(c + eps * t2 - t1sq * h)
            g0 = -2.0 * t1 * h
            g1 = eps - kap * t1sq * h
            a = None if algorithm == "gap" else j * (1 - j) if algorithm == "reinforce" else np.sqrt(j * (1 - j))
            if xi is not None:
                g0, g1 = g0 + xi[k, :, 0], g1 + xi[k, :, 1]
            w0, w1 = (g0, g1) if a is None else (a * g0, a * g1)          # a = 1 for the gap direction
            step = eta * factors[k]
            if rho is not None:
                if xi is not None:
                    g0, g1 = -2.0 * t1 * h, eps - kap * t1sq * h
                wn2 = w0 ** 2 + w1 ** 2
                safe = np.where(wn2 > 0, rho * np.maximum(w0 * g0 + w1 * g1, 0) / (wn2 * 2.0 * h), np.inf)
                step = np.minimum(step, safe)
            steps[:, k] = step
            t1 = t1 + step * w0
            t2 = t2 + step * w1
            t1s[:, k + 1] = t1
            t2s[:, k + 1] = t2
        h_all = np.exp(kap * t2s)
        t1sq_all = t1s ** 2
        ell = c + eps * t2s - t1sq_all * h_all
        h, t1, t1sq = h_all[:, :-1], t1s[:, :-1], t1sq_all[:, :-1]
        g0 = -2.0 * t1 * h
        g1 = eps - kap * t1sq * h
        j = expit(ell)[:, :-1]
        jq = j * (1 - j)
        a = np.ones_like(j) if algorithm == "gap" else jq if algorithm == "reinforce" else np.sqrt(jq)
        if xi is not None:
            w0, w1 = a * (g0 + xi[:, :, 0].T), a * (g1 + xi[:, :, 1].T)
        else:
            w0, w1 = a * g0, a * g1
        dmu = w0 * g0 + w1 * g1
        g2 = jq ** 2 * (g0 ** 2 + g1 ** 2)
        thr = np.where(a > 0, 1.0 / (a * h), np.inf)
    th = np.stack([t1s, t2s], -1)
    ell = np.nan_to_num(ell, nan=-np.inf)
    return CurvedRun(success_rate=expit(ell), log_odds=ell, theta=th, step_sizes=steps, alignment=dmu,
                     grad_norm_sq=g2, local_threshold=thr)


COLLAPSE_FRACTION = 0.5
"""Default of the one collapse rule (open choice §6.9): a run collapses when its final success rate falls below this
fraction of its initial success rate."""


def is_collapsed(final_success: Any, initial_success: Any, fraction: float = COLLAPSE_FRACTION) -> np.ndarray:
    """The project's one collapse rule (open choice §6.9): ``final_success < fraction × initial_success``.

    Used by every notebook and sweep (bandits and real GRPO runs). Shapes broadcast; values in [0, 1].
    """
    jf = check_in_range("final_success", final_success, 0.0, 1.0)
    j0 = check_in_range("initial_success", initial_success, 0.0, 1.0)
    f = float(check_in_range("fraction", fraction, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
    return jf < f * j0


def first_collapse_bracket(step_sizes: Any, collapsed: Any) -> tuple[np.ndarray, np.ndarray]:
    """The bracket ``(low, high)`` around the first collapse of a sweep: ``high`` is the first collapsed step of the
    strictly increasing grid ``step_sizes`` (E,), ``low`` the grid step just below it. ``collapsed`` is (..., E).
    Where the smallest step already collapses, ``low`` is ``nan``; where none collapses, ``high`` is ``inf``
    (and ``low`` the largest step). The starting bracket of :func:`bisect_critical_step_size`."""
    eta = check_in_range("step_sizes", step_sizes, 0.0, None, low_inclusive=False)
    if eta.ndim != 1 or eta.size < 2 or np.any(np.diff(eta) <= 0):
        raise ValueError("step_sizes must be a strictly increasing 1-D grid with >= 2 values")
    col = np.asarray(collapsed, bool)
    if col.shape[-1] != eta.size:
        raise ValueError(f"collapsed must have shape (..., {eta.size}), got {col.shape}")
    first = np.argmax(col, axis=-1)
    anyc = col.any(-1)
    high = np.where(anyc, eta[first], np.inf)
    low = np.where(anyc, np.where(first == 0, np.nan, eta[np.maximum(first - 1, 0)]), eta[-1])
    return low, high


@dataclass(frozen=True)
class Bisection:
    """Result of :func:`bisect_critical_step_size`; arrays share the shape of the brackets."""

    low: np.ndarray
    """Largest step evaluated as not collapsed (``nan`` where the starting ``low`` already collapsed)."""
    high: np.ndarray
    """Smallest step evaluated as collapsed (``inf`` where the starting ``high`` did not collapse)."""
    estimate: np.ndarray
    """The critical step: geometric midpoint ``sqrt(low·high)``; ``nan`` / ``inf`` where not bracketed."""
    relative_width: np.ndarray
    """``(high − low) / estimate`` (``nan`` where not bracketed)."""
    bracketed: np.ndarray
    """Boolean: ``low`` did not collapse and ``high`` did."""
    n_calls: int
    """Calls of the predicate (each call evaluates every bracket still open, as one array)."""


def bisect_critical_step_size(is_collapsed_at: Callable[[np.ndarray], Any], low: Any, high: Any,
                              rel_tol: float = 0.02, *, max_iter: int = 200, check_bracket: bool = True
                              ) -> Bisection:
    """The project's one bisection of a critical step size (P2 spec §5.3 "empirical critical LR"; issue 9).

    ``is_collapsed_at(step_sizes, index)`` → booleans: ``step_sizes`` is a 1-D array of trial steps, ``index`` the
    flat indices (into ``low``/``high``) of the brackets they belong to; return one boolean per entry (the project's
    one rule, :func:`is_collapsed`, on a run at that step). ``low`` and ``high`` (broadcast together, any shape, 0 <
    low < high) are starting brackets, e.g. from :func:`first_collapse_bracket`. Each iteration evaluates the
    geometric midpoint of every bracket whose relative width ``(high − low)/sqrt(low·high)`` still exceeds
    ``rel_tol``, in **one** call, and keeps the half that still brackets the change. It assumes collapse is monotone
    in the step inside the bracket; if not, it returns one change point inside it. With ``check_bracket`` the
    endpoints are evaluated first: a bracket whose ``low`` collapses gets ``nan``, one whose ``high`` does not gets
    ``inf`` (the conventions of :func:`empirical_critical_step_size`); ``nan`` endpoints pass through as ``nan``.

    >>> b = bisect_critical_step_size(lambda e, i: e > 2.0, 1.0, 10.0, rel_tol=1e-3)
    >>> bool(abs(b.estimate - 2.0) < 2e-3 and b.relative_width <= 1e-3)
    True
    """
    lo0 = np.asarray(low, float)
    hi0 = np.asarray(high, float)
    shape = np.broadcast_shapes(lo0.shape, hi0.shape)
    lo = np.broadcast_to(lo0, shape).astype(float).ravel()
    hi = np.broadcast_to(hi0, shape).astype(float).ravel()
    tol = float(check_in_range("rel_tol", rel_tol, 0.0, None, low_inclusive=False))
    max_iter = check_int("max_iter", max_iter, 1)
    given = np.isfinite(lo) & np.isfinite(hi)
    if np.any(given & ~((lo > 0) & (hi > lo))):
        raise ValueError(f"low and high must satisfy 0 < low < high, got low={lo[given][:3].tolist()}, "
                         f"high={hi[given][:3].tolist()}")
    n = lo.size
    ok = given.copy()
    res_lo = np.where(given, lo, np.where(np.isnan(lo), np.nan, lo))
    res_hi = hi.copy()
    calls = 0

    def call(steps: np.ndarray, idx: np.ndarray) -> np.ndarray:
        out = np.asarray(is_collapsed_at(steps, idx), bool).reshape(-1)
        if out.shape != steps.shape:
            raise ValueError(f"is_collapsed_at must return one boolean per trial step ({steps.size}), got shape "
                             f"{np.shape(out)}")
        return out

    if check_bracket and ok.any():
        idx = np.nonzero(ok)[0]
        c = call(np.r_[lo[idx], hi[idx]], np.r_[idx, idx])
        calls += 1
        low_col, high_col = c[: idx.size], c[idx.size:]
        res_lo[idx[low_col]] = np.nan
        res_hi[idx[~high_col & ~low_col]] = np.inf
        ok[idx[low_col | ~high_col]] = False
    for _ in range(max_iter):
        width = np.where(ok, (res_hi - res_lo) / np.sqrt(np.where(ok, res_lo * res_hi, 1.0)), 0.0)
        open_ = ok & (width > tol)
        if not open_.any():
            break
        idx = np.nonzero(open_)[0]
        mid = np.sqrt(res_lo[idx] * res_hi[idx])
        c = call(mid, idx)
        calls += 1
        res_hi[idx[c]] = mid[c]
        res_lo[idx[~c]] = mid[~c]
    est = np.where(ok, np.sqrt(np.where(ok, res_lo * res_hi, 1.0)), np.where(np.isnan(res_lo), np.nan, np.inf))
    width = np.where(ok, (res_hi - res_lo) / np.where(ok, est, 1.0), np.nan)
    rs = lambda a: a.reshape(shape)  # noqa: E731
    return Bisection(low=rs(res_lo), high=rs(res_hi), estimate=rs(est), relative_width=rs(width),
                     bracketed=rs(ok), n_calls=calls)


def empirical_critical_step_size(step_sizes: Any, collapsed: Any) -> np.ndarray:
    """The project's one estimate of the critical step from a sweep (open choice §6.9): the geometric midpoint
    √(η_stable·η_collapsed) of the bracket between the largest step strictly below the first collapsed one and that
    first collapsed step. Its relative uncertainty is the half-width of the bracket in log space.

    ``step_sizes`` (E,) strictly increasing; ``collapsed`` (..., E) booleans (:func:`is_collapsed`). Returns (...,):
    ``nan`` when the smallest step already collapses, ``inf`` when none does.
    """
    low, high = first_collapse_bracket(step_sizes, collapsed)
    return np.where(np.isinf(high), np.inf, np.sqrt(low * np.where(np.isinf(high), 1.0, high)))


@dataclass(frozen=True)
class PowerLawFit:
    """``y ≈ prefactor · x^exponent`` from a log-log least-squares line."""

    exponent: float
    prefactor: float
    r_squared: float
    exponent_standard_error: float


def fit_power_law(x: Any, y: Any) -> PowerLawFit:
    """Least-squares fit of ``log y = log a + α log x`` (both positive, at least 3 finite points)."""
    xa = check_in_range("x", x, 0.0, None, low_inclusive=False)
    ya = check_in_range("y", y, 0.0, None, low_inclusive=False)
    if xa.shape != ya.shape or xa.ndim != 1 or xa.size < 3:
        raise ValueError(f"x and y must be 1-D of equal length >= 3, got {xa.shape} and {ya.shape}")
    lx, ly = np.log(xa), np.log(ya)
    a_mat = np.stack([np.ones_like(lx), lx], 1)
    coef, *_ = np.linalg.lstsq(a_mat, ly, rcond=None)
    resid = ly - a_mat @ coef
    ss_res = float(resid @ resid)
    ss_tot = float(((ly - ly.mean()) ** 2).sum())
    dof = max(xa.size - 2, 1)
    se = np.sqrt(ss_res / dof / ((lx - lx.mean()) ** 2).sum())
    return PowerLawFit(exponent=float(coef[1]), prefactor=float(np.exp(coef[0])),
                       r_squared=1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0, exponent_standard_error=float(se))


@dataclass(frozen=True)
class SlopeEstimate:
    """Mean of per-unit log-log slopes with a percentile bootstrap interval over the units (seeds or instances)."""

    mean: float
    ci: tuple[float, float]
    slopes: np.ndarray
    """One slope per unit whose estimates are all finite."""
    n_dropped: int
    """Units left out because some estimate was ``nan`` or ``inf`` (not located)."""


def slope_over_units(x: Any, estimates: Any, rng: np.random.Generator, n_boot: int = 4000,
                     level: float = 0.95, min_points: int | None = None, min_decades: float = 0.0) -> SlopeEstimate:
    """Per-unit OLS slope of ``log estimates`` on ``log x`` (:func:`fit_power_law`), their mean, and a percentile
    bootstrap interval of the mean over units (``n_boot`` resamples drawn from ``rng``).

    ``estimates`` is (units, len(x)), e.g. the bisected critical step of each seed at each length (P2-C7/C9: "95 % CI
    by bootstrap over seeds/instances"). Units with a non-finite estimate are dropped and counted. With
    ``min_points`` a unit keeps its finite points instead, and is dropped only when fewer than ``min_points`` of them
    remain or they span less than ``min_decades`` decades of ``x`` (P2-C8: ">= 4 operating points spanning >= 1
    decade"); ``x`` may then also be (units, len) with one row of abscissae per unit.

    >>> est = slope_over_units([1, 10, 100], [[1, .1, .01], [2, .2, .02]], np.random.default_rng(0))
    >>> round(est.mean, 6), est.n_dropped
    (-1.0, 0)
    """
    xa = check_in_range("x", x, 0.0, None, low_inclusive=False)
    ea = np.asarray(estimates, float)
    n_x = xa.shape[-1] if xa.ndim else 1
    if ea.ndim != 2 or ea.shape[1] != n_x or xa.ndim > 2 or (xa.ndim == 2 and (min_points is None or
                                                                             xa.shape != ea.shape)):
        raise ValueError(f"estimates must be (units, {n_x}) (x of shape (units, len) needs min_points), got "
                         f"estimates {ea.shape}, x {xa.shape}")
    n_boot = check_int("n_boot", n_boot, 1)
    level = float(check_in_range("level", level, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
    fin = np.isfinite(ea) & (ea > 0)
    xs = np.broadcast_to(xa, ea.shape)
    if min_points is None:
        ok = np.all(fin, 1)
    else:
        k = check_int("min_points", min_points, 3)
        span = np.array([np.log10(r[f].max() / r[f].min()) if f.any() else 0.0 for r, f in zip(xs, fin)])
        ok = (fin.sum(1) >= k) & (span >= float(min_decades))
    slopes = np.array([fit_power_law(xs[i][fin[i]], ea[i][fin[i]]).exponent for i in np.nonzero(ok)[0]])
    if slopes.size == 0:
        return SlopeEstimate(float("nan"), (float("nan"), float("nan")), slopes, int((~ok).sum()))
    boot = rng.choice(slopes, (n_boot, slopes.size)).mean(1)
    tail = 100 * (1 - level) / 2
    return SlopeEstimate(float(slopes.mean()), tuple(float(v) for v in np.percentile(boot, [tail, 100 - tail])),
                         slopes, int((~ok).sum()))


def token_level_step_bound(length: Any, success_rate: Any, alignment: Any, token_smoothness: float = 1.0,
                           token_score_bound: float = 1.0) -> np.ndarray:
    """Theorem-3 guaranteed-progress step ``(1 − J)[Δμ]₊ / (T (L + G²))`` (P2 spec §3.6; constants are [?])."""
    t = check_in_range("length", length, 0.0, None, low_inclusive=False)
    j = check_in_range("success_rate", success_rate, 0.0, 1.0)
    dmu = as_finite_array("alignment", alignment)
    l_ = float(check_in_range("token_smoothness", token_smoothness, 0.0, None))
    g = float(check_in_range("token_score_bound", token_score_bound, 0.0, None))
    return (1.0 - j) * np.maximum(dmu, 0.0) / (t * (l_ + g ** 2))
