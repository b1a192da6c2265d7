"""Scoring the failure side of the doctor: collapse reports, early warnings, the precursor table and the status.

Protocol (DESIGN.md, "Judging the run tools", and issue 29's targets), fixed before the test part is scored:

* **Halving** of a collapsing run (the truth the report is timed against): the first logged point, at or after the
  run's labelled collapse region, where the trailing mean of the reward over 3 logged points is below
  ``floor + ½·(peak − floor)``, the peak being the running maximum of that trailing mean (full windows) and the floor
  the lower reward bound (else the trailing mean's minimum before its peak); the region starts 10 logged points
  before the label's ``collapse_step`` (the hindsight rule of the corpus, or the person-read step of the course
  logs), so that an earlier transient dip does not count. Latencies are also given against the label itself.
* **Reported within one logged point**: the collapse report (a ``collapsed`` event of the doctor's collapse rule
  that does not recover, or the one that covers the halving) comes at most one logged point after the halving.
  *Changed after the result (2026-12-04):* with the live replay, the first logged row at which the live doctor's
  status is ``collapsed`` or ``diverged`` (``status_latency``) is a report too, and the earlier of the two counts:
  a run blown up at the floor from its first steps is reported by the divergence rule, never by a collapse event,
  and the first scoring counted it as missed (on the dev part 31 of the 59 project collapses end ``diverged``).
  The collapse events alone stay in ``report_latency``, in the summary's ``events_within_one`` and in the
  baselines' table.
* **Warned ahead**: the collapse warning (``collapsing``) fires within the :data:`LOOKBACK` logged points before
  the halving, at least one point before it.
* **Status**: the final status of every run; a collapsed run must never get a healthy status (``rising``,
  ``plateaued``), a healthy run should not get an act-now status (a failure state: :data:`FAILURE_STATES`).
* **What the training reward did** (a breakdown, not a target; added 2026-12-06 after the fourteenth scoring): every
  run is also read by the corpus' hindsight rule on its whole training reward
  (:func:`~.corpus_run.hindsight_collapse`, the rule that labels the project runs without ``eval.json``), and the
  targets are repeated per source and that reading. The bisection trials and the project runs are labelled by their
  held-out accuracy, which the doctor never reads: a held-out collapse whose training reward holds is one no rule
  on the logged reward can report, and a healthy trial whose training reward halves is one the doctor should report
  (its contract: only what the reward did sets an act-now status).
* **Precursor table**: per signal, on the collapsing runs that log it, whether it crossed within :data:`LOOKBACK`
  points before the halving, how many points ahead, and its false-alarm rate (any crossing) on healthy runs.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from rlvr_dynamics.doctor import precursors as P
from rlvr_dynamics.doctor import warning_rule as wr
from rlvr_dynamics.doctor.detectors.collapse import collapse_events
from rlvr_dynamics.doctor.status import FAILURE_STATES, decide_status

from .corpus_run import hindsight_collapse

LOOKBACK = 10
"""Logged points before the halving in which a warning or a precursor crossing counts as leading it."""
TRAILING = 3
"""Points in the trailing mean that defines the halving."""
HEALTHY_STATES = ("rising", "plateaued")
REPORT_STATES = ("collapsed", "diverged")
"""Live statuses that report the collapse to the user (``collapsing`` is the warning)."""


def _trailing_mean(y: np.ndarray, k: int) -> np.ndarray:
    c = np.concatenate([[0.0], np.cumsum(y)])
    i = np.arange(y.size)
    lo = np.maximum(0, i - k + 1)
    return (c[i + 1] - c[lo]) / (i + 1 - lo)


def halving_index(steps: np.ndarray, reward: np.ndarray, bounds, label_step: int | None) -> int | None:
    """Index (into the finite-reward points) of the halving, by the rule of the module docstring."""
    y = np.asarray(reward, dtype=float)
    s = _trailing_mean(y, TRAILING)
    full = np.arange(y.size) >= TRAILING - 1
    peak = np.maximum.accumulate(np.where(full, s, -np.inf))
    start = 0
    if label_step is not None:
        j = int(np.searchsorted(steps, label_step))
        start = max(0, j - LOOKBACK)
    for i in range(max(start, TRAILING - 1), y.size):
        if not math.isfinite(peak[i]):
            continue
        if bounds is not None:
            floor = float(bounds[0])
        else:
            pk = int(np.argmax(np.where(full[: i + 1], s[: i + 1], -np.inf)))
            floor = float(np.min(s[: pk + 1]))
        if s[i] < floor + 0.5 * (peak[i] - floor):
            return i
    return None


def score_run(run) -> dict[str, Any]:
    """Collapse report, warning, precursor crossings and status of one corpus run (``CorpusRun``-like)."""
    log, bounds = run.log, run.reward_bounds
    steps, r = log.reward_curve()
    out: dict[str, Any] = {"name": run.name, "source": run.source, "split": run.split, "outcome": run.outcome,
                           "points": int(r.size), "noise_class": run.noise_class}
    halves = hindsight_collapse(steps, r, bounds)[0] is not None
    out["reward_seen"] = f"{run.source}: training reward {'halves' if halves else 'holds'}"
    status = decide_status(log, bounds)
    out["status"] = status.state
    out["status_step"] = status.step
    events = collapse_events(steps, r, bounds)
    out["events"] = [(e.step, e.reported_step, e.kind, e.recovered_step) for e in events]
    rows = np.flatnonzero(np.isfinite(log.reward))
    cross = P.crossings(log, bounds)
    warn, _ = wr.warning_flags(cross, log.steps.size)
    warn_pts = warn[rows]                       # on the reward's logged points
    out["warning_points"] = int(warn_pts.sum())
    if run.outcome != "collapse":
        out["crossed"] = {k: bool(v.any()) for k, v in cross.items()}
        out["warned"] = bool(warn_pts.any())
        out["reward_halved"] = halving_index(steps, r, bounds, None) is not None   # the label's rule, on this run
        return out
    h = halving_index(steps, r, bounds, run.collapse_step)
    out["halving_step"] = None if h is None else int(steps[h])
    out["label_step"] = run.collapse_step
    if h is None:
        return out
    reported = [e for e in events if e.reported_step is not None and e.step >= steps[max(0, h - LOOKBACK)]]
    first = reported[0] if reported else None
    if first is not None:
        idx = int(np.searchsorted(steps, first.reported_step))
        out["report_latency"] = idx - h
        if run.collapse_step is not None:
            out["report_latency_label"] = idx - int(np.searchsorted(steps, run.collapse_step))
    lo = max(0, h - LOOKBACK)
    ahead = np.flatnonzero(warn_pts[lo:h])
    out["warning_lead"] = int(h - (lo + ahead[0])) if ahead.size else None
    leads = {}
    for name, flags in cross.items():
        f = flags[rows]
        hit = np.flatnonzero(f[lo: h + 1])
        leads[name] = int(h - (lo + hit[0])) if hit.size else None
    out["precursor_leads"] = leads
    return out


def summarise(scored: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The targets of issue 29 on a list of :func:`score_run` results."""
    scored = list(scored)
    col = [s for s in scored if s["outcome"] == "collapse" and s.get("halving_step") is not None]
    healthy = [s for s in scored if s["outcome"] == "healthy"]
    within = [s for s in col if report_latency(s) is not None and report_latency(s) <= 1]
    ahead = [s for s in col if s.get("warning_lead") is not None and s["warning_lead"] >= 1]
    lat = [report_latency(s) for s in col if report_latency(s) is not None]
    events_within = sum(1 for s in col if s.get("report_latency") is not None and s["report_latency"] <= 1)
    lat_label = [s["report_latency_label"] for s in col if s.get("report_latency_label") is not None]
    collapsed_runs = [s for s in scored if s["outcome"] == "collapse"]
    return {
        "collapses": len(col), "collapse_runs": len(collapsed_runs),
        "reported_within_one": len(within), "warned_ahead": len(ahead),
        "report_latency_median": float(np.median(lat)) if lat else None,
        "report_latency_label_median": float(np.median(lat_label)) if lat_label else None,
        "missed": sum(1 for s in col if report_latency(s) is None),
        "events_within_one": events_within,
        "collapsed_with_healthy_status": sum(1 for s in collapsed_runs if s["status"] in HEALTHY_STATES),
        "healthy": len(healthy),
        "healthy_with_failure_status": sum(1 for s in healthy if s["status"] in FAILURE_STATES),
        "healthy_warned": sum(1 for s in healthy if s.get("warned")),
        "healthy_reward_halved": sum(1 for s in healthy if s.get("reward_halved")),
        "healthy_collapse_reported": sum(1 for s in healthy if any(e[2] != "pending" for e in s["events"])),
        "status_counts": _counts(scored),
    }


def _counts(scored) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for s in scored:
        out.setdefault(s["outcome"], {}).setdefault(s["status"], 0)
        out[s["outcome"]][s["status"]] += 1
    return out


def precursor_table(scored: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per precursor signal: collapses that log it, crossed within LOOKBACK before the halving, ≥ 1 point ahead,
    median points ahead, and healthy runs that log it / that it fired on."""
    scored = list(scored)
    rows = []
    for name in P.SIGNALS:
        col = [s for s in scored if s["outcome"] == "collapse" and name in s.get("precursor_leads", {})]
        leads = [s["precursor_leads"][name] for s in col if s["precursor_leads"][name] is not None]
        healthy = [s for s in scored if s["outcome"] == "healthy" and name in s.get("crossed", {})]
        rows.append({"signal": name, "meaning": P.SIGNAL_MEANING[name], "collapses": len(col),
                     "crossed": len(leads), "ahead": sum(1 for v in leads if v >= 1),
                     "median_lead": float(np.median(leads)) if leads else None,
                     "healthy": len(healthy), "false_alarms": sum(1 for s in healthy if s["crossed"][name])})
    return rows


RAISED_ON_DEV = {"length_shift": ("2.0×", "2026-12-04"), "grad_spike": ("5×", "2026-12-04"),
                 "reward_fall": ("25 %", "2026-12-06")}
"""Precursors whose threshold was raised because they crossed on more than 10 % of the healthy development runs
(issue 35): the old threshold and the date, which the table's "what crosses" cell names (the evidence is in each
constant's docstring in :mod:`rlvr_dynamics.doctor.precursors`)."""


def format_precursor_table(rows: list[dict[str, Any]]) -> str:
    def pct(a, b):
        return f"{a}/{b}" + (f" ({100 * a / b:.0f} %)" if b else "")

    lines = ["| signal | what crosses | role in the warning | collapses logging it | crossed ≤ halving | ≥ 1 point "
             "ahead | median points ahead | false alarms on healthy runs |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        med = "–" if r["median_lead"] is None else f"{r['median_lead']:g}"
        raised = RAISED_ON_DEV.get(r["signal"])
        meaning = r["meaning"] + (f" (raised from {raised[0]} on {raised[1]}: above 10 % false alarms on the healthy "
                                  "development runs)" if raised else "")
        lines.append(f"| `{r['signal']}` | {meaning} | {wr.signal_role(r['signal'])} | {r['collapses']} | "
                     f"{pct(r['crossed'], r['collapses'])} | {pct(r['ahead'], r['collapses'])} | {med} | "
                     f"{pct(r['false_alarms'], r['healthy'])} |")
    return "\n".join(lines)


def format_summary(s: dict[str, Any], title: str = "") -> str:
    def pct(a, b):
        return f"{a}/{b}" + (f" ({100 * a / b:.0f} %)" if b else "")

    lines = [f"**{title}**" if title else "", "",
             "| target | measured | goal |", "|---|---|---|",
             "| collapse reported within one logged point of the halving | "
             f"{pct(s['reported_within_one'], s['collapses'])} (median latency {s['report_latency_median']} points; {s['missed']} missed"
             + (f"; by collapse events alone {pct(s['events_within_one'], s['collapses'])}" if 'events_within_one' in s else "")
             + ") | ≥ 90 % |",
             f"| warned at least one logged point ahead | {pct(s['warned_ahead'], s['collapses'])} | ≥ 50 % |",
             f"| collapsed runs with a healthy status | {pct(s['collapsed_with_healthy_status'], s['collapse_runs'])} "
             "| 0 |",
             f"| healthy runs with an act-now status | {pct(s['healthy_with_failure_status'], s['healthy'])} | ≤ 5 % |",
             "| healthy runs with a collapse reported (transient) | "
             f"{pct(s['healthy_collapse_reported'], s['healthy'])} | ≤ 10 % |",
             f"| healthy runs with a collapse warning | {pct(s['healthy_warned'], s['healthy'])} | ≤ 10 % |"]
    return "\n".join(lines)


def by_source(scored: Iterable[dict[str, Any]], key: str = "source") -> list[dict[str, Any]]:
    """:func:`summarise` per corpus source (where the misses and the false alarms come from), or per value of
    another field of the scored runs (``key="noise_class"``: smooth, moderate, noisy, the corpus' classes of the
    step noise against the reward's range), in order of first appearance; each row adds ``source`` (the group) and
    the median length of its collapsing runs in logged points."""
    scored = list(scored)
    out = []
    for src in dict.fromkeys(s[key] for s in scored):
        rows = [s for s in scored if s[key] == src]
        pts = [s["points"] for s in rows if s["outcome"] == "collapse"]
        out.append({"source": src, "collapse_points_median": float(np.median(pts)) if pts else None,
                    **summarise(rows)})
    return out


def format_by_source(rows: list[dict[str, Any]], key: str = "source") -> str:
    """The :func:`by_source` rows as a Markdown table (``key`` names the first column)."""
    def pct(a, b):
        return f"{a}/{b}" + (f" ({100 * a / b:.0f} %)" if b else "") if b else "–"

    lines = [f"| {key.replace('_', ' ')} | collapses (median points logged) | reported within one point | missed | median latency "
             "(points) | warned ahead | collapsed runs read healthy | healthy runs with an act-now status | healthy "
             "runs whose training reward halves (the halving rule above) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        med = "" if r["collapse_points_median"] is None else f" ({r['collapse_points_median']:g})"
        lat = "–" if r["report_latency_median"] is None else f"{r['report_latency_median']:g}"
        lines.append(f"| {r['source']} | {r['collapses']}{med} | {pct(r['reported_within_one'], r['collapses'])} | "
                     f"{r['missed'] if r['collapses'] else '–'} | {lat} | {pct(r['warned_ahead'], r['collapses'])} | "
                     f"{pct(r['collapsed_with_healthy_status'], r['collapse_runs'])} | "
                     f"{pct(r['healthy_with_failure_status'], r['healthy'])} | "
                     f"{pct(r.get('healthy_reward_halved', 0), r['healthy'])} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ baselines, live
def naive_halving_step(steps: np.ndarray, reward: np.ndarray, bounds) -> int | None:
    """Baseline: the first logged point whose raw reward is below half its running maximum above the floor (no
    smoothing, no noise test), from the 4th point: the fastest possible rule, and the noisiest."""
    y = np.asarray(reward, dtype=float)
    floor = float(bounds[0]) if bounds is not None else float(np.min(y[:3]))
    peak = np.maximum.accumulate(y)
    hit = np.flatnonzero((np.arange(y.size) >= 3) & (y < floor + 0.5 * (peak - floor)) & (peak > floor))
    return int(steps[hit[0]]) if hit.size else None


def legacy_step(run) -> int | None:
    """Baseline: the project's earlier collapse rule (``collapse_warning.detail["collapse_step"]``, whole-log
    windows: not causal)."""
    from rlvr_dynamics.doctor.detectors.collapse_warning import legacy_collapse_detail

    steps, r = run.log.reward_curve()
    return legacy_collapse_detail(steps, r, run.reward_bounds).get("collapse_step")


def live_replay(run) -> dict[str, Any]:
    """Feed the run row by row to a ``RunDoctor(stop_on_instability=True)`` (no full reports) and return its final
    status, whether and where it stopped, and whether its status equals ``decide_status`` on the full log."""
    from rlvr_dynamics.doctor.live import RunDoctor

    log = run.log
    doc = RunDoctor(every=10 ** 9, stop_on_instability=True, reward_bounds=run.reward_bounds,
                    reward_column=log.reward_column)
    names = list(log.series)
    stopped, failure_steps, was_failure = None, [], False
    for i, st in enumerate(log.steps):
        doc.update(int(st), {k: log.series[k][i] for k in names})
        if doc.should_stop and stopped is None:
            stopped = int(st)
        now_failure = doc.status is not None and doc.status.state in REPORT_STATES
        if now_failure and not was_failure:
            failure_steps.append(int(st))           # each time the live status turns collapsed/diverged
        was_failure = now_failure
    full = decide_status(log, run.reward_bounds)
    live_state = doc.status.state if doc.status is not None else "too short"
    # a stop is named in the live status' evidence; the state itself must agree with the full log's
    return {"live_state": live_state, "equal": live_state == full.state, "stopped": stopped,
            "failure_steps": failure_steps}


def score_baselines_and_live(run, scored: dict[str, Any], live: bool = True) -> dict[str, Any]:
    """Add the baselines' report latencies and (``live``) the live replay to a :func:`score_run` result."""
    steps, r = run.log.reward_curve()
    out = dict(scored)
    for name, step in (("naive", naive_halving_step(steps, r, run.reward_bounds)), ("legacy", legacy_step(run))):
        out[f"{name}_step"] = step
        if run.outcome == "collapse" and scored.get("halving_step") is not None and step is not None:
            h = int(np.searchsorted(steps, scored["halving_step"]))
            out[f"{name}_latency"] = int(np.searchsorted(steps, step)) - h
    if live:
        out.update(live_replay(run))
        if run.outcome == "collapse" and scored.get("halving_step") is not None:
            h = int(np.searchsorted(steps, scored["halving_step"]))
            after = [st for st in out["failure_steps"] if st >= steps[max(0, h - LOOKBACK)]]
            if after:
                out["status_latency"] = int(np.searchsorted(steps, after[0])) - h
    return out


def report_latency(s: dict[str, Any]) -> int | None:
    """Logged points from the halving to the doctor's first report of the collapse: the earlier of its collapse
    event (``report_latency``) and the live status turning ``collapsed``/``diverged`` (``status_latency``, when the
    run was replayed live); None when neither came."""
    got = [v for v in (s.get("report_latency"), s.get("status_latency")) if v is not None]
    return min(got) if got else None


def summarise_baselines(scored: list[dict[str, Any]]) -> dict[str, Any]:
    """Per rule (the doctor, the naive halving, the earlier rule): collapses reported within one logged point of
    the halving and healthy runs it fires on; the live doctor's agreement and stops."""
    col = [s for s in scored if s["outcome"] == "collapse" and s.get("halving_step") is not None]
    healthy = [s for s in scored if s["outcome"] == "healthy"]
    rows = {"doctor": {"within_one": sum(1 for s in col if s.get("report_latency") is not None
                                         and s["report_latency"] <= 1),
                       "healthy_fired": sum(1 for s in healthy if any(e[2] != "pending" for e in s["events"]))}}
    for name in ("naive", "legacy"):
        rows[name] = {"within_one": sum(1 for s in col if s.get(f"{name}_latency") is not None
                                        and s[f"{name}_latency"] <= 1),
                      "healthy_fired": sum(1 for s in healthy if s.get(f"{name}_step") is not None)}
    lived = [s for s in scored if "equal" in s]
    collapse_runs = [s for s in lived if s["outcome"] == "collapse"]
    healthy_lived = [s for s in lived if s["outcome"] == "healthy"]
    return {"collapses": len(col), "healthy": len(healthy), "rules": rows,
            "live_equal": sum(1 for s in lived if s["equal"]), "live_runs": len(lived),
            "stopped_collapses": sum(1 for s in collapse_runs if s["stopped"] is not None),
            "collapse_runs": len(collapse_runs),
            "stopped_healthy": sum(1 for s in healthy_lived if s["stopped"] is not None),
            "healthy_runs": len(healthy_lived)}


def format_baselines(b: dict[str, Any]) -> str:
    def pct(a, n):
        return f"{a}/{n}" + (f" ({100 * a / n:.0f} %)" if n else "")

    names = {"doctor": "the doctor (`collapse`)", "naive": "raw reward below half its running max",
             "legacy": "the project's earlier rule (whole-log windows)"}
    lines = ["| rule | collapses reported within one logged point | healthy runs it fires on |", "|---|---|---|"]
    for key, r in b["rules"].items():
        lines.append(f"| {names[key]} | {pct(r['within_one'], b['collapses'])} | {pct(r['healthy_fired'], b['healthy'])} |")
    lines += ["", f"Live `RunDoctor` (row by row, `stop_on_instability=True`): final status equal to `fit`'s on "
              f"{pct(b['live_equal'], b['live_runs'])} runs; stopped {pct(b['stopped_collapses'], b['collapse_runs'])}"
              f" collapsing runs and {pct(b['stopped_healthy'], b['healthy_runs'])} healthy runs (targets: all, "
              "≥ 80 %, ≤ 2 %)."]
    return "\n".join(lines)
