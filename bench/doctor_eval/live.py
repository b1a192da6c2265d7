"""Scoring the live :class:`~rlvr_dynamics.doctor.live.RunDoctor` on the corpus: stops on healthy and collapsing
runs, and agreement with the full-log detectors."""
from __future__ import annotations

from typing import Any

import numpy as np

from rlvr_dynamics.doctor import detectors as diag
from rlvr_dynamics.doctor.live import RunDoctor

from .detectors import LEAD_TARGET


def benchmark_live(runs, *, every: int = 10, refresh_interval: int | None = None) -> dict[str, Any]:
    """Replay every corpus run (:mod:`.corpus`) through a ``RunDoctor(every=every, stop_on_instability=True)``
    one logged row at a time (then :meth:`RunDoctor.finish`) and score it with the doctor itself:

    - ``healthy``: stops / runs on ``outcome == 'healthy'`` (target ≤ 2 %), with the stopped run names;
    - ``collapse``: stops / runs on ``outcome == 'collapse'``; on the lead-time population the lead of the stop
      before ``collapse_step`` (median, and how many ≥ :data:`~.detectors.LEAD_TARGET` steps ahead);
    - ``agreement``: runs whose live events (every detector, without the whole-prefix readings (c)/(d)) equal the
      full-log :func:`~rlvr_dynamics.doctor.detectors.diagnose` events at the same steps, out of all runs; and per detector the runs
      where the live and full verdicts (fired or not) agree.
    A training loop that honours ``should_stop`` ends at the stop, so the agreement is measured on doctors that
    keep running after the stop (``should_stop`` does not end the replay)."""
    runs = list(runs)
    res = {"every": every, "healthy": {"runs": 0, "stopped": 0, "names": []},
           "collapse": {"runs": 0, "stopped": 0, "population": 0, "stopped_before": 0, "ahead_10": 0, "leads": []},
           "agreement": {"runs": 0, "equal": 0, "per_detector": {n: 0 for n in diag.DETECTORS}}}
    for run in runs:
        steps, _ = run.log.reward_curve()
        if steps.size < 2:
            continue
        doc = RunDoctor(every=every, refresh_interval=refresh_interval, stop_on_instability=True,
                        reward_column=run.log.reward_column, reward_bounds=run.reward_bounds)
        names = list(run.log.series)
        for i, st in enumerate(run.log.steps):
            doc.update(int(st), {n: run.log.series[n][i] for n in names})
        doc.finish()
        stop = doc.stop_reason["step"] if doc.stop_reason else None
        if run.outcome == "healthy":
            res["healthy"]["runs"] += 1
            if stop is not None:
                res["healthy"]["stopped"] += 1
                res["healthy"]["names"].append(run.name)
        elif run.outcome == "collapse":
            res["collapse"]["runs"] += 1
            res["collapse"]["stopped"] += int(stop is not None)
            if getattr(run, "in_lead_time_population", False):
                res["collapse"]["population"] += 1
                if stop is not None and stop <= run.collapse_step:
                    lead = int(run.collapse_step - stop)
                    res["collapse"]["stopped_before"] += 1
                    res["collapse"]["ahead_10"] += int(lead >= LEAD_TARGET)
                    res["collapse"]["leads"].append(lead)
        full = diag.diagnose(run.log, reward_bounds=run.reward_bounds, reading=False)
        res["agreement"]["runs"] += 1
        same = True
        for name in diag.DETECTORS:
            live = [e["step"] for e in doc.events[name] if not str(e.get("reason", "")).startswith(("(c)", "(d)"))]
            want = [e["step"] for e in full[name].events]
            same &= live == want
            res["agreement"]["per_detector"][name] += int(bool(live) == bool(want))
        res["agreement"]["equal"] += int(same)
    h, c, a = res["healthy"], res["collapse"], res["agreement"]
    h["rate"] = h["stopped"] / h["runs"] if h["runs"] else None
    c["rate"] = c["stopped"] / c["runs"] if c["runs"] else None
    c["median_lead"] = float(np.median(c["leads"])) if c["leads"] else None
    a["rate"] = a["equal"] / a["runs"] if a["runs"] else None
    return res


def format_live_benchmark(result: dict[str, Any], title: str = "") -> str:
    """Markdown lines for :func:`benchmark_live` (target: stops ≤ 2 % of healthy runs)."""
    def pct(n, d):
        return "n/a" if not d else f"{n}/{d} ({100 * n / d:.1f} %)"
    h, c, a = result["healthy"], result["collapse"], result["agreement"]
    med = "n/a" if c["median_lead"] is None else f"{c['median_lead']:.0f} steps"
    lines = [f"**{title}**" if title else "",
             f"Live `RunDoctor(every={result['every']}, stop_on_instability=True)`, replayed row by row:",
             "",
             "| measure | value |", "|---|---|",
             f"| healthy runs stopped (target ≤ 2 %) | {pct(h['stopped'], h['runs'])} |",
             f"| collapsing runs stopped | {pct(c['stopped'], c['runs'])} |",
             f"| lead-time population stopped before the reward halves | {pct(c['stopped_before'], c['population'])}"
             f"; ≥ {LEAD_TARGET} steps ahead {c['ahead_10']}; median lead {med} |",
             f"| live events = full-log events (causal detectors) | {pct(a['equal'], a['runs'])} |"]
    lines += [f"| live verdict = full-log verdict: {n} | {pct(k, a['runs'])} |" for n, k in a["per_detector"].items()]
    return "\n".join(lines)
