"""Generic learning-curve families of Domhan, Springenberg & Hutter (2015), each a pure function and a fast bounded
fit: the baselines (and ensemble members) of :mod:`.forecast`.

=========  ==============================================  ======================================================
family     curve                                           parameters (as fitted)
=========  ==============================================  ======================================================
``mmf``    :math:`\\alpha - (\\alpha-\\beta)/(1+(\\kappa t)^\\delta)`  α (plateau), β (value at t = 0), κ > 0, δ > 0
``weibull``  :math:`\\alpha - (\\alpha-\\beta)\\,e^{-(\\kappa t)^\\delta}`   α (plateau), β (value at t = 0), κ > 0, δ > 0
``pow3``   :math:`c - a\\,t^{-\\alpha}` (t > 0)                 c (plateau), a, α > 0
=========  ==============================================  ======================================================

Every family is linear in its two level parameters ((α, β) or (c, a)) once the shape ((κ, δ) or α) is fixed, so the
fit is by **variable projection**: a log-spaced grid over the shape (in units of the fitted window, so the grid
fits any step axis) with the level parameters solved in closed form at each grid point (least squares on a ≤ 200-point
subsample), then a bounded refinement of all parameters (:func:`.bounded_lsq.bounded_least_squares`, projected
Levenberg–Marquardt; it was ``scipy.optimize.least_squares``, trust-region reflective, before 2026-12-03,
≤ 60 evaluations) on every point. Shape bounds (window units W = t_last − t_first, or steps for pow3):
κ·W ∈ [1e-2, 1e2], δ ∈ [0.2, 8]; pow3's α ∈ [1e-3, 4]. The level parameters are bounded to the observed range
widened by 5× on either side (never infinite). A fit returns ``None`` when fewer than 5 finite points or a constant
series are given (nothing to fit), never raises on such data, and never returns non-finite parameters.

``t`` for ``mmf``/``weibull`` is the time since the first fitted step (so t = 0 is the start); pow3 is singular at
t = 0, so :func:`fit_curve` fits it on x = (t − t_first)/Δt + 1 (the step count from 1, Δt the median logging
interval) and :class:`CurveFit.predict` maps back.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["mmf", "weibull", "pow3", "CURVE_FAMILIES", "CurveFit", "fit_curve", "fit_mmf", "fit_weibull",
           "fit_pow3"]

CURVE_FAMILIES = ("mmf", "weibull", "pow3")
"""The learning-curve families fitted here (Domhan et al. 2015)."""


def mmf(t, alpha, beta, kappa, delta):
    """MMF (Morgan–Mercer–Flodin) curve α − (α − β)/(1 + (κt)^δ) (Domhan et al. 2015, Table 1); t ≥ 0."""
    t = np.asarray(t, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return alpha - (alpha - beta) / (1.0 + np.power(np.maximum(kappa * t, 0.0), delta))


def weibull(t, alpha, beta, kappa, delta):
    """Weibull curve α − (α − β)·exp(−(κt)^δ) (Domhan et al. 2015, Table 1); t ≥ 0."""
    t = np.asarray(t, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        return alpha - (alpha - beta) * np.exp(-np.power(np.maximum(kappa * t, 0.0), delta))


def pow3(t, c, a, alpha):
    """pow3 curve c − a·t^(−α) (Domhan et al. 2015, Table 1); t > 0."""
    t = np.asarray(t, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return c - a * np.power(t, -alpha)


# unit shape functions g(t; shape) with curve = level1 + (level2 − level1)·g … written as: y = p0·(1 − g) + p1·g
def _g_mmf(t, log_k, d):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return 1.0 / (1.0 + np.power(np.multiply.outer(np.exp(log_k), t), np.asarray(d)[..., None]))


def _g_weibull(t, log_k, d):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.exp(-np.power(np.multiply.outer(np.exp(log_k), t), np.asarray(d)[..., None]))


def _g_pow3(x, alpha):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.power(x[None, :], -np.asarray(alpha)[:, None])


_KAPPA_W = (1e-2, 1e2)
_DELTA = (0.2, 8.0)
_ALPHA_POW3 = (1e-3, 4.0)
_LEVEL_WIDEN = 5.0


@dataclass(frozen=True)
class CurveFit:
    """A fitted learning curve; ``params`` in the family's own parameters (times in steps)."""

    family: str
    params: tuple[float, ...]
    """(α, β, κ, δ) for mmf/weibull with κ per step; (c, a, α) for pow3 on the step count x = (t − t0)/dt + 1."""
    t0: float
    """The first fitted step (t = 0 of mmf/weibull)."""
    dt: float
    """The median logging interval (pow3's unit of x)."""
    rss: float
    """Residual sum of squares on the fitted points."""

    def predict(self, steps) -> np.ndarray:
        """The curve at optimizer ``steps`` (same axis as the fitted log)."""
        s = np.asarray(steps, dtype=float)
        if self.family == "mmf":
            return mmf(s - self.t0, *self.params)
        if self.family == "weibull":
            return weibull(s - self.t0, *self.params)
        return pow3((s - self.t0) / self.dt + 1.0, *self.params)


def _linear_levels(G: np.ndarray, y: np.ndarray):
    """Closed-form least squares of y ≈ p0·(1 − g) + p1·g for each row g of G: (p0, p1, rss)."""
    U, V = 1.0 - G, G
    a11, a12, a22 = (U * U).sum(1), (U * V).sum(1), (V * V).sum(1)
    b1, b2 = U @ y, V @ y
    det = a11 * a22 - a12 * a12
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        good = np.abs(det) > 1e-12 * (a11 * a22 + 1e-300)
        p0 = np.where(good, (a22 * b1 - a12 * b2) / np.where(good, det, 1.0), np.nan)
        p1 = np.where(good, (a11 * b2 - a12 * b1) / np.where(good, det, 1.0), np.nan)
        rss = ((y[None, :] - p0[:, None] * U - p1[:, None] * V) ** 2).sum(1)
    rss = np.where(np.isfinite(rss) & good, rss, np.inf)
    return p0, p1, rss


def finite_curve(steps, reward) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, reward)`` as flat float arrays restricted to the points where both are finite (ValueError naming
    both when their lengths differ). Shared by the forecast and the curve fits."""
    t = np.asarray(steps, dtype=float).ravel()
    y = np.asarray(reward, dtype=float).ravel()
    if t.shape != y.shape:
        raise ValueError(f"steps and reward must have the same length, got {t.size} and {y.size}")
    ok = np.isfinite(t) & np.isfinite(y)
    return t[ok], y[ok]


def _prepare(steps, reward):
    t, y = finite_curve(steps, reward)
    order = np.argsort(t, kind="stable")
    return t[order], y[order]


def fit_curve(steps, reward, family: str) -> CurveFit | None:
    """Fit one family (module docstring) to ``reward`` at ``steps``; ``None`` when there is nothing to fit."""
    from .bounded_lsq import bounded_least_squares

    if family not in CURVE_FAMILIES:
        raise ValueError(f"family must be one of {CURVE_FAMILIES}, got {family!r}")
    t, y = _prepare(steps, reward)
    n = t.size
    if n < 5 or float(np.ptp(y)) == 0.0 or float(np.ptp(t)) == 0.0:
        return None
    t0 = float(t[0])
    dts = np.diff(t)
    dt = float(np.median(dts[dts > 0]))
    win = float(t[-1] - t0)
    span = float(np.ptp(y))
    lev_lo, lev_hi = float(y.min()) - _LEVEL_WIDEN * span, float(y.max()) + _LEVEL_WIDEN * span
    stride = max(1, n // 200)
    ts, ys = t[::stride], y[::stride]
    if family == "pow3":
        x, xs = (t - t0) / dt + 1.0, (ts - t0) / dt + 1.0
        grid = np.geomspace(*_ALPHA_POW3, 40)
        G = _g_pow3(xs, grid)
        p0, p1, rss = _linear_levels(G, ys)
        j = int(np.argmin(rss))
        if not np.isfinite(rss[j]):
            return None
        # y = p0(1 − g) + p1 g = c − a x^{-α} with c = p0, a = p0 − p1
        c0, a0, al0 = p0[j], p0[j] - p1[j], grid[j]
        lo = np.array([lev_lo, -(lev_hi - lev_lo) * 10, _ALPHA_POW3[0]])
        hi = np.array([lev_hi, (lev_hi - lev_lo) * 10, _ALPHA_POW3[1]])
        x0 = np.clip([c0, a0, al0], lo, hi)

        def resid(p):
            return pow3(x, *p) - y
        scale_t = None
    else:
        tau = (t - t0) / win
        taus = (ts - t0) / win
        lk = np.linspace(math.log(_KAPPA_W[0]), math.log(_KAPPA_W[1]), 25)
        dd = np.geomspace(*_DELTA, 12)
        LK, DD = (a.ravel() for a in np.meshgrid(lk, dd, indexing="ij"))
        gfun = _g_mmf if family == "mmf" else _g_weibull
        G = gfun(taus, LK, DD)
        p0, p1, rss = _linear_levels(G, ys)
        j = int(np.argmin(rss))
        if not np.isfinite(rss[j]):
            return None
        # y = p0(1 − g) + p1 g: α = p0 (plateau), β = p1 (value at t = 0)
        lo = np.array([lev_lo, lev_lo, lk[0], _DELTA[0]])
        hi = np.array([lev_hi, lev_hi, lk[-1], _DELTA[1]])
        x0 = np.clip([p0[j], p1[j], LK[j], DD[j]], lo, hi)
        fn = mmf if family == "mmf" else weibull

        def resid(p):
            return fn(tau, p[0], p[1], math.exp(p[2]), p[3]) - y
        scale_t = win
    x0 = np.minimum(np.maximum(x0, lo + 1e-9 * (hi - lo)), hi - 1e-9 * (hi - lo))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = bounded_least_squares(resid, x0, lo, hi, max_nfev=60, xtol=1e-10, ftol=1e-10)
        p = r.x
        cost = float(2 * r.cost)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        p, cost = x0, float(np.sum(resid(x0) ** 2))
    if not (np.all(np.isfinite(p)) and math.isfinite(cost)):
        return None
    if scale_t is None:
        params = tuple(float(v) for v in p)
    else:
        params = (float(p[0]), float(p[1]), math.exp(float(p[2])) / scale_t, float(p[3]))
    return CurveFit(family, params, t0, dt, cost)


def fit_mmf(steps, reward) -> CurveFit | None:
    """:func:`fit_curve` with the MMF family."""
    return fit_curve(steps, reward, "mmf")


def fit_weibull(steps, reward) -> CurveFit | None:
    """:func:`fit_curve` with the Weibull family."""
    return fit_curve(steps, reward, "weibull")


def fit_pow3(steps, reward) -> CurveFit | None:
    """:func:`fit_curve` with the pow3 family."""
    return fit_curve(steps, reward, "pow3")
