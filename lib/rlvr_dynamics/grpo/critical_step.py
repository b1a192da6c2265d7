"""The critical learning rate of real GRPO runs, located by bisection (P2 spec §5.3 "empirical critical LR"; issue 10).

``rlvr-dynamics bisect CONFIG.yml`` reads an experiment file (:func:`~rlvr_dynamics.grpo.config.expand`: ``base``,
``grid``, ``runs``) whose every run is a *cell* (its ``learning_rate`` is ignored) plus a ``bisect`` section::

    bisect: {low: 0.3, high: 3.0, rel_tol: 0.02, expand: 3.0, seed_bracket: 1.5}

For each cell it finds the step size η_c at which a run of ``max_steps`` steps collapses
(:func:`~rlvr_dynamics.p2.step_size.is_collapsed`: the sampled held-out success at the last evaluation below half
the warm start's), in two stages:

1. **Bracket.** The first cell of a group (cells equal up to their seeds) starts from ``[low, high]``; the others
   from ``[η_c / seed_bracket, η_c · seed_bracket]`` of the group's first cell. A ``low`` that collapses is divided
   by ``expand``, a ``high`` that does not is multiplied, until the bracket holds the change (at most
   ``max_expand`` times; otherwise the cell's estimate is ``nan`` or ``inf``).
2. **Bisection** of every open bracket to relative width ``rel_tol`` with the project's one bisection,
   :func:`~rlvr_dynamics.p2.step_size.bisect_critical_step_size`.

Every trial is an ordinary run folder (``data/runs/<name>-<hash>``), so an interrupted sweep resumes where it
stopped: finished runs are read, not retrained, and the bisection takes the same path again. The summary (cells,
initial success, every trial, brackets and estimates) is written atomically to ``data/bisections/<name>.json``
after every cell. The warm start's initial success at a cell's length is measured once per (warm start, length):
``initial_samples`` sampled completions of the held-out prompts; so are the starting policy's gradient-gap norms
(:mod:`~rlvr_dynamics.grpo.gap_norm`, ``gap_prompts`` × ``gap_samples``), which P2-C5 says set the threshold.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .._checks import check_in_range, check_int
from .config import RunConfig, expand

SEED_FIELDS = ("seed", "warm_start_seed")
"""Fields that make cells of one group differ only by their randomness."""


@dataclass(frozen=True)
class BisectSettings:
    """The ``bisect`` section of an experiment file."""

    low: float = 0.3
    """Lower end of the first bracket (a step that should not collapse)."""
    high: float = 3.0
    """Upper end of the first bracket (a step that should collapse)."""
    rel_tol: float = 0.02
    """Stop when ``(high − low) / sqrt(low · high)`` is at most this."""
    expand: float = 3.0
    """Factor by which an end that does not bracket the change is moved."""
    max_expand: int = 6
    """Moves per end before giving up on a cell."""
    seed_bracket: float = 1.5
    """Half-width factor of the bracket of a group's later cells around its first cell's estimate."""
    collapse_fraction: float = 0.5
    """Collapse: final sampled success below this fraction of the initial success."""
    initial_samples: int = 4
    """Sampled completions per held-out prompt for the initial success."""
    gap_prompts: int = 64
    """Held-out prompts on which the starting policy's gradient-gap norms are measured (0: not measured)."""
    gap_samples: int = 8
    """Samples per prompt for the gap norms (:func:`~rlvr_dynamics.grpo.gap_norm.measure_gap_norms`)."""

    def __post_init__(self) -> None:
        check_in_range("bisect.low", self.low, 0.0, None, low_inclusive=False)
        check_in_range("bisect.high", self.high, self.low, None, low_inclusive=False)
        check_in_range("bisect.rel_tol", self.rel_tol, 0.0, 1.0, low_inclusive=False)
        check_in_range("bisect.expand", self.expand, 1.0, None, low_inclusive=False)
        check_int("bisect.max_expand", self.max_expand, 0, 50)
        check_in_range("bisect.seed_bracket", self.seed_bracket, 1.0, None, low_inclusive=False)
        check_in_range("bisect.collapse_fraction", self.collapse_fraction, 0.0, 1.0, low_inclusive=False,
                       high_inclusive=False)
        check_int("bisect.initial_samples", self.initial_samples, 1, 64)
        check_int("bisect.gap_prompts", self.gap_prompts, 0, 4096)
        check_int("bisect.gap_samples", self.gap_samples, 2, 1024)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "BisectSettings":
        data = dict(data or {})
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown bisect setting(s) {unknown}; known: {sorted(known)}")
        return cls(**data)


def load_bisection_experiment(path: str | Path) -> tuple[str, list[RunConfig], BisectSettings]:
    """``(name, cells, settings)`` of the experiment file at ``path``; ``name`` is the cells' common ``name``."""
    import yaml

    path = Path(path)
    if not path.exists():
        raise ValueError(f"experiment file {path} does not exist")
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(spec, dict) or "bisect" not in spec:
        raise ValueError(f"{path}: a bisection experiment needs a 'bisect' section (see rlvr_dynamics.grpo."
                         "critical_step)")
    settings = BisectSettings.from_dict(spec.pop("bisect"))
    cells = expand(spec)
    names = {c.name for c in cells}
    if len(names) != 1:
        raise ValueError(f"{path}: every cell must share one name, got {sorted(names)}")
    return names.pop(), cells, settings


def group_key(cfg: RunConfig) -> str:
    """Cells equal up to their seeds (and learning rate) share this key."""
    return cfg.replace(learning_rate=1.0, **{f: 0 for f in SEED_FIELDS}).config_hash()


def final_sampled_success(run_dir: Path) -> float:
    """The sampled held-out success of a finished run's last evaluation (``eval_reward_sampled``, read with
    :func:`~rlvr_dynamics.runs.load_committed_run`)."""
    from ..runs.committed import load_committed_run

    _, values = load_committed_run(run_dir).evaluations("eval_reward_sampled")
    if values.size == 0 or not np.isfinite(values[-1]):
        raise ValueError(f"{run_dir}: no eval_reward_sampled in metrics.csv (the cell needs eval_every <= max_steps)")
    return float(values[-1])


def _starting_policy(cfg: RunConfig):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .runner import resolve_model
    from .tasks import heldout_problems

    model_path, _ = resolve_model(cfg)
    held = heldout_problems(cfg.eval_size, digits=cfg.digits, answer_length=cfg.answer_length, seed=1,
                            answer_copies=cfg.answer_copies)
    return AutoModelForCausalLM.from_pretrained(model_path), AutoTokenizer.from_pretrained(model_path), held


def initial_sampled_success(cfg: RunConfig, samples: int, policy=None) -> float:
    """Sampled success of the cell's starting model on its held-out prompts (``samples`` completions each, seed 0);
    ``policy`` is ``(model, tokenizer, held-out problems)`` if already loaded."""
    from .evaluation import accuracy

    model, tok, held = policy or _starting_policy(cfg)
    return accuracy(model, tok, held, max_new_tokens=cfg.max_completion_length, reward=cfg.eval_reward,
                    prompt_style=cfg.prompt_style, do_sample=True, temperature=cfg.temperature, seed=0,
                    num_samples=samples, batch_size=256)


def starting_gap_norms(cfg: RunConfig, prompts: int, samples: int, policy=None) -> dict[str, float]:
    """:class:`~rlvr_dynamics.grpo.gap_norm.GapNorms` of the cell's starting model on the first ``prompts`` of its
    held-out prompts (``samples`` each, seed 0), as a dict; ``policy`` as in :func:`initial_sampled_success`."""
    from .gap_norm import measure_gap_norms

    model, tok, held = policy or _starting_policy(cfg)
    return asdict(measure_gap_norms(model, tok, held[:prompts], samples=samples,
                                    max_new_tokens=cfg.max_completion_length, reward=cfg.eval_reward,
                                    temperature=cfg.temperature, seed=0, prompt_style=cfg.prompt_style))


class CellBisection:
    """Bracket and bisection of one cell; ``train(cfg) -> final success`` runs (or reads) one trial."""

    def __init__(self, cell: RunConfig, initial: float, settings: BisectSettings,
                 train: Callable[[RunConfig], float]):
        self.cell, self.initial, self.settings, self.train = cell, initial, settings, train
        self.trials: list[dict[str, Any]] = []

    def collapsed(self, lr: float) -> bool:
        """Whether the run at step ``lr`` collapses (each step is trained, and recorded, once)."""
        from ..p2.step_size import is_collapsed

        for t in self.trials:
            if t["learning_rate"] == float(lr):
                return t["collapsed"]
        cfg = self.cell.replace(learning_rate=float(lr))
        final = self.train(cfg)
        hit = bool(is_collapsed(final, self.initial, self.settings.collapse_fraction))
        self.trials.append({"learning_rate": float(lr), "run_id": cfg.run_id(), "final_success": final,
                            "collapsed": hit})
        return hit

    def bracket(self, low: float, high: float) -> tuple[float, float]:
        """Move the ends until ``low`` survives and ``high`` collapses (nan / inf when that fails)."""
        s = self.settings
        for _ in range(s.max_expand + 1):
            if not self.collapsed(low):
                break
            low, high = low / s.expand, low
        else:
            return math.nan, low
        for _ in range(s.max_expand + 1):
            if self.collapsed(high):
                break
            low, high = high, high * s.expand
        else:
            return low, math.inf
        return low, high

    def bisect(self, low: float, high: float) -> dict[str, Any]:
        from ..p2.step_size import bisect_critical_step_size

        lo, hi = self.bracket(low, high)
        if math.isfinite(lo) and math.isfinite(hi):
            b = bisect_critical_step_size(lambda steps, idx: [self.collapsed(e) for e in steps], lo, hi,
                                          self.settings.rel_tol, check_bracket=False)
            lo, hi, est, width = float(b.low), float(b.high), float(b.estimate), float(b.relative_width)
        else:
            est = math.nan if math.isnan(lo) else math.inf
            width = math.nan
        return {"low": lo, "high": hi, "estimate": est, "relative_width": width}


def cell_summary(cfg: RunConfig) -> dict[str, Any]:
    """The fields that tell cells of a bisection experiment apart, for the summary file."""
    return {"answer_copies": cfg.answer_copies, "length": cfg.max_completion_length, "loss_type": cfg.loss_type,
            "scale_rewards": cfg.scale_rewards, "optimizer": cfg.optimizer, "seed": cfg.seed,
            "warm_start_seed": cfg.warm_start_seed, "group": group_key(cfg)}


def run_bisection(path: str | Path, *, runs_dir: str | Path | None = None, out_dir: str | Path | None = None,
                  only: str | None = None, progress: bool = True) -> Path:
    """Bisect every cell of the experiment at ``path``; returns the summary file ``<out_dir>/<name>.json``."""
    from .._io import atomic_write_text
    from ..paths import DATA_DIR, RUNS_DIR
    from .runner import run, warm_start_spec

    name, cells, settings = load_bisection_experiment(path)
    if only:
        cells = [c for c in cells if only in json.dumps(cell_summary(c))]
    root = Path(runs_dir) if runs_dir else RUNS_DIR
    out = (Path(out_dir) if out_dir else DATA_DIR / "bisections") / f"{name}.json"
    summary: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    summary.update({"experiment": str(path), "settings": asdict(settings), "name": name})
    initials: dict[str, float] = summary.setdefault("initial_success", {})
    gaps: dict[str, dict] = summary.setdefault("gap_norms", {})
    results: dict[str, Any] = summary.setdefault("cells", {})
    first_estimate: dict[str, float] = {}

    def train(cfg: RunConfig) -> float:
        t = time.time()
        run_dir = run(cfg, runs_dir=root, progress=False)
        final = final_sampled_success(run_dir)
        if progress:
            print(f"    lr {cfg.learning_rate:.5g}: final {final:.3f} ({time.time() - t:.1f} s) {cfg.run_id()}",
                  flush=True)
        return final

    for i, cell in enumerate(cells, 1):
        spec = warm_start_spec(cell)
        init_key = f"{spec.key() if spec else cell.model}/copies={cell.answer_copies}/T={cell.max_completion_length}"
        need_gap = bool(settings.gap_prompts) and init_key not in gaps
        if init_key not in initials or need_gap:
            policy = _starting_policy(cell)          # loaded once for both measurements
            if init_key not in initials:
                initials[init_key] = initial_sampled_success(cell, settings.initial_samples, policy)
            if need_gap:
                gaps[init_key] = starting_gap_norms(cell, settings.gap_prompts, settings.gap_samples, policy)
        group = group_key(cell)
        est0 = first_estimate.get(group)
        if est0 is not None and math.isfinite(est0):
            low, high = est0 / settings.seed_bracket, est0 * settings.seed_bracket
        else:
            low, high = settings.low, settings.high
        if progress:
            print(f"[{i}/{len(cells)}] {cell_summary(cell)} initial {initials[init_key]:.3f}, bracket "
                  f"[{low:.4g}, {high:.4g}]", flush=True)
        job = CellBisection(cell, initials[init_key], settings, train)
        res = job.bisect(low, high)
        first_estimate.setdefault(group, res["estimate"])
        results[cell.replace(learning_rate=1.0).run_id()] = {**cell_summary(cell), "start": init_key,
                                                             "initial_success": initials[init_key], **res,
                                                             "trials": job.trials}
        atomic_write_text(out, json.dumps(summary, indent=1, allow_nan=True) + "\n")
        if progress:
            print(f"    eta_c {res['estimate']:.5g} (bracket [{res['low']:.5g}, {res['high']:.5g}], "
                  f"{len(job.trials)} runs)", flush=True)
    return out


def load_bisection(path: str | Path) -> dict[str, Any]:
    """The summary file written by :func:`run_bisection`."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"bisection summary {path} does not exist; run rlvr-dynamics bisect <config> first")
    return json.loads(path.read_text())


def estimates_table(summary: dict[str, Any]):
    """One row per cell (pandas DataFrame): its fields, initial success, estimate, bracket and number of trials."""
    import pandas as pd

    rows = [{k: v for k, v in c.items() if k != "trials"} | {"n_runs": len(c["trials"])}
            for c in summary["cells"].values()]
    return pd.DataFrame(rows)
