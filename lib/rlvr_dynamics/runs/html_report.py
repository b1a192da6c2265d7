"""``rlvr-dynamics fit LOG --html report.html --png report.png``: one figure and a self-contained HTML page.

The figure has three panels: the reward with every response law (the preferred one bold) and the forecast band
(80 %) beyond the last step; the residuals of the preferred law with the ±σ step-noise band; the diagnostics
timeline (one row per detector: where it fired, or "quiet"/"n/a"). The HTML embeds the PNG as base64 and the text
report, so it opens offline and can be mailed as one file. matplotlib only (Agg backend), no network.
"""
from __future__ import annotations

import base64
import html as html_lib
import io
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .logs import RunLog

LAW_STYLE = {"single_exponential": ("tab:blue", "first order"), "overdamped": ("tab:green", "overdamped"),
             "oscillatory": ("tab:red", "oscillatory")}


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _run_name(log: RunLog) -> str:
    p = Path(log.source)
    return f"{p.parent.name}/{p.name}" if p.name in ("metrics.csv", "trainer_state.json") else p.name


def report_figure(log: RunLog, report: dict[str, Any], *, horizon: float = 0.5):
    """The three-panel matplotlib figure for ``report`` (from :func:`~.report.fit_run` on ``log``)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from . import response_laws as rl
    from .forecast import forecast

    steps, reward = log.reward_curve()
    bounds = tuple(report["reward_bounds"]) if report.get("reward_bounds") else None
    fits = rl.fit_response_laws(steps, reward, reward_bounds=bounds)
    pref = fits["preferred"]
    fig, axes = plt.subplots(3, 1, figsize=(8.0, 7.2), height_ratios=[3, 1.3, 1.4], sharex=True,
                             layout="constrained")
    ax = axes[0]
    ax.plot(steps, reward, ".", ms=3, color="0.45", label=f"{log.reward_column} (logged)")
    from .diagnostics import _eval_column, _evaluation_rows

    ename, ev = _eval_column(log)
    if ename is not None:
        rows = _evaluation_rows(log, ev)
        ax.plot(log.steps[rows], ev[rows], "x", ms=4, color="tab:purple", label=f"{ename} (evaluation)")
    span = float(steps[-1] - steps[0]) or 1.0
    future = np.linspace(steps[-1], steps[-1] + horizon * span, 25)
    grid = np.linspace(steps[0], steps[-1], 400)
    for name in rl.LAW_NAMES:
        fit = fits[name]
        if fit.status == "failed":
            continue
        color, label = LAW_STYLE[name]
        bold = name == pref
        ax.plot(grid, fit.predict(grid), color=color, lw=2.2 if bold else 1.0, alpha=1 if bold else 0.7,
                label=f"{label} [{fit.status}]" + (" (preferred)" if bold else ""))
    if pref is not None:
        fc = [forecast(steps, reward, [s], reward_bounds=bounds, fits=fits) for s in future[1:]]
        ax.fill_between(future[1:], [f.low for f in fc], [f.high for f in fc], color=LAW_STYLE[pref][0], alpha=0.18,
                        label="forecast, 80 % interval")
        ax.plot(future[1:], [f.value for f in fc], "--", color=LAW_STYLE[pref][0], lw=1.2)
    reading = report.get("response", {}).get("reading")
    title = _run_name(log)
    if reading:
        z = reading.get("damping_ratio")
        title += f" — {reading['regime']}" + (f", ζ = {z:.3g}" if z is not None else "")
    ax.set_title(title, fontsize=10)
    ax.set_ylabel("reward")
    ax.legend(fontsize=7, loc="best")
    ax = axes[1]
    if pref is not None:
        res = reward - fits[pref].predict(steps)
        sigma = fits[pref].sigma
        ax.axhspan(-sigma, sigma, color="0.85", label="±σ step noise")
        ax.plot(steps, res, ".", ms=2.5, color=LAW_STYLE[pref][0])
        ax.axhline(0, color="k", lw=0.6)
        ax.legend(fontsize=7, loc="upper right")
    ax.set_ylabel("residual")
    ax = axes[2]
    dets = report.get("diagnostics", {})
    names = list(dets)
    for i, name in enumerate(names):
        d = dets[name]
        ax.hlines(i, steps[0], steps[-1], color="0.85", lw=6)
        if not d["available"]:
            ax.text(steps[0], i, "  n/a", va="center", fontsize=7, color="0.4")
        elif d["fired"] and d["step"] is not None:
            ax.hlines(i, d["step"], steps[-1], color="tab:red", lw=6)
            ax.plot([d["step"]], [i], "v", color="darkred")
        else:
            ax.text(steps[0], i, "  quiet", va="center", fontsize=7, color="tab:green")
    ax.set_yticks(range(len(names)), [n.replace("_", " ") for n in names], fontsize=7)
    ax.set_ylim(-0.7, max(len(names) - 0.3, 0.7))
    ax.set_xlabel("optimizer step")
    return fig


def write_report(log: RunLog, report: dict[str, Any], *, html: str | os.PathLike | None = None,
                 png: str | os.PathLike | None = None, dpi: int = 110) -> list[Path]:
    """Write the figure as ``png`` and/or a self-contained ``html`` page; returns the paths written."""
    import matplotlib.pyplot as plt

    from .report import format_report

    fig = report_figure(log, report)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    data = buf.getvalue()
    out = []
    if png:
        _atomic_write(Path(png), data)
        out.append(Path(png))
    if html:
        b64 = base64.b64encode(data).decode("ascii")
        dets = report.get("diagnostics", {})
        rows = "".join(
            f"<tr><td>{html_lib.escape(n)}</td><td>{'n/a' if not d['available'] else ('fires at step ' + str(d['step']) if d['fired'] else 'quiet')}</td>"
            f"<td>{html_lib.escape(d['signal'])}</td><td>{html_lib.escape(d['threshold'])}</td></tr>"
            for n, d in dets.items())
        page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rlvr-dynamics fit: {html_lib.escape(_run_name(log))}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
pre{{background:#f6f6f6;padding:1rem;overflow-x:auto;font-size:.8rem}}img{{max-width:100%}}
table{{border-collapse:collapse;font-size:.85rem}}td,th{{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}}</style>
</head><body>
<h1>{html_lib.escape(_run_name(log))}</h1>
<p>Fitted by <code>rlvr-dynamics fit</code>: second-order response laws (P1 §3.3–3.7), forecast with an 80 % interval,
and P1's four diagnostics plus a collapse warning.</p>
<img alt="reward, fitted laws, forecast band, residuals and diagnostics timeline" src="data:image/png;base64,{b64}">
<h2>Diagnostics</h2>
<table><tr><th>detector</th><th>result</th><th>signal</th><th>rule</th></tr>{rows}</table>
<h2>Report</h2>
<pre>{html_lib.escape(format_report(report))}</pre>
</body></html>
"""
        _atomic_write(Path(html), page.encode("utf-8"))
        out.append(Path(html))
    return out
