"""Group size or compute? The attribution of P1-C5's SmolLM2 plateau shift by a third arm of runs.

The panel grid trains G = 4 and G = 16 at 4 prompts per step, so G = 16 also draws 4× the completions per step
(64 against 16). The third arm, G = 4 at 16 prompts per step (``data/configs/grpo_smollm_panel_compute.yml``), draws
64 completions per step as G = 16 does. With the rule of ``book/robustness.yml`` (``attribution: P1-C5``, written
before any run of that arm was read), in units of the page's mean rise:

* ``d_G = (plateau C − plateau B) / rise``: the group size at equal completions per step (C: G = 4, B: G = 16);
* ``d_N = (plateau C − plateau A) / rise``: 4× the prompts per step at equal G (A: G = 4 at 4 prompts);

each with its Welch 95 % interval. "group size" when only d_G's interval lies entirely outside ±margin, "compute"
when only d_N's does, "both" when both do, else "undecided"; fewer than two complete runs in an arm is "undecided"
with the point values. It never sets a verdict: the arms are new runs, not another analysis of the page's runs.
"""
from __future__ import annotations

import math

import numpy as np

from .robustness import welch_t

ARMS = ("A", "B", "C")
"""A: G = 4 at 4 prompts per step; B: G = 16 at 4 prompts; C: G = 4 at 16 prompts (64 completions per step, as B)."""


def _outside(lo: float, hi: float, margin: float) -> bool:
    return lo > margin or hi < -margin


def attribute_shift(arms: dict[str, list[dict]], margin: float, runs_planned: int = 3) -> dict:
    """The attribution of ``book/robustness.yml`` on the panel rows of each arm (``arms["A"|"B"|"C"]``: rows with
    ``late`` (the page's plateau) and ``early`` (its start), as :func:`rlvr_dynamics.verdicts.grpo_rows.panel_row`
    gives them). Returns d_G and d_N (their CIs None when an arm has fewer than 2 runs), the rise, the run counts
    and ``answer`` ("group size", "compute", "both" or "undecided ...") with ``text``, the numbers behind it."""
    missing = [k for k in ARMS if k not in arms]
    if missing:
        raise ValueError(f"arms must hold the rows of arms {ARMS}, missing {missing}")
    if not (isinstance(margin, (int, float)) and 0 < margin < 1):
        raise ValueError(f"margin must be a number in (0, 1), got {margin!r}")
    plateau = {k: np.array([w["late"] for w in arms[k]], float) for k in ARMS}
    counts = {k: int(plateau[k].size) for k in ARMS}
    page_rows = list(arms["A"]) + list(arms["B"])
    if counts["A"] == 0 or counts["B"] == 0:
        raise ValueError("arms A and B (the page's G = 4 and G = 16 cells) need at least one run each")
    rise = float(np.mean([w["late"] - w["early"] for w in page_rows]))
    if not (math.isfinite(rise) and rise > 0):
        raise ValueError(f"the page's mean rise must be positive to scale the shifts, got {rise!r}")
    out = dict(rise=rise, counts=counts, margin=float(margin),
               plateau={k: (float(plateau[k].mean()) if plateau[k].size else None) for k in ARMS})
    if counts["C"] == 0:
        out.update(d_G=None, d_N=None, ci_G=None, ci_N=None, answer=f"undecided (0 of {runs_planned} runs in arm C)")
        out["text"] = "no run of arm C (G = 4 at 16 prompts per step) is complete yet."
        return out
    d_G = float((plateau["C"].mean() - plateau["B"].mean()) / rise)
    d_N = float((plateau["C"].mean() - plateau["A"].mean()) / rise)
    out.update(d_G=d_G, d_N=d_N, ci_G=None, ci_N=None)
    if min(counts.values()) < 2:
        out["answer"] = f"undecided ({counts['C']} of {runs_planned} runs in arm C)"
        out["text"] = (f"d_G = {d_G:+.3f}, d_N = {d_N:+.3f} of the rise {rise:.3f} (point values; a Welch interval "
                       f"needs 2 runs per arm).")
        return out
    (_, hg, dof_g), (_, hn, dof_n) = welch_t(plateau["C"], plateau["B"]), welch_t(plateau["C"], plateau["A"])
    ci_G, ci_N = (d_G - hg / rise, d_G + hg / rise), (d_N - hn / rise, d_N + hn / rise)
    g_out, n_out = _outside(*ci_G, margin), _outside(*ci_N, margin)
    answer = "both" if g_out and n_out else "group size" if g_out else "compute" if n_out else "undecided"
    out.update(ci_G=ci_G, ci_N=ci_N, dof_G=dof_g, dof_N=dof_n, answer=answer)
    out["text"] = (f"d_G = {d_G:+.3f} [{ci_G[0]:+.3f}, {ci_G[1]:+.3f}] ({dof_g:.1f} dof), d_N = {d_N:+.3f} "
                   f"[{ci_N[0]:+.3f}, {ci_N[1]:+.3f}] ({dof_n:.1f} dof) of the rise {rise:.3f}, margin ±{margin:g} "
                   f"(runs A/B/C {counts['A']}/{counts['B']}/{counts['C']}).")
    out["meaning"] = _meaning(answer, ci_G, margin)
    return out


def _meaning(answer: str, ci_G: tuple[float, float], margin: float) -> str:
    """One sentence of what the answer says about P1-C5, from the answer and d_G's interval."""
    g_inside = -margin <= ci_G[0] and ci_G[1] <= margin
    g_note = ("and at equal completions the group size moves it by less than the margin (d_G's interval inside "
              f"±{margin:g}): P1-C5's invariance holds at equal compute" if g_inside else
              f"while d_G's interval [{ci_G[0]:+.3f}, {ci_G[1]:+.3f}] neither excludes a group-size effect nor lies "
              f"inside ±{margin:g}: at equal compute P1-C5's invariance is neither shown nor refuted")
    if answer == "compute":
        return ("The page's G = 4 / G = 16 shift is the completions per step's: G = 4 at 64 completions per step "
                f"reaches the plateau of G = 16, {g_note}. P1-C5's verdict stands as measured at equal prompts.")
    if answer == "group size":
        return ("The page's shift is the group size's: at 64 completions per step G = 16 still plateaus apart from "
                "G = 4, and four times the prompts at G = 4 does not move the plateau beyond the margin.")
    if answer == "both":
        return ("Both move the plateau: at equal completions per step G = 16 still differs from G = 4, and four "
                "times the prompts at G = 4 moves it too.")
    return "Neither interval lies outside the margin alone: the runs do not tell group size from compute."


def smollm_attribution(late_steps: int = 50) -> dict:
    """:func:`attribute_shift` on the committed runs, as the grpo_smollm page computes it at its defaults: arms A and
    B the panel grid's G = 4 and G = 16 runs, arm C the equal-compute grid's (``smollm-panel-compute``), plateaus over
    the last ``late_steps`` steps, P1-C5's margin from ``book/claims.yml``, the runs planned from the experiment
    file."""
    from ..grpo.config import load_experiment
    from ..paths import DATA_DIR
    from .ledger import criterion
    from .robustness import smollm_panel_rows

    panel = smollm_panel_rows(late_steps)
    arms = {"A": [w for w in panel if w["G"] == 4], "B": [w for w in panel if w["G"] == 16],
            "C": smollm_panel_rows(late_steps, "smollm-panel-compute", "grpo_smollm_panel_compute.yml")}
    planned = len(load_experiment(DATA_DIR / "configs" / "grpo_smollm_panel_compute.yml"))
    return attribute_shift(arms, margin=criterion("P1-C5")["criterion"]["values"]["margin"], runs_planned=planned)
