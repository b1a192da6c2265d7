"""P1's damped-oscillator model of GRPO reward dynamics (P1 spec §3.3–3.4, §3.6, §3.8).

The reduced equation (Theorem 7 form [P]; coefficient formulas [D], our second-order expansion)::

    M_eff ë + C_eff ė + K_eff e = sqrt(D/G) ξ(t),      e = p - p*

    M_eff = (1+momentum) δ²/2 + η K τ²/2     (τ = refresh_interval·δ; the τ² term only when lag_mass=True)
    C_eff = (1-momentum) δ - η K τ
    K_eff = η K

Everything here is a pure function of the hyper-parameters ``learning_rate`` (learning rate), ``momentum`` (heavy-ball μ,
never TRL's ``num_iterations``), ``stiffness`` (the measured curvature scale K), ``refresh_interval`` (K_ref,
optimizer steps between refreshes of π_old, ≥ 1) and ``delta`` (physical time per optimizer step). All functions
broadcast over numpy arrays. Time is in optimizer steps when ``delta = 1`` (the project's default normalisation,
open choice §8.3).

The one closed form that serves every regime (from e(0)=e0 at rest, ė(0)=0) is written with
γ = C/(2M), ω0² = K/M and s = γ² − ω0²::

    e(t) = e0 · exp(−γt) · [cosh(√s t) + γ t · sinh(√s t)/(√s t)]

which is cosh/sinh when s > 0 (overdamped), (1+γt) when s = 0 (critical) and cos/sin when s < 0 (underdamped);
it also covers the unstable cases (γ < 0).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._checks import as_finite_array, check_in_range, check_int, check_positive, check_same_shape

__all__ = [
    "Coefficients", "coefficients", "damping_ratio", "natural_frequency", "damped_frequency",
    "characteristic_roots", "regime", "REGIMES", "critical_refresh_interval", "critical_learning_rate",
    "oscillation_onset", "critical_damping_eta_k", "unit_response", "unit_response_velocity", "trajectory",
    "reward_trajectory", "fit_coefficients", "OscillatorFit", "fit_modes",
]

REGIMES = ("overdamped", "critical", "underdamped", "unstable")
"""Regime names (P1 §3.4): ζ>1, ζ=1 (within a tolerance), 0<ζ<1, ζ≤0."""


class Coefficients(NamedTuple):
    """(M_eff, C_eff, K_eff) of the oscillator; each a float or an array (they broadcast together)."""

    mass: np.ndarray | float
    """M_eff = (1+μ)δ²/2 (+ ηKτ²/2 with the lag-mass term)."""
    damping: np.ndarray | float
    """C_eff = (1−μ)δ − ηKτ; negative means unstable."""
    stiffness_eff: np.ndarray | float
    """K_eff = ηK."""


def scalar_or_array(x: np.ndarray):
    """Return a Python float for 0-d results, else the array."""
    x = np.asarray(x)
    if x.ndim:
        return x
    return complex(x) if np.iscomplexobj(x) else float(x)


def _hyper(learning_rate, momentum, stiffness, refresh_interval, delta):
    learning_rate = check_positive("learning_rate", learning_rate)
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    stiffness = check_positive("stiffness", stiffness)
    refresh_interval = check_in_range("refresh_interval", refresh_interval, 1.0, None)
    delta = check_positive("delta", delta)
    check_same_shape(learning_rate=learning_rate, momentum=momentum, stiffness=stiffness, refresh_interval=refresh_interval,
                     delta=delta)
    return learning_rate, momentum, stiffness, refresh_interval, delta


def coefficients(learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True) -> Coefficients:
    """Effective mass, damping and stiffness (P1 spec §3.3, boxed coefficients [D]).

    ``lag_mass=False`` drops the second-order delay mass ηKτ²/2 (first-order variant). Arrays broadcast.

    >>> c = coefficients(1e-3, 0.9, 1.0, 1)
    >>> round(c.mass, 6), round(c.damping, 6), c.stiffness_eff
    (0.9505, 0.099, 0.001)
    """
    learning_rate, momentum, stiffness, refresh_interval, delta = _hyper(learning_rate, momentum, stiffness, refresh_interval, delta)
    tau = refresh_interval * delta
    a = learning_rate * stiffness
    mass = (1.0 + momentum) * delta**2 / 2.0 + (a * tau**2 / 2.0 if lag_mass else 0.0)
    damping = (1.0 - momentum) * delta - a * tau
    stiff = a * np.ones_like(mass)
    return Coefficients(scalar_or_array(mass), scalar_or_array(damping), scalar_or_array(stiff))


def coefficient_arrays(coeffs: Coefficients):
    m = check_positive("mass", coeffs[0])
    c = as_finite_array("damping", coeffs[1])
    k = check_positive("stiffness_eff", coeffs[2])
    check_same_shape(mass=m, damping=c, stiffness_eff=k)
    return m, c, k


def damping_ratio(learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True):
    """ζ = C_eff / (2 sqrt(M_eff K_eff)) (P1 §3.4). Independent of ``delta``. Negative means unstable.

    >>> round(damping_ratio(1e-3, 0.9, 1.0, 1, lag_mass=False), 4)
    1.606
    """
    m, c, k = coefficients(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass)
    return scalar_or_array(np.asarray(c) / (2.0 * np.sqrt(np.asarray(m) * np.asarray(k))))


def natural_frequency(learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True):
    """ω0 = sqrt(K_eff / M_eff) in radians per unit time (per step when δ = 1) (P1 §3.4)."""
    m, c, k = coefficients(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass)
    return scalar_or_array(np.sqrt(np.asarray(k) / np.asarray(m)))


def damped_frequency(learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True):
    """ω_d = ω0 sqrt(1 − ζ²) for |ζ| < 1 (oscillating, decaying or growing); 0.0 where |ζ| ≥ 1 (no oscillation)."""
    w0 = np.asarray(natural_frequency(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass))
    z = np.asarray(damping_ratio(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass))
    return scalar_or_array(np.where(np.abs(z) < 1.0, w0 * np.sqrt(np.clip(1.0 - z**2, 0.0, None)), 0.0))


def characteristic_roots(learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True):
    """Decay rates (λ+, λ−) = (C ± sqrt(C² − 4MK)) / (2M), complex; solutions go as exp(−λ t) (P1 §3.4).

    Re λ > 0 for both roots means stable; λ+ λ− = K_eff / M_eff.
    """
    m, c, k = (np.asarray(x, dtype=complex) for x in
               coefficients(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass))
    disc = np.sqrt(c * c - 4.0 * m * k)
    return scalar_or_array(np.asarray((c + disc) / (2.0 * m))), scalar_or_array(np.asarray((c - disc) / (2.0 * m)))


def regime(learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True, critical_tol=1e-9):
    """Regime name per element: ``overdamped`` (ζ>1), ``critical`` (|ζ−1| ≤ critical_tol), ``underdamped``
    (0<ζ<1) or ``unstable`` (ζ≤0, i.e. K η K_ref ≥ 1−μ). Returns a str for scalar input, else an array of str."""
    critical_tol = float(check_in_range("critical_tol", critical_tol, 0.0, 1.0))
    z = np.asarray(damping_ratio(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass))
    out = np.where(z <= 0.0, "unstable",
                   np.where(np.abs(z - 1.0) <= critical_tol, "critical",
                            np.where(z > 1.0, "overdamped", "underdamped")))
    return str(out) if out.ndim == 0 else out


def critical_refresh_interval(learning_rate, momentum, stiffness):
    """K_ref^crit = (1 − μ)/(η K): unstable beyond it (P1 §3.4 boxed threshold K η K_ref > 1 − μ).

    Same with or without the lag-mass term, independent of δ, G and D.

    >>> round(critical_refresh_interval(1e-3, 0.9, 1.0), 9)
    100.0
    """
    learning_rate = check_positive("learning_rate", learning_rate)
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    stiffness = check_positive("stiffness", stiffness)
    check_same_shape(learning_rate=learning_rate, momentum=momentum, stiffness=stiffness)
    return scalar_or_array((1.0 - momentum) / (learning_rate * stiffness))


def critical_learning_rate(momentum, stiffness, refresh_interval):
    """η^crit = (1 − μ)/(K K_ref): the same threshold read as a learning rate (P1 §3.4 [D])."""
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    stiffness = check_positive("stiffness", stiffness)
    refresh_interval = check_in_range("refresh_interval", refresh_interval, 1.0, None)
    check_same_shape(momentum=momentum, stiffness=stiffness, refresh_interval=refresh_interval)
    return scalar_or_array((1.0 - momentum) / (stiffness * refresh_interval))


def oscillation_onset(learning_rate, momentum, stiffness, lag_mass=True):
    """K_ref^osc where ζ = 1 (P1 §3.4 boxed formulas [D]); runs oscillate for K_ref^osc < K_ref < K_ref^crit.

    without the mass term: ((1−μ) − sqrt(2(1+μ)ηK)) / (ηK);
    with it:               (−(1−μ) + sqrt(2(1−μ)² − 2ηK(1+μ))) / (ηK).
    Returns 0.0 where ζ < 1 already at zero lag (the run oscillates even on-policy). Independent of δ.

    >>> round(oscillation_onset(1e-3, 0.9, 1.0, lag_mass=False), 2), round(oscillation_onset(1e-3, 0.9, 1.0), 2)
    (38.36, 27.28)
    """
    learning_rate = check_positive("learning_rate", learning_rate)
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    stiffness = check_positive("stiffness", stiffness)
    check_same_shape(learning_rate=learning_rate, momentum=momentum, stiffness=stiffness)
    a = learning_rate * stiffness
    if lag_mass:
        disc = 2.0 * (1.0 - momentum) ** 2 - 2.0 * a * (1.0 + momentum)
        x = -(1.0 - momentum) + np.sqrt(np.clip(disc, 0.0, None))
    else:
        x = (1.0 - momentum) - np.sqrt(2.0 * (1.0 + momentum) * a)
    return scalar_or_array(np.clip(x, 0.0, None) / a)


def critical_damping_eta_k(momentum, lag=0.0, lag_mass=True):
    """The gain a = ηK at which ζ = 1 for a fixed lag (in steps, ≥ 0; 0 = on-policy) (P1 §3.4, §7.4 check 7 [D]).

    Solves (1−μ−aℓ)² = 2a(1+μ) (+ 2a²ℓ² with the mass term) for the smaller positive root; at ℓ = 0 it is
    (1−μ)²/(2(1+μ)) (≈ 2.63e-3 for μ = 0.9; ≈ 2.50e-3 at ℓ = 1 in either mass convention).
    """
    momentum = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    lag = check_in_range("lag", lag, 0.0, None)
    check_same_shape(momentum=momentum, lag=lag)
    q = 1.0 - momentum
    b = q * lag + (1.0 + momentum)
    l2 = lag * lag
    with np.errstate(divide="ignore", invalid="ignore"):
        if lag_mass:   # a²ℓ² + 2ab − q² = 0
            a = np.where(l2 > 0, (-b + np.sqrt(b * b + l2 * q * q)) / np.where(l2 > 0, l2, 1.0),
                         q * q / (2.0 * b))
        else:          # a²ℓ² − 2ab + q² = 0
            a = np.where(l2 > 0, (b - np.sqrt(np.clip(b * b - l2 * q * q, 0, None))) / np.where(l2 > 0, l2, 1.0),
                         q * q / (2.0 * b))
    return scalar_or_array(a)


# ---------------------------------------------------------------------------------------------------------------
# Closed-form deterministic trajectories (P1 §3.6)
# ---------------------------------------------------------------------------------------------------------------

def _response(t: np.ndarray, gamma: np.ndarray, w0sq: np.ndarray, velocity: bool = False) -> np.ndarray:
    """Unit step response u(t) (u(0)=1, u'(0)=0) of ü + 2γu' + ω0²u = 0, stable in every regime, or u'(t)."""
    s = gamma * gamma - w0sq
    x = s * t * t
    small = np.abs(x) < 1e-6
    pos = x >= 1e-6
    neg = x <= -1e-6
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        root = np.sqrt(np.abs(s))
        # exponential forms for s > 0 avoid overflow of cosh for long times
        ep = np.exp((root - gamma) * t)
        em = np.exp(-(root + gamma) * t)
        eg = np.exp(-gamma * t)
        cos_part = np.where(pos, 0.5 * (ep + em), np.where(neg, eg * np.cos(root * t), eg * (1 + x / 2 + x * x / 24)))
        safe_root = np.where(small, 1.0, root)
        sinc_t = np.where(pos, 0.5 * (ep - em) / safe_root,
                          np.where(neg, eg * np.sin(root * t) / safe_root, eg * t * (1 + x / 6 + x * x / 120)))
    with np.errstate(invalid="ignore", over="ignore"):
        if velocity:
            return -w0sq * sinc_t
        # s > 0: combine the exponentials so that a growing (unstable) solution overflows to ±inf, never inf − inf
        g_over_r = gamma / safe_root
        pos_total = 0.5 * ep * (1.0 + g_over_r) + 0.5 * em * (1.0 - g_over_r)
        return np.where(pos, pos_total, cos_part + gamma * sinc_t)


def _gamma_w0sq(coeffs: Coefficients):
    m, c, k = coefficient_arrays(coeffs)
    return c / (2.0 * m), k / m


def unit_response(t, coeffs: Coefficients) -> np.ndarray:
    """e(t)/e0 from rest (ė(0)=0) for any regime; broadcasts ``t`` against the coefficient arrays (P1 §3.6)."""
    t = check_in_range("t", t, 0.0, None)
    gamma, w0sq = _gamma_w0sq(coeffs)
    check_same_shape(t=t, coefficients=gamma)
    return scalar_or_array(_response(t, gamma, w0sq))


def unit_response_velocity(t, coeffs: Coefficients) -> np.ndarray:
    """ė(t)/e0 = −ω0² e^{−γt} sinh(√s t)/√s; zero at t = 0 (start at rest)."""
    t = check_in_range("t", t, 0.0, None)
    gamma, w0sq = _gamma_w0sq(coeffs)
    check_same_shape(t=t, coefficients=gamma)
    return scalar_or_array(_response(t, gamma, w0sq, velocity=True))


def trajectory(t, e0, learning_rate, momentum, stiffness, refresh_interval, delta=1.0, lag_mass=True):
    """Deterministic e(t) from e(0)=e0, ė(0)=0 for the hyper-parameters (every regime; P1 §3.6).

    ``t`` is physical time (= steps when δ = 1)."""
    e0 = as_finite_array("e0", e0)
    c = coefficients(learning_rate, momentum, stiffness, refresh_interval, delta, lag_mass)
    return scalar_or_array(e0 * np.asarray(unit_response(t, c)))


def reward_trajectory(t, r0, r_inf, coeffs: Coefficients):
    """R(t) = R∞ − (R∞ − R0) u(t): the reward curve from R0 at rest (three-phase law in the overdamped regime)."""
    r0 = as_finite_array("r0", r0)
    r_inf = as_finite_array("r_inf", r_inf)
    return scalar_or_array(r_inf - (r_inf - r0) * np.asarray(unit_response(t, coeffs)))


# ---------------------------------------------------------------------------------------------------------------
# Fitting (M, C, K) ratios from a trajectory (used for the reduction check P1-C1, C2, C3, C11)
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class OscillatorFit:
    """Result of :func:`fit_coefficients`: decay rate γ = C/(2M), ω0² = K/M, and derived quantities."""

    gamma: float
    omega0_sq: float
    e0: float
    rmse: float
    stiffness_eff: float
    v0: float = 0.0
    """Initial velocity ė(0) (0 for :func:`fit_coefficients`, fitted by :func:`fit_modes`)."""
    cov: np.ndarray | None = None
    """Covariance of (γ, log ω0²) from the Jacobian at the optimum, s²(JᵀJ)⁻¹ with s² = RSS/(n − p)
    (:func:`fit_modes` only); None when not computed or singular."""
    at_bound: bool = False
    """True when γ or log ω0² ended on its search bound: the coefficient is not identified by the data."""

    @property
    def mass_rel_se(self) -> float:
        """Relative standard error of M (= SE of log ω0², since M = K_eff/ω0²); inf at a bound or without ``cov``."""
        if self.cov is None or self.at_bound:
            return float("inf")
        return float(np.sqrt(max(self.cov[1, 1], 0.0)))

    @property
    def damping_rel_se(self) -> float:
        """Relative standard error of C = 2γM (delta method over (γ, log ω0²)); inf at a bound or without ``cov``."""
        if self.cov is None or self.at_bound or self.gamma == 0:
            return float("inf")
        g = self.gamma
        var = self.cov[0, 0] / g**2 + self.cov[1, 1] - 2.0 * self.cov[0, 1] / g
        return float(np.sqrt(max(var, 0.0)))

    @property
    def mass(self) -> float:
        """M = K_eff / ω0² (needs the known K_eff: a trajectory fixes only ratios)."""
        return self.stiffness_eff / self.omega0_sq

    @property
    def damping(self) -> float:
        """C = 2 γ M."""
        return 2.0 * self.gamma * self.mass

    @property
    def damping_ratio(self) -> float:
        """ζ = γ / ω0."""
        return self.gamma / np.sqrt(self.omega0_sq)

    def coefficients(self) -> Coefficients:
        return Coefficients(self.mass, self.damping, self.stiffness_eff)


def fit_coefficients(t, e, stiffness_eff, *, fit_e0: bool = False, n_starts: int = 6) -> OscillatorFit:
    """Least-squares fit of the unified closed form e0·u(t; γ, ω0²) to a trajectory that starts at rest.

    A trajectory fixes only C/M and K/M; the known K_eff = ηK turns them into (M, C). ``e0`` is e[0] unless
    ``fit_e0``. Multi-start over γ and log ω0² (bounded, never raises on a failed start).
    """
    from scipy.optimize import least_squares

    t = check_in_range("t", t, 0.0, None).ravel()
    e = as_finite_array("e", e).ravel()
    if t.shape != e.shape:
        raise ValueError(f"t and e must have the same length, got {t.shape} and {e.shape}")
    if t.size < 4:
        raise ValueError(f"e must have at least 4 points, got {t.size}")
    k_eff = float(check_positive("stiffness_eff", stiffness_eff))
    n_starts = check_int("n_starts", n_starts, 1)
    e0_fixed = float(e[0])
    scale = max(np.max(np.abs(e)), 1e-300)
    span = max(t[-1] - t[0], 1e-12)
    dt_min = max(np.min(np.diff(t)) if t.size > 1 else 1.0, 1e-12)

    def model(x):
        g, lw = x[0], x[1]
        e0 = x[2] if fit_e0 else e0_fixed
        return e0 * _response(t, g, np.exp(lw))

    def res(x):
        return (model(x) - e) / scale

    best = None
    w_lo, w_hi = 2 * np.log(0.05 / span), 2 * np.log(10.0 / dt_min)
    for lw0 in np.linspace(2 * np.log(1.0 / span), 2 * np.log(0.5 / dt_min), n_starts):
        for g0 in (0.5 * np.exp(lw0 / 2), 2.0 * np.exp(lw0 / 2)):
            x0 = [g0, lw0] + ([e0_fixed] if fit_e0 else [])
            lo = [-5.0 / dt_min, w_lo] + ([-np.inf] if fit_e0 else [])
            hi = [5.0 / dt_min, w_hi] + ([np.inf] if fit_e0 else [])
            x0 = np.clip(x0, np.array(lo) + 1e-9, np.array(hi) - 1e-9)
            try:
                with np.errstate(all="ignore"):
                    r = least_squares(res, x0, bounds=(lo, hi), x_scale="jac", xtol=1e-14, ftol=1e-14, gtol=1e-14,
                                      max_nfev=4000)
            except (ValueError, FloatingPointError):
                continue
            if np.isfinite(r.cost) and (best is None or r.cost < best.cost):
                best = r
    if best is None:
        raise ValueError("fit_coefficients: every start failed (trajectory not finite under the model)")
    g, lw = best.x[0], best.x[1]
    e0 = best.x[2] if fit_e0 else e0_fixed
    rmse = float(np.sqrt(np.mean((model(best.x) - e) ** 2)))
    return OscillatorFit(float(g), float(np.exp(lw)), float(e0), rmse, k_eff)


def fit_modes(e, stiffness_eff) -> OscillatorFit:
    """Identify the oscillator's two modes from a noise-free trajectory sampled once per step, with the initial
    state free (P1 §3.3 coefficients; used by P1-C1/C2/C3) [D].

    A solution of M ë + C ė + K e = 0 sampled at unit steps obeys e_{k+2} = α e_{k+1} + β e_k exactly, with
    λ1 + λ2 = α, λ1 λ2 = −β and decay rates s_i = −log λ_i (γ = (s1 + s2)/2, ω0² = s1 s2). (α, β) are fitted by
    ordinary least squares, so neither the initial state nor a mapping of the discrete update's first step onto a
    continuum state at rest is imposed. Standard errors: s²(XᵀX)⁻¹ of (α, β), s² = RSS/(n − 2), carried to
    (γ, log ω0²) by the delta method. ``at_bound`` is True when the modes have no continuum counterpart (a root
    ≤ 0 on the real axis, or |λ| ≥ 1): the coefficients are then not identified. ``e0`` is e[0]; ``v0`` the velocity
    of the fitted continuum solution through e[0], e[1]. Time unit: one sample.
    """
    e = as_finite_array("e", e).ravel()
    if e.size < 6:
        raise ValueError(f"e must have at least 6 points, got {e.size}")
    k_eff = float(check_positive("stiffness_eff", stiffness_eff))
    scale = max(np.max(np.abs(e)), 1e-300)
    y = e / scale
    x = np.stack([y[1:-1], y[:-2]], axis=1)
    target = y[2:]
    coef, *_ = np.linalg.lstsq(x, target, rcond=None)
    resid = x @ coef - target
    dof = max(target.size - 2, 1)
    s2 = float(resid @ resid) / dof
    try:
        cov_ab = s2 * np.linalg.inv(x.T @ x)
    except np.linalg.LinAlgError:
        cov_ab = None

    def gw(ab):
        lam = np.roots([1.0, -ab[0], -ab[1]]).astype(complex)
        if np.any(np.abs(lam) >= 1.0) or np.any((np.abs(lam.imag) < 1e-15) & (lam.real <= 0.0)):
            return None
        sr = -np.log(lam)
        return np.array([float(np.real(sr.sum()) / 2.0), float(np.log(np.real(sr.prod())))])

    p = gw(coef)
    rmse = float(np.sqrt(np.mean(resid**2)) * scale)
    if p is None or not np.all(np.isfinite(p)):
        return OscillatorFit(float("nan"), float("nan"), float(e[0]), rmse, k_eff, at_bound=True)
    cov = None
    if cov_ab is not None:
        jac = np.empty((2, 2))
        ok = True
        for j in range(2):
            h = 1e-7 * max(abs(coef[j]), 1e-3)
            d = np.zeros(2)
            d[j] = h
            hi_, lo_ = gw(coef + d), gw(coef - d)
            if hi_ is None or lo_ is None:
                ok = False
                break
            jac[:, j] = (hi_ - lo_) / (2 * h)
        if ok:
            cov = jac @ cov_ab @ jac.T
    g, w0sq = float(p[0]), float(np.exp(p[1]))
    # initial velocity of the continuum solution through the first two samples
    u1 = float(_response(np.array(1.0), g, w0sq))
    w1 = float(-_response(np.array(1.0), g, w0sq, velocity=True) / w0sq)
    v0 = (float(e[1]) - float(e[0]) * u1) / w1 if w1 != 0 else float("nan")
    return OscillatorFit(g, w0sq, float(e[0]), rmse, k_eff, v0=v0, cov=cov, at_bound=cov is None)
