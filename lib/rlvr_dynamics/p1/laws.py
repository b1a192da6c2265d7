"""Reward-curve laws (P1 spec §3.6–3.7) and robust fitting (§7.5), for bandit curves and real training logs.

Laws (time ``t`` measured from the start of training, where the policy is at rest: Ṙ(0) = 0):

* ``three_phase``   overdamped closed form (Proposition 14):
  R(t) = R∞ − (R∞ − R0)(T_s e^{−t/T_s} − T_f e^{−t/T_f})/(T_s − T_f),  T_s > T_f > 0 (slow, fast times);
  evaluated stably for T_f → T_s (critical limit) and T_f → 0 (→ single exponential).
* ``three_phase_critical``  R∞ − (R∞ − R0)(1 + ω0 t) e^{−ω0 t}.
* ``three_phase_underdamped``  R∞ − (R∞ − R0) e^{−ζω0 t}[cos ω_d t + ζω0/ω_d sin ω_d t], 0 < ζ < 1.
* ``single_exponential``  R∞ − (R∞ − R0) e^{−t/T}: the overdamped limit M → 0 (§3.7), T = C/K_eff.

Fitting (open choices §8.6, stated here): least squares on the raw per-step values (no smoothing); parameters
{R0, R∞, T_s, u = T_f/T_s ∈ (0, 1)} (the reparametrisation removes the T_s ↔ T_f symmetry), R0 optionally fixed
to the first logged value; bounds come from the data (reward may be on any scale: R0, R∞ within the observed
range widened by one span on each side; times within [Δt/100, 100 × duration]); multi-start, made cheap by
variable projection: every start (the geometric ladder of time scales and the seeded random ones) and a vectorised
grid of shapes get (R0, R∞) in closed form, and only the :data:`N_LOCAL` best distinct shapes are refined by
bounded least squares (the full ladder found the same optimum on the committed runs, ``bench/bench_runs.py``);
AIC/BIC from the Gaussian likelihood n·ln(RSS/n) + 2k (resp. k·ln n). Fits never raise on degenerate data: they return
``reliable=False`` and a message. Invalid input (wrong shapes, non-numeric) raises ValueError.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._checks import as_finite_array, check_in_range, check_int
from .goodness_of_fit import information_criteria, r_squared

__all__ = [
    "three_phase", "three_phase_critical", "three_phase_underdamped", "single_exponential", "FitResult",
    "fit_three_phase", "fit_single_exponential", "compare_laws", "inflection_time", "initial_slope",
    "time_to_fraction", "features", "r_squared", "information_criteria",
]


def _t(t):
    t = as_finite_array("t", t)
    return t


def _stable_unit(t, a, b):
    """(b e^{−a t} − a e^{−b t})/(b − a) for rates 0 < a ≤ b, stable as b → a (value (1 + a t) e^{−a t})."""
    gamma = 0.5 * (a + b)
    half = 0.5 * (b - a)
    x = half * t
    small = np.abs(x) < 1e-5
    with np.errstate(over="ignore", invalid="ignore"):
        # e^{−γt}[cosh(h t) + γ t sinh(h t)/(h t)] written with exponentials
        ep = np.exp(-(gamma - half) * t)      # e^{−a t}
        em = np.exp(-(gamma + half) * t)      # e^{−b t}
        safe = np.where(small, 1.0, half)
        big = 0.5 * (ep + em) + gamma * 0.5 * (ep - em) / safe
        sm = np.exp(-gamma * t) * ((1 + x * x / 2) + gamma * t * (1 + x * x / 6))
    return np.where(small, sm, big)


def three_phase(t, r0, r_inf, t_slow, t_fast):
    """Overdamped three-phase law from rest (P1 §3.6, Proposition 14 family [D parametrisation]).

    ``t_slow`` = 1/λ−, ``t_fast`` = 1/λ+ (> 0; their order does not matter for the value). Broadcasts.

    >>> round(float(three_phase(0.0, 0.2, 0.7, 50.0, 10.0)), 12)
    0.2
    """
    t = _t(t)
    ts = as_finite_array("t_slow", t_slow)
    tf = as_finite_array("t_fast", t_fast)
    if np.any(ts <= 0) or np.any(tf <= 0):
        raise ValueError(f"t_slow and t_fast must be > 0, got {t_slow!r}, {t_fast!r}")
    a = 1.0 / np.maximum(ts, tf)
    b = 1.0 / np.minimum(ts, tf)
    return r_inf - (np.asarray(r_inf) - np.asarray(r0)) * _stable_unit(t, a, b)


def three_phase_critical(t, r0, r_inf, omega0):
    """Critically damped form R∞ − (R∞ − R0)(1 + ω0 t) e^{−ω0 t} (P1 §3.6)."""
    t = _t(t)
    w = as_finite_array("omega0", omega0)
    if np.any(w <= 0):
        raise ValueError(f"omega0 must be > 0, got {omega0!r}")
    return r_inf - (np.asarray(r_inf) - np.asarray(r0)) * (1 + w * t) * np.exp(-w * t)


def three_phase_underdamped(t, r0, r_inf, zeta, omega0):
    """Underdamped form R∞ − (R∞−R0) e^{−ζω0 t}[cos ω_d t + (ζω0/ω_d) sin ω_d t], 0 < ζ < 1 (P1 §3.6)."""
    t = _t(t)
    z = check_in_range("zeta", zeta, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    w = as_finite_array("omega0", omega0)
    if np.any(w <= 0):
        raise ValueError(f"omega0 must be > 0, got {omega0!r}")
    wd = w * np.sqrt(1 - z * z)
    u = np.exp(-z * w * t) * (np.cos(wd * t) + z * w / wd * np.sin(wd * t))
    return r_inf - (np.asarray(r_inf) - np.asarray(r0)) * u


def single_exponential(t, r0, r_inf, timescale):
    """R∞ − (R∞ − R0) e^{−t/T} (P1 §3.7: the overdamped limit, T = C_eff/K_eff)."""
    t = _t(t)
    tau = as_finite_array("timescale", timescale)
    if np.any(tau <= 0):
        raise ValueError(f"timescale must be > 0, got {timescale!r}")
    return r_inf - (np.asarray(r_inf) - np.asarray(r0)) * np.exp(-t / tau)


# ---------------------------------------------------------------------------------------------------------------
# Derived features
# ---------------------------------------------------------------------------------------------------------------

def inflection_time(t_slow, t_fast):
    """t* = ln(λ+/λ−)/(λ+ − λ−) = T_s T_f ln(T_s/T_f)/(T_s − T_f): steepest rise of the three-phase law;
    T_s when T_f = T_s (critical), → 0 as T_f → 0."""
    ts = np.asarray(t_slow, float)
    tf = np.asarray(t_fast, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(np.isclose(ts, tf, rtol=1e-9), ts,
                       ts * tf * np.log(np.where(tf > 0, ts / np.where(tf > 0, tf, 1.0), 1.0)) /
                       np.where(np.isclose(ts, tf, rtol=1e-9), 1.0, ts - tf))
    return float(val) if val.ndim == 0 else val


def initial_slope(law: str, params: dict[str, float]) -> float:
    """Ṙ(0): 0 for every three-phase form (start at rest), (R∞−R0)/T for the single exponential."""
    if law == "single_exponential":
        return (params["r_inf"] - params["r0"]) / params["timescale"]
    if law == "three_phase":
        return 0.0
    raise ValueError(f"law must be 'three_phase' or 'single_exponential', got {law!r}")


def time_to_fraction(fn: Callable[[np.ndarray], np.ndarray], r0: float, r_inf: float, fraction: float,
                     t_max: float) -> float:
    """First t ≤ t_max where the law has covered ``fraction`` of R∞ − R0 (bisection on a monotone law);
    ``inf`` if not reached by t_max."""
    fraction = float(check_in_range("fraction", fraction, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
    target = r0 + fraction * (r_inf - r0)
    sgn = np.sign(r_inf - r0) or 1.0
    if sgn * (float(fn(np.array(t_max))) - target) < 0:
        return math.inf
    lo, hi = 0.0, float(t_max)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if sgn * (float(fn(np.array(mid))) - target) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------------------------------------------------------
# Fit results and goodness of fit
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class FitResult:
    """One fitted law. ``params`` keys: three_phase → r0, r_inf, t_slow, t_fast; single_exponential → r0, r_inf,
    timescale. ``n`` is the number of finite points used."""

    law: str
    params: dict[str, float]
    r2: float
    aic: float
    bic: float
    residual_std: float
    n: int
    reliable: bool
    message: str = ""
    n_free: int = 0
    """Number of fitted parameters (k in AIC/BIC)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Derived features (inflection time, times to 50/90/95 %, …) when the fit succeeded."""

    def predict(self, t) -> np.ndarray:
        """The fitted law at times ``t``."""
        p = self.params
        if any(not np.isfinite(v) for v in p.values()):
            raise ValueError(f"cannot predict from an unsuccessful fit: {self.message}")
        if self.law == "three_phase":
            return three_phase(t, p["r0"], p["r_inf"], p["t_slow"], p["t_fast"])
        return single_exponential(t, p["r0"], p["r_inf"], p["timescale"])


def _clean(t, reward):
    try:
        t = np.asarray(t, dtype=float)
        reward = np.asarray(reward, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"t and reward must be numeric 1-D arrays: {exc}") from exc
    if t.ndim != 1 or reward.ndim != 1:
        raise ValueError(f"t and reward must be 1-D, got shapes t{t.shape}, reward{reward.shape}")
    if t.shape != reward.shape:
        raise ValueError(f"t and reward must have the same length, got t{t.shape} and reward{reward.shape}")
    ok = np.isfinite(t) & np.isfinite(reward)
    dropped = int((~ok).sum())
    t, reward = t[ok], reward[ok]
    order = np.argsort(t, kind="stable")
    return t[order], reward[order], dropped


def _failed(law: str, names, n, msg, k) -> FitResult:
    return FitResult(law=law, params={nm: math.nan for nm in names}, r2=math.nan, aic=math.nan, bic=math.nan,
                     residual_std=math.nan, n=n, reliable=False, message=msg, n_free=k)


N_LOCAL = 3
"""Number of starting shapes refined by least squares (the best by profiled cost, module docstring)."""


def _unit_rows(law: str, t: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """Unit responses (rows) for shapes (log T,) or (log T_s, u = T_f/T_s): R = R∞ − (R∞ − R0)·unit."""
    ts = np.exp(shapes[:, 0])[:, None]
    if law == "three_phase":
        tf = ts * shapes[:, 1][:, None]
        return _stable_unit(t[None, :], 1.0 / np.maximum(ts, tf), 1.0 / np.minimum(ts, tf))
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(-t[None, :] / ts)


def _profiled_cost(U: np.ndarray, y: np.ndarray, rb, r0_fixed: float | None) -> np.ndarray:
    """Least-squares cost of y ≈ R0·U + R∞·(1 − U) per row, (R0, R∞) in closed form (clipped to ``rb``);
    R0 held at ``r0_fixed`` when given."""
    V = 1.0 - U
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if r0_fixed is not None:
            ri = ((y - r0_fixed * U) * V).sum(1) / (V * V).sum(1)
            r0 = np.full(ri.shape, r0_fixed)
        else:
            a11, a12, a22 = (U * U).sum(1), (U * V).sum(1), (V * V).sum(1)
            b1, b2 = U @ y, V @ y
            det = a11 * a22 - a12 * a12
            r0 = (a22 * b1 - a12 * b2) / det
            ri = (a11 * b2 - a12 * b1) / det
        r0, ri = np.clip(np.nan_to_num(r0), *rb), np.clip(np.nan_to_num(ri), *rb)
        cost = ((y[None, :] - ri[:, None] - (r0 - ri)[:, None] * U) ** 2).sum(1)
    return np.where(np.isfinite(cost), cost, np.inf), r0, ri


def _select_starts(law, starts, t, y, lo, hi, rb, fix_r0, r0_fixed, tau_lo, tau_hi, n_keep):
    """The ``n_keep`` best distinct starts by profiled cost, among ``starts`` and a vectorised shape grid; each with
    its (R0, R∞) replaced by the closed-form optimum for its shape."""
    ns = 2 if law == "three_phase" else 1
    shapes = np.array([x0[-ns:] for x0 in starts])
    grid_t = np.linspace(math.log(tau_lo), math.log(tau_hi), 48)
    if law == "three_phase":
        grid = np.array(np.meshgrid(grid_t, [0.01, 0.05, 0.15, 0.35, 0.6, 0.85], indexing="ij")).reshape(2, -1).T
    else:
        grid = grid_t[:, None]
    shapes = np.clip(np.vstack([shapes, grid]), lo[-ns:] + 1e-9 * (hi[-ns:] - lo[-ns:]),
                     hi[-ns:] - 1e-9 * (hi[-ns:] - lo[-ns:]))
    cost, r0, ri = _profiled_cost(_unit_rows(law, t, shapes), y, rb, r0_fixed if fix_r0 else None)
    chosen, seen = [], []
    for i in np.argsort(cost, kind="stable"):
        key = np.round(shapes[i] / np.array([0.25, 0.05][:ns]))
        if any(np.array_equal(key, k) for k in seen):
            continue
        seen.append(key)
        head = [ri[i]] if fix_r0 else [r0[i], ri[i]]
        chosen.append(np.concatenate([head, shapes[i]]))
        if len(chosen) == n_keep:
            break
    return chosen


MAX_NFEV = 200
"""Function evaluations allowed to each local least-squares refinement of :func:`_fit`. Well-posed curves converge
in far fewer (15–40 on the project's logs); a curve with nothing to fit (flat noise, R² ≈ 0) crawled for up to
2,000 × 3 starts (3 s on one project log) without changing R² beyond 1e-7. The stored notebooks are unchanged."""


def _fit(law: str, t, reward, *, fix_r0: bool, n_starts: int, seed: int, r_bounds) -> FitResult:
    from scipy.optimize import least_squares

    names = ("r0", "r_inf", "t_slow", "t_fast") if law == "three_phase" else ("r0", "r_inf", "timescale")
    n_starts = check_int("n_starts", n_starts, 1)
    t, y, dropped = _clean(t, reward)
    n = t.size
    k = len(names) - (1 if fix_r0 else 0)
    notes = [f"dropped {dropped} non-finite points"] if dropped else []
    if n < 2:
        return _failed(law, names, n, "; ".join(notes + [f"too few finite points ({n}) to fit"]), k)
    lo_y, hi_y = float(y.min()), float(y.max())
    span = hi_y - lo_y
    if r_bounds is None:
        pad = span if span > 0 else max(abs(hi_y), 1.0)
        rb = (lo_y - pad, hi_y + pad)
    else:
        rb = (float(r_bounds[0]), float(r_bounds[1]))
        if not rb[0] < rb[1]:
            raise ValueError(f"r_bounds must be (low, high) with low < high, got {r_bounds!r}")
    duration = float(t[-1] - t[0]) if n > 1 else 1.0
    t_ref = max(float(t[-1]), duration, 1e-12)
    dts = np.diff(t)
    dt = float(np.median(dts[dts > 0])) if np.any(dts > 0) else 1.0
    tau_lo, tau_hi = max(dt / 100.0, 1e-12), 100.0 * t_ref
    r0_fixed = float(y[0])
    scale = span if span > 0 else max(abs(hi_y), 1.0)

    if span == 0:
        params = {"r0": r0_fixed, "r_inf": r0_fixed}
        params.update({"t_slow": t_ref, "t_fast": 0.5 * t_ref} if law == "three_phase" else {"timescale": t_ref})
        aic, bic = information_criteria(0.0, n, k, scale)
        return FitResult(law, params, math.nan, aic, bic, 0.0, n, False,
                         "; ".join(notes + ["constant reward: R² undefined and time scales not identifiable"]), k)

    def unpack(x):
        i = 0
        r0 = r0_fixed if fix_r0 else x[i]
        i += 0 if fix_r0 else 1
        r_inf = x[i]
        if law == "three_phase":
            ts = math.exp(x[i + 1])
            u = x[i + 2]
            return r0, r_inf, ts, ts * u
        return r0, r_inf, math.exp(x[i + 1])

    def model(x, tt=t):   # the laws' formulas without their argument checks (tt is clean, unpack keeps times > 0)
        p = unpack(x)
        if law == "three_phase":
            r0, r_inf, ts, tf = p
            return r_inf - (r_inf - r0) * _stable_unit(tt, 1.0 / max(ts, tf), 1.0 / min(ts, tf))
        r0, r_inf, tau = p
        return r_inf - (r_inf - r0) * np.exp(-tt / tau)

    def res(x):
        return (model(x) - y) / scale

    lo = ([] if fix_r0 else [rb[0]]) + [rb[0], math.log(tau_lo)]
    hi = ([] if fix_r0 else [rb[1]]) + [rb[1], math.log(tau_hi)]
    if law == "three_phase":
        lo.append(1e-6)
        hi.append(1.0 - 1e-6)
    lo, hi = np.array(lo), np.array(hi)

    rng = np.random.default_rng(seed)
    tail = y[-max(1, n // 10):].mean()
    starts = []
    for frac in np.geomspace(0.05, 2.0, max(2, n_starts)):
        for u0 in ((0.1, 0.5) if law == "three_phase" else (None,)):
            x0 = ([] if fix_r0 else [y[0]]) + [tail, math.log(max(frac * t_ref, tau_lo * 1.01))]
            if u0 is not None:
                x0.append(u0)
            starts.append(np.array(x0, dtype=float))
    for _ in range(n_starts):
        x0 = rng.uniform(lo, hi)
        x0[-2 if law == "three_phase" else -1] = rng.uniform(math.log(tau_lo), math.log(tau_hi))
        if not fix_r0:
            x0[0] = y[0] + 0.1 * scale * rng.standard_normal()
        starts.append(x0)
    best = None
    starts = _select_starts(law, starts, t, y, lo, hi, rb, fix_r0, r0_fixed, tau_lo, tau_hi, N_LOCAL)
    for x0 in starts:
        x0 = np.clip(x0, lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = least_squares(res, x0, bounds=(lo, hi), x_scale="jac", xtol=1e-12, ftol=1e-12, gtol=1e-12,
                                  max_nfev=MAX_NFEV)
        except (ValueError, FloatingPointError, OverflowError) as exc:   # a bad start must not kill the fit
            notes.append(f"a start failed: {type(exc).__name__}")
            continue
        if np.isfinite(r.cost) and (best is None or r.cost < best.cost):
            best = r
    if best is None:
        return _failed(law, names, n, "; ".join(notes + ["every start failed"]), k)
    p = unpack(best.x)
    params = dict(zip(names, map(float, p)))
    yhat = model(best.x)
    rss = float(np.sum((y - yhat) ** 2))
    r2 = r_squared(y, yhat)
    aic, bic = information_criteria(rss, n, k, scale)
    resid_std = math.sqrt(rss / max(n - k, 1))
    reliable = True
    if n < k + 2:
        reliable = False
        notes.append(f"only {n} points for {k} parameters")
    at_bound = np.isclose(best.x, lo, rtol=0, atol=1e-6 * (hi - lo)) | \
        np.isclose(best.x, hi, rtol=0, atol=1e-6 * (hi - lo))
    labels = ([] if fix_r0 else ["r0"]) + ["r_inf", "log time scale"] + (["t_fast/t_slow"] if law == "three_phase"
                                                                          else [])
    hit = [lab for lab, b in zip(labels, at_bound) if b and lab != "t_fast/t_slow"]
    if hit:
        reliable = False
        notes.append(f"parameter(s) at a bound: {', '.join(hit)} (curve too short or too flat to identify them)")
    if law == "three_phase" and at_bound[-1]:
        notes.append("t_fast/t_slow at a bound (no resolvable slow start, or critical limit)")
    if not np.isfinite(r2) or r2 < 0:
        reliable = False
        notes.append("fit worse than a constant")
    extra: dict[str, Any] = {}
    if law == "three_phase":
        extra["inflection_time"] = inflection_time(params["t_slow"], params["t_fast"])
        extra["mass_over_stiffness"] = params["t_slow"] * params["t_fast"]      # M/K_eff = T_s T_f
        extra["damping_over_stiffness"] = params["t_slow"] + params["t_fast"]   # C/K_eff = T_s + T_f
    for frac in (0.5, 0.9, 0.95):
        extra[f"time_to_{int(frac * 100)}pct"] = time_to_fraction(
            lambda tt: model(best.x, tt), params["r0"], params["r_inf"], frac, 100 * t_ref)
    extra["initial_slope"] = initial_slope(law, params)
    return FitResult(law, params, float(r2), float(aic), float(bic), resid_std, n, reliable,
                     "; ".join(notes) if notes else "ok", k, extra)


def fit_three_phase(t, reward, *, fix_r0: bool = False, n_starts: int = 8, seed: int = 0,
                    r_bounds: tuple[float, float] | None = None) -> FitResult:
    """Fit the overdamped three-phase law (P1 §3.6) to a reward curve (§7.5). Never raises on degenerate data.

    ``fix_r0`` fixes R0 to the first finite value (3 free parameters). ``r_bounds`` overrides the data-derived
    bounds on R0 and R∞ (e.g. ``(0, 1)`` for success rates). NaN/inf points are dropped (reported in ``message``).
    """
    return _fit("three_phase", t, reward, fix_r0=fix_r0, n_starts=n_starts, seed=seed, r_bounds=r_bounds)


def fit_single_exponential(t, reward, *, fix_r0: bool = False, n_starts: int = 8, seed: int = 0,
                           r_bounds: tuple[float, float] | None = None) -> FitResult:
    """Fit R∞ − (R∞ − R0) e^{−t/T} (P1 §3.7), same conventions as :func:`fit_three_phase`."""
    return _fit("single_exponential", t, reward, fix_r0=fix_r0, n_starts=n_starts, seed=seed, r_bounds=r_bounds)


def compare_laws(t, reward, *, fix_r0: bool = False, n_starts: int = 8, seed: int = 0,
                 r_bounds: tuple[float, float] | None = None, threshold: float = 2.0) -> dict[str, Any]:
    """Fit both laws; ΔAIC = AIC(three-phase) − AIC(single), ΔBIC likewise (negative favours three-phase).

    Returns ``{"three_phase", "single_exponential", "delta_aic", "delta_bic", "winner_aic", "winner_bic",
    "winner"}``; a winner needs |Δ| > ``threshold`` (else ``"tie"``); ``winner`` follows BIC (the stricter) and is
    ``"undetermined"`` when either fit is unreliable.
    """
    tp = fit_three_phase(t, reward, fix_r0=fix_r0, n_starts=n_starts, seed=seed, r_bounds=r_bounds)
    se = fit_single_exponential(t, reward, fix_r0=fix_r0, n_starts=n_starts, seed=seed, r_bounds=r_bounds)
    d_aic = tp.aic - se.aic
    d_bic = tp.bic - se.bic

    def win(d):
        if not np.isfinite(d):
            return "undetermined"
        if d < -threshold:
            return "three_phase"
        if d > threshold:
            return "single_exponential"
        return "tie"
    winner = win(d_bic) if (tp.reliable and se.reliable) else "undetermined"
    return {"three_phase": tp, "single_exponential": se, "delta_aic": float(d_aic), "delta_bic": float(d_bic),
            "winner_aic": win(d_aic), "winner_bic": win(d_bic), "winner": winner}


def features(fit: FitResult) -> dict[str, float]:
    """Derived features of a fit: plateau, initial slope, inflection time (three-phase), times to 50/90/95 %."""
    out = {"plateau": fit.params.get("r_inf", math.nan)}
    out.update({k: float(v) for k, v in fit.extra.items()})
    return out
