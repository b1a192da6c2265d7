"""Analysis helpers the GRPO notebooks share: implied oscillator coefficients, noise ceilings, curves, transfer.

The fits themselves are :func:`rlvr_dynamics.doctor.pipeline.fit_laws` (over :mod:`rlvr_dynamics.p1.laws`); the
gap-alignment bound is :mod:`rlvr_dynamics.p2.gap`. This module only adapts committed runs to them and maps fitted times onto the oscillator of P1 spec §3.3–3.4 [D]:

With δ = 1 (time in optimizer steps), the overdamped three-phase law has roots λ± = 1/T_f, 1/T_s with
λ+ + λ− = C/M and λ+λ− = K_eff/M, so C/K_eff = T_s + T_f and M/C = T_s·T_f/(T_s + T_f). With C = 1 − μ − ηK·K_ref
and M = (1 + μ)/2 + ηK·K_ref²/2 (spec §3.3) and a small lag term, the fit implies

* ηK = (1 − μ)/(T_s + T_f + K_ref)                  (from C/K_eff = ((1 − μ) − ηK·K_ref)/(ηK)),
* stability ratio ηK·K_ref/(1 − μ) = K_ref/(T_s + T_f + K_ref) (unstable at ≥ 1, spec §3.4),
* predicted inertial time M/C = (1 + μ)/(2(1 − μ))    (9.5 steps for μ = 0.9), to compare with T_s·T_f/(T_s + T_f),
* damping ratio ζ = (T_s + T_f)/(2√(T_s T_f)) ≥ 1     (real roots by construction of the fitted family).

Adam's β1 enters as μ through the equivalence of an EMA momentum buffer with heavy-ball momentum at a rescaled
step (η(1 − β1)); the ratio M/C does not depend on that rescaling.
"""
from __future__ import annotations

import math
import numpy as np

from ..grpo.tasks import EVAL_FAMILIES
from .committed import CommittedRun


def implied_oscillator(fit, momentum: float, refresh_interval: int = 1) -> dict[str, float]:
    """Oscillator quantities implied by a three-phase fit (see the module docstring) [D].

    ηK, the stability ratio and ζ come from :func:`rlvr_dynamics.doctor.reading.oscillator.read_oscillator` (the exact inversion
    ηK = (1 − μ)/(T_s + T_f + K_ref) of C/K_eff, the same code ``rlvr-dynamics fit`` uses); NaN when the fit has
    no usable slow/fast times.
    """
    from ..doctor.reading.oscillator import read_oscillator

    p = fit.params
    ts, tf = float(p.get("t_slow", math.nan)), float(p.get("t_fast", math.nan))
    out = {"t_slow": ts, "t_fast": tf, "eta_K": math.nan, "stability_ratio": math.nan, "zeta": math.nan,
           "inertial_time_fit": ts * tf / (ts + tf) if ts > 0 and tf > 0 else math.nan,
           "inertial_time_pred": (1.0 + momentum) / (2.0 * (1.0 - momentum))}
    if ts > 0 and tf > 0:
        reading = read_oscillator(ts, tf, momentum, refresh_interval)
        out.update(eta_K=reading.eta_curvature, stability_ratio=reading.stability_margin, zeta=reading.damping_ratio)
    return out


def mean_curve(runs: list[CommittedRun], column: str = "reward") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(step, mean, std over runs) of a column on the common steps (runs must share their step grid)."""
    if not runs:
        raise ValueError("runs must not be empty")
    n = min(len(r.steps) for r in runs)
    ys = np.stack([r.series(column)[:n] for r in runs])
    return runs[0].steps[:n], np.nanmean(ys, axis=0), np.nanstd(ys, axis=0)


def rolling_mean(y: np.ndarray, window: int) -> np.ndarray:
    """Trailing rolling mean (the first window-1 points average what is available)."""
    y = np.asarray(y, dtype=float)
    c = np.cumsum(np.insert(y, 0, 0.0))
    idx = np.arange(1, len(y) + 1)
    lo = np.maximum(0, idx - window)
    return (c[idx] - c[lo]) / (idx - lo)


def transfer_table(runs: list[CommittedRun]) -> dict[str, dict[str, float]]:
    """``{family: {"before", "after", "delta"}}`` averaged over ``runs`` (each with an ``eval.json``)."""
    fams = ["heldout", *EVAL_FAMILIES]
    out = {}
    for f in fams:
        b = [r.eval["before"][f] for r in runs if r.eval and f in r.eval["before"]]
        a = [r.eval["after"][f] for r in runs if r.eval and f in r.eval["after"]]
        if b and a:
            out[f] = {"before": float(np.mean(b)), "after": float(np.mean(a)), "delta": float(np.mean(a) - np.mean(b))}
    return out


def circular_block_indices(n: int, block: int, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Indices of one moving-block bootstrap replicate of a length-``n`` series (``size`` replicates as rows when
    given): contiguous blocks of ``min(block, n)`` indices with uniform random starts, wrapping around the end,
    concatenated and cut to ``n``."""
    b = min(block, n)
    k = math.ceil(n / b)
    starts = rng.integers(0, n, k if size is None else (size, k))
    idx = (starts[..., None] + np.arange(b)) % n
    return idx.reshape(idx.shape[:-2] + (-1,))[..., :n]


def block_bootstrap_spearman(groups: list[tuple[np.ndarray, np.ndarray]], *, block: int = 10, n_boot: int = 2000,
                             level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Spearman ρ of the pooled ``(x, y)`` points of several runs, with a moving-block bootstrap interval.

    Each group is one run's series in time order; pairs with a non-finite value are dropped first. Resampling draws,
    per run, contiguous blocks of ``block`` points (circularly) until the run's length is reached, so serial
    correlation along a run is kept; the runs themselves are not resampled (with a handful of runs that would add
    little), so the interval does not cover run-to-run variation. Returns ``(rho, low, high)`` at two-sided
    ``level``.
    """
    from scipy.stats import rankdata

    if not groups or any(len(x) != len(y) for x, y in groups):
        raise ValueError("groups must be a non-empty list of (x, y) pairs of equal length")
    groups = [(np.asarray(x, float)[ok], np.asarray(y, float)[ok]) for x, y in groups
              for ok in [np.isfinite(np.asarray(x, float)) & np.isfinite(np.asarray(y, float))]]
    if any(len(x) < 2 for x, _ in groups):
        raise ValueError("every group needs >= 2 finite (x, y) pairs")
    if not isinstance(block, int) or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")

    def rho(x, y):
        rx, ry = rankdata(x, axis=-1), rankdata(y, axis=-1)
        rx = rx - rx.mean(axis=-1, keepdims=True)
        ry = ry - ry.mean(axis=-1, keepdims=True)
        return (rx * ry).sum(-1) / np.sqrt((rx ** 2).sum(-1) * (ry ** 2).sum(-1))

    x_all = np.concatenate([np.asarray(x, float) for x, _ in groups])
    y_all = np.concatenate([np.asarray(y, float) for _, y in groups])
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for x, y in groups:
        idx = circular_block_indices(len(x), block, rng, n_boot)
        xs.append(x[idx])
        ys.append(y[idx])
    boot = rho(np.concatenate(xs, axis=1), np.concatenate(ys, axis=1))
    alpha = (1 - level) / 2
    return float(rho(x_all, y_all)), float(np.quantile(boot, alpha)), float(np.quantile(boot, 1 - alpha))
