"""``rlvr-dynamics fit LOG --html report.html --png report.png``: one figure and a self-contained HTML page.

The page leads with what a reader needs first:

- **Title**: the run's name (:func:`run_name_from_path`: a TRL ``output_dir``'s name, never ``checkpoint-12`` or an
  event file's name; a project run's folder name; a CSV's file stem) and the hyper-parameters η, μ, K_ref with where
  each came from (``not found`` otherwise).
- **The evidence verdict** of :func:`~.reading.read_dynamics` (``stable`` / ``unstable`` / ``undetermined`` /
  ``noise only``) and its reason. A fit is never labelled ``reliable`` against the verdict: with ``noise only`` no
  law is drawn or labelled (the figure shows the data, its mean and the ±σ step-noise band, and says ``noise only:
  noise ceiling X < 0.2``); with ``stable`` a growing fit is shown as not evidenced; with ``unstable`` the stable laws
  as rejected; with ``undetermined`` no fit is called reliable (:func:`display_status`).
- **The rules**: every detector that fired, with each event's step and numbers, the rule and the signal; which were
  quiet and which could not run (n/a) and why.

The figure (matplotlib, Agg backend) has one panel per row: the reward with the response laws (the law read bold)
and the forecast band (80 %); the residuals with the ±σ step-noise band; the callback's dynamics fields
(:func:`dynamics_columns`) when the log has them; the diagnostics timeline (one row per detector, a marker at every
event). Every text in it is at least :data:`MIN_FONT_PT` points at the size the page shows it (the image is shown at
the figure's physical width). The HTML embeds the PNG as base64 with a caption saying what each panel shows, and the
text report; it opens offline and can be mailed as one file. Writes are atomic; nothing touches the network.
"""
from __future__ import annotations

import base64
import copy
import html as html_lib
import io
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .logs import RunLog

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
HP_SYMBOLS = (("learning_rate", "η", "learning rate"), ("momentum", "μ", "momentum (Adam β1)"),
              ("refresh_interval", "K_ref", "refresh interval"))


def _atomic_write(path: Path, data: bytes) -> None:
    from .._io import atomic_write_bytes

    atomic_write_bytes(path, data)


# ----------------------------------------------------------------------------------------------------------------
# What the page says: run name, hyper-parameters, verdict, statuses, detectors
# ----------------------------------------------------------------------------------------------------------------

_LOG_FILES = ("trainer_state.json", "metrics.csv", "config.json", "training_args.bin")


def _has_events(folder: Path) -> bool:
    try:
        return any("tfevents" in p.name for p in folder.iterdir())
    except OSError:
        return False


def run_name_from_path(path: str | os.PathLike) -> str:
    """The run's name for a log path (a file or folder :func:`~.logs.load_log` reads, or the ``source`` it records).

    - a TRL ``output_dir``, one of its ``checkpoint-N/`` folders, its ``trainer_state.json``, its ``runs/<date>/``
      event folder or an event file in it: the ``output_dir``'s name;
    - a project run (``data/runs/<id>/metrics.csv`` or the folder): ``<id>``;
    - an MLflow run folder or metric file (``…/<run_id>/metrics/…``): ``<run_id>``;
    - any other file (CSV, JSON Lines, console log): its stem; any other folder: its name.
    """
    p = Path(path)
    from_events = "tfevents" in p.name
    is_file = p.is_file() or (not p.exists() and p.suffix != "")
    if is_file:
        if "tfevents" in p.name or p.name in _LOG_FILES:
            p = p.parent
        elif "metrics" in p.parts[:-1] and not p.suffix:          # MLflow metric file: <run>/metrics/<name…>
            i = len(p.parts) - 1 - p.parts[::-1].index("metrics")
            return p.parts[i - 1] if i >= 1 else p.name
        else:
            return p.stem or p.name
    if p.name == "metrics" and p.parent.name:                     # MLflow metrics/ folder
        p = p.parent
    if p.name.startswith("checkpoint-") and p.parent.name:
        p = p.parent
    if p.parent.name == "runs" and p.parent.parent.name and (from_events or _has_events(p)):
        p = p.parent.parent                                       # TRL: <output_dir>/runs/<date>/events…
    if p.name.startswith("checkpoint-") and p.parent.name:
        p = p.parent
    return p.name or str(path)


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{digits}g}" if math.isfinite(x) else str(float(x))
    if isinstance(x, (list, tuple)):
        uniq = list(dict.fromkeys(_fmt(v, digits) for v in x))
        return ", ".join(uniq)
    return str(x)


_NOTE = re.compile(r"^(learning_rate|momentum|refresh_interval) = \S+ read from (.+)$")


def hyperparameter_rows(report: dict[str, Any], hyperparameters: dict[str, Any] | None = None,
                        log: RunLog | None = None) -> list[dict[str, Any]]:
    """η, μ, K_ref with their value (None when not found) and where each came from.

    Taken from ``hyperparameters`` when given — the dict of :func:`~.hyperparams.find_hyperparameters` (one
    ``source`` for all) or the CLI's ``{…, "notes": [...]}`` (:func:`~.hyperparams.merge`: "read from" notes; a value
    without one was given on the command line) — else ``report["hyperparameters"]`` (what ``rlvr-dynamics fit``
    stores), else looked for beside ``log.source`` (then the source says the fit ran without them)."""
    hp, looked_up = hyperparameters, False
    if hp is None:
        hp = report.get("hyperparameters")
    if hp is None and log is not None:
        from .hyperparams import find_hyperparameters

        try:
            hp, looked_up = find_hyperparameters(log.source), True
        except Exception:   # noqa: BLE001 - a side file must never break writing the report
            hp = {}
    hp = hp or {}
    sources: dict[str, str] = {}
    if hp.get("source"):
        sources = {name: str(hp["source"]) for name, _, _ in HP_SYMBOLS}
    for note in hp.get("notes") or []:
        m = _NOTE.match(str(note))
        if m:
            sources[m.group(1)] = m.group(2)
    rows = []
    for name, symbol, meaning in HP_SYMBOLS:
        value = hp.get(name)
        if value is None:
            src = "not found"
        else:
            src = sources.get(name) or ("given on the command line" if "notes" in hp else "given")
            if looked_up:
                src += " (found when writing this report; the fit ran without it)"
        rows.append({"name": name, "symbol": symbol, "meaning": meaning, "value": value, "source": src})
    return rows


def _hp_value(row: dict[str, Any]) -> str:
    v = row["value"]
    if v is None:
        return "not found"
    if row["name"] == "refresh_interval":
        return str(int(round(float(v))))
    return f"{float(v):g}"


def hyperparameter_title(rows: list[dict[str, Any]]) -> str:
    """``η = 3e-06 · μ = 0.9 · K_ref = 8`` (``η not found`` for a missing one)."""
    return " · ".join(f"{r['symbol']} = {_hp_value(r)}" if r["value"] is not None else f"{r['symbol']} not found"
                      for r in rows)


def hyperparameter_sources(rows: list[dict[str, Any]]) -> str:
    """Where each hyper-parameter came from, one clause per source: ``η = 3e-06, μ = 0.9, K_ref = 8 read from
    …/training_args.bin; … not found``."""
    groups: dict[str, list[str]] = {}
    for r in rows:
        groups.setdefault(r["source"], []).append(r)
    clauses = []
    for src, rs in groups.items():
        if src == "not found":
            clauses.append(", ".join(f"{r['symbol']} ({r['meaning']})" for r in rs) + " not found")
        else:
            clauses.append(", ".join(f"{r['symbol']} = {_hp_value(r)}" for r in rs) +
                           ("" if src.startswith("given") else " read from ") + ("" if not src.startswith("given")
                                                                                  else " ") + src)
    return "; ".join(clauses)


def verdict_of(report: dict[str, Any]) -> tuple[str, str]:
    """(verdict, reason) of the report's evidence reading; ("unknown", …) for a report without one."""
    dyn = report.get("dynamics") or {}
    return dyn.get("verdict") or "unknown", dyn.get("reason") or "the report carries no evidence reading"


def _noise_ceiling(report: dict[str, Any]) -> float | None:
    nc = (report.get("dynamics") or {}).get("evidence", {}).get("noise_ceiling")
    if nc is None:
        nc = (report.get("noise") or {}).get("noise_ceiling")
    return None if nc is None or not math.isfinite(nc) else float(nc)


def noise_only_line(report: dict[str, Any]) -> str:
    """``noise only: noise ceiling 0.068 < 0.2`` (the threshold of :mod:`.reading`)."""
    from .reading import NOISE_ONLY_CEILING

    nc = _noise_ceiling(report)
    if nc is None:
        return f"noise only: noise ceiling undefined (constant reward) < {NOISE_ONLY_CEILING:g}"
    return f"noise only: noise ceiling {nc:.2g} < {NOISE_ONLY_CEILING:g}"


def display_status(status: str, regime: str | None, verdict: str) -> str:
    """A fit's status as the page shows it, never ``reliable`` against the evidence verdict: ``noise only`` → every
    law ``not read: noise only``; ``undetermined`` → a reliable fit is ``fitted; reading undetermined``; ``stable`` →
    a reliable growing fit is ``fitted; growth not evidenced``; ``unstable`` → a reliable stable law is ``fitted;
    rejected by the growth test``. Other statuses (``at bound``, ``unreliable``, ``failed``) are kept."""
    if verdict == "noise only":
        return "not read: noise only"
    if status != "reliable":
        return status
    if verdict == "undetermined":
        return "fitted; reading undetermined"
    if verdict == "stable" and regime == "growing":
        return "fitted; growth not evidenced"
    if verdict == "unstable" and regime != "growing":
        return "fitted; rejected by the growth test"
    return status


def display_report(report: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``report`` whose fit statuses are :func:`display_status` (for the page's text report)."""
    verdict, reason = verdict_of(report)
    out = copy.deepcopy(report)
    for fit in (out.get("fits") or {}).values():           # P1's reference fits: stable laws
        shown = display_status(fit.get("status", "reliable" if fit.get("reliable") else "unreliable"), None, verdict)
        if shown != fit.get("status"):
            fit["status"], fit["reliable"] = shown, False
            fit["message"] = reason if verdict == "noise only" else f"the reading is {verdict}: {reason}"
    resp = out.get("response") or {}
    for fit in (resp.get("laws") or {}).values():
        fit["status"] = display_status(fit.get("status", ""), fit.get("regime"), verdict)
    reading = resp.get("reading")
    if reading:
        reading["status"] = display_status(reading.get("status", ""), reading.get("regime"), verdict)
        if verdict == "noise only":
            reading["law"] = "none"
    return out


def _event_numbers(event: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in event.items() if k != "step" and v is not None)


def fired_summary(dets: dict[str, Any]) -> list[str]:
    """One line per detector that fired: its name, the step(s) of its events and the numbers at the first."""
    lines = []
    for name, d in dets.items():
        if not (d.get("available") and d.get("fired")):
            continue
        steps = [e.get("step") for e in d.get("events") or []] or [d.get("step")]
        first = (d.get("events") or [None])[0] or {k: v for k, v in (d.get("detail") or {}).items()
                                                   if not isinstance(v, (list, dict))}
        lines.append(f"{name} at step {_fmt(steps[0])}" +
                     (f" (events at steps {_fmt(steps)})" if len(steps) > 1 else "") +
                     (f": {_event_numbers(first)}" if _event_numbers(first) else ""))
    return lines


# ----------------------------------------------------------------------------------------------------------------
# The figure
# ----------------------------------------------------------------------------------------------------------------

def dynamics_columns(log: RunLog) -> list[str]:
    """The log's dynamics fields to plot: columns under ``dynamics/`` or ``train/dynamics/`` (the callback's fields
    and the live doctor's curves; its flags and codes are left out, :data:`_NOT_PLOTTED`), and the callback's fields
    under their bare names as the project's ``metrics.csv`` stores them (``gap_alignment``, …); one column per field
    (the namespaced one when both exist), with a finite value; :data:`DYNAMICS_PRIORITY` first."""
    from ..grpo.fields import CALLBACK_FIELDS, FRESH_GAP_FIELDS

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
    """The matplotlib figure for ``report`` (from :func:`~.report.fit_run` on ``log``), module docstring.

    ``fig.rlvr_panels`` lists the panels drawn (``reward``, ``residual``, ``dynamics`` when present,
    ``diagnostics``) and ``fig.rlvr_dynamics`` the dynamics columns drawn, for the caption."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from . import response_laws as rl
    from .diagnostics import _eval_column, _evaluation_rows
    from .forecast import forecast_path
    from .reading import read_dynamics

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
    fig.rlvr_dynamics_constant = {c: float(np.nanmax(log.series[c])) for c in dcols if c not in varying}

    # reward panel
    ax = ax_of["reward"]
    ax.plot(steps, reward, ".", ms=3, color="0.45", label=f"{log.reward_column} (logged)")
    ename, ev = _eval_column(log)
    if ename is not None:
        rows = _evaluation_rows(log, ev)
        ax.plot(log.steps[rows], ev[rows], "x", ms=4, color="tab:purple", label=f"{ename} (evaluation)")
    sigma = float((report.get("noise") or {}).get("sigma") or rl.step_sigma(reward))
    if noise_only:
        mean = float(np.mean(reward))
        ax.axhspan(mean - sigma, mean + sigma, color="0.85", zorder=0, label="mean ± σ step noise")
        ax.axhline(mean, color="0.3", lw=1.0, label="mean reward")
        ax.text(0.01, 0.97, noise_only_line(report) + ": no law drawn", transform=ax.transAxes, va="top",
                fontsize=fs, color="darkred", bbox=dict(boxstyle="round", fc="white", ec="darkred", alpha=0.9))
    else:
        span = float(steps[-1] - steps[0]) or 1.0
        grid = np.linspace(steps[0], steps[-1], 400)
        drew_read = False
        for law in rl.LAW_NAMES:
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
        if read_fit is not None and not drew_read:
            color = LAW_STYLE.get(read_fit.law, ("k", read_fit.law))[0]
            ax.plot(grid, read_fit.predict(grid), color=color, lw=2.4,
                    label=f"{LAW_STYLE.get(read_fit.law, ('', read_fit.law))[1]}, stable-constrained "
                          f"[{display_status(read_fit.status, read_fit.regime, verdict)}] (law read)")
        if pref is not None:
            future = np.linspace(steps[-1], steps[-1] + horizon * span, 25)[1:]
            color = LAW_STYLE[read_fit.law][0] if read_fit is not None and read_fit.law in LAW_STYLE else "k"
            fc = forecast_path(steps, reward, future, reward_bounds=bounds, fits=fits)
            ax.fill_between(future, [f.low for f in fc], [f.high for f in fc], color=color, alpha=0.18,
                            label="forecast, 80 % interval")
            ax.plot(future, [f.value for f in fc], "--", color=color, lw=1.2)
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


def figure_caption(log: RunLog, report: dict[str, Any], fig) -> str:
    """What the figure shows, panel by panel (plain text; escaped by the caller)."""
    verdict, _ = verdict_of(report)
    panels = getattr(fig, "rlvr_panels", ["reward", "residual", "diagnostics"])
    parts = []
    if verdict == "noise only":
        parts.append(f"Top: the logged reward ({log.reward_column}, grey dots) with its mean and the ±σ step-noise "
                     f"band; {noise_only_line(report)}, so no response law is drawn: step noise explains almost all "
                     "of the curve's variance.")
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
                     (f"; constant, not drawn: " + ", ".join(f"{_bare(c)} = {_fmt(v)}" for c, v in constant.items()
                                                              if c not in shown) if constant else "") +
                     (f"; not drawn (panel full): {', '.join(rest)}" if rest else "") + ".")
    parts.append("Bottom: the diagnostics timeline, one row per detector: red from its first event on, a triangle at "
                 "every event, \u201cquiet\u201d when it never fired, \u201cn/a\u201d when the log lacks its signal.")
    return " ".join(parts)


# ----------------------------------------------------------------------------------------------------------------
# The page
# ----------------------------------------------------------------------------------------------------------------

_CSS = """body{font-family:system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;line-height:1.4}
h1 .hp{display:block;font-size:1.1rem;font-weight:normal;color:#333;margin-top:.3rem}
.hpsrc{font-size:.85rem;color:#444}
.verdict{border-left:.4rem solid #888;background:#f6f6f6;padding:.6rem 1rem;margin:1rem 0}
.verdict h2{margin:.1rem 0 .4rem}
.v-stable{border-color:#2a7d2a}.v-unstable{border-color:#b00}.v-noise-only{border-color:#c80}
.v-undetermined{border-color:#888}
pre{background:#f6f6f6;padding:1rem;overflow-x:auto;font-size:.8rem}
figure{margin:1rem 0}img{max-width:100%;height:auto}figcaption{font-size:.9rem;color:#333}
table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;
vertical-align:top}.fired{color:#b00;font-weight:bold}ul.events{margin:0;padding-left:1.1rem}"""


def _detector_table(dets: dict[str, Any], max_events: int = 12) -> str:
    rows = []
    for name, d in dets.items():
        if not d.get("available", True):
            result, numbers = "n/a", html_lib.escape(f"the log lacks: {d.get('signal', '')}")
        elif d.get("fired"):
            events = d.get("events") or [{"step": d.get("step"), **{k: v for k, v in (d.get("detail") or {}).items()
                                                                    if k != "step"}}]
            steps = [e.get("step") for e in events]
            result = (f"<span class=\"fired\">fired at step {html_lib.escape(_fmt(steps[0]))}</span>" +
                      (f"<br>{len(steps)} events, at steps {html_lib.escape(_fmt(steps))}" if len(steps) > 1 else ""))
            items = "".join(f"<li>step {html_lib.escape(_fmt(e.get('step')))}: {html_lib.escape(_event_numbers(e))}"
                            "</li>" for e in events[:max_events])
            more = f"<li>… {len(events) - max_events} more</li>" if len(events) > max_events else ""
            summary = {k: v for k, v in (d.get("detail") or {}).items() if k != "step" and not isinstance(v, dict)}
            summary = _event_numbers(summary)
            numbers = f"<ul class=\"events\">{items}{more}</ul>" + (
                f"summary: {html_lib.escape(summary)}" if summary and summary != _event_numbers(events[0]) else "")
        else:
            result = "quiet"
            detail = {k: v for k, v in (d.get("detail") or {}).items() if not isinstance(v, dict)}
            numbers = html_lib.escape(_event_numbers(detail)) if detail else ""
        rows.append(f"<tr><td>{html_lib.escape(name)}</td><td>{result}</td><td>{numbers}</td>"
                    f"<td>{html_lib.escape(d.get('signal', ''))}</td><td>{html_lib.escape(d.get('threshold', ''))}"
                    "</td></tr>")
    return ("<table><tr><th>detector</th><th>result</th><th>step(s) and numbers</th><th>signal</th><th>rule</th></tr>"
            + "".join(rows) + "</table>")


def render_html(log: RunLog, report: dict[str, Any], png: bytes, *, fig=None, name: str | None = None,
                hyperparameters: dict[str, Any] | None = None) -> str:
    """The self-contained page (module docstring) around the PNG bytes of :func:`report_figure`."""
    from .report import format_report

    esc = html_lib.escape
    name = name or run_name_from_path(log.source)
    hp_rows = hyperparameter_rows(report, hyperparameters, log)
    hp_title = hyperparameter_title(hp_rows)
    hp_src = hyperparameter_sources(hp_rows)
    verdict, reason = verdict_of(report)
    slug = re.sub(r"[^a-z]+", "-", verdict.lower()).strip("-")
    head = noise_only_line(report) if verdict == "noise only" else f"reading: {verdict}"
    extra = ""
    reading = (report.get("response") or {}).get("reading")
    if verdict == "noise only":
        extra = ("<p>No response law is drawn or read: step noise explains almost all the variance of the reward "
                 "curve. The figure shows the data, its mean and the ±σ step-noise band.</p>")
    elif reading and verdict in ("stable", "unstable"):
        z = reading.get("damping_ratio")
        extra = (f"<p>Law read: {esc(str(reading.get('law')).replace('_', ' '))} ({esc(str(reading.get('regime')))}"
                 + (f", ζ = {z:.3g}" if z is not None else "") + ").</p>")
    plateau = report.get("plateau") or {}
    if plateau.get("value") is not None:
        extra += f"<p>Plateau R∞ = {_fmt(plateau['value'])}" + (
            f" ± {_fmt(plateau['sd'])}" if plateau.get("sd") else "") + "</p>"
    dets = report.get("diagnostics") or {}
    fired = fired_summary(dets)
    quiet = [n for n, d in dets.items() if d.get("available", True) and not d.get("fired")]
    na = [n for n, d in dets.items() if not d.get("available", True)]
    rules = ("<ul>" + "".join(f"<li class=\"fired\">{esc(line)}</li>" for line in fired) + "</ul>" if fired
             else "<p>No detector fired.</p>")
    rules += (f"<p>Quiet: {esc(', '.join(quiet)) or 'none'}. Not applicable (signal missing from the log): "
              f"{esc(', '.join(na)) or 'none'}.</p>") if dets else "<p>The report ran no detectors.</p>"
    width_px = int(round((fig.get_figwidth() if fig is not None else FIG_WIDTH_IN) * 96))
    caption = figure_caption(log, report, fig) if fig is not None else "The report figure."
    b64 = base64.b64encode(png).decode("ascii")
    alt = f"report figure of {name}: " + ", ".join(getattr(fig, "rlvr_panels", ["reward", "residual", "diagnostics"]))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{esc(name)} ({esc(hp_title)}) — rlvr-dynamics fit</title>
<style>{_CSS}</style>
</head><body>
<h1>{esc(name)}<span class="hp">{esc(hp_title)}</span></h1>
<p class="hpsrc">{esc(hp_src)}.</p>
<section class="verdict v-{slug}"><h2>{esc(head)}</h2>
<p>{esc(reason)}</p>{extra}</section>
<h2>Rules that fired</h2>
{rules}
<figure><img alt="{esc(alt)}" width="{width_px}" src="data:image/png;base64,{b64}">
<figcaption>Figure 1. {esc(caption)}</figcaption></figure>
<h2>Diagnostics</h2>
<p>P1's four diagnostics and the collapse warning (rules in <code>rlvr_dynamics.runs.diagnostics</code>); every event
with the numbers that fired it.</p>
{_detector_table(dets)}
<h2>Report</h2>
<p>The full text report of <code>rlvr-dynamics fit</code> (fits shown with the statuses of the evidence reading).</p>
<pre>{esc(format_report(display_report(report)))}</pre>
</body></html>
"""


def write_report(log: RunLog, report: dict[str, Any], *, html: str | os.PathLike | None = None,
                 png: str | os.PathLike | None = None, dpi: int = 110, run_name: str | None = None,
                 hyperparameters: dict[str, Any] | None = None) -> list[Path]:
    """Write the figure as ``png`` and/or a self-contained ``html`` page; returns the paths written (png first).

    ``run_name``: the title (default :func:`run_name_from_path` of ``log.source``); ``hyperparameters``: η, μ,
    K_ref and their sources (default ``report["hyperparameters"]``, as ``rlvr-dynamics fit`` stores them, else looked
    for beside the log; :func:`hyperparameter_rows`)."""
    import matplotlib.pyplot as plt

    fig = report_figure(log, report, name=run_name)
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        data = buf.getvalue()
        page = render_html(log, report, data, fig=fig, name=run_name,
                           hyperparameters=hyperparameters) if html else None
    finally:
        plt.close(fig)
    out = []
    if png:
        _atomic_write(Path(png), data)
        out.append(Path(png))
    if html:
        _atomic_write(Path(html), page.encode("utf-8"))
        out.append(Path(html))
    return out
