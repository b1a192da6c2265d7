"""Read a reward curve's dynamics with evidence: ``stable``, ``unstable``, ``undetermined`` or ``noise only`` [D].

A fitted growing oscillation (ζ < 0, :mod:`.response_laws`) is a hypothesis, not a finding: on a noisy curve that
rises and holds, the growing law often fits a little better than every stable law by chance. "Unstable" is said
only when a test against the noise model rejects every stable law. The rule, in order (constants below, fixed
on the run-doctor corpus's dev split; the design notes tell how):

1. **Too short.** Fewer than :data:`MIN_POINTS` finite points: ``undetermined``.
2. **Noise only.** The noise ceiling :math:`1-\\sigma^2/\\mathrm{Var}(r)` (:func:`~rlvr_dynamics.runs.noise.noise_ceiling`) is below
   :data:`NOISE_ONLY_CEILING` (or undefined: a constant reward): no law can explain enough of the curve to read it.
3. **Stable laws.** The single exponential, the overdamped law and the oscillatory law with decay rate a ≥ 0
   (refitted under that constraint when the free fit grows). The best of them (lowest BIC) is the stable reading.
   None fitted: ``undetermined``.
4. **Growth beats every stable law** (necessary for ``unstable``). The residuals e of the best monotone law
   (single exponential or overdamped) are fitted by :math:`e^{\\gamma\\tau}(A\\cos\\omega t+B\\sin\\omega t)`,
   :math:`\\tau=(t-t_{\\rm end})/W`, over a grid of γ and ω (:func:`_growth_scan`: periods from 3 logged points to
   W/3). With the best growing (γ > 0) and the best non-growing (γ ≤ 0) fit, the growing fit's residual lag-1
   autocorrelation ρ and :math:`s^2 = \\mathrm{RSS}_{\\rm growing}/(n-k)\\cdot(1+\\rho)/(1-\\rho)`, the evidence is
   :math:`\\Delta = (\\mathrm{RSS}_{\\rm non\\text{-}growing} - \\mathrm{RSS}_{\\rm growing})/s^2` (a slow wander the
   growing law also misses makes the points count less). :math:`\\Delta <` :data:`GROWTH_DELTA_BIC` reads ``stable``.
5. **Visible growth** (one of, else ``undetermined``: the growing law fits better but the data do not show it grow):

   a. *Amplitude grows.* Cut the log into whole periods :math:`P = 2\\pi/\\omega` of the growing fit, counted back
      from the last step; in each, least squares of e on :math:`[1, \\cos\\omega t, \\sin\\omega t, t]` gives the
      amplitude :math:`A_j` (the local slope absorbs a step or a ramp — a collapse or a late shift of level — that
      would otherwise read as a large amplitude). Noise model: :math:`\\mathrm{Var}(A_j) = f_j\\,s_\\omega^2`, with
      :math:`f_j` the mean of the cos and sin diagonal entries of :math:`(X^\\top X)^{-1}` (the slope is correlated
      with sin ωt over one period) and :math:`s_\\omega^2 = s_u^2(1-\\rho^2)/(1-2\\rho\\cos\\omega\\Delta t+\\rho^2)` the
      variance at frequency ω of an AR(1) series with the variance :math:`s_u^2` and lag-1 correlation ρ of the growing
      fit's residuals (a wander counts as much as it has power at the oscillation's frequency, no more). The
      amplitude grows when, for some K ≥ :data:`GROWTH_PERIODS`, the last period's amplitude exceeds the one K
      periods before by more than :data:`RISE_Z` standard errors of the difference, and on the way neither a
      period-to-period fall nor the excess of any amplitude of the window over the last one is larger than
      :data:`FALL_Z` standard errors (growth may be spread over more than 2 periods, and the small early amplitudes
      of a fast growth sit at the noise floor, where their order is noise).
   b. *Leaves the plateau.* Over the last :math:`m=\\max(5, n/10)` points the mean departure :math:`d` of the reward
      from the best stable law exceeds :data:`DEPART_Z` standard errors, points away from the stable law's plateau,
      and is larger than the departure over the :math:`m` points before (the reward is moving away, not wandering).
      The standard error is the RMS spread of every m-point mean of the residuals before those 2m points (floored at
      σ/√m): an end that departs no more than the wander did earlier is not evidence.
6. **Growth that holds** (5a alone), for a success rate of fewer than 32 completions a step
   (:func:`~rlvr_dynamics.doctor.detectors.own_rewards.few_prompts`: one or two prompts, whose rewards jump by
   whole right answers). The curve without its last :data:`HOLD_OUT_POINTS` points must read ``unstable`` too
   (steps 1–5 on it), else ``undetermined``: a growth read from the last reward alone is a spike (2026-12-07: a
   one-prompt × 4 run at 10 % success, two right answers at its 18th and 19th steps, read ``unstable`` on 20 points
   and ``stable`` on 19, 18 and 22; that reading and a reward-fall warning stopped it live). Changed after the test
   part was scored (2026-12-07): the hold-out was first made on every reward, and cost two of the 13 simulated
   unstable test curves read ``unstable`` (a grid of 64 completions and a continuous reward), on which a growth
   read with its last point is the evidence accumulating.

A curve that rises and holds is read by a stable law to within the noise, so step 4 fails and it is never
``unstable``; flat noise stops at step 2. ``bench/doctor_eval`` scores the rule on labelled runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...runs.noise import ceiling_text, noise_ceiling, resolution_samples, step_sigma, unit_rewards
from ..detectors.own_rewards import few_prompts

__all__ = ["DynamicsReading", "read_dynamics", "VERDICTS"]

VERDICTS = ("stable", "unstable", "undetermined", "noise only")
"""The four verdicts of :func:`read_dynamics`."""
MIN_POINTS = 16
"""Fewer finite points than this: ``undetermined`` (a growing oscillation needs several periods of several
points each)."""
NOISE_ONLY_CEILING = 0.2
"""Noise ceiling below which the curve reads ``noise only`` (DESIGN.md, "Never absurd")."""
GROWTH_DELTA_BIC = 10.0
"""Autocorrelation-adjusted BIC advantage the growing law needs over the best stable law (step 4)."""
GROWTH_PERIODS = 2
"""Fewest periods over which step 5a reads a rise of the amplitude."""
RISE_Z = 2.0
"""The amplitude's rise over the last K ≥ GROWTH_PERIODS periods must exceed this many standard errors (step 5a)."""
DEPART_Z = 5.0
"""The end's departure from the best stable law must exceed this many standard errors (step 5b; 4 until
2026-12-01: a near-random-walk wander, φ ≥ 0.97, drifts further at the end than its earlier m-point means spread, and
read ``unstable`` on 2–4 % of plateaus with such a wander; the one dev growing curve read by 5b alone departs 5.5)."""
FALL_Z = 1.0
"""On the way up (step 5a), no period-to-period fall of the amplitude may exceed this many standard errors."""
AMP_MIN_POINTS = 6
"""Fewer points than this in a period: the amplitudes are not read (step 5a)."""
HOLD_OUT_POINTS = 1
"""Step 5a's growth must also be read on the curve without its last HOLD_OUT_POINTS points (step 6; 2 cost 8 of the
27 simulated unstable dev curves read ``unstable``, 1 none)."""
STABLE_LAWS = ("single_exponential", "overdamped", "oscillatory")


@dataclass
class DynamicsReading:
    """What a reward curve's dynamics say, with the evidence (module docstring)."""

    verdict: str
    """``stable``, ``unstable``, ``undetermined`` or ``noise only``."""
    reason: str
    """One computed sentence: why this verdict."""
    law: str | None = None
    """The law read: the growing oscillatory law when unstable, else the best stable law (None when none)."""
    regime: str | None = None
    """That law's regime (``first-order``, ``overdamped``, ``critical``, ``underdamped``, ``growing``)."""
    damping_ratio: float | None = None
    """ζ of that law (inf for the first-order law; None when not read)."""
    damping_ratio_interval: tuple[float, float] | None = None
    """80 % interval of ζ (delta method), None when not identified."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """The test statistics: n, sigma, noise_ceiling, delta_bic_growth, rho, amplitudes, rises_z, departure_z, …"""
    fit: Any = field(default=None, repr=False, compare=False)
    """The :class:`~.response_laws.ResponseFit` of the law read (the stable-constrained fit when the reading is
    stable), so a report reads its plateau and ζ from the same law; not serialised."""

    @property
    def unstable(self) -> bool:
        return self.verdict == "unstable"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: floats or None, lists for tuples."""
        return {"verdict": self.verdict, "reason": self.reason, "law": self.law, "regime": self.regime,
                "damping_ratio": _num(self.damping_ratio),
                "damping_ratio_80": None if self.damping_ratio_interval is None else
                [_num(x) for x in self.damping_ratio_interval],
                "evidence": _clean(self.evidence)}


def _num(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _num(obj)
    return obj


def _inputs(steps, reward) -> tuple[np.ndarray, np.ndarray]:
    """Finite (steps, reward) pairs sorted by step; ValueError naming the argument on bad shapes."""
    try:
        t = np.asarray(steps, dtype=float)
        y = np.asarray(reward, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"steps and reward must be numeric 1-D arrays: {exc}") from None
    if t.ndim != 1 or y.ndim != 1 or t.shape != y.shape:
        raise ValueError(f"steps and reward must be 1-D of the same length, got shapes {t.shape} and {y.shape}")
    ok = np.isfinite(t) & np.isfinite(y)
    order = np.argsort(t[ok], kind="stable")
    return t[ok][order], y[ok][order]


def _lag1(r: np.ndarray) -> float:
    """Lag-1 autocorrelation of residuals, clipped to [0, 0.95] (negative correlation is not credited)."""
    if r.size < 4 or float(np.std(r)) == 0.0:
        return 0.0
    rho = float(np.corrcoef(r[:-1], r[1:])[0, 1])
    return min(max(rho if math.isfinite(rho) else 0.0, 0.0), 0.95)


def _cost(fit) -> float:
    """Weighted χ² (Σ r²/σ²) of a :class:`~.response_laws.ResponseFit`."""
    return float(fit.chi2_reduced) * max(fit.n - fit.k, 1)


def _stable_fits(t, y, fits, reward_bounds) -> list:
    """Every stable law's fit that did not fail: the free fits, with the oscillatory law refitted under a ≥ 0 when
    its free fit grows."""
    from .response_laws import fit_response

    out = []
    for law in STABLE_LAWS:
        f = fits.get(law)
        if f is None:
            continue
        if law == "oscillatory" and f.regime == "growing":
            f = fit_response(t, y, "oscillatory", reward_bounds=reward_bounds, stable=True)
        if f.status != "failed" and math.isfinite(f.bic):
            out.append(f)
    return out


def _growth_scan(t: np.ndarray, resid: np.ndarray) -> dict[str, Any]:
    """Step 4's scan: least squares of the stable law's residuals on :math:`e^{\gamma\tau}(A\cos\omega t +
    B\sin\omega t)`, :math:`\tau=(t-t_{\rm end})/W` (W the logged window), over a grid of growth rates
    γ ∈ [−8, 12] (the amplitude changes by e^γ over the window) and of frequencies from 3 points per period to
    ``GROWTH_PERIODS + 1`` periods over the window;
    A, B in closed form at each grid point (variable projection). Returns the best growing (γ > 0) and the best
    non-growing (γ ≤ 0) fit: their residual sums of squares, γ and ω (rad/step)."""
    n = t.size
    window = max(float(t[-1] - t[0]), 1e-12)
    dt = float(np.median(np.diff(t))) if n > 1 else 1.0
    tau = (t - t[-1]) / window
    w_lo, w_hi = 2 * math.pi / (window / (GROWTH_PERIODS + 1)), 2 * math.pi / (3 * dt)
    if not w_lo < w_hi:
        return {}
    omegas = np.geomspace(w_lo, w_hi, 160)
    gammas = np.concatenate([np.linspace(-8.0, 0.0, 9), np.linspace(0.5, 12.0, 24)])
    E = np.exp(np.multiply.outer(gammas, tau))                   # Γ × n
    C, S = np.cos(np.multiply.outer(omegas, t)), np.sin(np.multiply.outer(omegas, t))   # W × n
    E2 = E * E
    mm = lambda a, b: np.einsum("gn,wn->gw", a, b)  # noqa: E731  (no BLAS threads: 50× faster on a busy machine)
    a11, a12, a22 = mm(E2, C * C), mm(E2, C * S), mm(E2, S * S)
    b1, b2 = mm(E, C * resid), mm(E, S * resid)
    det = a11 * a22 - a12 * a12
    with np.errstate(divide="ignore", invalid="ignore"):
        explained = (a22 * b1 * b1 - 2 * a12 * b1 * b2 + a11 * b2 * b2) / det
    explained = np.where(np.isfinite(explained) & (det > 1e-12 * a11 * a22), explained, 0.0)
    rss = float(resid @ resid) - explained
    grow = gammas > 0
    ig, jg = np.unravel_index(np.argmax(np.where(grow[:, None], explained, -np.inf)), rss.shape)
    i0, j0 = np.unravel_index(np.argmax(np.where(~grow[:, None], explained, -np.inf)), rss.shape)
    return {"rss_growing": float(rss[ig, jg]), "rss_stable": float(rss[i0, j0]), "gamma": float(gammas[ig]),
            "omega": float(omegas[jg]), "window": window}


def _ar1_factor(rho: float, omega_step: float) -> float:
    """Spectral density of an AR(1) series with lag-1 correlation ρ at ``omega_step`` (rad per logged point),
    relative to white noise of the same variance: :math:`(1-\\rho^2)/(1-2\\rho\\cos\\omega+\\rho^2)`."""
    return (1 - rho * rho) / max(1 - 2 * rho * math.cos(omega_step) + rho * rho, 1e-12)


def _amplitudes(t: np.ndarray, e: np.ndarray, omega: float) -> list[tuple[float, float]]:
    """(amplitude, variance factor) of a sinusoid at ``omega`` (rad/step) in each whole period counted back from the
    last step, oldest first: ``e`` (the reward minus the monotone trend) regressed on [1, t, cos ωt, sin ωt] within
    each period (the local slope absorbs a step or a ramp, which would otherwise read as a large amplitude); the
    variance factor is the mean of the cos and sin diagonal entries of (XᵀX)⁻¹ (2/m without the slope: the slope is
    correlated with sin ωt over one period and inflates it), so Var(amplitude) ≈ factor × the noise variance."""
    if not (math.isfinite(omega) and omega > 0):
        return []
    period = 2 * math.pi / omega
    n_per = int((t[-1] - t[0]) // period)
    out = []
    for j in range(n_per, 0, -1):
        hi = t[-1] - (j - 1) * period
        lo = hi - period
        sel = (t > lo) & (t <= hi) if j < n_per else (t >= lo) & (t <= hi)
        m = int(sel.sum())
        if m < AMP_MIN_POINTS:
            return []
        ts = t[sel]
        X = np.column_stack([np.ones(m), np.cos(omega * ts), np.sin(omega * ts), ts - ts.mean()])
        beta, *_ = np.linalg.lstsq(X, e[sel], rcond=None)
        try:
            V = np.linalg.inv(X.T @ X)
            f = 0.5 * float(V[1, 1] + V[2, 2])
        except np.linalg.LinAlgError:
            return []
        out.append((float(math.hypot(beta[1], beta[2])), f))
    return out


def _amplitude_test(t, e, omega, noise_sd, rho, dt) -> dict[str, Any]:
    """Step 5a: the amplitudes per whole period and the largest rise z over the last K ≥ :data:`GROWTH_PERIODS`
    periods (module docstring)."""
    amps = _amplitudes(t, e, omega)
    var_unit = noise_sd ** 2 * _ar1_factor(rho, omega * dt)          # variance of one point at frequency ω
    se = lambda f1, f2: math.sqrt(var_unit * (f1 + f2))  # noqa: E731
    rises = [(a2 - a1) / se(f1, f2) for (a1, f1), (a2, f2) in zip(amps, amps[1:])]
    ok, total, k_best = False, None, None
    J = len(amps)
    a_last, f_last = amps[-1] if amps else (None, None)
    for K in range(GROWTH_PERIODS, J):
        window = amps[J - 1 - K:]
        (a1, f1) = window[0]
        z = (a_last - a1) / se(f1, f_last)
        # the amplitude at the end is the largest of the window and never falls by more than FALL_Z s.e. on the way
        shape_ok = all((a_last - a) / se(f, f_last) > -FALL_Z for a, f in window[:-1]) and \
            all(r > -FALL_Z for r in rises[J - 1 - K:])
        if total is None or z > total:
            total, k_best = z, K
        if z > RISE_Z and shape_ok:
            ok = True
            total, k_best = z, K
            break
    return {"period": 2 * math.pi / omega if omega and omega > 0 else None, "amplitudes": [a for a, _ in amps],
            "rises_z": rises, "rise_total_z": total, "rise_periods": k_best, "amplitude_grows": bool(ok)}


def _departure_test(t, y, stable, sigma) -> dict[str, Any]:
    """Step 5b: the end's mean departure from the best stable law, in units of the s.e. of a mean of m points under
    the noise the residuals show before the end (module docstring), and its direction."""
    n = y.size
    m = max(5, n // 10)
    if 3 * m > n or sigma <= 0:
        return {"departure_z": None, "leaves_plateau": False}
    resid = y - stable.predict(t)
    d_end, d_before = float(resid[-m:].mean()), float(resid[-2 * m:-m].mean())
    early = resid[:-2 * m]
    c = np.cumsum(np.insert(early, 0, 0.0))
    means = (c[m:] - c[:-m]) / m                       # every m-point mean of the residuals before the end
    se = max(float(np.sqrt(np.mean((means - early.mean()) ** 2))), sigma / math.sqrt(m))
    z = d_end / se
    plateau = stable.params.get("r_inf", math.nan)
    away = math.isfinite(plateau) and np.sign(float(y[-m:].mean()) - plateau) == np.sign(d_end)
    ok = abs(z) > DEPART_Z and away and abs(d_end) > abs(d_before)
    return {"departure_z": z, "departure": d_end, "departure_before": d_before, "leaves_plateau": bool(ok)}


def _resolves_a_period(fit, t) -> bool:
    """An oscillatory law is read as oscillating only when one whole period 2π/ω_d fits in the logged steps: with a
    longer period the "oscillation" is a rise drawn as part of a sinusoid, and its R∞ (the centre of a swing never
    seen) is no plateau. Monotone laws always pass."""
    if fit.law != "oscillatory":
        return True
    omega = fit.params.get("omega_d")
    return omega is not None and math.isfinite(omega) and omega > 0 and 2 * math.pi / omega <= float(t[-1] - t[0])


def _law_fields(fit) -> dict[str, Any]:
    return {"law": fit.law, "regime": fit.regime, "damping_ratio": fit.damping_ratio,
            "damping_ratio_interval": fit.damping_ratio_interval, "fit": fit}


def _stable_sentence(fit) -> str:
    z = fit.damping_ratio
    zs = "∞" if z is not None and math.isinf(z) else f"{z:.2f}"
    return f"{fit.regime} (ζ = {zs}, {fit.law.replace('_', ' ')} law)"


def _growth_holds(t: np.ndarray, y: np.ndarray, reward_bounds) -> bool:
    """Step 6: a growth read by step 5a alone holds when the curve without its last :data:`HOLD_OUT_POINTS` points
    reads ``unstable`` too, tested only for a success rate of few completions a step (:func:`few_prompts`; a
    continuous reward or a grid of 32 or more accumulates evidence with its last point) and while that shorter curve
    still has :data:`MIN_POINTS`."""
    if t.size - HOLD_OUT_POINTS < MIN_POINTS or not few_prompts(resolution_samples(unit_rewards(y, reward_bounds))):
        return True
    return read_dynamics(t[:-HOLD_OUT_POINTS], y[:-HOLD_OUT_POINTS], reward_bounds, _hold_out=False).unstable


def read_dynamics(steps, reward, reward_bounds: tuple[float, float] | None = None,
                  fits: dict[str, Any] | None = None, *, _hold_out: bool = True) -> DynamicsReading:
    """Read the reward curve ``(steps, reward)`` by the rule of the module docstring.

    ``reward_bounds``: bounds on R0 and R∞ passed to the fits; ``fits``: a
    :func:`~.response_laws.fit_response_laws` result for the same data, to avoid refitting.
    """
    from .response_laws import fit_response_laws

    t, y = _inputs(steps, reward)
    n = int(y.size)
    ev: dict[str, Any] = {"n": n}
    if n < MIN_POINTS:
        return DynamicsReading("undetermined", f"only {n} finite points: at least {MIN_POINTS} are needed to tell "
                               "growth from noise", evidence=ev)
    ceiling, sigma = noise_ceiling(y), step_sigma(y)
    ev.update(noise_ceiling=ceiling, sigma=sigma)
    if not math.isfinite(ceiling) or ceiling < NOISE_ONLY_CEILING:
        what = "the reward is constant" if not math.isfinite(ceiling) else \
            f"the noise ceiling is {ceiling_text(ceiling)} (< {NOISE_ONLY_CEILING}): step noise explains almost all the variance"
        return DynamicsReading("noise only", f"{what}; no law can be read from this curve", evidence=ev)
    if fits is None:
        fits = fit_response_laws(t, y, reward_bounds=reward_bounds)
    stable_fits = _stable_fits(t, y, fits, reward_bounds)
    if not stable_fits:
        return DynamicsReading("undetermined", "no stable law could be fitted to this curve", evidence=ev)
    best = min(stable_fits, key=lambda f: f.bic)
    ev.update(best_stable_law=best.law, best_stable_chi2_reduced=best.chi2_reduced)
    # the law *reported* (its regime, ζ and plateau): the best stable law with no parameter at a bound when there is
    # one — an oscillatory fit pinned at a = 0 (undamped) or at ω's bound describes nothing; the tests below use `best`
    periodic_ok = [f for f in stable_fits if _resolves_a_period(f, t)]
    identified = [f for f in periodic_ok if f.status != "at bound"]
    shown = min(identified or periodic_ok or [best], key=lambda f: f.bic)
    monotone = [f for f in stable_fits if f.law != "oscillatory"]
    trend = min(monotone, key=lambda f: f.bic) if monotone else best
    resid = y - trend.predict(t)
    scan = _growth_scan(t, resid)
    if not scan:
        return DynamicsReading("stable", f"{_stable_sentence(shown)}; the log is too short to resolve "
                               f"{GROWTH_PERIODS + 1} periods of an oscillation", **_law_fields(shown), evidence=ev)
    k_total = trend.k + 4
    s2_white = scan["rss_growing"] / max(n - k_total, 1)
    omega, gamma = scan["omega"], scan["gamma"]
    tau = (t - t[-1]) / scan["window"]
    basis = np.exp(gamma * tau)[:, None] * np.column_stack([np.cos(omega * t), np.sin(omega * t)])
    coef, *_ = np.linalg.lstsq(basis, resid, rcond=None)
    rho = _lag1(resid - basis @ coef)
    s2 = s2_white * (1 + rho) / (1 - rho)
    delta = (scan["rss_stable"] - scan["rss_growing"]) / max(s2, 1e-300)
    ev.update(rho=rho, delta_bic_growth=delta, growth_over_window=math.exp(gamma), growth_omega=omega)
    if delta < GROWTH_DELTA_BIC:
        growth = (f"a growing oscillation on top of it fits no better (Δχ² = {delta:.1f})" if delta <= 0 else
                  f"a growing oscillation on top of it improves the fit by Δχ² = {delta:.1f} only "
                  f"(autocorrelation-adjusted; {GROWTH_DELTA_BIC:g} needed)")
        return DynamicsReading("stable", f"{_stable_sentence(shown)}; {growth}",
                               **_law_fields(shown), evidence=ev)
    u = resid - basis @ coef
    noise_sd = max(float(np.sqrt(u @ u / max(n - k_total, 1))), 1e-12)
    dt = float(np.median(np.diff(t)))
    amp = _amplitude_test(t, resid, omega, noise_sd, rho, dt)
    dep = _departure_test(t, y, best, sigma)
    ev.update(amp)
    ev.update(dep)
    held = not amp["amplitude_grows"] or dep["leaves_plateau"] or not _hold_out or \
        _growth_holds(t, y, reward_bounds)
    ev["amplitude_growth_holds"] = bool(held)
    if amp["amplitude_grows"] and not held:
        last = "reward" if HOLD_OUT_POINTS == 1 else f"{HOLD_OUT_POINTS} rewards"
        return DynamicsReading("undetermined", f"a growing oscillation beats every stable law (Δχ² = {delta:.1f}) and "
                               f"its amplitude grows over the last {amp['rise_periods']} periods, but not without the "
                               f"last {last}: a growth read from the last rewards alone is a spike; best stable "
                               f"reading: {_stable_sentence(shown)}", **_law_fields(shown), evidence=ev)
    if amp["amplitude_grows"] or dep["leaves_plateau"]:
        why = []
        if amp["amplitude_grows"]:
            why.append(f"the amplitude grows over the last {amp['rise_periods']} periods of {amp['period']:.3g} "
                       f"steps, by {amp['rise_total_z']:.1f} s.e.")
        if dep["leaves_plateau"]:
            why.append(f"the reward leaves its plateau at the end ({dep['departure_z']:+.1f} s.e. from the best "
                       "stable law)")
        a = -gamma / scan["window"]
        zeta = a / math.hypot(a, omega)
        # the fitted envelope's growth over the whole log (exp γ) is an extrapolation, often ×10³–10⁵ on a curve in
        # [0, 1]: the sentence gives what was measured, the Δχ² and the amplitude's rise in s.e., not that factor
        return DynamicsReading("unstable", f"a growing oscillation beats every stable law (Δχ² = {delta:.1f}) and "
                               + " and ".join(why),
                               law=f"{trend.law} + growing oscillation", regime="growing", damping_ratio=zeta,
                               evidence=ev)
    n_per = len(amp["amplitudes"])
    return DynamicsReading("undetermined", f"a growing oscillation fits better than every stable law (Δχ² = {delta:.1f}), "
                           f"but the amplitude does not rise over {GROWTH_PERIODS} or more periods by {RISE_Z:g} s.e. "
                           f"({n_per} whole periods logged) and the reward does not leave its plateau at the end; "
                           f"best stable reading: {_stable_sentence(shown)}", **_law_fields(shown), evidence=ev)
