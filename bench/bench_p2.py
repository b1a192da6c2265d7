"""Benchmark: the many-armed bandit sweep (algorithms × step sizes × seeds) as one array program vs a per-run loop.

Usage: ``.venv/bin/python bench/bench_p2.py [--steps 1000] [--step-sizes 32] [--seeds 32] [--loop-runs 8]``
Prints run-steps per second of the vectorised sweep (4 algorithms × E step sizes × S seeds, sampled G = 8,
N = 100 arms, d = 10) and of the same simulator called once per run on a subset, and their ratio. Also times the
exact Gradient Gap (closed form, no per-response gradients) against the explicit score-matrix route.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from rlvr_dynamics.p2 import gap, gap_bandits as gb
from rlvr_dynamics.p2.directions import ALGORITHMS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--step-sizes", type=int, default=32)
    ap.add_argument("--seeds", type=int, default=32)
    ap.add_argument("--loop-runs", type=int, default=8, help="runs timed one at a time for the loop baseline")
    ap.add_argument("--group-size", type=int, default=8)
    args = ap.parse_args()

    bandit = gb.LogLinearBandit.many_armed(seed=0)
    etas = np.geomspace(0.1, 50.0, args.step_sizes)
    runs = len(ALGORITHMS) * args.step_sizes * args.seeds
    t0 = time.perf_counter()
    res = gb.simulate(bandit, ALGORITHMS, etas, n_steps=args.steps, n_seeds=args.seeds, group_size=args.group_size,
                      record_every=args.steps, seed=0)
    t_vec = time.perf_counter() - t0
    rate_vec = runs * args.steps / t_vec
    collapsed = gb.collapse_fraction(res.success_rate[..., -1, 0])

    rng = np.random.default_rng(1)
    picks = [(ALGORITHMS[rng.integers(4)], float(etas[rng.integers(len(etas))])) for _ in range(args.loop_runs)]
    t0 = time.perf_counter()
    for i, (alg, eta) in enumerate(picks):
        gb.simulate(bandit, [alg], [eta], n_steps=args.steps, n_seeds=1, group_size=args.group_size,
                    record_every=args.steps, seed=100 + i)
    t_loop = time.perf_counter() - t0
    rate_loop = args.loop_runs * args.steps / t_loop

    print(f"vectorised sweep: {runs} runs ({len(ALGORITHMS)} algorithms x {args.step_sizes} step sizes x "
          f"{args.seeds} seeds) x {args.steps} steps in {t_vec:.2f} s = {rate_vec:,.0f} run-steps/s")
    print(f"per-run loop:     {args.loop_runs} runs x {args.steps} steps in {t_loop:.2f} s = {rate_loop:,.0f} run-steps/s")
    print(f"speed-up: {rate_vec / rate_loop:.1f}x   (collapse fraction over the sweep: {collapsed.mean():.3f})")

    # closed-form gap vs explicit per-response scores (batch of 4096 problems, N = 100, d = 10)
    th = np.random.default_rng(2).normal(size=(4096, 10)) * 0.3
    phi, c = bandit.features[0], bandit.correct[0]
    t0 = time.perf_counter()
    for _ in range(5):
        g_closed = gap.gradient_gap(phi, th, c).gap
    t_closed = (time.perf_counter() - t0) / 5
    t0 = time.perf_counter()
    s = gap.score_matrix(phi, th)                          # (4096, 100, 10) materialised
    p = gap.policy_probs(phi, th)
    g_expl = gap.gradient_gap_from_scores(p, s, np.broadcast_to(c, p.shape)).gap
    t_expl = time.perf_counter() - t0
    print(f"gradient gap of 4096 problems: closed form {t_closed * 1e3:.1f} ms, explicit scores {t_expl * 1e3:.1f} ms "
          f"({t_expl / t_closed:.1f}x), max difference {np.abs(g_closed - g_expl).max():.1e}")


if __name__ == "__main__":
    main()
