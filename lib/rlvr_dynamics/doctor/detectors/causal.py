"""What every detector shares: the :class:`Detection` result, and the causal statistics (windows, σ, events).

**Causal.** Every quantity at a logged row uses only rows up to it (trailing windows, running maxima, a step noise σ
re-estimated on the prefix), so :func:`~rlvr_dynamics.doctor.detectors.diagnose` on any prefix of a log reports
exactly the events of the full log up to that prefix; the live :class:`~rlvr_dynamics.doctor.live.RunDoctor` relies
on it. Exceptions, marked (whole-prefix readings): instability (c) and (d), which read a fit of the whole prefix and
fire at its last step.

**Step noise and windows.** σ_t = :func:`~rlvr_dynamics.runs.noise.step_sigma` (robust, from first differences) of
the series' values up to row t, re-estimated when the count of values reaches ⌈8·1.25^j⌉ and held in between (no
events before 8 values). A smoothing window is long enough that the smoothed noise is small against the effect
looked for: ``k = clip(⌈(Z_WINDOW·σ_t / effect)²⌉, K_MIN, K_MAX)`` with Z_WINDOW = 2, K_MIN = 3, K_MAX = 100 —
σ/√k ≤ effect/2. A row fires only once it has 2k values behind it (a baseline window and a test window).
"Sustained" = the condition holds on ``k`` consecutive rows; the event is the row that completes them (when you
could have known).

**Events re-arm.** A detector reports every event (``Detection.events``, each a dict with ``step`` and the numbers
at it); ``Detection.step`` is the first. After an event the detector is disarmed until its re-arm condition holds
(the condition false again on k consecutive rows, or the collapse warning's recovery), then fires again.

**Reward-bound gate.** Concentration and degeneracy do not fire while the smoothed reward is within
GATE_FRACTION = 10 % of the bound width below the upper reward bound (a solved task is not a failure). Bounds: the
declared ``reward_bounds``; else (0, 1) on the rows where every reward so far lies in [0, 1] (causal); else no gate.

**Stalled** (degeneracy, concentration): the t-statistic of the reward's least-squares slope over the trailing
W = max(STALL_SPAN·k, STALL_MIN, STALL_FRACTION·n) = max(4k, 10, n/4) reward rows (n: rows so far) is
< STALL_T = 2 (k: the noise window for an effect of 0.1 × the reward's running range): no significant gain lately.
A run that is still learning is not failing.

A detector whose series the log lacks reports ``available=False`` (not a silent "no").
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...runs.logs import RunLog
from ...runs.noise import step_sigma

Z_WINDOW = 2.0
"""z of the noise window: the trailing mean of k values has noise σ/√k ≤ effect/Z_WINDOW."""
K_MIN = 3
"""Shortest smoothing window (logged rows)."""
K_MAX = 100
"""Longest smoothing window (logged rows)."""
SIGMA_FIRST = 8
"""No σ (and no event) before this many values."""
SIGMA_GROWTH = 1.25
"""σ is re-estimated when the count of values reaches ⌈SIGMA_FIRST·SIGMA_GROWTH^j⌉."""
GATE_FRACTION = 0.1
"""Reward-bound gate: within this fraction of the bound width below the upper bound, a solved task."""
STALL_EFFECT = 0.1
"""Effect (× the reward's running range) of the noise window k of the stall test."""
STALL_SPAN = 4
STALL_MIN = 10
STALL_T = 2.0
STALL_FRACTION = 0.25
"""Stalled: slope t < STALL_T over the trailing max(STALL_SPAN·k, STALL_MIN, STALL_FRACTION·n) reward rows."""
PEAK_WINDOW = 4
"""A running peak is taken on a PEAK_WINDOW-times longer smoothing (a running max of short means is biased up by
noise)."""

@dataclass
class Detection:
    """One detector's verdict on one run."""

    name: str
    available: bool
    """False when the log lacks the series the detector needs."""
    fired: bool
    step: int | None
    """Step of the first event (None if it did not fire)."""
    signal: str
    """What was measured (columns used)."""
    threshold: str
    """The rule."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Values at the first event or summary values."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Every event (the detector re-arms): dicts with ``step`` and the numbers at it, in step order."""

    def to_dict(self) -> dict[str, Any]:
        return {"available": self.available, "fired": self.fired, "step": self.step, "signal": self.signal,
                "threshold": self.threshold, "detail": _clean(self.detail), "events": _clean(self.events)}


def _clean(obj):
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, (np.integer, np.bool_)):
        return obj.item()
    return obj


def quiet_detection(name: str, signal: str, thr: str, detail: dict | None = None) -> Detection:
    return Detection(name, True, False, None, signal, thr, detail or {})


def detection(name: str, signal: str, thr: str, events: list[dict], detail: dict | None = None) -> Detection:
    events = sorted(events, key=lambda e: e["step"])
    if not events:
        return quiet_detection(name, signal, thr, detail)
    return Detection(name, True, True, int(events[0]["step"]), signal, thr, {**(detail or {}), **events[0]}, events)



# ------------------------------------------------------------------------------------------ causal statistics
def causal_sigma(y: np.ndarray) -> np.ndarray:
    """σ_t of the module docstring: :func:`~rlvr_dynamics.runs.noise.step_sigma` of ``y[:m]`` at
    m = ⌈SIGMA_FIRST·SIGMA_GROWTH^j⌉ values, held until the next such m; NaN before SIGMA_FIRST values. ``y``:
    finite values only."""
    y = np.asarray(y, dtype=float)
    n = y.size
    out = np.full(n, np.nan)
    m = SIGMA_FIRST
    while m <= n:
        nxt = max(m + 1, int(math.ceil(m * SIGMA_GROWTH)))
        out[m - 1:min(nxt - 1, n)] = _prefix_sigma(y[:m])
        m = nxt
    return out


_SIGMA_CACHE: dict[bytes, float] = {}


def _prefix_sigma(v: np.ndarray) -> float:
    """:func:`~rlvr_dynamics.runs.noise.step_sigma` of ``v``, memoised on its bytes (the live doctor re-reads the
    same prefixes at every update; a pure speed-up, bounded at 200,000 entries)."""
    key = hashlib.blake2b(np.ascontiguousarray(v).tobytes(), digest_size=16).digest()
    got = _SIGMA_CACHE.get(key)
    if got is None:
        if len(_SIGMA_CACHE) > 200_000:
            _SIGMA_CACHE.clear()
        got = _SIGMA_CACHE[key] = float(step_sigma(v))
    return got


def noise_window(sigma, effect, *, z: float = Z_WINDOW, k_min: int = K_MIN, k_max: int = K_MAX) -> np.ndarray:
    """Smoothing window k = clip(⌈(z·σ/effect)²⌉, k_min, k_max): the trailing mean of k values has noise σ/√k ≤
    effect/z. NaN σ or a non-positive effect gives k_max (nothing can be seen)."""
    sigma = np.asarray(sigma, dtype=float)
    effect = np.broadcast_to(np.asarray(effect, dtype=float), sigma.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.ceil((z * sigma / effect) ** 2)
    k = np.where(np.isfinite(k) & (effect > 0), k, k_max)
    return np.clip(k, k_min, k_max).astype(int)


def trailing_mean(y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Mean of y[i−k_i+1 … i] (fewer at the start: ``full_window`` tells where the window is complete)."""
    c = np.concatenate([[0.0], np.cumsum(y)])
    j = np.arange(1, y.size + 1)
    lo = np.maximum(0, j - k)
    return (c[j] - c[lo]) / (j - lo)


def full_window(k: np.ndarray, factor: int = 2) -> np.ndarray:
    """Rows with at least factor·k values behind them (a baseline and a test window)."""
    return np.arange(1, k.size + 1) >= factor * k


def trailing_regression(x: np.ndarray, y: np.ndarray, k: np.ndarray | int
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of y on x over the trailing k_i rows: (slope, its t-statistic, mean x, mean y) per row; the
    slope and t are 0 where k_i < 4 or x does not vary."""
    n = y.size
    cs = [np.concatenate([[0.0], np.cumsum(v)]) for v in (np.ones(n), x, y, x * x, x * y, y * y)]
    j = np.arange(1, n + 1)
    lo = np.maximum(0, j - k)
    s0, sx, sy, sxx, sxy, syy = (c[j] - c[lo] for c in cs)
    with np.errstate(divide="ignore", invalid="ignore"):
        vxx = sxx - sx * sx / s0
        vxy = sxy - sx * sy / s0
        vyy = syy - sy * sy / s0
        b = vxy / vxx
        res = np.maximum(vyy - b * vxy, 0.0)
        se = np.sqrt(res / np.maximum(s0 - 2, 1) / vxx)
        # an exactly flat stretch (se = 0, b = 0) has t = 0, not sign(0)·∞ = NaN (which made "stalled" false on a
        # reward stuck at 0, hiding the plainest degeneracy)
        t = np.where(se > 0, b / se, np.where(b == 0, 0.0, np.sign(b) * np.inf))
        fit = (s0 >= 4) & np.isfinite(b) & (vxx > 1e-9 * s0)
        return np.where(fit, b, 0.0), np.where(fit, t, 0.0), sx / s0, sy / s0


def trailing_slope_t(y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """t-statistic of the least-squares slope of y on its index over the trailing k_i rows (0 where k_i < 4)."""
    return trailing_regression(np.arange(y.size, dtype=float), y, k)[1]


def sustained_events(cond: np.ndarray, sustain: np.ndarray | int, rearm: np.ndarray | None = None) -> list[int]:
    """Rows where ``cond`` has held on ``sustain`` consecutive rows while armed; after an event the detector is
    disarmed until ``rearm`` holds (default: ``cond`` false on ``sustain`` consecutive rows)."""
    cond = np.asarray(cond, dtype=bool)
    n = cond.size
    sustain = np.broadcast_to(np.asarray(sustain, dtype=int), (n,))
    # length of the run of True ending at each row
    idx = np.arange(n)
    last_false = np.maximum.accumulate(np.where(~cond, idx, -1))
    run_true = idx - last_false
    last_true = np.maximum.accumulate(np.where(cond, idx, -1))
    run_false = idx - last_true
    hit = cond & (run_true >= sustain)
    re = (run_false >= sustain) if rearm is None else np.asarray(rearm, dtype=bool)
    out, start = [], 0
    while start < n:
        h = np.flatnonzero(hit[start:])
        if h.size == 0:
            break
        i = start + int(h[0])
        out.append(i)
        r = np.flatnonzero(re[i + 1:])
        if r.size == 0:
            break
        start = i + 1 + int(r[0])
    return out


def forward_fill(y: np.ndarray) -> np.ndarray:
    """Carry the last finite value forward (NaN before the first)."""
    ok = np.isfinite(y)
    pos = np.maximum.accumulate(np.where(ok, np.arange(y.size), -1))
    return np.where(pos >= 0, y[np.maximum(pos, 0)], np.nan)


def on_rows(log: RunLog, y: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Values computed on y's finite rows, carried forward onto every row of the log."""
    out = np.full(log.steps.size, np.nan)
    out[np.isfinite(y)] = values
    return forward_fill(out)


def smoothed(y: np.ndarray, effect_fn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(smoothed, k, σ) of the finite values of y with the noise-scaled window for ``effect_fn(σ)``."""
    v = y[np.isfinite(y)]
    sig = causal_sigma(v)
    k = noise_window(sig, effect_fn(v, sig))
    return trailing_mean(v, k), k, sig


def upper_gate(log: RunLog, reward_bounds, fraction: float = GATE_FRACTION) -> np.ndarray:
    """True on rows where the smoothed reward is within ``fraction`` (default GATE_FRACTION) of the bound width
    below the upper reward bound (causal)."""
    steps, r = log.reward_curve()
    ok = np.isfinite(log.reward)
    if reward_bounds is not None:
        lo = np.full(r.size, float(reward_bounds[0]))
        hi = np.full(r.size, float(reward_bounds[1]))
    else:
        unit = np.logical_and.accumulate((r >= 0) & (r <= 1))
        lo, hi = np.where(unit, 0.0, np.nan), np.where(unit, 1.0, np.nan)
    s, _, _ = smoothed(r, lambda v, sig: np.full(v.size, GATE_FRACTION * (np.nanmax(hi) - np.nanmin(lo))
                                                   if np.isfinite(hi).any() else np.nan))
    near = np.where(np.isfinite(hi), s >= hi - fraction * (hi - lo), False)
    out = np.zeros(log.steps.size)
    out[ok] = near
    return forward_fill(np.where(ok, out, np.nan)) > 0.5


def unit_reward(log: RunLog, reward_bounds) -> np.ndarray:
    """(R − lo)/(hi − lo) on every row with the declared bounds, else with (0, 1) on the rows where every reward so
    far lies in [0, 1] (causal); NaN where no bound is known or no reward is logged."""
    r = log.reward
    if reward_bounds is not None:
        lo, hi = float(reward_bounds[0]), float(reward_bounds[1])
        return (r - lo) / (hi - lo)
    fin = np.where(np.isfinite(r), r, 0.5)
    unit = np.logical_and.accumulate((fin >= 0) & (fin <= 1))
    return np.where(unit & np.isfinite(r), r, np.nan)


def bounds_unknown(log: RunLog, reward_bounds) -> np.ndarray:
    """True on rows where no reward bound is known (:func:`unit_reward` NaN: none declared and a reward outside
    [0, 1] logged so far); rows without a reward carry the last rewarded row's answer."""
    if reward_bounds is not None:
        return np.zeros(log.steps.size, bool)
    ok = np.isfinite(log.reward)
    known = np.where(ok, np.isfinite(unit_reward(log, None)).astype(float), np.nan)
    return forward_fill(known) == 0


def stalled(log: RunLog) -> np.ndarray:
    """True on rows where learning has stalled: the t-statistic of the reward's least-squares slope over the
    trailing W = max(STALL_SPAN·k, STALL_MIN, STALL_FRACTION·rows so far) reward rows is below STALL_T (k: the noise window for an effect of
    STALL_EFFECT × the reward's running range), i.e. no significant gain lately (causal)."""
    r = log.reward
    ok = np.isfinite(r)
    rv = r[ok]
    if rv.size == 0:
        return np.zeros(log.steps.size, bool)
    sig = causal_sigma(rv)
    k = noise_window(sig, STALL_EFFECT * running_scale(rv))
    t = trailing_slope_t(rv, np.maximum(np.maximum(STALL_SPAN * k, STALL_MIN),
                                         (STALL_FRACTION * np.arange(1, rv.size + 1)).astype(int)))
    return np.nan_to_num(on_rows(log, r, (t < STALL_T).astype(float)), nan=1.0) > 0.5



def running_scale(v: np.ndarray) -> np.ndarray:
    """Causal scale of a series: the running max − running min of its values (at least 1e-12)."""
    return np.maximum(np.maximum.accumulate(v) - np.minimum.accumulate(v), 1e-12)


def running_initial_mean(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Mean of the first k_i values at each row i (k_i ≤ i + 1)."""
    kk = np.minimum(k, np.arange(1, v.size + 1))
    return np.cumsum(v)[kk - 1] / kk


def running_initial_median(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Median of the first k_i values at each row i (k_i ≤ i + 1), computed once per distinct k."""
    out = np.empty(v.size)
    kk = np.minimum(k, np.arange(1, v.size + 1))
    for val in np.unique(kk):
        out[kk == val] = np.median(v[:val])
    return out

