"""How the precursors' crossings (:mod:`.precursors`) combine into the collapse warning, row by row.

The warning is a precursor reading, never a status: the status (:mod:`.status`) attaches it as ``warning`` and only
what the reward did sets ``collapsing``. :func:`warning_flags` is the rule; :func:`signals_on` names the signals
behind it at a row. The constants below were fixed on the development logs (their evidence is in each docstring).
"""
from __future__ import annotations

import numpy as np

from .precursors import RISING


WARNING_WINDOW = 3
"""A precursor counts toward the warning while it crossed within the last WARNING_WINDOW logged points."""
WARNING_ALONE = 3
"""The warning fires without a reward fall when this many other precursors are on at once."""
SUFFICIENT = ("non_finite", "length_cap", "format_fall")
"""Signals that warn on their own: each is a failure of the policy in itself (NaN, completions cut at the cap, the
format lost), not only a sign of stress. ``entropy_blowup`` was tried as one and left out: it fired on 4 of 36 healthy
development runs (an entropy near 0 triples easily) and led none of the 7 collapses."""
GATED = ("length_cap",)
"""SUFFICIENT signals that warn alone only while the reward is not rising (:func:`reward_rising`): completions
running into the cap while the reward still climbs is the length growth of a healthy long-reasoning run (a public
verl run rising 0.43 → 0.95 crossed a 50 % cap share at its all-time high)."""
SHOWN_ONLY = ("entropy_rise", "entropy_blowup")
"""Precursors the warning does not use (the report still shows their crossings). On the development part's real LLM
logs both crossed on 4 of 36 healthy runs (11 %, above the 10 % a precursor may have): entropy spikes from 0.1 to
1.8–4 nats in CS336 runs that kept their reward, crossing at 1.5×, 2× and 3× alike, so no threshold separates them;
``entropy_rise`` crossed before the halving on 1 of the 7 real collapses. Dropped from the warning on 2026-12-07
(fixed on the dev part before the test part was scored with it): dev collapses warned ahead 65 → 62 of 381 (all
simulated), healthy runs with a warning 16 → 14 of 846 and live stops on them 60 → 59 (CS336 surrogates)."""
NOT_COUNTED = ("grad_spike",)
"""Counted only beside a reward fall, never toward the WARNING_ALONE path: on the development logs the gradient norm
spikes on 8 of 25 healthy runs (one-step spikes of 10⁵ are common in runs that never collapse)."""


def warning_flags(cross: dict[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The collapse warning per logged row and the number of precursors on at it.

    Fires when the reward has fallen significantly (``reward_fall``) while at least one other precursor crossed
    within the last :data:`WARNING_WINDOW` points, when :data:`WARNING_ALONE` other precursors are on at once
    (whatever the reward; a one-prompt reward cannot show its fall in time), or when one of the
    :data:`SUFFICIENT` signals crosses. :data:`NOT_COUNTED` signals count only beside a reward fall;
    :data:`SHOWN_ONLY` ones not at all.
    """
    count = np.zeros(n, dtype=int)
    with_fall = np.zeros(n, dtype=int)
    for k, v in cross.items():
        if k in ("reward_fall", RISING) or k in SHOWN_ONLY:
            continue
        recent = np.zeros(n, dtype=bool)
        for j in range(WARNING_WINDOW):
            recent[j:] |= v[: n - j] if j else v
        with_fall += recent
        if k not in NOT_COUNTED:
            count += recent
    fall = cross.get("reward_fall", np.zeros(n, dtype=bool))
    alone = np.zeros(n, dtype=bool)
    for k in SUFFICIENT:
        if k in cross:
            alone |= cross[k] & ~cross.get(RISING, np.zeros(n, dtype=bool)) if k in GATED else cross[k]
    return (fall & (with_fall >= 1)) | (count >= WARNING_ALONE) | alone, count


def signal_role(name: str) -> str:
    """What a precursor's crossing does in :func:`warning_flags`, in words (the precursor table's column)."""
    if name == "reward_fall":
        return "the reward's own fall: warns beside one other signal"
    if name in SHOWN_ONLY:
        return "not used by the warning (shown only)"
    if name in SUFFICIENT:
        return "warns alone" + (" while the reward is not rising" if name in GATED else "")
    if name in NOT_COUNTED:
        return "counts only beside a reward fall"
    return f"beside a reward fall, or {WARNING_ALONE} such signals at once"


def signals_on(cross: dict[str, np.ndarray], i: int) -> list[str]:
    """The precursors the warning uses that crossed within the last :data:`WARNING_WINDOW` points before row ``i``
    (inclusive): what a warning or a collapse names as its signals (the :data:`SHOWN_ONLY` ones are not among them,
    as they do not count toward it; the report's precursor crossings still show them)."""
    lo = max(0, i - WARNING_WINDOW + 1)
    return [k for k, v in cross.items() if k != RISING and k not in SHOWN_ONLY and bool(np.any(v[lo: i + 1]))]
