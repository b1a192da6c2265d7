"""The doctor's pipeline on one log: signals → forecast → reading → detectors → :class:`~.report.Report`.

:func:`build_report` runs every stage on a :class:`~rlvr_dynamics.runs.logs.RunLog` (loaded by
:mod:`rlvr_dynamics.runs`): P1's three-phase and single-exponential reference fits (:func:`fit_laws`,
:mod:`rlvr_dynamics.p1.laws`, P1 spec §3.6–3.7) read as an oscillator (:mod:`.reading.oscillator`); the step noise;
the second-order response laws (:mod:`.reading.response_laws`) and the evidence reading
(:mod:`.reading.dynamics`); the forecast (:mod:`.forecast`); the detectors (:mod:`.detectors`). :func:`fit_run` is
the same report as the JSON-ready dict of ``rlvr-dynamics fit --json``; the live :class:`~.live.RunDoctor` runs it
on a growing prefix.
"""
from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np

from .._checks import check_in_range, check_int
from ..runs.logs import RunLog
from ..runs.noise import noise_ceiling
from .declared_range import read_with_declared_range
from .reading.oscillator import read_oscillator
from .report import Report


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


def build_report(log: RunLog, *, momentum: float | None = None, refresh_interval: int | None = None,
                 forecast_steps: list[int] | None = None, reward_bounds="auto", seed: int = 0,
                 p1_laws: bool = True, diagnostics: bool = True, fits: dict[str, Any] | None = None,
                 stop: dict[str, Any] | None = None) -> Report:
    """Run the doctor's pipeline on ``log``: the :class:`~.report.Report` (:func:`fit_run` gives its dict).

    First ``status`` (:func:`.status.decide_status`, before any fit; ``stop``: a live doctor's stop record, named in
    its evidence). A ``collapsed`` or ``collapsing`` run is not read as a damped response: its ``dynamics`` verdict
    is ``"not read"``, it has no plateau, no law reading and no oscillator, and its forecast is the level it has
    fallen to (:func:`collapsed_forecast`). Other parts: ``fits``/``preferred_law``/``delta_aic``/``delta_bic``/``features``/``oscillator`` — P1's three-phase and
    single-exponential reference fits (:func:`fit_laws`, the notebooks' fit; skipped with ``p1_laws=False``, they
    take most of the time); ``noise`` — σ and the noise ceiling; ``response`` — the second-order response laws in
    every regime (:mod:`.reading.response_laws`) with ζ, C/K and, given ``refresh_interval``, the stability margin, each
    with an 80 % interval; ``forecast``/``forecast_interval`` — the reward at ``forecast_steps`` (:mod:`.forecast`)
    and its 80 % prediction interval; ``dynamics`` — the evidence reading (:func:`.reading.dynamics.read_dynamics`:
    stable / unstable / undetermined / noise only, with why), which leads the regime sentence; ``plateau`` (None with
    a note outside the plausible band, :data:`PLATEAU_BAND`); ``diagnostics`` — P1's four detectors and the collapse
    warning (:mod:`.detectors`). ``fits``: a :func:`~.reading.response_laws.fit_response_laws` result for this log's reward with
    the same bounds, to save a refit (the live doctor shares it with its detectors). A declared ``reward_bounds`` pair
    is read under :func:`.declared_range.read_with_declared_range`: a few rewards outside it are read as missing, more
    drop it (``read_notes`` then says which). ValueError when ``momentum`` is given without ``refresh_interval`` (it
    would be ignored).
    """
    from ..p1 import laws
    from . import detectors as diag
    from .forecast import forecast as make_forecast
    from .reading import response_laws as rl
    from .reading.dynamics import read_dynamics

    if momentum is not None and refresh_interval is None:
        raise ValueError(f"momentum={momentum!r} needs refresh_interval (K_ref = steps_per_generation × "
                         "num_iterations): without it the oscillator reading cannot use it")
    if refresh_interval is not None:
        check_int("refresh_interval", refresh_interval, 1)
    if momentum is not None:
        check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    for s in forecast_steps or []:
        check_int("forecast step", s, 0)
    from .status import decide_status, status_detections

    given = log
    if reward_bounds is not None and not isinstance(reward_bounds, str):     # a declared range: its glitches, or dropped
        log, kept = read_with_declared_range(log, resolve_reward_bounds(log.reward, reward_bounds))
        reward_bounds = "auto" if kept is None else kept
    steps, reward = log.reward_curve()
    t = steps - steps[0]
    bounds = resolve_reward_bounds(reward, reward_bounds)
    declared = bounds if reward_bounds is not None and not isinstance(reward_bounds, str) else None
    # one pass of the detectors the status reads: the report's diagnostics reuse it (same log, same bounds: the
    # detectors' causal (0, 1) rule gives what the resolved bounds give)
    read_by_status = status_detections(log, declared)
    # the collapse events and the precursors' crossings, once: the status and the collapse warning read the same
    from . import precursors as pre
    from .detectors.collapse import collapse_events
    from .detectors.collapse_warning import detect_collapse

    events = collapse_events(steps, reward, declared)
    cross = pre.crossings(log, declared)
    read_by_status["collapse_warning"] = detect_collapse(log, declared, collapses=events, cross=cross)
    status = decide_status(log, declared, stop=stop, detections=read_by_status, events=events, cross=cross)
    not_read = status.state in NOT_READ
    report = Report(source=log.source, reward_column=log.reward_column, n_points=int(len(t)),
                    first_step=int(steps[0]), last_step=int(steps[-1]), reward_bounds=bounds,
                    status=status.to_dict(), read_notes=None if log is given else list(log.read_notes))
    if p1_laws and not not_read:      # P1's laws describe a rise to a plateau, not a collapse
        comparison = fit_laws(log, reward_bounds=reward_bounds, seed=seed)
        three, single = comparison["three_phase"], comparison["single_exponential"]
        report.fits = {name: _fit_dict(fit) for name, fit in (("three_phase", three), ("single_exponential", single))}
        report.preferred_law = comparison["winner"]
        report.delta_aic, report.delta_bic = comparison["delta_aic"], comparison["delta_bic"]
        report.features = {name: laws.features(fit) for name, fit in (("three_phase", three),
                                                                      ("single_exponential", single))}
        p = three.params
        if three.reliable and not _at_bound(three) and "t_slow" in p and "t_fast" in p:
            report.oscillator = asdict(read_oscillator(p["t_slow"], p["t_fast"], momentum, refresh_interval))
    sigma = rl.step_sigma(reward)
    rise = float(np.ptp(reward))
    report.noise = {"sigma": sigma, "sigma_plain": rl.step_sigma(reward, robust=False),
                       "noise_ceiling": noise_ceiling(reward),
                       "noise_over_range": sigma / rise if rise > 0 else None}
    resp = fits if fits is not None else rl.fit_response_laws(steps, reward, reward_bounds=bounds)
    pref = resp["preferred"]
    response: dict[str, Any] = {"preferred": pref, "laws": {name: resp[name].to_dict() for name in rl.LAW_NAMES}}
    dyn = read_dynamics(steps, reward, reward_bounds=bounds, fits=resp)
    report.dynamics = dyn.to_dict()
    margin = None
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
        margin = reading.get("stability")      # the instability detector reads it whatever the status
        response["reading"] = reading
        report.plateau = _agree_with_status(_plateau(best, dyn, reward, bounds, steps), status, reward)
    if not_read:
        why = (f"the run is {status.state} (status, step {status.step}): " +
               ("a falling reward is not P1's damped rise" if status.state == "falling" else
                "a collapse is not a damped response"))
        report.dynamics = {"verdict": "not read", "reason": why}
        response = {"preferred": None, "laws": {}, "note": f"no law is read: {why}"}
        report.plateau = {"value": None, "sd": None, "law": None, "status": None, "note": f"no plateau: {why}"}
    report.response = response
    if forecast_steps and status.state == "too short":     # no forecast, and no interval, from under 4 rewards
        report.forecast_law = f"none: {status.evidence}"
        report.forecast, report.forecast_interval = {}, {}
    elif forecast_steps:
        report.forecast_law = ("level since the collapse (persistence)" if status.state in ("collapsed", "diverged") else
                               "current level, down to the floor (collapsing)" if status.state == "collapsing" else
                               "recent trend, continued (falling)" if status.state == "falling" else None)
        report.forecast, report.forecast_interval = {}, {}
        for s in forecast_steps:
            if status.state == "collapsing":
                value, low, high = collapsing_forecast(reward, bounds)
            elif status.state == "falling":
                value, low, high = falling_forecast(steps, reward, bounds, float(s))
            elif status.state in ("collapsed", "diverged"):
                value, low, high = collapsed_forecast(steps, reward, status.step)
            else:
                fc = make_forecast(steps, reward, [s], reward_bounds=bounds, fits=resp)
                value, low, high = fc.value, fc.low, fc.high
                report.forecast_law = report.forecast_law or f"weighted candidates (largest weight: {fc.law})"
            report.forecast[int(s)] = value
            report.forecast_interval[int(s)] = [low, high]
    if diagnostics:
        dets = diag.diagnose(log, response=resp, margin=margin, reward_bounds=declared, done=read_by_status)
        report.diagnostics = {name: d.to_dict() for name, d in dets.items()}
    return report


def fit_run(log: RunLog, **kwargs) -> dict[str, Any]:
    """:func:`build_report` as the JSON-ready dict of ``rlvr-dynamics fit --json``
    (:meth:`~.report.Report.to_dict`; same arguments)."""
    return build_report(log, **kwargs).to_dict()


NOT_READ = ("diverged", "collapsed", "collapsing", "falling")
"""Statuses under which the reward curve is not read as P1's damped response (no law, plateau or oscillator): P1's
laws describe a rise to a plateau, not a collapse or a fall."""
COLLAPSED_LEVEL_POINTS = 10
"""A collapsed run is forecast at the mean of its last this many points since the collapse."""


def collapsed_forecast(steps: np.ndarray, reward: np.ndarray, since: int | None) -> tuple[float, float, float]:
    """The forecast of a collapsed run: it stays where it fell (GRPO rarely recovers once its groups all score the
    same). Value: the mean of the last :data:`COLLAPSED_LEVEL_POINTS` rewards since step ``since``; interval: the
    10th–90th percentile of the rewards since then (their min–max with fewer than 5)."""
    y = np.asarray(reward, dtype=float)[np.asarray(steps) >= (since if since is not None else steps[-1])]
    if y.size == 0:
        y = np.asarray(reward, dtype=float)[-1:]
    value = float(np.mean(y[-COLLAPSED_LEVEL_POINTS:]))
    if y.size < 5:
        return value, float(min(y.min(), value)), float(max(y.max(), value))
    lo, hi = np.quantile(y, [0.1, 0.9])
    return value, float(min(lo, value)), float(max(hi, value))


def collapsing_forecast(reward: np.ndarray, bounds: tuple[float, float] | None) -> tuple[float, float, float]:
    """The forecast of a collapsing run: the mean of its last 3 rewards, with an interval from the floor (the lower
    bound, else the lowest reward so far: where a collapse ends) to the highest of its last 3 rewards."""
    y = np.asarray(reward, dtype=float)
    y = y[np.isfinite(y)]
    last = y[-3:]
    floor = float(bounds[0]) if bounds is not None else float(y.min())
    return float(last.mean()), min(floor, float(last.min())), float(last.max())


def falling_forecast(steps: np.ndarray, reward: np.ndarray, bounds: tuple[float, float] | None,
                     at: float) -> tuple[float, float, float]:
    """The forecast of a falling run: the least-squares line over the status' recent points (the last
    max(10, n/4)) continued to step ``at``, with its 80 % prediction interval (±1.2816·√(s² + se²), s the residual
    std, se the line's standard error there), inside the reward's bounds when known and never above the recent
    points' highest reward: the fall goes on until the collapse report or a new rise says otherwise."""
    ok = np.isfinite(reward)
    x, y = np.asarray(steps, dtype=float)[ok], np.asarray(reward, dtype=float)[ok]
    m = min(y.size, max(10, int(math.ceil(0.25 * y.size))))
    x, y = x[-m:], y[-m:]
    xm = float(x.mean())
    sxx = float(np.sum((x - xm) ** 2))
    slope = float(np.sum((x - xm) * (y - y.mean())) / sxx) if sxx > 0 else 0.0
    value = float(y.mean() + slope * (at - xm))
    res = y - (y.mean() + slope * (x - xm))
    s = float(np.sqrt(np.sum(res ** 2) / max(m - 2, 1)))
    half = 1.2816 * s * math.sqrt(1 + 1 / m + ((at - xm) ** 2 / sxx if sxx > 0 else 0.0))
    lo, hi = (float(bounds[0]), float(bounds[1])) if bounds is not None else (-math.inf, math.inf)
    hi = min(hi, float(y.max()))
    value = min(max(value, lo), hi)
    return value, max(min(value - half, value), lo), min(max(value + half, value), hi)


PLATEAU_BAND = 0.5
"""A plateau is reported only inside the observed reward range widened by this fraction of it on each side (and
inside the reward bounds when known); outside it the law is extrapolating, and the report says so instead."""


PLATEAU_REACHED = 0.8
"""A plateau is reported only when the law read has covered at least this share of its rise (R(t_last) − R0)/(R∞ − R0)
by the last logged step: before that, R∞ is an extrapolation of a curve with no plateau in sight."""


PLATEAU_AGREE_Z = 2.0
"""A ``plateaued`` run's plateau line gives the law's R∞ only within this many standard errors (the law's R∞ and
the mean of the status' last points together) of the level the status read; else that level
(:func:`_agree_with_status`)."""


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


def _agree_with_status(plateau: dict[str, Any], status, reward: np.ndarray) -> dict[str, Any]:
    """The plateau line says what the status says. A ``plateaued`` run reports the level it flattened at (the mean of
    the status' last points, :func:`_status_level`), with why no law's R∞, when the law read has none (it has not
    covered :data:`PLATEAU_REACHED` of its rise, or the reading is unstable or noise only, or R∞ lies outside the
    plausible band) or when its R∞ lies more than :data:`PLATEAU_AGREE_Z` standard errors from that level (a law
    fitted to the whole rise can put the plateau below where the run has sat for its last quarter: 0.977 ± 0.002
    under a level of 0.987); a ``rising`` run's identified R∞ is where it is heading."""
    if status.state != "plateaued":
        return plateau
    level, se, m = _status_level(reward)
    note = plateau.get("note") or ""
    value, sd = plateau.get("value"), plateau.get("sd")
    if value is not None:
        z = (value - level) / math.sqrt(se ** 2 + (sd or 0.0) ** 2) if se > 0 or sd else 0.0
        if abs(z) <= PLATEAU_AGREE_Z:
            return plateau
        shown = f"{value:.4g}" + (f" ± {sd:.2g}" if sd else "")
        why = (f"the {plateau['law'].replace('_', ' ')} law's R∞ ({shown}) lies {abs(z):.1f} s.e. "
               f"{'below' if z < 0 else 'above'} it")
    elif note.startswith("still rising"):
        why = f"the {plateau['law'].replace('_', ' ')} law would still rise ({note[len('still rising: '):]})"
    else:
        why = f"no law's R∞ is read ({note[len('no plateau: '):] if note.startswith('no plateau: ') else note})"
    return {**plateau, "value": level, "sd": se, "from": "status",
            "note": f"the level of the last {m} points, where the status finds no trend; " + why}


def _status_level(reward: np.ndarray) -> tuple[float, float, int]:
    """``(mean, standard error, m)`` of the last m = max(10, ⌈¼·n⌉) rewards: the points a ``plateaued`` status finds
    no trend over."""
    m = min(max(10, int(math.ceil(0.25 * reward.size))), reward.size)
    last = reward[-m:]
    return float(np.mean(last)), float(np.std(last, ddof=1) / math.sqrt(m)) if m > 1 else 0.0, m


def _regime_meaning(fit, dyn=None) -> str:
    """One sentence on what the law read says about the run, led by the evidence verdict (:mod:`.reading.dynamics`)."""
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


