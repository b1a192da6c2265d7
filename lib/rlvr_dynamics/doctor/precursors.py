"""The logged signals that can lead a GRPO collapse, each with a causal crossing rule.

A reward collapse in GRPO is usually the last of several things to go: the policy's entropy rises (or the
completions hit the length cap), the update's KL to the sampling policy jumps, the gradient norm spikes, the format
reward falls, more and more groups score all-equal (zero advantage), and the reward follows. Each function below
turns one logged signal into the logged points where it *crosses* its threshold, using only the points up to each
one (so the live doctor sees the same crossings as ``rlvr-dynamics fit``). The book's table "which logged metric
warns first of a GRPO collapse" is :func:`precursor_leads` over the labelled development logs.

Thresholds are relative to the run's own history (a running median or minimum, the first points), never absolute
numbers of one framework, so that they carry to runs of other models and loops. Every crossing needs a short
trailing mean (SMOOTH points) past the threshold, so one wild value does not count, except the non-finite signal.
"""
from __future__ import annotations

import bisect
import math

import numpy as np

from ..runs.logs import RunLog

SMOOTH = 2
"""Points in the trailing mean a signal must hold past its threshold."""
ENTROPY_RISE = 1.5
"""Entropy: the trailing mean ≥ ENTROPY_RISE × its running minimum, and above its mean over the first points."""
ENTROPY_BLOWUP = 3.0
"""``entropy_blowup``: the entropy's trailing mean ≥ ENTROPY_BLOWUP × its running minimum (and above its initial
level)."""
LENGTH_SHIFT = 2.0
"""Mean completion length: the trailing mean ≥ LENGTH_SHIFT × or ≤ 1/LENGTH_SHIFT × its running median."""
CLIPPED = 0.5
"""Share of completions cut at the length cap: trailing mean ≥ CLIPPED, after a value ≤ CLIPPED_FROM."""
CLIPPED_FROM = 0.2
KL_JUMP = 10.0
"""KL (|approx KL|): trailing mean ≥ KL_JUMP × its running median and ≥ KL_FLOOR."""
KL_FLOOR = 0.01
GRAD_SPIKE = 10.0
"""Gradient norm: trailing mean ≥ GRAD_SPIKE × its running median."""
FORMAT_FALL = 0.3
"""Format accuracy: trailing mean ≤ (1 − FORMAT_FALL) × its running peak, the fall significant: more than
(Z_FALL·√2 + b)·σ̂/√SMOOTH, b the peak's selection bias (:func:`.detectors.collapse.peak_bias`)."""
Z_FALL = 3.0
ZERO_STD = 0.9
"""Share of groups with zero reward std: trailing mean ≥ ZERO_STD after a point at or below ZERO_STD_FROM."""
ZERO_STD_FROM = 0.6
REWARD_FALL = 0.25
"""Reward: trailing mean below peak − REWARD_FALL·gain (floor as in the collapse rule), the fall > Z_FALL SEs."""
FIRST_POINTS = 3
"""The 'initial level' of a signal is the mean of its first FIRST_POINTS values."""

SIGNALS = ("entropy_rise", "entropy_blowup", "length_cap", "length_shift", "kl_jump", "grad_spike", "format_fall",
           "zero_std_share",
           "non_finite", "reward_fall")
"""The precursor signals, in the order of the book's table."""

SIGNAL_MEANING = {
    "entropy_rise": f"token entropy rises ≥ {ENTROPY_RISE}× its running minimum (and above its initial level)",
    "entropy_blowup": f"token entropy rises ≥ {ENTROPY_BLOWUP:g}× its running minimum (and above its initial level)",
    "length_cap": f"≥ {CLIPPED:.0%} of completions cut at the length cap (after ≤ {CLIPPED_FROM:.0%})",
    "length_shift": f"mean completion length moves ≥ {LENGTH_SHIFT}× (up or down) from its running median",
    "kl_jump": f"KL to the sampling policy ≥ {KL_JUMP:g}× its running median (and ≥ {KL_FLOOR})",
    "grad_spike": f"gradient norm ≥ {GRAD_SPIKE:g}× its running median",
    "format_fall": f"format accuracy falls ≥ {FORMAT_FALL:.0%} below its running peak (and > {Z_FALL:g} SE)",
    "zero_std_share": f"share of zero-std groups reaches {ZERO_STD} (after ≤ {ZERO_STD_FROM})",
    "non_finite": "loss, gradient norm or entropy becomes NaN or infinite after finite values",
    "reward_fall": f"reward falls {REWARD_FALL:.0%} of its gain below its running peak (and > {Z_FALL:g} SE)",
}


def _trailing(v: np.ndarray, k: int = SMOOTH) -> np.ndarray:
    """Trailing mean over the last k finite values at each index (NaN where the value itself is not finite)."""
    out = np.full(v.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(v))
    if ok.size == 0:
        return out
    vals = v[ok]
    c = np.concatenate([[0.0], np.cumsum(vals)])
    j = np.arange(vals.size)
    lo = np.maximum(0, j - k + 1)
    out[ok] = (c[j + 1] - c[lo]) / (j + 1 - lo)
    return out


def _running(v: np.ndarray, fn) -> np.ndarray:
    """fn (np.median, np.min, np.max) over the finite values strictly before each index (NaN before any)."""
    v = np.asarray(v, dtype=float)
    out = np.full(v.shape, np.nan)
    ok = np.isfinite(v)
    if fn in (np.min, np.max):
        acc = np.minimum if fn is np.min else np.maximum
        run = acc.accumulate(np.where(ok, v, np.inf if fn is np.min else -np.inf))
        out[1:] = run[:-1]
        out[~np.isfinite(out)] = np.nan
        return out
    seen: list[float] = []
    for i, x in enumerate(v):
        if seen:
            m = len(seen)
            out[i] = seen[m // 2] if m % 2 else 0.5 * (seen[m // 2 - 1] + seen[m // 2])
        if ok[i]:
            bisect.insort(seen, float(x))
    return out


def _running_median(v: np.ndarray) -> np.ndarray:
    return _running(v, np.median)


def _initial(v: np.ndarray) -> float:
    ok = v[np.isfinite(v)]
    return float(np.mean(ok[:FIRST_POINTS])) if ok.size else math.nan


def _ready(v: np.ndarray) -> np.ndarray:
    """Rows after at least FIRST_POINTS finite values of the signal."""
    return np.cumsum(np.isfinite(v)) > FIRST_POINTS


def entropy_rise(h: np.ndarray, factor: float = ENTROPY_RISE) -> np.ndarray:
    s = _trailing(h)
    low = _running(s, np.min)
    return _ready(h) & (s >= factor * low) & (s > _initial(h))


def entropy_blowup(h: np.ndarray) -> np.ndarray:
    return entropy_rise(h, ENTROPY_BLOWUP)


def length_cap(c: np.ndarray) -> np.ndarray:
    """The clipped share's trailing mean reaches CLIPPED after a value at or below CLIPPED_FROM: completions *running
    into* the cap (a run whose completions always hit a short cap is not heading anywhere)."""
    was_low = np.maximum.accumulate(np.where(np.isfinite(c), c <= CLIPPED_FROM, False))
    return was_low & (_trailing(c) >= CLIPPED)


def length_shift(L: np.ndarray) -> np.ndarray:
    s = _trailing(L)
    med = _running_median(L)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = s / med
    return _ready(L) & ((r >= LENGTH_SHIFT) | (r <= 1 / LENGTH_SHIFT))


def kl_jump(kl: np.ndarray) -> np.ndarray:
    a = np.abs(kl)
    s = _trailing(a)
    return _ready(a) & (s >= KL_JUMP * _running_median(a)) & (s >= KL_FLOOR)


def grad_spike(g: np.ndarray) -> np.ndarray:
    s = _trailing(g)
    return _ready(g) & (s >= GRAD_SPIKE * _running_median(g))


def _fall(v: np.ndarray, floor, fraction: float) -> np.ndarray:
    """Trailing mean below peak − fraction·(peak − floor), significantly (step noise of the values before).
    ``floor``: a number, an array per row (NaN: none known at that row), or None; without one, the trailing mean's
    minimum so far."""
    from .detectors.collapse import PrefixSigma, peak_bias

    s = _trailing(v)
    peak = _running(s, np.max)
    out = np.zeros(v.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(v))
    sigma_of = PrefixSigma(robust=True, small_sample=False)   # a warning, not a report: the sensitive σ̂
    for n_before, i in enumerate(ok):
        if n_before < FIRST_POINTS or not math.isfinite(peak[i]):
            continue
        base = floor[i] if isinstance(floor, np.ndarray) else floor
        if base is None or not math.isfinite(base):
            base = float(np.nanmin(s[ok[:n_before]]))
        gain = peak[i] - base
        sigma = sigma_of(v[ok[:n_before]])
        se = sigma / math.sqrt(SMOOTH)
        out[i] = gain > 0 and s[i] < peak[i] - fraction * gain and \
            peak[i] - s[i] > (Z_FALL * math.sqrt(2) + peak_bias(n_before, SMOOTH)) * se
    return out


def format_fall(f: np.ndarray) -> np.ndarray:
    return _fall(f, 0.0, FORMAT_FALL)


def reward_fall(r: np.ndarray, floor: float | None) -> np.ndarray:
    return _fall(r, floor, REWARD_FALL)


def zero_std_share(z: np.ndarray) -> np.ndarray:
    s = _trailing(z)
    was_low = np.maximum.accumulate(np.where(np.isfinite(z), z <= ZERO_STD_FROM, False))
    return was_low & (s >= ZERO_STD)


def non_finite(*series: np.ndarray) -> np.ndarray:
    """A logged value of loss / grad norm / entropy that is NaN or ±inf after that series had finite values."""
    out = None
    for v in series:
        if v is None:
            continue
        had = np.maximum.accumulate(np.isfinite(v))
        bad = np.roll(had, 1) & ~np.isfinite(v)
        bad[0] = False
        out = bad if out is None else out | bad
    return out


def crossings(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
    """Per precursor signal the log has: a boolean per logged row, True where the signal is past its threshold.

    Signals the log lacks are absent from the result (not False): a missing metric is not a quiet one.
    ``reward_bounds``: the floor of the reward fall (else the trailing mean's running minimum).
    """
    out: dict[str, np.ndarray] = {}
    get = log.diagnostic
    rules = (("entropy_rise", "entropy", entropy_rise), ("entropy_blowup", "entropy", entropy_blowup),
             ("length_cap", "clipped_ratio", length_cap),
             ("length_shift", "response_length", length_shift), ("kl_jump", "kl", kl_jump),
             ("grad_spike", "grad_norm", grad_spike), ("format_fall", "format_accuracy", format_fall),
             ("zero_std_share", "frac_reward_zero_std", zero_std_share))
    for name, concept, rule in rules:
        v = get(concept)
        if v is not None and np.isfinite(v).sum() > FIRST_POINTS:
            out[name] = np.asarray(rule(np.asarray(v, dtype=float)), dtype=bool)
    nf = non_finite(get("loss"), get("grad_norm"), get("entropy"))
    if nf is not None:
        out["non_finite"] = nf
    r = np.asarray(log.reward, dtype=float)
    out["reward_fall"] = reward_fall(r, reward_floor(r, reward_bounds))
    return out


def reward_floor(r: np.ndarray, reward_bounds: tuple[float, float] | None = None) -> np.ndarray:
    """Per row, the reward's floor as the doctor reads it causally: the declared lower bound; else 0 while every
    reward so far lies in [0, 1] (a success rate); else NaN (none known)."""
    if reward_bounds is not None:
        return np.full(r.shape, float(reward_bounds[0]))
    bad = np.isfinite(r) & ((r < 0) | (r > 1))
    return np.where(np.logical_or.accumulate(bad), np.nan, 0.0)


def first_crossing(flags: np.ndarray, start: int, stop: int) -> int | None:
    """Index of the first True in ``flags[start:stop + 1]`` (None if none)."""
    hit = np.flatnonzero(flags[max(start, 0): stop + 1])
    return int(hit[0]) + max(start, 0) if hit.size else None


WARNING_WINDOW = 3
"""A precursor counts toward the warning while it crossed within the last WARNING_WINDOW logged points."""
WARNING_ALONE = 3
"""The warning fires without a reward fall when this many other precursors are on at once."""
SUFFICIENT = ("non_finite", "length_cap", "format_fall")
"""Signals that warn on their own: each is a failure of the policy in itself (NaN, completions cut at the cap, the
format lost), not only a sign of stress. ``entropy_blowup`` was tried as one and left out: it fired on 4 of 36 healthy
development runs (an entropy near 0 triples easily) and led none of the 7 collapses."""
NOT_COUNTED = ("grad_spike",)
"""Counted only beside a reward fall, never toward the WARNING_ALONE path: on the development logs the gradient norm
spikes on 8 of 25 healthy runs (one-step spikes of 10⁵ are common in runs that never collapse)."""


def warning_flags(cross: dict[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The collapse warning per logged row and the number of precursors on at it.

    Fires when the reward has fallen significantly (``reward_fall``) while at least one other precursor crossed
    within the last :data:`WARNING_WINDOW` points, when :data:`WARNING_ALONE` other precursors are on at once
    (whatever the reward; a one-prompt reward cannot show its fall in time), or when one of the
    :data:`SUFFICIENT` signals crosses. :data:`NOT_COUNTED` signals count only beside a reward fall.
    """
    count = np.zeros(n, dtype=int)
    with_fall = np.zeros(n, dtype=int)
    for k, v in cross.items():
        if k in ("reward_fall", "entropy_blowup"):
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
            alone |= cross[k]
    return (fall & (with_fall >= 1)) | (count >= WARNING_ALONE) | alone, count


def signals_on(cross: dict[str, np.ndarray], i: int) -> list[str]:
    """The precursors that crossed within the last :data:`WARNING_WINDOW` points before row ``i`` (inclusive)."""
    lo = max(0, i - WARNING_WINDOW + 1)
    return [k for k, v in cross.items() if bool(np.any(v[lo: i + 1]))]
