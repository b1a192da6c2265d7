"""``rlvr-dynamics fit LOG --html report.html --png report.png``: one figure and a self-contained HTML page.

The page leads with what a reader needs first:

- **Title**: the run's name (:func:`~.summary.run_name_from_path`: a TRL ``output_dir``'s name, never
  ``checkpoint-12`` or an event file's name; a project run's folder name; a CSV's file stem) and the hyper-parameters
  η, μ, K_ref with where each came from (``not found`` otherwise).
- **The evidence verdict** of :func:`~rlvr_dynamics.doctor.reading.dynamics.read_dynamics` (``stable`` / ``unstable``
  / ``undetermined`` / ``noise only``) and its reason. A fit is never labelled ``reliable`` against the verdict: with
  ``noise only`` no law is drawn or labelled (the figure shows the data, its mean and the ±σ step-noise band, and
  says ``noise only: noise ceiling X < 0.2``); with ``stable`` a growing fit is shown as not evidenced; with
  ``unstable`` the stable laws as rejected; with ``undetermined`` no fit is called reliable
  (:func:`~.summary.display_status`).
- **The rules**: every detector that fired, with each event's step and numbers, the rule and the signal; which were
  quiet and which could not run (n/a) and why.

The figure (matplotlib, Agg backend) has one panel per row: the reward with the response laws (the law read bold) and
the forecast band (80 %); the residuals with the ±σ step-noise band; the callback's dynamics fields
(:func:`~.figure.dynamics_columns`) when the log has them; the diagnostics timeline (one row per detector, a marker
at every event). Every text in it is at least :data:`~.figure.MIN_FONT_PT` points at the size the page shows it (the
image is shown at the figure's physical width). The HTML embeds the PNG as base64 with a caption saying what each
panel shows, and the text report; it opens offline and can be mailed as one file. Writes are atomic; nothing touches
the network.

"""
from __future__ import annotations

import base64
import html as html_lib
import io
import os
import re
from pathlib import Path
from typing import Any

from ...runs.logs import RunLog
from .figure import FIG_WIDTH_IN, figure_caption, report_figure
from .summary import (event_numbers, fmt_pm, fmt_value, display_report, fired_summary, hyperparameter_rows,
                      hyperparameter_sources, hyperparameter_title, noise_only_line, run_name_from_path, verdict_of)


def _atomic_write(path: Path, data: bytes) -> None:
    from ..._io import atomic_write_bytes

    atomic_write_bytes(path, data)


# ----------------------------------------------------------------------------------------------------------------
# What the page says: run name, hyper-parameters, verdict, statuses, detectors
# ----------------------------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------------------------
# The page
# ----------------------------------------------------------------------------------------------------------------

_CSS = """body{font-family:system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;line-height:1.4}
h1 .hp{display:block;font-size:1.1rem;font-weight:normal;color:#333;margin-top:.3rem}
.hpsrc{font-size:.85rem;color:#444}
.verdict{border-left:.4rem solid #888;background:#f6f6f6;padding:.6rem 1rem;margin:1rem 0}
.verdict h2{margin:.1rem 0 .4rem}
.v-stable{border-color:#2a7d2a}.v-unstable{border-color:#b00}.v-noise-only{border-color:#c80}
.v-undetermined{border-color:#888}.v-not-read{border-color:#888}
.status{border-left:.6rem solid #2a7d2a;background:#f3f8f3;padding:.6rem 1rem;margin:1rem 0}
.status h2{margin:.1rem 0 .4rem}.s-failure{border-color:#b00;background:#fbf0f0}.s-neutral{border-color:#c80;background:#fbf6ec}
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
            result = (f"<span class=\"fired\">fired at step {html_lib.escape(fmt_value(steps[0]))}</span>" +
                      (f"<br>{len(steps)} events, at steps {html_lib.escape(fmt_value(steps))}" if len(steps) > 1 else ""))
            items = "".join(f"<li>step {html_lib.escape(fmt_value(e.get('step')))}: {html_lib.escape(event_numbers(e))}"
                            "</li>" for e in events[:max_events])
            more = f"<li>… {len(events) - max_events} more</li>" if len(events) > max_events else ""
            summary = {k: v for k, v in (d.get("detail") or {}).items() if k != "step" and not isinstance(v, dict)}
            summary = event_numbers(summary)
            numbers = f"<ul class=\"events\">{items}{more}</ul>" + (
                f"summary: {html_lib.escape(summary)}" if summary and summary != event_numbers(events[0]) else "")
        else:
            result = "quiet"
            detail = {k: v for k, v in (d.get("detail") or {}).items() if not isinstance(v, dict)}
            numbers = html_lib.escape(event_numbers(detail)) if detail else ""
        rows.append(f"<tr><td>{html_lib.escape(name)}</td><td>{result}</td><td>{numbers}</td>"
                    f"<td>{html_lib.escape(d.get('signal', ''))}</td><td>{html_lib.escape(d.get('threshold', ''))}"
                    "</td></tr>")
    return ("<table><tr><th>detector</th><th>result</th><th>step(s) and numbers</th><th>signal</th><th>rule</th></tr>"
            + "".join(rows) + "</table>")


def render_html(log: RunLog, report: dict[str, Any], png: bytes, *, fig=None, name: str | None = None,
                hyperparameters: dict[str, Any] | None = None) -> str:
    """The self-contained page (module docstring) around the PNG bytes of :func:`report_figure`."""
    from .text import format_report

    esc = html_lib.escape
    name = name or run_name_from_path(log.source)
    hp_rows = hyperparameter_rows(report, hyperparameters, log)
    hp_title = hyperparameter_title(hp_rows)
    hp_src = hyperparameter_sources(hp_rows)
    status = report.get("status") or {}
    state = status.get("state", "not decided")
    s_class = "s-failure" if status.get("failure") else ("s-neutral" if state in ("too short", "noise only")
                                                           else "s-healthy")
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
        extra += f"<p>Plateau R∞ = {fmt_pm(plateau['value'], plateau.get('sd'))}</p>"
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
<title>{esc(state.upper())}: {esc(name)} ({esc(hp_title)}) — rlvr-dynamics fit</title>
<style>{_CSS}</style>
</head><body>
<h1>{esc(name)}<span class="hp">{esc(hp_title)}</span></h1>
<p class="hpsrc">{esc(hp_src)}.</p>{_read_notes(report, esc)}
<section class="status {s_class}"><h2>status: {esc(state.upper())}{esc(_at(status))}</h2>
<p>{esc(status.get("evidence", "no status in this report"))}</p>{_extra(status, esc)}</section>
<section class="verdict v-{slug}"><h2>{esc(head)}</h2>
<p>{esc(reason)}</p>{extra}</section>
<h2>Rules that fired</h2>
{rules}
<figure><img alt="{esc(alt)}" width="{width_px}" src="data:image/png;base64,{b64}">
<figcaption>Figure 1. {esc(caption)}</figcaption></figure>
<h2>Diagnostics</h2>
<p>P1's four diagnostics and the collapse warning (rules in <code>rlvr_dynamics.doctor.detectors</code>); every event
with the numbers that fired it.</p>
{_detector_table(dets)}
<h2>Report</h2>
<p>The full text report of <code>rlvr-dynamics fit</code> (fits shown with the statuses of the evidence reading).</p>
<pre>{esc(format_report(display_report(report)))}</pre>
</body></html>
"""


def _extra(status: dict[str, Any], esc) -> str:
    """The status' warning and what to do, as the text report gives them."""
    out = ""
    if status.get("warning"):
        out += f'<p class="warning"><b>warning:</b> {esc(status["warning"])}</p>'
    if status.get("action"):
        out += f'<p class="action"><b>what to do:</b> {esc(status["action"])}</p>'
    return out


def _read_notes(report: dict[str, Any], esc) -> str:
    """What the reading of the log did (the segments read, gaps, dropped reward cells), as the text report's
    ``read:`` lines."""
    notes = report.get("read_notes") or []
    return ("\n<ul class=\"hpsrc\">" + "".join(f"<li>read: {esc(n)}</li>" for n in notes) + "</ul>") if notes else ""


def _at(status: dict[str, Any]) -> str:
    return f" at step {status['step']}" if status.get("step") is not None else ""


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
