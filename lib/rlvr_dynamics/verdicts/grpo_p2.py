"""P2-C14 and P2-C10 on committed GRPO runs (notebook ``grpo_p2_alignment``): the statistics and the verdict rules.

Each ``*_verdict`` function returns a :class:`rlvr_dynamics.verdicts.check.Check` (verdict, reason and the
deciding statistic with its unit, CI and the name of its rule in ``book/claims.yml``).

* P2-C14 (spec §2.4, Theorem 1): (a) Spearman ρ(batch accuracy, M̂) with a block-bootstrap CI; (b) the share of steps
  on or above the logistic lower bound σ(ℓ₀ + M̂/2) within 2 SE and the median distance to it, with block-bootstrap
  CIs (:func:`bound_agreement`). The ledger's ``inconclusive_if`` is checked with computed numbers: the
  estimator's bias check and M̂'s standard error against its range (:func:`cumulative_alignment_se`); Theorem 1's
  step condition η_k‖w_k‖²C_o ≤ [Δμ_k]_+ is tested from the log by a necessary condition
  (:func:`step_condition_check`), and (b) is judged only where it is not shown violated.
* P2-C7 / P2-C9 (§3.6, §5.3): the log-log slope of the bisected critical step η_c(T) against the response length,
  with a bootstrap CI over seeds (:func:`c7_verdict`, :func:`c9_verdict`); P2-C9 (b) counts the seeds where, at one
  fixed step, the loss without 1/|o| collapses at the longest T while GRPO with 1/|o| does not (collapse: the
  project's one rule, final success below half its start, :func:`rlvr_dynamics.p2.step_size.is_collapsed`).
* P2-C10 (§3.4): fixed-η plateaus (trend CI of log(1 − J) holds 0 with 1 − J* ≥ ``min_gap``), J* decreasing in η,
  and a decaying schedule reaching 1 − J at least ``decay_gain`` times lower.
"""
from __future__ import annotations

import math

import numpy as np

from .check import Check, binding


def bound_agreement(points: list[tuple[np.ndarray, np.ndarray, np.ndarray]], *, block: int, n_boot: int = 2000,
                    level: float = 0.95, seed: int = 0) -> dict:
    """(b) of P2-C14: over every step of every run, the fraction of steps whose accuracy is on or above the bound
    within 2 SE, mean[acc ≥ bound − 2·se], and the median |acc − bound|, each with a moving-block bootstrap interval
    (per run, circular blocks of ``block`` steps, as :func:`rlvr_dynamics.runs.analysis.block_bootstrap_spearman`;
    the runs themselves are not resampled). ``points``: one ``(acc, bound, se)`` triple of equal-length arrays per
    run. Returns ``{"frac", "frac_ci", "median", "median_ci"}``."""
    from ..runs.analysis import circular_block_indices

    if not points or any(not (len(a) == len(b) == len(s)) for a, b, s in points):
        raise ValueError("points must be a non-empty list of (acc, bound, se) arrays of equal length")
    if not isinstance(block, int) or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    rng = np.random.default_rng(seed)
    acc = [np.asarray(a, float) for a, _, _ in points]
    bnd = [np.asarray(b, float) for _, b, _ in points]
    se = [np.asarray(s, float) for _, _, s in points]
    above = [a >= b - 2 * s for a, b, s in zip(acc, bnd, se)]
    dist = [np.abs(a - b) for a, b in zip(acc, bnd)]
    idx = [circular_block_indices(len(a), block, rng, size=n_boot) for a in acc]
    frac_b = np.concatenate([ab[i] for ab, i in zip(above, idx)], axis=1).mean(1)
    med_b = np.median(np.concatenate([d[i] for d, i in zip(dist, idx)], axis=1), axis=1)
    q = ((1 - level) / 2, (1 + level) / 2)
    return dict(frac=float(np.concatenate(above).mean()), frac_ci=tuple(float(x) for x in np.quantile(frac_b, q)),
                median=float(np.median(np.concatenate(dist))), median_ci=tuple(float(x) for x in np.quantile(med_b, q)))


def cumulative_alignment_se(dmu: np.ndarray, step_size: np.ndarray, every: int) -> tuple[float, float]:
    """Standard error and range of one run's M̂ = Σ_j η_j [Δμ̂_j]_+ (spec §2.4), each fresh estimate Δμ̂ carried over
    the ``every`` steps from its own to the next measured one.

    The estimate's noise σ is read from the scatter of consecutive measured estimates, σ = std(ΔΔμ̂)/√2 (the step-noise
    convention of :func:`rlvr_dynamics.runs.noise.step_sigma`; an upper bound, since the true Δμ drifts between them);
    with independent errors, SE(M̂_final) = σ·sqrt(Σ_k (every·η_k)²) over the measured steps k (the positive part is
    ignored, which can only overstate the SE). The range is max M̂ − min M̂. Returns ``(se, range)``."""
    dmu = np.asarray(dmu, float)
    eta = np.asarray(step_size, float)
    measured = np.isfinite(dmu)
    if measured.sum() < 3:
        return math.nan, math.nan
    sigma = float(np.std(np.diff(dmu[measured]), ddof=1) / math.sqrt(2))
    se = sigma * math.sqrt(float(np.sum((every * eta[measured]) ** 2)))
    carried = np.maximum.accumulate(np.where(measured, np.arange(len(dmu)), 0))
    m = np.cumsum(eta * np.maximum(np.nan_to_num(dmu[carried]), 0.0))
    return se, float(m.max() - min(0.0, m.min()))


def step_condition_check(dmu: np.ndarray, step_size: np.ndarray, update_norm: np.ndarray, *,
                         c_factor: float = 8.0, level: float = 0.95) -> dict:
    """Theorem 1's step condition η_k‖w_k‖²C_o ≤ [Δμ_k]_+ (spec §3.2) tested from a run's own log, where C_o of a
    network cannot be computed: a necessary condition whose failure shows the condition fails at some step.

    Derivation [D]. Let FD_k = η_k·Δμ̂_k be the fresh finite-difference change of the log-prob gap (nats) and
    u_k = ‖θ_{k+1} − θ_k‖ = η_k‖w_k‖. (i) Under A1 (‖∇ log π(o|q)‖ ≤ G_o), |Δ log π(o)| ≤ G_o·u_k for every completion,
    so |E FD_k| ≤ 2G_o·u_k: G_o ≥ max_k E FD_k/(2u_k). (ii) With ‖∇² log π‖ ≤ L_o, η_kΔμ_k ≤ FD_k + L_o·u_k², so the
    condition with C_o ≥ 2L_o + ``c_factor``·G_o² gives ``c_factor``·G_o²·u_k² ≤ E FD_k at every step, hence
    ``c_factor``·G_o²·mean(u²) ≤ mean(E FD). ``c_factor`` = 8 is the smaller of the spec's two readings of the
    constant (2(L_o + 8G_o²) gives 16). Noise: the estimates' σ is the scatter of consecutive ones, std(ΔFD)/√2 (an
    upper bound, as in :func:`cumulative_alignment_se`); G_o's lower bound takes max_k (FD_k − z σ)/(2u_k) with a
    Bonferroni z over the measured steps at one-sided (1 − ``level``)/2, the mean's upper bound a one-sided t bound at
    the same level, so the two hold together with probability ≥ ``level``.

    Returns ``{"n", "g_low", "fd_upper", "ratio", "violated"}``: ``ratio`` = c_factor·g_low²·mean(u²)/fd_upper;
    ``violated`` (ratio > 1) means the condition fails at some measured step with probability ≥ ``level``. When it
    is not violated the condition is *not* shown to hold (that needs upper bounds on L_o and G_o over all θ and o)."""
    from scipy.stats import norm, t as student_t

    dmu, eta, u = (np.asarray(x, float) for x in (dmu, step_size, update_norm))
    if not dmu.shape == eta.shape == u.shape:
        raise ValueError(f"dmu, step_size and update_norm must have one shape, got {dmu.shape}, {eta.shape}, {u.shape}")
    if not (c_factor > 0 and 0 < level < 1):
        raise ValueError(f"c_factor must be > 0 and level in (0, 1), got {c_factor!r}, {level!r}")
    ok = np.isfinite(dmu) & np.isfinite(eta) & np.isfinite(u) & (u > 0)
    n = int(ok.sum())
    if n < 3:
        return dict(n=n, g_low=math.nan, fd_upper=math.nan, ratio=math.nan, violated=False)
    fd, u = eta[ok] * dmu[ok], u[ok]
    alpha = (1 - level) / 2
    sigma = float(np.std(np.diff(fd), ddof=1) / math.sqrt(2))
    g_low = max(float(np.max((fd - norm.ppf(1 - alpha / n) * sigma) / (2 * u))), 0.0)
    fd_upper = float(fd.mean() + student_t.ppf(1 - alpha, n - 1) * fd.std(ddof=1) / math.sqrt(n))
    ratio = c_factor * g_low ** 2 * float(np.mean(u ** 2)) / fd_upper if fd_upper > 0 else math.inf
    return dict(n=n, g_low=g_low, fd_upper=fd_upper, ratio=float(ratio), violated=bool(ratio > 1))


def c14_verdict(rho: tuple[float, float, float], b: dict | None, v14: dict, *, bias_ok: bool,
                m_se: list[tuple[float, float]], step_condition: list[dict]) -> Check:
    """P2-C14 as amended on 2026-12-02 in ``book/claims.yml``.

    ``inconclusive_if`` (checked first, with numbers): the bias check failed (``bias_ok`` False) or M̂'s SE exceeds
    its range on a run (``m_se`` = [(se, range)] per run). Theorem 1's step condition is tested per run
    (``step_condition``: :func:`step_condition_check` dicts); (b), the theorem's lower bound, is judged only on runs
    where the condition is not shown violated, and ``b`` (:func:`bound_agreement` on those runs) is ``None`` when it
    is shown violated on every run: (b) is then outside the theorem's hypotheses and (a) decides alone.

    With (b) judged: PASS (a) and (b); PARTIAL one of them; FAIL neither, with CIs that exclude both ((a): ρ's CI
    entirely below ``rho_min``; (b): the share's CI entirely below ``frac_above`` or the median's CI entirely above
    ``median_gap``); otherwise INCONCLUSIVE. With (b) outside the hypotheses: PARTIAL if (a) is met, FAIL if ρ's CI
    lies entirely below ``rho_min``, otherwise INCONCLUSIVE (ρ's CI holds both sides of ``rho_min``).
    ``rho`` = (ρ, low, high)."""
    r, lo, hi = rho
    a_ok = r >= v14["rho_min"] and lo >= v14["rho_ci_low"]
    a_out = hi < v14["rho_min"]
    shown = [s for s in step_condition if s["violated"]]
    desc_a = (f"(a) Spearman {r:.3f} [{lo:.3f}, {hi:.3f}] ({'met' if a_ok else 'not met'}; "
              f"{'excluded' if a_out else 'not excluded'}: CI upper end {hi:.3f} vs {v14['rho_min']})")
    cond = (f"Theorem 1's step condition (C_o >= 2 L_o + {v14['step_condition_factor']:g} G_o^2) shown violated on "
            f"{len(shown)} of {len(step_condition)} runs ({v14['step_condition_factor']:g} G_o^2 mean(u^2) / mean(eta "
            f"Delta mu), each at its 95% bound = " + ", ".join(f"{s['ratio']:.2f}" for s in step_condition)
            + "; above 1 the condition fails at some step; G_o >= "
            + ", ".join(f"{s['g_low']:.1f}" for s in step_condition) + ")")
    if b is not None:
        b_ok = b["frac"] >= v14["frac_above"] and b["median"] <= v14["median_gap"]
        b_out = b["frac_ci"][1] < v14["frac_above"] or b["median_ci"][0] > v14["median_gap"]
        written = ("PASS" if a_ok and b_ok else "PARTIAL" if a_ok or b_ok else "FAIL" if a_out and b_out
                   else "INCONCLUSIVE")
        desc_b = (f"(b) on the {len(step_condition) - len(shown)} runs where it is not shown violated: "
                  f"{b['frac']:.1%} [{b['frac_ci'][0]:.1%}, {b['frac_ci'][1]:.1%}] on or above the bound within 2 SE, "
                  f"median distance {b['median']:.3f} [{b['median_ci'][0]:.3f}, {b['median_ci'][1]:.3f}] "
                  f"({'met' if b_ok else 'not met'}; {'excluded' if b_out else 'not excluded'})")
    else:
        b_ok = b_out = False
        written = "PARTIAL" if a_ok else "FAIL" if a_out else "INCONCLUSIVE"
        desc_b = "(b) outside the theorem's hypotheses on every run: not judged, (a) decides alone"
    worst_se = max(m_se, key=lambda x: x[0] / x[1] if x[1] > 0 else math.inf)
    se_bad = [x for x in m_se if not x[0] <= x[1]]
    checks = [f"bias check {'passed' if bias_ok else 'FAILED'}",
              f"M-hat SE / range at most {worst_se[0] / worst_se[1]:.3f} ({len(se_bad)} runs above 1)"]
    if (not bias_ok) or se_bad:
        verdict = "INCONCLUSIVE"
        reason = f"inconclusive_if met: {'; '.join(checks)}; as written otherwise: {written}; {desc_a}; {desc_b}; {cond}"
    else:
        verdict = written
        reason = f"{desc_a}; {desc_b}; {cond}; {'; '.join(checks)}"
    unit_a = "(a) Spearman rho(batch accuracy, M-hat), 95% block-bootstrap CI"
    unit_b = "(b) fraction of steps on or above sigma(l0 + M-hat/2) within 2 SE, 95% block-bootstrap CI"
    if verdict == "PARTIAL" and a_ok and b is not None:     # (b) is the part not met
        name, measured, ci, unit = "frac_above", b["frac"], b["frac_ci"], unit_b
    elif verdict == "PARTIAL" and a_ok:                      # (b) not judged: outside the hypotheses on every run
        name, measured, ci = "b_judged", len(step_condition) - len(shown), None
        unit = "(b) runs where Theorem 1's step condition is not shown violated (the bound is judged on them)"
    elif verdict in ("PASS", "PARTIAL", "FAIL"):
        name = "rho" if verdict != "PARTIAL" or r < v14["rho_min"] else "rho_ci_low"
        measured, ci, unit = (r, (lo, hi), unit_a) if name == "rho" else (lo, (lo, hi), unit_a + " (lower end)")
    elif not a_out or b is None:                            # INCONCLUSIVE: (a) not excluded keeps it from FAIL
        name, measured, ci, unit = "fail_rho_excluded", r, (lo, hi), unit_a
    else:
        name, measured, ci, unit = "fail_frac_excluded", b["frac"], b["frac_ci"], unit_b
    return Check(verdict, reason, [], measured, unit, name, ci)


def c10_verdict(rows: dict[tuple[str, float], dict], v10: dict, *, min_seeds: int = 5) -> Check:
    """P2-C10 from per-condition tail statistics ``rows[(kind, eta)]`` (kind ``fixed`` or ``decay``), each with
    ``J_star`` (mean batch accuracy over the tail), ``ci`` (95 % CI of the trend of log(1 − J) there), ``seeds`` and
    ``horizon_ok`` (horizon ≥ 5 relaxation times).

    PASS: ≥ 3 fixed η with a plateau (trend CI holds 0 and 1 − J* ≥ ``min_gap``; rule ``plateaus``), J* strictly
    decreasing in η over the usable rates (``monotone``) and the decaying schedule's 1 − J at least ``decay_gain``
    times below fixed η = 1e-3's (``decay``); PARTIAL: a plateau at some η but not all of that; FAIL: 1 − J still
    falls (trend CI < 0) at every fixed η; INCONCLUSIVE: < ``min_seeds`` seeds or < 3 rates with the horizon.
    The deciding statistic is the binding part of the PASS rule (:func:`rlvr_dynamics.verdicts.check.binding`)."""
    fixed = sorted(((k[1], w) for k, w in rows.items() if k[0] == "fixed"), key=lambda kw: kw[0])
    decay = [w for k, w in rows.items() if k[0] == "decay"]
    usable = [(eta, w) for eta, w in fixed if w["horizon_ok"]]
    plateaus = [(eta, w) for eta, w in usable if w["ci"][0] <= 0 <= w["ci"][1] and 1 - w["J_star"] >= v10["min_gap"]]
    n_dec = sum(a[1]["J_star"] > b[1]["J_star"] for a, b in zip(usable, usable[1:]))
    monotone = len(usable) >= 3 and n_dec == len(usable) - 1
    ref = dict(fixed).get(1e-3)
    gain = (1 - ref["J_star"]) / (1 - decay[0]["J_star"]) if decay and ref and decay[0]["J_star"] < 1 else math.nan
    desc = "; ".join(f"eta {eta:g}: 1-J* {1 - w['J_star']:.4f}, trend [{w['ci'][0]:+.1e}, {w['ci'][1]:+.1e}]"
                     f"{'' if w['horizon_ok'] else ' (horizon < 5 tau)'}" for eta, w in fixed)
    if decay and ref:
        desc += (f"; cosine decay: 1-J {1 - decay[0]['J_star']:.4f} vs {1 - ref['J_star']:.4f} at fixed 1e-3 "
                 f"({gain:.1f}x lower, needs {v10['decay_gain']:g}x)")
    n_seeds = min((w["seeds"] for w in rows.values()), default=0)
    if n_seeds < min_seeds:
        return Check("INCONCLUSIVE", f"{n_seeds} seeds per condition, the criterion needs >= {min_seeds}; " + desc,
                     [], n_seeds, "seeds per condition")
    if len(usable) < 3:
        return Check("INCONCLUSIVE", f"only {len(usable)} fixed rates with a horizon of 5 relaxation times; " + desc,
                     [], len(usable), "fixed rates with a horizon of 5 relaxation times")
    name, measured, unit = binding([
        ("plateaus", len(plateaus), 3, ">=", "fixed learning rates with a plateau (trend CI holds 0, 1 - J* >= "
         f"{v10['min_gap']:g})"),
        ("monotone", n_dec / (len(usable) - 1), 1.0, ">=", "fraction of consecutive fixed rates with J* decreasing"),
        ("decay", gain, v10["decay_gain"], ">=", "(1 - J*) at fixed 1e-3 / (1 - J) of the decaying schedule")])
    decay_ok = bool(gain >= v10["decay_gain"])
    if len(plateaus) >= 3 and monotone and decay_ok:
        verdict, reason = "PASS", desc
    elif all(w["ci"][1] < 0 for _, w in usable):
        verdict, reason = "FAIL", "1 - J still falls at every fixed rate; " + desc
    elif plateaus:
        verdict, reason = "PARTIAL", (f"plateau at {len(plateaus)} of {len(usable)} rates (needs 3), J* "
                                      f"{'' if monotone else 'not '}decreasing in eta, decay "
                                      f"{'' if decay_ok else 'not '}{v10['decay_gain']:g}x lower; " + desc)
    else:
        return Check("INCONCLUSIVE", "no rate shows a plateau within the CI and not every rate keeps improving; "
                     + desc,
                     [], len(plateaus), "fixed learning rates with a plateau")
    return Check(verdict, reason, [eta for eta, _ in plateaus], measured, unit, name)


SLOPE_UNIT = "OLS log-log slope of the bisected eta_c vs T, mean over seeds, 95% bootstrap CI"


def c7_verdict(fit, v7: dict, *, design_ok: bool, design: str) -> Check:
    """P2-C7 on one slope estimate (``fit``: :class:`rlvr_dynamics.p2.step_size.SlopeEstimate` of the sum loss):
    PASS when its CI lies inside ``slope`` ± ``slope_tol`` (rule ``slope``), PARTIAL when the CI lies below 0
    (``partial``), otherwise FAIL (CI holds 0 or is positive); INCONCLUSIVE with fewer than 3 seeds' slopes or when
    the design misses the criterion (``design_ok``: ≥ 5 lengths over ≥ 1.5 decades, ≥ 5 seeds, η_c bisected to
    ``bisect_rel``)."""
    lo, hi = fit.ci
    desc = f"slope {fit.mean:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}] (target {v7['slope']:+g} +- {v7['slope_tol']}); {design}"
    if fit.slopes.size < 3 or not design_ok:
        return Check("INCONCLUSIVE", f"{fit.slopes.size} seeds with a located eta_c at every length or the design "
                     f"misses the criterion; {desc}", [], fit.slopes.size, "seeds with eta_c located at every length")
    if v7["slope"] - v7["slope_tol"] <= lo and hi <= v7["slope"] + v7["slope_tol"]:
        verdict = "PASS"
    else:
        verdict = "PARTIAL" if hi < 0 else "FAIL"
    return Check(verdict, desc, [], fit.mean, SLOPE_UNIT + " (sum loss)", "slope", (lo, hi))


def c9_verdict(fit, frac_b: float | None, v9: dict, *, design_ok: bool, desc_b: str, design: str) -> Check:
    """P2-C9: (a) the CI of GRPO's slope (with 1/|o|) inside ± ``flat_tol`` (rule ``flat``); (b) the fraction of seeds
    where the loss without 1/|o| collapses at the longest T and GRPO does not, ≥ ``collapse_frac`` (``collapse``;
    ``frac_b`` None when (b) was not run). PASS: both; PARTIAL: one; FAIL: neither. The deciding statistic is the
    part not met (for a FAIL, (a)); INCONCLUSIVE as :func:`c7_verdict`."""
    lo, hi = fit.ci
    a_ok = bool(-v9["flat_tol"] <= lo and hi <= v9["flat_tol"])
    b_ok = frac_b is not None and frac_b >= v9["collapse_frac"]
    desc = (f"(a) slope {fit.mean:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}] ({'flat' if a_ok else 'not flat'} within "
            f"+-{v9['flat_tol']}); (b) {desc_b}; {design}")
    if fit.slopes.size < 3 or not design_ok:
        return Check("INCONCLUSIVE", f"{fit.slopes.size} seeds with a located eta_c at every length or the design "
                     f"misses the criterion; {desc}", [], fit.slopes.size, "seeds with eta_c located at every length")
    verdict = "PASS" if a_ok and b_ok else "PARTIAL" if a_ok or b_ok else "FAIL"
    if a_ok and not b_ok:
        return Check(verdict, desc, [], math.nan if frac_b is None else frac_b,
                     "(b) fraction of seeds: no-1/|o| collapses at the longest T, GRPO does not"
                     + (" (not run)" if frac_b is None else ""), "collapse")
    return Check(verdict, desc, [], fit.mean, "(a) " + SLOPE_UNIT + " (GRPO with 1/|o|)", "flat", (lo, hi))
