"""Robustness of the audited verdicts (issue 39): each claim's verdict under the alternative analysis choices listed
in ``book/robustness.yml`` (each says whether its result was known when it was listed), by the same verdict functions as the pages.

* :func:`pooled_t`, :func:`welch_t`, :func:`permutation_p`: two-sample statistics (tested against scipy).
* :func:`equivalence_verdict`: P1-C5's rule on a CI (PASS inside ±margin, FAIL entirely outside, else INCONCLUSIVE).
* :func:`asymptote`: a three-phase fit's R∞ and whether it is identified (P1-C5's ``asymptote`` alternative).
* :func:`c5_alternatives`, :func:`c9_alternatives`, :func:`c12_alternatives`, :func:`c14_alternatives`: per claim a
  list of ``dict(alternative, verdict, number, note)``, the page's own analysis first (``alternative`` = "page").
* :func:`check_alternative`: a verdict function's :class:`~.check.Check` as one alternative of a notebook's evidence
  row (``Claim(alternatives=[...])``), for alternatives that rerun the page's verdict function with one setting changed.
* :func:`notebook_alternatives`: the table of a claim whose notebook computes its alternatives itself (P1-C8's exact
  row, P2-C15), read from the evidence row's ``alternatives`` in the stored claims JSON.
* :func:`label`: "robust" or "fragile: <verdict> under <alternative>".
* :func:`compute` (from the committed runs) and ``python -m rlvr_dynamics.verdicts.robustness --write`` write
  ``book/robustness_results.json``; :func:`load_results` reads it.
"""
from __future__ import annotations

import itertools
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[3] / "book" / "robustness_results.json"
ALTERNATIVES = RESULTS.with_name("robustness.yml")


def pooled_t(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """Difference of means mean(a) − mean(b), its pooled-variance t half-width at ``level`` and the dof."""
    from scipy.stats import t as student_t
    a, b = np.asarray(a, float), np.asarray(b, float)
    dof = a.size + b.size - 2
    sp2 = (((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()) / dof
    se = math.sqrt(sp2 * (1 / a.size + 1 / b.size))
    return float(a.mean() - b.mean()), float(student_t.ppf(0.5 + level / 2, dof) * se), float(dof)


def welch_t(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """As :func:`pooled_t` with Welch's unequal-variance SE and Welch–Satterthwaite dof."""
    from scipy.stats import t as student_t
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    return float(a.mean() - b.mean()), float(student_t.ppf(0.5 + level / 2, dof) * se), float(dof)


def permutation_p(a, b, shift: float = 0.0, alternative: str = "two-sided") -> float:
    """Exact permutation p-value of H0 mean(a) − mean(b) = ``shift`` over every split of the pooled a, b + shift
    into groups of the sizes of a and b (``alternative``: "two-sided", "less" or "greater")."""
    a, b = np.asarray(a, float), np.asarray(b, float) + shift
    pool = np.r_[a, b]
    obs = a.mean() - b.mean()
    stats = []
    for idx in itertools.combinations(range(pool.size), a.size):
        mask = np.zeros(pool.size, bool)
        mask[list(idx)] = True
        stats.append(pool[mask].mean() - pool[~mask].mean())
    stats = np.array(stats)
    tol = 1e-12 * max(1.0, abs(obs))
    if alternative == "less":
        return float(np.mean(stats <= obs + tol))
    if alternative == "greater":
        return float(np.mean(stats >= obs - tol))
    return float(np.mean(np.abs(stats) >= abs(obs) - tol))


def equivalence_verdict(delta: float, half: float, margin: float) -> str:
    """P1-C5's rule (as :func:`rlvr_dynamics.verdicts.grpo_p1.c5_equivalence`) on the CI delta ± half."""
    if not np.isfinite(half):
        return "INCONCLUSIVE"
    return "PASS" if abs(delta) + half <= margin else "FAIL" if abs(delta) - half > margin else "INCONCLUSIVE"


def _cells(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, float]:
    a = np.array([w["late"] for w in rows if w["G"] == 4])
    b = np.array([w["late"] for w in rows if w["G"] == 16])
    return a, b, float(np.mean([w["late"] - w["early"] for w in rows]))


def _t_alternative(name: str, rows: list[dict], margin: float, test) -> dict:
    a, b, rise = _cells(rows)
    diff, half, dof = test(a, b)
    delta, h = diff / rise, half / rise
    return dict(alternative=name, verdict=equivalence_verdict(delta, h, margin), number=delta,
                ci=[delta - h, delta + h], note=f"Delta {delta:+.3f} [{delta - h:+.3f}, {delta + h:+.3f}], {dof:.1f} dof")


def asymptote(fit) -> tuple[float, float, str | None]:
    """(R∞, R0, why not identified or None) of a three-phase fit (:class:`rlvr_dynamics.p1.laws.FitResult`), by the
    rule of P1-C5's ``asymptote`` alternative in ``book/robustness.yml``: not identified when the fit's note puts
    R∞ or the log time scale at a bound, or R∞ is non-finite or outside [0, 1]."""
    r_inf, r0 = float(fit.params.get("r_inf", math.nan)), float(fit.params.get("r0", math.nan))
    hit = re.search(r"parameter\(s\) at a bound: ([^(]*)\(", fit.message or "")
    at = [p for p in ("r_inf", "log time scale") if hit and p in hit.group(1)]
    if not math.isfinite(r_inf) or not 0.0 <= r_inf <= 1.0:
        return r_inf, r0, f"R_inf {r_inf:.3g} outside [0, 1]"
    return r_inf, r0, (" and ".join(at) + " at a bound") if at else None


def _asymptote_alternative(rows: list[dict], margin: float) -> dict:
    """P1-C5 with each run's plateau its fitted three-phase R∞ (``row["fit"]["three_phase"]``): Δ = (mean R∞ at G=4 −
    mean R∞ at G=16) / mean (R∞ − R0) over the runs, pooled-t 95% CI, :func:`equivalence_verdict`; INCONCLUSIVE when
    any run's asymptote is not identified (:func:`asymptote`), its Δ still printed."""
    fits = [(w, *asymptote(w["fit"]["three_phase"])) for w in rows]
    a = np.array([ri for w, ri, _, _ in fits if w["G"] == 4])
    b = np.array([ri for w, ri, _, _ in fits if w["G"] == 16])
    rise = float(np.mean([ri - r0 for _, ri, r0, _ in fits]))
    diff, half, dof = pooled_t(a, b)
    delta, h = diff / rise, half / rise
    bad = [f"G={w['G']} s{w['seed']} ({why})" for w, _, _, why in fits if why]
    per_run = ", ".join(f"G={w['G']} s{w['seed']} {ri:.3f}" for w, ri, _, _ in fits)
    verdict = "INCONCLUSIVE" if bad else equivalence_verdict(delta, h, margin)
    return dict(alternative="asymptote", verdict=verdict, number=delta, ci=[delta - h, delta + h],
                note=(f"Delta {delta:+.3f} [{delta - h:+.3f}, {delta + h:+.3f}], {dof:.1f} dof, mean fitted rise "
                      f"{rise:.3f}; R_inf {per_run}"
                      + (f"; not identified: {', '.join(bad)} (Delta not deciding)" if bad else "")))


def c5_alternatives(rows: list[dict], margin: float, late_rows: list[dict] | None = None) -> list[dict]:
    """P1-C5 on one model's rows (fields G, late, early): the page's pooled t, Welch, the exact permutation test, the
    pooled t with each run left out, the pooled t on ``late_rows`` (the same runs, a later plateau window) and, when
    the rows carry their fits (``fit``), the pooled t on each run's fitted asymptote (:func:`_asymptote_alternative`)."""
    out = [_t_alternative("page", rows, margin, pooled_t), _t_alternative("welch", rows, margin, welch_t)]
    a, b, rise = _cells(rows)
    delta = (a.mean() - b.mean()) / rise
    edge = -margin if delta < 0 else margin          # the nearer edge of the equivalence margin
    # equivalence (TOST) and its exclusion: the one-sided exact tests of Delta against the nearer margin edge
    p_in = permutation_p(a, b, shift=edge * rise, alternative="greater" if delta < 0 else "less")
    p_out = permutation_p(a, b, shift=edge * rise, alternative="less" if delta < 0 else "greater")
    p_zero = permutation_p(a, b)
    verdict = "PASS" if p_in < 0.05 else "FAIL" if p_out < 0.025 else "INCONCLUSIVE"
    smallest = 1 / math.comb(a.size + b.size, a.size)
    out.append(dict(alternative="permutation", verdict=verdict, number=p_out, ci=None,
                    note=(f"one-sided exact p of Delta beyond {edge:+.2f}: {p_out:.3f} (FAIL needs < 0.025, the "
                          f"one-sided half of the 95% CI); smallest attainable p {smallest:.3f} with "
                          f"{a.size} + {b.size} runs; p of Delta = 0: {p_zero:.3f}")))
    loo = []
    for k in range(len(rows)):
        rest = rows[:k] + rows[k + 1:]
        if min(sum(w["G"] == G for w in rest) for G in (4, 16)) >= 2:
            loo.append((rows[k], _t_alternative("loo", rest, margin, pooled_t)))
    flips = [(w, r) for w, r in loo if r["verdict"] != out[0]["verdict"]]
    worst = flips[0][1] if flips else max((r for _, r in loo), key=lambda r: abs(r["number"]), default=out[0])
    out.append(dict(alternative="leave-one-run-out", verdict=worst["verdict"], number=worst["number"], ci=worst["ci"],
                    note=f"{len(flips)} of {len(loo)} leave-one-out verdicts differ from the page's"
                         + (" (left out: " + ", ".join(f"G={w['G']} s{w['seed']} -> {r['verdict']}"
                                                     for w, r in flips) + ")" if flips else "")))
    if late_rows is not None:
        out.append(_t_alternative("late-window-25", late_rows, margin, pooled_t))
    if all("fit" in w for w in rows):
        out.append(_asymptote_alternative(rows, margin))
    return out


def _ceiling_rows(rows: list[dict], which: str) -> list[dict]:
    out = []
    for w in rows:
        var = float(np.var(np.asarray(w["y"], float), ddof=1))
        sigma = w["sigma_binomial"] if which == "binomial" else w["sigma_difference"]
        out.append({**w, "ceiling": 1.0 - sigma ** 2 / var})
    return out


def c9_alternatives(rows: list[dict], v9: dict) -> list[dict]:
    """P1-C9 on panel rows with the page's (conservative) ceiling, each single ceiling formula, and the page's
    ceiling with no margin (``no-ceiling-margin``: every run whose ceiling permits R² ≥ ``r2_min`` judged)."""
    from .grpo_p1 import c9_verdict

    out = []
    for name, rs, v in (("page", rows, v9), ("ceiling-binomial", _ceiling_rows(rows, "binomial"), v9),
                        ("ceiling-step", _ceiling_rows(rows, "difference"), v9),
                        ("no-ceiling-margin", rows, {**v9, "ceiling_margin": 0.0})):
        c = c9_verdict(rs, v)
        floor = v["r2_min"] + v["ceiling_margin"]
        out.append(dict(alternative=name, verdict=c.verdict, number=float(c.measured), ci=None,
                        note=f"{sum(w['ceiling'] >= floor for w in rs)} of {len(rs)} runs reach the ceiling floor "
                             f"{floor:.2f}; {c.unit} {float(c.measured):.3f}"))
    return out


def c12_alternatives(rows: list[dict], v12: dict) -> list[dict]:
    """P1-C12 on panel rows with the page's scope (detectable runs) and with every run in scope."""
    from .grpo_p1 import c12_verdict

    out = []
    for name, rs in (("page", [dict(w) for w in rows]), ("all-runs-in-scope", [{**w, "detectable": True} for w in rows])):
        c = c12_verdict(rs, v12)
        worst = max((w for w in rs if w["detectable"]), key=lambda w: w.get("envelope_ratio", -math.inf))
        out.append(dict(alternative=name, verdict=c.verdict, number=float(c.measured), ci=None,
                        note=f"{sum(w['detectable'] for w in rs)} runs in scope; {c.unit} {float(c.measured):.2f} "
                             f"(G={worst['G']} s{worst['seed']}, p {worst.get('envelope_p', math.nan):.3g})"))
    return out


def c14_alternatives(groups, v14: dict, *, blocks: dict[str, int], **kwargs) -> list[dict]:
    """P2-C14 with the moving-block bootstrap of ρ at each block length (``blocks``: alternative → steps); the
    other inputs of :func:`rlvr_dynamics.verdicts.grpo_p2.c14_verdict` (b, bias_ok, m_se, step_condition) as
    keyword arguments."""
    from ..runs.analysis import block_bootstrap_spearman
    from .grpo_p2 import c14_verdict

    out = []
    for name, block in blocks.items():
        rho = block_bootstrap_spearman(groups, block=block)
        c = c14_verdict(rho, v14=v14, **kwargs)
        out.append(dict(alternative=name, verdict=c.verdict, number=float(rho[0]), ci=[float(rho[1]), float(rho[2])],
                        note=f"block {block} steps: rho {rho[0]:.3f} [{rho[1]:.3f}, {rho[2]:.3f}]"))
    return out


def label(table: list[dict]) -> str:
    """"robust" when every computed alternative gives the page's verdict, else "fragile: <verdict> under <alt>"
    (the first that differs)."""
    page = table[0]["verdict"]
    for r in table[1:]:
        if r["verdict"] is not None and r["verdict"] != page:
            return f"fragile: {r['verdict']} under {r['alternative']}"
    return "robust"


def _criterion_values(claim_id: str) -> dict:
    from .ledger import criterion
    return criterion(claim_id)["criterion"]["values"]


def smollm_panel_rows(late_steps: int, prefix: str = "smollm-panel", config: str = "grpo_smollm_panel.yml") -> list[dict]:
    """grpo_smollm's panel rows of one grid (the notebook's defaults: prefix smollm-panel, config
    grpo_smollm_panel.yml; the equal-compute arm: smollm-panel-compute, grpo_smollm_panel_compute.yml), complete runs
    of the experiment file only, by group size and seed."""
    from .. import runs as R
    from ..grpo.config import load_experiment
    from ..grpo.panel import panel_curve
    from ..paths import DATA_DIR
    from .grpo_rows import panel_row

    expected = {c.run_id() for c in load_experiment(DATA_DIR / "configs" / config)}
    runs = sorted((r for r in R.load_committed_runs(prefix) if r.id in expected and r.complete),
                  key=lambda r: (r.config.num_generations, r.config.seed))
    return [panel_row(r, panel_curve(r.path), late_steps=late_steps,
                      min_rise_frac=_criterion_values("P1-C12")["min_rise_frac"]) for r in runs]


def _p2_fresh_inputs(block: int) -> tuple[list, dict]:
    """grpo_p2_alignment's P2-C14 inputs (prefix p2-fresh): the (M-hat, batch accuracy) groups and the other
    keyword arguments of c14_verdict, (b) by the bootstrap of ``block`` steps."""
    from .. import runs as R
    from ..p2 import alignment_estimators as ae, gap
    from .grpo_p2 import bound_agreement, cumulative_alignment_se, step_condition_check

    v14 = _criterion_values("P2-C14")
    groups, judged, conds, m_se = [], [], [], []
    for r in R.load_committed_runs("p2-fresh"):
        acc, dmu = r.series("reward"), r.series("gap_alignment_fresh")
        carried = np.maximum.accumulate(np.where(np.isfinite(dmu), np.arange(len(dmu)), 0))
        M = gap.cumulative_alignment(r.series("step_size"), dmu[carried])[:-1]
        groups.append((M, acc))
        cond = step_condition_check(dmu, r.series("step_size"), r.series("update_norm"),
                                    c_factor=v14["step_condition_factor"], level=v14["step_condition_level"])
        conds.append(cond)
        if not cond["violated"]:
            n = r.config.num_prompts_per_step * r.config.num_generations
            se = np.sqrt(np.clip(acc * (1 - acc), 1e-12, None) / n)
            judged.append((acc, gap.logistic_lower_bound(np.full(len(M), acc[0]), M), se))
        m_se.append(cumulative_alignment_se(dmu, r.series("step_size"), r.config.gap_alignment_every))
    check = ae.estimator_bias_check(seed=0)
    return groups, dict(b=bound_agreement(judged, block=block) if judged else None, m_se=m_se, step_condition=conds,
                        bias_ok=bool(check.fresh_unbiased and check.in_sample_biased_up))


def check_alternative(name: str, check) -> dict:
    """One alternative of a notebook's evidence row, ``dict(alternative, verdict, number, ci, note)``, from the
    :class:`~.check.Check` that the page's own verdict function returns under the alternative's setting (e.g.
    ``c9_verdict(rows, {**v9, "ceiling_margin": 0.0})``): the Check's verdict, deciding statistic, CI and reason."""
    measured = None if check.measured is None else float(check.measured)
    return dict(alternative=name, verdict=check.verdict, number=measured,
                ci=None if check.ci is None else [float(x) for x in check.ci],
                note=(f"{check.unit} {measured:.4g}: " if measured is not None and check.unit else "") + check.reason)


def notebook_alternatives(claim_id: str, spec: dict, claims_dir: Path | None = None) -> list[dict]:
    """The robustness table of a claim whose notebook computes its alternatives itself (``spec["notebook"]`` in
    ``book/robustness.yml``): the page row (the notebook's evidence row of ``claim_id`` in ``spec["setting"]`` that
    carries ``alternatives``) first, then each listed alternative as the notebook recorded it (by the same verdict
    function as the row's own verdict), read from ``<notebook>.claims.json`` in ``claims_dir`` (the stored
    notebooks' claims by default). Raises ``ValueError`` when the row or a listed alternative is missing."""
    from ..paths import STORED_CLAIMS_DIR

    path = Path(claims_dir or STORED_CLAIMS_DIR) / f"{spec['notebook']}.claims.json"
    rows = [r for r in json.loads(path.read_text())["claims"]
            if r["id"] == claim_id and r.get("setting") == spec["setting"] and r.get("alternatives")]
    if len(rows) != 1:
        raise ValueError(f"{path}: expected one {spec['setting']} row of {claim_id} with alternatives, got {len(rows)}")
    row = rows[0]
    by_id = {a["alternative"]: a for a in row["alternatives"]}
    missing = [a["id"] for a in spec["alternatives"] if a["id"] not in by_id]
    if missing:
        raise ValueError(f"{path}: {claim_id}'s row does not record the alternatives {missing}")
    page = dict(alternative="page", verdict=row["verdict"], number=row["measured"], ci=row["ci"],
                note=row["unit"])
    return [page] + [dict(alternative=a["id"], verdict=by_id[a["id"]]["verdict"], number=by_id[a["id"]]["number"],
                          ci=by_id[a["id"]]["ci"], note=by_id[a["id"]]["note"]) for a in spec["alternatives"]]


def compute() -> dict:
    """Every claim's robustness table and label from the committed runs (about a minute)."""
    import yaml

    listed = yaml.safe_load(ALTERNATIVES.read_text())["claims"]
    rows, late = smollm_panel_rows(50), smollm_panel_rows(25)
    groups, kw = _p2_fresh_inputs(25)
    tables = {
        "P1-C5": c5_alternatives(rows, _criterion_values("P1-C5")["margin"], late_rows=late),
        "P1-C9": c9_alternatives(rows, _criterion_values("P1-C9")),
        "P1-C12": c12_alternatives(rows, _criterion_values("P1-C12")),
        "P2-C14": c14_alternatives(groups, _criterion_values("P2-C14"),
                                   blocks={"page": 25, "block-10": 10, "block-50": 50}, **kw),
    }
    for key, spec in listed.items():             # every alternative a notebook computes itself
        if "notebook" in spec:
            tables[key] = notebook_alternatives(key.split("/")[0], spec)
    out = {}
    for cid, table in sorted(tables.items(), key=lambda kv: list(listed).index(kv[0])):
        for r in table:
            r["number"] = None if r["number"] is None else round(float(r["number"]), 4)
            r["ci"] = None if r["ci"] is None else [round(float(x), 4) for x in r["ci"]]
        computed = any(r["verdict"] is not None for r in table[1:])
        out[cid] = dict(setting=listed[cid]["setting"], row=listed[cid]["row"], table=table,
                        label=label(table) if computed else "not computed",
                        **({"notebook": listed[cid]["notebook"]} if "notebook" in listed[cid] else {}))
    return out


def load_results() -> dict:
    """``book/robustness_results.json``: claim id → dict(setting, row, table, label); {} when absent."""
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {}


if __name__ == "__main__":
    result = compute()
    text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    if "--write" in sys.argv:
        RESULTS.write_text(text)
    print(text)
