"""What the HTML page and the figure say about a report before any drawing: the run's name, its hyper-parameters
and where they came from, the evidence verdict, fit statuses as displayed, and the detectors that fired."""
from __future__ import annotations

import copy
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...runs.logs import RunLog
from ...runs.noise import ceiling_text

HP_SYMBOLS = (("learning_rate", "η", "learning rate"), ("momentum", "μ", "momentum (Adam β1)"),
              ("refresh_interval", "K_ref", "refresh interval"), ("num_generations", "G", "group size (completions "
                                                                                    "per prompt)"))

_LOG_FILES = ("trainer_state.json", "metrics.csv", "config.json", "training_args.bin")


def _has_events(folder: Path) -> bool:
    try:
        return any("tfevents" in p.name for p in folder.iterdir())
    except OSError:
        return False


def run_name_from_path(path: str | os.PathLike) -> str:
    """The run's name for a log path (a file or folder :func:`~rlvr_dynamics.runs.logs.load_log` reads, or the
    ``source`` it records).

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


def fmt_pm(value: float, sd: float | None) -> str:
    """``value ± sd``, the spread to two significant digits and the value to the same decimal place
    (``0.775 ± 0.041``, not ``0.775 ± 0.04082``); :func:`fmt_value` of each when either is very large or small."""
    if sd is None or not (math.isfinite(sd) and sd > 0 and math.isfinite(value)):
        return fmt_value(value)
    if not (1e-4 <= sd and abs(value) < 1e6):
        return f"{fmt_value(value)} ± {fmt_value(sd, 2)}"
    decimals = max(0, 1 - math.floor(math.log10(sd)))
    return f"{value:.{decimals}f} ± {sd:.{decimals}f}"


def fmt_value(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{digits}g}" if math.isfinite(x) else str(float(x))
    if isinstance(x, (list, tuple)):
        uniq = list(dict.fromkeys(fmt_value(v, digits) for v in x))
        return ", ".join(uniq)
    return str(x)


_NOTE = re.compile(r"^(learning_rate|momentum|refresh_interval|num_generations) = \S+ read from (.+)$")


def hyperparameter_rows(report: dict[str, Any], hyperparameters: dict[str, Any] | None = None,
                        log: RunLog | None = None) -> list[dict[str, Any]]:
    """η, μ, K_ref and G with their value (None when not found) and where each came from.

    Taken from ``hyperparameters`` when given — the dict of
    :func:`~rlvr_dynamics.runs.hyperparams.find_hyperparameters` (one ``source`` for all) or the CLI's
    ``{…, "notes": [...]}`` (:func:`~rlvr_dynamics.runs.hyperparams.merge`: "read from" notes; a value without one
    was given on the command line) — else ``report["hyperparameters"]`` (what ``rlvr-dynamics fit``
    stores), else looked for beside ``log.source`` (then the source says the fit ran without them)."""
    hp, looked_up = hyperparameters, False
    if hp is None:
        hp = report.get("hyperparameters")
    if hp is None and log is not None:
        from ...runs.hyperparams import find_hyperparameters

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
    if row["name"] in ("refresh_interval", "num_generations"):
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
    """``noise only: noise ceiling 0.068 < 0.2`` (the threshold of :mod:`~rlvr_dynamics.doctor.reading.dynamics`)."""
    from ..reading.dynamics import NOISE_ONLY_CEILING

    nc = _noise_ceiling(report)
    if nc is None:
        return f"noise only: noise ceiling undefined (constant reward) < {NOISE_ONLY_CEILING:g}"
    return f"noise only: noise ceiling {ceiling_text(nc, '.2g')} < {NOISE_ONLY_CEILING:g}"


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
    """A copy of ``report`` whose fit statuses are :func:`display_status`: what the text, the HTML page and the JSON
    show. A noise-only reading also reads no law, regime or damping ratio, no oscillator (M/K, C/K, ζ and stability
    margin of a three-phase fit not read), and its plateau names no law."""
    verdict, reason = verdict_of(report)
    out = copy.deepcopy(report)
    for fit in (out.get("fits") or {}).values():           # P1's reference fits: stable laws
        shown = display_status(fit.get("status", "reliable" if fit.get("reliable") else "unreliable"), None, verdict)
        if shown != fit.get("status"):
            fit["status"], fit["reliable"] = shown, False
            fit["message"] = reason if verdict == "noise only" else f"the reading is {verdict}: {reason}"
    if verdict == "noise only" and out.get("oscillator"):
        out["oscillator"] = None        # the three-phase fit read as an oscillator: no law is read from noise
    resp = out.get("response") or {}
    for fit in (resp.get("laws") or {}).values():
        fit["status"] = display_status(fit.get("status", ""), fit.get("regime"), verdict)
    reading = resp.get("reading")
    if reading:
        reading["status"] = display_status(reading.get("status", ""), reading.get("regime"), verdict)
        if verdict == "noise only":
            reading.update(law="none", regime=None, damping_ratio=None, damping_ratio_80=None,
                           damping_over_stiffness=None)
    if verdict == "noise only" and out.get("plateau"):
        out["plateau"].update(law=None, status=None)
    return out


def event_numbers(event: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {fmt_value(v)}" for k, v in event.items() if k != "step" and v is not None)


def fired_summary(dets: dict[str, Any]) -> list[str]:
    """One line per detector that fired: its name, the step(s) of its events and the numbers at the first."""
    lines = []
    for name, d in dets.items():
        if not (d.get("available") and d.get("fired")):
            continue
        steps = [e.get("step") for e in d.get("events") or []] or [d.get("step")]
        first = (d.get("events") or [None])[0] or {k: v for k, v in (d.get("detail") or {}).items()
                                                   if not isinstance(v, (list, dict))}
        lines.append(f"{name} at step {fmt_value(steps[0])}" +
                     (f" (events at steps {fmt_value(steps)})" if len(steps) > 1 else "") +
                     (f": {event_numbers(first)}" if event_numbers(first) else ""))
    return lines


# ----------------------------------------------------------------------------------------------------------------
# The figure
# ----------------------------------------------------------------------------------------------------------------
