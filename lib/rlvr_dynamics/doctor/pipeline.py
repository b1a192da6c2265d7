"""Fit, interpret and forecast one training run's reward curve: what ``rlvr-dynamics fit LOG`` prints.

For a run log (:mod:`rlvr_dynamics.runs.logs`) this fits the three-phase law and the single exponential
(:mod:`rlvr_dynamics.p1.laws`, P1 spec §3.6–3.7), and reads the overdamped fit as an oscillator (P1 spec §3.3–3.4) [D]:
with slow and fast times :math:`T_s, T_f` the characteristic roots are :math:`\\lambda_\\pm = 1/T_f, 1/T_s`, so

.. math::  M/K_{\\rm eff} = T_sT_f,\\qquad C/K_{\\rm eff}=T_s+T_f,\\qquad \\zeta=\\frac{T_s+T_f}{2\\sqrt{T_sT_f}}\\ (\\ge 1).

Given the run's learning rate :math:`\\eta`, momentum :math:`\\mu` (Adam :math:`\\beta_1`) and refresh interval
:math:`K_{\\rm ref}`, the damping relation :math:`C/K_{\\rm eff} = ((1-\\mu)-\\eta K K_{\\rm ref})/(\\eta K)` in steps
(:math:`\\delta=1`) gives the curvature :math:`\\eta K=(1-\\mu)/(C/K_{\\rm eff}+K_{\\rm ref})` and the stability margin
:math:`\\eta K K_{\\rm ref}/(1-\\mu)` (unstable at ≥ 1, P1-C10). This inversion uses only the slow time's sum
with the fast one and assumes the paper's single-curvature model; it is a diagnostic, not a measurement.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .._checks import check_in_range, check_int, check_positive
from .logs import RunLog
from .noise import noise_ceiling


@dataclass
class OscillatorReading:
    """The overdamped three-phase fit read as a damped oscillator (time in optimizer steps) [D]."""

    mass_over_stiffness: float
    """M/K_eff = T_s·T_f (steps²)."""
    damping_over_stiffness: float
    """C/K_eff = T_s + T_f (steps)."""
    damping_ratio: float
    """ζ = (T_s+T_f)/(2√(T_s T_f)); ≥ 1 for the overdamped law."""
    eta_curvature: float | None = None
    """ηK implied by the hyperparameters, if given."""
    stability_margin: float | None = None
    """ηK·K_ref/(1−μ): the run is dynamically unstable at ≥ 1 (P1-C10)."""


def read_oscillator(t_slow: float, t_fast: float, momentum: float | None = None,
                    refresh_interval: int | None = None) -> OscillatorReading:
    """Oscillator coefficients (ratios) from the fitted slow/fast times; curvature if the hyperparameters are given."""
    t_slow, t_fast = float(check_positive("t_slow", t_slow)), float(check_positive("t_fast", t_fast))
    reading = OscillatorReading(t_slow * t_fast, t_slow + t_fast, (t_slow + t_fast) / (2 * math.sqrt(t_slow * t_fast)))
    if momentum is not None and refresh_interval is not None:
        mu = float(check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False))
        k_ref = check_int("refresh_interval", refresh_interval, 1)
        reading.eta_curvature = (1 - mu) / (reading.damping_over_stiffness + k_ref)
        reading.stability_margin = reading.eta_curvature * k_ref / (1 - mu)
    return reading


def resolve_reward_bounds(reward: np.ndarray, reward_bounds="auto") -> tuple[float, float] | None:
    """The bounds on R0 and R∞ used by every fit of a run (one rule for the notebooks and ``rlvr-dynamics fit``).

    ``"auto"``: ``(0, 1)`` when every logged reward lies in [0, 1] (a success rate), else None (bounds from the
    data); ``None``: bounds from the data; a pair ``(low, high)`` with low < high: those bounds.
    """
    if isinstance(reward_bounds, str):
        if reward_bounds != "auto":
            raise ValueError(f"reward_bounds must be 'auto', None or a (low, high) pair, got {reward_bounds!r}")
        r = np.asarray(reward, dtype=float)
        r = r[np.isfinite(r)]
        return (0.0, 1.0) if r.size and r.min() >= 0.0 and r.max() <= 1.0 else None
    if reward_bounds is None:
        return None
    try:
        low, high = (float(x) for x in reward_bounds)
    except (TypeError, ValueError):
        raise ValueError(f"reward_bounds must be 'auto', None or a (low, high) pair, got {reward_bounds!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"reward_bounds must be finite with low < high, got {reward_bounds!r}")
    return low, high


def fit_laws(log: RunLog, *, reward_bounds="auto", seed: int = 0) -> dict[str, Any]:
    """:func:`rlvr_dynamics.p1.laws.compare_laws` on ``log``'s raw per-step reward, time counted from its first
    logged step, bounds from :func:`resolve_reward_bounds`. The fit every notebook and ``rlvr-dynamics fit`` use."""
    from ..p1 import laws

    steps, reward = log.reward_curve()
    return laws.compare_laws(steps - steps[0], reward, r_bounds=resolve_reward_bounds(reward, reward_bounds),
                             seed=seed)


def fit_run(log: RunLog, *, momentum: float | None = None, refresh_interval: int | None = None,
            forecast_steps: list[int] | None = None, reward_bounds="auto", seed: int = 0,
            p1_laws: bool = True, diagnostics: bool = True, fits: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fit ``log``'s reward curve and return a JSON-ready report (module docstring).

    Keys: ``fits``/``preferred_law``/``delta_aic``/``delta_bic``/``features``/``oscillator`` — P1's three-phase and
    single-exponential reference fits (:func:`fit_laws`, the notebooks' fit; skipped with ``p1_laws=False``, they
    take most of the time); ``noise`` — σ and the noise ceiling; ``response`` — the second-order response laws in
    every regime (:mod:`.response_laws`) with ζ, C/K and, given ``refresh_interval``, the stability margin, each
    with an 80 % interval; ``forecast``/``forecast_interval`` — the reward at ``forecast_steps`` (:mod:`.forecast`)
    and its 80 % prediction interval; ``dynamics`` — the evidence reading (:func:`.reading.read_dynamics`:
    stable / unstable / undetermined / noise only, with why), which leads the regime sentence; ``plateau`` (None with
    a note outside the plausible band, :data:`PLATEAU_BAND`); ``diagnostics`` — P1's four detectors and the collapse warning
    (:mod:`.diagnostics`). ``fits``: a :func:`~.response_laws.fit_response_laws` result for this log's reward with
    the same bounds, to save a refit (the live doctor shares it with its detectors). ValueError when ``momentum`` is
    given without ``refresh_interval`` (it would be ignored).
    """
    from ..p1 import laws
    from . import diagnostics as diag
    from . import response_laws as rl
    from .forecast import forecast as make_forecast

    if momentum is not None and refresh_interval is None:
        raise ValueError(f"momentum={momentum!r} needs refresh_interval (K_ref = steps_per_generation × "
                         "num_iterations): without it the oscillator reading cannot use it")
    if refresh_interval is not None:
        check_int("refresh_interval", refresh_interval, 1)
    if momentum is not None:
        check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    for s in forecast_steps or []:
        check_int("forecast step", s, 0)
    steps, reward = log.reward_curve()
    t = steps - steps[0]
    bounds = resolve_reward_bounds(reward, reward_bounds)
    report: dict[str, Any] = {
        "source": log.source, "reward_column": log.reward_column, "n_points": int(len(t)),
        "first_step": int(steps[0]), "last_step": int(steps[-1]),
        "reward_bounds": bounds,
    }
    if p1_laws:
        comparison = fit_laws(log, reward_bounds=reward_bounds, seed=seed)
        three, single = comparison["three_phase"], comparison["single_exponential"]
        report.update({
            "fits": {name: _fit_dict(fit) for name, fit in (("three_phase", three), ("single_exponential", single))},
            "preferred_law": comparison["winner"], "delta_aic": comparison["delta_aic"],
            "delta_bic": comparison["delta_bic"],
            "features": {name: laws.features(fit) for name, fit in (("three_phase", three),
                                                                    ("single_exponential", single))},
        })
        p = three.params
        if three.reliable and not _at_bound(three) and "t_slow" in p and "t_fast" in p:
            report["oscillator"] = asdict(read_oscillator(p["t_slow"], p["t_fast"], momentum, refresh_interval))
    sigma = rl.step_sigma(reward)
    rise = float(np.ptp(reward))
    report["noise"] = {"sigma": sigma, "sigma_plain": rl.step_sigma(reward, robust=False),
                       "noise_ceiling": noise_ceiling(reward),
                       "noise_over_range": sigma / rise if rise > 0 else None}
    resp = fits if fits is not None else rl.fit_response_laws(steps, reward, reward_bounds=bounds)
    pref = resp["preferred"]
    response: dict[str, Any] = {"preferred": pref, "laws": {name: resp[name].to_dict() for name in rl.LAW_NAMES}}
    from .reading import read_dynamics

    dyn = read_dynamics(steps, reward, reward_bounds=bounds, fits=resp)
    report["dynamics"] = dyn.to_dict()
    if pref is not None:
        best = resp[pref]
        if dyn.fit is not None and (dyn.verdict == "stable" or (best.regime == "growing" and not dyn.unstable)):
            best = dyn.fit           # the law the reading reports (a growing fit without evidence never is)
        reading = {"law": best.law, "regime": best.regime, "status": best.status, "verdict": dyn.verdict,
                   "r2": best.to_dict()["r2"],
                   "damping_ratio": best.to_dict()["damping_ratio"],
                   "damping_ratio_80": best.to_dict()["damping_ratio_80"],
                   "damping_over_stiffness": best.to_dict()["damping_over_stiffness"],
                   "meaning": _regime_meaning(best, dyn)}
        if refresh_interval is not None and dyn.verdict in ("stable", "unstable"):
            reading["stability"] = rl.stability_margin(best.damping_over_stiffness, best.damping_over_stiffness_sd,
                                                       refresh_interval)
            if momentum is not None and math.isfinite(best.damping_over_stiffness) and \
                    best.damping_over_stiffness + refresh_interval > 0:
                reading["eta_curvature"] = (1 - momentum) / (best.damping_over_stiffness + refresh_interval)
        response["reading"] = reading
        report["plateau"] = _plateau(best, dyn, reward, bounds, steps)
    report["response"] = response
    if forecast_steps:
        report["forecast_law"] = pref
        report["forecast"], report["forecast_interval"] = {}, {}
        for s in forecast_steps:
            fc = make_forecast(steps, reward, [s], reward_bounds=bounds, fits=resp)
            report["forecast"][int(s)] = fc.value
            report["forecast_interval"][int(s)] = [fc.low, fc.high]
    if diagnostics:
        margin = response.get("reading", {}).get("stability")
        dets = diag.diagnose(log, response=resp, margin=margin, reward_bounds=bounds)
        report["diagnostics"] = {name: d.to_dict() for name, d in dets.items()}
    return report


PLATEAU_BAND = 0.5
"""A plateau is reported only inside the observed reward range widened by this fraction of it on each side (and
inside the reward bounds when known); outside it the law is extrapolating, and the report says so instead."""


PLATEAU_REACHED = 0.8
"""A plateau is reported only when the law read has covered at least this share of its rise (R(t_last) − R0)/(R∞ − R0)
by the last logged step: before that, R∞ is an extrapolation of a curve with no plateau in sight."""


def _plateau(fit, dyn, reward, bounds, steps=None) -> dict[str, Any]:
    """The plateau R∞ of the law read, or None with why: a ``noise only`` or ``unstable`` reading has no plateau,
    and a value outside the plausible band (:data:`PLATEAU_BAND`) is never printed."""
    value, sd = fit.params.get("r_inf"), fit.stderr.get("r_inf")
    out = {"value": None, "sd": None, "law": fit.law, "status": fit.status, "note": None}
    if dyn.verdict in ("noise only", "unstable"):
        out["note"] = f"no plateau: the reading is {dyn.verdict}"
        return out
    y = np.asarray(reward, dtype=float)
    y = y[np.isfinite(y)]
    lo, hi = float(y.min()), float(y.max())
    lo, hi = lo - PLATEAU_BAND * (hi - lo), hi + PLATEAU_BAND * (hi - lo)
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    if value is None or not math.isfinite(value) or not lo <= value <= hi:
        out["note"] = (f"the {fit.law.replace('_', ' ')} law's plateau lies outside the plausible band "
                       f"[{lo:.4g}, {hi:.4g}]: not identified by this log")
        return out
    r0 = fit.params.get("r0")
    if steps is not None and r0 is not None and math.isfinite(r0) and abs(value - r0) > 0:
        covered = float((fit.predict(np.asarray(steps, dtype=float)[-1:])[0] - r0) / (value - r0))
        out["share_of_rise_covered"] = covered
        if covered < PLATEAU_REACHED:
            out["note"] = (f"still rising: the {fit.law.replace('_', ' ')} law has covered {100 * max(covered, 0):.0f} % "
                           f"of its rise by the last step (< {100 * PLATEAU_REACHED:.0f} %), so its plateau "
                           f"({value:.4g}) is not identified by this log")
            return out
    out.update(value=value, sd=sd if sd is not None and math.isfinite(sd) and sd < hi - lo else None)
    return out


def _regime_meaning(fit, dyn=None) -> str:
    """One sentence on what the law read says about the run, led by the evidence verdict (:mod:`.reading`)."""
    if dyn is not None and dyn.verdict in ("noise only", "undetermined", "unstable"):
        return f"{dyn.verdict}: {dyn.reason}"
    if dyn is not None and dyn.verdict == "stable":
        return f"stable: {_regime_meaning(fit)}"
    iv = fit.damping_ratio_interval
    if fit.regime == "first-order":
        return "first-order rise to a plateau (no inertia resolved): stable, no oscillation"
    if fit.regime == "overdamped":
        return "overdamped (ζ ≥ 1): slow start, then a monotone approach to the plateau; stable"
    if fit.regime == "critical":
        return "critically damped (ζ = 1): the fastest approach without overshoot"
    if fit.regime == "underdamped":
        sure = iv is not None and iv[0] > 0
        return ("underdamped (0 < ζ < 1): the reward overshoots and oscillates around its plateau; stable" +
                ("" if sure else "; the 80 % interval of ζ reaches 0"))
    return f"{fit.regime}: {dyn.reason}" if dyn is not None else fit.regime


def to_jsonable(obj):
    """Strict-JSON version of a report: NaN/inf → None, numpy scalars → Python, tuples → lists, keys → str."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def _at_bound(fit) -> bool:
    """A P1 fit with a parameter at (or within 0.2 % of) its bound: the message says so, or T_f/T_s ≥ 0.998
    (ζ = 1 to three digits) or ≤ 0.002 (ζ ≳ 11, T_f below resolution)."""
    if "at a bound" in (fit.message or ""):
        return True
    p = fit.params
    if fit.law == "three_phase" and p.get("t_slow", 0) > 0 and math.isfinite(p.get("t_fast", math.nan)):
        q = min(p["t_slow"], p["t_fast"]) / max(p["t_slow"], p["t_fast"])
        return q >= 0.998 or q <= 0.002
    return False


def _fit_dict(fit) -> dict[str, Any]:
    """A P1 reference fit; a parameter at its bound (e.g. T_f/T_s, which makes ζ exactly 1 or ~500) makes it
    ``"at bound"`` and not reliable, whatever ``FitResult.reliable`` says."""
    status = "at bound" if _at_bound(fit) else ("reliable" if fit.reliable else "unreliable")
    message = fit.message
    if status == "at bound" and "at a bound" not in message:
        message = ("t_fast/t_slow within 0.2 % of its bound (critical damping ζ = 1, or T_f below one step): ζ is "
                   "not identified by this family; read the response laws")
    return {"params": {k: float(v) for k, v in fit.params.items()}, "r2": fit.r2, "aic": fit.aic, "bic": fit.bic,
            "residual_std": fit.residual_std, "reliable": status == "reliable", "status": status,
            "message": message}


def format_report(report: dict[str, Any]) -> str:
    """Human-readable summary of :func:`fit_run`'s report."""
    lines = [f"{report['source']}  (reward column {report['reward_column']!r}, {report['n_points']} points, "
             f"steps {report['first_step']}–{report['last_step']})"]
    if "fits" in report:
        lines += _format_p1(report)
    return _format_rest(report, lines)


def _format_p1(report: dict[str, Any]) -> list[str]:
    lines = ["  P1 reference fits (multi-start, the notebooks' fit):"]
    for name, fit in report["fits"].items():
        params = ", ".join(f"{k}={v:.4g}" for k, v in fit["params"].items())
        flag = "" if fit["reliable"] else f"  [{fit.get('status', 'unreliable')}: {fit['message']}]"
        lines.append(f"  {name:19s} R²={fit['r2']:.4f}  AIC={fit['aic']:.1f}  BIC={fit['bic']:.1f}  {params}{flag}")
    lines.append(f"  preferred law (BIC, |Δ| > 2): {report['preferred_law']} (ΔAIC={report['delta_aic']:.1f}, "
                 f"ΔBIC={report['delta_bic']:.1f}; negative favours the three-phase law)")
    feats = report["features"]["three_phase"]
    if report["fits"]["three_phase"]["reliable"]:
        lines.append("  three-phase features: " + ", ".join(f"{k}={v:.4g}" for k, v in feats.items()
                                                      if not k.endswith("_over_stiffness")))
    osc = report.get("oscillator")
    if osc:
        lines.append(f"  as an oscillator: M/K={osc['mass_over_stiffness']:.4g} steps², "
                     f"C/K={osc['damping_over_stiffness']:.4g} steps, ζ={osc['damping_ratio']:.3f}")
        if osc.get("eta_curvature") is not None:
            lines.append(f"  implied ηK={osc['eta_curvature']:.4g}; stability margin ηK·K_ref/(1−μ)="
                         f"{osc['stability_margin']:.4g} (unstable at ≥ 1)")
    return lines


def _format_rest(report: dict[str, Any], lines: list[str]) -> str:
    noise = report.get("noise")
    if noise:
        lines.append(f"  step noise σ={_f(noise['sigma'])} (σ/range={_f(noise['noise_over_range'])}); noise ceiling "
                     f"on R²: {_f(noise['noise_ceiling'])} (no law can explain more)")
    resp = report.get("response")
    if resp:
        lines.append("  second-order response laws (weighted by 1/σ²; 80 % intervals):")
        for name, fit in resp["laws"].items():
            params = ", ".join(f"{k}={_f(v)}" + (f"±{_f(fit['stderr'].get(k))}" if fit["stderr"].get(k) else "")
                               for k, v in fit["params"].items())
            mark = "*" if name == resp["preferred"] else " "
            lines.append(f"   {mark}{name:19s} [{fit['status']}] R²={_f(fit['r2'])} (ceiling {_f(fit['noise_ceiling'])})"
                         f"  χ²/dof={_f(fit['chi2_reduced'])}  BIC={fit['bic'] if fit['bic'] is None else round(fit['bic'], 1)}  {params}")
            for note in fit["notes"]:
                lines.append(f"        {fit['status']}: {note}")
        reading = resp.get("reading")
        if reading:
            iv = reading["damping_ratio_80"]
            lines.append(f"  reading: {reading['meaning']}")
            lines.append(f"    law read: {reading['law']} ({reading['status']}); ζ="
                         f"{_f(reading['damping_ratio'])}" + (f" [80 %: {_f(iv[0])}, {_f(iv[1])}]" if iv else "") +
                         f", C/K={_f(reading['damping_over_stiffness'])} steps")
            st = reading.get("stability")
            if st:
                iv = st["margin_80"]
                lines.append(f"  stability margin ηK·K_ref/(1−μ) = {_f(st['margin'])}" +
                             (f" [80 %: {_f(iv[0])}, {_f(iv[1])}]" if iv else "") +
                             f" (unstable at ≥ 1): unstable = {st['unstable']}")
    plateau = report.get("plateau")
    if plateau and plateau.get("value") is not None:
        lines.append(f"  plateau R∞ = {_f(plateau['value'])}" + (f" ± {_f(plateau['sd'])}" if plateau["sd"] else "") +
                     f" ({plateau['law']}, {plateau['status']})")
    elif plateau:
        lines.append(f"  plateau: {plateau['note']}")
    for step, value in report.get("forecast", {}).items():
        iv = report.get("forecast_interval", {}).get(step)
        lines.append(f"  forecast at step {step}: {value:.4f}" +
                     (f"  [80 %: {iv[0]:.4f}, {iv[1]:.4f}]" if iv else ""))
    dets = report.get("diagnostics")
    if dets:
        lines.append("  diagnostics (P1-C13; rules in rlvr_dynamics.runs.diagnostics):")
        for name, d in dets.items():
            state = "n/a (" + d["signal"] + ")" if not d["available"] else \
                (f"FIRES at step {d['step']}" if d["fired"] else "quiet")
            lines.append(f"    {name:22s} {state}")
    return "\n".join(lines)


def _f(x, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    return f"{x:.{digits}g}" if math.isfinite(x) else str(x)
