"""Benchmarks for the P1 numerics (prints figures; not a test).

(a) the softmax-bandit phase-diagram sweep: 4096 configurations x 2000 steps of the full GRPO bandit update
    (finite G with group advantages, heavy-ball momentum, constant-delay lag, KL) in one array program;
(b) the Euler-Maruyama SDE ensemble of the oscillator (many paths x several parameter sets);
each against a straightforward per-run Python loop on a small subset.

    .venv/bin/python bench/bench_p1.py [--configs 4096] [--steps 2000] [--threads 2]

Targets (issue 3): bandit >= 1.6 M run-steps/s on 2 cores; SDE >= 50 M path-steps/s.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import time

import numpy as np

from rlvr_dynamics.p1 import oscillator as osc, sde, bandit_theory as bt, bandit_simulator as bsim


def timeit(fn, repeat=3):
    best = math.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bandit(n_configs: int, n_steps: int, loop_configs: int) -> None:
    rng = np.random.default_rng(0)
    mu = rng.choice([0.0, 0.5, 0.9, 0.95], n_configs)
    k = bt.analytic_stiffness(0.1, 1.0)
    eta = 10 ** rng.uniform(-3, -0.5, n_configs) / k
    kref = rng.integers(1, 257, n_configs)
    print(f"(a) softmax-bandit GRPO sweep: {n_configs} configurations x {n_steps} steps")
    for label, g in (("finite G = 8 (full GRPO update)", 8), ("exact expectation (G -> inf)", None)):
        t, _ = timeit(lambda: bsim.simulate(n_steps, learning_rate=eta, momentum=mu, beta=1.0, lag=kref,
                                          p_ref=0.1, group_size=g, seed=1, record_every=10))
        rate = n_configs * n_steps / t
        print(f"    vectorised, {label:34s}: {t:6.2f} s  {rate / 1e6:7.2f} M run-steps/s")
        sub = slice(0, loop_configs)
        t0 = time.perf_counter()
        for i in range(loop_configs):
            bsim.simulate_loop(n_steps, learning_rate=float(eta[i]), momentum=float(mu[i]), beta=1.0,
                             lag=int(kref[i]), p_ref=0.1, group_size=g, seed=i)
        tl = time.perf_counter() - t0
        loop_rate = loop_configs * n_steps / tl
        print(f"    per-run Python loop ({loop_configs} runs)        : {tl:6.2f} s  {loop_rate / 1e6:7.3f} M run-steps/s"
              f"  -> vectorised is {rate / loop_rate:,.0f}x faster")
        del sub


def sde_bench(n_params: int, n_paths: int, n_steps: int, threads: int, loop_paths: int) -> None:
    c = osc.coefficients(np.geomspace(1e-3, 1e-2, n_params), 0.9, 1.0, 4)
    print(f"(b) SDE ensemble: {n_params} parameter sets x {n_paths} paths x {n_steps} steps")
    for dtype in (np.float64, np.float32):
        for th in sorted({1, threads}):
            t, _ = timeit(lambda: sde.sde_ensemble(c, 0.01, n_paths=n_paths, n_steps=n_steps, dt=1.0, seed=0,
                                                    record_every=n_steps, n_threads=th, dtype=dtype), repeat=2)
            rate = n_params * n_paths * n_steps / t
            print(f"    vectorised {np.dtype(dtype).name}, {th} thread(s): {t:6.2f} s  {rate / 1e6:7.1f} M path-steps/s")
    # straightforward loop: one path at a time
    m, cc, k = (float(np.atleast_1d(x)[0]) for x in c)
    rnd = random.Random(0)
    t0 = time.perf_counter()
    for _ in range(loop_paths):
        e, v = 1.0, 0.0
        for _ in range(n_steps):
            e, v = e + v, v - (cc * v + k * e) / m + 0.01 / m * rnd.gauss(0.0, 1.0)
    tl = time.perf_counter() - t0
    loop_rate = loop_paths * n_steps / tl
    print(f"    per-path Python loop ({loop_paths} paths): {tl:6.2f} s  {loop_rate / 1e6:7.3f} M path-steps/s  "
          f"-> vectorised (float64, {threads} threads) is {rate_ref(c, n_paths, n_steps, threads) / loop_rate:,.0f}x faster")


def rate_ref(c, n_paths, n_steps, threads):
    t, _ = timeit(lambda: sde.sde_ensemble(c, 0.01, n_paths=n_paths, n_steps=n_steps, dt=1.0, seed=0,
                                            record_every=n_steps, n_threads=threads), repeat=1)
    return np.size(c.mass) * n_paths * n_steps / t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--loop-configs", type=int, default=8)
    ap.add_argument("--sde-params", type=int, default=4)
    ap.add_argument("--sde-paths", type=int, default=16384)
    ap.add_argument("--sde-steps", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args()
    print(f"cores visible: {os.cpu_count()}, numpy {np.__version__}")
    bandit(a.configs, a.steps, a.loop_configs)
    sde_bench(a.sde_params, a.sde_paths, a.sde_steps, a.threads, loop_paths=20)


if __name__ == "__main__":
    main()
