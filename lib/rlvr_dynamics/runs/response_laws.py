"""The linear second-order step response in every regime, fitted fast and noise-aware (P1 spec §3.3–3.7) [D].

P1's oscillator :math:`M\\ddot e + C\\dot e + K e = 0` started from rest (:math:`e(0)=R_0-R_\\infty`,
:math:`\\dot e(0)=0`) gives :math:`R(t) = R_\\infty + (R_0-R_\\infty)\\,u(t)` with a unit response :math:`u` whose shape
depends on the damping ratio :math:`\\zeta = C/(2\\sqrt{MK})` and :math:`\\omega_0=\\sqrt{K/M}`:

=====================  ================================================================  =========================
law                    unit response :math:`u(t)`                                        regime
=====================  ================================================================  =========================
``single_exponential`` :math:`e^{-t/T}`                                                  first-order limit M → 0
``overdamped``         :math:`(T_s e^{-t/T_s} - T_f e^{-t/T_f})/(T_s-T_f)`, T_f ≤ T_s   ζ ≥ 1 (P1's three-phase)
``oscillatory``        :math:`e^{-at}[\\cos\\omega_d t + (a/\\omega_d)\\sin\\omega_d t]`     a > 0: underdamped
                                                                                         (0 < ζ < 1); a < 0:
                                                                                         growing (ζ < 0, unstable)
=====================  ================================================================  =========================

with :math:`a=\\zeta\\omega_0`, :math:`\\omega_d=\\omega_0\\sqrt{1-\\zeta^2}`. Every law is linear in
:math:`(R_0, R_\\infty)`; the nonlinear shape parameters are found by a vectorised grid over data-scaled values
(variable projection: :math:`R_0, R_\\infty` solved in closed form at each grid point), then a
Levenberg–Marquardt refinement of all parameters with the analytic Jacobian in :math:`R_0, R_\\infty` and central
differences in the shape parameters. No blind multi-start: one fit of a 1,000-step log takes a few milliseconds
(``bench/bench_runs.py``).

**Noise.** :math:`\\sigma = \\mathrm{std}(\\Delta r)/\\sqrt2` (differences cancel the slow trend), computed
robustly over the 95 % of steps nearest the median step (the same for Gaussian noise; a rise over a few steps no
longer counts as noise, :func:`step_sigma`); residuals
are weighted by :math:`1/\\sigma^2`, so the weighted χ²/(n−k) reads ≈ 1 when a law leaves only step noise. A
local :math:`\\sigma_t` (``local_weights=True``: the same estimate in a sliding window) is optional and off by
default: during a fast rise the step-to-step differences carry the trend, inflate :math:`\\sigma_t` and would
discount exactly the points that identify the law. The noise ceiling
:math:`1-\\sigma^2/\\mathrm{Var}(r)` is the best R² any smooth law can reach and is reported beside every R².

**Uncertainty.** Parameter covariance :math:`s^2 (J^\\top W J)^{-1}` at the optimum, with
:math:`s^2=\\max(\\chi^2/(n-k), 1)\\cdot(1+\\rho)/(1-\\rho)`: the reduced χ² (never below the noise the run shows)
inflated for the lag-1 autocorrelation ρ of the residuals (a slow wander the law misses makes the points count
less). Intervals of derived quantities (ζ, the stability margin, a forecast) follow by the delta method.

**At a bound.** A shape parameter that ends at its bound is not identified by the data: the fit's status is
``"at bound"`` with a sentence saying what that means (e.g. T_f below one step: the curve is a single exponential;
ω_d below half a period over the run: no oscillation is resolved), never ``"reliable"``.

**Choice.** AIC and BIC (Gaussian, weighted residuals) over the three laws; the preferred law is the lowest BIC
among the fits that are not ``"failed"``, the simpler law winning ties within 2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

LAW_NAMES = ("single_exponential", "overdamped", "oscillatory")
"""The response laws fitted by :func:`fit_response_laws`."""
Z80 = 1.2815515655446004
"""Standard-normal quantile of 0.9: an 80 % two-sided interval is ± Z80·sd."""


# ---------------------------------------------------------------------------------------------------------------
# Noise
# ---------------------------------------------------------------------------------------------------------------

_TRIM_SD = 0.8796
"""Standard deviation of a standard normal truncated to ±1.96 (its central 95 %)."""


def step_sigma(y: np.ndarray, *, robust: bool = True) -> float:
    """σ of the step noise from first differences. ``robust`` (default): the RMS deviation of Δr from its median
    over the 95 % of steps closest to it, divided by 0.8796 (the same for Gaussian noise) and √2 — the few large
    steps of a fast rise or a collapse no longer count as noise, and discrete rewards (many equal steps, where a
    MAD would be 0) are still measured. ``robust=False``: std(Δr)/√2. Finite values only; 0 for < 3 points."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    if y.size < 3:
        return 0.0
    d = np.diff(y)
    plain = float(np.std(d, ddof=1) / math.sqrt(2.0))
    if not robust:
        return plain
    dev = np.abs(d - np.median(d))
    keep = dev <= np.quantile(dev, 0.95)
    if keep.sum() < 3:
        return plain
    trimmed = float(np.sqrt(np.mean((d[keep] - np.median(d)) ** 2))) / _TRIM_SD / math.sqrt(2.0)
    return trimmed if trimmed > 0 else plain


def local_sigma(y: np.ndarray, window: int | None = None) -> np.ndarray:
    """σ_t: std(Δr)/√2 over a centred sliding window (default max(10, n/10) steps), floored at half the global σ
    (and at 1e-12 × the reward scale), so one quiet stretch cannot take all the weight."""
    y = np.asarray(y, dtype=float)
    n = y.size
    glob = step_sigma(y)
    scale = max(float(np.ptp(y)) if n else 0.0, float(np.max(np.abs(y))) if n else 0.0, 1e-300)
    floor = max(0.5 * glob, 1e-12 * scale)
    if n < 6:
        return np.full(n, max(glob, floor))
    w = window or max(10, n // 10)
    d = np.diff(y)
    d2 = np.concatenate([[d[0]], d])   # one difference per point
    c1 = np.cumsum(np.insert(d2, 0, 0.0))
    c2 = np.cumsum(np.insert(d2 * d2, 0, 0.0))
    idx = np.arange(n)
    lo = np.clip(idx - w // 2, 0, n)
    hi = np.clip(idx + w // 2 + 1, 0, n)
    m = hi - lo
    mean = (c1[hi] - c1[lo]) / m
    var = np.maximum((c2[hi] - c2[lo]) / m - mean * mean, 0.0) * m / np.maximum(m - 1, 1)
    return np.maximum(np.sqrt(var / 2.0), floor)


def noise_ceiling_of(y: np.ndarray, sigma: float) -> float:
    """1 − σ²/Var(r): the highest R² a smooth curve can reach (NaN for a constant series)."""
    var = float(np.var(y, ddof=1)) if len(y) > 1 else 0.0
    return 1.0 - sigma * sigma / var if var > 0 else math.nan


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


def _shape_bounds(law: str, dt: float, horizon: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the shape parameters in window units (window = 1): times within [dt/4, 30 windows]; q ∈ [1e-3, 1];
    decay rate within [−4, 4/dt] (growth at most e⁴ over the window); ω_d within [π/2, π/dt] (at least a quarter
    period in the window, at most Nyquist)."""
    lt_lo, lt_hi = math.log(max(dt / 4, 1e-6)), math.log(30.0)
    if law == "single_exponential":
        return np.array([lt_lo]), np.array([lt_hi])
    if law == "overdamped":
        return np.array([lt_lo, 1e-3]), np.array([lt_hi, 1.0])
    return np.array([-4.0, math.log(math.pi / 2)]), np.array([4.0 / max(dt, 1e-6), math.log(math.pi / max(dt, 1e-6))])


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


def _shape_grid(law: str, dt: float, s: np.ndarray | None = None, y: np.ndarray | None = None) -> np.ndarray:
    lo, hi = _shape_bounds(law, dt)
    if law == "single_exponential":
        return np.linspace(lo[0], hi[0], 48)[:, None]
    if law == "overdamped":
        lt = np.linspace(lo[0], min(hi[0], math.log(10.0)), 24)
        q = np.array([0.002, 0.01, 0.05, 0.15, 0.35, 0.6, 0.85, 1.0])
        return np.array(np.meshgrid(lt, q, indexing="ij")).reshape(2, -1).T
    rate = np.concatenate([[-3.5, -2.5, -1.5, -0.7, -0.2], np.geomspace(0.1, min(hi[0], 200.0), 9)])
    if s is None:
        lw = np.linspace(lo[1], min(hi[1], math.log(150.0)), 36)
    else:
        lw = np.log(_omega_candidates(s, y, math.exp(lo[1]), math.exp(hi[1])))
    return np.array(np.meshgrid(rate, lw, indexing="ij")).reshape(2, -1).T


# ---------------------------------------------------------------------------------------------------------------
# Fit
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class ResponseFit:
    """One fitted response law. Times in optimizer steps; ``params`` are the physical parameters."""

    law: str
    """``single_exponential``, ``overdamped`` or ``oscillatory``."""
    params: dict[str, float]
    """r0, r_inf and: timescale | t_slow, t_fast | decay_rate, omega_d (rates per step)."""
    stderr: dict[str, float | None]
    """Standard error of each parameter (None when the parameter is at a bound, i.e. not identified)."""
    regime: str
    """``first-order``, ``overdamped``, ``critical``, ``underdamped`` or ``growing``."""
    damping_ratio: float
    """ζ (inf for the first-order law)."""
    damping_ratio_interval: tuple[float, float] | None
    """80 % interval of ζ (delta method), None when not identified."""
    damping_over_stiffness: float
    """C/K in steps: T (first order), T_s + T_f (overdamped), 2a/ω0² (oscillatory; negative when growing)."""
    damping_over_stiffness_sd: float | None
    r2: float
    noise_ceiling: float
    sigma: float
    """σ = std(Δr)/√2 of the fitted window."""
    chi2_reduced: float
    """Weighted χ²/(n − k): ≈ 1 when the law explains all but the step noise."""
    aic: float
    bic: float
    n: int
    k: int
    status: str
    """``reliable``, ``at bound`` (a parameter at its bound), ``unreliable`` (a time scale's standard error exceeds
    its value) or ``failed``."""
    notes: list[str] = field(default_factory=list)
    """Why the status is what it is (which parameter is at which bound and what that means)."""
    t0: float = 0.0
    """Step that t = 0 of the law corresponds to."""
    _theta: np.ndarray | None = field(default=None, repr=False)
    _cov: np.ndarray | None = field(default=None, repr=False)
    _window: float = field(default=1.0, repr=False)

    @property
    def reliable(self) -> bool:
        return self.status == "reliable"

    def predict(self, steps) -> np.ndarray:
        """The law at optimizer steps ``steps`` (same step axis as the log)."""
        s = (np.asarray(steps, dtype=float) - self.t0) / self._window
        return _model(self.law, self._theta, s)

    def predict_interval(self, steps, *, extra_var: float | np.ndarray = 0.0, level: float = 0.8):
        """``(mean, low, high)``: the law at ``steps`` and its two-sided ``level`` interval from the parameter
        covariance (delta method) plus ``extra_var`` (e.g. the noise of the quantity predicted)."""
        from scipy.stats import norm

        steps = np.atleast_1d(np.asarray(steps, dtype=float))
        s = (steps - self.t0) / self._window
        mean = _model(self.law, self._theta, s)
        var = np.zeros_like(mean)
        if self._cov is not None:
            g = _jacobian(self.law, self._theta, s)
            var = np.einsum("ij,jk,ik->i", g, self._cov, g)
        sd = np.sqrt(np.maximum(var + extra_var, 0.0))
        z = float(norm.ppf(0.5 + level / 2))
        return mean, mean - z * sd, mean + z * sd

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (floats, None for undefined)."""
        return {"law": self.law, "regime": self.regime, "status": self.status, "notes": list(self.notes),
                "params": {k: _num(v) for k, v in self.params.items()},
                "stderr": {k: _num(v) for k, v in self.stderr.items()},
                "damping_ratio": _num(self.damping_ratio),
                "damping_ratio_80": None if self.damping_ratio_interval is None else
                [_num(x) for x in self.damping_ratio_interval],
                "damping_over_stiffness": _num(self.damping_over_stiffness),
                "damping_over_stiffness_sd": _num(self.damping_over_stiffness_sd),
                "r2": _num(self.r2), "noise_ceiling": _num(self.noise_ceiling), "sigma": _num(self.sigma),
                "chi2_reduced": _num(self.chi2_reduced), "aic": _num(self.aic), "bic": _num(self.bic),
                "n": self.n, "k": self.k}


def _num(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


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


def _fit_one(law, s, y, w, rb, dt) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    lo_s, hi_s = _shape_bounds(law, dt)
    grid = _shape_grid(law, dt, s, y)
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


def fit_response(steps, reward, law: str, *, reward_bounds: tuple[float, float] | None = None,
                 t0: float | None = None, sigma_t: np.ndarray | None = None) -> ResponseFit:
    """Fit one response law (module docstring) to ``reward`` at optimizer ``steps``; t = 0 at ``t0`` (default:
    the first step, where the policy is at rest). Never raises on degenerate data: status ``"failed"``."""
    if law not in _UNIT:
        raise ValueError(f"law must be one of {LAW_NAMES}, got {law!r}")
    t = np.asarray(steps, dtype=float)
    y = np.asarray(reward, dtype=float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    k = 2 + len(_SHAPE_NAMES[law])
    n = int(t.size)
    t0 = float(t[0]) if t0 is None and n else float(t0 or 0.0)
    sigma = step_sigma(y)
    if n < k + 2 or float(np.ptp(y)) == 0.0:
        why = f"only {n} points for {k} parameters" if n < k + 2 else "constant reward: nothing to fit"
        return ResponseFit(law, {}, {}, "undetermined", math.nan, None, math.nan, None, math.nan, math.nan, sigma,
                           math.nan, math.nan, math.nan, n, k, "failed", [why], t0)
    window = max(float(t[-1] - t0), 1.0)
    s = (t - t0) / window
    dts = np.diff(t)
    dt = float(np.median(dts[dts > 0])) / window if np.any(dts > 0) else 1.0 / window
    if sigma_t is None:   # constant weight 1/σ² (see the module docstring on why not σ_t by default)
        sig_t = np.full(n, max(sigma, 1e-9 * max(float(np.ptp(y)), 1e-300)))
    else:
        sig_t = np.asarray(sigma_t, dtype=float)[ok]
    w = 1.0 / sig_t ** 2
    theta, cost, lo, hi = _fit_one(law, s, y, w, reward_bounds, dt)
    yhat = _model(law, theta, s)
    resid = y - yhat
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(resid @ resid) / ss_tot if ss_tot > 0 else math.nan
    chi2 = cost / max(n - k, 1)
    ll = n * math.log(max(cost, 1e-300) / n)
    aic, bic = ll + 2 * k, ll + k * math.log(n)
    # which parameters sit at a bound
    width = hi - lo
    at_lo = theta <= lo + 1e-6 * width
    at_hi = theta >= hi - 1e-6 * width
    names = ("r0", "r_inf") + _SHAPE_NAMES[law]
    notes: list[str] = []
    fixed = np.zeros(k, dtype=bool)
    for j, nm in enumerate(names):
        if not (at_lo[j] or at_hi[j]):
            continue
        side = "lower" if at_lo[j] else "upper"
        if law == "overdamped" and nm == "t_fast_over_t_slow" and at_hi[j]:
            notes.append("T_f = T_s (critical damping, ζ = 1, the edge of this family): the oscillatory law is the "
                         "one to read")
        else:
            notes.append(_BOUND_MEANING.get((law, nm, side), f"{nm} at its {side} bound: not identified by the data"))
        fixed[j] = True
    # covariance of the free parameters
    cov = None
    free = ~fixed
    J = np.sqrt(w)[:, None] * _jacobian(law, theta, s)
    rho = _lag1(resid)
    infl = max(chi2, 1.0) * (1 + rho) / (1 - rho)
    try:
        A = J[:, free].T @ J[:, free]
        cf = np.linalg.inv(A) * infl
        if np.all(np.isfinite(cf)) and np.all(np.diag(cf) >= 0):
            cov = np.zeros((k, k))
            cov[np.ix_(free, free)] = cf
    except np.linalg.LinAlgError:
        notes.append("singular Jacobian: parameters not separately identified")
    params, stderr = _physical(law, theta, cov, window, fixed)
    zeta, zeta_iv, regime, c_over_k, c_over_k_sd = _reading(law, theta, cov, window, fixed)
    status = "reliable"
    if cov is None:
        status = "at bound" if fixed.any() else "failed"
        if not fixed.any():
            notes.append("no parameter covariance")
    if fixed[2:].any():
        status = "at bound"
    if fixed[:2].any() and status == "reliable":
        status = "at bound"
    for nm in ("timescale", "t_slow", "t_fast", "omega_d"):
        v, e = params.get(nm), stderr.get(nm)
        if v is not None and e is not None and e > abs(v) and status == "reliable":
            status = "unreliable"
            notes.append(f"{nm} = {v:.4g} ± {e:.4g}: not identified (uncertainty larger than the value)")
    if not math.isfinite(r2) or r2 < 0:
        status = "failed"
        notes.append("the fit is worse than a constant")
    ceiling = noise_ceiling_of(y, sigma)
    return ResponseFit(law, params, stderr, regime, zeta, zeta_iv, c_over_k, c_over_k_sd, r2, ceiling, sigma, chi2,
                       aic, bic, n, k, status, notes, t0, theta, cov, window)


_BOUND_MEANING = {
    ("single_exponential", "log_timescale", "lower"): "T at its lower bound (a quarter step): the rise is faster than "
                                                      "the logging interval resolves",
    ("single_exponential", "log_timescale", "upper"): "T at its upper bound (30 × the window): the curve is still "
                                                      "rising linearly; plateau and T are not identified",
    ("overdamped", "log_t_slow", "lower"): "T_s at its lower bound: the rise is faster than one logged step",
    ("overdamped", "log_t_slow", "upper"): "T_s at its upper bound (30 × the window): no plateau in sight; the "
                                           "plateau and T_s are not identified",
    ("overdamped", "t_fast_over_t_slow", "lower"): "T_f/T_s at its lower bound (1e-3): no slow start is resolved, the "
                                                  "curve is a single exponential (M → 0) and ζ is only bounded below",
    ("oscillatory", "decay_rate", "lower"): "growth rate at its bound (e⁴ over the window): a runaway the linear "
                                            "law cannot follow",
    ("oscillatory", "decay_rate", "upper"): "decay rate at its bound (4 per step): the oscillation dies within a "
                                            "step, nothing oscillatory is resolved",
    ("oscillatory", "log_omega_d", "lower"): "ω_d at its lower bound (a quarter period over the window): no "
                                             "oscillation is resolved; read the overdamped law",
    ("oscillatory", "log_omega_d", "upper"): "ω_d at the Nyquist bound: step-to-step noise, not an oscillation",
    ("single_exponential", "r0", "lower"): "R0 at the reward bound", ("single_exponential", "r0", "upper"):
    "R0 at the reward bound",
}
for _law in LAW_NAMES:
    for _nm in ("r0", "r_inf"):
        for _side in ("lower", "upper"):
            _BOUND_MEANING[(_law, _nm, _side)] = (f"{'R0' if _nm == 'r0' else 'R∞'} at the {_side} reward bound: "
                                                  "the law wants a value outside the reward range, so its "
                                                  "extrapolation is not trustworthy")


def _lag1(r):
    if r.size < 4 or np.std(r) == 0:
        return 0.0
    rho = float(np.corrcoef(r[:-1], r[1:])[0, 1])
    return min(max(rho if math.isfinite(rho) else 0.0, 0.0), 0.95)


def _delta(fn, theta, cov):
    """(value, sd) of fn(theta) by the delta method (numerical gradient)."""
    v = float(fn(theta))
    if cov is None or not math.isfinite(v):
        return v, None
    g = np.zeros(theta.size)
    for j in range(theta.size):
        if cov[j, j] <= 0:
            continue
        h = 1e-6 * max(1.0, abs(theta[j]))
        tp, tm = theta.copy(), theta.copy()
        tp[j] += h
        tm[j] -= h
        g[j] = (fn(tp) - fn(tm)) / (2 * h)
    var = float(g @ cov @ g)
    return v, (math.sqrt(var) if math.isfinite(var) and var >= 0 else None)


def _physical(law, th, cov, window, fixed):
    out = {"r0": float(th[0]), "r_inf": float(th[1])}
    fns: dict[str, Any] = {}
    if law == "single_exponential":
        fns["timescale"] = lambda x: window * math.exp(x[2])
    elif law == "overdamped":
        fns["t_slow"] = lambda x: window * math.exp(x[2])
        fns["t_fast"] = lambda x: window * math.exp(x[2]) * x[3]
    else:
        fns["decay_rate"] = lambda x: x[2] / window
        fns["omega_d"] = lambda x: math.exp(x[3]) / window
    sd: dict[str, float | None] = {}
    for j, nm in enumerate(("r0", "r_inf")):
        sd[nm] = None if (cov is None or fixed[j]) else math.sqrt(max(cov[j, j], 0.0))
    for nm, fn in fns.items():
        out[nm], sd[nm] = _delta(fn, th, cov)
    if law == "overdamped" and fixed[2]:
        sd["t_slow"] = sd["t_fast"] = None
    if law == "overdamped" and fixed[3]:
        sd["t_fast"] = None
    if law == "oscillatory" and fixed[2]:
        sd["decay_rate"] = None
    if law == "oscillatory" and fixed[3]:
        sd["omega_d"] = None
    if law == "single_exponential" and fixed[2]:
        sd["timescale"] = None
    return out, sd


def _reading(law, th, cov, window, fixed):
    """(ζ, its 80 % interval, regime, C/K in steps, its sd)."""
    if law == "single_exponential":
        cok, cok_sd = _delta(lambda x: window * math.exp(x[2]), th, None if fixed[2] else cov)
        return math.inf, None, "first-order", cok, cok_sd
    if law == "overdamped":
        zf = lambda x: (1 + x[3]) / (2 * math.sqrt(x[3]))  # noqa: E731
        cf = lambda x: window * math.exp(x[2]) * (1 + x[3])  # noqa: E731
        z, zsd = _delta(zf, th, cov)
        cok, cok_sd = _delta(cf, th, None if fixed[2] else cov)
        regime = "critical" if fixed[3] and th[3] >= 1 - 1e-6 else "overdamped"
        if fixed[3]:
            iv = (1.0, math.inf) if th[3] < 0.5 else (1.0, 1.0)
            return z, iv if th[3] < 0.5 else None, regime, cok, cok_sd
        iv = None if zsd is None else (max(1.0, z - Z80 * zsd), z + Z80 * zsd)
        return z, iv, regime, cok, cok_sd
    zf = lambda x: x[2] / math.hypot(x[2], math.exp(x[3]))  # noqa: E731
    cf = lambda x: window * 2 * x[2] / (x[2] ** 2 + math.exp(2 * x[3]))  # noqa: E731
    z, zsd = _delta(zf, th, cov)
    cok, cok_sd = _delta(cf, th, cov)
    regime = "growing" if th[2] < 0 else "underdamped"
    iv = None if zsd is None or fixed[3] else (max(-1.0, z - Z80 * zsd), min(1.0, z + Z80 * zsd))
    return z, iv, regime, cok, cok_sd


def stability_margin(c_over_k: float, c_over_k_sd: float | None, refresh_interval: int) -> dict[str, Any]:
    """P1's stability margin m = ηK·K_ref/(1−μ) = K_ref/(C/K + K_ref) (unstable at m ≥ 1, P1-C10) [D], from the
    fitted C/K (steps) and the run's K_ref, with an 80 % interval by the delta method (μ cancels out of m).

    C/K < 0 (a growing fit) gives m > 1; C/K ≤ −K_ref has no positive solution (reported as ``inf``: unstable
    beyond what the single-curvature model describes).
    """
    k_ref = float(refresh_interval)
    denom = c_over_k + k_ref
    if not math.isfinite(c_over_k):
        return {"margin": None, "margin_80": None, "unstable": None}
    m = k_ref / denom if denom > 0 else math.inf
    iv = None
    if c_over_k_sd is not None and math.isfinite(m):
        lo_c, hi_c = c_over_k - Z80 * c_over_k_sd, c_over_k + Z80 * c_over_k_sd
        m_hi = k_ref / (lo_c + k_ref) if lo_c + k_ref > 0 else math.inf
        m_lo = k_ref / (hi_c + k_ref) if hi_c + k_ref > 0 else math.inf
        iv = [m_lo, m_hi]
    unstable = bool(m >= 1) if iv is None else ("yes" if iv[0] >= 1 else "no" if iv[1] < 1 else "undecided")
    return {"margin": _num(m) if math.isfinite(m) else "inf", "margin_80": None if iv is None else
            [_num(x) if math.isfinite(x) else "inf" for x in iv], "unstable": unstable}


def fit_response_laws(steps, reward, *, reward_bounds: tuple[float, float] | None = None,
                      laws: tuple[str, ...] = LAW_NAMES, t0: float | None = None,
                      local_weights: bool = False) -> dict[str, Any]:
    """Fit every response law; return ``{law: ResponseFit, "preferred": law, "aic": {...}, "bic": {...}}``.

    The preferred law is the lowest BIC among fits that did not fail; within 2 of the best, the one with fewer
    parameters (then: ``reliable`` before ``at bound``) wins.
    """
    y = np.asarray(reward, dtype=float)
    t = np.asarray(steps, dtype=float)
    ok = np.isfinite(t) & np.isfinite(y)
    sig_full = None
    if local_weights:
        sig_full = np.full(y.shape, np.nan)
        sig_full[ok] = local_sigma(y[ok])
    fits = {law: fit_response(t, y, law, reward_bounds=reward_bounds, t0=t0, sigma_t=sig_full) for law in laws}
    usable = [f for f in fits.values() if f.status != "failed" and math.isfinite(f.bic)]
    preferred = None
    if usable:
        best = min(f.bic for f in usable)
        close = [f for f in usable if f.bic <= best + 2.0]
        close.sort(key=lambda f: (f.k, f.status != "reliable", f.bic))
        preferred = close[0].law
    return {**fits, "preferred": preferred, "aic": {k: _num(f.aic) for k, f in fits.items()},
            "bic": {k: _num(f.bic) for k, f in fits.items()}}
