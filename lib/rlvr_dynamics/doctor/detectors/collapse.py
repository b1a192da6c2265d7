"""Reward collapse, reported at the logged point where it happens.

What it detects
    The training reward losing at least half of what it had gained: a short trailing mean of the reward below
    ``floor + ½·(peak − floor)``, the peak being the running maximum of that trailing mean.

Why it matters in GRPO
    A collapsed GRPO run rarely comes back: once every group scores the same, the group-normalised advantages are
    zero and the policy gradient vanishes (P1's advantage degeneracy), while entropy, length and KL have usually run
    away already. Every step trained after it is compute lost, so the report must come at the point itself, not
    after a smoothing window has filled.

Signals
    The training reward only (its step noise σ, the lower reward bound when known, else 0 for a reward never below 0).

Rule (causal: the decision at a logged point uses only the points up to it, and the next one for a confirmation)
    * σ̂: the robust step noise (:func:`rlvr_dynamics.runs.noise.step_sigma`; the plain std(Δr)/√2 for the adaptive
      window below, whose mean a heavy-tailed reward's spikes do move) of the rewards *before* the point (the fall
      itself never inflates the noise it is judged against), at least their standard deviation while there are fewer
      than SHORT_PREFIX of them, times ``t₀.₉₇₅(k−1)/1.96`` for k first differences (a noise estimate from few points is
      uncertain: ×2.2 from 3 differences, ×1.15 from 10). For a reward in [0, 1], or one read as its share of a declared
      range (r − lo)/(hi − lo), it is at least ``(hi − lo)·√(p̄(1 − p̄)/n)`` (:meth:`CollapseTracker.resolution_sigma`),
      n the least common denominator of the shares before the point as fractions k/n (n ≤ RESOLUTION_MAX, else no floor)
      and p̄ their mean: eighths may be the success rate of 8 completions, with that much Bernoulli noise however often
      a value repeats (one prompt × 8 at 10 % success logs 0.125 three times, then 0: with σ̂ = 0 that was a "collapse";
      a ±1 reward declared as such, −0.75 and −1).
    * Floor: the lower reward bound (declared, or 0 while no reward so far lies below 0: a success rate, or a sum of
      terms that are never negative such as a format and a correctness reward of 1 each); else the minimum of the
      trailing mean up to the peak.
    * The peak is the largest of about m/w independent trailing means (m points so far), so noise alone lifts it
      by about ``b = √(2·ln(m/w))`` of their SEs σ̂/√w (the expected maximum of m/w normal values): every test
      against the peak adds b.
    * Window ``w = clip(⌈((Z_DROP·√2 + b)·σ̂ / (G/2))²⌉, 2, W_MAX)``, ``G = peak − floor`` so far: the shortest
      trailing mean on which a halving is significant (2 points when the gain is large against the noise).
    * Armed while the gain is significant: ``G > (Z_GAIN + b)·σ̂/√w``. On the adaptive window the half line is drawn
      from the peak less that lift, ``floor + ½·(G − b·σ̂/√w)``: the level the run reached, not its luckiest mean.
    * Two trailing means are tested, each against its own running peak: the shortest (w = 2; its peak is the
      running maximum of 3-point medians, so that one spike of a heavy-tailed reward is not a level) and the
      adaptive one when it is longer than 2 and full (its peak from such windows only); either can report.
    * **Confirmed halving**: the trailing mean at point t is below ``floor + G/2``, the fall from the peak is
      significant (``peak − S_t > (Z_DROP·√2 + b + b_t)·σ̂/√w``; b_t = √(2·ln(k/w)) on the adaptive window, k points
      since the peak: its first mean to pass is the lowest of k/w) and the next point is below it; reported at t + 1.
    * **Judged by the run's own rewards too** (2026-12-05: the Gaussian tests above called the baseline
      of a one-prompt shaped reward, after two or three right answers, a collapse):

      - the run must have *held a level* above the half line: the median of the LEVEL_POINTS rewards before the
        trailing window at or above it, within the run's first LEVEL_POINTS points the median of all of them once
        there are LEVEL_MIN_POINTS (:func:`level_held`; 2026-12-07: three right answers of a one-prompt shaped
        reward at its 4th–6th steps, then its baseline, read as a collapse from a level of three rewards);
      - a halving of the adaptive window must also lie below that level by a one-sided Mann–Whitney test at
        RANK_ALPHA (:func:`rank_fall_p`), and below the run's longer level too, drawn as for the confirmation
        below (2026-12-07: a cluster of six right answers of a one-prompt run, then its usual rewards, read as a
        level that collapsed when compared with the ten rewards before the window, the cluster itself);
      - a halving of the 2-point mean is confirmed by k rewards in a row below the line, the halving point first,
        k the smallest k ≥ 2 with p^k ≤ CONFIRM_ALPHA·LEVEL_POINTS/L, p the share of the level's L rewards that were
        already as low (:func:`level_share`, :func:`confirm_points`): k = 2, the next point, when at most one in ten
        was; a baseline the run visited every other step needs 6. The level is the LEVEL_POINTS rewards before the
        fall, or up to LEVEL_MAX of them from the first at or above the half line when the run held its level that
        long (never from before a recovery): ten rewards of a one-prompt level can miss its lows by chance, and its
        n/10 times as many chances to come low that often are paid for in α (2026-12-06). While k > 2 a reward
        above the line clears it only when the 2-point mean is back above the line too;
      - a jump needs that none of the level's rewards came as low (JUMP_LEVEL_SHARE).

      The last two need a level of LEVEL_POINTS rewards to judge by: before the run has logged that many rewards
      before the fall, the Gaussian tests and the level held decide (changed after the test part was scored,
      2026-12-05: the 15-point bisection trials fall within their first points).
    * **Jump**: with at least JUMP_MIN_POINTS rewards before it, a point below ``floor + G/2`` that lies
      ``Z_JUMP·σ̂·√(1 + 1/w)`` or more below the trailing mean before it, a fall larger than JUMP_OVER_LARGEST ×
      the largest one-step fall before it; reported at the point itself.
    * **A fall from the start** (a learning rate too high from step 1 on a model that already scores): while no
      reward rose above the first three and within the first START_POINTS rewards, a 2-point mean below
      ``floor + ½·(m₃ − floor)`` (m₃ the median of the first three rewards; the floor as above, no test for a
      reward outside [0, 1] without bounds) counts as a halving when every reward so far trends down by a
      one-sided Mann–Kendall test at START_TREND_ALPHA (divided by the points tested so far for a success rate of
      fewer than START_LEVEL_SAMPLES completions a step; :func:`start_trend_p`), confirmed by the next point as
      above. The σ̂ of those few points holds the fall itself, so the Gaussian tests alone reported such falls
      2–6 points late; the rank test needs no noise estimate and is distribution-free under exchangeable noise
      (a first prompt the model happened to solve, followed by its usual rewards, is no trend). Or, for a success
      rate averaging at least START_LEVEL_SAMPLES completions a step (its rewards on a grid of k/n, n ≥ 32), when m₃
      lies START_LEVEL_Z standard errors above the mean of the rewards after the first three (the noise: their
      standard deviation × the small-sample factor, at least the resolution floor below; :func:`start_level_z`):
      a noisy fall whose rewards do not fall in order (0.88, 0.66, 0.05, 0.33, 0.16, …) has no significant rank
      trend for many points. On such a grid (shown by the rewards after the start, no factor 25 in it:
      :func:`on_completion_grid`) the first reward alone is a start level too, at START_FIRST_Z: a model broken by
      its first update (0.95, 0.42, 0.16, …) has m₃ inside the fall (dev evidence: :mod:`.own_rewards`).
    * No event before the 4th logged point. After an event the rule re-arms once the trailing mean on the event's
      own window w is back above ``floor + RECOVERY·G`` (the run recovered: a temporary crash). The window is the
      one the fall was significant on (2 for a large fall against the noise): a rise back is read on the same
      noise, so one solved prompt of a collapsed one-prompt run is no recovery (2026-12-06: ``noisy-smollm-lr2e5``
      seed 2, at reward 0 for 150 steps, read as recovered at step 238 from a 2-point mean of 0.88 and 0.5).
    * A halving at the last logged point has no next point yet: it is reported as *pending*. With k = 2 the
      status is ``collapsing``; with k > 2 (the fall is within what the run's own rewards do) it is a warning that
      names k, never a failure state.

Dev evidence for its constants
    On the 35 course logs of ``../shared/grpo_logs_cs336`` (7 labelled collapses, 25 healthy) and the 15 public
    healthy logs: every collapse is reported and none is read as healthy; 6 of 7 within one logged point of the
    halving (a 3-point trailing mean below half its peak), the slow one (0.35 → 0.08 over 20 steps) 8 points after
    it; a collapse is reported on 1 of 40 healthy runs. Z_JUMP = 6 and JUMP_OVER_LARGEST = 1.5 keep the heavy-tailed
    one-prompt Unsloth rewards out of the jump path; the small-sample factor, the 3-point-median peak and the peak's
    noise lift b came from false reports on those logs (the design notes tell the order). On a slow linear fall the
    report comes ~3 logged points after the raw halving.
    The run's-own-rewards tests (2026-12-05, fixed on the dev part before the test part was scored): on 190 dev
    surrogates of the real healthy logs (``bench/doctor_eval/surrogates.py``) runs with a collapse event 8 → 1
    (all on the 20 one-prompt Unsloth surrogates), on 200 synthetic one-prompt shaped rewards 166 → 29; CS336
    collapses within one point 6/7 either way; simulated collapses within one 38 → 36 of 78; the 15-point
    bisection trials within one 61 → 48 of 234 (their healthy runs with a failure status 44 → 35 of 240). Test
    part, scored once with that rule: healthy runs with an act-now status 6 → 5 of 402, live stops on healthy runs
    5 → 3, collapses within one point 24 → 22 of 113, collapsed runs read healthy 43 → 47 of 127, all of the costs
    on the 15-point bisection trials. Changed after that result: the level's tests wait for LEVEL_POINTS rewards
    before the fall (dev bisection within one 48 → 59, read healthy 104 → 100; one-prompt gains unchanged).
    The fall from the start and the resolution floor (2026-12-05, fixed on the dev part): the 15-point bisection
    trials' collapses within one point 59 → 64 of 234 (missed 109 → 96), collapsed trials read healthy 101 → 90 of
    253, their healthy trials (by held-out accuracy; their training reward often falls too) with a failure status
    39 → 42 of 240; CS336, public logs, surrogates and the project's runs unchanged; simulated healthy runs with a
    collapse event 5 → 4 of 250. Restarting every healthy real dev log at every offset (44,000 starts), the fall
    from the start fires on 0.2 % of them. On one-prompt × 8 rewards at a constant 10 % success rate (200 runs of
    100 points) runs with a collapse event 20 → 1; rising 5 % → 30 % over 300 points, 16 → 3.
    The start level against the noise after it (2026-12-05, fixed on the dev part): the bisection trials' collapses
    within one point 64 → 72 of 234 (missed 96 → 88 in the failure scoring without the live replay), collapsed
    trials read healthy 90 → 82 of 253, their held-out-healthy trials with a failure status 42 → 46 of 240 (each
    a training reward that halved and stayed there); the other dev sources unchanged but for two project runs
    stopped earlier (p1-sizes, step 66 → 9; p2-lr, step 12). Restarting every healthy real and simulated dev log at
    every offset (70,034 starts of 20 points), runs with a collapse report 298 → 308 (0.43 % → 0.44 %). Without
    the START_LEVEL_SAMPLES condition the test fired on starts of the one-prompt × 8 runs (three easy prompts,
    then three hard ones): 298 → 349, noisy SmolLM2 31 → 43.
    The level of up to LEVEL_MAX rewards (2026-12-06, fixed on the dev part and on synthetic runs before the test part
    was scored with it): 180 healthy one-prompt runs with an Unsloth-like shaped reward (format, XML count and
    correctness terms, 6 or 8 completions, the format learnt by step 20, 80 or 150 of 250, fresh seeds) were
    stopped live on 22 (a fall to the format-only baseline two or three steps in a row, from a level whose last
    ten rewards held no such low); now on 7 (five within their first ten points, where there is no level yet).
    The dev part, replayed live: collapses within one logged point 136 → 136 of 381 (one project collapse 1 → 2
    points, one simulated one 2 → 1), healthy runs with a failure status 54 → 54, live stops unchanged (61 of
    842 healthy, 298 of 403 collapsing runs).
    The floor 0 for a reward never below 0 (2026-12-07, set on synthetic seeds 100–119 and the dev part first): a
    format + correctness sum, or the classic notebook sum, on a model that already scores and then collapses
    (``bench/stress_reward_sums.py``, seeds 2000–2019) was reported on 6–8 of 20 runs per setting at four prompts a
    step (its lowest trailing mean lay inside its level's noise: no gain to lose), now on 20 of 20, 3.6–8.1 steps
    after the fall began; healthy such runs stopped live 2 → 0 of 240. Dev runs' rewards rewritten ×10 (no bounds):
    healthy simulated runs with a failure status 9 → 0 of 250. Dev part replayed live: collapses within one point
    136 → 134 of 381, live stops of simulated growing oscillations with an unbounded reward lost on 5 of 80; every
    real log unchanged.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ...runs.noise import RESOLUTION_MAX, bernoulli_sigma, value_denominator
from .own_rewards import (JUMP_LEVEL_SHARE, RANK_ALPHA, START_LEVEL_SAMPLES, START_POINTS, confirm_points,
                          fall_from_start, level_held, level_share, rank_fall_p)
from .prefix_noise import SHORT_PREFIX, PrefixSigma, peak_bias  # noqa: F401  (SHORT_PREFIX: the docstring's)

W_MAX = 20
"""Longest trailing window (logged points)."""
Z_GAIN = 4.0
"""The gain G = peak − floor counts only when G > Z_GAIN·σ̂/√w (no collapse of a reward that never rose)."""
Z_DROP = 2.5
"""A halving counts only when the fall from the peak exceeds Z_DROP·σ̂·√(2/w)."""
Z_JUMP = 6.0
"""A single point this many σ̂·√(1 + 1/w) below the trailing mean before it is a collapse at once."""
SIGMA_FLOOR = 0.02
"""σ̂ is at least this fraction of the gain so far (a noiseless prefix would give σ̂ = 0 and no test at all)."""
JUMP_OVER_LARGEST = 1.5
"""… and the fall exceeds this many times the largest one-step fall before it (heavy-tailed rewards, e.g. one prompt
per step with a shaped reward, fall by many σ̂ now and then: the jump must be unlike anything seen)."""
JUMP_MIN_POINTS = 3
"""The jump path needs this many rewards before the point (a noise estimate worth the name), and a reward that is not
a success rate of fewer than START_LEVEL_SAMPLES completions a step (one or two prompts: one reward is which prompt
came; dev evidence in the design notes, 2026-12-06)."""
FIRST_POINT = 3
"""Index of the first logged point that can hold a halving (the 4th)."""
RECOVERY = 0.75
"""After an event the rule re-arms when the trailing mean on the event's window is back above floor + RECOVERY·G."""


@dataclass(frozen=True)
class CollapseEvent:
    """One collapse: the point where the reward fell below half its gain, and when it could be known."""

    step: int
    """Logged step of the halving (the first point below ``floor + G/2``)."""
    reported_step: int | None
    """Logged step at which the rule reports it (``step`` for a jump, the next point for a confirmation); None
    while it is pending (a halving at the last logged point)."""
    kind: str
    """``"jump"``, ``"confirmed"`` or ``"pending"``."""
    peak: float
    """The trailing mean's running peak before the fall."""
    peak_step: int
    """Where that peak was."""
    floor: float
    """The floor the gain is measured from."""
    value: float
    """The trailing mean at the halving."""
    window: int
    """Trailing window (points) at the halving."""
    sigma: float
    """Step noise σ̂ the fall was judged against."""
    recovered_step: int | None = None
    """First step where the trailing mean on the event's window was back above floor + RECOVERY·G; None if it never
    was."""
    confirm_points: int = 2
    """Rewards in a row below the half line that confirm it (:func:`confirm_points`; 2: the halving point and the
    next one). A pending halving that needs more than 2 is a warning, not yet a collapse."""
    below: int = 1
    """Of those, how many were logged (the halving point included)."""

    def to_dict(self) -> dict:
        return asdict(self)


class _Track:
    """One trailing mean (fixed window 2, or the adaptive window) with its running peak."""

    def __init__(self) -> None:
        self.hist: list[float] = []
        self.running_min: list[float] = []
        self.peak, self.peak_i = -math.inf, 0

    def floor(self, bounds, nonneg_so_far: bool) -> float:
        """The lower bound; 0 while no reward so far lies below 0; else the trailing mean's minimum up to the peak."""
        if bounds is not None:
            return float(bounds[0])
        if nonneg_so_far:
            return 0.0
        return self.running_min[min(self.peak_i, len(self.running_min) - 1)]

    def push(self, value: float, i: int, full: bool, level: float | None = None) -> None:
        """Record the trailing mean at point i; only a full window sets the peak, from ``level`` when given (the short
        track's: a running maximum of 3-point medians, as one spike of a heavy-tailed reward is no level reached)."""
        self.hist.append(value)
        self.running_min.append(min(value, self.running_min[-1]) if self.running_min else value)
        level = value if level is None else level
        if full and level > self.peak:
            self.peak, self.peak_i = level, i

    def restart(self, value: float, i: int) -> None:
        """After a recovery a new rise is measured from here."""
        self.peak, self.peak_i = value, i


class CollapseTracker:
    """The collapse rule (module docstring) fed one logged point at a time: :meth:`push` costs O(1) but for σ̂'s
    re-estimates, so the live doctor decides at every logged reward without replaying the run.
    :func:`collapse_events` is a tracker fed the whole curve."""

    def __init__(self, reward_bounds: tuple[float, float] | None = None) -> None:
        self.bounds = reward_bounds
        self._lo, self._width = (0.0, 1.0) if reward_bounds is None else \
            (float(reward_bounds[0]), float(reward_bounds[1] - reward_bounds[0]))    # shares of it: unit_rewards
        self._y = np.empty(64)
        self._t: list[int] = []
        self.n = 0
        self._unit = True
        self._nonneg = True                        # no reward below 0 so far: 0 is the floor (a sum of ≥ 0 terms)
        self._largest_drop = -math.inf
        self._sigma, self._plain_sigma = PrefixSigma(), PrefixSigma(robust=False)
        self._short, self._long = _Track(), _Track()
        self._armed = True
        self._pending: dict | None = None          # a halving at the previous point awaiting the next one
        self._open: dict | None = None             # the last event, until the run recovers
        self._from_start = True                    # no reward yet above the first three: a fall from the start
        self._level_from = 0                       # where a level may begin: the last recovery (level_share)
        self._samples: int | None = 1              # least common denominator of the rewards so far (their resolution)
        self._sum = 0.0
        self.done: list[CollapseEvent] = []
        """Confirmed, jump and recovered events so far (no pending one)."""

    @property
    def events(self) -> list[CollapseEvent]:
        """:attr:`done` plus the pending halving at the last point, if any."""
        return self.done + ([_event(self._pending, kind="pending", reported=None)] if self._pending else [])

    def push(self, step: int, value: float) -> None:
        """Feed the next logged point (non-finite rewards are ignored)."""
        if not (math.isfinite(step) and math.isfinite(value)):
            return
        if self.n == self._y.size:
            self._y = np.concatenate([self._y, np.empty(self._y.size)])
        i = self.n
        self._y[i] = value
        self._t.append(int(step))
        self.n += 1
        if i >= 2:
            self._largest_drop = max(self._largest_drop, float(self._y[i - 2] - self._y[i - 1]))
        share = (value - self._lo) / self._width
        self._unit = self._unit and 0.0 <= share <= 1.0
        self._nonneg = self._nonneg and value >= 0.0
        self._step(i)
        self._note_level(share)
        self._sum += share

    def _note_level(self, value: float) -> None:
        """Update :attr:`_samples`, the fewest samples a success rate with every reward so far can average: the least
        common denominator of the rewards as fractions k/n (n ≤ RESOLUTION_MAX; beyond it, or for a reward outside
        [0, 1], none). ``value``: the reward as a share of its declared range."""
        if self._samples is None:
            return
        if not 0.0 <= value <= 1.0:
            self._samples = None
            return
        n = value_denominator(value)
        self._samples = None if n is None else math.lcm(self._samples, n)
        if self._samples is not None and self._samples > RESOLUTION_MAX:
            self._samples = None

    def resolution_sigma(self, i: int) -> float:
        """√(p̄(1 − p̄)/n)·(hi − lo) for a reward whose shares of its range before point i are all fractions k/n (n
        their least common denominator, at most RESOLUTION_MAX), p̄ their mean: the step noise of a success rate over
        n samples, the fewest a reward at that resolution can average. 0 for other rewards."""
        return 0.0 if i == 0 else self._width * bernoulli_sigma(self._sum / i, self._samples)

    def _step(self, i: int) -> None:
        y, bounds, unit, short, long_ = self._y[: i + 1], self.bounds, self._unit, self._short, self._long
        gain_now = short.peak - short.floor(bounds, self._nonneg) if short.hist else 0.0
        floor_sigma = SIGMA_FLOOR * gain_now if short.hist else 0.0
        floor_sigma = max(floor_sigma, self.resolution_sigma(i))
        sigma = max(self._sigma(y[:i]), floor_sigma) if i >= 3 else 0.0
        sigma_long = max(self._plain_sigma(y[:i]), floor_sigma) if i >= 3 else 0.0
        w_long = _adaptive_window(sigma_long, gain_now, i)
        values = {2: _trailing_mean(y, i, 2), w_long: _trailing_mean(y, i, w_long)}
        tracks = ((short, 2, values[2], sigma),) + \
            (((long_, w_long, values[w_long], sigma_long),) if 2 < w_long <= i + 1 else ())
        t_i = self._t[i]

        def share(at: int, sig: float, half: float) -> tuple[float, int]:     # against the run's own level
            return level_share(y, at, i, sig, half, self._level_from)

        if self._pending is not None:     # a halving awaiting its confirmation: confirmed, still pending or cleared
            p = self._pending
            w_p = p["window"]
            now = y[i] if w_p == 2 else _trailing_mean(y, i, w_p)
            if now < p["half"]:
                p["below"] += 1
                if w_p == 2:
                    p["needed"] = confirm_points(*share(p["index"], p["sigma"], p["half"]))
                if p["below"] >= p["needed"]:
                    self.done.append(_event(p, kind="confirmed", reported=t_i))
                    self._open, self._armed, self._pending = p, False, None
            elif p["needed"] <= 2 or values[2] >= p["half"]:
                self._pending = None      # cleared; a halving that needs more points survives one reward above
                #                           the line while the 2-point mean stays below it (a noisy slow fall)
        if self._armed and i >= FIRST_POINT and short.hist and short.peak > -math.inf:
            largest = self._largest_drop if i >= 2 else math.inf
            few = self._samples is not None and self._samples < START_LEVEL_SAMPLES    # one or two prompts a step
            for track, w, s_i, sig in tracks:
                info = _test(track, w, s_i, y, sig, i, t_i, self._t, bounds, self._nonneg, largest, self._level_from)
                if info is None:
                    continue
                if info["jump"] and not few and share(i, sig, info["half"])[0] <= JUMP_LEVEL_SHARE:
                    self.done.append(_event(info, kind="jump", reported=t_i))
                    self._open, self._armed, self._pending = info, False, None
                    break
                if info["halving"] and self._pending is None:
                    info["below"] = 1
                    info["needed"] = confirm_points(*share(i, sig, info["half"])) if w == 2 else 2
                    self._pending = info
        self._from_start = self._from_start and i < START_POINTS and (i < 3 or y[i] <= float(np.max(y[:3])))
        if self._armed and self._from_start and self._pending is None and i >= FIRST_POINT:
            floor = float(bounds[0]) if bounds is not None else (0.0 if unit else None)
            fall = None if floor is None else \
                fall_from_start(y, i, floor, self.resolution_sigma(i), self._samples, (self._lo, self._width))
            if fall is not None:
                level, half, value, start = fall
                self._pending = dict(step=t_i, peak=level, peak_step=self._t[start],
                                     floor=floor, value=value, window=2, sigma=sigma, half=half, gain=level - floor,
                                     jump=False, halving=True, index=i, below=1,
                                     needed=confirm_points(*share(i, sigma, half)))
        if not self._armed and self._open is not None and \
                _trailing_mean(y, i, self._open["window"]) >= self._open["floor"] + RECOVERY * self._open["gain"]:
            self.done[-1] = _recovered(self.done[-1], t_i)
            self._armed, self._open, self._level_from = True, None, i
            for track, w, s_i, _ in tracks:
                track.restart(s_i, i)
        short.push(values[2], i, full=i >= 2, level=_median_of_last3(y, i))
        long_.push(values[w_long], i, full=2 < w_long <= i + 1)


def _trailing_mean(y: np.ndarray, i: int, w: int) -> float:
    """The mean of the last ``w`` rewards up to point i: the means the rule tests, and the one a recovery is read on
    (the open event's window: the noise that hid a fall on shorter means cannot fake the rise back)."""
    return float(np.mean(y[max(0, i - w + 1): i + 1]))


def _median_of_last3(y: np.ndarray, i: int) -> float:
    """The median of y[i−2 … i] (fewer at the start), as ``np.median`` gives it, without its per-call overhead."""
    if i == 0:
        return float(y[0])
    if i == 1:
        return float((y[0] + y[1]) / 2)
    a, b, c = float(y[i - 2]), float(y[i - 1]), float(y[i])
    return max(min(a, b), min(max(a, b), c))


def collapse_events(steps, reward, reward_bounds: tuple[float, float] | None = None) -> list[CollapseEvent]:
    """Every collapse of a reward curve by the rule of the module docstring, in order (causal).

    ``steps``/``reward``: the logged points (non-finite rewards are dropped); ``reward_bounds``: the declared
    bounds, or None (then the floor is 0 while no reward so far lies below 0, else the trailing mean's minimum up to
    its peak). The last event is ``"pending"`` when the halving is at the last point."""
    t = np.asarray(steps, dtype=float)
    y = np.asarray(reward, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError(f"steps and reward must be 1-D of one length, got shapes {t.shape} and {y.shape}")
    ok = np.isfinite(t) & np.isfinite(y)
    if int(ok.sum()) <= FIRST_POINT:
        return []
    tracker = CollapseTracker(reward_bounds)
    for a, b in zip(t[ok], y[ok]):
        tracker.push(int(a), float(b))
    return tracker.events


def _adaptive_window(sigma: float, gain: float, m: int) -> int:
    """The shortest trailing window on which a halving of ``gain`` is significant (module docstring)."""
    if sigma <= 0 or gain <= 0:
        return 2
    z = Z_DROP * math.sqrt(2) + peak_bias(m, 2)
    return int(min(W_MAX, max(2, math.ceil((z * sigma / (0.5 * gain)) ** 2))))


def _test(track: _Track, w: int, s_i: float, y: np.ndarray, sigma: float, i: int, step: int, t: list[int], bounds,
          nonneg: bool, largest_drop: float, level_from: int = 0) -> dict | None:
    """The jump and halving tests of one trailing mean at point i of ``y`` (None when its gain is not significant)."""
    y_i = float(y[i])
    floor = track.floor(bounds, nonneg)
    gain = track.peak - floor
    se = sigma / math.sqrt(w)
    bias = peak_bias(i, w)
    if not (sigma > 0 and gain > (Z_GAIN + bias) * se):
        return None
    # the adaptive (noisy) window draws its half line from the peak less its noise lift b·SE: the level the run
    # reached, not its luckiest mean; the 2-point window's peak is already a running max of 3-point medians
    half = floor + 0.5 * (max(gain - bias * se, 0.0) if w > 2 else gain)
    fall = track.hist[-1] - y_i
    jump = i >= JUMP_MIN_POINTS and y_i < half and fall > Z_JUMP * sigma * math.sqrt(1 + 1 / w) and \
        fall > JUMP_OVER_LARGEST * largest_drop
    trough = peak_bias(i - track.peak_i, w) if w > 2 else 0.0     # the lowest of the windows since the peak
    halving = s_i < half and track.peak - s_i > (Z_DROP * math.sqrt(2) + bias + trough) * se
    if jump or halving:     # the fall must come from a level the run held; a longer window's, by a rank test too
        held = level_held(y, i, w, half) and (w == 2 or rank_fall_p(y, i, w, half, level_from) <= RANK_ALPHA)
        jump, halving = jump and held, halving and held
    return dict(step=step, peak=track.peak, peak_step=int(t[track.peak_i]), floor=floor, value=s_i, window=w,
                sigma=sigma, half=half, gain=gain, jump=jump, halving=halving, index=i)


def _event(info: dict, *, kind: str, reported: int | None) -> CollapseEvent:
    return CollapseEvent(step=info["step"], reported_step=reported, kind=kind, peak=float(info["peak"]),
                         peak_step=info["peak_step"], floor=float(info["floor"]), value=float(info["value"]),
                         window=int(info["window"]), sigma=float(info["sigma"]),
                         confirm_points=int(info.get("needed", 2)), below=int(info.get("below", 1)))


def _recovered(event: CollapseEvent, step: int) -> CollapseEvent:
    d = event.to_dict()
    d["recovered_step"] = step
    return CollapseEvent(**d)
