"""Load a GRPO training log from any of the common formats into one ``RunLog`` (steps + named series).

Supported inputs (auto-detected from the file or folder):

- TRL / transformers ``trainer_state.json``: ``log_history`` entries that carry a ``step`` (evaluation-only
  entries are kept as their own columns); a TRL ``output_dir`` (read from its latest ``checkpoint-N/``) or a
  checkpoint folder;
- CSV with a header and a step column, matched case-insensitively (``step``/``global_step``/``_step``/…): the
  project's ``data/runs/<id>/metrics.csv``, ``../shared/grpo_logs/*.csv``, W&B UI exports (``Step,<run> - reward,
  <run> - reward__MIN, …``: the run prefix and the __MIN/__MAX columns are dropped) and TensorBoard UI exports
  (``Wall time,Step,Value``: the value column is named after the file);
- JSON Lines: one object per step, either flat (``{"step": 3, "reward": 0.4, …}``) or nested as verl's file
  logger writes it (``{"step": 3, "data": {"critic/score/mean": 0.4, …}}``); a JSON list of such objects;
- verl console logs (lines ``step:3 - critic/score/mean:0.4 - actor/entropy:0.5 …``; other lines ignored);
- MLflow file-store metrics: a run folder (``mlruns/<exp>/<run>/``), its ``metrics/`` folder or one metric file
  (lines ``timestamp value step``);
- TensorBoard event files (``events.out.tfevents.*``) or a folder of them: scalar summaries are read by a small
  built-in reader (no TensorFlow or tensorboard needed).

The reward column is found by name (``REWARD_COLUMNS``, first match, case-insensitive) unless given. Missing values
become NaN in the series.

Errors (ValueError, one line, naming the file and the line where there is one): missing or empty file, not UTF-8,
malformed JSON / CSV, no step column, a non-integer step, a repeated step whose rows disagree on a value (rows of
the same step with disjoint columns, such as TRL's training and evaluation entries, are merged), no reward column,
or fewer than ``min_points`` logged rewards.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..grpo.fields import is_callback_field

from ._log_formats import (_MLFLOW_LINE, _VERL_STEP, _is_tfevents, _mlflow_metric_rows, _read_text, _Rows,
                           _rows_from_console, _rows_from_mlflow, _rows_from_tfevents)
REWARD_COLUMNS = ("reward", "train/reward", "rewards/mean", "critic/score/mean", "reward_mean", "mean_reward",
                  "train/rewards/mean", "critic/rewards/mean", "accuracy", "train/accuracy", "rollout/reward",
                  "train/reward_mean")
"""Reward-column names tried in order when ``reward_column`` is not given (TRL, Unsloth, verl, OpenRLHF, W&B, this
project)."""
STEP_COLUMNS = ("step", "global_step", "_step", "train/global_step", "iteration")
DIAGNOSTIC_COLUMNS = {
    "entropy": ("entropy", "actor/entropy", "train/entropy", "actor/entropy_loss", "policy_entropy",
                "train/policy_entropy", "token_entropy", "train/token_entropy"),
    "kl": ("kl", "actor/kl_loss", "actor/ppo_kl", "train/kl", "objective/kl", "actor/kl", "train/kl_loss",
           "approx_kl", "train/approx_kl"),
    "grad_norm": ("grad_norm", "actor/grad_norm", "train/grad_norm", "actor_grad_norm"),
    "clip_ratio": ("clip_ratio", "clip_ratio/region_mean", "actor/pg_clipfrac", "train/clip_ratio",
                   "train/clip_ratio/region_mean", "ppo_clip_ratio", "clip_fraction", "train/clip_fraction"),
    "reward_std": ("reward_std", "train/reward_std", "critic/score/std"),
    "frac_reward_zero_std": ("frac_reward_zero_std", "train/frac_reward_zero_std"),
    "learning_rate": ("learning_rate", "actor/lr", "train/learning_rate", "lr", "policy_lr"),
    "response_length": ("completion_length", "completions/mean_length", "response_length/mean",
                        "train/completion_length", "train/completions/mean_length", "response_length",
                        "avg_response_token_length", "response_length/mean_length"),
    "clipped_ratio": ("completions/clipped_ratio", "train/completions/clipped_ratio", "response_length/clip_ratio"),
    "format_accuracy": ("format_accuracy", "train/format_accuracy", "rewards/format_reward/mean",
                        "train/rewards/format_reward/mean", "rewards/format_reward"),
    "loss": ("loss", "train/loss", "actor/pg_loss"),
}
"""Project concept → column names tried in order (the concepts of ``../shared/grpo_logs/index.json`` plus
``clipped_ratio``, the share of completions cut at the length cap). Older verl logs ``actor/entropy_loss``; OpenRLHF
logs ``policy_entropy``, ``kl``, ``response_length``, ``ppo_clip_ratio``; Unsloth logs TRL ≤ 0.15 names
(``completion_length``, ``reward_std``, ``rewards/<func>``); CS336-style loops log ``token_entropy``, ``approx_kl``,
``clip_fraction``, ``avg_response_token_length`` and ``format_accuracy``."""


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
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def _rows_from_trainer_state(path: Path, data: dict) -> _Rows:
    history = data.get("log_history")
    if not isinstance(history, list):
        raise ValueError(f"{path}: a trainer_state.json must hold a 'log_history' list")
    rows = [row for row in history if isinstance(row, dict)]
    return _Rows(rows)


def _rows_from_jsonl(path: Path, text: str) -> _Rows:
    rows, lines = [], []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise ValueError(f"{path}: line {i} is not valid JSON ({msg})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{path}: line {i} is not a JSON object (got {type(obj).__name__})")
        if isinstance(obj.get("data"), dict):
            obj = {**obj["data"], "step": obj.get("step", obj["data"].get("step"))}
        rows.append(obj)
        lines.append(i)
    return _Rows(rows, lines)


def _rows_from_csv(path: Path, text: str) -> _Rows:
    first = text.split("\n", 1)[0]
    delimiter = "\t" if first.count("\t") > first.count(",") else ","
    try:
        reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True)
        header = next(reader, None)
        if not header or not any(h.strip() for h in header):
            raise ValueError(f"{path}: the CSV has no header row")
        header = [h.strip() for h in header]
        if len(set(header)) != len(header):
            dup = sorted({h for h in header if header.count(h) > 1})
            raise ValueError(f"{path}: line 1: repeated column name(s) {dup}")
        rows, lines = [], []
        for rec in reader:
            if not rec or not any(c.strip() for c in rec):
                continue
            if len(rec) > len(header):
                raise ValueError(f"{path}: line {reader.line_num} has {len(rec)} fields, the header has "
                                 f"{len(header)}")
            rows.append(dict(zip(header, rec)))
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise ValueError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    return _normalise_export(path, _Rows(rows, lines), header)


def _normalise_export(path: Path, rows: _Rows, header: list[str]) -> _Rows:
    """W&B UI export: drop ``__MIN``/``__MAX`` and the ``<run> - `` prefix; TensorBoard UI export: name ``Value``
    after the file and drop ``Wall time``."""
    lower = [h.lower() for h in header]
    if "wall time" in lower and "value" in lower:
        name = path.stem
        ren = {h: (name if h.lower() == "value" else h) for h in header}
        out = _Rows([{ren[k]: v for k, v in r.items() if k.lower() != "wall time"} for r in rows], rows.lines)
        return out
    data_cols = [h for h in header if h.lower() not in STEP_COLUMNS]
    if data_cols and all(" - " in h for h in data_cols):
        def key(h):
            return h.split(" - ", 1)[1]
        keep = [h for h in data_cols if not (h.endswith("__MIN") or h.endswith("__MAX"))]
        names = [key(h) for h in keep]
        if len(set(names)) == len(names):
            out = []
            for r in rows:
                new = {k: v for k, v in r.items() if k.lower() in STEP_COLUMNS}
                new.update({key(h): r.get(h, "") for h in keep})
                out.append(new)
            return _Rows(out, rows.lines)
    return rows


def _read_rows(path: Path) -> _Rows:
    if _is_tfevents(path):
        return _rows_from_tfevents(path)
    text = _read_text(path)
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{path}: the file is empty")
    if "\x00" in text:
        raise ValueError(f"{path}: binary content (NUL bytes); expected a text log")
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            if stripped.startswith("["):
                raise ValueError(f"{path}: line {exc.lineno} is not valid JSON ({exc.msg})") from None
            data = None
        except RecursionError:
            raise ValueError(f"{path}: JSON nested too deeply") from None
        if isinstance(data, list):
            if not all(isinstance(r, dict) for r in data):
                raise ValueError(f"{path}: a JSON list log must hold objects, one per step")
            return _rows_from_jsonl(path, "\n".join(json.dumps(r) for r in data))
        if isinstance(data, dict):
            if "log_history" in data:
                return _rows_from_trainer_state(path, data)
            if not any(str(k).lower() in STEP_COLUMNS for k in data) and not isinstance(data.get("data"), dict):
                raise ValueError(f"{path}: a JSON object that is not a training log (no 'log_history' list, no step "
                                 f"key; keys {sorted(map(str, data))[:8]}): a model or run config? Point at the "
                                 "run's trainer_state.json, metrics.csv, event files or its output folder")
            return _rows_from_jsonl(path, stripped)
    if stripped.startswith("{"):
        return _rows_from_jsonl(path, text)
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    if lines and all(_MLFLOW_LINE.match(ln) for ln in lines[:50]):
        return _mlflow_metric_rows(path, path.name)
    if any(_VERL_STEP.search(ln) for ln in lines[:200]):
        return _rows_from_console(path, text)
    return _rows_from_csv(path, text)


def _checkpoint_number(p: Path) -> int:
    try:
        return int(p.name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def _resolve_folder(path: Path) -> tuple[Path, str]:
    """(file or folder to read, kind) for a folder argument.

    A TRL ``output_dir`` holds both ``checkpoint-N/trainer_state.json`` (written at each save) and, with
    ``report_to="tensorboard"``, event files under ``runs/<date>/`` (written at every log): the one modified last
    is read, so a run stopped between two saves, or one without any checkpoint yet, is read to its last logged step.
    :func:`resolved_source` says which was read."""
    for name in ("trainer_state.json", "metrics.csv"):
        if (path / name).is_file():
            return path / name, "file"
    ckpts = sorted((p for p in path.glob("checkpoint-*") if (p / "trainer_state.json").is_file()),
                   key=_checkpoint_number)
    events = sorted(p for p in path.glob("*tfevents*") if p.is_file())
    if events:
        return path, "tfevents"
    run_dirs = sorted({p.parent for p in path.glob("runs/*/*tfevents*") if p.is_file()},
                      key=lambda d: max(f.stat().st_mtime for f in d.glob("*tfevents*")))
    if run_dirs and (not ckpts or max(f.stat().st_mtime for f in run_dirs[-1].glob("*tfevents*")) >
                     (ckpts[-1] / "trainer_state.json").stat().st_mtime):
        return run_dirs[-1], "tfevents"
    if ckpts:
        return ckpts[-1] / "trainer_state.json", "file"
    if (path / "metrics").is_dir() or (path.name == "metrics" and any(path.iterdir())):
        return path, "mlflow"
    raise ValueError(f"{path} is a folder without a log: expected trainer_state.json, metrics.csv, "
                     "checkpoint-*/trainer_state.json, TensorBoard event files or an MLflow metrics/ folder")


def resolved_source(path: str | Path) -> Path:
    """The file or folder :func:`load_log` reads for ``path`` (a folder resolves by :func:`_resolve_folder`)."""
    path = Path(path)
    return _resolve_folder(path)[0] if path.is_dir() else path


def load_log(path: str | Path, reward_column: str | None = None, *, min_points: int = 2) -> RunLog:
    """Read ``path`` (any format of the module docstring) into a :class:`RunLog`.

    ValueError names the file (and line) and what is wrong: missing file, not UTF-8, no step column, a non-integer
    step, a repeated step whose rows disagree, no reward column (listing the numeric columns found), or fewer than
    ``min_points`` logged rewards (2, the fewest a curve fit can use; a reader of partial logs may ask for 1).
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(f"log file {path} does not exist")
    kind = "file"
    if path.is_dir():
        path, kind = _resolve_folder(path)
    if kind == "tfevents":
        rows = _Rows()
        for f in sorted(p for p in path.glob("*tfevents*") if p.is_file()):
            part = _rows_from_tfevents(f)
            rows.extend(part)
            rows.lines.extend(part.lines)
    elif kind == "mlflow":
        rows = _rows_from_mlflow(path)
    else:
        rows = _read_rows(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    return _build(path, rows, reward_column, min_points)


_BOOKKEEPING = frozenset({"epoch", "total_flos", "train_runtime", "_runtime", "_timestamp", "timestamp",
                          "wall_time", "Wall time"})
"""Columns a repeated step may carry with different values (time stamps, epoch counters): the last one is kept."""


def _where(path: Path, rows: _Rows, i: int) -> str:
    line = rows.lines[i] if i < len(rows.lines) else None
    return f"{path}: line {line}" if line is not None else f"{path}: entry {i + 1}"


DYNAMICS_NAMESPACES = ("train/dynamics/", "dynamics/")
"""Prefixes under which :class:`rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` fields arrive (trainer
state, and W&B/TensorBoard, which add ``train/``)."""


def _with_bare_dynamics_names(series: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Add each namespaced callback field under its bare name too (``train/dynamics/gap_alignment`` is also
    ``gap_alignment``), unless the log already has that name, so diagnostics find them in any log. The live
    doctor's outputs (``dynamics/plateau``, …) keep only their namespaced name."""
    out = dict(series)
    for name, values in series.items():
        for ns in DYNAMICS_NAMESPACES:
            if name.startswith(ns):
                bare = name[len(ns):]
                if is_callback_field(bare) and bare not in out:
                    out[bare] = values
                break
    return out


def _is_doctor_output(name: str) -> bool:
    """A field the live doctor writes about the run (``dynamics/status``, ``dynamics/flag/…``, ``dynamics/plateau``),
    not a measurement of it: under a :data:`DYNAMICS_NAMESPACES` prefix and not a callback measurement. Before issue
    32 the callback logged its final report at the step of the last regular one, so such a field can repeat a step
    with a new value; the loader keeps the later one (nothing is measured twice)."""
    for ns in DYNAMICS_NAMESPACES:
        if name.startswith(ns):
            return not is_callback_field(name[len(ns):])
    return False


def _build(path: Path, rows: _Rows, reward_column: str | None, min_points: int) -> RunLog:
    keys = {k for r in rows for k in r if isinstance(k, str)}
    lower = {k.lower(): k for k in sorted(keys)}
    step_key = next((lower[k] for k in STEP_COLUMNS if k in lower), None)
    if step_key is None:
        raise ValueError(f"{path}: no step column; expected one of {list(STEP_COLUMNS)} (any case), found "
                         f"{sorted(keys)[:12]}")
    merged: dict[int, dict[str, float]] = {}
    origin: dict[int, int] = {}
    for i, row in enumerate(rows):
        if step_key not in row:
            continue
        raw = row[step_key]
        step = _to_float(raw)
        if not math.isfinite(step) or step != int(step) or abs(step) > 2 ** 53:
            raise ValueError(f"{_where(path, rows, i)}: invalid {step_key!r} value {raw!r} (an integer step is "
                             "required)")
        step = int(step)
        target = merged.setdefault(step, {})
        first = origin.setdefault(step, i)
        for k, v in row.items():
            if k == step_key or not isinstance(k, str):
                continue
            x = _to_float(v) if not isinstance(v, (dict, list)) else math.nan
            old = target.get(k, math.nan)
            if math.isfinite(x) and math.isfinite(old) and x != old and _is_doctor_output(k):
                target[k] = x      # the live doctor's own outputs: its later (final) report supersedes the earlier
                continue
            if math.isfinite(x) and math.isfinite(old) and x != old and k not in _BOOKKEEPING:
                raise ValueError(f"{_where(path, rows, i)}: step {step} is repeated ({_where(path, rows, first)}) "
                                 f"with a different {k!r} ({old!r} vs {x!r}); a log must have one value per step")
            if math.isfinite(x) or k not in target:
                target[k] = x if not (k in _BOOKKEEPING and not math.isfinite(x)) else target.get(k, x)
    if not merged:
        raise ValueError(f"{path}: no row has a {step_key!r} value")
    steps = np.array(sorted(merged), dtype=np.int64)
    names = sorted({k for r in merged.values() for k in r})
    series = {n: np.array([merged[s].get(n, math.nan) for s in steps], dtype=float) for n in names}
    series = {n: v for n, v in series.items() if np.isfinite(v).any()}
    series = _with_bare_dynamics_names(series)
    if reward_column is None:
        slower = {k.lower(): k for k in series}
        reward_column = next((slower[c] for c in REWARD_COLUMNS if c in slower), None)
        if reward_column is None and len(series) == 1 and path.suffix.lower() == ".csv":
            reward_column = next(iter(series))  # a one-metric export (TensorBoard UI)
        if reward_column is None:
            raise ValueError(f"{path}: no reward column among {list(REWARD_COLUMNS)}; pass reward_column= one of "
                             f"the numeric columns {sorted(series)}")
    elif reward_column not in series:
        raise ValueError(f"{path}: reward_column {reward_column!r} not found; numeric columns: {sorted(series)}")
    log = RunLog(source=str(path), steps=steps, series=series, reward_column=reward_column)
    if np.isfinite(log.reward).sum() < min_points:
        raise ValueError(f"{path}: column {reward_column!r} has fewer than {min_points} logged values")
    return log
