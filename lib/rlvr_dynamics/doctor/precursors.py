"""The logged signals that can lead a GRPO collapse, each with a causal crossing rule.

A reward collapse in GRPO is usually the last of several things to go: the policy's entropy rises (or the
completions hit the length cap), the logged KL (to the reference or the sampling policy) jumps, the gradient norm
spikes, the format reward falls, more and more groups score all-equal (zero advantage), and the reward follows. Each
function below turns one logged signal into the logged points where it *crosses* its threshold, using only the points
up to each one (so the live doctor sees the same crossings as ``rlvr-dynamics fit``). The book's table "which logged
metric warns first of a GRPO collapse" is :func:`precursor_leads` over the labelled development logs.

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
LENGTH_SHIFT = 2.5
"""Mean completion length: the trailing mean ≥ LENGTH_SHIFT × or ≤ 1/LENGTH_SHIFT × its running median. Raised from
2.0 on 2026-12-04 (issue 35: each precursor ≤ 10 % false alarms on the dev part's real LLM logs): at 2.0 it crossed
on 5 of 40 healthy real logs (12 %), at 2.5 on 3 of 40 (8 %); on the whole dev part 6/632 → 3/632, and the collapse
warning led 66 of 378 dev collapses instead of 69."""
CLIPPED = 0.5
"""Share of completions cut at the length cap: its smoothing ≥ CLIPPED, after a level ≤ CLIPPED_FROM
(:func:`length_cap`)."""
CLIPPED_FROM = 0.2
CLIPPED_Z = 2.0
"""z of the Wilson upper bound that a low clipped share on a grid of few completions must lie under (as Z_WINDOW of
:mod:`.detectors.causal`)."""
KL_JUMP = 10.0
"""KL (|approx KL|): trailing mean ≥ KL_JUMP × its running median and ≥ KL_FLOOR."""
KL_FLOOR = 0.01
RECENT = 20
"""The KL jump is measured against the median of this many values before it."""
GRAD_SPIKE = 10.0
"""Gradient norm: trailing mean ≥ GRAD_SPIKE × its running median. Raised from 5 on 2026-12-04 (issue 35, as
:data:`LENGTH_SHIFT`): at 5 it crossed on 4 of 37 healthy real logs (11 %), at 10 on 3 of 37 (8 %); it led 1 of the
7 real collapses at 5 and none at 10 (it counts only beside a reward fall: :data:`~.warning_rule.NOT_COUNTED`)."""
FORMAT_FALL = 0.3
"""Format accuracy: trailing mean ≤ (1 − FORMAT_FALL) × its running peak, the fall significant: more than
(Z_FALL·√2 + b)·σ̂/√SMOOTH, b the peak's selection bias (:func:`.detectors.prefix_noise.peak_bias`)."""
Z_FALL = 3.0
ZERO_STD = 0.9
"""Share of groups with zero reward std: trailing mean ≥ ZERO_STD after a point at or below ZERO_STD_FROM."""
ZERO_STD_FROM = 0.6
REWARD_FALL = 0.4
"""Reward: trailing mean below peak − REWARD_FALL·gain (floor as in the collapse rule), the fall > Z_FALL SEs. Raised
from 0.25 on 2026-12-06 (issue 35, as :data:`LENGTH_SHIFT`): it crossed on 120 of 840 healthy dev runs (14 %), at 0.4
on 74 (9 %); the dev collapses it crossed on 120 → 112 of 378, the warning led 64 of them either way."""
FIRST_POINTS = 3
"""The 'initial level' of a signal is the mean of its first FIRST_POINTS values."""

SIGNALS = ("entropy_rise", "entropy_blowup", "length_cap", "length_shift", "kl_jump", "grad_spike", "format_fall",
           "zero_std_share",
           "non_finite", "reward_fall")
"""The precursor signals, in the order of the book's table."""

SIGNAL_MEANING = {
    "entropy_rise": f"token entropy, smoothed on its noise window, rises ≥ {ENTROPY_RISE}× its running minimum "
                    "(and above its initial level)",
    "entropy_blowup": f"token entropy, smoothed on its noise window, rises ≥ {ENTROPY_BLOWUP:g}× its running minimum "
                      "(and above its initial level)",
    "length_cap": f"share of completions cut at the length cap, smoothed on its noise window, reaches {CLIPPED:.0%} "
                  f"after a level ≤ {CLIPPED_FROM:.0%} (its Wilson bound, when a step has few completions)",
    "length_shift": f"mean completion length moves ≥ {LENGTH_SHIFT}× (up or down) from its running median",
    "kl_jump": f"logged KL (to the reference or the sampling policy) ≥ {KL_JUMP:g}× its median over the {RECENT} "
               f"values before (and ≥ {KL_FLOOR}), on {SMOOTH} points in a row",
    "grad_spike": f"gradient norm ≥ {GRAD_SPIKE:g}× its running median (non-zero norms) and beyond its own noise, on "
                  f"{SMOOTH} points in a row",
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
    """The entropy, smoothed on its noise window (:mod:`.detectors.causal`, effect (factor − 1) × its running
    median: a one-prompt log's entropy moves ±30 % from step to step), at least ``factor`` × the running minimum of
    that smoothing lifted by its noise bias b·σ/√k (the minimum of many noisy means is biased low), and above the
    mean of its first values."""
    from .detectors.causal import smoothed
    from .detectors.prefix_noise import peak_bias

    out = np.zeros(h.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(h))
    if ok.size <= FIRST_POINTS:
        return out
    v = h[ok]
    med = _running(v, np.median)
    med[0] = v[0]
    s, k, sig = smoothed(h, lambda x, sg: (factor - 1.0) * np.abs(med))
    full = np.arange(1, v.size + 1) >= k
    low = np.minimum.accumulate(np.where(full, s, np.inf))
    bias = np.array([peak_bias(j + 1, int(kj)) for j, kj in enumerate(k)]) * np.nan_to_num(sig) / np.sqrt(k)
    hit = full & np.isfinite(low) & (s >= factor * (low + bias)) & (s > _initial(h)) & \
        (np.arange(v.size) >= FIRST_POINTS)
    out[ok] = hit
    return out


def entropy_blowup(h: np.ndarray) -> np.ndarray:
    return entropy_rise(h, ENTROPY_BLOWUP)


def length_cap(c: np.ndarray) -> np.ndarray:
    """The clipped share, smoothed on its noise window (:mod:`.detectors.causal`, effect CLIPPED − CLIPPED_FROM, as
    :func:`zero_std_share`), reaches CLIPPED after the smoothed share was at or below CLIPPED_FROM: completions
    *running into* the cap (a run whose completions always hit a short cap is not heading anywhere).

    On a share of a few completions (:func:`~rlvr_dynamics.runs.noise.running_resolution`: n a step, the grid its
    values show so far) the low level counts only when its Wilson upper bound at :data:`CLIPPED_Z` over the m·n
    completions of its window lies at or below CLIPPED_FROM: one step with 0 of 8 completions cut says little about
    the rate (bound 33 %). A continuous share, or one that has shown no value strictly between 0 and 1, is taken as
    exact. Evidence (2026-12-06, the development part): the 2-point trailing mean after any single value ≤ 20 %
    crossed on 2 of the 4 healthy noisy SmolLM2 runs (1 prompt × 8 completions, a share swinging 0–0.75 from step to
    step while the answer format is learnt), this rule on none; it crosses ahead of the halving on 49 of 371
    development collapses instead of 54, and the warning it feeds leads 60 instead of 62 (two tiny-model blow-ups
    whose share jumps from 0 to 0.66 at their second step: their σ is not known before 8 values)."""
    from ..runs.noise import running_resolution, wilson_upper
    from .detectors.causal import smoothed

    out = np.zeros(c.shape, dtype=bool)
    ok = np.isfinite(c)
    if ok.sum() <= FIRST_POINTS:
        return out
    v = c[ok]
    s, k, _ = smoothed(c, lambda x, sig: np.full(x.size, CLIPPED - CLIPPED_FROM))
    m = np.minimum(k, np.arange(1, v.size + 1))
    n = running_resolution(v)
    was_low = np.zeros(v.size, dtype=bool)
    for grid in np.unique(n):        # each row reads every earlier low with the grid it knows (a few distinct n)
        low = s <= CLIPPED_FROM if grid == 0 else wilson_upper(s, m * grid, CLIPPED_Z) <= CLIPPED_FROM
        at = n == grid
        was_low[at] = np.maximum.accumulate(low)[at]
    out[np.flatnonzero(ok)] = was_low & (s >= CLIPPED)
    return out


def length_shift(L: np.ndarray) -> np.ndarray:
    s = _trailing(L)
    med = _running_median(L)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = s / med
    return _ready(L) & ((r >= LENGTH_SHIFT) | (r <= 1 / LENGTH_SHIFT))


def _recent_median(v: np.ndarray, window: int = RECENT) -> np.ndarray:
    """Median of the last ``window`` finite values strictly before each index (NaN before any)."""
    out = np.full(v.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(v))
    vals = v[ok]
    for j in range(1, min(ok.size, window + 1)):
        out[ok[j]] = float(np.median(vals[:j]))
    if ok.size > window:                # full windows at once (the same medians)
        windows = np.lib.stride_tricks.sliding_window_view(vals[:-1], window)
        out[ok[window:]] = np.median(windows, axis=1)
    return out


def _trailing_min(v: np.ndarray, k: int = SMOOTH) -> np.ndarray:
    """Smallest of the last k finite values at each index (NaN where the value itself is not finite)."""
    out = np.full(v.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(v))
    vals = v[ok]
    for j in range(ok.size):
        out[ok[j]] = float(np.min(vals[max(0, j - k + 1):j + 1]))
    return out


def kl_jump(kl: np.ndarray) -> np.ndarray:
    """Both of the last SMOOTH values of |KL| at least KL_JUMP × the median of the RECENT values before them (a jump
    against the recent level: a KL that grows steadily from 0, as with β > 0, is not one) and ≥ KL_FLOOR."""
    a = np.abs(kl)
    s = _trailing_min(a)
    return _ready(a) & (s >= KL_JUMP * _recent_median(a)) & (s >= KL_FLOOR)


def grad_spike(g: np.ndarray) -> np.ndarray:
    """Both of the last SMOOTH gradient norms at least GRAD_SPIKE × the running median of the non-zero norms before,
    and above it by more than the norm's own noise: in log space, (Z_FALL + b)·σ of log g (robust step noise of the
    values before, b the selection bias of the largest of n pairs). One-step spikes of 10⁵ are common in healthy
    runs, and a one-prompt run's norm is heavy-tailed; a sustained spike beyond its noise is not. A step whose
    groups all scored the same has a zero gradient and carried no update: zeros are left out."""
    from .detectors.causal import causal_sigma
    from .detectors.prefix_noise import peak_bias

    g = np.asarray(g, dtype=float)
    out = np.zeros(g.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(g) & (g > 0))
    if ok.size <= FIRST_POINTS:
        return out
    x = np.log(g[ok])
    sig = np.concatenate([[np.nan], causal_sigma(x)[:-1]])      # the noise of the values before each one
    med = _running(x, np.median)
    low2 = np.minimum(x, np.r_[x[0], x[:-1]])
    bias = np.array([peak_bias(j + 1, SMOOTH) for j in range(x.size)])
    margin = np.maximum(math.log(GRAD_SPIKE), (Z_FALL + bias) * np.nan_to_num(sig, nan=np.inf))
    hit = (np.arange(x.size) >= FIRST_POINTS) & np.isfinite(med) & (low2 >= med + margin)
    out[ok] = hit
    return out


def _fall(v: np.ndarray, floor, fraction: float) -> np.ndarray:
    """The trailing mean below peak − fraction·(peak − floor), significantly, on the run's own noise window.

    Window (per row): the noise window of :mod:`.detectors.causal` for an effect of fraction·gain,
    ``k = clip(⌈(Z_WINDOW·σ̂/(fraction·gain))²⌉, SMOOTH, K_MAX)``, σ̂ the plain step noise std(Δ)/√2 of the values
    before the row (a heavy-tailed one-prompt reward's spikes are its noise, so the robust σ̂ would understate it);
    the peak is the running maximum of that trailing mean over full windows, and the fall must exceed
    (Z_FALL·√2 + b)·σ̂/√k, b the peak's selection bias (:func:`.detectors.prefix_noise.peak_bias`).
    ``floor``: a number, an array per row (NaN: none known at that row), or None; without one, the smallest
    trailing mean so far."""
    from .detectors.causal import K_MAX, Z_WINDOW
    from .detectors.prefix_noise import PrefixSigma, peak_bias

    out = np.zeros(v.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(v))
    x = v[ok]
    n = x.size
    if n <= FIRST_POINTS:
        return out
    # every quantity per row j at once (one pass per distinct window k, not one per row): the same sums and
    # comparisons as a row-by-row loop, so the flags are identical
    c = np.concatenate([[0.0], np.cumsum(x)])
    j = np.arange(n)
    s2 = (c[j + 1] - c[np.maximum(0, j + 1 - SMOOTH)]) / np.minimum(j + 1, SMOOTH)
    base_min = np.concatenate([[math.inf], np.minimum.accumulate(s2)[:-1]])      # min of s2 before row j
    if isinstance(floor, np.ndarray):
        base = np.asarray(floor, dtype=float)[ok]
    else:
        base = np.full(n, math.nan if floor is None else float(floor))
    base = np.where(np.isfinite(base), base, base_min)
    sigma_of = PrefixSigma(robust=False, small_sample=False)
    sigma = np.zeros(n)
    for jj in range(FIRST_POINTS, n):                   # σ̂ of the values before each row, on its schedule
        sigma[jj] = sigma_of(x[:jj])
    top = np.maximum.accumulate(_full_trail_means(c, SMOOTH))       # top[j - SMOOTH + 1]: the peak up to row j
    top_j = np.full(n, -math.inf)
    top_j[SMOOTH - 1:] = top
    gain = top_j - base
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = np.ceil((Z_WINDOW * sigma / (fraction * gain)) ** 2)
    k = np.where((gain > 0) & (sigma > 0), np.minimum(K_MAX, np.maximum(SMOOTH, k)), SMOOTH).astype(int)
    rows = (j >= FIRST_POINTS) & (j + 1 >= 2 * k)
    for kk in np.unique(k[rows]):
        at = np.flatnonzero(rows & (k == kk))
        means = _full_trail_means(c, int(kk))              # means[m]: the mean of x[m … m + k − 1]
        peak = np.maximum.accumulate(means)
        pk, now = peak[at - kk], means[at - kk + 1]
        gain_k = pk - base[at]
        se = sigma[at] / math.sqrt(kk)
        cand = (gain_k > 0) & (now < pk - fraction * gain_k)
        for a, p_, w_, s_ in zip(at[cand], pk[cand], now[cand], se[cand]):
            out[ok[a]] = p_ - w_ > (Z_FALL * math.sqrt(2) + peak_bias(int(a), int(kk))) * s_
    return out


def _full_trail_means(c: np.ndarray, k: int) -> np.ndarray:
    """Every full trailing mean of k values (cumulative sums ``c``): element m is the mean of values m … m + k − 1."""
    return (c[k:] - c[:-k]) / k


def format_fall(f: np.ndarray) -> np.ndarray:
    return _fall(f, 0.0, FORMAT_FALL)


def reward_fall(r: np.ndarray, floor, fraction: float = REWARD_FALL) -> np.ndarray:
    """Rows where the reward's trailing mean has fallen ``fraction`` (default :data:`REWARD_FALL`) of its gain below
    its running peak, significantly (:func:`_fall`)."""
    return _fall(r, floor, fraction)


def zero_std_share(z: np.ndarray, near_top: np.ndarray | None = None) -> np.ndarray:
    """The share of zero-std groups, smoothed on its noise window (:mod:`.detectors.causal`, effect
    ZERO_STD − ZERO_STD_FROM: a one-prompt log's share is 0 or 1 at each step, so two all-equal groups in a row are
    noise), reaches ZERO_STD after the smoothed share was at or below ZERO_STD_FROM, on rows where the smoothed reward
    lies in the lower half of its range (``near_top`` False there: most all-equal groups are then all-failed ones; a
    near-solved task's groups all score 1, which is not a collapse)."""
    from .detectors.causal import smoothed

    out = np.zeros(z.shape, dtype=bool)
    ok = np.isfinite(z)
    if ok.sum() <= FIRST_POINTS:
        return out
    s, _, _ = smoothed(z, lambda v, sig: np.full(v.size, ZERO_STD - ZERO_STD_FROM))
    was_low = np.maximum.accumulate(s <= ZERO_STD_FROM)
    hit = was_low & (s >= ZERO_STD)
    out[np.flatnonzero(ok)] = hit
    if near_top is not None:
        out &= ~near_top
    return out


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
            v = np.asarray(v, dtype=float)
            if name == "zero_std_share":
                flags = zero_std_share(v, _upper_half(log, reward_bounds))
            else:
                flags = rule(v)
            out[name] = np.asarray(flags, dtype=bool)
    nf = non_finite(get("loss"), get("grad_norm"), get("entropy"))
    if nf is not None:
        out["non_finite"] = nf
    r = np.asarray(log.reward, dtype=float)
    out["reward_fall"] = reward_fall(r, reward_floor(r, reward_bounds))
    out[RISING] = reward_rising(log)
    return out


RISING = "reward_rising"
"""Not a precursor: the key of :func:`crossings` that holds :func:`reward_rising` (the gate of the SUFFICIENT
signals in :func:`~.warning_rule.warning_flags`)."""
RISING_T = 2.0
RISING_MIN = 10
"""The reward is rising at a row when the t-statistic of its least-squares slope over the trailing
max(RISING_MIN, k) reward rows exceeds RISING_T (k: the noise window for an effect of 0.1 × its running range)."""


def reward_rising(log: RunLog) -> np.ndarray:
    """Rows where the reward still rises significantly (:data:`RISING_MIN`, causal)."""
    from .detectors.causal import on_rows, trailing_slope_t, causal_sigma, noise_window

    r = np.asarray(log.reward, dtype=float)
    v = r[np.isfinite(r)]
    if v.size <= FIRST_POINTS:
        return np.zeros(r.shape, dtype=bool)
    rng = np.maximum.accumulate(v) - np.minimum.accumulate(v)
    k = np.maximum(noise_window(causal_sigma(v), 0.1 * rng), RISING_MIN)
    t = trailing_slope_t(v, k)
    return on_rows(log, r, (t > RISING_T).astype(float)) > 0.5


def _upper_half(log: RunLog, reward_bounds) -> np.ndarray:
    """Rows where the reward, smoothed on the noise window of :mod:`.detectors.causal`, lies in the upper half of
    its range: the declared bounds, else (0, 1) while every reward so far is in [0, 1], else its running min–max."""
    from .detectors.causal import forward_fill, smoothed

    r = np.asarray(log.reward, dtype=float)
    ok = np.isfinite(r)
    out = np.zeros(r.shape, dtype=bool)
    if ok.sum() <= FIRST_POINTS:
        return out
    y = r[ok]
    sm, _, _ = smoothed(r, lambda v, sig: np.full(v.size, 0.1 * max(float(np.ptp(v)), 1e-12)))
    floor = reward_floor(r, reward_bounds)[ok]
    if reward_bounds is not None:
        mid = np.full(y.size, 0.5 * (reward_bounds[0] + reward_bounds[1]))
    else:
        lo, hi = np.minimum.accumulate(y), np.maximum.accumulate(y)
        mid = np.where(np.isfinite(floor), 0.5, 0.5 * (lo + hi))
    vals = np.zeros(r.shape)
    vals[ok] = sm >= mid
    return forward_fill(np.where(ok, vals, np.nan)) > 0.5


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
