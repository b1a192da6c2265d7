"""What a group size costs and buys on committed runs: the practitioner's view of G (the book's practice page).

Per G, over the complete committed runs of one grid (its name: run ids ``<name>-<hash>``, :func:`.committed.grid_runs`): the share of prompt groups whose completions
all got the same reward (TRL's ``frac_reward_zero_std``: a group that gives no gradient under GRPO's group-relative
advantage), the held-out accuracy before and after training (``eval.json``), the late panel reward where the run
has a panel (the mean of its points at steps ≥ max_steps − ``late_steps``, P1-C5's plateau as
``grpo_smollm`` computes it from :func:`rlvr_dynamics.grpo.panel.panel_curve`; the module reads ``metrics.csv``
itself, as ``runs`` never imports the trainer's modules), the completions generated per
optimizer step and the measured wall seconds per step (``config.json``; machines can differ between runs).
"""
from __future__ import annotations

import numpy as np

from .committed import grid_runs

LATE_STEPS = 50
"""The late panel points are those at steps ≥ max_steps − LATE_STEPS (``grpo_smollm``'s ``late_steps``, P1-C5)."""


def finite_mean(v) -> float:
    """Mean of the finite values of ``v``; NaN when there is none."""
    v = np.asarray(v, float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def group_size_summary(prefix: str, *, model: str | None = None, late_steps: int = LATE_STEPS,
                       runs_dir=None) -> dict[int, dict]:
    """``{G: {...}}`` over the complete runs of the grid ``prefix`` (ids ``<prefix>-<hash>``) and, if given, whose
    model is ``model``
    (ValueError naming the prefix if there is none, or if they train more than one model and ``model`` is not given):
    ``runs`` (ids), ``seeds``, ``zero_std_share`` (per run, the mean over its logged steps), ``heldout_before`` /
    ``heldout_after`` (per run), ``late_panel`` (per run; NaN without a panel),
    ``seconds_per_step`` (per run, as recorded, panel evaluation included where there is one),
    ``completions_per_step`` (prompts per step × G), ``model`` and ``config`` (the first run's RunConfig)."""
    runs = [r for r in grid_runs(prefix, runs_dir) if model is None or r.config.model == model]
    if not runs:
        raise ValueError(f"group_size_summary: no complete committed run of the grid {prefix!r}"
                         + (f" and trains {model!r}" if model else ""))
    models = sorted({r.config.model for r in runs})
    if len(models) > 1:
        raise ValueError(f"group_size_summary: the runs starting with {prefix!r} train {models}; pass model=")
    out: dict[int, dict] = {}
    for run in runs:
        cfg = run.config
        row = out.setdefault(cfg.num_generations, {
            "runs": [], "seeds": [], "zero_std_share": [], "heldout_before": [], "heldout_after": [],
            "late_panel": [], "seconds_per_step": [], "model": cfg.model, "config": cfg,
            "completions_per_step": cfg.num_prompts_per_step * cfg.num_generations})
        row["runs"].append(run.id)
        row["seeds"].append(cfg.seed)
        zs = run.log.series.get("frac_reward_zero_std")
        row["zero_std_share"].append(finite_mean(zs) if zs is not None else float("nan"))
        ev = run.eval or {}
        row["heldout_before"].append(float(ev.get("before", {}).get("heldout", float("nan"))))
        row["heldout_after"].append(float(ev.get("after", {}).get("heldout", float("nan"))))
        if "panel_reward" in run.log.series:   # the logged points (step 0, in eval.json, is never late)
            late = finite_mean(run.log.series["panel_reward"][run.log.steps >= cfg.max_steps - late_steps])
        else:
            late = float("nan")
        row["late_panel"].append(late)
        row["seconds_per_step"].append(float(run.info.get("seconds_per_step", float("nan"))))
    return dict(sorted(out.items()))
