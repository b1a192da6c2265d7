"""A run that blew up: the reward at its floor with no spread left, and a policy that broke.

What it detects
    Two ways a GRPO run stops being a run, both read at the last logged points:

    * **non-finite**: the last :data:`NON_FINITE_ROWS` logged training rows have no finite reward, or a NaN or
      infinite loss or gradient norm, after finite values (the run produced NaN and goes on logging it);
    * **blown up at the floor**: over the last :data:`window_rows` reward rows every reward is at the floor (within
      :data:`FLOOR_TOL` of the reward's width; a share :data:`OFF_FLOOR_SHARE` of the rows may lie above it once the
      reward has fallen there from a level above it, see :func:`_fell_to_floor`, and the policy broke by one of the
      signals below, not by that fall alone), no group of the rows at the floor
      has any spread left (the share of zero-std groups ≥
      :data:`ZERO_SPREAD`, or the within-group std ≈ 0, or neither logged), and the policy itself broke: completions
      at the length cap (share ≥ :data:`CAP_SHARE`), the token entropy ≥ :data:`ENTROPY_UP` × or ≤
      :data:`ENTROPY_DOWN` × its level before the reward reached the floor (the median of its values over as many
      rows before that stretch as the window has; its first value when the reward sat there from the start), the
      mean completion length ≥ 2× or ≤ ½× that level, or a
      NaN among loss, gradient norm and entropy; or the reward fell to the floor from a start above it.

Why it matters in GRPO
    With every group scoring the floor, GRPO's group-normalised advantages are exactly zero, so is the policy
    gradient (gradient norm 0): nothing trains any more and nothing will, however long the run goes on. A
    learning rate too high from step 1 gets there before the reward ever rose, so the collapse rule, which needs a
    gain to lose, never fires; this rule needs none.

Signals
    The reward (and its declared bounds), the share of zero-std groups or the reward std, completions at the length
    cap, token entropy, mean completion length, loss and gradient norm, where logged.

Rule
    The floor is the declared lower bound, else 0 while every reward lies in [0, 1], else the reward's own minimum
    when the last rewards are all equal to it (no spread at all). The window is the last max(:data:`MIN_ROWS`,
    rows spanning :data:`MIN_STEPS` training steps) reward rows, so that a one-prompt log at ``logging_steps=1``
    needs :data:`MIN_STEPS` steps of all-floor rewards (a hard task's first steps can all fail) and TRL's default
    ``logging_steps=10`` needs :data:`MIN_ROWS` rows.

Dev evidence for its constants
    A TRL run of the tiny testbed model at learning rate 0.3
    (``test_a_run_blown_up_from_step_one_is_stopped_as_diverged`` in ``tests/grpo/test_grpo_training.py``): reward
    0 and every group zero-std from step 20, completions 100 % at the cap, entropy 0.12 → 0; the same run at 2e-3
    keeps completions off the cap and its entropy near 0.35 with a reward near 0.01, and is not diverged. On the dev
    part of the corpus the rule fires on no healthy run (``bench/bench_doctor.py``).

    The rows tolerated above the floor (2026-12-06, dev run ``noisy-smollm-lr3e5``, SmolLM2 at 1 prompt × 8 and lr
    3e-5): the reward fell from ≈ 0.3 to 0 by step ~100 with completions 100 % at the cap, but one prompt in ~40
    was still solved (0.625 at step 100, 0.375 at 133, 0.5 at 187), so no 30-step window was all at the floor
    until step 259. A one-prompt log samples a single prompt per row; a lucky prompt is one row, not a recovery.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..runs.logs import RunLog
from ..runs.noise import bernoulli_sigma, resolution_samples, step_sigma, unit_rewards
from .detectors.own_rewards import few_prompts

NON_FINITE_ROWS = 3
"""Logged training rows in a row with a non-finite reward, loss or gradient norm."""
MIN_ROWS = 5
"""Shortest window of all-floor rewards (reward rows)."""
MIN_STEPS = 30
"""… and the window spans at least this many training steps."""
FLOOR_TOL = 0.02
"""A reward is at the floor within this fraction of the reward's width (1 for a success rate)."""
ZERO_SPREAD = 0.9
"""Share of zero-std groups at or above which no group has spread left."""
CAP_SHARE = 0.9
"""Share of completions cut at the length cap that marks a broken policy."""
ENTROPY_UP = 3.0
ENTROPY_DOWN = 0.1
"""The entropy's window mean at ≥ ENTROPY_UP × or ≤ ENTROPY_DOWN × its level before the reward reached the
floor."""
START_ROWS = 3
START_ABOVE = 3.0
"""… or the reward fell there: the mean of its first START_ROWS logged rewards at least START_ABOVE × FLOOR_TOL of
the width above the floor (the run had something and lost all of it; a hard task that starts at 0 is not this)."""
START_FRACTION = 0.25
Z_LOST = 4.0
LOST_ZERO_SPREAD = 0.75
"""``lost its start``: the last window's mean reward at most START_FRACTION of the start's height above the floor,
the fall more than Z_LOST standard errors of the step noise (at least the two-proportion standard error of a
success rate at the rewards' resolution n, :func:`rlvr_dynamics.runs.noise.resolution_samples`: a one-prompt × 8
run at a low success rate logs 1/8 three times, then 0, and that is one completion of 24, not a fall; 2026-12-05,
on 200 synthetic such runs the live stops went 18 → 1 with the collapse report's resolution floor), and most
groups without spread (mean share of zero-std groups ≥ LOST_ZERO_SPREAD where
logged): a run that fell within its first few logged points, before the collapse rule had a history to judge a
gain by."""
OFF_FLOOR_SHARE = 0.1
"""Share of the window's reward rows (rounded down: none in a window under 10 rows) that may lie above the floor when
the reward fell there from a level above it (:func:`_fell_to_floor`); a run that never left the floor (a hard task's
start) gets none."""
LENGTH_FACTOR = 2.0
"""The mean completion length's window mean ≥ LENGTH_FACTOR × or ≤ 1/LENGTH_FACTOR × its level before the
floor."""


@dataclass(frozen=True)
class Divergence:
    """Why the run is diverged: ``kind`` (``"non-finite"`` or ``"blown up"``), the first ``step`` of the window,
    the ``signals`` that broke and the numbers behind them."""

    kind: str
    step: int
    signals: list[str]
    numbers: dict[str, Any] = field(default_factory=dict)

    def sentence(self) -> str:
        if self.kind == "lost its start":
            return (f"the reward fell to near its floor {self.numbers['floor']:.3g} by step {self.step} and stays "
                    f"there: {self.signals[0]}; most groups have no spread left, so nothing trains")
        if self.kind == "non-finite":
            return (f"the run logs non-finite values since step {self.step} ({', '.join(self.signals)}): it has "
                    "diverged")
        n = self.numbers
        off = n.get("off_floor", 0)
        rows = f"{n['rows']} logged rows" + (f", {off} of them above it" if off else "")
        groups = "in the groups at the floor" if off else "in any group"
        return (f"the reward has sat at its floor {n['floor']:.3g} since step {self.step} ({rows}) "
                f"with no spread left {groups}, and the policy broke: {'; '.join(self.signals)}")


def window_rows(steps: np.ndarray) -> int:
    """Rows in the all-floor window: at least MIN_ROWS and at least the rows spanning MIN_STEPS steps."""
    if steps.size < 2:
        return MIN_ROWS
    spacing = float(np.median(np.diff(steps[-min(steps.size, 50):])))
    return int(max(MIN_ROWS, math.ceil(MIN_STEPS / max(spacing, 1.0)) + 1))


def detect_divergence(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> Divergence | None:
    """The run's divergence at its last logged point (module docstring), or None."""
    nf = _non_finite(log)
    if nf is not None:
        return nf
    r_all = np.asarray(log.reward, dtype=float)
    rows = np.flatnonzero(np.isfinite(r_all))
    if rows.size == 0:
        return None
    steps = log.steps[rows].astype(float)
    y = r_all[rows]
    n = None              # the rewards' resolution, read on their shares of a known range (runs.noise.unit_rewards)
    if reward_bounds is not None:
        floor, width = float(reward_bounds[0]), float(reward_bounds[1] - reward_bounds[0])
        n = resolution_samples(unit_rewards(y, reward_bounds))
    elif y.min() >= 0 and y.max() <= 1:
        floor, width = 0.0, 1.0
        n = resolution_samples(y)
    elif rows.size >= MIN_ROWS and np.ptp(y[-MIN_ROWS:]) == 0 and y[-1] == y.min():
        floor, width = float(y.min()), max(float(np.ptp(y)), 1e-12)
    else:
        return None
    w = window_rows(steps)
    blown = _blown_up(log, rows, rows[-w:], y, floor, width, n) if rows.size >= w else None
    return blown or _lost_its_start(log, rows, rows[-MIN_ROWS:], y, floor, width, n)


def _blown_up(log: RunLog, rows, win, y, floor: float, width: float, n: int | None = None) -> Divergence | None:
    """The reward at the floor over the window, no spread left, and the policy broken (module docstring)."""
    r = np.asarray(log.reward, dtype=float)[win]
    on = r <= floor + FLOOR_TOL * width
    off = int(np.sum(~on))
    if off and (off > int(OFF_FLOOR_SHARE * win.size) or not _fell_to_floor(y, rows, win, floor, width, n)):
        return None
    zero = _window(log, "frac_reward_zero_std", win[on])
    spread = _window(log, "reward_std", win[on])
    if zero is not None and not np.all(zero >= ZERO_SPREAD):
        return None
    if zero is None and spread is not None and not np.all(spread <= FLOOR_TOL * width):
        return None
    at_floor = y <= floor + FLOOR_TOL * width           # the stretch at the floor, back from the last row
    if off:       # back to the window's first row at the floor: the rows before it are the level it fell from
        first = int(np.searchsorted(rows, win[np.argmax(on)]))
    else:
        first = int(rows.size - np.argmin(at_floor[::-1])) if not at_floor.all() else 0
    broke = _broken_policy(log, win, int(rows[first]) if first > 0 else 0)
    start = y[:START_ROWS]
    # a fall to the floor is the premise of the rows tolerated above it, so there it is no sign of a broken policy
    if not off and float(np.mean(start)) >= floor + START_ABOVE * FLOOR_TOL * width and rows[0] < win[0]:
        broke.append(f"the reward fell to the floor from a start above it (its first {start.size} logged rewards "
                     f"average {float(np.mean(start)):.3g})")
    if not broke:
        return None
    return Divergence("blown up", int(log.steps[rows[first]]), broke,
                      {"floor": floor, "rows": int(rows.size - first), "off_floor": off,
                       "never_left_floor": bool(not off and (first == 0 or float(np.mean(y[:first])) <
                                                             floor + START_ABOVE * FLOOR_TOL * width)),
                       "window_steps": [int(log.steps[win[0]]), int(log.steps[win[-1]])]})


def _fell_to_floor(y: np.ndarray, rows: np.ndarray, win: np.ndarray, floor: float, width: float,
                   n: int | None = None) -> bool:
    """The reward came down to the floor: the mean of its rows before the window is at least START_ABOVE ×
    FLOOR_TOL of the width above the floor and above the window's mean by more than Z_LOST standard errors, each
    part's mean judged on its own noise (Welch: √(σ_b²/n_b + σ_w²/n_w), each σ the part's robust step noise and at
    least the Bernoulli σ of its mean at the rewards' resolution, :func:`rlvr_dynamics.runs.noise.bernoulli_sigma`):
    the rows before are a one-prompt log's whole spread, the window rows sit at the floor. A hard task that starts
    at the floor and scores now and then has no level to fall from."""
    split = int(np.searchsorted(rows, win[0]))
    before, now = y[:split], y[split:]
    if before.size < MIN_ROWS:
        return False
    level = float(np.mean(before))
    if level < floor + START_ABOVE * FLOOR_TOL * width:
        return False
    var = sum(max(step_sigma(part), width * bernoulli_sigma((float(np.mean(part)) - floor) / width, n)) ** 2 / part.size
              for part in (before, now))
    return var > 0 and (level - float(np.mean(now))) / math.sqrt(var) > Z_LOST


def _fall_se(y: np.ndarray, level: float, now: float, n_level: int, n_now: int, n: int | None = None,
             floor: float = 0.0, width: float = 1.0) -> float:
    """The standard error of a fall from the mean of ``n_level`` rewards to the mean of ``n_now``: the robust step
    noise (the fall itself is not the noise it is judged against), and at least the two-proportion standard error
    at the rewards' resolution n (a one-prompt × 8 reward at 1/8 three times, then 0: the repeats give a step noise
    of 0, and the fall is one completion of 24), pooled rate p̄, √(p̄(1 − p̄)/n·(1/n_level + 1/n_now))."""
    k = math.sqrt(1 / n_level + 1 / n_now)
    se = step_sigma(y) * k
    if n is not None:
        pooled = (n_level * level + n_now * now) / (n_level + n_now)
        se = max(se, width * bernoulli_sigma((pooled - floor) / width, n) * k)
    return se


def _lost_its_start(log: RunLog, rows, win, y, floor: float, width: float, n: int | None = None
                    ) -> Divergence | None:
    """The reward fell from its start to near the floor and stays there: every reward of the last MIN_ROWS rows at
    most START_FRACTION of the start's height above the floor, the fall more than Z_LOST standard errors (of the
    robust step noise, and at least the two-proportion standard error at the rewards' resolution n: pooled rate p̄,
    √(p̄(1 − p̄)/n·(1/START_ROWS + 1/MIN_ROWS))), most groups without spread (mean zero-std share ≥
    LOST_ZERO_SPREAD where logged). Not for a success rate of fewer than 32 completions a step (one or two prompts,
    :func:`~.detectors.own_rewards.few_prompts`): three easy prompts, then five hard ones, is which prompts came,
    not a fall (a healthy run at 10 % success, 2026-12-07); such a run's fall from its start is the blown-up rule's,
    after MIN_STEPS steps at the floor."""
    start = y[:START_ROWS]
    w = win.size
    if rows[0] >= win[0] or rows.size < START_ROWS + w or few_prompts(n):
        return None         # one or two prompts a step: its first rewards are which prompts came (blown up decides)
    s0, now = float(np.mean(start)), float(np.mean(log.reward[win]))
    if s0 < floor + START_ABOVE * FLOOR_TOL * width or now > floor + START_FRACTION * (s0 - floor) or \
            float(np.max(log.reward[win])) > floor + START_FRACTION * (s0 - floor):
        return None
    se = _fall_se(y, s0, now, start.size, w, n, floor, width)
    if se <= 0 or (s0 - now) / se <= Z_LOST:
        return None
    zero = _window(log, "frac_reward_zero_std", win)
    if zero is not None and float(np.mean(zero)) < LOST_ZERO_SPREAD:
        return None
    at = int(np.flatnonzero(y > floor + START_FRACTION * (s0 - floor))[-1]) + 1 \
        if (y > floor + START_FRACTION * (s0 - floor)).any() else 0
    at = min(at, rows.size - 1)
    return Divergence("lost its start", int(log.steps[rows[at]]),
                      [f"the reward fell from {s0:.3g} over its first {start.size} logged rows to {now:.3g} over the "
                       f"last {w}"], {"floor": floor, "rows": int(w), "start": s0, "now": now})


def _window(log: RunLog, concept: str, win: np.ndarray) -> np.ndarray | None:
    v = log.diagnostic(concept)
    if v is None:
        return None
    v = np.asarray(v, dtype=float)[win]
    v = v[np.isfinite(v)]
    return v if v.size else None


def _start(log: RunLog, concept: str, before: int, rows: int) -> float:
    """A signal's level before the reward reached the floor: the median of its last ``rows`` finite values (as many
    as the window it is compared with: a one-prompt log's entropy moves ×10 from row to row, and the median of three
    rows at 0.02–0.03 made a window at 0.11 'blown up', dev run ``noisy-smollm-lr2e5``, 2026-12-06)
    in the log rows before row ``before`` (the first row of the stretch at the floor); its first finite value when
    the reward sat at the floor from the start (a learning rate too high from step 1 breaks the policy in one step,
    so only the first row shows it whole). The policy of a run that learns changes (a completion of 8 tokens
    before the format is learnt, then 15): its level when it last scored is the one a blow-up breaks."""
    v = log.diagnostic(concept)
    if v is None:
        return math.nan
    v = np.asarray(v, dtype=float)
    prior = v[:before][np.isfinite(v[:before])]
    if prior.size:
        return float(np.median(prior[-max(rows, START_ROWS):]))
    v = v[np.isfinite(v)]
    return float(v[0]) if v.size else math.nan


def _broken_policy(log: RunLog, win: np.ndarray, before: int) -> list[str]:
    out = []
    cap = _window(log, "clipped_ratio", win)
    if cap is not None and cap.mean() >= CAP_SHARE:
        out.append(f"{100 * cap.mean():.0f} % of completions at the length cap")
    h, h0 = _window(log, "entropy", win), _start(log, "entropy", before, win.size)
    if h is not None and math.isfinite(h0) and h0 > 0:
        ratio = float(h.mean()) / h0
        if ratio >= ENTROPY_UP or ratio <= ENTROPY_DOWN:
            out.append(f"token entropy {h0:.3g} → {h.mean():.3g} (×{ratio:.2g})")
    L, L0 = _window(log, "response_length", win), _start(log, "response_length", before, win.size)
    if L is not None and math.isfinite(L0) and L0 > 0:
        ratio = float(L.mean()) / L0
        if ratio >= LENGTH_FACTOR or ratio <= 1 / LENGTH_FACTOR:
            out.append(f"mean completion length {L0:.3g} → {L.mean():.3g} (×{ratio:.2g})")
    for concept in ("loss", "grad_norm", "entropy"):
        v = log.diagnostic(concept)
        if v is not None and np.isfinite(np.asarray(v, dtype=float)).any() and \
                not np.isfinite(np.asarray(v, dtype=float)[win]).all():
            out.append(f"{concept} not finite")
    return out


def _non_finite(log: RunLog) -> Divergence | None:
    """The last NON_FINITE_ROWS training rows (rows that log a reward, loss, gradient norm or learning rate) have
    no finite reward, or a non-finite loss or gradient norm, after finite values."""
    cols = {c: log.diagnostic(c) for c in ("loss", "grad_norm", "learning_rate")}
    cols = {c: np.asarray(v, dtype=float) for c, v in cols.items() if v is not None}
    r = np.asarray(log.reward, dtype=float)
    if not np.isfinite(r).any():
        return None
    training = np.isfinite(r).copy()
    for v in cols.values():
        training |= np.isfinite(v)
    # a row with a non-finite loss or gradient norm is a training row too when the series had finite values
    for c in ("loss", "grad_norm"):
        if c in cols and np.isfinite(cols[c]).any():
            training |= ~np.isfinite(cols[c]) & (np.arange(r.size) > np.argmax(np.isfinite(cols[c])))
    idx = np.flatnonzero(training)
    if idx.size < NON_FINITE_ROWS + 1:
        return None
    last = idx[-NON_FINITE_ROWS:]
    if last[0] <= int(np.flatnonzero(np.isfinite(r))[0]):
        return None
    bad_reward = ~np.isfinite(r[last])
    bad = bad_reward.copy()
    names = ["reward"] if bad_reward.all() else []
    for c in ("loss", "grad_norm"):
        if c in cols and np.isfinite(cols[c]).any():
            b = ~np.isfinite(cols[c][last])
            if b.all():
                names.append(c)
            bad |= b
    if not bad.all() or not names:
        return None
    start = idx.size - NON_FINITE_ROWS          # back to the first row of the trailing non-finite stretch
    while start > 0 and not all(np.isfinite(v[idx[start - 1]]) for v in
                                [r] + [cols[c] for c in names if c in cols]):
        start -= 1
    return Divergence("non-finite", int(log.steps[idx[start]]), names, {"rows": int(idx.size - start)})
