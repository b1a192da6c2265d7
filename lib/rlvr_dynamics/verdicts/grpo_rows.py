"""The per-run rows the P1 claim checks read (:mod:`.grpo_p1`): one committed GRPO run's training-reward fits and
summary numbers (:func:`run_row`), the same fields for its fixed-panel curve (:func:`panel_row`, noise ceiling
:func:`panel_noise_ceiling`), and the P1-C12 overshoot statistic's noise-alone envelope (:func:`overshoot_null`, with
the autocorrelation-aware SE :func:`ar1_mean_se`). Shared by the notebooks ``grpo_p1_dynamics``, ``grpo_p1_slow_start``
and ``grpo_smollm``, so one row definition feeds every family of runs.
"""
from __future__ import annotations

import math

import numpy as np

from .grpo_p1_slow_start import collapsed_mid_run

def first_step_full_size(optimizer: str, lr_scheduler: str = "constant", momentum: float = 0.9) -> bool:
    """True when the optimizer's first update is already full size, so P1's slow start (inertia, spec §3.5) cannot
    appear: :func:`rlvr_dynamics.p1.optimizer_start.starts_at_rest` is False (bias-corrected Adam, whose first step is
    η·g₁/|g₁| per coordinate, or SGD without momentum) and no warm-up schedule shrinks it (the project's runner sets
    ``warmup_steps=0``, so only a ``*warmup*`` scheduler does). ``momentum`` is P1's μ (Adam's β1 or SGD's
    heavy-ball coefficient; the runner's default 0.9)."""
    from ..p1.optimizer_start import starts_at_rest

    return not starts_at_rest(optimizer.lower(), momentum) and "warmup" not in lr_scheduler



def _c8_fields(tp: dict, momentum: float, n_steps: int) -> dict:
    """P1-C8's slow-start bound for a curve (rule amended 2026-12-02): √ρ of the theory's law with the fitted mean rise
    time and the inertial fast time (:func:`rlvr_dynamics.verdicts.grpo_p1_slow_start.theory_slow_start_bound`)."""
    from .grpo_p1_slow_start import theory_slow_start_bound

    ts, tf = tp.get("t_slow", math.nan), tp.get("t_fast", math.nan)
    if not (np.isfinite(ts) and np.isfinite(tf) and ts > 0 and tf > 0 and 0 <= momentum < 1):
        return dict(slow_start_rho=math.nan, slow_start_bound=math.nan)
    b = theory_slow_start_bound(n_steps, ts, tf, momentum)
    return dict(slow_start_rho=b["rho"], slow_start_bound=b["bound"])


def ar1_mean_se(sigma: float, phi: float, window: int) -> float:
    """Standard error of the mean of ``window`` consecutive values of a stationary AR(1) series with marginal SD
    ``sigma`` and lag-1 autocorrelation ``phi``: σ·sqrt((1 + 2 Σ_{k<w} (1 − k/w) φ^k)/w) (σ/√w when φ = 0)."""
    if not (isinstance(window, int) and window >= 1) or not -1 < phi < 1 or not sigma >= 0:
        raise ValueError(f"need window >= 1, -1 < phi < 1 and sigma >= 0, got {window!r}, {phi!r}, {sigma!r}")
    k = np.arange(1, window)
    return float(sigma * math.sqrt((1 + 2 * np.sum((1 - k / window) * phi ** k)) / window))


def overshoot_null(sd, *, phi: float = 0.0, window: int = 1, start: int = 0, n_sim: int = 4000,
                   seed: int = 0) -> np.ndarray:
    """Null distribution of the P1-C12 overshoot statistic when the curve is the overdamped fit plus noise alone.

    Draws ``n_sim`` noise series e (stationary AR(1) with lag-1 autocorrelation ``phi`` and per-point marginal SD
    ``sd``, an array or a number with the length given by the array), removes each series' mean (the additive constant
    is in the fitted family's tangent space, so a least-squares refit absorbs it exactly; the other directions of the
    refit are ignored), smooths it with the trailing ``window``-point rolling mean and returns, per series,
    max over t ≥ ``start`` of smooth(e)_t / SE_t, with SE_t :func:`ar1_mean_se` (the per-point SD itself when
    ``window`` = 1). The observed statistic, max (smoothed reward − R∞)/SE over the same points, is at most this for
    a rising overdamped curve plus the same noise (the fit stays below R∞), so the test is conservative."""
    sd = np.atleast_1d(np.asarray(sd, dtype=float))
    n = sd.size
    if n < 3 or not np.all(sd > 0) or not 0 <= start < n or not (isinstance(window, int) and window >= 1):
        raise ValueError(f"need >= 3 positive sd, 0 <= start < {n} and window >= 1, got start={start!r}, "
                         f"window={window!r}")
    if not 0 <= phi < 1:
        raise ValueError(f"phi must be in [0, 1), got {phi!r}")
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n_sim, n))
    e = np.empty_like(z)
    e[:, 0] = z[:, 0]
    innov = math.sqrt(1 - phi ** 2)
    for t in range(1, n):                                   # one vectorised step per time point, all series at once
        e[:, t] = phi * e[:, t - 1] + innov * z[:, t]
    e = e * sd
    e -= e.mean(axis=1, keepdims=True)
    c = np.cumsum(np.concatenate([np.zeros((n_sim, 1)), e], axis=1), axis=1)
    idx = np.arange(1, n + 1)
    lo = np.maximum(0, idx - window)
    smooth = (c[:, idx] - c[:, lo]) / (idx - lo)
    se_t = (sd if window == 1 else np.full(n, ar1_mean_se(float(sd.mean()), phi, window)))
    return np.max(smooth[:, start:] / se_t[start:], axis=1)


def run_row(run, *, smooth_window: int, early_steps: int, late_steps: int, min_rise_frac: float) -> dict:
    """Fits and summary numbers of one committed run's training reward (see the module docstring)."""
    from .. import runs as R
    from ..doctor.pipeline import fit_laws, resolve_reward_bounds
    from ..doctor.reading import response_laws as rl
    from ..p1 import laws

    c = run.config
    fit = fit_laws(run.log)                                   # the same fit `rlvr-dynamics fit metrics.csv` prints
    t, y = run.series("reward", dropna=True)
    tt = t - t[0]
    ys = R.analysis.rolling_mean(y, smooth_window)
    bounds = resolve_reward_bounds(y)
    fit_s = laws.compare_laws(tt, ys, r_bounds=bounds)
    osc = R.analysis.implied_oscillator(fit["three_phase"], c.momentum, run.refresh_interval)
    over = rl.fit_response(t, y, "overdamped", reward_bounds=bounds)      # P1-C12: the regime the data choose
    oscl = rl.fit_response(t, y, "oscillatory", reward_bounds=bounds)
    curve = fit["three_phase"].predict(tt)
    slope = np.abs(np.gradient(curve, tt))
    sigma = R.step_sigma(y, robust=False)
    rise = float(np.mean(y[-late_steps:]) - np.mean(y[:early_steps]))
    se_smooth = sigma / math.sqrt(smooth_window)
    overshoot = (float(np.max(ys[smooth_window:] - over.params.get("r_inf", np.nan)) / se_smooth)
                 if over.params else math.nan)
    # P1-C12 as amended 2026-12-02: residual AR(1), autocorrelation-aware SE, and the noise-alone envelope
    resid = y - over.predict(t) if over.params else y - np.mean(y)
    phi = float(np.clip(np.corrcoef(resid[:-1], resid[1:])[0, 1], 0.0, 0.95)) if resid.size > 3 else 0.0
    sigma_e = float(np.std(resid, ddof=1))
    se_ac = ar1_mean_se(sigma_e, phi, smooth_window)
    overshoot_ac = (float(np.max(ys[smooth_window:] - over.params["r_inf"]) / se_ac) if over.params else math.nan)
    null = overshoot_null(np.full(y.size, sigma_e), phi=phi, window=smooth_window, start=smooth_window,
                          seed=int(c.seed)) if sigma_e > 0 else np.full(1, math.inf)
    rise_max = float(np.max(ys[smooth_window - 1:]) - np.mean(y[:early_steps]))  # issue 10's target: >= 0.4
    c8 = _c8_fields(fit["three_phase"].params, c.momentum, tt.size)
    c8["collapsed_mid_run"] = collapsed_mid_run(y, smooth_window)
    return dict(run=run.id, rise_max=rise_max, frac_zero_std=float(np.nanmean(run.series("frac_reward_zero_std"))),
                model=c.model, G=c.num_generations, seed=c.seed, ceiling=R.noise_ceiling(y),
                r2_tp=fit["three_phase"].r2, r2_se=fit["single_exponential"].r2, d_aic=fit["delta_aic"],
                d_bic=fit["delta_bic"], r2_tp_smooth=fit_s["three_phase"].r2,
                slow_start=float(slope[0] / slope.max()) if slope.max() > 0 else math.nan,
                d_bic_osc=oscl.bic - over.bic, osc_regime=oscl.regime, overshoot_se=overshoot,
                overshoot_ac=overshoot_ac, se_ac=se_ac, resid_phi=phi, overshoot_null=null,
                detectable=3 * se_ac <= min_rise_frac * abs(rise),
                detect_frac=3 * se_ac / abs(rise) if rise else math.inf,
                optimizer=c.optimizer, first_step_full=first_step_full_size(c.optimizer, c.lr_scheduler, c.momentum),
                rise=rise, early=float(np.mean(y[:early_steps])), late=float(np.mean(y[-late_steps:])),
                **c8, **osc, fit=fit, t=t, y=y, ys=ys)


def panel_noise_ceiling(y, se) -> tuple[float, float, float]:
    """The panel curve's noise ceiling 1 − σ²/Var(r), pre-registered in ``book/claims.yml`` (P1-C9 scope, issue 23):
    σ² is the larger of the mean squared binomial SE of the points (the sampling noise of the panel estimate) and
    std(Δr)²/2 over consecutive points (the book's step-noise estimate, which also holds the policy's own jitter).
    Returns ``(ceiling, σ²_binomial, σ²_difference)``; the ceiling is NaN for a constant or too short curve."""
    from .. import runs as R

    y = np.asarray(y, dtype=float)
    se = np.asarray(se, dtype=float)
    var_binomial = float(np.mean(se ** 2)) if se.size else math.nan
    var_difference = R.step_sigma(y, robust=False) ** 2
    var = float(np.var(y, ddof=1)) if y.size >= 3 else 0.0
    ceiling = 1.0 - max(var_binomial, var_difference) / var if var > 0 else math.nan
    return ceiling, var_binomial, var_difference


def panel_row(run, curve: dict, *, late_steps: int, min_rise_frac: float) -> dict:
    """:func:`run_row`'s fields for a run's fixed-panel curve (``curve`` = :func:`rlvr_dynamics.grpo.panel.panel_curve`
    of the run folder: ``step``, ``reward``, ``se``), by the rule pre-registered in ``book/claims.yml`` (issue 23):

    * the same laws and bounds as a training curve, fitted unweighted, time from step 0;
    * noise ceiling :func:`panel_noise_ceiling` (the conservative of the binomial and the step-difference noise);
    * start = the panel at step 0, plateau (``late``) = the mean of the points at steps ≥ max_steps − ``late_steps``,
      rise = plateau − start; ``rise_max`` = the highest point − start;
    * R'(0)/max R' of the three-phase fit on every integer step 0..last;
    * overshoot = max over the points after step 0 of (r_i − R∞)/SE_i, R∞ from the overdamped response fit, SE_i the
      point's binomial SE (no smoothing); detectable when 3 × mean SE ≤ ``min_rise_frac`` × |rise|.

    ValueError naming the run when the curve has no step-0 point (the base model is its start) or fewer than 5
    points."""
    from .. import runs as R
    from ..doctor.pipeline import resolve_reward_bounds
    from ..doctor.reading import response_laws as rl
    from ..p1 import laws

    if not (isinstance(late_steps, int) and late_steps >= 1):
        raise ValueError(f"late_steps must be an integer >= 1, got {late_steps!r}")
    t = np.asarray(curve["step"], dtype=float)
    y = np.asarray(curve["reward"], dtype=float)
    se = np.asarray(curve["se"], dtype=float)
    if t.size < 5 or t[0] != 0:
        raise ValueError(f"panel curve of {run.id} needs a step-0 point and >= 5 points, got steps {t.tolist()}")
    c = run.config
    bounds = resolve_reward_bounds(y)
    fit = laws.compare_laws(t, y, r_bounds=bounds)
    osc = R.analysis.implied_oscillator(fit["three_phase"], c.momentum, run.refresh_interval)
    over = rl.fit_response(t, y, "overdamped", reward_bounds=bounds)
    oscl = rl.fit_response(t, y, "oscillatory", reward_bounds=bounds)
    dense = np.arange(0.0, t[-1] + 1.0)
    slope = np.abs(np.gradient(fit["three_phase"].predict(dense), dense))
    ceiling, var_binomial, var_difference = panel_noise_ceiling(y, se)
    late_mask = t >= c.max_steps - late_steps
    early, late = float(y[0]), float(np.mean(y[late_mask])) if late_mask.any() else math.nan
    rise = late - early
    mean_se = float(np.mean(se))
    r_inf = over.params.get("r_inf", math.nan) if over.params else math.nan
    overshoot = float(np.max((y[1:] - r_inf) / se[1:])) if np.isfinite(r_inf) else math.nan
    null = overshoot_null(se, start=1, seed=int(c.seed)) if np.all(se > 0) else np.full(1, math.inf)
    return dict(run=run.id, model=c.model, G=c.num_generations, seed=c.seed, curve="panel",
                rise_max=float(np.max(y) - early), ceiling=ceiling, sigma_binomial=math.sqrt(var_binomial),
                sigma_difference=math.sqrt(var_difference), mean_se=mean_se,
                r2_tp=fit["three_phase"].r2, r2_se=fit["single_exponential"].r2, d_aic=fit["delta_aic"],
                d_bic=fit["delta_bic"], slow_start=float(slope[0] / slope.max()) if slope.max() > 0 else math.nan,
                d_bic_osc=oscl.bic - over.bic, osc_regime=oscl.regime, overshoot_se=overshoot,
                overshoot_ac=overshoot, se_ac=mean_se, resid_phi=0.0, overshoot_null=null,
                detectable=3 * mean_se <= min_rise_frac * abs(rise),
                detect_frac=3 * mean_se / abs(rise) if rise else math.inf,
                optimizer=c.optimizer, first_step_full=first_step_full_size(c.optimizer, c.lr_scheduler, c.momentum),
                rise=rise, early=early, late=late, **_c8_fields(fit["three_phase"].params, c.momentum, dense.size),
                collapsed_mid_run=False, **osc, fit=fit, t=t, y=y, se=se)


def print_fit_table(rows: list[dict]) -> None:
    """One line per run: start, rise, noise ceiling beside each R², ΔBIC, smoothed R², ΔBIC(oscillatory)."""
    print(f"{'model':13s} {'G':>3s} {'seed':>4s} {'start':>5s} {'rise':>5s} {'ceiling':>7s} {'R2 3ph':>7s} "
          f"{'R2 1exp':>7s} {'dBIC':>6s} {'R2 smooth':>9s} {'dBIC osc':>8s}")
    for w in rows:
        print(f"{w['model']:13s} {w['G']:3d} {w['seed']:4d} {w['early']:5.2f} {w['rise_max']:5.2f} {w['ceiling']:7.3f} "
              f"{w['r2_tp']:7.3f} {w['r2_se']:7.3f} {w['d_bic']:6.1f} {w['r2_tp_smooth']:9.3f} {w['d_bic_osc']:8.1f}")


def names(rows: list[dict]) -> str:
    """``model G=.. s<seed>`` of each row, or ``none``."""
    return ", ".join(f"{w['model']} G={w['G']} s{w['seed']}" for w in rows) or "none"

