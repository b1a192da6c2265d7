"""P1-C5, P1-C8, P1-C9, P1-C12, P1-C14 and P1-C15 on committed GRPO runs: the per-run fit table and the verdict rules.

Shared by the notebooks ``grpo_p1_dynamics`` (the tiny sharpening testbed) and ``grpo_smollm`` (SmolLM2-135M), so
that one rule, as fixed in ``book/claims.yml``, judges every family of runs. Each ``*_verdict`` function takes the
rows of :func:`run_row` and the claim's ``criterion.values`` and returns a :class:`Check`: the verdict, the reason,
the in-scope rows and the **deciding statistic** (``measured``, its unit, its CI where a CI decides, and the name of
the machine-readable rule in ``criterion.values.rules`` it is compared with). ``Check.claim_kwargs`` turns it into
the keyword arguments of :class:`rlvr_dynamics.book.claims.Claim`.

* P1-C8 (spec §3.5, Prop. 14; rule amended 2026-12-02): ΔBIC(three-phase − single exponential) < ``dbic`` and a
  slow start R'(0)/max R' at most the theory's own bound on every valid run (noise ceiling ≥ ``min_ceiling``, start
  at rest, no mid-run collapse), decided on the worst run, once the rule's simulated power reaches ``min_power``.
  Runs whose optimizer's first step is already full size (bias-corrected Adam without warm-up:
  :func:`first_step_full_size`) cannot show the slow start: INCONCLUSIVE.
* P1-C9: three-phase R² ≥ ``r2_min`` on every run whose ceiling reaches ``r2_min + ceiling_margin`` (worst run);
  PARTIAL on half of them, or R²/R²_max ≥ ``r2_min`` on every run.
* P1-C12 (§3.6, rule amended 2026-12-02): PASS when on every in-scope run the underdamped law does not win
  (ΔBIC(oscillatory − overdamped) > ``dbic``) *and* the smoothed reward's overshoot above its plateau, in
  autocorrelation-aware SE, stays inside the envelope noise alone reaches (:func:`overshoot_null`, Bonferroni over
  the runs); FAIL when a run shows the full oscillation signature (ΔBIC < ``dbic`` with ζ < 1 and an overshoot above
  the envelope); PARTIAL otherwise. In scope when 3 SE ≤ ``min_rise_frac`` × rise.
* P1-C15 (§3.8): the G=4 − G=16 unbiased within-group variance in bins of matched reward, by the rule as first
  registered (:func:`c15_verdict`).
* P1-C14 (§5): transfer gains G-invariant (equivalence per family) and falling from near to far families, on the
  families with headroom (:func:`c14_verdict`).
* Panel curves (issue 23): :func:`panel_row` gives the same fields for a run's fixed-panel reward curve (256
  held-out prompts at a dense schedule), by the rule pre-registered in ``book/claims.yml``; its noise ceiling is
  :func:`panel_noise_ceiling` (the larger of the binomial and the step-to-step noise). The verdict functions take
  either kind of row.
* P1-C5 (§3.8): the equivalence statistic Δ = mean over models of (plateau G=4 − plateau G=16) / mean rise, with a
  t-interval from the seed spread pooled over the model × G cells; PASS when the CI lies inside ±``margin``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .grpo_p1_slow_start import collapsed_mid_run


@dataclass
class Check:
    """A verdict with its deciding statistic (see the module docstring)."""

    verdict: str
    reason: str
    in_scope: list = field(default_factory=list, repr=False)
    measured: float | None = None
    """The deciding statistic: the binding part of the PASS rule (the worst run), or the number that made the test
    inconclusive."""
    unit: str = ""
    rule: str | None = None
    """Name of the rule in ``book/claims.yml`` (``criterion.values.rules``) that ``measured`` is compared with."""
    ci: tuple[float, float] | None = None

    def __iter__(self):
        """``verdict, reason, in_scope = check`` (the tuple the functions returned before the deciding statistic)."""
        return iter((self.verdict, self.reason, self.in_scope))

    def claim_kwargs(self, claim_id: str) -> dict:
        """``measured, verdict, reason, unit, ci, rule`` for :class:`rlvr_dynamics.book.claims.Claim`; the rule is
        read from ``book/claims.yml`` (never retyped)."""
        from . import claims

        return dict(measured=self.measured, verdict=self.verdict, reason=self.reason, unit=self.unit, ci=self.ci,
                    rule=claims.rule(claim_id, self.rule) if self.rule else None)


def first_step_full_size(optimizer: str, lr_scheduler: str = "constant", momentum: float = 0.9) -> bool:
    """True when the optimizer's first update is already full size, so P1's slow start (inertia, spec §3.5) cannot
    appear: :func:`rlvr_dynamics.p1.optimizer_start.starts_at_rest` is False (bias-corrected Adam, whose first step is
    η·g₁/|g₁| per coordinate, or SGD without momentum) and no warm-up schedule shrinks it (the project's runner sets
    ``warmup_steps=0``, so only a ``*warmup*`` scheduler does). ``momentum`` is P1's μ (Adam's β1 or SGD's
    heavy-ball coefficient; the runner's default 0.9)."""
    from ..p1.optimizer_start import starts_at_rest

    return not starts_at_rest(optimizer.lower(), momentum) and "warmup" not in lr_scheduler


def binding(parts: list[tuple[str, float, float, str, str]]) -> tuple[str, float, str]:
    """The binding part of a composite PASS rule: ``parts`` = ``[(rule name, measured, bound, op, unit)]`` with op one
    of ``<``, ``<=``, ``>``, ``>=``. Returns ``(name, measured, unit)`` of the part with the smallest signed relative
    margin to its bound (positive on the PASS side, negative when violated): for a PASS the part closest to its bound,
    otherwise the one that misses it by the most (as :func:`rlvr_dynamics.book.grpo_p1_slow_start.relative_margin`)."""
    def margin(m: float, b: float, op: str) -> float:
        sign = 1.0 if op in ("<", "<=") else -1.0
        return sign * (b - m) / max(abs(b), 1e-12)

    name, m, _, _, unit = min(parts, key=lambda p: margin(p[1], p[2], p[3]))
    return name, m, unit


def _c8_fields(tp: dict, momentum: float, n_steps: int) -> dict:
    """P1-C8's slow-start bound for a curve (rule amended 2026-12-02): √ρ of the theory's law with the fitted mean rise
    time and the inertial fast time (:func:`rlvr_dynamics.book.grpo_p1_slow_start.theory_slow_start_bound`)."""
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


def c8_verdict(rows: list[dict], v8: dict, power: dict | None = None) -> Check:
    """P1-C8 on GRPO curves, by the rule as amended on 2026-12-02 (``book/claims.yml``).

    Judged: curves whose noise ceiling reaches ``min_ceiling`` (≥ 10 points), whose optimizer starts at rest (not
    :func:`first_step_full_size`) and that did not collapse mid-run (:func:`~.grpo_p1_slow_start.collapsed_mid_run`,
    field ``collapsed_mid_run``). Each needs ΔBIC < ``dbic`` (rule ``dbic_worst``) and a slow start R'(0)/max R' at
    most the theory's bound √ρ of its own curve (field ``slow_start_bound``; rule ``slow_start_theory`` on the
    largest ratio R'(0)/max R' ÷ bound, ≤ 1). Before deciding, the rule's power: ``power`` = ``{run id: dict of
    :func:`~.grpo_p1_slow_start.slow_start_power`}``; when the product over the judged runs (the chance that the rule
    passes on all of them when the theory holds) is below ``min_power``, or was not measured, INCONCLUSIVE with it
    (rule ``power``). Otherwise PASS on every run; PARTIAL: ΔAIC < ``daic`` on ≥ half of them (``partial_daic``);
    else FAIL. INCONCLUSIVE also when no curve reaches the ceiling, or every curve takes a full-size first step."""
    fits = [w for w in rows if w["ceiling"] >= v8["min_ceiling"] and len(w["t"]) >= 10]
    if not fits:
        top = max((w["ceiling"] for w in rows), default=math.nan)
        opts = ", ".join(sorted({w.get("optimizer", "?") for w in rows}))
        adam = (f"; every run also takes a full-size first step ({opts}, bias-corrected, no warm-up)"
                if rows and all(w.get("first_step_full", False) for w in rows) else "")
        return Check("INCONCLUSIVE", f"no run has a noise ceiling >= {v8['min_ceiling']} (max {top:.3f}): no fit "
                     f"could separate the laws{adam}", [], top, "largest noise ceiling 1 - sigma^2/Var(r)")
    for w in fits:
        w["slow_ratio"] = w["slow_start"] / w["slow_start_bound"] if w.get("slow_start_bound", 0) > 0 else math.inf
    per_run = "; ".join(f"{w['model']} G={w['G']} s{w['seed']}: R'(0)/max R' {w['slow_start']:.2f}, dBIC "
                        f"{w['d_bic']:+.1f}" for w in fits)
    full = [w for w in fits if w.get("first_step_full", False)]
    crashed = [w for w in fits if not w.get("first_step_full", False) and w.get("collapsed_mid_run", False)]
    in_scope = [w for w in fits if not w.get("first_step_full", False) and not w.get("collapsed_mid_run", False)]
    below = len(rows) - len(fits)
    if not in_scope and not crashed:
        worst = max(w["slow_start"] for w in full)
        n_one = sum(w["slow_start"] >= 0.995 for w in full)
        return Check("INCONCLUSIVE", (
            f"every one of {len(full)} runs above the noise ceiling {v8['min_ceiling']} takes a full-size first "
            f"step ({', '.join(sorted({w.get('optimizer', '?') for w in full}))}, bias-corrected, no warm-up): the "
            f"slow start cannot appear; R'(0)/max R' = 1.00 on {n_one} of {len(full)} runs (largest {worst:.2f}), "
            f"dBIC up to {max(w['d_bic'] for w in full):+.1f}; {per_run}"
            + (f"; {below} runs below the ceiling" if below else "")),
            [], worst, "largest R'(0)/max R' (runs whose first step is full size)")
    if not in_scope:
        return Check("INCONCLUSIVE", f"every run that starts at rest collapsed mid-run ({names(crashed)}): none is "
                     "judged", [], float(len(crashed)), "runs excluded by the mid-run collapse rule")
    worst_bic = max(w["d_bic"] for w in in_scope)
    worst_slow = max(w["slow_ratio"] for w in in_scope)
    half = float(np.mean([w["d_aic"] < v8["daic"] for w in in_scope]))
    run_desc = "; ".join(f"{w['model']} G={w['G']} s{w['seed']}: dBIC {w['d_bic']:+.1f}, dAIC {w['d_aic']:+.1f}, "
                         f"R'(0)/max R' {w['slow_start']:.2f} (theory {w['slow_start_rho']:.3f}, bound "
                         f"{w['slow_start_bound']:.2f}), ceiling {w['ceiling']:.2f}"
                         + (f", power {power[w['run']]['power']:.3g} (dBIC part {power[w['run']]['dbic_pass']:.3g}, "
                            f"slow-start part {power[w['run']]['slow_pass']:.3g}; a single exponential passes "
                            f"{power[w['run']]['false_pass']:.3g})" if power and w["run"] in power else "")
                         for w in in_scope)
    tail = ((f"; excluded (collapsed mid-run): {names(crashed)}" if crashed else "")
            + (f"; not judged (first step full size): {names(full)}" if full else "")
            + (f"; {below} runs below the ceiling are inconclusive" if below else ""))
    if power is None or any(w["run"] not in power for w in in_scope):
        return Check("INCONCLUSIVE", f"the rule's power was not measured on the {len(in_scope)} judged runs; "
                     + run_desc + tail, in_scope, None, "power not measured")
    joint = float(np.prod([power[w["run"]]["power"] for w in in_scope]))
    if joint < v8["min_power"]:
        n_sim = min(power[w["run"]]["n_sim"] for w in in_scope)
        return Check("INCONCLUSIVE", (
            f"the test could not show the law: with each run's noise it passes on all {len(in_scope)} judged runs "
            f"with probability {joint:.2g} when the theory holds (simulated, {n_sim} curves per run; needs >= "
            f"{v8['min_power']:g}); as measured: worst dBIC {worst_bic:+.1f} (needs < {v8['dbic']:g}), worst "
            f"R'(0)/max R' / bound {worst_slow:.2f} (needs <= 1), dAIC < {v8['daic']:g} on {half:.0%}; " + run_desc
            + tail), in_scope, joint, "probability that the rule passes on every judged run when the theory holds "
            "(simulated)", "power")
    name, measured, unit = binding([
        ("dbic_worst", worst_bic, v8["dbic"], "<", "largest dBIC (three-phase - single exp.) over in-scope runs"),
        ("slow_start_theory", worst_slow, 1.0, "<=",
         "largest R'(0)/max R' over the theory's bound, over in-scope runs")])
    passed = worst_bic < v8["dbic"] and worst_slow <= 1.0
    verdict = "PASS" if passed else "PARTIAL" if half >= 0.5 else "FAIL"
    reason = (f"worst of {len(in_scope)} runs: dBIC {worst_bic:+.1f} (needs < {v8['dbic']:g}), R'(0)/max R' / bound "
              f"{worst_slow:.2f} (needs <= 1); dAIC < {v8['daic']:g} on {half:.0%}; power {joint:.2f}; "
              + run_desc + tail)
    return Check(verdict, reason, in_scope, measured, unit, name)


def c9_verdict(rows: list[dict], v9: dict) -> Check:
    """P1-C9: R² ≥ ``r2_min`` on every run whose ceiling reaches ``r2_min + ceiling_margin`` (rule ``r2_worst``);
    PARTIAL: on at least half of them (``partial_half``) or R²/R²_max ≥ ``r2_min`` on every run
    (``partial_ratio``); INCONCLUSIVE when no run's ceiling reaches the floor."""
    floor = v9["r2_min"] + v9["ceiling_margin"]
    in_scope = [w for w in rows if w["ceiling"] >= floor]
    if not in_scope:
        top = max((w["ceiling"] for w in rows), default=math.nan)
        median = float(np.median([w["r2_tp"] for w in rows])) if rows else math.nan
        return Check("INCONCLUSIVE", (f"noise ceiling 1 - sigma^2/Var(r) below {floor:.2f} on all {len(rows)} runs "
                                      f"(max {top:.3f}, median R^2 {median:.3f}): no law could reach the paper's R^2"),
                     [], top, "largest noise ceiling 1 - sigma^2/Var(r)")
    worst = min(w["r2_tp"] for w in in_scope)
    frac = float(np.mean([w["r2_tp"] >= v9["r2_min"] for w in in_scope]))
    ratio = min(w["r2_tp"] / w["ceiling"] for w in rows)
    verdict = ("PASS" if worst >= v9["r2_min"] else
               "PARTIAL" if frac >= 0.5 or ratio >= v9["r2_min"] else "FAIL")
    out = [w for w in rows if w["ceiling"] < floor]
    reason = (f"smallest R^2 {worst:.3f} over {len(in_scope)} runs with ceiling >= {floor:.2f} (needs >= "
              f"{v9['r2_min']}); R^2 >= {v9['r2_min']} on {frac:.0%}; smallest R^2/ceiling {ratio:.3f}; "
              + "; ".join(f"{w['model']} G={w['G']} s{w['seed']}: R^2 {w['r2_tp']:.3f} (ceiling {w['ceiling']:.3f})"
                          for w in in_scope)
              + (f"; below the ceiling floor (listed, not judged): " + "; ".join(
                  f"{w['model']} G={w['G']} s{w['seed']}: R^2 {w['r2_tp']:.3f} (ceiling {w['ceiling']:.3f})"
                  for w in out) if out else ""))
    return Check(verdict, reason, in_scope, worst, f"smallest three-phase R^2 (runs with ceiling >= {floor:.2f})",
                 "r2_worst")


def c12_verdict(rows: list[dict], v12: dict) -> Check:
    """P1-C12 on the curve's shape (not the fitted ζ, which is ≥ 1 by construction of the overdamped family), by the
    rule as amended on 2026-12-02 in ``book/claims.yml``.

    A run's overshoot is max (smoothed reward − R∞)/SE with SE autocorrelation-aware (``overshoot_ac``, AR(1) of the
    overdamped fit's residuals, :func:`ar1_mean_se`); it is compared with the envelope that noise alone reaches,
    the (1 − ``envelope_alpha``/m) quantile of :func:`overshoot_null` for m in-scope runs (Bonferroni), as the ratio
    overshoot / envelope (rule ``overshoot_envelope_worst``, ≤ 1). PASS when on every in-scope run the oscillatory
    law does not win (ΔBIC(oscillatory − overdamped) > ``dbic``, rule ``dbic_osc_worst``) and no ratio exceeds 1;
    FAIL when some run shows the full oscillation signature (ΔBIC < ``dbic`` with ζ < 1 and a ratio > 1); PARTIAL
    otherwise (one part broken, no run with the signature). In scope when 3 SE ≤ ``min_rise_frac`` × rise;
    INCONCLUSIVE when no run is."""
    in_scope = [w for w in rows if w["detectable"]]
    if not in_scope:
        smallest = min((w["detect_frac"] for w in rows), default=math.nan)
        return Check("INCONCLUSIVE", (f"on every run 3 SE of the smoothed reward exceed {v12['min_rise_frac']:.0%} "
                                      f"of the rise (smallest: {smallest:.2f} of the rise): an oscillation could not "
                                      "have been seen"),
                     [], smallest, "smallest detectable overshoot (3 SE) / rise over the runs")
    q = 1 - v12["envelope_alpha"] / len(in_scope)
    for w in in_scope:
        null = np.asarray(w["overshoot_null"], dtype=float)
        w["envelope"] = float(np.quantile(null, q))
        w["envelope_ratio"] = w["overshoot_ac"] / w["envelope"] if w["envelope"] > 0 else math.inf
        w["envelope_p"] = float((1 + np.sum(null >= w["overshoot_ac"])) / (1 + null.size))
    worst_bic = min(w["d_bic_osc"] for w in in_scope)
    worst_ratio = max(w["envelope_ratio"] for w in in_scope)
    name, measured, unit = binding([
        ("overshoot_envelope_worst", worst_ratio, v12["envelope_bound"], "<=",
         "largest overshoot / noise-alone envelope over in-scope runs (autocorrelation-aware SE, Bonferroni quantile)"),
        ("dbic_osc_worst", worst_bic, v12["dbic"], ">", "smallest dBIC (oscillatory - overdamped) over in-scope runs")])
    over = [w for w in in_scope if w["envelope_ratio"] > v12["envelope_bound"]]
    wins = [w for w in in_scope if w["d_bic_osc"] <= v12["dbic"]]
    osc = [w for w in in_scope if w["d_bic_osc"] < v12["dbic"] and w["osc_regime"] in ("underdamped", "growing")
           and w["envelope_ratio"] > v12["envelope_bound"]]
    verdict = "PASS" if not over and not wins else "FAIL" if osc else "PARTIAL"
    per_run = ", ".join(f"{w['model']} G={w['G']} s{w['seed']} {w['overshoot_ac']:.2f} SE (envelope "
                        f"{w['envelope']:.2f}, p {w['envelope_p']:.3g})" for w in
                        sorted(in_scope, key=lambda w: -w["envelope_ratio"])[:3])
    reason = (f"{len(in_scope)} runs where an overshoot of {v12['min_rise_frac']:.0%} of the rise is detectable "
              f"(3 autocorrelation-aware SE); overshoot above the noise-alone envelope (its {q:.4f} quantile, "
              f"Bonferroni over {len(in_scope)} runs) on {len(over)}"
              + (" (" + names(over) + ")" if over else "")
              + f"; largest overshoots {per_run}; residual lag-1 autocorrelation "
              f"{min(w['resid_phi'] for w in in_scope):.2f}-{max(w['resid_phi'] for w in in_scope):.2f}; "
              f"oscillatory law wins (dBIC <= {v12['dbic']:g}) on {len(wins)} (smallest dBIC {worst_bic:+.1f}); "
              f"full oscillation signature (dBIC < {v12['dbic']:g} with zeta < 1 and an overshoot above the envelope) "
              f"on: {names(osc)}; where an overshoot would be undetectable the oscillatory law wins by BIC on "
              f"{names([w for w in rows if not w['detectable'] and w['d_bic_osc'] < v12['dbic']])}")
    return Check(verdict, reason, in_scope, measured, unit, name)


def c15_verdict(bins: list[dict], v15: dict) -> Check:
    """P1-C15 on bins of matched batch reward, each ``{"lo", "hi", "diff", "ci"}`` (G=4 minus G=16 unbiased
    within-group variance and its 95 % CI), scored by the rule **as first registered** (``book/claims.yml``, rules
    ``first_registered_*``):

    * PASS: the CIs of ≥ 2 bins exclude 0 with one common sign (``first_registered_pass`` on the larger of the
      numbers of bins whose CI lies above 0 and below 0);
    * FAIL: no CI excludes 0 (``first_registered_fail_bins``) and every CI half-width (hi − lo)/2 is ≤ the resolution
      (``first_registered_fail_halfwidth``);
    * otherwise, or with fewer than ``min_bins`` bins, INCONCLUSIVE.

    The later versions, written after a result was seen (``later_pass``: the bins counted need |diff| ≥ the
    resolution and every excluding bin one sign; ``later_fail``: the envelope of all CIs inside ±resolution), are
    computed and quoted in the reason, never deciding."""
    res = v15["resolution"]
    pos = [b for b in bins if b["ci"][0] > 0]
    neg = [b for b in bins if b["ci"][1] < 0]
    n_sign = max(len(pos), len(neg))
    n_excl = len(pos) + len(neg)
    half = max(((b["ci"][1] - b["ci"][0]) / 2 for b in bins), default=math.nan)
    later_n = (sum(abs(b["diff"]) >= res for b in pos + neg) if not (pos and neg) else 0)
    env = (min(b["ci"][0] for b in bins), max(b["ci"][1] for b in bins)) if bins else (math.nan, math.nan)
    later = ("PASS" if later_n >= 2 else "FAIL" if bins and -res <= env[0] and env[1] <= res else "INCONCLUSIVE")
    desc = "; ".join(f"[{b['lo']:.1f},{b['hi']:.1f}): {b['diff']:+.4f} [{b['ci'][0]:+.4f}, {b['ci'][1]:+.4f}]"
                     for b in bins)
    if len(bins) < v15["min_bins"]:
        verdict = "INCONCLUSIVE"
        head = f"{len(bins)} bins with >= {v15['min_groups_per_bin']} groups per G (needs {v15['min_bins']})"
    elif n_sign >= 2:
        verdict, head = "PASS", f"{n_sign} of {len(bins)} bins exclude 0 with one sign"
    elif n_excl == 0 and half <= res:
        verdict, head = "FAIL", f"no bin's CI excludes 0 and every half-width <= {res} (largest {half:.4f})"
    else:
        verdict = "INCONCLUSIVE"
        head = (f"{n_sign} of {len(bins)} bins exclude 0 with one sign (PASS needs 2), and FAIL needs no bin excluding"
                f" 0 ({n_excl} do) with half-widths <= {res} (largest {half:.4f})")
    reason = (f"rule as first registered: {head}; later version (written after a result, not deciding): "
              f"{later} ({later_n} bin(s) exclude 0 with |diff| >= {res}; CI envelope [{env[0]:+.4f}, {env[1]:+.4f}]); "
              + desc)
    return Check(verdict, reason, bins, n_sign, "bins whose 95% CI excludes 0 with one sign (rule as first "
                 "registered)", "first_registered_pass")


def with_headroom(before: dict[str, float]) -> list[str]:
    """Families with headroom for P1-C14 (``book/claims.yml``): before-training accuracy strictly between 0 and 1."""
    return [f for f, b in before.items() if 0.0 < b < 1.0]


def c14_verdict(tables: dict[int, dict[str, dict]], families: list[str], n_problems: int, n_runs: dict[int, int],
                v14: dict, *, rng: np.random.Generator, n_permutations: int = 10_000) -> tuple[Check, dict]:
    """P1-C14 on before/after accuracies per family (``tables[G][family] = {"before", "after", "delta"}``, means over
    the ``n_runs[G]`` runs of one G, each family evaluated on ``n_problems`` problems), families ordered near to far.

    Headroom: before-training accuracy strictly between 0 and 1 at both G (:func:`with_headroom`). Per family with
    headroom, (a) the difference of mean gains d = gain(G=4) − gain(G=16) with the binomial 95 % half-width
    h = 1.96 · sqrt(2 p̄(1 − p̄)/n) · sqrt(1/n₄ + 1/n₁₆), p̄ the family's mean of before and after accuracy over both
    G (each run's gain is a difference of two accuracies on n problems); (a) holds when max |d| + h ≤ ``margin``
    (rule ``equivalence``). (b) Spearman ρ of the mean gain against the near-to-far index, with a one-sided
    permutation p-value (``near_far``: ρ < 0 and p < ``alpha``). (c) the reasoning-distilled model transferring best
    is untestable without one: not met. PASS: (a), (b), (c); PARTIAL: two of them; otherwise FAIL. INCONCLUSIVE
    (claims.yml ``inconclusive_if``) when fewer than ``min_families`` families have headroom (``families``) or a CI
    half-width exceeds ``margin`` (``halfwidth``: equivalence could not be shown). Returns the check and the
    per-family numbers ``{"headroom", "zero", "diff", "half", "bound", "rho", "p"}``.
    """
    before = {f: min(tables[G][f]["before"] for G in (4, 16)) for f in families}
    top = {f: max(tables[G][f]["before"] for G in (4, 16)) for f in families}
    headroom = [f for f in with_headroom(before) if top[f] < 1.0]
    zero = [f for f in families if top[f] == 0.0]
    gain = {G: np.array([tables[G][f]["delta"] for f in headroom]) for G in (4, 16)}
    p_bar = np.array([np.mean([(tables[G][f]["before"] + tables[G][f]["after"]) / 2 for G in (4, 16)])
                      for f in headroom])
    se_one = np.sqrt(2 * p_bar * (1 - p_bar) / n_problems)
    half = 1.96 * se_one * math.sqrt(1 / n_runs[4] + 1 / n_runs[16])
    diff = gain[4] - gain[16]
    bound = np.abs(diff) + half
    mean_gain = (gain[4] + gain[16]) / 2
    if len(headroom) >= 2 and np.ptp(mean_gain) > 0:
        from scipy.stats import spearmanr

        idx = np.arange(len(headroom))
        rho = float(spearmanr(idx, mean_gain).statistic)
        perm = np.array([spearmanr(idx, rng.permutation(mean_gain)).statistic for _ in range(n_permutations)])
        p = float((np.sum(perm <= rho) + 1) / (n_permutations + 1))
    else:
        rho, p = math.nan, math.nan
    numbers = dict(headroom=headroom, zero=zero, diff=diff, half=half, bound=bound, rho=rho, p=p)
    fams = (f"{len(headroom)} of {len(families)} families with headroom ({', '.join(headroom) or 'none'}); "
            f"{len(zero)} score 0 before training ({', '.join(zero) or 'none'})")
    per = "; ".join(f"{f}: gain G4 - G16 {d:+.3f} ± {h:.3f}" for f, d, h in zip(headroom, diff, half))
    bn = f"(b) Spearman {rho:.3f}, one-sided p = {p:.3f}; (c) no distilled model here"
    if len(headroom) < v14["min_families"]:
        return Check("INCONCLUSIVE", f"{fams}: fewer than {v14['min_families']} cannot show transfer; {per}",
                     [], len(headroom), "families with headroom (before strictly between 0 and 1)", "families"), numbers
    widest = int(np.argmax(half))
    if half[widest] > v14["margin"]:
        return Check("INCONCLUSIVE", (
            f"(a)'s 95% CI half-width {half[widest]:.3f} on {headroom[widest]} exceeds the margin {v14['margin']}: "
            f"equivalence could not be shown; {fams}; {per}; {bn}"),
            [], float(half[widest]), "largest 95% CI half-width of gain(G=4) - gain(G=16)", "halfwidth"), numbers
    a_ok = bool(bound.max() <= v14["margin"])
    b_ok = bool(rho < 0 and p < v14["alpha"])
    n_ok = int(a_ok) + int(b_ok)
    verdict = "PASS" if n_ok == 3 else "PARTIAL" if n_ok == 2 else "FAIL"
    reason = (f"(a) G-equivalence {'met' if a_ok else 'not met'} (largest |d| + half-width {bound.max():.3f}, margin "
              f"{v14['margin']}); {bn}; {fams}; {per}")
    if not a_ok:
        return Check(verdict, reason, headroom, float(bound.max()),
                     "(a) largest |gain(G=4) - gain(G=16)| + 95% half-width", "equivalence"), numbers
    return Check(verdict, reason, headroom, p, "(b) one-sided permutation p of Spearman rho(distance, gain)",
                 "near_far"), numbers


def c5_equivalence(rows: list[dict], models: list[str], margin: float, *, verbose: bool = True) -> dict:
    """P1-C5's Δ = mean(plateau G=4 − plateau G=16) / mean rise over ``models``, its 95 % t half-width (seed spread
    pooled over the model × G cells), the 95 % CI ``ci`` = Δ ± half-width, the degrees of freedom and the verdict
    (PASS: CI inside ±``margin``; FAIL: CI entirely outside; else INCONCLUSIVE); the plateau is the late mean reward."""
    from scipy.stats import t as student_t

    diffs, rises, resid = [], [], []
    for m in models:
        cell = {G: np.array([w["late"] for w in rows if w["model"] == m and w["G"] == G]) for G in (4, 16)}
        if not all(len(cell[G]) for G in (4, 16)):
            raise ValueError(f"P1-C5 needs runs at G=4 and G=16 for model {m!r}")
        diffs.append(cell[4].mean() - cell[16].mean())
        rises.append(np.mean([w["late"] - w["early"] for w in rows if w["model"] == m]))
        resid += [x - cell[G].mean() for G in (4, 16) for x in cell[G]]
        if verbose:
            print(f"{m}: late reward G=4 {np.round(cell[4], 3)}, G=16 {np.round(cell[16], 3)}, rise {rises[-1]:.3f}")
    n_seeds = len(resid) // (2 * len(models))
    dof = len(resid) - 2 * len(models)
    pooled_sd = math.sqrt(sum(x ** 2 for x in resid) / dof) if dof > 0 else math.nan  # seed-to-seed sd of a plateau
    se_diff = pooled_sd * math.sqrt(2 / n_seeds) / math.sqrt(len(models))             # of the model-averaged difference
    delta = float(np.mean(diffs) / np.mean(rises))                                    # relative to the mean rise
    half = float(student_t.ppf(0.975, dof) * se_diff / np.mean(rises)) if dof > 0 else math.nan
    if verbose:
        print(f"Delta = mean(plateau G4 - plateau G16) / mean rise = {np.mean(diffs):+.3f} / {np.mean(rises):.3f} = "
              f"{delta:+.3f}, 95% CI ± {half:.3f} (t, {dof} dof)")
    if not np.isfinite(half):
        verdict = "INCONCLUSIVE"
    elif abs(delta) + half <= margin:
        verdict = "PASS"
    elif abs(delta) - half > margin:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
    return dict(delta=delta, half=half, ci=(delta - half, delta + half), dof=dof, verdict=verdict,
                mean_diff=float(np.mean(diffs)), mean_rise=float(np.mean(rises)))
