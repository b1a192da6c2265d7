"""What a group size costs and buys on committed runs: the practitioner's view of G (the book's practice page).

Per G, over the complete committed runs of one grid (a run-id prefix): the share of prompt groups whose completions
all got the same reward (TRL's ``frac_reward_zero_std``: a group that gives no gradient under GRPO's group-relative
advantage), the held-out accuracy before and after training (``eval.json``), the late panel reward where the run
has a panel (the mean of its points at steps ≥ ``late_from``, as in P1-C5's rule), the completions generated per
optimizer step and the measured wall seconds per step (``config.json``; machines can differ between runs).
"""
from __future__ import annotations

import numpy as np

from .committed import load_committed_runs

LATE_FROM = 100
"""First step of the late panel points (P1-C5's plateau: the mean of the panel points at steps ≥ 100)."""


def _mean_finite(v: np.ndarray) -> float:
    v = np.asarray(v, float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def group_size_summary(prefix: str, *, model: str | None = None, late_from: int = LATE_FROM,
                       runs_dir=None) -> dict[int, dict]:
    """``{G: {...}}`` over the complete runs whose id starts with ``prefix`` and, if given, whose model is ``model``
    (ValueError naming the prefix if there is none, or if they train more than one model and ``model`` is not given):
    ``runs`` (ids), ``seeds``, ``zero_std_share`` (per run, the mean over its logged steps), ``heldout_before`` /
    ``heldout_after`` (per run), ``late_panel`` (per run; NaN without panel points at steps ≥ ``late_from``),
    ``seconds_per_step`` (per run, as recorded, panel evaluation included where there is one),
    ``completions_per_step`` (prompts per step × G), ``model`` and ``config`` (the first run's RunConfig)."""
    runs = [r for r in load_committed_runs(prefix, runs_dir) if model is None or r.config.model == model]
    if not runs:
        raise ValueError(f"group_size_summary: no complete committed run starts with {prefix!r}"
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
        row["zero_std_share"].append(_mean_finite(zs) if zs is not None else float("nan"))
        ev = run.eval or {}
        row["heldout_before"].append(float(ev.get("before", {}).get("heldout", float("nan"))))
        row["heldout_after"].append(float(ev.get("after", {}).get("heldout", float("nan"))))
        panel = run.log.series.get("panel_reward")
        late = (_mean_finite(np.where(run.log.steps >= late_from, panel, np.nan)) if panel is not None
                else float("nan"))
        row["late_panel"].append(late)
        row["seconds_per_step"].append(float(run.info.get("seconds_per_step", float("nan"))))
    return dict(sorted(out.items()))
