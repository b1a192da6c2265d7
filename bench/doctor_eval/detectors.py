"""Scoring the doctor's detectors on the labelled corpus (:mod:`.corpus`): false alarms on healthy runs, detection
of each induced failure mode, the collapse warning's lead time; and a per-run confusion table."""
from __future__ import annotations

from typing import Any

import numpy as np

from rlvr_dynamics.doctor.detectors import DETECTORS, Detection, diagnose


def confusion_matrix(results: dict[str, dict[str, Detection]]) -> str:
    """Markdown table: one row per run, one column per detector (step it fired, "–" if not, "n/a" if the log lacks
    the series)."""
    lines = ["| run | " + " | ".join(DETECTORS) + " |", "|---|" + "---|" * len(DETECTORS)]
    for run, dets in results.items():
        cells = []
        for name in DETECTORS:
            d = dets[name]
            cells.append("n/a" if not d.available else (f"**fires @ {d.step}**" if d.fired else "–"))
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    return "\n".join(lines)



LEAD_TARGET = 10
"""Steps ahead of ``collapse_step`` a warning must come to count (issue 19)."""
FAILURE_DETECTOR = {"reward_hacking": "reward_hacking", "advantage_degeneracy": "advantage_degeneracy",
                    "policy_concentration": "policy_concentration", "dynamical_instability": "dynamical_instability"}
"""Corpus ``failure_mode`` → the detector that should catch it."""


def warning_lead(det: Detection, collapse_step: int) -> int | None:
    """Steps from the last collapse-warning event at or before ``collapse_step`` to it (None: no such event)."""
    before = [e["step"] for e in det.events if e["step"] <= collapse_step]
    return int(collapse_step - before[-1]) if before else None


def benchmark_detectors(runs, *, reading: bool = True) -> dict[str, Any]:
    """Score every detector on labelled corpus runs (:mod:`.corpus`): per detector the false-alarm rate on
    ``outcome == 'healthy'`` runs (fired / runs where it is available, with counts), the detection rate on runs of
    its ``failure_mode``; for the collapse warning the lead time on the lead-time population
    (``CorpusRun.in_lead_time_population``: collapse_step ≥ 30 logged points after the first step), success =
    lead ≥ :data:`LEAD_TARGET`; and ``any`` (some detector fired) on healthy runs. The live doctor's replay of the
    same runs is :func:`~.live.benchmark_live` (``live`` imports this module, never the reverse)."""
    runs = list(runs)
    per = {name: {"healthy_runs": 0, "false_alarms": 0, "mode_runs": 0, "mode_detected": 0} for name in DETECTORS}
    any_fa, n_healthy, leads, missing = 0, 0, [], 0
    for run in runs:
        dets = diagnose(run.log, reward_bounds=run.reward_bounds, reading=reading)
        if run.outcome == "healthy":
            n_healthy += 1
            any_fa += any(d.fired for d in dets.values())
            for name, d in dets.items():
                if d.available:
                    per[name]["healthy_runs"] += 1
                    per[name]["false_alarms"] += int(d.fired)
        mode = getattr(run, "failure_mode", None)
        if mode in FAILURE_DETECTOR:
            name = FAILURE_DETECTOR[mode]
            per[name]["mode_runs"] += 1
            per[name]["mode_detected"] += int(dets[name].fired)
        if getattr(run, "in_lead_time_population", False):
            lead = warning_lead(dets["collapse_warning"], int(run.collapse_step))
            if lead is None:
                missing += 1
            leads.append(lead)
    for name, p in per.items():
        p["false_alarm_rate"] = p["false_alarms"] / p["healthy_runs"] if p["healthy_runs"] else None
        p["detection_rate"] = p["mode_detected"] / p["mode_runs"] if p["mode_runs"] else None
    got = np.array([x for x in leads if x is not None], dtype=float)
    per["collapse_warning"]["lead"] = {
        "population": len(leads), "warned": int(got.size), "unwarned": missing,
        "warned_10_ahead": int((got >= LEAD_TARGET).sum()),
        "rate_10_ahead": float((got >= LEAD_TARGET).sum() / len(leads)) if leads else None,
        "median_lead": float(np.median(got)) if got.size else None}
    out = {"runs": len(runs), "healthy": n_healthy, "any_false_alarm": any_fa,
           "any_false_alarm_rate": any_fa / n_healthy if n_healthy else None, "detectors": per}
    return out


def format_detector_benchmark(result: dict[str, Any], title: str = "") -> str:
    """Markdown table of :func:`benchmark_detectors` (targets: false alarms ≤ 10 %, warned ≥ 10 steps ahead on
    ≥ 80 % of the lead-time population)."""
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f} %"
    lines = [f"**{title}**" if title else "",
             "| detector | false alarms on healthy runs (target ≤ 10 %) | detected on its failure mode |",
             "|---|---|---|"]
    for name, p in result["detectors"].items():
        lines.append(f"| {name} | {p['false_alarms']}/{p['healthy_runs']} ({pct(p['false_alarm_rate'])}) | "
                     f"{p['mode_detected']}/{p['mode_runs']} ({pct(p['detection_rate'])}) |")
    lead = result["detectors"]["collapse_warning"]["lead"]
    lines.append(f"| any detector | {result['any_false_alarm']}/{result['healthy']} "
                 f"({pct(result['any_false_alarm_rate'])}) | |")
    lines.append("")
    med = "n/a" if lead["median_lead"] is None else f"{lead['median_lead']:.0f} steps"
    lines.append(f"Collapse warned ≥ {LEAD_TARGET} steps before the reward halves (target ≥ 80 %): "
                 f"{lead['warned_10_ahead']}/{lead['population']} ({pct(lead['rate_10_ahead'])}); warned at all "
                 f"{lead['warned']}, median lead {med}.")
    return "\n".join(x for x in lines if x is not None)
