"""P2-C15 (notebook ``p2_length_scaling``): does GRPO's std normalisation lower the collapse step and overshoot near
J = 1, against REINFORCE and Dr. GRPO? The statistics and the verdict, by the rule amended on 2026-12-02 and
2026-12-04 in ``book/claims.yml``.

* (a) the step η_q at which a share ``q`` of the seeds collapses (a level every algorithm reaches; η_50 was reached
  by none), from per-seed collapse indicators on a shared log grid of step sizes (:func:`collapse_step`), in
  step-length units since 2026-12-04 (η_q times the algorithm's update size ‖w₀‖ at the start, :func:`update_size`,
  P2-C8's unit; raw η before), and the ratio GRPO / each other algorithm with a paired bootstrap over seeds
  (:func:`collapse_step_ratios`).
* (b) the share of steps near J = 1 whose log-odds fall, GRPO against each other algorithm: one-sided Fisher exact
  test and the odds ratio's CI, as first registered, and the test's power against an odds ratio of 2
  (:func:`fisher_power`).
* :func:`c15_verdict`: PASS (a) and (b); PARTIAL one; FAIL both excluded at the smallest effect of interest (a factor
  2) against at least one of the two others; otherwise INCONCLUSIVE, with each part's power.
"""
from __future__ import annotations

import math

import numpy as np

from .check import Check


def collapse_step(grid, collapsed, level: float) -> float:
    """η_q: the first step size of the increasing ``grid`` at which the share of collapsed seeds (``collapsed``,
    boolean array ``[seed, eta]``) reaches ``level``, interpolated log-linearly between the two grid points that
    bracket the crossing; ``grid[0]`` if it is reached there, ``inf`` if never."""
    grid = np.asarray(grid, float)
    frac = np.asarray(collapsed, float).mean(axis=0)
    if grid.ndim != 1 or frac.shape != grid.shape or np.any(np.diff(grid) <= 0):
        raise ValueError(f"grid must be increasing and match collapsed's second axis, got {grid.shape}, {frac.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    hit = np.flatnonzero(frac >= level)
    if hit.size == 0:
        return math.inf
    k = int(hit[0])
    if k == 0:
        return float(grid[0])
    f0, f1 = frac[k - 1], frac[k]
    w = (level - f0) / (f1 - f0)
    return float(np.exp(np.log(grid[k - 1]) + w * (np.log(grid[k]) - np.log(grid[k - 1]))))


def update_size(direction_norm) -> np.ndarray:
    """Per-seed update size of one algorithm: ``direction_norm`` is ``[eta, seed]`` (or ``[seed]``), the norm ‖w₀‖ of
    the update each run takes at its first step (θ₀, the same start for every step size, so the step sizes are
    repeated draws); returns its mean over the step sizes, one value per seed (the unit of P2-C8's step length
    η‖w(θ₀)‖, with the sampled update in place of the population direction)."""
    w = np.asarray(direction_norm, float)
    w = w[None] if w.ndim == 1 else w
    if w.ndim != 2 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"direction_norm must be a finite non-negative [eta, seed] array, got shape {w.shape}")
    return w.mean(axis=0)


def collapse_step_ratios(grid, collapsed: dict[str, np.ndarray], level: float, *, target: str = "grpo",
                         scale: dict[str, np.ndarray] | None = None, n_boot: int = 2000, seed: int = 0) -> dict:
    """η_q of each algorithm (``collapsed[alg]`` = ``[seed, eta]`` indicators on the same seeds) and, for each other
    algorithm, the ratio η_q(``target``)/η_q(other) with a paired percentile bootstrap over seeds (95 %) and the SD
    of its logarithm. Returns ``{"eta_q": {alg: value}, "ratio": {alg: (value, lo, hi, sd_log)}}``; resamples where an
    η_q is infinite count as the ratio's extreme (0 or inf).

    ``scale`` (``{alg: per-seed update size}``, :func:`update_size`, on the same seeds) puts η_q in step-length units
    (P2-C15 as amended on 2026-12-04, P2-C8's unit): each η_q is multiplied by the mean update size over the seeds,
    and in each bootstrap resample over the resampled seeds, so the ratio compares the step lengths η_q·‖w₀‖ at which
    the algorithms collapse rather than their raw step sizes."""
    algs = list(collapsed)
    n = {np.asarray(c).shape[0] for c in collapsed.values()}
    if len(n) != 1 or target not in collapsed:
        raise ValueError(f"collapsed must hold {target!r} and arrays with one seed count, got {sorted(collapsed)}")
    n_seeds = n.pop()
    if scale is not None and (set(scale) != set(algs)
                              or any(np.asarray(scale[a], float).shape != (n_seeds,) for a in algs)):
        raise ValueError(f"scale must give one update size per seed ({n_seeds}) for each of {algs}")
    size = {a: (np.ones(n_seeds) if scale is None else np.asarray(scale[a], float)) for a in algs}
    eta = {a: collapse_step(grid, collapsed[a], level) * float(size[a].mean()) for a in algs}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_seeds, size=(n_boot, n_seeds))
    boot = {a: np.array([collapse_step(grid, np.asarray(collapsed[a])[i], level) * float(size[a][i].mean())
                         for i in idx]) for a in algs}
    out = {}
    for a in algs:
        if a == target:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            r = boot[target] / boot[a]
        r = np.where(np.isnan(r), 1.0, r)                   # both infinite: no information, counted as equal
        lr = np.log(r[np.isfinite(r) & (r > 0)])
        out[a] = (eta[target] / eta[a] if math.isfinite(eta[a]) else math.nan,
                  float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975)),
                  float(np.std(lr, ddof=1)) if lr.size > 2 else math.inf)
    return dict(eta_q=eta, ratio=out)


def lowering_power(sd_log: float, effect: float = 2.0, level: float = 0.95) -> float:
    """Power to show a lowering by the factor ``effect`` (the ratio's two-sided ``level`` CI below 1 when the true
    ratio is 1/``effect``), for a log ratio whose bootstrap SD is ``sd_log``: Φ(ln(effect)/sd − z) (normal
    approximation); 0 for an infinite SD."""
    from scipy.stats import norm

    if not effect > 1:
        raise ValueError(f"effect must be > 1, got {effect!r}")
    if not math.isfinite(sd_log) or sd_log <= 0:
        return 0.0 if not math.isfinite(sd_log) else 1.0
    return float(norm.cdf(math.log(effect) / sd_log - norm.ppf(0.5 + level / 2)))


def fisher_power(n_target: int, n_other: int, rate_other: float, odds_ratio: float = 2.0, *, alpha: float = 0.05,
                 n_sim: int = 2000, seed: int = 0) -> float:
    """Power of the one-sided Fisher exact test (target more often than other, level ``alpha``) when the other
    algorithm's rate is ``rate_other`` and the target's odds are ``odds_ratio`` times it, with ``n_target`` and
    ``n_other`` trials: the share of ``n_sim`` simulated binomial pairs that reject."""
    from scipy.stats import fisher_exact

    if not (0 < rate_other < 1 and odds_ratio > 0 and n_target > 0 and n_other > 0):
        raise ValueError(f"need 0 < rate_other < 1, odds_ratio > 0 and positive counts, got {rate_other!r}, "
                         f"{odds_ratio!r}, {n_target!r}, {n_other!r}")
    odds = odds_ratio * rate_other / (1 - rate_other)
    rate_t = odds / (1 + odds)
    rng = np.random.default_rng(seed)
    kt = rng.binomial(n_target, rate_t, n_sim)
    ko = rng.binomial(n_other, rate_other, n_sim)
    cache: dict[tuple[int, int], bool] = {}
    rej = 0
    for a, b in zip(kt.tolist(), ko.tolist()):
        if (a, b) not in cache:
            cache[(a, b)] = fisher_exact([[a, n_target - a], [b, n_other - b]], alternative="greater")[1] < alpha
        rej += cache[(a, b)]
    return rej / n_sim


def c15_verdict(a: dict, b: dict, v15: dict, *, n_seeds: int) -> Check:
    """P2-C15 as amended on 2026-12-02 and 2026-12-04 (the unit of (a)).

    ``a`` = :func:`collapse_step_ratios` plus ``"power"`` (probability of detecting a factor-2 lowering against both
    others, from the bootstrap SD of the log ratios) and optionally ``"unit"`` (the name of (a)'s quantity in the
    reason, "eta" by default); ``b`` = ``{"p": {alg: one-sided Fisher p}, "odds": {alg: (or,
    lo, hi)}, "power": {alg: fisher_power}, "counts": {alg: (down, near)}}``. (a) holds when both ratios' CIs lie
    below 1, and is excluded when some ratio's CI lies above 1/``effect``; (b) holds when both p < ``alpha``, and is
    excluded when some odds ratio's CI lies below ``effect``. INCONCLUSIVE first when there are fewer than
    ``min_seeds`` seeds or some algorithm never reaches the level."""
    eff, alpha = v15["effect"], v15["alpha"]
    q = "eta_q" if a.get("unit", "eta") == "eta" else f"{a['unit']} at eta_q"
    others = [k for k in a["ratio"]]
    eta = a["eta_q"]
    desc_a = (f"(a) {a.get('unit', 'eta')} at {v15['collapse_level']:.0%} collapse: " + ", ".join(f"{k} {v:.4g}" for k, v in eta.items())
              + "; GRPO / " + ", ".join(f"{k} {r[0]:.3g} [{r[1]:.3g}, {r[2]:.3g}]" for k, r in a["ratio"].items())
              + f" (95% paired bootstrap over {n_seeds} seeds); power for a {eff:g}x lowering {a['power']:.2f}")
    desc_b = ("(b) overshoot at J > " + f"{v15['near_one']}: " + ", ".join(f"{k} {d}/{n}" for k, (d, n) in
                                                                       b["counts"].items())
              + "; one-sided Fisher p " + ", ".join(f"{k} {p:.3g}" for k, p in b["p"].items())
              + "; odds ratio GRPO / " + ", ".join(f"{k} {o[0]:.2f} [{o[1]:.2f}, {o[2]:.2f}]" for k, o in
                                                  b["odds"].items())
              + f"; power for odds ratio {eff:g} " + ", ".join(f"{k} {p:.2f}" for k, p in b["power"].items()))
    if n_seeds < v15["min_seeds"] or not all(math.isfinite(v) for v in eta.values()):
        never = [k for k, v in eta.items() if not math.isfinite(v)]
        return Check("INCONCLUSIVE", (f"{n_seeds} seeds (needs >= {v15['min_seeds']})" if n_seeds < v15["min_seeds"]
                                      else f"{', '.join(never)} never reaches {v15['collapse_level']:.0%} collapse")
                     + f"; {desc_a}; {desc_b}", [], a["power"], "power of (a) for a factor-2 lowering")
    hi_a = max(a["ratio"][k][2] for k in others)
    lo_a = max(a["ratio"][k][1] for k in others)
    p_b = max(b["p"].values())
    hi_b = min(o[2] for o in b["odds"].values())
    a_ok, b_ok = hi_a < 1.0, p_b < alpha
    a_out, b_out = lo_a > 1.0 / eff, hi_b < eff
    verdict = ("PASS" if a_ok and b_ok else "PARTIAL" if a_ok or b_ok else "FAIL" if a_out and b_out
               else "INCONCLUSIVE")
    parts = (f"(a) {'holds' if a_ok else 'not shown'}, {'excluded' if a_out else 'not excluded'}; (b) "
             f"{'holds' if b_ok else 'not shown'}, {'excluded' if b_out else 'not excluded'}")
    reason = f"{parts}; {desc_a}; {desc_b}"
    if verdict == "PASS" or (verdict == "PARTIAL" and b_ok):
        # PASS: the part nearer its bound; PARTIAL with (b): (a) is the part not met
        name, measured, ci, unit = ("eta_q", hi_a, None,
                                    f"larger upper end of the 95% CIs of GRPO's {q} / each other's")
        if verdict == "PASS" and (alpha - p_b) / alpha < (1 - hi_a):
            name, measured, unit = "overshoot", p_b, "larger one-sided Fisher p (GRPO overshoots more than each other)"
    elif verdict == "PARTIAL":
        name, measured, ci, unit = ("overshoot", p_b, None,
                                    "larger one-sided Fisher p (GRPO overshoots more than each other)")
    elif verdict == "FAIL":
        name, measured, ci, unit = ("eta_q", hi_a, None,
                                    f"larger upper end of the 95% CIs of GRPO's {q} / each other's")
    else:
        name, measured, ci, unit = ("fail_eta_q_excluded", lo_a, None,
                                    f"larger lower end of the 95% CIs of GRPO's {q} / each other's (FAIL needs > 1/2)")
    return Check(verdict, reason, [], measured, unit, name, ci)
