"""Stress: false alarms of the run doctor on healthy one-prompt runs with an Unsloth-like shaped reward.

The public GRPO notebooks (Unsloth, TRL examples) train on one prompt a step with 6 or 8 completions and a reward
that sums several terms: a soft and a strict format reward (0.5 each), an XML-count partial reward (about 0–0.5),
an integer-answer reward (0.5) and a correctness reward (2). Their logged reward is the mean over one prompt's
completions, so it sits at the format-only level after a hard prompt and near 4 after an easy one: a heavy-tailed,
bimodal step noise that no Gaussian test knows. This script draws such runs, healthy by construction (the format
is learnt by step ``--format-step``, correctness rises from 0.15 to 0.6; the prompt's difficulty q ~ Beta(1.5c,
1.5(1 − c)) at correctness c), and counts, per setting:

* ``stop``: runs the live ``RunDoctor(stop_on_instability=True)`` stops (a false stop: the run is healthy);
* ``event``: runs with a collapse event on the whole log (``collapse_events``, transient ones included);
* ``act``: runs whose final status asks the user to act (``decide_status``).

    .venv/bin/python bench/stress_one_prompt.py [--kinds fast,slow,late] [--groups 6,8] [--runs 30] [--seed 1000]
                                                [--reward classic|penalised]

``--reward penalised`` draws the terms of Unsloth's later notebooks instead (:func:`penalised_reward`: penalties for
missing tags and wrong answers, −7.5 to 13 a completion, so no reward bound is known and the collapse floor comes
from the run), a reward the doctor's rules were not set on.

``fast``, ``slow`` and ``late`` learn the format by step 20, 80 and 150 of 250. Measured 2026-12-06 (seeds 1000–1029,
the rule before it drawn on seeds 0–19 first): stops 22 of 180 before the collapse report read a level of up to
LEVEL_MAX rewards (``rlvr_dynamics.doctor.detectors.own_rewards``), 7 of 180 after it (five of them within the first
ten points, where no level exists yet); ``act`` 0 of 180 either way. Measured 2026-12-07, with the level held
tested from the run's first three rewards on (``LEVEL_MIN_POINTS``): stops 6 → 2 of 180 on seeds 1000–1029 (the
rule was fixed on them), 5 → 2 of 180 on fresh seeds 3000–3029 (both left: a fall mid-run, judged by a level of
ten or more rewards); ``act`` 0 of 180. The penalised reward, drawn once after the rules were fixed (seeds 5000–5029,
groups of 4 and 8): stops 2 of 180 (two ``late`` runs at G = 4, two or three all-wrong prompts in a row soon
after the format was learnt, 0.5 after a level near 7), collapse events 2, ``act`` 0 of 180. With the collapse floor
at 0 for a reward never below 0 (2026-12-07, measured after it was fixed): the classic reward's stops 2 → 3 of 180 on
seeds 1000–1029 and 2 → 3 on seeds 3000–3029 (a cluster of three right answers before the format is learnt, then
seven rewards at the baseline, read from 0 instead of the run's lowest level), ``act`` 0 of 360 either way.
"""
from __future__ import annotations

import argparse
import collections

import numpy as np

from rlvr_dynamics.doctor.detectors.collapse import collapse_events
from rlvr_dynamics.doctor.live import RunDoctor
from rlvr_dynamics.doctor.status import FAILURE_STATES, decide_status
from rlvr_dynamics.runs.logs import RunLog

STEPS = 250
FORMAT_STEP = {"fast": 20, "slow": 80, "late": 150}
"""Step by which the format is learnt (the midpoint of its logistic rise), per kind."""


def one_prompt_run(kind: str, group: int, seed: int, reward_kind: str = "classic"
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(steps, reward, reward_std)`` of one healthy run: one prompt × ``group`` completions a step (module
    docstring for the reward's terms; ``reward_kind``: one of :data:`REWARDS`)."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, STEPS + 1)
    fmt = 1 / (1 + np.exp(-(t - FORMAT_STEP[kind]) / 10))
    corr = 0.15 + 0.45 / (1 + np.exp(-(t - 120) / 40))
    reward, spread = np.empty(STEPS), np.empty(STEPS)
    for i in range(STEPS):
        q = rng.beta(max(corr[i] * 1.5, 1e-3), max((1 - corr[i]) * 1.5, 1e-3))   # this step's prompt
        formatted = rng.random(group) < fmt[i]
        correct = (rng.random(group) < q) & (rng.random(group) < 0.3 + 0.7 * fmt[i])
        r = REWARDS[reward_kind](rng, formatted, correct, fmt[i])
        reward[i], spread[i] = r.mean(), r.std(ddof=1)
    return t, reward, spread


def classic_reward(rng, formatted, correct, fmt) -> np.ndarray:
    """Soft + strict format (0.5 each), correctness + integer answer (2.5), XML count (about 0–0.5)."""
    xml = np.clip(rng.normal(0.125 + 0.375 * fmt, 0.1, formatted.size), -0.5, 0.5)
    return 1.0 * formatted + 2.5 * correct + xml


def penalised_reward(rng, formatted, correct, fmt) -> np.ndarray:
    """The terms of Unsloth's later GRPO notebooks, penalties included: the format matched exactly (3), each of
    three tags seen once (+0.5, else −1), the answer (5 right, 2 within 10 %, −2.5 wrong, −2 when none is found)
    and the number (3.5 right, −1.5 wrong, −2.5 when none is found): −7.5 to 13 a completion."""
    n = formatted.size
    tags = np.where(formatted[:, None] | (rng.random((n, 3)) < 0.5 * fmt), 0.5, -1.0).sum(axis=1)
    near = ~correct & (rng.random(n) < 0.1)
    answer = np.where(correct, 5.0, np.where(near, 2.0, -2.5))
    number = np.where(correct, 3.5, -1.5)
    found = formatted | (rng.random(n) < 0.5)
    return 3.0 * formatted + tags + np.where(found, answer + number, -4.5)


REWARDS = {"classic": classic_reward, "penalised": penalised_reward}
"""The shaped rewards the script draws (``--reward``)."""


def score(kind: str, group: int, seed: int, reward_kind: str = "classic") -> dict[str, bool]:
    """Whether the live doctor stops the run, whether the whole log has a collapse event, whether the final status
    is an act-now one."""
    steps, reward, spread = one_prompt_run(kind, group, seed, reward_kind)
    doctor = RunDoctor(every=10, stop_on_instability=True)
    for s, r, sd in zip(steps, reward, spread):
        doctor.update(int(s), {"reward": float(r), "reward_std": float(sd)})
        if doctor.should_stop:
            break
    log = RunLog("stress", steps, {"reward": reward, "reward_std": spread}, "reward")
    return {"stop": doctor.should_stop,
            "event": any(e.kind != "pending" for e in collapse_events(steps, reward)),
            "act": decide_status(log, None).state in FAILURE_STATES}


def main(argv: list[str] | None = None) -> dict[str, int]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="fast,slow,late", help="comma-separated, of " + ", ".join(FORMAT_STEP))
    ap.add_argument("--groups", default="6,8", help="completions per prompt, comma-separated")
    ap.add_argument("--runs", type=int, default=30, help="runs per setting (≥ 1)")
    ap.add_argument("--seed", type=int, default=1000, help="first seed")
    ap.add_argument("--reward", default="classic", choices=sorted(REWARDS), help="the shaped reward's terms")
    a = ap.parse_args(argv)
    kinds = a.kinds.split(",")
    if a.runs < 1 or any(k not in FORMAT_STEP for k in kinds):
        ap.error(f"--runs must be ≥ 1 and --kinds among {', '.join(FORMAT_STEP)}")
    total: collections.Counter = collections.Counter()
    for kind in kinds:
        for group in (int(g) for g in a.groups.split(",")):
            c = collections.Counter({"stop": 0, "event": 0, "act": 0})
            for seed in range(a.seed, a.seed + a.runs):
                c.update({k: int(v) for k, v in score(kind, group, seed, a.reward).items()})
            print(f"{kind:5s} G={group}: stopped {c['stop']}/{a.runs}, collapse event {c['event']}/{a.runs}, "
                  f"act-now status {c['act']}/{a.runs}", flush=True)
            total.update(c)
            total["runs"] += a.runs
    print(f"all: stopped {total['stop']}/{total['runs']}, collapse event {total['event']}/{total['runs']}, "
          f"act-now status {total['act']}/{total['runs']}")
    return dict(total)


if __name__ == "__main__":
    main()
