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
            forecast_steps: list[int] | None = None, reward_bounds="auto", seed: int = 0) -> dict[str, Any]:
    """Fit both laws to ``log``'s reward curve (:func:`fit_laws`) and return a JSON-ready report (module docstring)."""
    from ..p1 import laws

    steps, reward = log.reward_curve()
    t = steps - steps[0]
    comparison = fit_laws(log, reward_bounds=reward_bounds, seed=seed)
    three, single = comparison["three_phase"], comparison["single_exponential"]
    report: dict[str, Any] = {
        "source": log.source, "reward_column": log.reward_column, "n_points": int(len(t)),
        "first_step": int(steps[0]), "last_step": int(steps[-1]),
        "reward_bounds": resolve_reward_bounds(reward, reward_bounds),
        "fits": {name: _fit_dict(fit) for name, fit in (("three_phase", three), ("single_exponential", single))},
        "preferred_law": comparison["winner"], "delta_aic": comparison["delta_aic"],
        "delta_bic": comparison["delta_bic"],
        "features": {name: laws.features(fit) for name, fit in (("three_phase", three), ("single_exponential",
                                                                                            single))},
    }
    p = three.params
    if three.reliable and "t_slow" in p and "t_fast" in p:
        report["oscillator"] = asdict(read_oscillator(p["t_slow"], p["t_fast"], momentum, refresh_interval))
    if forecast_steps:
        best = single if report["preferred_law"] == "single_exponential" or not three.reliable else three
        report["forecast_law"] = best.law
        for s in forecast_steps:
            check_int("forecast step", s, 0)
        report["forecast"] = {int(s): float(best.predict(np.array([s - steps[0]], dtype=float))[0])
                              for s in forecast_steps}
    return report


def _fit_dict(fit) -> dict[str, Any]:
    return {"params": {k: float(v) for k, v in fit.params.items()}, "r2": fit.r2, "aic": fit.aic, "bic": fit.bic,
            "residual_std": fit.residual_std, "reliable": bool(fit.reliable), "message": fit.message}


def format_report(report: dict[str, Any]) -> str:
    """Human-readable summary of :func:`fit_run`'s report."""
    lines = [f"{report['source']}  (reward column {report['reward_column']!r}, {report['n_points']} points, "
             f"steps {report['first_step']}–{report['last_step']})"]
    for name, fit in report["fits"].items():
        params = ", ".join(f"{k}={v:.4g}" for k, v in fit["params"].items())
        flag = "" if fit["reliable"] else f"  [unreliable: {fit['message']}]"
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
    for step, value in report.get("forecast", {}).items():
        lines.append(f"  forecast at step {step} ({report['forecast_law']}): {value:.4f}")
    return "\n".join(lines)
