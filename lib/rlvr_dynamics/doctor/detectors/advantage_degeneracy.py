"""Advantage degeneracy: most groups have zero reward spread, so their advantages are zero.

What it detects
    The share of prompt groups whose completions all got the same reward, less the share explained by a solved
    task, staying high while learning has stalled.

Why it matters in GRPO
    GRPO's advantage is the reward minus its group mean, divided by the group std: a group whose completions all
    fail (or all succeed) contributes no gradient. When most groups are like that the run starves: the reward stops
    moving although nothing is "wrong" in the loss (P1-C13).

Signals
    f: the fraction of groups with zero reward std (TRL's ``frac_reward_zero_std``; else 1[reward_std == 0] from
    TRL/Unsloth ``reward_std``, exact at 1 prompt per step, a lower bound at more); u = (R − lo)/(hi − lo) ≥ the
    share of all-correct groups, so f − u bounds the all-failed share from below (at one prompt a step, f ∈ {0, 1} on
    every row, the all-correct share is exactly 1[u = 1] where f = 1: a group that scored one partial reward on all
    its completions, e.g. a format reward alone, is starved as an all-failed one). Without bounds (a reward of ±1, a
    sum of format and correctness terms in [0, 2]) u = 0, except at one prompt a step, where lo and hi are the lowest
    and highest rewards logged so far (:func:`observed_unit_reward`, causal): a group with no spread at the best
    reward the run has logged is a solved one, not a starved one. At more prompts a step the observed range is no
    bound (a run starved on its plateau sits at its highest reward too); the gate below reads it instead. The
    entropy when logged. Not verl's ``critic/score/std`` (a batch std). A log with neither column but known bounds
    (declared, or a reward in [0, 1]) gives f ≥ 1[R = lo]: a step whose mean reward is the lower bound had every
    completion fail, so every group of it is all-failed, exactly; elsewhere 0 is a lower bound. A run whose reward
    sits at its floor is then degenerate, not "plateaued at 0"; a lower bound can confirm degeneracy, never rule
    it out.

Rule
    Smoothed f − u > DEGENERACY_FRACTION = 0.75 (window for an effect of 0.25), sustained, while the entropy ≥ 25 %
    of its initial (first-k) mean when logged, learning has stalled, and the reward is not within 10 % of its upper
    bound (the gate); on rows where no bound is known, nor within 10 % of its observed range below the highest
    smoothed reward so far (:func:`near_best_level`): a run holding the best level it reached is read as solved
    there, not starved.

Dev evidence for its constants
    f − u (not f) and the stall condition were set on the corpus dev part (v2) before its test part was scored:
    all-correct groups of a solved task had fired it. A reward stuck at exactly 0 is "stalled" (its slope t is 0,
    not NaN). Test part: 2/196 false alarms on healthy runs, 8/17 induced degeneracy runs caught. History: the
    design notes.
    The observed range without bounds (2026-12-06, on the dev part and synthetic healthy runs before the test part
    was scored with it): dev false alarms 3 → 1 of 845 healthy runs (two simulated underdamped runs), induced
    degeneracy runs caught 18 → 18 of 30 (one 98 steps later), every real dev log unchanged. Synthetic healthy runs
    near their ceiling with a ±1 reward (``bench/stress_ceiling.py``, 20 seeds per setting): ``degenerate groups``
    at one prompt a step 15–20 → 0 of 20 (G = 4, 8, 16), averaged over 10 steps (TRL's default ``logging_steps``)
    4 → 1, at 4 prompts a step 20 → 12 (averaged 19 → 11); the same runs stuck at −1 are still degenerate. Test part
    (nineteenth scoring): false alarms 2 → 1 of 402, induced degeneracy runs caught 8 → 7 of 17.
"""
from __future__ import annotations


import numpy as np

from ...runs.logs import RunLog
from ..signals import ENTROPY_COLUMNS, GROUP_STD_COLUMNS, ZERO_STD_COLUMNS, column
from .causal import (K_MAX, K_MIN, GATE_FRACTION, STALL_T, Detection, sustained_events, forward_fill, full_window,
                     on_rows, detection, running_scale, smoothed, stalled, unit_reward, upper_gate)
from .policy_concentration import CONCENTRATION_ENTROPY

DEGENERACY_FRACTION = 0.75
"""Fires when the smoothed f − u exceeds this."""
DEGENERACY_EFFECT = 0.25
"""Smoothing effect (absolute, on the fraction)."""
FLOOR_TOL = 1e-9
"""A normalised reward u ≤ this is at the reward's lower bound (every completion of the step failed)."""
ONE_GROUP_ROWS = 20
"""Rows of a zero-std share that is 0 or 1 on every one of them that show a log of one prompt a step."""


def _one_group_a_step(f: np.ndarray) -> bool:
    """The zero-std share is 0 or 1 on every logged row (at least ONE_GROUP_ROWS of them): one prompt a step."""
    v = f[np.isfinite(f)]
    return v.size >= ONE_GROUP_ROWS and bool(np.all((v == 0) | (v == 1)))


def observed_unit_reward(r: np.ndarray) -> np.ndarray:
    """(R − lo)/(hi − lo) with lo and hi the lowest and highest reward logged up to each row (causal); NaN on rows
    without a reward and while the rewards so far span no range."""
    ok = np.isfinite(r)
    hi = np.maximum.accumulate(np.where(ok, r, -np.inf))
    lo = np.minimum.accumulate(np.where(ok, r, np.inf))
    span = np.where(np.isfinite(hi) & np.isfinite(lo), hi - lo, 0.0)
    out = np.full(r.shape, np.nan)
    np.divide(r - np.where(np.isfinite(lo), lo, 0.0), span, out=out, where=ok & (span > 0))
    return out


def near_best_level(log: RunLog) -> np.ndarray:
    """True on rows where the smoothed reward is within GATE_FRACTION of its observed range below the highest
    smoothed reward so far (causal; the smoothing window as :func:`.causal.upper_gate`'s, for an effect of
    GATE_FRACTION × the running range): the gate of a reward without bounds."""
    _, r = log.reward_curve()
    ok = np.isfinite(log.reward)
    out = np.zeros(log.steps.size)
    if r.size == 0:
        return out > 0.5
    s, _, _ = smoothed(r, lambda v, sig: GATE_FRACTION * running_scale(v))
    hi, lo = np.maximum.accumulate(s), np.minimum.accumulate(s)
    out[ok] = (hi > lo) & (s >= hi - GATE_FRACTION * (hi - lo))
    return forward_fill(np.where(ok, out, np.nan)) > 0.5


def detect_advantage_degeneracy(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> Detection:
    """The rule of the module docstring (Rule)."""
    thr = (f"smoothed (zero-std fraction − normalised reward) > {DEGENERACY_FRACTION}, sustained, while entropy ≥ "
           f"{CONCENTRATION_ENTROPY:.0%} of its initial value, learning has stalled (reward slope t < {STALL_T:g}) "
           f"and the reward is not within {GATE_FRACTION:.0%} of its upper bound")
    u = unit_reward(log, reward_bounds)
    name, f = column(log, ZERO_STD_COLUMNS)
    if name is None:
        sname, s = column(log, GROUP_STD_COLUMNS)
        if sname is not None:
            name, f = f"{sname} == 0", np.where(np.isfinite(s), (s == 0).astype(float), np.nan)
        elif np.isfinite(u).any():    # a step at the reward's floor: every completion failed (Signals)
            name, f = "reward at its lower bound", np.where(np.isfinite(u), (np.abs(u) <= FLOOR_TOL).astype(float),
                                                             np.nan)
        else:
            return Detection("advantage_degeneracy", False, False, None, "no zero-std-group fraction, TRL "
                             "reward_std or reward bounds", thr)
    # all-correct groups are at most the normalised reward u = (R − lo)/(hi − lo) of the step: f − u is a lower
    # bound on the fraction of groups that all failed (the starved ones); without bounds, f itself. At one prompt a
    # step (f is 0 or 1 on every row) the step's one group is all-correct exactly when u = 1 (lo and hi observed
    # when not declared): a zero-spread group below that scored the same partial reward on every completion, and is
    # starved too
    solved = np.nan_to_num(u, nan=0.0)
    if _one_group_a_step(f):
        top = u if reward_bounds is not None else np.where(np.isfinite(u), u, observed_unit_reward(log.reward))
        solved = np.where(f == 1, (np.nan_to_num(top, nan=0.0) >= 1 - FLOOR_TOL).astype(float), solved)
    f = np.where(np.isfinite(f), f - solved, np.nan)
    fs, k, _ = smoothed(f, lambda v, s: np.full(v.size, DEGENERACY_EFFECT))
    cond = full_window(k) & (fs > DEGENERACY_FRACTION)
    cond_rows = on_rows(log, f, cond.astype(float)) > 0.5
    hname, h = column(log, ENTROPY_COLUMNS)
    if hname is not None:
        hv = h[np.isfinite(h)]
        h0 = float(np.mean(hv[:2 * K_MIN]))
        hs, _, _ = smoothed(h, lambda v, s: CONCENTRATION_ENTROPY * np.abs(h0))
        collapsed = on_rows(log, h, (hs < CONCENTRATION_ENTROPY * h0).astype(float)) > 0.5
        cond_rows &= ~collapsed
    gate = upper_gate(log, reward_bounds)
    unknown = ~np.isfinite(forward_fill(u))      # rows where no bound is known (a reward outside [0, 1] so far)
    if reward_bounds is None and unknown.any():
        gate |= unknown & near_best_level(log)
    cond_rows &= ~gate & stalled(log)
    krows = np.nan_to_num(on_rows(log, f, k.astype(float)), nan=K_MAX).astype(int)
    fs_rows = on_rows(log, f, fs)
    events = [{"step": int(log.steps[i]), "fraction": fs_rows[i]} for i in sustained_events(cond_rows, krows)]
    sig = name + (f" (entropy: {hname})" if hname else "")
    return detection("advantage_degeneracy", sig, thr, events,
                     {"max_smoothed": float(np.nanmax(fs)), "on_at_end": bool(cond_rows[-1])})

