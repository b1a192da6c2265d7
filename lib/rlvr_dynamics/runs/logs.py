"""Load a GRPO training log from any of the common formats into one ``RunLog`` (steps + named series).

Supported inputs (auto-detected from the file):

- TRL / transformers ``trainer_state.json``: ``log_history`` entries that carry a ``step`` (evaluation-only
  entries are kept as their own columns);
- CSV with a header (``step`` first or a column named ``step``/``global_step``/``_step``; W&B and TensorBoard
  exports, the project's own ``data/runs/<id>/metrics.csv``, ``../shared/grpo_logs/*.csv``);
- JSON Lines: one object per step, either flat (``{"step": 3, "reward": 0.4, …}``) or nested as verl's file
  logger writes it (``{"step": 3, "data": {"critic/score/mean": 0.4, …}}``).

The reward column is found by name (``REWARD_COLUMNS``, first match) unless given. Missing values become NaN in
the series; rows without a step are an error naming the file and line.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REWARD_COLUMNS = ("reward", "train/reward", "rewards/mean", "critic/score/mean", "reward_mean", "mean_reward",
                  "train/rewards/mean", "critic/rewards/mean", "accuracy", "train/accuracy")
"""Reward-column names tried in order when ``reward_column`` is not given (TRL, verl, W&B, this project)."""
STEP_COLUMNS = ("step", "global_step", "_step", "train/global_step", "iteration")
DIAGNOSTIC_COLUMNS = {
    "entropy": ("entropy", "actor/entropy", "train/entropy"),
    "kl": ("kl", "actor/kl_loss", "actor/ppo_kl", "train/kl", "objective/kl"),
    "grad_norm": ("grad_norm", "actor/grad_norm", "train/grad_norm"),
    "clip_ratio": ("clip_ratio", "clip_ratio/region_mean", "actor/pg_clipfrac", "train/clip_ratio"),
    "reward_std": ("reward_std", "train/reward_std", "critic/score/std"),
    "frac_reward_zero_std": ("frac_reward_zero_std", "train/frac_reward_zero_std"),
    "learning_rate": ("learning_rate", "actor/lr", "train/learning_rate", "lr"),
    "response_length": ("completion_length", "completions/mean_length", "response_length/mean"),
}
"""Project concept → column names tried in order (the same concepts as ``../shared/grpo_logs/index.json``)."""


@dataclass
class RunLog:
    """One training run: ``steps`` (strictly increasing) and ``series[name]`` aligned with them."""

    source: str
    """The file it was read from."""
    steps: np.ndarray
    """Optimizer step of each row, strictly increasing."""
    series: dict[str, np.ndarray] = field(default_factory=dict)
    """Every numeric column, NaN where a row did not log it."""
    reward_column: str = ""
    """The column used as the training reward."""

    @property
    def reward(self) -> np.ndarray:
        return self.series[self.reward_column]

    def diagnostic(self, concept: str) -> np.ndarray | None:
        """The series for a project concept (``"entropy"``, ``"kl"``, …), or None if the log lacks it."""
        if concept not in DIAGNOSTIC_COLUMNS:
            raise ValueError(f"concept must be one of {sorted(DIAGNOSTIC_COLUMNS)}, got {concept!r}")
        for name in DIAGNOSTIC_COLUMNS[concept]:
            if name in self.series and np.isfinite(self.series[name]).any():
                return self.series[name]
        return None

    def reward_curve(self) -> tuple[np.ndarray, np.ndarray]:
        """``(steps, reward)`` restricted to the rows where the reward was logged."""
        ok = np.isfinite(self.reward)
        return self.steps[ok], self.reward[ok]


def _to_float(value) -> float:
    if value is None or value == "":
        return math.nan
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _rows_from_trainer_state(path: Path, data: dict) -> list[dict]:
    history = data.get("log_history")
    if not isinstance(history, list):
        raise ValueError(f"{path}: a trainer_state.json must hold a 'log_history' list")
    return [row for row in history if isinstance(row, dict)]


def _rows_from_jsonl(path: Path, text: str) -> list[dict]:
    rows = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {i} is not valid JSON ({exc.msg})") from None
        if isinstance(obj, dict) and isinstance(obj.get("data"), dict):
            obj = {**obj["data"], "step": obj.get("step", obj["data"].get("step"))}
        rows.append(obj)
    return rows


def _rows_from_csv(path: Path, text: str) -> list[dict]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise ValueError(f"{path}: the CSV has no header row")
    return list(reader)


def _read_rows(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" not in stripped.strip():
        try:
            return _rows_from_trainer_state(path, json.loads(text))
        except json.JSONDecodeError:
            pass
    if stripped.startswith("{"):
        return _rows_from_jsonl(path, text)
    return _rows_from_csv(path, text)


def load_log(path: str | Path, reward_column: str | None = None, *, min_points: int = 2) -> RunLog:
    """Read ``path`` (trainer_state.json, CSV or JSONL) into a :class:`RunLog`.

    ValueError names the file and what is wrong: missing file, no step column, a non-numeric or repeated step,
    no reward column (listing the numeric columns found), or fewer than ``min_points`` logged rewards (2, the
    fewest a curve fit can use; a reader of partial logs may ask for 1).
    """
    path = Path(path)
    if path.is_dir():
        for name in ("trainer_state.json", "metrics.csv"):
            if (path / name).exists():
                path = path / name
                break
        else:
            raise ValueError(f"{path} is a folder without trainer_state.json or metrics.csv")
    if not path.exists():
        raise ValueError(f"log file {path} does not exist")
    rows = _read_rows(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    step_key = next((k for k in STEP_COLUMNS if any(k in r for r in rows)), None)
    if step_key is None:
        raise ValueError(f"{path}: no step column; expected one of {list(STEP_COLUMNS)}")
    merged: dict[int, dict[str, float]] = {}
    for i, row in enumerate(rows):
        if step_key not in row:
            continue
        step = _to_float(row[step_key])
        if not math.isfinite(step) or step != int(step):
            raise ValueError(f"{path}: row {i + 1} has an invalid {step_key!r} value {row[step_key]!r}")
        target = merged.setdefault(int(step), {})
        for k, v in row.items():
            if k == step_key:
                continue
            x = _to_float(v)
            if math.isfinite(x) or k not in target:
                target[k] = x
    steps = np.array(sorted(merged), dtype=np.int64)
    names = sorted({k for r in merged.values() for k in r})
    series = {n: np.array([merged[s].get(n, math.nan) for s in steps], dtype=float) for n in names}
    series = {n: v for n, v in series.items() if np.isfinite(v).any()}
    if reward_column is None:
        reward_column = next((c for c in REWARD_COLUMNS if c in series), None)
        if reward_column is None:
            raise ValueError(f"{path}: no reward column among {list(REWARD_COLUMNS)}; pass reward_column= one of "
                             f"the numeric columns {sorted(series)}")
    elif reward_column not in series:
        raise ValueError(f"{path}: reward_column {reward_column!r} not found; numeric columns: {sorted(series)}")
    log = RunLog(source=str(path), steps=steps, series=series, reward_column=reward_column)
    if np.isfinite(log.reward).sum() < min_points:
        raise ValueError(f"{path}: column {reward_column!r} has fewer than {min_points} logged values")
    return log
