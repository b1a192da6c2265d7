"""The run-doctor corpus: GRPO reward curves with known truth, split dev/test by source, to score the run tools.

Every forecaster, reading and detector in :mod:`rlvr_dynamics.doctor` is judged on this corpus by
``bench/bench_doctor.py`` (DESIGN.md, "Judging the run tools"). The label rules below were written and committed
(2026-12-01) before any forecaster, reading or detector was scored on the corpus; constants of the tools are tuned
on ``split == "dev"`` only.

Split versions
--------------
**v2 (default since 2026-12-01, a rule change made after the v1 test part was scored once,
``book/doctor_benchmark_v1.md``).** The v1 test part showed false alarms coming from real families that v1's dev part
lacked (p1-main, p2-stall, p2-fresh, SmolLM2), so tuning on them now requires moving them out of the test part. v2:
dev = v1 dev + the v1 test project families + simulated seed family 1; test = simulated seed family **2** (never
generated before this change), ``p2-len-adam``, ``project-fail`` and ``shared`` (these three were scored once, in
aggregate, under v1; no rule was tuned on them). ``load_corpus(version=1)`` gives the v1 split for the record.

**v3 (default since 2026-12-02, changed after the result).** Adds ``cs336``: the 35 labelled course logs of
``../shared/grpo_logs_cs336`` (7 collapses, 25 healthy, 2 unstable, 1 floor; dev, issue 29). Moves ``shared`` to
dev: the 15 public logs were looked at while the collapse report and the status rule were built (their false
reports shaped the heavy-tail safeguards), so they are no longer a clean test. Test part: simulated family 2,
``p2-len-adam`` and ``project-fail``, which the new rules were not built on. Since 2026-12-03 the dev part also
holds ``noisy-1p``/``noisy-2p`` (``data/configs/grpo_noisy_healthy.yml``): the testbed at 1 and 2 prompts × 8
completions per step, 400 steps logged at every step, labelled by the held-out rule like the other project runs
(issue 35: the public runs' false alarms came from such noise, which the dev part lacked).

Sources (v1 split)
------------------
=================  ===========================================================================  =====
source             what                                                                         split
=================  ===========================================================================  =====
``sim``            curves simulated from P1's second-order response (:func:`simulate_run`)      dev: seed family 0,
                   in every regime, collapse scenarios and the three other failure modes,       test: seed family 1
                   with the noise of real logs (1–1,024 prompts per step) and AR(1) level
                   wander
``bisection``      the P2 length-sweep bisection trials (``data/runs/p2-len*``): hundreds of    dev: ``p2-len`` (SGD),
                   15-step real GRPO runs, each with a recorded collapse outcome at its η       test: ``p2-len-adam``
``project``        the project's other committed GRPO runs (tiny models, SmolLM2)               dev: p1-long, p1-sizes,
                                                                                                p2-lr, p1-pilot;
                                                                                                test: p1-main, p2-stall,
                                                                                                p2-fresh, smollm*
``project-fail``   the runs with one failure induced on purpose (``data/runs/p1-fail-*``)       test
``shared``         the 15 public logs of ``../shared/grpo_logs`` (all healthy; absent in a      test
                   user's clone: skipped)
=================  ===========================================================================  =====

Label rules
-----------
``outcome`` is one of ``healthy``, ``collapse``, ``unstable``, ``failure`` (another induced failure mode):

- ``sim``: by construction (the regime the curve was drawn from): ``growing`` → ``unstable``; ``collapse`` →
  ``collapse``; ``reward_hacking`` / ``advantage_degeneracy`` / ``policy_concentration`` → ``failure``; every other
  regime (``first-order``, ``overdamped``, ``underdamped``, ``flat``) → ``healthy``.
- ``bisection``: the trial's recorded outcome (``collapsed`` in ``data/bisections/<name>.json``: final held-out
  success below half the initial one, :func:`rlvr_dynamics.p2.step_size.is_collapsed`).
- ``project``: the same held-out rule on ``eval.json`` (``after.heldout < 0.5 × before.heldout``) → ``collapse``,
  else ``healthy``; without ``eval.json``, the training-reward rule below (``collapse`` when the reward ends below
  half its gain).
- ``project-fail``: ``failure_mode`` from the induced mode in the run name (``healthy`` has none); ``outcome`` is
  ``healthy`` for the healthy control, ``failure`` for the hacking / degeneracy / concentration inductions (whatever
  the held-out accuracy did: a hacked run's held-out accuracy falls by design), and for the two instability
  inductions ``collapse`` when the held-out rule says so, else ``unstable``. ``meta["heldout_collapsed"]`` keeps the
  held-out outcome of every run.
- ``shared``: ``healthy`` (the logs' README: every run trains normally).

``collapse_step`` (hindsight, on the logged training reward, for every run whose outcome is ``collapse``): smooth
the reward with a centred moving mean over ``k`` logged points, ``k`` the smallest odd number ≥ 3 with
σ/√k ≤ 0.1·gain (σ: :func:`~rlvr_dynamics.runs.noise.step_sigma`; gain: the 95th percentile of the reward minus the floor),
at most n/5; floor F = the lower reward bound when declared, else the minimum of the smoothed reward over the first
10 % of points; P = the running maximum of the smoothed reward. ``collapse_step`` is the first step where the
smoothed reward is below F + ½(P − F) while P − F exceeds 6σ/√k (a smoothed flat noise series spans about
3σ/√k over a few hundred points), and stays below it for the rest of the run. None
when the training reward never halves that way (e.g. a held-out collapse the sampled reward does not show).

``noise_class``: :func:`~rlvr_dynamics.runs.noise.noise_class` of the whole reward curve with its declared bounds.

The lead-time population of the collapse warning: collapsing runs whose ``collapse_step`` lies ≥ 30 logged points
after the first step (room for a warning 10 steps ahead after a minimal history).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from rlvr_dynamics.paths import DATA_DIR, RUNS_DIR, SHARED_DIR
from rlvr_dynamics.runs.logs import RunLog, load_log
from rlvr_dynamics.runs.noise import noise_class as _noise_class
from rlvr_dynamics.runs.noise import step_sigma

SOURCES = ("sim", "bisection", "project", "project-fail", "shared", "cs336")
OUTCOMES = ("healthy", "collapse", "unstable", "failure")
SIM_REGIMES = ("first-order", "overdamped", "underdamped", "flat", "growing", "collapse", "reward_hacking",
               "advantage_degeneracy", "policy_concentration")
"""Regimes the simulator draws, in the order of :data:`SIM_COUNTS`."""
SIM_COUNTS = {"first-order": 25, "overdamped": 40, "underdamped": 35, "flat": 25, "growing": 40, "collapse": 40,
              "reward_hacking": 15, "advantage_degeneracy": 15, "policy_concentration": 15}
"""Simulated runs per regime and split."""
PROJECT_SPLIT = {"noisy-1p": "dev", "noisy-2p": "dev",
                 "p1-long": "dev", "p1-sizes": "dev", "p2-lr": "dev", "p1-pilot": "dev", "p1-main": "test",
                 "p2-stall": "test", "p2-fresh": "test", "smollm-main": "test", "smollm-pilot": "test",
                 "smollm2-add": "test"}
"""Family of a committed run (its name without the hash) → split."""
BISECTION_SPLIT = {"p2-len": "dev", "p2-len-adam": "test"}
FAILURE_MODES = ("reward_hacking", "advantage_degeneracy", "policy_concentration", "dynamical_instability")
LEAD_TIME_MIN_HISTORY = 30
"""A collapsing run enters the lead-time population when its collapse step is ≥ this many logged points in."""


@dataclass
class CorpusRun:
    """One labelled run of the corpus (module docstring for every label rule)."""

    name: str
    source: str
    split: str
    log: RunLog
    reward_bounds: tuple[float, float] | None
    """Declared reward bounds (0/1 success rates), None when the scale is unknown."""
    prompts_per_step: int | None
    noise_class: str
    outcome: str
    collapse_step: int | None = None
    regime: str | None = None
    """Simulated runs: the regime drawn; None for real runs."""
    failure_mode: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def in_lead_time_population(self) -> bool:
        """A collapse with room for a warning ≥ 10 steps ahead (module docstring)."""
        if self.outcome != "collapse" or self.collapse_step is None:
            return False
        steps, _ = self.log.reward_curve()
        return int(np.searchsorted(steps, self.collapse_step)) >= LEAD_TIME_MIN_HISTORY


# ---------------------------------------------------------------------------------------------------------------
# Hindsight labels
# ---------------------------------------------------------------------------------------------------------------

def _centred_mean(y: np.ndarray, k: int) -> np.ndarray:
    """Centred moving mean over k points (shrinking at the ends)."""
    c = np.cumsum(np.insert(y, 0, 0.0))
    idx = np.arange(y.size)
    lo = np.clip(idx - k // 2, 0, y.size)
    hi = np.clip(idx + k // 2 + 1, 0, y.size)
    return (c[hi] - c[lo]) / (hi - lo)


def hindsight_collapse(steps, reward, reward_bounds: tuple[float, float] | None = None) -> tuple[int | None, bool]:
    """``(collapse_step, ends_collapsed)`` by the hindsight rule of the module docstring: the first step where the
    centred-smoothed reward has lost half its gain for good, and whether the run ends below half its gain."""
    t = np.asarray(steps, dtype=float)
    y = np.asarray(reward, dtype=float)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    n = y.size
    if n < 5:
        return None, False
    sigma = step_sigma(y)
    first = max(2, int(math.ceil(0.1 * n)))
    floor0 = float(reward_bounds[0]) if reward_bounds is not None else float(np.min(_centred_mean(y, 3)[:first]))
    gain = max(float(np.quantile(y, 0.95)) - floor0, 1e-12)
    k = max(3, int(math.ceil(100 * sigma * sigma / (gain * gain))))
    k = min(k, max(3, n // 5))
    k += 1 - k % 2
    s = _centred_mean(y, k)
    floor = floor0 if reward_bounds is not None else float(np.min(s[:first]))
    peak = np.maximum.accumulate(s)
    half = floor + 0.5 * (peak - floor)
    significant = (peak - floor) > 6 * sigma / math.sqrt(k)
    below = (s < half) & significant
    # "stays below for the rest of the run": below the half of the run's final peak level from here on
    stays = np.flip(np.logical_and.accumulate(np.flip(s < floor + 0.5 * (peak - floor))))
    hit = np.flatnonzero(below & stays)
    ends = bool(below[-1])
    return (int(t[hit[0]]) if hit.size else None), ends


# ---------------------------------------------------------------------------------------------------------------
# Simulated runs
# ---------------------------------------------------------------------------------------------------------------

def _unit_response(t: np.ndarray, zeta: float, omega0: float) -> np.ndarray:
    """u(t) of M ë + C ė + K e = 0 from rest, u(0) = 1 (P1 spec §3.3): every regime by its damping ratio."""
    if zeta > 1.0:
        r = math.sqrt(zeta * zeta - 1.0)
        l1, l2 = omega0 * (zeta - r), omega0 * (zeta + r)       # slow, fast rates
        return (l2 * np.exp(-l1 * t) - l1 * np.exp(-l2 * t)) / (l2 - l1)
    if zeta == 1.0:
        return (1 + omega0 * t) * np.exp(-omega0 * t)
    a = zeta * omega0
    wd = omega0 * math.sqrt(1.0 - zeta * zeta)
    return np.exp(-a * t) * (np.cos(wd * t) + a / wd * np.sin(wd * t))


def _logit(p):
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _sample_rewards(rng: np.random.Generator, level: np.ndarray, prompts: int, group: int,
                    heterogeneity: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-step mean reward, mean within-group std (TRL's ``reward_std`` for one prompt: the group's std) and the
    fraction of zero-std groups, for ``prompts`` prompts of ``group`` samples, prompt success
    q_i = σ(logit(level) + heterogeneity·z_i). Exact sampling up to 64 prompts; a normal approximation with the
    exact mean and variance above."""
    n = level.size
    if prompts <= 64:
        z = rng.standard_normal((n, prompts))
        q = _sigmoid(_logit(level)[:, None] + heterogeneity * z)
        k = rng.binomial(group, q)                                 # successes per group
        p = k / group
        std = np.sqrt(p * (1 - p) * group / max(group - 1, 1))     # unbiased std of 0/1 rewards in a group
        return p.mean(1), std.mean(1), ((k == 0) | (k == group)).mean(1)
    m = 4000   # Monte-Carlo prompts for the moments of one step
    zq = rng.standard_normal(m)
    q = _sigmoid(_logit(level)[:, None] + heterogeneity * zq[None, :])
    mean = q.mean(1)
    var = (q.var(1) + (q * (1 - q)).mean(1) / group) / prompts
    r = np.clip(mean + np.sqrt(var) * rng.standard_normal(n), 0.0, 1.0)
    pz = (q ** group + (1 - q) ** group).mean(1)
    frac0 = np.clip(pz + np.sqrt(pz * (1 - pz) / prompts) * rng.standard_normal(n), 0, 1)
    es = (np.sqrt(q * (1 - q) * group / max(group - 1, 1))).mean(1)
    return r, es + 0.02 * es * rng.standard_normal(n), frac0


def simulate_run(regime: str, seed: int | np.random.Generator, *, name: str | None = None,
                 split: str = "dev") -> CorpusRun:
    """One simulated GRPO log of ``regime`` (:data:`SIM_REGIMES`).

    The expected success level follows P1's second-order response ``L(t) = R∞ + (R0 − R∞) u(t)`` (overdamped
    ζ ∈ [1.2, 4], underdamped ζ ∈ [0.12, 0.6], growing ζ ∈ [−0.25, −0.06] with ≥ 3 periods in the run, first order =
    ζ ≫ 1 limit, flat = no change), plus an AR(1) wander of logit(L) (φ ∈ [0.9, 0.98], stationary sd up to 0.25);
    the logged reward samples ``prompts`` prompts × ``G`` completions per step (1–1,024 prompts, heterogeneous
    prompt difficulty), is logged every 1, 5 or 10 steps, and in a quarter of runs is rescaled to an Unsloth-like
    sum of shaped rewards (× 2–9.5 plus a saturating format reward; bounds then undeclared). Side series: entropy,
    grad norm, KL, mean completion length (cap 256) and clipped ratio, ``reward_std``, ``frac_reward_zero_std``,
    and a held-out evaluation every 10 steps in half the runs.

    Failure scenarios: ``collapse`` rises then falls to ~0 over 5–60 steps, with precursors in entropy, length and
    grad norm 0–40 steps before the reward falls; ``reward_hacking`` — the training reward rises through the format
    reward while the held-out evaluation stays flat or falls; ``advantage_degeneracy`` — a hard task (success
    ~0.01–0.05) where most groups have zero std while entropy holds; ``policy_concentration`` — entropy falls below
    15 % of its start and the within-group spread falls while the reward stalls well below its bound.
    """
    if regime not in SIM_REGIMES:
        raise ValueError(f"regime must be one of {SIM_REGIMES}, got {regime!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_steps = int(rng.choice([60, 100, 150, 250, 400]))
    log_every = int(rng.choice([1, 1, 1, 1, 5, 10])) if n_steps >= 150 else 1
    prompts = int(rng.choice([1, 1, 2, 4, 16, 64, 256, 1024]))
    group = int(rng.choice([4, 6, 8, 16]))
    t = np.arange(1, n_steps + 1, dtype=float)
    r0 = float(rng.uniform(0.05, 0.45))
    r_inf = float(rng.uniform(max(r0 + 0.2, 0.45), 0.97))
    scale_t = float(rng.uniform(0.08, 0.4)) * n_steps           # a characteristic time of the rise
    zeta = omega0 = math.nan
    if regime == "first-order":
        level = r_inf + (r0 - r_inf) * np.exp(-(t - 1) / scale_t)
    elif regime in ("overdamped", "collapse", "reward_hacking"):
        zeta = float(rng.uniform(1.2, 4.0))
        omega0 = 2 * zeta / scale_t                               # slow rate ≈ 1/scale_t
        level = r_inf + (r0 - r_inf) * _unit_response(t - 1, zeta, omega0)
    elif regime in ("underdamped", "growing"):
        periods = float(rng.uniform(3.0, 8.0))
        omega_d = 2 * math.pi * periods / n_steps
        zeta = float(rng.uniform(0.12, 0.6)) if regime == "underdamped" else float(rng.uniform(-0.25, -0.06))
        omega0 = omega_d / math.sqrt(1 - zeta * zeta)
        if regime == "growing":
            # the oscillation grows from a small start to a visible amplitude by the end
            amp_end = float(rng.uniform(0.15, 0.35))
            a = -zeta * omega0                                     # growth rate > 0
            amp0 = amp_end * math.exp(-a * n_steps)
            r_mid = float(rng.uniform(0.35, 0.65))
            level = r_mid - amp0 * np.exp(a * (t - 1)) * np.cos(omega_d * (t - 1))
        else:
            level = r_inf + (r0 - r_inf) * _unit_response(t - 1, zeta, omega0)
    elif regime == "flat":
        level = np.full(t.size, float(rng.uniform(0.1, 0.9)))
    elif regime == "advantage_degeneracy":
        level = np.full(t.size, float(rng.uniform(0.01, 0.05)))
    else:  # policy_concentration: a rise that stalls mid-way
        r_inf = float(rng.uniform(0.35, 0.65))
        level = r_inf + (r0 * 0.5 - r_inf) * np.exp(-(t - 1) / scale_t)
    collapse_at = precursor = None
    if regime == "collapse":
        collapse_at = int(rng.uniform(0.35, 0.8) * n_steps)
        duration = float(rng.uniform(5, 60))
        precursor = int(rng.uniform(0, 40))
        drop = _sigmoid((t - collapse_at - duration / 2) / (duration / 8))
        level = level * (1 - drop) + float(rng.uniform(0.0, 0.04)) * drop
    # AR(1) wander of the level in logit space
    phi = float(rng.uniform(0.9, 0.98))
    sd = float(rng.uniform(0.0, 0.25))
    eps = rng.standard_normal(t.size) * sd * math.sqrt(1 - phi * phi)
    wander = np.zeros(t.size)
    for i in range(1, t.size):
        wander[i] = phi * wander[i - 1] + eps[i]
    level = _sigmoid(_logit(np.clip(level, 0.003, 0.997)) + wander)
    reward, reward_std, frac0 = _sample_rewards(rng, level, prompts, group, float(rng.uniform(0.5, 2.0)))
    # side series
    h0 = float(rng.uniform(0.3, 1.5))
    entropy = h0 * (0.55 + 0.45 * np.exp(-(t - 1) / max(scale_t * 2, 1.0)))
    g0 = float(rng.uniform(0.05, 2.0))
    grad = g0 * (0.7 + 0.3 * np.exp(-(t - 1) / max(scale_t, 1.0)))
    kl = 0.002 * g0 * (1 - np.exp(-(t - 1) / max(scale_t, 1.0)))
    length = np.full(t.size, float(rng.uniform(60, 180)))
    cap = 256.0
    if regime == "collapse":
        start = collapse_at - precursor
        ramp = np.clip((t - start) / max(precursor + 10.0, 1.0), 0, 1)
        if rng.random() < 0.7:      # blow-up: entropy rises, completions run to the length cap
            entropy *= 1 + float(rng.uniform(1.0, 3.0)) * ramp
            length = length + (cap - length) * ramp
        else:                       # entropy falls to ~0 (the policy collapses onto a wrong answer)
            entropy *= 1 - 0.9 * ramp
        grad *= 1 + float(rng.uniform(2.0, 15.0)) * ramp
        kl += float(rng.uniform(0.05, 0.5)) * ramp
    elif regime == "growing":
        grad *= 1 + np.abs(level - level.mean()) * float(rng.uniform(2.0, 10.0))
    elif regime == "policy_concentration":
        entropy = h0 * (0.1 + 0.9 * np.exp(-(t - 1) / max(scale_t, 1.0)))
    entropy *= np.exp(0.03 * rng.standard_normal(t.size))
    grad *= np.exp(0.15 * rng.standard_normal(t.size))
    length = np.minimum(length * np.exp(0.03 * rng.standard_normal(t.size)), cap)
    clipped = np.clip((length - 0.9 * cap) / (0.1 * cap), 0, 1) * (length >= 0.9 * cap)
    series: dict[str, np.ndarray] = {
        "entropy": entropy, "grad_norm": grad, "kl": kl + np.abs(0.0005 * rng.standard_normal(t.size)),
        "completions/mean_length": length, "completions/clipped_ratio": clipped,
        "reward_std": reward_std, "frac_reward_zero_std": frac0 if prompts > 1 else (reward_std == 0).astype(float),
    }
    # held-out evaluation (greedy-like: above the sampled level) every 10 steps in half the runs
    has_eval = regime == "reward_hacking" or rng.random() < 0.5
    if has_eval:
        ev = np.full(t.size, np.nan)
        idx = np.arange(0, t.size, 10)
        boost = float(rng.uniform(0.0, 1.5))
        if regime == "reward_hacking":
            e_level = _sigmoid(_logit(np.full(idx.size, r0 * 0.8)) + boost - np.linspace(0, rng.uniform(0, 1.5),
                                                                                          idx.size))
        else:
            e_level = _sigmoid(_logit(level[idx]) + boost)
        ev[idx] = rng.binomial(128, e_level) / 128
        series["eval_reward"] = ev
    reward_bounds: tuple[float, float] | None = (0.0, 1.0)
    if regime == "reward_hacking" or rng.random() < 0.25:
        # Unsloth-like sum of shaped rewards: correctness × scale + a fast-saturating format reward
        scale = float(rng.choice([2.0, 4.0, 9.5]))
        fmt_max = float(rng.uniform(0.5, 2.0)) * (3.0 if regime == "reward_hacking" else 1.0)
        fmt = fmt_max * (1 - np.exp(-(t - 1) / max(0.2 * scale_t, 1.0)))
        fmt_obs = fmt + 0.25 * fmt_max * rng.standard_normal(t.size) / math.sqrt(max(prompts, 1))
        if regime == "reward_hacking":   # correctness stays flat: all the gain is format
            reward = _sample_rewards(rng, np.full(t.size, r0 * 0.8), prompts, group, 1.0)[0]
        series["rewards/correctness"] = scale * reward
        series["rewards/format"] = fmt_obs
        reward = scale * reward + fmt_obs
        series["reward_std"] = series["reward_std"] * scale
        reward_bounds = None
    series["reward"] = reward
    keep = (np.arange(t.size) % log_every) == log_every - 1 if log_every > 1 else np.ones(t.size, bool)
    steps = t[keep].astype(np.int64)
    series = {k: v[keep] for k, v in series.items()}
    name = name or f"sim-{regime}"
    log = RunLog(name, steps, series, "reward")
    outcome = {"growing": "unstable", "collapse": "collapse", "reward_hacking": "failure",
               "advantage_degeneracy": "failure", "policy_concentration": "failure"}.get(regime, "healthy")
    failure_mode = {"growing": "dynamical_instability", "reward_hacking": "reward_hacking",
                    "advantage_degeneracy": "advantage_degeneracy",
                    "policy_concentration": "policy_concentration"}.get(regime)
    collapse_step = None
    if outcome == "collapse":
        collapse_step = hindsight_collapse(steps, series["reward"], reward_bounds)[0]
    meta = {"zeta": zeta, "omega0": omega0, "prompts": prompts, "group": group, "log_every": log_every,
            "wander_sd": sd, "true_level": level[keep], "collapse_at": collapse_at, "precursor": precursor}
    return CorpusRun(name, "sim", split, log, reward_bounds, prompts,
                     _noise_class(series["reward"], reward_bounds), outcome, collapse_step, regime, failure_mode,
                     meta)


SIM_FAMILIES = {1: {"dev": (0,), "test": (1,)}, 2: {"dev": (0, 1), "test": (2,)}, 3: {"dev": (0, 1), "test": (2,)}}
"""Split version → split → simulated seed families."""
PROJECT_TEST_FAMILIES_V1 = ("p1-main", "p2-stall", "p2-fresh", "smollm-main", "smollm-pilot", "smollm2-add")
"""The project families in v1's test part that v2 moves to dev (module docstring, "Split versions")."""
SPLIT_VERSION = 3
"""The split :func:`load_corpus` uses by default."""
CS336_LABELS = {"collapse": "collapse", "healthy": "healthy", "unstable": "unstable", "floor": "failure"}
"""Labels of ``../shared/grpo_logs_cs336/index.json`` → corpus outcomes (``floor``: never rises, a failure)."""


def simulated_runs(split: str, family: int | None = None) -> list[CorpusRun]:
    """Simulated runs of seed ``family`` (default: 0 for ``split="dev"``, 1 for ``"test"``, the v1 split):
    :data:`SIM_COUNTS` runs per regime, each seeded by ``SeedSequence([family, regime index, i])`` so adding a regime
    never shifts another. Names carry the family (``sim-f<family>-<regime>-<i>``)."""
    family = {"dev": 0, "test": 1}[split] if family is None else int(family)
    out = []
    for ri, regime in enumerate(SIM_REGIMES):
        for i in range(SIM_COUNTS[regime]):
            rng = np.random.default_rng(np.random.SeedSequence([family, ri, i]))
            out.append(simulate_run(regime, rng, name=f"sim-f{family}-{regime}-{i:02d}", split=split))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Real runs
# ---------------------------------------------------------------------------------------------------------------

def _family(run_name: str) -> str:
    return run_name.rsplit("-", 1)[0]


def _heldout_collapsed(run_dir: Path) -> bool | None:
    p = run_dir / "eval.json"
    if not p.exists():
        return None
    ev = json.loads(p.read_text())
    try:
        before, after = float(ev["before"]["heldout"]), float(ev["after"]["heldout"])
    except (KeyError, TypeError, ValueError):
        return None
    return after < 0.5 * before


def _read_config(run_dir: Path) -> dict[str, Any]:
    p = run_dir / "config.json"
    return json.loads(p.read_text()).get("config", {}) if p.exists() else {}


def _bounds_of(y: np.ndarray) -> tuple[float, float] | None:
    return (0.0, 1.0) if y.size and np.nanmin(y) >= 0 and np.nanmax(y) <= 1 else None


def _real_run(name: str, source: str, split: str, log: RunLog, outcome: str, prompts: int | None,
              failure_mode: str | None = None, meta: dict | None = None,
              bounds: tuple[float, float] | None | str = "auto") -> CorpusRun:
    steps, y = log.reward_curve()
    rb = _bounds_of(y) if bounds == "auto" else bounds
    cs = hindsight_collapse(steps, y, rb)[0] if outcome == "collapse" else None
    return CorpusRun(name, source, split, log, rb, prompts, _noise_class(y, rb), outcome, cs, None, failure_mode,
                     meta or {})


def bisection_runs(runs_dir: Path = RUNS_DIR, bisections_dir: Path = DATA_DIR / "bisections") -> list[CorpusRun]:
    """Every trial of the committed bisections with its recorded outcome."""
    out = []
    for name, split in BISECTION_SPLIT.items():
        p = bisections_dir / f"{name}.json"
        if not p.exists():
            continue
        cells = json.loads(p.read_text())["cells"]
        for cell in cells.values():
            for trial in cell.get("trials", []):
                d = runs_dir / trial["run_id"]
                if not (d / "metrics.csv").exists():
                    continue
                log = load_log(d / "metrics.csv")
                cfg = _read_config(d)
                out.append(_real_run(trial["run_id"], "bisection", split, log,
                                     "collapse" if trial["collapsed"] else "healthy",
                                     cfg.get("num_prompts_per_step"),
                                     meta={"learning_rate": trial["learning_rate"], "length": cell.get("length")}))
    return out


def project_runs(runs_dir: Path = RUNS_DIR) -> list[CorpusRun]:
    """The committed non-bisection runs (healthy grids, SmolLM2, induced failures) with their labels."""
    out = []
    for d in sorted(runs_dir.iterdir()) if runs_dir.exists() else []:
        if not (d / "metrics.csv").exists():
            continue
        fam = _family(d.name)
        if fam.startswith("p1-fail-"):
            mode = fam[len("p1-fail-"):]
            failure = {"reward-hacking": "reward_hacking", "degeneracy-easy": "advantage_degeneracy",
                       "degeneracy-hard": "advantage_degeneracy", "concentration": "policy_concentration",
                       "instability-lr": "dynamical_instability", "instability-lag": "dynamical_instability",
                       "healthy": None}.get(mode)
            collapsed = _heldout_collapsed(d)
            outcome = ("healthy" if mode == "healthy" else "failure" if failure != "dynamical_instability" else
                       "collapse" if collapsed else "unstable")
            log = load_log(d / "metrics.csv")
            out.append(_real_run(d.name, "project-fail", "test", log, outcome,
                                 _read_config(d).get("num_prompts_per_step"), failure,
                                 meta={"heldout_collapsed": collapsed}))
            continue
        split = PROJECT_SPLIT.get(fam) or PROJECT_SPLIT.get(fam.split("-lr")[0])
        if split is None:
            continue
        log = load_log(d / "metrics.csv")
        collapsed = _heldout_collapsed(d)
        if collapsed is None:
            steps, y = log.reward_curve()
            collapsed = hindsight_collapse(steps, y, _bounds_of(y))[1]
        out.append(_real_run(d.name, "project", split, log, "collapse" if collapsed else "healthy",
                             _read_config(d).get("num_prompts_per_step")))
    return out


def shared_runs(folder: Path | None = None) -> list[CorpusRun]:
    """The public logs of ``../shared/grpo_logs`` (all healthy); [] when the folder is absent."""
    folder = folder or SHARED_DIR / "grpo_logs"
    if not (folder / "index.json").exists():
        return []
    index = {r["csv"]: r for r in json.loads((folder / "index.json").read_text())}
    out = []
    for p in sorted(folder.glob("*.csv")):
        meta = index.get(p.name, {})
        log = load_log(p, reward_column=meta.get("reward_column"))
        bounds = (0.0, 1.0) if str(meta.get("framework", "")).startswith("verl") else None
        out.append(_real_run(p.stem, "shared", "test", log, "healthy", meta.get("prompts_per_step"),
                             meta={k: meta.get(k) for k in ("repo", "model", "group_size", "lr")}, bounds=bounds))
    return out


def cs336_runs(folder: Path | None = None) -> list[CorpusRun]:
    """The 35 labelled course logs of ``../shared/grpo_logs_cs336`` (dev; [] when the folder is absent): outcome from
    the person-read label, ``collapse_step`` the labelled step (the rule of the logs' README), bounds (0, 1)."""
    folder = folder or SHARED_DIR / "grpo_logs_cs336"
    if not (folder / "index.json").exists():
        return []
    out = []
    for meta in json.loads((folder / "index.json").read_text()):
        log = load_log(folder / meta["csv"])
        outcome = CS336_LABELS[meta["label"]]
        y = log.reward_curve()[1]
        cs = meta.get("collapse_step")
        out.append(CorpusRun(meta["name"], "cs336", "dev", log, (0.0, 1.0), None, _noise_class(y, (0.0, 1.0)),
                             outcome, int(cs) if cs is not None else None, None,
                             "floor" if meta["label"] == "floor" else None,
                             {"label_reason": meta.get("label_reason")}))
    return out


def _with_split(run: CorpusRun, split: str) -> CorpusRun:
    from dataclasses import replace

    return run if run.split == split else replace(run, split=split)


@lru_cache(maxsize=4)
def _load_all(include_shared: bool, version: int) -> tuple[CorpusRun, ...]:
    runs = [r for split, fams in SIM_FAMILIES[version].items() for fam in fams for r in simulated_runs(split, fam)]
    runs += bisection_runs()
    for r in project_runs():
        fam = _family(r.name)
        moved = version >= 2 and r.source == "project" and (fam in PROJECT_TEST_FAMILIES_V1 or
                                                             fam.split("-lr")[0] in PROJECT_TEST_FAMILIES_V1)
        runs.append(_with_split(r, "dev") if moved else r)
    if include_shared:
        runs += [_with_split(r, "dev") if version >= 3 else r for r in shared_runs()]
        if version >= 3:
            runs += cs336_runs()
    return tuple(runs)


def load_corpus(split: str | None = None, sources: Iterable[str] | None = None, *,
                include_shared: bool = True, version: int = SPLIT_VERSION) -> list[CorpusRun]:
    """The labelled corpus (module docstring), optionally one ``split`` (``"dev"``/``"test"``) and some
    ``sources`` (:data:`SOURCES`), under split ``version`` (1, 2 or 3, module docstring). Deterministic; cached per
    process (about 3–5 s to build)."""
    if split not in (None, "dev", "test"):
        raise ValueError(f"split must be None, 'dev' or 'test', got {split!r}")
    if version not in SIM_FAMILIES:
        raise ValueError(f"version must be one of {sorted(SIM_FAMILIES)}, got {version!r}")
    src = tuple(sources) if sources is not None else SOURCES
    bad = [s for s in src if s not in SOURCES]
    if bad:
        raise ValueError(f"sources must be among {SOURCES}, got {bad}")
    return [r for r in _load_all(include_shared, version) if (split is None or r.split == split) and r.source in src]


def summary(runs: list[CorpusRun]) -> list[dict[str, Any]]:
    """Counts per (split, source, outcome) for the benchmark's corpus table."""
    keys: dict[tuple[str, str, str], int] = {}
    for r in runs:
        keys[(r.split, r.source, r.outcome)] = keys.get((r.split, r.source, r.outcome), 0) + 1
    return [{"split": k[0], "source": k[1], "outcome": k[2], "runs": v} for k, v in sorted(keys.items())]
