"""Collapse warning: the collapse reported at the point, and warned ahead where a logged signal leads it.

What it detects
    Two kinds of event, each with its ``step`` (the logged step at which it could be known) and ``kind``:
    ``"collapsed"`` — the reward lost half its gain (:mod:`.collapse`: reported at the halving, or one logged point
    after it; ``halving_step`` is the halving); ``"warning"`` — the signals that lead a GRPO collapse crossed
    (:mod:`rlvr_dynamics.doctor.precursors`).

Why it matters in GRPO
    A GRPO run that collapses (reward → floor, entropy and length running away, every group degenerate) rarely comes
    back; every step trained after it is compute lost. A warning before the reward halves lets a run be stopped or
    rolled back; a report at the point itself makes sure no collapsed run is read as healthy.
    ``detail["collapse_step"]`` keeps the project's earlier collapse rule, with which :mod:`rlvr_dynamics.grpo.pilot`
    judged its committed pilots.

Signals
    The training reward; entropy, completions at the length cap, completion length, KL, gradient norm, format
    accuracy, the share of zero-std groups and non-finite values, where logged (:data:`~.precursors.SIGNALS`).

Rule
    ``collapsed``: :func:`.collapse.collapse_events` (a short trailing mean below half its running peak above the
    floor, significant against the step noise, confirmed by the next point, or a fall of many SEs at once; from the
    4th logged point). ``warning``: :func:`~rlvr_dynamics.doctor.warning_rule.warning_flags` (the reward fallen 40 %
    of its gain with a leading signal in the last 3 points, three leading signals at once, or one that is a failure
    by itself: NaN, completions at the cap, the format lost); an event where it switches on, re-armed when it is
    off. The earlier rule (``collapse_step``): window W = max(6, round(0.1·n)), trailing mean over max(3, W//2),
    floor = the lower bound or the smoothed minimum over the first W, collapse = S < F + 0.5·(P − F).

Dev evidence for its constants
    On the 35 course logs of ``../shared/grpo_logs_cs336`` (7 collapses, 25 healthy) and the 15 public logs: every
    collapse gets ``collapsed``, 6 of 7 within one logged point of the halving (a 3-point trailing mean below half
    its peak), warned at least one point ahead on 4 of 7; 3 of 40 healthy runs get a warning. The per-signal table
    is on the Diagnose page; the history of the rule is in the design notes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...runs.logs import RunLog
from ...runs.noise import step_sigma
from .. import precursors as pre
from .. import warning_rule as wr
from .causal import Detection, detection, trailing_mean
from .collapse import collapse_events

COLLAPSE_FRACTION = 0.5
"""``detail["collapse_step"]`` (the earlier rule): the smoothed reward below floor + this × (peak − floor)."""


def detect_collapse(log: RunLog, reward_bounds: tuple[float, float] | None = None, *, collapses=None,
                    cross: dict[str, np.ndarray] | None = None) -> Detection:
    """``collapse_warning`` (module docstring): ``collapsed`` reports and ``warning`` events, causal and re-arming.
    ``detail["collapse_step"]``: the earlier collapse rule, kept for the pilot. ``collapses``/``cross``: the
    collapse events (:func:`.collapse.collapse_events`) and precursor crossings when the caller has them (the live
    doctor)."""
    thr = ("collapsed: trailing mean below half its running peak above the floor, significant against the step "
           "noise, confirmed by the next point (or a fall of many SEs at once), from the 4th logged point; warning: "
           f"reward fallen {100 * pre.REWARD_FALL:.0f} % of its gain with a leading signal, 3 leading signals at "
           f"once, or NaN / completions at the length cap / format accuracy fallen {100 * pre.FORMAT_FALL:.0f} %")
    steps, r = log.reward_curve()
    detail = legacy_collapse_detail(steps, r, reward_bounds)
    events: list[dict[str, Any]] = []
    for e in (collapse_events(steps, r, reward_bounds) if collapses is None else collapses):
        if e.reported_step is None:
            continue
        events.append({"step": e.reported_step, "kind": "collapsed", "halving_step": e.step, "peak": e.peak,
                       "peak_step": e.peak_step, "floor": e.floor, "value": e.value, "rule": e.kind,
                       "recovered_step": e.recovered_step})
    if cross is None:
        cross = pre.crossings(log, reward_bounds)
    warn, count = wr.warning_flags(cross, log.steps.size)
    rows = np.flatnonzero(np.isfinite(log.reward))
    on = warn[rows]
    starts = np.flatnonzero(on & ~np.r_[False, on[:-1]])
    for j in starts:
        i = int(rows[j])
        events.append({"step": int(log.steps[i]), "kind": "warning", "signals": wr.signals_on(cross, i),
                       "precursors": int(count[i])})
    signal = log.reward_column + (f" (precursors: {', '.join(k for k in cross if k != 'reward_fall')})"
                                  if len(cross) > 1 else "")
    det = detection("collapse_warning", signal, thr, events, detail)
    if detail.get("collapse_step") is not None:
        before = [e for e in det.events if e["kind"] == "warning" and e["step"] <= detail["collapse_step"]]
        if before:
            det.detail["lead_steps"] = int(detail["collapse_step"] - before[-1]["step"])
    return det


def legacy_collapse_detail(steps: np.ndarray, r: np.ndarray, reward_bounds) -> dict[str, Any]:
    """The earlier collapse rule, unchanged (module docstring): ``collapse_step``, ``peak``, ``floor``."""
    n = r.size
    if n == 0:
        return {"collapse_step": None}
    w = max(6, int(round(0.1 * n)))
    k = max(3, w // 2)
    rs = trailing_mean(r, np.full(n, k))
    floor = reward_bounds[0] if reward_bounds is not None else float(np.min(rs[:w]))
    delta_min = max(3 * step_sigma(r) * math.sqrt(2 / w), 1e-12)
    peak = np.maximum.accumulate(rs[k:]) if n > k else np.array([])
    hit = np.flatnonzero((peak - floor > delta_min) & (rs[k:] < floor + COLLAPSE_FRACTION * (peak - floor)))
    collapse = int(steps[k + hit[0]]) if hit.size else None
    pk = float(peak[hit[0]]) if hit.size else (float(peak[-1]) if peak.size else math.nan)
    return {"collapse_step": collapse, "peak": pk, "floor": float(floor)}

