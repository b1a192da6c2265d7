"""P1-C5, P1-C8, P1-C9 and P1-C12 on committed GRPO runs: the per-run fit table and the verdict rules.

Shared by the notebooks ``grpo_p1_dynamics`` (the tiny sharpening testbed) and ``grpo_smollm`` (SmolLM2-135M), so
that one rule, as fixed in ``book/claims.yml``, judges every family of runs. Each ``*_verdict`` function takes the
rows of :func:`run_row` and the claim's ``criterion.values`` and returns ``(verdict, reason, in-scope rows)``.

* P1-C8 (spec §3.5, Prop. 14): ΔBIC(three-phase − single exponential) < ``dbic`` and a slow start
  R'(0)/max R' ≤ ``slope_frac`` on every run whose noise ceiling 1 − σ²/Var(r) reaches ``min_ceiling``.
* P1-C9: three-phase R² ≥ ``r2_min`` on every run whose ceiling reaches ``r2_min + ceiling_margin``.
* P1-C12 (§3.6): no in-scope run prefers the underdamped law by ΔBIC < ``dbic`` *and* overshoots its plateau by more
  than ``overshoot_se`` standard errors of the smoothed reward; in scope when 3 SE ≤ ``min_rise_frac`` × rise.
* P1-C5 (§3.8): the equivalence statistic Δ = mean over models of (plateau G=4 − plateau G=16) / mean rise, with a
  t-interval from the seed spread pooled over the model × G cells; PASS when |Δ| + half-width ≤ ``margin``.
"""
from __future__ import annotations

import math

import numpy as np


def run_row(run, *, smooth_window: int, early_steps: int, late_steps: int, min_rise_frac: float) -> dict:
    """Fits and summary numbers of one committed run's training reward (see the module docstring)."""
    from .. import runs as R
    from ..p1 import laws
    from ..runs import response_laws as rl

    c = run.config
    fit = R.fit_laws(run.log)                                   # the same fit `rlvr-dynamics fit metrics.csv` prints
    t, y = run.series("reward", dropna=True)
    tt = t - t[0]
    ys = R.analysis.rolling_mean(y, smooth_window)
    bounds = R.report.resolve_reward_bounds(y)
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
    rise_max = float(np.max(ys[smooth_window - 1:]) - np.mean(y[:early_steps]))  # issue 10's target: >= 0.4
    return dict(run=run.id, rise_max=rise_max, frac_zero_std=float(np.nanmean(run.series("frac_reward_zero_std"))),
                model=c.model, G=c.num_generations, seed=c.seed, ceiling=R.noise_ceiling(y),
                r2_tp=fit["three_phase"].r2, r2_se=fit["single_exponential"].r2, d_aic=fit["delta_aic"],
                d_bic=fit["delta_bic"], r2_tp_smooth=fit_s["three_phase"].r2,
                slow_start=float(slope[0] / slope.max()) if slope.max() > 0 else math.nan,
                d_bic_osc=oscl.bic - over.bic, osc_regime=oscl.regime, overshoot_se=overshoot,
                detectable=3 * se_smooth <= min_rise_frac * abs(rise),
                rise=rise, early=float(np.mean(y[:early_steps])), late=float(np.mean(y[-late_steps:])),
                **osc, fit=fit, t=t, y=y, ys=ys)


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


def c8_verdict(rows: list[dict], v8: dict) -> tuple[str, str, list[dict]]:
    """P1-C8: every in-scope curve needs ΔBIC < ``dbic`` and a slow start; PARTIAL: ΔAIC < ``daic`` on ≥ half."""
    in_scope = [w for w in rows if w["ceiling"] >= v8["min_ceiling"] and len(w["t"]) >= 10]
    if not in_scope:
        top = max((w["ceiling"] for w in rows), default=math.nan)
        return "INCONCLUSIVE", (f"no run has a noise ceiling >= {v8['min_ceiling']} (max {top:.2f}): no fit could "
                                "separate the laws"), in_scope
    strong = [w["d_bic"] < v8["dbic"] and w["slow_start"] <= v8["slope_frac"] for w in in_scope]
    half = np.mean([w["d_aic"] < v8["daic"] for w in in_scope])
    verdict = "PASS" if all(strong) else "PARTIAL" if half >= 0.5 else "FAIL"
    reason = "; ".join(f"{w['model']} G={w['G']}: dBIC {w['d_bic']:.1f}, R'(0)/max R' {w['slow_start']:.2f}, ceiling "
                       f"{w['ceiling']:.2f}" for w in in_scope)
    return verdict, reason + f"; {len(rows) - len(in_scope)} runs below the ceiling are inconclusive", in_scope


def c9_verdict(rows: list[dict], v9: dict) -> tuple[str, str, list[dict]]:
    """P1-C9: R² ≥ ``r2_min`` on every run whose ceiling reaches ``r2_min + ceiling_margin``."""
    floor = v9["r2_min"] + v9["ceiling_margin"]
    in_scope = [w for w in rows if w["ceiling"] >= floor]
    if not in_scope:
        top = max((w["ceiling"] for w in rows), default=math.nan)
        median = float(np.median([w["r2_tp"] for w in rows])) if rows else math.nan
        return "INCONCLUSIVE", (f"noise ceiling 1 - sigma^2/Var(r) below {floor:.2f} on all {len(rows)} runs (max "
                                f"{top:.3f}, median R^2 {median:.3f}): no law could reach the paper's R^2"), in_scope
    ok = [w["r2_tp"] >= v9["r2_min"] for w in in_scope]
    verdict = "PASS" if all(ok) else "PARTIAL" if np.mean(ok) >= 0.5 else "FAIL"
    return verdict, "; ".join(f"{w['model']} G={w['G']}: R^2 {w['r2_tp']:.3f} (ceiling {w['ceiling']:.3f})"
                              for w in in_scope), in_scope


def c12_verdict(rows: list[dict], v12: dict) -> tuple[str, str, list[dict]]:
    """P1-C12 on the curve's shape (not the fitted ζ, which is ≥ 1 by construction of the overdamped family)."""
    in_scope = [w for w in rows if w["detectable"]]
    if not in_scope:
        return "INCONCLUSIVE", (f"on every run 3 SE of the smoothed reward exceeds {v12['min_rise_frac']:.0%} of the "
                                "rise: an oscillation could not have been seen"), in_scope
    osc = [w for w in in_scope if w["d_bic_osc"] < v12["dbic"] and w["osc_regime"] in ("underdamped", "growing")
           and w["overshoot_se"] > v12["overshoot_se"]]
    reason = (f"{len(in_scope)} runs where an overshoot of {v12['min_rise_frac']:.0%} of the rise is detectable; "
              f"oscillating: {names(osc)}; dBIC(oscillatory - overdamped) min "
              f"{min(w['d_bic_osc'] for w in in_scope):.1f}, max overshoot "
              f"{max(w['overshoot_se'] for w in in_scope):.1f} SE; where an overshoot would be undetectable the "
              f"oscillatory law wins by BIC on "
              f"{names([w for w in rows if not w['detectable'] and w['d_bic_osc'] < v12['dbic']])}")
    return ("FAIL" if osc else "PASS"), reason, in_scope


def c5_equivalence(rows: list[dict], models: list[str], margin: float, *, verbose: bool = True) -> dict:
    """P1-C5's Δ = mean(plateau G=4 − plateau G=16) / mean rise over ``models``, its 95 % t half-width (seed spread
    pooled over the model × G cells), the degrees of freedom and the verdict; the plateau is the late mean reward."""
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
    return dict(delta=delta, half=half, dof=dof, verdict=verdict, mean_diff=float(np.mean(diffs)),
                mean_rise=float(np.mean(rises)))
