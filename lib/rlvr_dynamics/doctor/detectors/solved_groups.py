"""Which groups without reward spread are solved ones: the share of a step's groups whose completions all earned the
top reward, for the detectors that must not read a solved task as a failure.

A group whose completions all got the same reward carries no GRPO advantage; it is *starved* when they all failed
(or all earned one partial reward) and *solved* when they all succeeded. Only the second is what a run at its ceiling
looks like, so :mod:`.advantage_degeneracy` counts the groups without spread less the solved ones, and
:mod:`.policy_concentration` reads a policy concentrated on right answers as converged. With known bounds (declared,
or a reward in [0, 1]) the normalised reward u = (R − lo)/(hi − lo) bounds the solved share from above; without them
(a reward of ±1, a sum of format and correctness terms in [0, 2]):

- at one prompt a step (the zero-std share f is 0 or 1 on every row) the step's one group is solved exactly when its
  reward is the highest the run has logged so far (:func:`observed_unit_reward`);
- at more prompts a step, or on rows averaged over a logging interval, the share is read from how the reward moves
  with f (:func:`solved_share`).
"""
from __future__ import annotations

import numpy as np

from ...runs.logs import RunLog
from ..signals import GROUP_STD_COLUMNS, ZERO_STD_COLUMNS, column
from .causal import GATE_FRACTION, trailing_regression, unit_reward

FLOOR_TOL = 1e-9
"""A normalised reward u ≤ this is at the reward's lower bound (every completion of the step failed)."""
ONE_GROUP_ROWS = 20
"""Rows of a zero-std share that is 0 or 1 on every one of them that show a log of one prompt a step."""
SPREAD_FREE_ROWS = 100
"""Trailing rows of the regression of the reward on the zero-std share (:func:`solved_share`). At 30, a simulated
healthy run at its ceiling whose reward sums a correctness term and a noisy format term lost the line's significance
now and then and read ``degenerate groups`` (dev, 2026-12-06); at 100 none of the dev runs or the stress runs'
design seeds (200–209) did."""
SPREAD_FREE_MIN = 10
"""Rows needed before :func:`solved_share` reads anything."""
SPREAD_FREE_T = 2.0
"""t-statistic of a rising line of the reward on the zero-std share that reads the groups without spread as solved."""


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


def solved_share(r: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Share of the groups without reward spread that are solved ones, read from how the step's reward moves with
    their fraction f over the trailing SPREAD_FREE_ROWS rows (causal), for a reward without known bounds.

    A step's reward is R = f·m₀ + (1 − f)·mₛ, m₀ and mₛ the mean rewards of the groups without and with spread, so
    the least-squares line of R on f gives m₀ = R̄ + β(1 − f̄). Where β > 0 with t > SPREAD_FREE_T (the groups that
    lost their spread are better than the others), the share is m₀'s place in the rewards logged so far,
    (m₀ − lo)/(hi − lo) clipped to [0, 1]; where f = 1 on every row of the window, R is m₀ itself and the share is 1
    within GATE_FRACTION of the range below the best reward so far, else 0. Elsewhere 0: a line that is flat or
    falls says nothing for a solved task (a run starved at its best level, a format reward learned and nothing
    else, sits at its highest reward too). NaN on rows without a reward or f."""
    ok = np.isfinite(r) & np.isfinite(f)
    out = np.full(r.size, np.nan)
    rv, fv = r[ok], f[ok]
    if rv.size == 0:
        return out
    beta, t, fbar, rbar = trailing_regression(fv, rv, SPREAD_FREE_ROWS)
    m0 = rbar + beta * (1 - fbar)
    hi, lo = np.maximum.accumulate(rv), np.minimum.accumulate(rv)
    span = np.where(hi > lo, hi - lo, np.inf)
    share = np.where(t > SPREAD_FREE_T, np.clip((m0 - lo) / span, 0.0, 1.0), 0.0)
    all_spread_free = fbar >= 1 - FLOOR_TOL
    share = np.where(all_spread_free, (m0 >= hi - GATE_FRACTION * span).astype(float), share)
    rows = np.minimum(np.arange(1, rv.size + 1), SPREAD_FREE_ROWS)
    out[ok] = np.where((rows >= SPREAD_FREE_MIN) & np.isfinite(span), share, 0.0)
    return out


def spread_free_fraction(log: RunLog) -> tuple[str | None, np.ndarray | None]:
    """(its name, f): the fraction of groups with zero reward std, TRL's ``frac_reward_zero_std``, else 1[std == 0]
    of TRL/Unsloth's ``reward_std`` (exact at one prompt a step, a lower bound at more); (None, None) when neither
    is logged."""
    name, f = column(log, ZERO_STD_COLUMNS)
    if name is not None:
        return name, f
    sname, s = column(log, GROUP_STD_COLUMNS)
    if sname is None:
        return None, None
    return f"{sname} == 0", np.where(np.isfinite(s), (s == 0).astype(float), np.nan)


def solved_groups(log: RunLog, f: np.ndarray, reward_bounds: tuple[float, float] | None) -> np.ndarray:
    """The share of each row's groups that are solved, beside f (module docstring): u = (R − lo)/(hi − lo) with
    known bounds (0 where none is known), at one prompt a step 1[u = 1] where f = 1 (lo and hi observed when not
    declared: a group that scored one partial reward on all its completions, e.g. a format reward alone, is starved),
    and without bounds at more prompts a step f × :func:`solved_share` on the rows where no bound is known."""
    u = unit_reward(log, reward_bounds)
    solved = np.nan_to_num(u, nan=0.0)
    if _one_group_a_step(f):
        top = u if reward_bounds is not None else np.where(np.isfinite(u), u, observed_unit_reward(log.reward))
        return np.where(f == 1, (np.nan_to_num(top, nan=0.0) >= 1 - FLOOR_TOL).astype(float), solved)
    unknown = ~np.isfinite(u) & np.isfinite(f)
    if reward_bounds is None and unknown.any():     # the line is read only where some row has no bound
        return np.where(unknown, np.nan_to_num(f * solved_share(log.reward, f), nan=0.0), solved)
    return solved
