"""The collapse report's tests of a fall against the run's own rewards, whatever their distribution.

What they are for
    The collapse report (:mod:`.collapse`) tests a fall against the step noise as if it were Gaussian. A one-prompt
    shaped reward is not: it sits at its format reward (0.12) most steps and jumps to 2.3 when the answer is right,
    so two or three right answers make a "peak" and the baseline after them is far below half of it. These tests
    judge a fall by the run's own rewards instead: the level it fell from (:func:`level_held`), a rank test for a
    longer trailing window (:func:`rank_fall_p`), and a run-length confirmation (:func:`level_share`,
    :func:`confirm_points`). The last two need a level of :data:`LEVEL_POINTS` rewards before the fall, the first
    :data:`LEVEL_MIN_POINTS`; before that the Gaussian tests alone decide, and a reward that falls from its first
    values is judged by a rank test for a downward trend since the run's start (:func:`start_trend_p`): a noise
    estimate from those few points holds the fall itself, so the Gaussian tests see it late.

Dev evidence for the constants
    In :mod:`.collapse`'s docstring (they were set together) and the design notes (2026-12-05).
    START_FIRST_Z, the grid shown after the start and the decimal exclusion (2026-12-06, fixed on the dev part
    before the test part was scored, the dev part replayed live on the same 1,397 rows): collapses reported within
    one logged point 117 → 136 of 378 (bisection trials 72 → 79 of 234; the project's runs 3 → 15 of 59, their
    median latency 28 → 2 points: the p2-lr blow-ups fall from their first reward), collapsed runs read healthy
    96 → 83 of 399, live stops on collapsing runs: project 43 → 50 of 59, bisection 149 → 162 of 253. Healthy runs
    with a failure status 50 → 54 of 825, all four bisection trials labelled healthy by their held-out accuracy
    whose training reward fell from 0.80–0.91 to about 0.3 and stayed there; live stops on healthy runs unchanged
    but for those (48 → 52). Restarting every healthy non-bisection dev log at every offset (70,328 starts of 20
    points), starts with a collapse report 317 → 326 (0.45 % → 0.46 %), all nine on the project's own runs
    (a start at a high point, then the run's usual level). Replaying this test alone on the dev part, START_FIRST_Z
    = 4 fired at the real first row of two healthy runs (0.33, then 0.13–0.20 for 250 steps), and 6 found 13 of the
    27 project collapses that 5 finds. Without the grid shown after the start, a public one-prompt Unsloth log
    restarted at its 105th row (25/32, then its format reward 1/8 and a 49/800) was a collapse.
    The decimal exclusion was a factor 5 at first; it is a factor 25 since a later change (fixed on the dev part before
    the test part's eighth scoring): the dev logs averaged over 10 steps, as TRL's ``logging_steps = 10`` logs them
    (denominators 80, 640: one factor 5), lost both start-level tests with it. On those averaged logs (the project's,
    CS336 and shared dev runs with at least 80 rows: 55 collapses, 151 healthy runs) collapses reported within one
    logged point 3 → 14 of 55, missed 49 → 22, healthy runs with a failure status 2 → 2; restarts of the averaged
    healthy logs at every offset 20 → 23 collapse reports of 6,111 (the three on noisy SmolLM2 runs). The dev part as
    logged did not move (no run of it has such a grid).
    LEVEL_MIN_POINTS (2026-12-07, fixed on the dev part and on the design seeds 1000–1029 of
    ``bench/stress_one_prompt.py`` before the test part was scored with it): healthy one-prompt runs with an
    Unsloth-like shaped reward stopped live 6 → 2 of 180 (four falls to the format-only baseline within the first
    eleven points, after two or three right answers), on fresh seeds 3000–3029 5 → 2 of 180. The dev part replayed
    live: statuses, collapse targets and live stops unchanged but for one 15-point bisection collapse (0.75, 0.56,
    then 0: the Gaussian tests saw the fall at the 7th point, when the zeros before the window were the median;
    reported 4 → 8 points after its halving, stopped at step 8 → 11). Restarting every healthy non-bisection dev log
    at every offset (83,774 starts of 20 points), starts with a collapse report 336 → 279 (the public logs 10 → 6,
    their surrogates 20 → 9, the project's runs 169 → 154).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...runs.noise import resolution_samples

LEVEL_POINTS = 10
"""The rewards a 2-point halving is compared with: the last LEVEL_POINTS before it (:func:`confirm_points`)."""
LEVEL_MIN_POINTS = 3
"""Within the run's first LEVEL_POINTS rewards, the level a fall came from is the median of the rewards logged before
its trailing window once there are at least this many (:func:`level_held`): the smallest median that is not a mean,
as the start level m₃ and the short window's peak are (dev evidence in this module's docstring, 2026-12-07)."""
LEVEL_MAX = 40
"""… and up to this many, from the first at or above the half line, when the run held its level that long
(:func:`level_share`): ten rewards of a one-prompt reward that is low one step in three hold no low one time in
sixty, and a fall to that baseline then confirmed at the next point (dev evidence in :mod:`.collapse`)."""
CONFIRM_ALPHA = 0.025
"""Chance that the run's own rewards before the fall come that low that many times in a row (:func:`confirm_points`)."""
CONFIRM_MAX = 20
"""At most this many rewards in a row confirm a halving."""
RANK_ALPHA = 0.01
"""A halving of the adaptive (longer) trailing mean counts only when its window's rewards lie below the level's by a
one-sided Mann–Whitney test at this level (:func:`rank_fall_p`): the counts of right answers in a window of a
one-prompt reward are binomial, with tails the Gaussian test of the mean does not know."""
START_TREND_ALPHA = 0.005
"""A fall from the run's start (:func:`start_trend_p`) counts at this one-sided level; for a success rate of fewer
than START_LEVEL_SAMPLES completions a step (one or two prompts), where the trend alone decides and the first rewards
are whichever prompts came, at this level divided by the points tested so far (i − 2 at point i: the test is made
at every point of the start).
At the plain level, 2 of 100 healthy one-prompt runs at 10 % success whose first prompts happened to be easy read a
fall from the start (2026-12-07)."""
START_POINTS = 20
"""… and is looked for only within the run's first START_POINTS logged rewards, while none rose above the first 3."""
START_LEVEL_Z = 4.0
"""… or when the start level lies START_LEVEL_Z standard errors above the rewards logged after it
(:func:`start_level_z`), for a reward that averages at least START_LEVEL_SAMPLES completions a step."""
START_LEVEL_SAMPLES = 32
"""A success rate on a grid of k/n with n below this (one or two prompts a step) sits at the level of whichever
prompts were drawn: three easy prompts, then three hard ones, is its noise, not a fall; continuous rewards (no grid)
neither, as their prompts per step are unknown. Only the rank trend judges their start."""
START_FIRST_Z = 5.0
"""… or when the first reward alone lies START_FIRST_Z standard errors above the rewards logged after it, none of
them above it (same grid condition): the first update broke a model that scored (0.95, 0.42, 0.16, 0.08, 0.19, 0.30,
…), and the median of the first 3 rewards is already part of the fall. One reward is noisier than a median of three:
a stricter bound than START_LEVEL_Z (dev: 4 called the real starts of two healthy runs a collapse)."""
JUMP_LEVEL_SHARE = 0.125
"""A jump is reported at the point only when :func:`level_share` ≤ this: none of the 10 rewards before it came as
low; else the halving rule decides, one point later."""


def level_held(y: np.ndarray, i: int, w: int, half: float) -> bool:
    """The run held a level above the half line before the fall at point ``i``: the median of the
    :data:`LEVEL_POINTS` rewards before the trailing window (w points ending at i), or of all of them within the
    run's first LEVEL_POINTS points, lies at or above ``half``. A gain made of two or three reward spikes of a
    one-prompt run, which sits at its baseline in between, is no level the run held, and its end is no collapse: nor
    at the run's start (0.13, 0.15, 0.10, then three right answers 0.57, 0.57, 0.56, then 0.13 is its baseline
    again). With fewer than :data:`LEVEL_MIN_POINTS` rewards before the window there is no level to hold yet: a
    reward that falls from its first values (a learning rate too high from step 1) is judged by the other tests
    alone."""
    before = y[max(0, i - w + 1 - LEVEL_POINTS): max(0, i - w + 1)]
    return before.size < LEVEL_MIN_POINTS or float(np.median(before)) >= half


def rank_fall_p(y: np.ndarray, i: int, w: int, half: float = math.inf, start: int = 0) -> float:
    """One-sided Mann–Whitney p-value (normal approximation with the tie correction) that the w rewards of the
    trailing window ending at point ``i`` lie below the max(:data:`LEVEL_POINTS`, w) rewards before it, and, when the
    run reached ``half`` earlier, also below its longer level: up to :data:`LEVEL_MAX` rewards from the first at or
    above it and from point ``start`` on, as :func:`level_share` draws it (the larger p of the two). 0 (no test)
    while fewer than LEVEL_POINTS rewards precede the window."""
    a = max(0, i - w + 1)
    now = y[a: i + 1]
    before = y[max(0, a - max(LEVEL_POINTS, w)): a]
    if before.size < LEVEL_POINTS or now.size == 0:
        return 0.0          # no level to judge by yet
    p = _mann_whitney_below(now, before)
    longer = y[max(0, start, a - LEVEL_MAX): a]
    reached = np.flatnonzero(longer >= half)
    if reached.size and longer.size - reached[0] > before.size:
        p = max(p, _mann_whitney_below(now, longer[reached[0]:]))
    return p


def _mann_whitney_below(now: np.ndarray, before: np.ndarray) -> float:
    """One-sided Mann–Whitney p-value that ``now`` lies below ``before`` (normal approximation, tie-corrected)."""
    n1, n2 = now.size, before.size
    both = np.concatenate([now, before])
    order = np.argsort(both, kind="mergesort")
    ranks = np.empty(both.size)
    sorted_v = both[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_v, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(avg, counts)
    u = float(np.sum(ranks[:n1])) - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - float(np.sum(counts ** 3 - counts)) / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (u - mu + 0.5) / math.sqrt(var)       # small U = the window below the level
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def level_share(y: np.ndarray, i: int, now: int, sigma: float, half: float, start: int = 0) -> tuple[float, int]:
    """``(p, L)``: p = (b + ½)/(L + 1) (Krichevsky–Trofimov), the share of the L rewards of the level a fall came from
    that were already as low as the rewards since it, b of L. The level: the :data:`LEVEL_POINTS` rewards before the
    stretch of rewards below the half line that holds point ``i`` (the halving, or the jump), or, when the run held
    its level longer, up to :data:`LEVEL_MAX` of them from the first at or above the half line and from point
    ``start`` on (the climb to the level, below the line, is not the level, nor a fall the run recovered from
    before ``start``); "as low": at most σ̂ above the highest reward below the line from ``i``
    to ``now``. (0, 0) while fewer than LEVEL_POINTS rewards precede the stretch (no level to judge by: k = 2 and the
    jump stand, as under the Gaussian tests alone). The chance, judged by the run's own rewards whatever their
    distribution, that one more reward of the level it fell from comes that low."""
    j = i if y[i] < half else i + 1
    while j > 0 and y[j - 1] < half:
        j -= 1
    before = y[max(0, j - LEVEL_POINTS): j]
    if before.size < LEVEL_POINTS:
        return 0.0, 0       # no level to judge by yet: the Gaussian tests decide, as within the first points
    longer = y[max(0, start, j - LEVEL_MAX): j]
    reached = np.flatnonzero(longer >= half)
    if reached.size and longer.size - reached[0] > LEVEL_POINTS:
        before = longer[reached[0]:]
    since = y[i: now + 1]
    since = since[since < half]
    low = (float(np.max(since)) if since.size else half) + sigma
    return (float(np.sum(before <= low)) + 0.5) / (before.size + 1.0), int(before.size)


def confirm_points(p: float, n: int = LEVEL_POINTS) -> int:
    """Rewards in a row below the half line (the halving point first) that confirm a halving of the 2-point mean:
    the smallest k ≥ 2 with p^k ≤ CONFIRM_ALPHA·LEVEL_POINTS/n, p from :func:`level_share` on a level of n rewards.
    A run-length test against the run's own rewards: a level the run held, or a rise it made, lies above a fall to
    the floor, p ≤ 3/22 and k = 2 (the halving point and the next, the rule for a Gaussian reward); a one-prompt
    shaped reward falls back to the baseline it visits every other step, p ≈ ½ and k = 6. The level α is for a
    stretch of LEVEL_POINTS rewards: a run that held its level n > LEVEL_POINTS rewards had n/LEVEL_POINTS times as
    many chances to come that low that often by chance (a one-prompt reward low one step in four comes low four
    steps in a row about once in 250 steps), and its longer level gives p closely enough that a fall to a new low
    still confirms at the next point (b = 0 of 40: p = 1/82)."""
    if p >= 1.0:
        return CONFIRM_MAX
    if p <= 0.0:
        return 2
    alpha = CONFIRM_ALPHA * LEVEL_POINTS / max(n, LEVEL_POINTS)
    return int(min(CONFIRM_MAX, max(2, math.ceil(math.log(alpha) / math.log(p) - 1e-9))))


def start_trend_p(y: np.ndarray) -> float:
    """One-sided p-value of the Mann–Kendall test that the rewards ``y`` (the run's first ones) trend down: the
    statistic S = Σ_{a<b} sign(y_b − y_a), its variance n(n−1)(2n+5)/18 less the ties' share, a continuity
    correction of 1, and the normal tail (conservative for few points: 5 rewards falling in a row give 0.014 where
    the exact value is 1/120). Distribution-free under exchangeable noise: a run's own rewards in a random order
    trend this much down with probability p, whatever their distribution. 1 for fewer than 4 rewards."""
    y = np.asarray(y, dtype=float)
    n = y.size
    if n < 4:
        return 1.0
    s = float(np.sum(np.triu(np.sign(y[None, :] - y[:, None]), 1)))
    _, ties = np.unique(y, return_counts=True)
    var = (n * (n - 1) * (2 * n + 5) - float(np.sum(ties * (ties - 1) * (2 * ties + 5)))) / 18.0
    if var <= 0 or s >= 0:
        return 1.0
    z = (s + 1.0) / math.sqrt(var)
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def start_level_z(y: np.ndarray, i: int, level: float, sigma_floor: float = 0.0, first: int = 3) -> float:
    """How many standard errors the start level (m₃, the median of the first ``first`` = 3 rewards, or the first
    reward alone for ``first`` = 1) lies above the mean of the rewards logged after them, up to point ``i``:
    ``(level − ȳ_B) / (σ̂_B·√(1/first + 1/n_B))``, σ̂_B the standard deviation of those n_B rewards ×
    :func:`small_sample_factor` (the noise of the run *after* its fall: the prefix's σ̂ holds the fall itself), at
    least ``sigma_floor`` (the rewards' resolution, :mod:`.collapse`). A two-sample test of the start against what
    followed it, one point at a time; −∞ before 2 rewards follow the start."""
    after = y[first: i + 1]
    if after.size < 2:
        return -math.inf
    sigma = max(float(np.std(after, ddof=1)) * small_sample_factor(after.size), sigma_floor)
    if sigma <= 0:
        return math.inf if level > float(np.mean(after)) else -math.inf
    return (level - float(np.mean(after))) / (sigma * math.sqrt(1 / first + 1 / after.size))


def fall_from_start(y: np.ndarray, i: int, floor: float, sigma_floor: float = 0.0,
                    samples: int | None = None, scale: tuple[float, float] = (0.0, 1.0)
                    ) -> tuple[float, float, float, int] | None:
    """A fall from the run's start at point i (:mod:`.collapse`'s docstring): the 2-point mean below the half line
    ``floor + ½·(m₃ − floor)`` of the start level m₃ (the median of the first 3 rewards), and either every reward so
    far trending down by :func:`start_trend_p` at :data:`START_TREND_ALPHA`, or the start level
    :data:`START_LEVEL_Z` standard errors above the rewards after it (:func:`start_level_z`; a noisy fall whose
    rewards do not fall in order), the latter only for rewards on a grid of ``samples`` ≥ :data:`START_LEVEL_SAMPLES`
    completions a step, shown by the rewards after the start (:func:`grid_shown`). On such a grid the first reward alone
    is a start level too, when no reward since rose above it, the 2-point mean is below half of it and it lies
    :data:`START_FIRST_Z` standard errors above the rewards after it (a model broken by its first update). Returns
    (start level, half line, 2-point mean, index of the start level's reward), or None when it does not hold.
    ``scale``: (lo, width) of the declared bounds; the grid is read on (y − lo)/width
    (:func:`rlvr_dynamics.runs.noise.unit_rewards`)."""
    value = float(y[i - 1] + y[i]) / 2
    share = (y[: i + 1] - scale[0]) / scale[1]
    level = float(np.median(y[:3]))
    half = floor + 0.5 * (level - floor)
    grid = on_completion_grid(grid_shown(share[3:], samples))
    # one or two prompts a step: the trend alone decides, tested at every point of the start, and the first rewards
    # are whichever prompts came: its level is shared among the points tested so far (Bonferroni)
    alpha = START_TREND_ALPHA / max(1, i - 2) if few_prompts(samples) else START_TREND_ALPHA
    if level > floor and value < half and (
            (grid and start_level_z(y, i, level, sigma_floor) >= START_LEVEL_Z)
            or start_trend_p(y[: i + 1]) <= alpha):
        return level, half, value, int(np.argsort(y[:3], kind="stable")[1])
    first = float(y[0])
    half = floor + 0.5 * (first - floor)
    if first > floor and value < half and float(np.max(y[1: i + 1])) <= first and \
            on_completion_grid(grid_shown(share[1:], samples)) and \
            start_level_z(y, i, first, sigma_floor, first=1) >= START_FIRST_Z:
        return first, half, value, 0
    return None


def few_prompts(samples: int | None) -> bool:
    """A success rate of fewer than :data:`START_LEVEL_SAMPLES` completions a step (``samples``: the rewards' least
    common denominator), not decimals (a denominator with a factor 5: 0.45 is a rounded number): one or two prompts a
    step, whose first rewards are whichever prompts came."""
    return samples is not None and samples < START_LEVEL_SAMPLES and samples % 5 != 0


def grid_shown(after: np.ndarray, samples: int | None) -> int | None:
    """The resolution that the rewards after the start show, which the test's noise floor relies on: the least
    common denominator of those strictly between 0 and 1 (0 and 1 lie on every grid), or ``samples`` (every reward
    so far) when none is. A one-prompt shaped reward that scored 25/32 once and then its format reward 1/8 three
    times is on a grid of 32 only through its first value: the rewards after it show eighths."""
    inner = after[(after > 0.0) & (after < 1.0)]
    return samples if inner.size == 0 else resolution_samples(inner)


def on_completion_grid(samples: int | None) -> bool:
    """The rewards are success rates on a grid of k/n with n ≥ :data:`START_LEVEL_SAMPLES` completions a step
    (``samples``: their least common denominator, :func:`rlvr_dynamics.runs.noise.resolution_samples`). A
    denominator with a factor 25 is what decimal numbers leave, not a count of completions: a reward rounded to two
    decimals (0.88 = 22/25, 0.38 = 19/50: lcm 50) or three (lcm 1000 = 8·125), or a shaped reward of decimal parts
    (0.06125 = 49/800). One factor 5 is a count: TRL's ``logging_steps = 10`` averages 10 steps of 8 completions into
    eightieths. Group sizes of 25 (or 5 averaged over 5 steps) lose the test with the decimals; the rank trend still
    judges their start."""
    return samples is not None and samples >= START_LEVEL_SAMPLES and samples % 25 != 0


@functools.lru_cache(maxsize=256)
def small_sample_factor(differences: int) -> float:
    """``t₀.₉₇₅(k − 1) / z₀.₉₇₅`` for k first differences (1 for k ≥ 200; the σ̂ of 2 points is not used)."""
    if differences >= 200:
        return 1.0
    from ..._quantiles import t_quantile   # no scipy import on the path of `rlvr-dynamics fit`

    return float(t_quantile(0.975, max(differences - 1, 1)) / 1.959963984540054)
