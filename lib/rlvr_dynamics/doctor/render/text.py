"""The text report of ``rlvr-dynamics fit LOG``: :func:`format_report` of a report dict
(:meth:`~rlvr_dynamics.doctor.report.Report.to_dict`)."""
from __future__ import annotations

import math
from typing import Any

from ...runs.noise import ceiling_text
from .summary import display_report, fmt_pm


def status_line(status: dict[str, Any] | None) -> str:
    """The report's first line: the status in capitals, its step and its evidence."""
    if not status:
        return "status: not decided"
    at = f" at step {status['step']}" if status.get("step") is not None else ""
    return f"status: {status['state'].upper()}{at} — {status['evidence']}"


def read_lines(report: dict[str, Any]) -> list[str]:
    """``  read: …`` for each of the report's ``read_notes`` (the segments read, gaps, dropped reward cells, inferred
    steps) and where η came from when it was the logged learning rate."""
    lines = [f"  read: {note}" for note in report.get("read_notes") or []]
    hp = report.get("hyperparameters") or {}
    if hp.get("learning_rate_source") == "logged":
        from ...runs.hyperparams import schedule_range

        lines.append(f"  learning rate η = {hp['learning_rate']:g} logged at step {hp['learning_rate_step']} "
                     f"(column {hp['learning_rate_column']!r}; {schedule_range(*hp['learning_rate_range'])})")
    return lines


def short_report(report: dict[str, Any]) -> str:
    """What ``rlvr-dynamics fit LOG`` prints by default: the status and why, the warning, what to do, the plateau
    and the forecast, the detectors that fired, and where the rest is (``--details``: :func:`format_report`). Every
    line comes from the same report as the full one, so the two never disagree."""
    st = report.get("status") or {}
    lines = [status_line(st)]
    if st.get("warning"):
        lines.append(f"  warning: {st['warning']}")
    if st.get("action"):
        lines.append(f"  what to do: {st['action']}")
    lines.append(f"  {report['source']}  (reward column {report['reward_column']!r}, {report['n_points']} points, "
                 f"steps {report['first_step']}–{report['last_step']})")
    lines += read_lines(report)
    plateau = report.get("plateau")
    if plateau and plateau.get("value") is not None:
        lines.append(f"  plateau R∞ = {fmt_pm(plateau['value'], plateau['sd'])}" +
                     (f": {plateau['note']}" if plateau.get("from") == "status" else f" ({plateau['law']} law)"))
    lines += _no_forecast(report)
    for step, value in report.get("forecast", {}).items():
        iv = report.get("forecast_interval", {}).get(step)
        lines.append(f"  forecast at step {step}: {_n(value, '.4g')}" +
                     (f"  [80 %: {_n(iv[0], '.4g')}, {_n(iv[1], '.4g')}]" if iv else ""))
    fired = [(name, d) for name, d in (report.get("diagnostics") or {}).items() if d.get("fired")]
    if fired:
        lines.append("  detectors that fired: " + "; ".join(
            f"{name} at step {d['step']}" + (f" ({len(d['events'])} events)" if len(d.get("events", [])) > 1 else "")
            for name, d in fired))
    elif report.get("diagnostics"):
        lines.append("  detectors: none fired")
    lines.append("  (--details: P1's fits, the response laws, the reading and every detector)")
    return "\n".join(lines)


def format_report(report: dict[str, Any]) -> str:
    """Human-readable summary of :func:`fit_run`'s report, the status first: everything (``fit --details``). Fit
    statuses are shown as the evidence verdict allows (:func:`~.summary.display_report`, as on the HTML page): on a
    noise-only curve no law is read, starred or given a ζ."""
    report = display_report(report)
    st = report.get("status") or {}
    lines = [status_line(st)]
    if st.get("warning"):
        lines.append(f"  warning: {st['warning']}")
    if st.get("action"):
        lines.append(f"  what to do: {st['action']}")
    lines += [f"{report['source']}  (reward column {report['reward_column']!r}, {report['n_points']} points, "
             f"steps {report['first_step']}–{report['last_step']})"]
    lines += read_lines(report)
    if "fits" in report:
        lines += _format_p1(report)
    return _format_rest(report, lines)


def _format_p1(report: dict[str, Any]) -> list[str]:
    lines = ["  P1 reference fits (multi-start, the notebooks' fit):"]
    for name, fit in report["fits"].items():
        params = ", ".join(f"{k}={_n(v, '.4g')}" for k, v in fit["params"].items())
        flag = "" if fit["reliable"] else f"  [{fit.get('status', 'unreliable')}: {fit['message']}]"
        lines.append(f"  {name:19s} R²={_n(fit['r2'], '.4f')}  AIC={_n(fit['aic'], '.1f')}  "
                     f"BIC={_n(fit['bic'], '.1f')}  {params}{flag}")
    lines.append(f"  preferred law (BIC, |Δ| > 2): {report['preferred_law']} (ΔAIC={_n(report['delta_aic'], '.1f')}, "
                 f"ΔBIC={_n(report['delta_bic'], '.1f')}; negative favours the three-phase law)")
    feats = report["features"]["three_phase"]
    if report["fits"]["three_phase"]["reliable"]:
        lines.append("  three-phase features: " + ", ".join(f"{k}={_n(v, '.4g')}" for k, v in feats.items()
                                                      if not k.endswith("_over_stiffness")))
    osc = report.get("oscillator")
    if osc:
        lines.append(f"  as an oscillator: M/K={_n(osc['mass_over_stiffness'], '.4g')} steps², "
                     f"C/K={_n(osc['damping_over_stiffness'], '.4g')} steps, ζ={_n(osc['damping_ratio'], '.3f')}")
        if osc.get("eta_curvature") is not None:
            lines.append(f"  implied ηK={_n(osc['eta_curvature'], '.4g')}; stability margin ηK·K_ref/(1−μ)="
                         f"{_n(osc['stability_margin'], '.4g')} (unstable at ≥ 1)")
    return lines


def _format_rest(report: dict[str, Any], lines: list[str]) -> str:
    noise = report.get("noise")
    if noise:
        lines.append(f"  step noise σ={_f(noise['sigma'])} (σ/range={_f(noise['noise_over_range'])}); noise ceiling "
                     f"on R²: {ceiling_text(noise['noise_ceiling'], '.4g')} (no law can explain more)")
    resp = report.get("response")
    if resp and resp.get("note"):
        lines.append(f"  reading: {resp['note']}")
    elif resp:
        lines.append("  second-order response laws (weighted by 1/σ²; 80 % intervals):")
        for name, fit in resp["laws"].items():
            params = ", ".join(f"{k}={_f(v)}" + _pm(v, fit["stderr"].get(k)) for k, v in fit["params"].items())
            read = (resp.get("reading") or {}).get("law", resp["preferred"])
            mark = "*" if name == read else " "       # the law the reading reports, not merely the lowest BIC
            bic = fit["bic"] if fit["bic"] is None else round(fit["bic"], 1)
            lines.append(f"   {mark}{name:19s} [{fit['status']}] R²={_f(fit['r2'])} "
                         f"(ceiling {ceiling_text(fit['noise_ceiling'], '.4g')})"
                         f"  χ²/dof={_f(fit['chi2_reduced'])}  BIC={bic}  {params}")
            for note in fit["notes"]:
                lines.append(f"        {fit['status']}: {note}")
            if name == resp["preferred"] and read not in (name, "none"):
                lines.append("        lowest BIC, but not the law read: "
                             + ("its envelope grows without evidence of instability"
                                if fit.get("regime") == "growing" else "the reading prefers a stable law"))
        reading = resp.get("reading")
        if reading:
            iv = reading["damping_ratio_80"]
            lines.append(f"  reading: {reading['meaning']}")
            if reading["law"] == "none":
                lines.append(f"    law read: none ({reading['status']})")
            else:
                lines.append(f"    law read: {reading['law']} ({reading['status']}); ζ="
                             f"{_f(reading['damping_ratio'])}" + (f" [80 %: {_f(iv[0])}, {_f(iv[1])}]" if iv else "")
                             + f", C/K={_f(reading['damping_over_stiffness'])} steps")
            st = reading.get("stability")
            if st:
                iv = st["margin_80"]
                lines.append(f"  stability margin ηK·K_ref/(1−μ) = {_f(st['margin'])}" +
                             (f" [80 %: {_f(iv[0])}, {_f(iv[1])}]" if iv else "") +
                             f" (unstable at ≥ 1): unstable = {st['unstable']}")
    plateau = report.get("plateau")
    if plateau and plateau.get("value") is not None:
        lines.append(f"  plateau R∞ = {fmt_pm(plateau['value'], plateau['sd'])}" +
                     (f": {plateau['note']}" if plateau.get("from") == "status" else
                      f" ({plateau['law']}, {plateau['status']})"))
    elif plateau:
        lines.append(f"  plateau: {plateau['note']}")
    lines += _no_forecast(report)
    named = str(report.get("forecast_law")).startswith(("level", "current"))    # a collapsed or collapsing run's level
    for step, value in report.get("forecast", {}).items():
        iv = report.get("forecast_interval", {}).get(step)
        lines.append(f"  forecast at step {step}: {_n(value, '.4f')}" +
                     (f"  [80 %: {_n(iv[0], '.4f')}, {_n(iv[1], '.4f')}]" if iv else "") +
                     (f"  ({report['forecast_law']})" if named else ""))
    dets = report.get("diagnostics")
    if dets:
        lines.append("  diagnostics (P1-C13; rules in rlvr_dynamics.doctor.detectors):")
        for name, d in dets.items():
            state = "n/a (" + d["signal"] + ")" if not d["available"] else \
                (f"FIRES at step {d['step']}" if d["fired"] else "quiet")
            lines.append(f"    {name:22s} {state}")
    return "\n".join(lines)


def _n(x, spec: str) -> str:
    """``format(x, spec)``; "n/a" for None or NaN, ∞ for an infinite value (never "nan" in a report)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return format(x, spec)


def _f(x, digits: int = 4) -> str:
    """A number to ``digits`` significant digits; "n/a" for None or NaN, ∞ for an infinite one."""
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    if math.isnan(x):
        return "n/a"
    return f"{x:.{digits}g}" if math.isfinite(x) else ("∞" if x > 0 else "−∞")


NOT_IDENTIFIED_RATIO = 100.0
"""A parameter whose standard error exceeds this many times its value is printed "±n/a (not identified)", not with a
standard error of 10⁶ (a law at a bound of its family)."""


def _pm(value, se) -> str:
    """``±se`` after a fitted parameter; "" without one; "±n/a (not identified)" when it is non-finite or dwarfs the
    value (:data:`NOT_IDENTIFIED_RATIO`)."""
    if not se:
        return ""
    if not math.isfinite(se) or se > NOT_IDENTIFIED_RATIO * max(abs(value), 1e-12):
        return "±n/a (not identified)"
    return f"±{_f(se)}"


def _no_forecast(report: dict[str, Any]) -> list[str]:
    """``forecast: none — …`` where the report gives no forecast and says why (a ``too short`` run)."""
    law = str(report.get("forecast_law"))
    return [f"  forecast: none — {law[len('none: '):]}"] if law.startswith("none: ") and not report.get("forecast") \
        else []
