"""The exact discrete lagged heavy-ball recursion behind P1's oscillator (P1 spec §3.2, §3.5, §7.2 lag models).

Linearised about the fixed point, GRPO with heavy-ball momentum and a stale force reads (``eta_k`` a = ηK)::

    (A) constant delay   e_{k+1} = (1+μ) e_k − μ e_{k−1} − a e_{k−d} + s ξ_k,     d = lag ≥ 0 steps
    (B) periodic refresh e_{k+1} = (1+μ) e_k − μ e_{k−1} − a e_{k0} + s ξ_k,      k0 = K_ref ⌊k/K_ref⌋

(A) is the model the continuum oscillator expands (τ = d·δ); (B) is what a refresh of π_old every K_ref steps
does when the whole force is stale (effective lag ≈ K_ref/2, exact μ=0 threshold a·K_ref = 2). This module gives
exact characteristic roots, the one-period map of (B), exact critical gains, exact stationary variances and a
vectorised simulator, so the continuum predictions of :mod:`rlvr_dynamics.p1.oscillator` can be checked against the
exact discrete dynamics. Histories start at rest: e_k = e0 for every k ≤ 0.
"""
from __future__ import annotations

import numpy as np

from .._checks import as_finite_array, check_in_range, check_int, check_positive, check_same_shape

__all__ = [
    "characteristic_polynomial", "characteristic_roots", "dominant_root", "spectral_radius", "periodic_map",
    "periodic_spectral_radius", "critical_eta_k", "threshold_truncation_error", "discrete_mass", "first_unstable_delay",
    "first_complex_dominant_delay",
    "stationary_variance", "ar2_stationary_variance", "simulate", "LAG_MODELS",
]

LAG_MODELS = ("delay", "periodic")
"""``delay`` = model (A), constant delay of ``lag`` steps; ``periodic`` = model (B), refresh every ``lag`` steps."""


def _mu_a(momentum, eta_k):
    mu = float(check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False))
    a = float(check_in_range("eta_k", eta_k, 0.0, None))
    return mu, a


def characteristic_polynomial(momentum: float, eta_k: float, delay: int) -> np.ndarray:
    """Coefficients (highest power first) of z^n − (1+μ) z^{n−1} + μ z^{n−2} + a z^{n−1−d}, n = max(d,1)+1
    (model A, P1 §3.5)."""
    mu, a = _mu_a(momentum, eta_k)
    d = check_int("delay", delay, 0)
    n = max(d, 1) + 1
    c = np.zeros(n + 1)
    c[0], c[1], c[2] = 1.0, -(1.0 + mu), mu
    c[d + 1] += a
    return c


def characteristic_roots(momentum: float, eta_k: float, delay: int) -> np.ndarray:
    """All roots z of the model-A characteristic polynomial; e_k ~ z^k."""
    return np.roots(characteristic_polynomial(momentum, eta_k, delay))


def dominant_root(momentum: float, eta_k: float, delay: int) -> complex:
    """The root of largest modulus (ties: the one with the largest imaginary part, i.e. the oscillating one)."""
    r = characteristic_roots(momentum, eta_k, delay)
    mod = np.abs(r)
    cand = r[mod >= mod.max() * (1 - 1e-12)]
    return complex(cand[np.argmax(cand.imag)])


def spectral_radius(momentum: float, eta_k: float, delay: int) -> float:
    """Largest |root| of model A; > 1 means the exact discrete dynamics are unstable."""
    return float(np.abs(characteristic_roots(momentum, eta_k, delay)).max())


def periodic_map(momentum: float, eta_k: float, refresh_interval: int) -> np.ndarray:
    """The 2×2 one-period map (e_{k0+K}, e_{k0+K−1}) = Φ (e_{k0}, e_{k0−1}) of model B (P1 §3.5 [D])."""
    mu, a = _mu_a(momentum, eta_k)
    k = check_int("refresh_interval", refresh_interval, 1)
    step = np.array([[1.0 + mu, -mu, -a], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    lift = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    return (np.linalg.matrix_power(step, k) @ lift)[:2]


def periodic_spectral_radius(momentum: float, eta_k: float, refresh_interval: int) -> float:
    """Spectral radius of :func:`periodic_map`; > 1 means unstable. For μ = 0 it is |1 − a K_ref|."""
    return float(np.abs(np.linalg.eigvals(periodic_map(momentum, eta_k, refresh_interval))).max())


def _radius(lag_model: str, mu: float, a: float, lag: int) -> float:
    if lag_model == "delay":
        return spectral_radius(mu, a, lag)
    return periodic_spectral_radius(mu, a, lag)


def _check_model(lag_model: str) -> str:
    if lag_model not in LAG_MODELS:
        raise ValueError(f"lag_model must be one of {LAG_MODELS}, got {lag_model!r}")
    return lag_model


def critical_eta_k(momentum: float, lag: int, lag_model: str = "delay", rtol: float = 1e-10) -> float:
    """Exact critical a = ηK at which the dynamics turn unstable, by bisection on the spectral radius
    (P1 §3.5 ratio table: a_crit·d/(1−μ) → 1 at small lag, → π/2 for μ = 0 at large lag).

    ``lag`` is the delay d (model A, ≥ 0) or the refresh interval K_ref (model B, ≥ 1).
    """
    mu = float(check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False))
    lag_model = _check_model(lag_model)
    lag = check_int("lag", lag, 0 if lag_model == "delay" else 1)
    rtol = float(check_positive("rtol", rtol))
    if lag_model == "delay" and lag >= 1:
        return _critical_eta_k_delay(mu, lag)
    lo = 0.0
    hi = (1.0 - mu) / max(lag, 1)
    while _radius(lag_model, mu, hi, lag) <= 1.0:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            raise ValueError(f"critical_eta_k: no instability found up to eta_k 1e6 (momentum={mu}, lag={lag})")
    # the radius tends to 1 from below as a → 0+: bisect on radius > 1
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if _radius(lag_model, mu, mid, lag) > 1.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def _critical_eta_k_delay(mu: float, d: int) -> float:
    """Model A, d ≥ 1: a root crosses the unit circle at z = e^{iω} when a = −z^{d−1}(z−1)(z−μ) is real and
    positive, i.e. φ(ω) = 3π/2 + (d − ½)ω + arg(e^{iω} − μ) = 2πm; then a = 2 sin(ω/2)|e^{iω} − μ|.
    The critical eta_k is the smallest such a over the branches m (and a = 2(1+μ) at z = −1 for even d)."""
    from scipy.optimize import brentq

    def phase(w):
        return 1.5 * np.pi + (d - 0.5) * w + np.arctan2(np.sin(w), np.cos(w) - mu)

    cands = []
    if d % 2 == 0:
        cands.append(2.0 * (1.0 + mu))
    m = 1
    while True:
        target = 2.0 * np.pi * m
        if phase(np.pi) < target:
            break
        w = brentq(lambda x: phase(x) - target, 1e-15, np.pi, xtol=1e-15, rtol=1e-15, maxiter=500)
        cands.append(2.0 * np.sin(w / 2.0) * abs(np.exp(1j * w) - mu))
        m += 1
    return float(min(cands))


def threshold_truncation_error(momentum, eta_k):
    """Leading truncation error of the linearised stability threshold K_ref^crit = (1−μ)/(ηK), from the delay
    expansion alone (P1 spec §3.3 "the linearisation", §3.5 accuracy) [D]. Vectorised; needs neither the exact
    recursion nor a measurement, so it can fix, before any run, the cells where the linearisation holds.

    The oscillator expands the stale force as e(t−τ) ≈ e − τė + τ²ë/2. For the neutral mode e^{iωt} at the
    threshold, the exact delayed force −ηK e(t−τ) brings the friction −ηK sin(ωτ)/ω, the expansion −ηKτ; their ratio is
    sin(ωτ)/(ωτ) = 1 − (ωτ)²/6 + O((ωτ)⁴), so the linearised threshold is low by (ωτ)²/6 at leading order. With the
    closed-form coefficients at the predicted threshold τ = K_ref^crit (where C_eff = 0) and the lag-mass term kept,
    ω² = K_eff/M_eff = ηK / ((1+μ)/2 + ηKτ²/2), hence

        (ωτ)² = 2x / (1 + μ + x),   x = (1−μ) K_ref^crit = (1−μ)²/(ηK),   error = (ωτ)²/6.

    Small when the lag-mass term ηKτ²/2 is small next to the momentum mass (1+μ)/2, i.e. at momentum near 1 and short
    lag; at μ = 0 it stays near 1/3 for every lag (the exact ratio there tends to π/2). Returns an array (or float).
    """
    mu = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    a = check_positive("eta_k", eta_k)
    x = (1.0 - mu) ** 2 / a
    out = 2.0 * x / (1.0 + mu + x) / 6.0
    return float(out) if np.ndim(out) == 0 else out


def discrete_mass(momentum):
    """Inertia M that the exact heavy-ball recursion shows when read as an oscillator, in the small-gain limit
    (P1 spec §3.3 mass (1+μ)/2, §3.5 exact recursion) [D]. Vectorised.

    At small a = ηK the recursion's two roots are z_slow ≈ 1 − a/(1−μ) and z_fast ≈ μ (the velocity memory decays as
    μ^k). An oscillator sampled once per step with decay rates s_i = −ln z_i has K_eff/M = s_slow·s_fast, so with
    K_eff = a:

        M_discrete = (1 − μ) / ln(1/μ) = (1+μ)/2 − (1−μ)²/12 + O((1−μ)³),

    the closed form (1+μ)/2 to second order in (1−μ). It is 0.721 at μ = 0.5 (closed form 0.75), 0.949 at μ = 0.9
    (0.95), and tends to 0 at μ = 0, where the update keeps no velocity and there is no inertial mode to identify.
    """
    mu = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    with np.errstate(divide="ignore"):
        out = np.where(mu > 0.0, (1.0 - mu) / -np.log(np.where(mu > 0.0, mu, 0.5)), 0.0)
    return float(out) if np.ndim(out) == 0 else out


def first_unstable_delay(momentum: float, eta_k: float, max_delay: int = 2000, lag_model: str = "delay") -> int:
    """Smallest lag with spectral radius > 1 (model A: 149 for μ = 0.9, a = 1e-3; P1 §7.4 check 4).

    Raises ValueError if none up to ``max_delay``."""
    mu, a = _mu_a(momentum, eta_k)
    lag_model = _check_model(lag_model)
    max_delay = check_int("max_delay", max_delay, 1)
    # bracket by doubling, then bisect (the radius is monotone in the lag in the regimes of interest; checked
    # by a linear scan in the tests)
    lo = 0 if lag_model == "delay" else 1
    if _radius(lag_model, mu, a, lo) > 1.0:
        return lo
    hi = max(lo, 1)
    while _radius(lag_model, mu, a, hi) <= 1.0:
        lo, hi = hi, 2 * hi
        if lo > max_delay:
            raise ValueError(f"no unstable lag up to max_delay={max_delay} (momentum={mu}, eta_k={a})")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _radius(lag_model, mu, a, mid) > 1.0:
            hi = mid
        else:
            lo = mid
    if hi > max_delay:
        raise ValueError(f"no unstable lag up to max_delay={max_delay} (momentum={mu}, eta_k={a})")
    return hi


def first_complex_dominant_delay(momentum: float, eta_k: float, max_delay: int = 2000) -> int:
    """Smallest delay d (model A) whose dominant root is complex: onset of oscillation of the exact recursion
    (26 for μ = 0.9, a = 1e-3; the continuum predicts 27.3 with the lag-mass term, 38.4 without)."""
    mu, a = _mu_a(momentum, eta_k)
    max_delay = check_int("max_delay", max_delay, 1)
    for d in range(0, max_delay + 1):
        if abs(dominant_root(mu, a, d).imag) > 1e-9:
            return d
    raise ValueError(f"no complex dominant root up to max_delay={max_delay} (momentum={mu}, eta_k={a})")


def stationary_variance(momentum: float, eta_k: float, delay: int, noise_std: float = 1.0) -> float:
    """Exact stationary Var(e) of model A with additive noise s ξ_k (discrete Lyapunov equation).

    Compare with the continuum D/(2 C K_eff) with D = s² (P1 §3.8, §7.4 check 3). ValueError if unstable.
    """
    from scipy.linalg import solve_discrete_lyapunov

    mu, a = _mu_a(momentum, eta_k)
    d = check_int("delay", delay, 0)
    s = float(check_in_range("noise_std", noise_std, 0.0, None))
    n = max(d, 1) + 1
    comp = np.zeros((n, n))
    comp[0, 0] += 1.0 + mu
    comp[0, 1] += -mu
    comp[0, d] += -a
    comp[1:, :-1] = np.eye(n - 1)
    if np.abs(np.linalg.eigvals(comp)).max() >= 1.0:
        raise ValueError(f"eta_k={a} with momentum={mu}, delay={d} is unstable: no stationary variance")
    q = np.zeros((n, n))
    q[0, 0] = s * s
    return float(solve_discrete_lyapunov(comp, q)[0, 0])


def ar2_stationary_variance(momentum: float, eta_k: float, noise_std: float = 1.0) -> float:
    """Closed form for delay 0 (AR(2), φ1 = 1+μ−a, φ2 = −μ): (1−φ2) s² / ((1+φ2)((1−φ2)² − φ1²)).

    μ = 0.5, a = 0.01 gives 100.33 s² (continuum: 100 s²)."""
    mu, a = _mu_a(momentum, eta_k)
    s = float(check_in_range("noise_std", noise_std, 0.0, None))
    p1, p2 = 1.0 + mu - a, -mu
    den = (1.0 + p2) * ((1.0 - p2) ** 2 - p1**2)
    if den <= 0:
        raise ValueError(f"eta_k={a} with momentum={mu} is unstable: no stationary variance")
    return (1.0 - p2) * s * s / den


def simulate(momentum, eta_k, lag, n_steps: int, *, lag_model: str = "delay", e0=1.0, noise_std=0.0,
             n_paths: int = 1, seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """Simulate the exact recursion for many parameter sets × paths at once (ring buffer; no loop per run).

    ``momentum``, ``eta_k``, ``lag`` (int) and ``e0``, ``noise_std`` broadcast to P parameter sets (flattened).
    Returns e with shape (P, n_paths, n_steps + 1), e[..., 0] = e0 (history e_k = e0 for k ≤ 0, i.e. at rest).
    """
    lag_model = _check_model(lag_model)
    mu = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    a = check_in_range("eta_k", eta_k, 0.0, None)
    lag_arr = as_finite_array("lag", lag)
    if np.any(lag_arr != np.round(lag_arr)) or np.any(lag_arr < (0 if lag_model == "delay" else 1)):
        raise ValueError(f"lag must be integers >= {0 if lag_model == 'delay' else 1}, got {lag!r}")
    e0 = as_finite_array("e0", e0)
    s = check_in_range("noise_std", noise_std, 0.0, None)
    shape = check_same_shape(momentum=mu, eta_k=a, lag=lag_arr, e0=e0, noise_std=s)
    n_steps = check_int("n_steps", n_steps, 1)
    n_paths = check_int("n_paths", n_paths, 1)
    mu, a, lag_i, e0, s = (np.broadcast_to(x, shape).ravel() for x in (mu, a, lag_arr.astype(int), e0, s))
    p = mu.size
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out = np.empty((p, n_paths, n_steps + 1))
    e = np.repeat(e0[:, None], n_paths, axis=1)
    e_prev = e.copy()
    out[:, :, 0] = e
    mu_c, a_c, s_c = mu[:, None], a[:, None], s[:, None]
    noisy = bool(np.any(s > 0))
    for k in range(n_steps):
        if lag_model == "delay":
            idx = k - lag_i                       # index of the lagged value; ≤ 0 means the resting history
            lagged = out[np.arange(p), :, np.maximum(idx, 0)]
        else:
            k0 = (k // lag_i) * lag_i
            lagged = out[np.arange(p), :, k0]
        new = (1.0 + mu_c) * e - mu_c * e_prev - a_c * lagged
        if noisy:
            new += s_c * rng.standard_normal(e.shape)
        e_prev, e = e, new
        out[:, :, k + 1] = e
    return out
