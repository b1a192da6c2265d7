"""Stress: the run doctor on the development runs with their reward rewritten to another scale, no bounds declared.

A user's reward is rarely a success rate in [0, 1]: a sum of format and correctness terms lies in [0, 2] or [0, 4],
a DAPO-style reward is +1 for a right answer and −1 for a wrong one, a shaped reward carries an offset. Unless the
user passes ``--reward-range``, no bound is known; the doctor then measures a collapse from 0 while no reward lies
below 0, else from the run's own lowest level, and reads the solved groups from the run itself. This script rewrites
the training reward of every development run (``bench/doctor_eval``: the CS336 course logs, the public logs, the
project's runs, their surrogates and the simulated runs) with an affine map and reads the final status with no bounds:

* ``as logged``: the reward as logged, with the bounds the corpus declares (a success rate: (0, 1));
* ``x10``: 10·r, never below 0 (a sum of terms);
* ``shift``: 3·r + 1.5, never below 0, its floor 1.5 unknown to the doctor;
* ``pm1``: 2·r − 1, a reward of ±1;
* ``pm1 declared``: the same with its bounds declared, (−1, 1) for a success rate (``--reward-range -1 1``).

Per source, outcome and rewrite it counts the runs whose status asks the user to act (``decide_status`` in
``FAILURE_STATES``): false alarms on healthy runs, reports on the others.

    .venv/bin/python bench/stress_reward_scale.py [--sources sim,project,...] [--jobs 2] [--list]

Measured 2026-12-07 on the development part (1,261 runs, 50 s on 2 cores). Runs with an act-now status:

=====================  ==========  =====  ======  =====  ============
source, outcome        as logged   x10    shift   pm1    pm1 declared
=====================  ==========  =====  ======  =====  ============
cs336, healthy         0/25        0      0       0      0
shared, healthy        0/15        0      0       0      0
surrogate, healthy     0/190       0      0       0      0
project, healthy       1/130       7      7       8      1
sim, healthy           0/250       0      0       7      0
cs336, collapse        7/7         7      6       7      7
project, collapse      61/64       63     61      63     61
sim, collapse          71/80       71     58      67     71
=====================  ==========  =====  ======  =====  ============

With its bounds declared a rewritten reward reads as logged: its resolution and Bernoulli noise are read on its
shares of the range (:func:`rlvr_dynamics.runs.noise.unit_rewards`, 2026-12-07). Before, they were read on the
values themselves, which for a reward outside [0, 1] show no grid: the declared ``pm1`` runs' act-now statuses were
the same counts, but 38 of the 592 runs with bounds changed state (29 collapses read ``diverged`` from their first
steps instead of ``collapsed``, 9 ``collapsing`` instead), and a healthy one-prompt × 8 run at a low success rate
declared as ±1 lost the guard of a success rate of few completions (100 synthetic runs: 3 stopped live as
``diverged``, 0 as a success rate). Now status and collapse events are equal for 603 runs with bounds under four
rewrites (``tests/doctor/test_reward_scale.py`` checks it on two). The simulated runs the corpus reads without
bounds stay without (one ``failure`` run reads differently as ``pm1``).

Where the healthy runs' act-now statuses come from:

* ``degenerate groups`` (six project runs at 4–8 prompts a step and a success rate near 0.1, 70–90 % of their groups
  without reward spread, every rewrite): without bounds the starved share is the zero-std share less the groups read
  as solved from the run, where with bounds it is that share less the normalised reward (an upper bound of the
  solved share, so a lower bound of the starved one). With 70–90 % of the groups all failed for 250 steps the
  unbounded reading is the closer one; the runs are labelled healthy by their held-out accuracy.
* a collapse of a flat run's wander (``pm1`` only: five simulated flat runs and one project run at a success rate of
  0.17 over 600 steps): a reward below 0 has its floor at the run's lowest trailing mean, and a level that wanders
  (AR(1)) rises significantly above that minimum and comes back, which the rule reads as half a gain lost. Two
  simulated healthy runs read ``unstable`` for the same reason.
* ``collapsing`` on a project run that reads ``falling`` as logged (every rewrite; its reward 0.87 → 0.5 over its
  last 75 points, 90 % of its groups without spread): without bounds the zero-std share's crossing counts on rows
  below the middle of the reward's logged range, which the reward has fallen to, and beside the reward's fall it is
  the collapse warning; with bounds the middle is 0.5, which it has not reached.

The collapses ``shift`` loses (simulated 71 → 58 of 80, one CS336 collapse read ``plateaued``) are the cost of the
floor at 0 for a reward never below 0 (2026-12-07): a reward whose every completion earns at least 1.5 falls from
about 3.5 to 1.8, which is not half of 3.5. A reward whose floor lies above 0 is rare (a completion that fails
everything earns 0), and ``--reward-range`` declares it.

Three changes to the collapse rule were tried on this table for the ``pm1`` case and left out, each trading
collapses for false alarms at about one for one on the simulated runs (healthy 7 of 250, collapses 67 of 80): the
gain at least 2.5 step σ̂ (healthy 4, collapses 63); the floor's noise lift added twice to the gain's test, as the
peak's is once (5, 61); the trailing means' standard error read from the spread of their lag-w differences, which
holds the wander (5, 62). Declaring the bounds (``--reward-range -1 1``) reads such a run as logged.
"""
from __future__ import annotations

import argparse
import collections
import os
from dataclasses import replace
from multiprocessing import Pool

import numpy as np

from doctor_eval import corpus as C
from rlvr_dynamics.doctor.status import FAILURE_STATES, decide_status
from rlvr_dynamics.runs.logs import RunLog

REWRITES = {"as logged": (1.0, 0.0), "x10": (10.0, 0.0), "shift": (3.0, 1.5), "pm1": (2.0, -1.0),
            "pm1 declared": (2.0, -1.0)}
"""Name → (a, b) of the rewrite a·r + b; ``as logged`` keeps the corpus' declared bounds, ``… declared`` declares
them rewritten the same way (lo, hi) → (a·lo + b, a·hi + b), the others declare none."""
SOURCES = ("cs336", "shared", "project", "surrogate", "sim")

_RUNS: list = []


def rewritten(log: RunLog, a: float, b: float) -> RunLog:
    """The log with its reward column replaced by a·r + b (every other column as logged)."""
    series = dict(log.series)
    series[log.reward_column] = a * np.asarray(series[log.reward_column], dtype=float) + b
    return replace(log, series=series)


def statuses(i: int) -> tuple[str, str, str, dict[str, str]]:
    """(name, source, outcome, {rewrite: final status}) of the i-th loaded run."""
    run = _RUNS[i]
    out = {}
    for name, (a, b) in REWRITES.items():
        lo_hi = run.reward_bounds if name == "as logged" or name.endswith(" declared") else None
        bounds = None if lo_hi is None else (a * lo_hi[0] + b, a * lo_hi[1] + b)
        out[name] = decide_status(rewritten(run.log, a, b), bounds).state
    return run.name, run.source, run.outcome, out


def _load(sources: tuple[str, ...]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _RUNS[:] = C.load_corpus(split="dev", sources=sources)


def main(argv: list[str] | None = None) -> dict[tuple[str, str, str], collections.Counter]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", default=",".join(SOURCES), help="comma-separated, of " + ", ".join(SOURCES))
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (≥ 1)")
    ap.add_argument("--list", action="store_true", help="name each run whose status differs from as logged")
    a = ap.parse_args(argv)
    sources = tuple(a.sources.split(","))
    if a.jobs < 1 or any(s not in SOURCES for s in sources):
        ap.error(f"--jobs must be ≥ 1 and --sources among {', '.join(SOURCES)}")
    _load(sources)
    if a.jobs == 1:
        rows = [statuses(i) for i in range(len(_RUNS))]
    else:
        with Pool(a.jobs, initializer=_load, initargs=(sources,)) as pool:
            rows = pool.map(statuses, range(len(_RUNS)), chunksize=4)
    counts: dict[tuple[str, str, str], collections.Counter] = {}
    for name, source, outcome, out in rows:
        for rewrite, state in out.items():
            c = counts.setdefault((source, outcome, rewrite), collections.Counter())
            c["runs"] += 1
            c["act"] += state in FAILURE_STATES
        if a.list and any(s != out["as logged"] for s in out.values()):
            print(f"  {source} {outcome} {name}: " + ", ".join(f"{k} {v}" for k, v in out.items()))
    for source in sources:
        for outcome in sorted({o for s, o, _ in counts if s == source}):
            cells = [f"{r} {counts[(source, outcome, r)]['act']}/{counts[(source, outcome, r)]['runs']}"
                     for r in REWRITES]
            print(f"{source:9s} {outcome:9s} act-now: " + ", ".join(cells), flush=True)
    return counts


if __name__ == "__main__":
    main()
