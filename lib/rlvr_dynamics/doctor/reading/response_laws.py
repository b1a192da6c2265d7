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

from ._response_engine import _SHAPE_NAMES, _UNIT, _fit_one, _jacobian, _model
from ...runs.noise import local_sigma, noise_ceiling, step_sigma

LAW_NAMES = ("single_exponential", "overdamped", "oscillatory")
"""The response laws fitted by :func:`fit_response_laws`."""
Z80 = 1.2815515655446004
"""Standard-normal quantile of 0.9: an 80 % two-sided interval is ± Z80·sd."""


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
        from ..._quantiles import normal_quantile     # no scipy import on the path of `rlvr-dynamics fit`

        steps = np.atleast_1d(np.asarray(steps, dtype=float))
        s = (steps - self.t0) / self._window
        mean = _model(self.law, self._theta, s)
        var = np.zeros_like(mean)
        if self._cov is not None:
            g = _jacobian(self.law, self._theta, s)
            var = np.einsum("ij,jk,ik->i", g, self._cov, g)
        sd = np.sqrt(np.maximum(var + extra_var, 0.0))
        z = normal_quantile(0.5 + level / 2)
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


def fit_response(steps, reward, law: str, *, reward_bounds: tuple[float, float] | None = None,
                 t0: float | None = None, sigma_t: np.ndarray | None = None, stable: bool = False) -> ResponseFit:
    """Fit one response law (module docstring) to ``reward`` at optimizer ``steps``; t = 0 at ``t0`` (default:
    the first step, where the policy is at rest). ``stable=True`` (oscillatory law only) keeps the decay rate
    a ≥ 0: the best oscillation that does not grow, the stable alternative :mod:`.reading` tests a growing fit
    against. Never raises on degenerate data: status ``"failed"``."""
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
    theta, cost, lo, hi = _fit_one(law, s, y, w, reward_bounds, dt, stable=stable and law == "oscillatory")
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
        if stable and law == "oscillatory" and nm == "decay_rate" and at_lo[j]:
            notes.append("decay rate at 0, the edge of the stable family: the closest non-growing law is an undamped "
                         "oscillation")
        elif law == "overdamped" and nm == "t_fast_over_t_slow" and at_hi[j]:
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
            notes.append(f"{nm} = {v:.4g} ± {e:.4g}: not identified (uncertainty larger than the value)"
                         if e <= 100 * abs(v) else
                         f"{nm} = {v:.4g}, its uncertainty over 100× the value: not identified")
    if not math.isfinite(r2) or r2 < 0:
        status = "failed"
        notes.append("the fit is worse than a constant")
    ceiling = noise_ceiling(y)
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
    ("oscillatory", "decay_rate", "lower"): "growth rate at its bound (e¹⁰ over the window): a runaway the linear "
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
    beyond what the single-curvature model describes). ``unstable`` is ``"yes"`` only when the interval lies at or
    above 1 *and* has a width: a zero-width interval (C/K fitted at its bound with no spread, e.g. ``[1.0, 1.0]``)
    is ``"undecided"``.
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
    if iv is not None and unstable == "yes" and not iv[1] - iv[0] > 1e-6 * m:
        unstable = "undecided"      # a zero-width interval ([1.0, 1.0]): C/K stuck at its bound, no evidence
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
