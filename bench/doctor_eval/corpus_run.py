"""One labelled run of the doctor's corpus (:class:`CorpusRun`), the corpus' vocabulary (sources, outcomes, splits)
and the hindsight collapse label every collapsing run gets (:func:`hindsight_collapse`). The label rules are in
:mod:`.corpus`'s docstring."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlvr_dynamics.runs.logs import RunLog
from rlvr_dynamics.runs.noise import step_sigma

SOURCES = ("sim", "bisection", "project", "project-fail", "shared", "cs336", "surrogate")
OUTCOMES = ("healthy", "collapse", "unstable", "failure")
SIM_REGIMES = ("first-order", "overdamped", "underdamped", "flat", "growing", "collapse", "reward_hacking",
               "advantage_degeneracy", "policy_concentration")
"""Regimes the simulator draws, in the order of :data:`SIM_COUNTS`."""
SIM_COUNTS = {"first-order": 25, "overdamped": 40, "underdamped": 35, "flat": 25, "growing": 40, "collapse": 40,
              "reward_hacking": 15, "advantage_degeneracy": 15, "policy_concentration": 15}
"""Simulated runs per regime and split."""
PROJECT_SPLIT = {"noisy-1p": "dev", "noisy-2p": "dev", "noisy-smollm-1p": "dev", "noisy-smollm-t1": "dev",
                 "noisy-smollm-g4": "dev", "noisy-smollm-lr3e5": "dev", "noisy-smollm-lr2e5": "dev",
                 "noisy-smollm-shaped": "dev", "noisy-smollm-terms": "dev", "noisy-smollm-shaped-d1": "dev",
                 "noisy-smollm-kl": "dev", "noisy-smollm-mu2": "dev", "noisy-smollm-d3": "dev",
                 "noisy-smollm-2p-terms": "dev", "noisy-smollm-penalised": "dev",
                 "noisy-smollm-cosine": "dev", "noisy-smollm-trl-defaults": "dev", "noisy-smollm-dr-grpo": "dev",
                 "noisy-smollm-dr-grpo-t05": "dev",
                 "p1-long": "dev", "p1-sizes": "dev", "p2-lr": "dev", "p1-pilot": "dev", "p1-main": "test",
                 "p2-stall": "test", "p2-fresh": "test", "smollm-main": "test", "smollm-pilot": "test",
                 "smollm2-add": "test"}
"""Family of a committed run (its name without the hash) → split."""
BISECTION_SPLIT = {"p2-len": "dev", "p2-len-adam": "test"}
FAILURE_MODES = ("reward_hacking", "advantage_degeneracy", "policy_concentration", "dynamical_instability")
LEAD_TIME_MIN_HISTORY = 30
"""A collapsing run enters the lead-time population when its collapse step is ≥ this many logged points in."""


@dataclass
class CorpusRun:
    """One labelled run of the corpus (module docstring for every label rule)."""

    name: str
    source: str
    split: str
    log: RunLog
    reward_bounds: tuple[float, float] | None
    """Declared reward bounds (0/1 success rates), None when the scale is unknown."""
    prompts_per_step: int | None
    noise_class: str
    outcome: str
    collapse_step: int | None = None
    regime: str | None = None
    """Simulated runs: the regime drawn; None for real runs."""
    failure_mode: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def in_lead_time_population(self) -> bool:
        """A collapse with room for a warning ≥ 10 steps ahead (module docstring)."""
        if self.outcome != "collapse" or self.collapse_step is None:
            return False
        steps, _ = self.log.reward_curve()
        return int(np.searchsorted(steps, self.collapse_step)) >= LEAD_TIME_MIN_HISTORY


# ---------------------------------------------------------------------------------------------------------------
# Hindsight labels
# ---------------------------------------------------------------------------------------------------------------

def _centred_mean(y: np.ndarray, k: int) -> np.ndarray:
    """Centred moving mean over k points (shrinking at the ends)."""
    c = np.cumsum(np.insert(y, 0, 0.0))
    idx = np.arange(y.size)
    lo = np.clip(idx - k // 2, 0, y.size)
    hi = np.clip(idx + k // 2 + 1, 0, y.size)
    return (c[hi] - c[lo]) / (hi - lo)


def hindsight_collapse(steps, reward, reward_bounds: tuple[float, float] | None = None) -> tuple[int | None, bool]:
    """``(collapse_step, ends_collapsed)`` by the hindsight rule of the module docstring: the first step where the
    centred-smoothed reward has lost half its gain for good, and whether the run ends below half its gain."""
    t = np.asarray(steps, dtype=float)
    y = np.asarray(reward, dtype=float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    n = y.size
    if n < 5:
        return None, False
    sigma = step_sigma(y)
    first = max(2, int(math.ceil(0.1 * n)))
    floor0 = float(reward_bounds[0]) if reward_bounds is not None else float(np.min(_centred_mean(y, 3)[:first]))
    gain = max(float(np.quantile(y, 0.95)) - floor0, 1e-12)
    k = max(3, int(math.ceil(100 * sigma * sigma / (gain * gain))))
    k = min(k, max(3, n // 5))
    k += 1 - k % 2
    s = _centred_mean(y, k)
    floor = floor0 if reward_bounds is not None else float(np.min(s[:first]))
    peak = np.maximum.accumulate(s)
    half = floor + 0.5 * (peak - floor)
    significant = (peak - floor) > 6 * sigma / math.sqrt(k)
    below = (s < half) & significant
    # "stays below for the rest of the run": below the half of the run's final peak level from here on
    stays = np.flip(np.logical_and.accumulate(np.flip(s < floor + 0.5 * (peak - floor))))
    hit = np.flatnonzero(below & stays)
    ends = bool(below[-1])
    return (int(t[hit[0]]) if hit.size else None), ends


