"""The project's committed GRPO runs (``data/runs/<run-id>/``) as typed objects: one loader for every notebook.

A run folder holds ``config.json`` (the :class:`~rlvr_dynamics.grpo.config.RunConfig`, its hash, K_ref, the warm
start, git commit and versions, ``complete``), ``metrics.csv`` (one row per optimizer step, read by
:func:`rlvr_dynamics.runs.logs.load_log`) and, once complete, ``eval.json`` (before/after accuracy per evaluation
family). Reading a run never imports torch or the trainer.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..grpo.config import RunConfig
from ..paths import RUNS_DIR
from .logs import RunLog, load_log


@dataclass(frozen=True)
class CommittedRun:
    """One committed run: its config, its per-step log and its evaluations."""

    id: str
    """Folder name ``<name>-<hash>``."""
    path: Path
    """The run folder."""
    config: RunConfig
    """The run's configuration (validated)."""
    info: dict[str, Any]
    """Everything else ``config.json`` records (warm start, versions, wall time, ``complete``)."""
    log: RunLog
    """``metrics.csv``: steps and every logged series."""
    eval: dict[str, Any] | None
    """``eval.json`` (``before``/``after`` accuracy per family), None while the run is incomplete."""

    @property
    def refresh_interval(self) -> int:
        """P1's K_ref = steps_per_generation × num_iterations (optimizer steps per refresh of π_old)."""
        return self.config.refresh_interval

    @property
    def complete(self) -> bool:
        return bool(self.info.get("complete"))

    @property
    def initial_success(self) -> float:
        """Sampled success rate of the starting model on held-out prompts, as measured when the warm start was
        accepted (tiny models); NaN for pretrained models, which have no warm start record."""
        ws = (self.info.get("model") or {}).get("warm_start") or {}
        return float(ws.get("initial_success", float("nan")))

    @property
    def steps(self) -> np.ndarray:
        """Optimizer step of each ``metrics.csv`` row (float, for plotting and fitting)."""
        return self.log.steps.astype(float)

    def series(self, column: str, *, dropna: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """A ``metrics.csv`` column aligned with :attr:`steps` (NaN where not logged); with ``dropna``,
        ``(steps, values)`` restricted to the logged rows. ValueError naming the run if the column is absent."""
        if column not in self.log.series:
            raise ValueError(f"run {self.id} has no column {column!r} in metrics.csv; columns: "
                             f"{sorted(self.log.series)}")
        y = self.log.series[column]
        if not dropna:
            return y
        ok = np.isfinite(y)
        return self.steps[ok], y[ok]

    def evaluations(self, column: str = "eval_reward_sampled") -> tuple[np.ndarray, np.ndarray]:
        """``(eval_step, value)`` of the periodic held-out evaluation (one entry per evaluation step)."""
        eval_step = self.series("eval_step")
        ok = np.isfinite(eval_step)
        steps, idx = np.unique(eval_step[ok], return_index=True)
        return steps.astype(int), self.series(column)[ok][idx]


def load_committed_run(run_dir: str | os.PathLike) -> CommittedRun:
    """Read one run folder; ValueError naming the folder if ``config.json`` or ``metrics.csv`` is missing."""
    run_dir = Path(run_dir)
    cfg_path = run_dir / "config.json"
    if not cfg_path.exists():
        raise ValueError(f"run folder {run_dir} has no config.json")
    info = json.loads(cfg_path.read_text(encoding="utf-8"))
    config = RunConfig.from_dict(info["config"])
    log = load_log(run_dir / "metrics.csv", reward_column="reward", min_points=1)
    ev = run_dir / "eval.json"
    return CommittedRun(id=run_dir.name, path=run_dir, config=config,
                        info={k: v for k, v in info.items() if k != "config"}, log=log,
                        eval=json.loads(ev.read_text(encoding="utf-8")) if ev.exists() else None)


def load_committed_runs(prefix: str = "", runs_dir: str | os.PathLike | None = None, *,
                        complete_only: bool = True) -> list[CommittedRun]:
    """Every committed run whose id starts with ``prefix``, sorted by id (incomplete ones skipped by default)."""
    root = Path(runs_dir) if runs_dir else RUNS_DIR
    out = []
    for d in sorted(root.glob(f"{prefix}*")):
        if (d / "config.json").exists() and (d / "metrics.csv").exists():
            run = load_committed_run(d)
            if complete_only and not run.complete:
                continue
            out.append(run)
    return out


def grid_runs(name: str, runs_dir: str | os.PathLike | None = None, *, complete_only: bool = True) -> list[CommittedRun]:
    """The committed runs of one grid: those whose id is ``<name>-<hash>`` (a trailing ``-`` of ``name`` is ignored),
    not the runs of a longer grid name that starts with it (``smollm-panel`` holds no ``smollm-panel-compute`` run)."""
    name = name.rstrip("-")
    return [r for r in load_committed_runs(name + "-", runs_dir, complete_only=complete_only)
            if r.id.rsplit("-", 1)[0] == name]
