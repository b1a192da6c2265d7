"""What each logged signal buys: the detectors and collapse precursors that use it, read off the code itself.

A practitioner deciding what to log wants to know what is lost without a metric. The answer is not typed here: it is
measured on a synthetic log that has every standard signal (:data:`~rlvr_dynamics.doctor.signals.SIGNALS`, under
its first source name), in two directions, so that a detector that needs two signals together (policy
concentration: entropy and a within-group spread) and one that can use any of several (dynamical instability) are
both seen:

- **ablation**: drop the signal from the full log; a detector *uses* it when its availability or the signals it
  reports (``Detection.signal``) change, a precursor when it disappears from
  :func:`~rlvr_dynamics.doctor.precursors.crossings`;
- **alone**: the reward plus that signal only; a detector whose availability or reported signals differ from the
  reward alone's, or a precursor present there and not on the reward alone, also uses it.

:func:`signal_uses` returns, per signal, the union of both; ``"reward"`` lists what the reward alone gives, and
``"sub_rewards"`` what a correctness and a format sub-reward (TRL's ``rewards/<function>/mean``, one per reward
function; :func:`~rlvr_dynamics.doctor.signals.sub_rewards`) give together.
"""
from __future__ import annotations

import numpy as np

from ..runs.logs import RunLog
from .detectors import DETECTORS, diagnose
from .precursors import RISING, crossings
from .signals import SIGNALS

_STEPS = 120
_BOUNDS = (0.0, 1.0)
SUB_REWARD_COLUMNS = ("rewards/correct_answer/mean", "rewards/format_reward/mean")
"""A correctness and a format sub-reward as TRL logs them (reward functions named ``correct_answer`` and
``format_reward``)."""
_COLUMNS = {**{name: (names[0],) for name, names in SIGNALS.items()}, "sub_rewards": SUB_REWARD_COLUMNS}


def _synthetic(signals: tuple[str, ...]) -> RunLog:
    """A smooth rising reward in [0, 1] plus the named standard signals (benign noisy levels), seed 0."""
    rng = np.random.default_rng(0)
    s = np.arange(1, _STEPS + 1)
    series = {"reward": 0.2 + 0.5 * (1 - np.exp(-s / 30)) + rng.normal(0, 0.03, _STEPS)}
    for name, columns in _COLUMNS.items():  # every draw is made: a signal's values do not depend on which are kept
        for col in columns:
            v = np.abs(0.5 + rng.normal(0, 0.05, _STEPS))
            if name in signals:
                series[col] = v
    return RunLog("synthetic: every standard signal", s, series, "reward")


def _footprint(log: RunLog) -> tuple[dict[str, tuple[bool, str]], set[str]]:
    det = diagnose(log, reward_bounds=_BOUNDS, reading=False)
    return {k: (d.available, d.signal) for k, d in det.items()}, set(crossings(log, _BOUNDS)) - {RISING}


def signal_uses() -> dict[str, dict[str, list[str]]]:
    """``{signal: {"detectors": [...], "precursors": [...]}}`` for ``"reward"`` (what the reward alone gives) and
    every standard signal of :data:`~rlvr_dynamics.doctor.signals.SIGNALS` and ``"sub_rewards"`` (what uses it; see
    the module docstring).
    Detectors in :data:`~rlvr_dynamics.doctor.detectors.DETECTORS` order, precursors sorted."""
    every = tuple(_COLUMNS)
    full_det, full_pre = _footprint(_synthetic(every))
    bare_det, bare_pre = _footprint(_synthetic(()))
    out = {"reward": {"detectors": [k for k in DETECTORS if bare_det[k][0]], "precursors": sorted(bare_pre)}}
    for name in every:
        without_det, without_pre = _footprint(_synthetic(tuple(s for s in every if s != name)))
        alone_det, alone_pre = _footprint(_synthetic((name,)))
        dets = [k for k in DETECTORS
                if without_det[k] != full_det[k] or alone_det[k] != bare_det[k]]
        out[name] = {"detectors": dets, "precursors": sorted((full_pre - without_pre) | (alone_pre - bare_pre))}
    return out
