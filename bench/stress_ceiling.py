"""Stress: the advantage-degeneracy reading of healthy runs at their ceiling whose reward has no known bounds.

A correctness reward of ±1, or a format and a correctness reward summed into [0, 2] (TRL's own examples), has no
bounds the doctor can assume, and near the ceiling most groups have no reward spread because every completion is
right. The detector must read those groups as solved, not starved (``rlvr_dynamics.doctor.detectors.
advantage_degeneracy``). This script draws such runs, healthy by construction: P prompts × G completions a step,
each prompt's success q ~ Beta(2c, 2(1 − c)) around the step's success c (easy and hard prompts), c rising from 0.5
to 0.95 (``ceiling``) or sitting at 0.02 (``floor``: starved, where the reading should stay), a reward of +1 right
and −1 wrong (``--reward pm1``) or 1 and 0 (``unit``), TRL's ``frac_reward_zero_std``, ``reward_std``, completion
length, clipped share, entropy and gradient norm logged every step or averaged over 10 (TRL's default
``logging_steps``). It counts, per setting, the final statuses (``decide_status``) and the live stops
(``RunDoctor(stop_on_instability=True)``).

    .venv/bin/python bench/stress_ceiling.py [--kind ceiling|floor] [--reward pm1|unit] [--runs 20] [--seed 100]

Measured 2026-12-06 (seeds 100–119; the change was designed on other draws), ``ceiling``, ``pm1``, ``degenerate
groups`` before → after the first change of that day (solved groups at the best reward logged): one prompt a step
20 → 0 (G = 4), 17 → 0 (G = 8), 15 → 0 (G = 16) of 20; averaged over 10 steps (G = 8) 4 → 1; four prompts a step
20 → 12, averaged 19 → 11 (the rows do not say which groups lost their spread there). After the second (the solved
share read from how the reward moves with the share of groups without spread, in place of a gate on the observed
level): averaged one-prompt 1 → 0, four prompts 12 → 0, averaged 11 → 0, sixteen prompts a step 15 → 0 of 20;
``--kind floor`` still reads ``degenerate groups`` 13–20 times in 20 per setting (one to four more than before in
three settings). No live stop at the ceiling. About 5.5 minutes on one core.
"""
from __future__ import annotations

import argparse
import collections

import numpy as np

from rlvr_dynamics.doctor.live import RunDoctor
from rlvr_dynamics.doctor.status import decide_status
from rlvr_dynamics.runs.logs import RunLog

STEPS = 400
SETTINGS = ((4, 1, 1), (8, 1, 1), (16, 1, 1), (8, 1, 10), (8, 4, 1), (8, 4, 10), (8, 16, 1))
"""(completions G, prompts P, logging interval) per setting."""


def success_curve(kind: str, t: np.ndarray) -> np.ndarray:
    """The step's success rate c: a logistic rise from 0.5 to 0.95 (``ceiling``) or 0.02 throughout (``floor``)."""
    if kind == "ceiling":
        return 0.5 + 0.45 / (1 + np.exp(-(t / STEPS - 0.3) / 0.08))
    return np.full(t.size, 0.02)


def healthy_run(kind: str, group: int, prompts: int, every: int, pm1: bool, seed: int):
    """``(steps, series)`` of one run (module docstring), rows averaged ``every`` steps at a time."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, STEPS + 1)
    c = np.clip(success_curve(kind, t), 1e-3, 1 - 1e-3)[:, None]
    q = rng.beta(2 * c, 2 * (1 - c), size=(STEPS, prompts))
    k = rng.binomial(group, q)
    right = k / group
    per_group = 2 * right - 1 if pm1 else right
    spread = np.sqrt(right * (1 - right) * group / (group - 1)) * (2 if pm1 else 1)
    series = {"reward": per_group.mean(axis=1), "reward_std": spread.mean(axis=1),
              "frac_reward_zero_std": ((k == 0) | (k == group)).mean(axis=1),
              "completions/mean_length": 120 + 60 * t / STEPS + rng.normal(0, 15 / np.sqrt(prompts), STEPS),
              "completions/clipped_ratio": np.clip(rng.normal(0.02 + 0.05 * t / STEPS, 0.03 / np.sqrt(prompts),
                                                              STEPS), 0, 1),
              "entropy": 0.6 - 0.3 * t / STEPS + rng.normal(0, 0.05, STEPS),
              "grad_norm": np.exp(rng.normal(-1, 0.6, STEPS))}
    if every > 1:
        n = STEPS // every
        series = {name: v[: n * every].reshape(n, every).mean(axis=1) for name, v in series.items()}
        t = t[: n * every].reshape(n, every)[:, -1]
    return t, series


def reading(steps: np.ndarray, series: dict[str, np.ndarray]) -> tuple[str, bool]:
    """The final status of the whole log and whether the live doctor, fed row by row, stops the run."""
    doctor = RunDoctor(every=10, stop_on_instability=True)
    for j, s in enumerate(steps):
        doctor.update(int(s), {name: float(v[j]) for name, v in series.items()})
        if doctor.should_stop:
            break
    return decide_status(RunLog("stress", steps, series, "reward"), None).state, doctor.should_stop


def main(argv: list[str] | None = None) -> dict[tuple, collections.Counter]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=("ceiling", "floor"), default="ceiling")
    ap.add_argument("--reward", choices=("pm1", "unit"), default="pm1")
    ap.add_argument("--runs", type=int, default=20, help="runs per setting (≥ 1)")
    ap.add_argument("--seed", type=int, default=100, help="first seed")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error(f"--runs must be ≥ 1, got {a.runs}")
    out = {}
    for group, prompts, every in SETTINGS:
        c: collections.Counter = collections.Counter()
        for seed in range(a.seed, a.seed + a.runs):
            state, stopped = reading(*healthy_run(a.kind, group, prompts, every, a.reward == "pm1", seed))
            c[state] += 1
            c["live stops"] += int(stopped)
        out[(group, prompts, every)] = c
        print(f"{a.kind} {a.reward} G={group:2d} P={prompts} every={every:2d}: " +
              ", ".join(f"{k} {v}/{a.runs}" for k, v in sorted(c.items())), flush=True)
    return out


if __name__ == "__main__":
    main()
