"""P1-C5, P1-C8, P1-C9, P1-C12, P1-C14 and P1-C15 on committed GRPO runs: the per-run fit table and the verdict rules.

Shared by the notebooks ``grpo_p1_dynamics`` (the tiny sharpening testbed) and ``grpo_smollm`` (SmolLM2-135M), so
that one rule, as fixed in ``book/claims.yml``, judges every family of runs. Each ``*_verdict`` function takes the
rows of :func:`run_row` and the claim's ``criterion.values`` and returns a :class:`Check`: the verdict, the reason,
the in-scope rows and the **deciding statistic** (``measured``, its unit, its CI where a CI decides, and the name of
the machine-readable rule in ``criterion.values.rules`` it is compared with). ``Check.claim_kwargs`` turns it into
the keyword arguments of :class:`rlvr_dynamics.book.claims.Claim`.

* P1-C8 (spec §3.5, Prop. 14; rule amended 2026-12-02): ΔBIC(three-phase − single exponential) < ``dbic`` and a
  slow start R'(0)/max R' at most √ρ (midway between the theory's own ρ and 1) on every valid run (noise ceiling ≥ ``min_ceiling``, start
  at rest, no mid-run collapse), decided on the worst run, once the rule's simulated power reaches ``min_power``.
  Runs whose optimizer's first step is already full size (bias-corrected Adam without warm-up:
  :func:`first_step_full_size`) cannot show the slow start: INCONCLUSIVE.
* P1-C9: three-phase R² ≥ ``r2_min`` on every run whose ceiling reaches ``r2_min + ceiling_margin`` (worst run);
  PARTIAL on half of them, or R²/R²_max ≥ ``r2_min`` on every run.
* P1-C12 (§3.6, rule amended 2026-12-02): PASS when on every in-scope run the underdamped law does not win
  (ΔBIC(oscillatory − overdamped) > ``dbic``) *and* the smoothed reward's overshoot above its plateau, in
  autocorrelation-aware SE, stays inside the envelope noise alone reaches (:func:`overshoot_null`, Bonferroni over
  the runs); FAIL when a run shows the full oscillation signature (ΔBIC < ``dbic`` with ζ < 1 and an overshoot above
  the envelope); PARTIAL otherwise. In scope when 3 SE ≤ ``min_rise_frac`` × rise.
* P1-C15 (§3.8): the G=4 − G=16 unbiased within-group variance in bins of matched reward, by the rule as first
  registered (:func:`c15_verdict`).
* P1-C14 (§5): transfer gains G-invariant (equivalence per family) and falling from near to far families, on the
  families with headroom (:func:`c14_verdict`).
* Panel curves (issue 23): :func:`panel_row` gives the same fields for a run's fixed-panel reward curve (256
  held-out prompts at a dense schedule), by the rule pre-registered in ``book/claims.yml``; its noise ceiling is
  :func:`panel_noise_ceiling` (the larger of the binomial and the step-to-step noise). The verdict functions take
  either kind of row.
* P1-C5 (§3.8): the equivalence statistic Δ = mean over models of (plateau G=4 − plateau G=16) / mean rise, with a
  t-interval from the seed spread pooled over the model × G cells; PASS when the CI lies inside ±``margin``.

The rows come from :mod:`.grpo_rows` (re-exported here, so a notebook imports one module).
"""
from __future__ import annotations

import math

import numpy as np

from .check import Check, binding
from .grpo_rows import names, panel_row, print_fit_table, run_row

__all__ = ["Check", "run_row", "panel_row", "names", "print_fit_table", "c8_verdict", "c9_verdict", "c12_verdict",
           "c15_verdict", "with_headroom", "c14_verdict", "c5_equivalence"]
"""The notebooks read the rows (:mod:`.grpo_rows`) and the verdict rules from this one module."""


def c8_verdict(rows: list[dict], v8: dict, power: dict | None = None) -> Check:
    """P1-C8 on GRPO curves, by the rule as amended on 2026-12-02 (``book/claims.yml``).

    Judged: curves whose noise ceiling reaches ``min_ceiling`` (≥ 10 points), whose optimizer starts at rest (not
    :func:`first_step_full_size`) and that did not collapse mid-run (:func:`~.grpo_p1_slow_start.collapsed_mid_run`,
    field ``collapsed_mid_run``). Each needs ΔBIC < ``dbic`` (rule ``dbic_worst``) and a slow start R'(0)/max R' at
    most the theory's bound √ρ of its own curve (field ``slow_start_bound``; rule ``slow_start_theory`` on the
    largest ratio R'(0)/max R' ÷ bound, ≤ 1). Before deciding, the rule's power: ``power`` = ``{run id: dict of
    :func:`~.grpo_p1_slow_start.slow_start_power`}``; when the product over the judged runs (the chance that the rule
    passes on all of them when the theory holds) is below ``min_power``, or was not measured, INCONCLUSIVE with it
    (rule ``power``). Otherwise PASS on every run; PARTIAL: ΔAIC < ``daic`` on ≥ half of them (``partial_daic``);
    else FAIL. INCONCLUSIVE also when no curve reaches the ceiling, or every curve takes a full-size first step."""
    fits = [w for w in rows if w["ceiling"] >= v8["min_ceiling"] and len(w["t"]) >= 10]
    if not fits:
        top = max((w["ceiling"] for w in rows), default=math.nan)
        opts = ", ".join(sorted({w.get("optimizer", "?") for w in rows}))
        adam = (f"; every run also takes a full-size first step ({opts}, bias-corrected, no warm-up)"
                if rows and all(w.get("first_step_full", False) for w in rows) else "")
        return Check("INCONCLUSIVE", f"no run has a noise ceiling >= {v8['min_ceiling']} (max {top:.3f}): no fit "
                     f"could separate the laws{adam}", [], top, "largest noise ceiling 1 - sigma^2/Var(r)")
    for w in fits:
        w["slow_ratio"] = w["slow_start"] / w["slow_start_bound"] if w.get("slow_start_bound", 0) > 0 else math.inf
    per_run = "; ".join(f"{w['model']} G={w['G']} s{w['seed']}: R'(0)/max R' {w['slow_start']:.2f}, dBIC "
                        f"{w['d_bic']:+.1f}" for w in fits)
    full = [w for w in fits if w.get("first_step_full", False)]
    crashed = [w for w in fits if not w.get("first_step_full", False) and w.get("collapsed_mid_run", False)]
    in_scope = [w for w in fits if not w.get("first_step_full", False) and not w.get("collapsed_mid_run", False)]
    below = len(rows) - len(fits)
    if not in_scope and not crashed:
        worst = max(w["slow_start"] for w in full)
        n_one = sum(w["slow_start"] >= 0.995 for w in full)
        return Check("INCONCLUSIVE", (
            f"every one of {len(full)} runs above the noise ceiling {v8['min_ceiling']} takes a full-size first "
            f"step ({', '.join(sorted({w.get('optimizer', '?') for w in full}))}, bias-corrected, no warm-up): the "
            f"slow start cannot appear; R'(0)/max R' = 1.00 on {n_one} of {len(full)} runs (largest {worst:.2f}), "
            f"dBIC up to {max(w['d_bic'] for w in full):+.1f}; {per_run}"
            + (f"; {below} runs below the ceiling" if below else "")),
            [], worst, "largest R'(0)/max R' (runs whose first step is full size)")
    if not in_scope:
        return Check("INCONCLUSIVE", f"every run that starts at rest collapsed mid-run ({names(crashed)}): none is "
                     "judged", [], float(len(crashed)), "runs excluded by the mid-run collapse rule")
    worst_bic = max(w["d_bic"] for w in in_scope)
    worst_slow = max(w["slow_ratio"] for w in in_scope)
    half = float(np.mean([w["d_aic"] < v8["daic"] for w in in_scope]))
    run_desc = "; ".join(f"{w['model']} G={w['G']} s{w['seed']}: dBIC {w['d_bic']:+.1f}, dAIC {w['d_aic']:+.1f}, "
                         f"R'(0)/max R' {w['slow_start']:.2f} (theory {w['slow_start_rho']:.3f}, bound "
                         f"{w['slow_start_bound']:.2f}), ceiling {w['ceiling']:.2f}"
                         + (f", power {power[w['run']]['power']:.3g} (dBIC part {power[w['run']]['dbic_pass']:.3g}, "
                            f"slow-start part {power[w['run']]['slow_pass']:.3g}; a single exponential passes "
                            f"{power[w['run']]['false_pass']:.3g})" if power and w["run"] in power else "")
                         for w in in_scope)
    tail = ((f"; excluded (collapsed mid-run): {names(crashed)}" if crashed else "")
            + (f"; not judged (first step full size): {names(full)}" if full else "")
            + (f"; {below} runs below the ceiling are inconclusive" if below else ""))
    if power is None or any(w["run"] not in power for w in in_scope):
        return Check("INCONCLUSIVE", f"the rule's power was not measured on the {len(in_scope)} judged runs; "
                     + run_desc + tail, in_scope, None, "power not measured")
    joint = float(np.prod([power[w["run"]]["power"] for w in in_scope]))
    if joint < v8["min_power"]:
        n_sim = min(power[w["run"]]["n_sim"] for w in in_scope)
        return Check("INCONCLUSIVE", (
            f"the test could not show the law: with each run's noise it passes on all {len(in_scope)} judged runs "
            f"with probability {joint:.2g} when the theory holds (simulated, {n_sim} curves per run; needs >= "
            f"{v8['min_power']:g}); as measured: worst dBIC {worst_bic:+.1f} (needs < {v8['dbic']:g}), worst "
            f"R'(0)/max R' / bound {worst_slow:.2f} (needs <= 1), dAIC < {v8['daic']:g} on {half:.0%}; " + run_desc
            + tail), in_scope, joint, "probability that the rule passes on every judged run when the theory holds "
            "(simulated)", "power")
    name, measured, unit = binding([
        ("dbic_worst", worst_bic, v8["dbic"], "<", "largest dBIC (three-phase - single exp.) over in-scope runs"),
        ("slow_start_theory", worst_slow, 1.0, "<=",
         "largest R'(0)/max R' over the theory's bound, over in-scope runs")])
    passed = worst_bic < v8["dbic"] and worst_slow <= 1.0
    verdict = "PASS" if passed else "PARTIAL" if half >= 0.5 else "FAIL"
    reason = (f"worst of {len(in_scope)} runs: dBIC {worst_bic:+.1f} (needs < {v8['dbic']:g}), R'(0)/max R' / bound "
              f"{worst_slow:.2f} (needs <= 1); dAIC < {v8['daic']:g} on {half:.0%}; power {joint:.2f}; "
              + run_desc + tail)
    return Check(verdict, reason, in_scope, measured, unit, name)


def c9_verdict(rows: list[dict], v9: dict) -> Check:
    """P1-C9: R² ≥ ``r2_min`` on every run whose ceiling reaches ``r2_min + ceiling_margin`` (rule ``r2_worst``);
    PARTIAL: on at least half of them (``partial_half``) or R²/R²_max ≥ ``r2_min`` on every run
    (``partial_ratio``); INCONCLUSIVE when no run's ceiling reaches the floor."""
    floor = v9["r2_min"] + v9["ceiling_margin"]
    in_scope = [w for w in rows if w["ceiling"] >= floor]
    if not in_scope:
        top = max((w["ceiling"] for w in rows), default=math.nan)
        median = float(np.median([w["r2_tp"] for w in rows])) if rows else math.nan
        return Check("INCONCLUSIVE", (f"noise ceiling 1 - sigma^2/Var(r) below {floor:.2f} on all {len(rows)} runs "
                                      f"(max {top:.3f}, median R^2 {median:.3f}): no law could reach the paper's R^2"),
                     [], top, "largest noise ceiling 1 - sigma^2/Var(r)")
    worst = min(w["r2_tp"] for w in in_scope)
    frac = float(np.mean([w["r2_tp"] >= v9["r2_min"] for w in in_scope]))
    ratio = min(w["r2_tp"] / w["ceiling"] for w in rows)
    verdict = ("PASS" if worst >= v9["r2_min"] else
               "PARTIAL" if frac >= 0.5 or ratio >= v9["r2_min"] else "FAIL")
    out = [w for w in rows if w["ceiling"] < floor]
    reason = (f"smallest R^2 {worst:.3f} over {len(in_scope)} runs with ceiling >= {floor:.2f} (needs >= "
              f"{v9['r2_min']}); R^2 >= {v9['r2_min']} on {frac:.0%}; smallest R^2/ceiling {ratio:.3f}; "
              + "; ".join(f"{w['model']} G={w['G']} s{w['seed']}: R^2 {w['r2_tp']:.3f} (ceiling {w['ceiling']:.3f})"
                          for w in in_scope)
              + (f"; below the ceiling floor (listed, not judged): " + "; ".join(
                  f"{w['model']} G={w['G']} s{w['seed']}: R^2 {w['r2_tp']:.3f} (ceiling {w['ceiling']:.3f})"
                  for w in out) if out else ""))
    return Check(verdict, reason, in_scope, worst, f"smallest three-phase R^2 (runs with ceiling >= {floor:.2f})",
                 "r2_worst")


def c12_verdict(rows: list[dict], v12: dict) -> Check:
    """P1-C12 on the curve's shape (not the fitted ζ, which is ≥ 1 by construction of the overdamped family), by the
    rule as amended on 2026-12-02 in ``book/claims.yml``.

    A run's overshoot is max (smoothed reward − R∞)/SE with SE autocorrelation-aware (``overshoot_ac``, AR(1) of the
    overdamped fit's residuals, :func:`ar1_mean_se`); it is compared with the envelope that noise alone reaches,
    the (1 − ``envelope_alpha``/m) quantile of :func:`overshoot_null` for m in-scope runs (Bonferroni), as the ratio
    overshoot / envelope (rule ``overshoot_envelope_worst``, ≤ 1). PASS when on every in-scope run the oscillatory
    law does not win (ΔBIC(oscillatory − overdamped) > ``dbic``, rule ``dbic_osc_worst``) and no ratio exceeds 1;
    FAIL when some run shows the full oscillation signature (ΔBIC < ``dbic`` with ζ < 1 and a ratio > 1); PARTIAL
    otherwise (one part broken, no run with the signature). In scope when 3 SE ≤ ``min_rise_frac`` × rise;
    INCONCLUSIVE when no run is."""
    in_scope = [w for w in rows if w["detectable"]]
    if not in_scope:
        smallest = min((w["detect_frac"] for w in rows), default=math.nan)
        return Check("INCONCLUSIVE", (f"on every run 3 SE of the smoothed reward exceed {v12['min_rise_frac']:.0%} "
                                      f"of the rise (smallest: {smallest:.2f} of the rise): an oscillation could not "
                                      "have been seen"),
                     [], smallest, "smallest detectable overshoot (3 SE) / rise over the runs")
    q = 1 - v12["envelope_alpha"] / len(in_scope)
    for w in in_scope:
        null = np.asarray(w["overshoot_null"], dtype=float)
        w["envelope"] = float(np.quantile(null, q))
        w["envelope_ratio"] = w["overshoot_ac"] / w["envelope"] if w["envelope"] > 0 else math.inf
        w["envelope_p"] = float((1 + np.sum(null >= w["overshoot_ac"])) / (1 + null.size))
    worst_bic = min(w["d_bic_osc"] for w in in_scope)
    worst_ratio = max(w["envelope_ratio"] for w in in_scope)
    name, measured, unit = binding([
        ("overshoot_envelope_worst", worst_ratio, v12["envelope_bound"], "<=",
         "largest overshoot / noise-alone envelope over in-scope runs (autocorrelation-aware SE, Bonferroni quantile)"),
        ("dbic_osc_worst", worst_bic, v12["dbic"], ">", "smallest dBIC (oscillatory - overdamped) over in-scope runs")])
    over = [w for w in in_scope if w["envelope_ratio"] > v12["envelope_bound"]]
    wins = [w for w in in_scope if w["d_bic_osc"] <= v12["dbic"]]
    osc = [w for w in in_scope if w["d_bic_osc"] < v12["dbic"] and w["osc_regime"] in ("underdamped", "growing")
           and w["envelope_ratio"] > v12["envelope_bound"]]
    verdict = "PASS" if not over and not wins else "FAIL" if osc else "PARTIAL"
    per_run = ", ".join(f"{w['model']} G={w['G']} s{w['seed']} {w['overshoot_ac']:.2f} SE (envelope "
                        f"{w['envelope']:.2f}, p {w['envelope_p']:.3g})" for w in
                        sorted(in_scope, key=lambda w: -w["envelope_ratio"])[:3])
    reason = (f"{len(in_scope)} runs where an overshoot of {v12['min_rise_frac']:.0%} of the rise is detectable "
              f"(3 autocorrelation-aware SE); overshoot above the noise-alone envelope (its {q:.4f} quantile, "
              f"Bonferroni over {len(in_scope)} runs) on {len(over)}"
              + (" (" + names(over) + ")" if over else "")
              + f"; largest overshoots {per_run}; residual lag-1 autocorrelation "
              f"{min(w['resid_phi'] for w in in_scope):.2f}-{max(w['resid_phi'] for w in in_scope):.2f}; "
              f"oscillatory law wins (dBIC <= {v12['dbic']:g}) on {len(wins)} (smallest dBIC {worst_bic:+.1f}); "
              f"full oscillation signature (dBIC < {v12['dbic']:g} with zeta < 1 and an overshoot above the envelope) "
              f"on: {names(osc)}; where an overshoot would be undetectable the oscillatory law wins by BIC on "
              f"{names([w for w in rows if not w['detectable'] and w['d_bic_osc'] < v12['dbic']])}")
    return Check(verdict, reason, in_scope, measured, unit, name)


def c15_verdict(bins: list[dict], v15: dict) -> Check:
    """P1-C15 on bins of matched batch reward, each ``{"lo", "hi", "diff", "ci"}`` (G=4 minus G=16 unbiased
    within-group variance and its 95 % CI), scored by the rule **as first registered** (``book/claims.yml``, rules
    ``first_registered_*``):

    * PASS: the CIs of ≥ 2 bins exclude 0 with one common sign (``first_registered_pass`` on the larger of the
      numbers of bins whose CI lies above 0 and below 0);
    * FAIL: no CI excludes 0 (``first_registered_fail_bins``) and every CI half-width (hi − lo)/2 is ≤ the resolution
      (``first_registered_fail_halfwidth``);
    * otherwise, or with fewer than ``min_bins`` bins, INCONCLUSIVE.

    The later versions, written after a result was seen (``later_pass``: the bins counted need |diff| ≥ the
    resolution and every excluding bin one sign; ``later_fail``: the envelope of all CIs inside ±resolution), are
    computed and quoted in the reason, never deciding."""
    res = v15["resolution"]
    pos = [b for b in bins if b["ci"][0] > 0]
    neg = [b for b in bins if b["ci"][1] < 0]
    n_sign = max(len(pos), len(neg))
    n_excl = len(pos) + len(neg)
    half = max(((b["ci"][1] - b["ci"][0]) / 2 for b in bins), default=math.nan)
    later_n = (sum(abs(b["diff"]) >= res for b in pos + neg) if not (pos and neg) else 0)
    env = (min(b["ci"][0] for b in bins), max(b["ci"][1] for b in bins)) if bins else (math.nan, math.nan)
    later = ("PASS" if later_n >= 2 else "FAIL" if bins and -res <= env[0] and env[1] <= res else "INCONCLUSIVE")
    desc = "; ".join(f"[{b['lo']:.1f},{b['hi']:.1f}): {b['diff']:+.4f} [{b['ci'][0]:+.4f}, {b['ci'][1]:+.4f}]"
                     for b in bins)
    if len(bins) < v15["min_bins"]:
        verdict = "INCONCLUSIVE"
        head = f"{len(bins)} bins with >= {v15['min_groups_per_bin']} groups per G (needs {v15['min_bins']})"
    elif n_sign >= 2:
        verdict, head = "PASS", f"{n_sign} of {len(bins)} bins exclude 0 with one sign"
    elif n_excl == 0 and half <= res:
        verdict, head = "FAIL", f"no bin's CI excludes 0 and every half-width <= {res} (largest {half:.4f})"
    else:
        verdict = "INCONCLUSIVE"
        head = (f"{n_sign} of {len(bins)} bins exclude 0 with one sign (PASS needs 2), and FAIL needs no bin excluding"
                f" 0 ({n_excl} do) with half-widths <= {res} (largest {half:.4f})")
    reason = (f"rule as first registered: {head}; later version (written after a result, not deciding): "
              f"{later} ({later_n} bin(s) exclude 0 with |diff| >= {res}; CI envelope [{env[0]:+.4f}, {env[1]:+.4f}]); "
              + desc)
    return Check(verdict, reason, bins, n_sign, "bins whose 95% CI excludes 0 with one sign (rule as first "
                 "registered)", "first_registered_pass")


def with_headroom(before: dict[str, float]) -> list[str]:
    """Families with headroom for P1-C14 (``book/claims.yml``): before-training accuracy strictly between 0 and 1."""
    return [f for f, b in before.items() if 0.0 < b < 1.0]


def c14_verdict(tables: dict[int, dict[str, dict]], families: list[str], n_problems: int, n_runs: dict[int, int],
                v14: dict, *, rng: np.random.Generator, n_permutations: int = 10_000) -> tuple[Check, dict]:
    """P1-C14 on before/after accuracies per family (``tables[G][family] = {"before", "after", "delta"}``, means over
    the ``n_runs[G]`` runs of one G, each family evaluated on ``n_problems`` problems), families ordered near to far.

    Headroom: before-training accuracy strictly between 0 and 1 at both G (:func:`with_headroom`). Per family with
    headroom, (a) the difference of mean gains d = gain(G=4) − gain(G=16) with the binomial 95 % half-width
    h = 1.96 · sqrt(2 p̄(1 − p̄)/n) · sqrt(1/n₄ + 1/n₁₆), p̄ the family's mean of before and after accuracy over both
    G (each run's gain is a difference of two accuracies on n problems); (a) holds when max |d| + h ≤ ``margin``
    (rule ``equivalence``). (b) Spearman ρ of the mean gain against the near-to-far index, with a one-sided
    permutation p-value (``near_far``: ρ < 0 and p < ``alpha``). (c) the reasoning-distilled model transferring best
    is untestable without one: not met. PASS: (a), (b), (c); PARTIAL: two of them; otherwise FAIL. INCONCLUSIVE
    (claims.yml ``inconclusive_if``) when fewer than ``min_families`` families have headroom (``families``) or a CI
    half-width exceeds ``margin`` (``halfwidth``: equivalence could not be shown). Returns the check and the
    per-family numbers ``{"headroom", "zero", "diff", "half", "bound", "rho", "p"}``.
    """
    before = {f: min(tables[G][f]["before"] for G in (4, 16)) for f in families}
    top = {f: max(tables[G][f]["before"] for G in (4, 16)) for f in families}
    headroom = [f for f in with_headroom(before) if top[f] < 1.0]
    zero = [f for f in families if top[f] == 0.0]
    gain = {G: np.array([tables[G][f]["delta"] for f in headroom]) for G in (4, 16)}
    p_bar = np.array([np.mean([(tables[G][f]["before"] + tables[G][f]["after"]) / 2 for G in (4, 16)])
                      for f in headroom])
    se_one = np.sqrt(2 * p_bar * (1 - p_bar) / n_problems)
    half = 1.96 * se_one * math.sqrt(1 / n_runs[4] + 1 / n_runs[16])
    diff = gain[4] - gain[16]
    bound = np.abs(diff) + half
    mean_gain = (gain[4] + gain[16]) / 2
    if len(headroom) >= 2 and np.ptp(mean_gain) > 0:
        from scipy.stats import spearmanr

        idx = np.arange(len(headroom))
        rho = float(spearmanr(idx, mean_gain).statistic)
        perm = np.array([spearmanr(idx, rng.permutation(mean_gain)).statistic for _ in range(n_permutations)])
        p = float((np.sum(perm <= rho) + 1) / (n_permutations + 1))
    else:
        rho, p = math.nan, math.nan
    numbers = dict(headroom=headroom, zero=zero, diff=diff, half=half, bound=bound, rho=rho, p=p)
    fams = (f"{len(headroom)} of {len(families)} families with headroom ({', '.join(headroom) or 'none'}); "
            f"{len(zero)} score 0 before training ({', '.join(zero) or 'none'})")
    per = "; ".join(f"{f}: gain G4 - G16 {d:+.3f} ± {h:.3f}" for f, d, h in zip(headroom, diff, half))
    bn = f"(b) Spearman {rho:.3f}, one-sided p = {p:.3f}; (c) no distilled model here"
    if len(headroom) < v14["min_families"]:
        return Check("INCONCLUSIVE", f"{fams}: fewer than {v14['min_families']} cannot show transfer; {per}",
                     [], len(headroom), "families with headroom (before strictly between 0 and 1)", "families"), numbers
    widest = int(np.argmax(half))
    if half[widest] > v14["margin"]:
        return Check("INCONCLUSIVE", (
            f"(a)'s 95% CI half-width {half[widest]:.3f} on {headroom[widest]} exceeds the margin {v14['margin']}: "
            f"equivalence could not be shown; {fams}; {per}; {bn}"),
            [], float(half[widest]), "largest 95% CI half-width of gain(G=4) - gain(G=16)", "halfwidth"), numbers
    a_ok = bool(bound.max() <= v14["margin"])
    b_ok = bool(rho < 0 and p < v14["alpha"])
    n_ok = int(a_ok) + int(b_ok)
    verdict = "PASS" if n_ok == 3 else "PARTIAL" if n_ok == 2 else "FAIL"
    reason = (f"(a) G-equivalence {'met' if a_ok else 'not met'} (largest |d| + half-width {bound.max():.3f}, margin "
              f"{v14['margin']}); {bn}; {fams}; {per}")
    if not a_ok:
        return Check(verdict, reason, headroom, float(bound.max()),
                     "(a) largest |gain(G=4) - gain(G=16)| + 95% half-width", "equivalence"), numbers
    return Check(verdict, reason, headroom, p, "(b) one-sided permutation p of Spearman rho(distance, gain)",
                 "near_far"), numbers


def c5_equivalence(rows: list[dict], models: list[str], margin: float, *, verbose: bool = True) -> dict:
    """P1-C5's Δ = mean(plateau G=4 − plateau G=16) / mean rise over ``models``, its 95 % t half-width (seed spread
    pooled over the model × G cells), the 95 % CI ``ci`` = Δ ± half-width, the degrees of freedom and the verdict
    (PASS: CI inside ±``margin``; FAIL: CI entirely outside; else INCONCLUSIVE); the plateau is the late mean reward."""
    from scipy.stats import t as student_t

    diffs, rises, resid = [], [], []
    for m in models:
        cell = {G: np.array([w["late"] for w in rows if w["model"] == m and w["G"] == G]) for G in (4, 16)}
        if not all(len(cell[G]) for G in (4, 16)):
            raise ValueError(f"P1-C5 needs runs at G=4 and G=16 for model {m!r}")
        diffs.append(cell[4].mean() - cell[16].mean())
        rises.append(np.mean([w["late"] - w["early"] for w in rows if w["model"] == m]))
        resid += [x - cell[G].mean() for G in (4, 16) for x in cell[G]]
        if verbose:
            print(f"{m}: late reward G=4 {np.round(cell[4], 3)}, G=16 {np.round(cell[16], 3)}, rise {rises[-1]:.3f}")
    n_seeds = len(resid) // (2 * len(models))
    dof = len(resid) - 2 * len(models)
    pooled_sd = math.sqrt(sum(x ** 2 for x in resid) / dof) if dof > 0 else math.nan  # seed-to-seed sd of a plateau
    se_diff = pooled_sd * math.sqrt(2 / n_seeds) / math.sqrt(len(models))             # of the model-averaged difference
    delta = float(np.mean(diffs) / np.mean(rises))                                    # relative to the mean rise
    half = float(student_t.ppf(0.975, dof) * se_diff / np.mean(rises)) if dof > 0 else math.nan
    if verbose:
        print(f"Delta = mean(plateau G4 - plateau G16) / mean rise = {np.mean(diffs):+.3f} / {np.mean(rises):.3f} = "
              f"{delta:+.3f}, 95% CI ± {half:.3f} (t, {dof} dof)")
    if not np.isfinite(half):
        verdict = "INCONCLUSIVE"
    elif abs(delta) + half <= margin:
        verdict = "PASS"
    elif abs(delta) - half > margin:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
    return dict(delta=delta, half=half, ci=(delta - half, delta + half), dof=dof, verdict=verdict,
                mean_diff=float(np.mean(diffs)), mean_rise=float(np.mean(rises)))
