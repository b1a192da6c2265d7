"""The report figure (matplotlib, Agg backend) and its caption: one panel per row — the reward with the response
laws (the law read bold) and the forecast band (80 %); the residuals with the ±σ step-noise band; the callback's
dynamics fields (:func:`dynamics_columns`) when the log has them; the diagnostics timeline (one row per detector, a
marker at every event). Every text in it is at least :data:`MIN_FONT_PT` points at the size the page shows it."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...runs.logs import RunLog
from .summary import fmt_value, display_status, noise_only_line, run_name_from_path, verdict_of

LAW_STYLE = {"single_exponential": ("tab:blue", "first order"), "overdamped": ("tab:green", "overdamped"),
             "oscillatory": ("tab:red", "oscillatory")}
MIN_FONT_PT = 9.0
"""Smallest font size (points) of any text in the figure, at the size the HTML page shows it."""
FIG_WIDTH_IN = 8.0
"""Figure width in inches; the page shows the image at this physical width (96 CSS px per inch)."""
MAX_DYNAMICS_SERIES = 6
"""At most this many dynamics fields share the dynamics panel (the others are named in the caption)."""
DYNAMICS_PRIORITY = ("gap_alignment", "group_reward_std", "is_ratio_mean", "group_distinct_frac",
                     "gap_alignment_fresh", "is_ratio_std", "update_norm", "logp_change_correct",
                     "logp_change_incorrect", "n_mixed_groups")
"""Dynamics fields drawn first, in this order; then the others alphabetically."""
_NOT_PLOTTED = ("flag/", "stop", "law", "reliable")
"""Live-doctor outputs that are codes or 0/1 flags, not curves (``dynamics/flag/…``, ``dynamics/law``, …)."""


def dynamics_columns(log: RunLog) -> list[str]:
    """The log's dynamics fields to plot: columns under ``dynamics/`` or ``train/dynamics/`` (the callback's fields
    and the live doctor's curves; its flags and codes are left out, :data:`_NOT_PLOTTED`), and the callback's fields
    under their bare names as the project's ``metrics.csv`` stores them (``gap_alignment``, …); one column per field
    (the namespaced one when both exist), with a finite value; :data:`DYNAMICS_PRIORITY` first."""
    from ...grpo.fields import CALLBACK_FIELDS, FRESH_GAP_FIELDS

    chosen: dict[str, str] = {}
    for col in sorted(log.series):
        bare, namespaced = None, False
        for ns in ("train/dynamics/", "dynamics/"):
            if col.startswith(ns):
                bare, namespaced = col[len(ns):], True
                break
        if bare is None and col in CALLBACK_FIELDS + FRESH_GAP_FIELDS:
            bare = col
        if not bare or bare.startswith(_NOT_PLOTTED):
            continue
        if not np.isfinite(np.asarray(log.series[col], dtype=float)).any():
            continue
        if bare not in chosen or (namespaced and not chosen[bare].endswith("dynamics/" + bare)):
            chosen[bare] = col
    order = sorted(chosen, key=lambda b: (DYNAMICS_PRIORITY.index(b) if b in DYNAMICS_PRIORITY else
                                          len(DYNAMICS_PRIORITY), b))
    return [chosen[b] for b in order]


def _bare(col: str) -> str:
    for ns in ("train/dynamics/", "dynamics/"):
        if col.startswith(ns):
            return col[len(ns):]
    return col


def report_figure(log: RunLog, report: dict[str, Any], *, horizon: float = 0.5, name: str | None = None):
    """The matplotlib figure for ``report`` (from :func:`~rlvr_dynamics.doctor.pipeline.fit_run` on ``log``), module docstring.

    ``fig.rlvr_panels`` lists the panels drawn (``reward``, ``residual``, ``dynamics`` when present,
    ``diagnostics``) and ``fig.rlvr_dynamics`` the dynamics columns drawn, for the caption."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from ..forecast import forecast_path
    from ..reading import response_laws as rl
    from ..reading.dynamics import read_dynamics
    from ..signals import eval_column, evaluation_rows

    fs, small = 10.0, MIN_FONT_PT
    steps, reward = log.reward_curve()
    bounds = tuple(report["reward_bounds"]) if report.get("reward_bounds") else None
    fits = rl.fit_response_laws(steps, reward, reward_bounds=bounds)
    pref = fits["preferred"]
    verdict, _ = verdict_of(report)
    dyn = read_dynamics(steps, reward, reward_bounds=bounds, fits=fits)
    if verdict == "unknown":
        verdict = dyn.verdict
    noise_only = verdict == "noise only"
    read_fit = None if noise_only else (dyn.fit if dyn.fit is not None else (fits[pref] if pref else None))
    dcols = dynamics_columns(log)
    varying = [c for c in dcols if np.nanmax(log.series[c]) > np.nanmin(log.series[c])]
    shown = (varying or dcols)[:MAX_DYNAMICS_SERIES]
    panels = ["reward", "residual"] + (["dynamics"] if shown else []) + ["diagnostics"]
    heights = {"reward": 3.2, "residual": 1.4, "dynamics": 1.9, "diagnostics": 1.7}
    fig, axes = plt.subplots(len(panels), 1, figsize=(FIG_WIDTH_IN, sum(heights[p] for p in panels) + 0.4),
                             height_ratios=[heights[p] for p in panels], sharex=True, layout="constrained")
    ax_of = dict(zip(panels, axes))
    fig.rlvr_panels, fig.rlvr_dynamics, fig.rlvr_dynamics_scaled = panels, shown, False
    fig.rlvr_forecast = {}
    fig.rlvr_dynamics_constant = {c: float(np.nanmax(log.series[c])) for c in dcols if c not in varying}

    # reward panel
    ax = ax_of["reward"]
    ax.plot(steps, reward, ".", ms=3, color="0.45", label=f"{log.reward_column} (logged)")
    ename, ev = eval_column(log)
    if ename is not None:
        rows = evaluation_rows(log, ev)
        ax.plot(log.steps[rows], ev[rows], "x", ms=4, color="tab:purple", label=f"{ename} (evaluation)")
    sigma = float((report.get("noise") or {}).get("sigma") or rl.step_sigma(reward))
    if noise_only:
        mean = float(np.mean(reward))
        ax.axhspan(mean - sigma, mean + sigma, color="0.85", zorder=0, label="mean ± σ step noise")
        ax.axhline(mean, color="0.3", lw=1.0, label="mean reward")
        ax.text(0.01, 0.97, noise_only_line(report) + ": no law drawn", transform=ax.transAxes, va="top",
                fontsize=fs, color="darkred", bbox=dict(boxstyle="round", fc="white", ec="darkred", alpha=0.9))
        drawn = _report_forecast(report)
        if drawn:              # the text gives a forecast for a noise-only curve too: the figure draws the same one
            _draw_report_forecast(ax, drawn)
        fig.rlvr_forecast = drawn
    else:
        span = float(steps[-1] - steps[0]) or 1.0
        grid = np.linspace(steps[0], steps[-1], 400)
        drew_read = False
        not_read = verdict == "not read"      # collapsed, collapsing, diverged: no law is drawn, as in the text
        for law in (() if not_read else rl.LAW_NAMES):
            fit = fits[law]
            if fit.status == "failed":
                continue
            color, label = LAW_STYLE[law]
            is_read = fit is read_fit
            drew_read |= is_read
            growing_unread = fit.regime == "growing" and verdict != "unstable"
            ax.plot(grid, fit.predict(grid), "--" if growing_unread else "-", color=color,
                    lw=2.4 if is_read else 1.0, alpha=1 if is_read else 0.7,
                    label=f"{label} [{display_status(fit.status, fit.regime, verdict)}]" +
                          ((" (law read)" if verdict in ("stable", "unstable") else " (best stable law)")
                           if is_read else ""))
        if read_fit is not None and not drew_read and not not_read:
            color = LAW_STYLE.get(read_fit.law, ("k", read_fit.law))[0]
            ax.plot(grid, read_fit.predict(grid), color=color, lw=2.4,
                    label=f"{LAW_STYLE.get(read_fit.law, ('', read_fit.law))[1]}, stable-constrained "
                          f"[{display_status(read_fit.status, read_fit.regime, verdict)}] (law read)")
        drawn = _report_forecast(report)
        if drawn:              # the report's own forecast and interval: the figure says what the text says
            _draw_report_forecast(ax, drawn)
        elif pref is not None and not not_read:
            future = np.linspace(steps[-1], steps[-1] + horizon * span, 25)[1:]
            color = LAW_STYLE[read_fit.law][0] if read_fit is not None and read_fit.law in LAW_STYLE else "k"
            fc = forecast_path(steps, reward, future, reward_bounds=bounds, fits=fits)
            ax.fill_between(future, [f.low for f in fc], [f.high for f in fc], color=color, alpha=0.18,
                            label="forecast, 80 % interval")
            ax.plot(future, [f.value for f in fc], "--", color=color, lw=1.2)
        fig.rlvr_forecast = drawn
    title = f"{name or run_name_from_path(log.source)} — {verdict}"
    reading = (report.get("response") or {}).get("reading")
    if reading and verdict in ("stable", "unstable"):
        z = reading.get("damping_ratio")
        title += f": {reading['regime']}" + (f", ζ = {z:.3g}" if z is not None else "")
    fig.suptitle(title, fontsize=fs + 1)
    ax.set_ylabel("reward", fontsize=fs)
    labels = ax.get_legend_handles_labels()[1]
    ncol = 3 if sum(sorted((len(x) for x in labels), reverse=True)[:3]) <= 95 else 2
    ax.legend(fontsize=small, loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=ncol, borderaxespad=0.0,
              frameon=False, columnspacing=1.2)

    # residual panel
    ax = ax_of["residual"]
    base = np.full_like(reward, float(np.mean(reward))) if noise_only or read_fit is None else read_fit.predict(steps)
    res_sigma = sigma if noise_only or read_fit is None else float(read_fit.sigma)
    ax.axhspan(-res_sigma, res_sigma, color="0.85", label="±σ step noise")
    ax.plot(steps, reward - base, ".", ms=2.5,
            color="0.35" if read_fit is None else LAW_STYLE.get(read_fit.law, ("k",))[0])
    ax.axhline(0, color="k", lw=0.6)
    ax.legend(fontsize=small, loc="upper right", framealpha=0.85)
    ax.set_ylabel("reward − mean" if noise_only or read_fit is None else "residual", fontsize=fs)

    # dynamics panel
    if shown:
        ax = ax_of["dynamics"]
        values = {c: np.asarray(log.series[c], dtype=float) for c in shown}
        peaks = [float(np.nanmax(np.abs(v))) for v in values.values()]
        positive = [p for p in peaks if p > 0]
        scaled = len(shown) > 1 and bool(positive) and max(positive) / min(positive) > 10.0
        for c, v in values.items():
            ok = np.isfinite(v)
            y = v[ok]
            label = _bare(c)
            if scaled:
                lo, hi = float(y.min()), float(y.max())
                y = (y - lo) / (hi - lo) if hi > lo else np.zeros_like(y)
                label += f" [{lo:.3g}, {hi:.3g}]"
            ax.plot(log.steps[ok], y, "-", lw=1.1, label=label)
        ax.set_ylabel("dynamics fields" + ("\n(each scaled to [0, 1])" if scaled else ""), fontsize=fs)
        if scaled:
            ax.set_yticks([0.0, 0.5, 1.0])
        lo, hi = ax.get_ylim()
        rows = math.ceil(len(shown) / (2 if len(shown) > 2 else 1))
        ax.set_ylim(lo, hi + (hi - lo) * 0.22 * rows)         # headroom: the legend sits above the curves
        ax.legend(fontsize=small, loc="upper left", ncol=2 if len(shown) > 2 else 1, framealpha=0.85)
        fig.rlvr_dynamics_scaled = scaled

    # diagnostics timeline
    ax = ax_of["diagnostics"]
    dets = report.get("diagnostics") or {}
    names = list(dets)
    for i, det in enumerate(names):
        d = dets[det]
        ax.hlines(i, steps[0], steps[-1], color="0.88", lw=7)
        if not d.get("available", True):
            ax.text(steps[0], i, "  n/a", va="center", fontsize=small, color="0.35")
        elif d.get("fired") and d.get("step") is not None:
            ax.hlines(i, d["step"], steps[-1], color="tab:red", lw=7, alpha=0.6)
            ev_steps = [e["step"] for e in d.get("events") or [] if e.get("step") is not None] or [d["step"]]
            ax.plot(ev_steps, [i] * len(ev_steps), "v", color="darkred", ms=6)
            ax.text(ev_steps[0], i + 0.32, f"step {ev_steps[0]}", fontsize=small, color="darkred", va="bottom")
        else:
            ax.text(steps[0], i, "  quiet", va="center", fontsize=small, color="darkgreen")
    ax.set_yticks(range(len(names)), [n.replace("_", " ") for n in names])
    ax.set_ylim(-0.7, max(len(names) - 0.1, 0.7))
    ax.set_xlabel("optimizer step", fontsize=fs)
    for a in axes:
        a.tick_params(labelsize=small)
        a.yaxis.get_offset_text().set_fontsize(small)
        a.xaxis.get_offset_text().set_fontsize(small)
    return fig


def _draw_report_forecast(ax, drawn: dict[int, tuple[float, float, float]]) -> None:
    """The report's forecasts with their 80 % intervals, as black diamonds with error bars."""
    xs = sorted(drawn)
    ax.errorbar(xs, [drawn[x][0] for x in xs],
                yerr=[[drawn[x][0] - drawn[x][1] for x in xs], [drawn[x][2] - drawn[x][0] for x in xs]],
                fmt="D", ms=5, color="k", capsize=3, label="forecast, 80 % interval (the report's)")


def _report_forecast(report: dict[str, Any]) -> dict[int, tuple[float, float, float]]:
    """``{step: (value, low, high)}`` of the report's forecast (empty when it has none)."""
    out = {}
    for step, value in (report.get("forecast") or {}).items():
        iv = (report.get("forecast_interval") or {}).get(step) or (report.get("forecast_interval") or {}).get(str(step))
        if value is None or iv is None:
            continue
        out[int(step)] = (float(value), float(iv[0]), float(iv[1]))
    return out


def figure_caption(log: RunLog, report: dict[str, Any], fig) -> str:
    """What the figure shows, panel by panel (plain text; escaped by the caller)."""
    verdict, _ = verdict_of(report)
    panels = getattr(fig, "rlvr_panels", ["reward", "residual", "diagnostics"])
    parts = []
    if verdict == "noise only":
        parts.append(f"Top: the logged reward ({log.reward_column}, grey dots) with its mean and the ±σ step-noise "
                     f"band; {noise_only_line(report)}, so no response law is drawn: step noise explains almost all "
                     "of the curve's variance" + ("; the black diamond is the report's forecast with its 80 % "
                                                  "interval." if getattr(fig, "rlvr_forecast", None) else "."))
        parts.append("Second: the reward minus its mean, with the ±σ band.")
    else:
        parts.append(f"Top: the logged reward ({log.reward_column}, grey dots; evaluation crosses when logged) with "
                     "the second-order response laws (P1 §3.3–3.7): the law read by the evidence reading "
                     f"({verdict}) bold, the others thin, a growing fit that the evidence does not support dashed; "
                     "the shaded band beyond the last step is the 80 % forecast interval.")
        parts.append("Second: the residuals of the law read, with the ±σ step-noise band.")
    if "dynamics" in panels:
        shown = getattr(fig, "rlvr_dynamics", [])
        constant = getattr(fig, "rlvr_dynamics_constant", {})
        drawn = [_bare(c) for c in shown]
        rest = [_bare(c) for c in dynamics_columns(log) if c not in shown and c not in constant]
        parts.append("Third: the dynamics fields logged by the callback or the live doctor vs step ("
                     + ", ".join(drawn) + ")" + ("; each scaled to [0, 1], its range in the legend"
                                                 if getattr(fig, "rlvr_dynamics_scaled", False) else "") +
                     (f"; constant, not drawn: " + ", ".join(f"{_bare(c)} = {fmt_value(v)}" for c, v in constant.items()
                                                              if c not in shown) if constant else "") +
                     (f"; not drawn (panel full): {', '.join(rest)}" if rest else "") + ".")
    parts.append("Bottom: the diagnostics timeline, one row per detector: red from its first event on, a triangle at "
                 "every event, \u201cquiet\u201d when it never fired, \u201cn/a\u201d when the log lacks its signal.")
    return " ".join(parts)
