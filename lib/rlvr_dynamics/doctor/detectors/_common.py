"""P1's four diagnostics (P1-C13, P1 spec §4) and a collapse early warning, from the series a GRPO run logs [D].

Rules (issue 19 item 4; written here before any scoring on the corpus test split, tuned on ``split="dev"`` only).

**Causal.** Every quantity at a logged row uses only rows up to it (trailing windows, running maxima, a step noise σ
re-estimated on the prefix), so :func:`diagnose` on any prefix of a log reports exactly the events of the full log
up to that prefix; the live :class:`~.live.RunDoctor` relies on it. Exceptions, marked (whole-prefix readings):
instability (c) and (d), which read a fit of the whole prefix and fire at its last step.

**Step noise and windows.** σ_t = :func:`~.noise.step_sigma` (robust, from first differences) of the series' values
up to row t, re-estimated when the count of values reaches ⌈8·1.25^j⌉ and held in between (no events before 8
values). A smoothing window is long enough that the smoothed noise is small against the effect looked for:
``k = clip(⌈(Z_WINDOW·σ_t / effect)²⌉, K_MIN, K_MAX)`` with Z_WINDOW = 2, K_MIN = 3, K_MAX = 100 — σ/√k ≤ effect/2.
A row fires only once it has 2k values behind it (a baseline window and a test window). "Sustained" = the
condition holds on ``k`` consecutive rows; the event is the row that completes them (when you could have known).

**Events re-arm.** A detector reports every event (``Detection.events``, each a dict with ``step`` and the numbers
at it); ``Detection.step`` is the first. After an event the detector is disarmed until its re-arm condition holds
(the condition false again on k consecutive rows, or the collapse warning's recovery), then fires again.

**Reward-bound gate.** Concentration and degeneracy do not fire while the smoothed reward is within
GATE_FRACTION = 10 % of the bound width below the upper reward bound (a solved task is not a failure). Bounds: the
declared ``reward_bounds``; else (0, 1) on the rows where every reward so far lies in [0, 1] (causal); else no gate.

Round 2 (rules changed on ``split="dev"`` of corpus split v2, committed before the v2 test part was scored; old →
new): hacking (i) last-2 mean vs running max → last-3 mean (HACKING_EVALS) vs running max of 3-means, only while the
training reward has not fallen since the evaluation's peak; hacking (ii) "format sub-rewards logged" → the format
sum rose significantly since the correctness peak, the peak taken on a PEAK_WINDOW-times longer smoothing;
degeneracy f → f − u (u the normalised reward: all-correct groups do not count) and only while learning has stalled;
concentration gate 10 % → CONCENTRATION_HEADROOM = 25 % of the bound width and only while learning has stalled;
instability (g) also needs the smoothed entropy ≥ ENTROPY_ABOVE_INITIAL × its initial level; collapse precursor
"entropy" = a rise ≥ 1.5× its running min to above its initial level (a falling entropy no longer counts), and the
new rule (C): ≥ PRECURSOR_ALONE precursors on K_MIN consecutive rows, whatever the reward.

Round 3 (changed after the result, 2026-12-01; the lead's changes after the v2 test part was scored, each a
principle rather than a tuned constant, and the v2 tables rerun with them): an exactly flat stretch has a trailing
slope t = 0 (it was NaN, so a reward stuck at 0 was never "stalled" and never degenerate); instability (e), the
|Δreward| envelope, counts only within ENVELOPE_CORROBORATION = 20 rows of an (a), (b), (f) or (g) event. (e) alone
caught none of the 80 simulated unstable dev runs, while it fired on 3 of the 4 healthy one-prompt-per-step
Unsloth logs of ``../shared/grpo_logs``, whose shaped rewards get noisier as their terms switch on: those logs are no
longer a clean test of this rule. A sub-reward whose name says "format" is a format reward even when it also says
"exact" (Unsloth's ``match_format_exactly`` had been read as a correctness reward, so its rise and the real
correctness reward's were confused); hacking (ii) needs the correctness fall to exceed HACKING_MIN_DROP × the larger
of the correctness term's and the training reward's running range (a dip of 0.01 in a term that is 0 so far, while
the format terms jump by 2, fired on the same Unsloth log).

**Stalled** (degeneracy, concentration): the t-statistic of the reward's least-squares slope over the trailing
W = max(STALL_SPAN·k, STALL_MIN, STALL_FRACTION·n) = max(4k, 10, n/4) reward rows (n: rows so far) is
< STALL_T = 2 (k: the noise window for an effect of
0.1 × the reward's running range): no significant gain lately. A run that is still learning is not failing.

=========================  ===================================================  =====================================
detector                   signal                                               fires when
=========================  ===================================================  =====================================
``reward_hacking``         training reward R (smoothed, effect = 0.1 × its      R has risen, S_R − R₀ > δ_R =
                           running range) vs (i) a held-out / strict eval E    3σ_R√(2/k), and (i) at 2 consecutive
                           (``eval_…``, ``val/…``) at rows where a new one      evaluations (≥ 6 evaluations logged):
                           arrived;                                             mean of the last 3 E < running max of
                           (ii) a correctness sub-reward C (``rewards/<name>``  such means − δ_E, δ_E = max(3σ_E√(2/3),
                           with correct/answer/accura/exact in the name) and    0.05·max|E|), while smoothed R ≥ its
                           the format sub-rewards F (format/xml/strict/soft/    value at the evaluation's peak − δ_R
                           int_reward/number)                                   (train and eval diverge; both falling
                                                                                is a collapse); or (ii) smoothed C <
                                                                                P_C − max(3σ_C√(1/k + 1/4k),
                                                                                0.05·range_C), P_C the running peak of
                                                                                a 4k smoothing, while ΣF smoothed has
                                                                                risen > max(3σ_F√(2/k_F), 0.1·range_F)   
                                                                                since that peak,
                                                                                sustained k. A greedy eval that starts
                                                                                higher or saturates never fires
``advantage_degeneracy``   f − u: f the fraction of groups with zero reward     smoothed f − u > 0.75 (window: effect
                           std (TRL's ``frac_reward_zero_std``; else            0.25), sustained, while entropy ≥
                           1[reward_std == 0] from TRL/Unsloth ``reward_std``,  25 % of its initial (first-k) mean
                           exact at 1 prompt per step, a lower bound at more);  when logged, learning has stalled,
                           u = (R − lo)/(hi − lo) ≥ the share of all-correct    and not at the upper bound (gate).
                           groups, so f − u bounds the all-failed share from    Not verl's ``critic/score/std`` (a
                           below (u = 0 without bounds)                         batch std)
``policy_concentration``   mean token entropy H and within-group spread S       smoothed H < 0.25·H₀ (H₀: mean of
                           (``group_distinct_frac``, else ``group_reward_std``, the first k values; window effect
                           else TRL ``reward_std``)                             0.25·H₀) and smoothed S < 0.75 ×
                                                                                its running max, sustained, learning
                                                                                stalled, and the smoothed reward
                                                                                below hi − 0.25·(hi − lo) (bounds
                                                                                known; a converged policy near its
                                                                                bound is not a failure)
``dynamical_instability``  (a) grad norm g; (b) clip fraction c (only when      (a) smoothed log g ≥ log 5 + log g₀
                           ever non-zero: TRL num_iterations=1 logs 0);         (g₀: median of the first k) and
                           (e) |Δreward| envelope; (f) KL; (g) entropy;         rising (trailing slope > 0),
                           (c) stability margin ηK·K_ref/(1−μ) from the fit     sustained; (b) smoothed c > 0.2,
                           and K_ref; (d) :func:`~.reading.read_dynamics`       sustained; (e) trailing std of Δr
                                                                                over 10 rows ≥ 3·max(√2·σ of the
                                                                                first half of the prefix, 0.01 ×
                                                                                running range), sustained, and only
                                                                                within 20 rows of an (a), (b), (f)
                                                                                or (g) event; (f) smoothed
                                                                                KL ≥ 10 × its value k rows earlier
                                                                                and > 0.01 (log-KL), sustained;
                                                                                (g) smoothed H ≥ 2 × its running
                                                                                min after the first 2k rows AND ≥
                                                                                1.5 × its initial level (mean of the
                                                                                first k), sustained; (c) the margin's
                                                                                80 % interval above 1; (d) verdict
                                                                                ``unstable`` ((c), (d): whole-prefix
                                                                                readings, fire at the last step)
``collapse_warning``       smoothed reward S (window k for effect 0.3·gain     (A) S < P − 0.3·G with G = P − F >
                           with Z = 4, two passes), running peak P of the       3σ√(2/k) and the trailing slope of
                           smoothing over 4k, floor F (lower reward bound,      R over max(k, 5) rows has t < −2;
                           else the running min of that smoothing up to the     (B) S < P − 0.1·G (G significant as
                           peak); precursors: entropy (6-row mean ≥ 1.5× its    in A) with ≥ 2 of 4 precursors on;
                           running min and ≥ its initial 6-row mean),           (C) ≥ 2 precursors on 3 consecutive
                           clipped-completion ratio (3-row mean > 0.5), grad    rows after the first 12 rows,
                           norm (6-row mean ≥ 3× the median of the first 6),    whatever the reward (a 1-prompt
                           KL (6-row mean ≥ 10× its value 12 rows before,       reward cannot show a fall in time);
                           ≥ 0.01)                                              A/B need 4k rows; re-arms once S ≥
                                                                                P − 0.1·G and (C) is off
=========================  ===================================================  =====================================

A detector whose series the log lacks reports ``available=False`` (not a silent "no"). ``detail["collapse_step"]``
of the collapse warning keeps the project's earlier collapse rule unchanged (window W = max(6, round(0.1·n)),
trailing mean over max(3, W//2), floor = the lower bound or the smoothed minimum over the first W, collapse = S <
F + 0.5·(P − F)), because :mod:`rlvr_dynamics.grpo.pilot` judged its committed pilots with it.

Metric names: the column tables below cover TRL, Unsloth (TRL ≤ 0.15 names), verl (``actor/…``, ``critic/…``,
``response_length/…``, older ``actor/entropy_loss``) and OpenRLHF (``policy_entropy``, ``kl``, ``response_length``).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .logs import RunLog
from .noise import step_sigma

DETECTORS = ("reward_hacking", "advantage_degeneracy", "policy_concentration", "dynamical_instability",
             "collapse_warning")
"""Detector names, in report order."""
Z_WINDOW = 2.0
K_MIN = 3
K_MAX = 100
SIGMA_FIRST = 8
SIGMA_GROWTH = 1.25
GATE_FRACTION = 0.1
HACKING_EFFECT = 0.1
HACKING_Z = 3.0
HACKING_MIN_DROP = 0.05
HACKING_EVALS = 3
STALL_SPAN = 4
STALL_MIN = 10
STALL_T = 2.0
STALL_FRACTION = 0.25
DEGENERACY_FRACTION = 0.75
DEGENERACY_EFFECT = 0.25
CONCENTRATION_ENTROPY = 0.25
CONCENTRATION_SPREAD = 0.75
CONCENTRATION_HEADROOM = 0.25
GRAD_NORM_GROWTH = 5.0
CLIP_FRACTION = 0.2
ENVELOPE_GROWTH = 3.0
ENVELOPE_WINDOW = 10
ENVELOPE_CORROBORATION = 20
"""(e) counts only within this many logged rows of an (a), (b), (f) or (g) event (changed after the result, see the
module docstring's "Round 3")."""
ENVELOPE_FLOOR = 0.01
KL_JUMP = 10.0
KL_FLOOR = 0.01
ENTROPY_BLOWUP = 2.0
ENTROPY_ABOVE_INITIAL = 1.5
WARNING_DROP = 0.3
WARNING_Z = 4.0
PEAK_WINDOW = 4
PRECURSOR_DROP = 0.1
PRECURSOR_COUNT = 2
PRECURSOR_ENTROPY = 1.5
PRECURSOR_CLIPPED = 0.5
PRECURSOR_GRAD = 3.0
PRECURSOR_ALONE = 2
WARNING_REARM = 0.1
WARNING_GAIN_Z = 3.0
WARNING_T = -2.0
COLLAPSE_FRACTION = 0.5

EVAL_COLUMNS = ("eval_reward", "eval/reward", "eval_accuracy", "eval/accuracy", "val/test_score", "val/score",
                "val-core/test_score/mean", "strict_reward", "heldout_reward")
"""Held-out or strict evaluation reward, tried in order (then any column starting ``val`` or ``eval`` with
``reward``, ``score`` or ``acc`` in its name)."""
ZERO_STD_COLUMNS = ("frac_reward_zero_std", "train/frac_reward_zero_std")
GROUP_STD_COLUMNS = ("reward_std", "train/reward_std")
"""TRL/Unsloth ``reward_std``: the mean over groups of the within-group std (0 ⇔ every group degenerate)."""
ENTROPY_COLUMNS = ("entropy", "actor/entropy", "train/entropy", "actor/entropy_loss", "policy_entropy",
                   "train/policy_entropy")
SPREAD_COLUMNS = ("group_distinct_frac", "group_reward_std", "reward_std", "train/reward_std")
GRAD_COLUMNS = ("grad_norm", "actor/grad_norm", "train/grad_norm")
CLIP_COLUMNS = ("clip_ratio/region_mean", "clip_ratio", "actor/pg_clipfrac", "train/clip_ratio/region_mean",
                "train/clip_ratio")
CLIPPED_COLUMNS = ("completions/clipped_ratio", "train/completions/clipped_ratio", "response_length/clip_ratio",
                   "train/response_length/clip_ratio")
"""Share of completions cut at the length cap (TRL ``completions/clipped_ratio``, verl ``response_length/clip_ratio``)."""
KL_COLUMNS = ("kl", "train/kl", "actor/ppo_kl", "actor/kl_loss", "objective/kl")
CORRECTNESS_WORDS = ("correct", "answer", "accura", "exact")
FORMAT_WORDS = ("format", "xml", "strict", "soft", "int_reward", "number")


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


def _quiet(name: str, signal: str, thr: str, detail: dict | None = None) -> Detection:
    return Detection(name, True, False, None, signal, thr, detail or {})


def _result(name: str, signal: str, thr: str, events: list[dict], detail: dict | None = None) -> Detection:
    events = sorted(events, key=lambda e: e["step"])
    if not events:
        return _quiet(name, signal, thr, detail)
    return Detection(name, True, True, int(events[0]["step"]), signal, thr, {**(detail or {}), **events[0]}, events)


# ---------------------------------------------------------------------------------------------- column lookup
def _column(log: RunLog, names) -> tuple[str | None, np.ndarray | None]:
    for name in names:
        if name in log.series and np.isfinite(log.series[name]).sum() >= 3:
            return name, log.series[name]
    return None, None


def _eval_column(log: RunLog):
    name, y = _column(log, EVAL_COLUMNS)
    if name:
        return name, y
    for col in sorted(log.series):
        low = col.lower()
        if (low.startswith("val") or low.startswith("eval")) and any(k in low for k in ("reward", "score", "acc")) \
                and "std" not in low and "sampled" not in low and np.isfinite(log.series[col]).sum() >= 3:
            return col, log.series[col]
    return None, None


def _evaluation_rows(log: RunLog, e: np.ndarray) -> np.ndarray:
    """Rows that hold a new evaluation: where ``eval_step`` changes when the log has that column (the project's
    metrics.csv repeats the last evaluation on every row), else every row where the evaluation was logged."""
    ok = np.isfinite(e)
    es = log.series.get("eval_step")
    if es is not None and np.isfinite(es).any():
        prev = np.concatenate([[np.nan], es[:-1]])
        ok &= np.isfinite(es) & (es != prev)
    return np.flatnonzero(ok)


def _sub_rewards(log: RunLog) -> tuple[list[str], list[str]]:
    """(correctness, format) sub-reward columns: ``rewards/<name>`` or ``rewards/<name>/mean`` (TRL, Unsloth)."""
    corr, fmt = [], []
    for col in sorted(log.series):
        low = col.lower()
        if not low.startswith(("rewards/", "train/rewards/")) or low.endswith("/std") or low.endswith("rewards/mean"):
            continue
        if np.isfinite(log.series[col]).sum() < 3:
            continue
        if any(w in low for w in FORMAT_WORDS):        # "match_format_exactly" is a format reward, not a correct one
            fmt.append(col)
        elif any(w in low for w in CORRECTNESS_WORDS):
            corr.append(col)
    return corr, fmt


# ------------------------------------------------------------------------------------------ causal statistics
def causal_sigma(y: np.ndarray) -> np.ndarray:
    """σ_t of the module docstring: :func:`~.noise.step_sigma` of ``y[:m]`` at m = ⌈SIGMA_FIRST·SIGMA_GROWTH^j⌉
    values, held until the next such m; NaN before SIGMA_FIRST values. ``y``: finite values only."""
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
    """:func:`~.noise.step_sigma` of ``v``, memoised on its bytes (the live doctor re-reads the same prefixes at
    every update; a pure speed-up, bounded at 200,000 entries)."""
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


def _trailing_mean(y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Mean of y[i−k_i+1 … i] (fewer at the start: ``_full`` tells where the window is complete)."""
    c = np.concatenate([[0.0], np.cumsum(y)])
    j = np.arange(1, y.size + 1)
    lo = np.maximum(0, j - k)
    return (c[j] - c[lo]) / (j - lo)


def _full(k: np.ndarray, factor: int = 2) -> np.ndarray:
    """Rows with at least factor·k values behind them (a baseline and a test window)."""
    return np.arange(1, k.size + 1) >= factor * k


def _trailing_slope_t(y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """t-statistic of the least-squares slope of y on its index over the trailing k_i rows (0 where k_i < 4)."""
    n = y.size
    x = np.arange(n, dtype=float)
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
    return np.where((s0 >= 4) & np.isfinite(b), t, 0.0)


def _events(cond: np.ndarray, sustain: np.ndarray | int, rearm: np.ndarray | None = None) -> list[int]:
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


def _ffill(y: np.ndarray) -> np.ndarray:
    """Carry the last finite value forward (NaN before the first)."""
    ok = np.isfinite(y)
    pos = np.maximum.accumulate(np.where(ok, np.arange(y.size), -1))
    return np.where(pos >= 0, y[np.maximum(pos, 0)], np.nan)


def _on_rows(log: RunLog, y: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Values computed on y's finite rows, carried forward onto every row of the log."""
    out = np.full(log.steps.size, np.nan)
    out[np.isfinite(y)] = values
    return _ffill(out)


def _smoothed(y: np.ndarray, effect_fn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(smoothed, k, σ) of the finite values of y with the noise-scaled window for ``effect_fn(σ)``."""
    v = y[np.isfinite(y)]
    sig = causal_sigma(v)
    k = noise_window(sig, effect_fn(v, sig))
    return _trailing_mean(v, k), k, sig


def _upper_gate(log: RunLog, reward_bounds, fraction: float = GATE_FRACTION) -> np.ndarray:
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
    s, _, _ = _smoothed(r, lambda v, sig: np.full(v.size, GATE_FRACTION * (np.nanmax(hi) - np.nanmin(lo))
                                                   if np.isfinite(hi).any() else np.nan))
    near = np.where(np.isfinite(hi), s >= hi - fraction * (hi - lo), False)
    out = np.zeros(log.steps.size)
    out[ok] = near
    return _ffill(np.where(ok, out, np.nan)) > 0.5


def _unit_reward(log: RunLog, reward_bounds) -> np.ndarray:
    """(R − lo)/(hi − lo) on every row with the declared bounds, else with (0, 1) on the rows where every reward so
    far lies in [0, 1] (causal); NaN where no bound is known or no reward is logged."""
    r = log.reward
    if reward_bounds is not None:
        lo, hi = float(reward_bounds[0]), float(reward_bounds[1])
        return (r - lo) / (hi - lo)
    fin = np.where(np.isfinite(r), r, 0.5)
    unit = np.logical_and.accumulate((fin >= 0) & (fin <= 1))
    return np.where(unit & np.isfinite(r), r, np.nan)


def _stalled(log: RunLog) -> np.ndarray:
    """True on rows where learning has stalled: the t-statistic of the reward's least-squares slope over the
    trailing W = max(STALL_SPAN·k, STALL_MIN, STALL_FRACTION·rows so far) reward rows is below STALL_T (k: the noise window for an effect of
    HACKING_EFFECT × the reward's running range), i.e. no significant gain lately (causal)."""
    r = log.reward
    ok = np.isfinite(r)
    rv = r[ok]
    if rv.size == 0:
        return np.zeros(log.steps.size, bool)
    sig = causal_sigma(rv)
    k = noise_window(sig, HACKING_EFFECT * _running_scale(rv))
    t = _trailing_slope_t(rv, np.maximum(np.maximum(STALL_SPAN * k, STALL_MIN),
                                         (STALL_FRACTION * np.arange(1, rv.size + 1)).astype(int)))
    return np.nan_to_num(_on_rows(log, r, (t < STALL_T).astype(float)), nan=1.0) > 0.5


# -------------------------------------------------------------------------------------------------- detectors
def detect_reward_hacking(log: RunLog) -> Detection:
    """Module table, ``reward_hacking``: the training reward rises while (i) the evaluation falls at two
    consecutive evaluations or (ii) a correctness sub-reward falls below its running peak, sustained."""
    thr = (f"R risen by δ_R = {HACKING_Z:g}σ_R√(2/k) while (i) the mean of the last {HACKING_EVALS} evaluations < "
           f"the running max of such means − max({HACKING_Z:g}σ_E√(2/{HACKING_EVALS}), {HACKING_MIN_DROP}·scale_E) "
           f"at 2 consecutive evaluations and R has not fallen since that peak, or (ii) a correctness sub-reward < "
           f"its smoothed running peak − δ_C while the format sub-rewards rose, sustained")
    ename, e = _eval_column(log)
    corr, fmt = _sub_rewards(log)
    use_sub = bool(corr and fmt)
    if ename is None and not use_sub:
        return Detection("reward_hacking", False, False, None, "no held-out/strict evaluation reward or correctness "
                         "+ format sub-rewards logged", thr)
    r = log.reward
    ok = np.isfinite(r)
    rv = r[ok]
    scale_r = _running_scale(rv)
    rs, k, sig = _smoothed(r, lambda v, s: HACKING_EFFECT * scale_r)
    kb = np.minimum(k, rv.size)
    base = np.cumsum(rv)[kb - 1] / kb   # mean of the first k_i values
    rise = rs - base
    delta_r = HACKING_Z * sig * np.sqrt(2.0 / k)
    risen = _full(k) & (rise > delta_r)
    risen_rows = _on_rows(log, r, risen.astype(float)) > 0.5
    rise_rows = _on_rows(log, r, rise)
    events, signals = [], [log.reward_column]
    if ename is not None:
        eidx = _evaluation_rows(log, e)
        if eidx.size >= 2 * HACKING_EVALS:
            signals.append(ename)
            ev = e[eidx]
            sig_e = causal_sigma(ev)
            early = min(ev.size, SIGMA_FIRST - 1)
            sig_e[:early] = [step_sigma(ev[:j + 1]) for j in range(early)]
            m = HACKING_EVALS
            recent = _trailing_mean(ev, np.full(ev.size, m))
            fullm = np.arange(ev.size) >= m - 1
            peak = np.maximum.accumulate(np.where(fullm, recent, -np.inf))   # running max of m-evaluation means
            at_peak = np.maximum.accumulate(np.where(fullm & (recent >= peak), np.arange(ev.size), 0))
            scale_e = np.maximum.accumulate(np.abs(ev))
            drop = np.maximum(HACKING_Z * sig_e * math.sqrt(2.0 / m), HACKING_MIN_DROP * scale_e)
            rs_rows = _on_rows(log, r, rs)
            dr_rows = _on_rows(log, r, delta_r)
            # the training reward has not fallen since the evaluation's peak (a divergence, not a collapse)
            held = rs_rows[eidx] >= rs_rows[eidx[at_peak]] - dr_rows[eidx]
            fell = (recent < peak - drop) & (np.arange(ev.size) >= 2 * m - 1) & risen_rows[eidx] & held
            for j in _events(fell, 2):
                i = int(eidx[j])
                events.append({"step": int(log.steps[i]), "kind": "evaluation fell", "eval": recent[j],
                               "eval_peak": peak[j], "drop_min": drop[j], "delta_train": rise_rows[i]})
    if use_sub:
        signals += corr
        fmt_sum = np.nansum([log.series[c] for c in fmt], axis=0)
        fmt_ok = np.all([np.isfinite(log.series[c]) for c in fmt], axis=0)
        fmt_sum = np.where(fmt_ok, fmt_sum, np.nan)
        fsv = fmt_sum[fmt_ok]
        fs_s, kf, sf = _smoothed(fmt_sum, lambda v, s: HACKING_EFFECT * _running_scale(fsv))
        fs_rows, kf_rows = _on_rows(log, fmt_sum, fs_s), _on_rows(log, fmt_sum, kf.astype(float))
        sf_rows = _on_rows(log, fmt_sum, sf)
        fr_rows = _on_rows(log, fmt_sum, _running_scale(fsv))
        for col in corr:
            c = log.series[col]
            cv = c[np.isfinite(c)]
            scale_c = _running_scale(cv)
            cs, kc, sc = _smoothed(c, lambda v, s: HACKING_EFFECT * scale_c)
            # peak of a PEAK_WINDOW-times longer smoothing: a running max of short means is biased up by noise
            cl = _trailing_mean(cv, PEAK_WINDOW * kc)
            full = _full(kc, PEAK_WINDOW)
            pk = np.maximum.accumulate(np.where(full, cl, -np.inf))
            at_pk = np.maximum.accumulate(np.where(full & (cl >= pk), np.arange(cv.size), 0))
            dc = HACKING_Z * sc * np.sqrt(1.0 / kc + 1.0 / (PEAK_WINDOW * kc))
            # the fall must also matter next to the training reward's own scale (Round 3): a correctness term that
            # dips from 0 to -0.01 while the format terms jump by 2 is no hacking
            scale_rc = np.nan_to_num(_on_rows(log, r, scale_r)[np.isfinite(c)], nan=0.0)
            cond_c = full & (cs < pk - np.maximum(dc, HACKING_MIN_DROP * np.maximum(scale_c, scale_rc)))
            crow = np.flatnonzero(np.isfinite(c))
            cond_rows = (_on_rows(log, c, cond_c.astype(float)) > 0.5) & risen_rows
            # format rose significantly since the correctness peak
            pk_rows = _on_rows(log, c, crow[at_pk].astype(float))
            pk_idx = np.nan_to_num(pk_rows, nan=0).astype(int)
            dfmt = np.maximum(HACKING_Z * sf_rows * np.sqrt(2.0 / np.maximum(np.nan_to_num(kf_rows, nan=K_MAX), 1)),
                              HACKING_EFFECT * fr_rows)
            cond_rows &= np.nan_to_num(fs_rows - fs_rows[pk_idx] > dfmt, nan=0).astype(bool)
            kr = _on_rows(log, c, kc.astype(float))
            for i in _events(cond_rows, np.nan_to_num(kr, nan=K_MAX).astype(int)):
                events.append({"step": int(log.steps[i]), "kind": f"{col} fell", "delta_train": rise_rows[i]})
    return _result("reward_hacking", " vs ".join(signals), thr, events)


def _running_scale(v: np.ndarray) -> np.ndarray:
    """Causal scale of a series: the running max − running min of its values (at least 1e-12)."""
    return np.maximum(np.maximum.accumulate(v) - np.minimum.accumulate(v), 1e-12)


def detect_advantage_degeneracy(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> Detection:
    """Module table, ``advantage_degeneracy``."""
    thr = (f"smoothed (zero-std fraction − normalised reward) > {DEGENERACY_FRACTION}, sustained, while entropy ≥ "
           f"{CONCENTRATION_ENTROPY:.0%} of its initial value, learning has stalled (reward slope t < {STALL_T:g}) "
           f"and the reward is not within {GATE_FRACTION:.0%} of its upper bound")
    name, f = _column(log, ZERO_STD_COLUMNS)
    if name is None:
        sname, s = _column(log, GROUP_STD_COLUMNS)
        if sname is None:
            return Detection("advantage_degeneracy", False, False, None, "no zero-std-group fraction or TRL "
                             "reward_std logged", thr)
        name, f = f"{sname} == 0", np.where(np.isfinite(s), (s == 0).astype(float), np.nan)
    # all-correct groups are at most the normalised reward u = (R − lo)/(hi − lo) of the step: f − u is a lower
    # bound on the fraction of groups that all failed (the starved ones); without bounds, f itself
    u = _unit_reward(log, reward_bounds)
    f = np.where(np.isfinite(f), f - np.nan_to_num(u, nan=0.0), np.nan)
    fs, k, _ = _smoothed(f, lambda v, s: np.full(v.size, DEGENERACY_EFFECT))
    cond = _full(k) & (fs > DEGENERACY_FRACTION)
    cond_rows = _on_rows(log, f, cond.astype(float)) > 0.5
    hname, h = _column(log, ENTROPY_COLUMNS)
    if hname is not None:
        hv = h[np.isfinite(h)]
        h0 = float(np.mean(hv[:2 * K_MIN]))
        hs, _, _ = _smoothed(h, lambda v, s: CONCENTRATION_ENTROPY * np.abs(h0))
        collapsed = _on_rows(log, h, (hs < CONCENTRATION_ENTROPY * h0).astype(float)) > 0.5
        cond_rows &= ~collapsed
    cond_rows &= ~_upper_gate(log, reward_bounds) & _stalled(log)
    krows = np.nan_to_num(_on_rows(log, f, k.astype(float)), nan=K_MAX).astype(int)
    fs_rows = _on_rows(log, f, fs)
    events = [{"step": int(log.steps[i]), "fraction": fs_rows[i]} for i in _events(cond_rows, krows)]
    sig = name + (f" (entropy: {hname})" if hname else "")
    return _result("advantage_degeneracy", sig, thr, events, {"max_smoothed": float(np.nanmax(fs))})


def detect_policy_concentration(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> Detection:
    """Module table, ``policy_concentration``."""
    thr = (f"smoothed entropy < {CONCENTRATION_ENTROPY}·initial and smoothed within-group spread < "
           f"{CONCENTRATION_SPREAD} × its running maximum, sustained, learning stalled (reward slope t < "
           f"{STALL_T:g}), reward below the upper bound − {CONCENTRATION_HEADROOM:.0%} of the bound width")
    hname, h = _column(log, ENTROPY_COLUMNS)
    if hname is None:
        return Detection("policy_concentration", False, False, None, "no entropy logged", thr)
    hv = h[np.isfinite(h)]
    h0 = float(np.mean(hv[:2 * K_MIN]))
    hs, k, _ = _smoothed(h, lambda v, s: np.full(v.size, CONCENTRATION_ENTROPY * abs(h0)))
    cond = _full(k) & (hs < CONCENTRATION_ENTROPY * h0)
    cond_rows = _on_rows(log, h, cond.astype(float)) > 0.5
    sname, s = _column(log, SPREAD_COLUMNS)
    if sname is not None:
        ss, _, _ = _smoothed(s, lambda v, sg: (1 - CONCENTRATION_SPREAD) * np.maximum.accumulate(np.abs(v)))
        peak = np.maximum.accumulate(ss)
        cond_rows &= _on_rows(log, s, (ss < CONCENTRATION_SPREAD * peak).astype(float)) > 0.5
    cond_rows &= ~_upper_gate(log, reward_bounds, CONCENTRATION_HEADROOM) & _stalled(log)
    krows = np.nan_to_num(_on_rows(log, h, k.astype(float)), nan=K_MAX).astype(int)
    ratio = _on_rows(log, h, hs / h0 if h0 else np.full(hs.size, np.nan))
    events = [{"step": int(log.steps[i]), "entropy_ratio": ratio[i]} for i in _events(cond_rows, krows)]
    sig = hname + (f" and {sname}" if sname else " (no spread column: entropy alone)")
    return _result("policy_concentration", sig, thr, events,
                   {"min_entropy_ratio": float(np.nanmin(hs) / h0) if h0 else math.nan})


def _growth_events(log: RunLog, y: np.ndarray, cond_fn, label: str) -> list[dict]:
    """Events of a growth rule on a positive diagnostic series: ``cond_fn(values, smoothed, k) -> (cond, ratio)``
    on its finite values with the noise-scaled window for a factor-2 effect on log y."""
    ok = np.isfinite(y) & (y > 0)
    if ok.sum() < SIGMA_FIRST:
        return []
    ly = np.where(ok, np.log(np.where(ok, y, 1.0)), np.nan)
    v = ly[ok]
    sig = causal_sigma(v)
    k = noise_window(sig, math.log(2.0))
    s = _trailing_mean(v, k)
    cond, ratio = cond_fn(v, s, k)
    cond = cond & _full(k)
    rows = np.flatnonzero(ok)
    return [{"step": int(log.steps[rows[i]]), "reason": label, "ratio": float(ratio[i])} for i in _events(cond, k)]


def detect_dynamical_instability(log: RunLog, response: dict[str, Any] | None = None,
                                 margin: dict[str, Any] | None = None,
                                 reward_bounds: tuple[float, float] | None = None, *,
                                 reading: bool = True) -> Detection:
    """(a)–(g) of the module table. ``response``: a :func:`~.response_laws.fit_response_laws` result for the
    reward (passed to the reading); ``margin``: :func:`~.response_laws.stability_margin` output (needs K_ref);
    ``reading=False`` skips (d) (the causal signals only)."""
    thr = (f"(a) smoothed grad norm ≥ {GRAD_NORM_GROWTH:g}× initial and rising; (b) smoothed clip fraction > "
           f"{CLIP_FRACTION}; (e) std of Δreward over {ENVELOPE_WINDOW} rows ≥ {ENVELOPE_GROWTH:g}·√2σ (σ of the "
           f"first half); (f) KL ×{KL_JUMP:g} within "
           f"a window; (g) entropy ≥ {ENTROPY_BLOWUP:g}× its running min and ≥ {ENTROPY_ABOVE_INITIAL:g}× initial; all sustained; (c) stability margin 80 % "
           f"interval above 1; (d) reading verdict 'unstable'")
    events: list[dict] = []
    used = []
    gname, g = _column(log, GRAD_COLUMNS)
    if gname is not None:
        used.append(gname)

        def grad_rule(v, s, k):
            g0 = np.array([np.median(v[:kk]) for kk in np.minimum(k, np.arange(1, v.size + 1))]) \
                if v.size <= 64 else _running_initial_median(v, k)
            rising = _trailing_slope_t(v, np.maximum(k, 4)) > 0
            return (s >= math.log(GRAD_NORM_GROWTH) + g0) & rising, np.exp(s - g0)
        events += _growth_events(log, g, grad_rule, "(a) grad norm")
    cname, c = _column(log, CLIP_COLUMNS)
    if cname is not None and np.nanmax(np.abs(c)) > 0:
        used.append(cname)
        cs, k, _ = _smoothed(c, lambda v, s: np.full(v.size, CLIP_FRACTION / 2))
        cond = _on_rows(log, c, (_full(k) & (cs > CLIP_FRACTION)).astype(float)) > 0.5
        kr = np.nan_to_num(_on_rows(log, c, k.astype(float)), nan=K_MAX).astype(int)
        csr = _on_rows(log, c, cs)
        events += [{"step": int(log.steps[i]), "reason": "(b) clip fraction", "ratio": csr[i]}
                   for i in _events(cond, kr)]
    steps, r = log.reward_curve()
    if r.size >= SIGMA_FIRST:
        used.append(f"|Δ{log.reward_column}|")
        d = np.concatenate([[0.0], np.diff(r)])
        kw = np.full(r.size, ENVELOPE_WINDOW)
        m1 = _trailing_mean(d, kw)
        rms = np.sqrt(np.maximum(_trailing_mean(d * d, kw) - m1 * m1, 0.0))   # spread of Δr, trend removed
        full = np.arange(1, r.size + 1) >= ENVELOPE_WINDOW + 1
        sig_r = causal_sigma(r)
        base = np.maximum(math.sqrt(2.0) * sig_r[np.arange(r.size) // 2],   # σ of the first half of the prefix
                          ENVELOPE_FLOOR * _running_scale(r))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(base > 0, rms / base, 0.0)
        cond = full & (np.arange(r.size) >= 2 * ENVELOPE_WINDOW) & (ratio >= ENVELOPE_GROWTH)
        rows = np.flatnonzero(np.isfinite(log.reward))
        envelope = [{"step": int(log.steps[rows[i]]), "reason": "(e) |Δreward| envelope", "ratio": float(ratio[i])}
                    for i in _events(cond, ENVELOPE_WINDOW)]
    else:
        envelope = []
    kname, kl = _column(log, KL_COLUMNS)
    if kname is not None:
        used.append(kname)

        def kl_rule(v, s, k):
            idx = np.arange(v.size)
            prev = s[np.maximum(idx - k, 0)]
            jump = s - prev
            return (idx >= k) & (jump >= math.log(KL_JUMP)) & (s >= math.log(KL_FLOOR)), np.exp(jump)
        events += _growth_events(log, kl, kl_rule, "(f) KL jump")
    hname, h = _column(log, ENTROPY_COLUMNS)
    if hname is not None:
        used.append(hname)

        def ent_rule(v, s, k):
            full = _full(k)
            low = np.minimum.accumulate(np.where(full, s, np.inf))
            h0 = _running_initial_mean(v, k)           # log of the initial level (mean of the first k logs)
            above = s - h0 >= math.log(ENTROPY_ABOVE_INITIAL)
            return full & (s - low >= math.log(ENTROPY_BLOWUP)) & above, np.exp(s - low)
        events += _growth_events(log, np.abs(h), ent_rule, "(g) entropy blow-up")
    # (e) alone is the noise of a reward that climbs (a shaped reward's terms switching on, a success rate leaving 0
    # make every step noisier) as often as a blow-up: it counts only next to a causal signal of the optimisation
    # itself, (a), (b), (f) or (g), within ENVELOPE_CORROBORATION rows
    pos = {int(s): i for i, s in enumerate(log.steps)}
    others = np.array(sorted(pos[e["step"]] for e in events), dtype=int)
    events += [e for e in envelope
               if others.size and np.min(np.abs(others - pos[e["step"]])) <= ENVELOPE_CORROBORATION]
    last = int(log.steps[-1])
    if margin and margin.get("unstable") == "yes":
        used.append("stability margin")
        events.append({"step": last, "reason": f"(c) stability margin 80 % interval {margin.get('margin_80')} "
                                               "above 1"})
    if reading and r.size >= SIGMA_FIRST:
        verdict = _reading_verdict(steps, r, reward_bounds, response)
        if verdict is not None:
            used.append("reading")
            if verdict[0] == "unstable":
                events.append({"step": last, "reason": f"(d) reading: unstable ({verdict[1]})"})
    if not used:
        return Detection("dynamical_instability", False, False, None, "no grad norm, clip fraction, KL, entropy, "
                         "K_ref or reward", thr)
    det = _result("dynamical_instability", ", ".join(used), thr, events)
    if det.fired:
        det.detail["reasons"] = [e["reason"] for e in det.events]
    return det


def _running_initial_mean(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Mean of the first k_i values at each row i (k_i ≤ i + 1)."""
    kk = np.minimum(k, np.arange(1, v.size + 1))
    return np.cumsum(v)[kk - 1] / kk


def _running_initial_median(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Median of the first k_i values at each row i (k_i ≤ i + 1), computed once per distinct k."""
    out = np.empty(v.size)
    kk = np.minimum(k, np.arange(1, v.size + 1))
    for val in np.unique(kk):
        out[kk == val] = np.median(v[:val])
    return out


def _reading_verdict(steps, reward, reward_bounds, response) -> tuple[str, str] | None:
    """(verdict, reason) of :func:`~.reading.read_dynamics`, or None while that module is absent."""
    try:
        from .reading import read_dynamics
    except ImportError:
        return None
    rd = read_dynamics(steps, reward, reward_bounds=reward_bounds, fits=response)
    return str(rd.verdict), str(getattr(rd, "reason", ""))


def detect_collapse(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> Detection:
    """Module table, ``collapse_warning`` (causal, re-arming): (A) the reward's own fall, or (B) precursors while
    the reward has started to fall. ``detail["collapse_step"]``: the earlier collapse rule (module docstring), kept
    for the pilot."""
    thr = (f"(A) smoothed R < P − {WARNING_DROP}·G with G = P − F > {WARNING_GAIN_Z:g}σ√(2/k) and trailing slope "
           f"t < {WARNING_T}; (B) smoothed R < P − {PRECURSOR_DROP}·G with ≥ {PRECURSOR_COUNT} precursors (entropy "
           f"×{PRECURSOR_ENTROPY:g} off its running extreme, clipped-completion ratio > {PRECURSOR_CLIPPED}, grad "
           f"norm ≥ {PRECURSOR_GRAD:g}× initial, KL ≥ {KL_JUMP:g}× k rows earlier); (C) ≥ {PRECURSOR_ALONE} "
           f"precursors on {K_MIN} rows; re-arms at R ≥ P − {WARNING_REARM}·G")
    steps, r = log.reward_curve()
    detail = _legacy_collapse(steps, r, reward_bounds)
    if r.size < SIGMA_FIRST:
        return _quiet("collapse_warning", log.reward_column, thr, detail)
    sig = causal_sigma(r)
    # two passes: the window for a drop of WARNING_DROP × the gain measured with the previous window
    k = np.full(r.size, K_MIN)
    for _ in range(2):
        s, peak, floor, gain = _peak_floor_gain(r, k, reward_bounds)
        k = noise_window(sig, WARNING_DROP * np.where(gain > 0, gain, np.nan), z=WARNING_Z)
    s, peak, floor, gain = _peak_floor_gain(r, k, reward_bounds)
    tstat = _trailing_slope_t(r, np.maximum(k, 5))
    signif = _full(k, PEAK_WINDOW) & (gain > WARNING_GAIN_Z * sig * np.sqrt(2.0 / k))
    warn = signif & (s < peak - WARNING_DROP * gain) & (tstat < WARNING_T)
    pre, names = _precursors(log, k)
    warn_b = signif & (s < peak - PRECURSOR_DROP * gain) & (pre >= PRECURSOR_COUNT)
    # (C) the side signals alone, whatever the reward shows (a 1-prompt reward cannot show a fall in time)
    warn_c = (pre >= PRECURSOR_ALONE) & (np.arange(r.size) >= 4 * K_MIN)
    warn_c = np.convolve(warn_c, np.ones(K_MIN), "full")[:r.size] >= K_MIN
    rearm = s >= peak - WARNING_REARM * gain
    events = [{"step": int(steps[i]), "smoothed": s[i], "peak": peak[i], "floor": floor[i], "window": int(k[i]),
               "t": tstat[i], "precursors": int(pre[i]), "rule": "A" if warn[i] else "B" if warn_b[i] else "C"}
              for i in _events(warn | warn_b | warn_c, 1, rearm & ~warn_c)]
    if detail.get("collapse_step") is not None:
        before = [e for e in events if e["step"] <= detail["collapse_step"]]
        if before:
            detail["lead_steps"] = int(detail["collapse_step"] - before[-1]["step"])
    signal = log.reward_column + (f" (precursors: {', '.join(names)})" if names else "")
    return _result("collapse_warning", signal, thr, events, detail)


def _precursors(log: RunLog, k: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Count of abnormal side signals at each reward row (causal; module table, collapse (B)), and their columns."""
    rows = np.flatnonzero(np.isfinite(log.reward))
    count = np.zeros(log.steps.size)
    names = []
    hname, h = _column(log, ENTROPY_COLUMNS)
    if hname is not None:
        hv = np.abs(h[np.isfinite(h)])
        kh = np.full(hv.size, 2 * K_MIN)
        hs = _trailing_mean(hv, kh)
        full = _full(kh)
        lo = np.minimum.accumulate(np.where(full, hs, np.inf))
        h0 = _running_initial_mean(hv, kh)
        # a rise off its running minimum to above the initial level (a falling entropy is what healthy runs do)
        off = full & (hs >= PRECURSOR_ENTROPY * lo) & (hs >= h0)
        count += np.nan_to_num(_on_rows(log, h, off.astype(float)))
        names.append(hname)
    cname, c = _column(log, CLIPPED_COLUMNS)
    if cname is not None:
        cv = c[np.isfinite(c)]
        cs = _trailing_mean(cv, np.full(cv.size, K_MIN))
        count += np.nan_to_num(_on_rows(log, c, (cs > PRECURSOR_CLIPPED).astype(float)))
        names.append(cname)
    gname, g = _column(log, GRAD_COLUMNS)
    if gname is not None:
        gv = np.abs(g[np.isfinite(g)])
        kg = np.full(gv.size, 2 * K_MIN)
        gs = _trailing_mean(gv, kg)
        g0 = _running_initial_median(gv, kg)
        count += np.nan_to_num(_on_rows(log, g, (_full(kg) & (gs >= PRECURSOR_GRAD * g0)).astype(float)))
        names.append(gname)
    kname, kl = _column(log, KL_COLUMNS)
    if kname is not None:
        kv = np.abs(kl[np.isfinite(kl)])
        kk = np.full(kv.size, 2 * K_MIN)
        ks = _trailing_mean(kv, kk)
        prev = ks[np.maximum(np.arange(kv.size) - 2 * kk, 0)]
        jump = _full(kk, 3) & (ks >= KL_JUMP * np.maximum(prev, 1e-12)) & (ks >= KL_FLOOR)
        count += np.nan_to_num(_on_rows(log, kl, jump.astype(float)))
        names.append(kname)
    return count[rows], names


def _peak_floor_gain(r: np.ndarray, k: np.ndarray, reward_bounds):
    """(smoothed S over k, running peak P of the smoothing over PEAK_WINDOW·k, floor F, gain P − F)."""
    s = _trailing_mean(r, k)
    s_long = _trailing_mean(r, PEAK_WINDOW * k)
    full = _full(k, PEAK_WINDOW)
    sv = np.where(full, s_long, -np.inf)
    peak = np.maximum.accumulate(sv)
    idx = np.arange(r.size)
    at_peak = np.maximum.accumulate(np.where(sv >= peak, idx, 0))
    if reward_bounds is not None:
        floor = np.full(r.size, float(reward_bounds[0]))
    else:
        floor = np.minimum.accumulate(np.where(full, s_long, np.inf))[at_peak]
    gain = np.where(np.isfinite(peak) & np.isfinite(floor), peak - floor, 0.0)
    return s, peak, floor, gain


def _legacy_collapse(steps: np.ndarray, r: np.ndarray, reward_bounds) -> dict[str, Any]:
    """The earlier collapse rule, unchanged (module docstring): ``collapse_step``, ``peak``, ``floor``."""
    n = r.size
    if n == 0:
        return {"collapse_step": None}
    w = max(6, int(round(0.1 * n)))
    k = max(3, w // 2)
    rs = _trailing_mean(r, np.full(n, k))
    floor = reward_bounds[0] if reward_bounds is not None else float(np.min(rs[:w]))
    delta_min = max(3 * step_sigma(r) * math.sqrt(2 / w), 1e-12)
    peak = np.maximum.accumulate(rs[k:]) if n > k else np.array([])
    hit = np.flatnonzero((peak - floor > delta_min) & (rs[k:] < floor + COLLAPSE_FRACTION * (peak - floor)))
    collapse = int(steps[k + hit[0]]) if hit.size else None
    pk = float(peak[hit[0]]) if hit.size else (float(peak[-1]) if peak.size else math.nan)
    return {"collapse_step": collapse, "peak": pk, "floor": float(floor)}


def diagnose(log: RunLog, *, response: dict[str, Any] | None = None, margin: dict[str, Any] | None = None,
             reward_bounds: tuple[float, float] | None = None, reading: bool = True) -> dict[str, Detection]:
    """Run every detector on ``log``; ``{name: Detection}`` in :data:`DETECTORS` order. ``reading=False`` skips
    the (whole-prefix) reading of instability (d)."""
    if reward_bounds is not None and not (len(reward_bounds) == 2 and reward_bounds[0] < reward_bounds[1]):
        raise ValueError(f"reward_bounds must be (lo, hi) with lo < hi, got {reward_bounds!r}")
    return {"reward_hacking": detect_reward_hacking(log),
            "advantage_degeneracy": detect_advantage_degeneracy(log, reward_bounds),
            "policy_concentration": detect_policy_concentration(log, reward_bounds),
            "dynamical_instability": detect_dynamical_instability(log, response, margin, reward_bounds,
                                                                  reading=reading),
            "collapse_warning": detect_collapse(log, reward_bounds)}


def confusion_matrix(results: dict[str, dict[str, Detection]]) -> str:
    """Markdown table: one row per run, one column per detector (step it fired, "–" if not, "n/a" if the log lacks
    the series)."""
    lines = ["| run | " + " | ".join(DETECTORS) + " |", "|---|" + "---|" * len(DETECTORS)]
    for run, dets in results.items():
        cells = []
        for name in DETECTORS:
            d = dets[name]
            cells.append("n/a" if not d.available else (f"**fires @ {d.step}**" if d.fired else "–"))
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- benchmark
LEAD_TARGET = 10
"""Steps ahead of ``collapse_step`` a warning must come to count (issue 19)."""
FAILURE_DETECTOR = {"reward_hacking": "reward_hacking", "advantage_degeneracy": "advantage_degeneracy",
                    "policy_concentration": "policy_concentration", "dynamical_instability": "dynamical_instability"}
"""Corpus ``failure_mode`` → the detector that should catch it."""


def warning_lead(det: Detection, collapse_step: int) -> int | None:
    """Steps from the last collapse-warning event at or before ``collapse_step`` to it (None: no such event)."""
    before = [e["step"] for e in det.events if e["step"] <= collapse_step]
    return int(collapse_step - before[-1]) if before else None


def benchmark_detectors(runs, *, reading: bool = True, live_every: int | None = None) -> dict[str, Any]:
    """Score every detector on labelled corpus runs (:mod:`.corpus`): per detector the false-alarm rate on
    ``outcome == 'healthy'`` runs (fired / runs where it is available, with counts), the detection rate on runs of
    its ``failure_mode``; for the collapse warning the lead time on the lead-time population
    (``CorpusRun.in_lead_time_population``: collapse_step ≥ 30 logged points after the first step), success =
    lead ≥ :data:`LEAD_TARGET`; and ``any`` (some detector fired) on healthy runs. ``live_every``: also replay every
    run through the live doctor (:func:`~.live.benchmark_live` at that ``every``; result under ``"live"``)."""
    runs = list(runs)
    per = {name: {"healthy_runs": 0, "false_alarms": 0, "mode_runs": 0, "mode_detected": 0} for name in DETECTORS}
    any_fa, n_healthy, leads, missing = 0, 0, [], 0
    for run in runs:
        dets = diagnose(run.log, reward_bounds=run.reward_bounds, reading=reading)
        if run.outcome == "healthy":
            n_healthy += 1
            any_fa += any(d.fired for d in dets.values())
            for name, d in dets.items():
                if d.available:
                    per[name]["healthy_runs"] += 1
                    per[name]["false_alarms"] += int(d.fired)
        mode = getattr(run, "failure_mode", None)
        if mode in FAILURE_DETECTOR:
            name = FAILURE_DETECTOR[mode]
            per[name]["mode_runs"] += 1
            per[name]["mode_detected"] += int(dets[name].fired)
        if getattr(run, "in_lead_time_population", False):
            lead = warning_lead(dets["collapse_warning"], int(run.collapse_step))
            if lead is None:
                missing += 1
            leads.append(lead)
    for name, p in per.items():
        p["false_alarm_rate"] = p["false_alarms"] / p["healthy_runs"] if p["healthy_runs"] else None
        p["detection_rate"] = p["mode_detected"] / p["mode_runs"] if p["mode_runs"] else None
    got = np.array([x for x in leads if x is not None], dtype=float)
    per["collapse_warning"]["lead"] = {
        "population": len(leads), "warned": int(got.size), "unwarned": missing,
        "warned_10_ahead": int((got >= LEAD_TARGET).sum()),
        "rate_10_ahead": float((got >= LEAD_TARGET).sum() / len(leads)) if leads else None,
        "median_lead": float(np.median(got)) if got.size else None}
    out = {"runs": len(runs), "healthy": n_healthy, "any_false_alarm": any_fa,
           "any_false_alarm_rate": any_fa / n_healthy if n_healthy else None, "detectors": per}
    if live_every is not None:
        from .live import benchmark_live
        out["live"] = benchmark_live(runs, every=live_every)
    return out


def format_detector_benchmark(result: dict[str, Any], title: str = "") -> str:
    """Markdown table of :func:`benchmark_detectors` (targets: false alarms ≤ 10 %, warned ≥ 10 steps ahead on
    ≥ 80 % of the lead-time population)."""
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f} %"
    lines = [f"**{title}**" if title else "",
             "| detector | false alarms on healthy runs (target ≤ 10 %) | detected on its failure mode |",
             "|---|---|---|"]
    for name, p in result["detectors"].items():
        lines.append(f"| {name} | {p['false_alarms']}/{p['healthy_runs']} ({pct(p['false_alarm_rate'])}) | "
                     f"{p['mode_detected']}/{p['mode_runs']} ({pct(p['detection_rate'])}) |")
    lead = result["detectors"]["collapse_warning"]["lead"]
    lines.append(f"| any detector | {result['any_false_alarm']}/{result['healthy']} "
                 f"({pct(result['any_false_alarm_rate'])}) | |")
    lines.append("")
    med = "n/a" if lead["median_lead"] is None else f"{lead['median_lead']:.0f} steps"
    lines.append(f"Collapse warned ≥ {LEAD_TARGET} steps before the reward halves (target ≥ 80 %): "
                 f"{lead['warned_10_ahead']}/{lead['population']} ({pct(lead['rate_10_ahead'])}); warned at all "
                 f"{lead['warned']}, median lead {med}.")
    if result.get("live"):
        from .live import format_live_benchmark
        lines += ["", format_live_benchmark(result["live"])]
    return "\n".join(x for x in lines if x is not None)
