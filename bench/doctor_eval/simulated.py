"""The corpus' simulated runs: P1's response laws plus binomial reward noise at a drawn batch size, one regime per
run (:data:`~.corpus_run.SIM_REGIMES`), with the failure modes the detectors look for (:func:`simulate_run`,
:func:`simulated_runs`)."""
from __future__ import annotations

import math

import numpy as np

from rlvr_dynamics.runs.logs import RunLog
from rlvr_dynamics.runs.noise import noise_class as _noise_class

from .corpus_run import SIM_COUNTS, SIM_REGIMES, CorpusRun, hindsight_collapse

# ---------------------------------------------------------------------------------------------------------------
# Simulated runs
# ---------------------------------------------------------------------------------------------------------------

def unit_response(t: np.ndarray, zeta: float, omega0: float) -> np.ndarray:
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
        level = r_inf + (r0 - r_inf) * unit_response(t - 1, zeta, omega0)
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
            level = r_inf + (r0 - r_inf) * unit_response(t - 1, zeta, omega0)
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


SIM_FAMILIES = {1: {"dev": (0,), "test": (1,)}, 2: {"dev": (0, 1), "test": (2,)}, 3: {"dev": (0, 1), "test": (2,)},
                4: {"dev": (0, 1), "test": (2,)}}
"""Split version → split → simulated seed families."""
PROJECT_TEST_FAMILIES_V1 = ("p1-main", "p2-stall", "p2-fresh", "smollm-main", "smollm-pilot", "smollm2-add")
"""The project families in v1's test part that v2 moves to dev (module docstring, "Split versions")."""
SPLIT_VERSION = 4
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


