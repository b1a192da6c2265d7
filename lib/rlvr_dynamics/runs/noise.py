"""Step noise of a logged reward series and the noise ceiling it puts on any fit: the one definition of both.

σ comes from first differences, σ = std(Δr)/√2 (differences cancel the slow trend). :func:`step_sigma` also has a
robust variant (the default, used to weight fits and scale detector thresholds) that ignores the few large steps
of a fast rise or a collapse; the noise ceiling 1 − σ²/Var(r) always uses the plain σ, the formula the book prints.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["step_sigma", "local_sigma", "noise_ceiling", "reward_scale", "noise_class", "NOISE_CLASSES"]

_TRIM_SD = 0.8796
"""Standard deviation of a standard normal truncated to ±1.96 (its central 95 %)."""


def step_sigma(y: np.ndarray, *, robust: bool = True) -> float:
    """σ of the step noise from first differences. ``robust`` (default): the RMS deviation of Δr from its median
    over the 95 % of steps closest to it, divided by 0.8796 (the same for Gaussian noise) and √2 — the few large
    steps of a fast rise or a collapse no longer count as noise, and discrete rewards (many equal steps, where a
    MAD would be 0) are still measured. ``robust=False``: std(Δr)/√2. Finite values only; 0 for < 3 points."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    if y.size < 3:
        return 0.0
    d = np.diff(y)
    plain = float(np.std(d, ddof=1) / math.sqrt(2.0))
    if not robust:
        return plain
    dev = np.abs(d - np.median(d))
    keep = dev <= np.quantile(dev, 0.95)
    if keep.sum() < 3:
        return plain
    trimmed = float(np.sqrt(np.mean((d[keep] - np.median(d)) ** 2))) / _TRIM_SD / math.sqrt(2.0)
    return trimmed if trimmed > 0 else plain


def local_sigma(y: np.ndarray, window: int | None = None) -> np.ndarray:
    """σ_t: std(Δr)/√2 over a centred sliding window (default max(10, n/10) steps), floored at half the global σ
    (and at 1e-12 × the reward scale), so one quiet stretch cannot take all the weight."""
    y = np.asarray(y, dtype=float)
    n = y.size
    glob = step_sigma(y)
    scale = max(float(np.ptp(y)) if n else 0.0, float(np.max(np.abs(y))) if n else 0.0, 1e-300)
    floor = max(0.5 * glob, 1e-12 * scale)
    if n < 6:
        return np.full(n, max(glob, floor))
    w = window or max(10, n // 10)
    d = np.diff(y)
    d2 = np.concatenate([[d[0]], d])   # one difference per point
    c1 = np.cumsum(np.insert(d2, 0, 0.0))
    c2 = np.cumsum(np.insert(d2 * d2, 0, 0.0))
    idx = np.arange(n)
    lo = np.clip(idx - w // 2, 0, n)
    hi = np.clip(idx + w // 2 + 1, 0, n)
    m = hi - lo
    mean = (c1[hi] - c1[lo]) / m
    var = np.maximum((c2[hi] - c2[lo]) / m - mean * mean, 0.0) * m / np.maximum(m - 1, 1)
    return np.maximum(np.sqrt(var / 2.0), floor)


def noise_ceiling(y) -> float:
    """The best R² any smooth curve can reach on a noisy series: 1 − σ²/Var(r) with the plain σ = std(Δr)/√2
    (finite values only; NaN for a constant or too short series).

    Printed beside every R² in the project: an R² target above the ceiling cannot be met by any law, so a verdict on
    it is INCONCLUSIVE, not FAIL.
    """
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    var = float(np.var(y, ddof=1)) if y.size >= 3 else 0.0
    if var <= 0.0:
        return math.nan
    sigma = step_sigma(y, robust=False)
    return 1.0 - sigma * sigma / var


def ceiling_text(c, fmt: str = ".2f") -> str:
    """The noise ceiling as a report prints it (``0.14``): ``≤ 0`` for an estimate below 0, where the step-to-step
    differences spread wider than the reward itself (anti-correlated noise; the mean alone reaches R² = 0, so the
    ceiling itself is 0); ``n/a`` when undefined (a constant or too short series)."""
    if c is None or not math.isfinite(c):
        return "n/a"
    return "≤ 0" if c <= 0 else format(c, fmt)


NOISE_CLASSES = ("smooth", "moderate", "noisy")
"""Noise classes of a reward series, from its step noise relative to its scale (:func:`noise_class`)."""
NOISE_CLASS_EDGES = (0.03, 0.15)
"""σ/scale below 0.03 is ``smooth`` (a batch of hundreds of prompts), from 0.15 up ``noisy`` (1–4 prompts per step).
Fixed 2026-12-01 with the run-doctor corpus, before any forecaster or detector was scored on it."""


def reward_scale(y, reward_bounds: tuple[float, float] | None = None) -> float:
    """The scale a reward series is judged on: the width of the declared reward bounds when given, else the spread
    between the 5th and 95th percentiles of the finite values (robust to a few outliers); at least 1e-12."""
    if reward_bounds is not None:
        return max(float(reward_bounds[1]) - float(reward_bounds[0]), 1e-12)
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    if y.size < 2:
        return 1e-12
    lo, hi = np.quantile(y, [0.05, 0.95])
    return max(float(hi - lo), 1e-12)


def noise_class(y, reward_bounds: tuple[float, float] | None = None) -> str:
    """``smooth``, ``moderate`` or ``noisy``: the robust step σ (:func:`step_sigma`) over :func:`reward_scale`,
    cut at :data:`NOISE_CLASS_EDGES`. Computable from any prefix, so a forecaster can use it at prediction time."""
    rel = step_sigma(y) / reward_scale(y, reward_bounds)
    return NOISE_CLASSES[int(np.searchsorted(NOISE_CLASS_EDGES, rel, side="right"))]


RESOLUTION_MAX = 1024
"""Rewards whose least common denominator as fractions k/n exceeds this are continuous: no resolution floor."""


FLOAT32_REL = 2.0 ** -24
"""A value stored as a 32-bit float is within this fraction of itself of the number it was (half its unit in the last
place, at most): TensorBoard event files keep 32-bit floats, so 1/6 is read back as 0.16666667163 and 31/80 (TRL's
``logging_steps = 10`` over 8 completions) as 0.38749998808."""


@functools.lru_cache(maxsize=4096)
def value_denominator(value: float) -> int | None:
    """The smallest n ≤ :data:`RESOLUTION_MAX` with ``value = k/n`` within float32's rounding
    (:data:`FLOAT32_REL`·|value|, at least 1e-9), or None. Memoised: a reward on a grid repeats a few values (the
    collapse tracker asks at every logged point).

    >>> value_denominator(0.375), value_denominator(0.16666667163372), value_denominator(0.6345501542)
    (8, 6, None)
    """
    from fractions import Fraction

    f = Fraction(float(value)).limit_denominator(RESOLUTION_MAX)
    return f.denominator if abs(float(f) - value) <= max(1e-9, FLOAT32_REL * abs(value)) else None


def resolution_samples(values) -> int | None:
    """The fewest samples a success rate with every one of ``values`` can average: the least common denominator of
    the values as fractions k/n; None for an empty input, a value outside [0, 1] or a denominator above
    :data:`RESOLUTION_MAX` (a continuous reward)."""
    n = 1
    v = np.asarray(values, dtype=float)
    if v.size == 0 or not np.all((v >= 0) & (v <= 1)):
        return None
    for x in np.unique(v):
        d = value_denominator(float(x))
        if d is None:
            return None
        n = math.lcm(n, d)
        if n > RESOLUTION_MAX:
            return None
    return n


def unit_rewards(values, reward_bounds: tuple[float, float] | None = None) -> np.ndarray:
    """The rewards as shares of their declared range, (r − lo)/(hi − lo); the values as given without bounds. A
    success rate's resolution (:func:`resolution_samples`) and Bernoulli noise (:func:`bernoulli_sigma`) are read on
    these, so that a reward of ±1 or a sum of four 0/1 terms, declared as such, reads as the success rate it is: a
    one-prompt × 8 reward of ±1 moves in steps of 2/8, which is eighths of its range."""
    v = np.asarray(values, dtype=float)
    if reward_bounds is None:
        return v
    lo, hi = float(reward_bounds[0]), float(reward_bounds[1])
    return (v - lo) / (hi - lo)


def bernoulli_sigma(p: float, samples: int | None) -> float:
    """√(p(1 − p)/n): the step noise of a success rate p over n samples; 0 when ``samples`` is None (the
    resolution floor of a reward logged on a grid of 1/n, :func:`resolution_samples`)."""
    if samples is None or samples <= 0:
        return 0.0
    p = min(max(float(p), 0.0), 1.0)
    return math.sqrt(p * (1.0 - p) / samples)


def running_resolution(values) -> np.ndarray:
    """Per value, the resolution the values up to it show (causal :func:`resolution_samples`): the least common
    denominator of those strictly between 0 and 1 (0 and 1 lie on every grid), 0 while none is, and 0 for good once a
    value lies off every grid of at most :data:`RESOLUTION_MAX` (a continuous share). A share of 8 completions
    logged 0, 0, 1/4, 5/8 reads 0, 0, 4, 8."""
    v = np.asarray(values, dtype=float)
    out = np.zeros(v.size, dtype=int)
    n = 1
    for i, x in enumerate(v):
        if 0.0 < x < 1.0:
            d = value_denominator(float(x))
            n = 0 if (n == 0 or d is None) else math.lcm(n, d)
            if n > RESOLUTION_MAX:
                n = 0
        out[i] = n if n > 1 else 0
    return out


def wilson_upper(p, samples, z: float = 2.0):
    """The Wilson score upper bound of a success rate ``p`` observed over ``samples`` trials, at ``z`` standard
    errors: (p + z²/2n + z·√(p(1 − p)/n + z²/4n²)) / (1 + z²/n). It is above 0 for p = 0 (z²/(n + z²)), which is
    the point: 0 of 8 completions is no evidence that the rate is below 20 %."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    n = np.asarray(samples, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p + z * z / (2 * n) + z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
