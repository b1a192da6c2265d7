"""The doctor's detectors, one module per failure mode (P1-C13, P1 spec §4, and a collapse warning) [D].

- :mod:`.reward_hacking`, :mod:`.advantage_degeneracy`, :mod:`.policy_concentration`, :mod:`.dynamical_instability`,
  :mod:`.collapse_warning`: each opens with what it detects, why it matters in GRPO, its signals, its rule and the
  dev evidence for its constants (the book's rule reference is generated from these blocks: :mod:`.reference`);
- :mod:`.causal`: the :class:`Detection` result and the causal statistics they share (windows, σ, events);
- :mod:`.collapse`: the collapse report at the logged point (the status's ``collapsed``), with the tests of a fall
  against the run's own rewards (:mod:`.own_rewards`) and the step noise of a run's prefix (:mod:`.prefix_noise`).

:func:`diagnose` runs them all on a log.
"""
from __future__ import annotations

from typing import Any

from ...runs.logs import RunLog
from .causal import K_MAX, K_MIN, SIGMA_FIRST, Detection, causal_sigma, noise_window
from .advantage_degeneracy import detect_advantage_degeneracy
from .collapse_warning import detect_collapse
from .dynamical_instability import detect_dynamical_instability
from .policy_concentration import detect_policy_concentration
from .reward_hacking import detect_reward_hacking

DETECTORS = ("reward_hacking", "advantage_degeneracy", "policy_concentration", "dynamical_instability",
             "collapse_warning")
"""Detector names, in report order (each is also the name of its module)."""

__all__ = ["DETECTORS", "Detection", "diagnose", "detect_reward_hacking", "detect_advantage_degeneracy",
           "detect_policy_concentration", "detect_dynamical_instability", "detect_collapse", "causal_sigma",
           "noise_window", "K_MIN", "K_MAX", "SIGMA_FIRST"]


def diagnose(log: RunLog, *, response: dict[str, Any] | None = None, margin: dict[str, Any] | None = None,
             reward_bounds: tuple[float, float] | None = None, reading: bool = True,
             done: dict[str, Detection] | None = None) -> dict[str, Detection]:
    """Run every detector on ``log``; ``{name: Detection}`` in :data:`DETECTORS` order. ``response``: a
    :func:`~rlvr_dynamics.doctor.reading.response_laws.fit_response_laws` result for the reward; ``margin``: the
    stability margin (needs K_ref); ``reading=False`` skips the (whole-prefix) reading of instability (d);
    ``done``: detections already made on this log with these bounds (the status's,
    :func:`~rlvr_dynamics.doctor.status.status_detections`), reused instead of run again."""
    if reward_bounds is not None and not (len(reward_bounds) == 2 and reward_bounds[0] < reward_bounds[1]):
        raise ValueError(f"reward_bounds must be (lo, hi) with lo < hi, got {reward_bounds!r}")
    done = done or {}
    warning = done.get("collapse_warning") or detect_collapse(log, reward_bounds)
    return {"reward_hacking": done.get("reward_hacking") or detect_reward_hacking(log),
            "advantage_degeneracy": done.get("advantage_degeneracy") or detect_advantage_degeneracy(log, reward_bounds),
            "policy_concentration": detect_policy_concentration(log, reward_bounds),
            "dynamical_instability": detect_dynamical_instability(log, response, margin, reward_bounds,
                                                                  reading=reading, warning=warning),
            "collapse_warning": warning}
