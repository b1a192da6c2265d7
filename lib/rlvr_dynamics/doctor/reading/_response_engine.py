"""The numerical engine behind :mod:`.response_laws`: unit responses, data-scaled shape grids, variable projection
of (R0, R∞) and a bounded Levenberg–Marquardt refinement with analytic Jacobians.

Time is in units of the fitted window, so every shape parameter is O(1). Nothing here knows about runs or
reports; :func:`.response_laws.fit_response` is the public entry point.
"""
from __future__ import annotations

import math

import numpy as np

# ---------------------------------------------------------------------------------------------------------------
# Unit responses (time in units of the fitted window, so every shape parameter is O(1))
# ---------------------------------------------------------------------------------------------------------------

def _u_single(s, th):
    """th = (log T,): e^{−s/T}."""
    th = np.asarray(th, dtype=float)
    return np.exp(-np.multiply.outer(np.exp(-th[..., 0]), s))


def _u_over(s, th):
    """th = (log T_s, q = T_f/T_s ∈ (0, 1]): (T_s e^{−s/T_s} − T_f e^{−s/T_f})/(T_s − T_f), stable at q → 1."""
    th = np.asarray(th, dtype=float)
    ts = np.exp(th[..., 0])[..., None]
    q = np.clip(th[..., 1], 1e-9, 1.0)[..., None]
    a = 1.0 / ts                      # slow rate
    b = a / q                         # fast rate
    gamma, half = 0.5 * (a + b), 0.5 * (b - a)
    x = half * s
    small = np.abs(x) < 1e-4
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ea, eb = np.exp(-a * s), np.exp(-b * s)
        safe = np.where(half > 0, half, 1.0)
        big = 0.5 * (ea + eb) + gamma * 0.5 * (ea - eb) / safe
        if not small.any():
            return big
        sm = np.exp(-gamma * s) * ((1 + x * x / 2) + gamma * s * (1 + x * x / 6))
    return np.where(small, sm, big)


def _u_osc(s, th):
    """th = (a, log ω_d): e^{−a s}[cos ω_d s + (a/ω_d) sin ω_d s] (a < 0 grows)."""
    th = np.asarray(th, dtype=float)
    a = th[..., 0][..., None]
    wd = np.exp(th[..., 1])[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.exp(-a * s) * (np.cos(wd * s) + a / wd * np.sin(wd * s))


_UNIT = {"single_exponential": _u_single, "overdamped": _u_over, "oscillatory": _u_osc}
_SHAPE_NAMES = {"single_exponential": ("log_timescale",), "overdamped": ("log_t_slow", "t_fast_over_t_slow"),
                "oscillatory": ("decay_rate", "log_omega_d")}


def _shape_bounds(law: str, dt: float, horizon: float = 1.0, stable: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the shape parameters in window units (window = 1): times within [dt/4, 30 windows]; q ∈ [1e-3, 1];
    decay rate within [−10, 4/dt] (growth at most e¹⁰ over the window; within [0, 4/dt] when ``stable``: the best
    non-growing oscillation); ω_d within [π/2, π/dt] (at least a quarter period in the window, at most Nyquist)."""
    lt_lo, lt_hi = math.log(max(dt / 4, 1e-6)), math.log(30.0)
    if law == "single_exponential":
        return np.array([lt_lo]), np.array([lt_hi])
    if law == "overdamped":
        return np.array([lt_lo, 1e-3]), np.array([lt_hi, 1.0])
    return (np.array([0.0 if stable else -10.0, math.log(math.pi / 2)]),
            np.array([4.0 / max(dt, 1e-6), math.log(math.pi / max(dt, 1e-6))]))


def _omega_candidates(s: np.ndarray, y: np.ndarray, lo: float, hi: float, n_peaks: int = 4) -> np.ndarray:
    """Data-driven ω_d starting values (window units): the highest peaks of the periodogram of y minus its linear
    trend (zero-padded ×4, points taken as evenly spaced), each with ±3 %, plus a few slow values below two
    periods per window that no periodogram resolves."""
    slow = np.linspace(lo, min(hi, 4 * math.pi), 8)
    if y.size < 8:
        return slow
    resid = y - np.polyval(np.polyfit(s, y, 1), s)
    m = 4 * y.size
    power = np.abs(np.fft.rfft(resid, n=m)) ** 2
    omega = 2 * math.pi * np.fft.rfftfreq(m, d=(s[-1] - s[0]) / max(y.size - 1, 1))
    ok = (omega >= lo) & (omega <= hi)
    idx = np.flatnonzero(ok[1:-1] & (power[1:-1] >= power[:-2]) & (power[1:-1] >= power[2:])) + 1
    top = omega[idx[np.argsort(power[idx])[::-1][:n_peaks]]]
    cands = np.concatenate([slow, (top[:, None] * np.array([0.97, 1.0, 1.03])).ravel()])
    return np.clip(cands, lo, hi)


def _shape_grid(law: str, dt: float, s: np.ndarray | None = None, y: np.ndarray | None = None,
                stable: bool = False) -> np.ndarray:
    lo, hi = _shape_bounds(law, dt, stable=stable)
    if law == "single_exponential":
        return np.linspace(lo[0], hi[0], 48)[:, None]
    if law == "overdamped":
        lt = np.linspace(lo[0], min(hi[0], math.log(10.0)), 24)
        q = np.array([0.002, 0.01, 0.05, 0.15, 0.35, 0.6, 0.85, 1.0])
        return np.array(np.meshgrid(lt, q, indexing="ij")).reshape(2, -1).T
    rate = np.concatenate([[0.0] if stable else [-9.0, -6.5, -4.5, -3.0, -1.8, -0.9, -0.3],
                           np.geomspace(0.1, min(hi[0], 200.0), 9)])
    if s is None:
        lw = np.linspace(lo[1], min(hi[1], math.log(150.0)), 36)
    else:
        lw = np.log(_omega_candidates(s, y, math.exp(lo[1]), math.exp(hi[1])))
    return np.array(np.meshgrid(rate, lw, indexing="ij")).reshape(2, -1).T



def _model(law, theta, s):
    u = _UNIT[law](s, theta[2:])
    return theta[1] + (theta[0] - theta[1]) * u


def _u_and_grad(law, s, sh):
    """u(s) and ∂u/∂(shape parameters) (n × k_shape), sharing the transcendental evaluations: analytic for every
    law except the overdamped one within 2 % of critical (q > 0.98), where one-sided differences are used (the
    closed form is 0/0 there)."""
    if law == "single_exponential":
        rate = math.exp(-sh[0])
        u = np.exp(-rate * s)
        return u, (u * s * rate)[:, None]
    if law == "oscillatory":
        a, w = sh[0], math.exp(sh[1])
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(-a * s)
            sn, cs = np.sin(w * s), np.cos(w * s)
            u = e * (cs + (a / w) * sn)
            return u, np.stack([-s * u + e * sn / w, e * (-w * s * sn - (a / w) * sn + a * s * cs)], axis=1)
    ts, q = math.exp(sh[0]), float(sh[1])
    if q > 0.98:
        u = _u_over(s, sh)
        cols = []
        for j in range(2):
            h = 1e-7 * max(1.0, abs(sh[j]))
            tp = sh.copy()
            if j == 1 and tp[j] + h > 1.0:
                h = -h
            tp[j] += h
            cols.append((_u_over(s, tp) - u) / h)
        return u, np.stack(cols, axis=1)
    x = s / ts
    with np.errstate(over="ignore", invalid="ignore"):
        ex, exq = np.exp(-x), np.exp(-x / q)
        u = (ex - q * exq) / (1 - q)
        du_dx = (exq - ex) / (1 - q)
        du_dq = (ex - exq * (1 + x / q - x)) / (1 - q) ** 2
    return u, np.stack([-x * du_dx, du_dq], axis=1)


def _jacobian(law, theta, s, u=None):
    """∂model/∂θ (n × k) at θ = (r0, r_inf, shape…)."""
    u, du = _u_and_grad(law, s, np.asarray(theta[2:], dtype=float))
    amp = theta[0] - theta[1]
    return np.column_stack([u, 1.0 - u, amp * du])


def _profile(U, y, w, rb):
    """Closed-form weighted least squares of y ≈ r_inf(1−u) + r0 u for each row of U (G × n); (r0, r_inf) clipped to
    the reward bounds ``rb``. Returns (r0, r_inf, weighted RSS)."""
    V = 1.0 - U
    a11 = (w * U * U).sum(1)
    a12 = (w * U * V).sum(1)
    a22 = (w * V * V).sum(1)
    b1 = (w * U) @ y
    b2 = (w * V) @ y
    det = a11 * a22 - a12 * a12
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r0 = np.where(np.abs(det) > 1e-14 * (a11 * a22 + 1e-300), (a22 * b1 - a12 * b2) / det, b1 / np.maximum(a11 + a12, 1e-300))
        ri = np.where(np.abs(det) > 1e-14 * (a11 * a22 + 1e-300), (a11 * b2 - a12 * b1) / det, r0)
    if rb is not None:
        r0 = np.clip(r0, rb[0], rb[1])
        ri = np.clip(ri, rb[0], rb[1])
    r0 = np.nan_to_num(r0)
    ri = np.nan_to_num(ri)
    pred = ri[:, None] + (r0 - ri)[:, None] * U
    rss = (w * (y - pred) ** 2).sum(1)
    return r0, ri, np.where(np.isfinite(rss), rss, np.inf)


def _lm(law, theta, s, y, sw, lo, hi, max_iter=20):
    """Projected Levenberg–Marquardt on the weighted residuals sw·(model − y) within the box [lo, hi]."""
    def resid(th):
        r = sw * (_model(law, th, s) - y)
        return r, float(r @ r) if np.all(np.isfinite(r)) else math.inf
    r, cost = resid(theta)
    lam = 1e-3
    rel = moved = 1.0
    for _ in range(max_iter):
        J = sw[:, None] * _jacobian(law, theta, s)
        if not np.all(np.isfinite(J)):
            break
        g = J.T @ r
        A = J.T @ J
        d = np.diag(A).copy()
        d[d <= 0] = 1.0
        improved = False
        for _ in range(8):
            try:
                step = -np.linalg.solve(A + lam * np.diag(d), g)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            cand = np.clip(theta + step, lo, hi)
            rc, cc = resid(cand)
            if cc < cost:
                rel = (cost - cc) / max(cost, 1e-300)
                moved = float(np.max(np.abs(cand - theta) / (hi - lo)))
                theta, r, cost = cand, rc, cc
                lam = max(lam / 5, 1e-9)
                improved = True
                break
            lam *= 8
        if not improved or rel < 1e-6 or moved < 1e-7:
            break
    return theta, cost


def _fit_one(law, s, y, w, rb, dt, stable: bool = False) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Grid + variable projection, then bounded LM; ``stable`` keeps the oscillatory decay rate ≥ 0."""
    lo_s, hi_s = _shape_bounds(law, dt, stable=stable)
    grid = _shape_grid(law, dt, s, y, stable=stable)
    stride = max(1, s.size // 200)
    U = _UNIT[law](s[::stride], grid)
    r0, ri, rss = _profile(U, y[::stride], w[::stride], rb)
    best = int(np.argmin(rss))
    theta = np.concatenate([[r0[best], ri[best]], grid[best]])
    span = max(float(np.ptp(y)), 1e-12)
    if rb is None:
        rlo, rhi = float(y.min()) - 3 * span, float(y.max()) + 3 * span
    else:
        rlo, rhi = rb
    lo = np.concatenate([[rlo, rlo], lo_s])
    hi = np.concatenate([[rhi, rhi], hi_s])
    theta = np.clip(theta, lo, hi)
    sw = np.sqrt(w)
    if stride > 1:   # converge on the subsample, then polish on every point
        theta, _ = _lm(law, theta, s[::stride], y[::stride], sw[::stride], lo, hi, max_iter=15)
        theta, cost = _lm(law, theta, s, y, sw, lo, hi, max_iter=5)
    else:
        theta, cost = _lm(law, theta, s, y, sw, lo, hi)
    return theta, cost, lo, hi
