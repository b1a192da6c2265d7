"""A declared reward range and the rewards that lie outside it: one rule for ``rlvr-dynamics fit --reward-range
LO HI``, ``fit_run(reward_bounds=…)`` and ``RunDoctor(reward_bounds=…)`` (:func:`read_with_declared_range`).

A declared range ``(lo, hi)`` says no reward can leave it: the collapse floor is ``lo`` and a reward is read as the
success rate ``(r − lo)/(hi − lo)`` (:func:`~rlvr_dynamics.runs.noise.unit_rewards`). A logged reward beyond it by
more than :data:`RANGE_TOLERANCE` of ``hi − lo`` (float32 storage moves 1 by 6·10⁻⁸) contradicts the declaration,
and either is wrong:

* **a few such rewards** — at most :data:`GLITCHES_ALLOWED` or :data:`GLITCH_SHARE` of the logged rewards, whichever
  is larger — are read as missing, with a read note naming them: a logging glitch (one reward of 50 in a success
  rate) otherwise drags every trailing mean it enters, and read without the range the one glitch turned a rising run
  into ``noise only`` with a forecast of 8·10⁶;
* **more** say the declaration is wrong (``0 1`` for a reward of two terms of 1 each, a percentage): the range is
  dropped, with a read note, and the run is read from its own rewards, as without a declared range. Reading them as
  missing instead would cut the curve at ``hi`` and, once every new reward lies above it, read a healthy run's
  trailing rewards as missing: as a diverged run.

The live doctor applies the same rule to the rewards so far, so the rewards it reads as missing and the range it uses
are those ``fit`` would use on the log so far."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..runs.logs import RunLog

RANGE_TOLERANCE = 1e-6
"""A reward counts as outside ``(lo, hi)`` beyond this share of ``hi − lo``."""
GLITCHES_ALLOWED = 1
"""At most this many rewards outside the declared range are read as missing, whatever the run's length …"""
GLITCH_SHARE = 0.01
"""… or this share of the logged rewards, if larger; more drop the range (module docstring)."""


def outside_declared_range(reward: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """Indices of the finite rewards beyond ``bounds`` by more than :data:`RANGE_TOLERANCE` of their width."""
    lo, hi = bounds
    tol = RANGE_TOLERANCE * (hi - lo)
    r = np.asarray(reward, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(np.isfinite(r) & ((r < lo - tol) | (r > hi + tol)))


def _where(log: RunLog, at: np.ndarray, most: int = 3) -> str:
    shown = ", ".join(f"{float(log.reward[i]):g} at step {int(log.steps[i])}" for i in at[:most])
    return shown + (f", … ({at.size - most} more)" if at.size > most else "")


def read_with_declared_range(log: RunLog, bounds: tuple[float, float] | None
                             ) -> tuple[RunLog, tuple[float, float] | None]:
    """``(log, bounds)`` to read under a declared range (module docstring): the log unchanged and ``bounds`` when
    every reward lies inside; else a copy with one read note and either the few outside rewards set to NaN (the
    range kept) or the range dropped (``None``). ``bounds=None`` (nothing declared): the log and None."""
    if bounds is None:
        return log, None
    at = outside_declared_range(log.reward, bounds)
    if not at.size:
        return log, bounds
    n = int(np.isfinite(log.reward).sum())
    lo, hi = bounds
    allowed = max(GLITCHES_ALLOWED, math.floor(GLITCH_SHARE * n))
    declared = f"the declared reward range {lo:g} to {hi:g}"
    if at.size <= allowed:
        reward = log.reward.copy()
        reward[at] = math.nan          # every name of the column (a bare name shares its namespaced column's array)
        series = {k: reward if v is log.reward else v for k, v in log.series.items()}
        note = (f"{at.size} reward{'s' if at.size > 1 else ''} outside {declared} ({_where(log, at)}), read as "
                "missing: a reward the declared range cannot hold (a logging glitch?)")
        return replace(log, series=series, read_notes=[*log.read_notes, note]), bounds
    note = (f"{at.size} of {n} rewards lie outside {declared} ({_where(log, at)}): the range does not fit this "
            "column and is not used; the run is read from its own rewards, as without a declared range. Check the "
            "range (a reward of two terms of 1 each is 0 2; a percentage 0 100)")
    return replace(log, read_notes=[*log.read_notes, note]), None
