"""Forecast a run's reward from any prefix of its log, with an 80 % prediction interval [D].

The rule (fixed before it was run on ``../shared/grpo_logs``; developed on the project's own committed runs):

1. Fit the response laws (:mod:`.response_laws`) to the prefix; take the preferred law (BIC).
2. **Current level** ``c``: persistence, the trailing mean of the last max(3, n/25) points of the prefix, with its
   standard error σ/√window.
3. **Predicted change** ``Δ = law(target) − mean of the law over the persistence window`` (so a perfect law
   gives back exactly ``law(target)``: persistence's lag behind a rising curve is corrected) with its standard
   deviation ``s_Δ`` from the parameter covariance (delta method). The forecast is ``c + w·Δ`` with the shrinkage weight
   ``w = Δ²/(Δ² + s_Δ²)``: a change the prefix pins down is applied in full, a change it cannot tell from zero
   is dropped (the forecast falls back to persistence). When the law's fit is ``at bound`` or ``failed``, ``w``
   is additionally halved, resp. set to 0.
4. **Interval** (80 %, normal): variance = se(c)² + w²·s_Δ² + (1 − w)²·Δ² (the part of the change we did not
   apply is counted as error) + the noise of the target (σ²/m for a mean of m future points, σ² for one step)
   + a drift term (0.45·σ_eff)²·(1 + h/n)^{1/2} for a horizon of h steps beyond a prefix of n points (a run's
   level wanders; the term grows slowly with how far beyond the prefix we extrapolate). Here σ is the step noise
   (:func:`~.response_laws.step_sigma`) and σ_eff = σ·√max(1, χ²_red) of the preferred law: a run whose level
   wanders more than its step noise (χ² > 1) gets wider intervals. The interval is clipped to the reward bounds
   when they are known. The constants (0.45, the exponent) were set on the project's own committed runs, never on
   ``../shared/grpo_logs``.

:func:`calibration_table` scores the rule and three baselines with the protocol of ``../shared/DESIGN.md``
("Judging the run tools"): error = |forecast − mean of the last 10 %| / (max − min), per prefix.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .noise import step_sigma
from .response_laws import Z80, fit_response, fit_response_laws

PREFIXES = (0.1, 0.2, 0.3, 0.5)
"""Prefix fractions of the calibration protocol."""


@dataclass
class Forecast:
    """Forecast of the reward (a mean over ``target_steps``) from a prefix."""

    value: float
    low: float
    high: float
    """80 % prediction interval."""
    persistence: float
    law: str | None
    law_value: float
    weight: float
    """Shrinkage weight w applied to the law's predicted change."""
    prefix_end: int

    def to_dict(self) -> dict[str, Any]:
        f = lambda x: None if x is None or not math.isfinite(x) else float(x)  # noqa: E731
        return {"value": f(self.value), "low_80": f(self.low), "high_80": f(self.high),
                "persistence": f(self.persistence), "law": self.law, "law_value": f(self.law_value),
                "weight": f(self.weight), "prefix_end": int(self.prefix_end)}


def _persistence(y: np.ndarray, window: int) -> float:
    return float(np.mean(y[-max(1, window):]))


def forecast(steps, reward, target_steps, *, reward_bounds: tuple[float, float] | None = None,
             fits: dict[str, Any] | None = None, window: int | None = None, level: float = 0.8) -> Forecast:
    """Forecast the mean reward over ``target_steps`` (one step or many) from ``(steps, reward)`` (the prefix
    seen so far), by the rule of the module docstring. ``fits``: a :func:`fit_response_laws` result for this
    prefix, to avoid refitting; ``window``: the persistence window (default max(3, n/25))."""
    from scipy.stats import norm

    t = np.asarray(steps, dtype=float)
    y = np.asarray(reward, dtype=float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    n = t.size
    if n < 2:
        raise ValueError(f"a forecast needs at least 2 logged rewards, got {n}")
    target = np.atleast_1d(np.asarray(target_steps, dtype=float))
    z = float(norm.ppf(0.5 + level / 2)) if level != 0.8 else Z80
    win = window or max(3, n // 25)
    win = min(win, n)
    sigma = step_sigma(y)
    c = _persistence(y, win)
    var_c = sigma ** 2 / win
    horizon = max(float(target.mean() - t[-1]), 0.0)
    dt = float(np.median(np.diff(t))) if n > 1 else 1.0
    h_points = horizon / max(dt, 1e-12)
    law_name, law_value, w, delta, s_delta = None, math.nan, 0.0, 0.0, 0.0
    if fits is None and n >= 6:
        fits = fit_response_laws(t, y, reward_bounds=reward_bounds)
    sigma_eff = sigma
    if fits is not None and fits.get("preferred"):
        fit = fits[fits["preferred"]]
        if math.isfinite(fit.chi2_reduced):
            sigma_eff = sigma * math.sqrt(max(1.0, fit.chi2_reduced))
        law_name = fit.law
        try:
            tw = t[-win:]
            law_value = float(np.mean(fit.predict(target)))
            # Δ and its sd: gradient of (law's mean over the target − law's mean over the persistence window)
            g = None
            if fit._cov is not None:
                from .response_laws import _jacobian
                jt = _jacobian(fit.law, fit._theta, (target - fit.t0) / fit._window)
                jw = _jacobian(fit.law, fit._theta, (tw - fit.t0) / fit._window)
                g = jt.mean(0) - jw.mean(0)
            anchor = float(np.mean(fit.predict(tw)))
            delta = law_value - anchor
            # the law's level at the prefix end is replaced by persistence: Δ is the law's predicted change
            s_delta = math.sqrt(max(float(g @ fit._cov @ g), 0.0)) if g is not None else abs(delta)
            if math.isfinite(delta) and math.isfinite(s_delta):
                w = delta * delta / (delta * delta + s_delta * s_delta) if delta != 0 else 0.0
                if fit.status == "at bound":
                    w *= 0.5
                elif fit.status == "failed":
                    w = 0.0
            else:
                delta, s_delta, w = 0.0, 0.0, 0.0
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            delta, s_delta, w = 0.0, 0.0, 0.0
    var_target = sigma ** 2 / max(target.size, 1)
    var_drift = (0.45 * sigma_eff) ** 2 * math.sqrt(1.0 + h_points / n)
    value = c + w * delta
    var = var_c + (w * s_delta) ** 2 + ((1 - w) * delta) ** 2 + var_target + var_drift
    sd = math.sqrt(max(var, 0.0))
    low, high = value - z * sd, value + z * sd
    if reward_bounds is not None:
        value = min(max(value, reward_bounds[0]), reward_bounds[1])
        low, high = max(low, reward_bounds[0]), min(high, reward_bounds[1])
    return Forecast(float(value), float(low), float(high), float(c), law_name, float(law_value), float(w),
                    int(t[-1]))


# ---------------------------------------------------------------------------------------------------------------
# Baselines and the calibration protocol
# ---------------------------------------------------------------------------------------------------------------

def mmf(t, alpha, beta, kappa, delta):
    """MMF learning curve α − (α − β)/(1 + (κt)^δ) (Domhan et al. 2015)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return alpha - (alpha - beta) / (1.0 + np.power(np.maximum(kappa * t, 0.0), delta))


def fit_mmf(t, y) -> np.ndarray | None:
    """Least-squares MMF fit (a few starts); None if every start fails."""
    import warnings

    from scipy.optimize import least_squares

    t = np.asarray(t, float)
    y = np.asarray(y, float)
    span = max(float(np.ptp(y)), 1e-9)
    dur = max(float(t[-1]), 1.0)
    lo = [y.min() - 3 * span, y.min() - 3 * span, 1e-4 / dur, 0.1]
    hi = [y.max() + 3 * span, y.max() + 3 * span, 1e3 / dur, 10.0]
    best = None
    for k0 in (0.3 / dur, 3.0 / dur, 30.0 / dur):
        for d0 in (1.0, 2.0):
            x0 = np.clip([y[-max(1, y.size // 10):].mean(), y[0], k0, d0], np.array(lo) + 1e-12,
                         np.array(hi) - 1e-12)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = least_squares(lambda p: mmf(t, *p) - y, x0, bounds=(lo, hi), max_nfev=400)
            except (ValueError, FloatingPointError):
                continue
            if np.isfinite(r.cost) and (best is None or r.cost < best.cost):
                best = r
    return None if best is None else best.x


def score_log(steps, reward, *, prefixes: Iterable[float] = PREFIXES,
              reward_bounds: tuple[float, float] | None = None) -> list[dict[str, Any]]:
    """The DESIGN.md protocol on one log: for each prefix fraction, the error of the forecaster, persistence, the
    single exponential and MMF, and whether the 80 % interval covered the target."""
    t = np.asarray(steps, dtype=float)
    y = np.asarray(reward, dtype=float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    n = t.size
    tail = max(1, int(math.ceil(0.1 * n)))
    target_steps = t[-tail:]
    target = float(y[-tail:].mean())
    rng = float(np.ptp(y)) or 1.0
    rows = []
    for frac in prefixes:
        m = max(6, int(round(frac * n)))
        if m >= n - tail:
            continue
        tp, yp = t[:m], y[:m]
        fc = forecast(tp, yp, target_steps, reward_bounds=reward_bounds, window=max(1, n // 25))
        pers = _persistence(yp, max(1, n // 25))
        se = fit_response(tp, yp, "single_exponential", reward_bounds=reward_bounds)
        se_val = float(np.mean(se.predict(target_steps))) if se.status != "failed" else pers
        p = fit_mmf(tp - tp[0], yp)
        mmf_val = float(np.mean(mmf(target_steps - tp[0], *p))) if p is not None else pers
        rows.append({"prefix": frac, "n_prefix": m, "target": target,
                     "error": abs(fc.value - target) / rng, "error_persistence": abs(pers - target) / rng,
                     "error_single_exponential": abs(se_val - target) / rng,
                     "error_mmf": abs(mmf_val - target) / rng if math.isfinite(mmf_val) else math.nan,
                     "covered": bool(fc.low <= target <= fc.high), "weight": fc.weight, "law": fc.law,
                     "interval_width": (fc.high - fc.low) / rng})
    return rows


def calibration_table(logs: list[tuple[str, np.ndarray, np.ndarray, tuple[float, float] | None]], *,
                      prefixes: Iterable[float] = PREFIXES, tolerance: float = 0.05) -> dict[float, dict[str, Any]]:
    """Aggregate :func:`score_log` over ``[(name, steps, reward, reward_bounds), …]``: per prefix, the share of
    logs within ``tolerance`` of the range and the median error for each method, and the 80 % coverage."""
    per: dict[float, list[dict[str, Any]]] = {}
    for name, steps, reward, rb in logs:
        for row in score_log(steps, reward, prefixes=prefixes, reward_bounds=rb):
            per.setdefault(row["prefix"], []).append({**row, "log": name})
    out = {}
    for frac, rows in sorted(per.items()):
        entry: dict[str, Any] = {"n_logs": len(rows)}
        for key, label in (("error", "forecast"), ("error_persistence", "persistence"),
                           ("error_single_exponential", "single_exponential"), ("error_mmf", "mmf")):
            e = np.array([r[key] for r in rows], dtype=float)
            e = e[np.isfinite(e)]
            entry[label] = {"within": float(np.mean(e <= tolerance)) if e.size else math.nan,
                            "median_error": float(np.median(e)) if e.size else math.nan}
        entry["coverage_80"] = float(np.mean([r["covered"] for r in rows]))
        entry["median_interval_width"] = float(np.median([r["interval_width"] for r in rows]))
        entry["rows"] = rows
        out[frac] = entry
    return out


def format_calibration(table: dict[float, dict[str, Any]], title: str = "") -> str:
    """Markdown table of :func:`calibration_table` (share within 5 % of the range / median error)."""
    lines = ([f"**{title}**", ""] if title else []) + [
        "| prefix | logs | forecast | persistence | single exp. | MMF | 80 % coverage | median 80 % width |",
        "|---|---|---|---|---|---|---|---|"]
    for frac, e in table.items():
        cells = [f"{e[k]['within']:.0%} / {e[k]['median_error']:.3f}"
                 for k in ("forecast", "persistence", "single_exponential", "mmf")]
        lines.append(f"| {frac:.0%} | {e['n_logs']} | " + " | ".join(cells) +
                     f" | {e['coverage_80']:.0%} | {e['median_interval_width']:.3f} |")
    return "\n".join(lines)
