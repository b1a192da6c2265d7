"""Load a GRPO training log from any of the common formats into one ``RunLog`` (steps + named series).

Supported inputs (auto-detected from the file or folder):

- TRL / transformers ``trainer_state.json``: ``log_history`` entries that carry a ``step`` (evaluation-only
  entries are kept as their own columns), or a checkpoint folder; a TRL ``output_dir``: its event files, latest
  ``checkpoint-N/trainer_state.json`` and ``trainer_state.json`` combined as the segments of one run
  (:mod:`._segments`: a run resumed from a checkpoint is read whole);
- CSV with a header and a step column, matched case-insensitively (``step``/``global_step``/``_step``/…), separated
  by commas, tabs or semicolons (then with decimal commas, as a spreadsheet in many locales writes it): the
  project's ``data/runs/<id>/metrics.csv``, ``../shared/grpo_logs/*.csv``, W&B UI exports (``Step,<run> - reward,
  <run> - reward__MIN, …``: the run prefix and the __MIN/__MAX columns are dropped) and TensorBoard UI exports
  (``Wall time,Step,Value``: the value column is named after the file);
- JSON Lines: one object per step, either flat (``{"step": 3, "reward": 0.4, …}``) or nested as verl's file
  logger writes it (``{"step": 3, "data": {"critic/score/mean": 0.4, …}}``); a JSON list of such objects;
- verl console logs (lines ``step:3 - critic/score/mean:0.4 - actor/entropy:0.5 …``, also wrapped over several
  lines; other lines ignored);
- TRL / accelerate console logs, such as SLURM ``.out`` files: the printed ``{'loss': …, 'reward': …}`` dicts among
  tqdm bars and other output (steps inferred, :func:`._log_formats._rows_from_trl_console`);
- W&B run folders (``wandb/offline-run-*/``): ``files/wandb-history.jsonl``, else ``run-<id>.wandb`` through the
  ``wandb`` package when it is installed;
- MLflow file-store metrics: a run folder (``mlruns/<exp>/<run>/``), its ``metrics/`` folder or one metric file
  (lines ``timestamp value step``);
- TensorBoard event files (``events.out.tfevents.*``) or a folder of them: scalar summaries are read by a small
  built-in reader (no TensorFlow or tensorboard needed).

The reward column is found by name (``REWARD_COLUMNS``, first match, case-insensitive) unless given; never another
signal. Missing values become NaN in the series; NaN, infinite and text reward cells too, counted in
:attr:`RunLog.read_notes`, and so are gaps in the logged steps and values of other columns beyond
±:data:`VALUE_LIMIT` (read as infinite).

A log that ends inside its last record (a run still writing it, or killed while writing it: a JSON Lines, CSV,
console or MLflow line without its line end, a TensorBoard record shorter than its header says) is read to the
record before, with a read note (:mod:`._cut_short`).

Errors (ValueError, one line, naming the file and the line where there is one): missing or empty file, not UTF-8,
malformed JSON / CSV (a cut-short JSON document such as a ``trainer_state.json`` included), no step column, a
non-integer step, a repeated step whose rows disagree on a value (rows of the same step with disjoint columns, such
as TRL's training and evaluation entries, are merged), no reward column, a reward column without a finite value,
or fewer than ``min_points`` logged rewards (naming the cells dropped on the way: NaN, infinite, non-numeric, or
beyond ±:data:`REWARD_LIMIT`, which are read as missing with a read note).
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..grpo.fields import is_callback_field

from ._checkpoints import current_states, mtime, whole_states
from ._cut_short import json_document_error, without_cut_last_line
from ._log_formats import (_MLFLOW_LINE, _VERL_STEP, _is_tfevents, _mlflow_metric_rows, _read_text, _Rows,
                           _rows_from_console, _rows_from_mlflow, _rows_from_tfevents, _rows_from_trl_console,
                           is_trl_console, is_verl_record, rows_from_wandb_file, wandb_run_file)
from ._reward import (REWARD_LIMIT, VALUE_LIMIT, beyond_limit_rewards, constant_reward_note, find_reward_column,
                      overflowing_cells)
from ._segments import (StepTable, columns, combine, describe_bad_cells, gap_notes, order, resumed_table,
                        segment_note, step_table, untrl_tensorboard_name)
REWARD_COLUMNS = ("reward", "train/reward", "rewards/mean", "critic/score/mean", "reward_mean", "mean_reward",
                  "train/rewards/mean", "critic/rewards/mean", "accuracy", "train/accuracy", "rollout/reward",
                  "train/reward_mean")
"""Reward-column names tried in order when ``reward_column`` is not given (TRL, Unsloth, verl, OpenRLHF, W&B, this
project)."""
STEP_COLUMNS = ("step", "global_step", "train/global_step", "_step", "iteration")
"""Step-column names tried in order (any case); the trainer's ``train/global_step`` before W&B's own ``_step``."""
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
    read_notes: list[str] = field(default_factory=list)
    """What the reading did beyond reading, one plain-English line each: the segments combined (``3 segments, …:
    runs/Dec01/… (steps 10–60), …``), a gap in the logged steps larger than the log's usual spacing (``gap: no
    logged step between 60 and 90 …``), reward cells that gave no value (``3 NaN rewards at steps 40, 50, 60``,
    ``1 non-numeric reward cell ('n/a') at step 30``; they stay NaN in the series), steps inferred for a console
    log. Empty when there is nothing to say."""
    segments: list[dict] = field(default_factory=list)
    """The sources read, oldest first: ``{"source": str, "first_step": int, "last_step": int}`` each (one for a
    single file; several for a resumed TRL ``output_dir``, :mod:`._segments`)."""

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


_DECIMAL_COMMA = re.compile(r"^([-+]?\d+),(\d+(?:[eE][-+]?\d+)?)$")


def _rows_from_csv(path: Path, text: str, notes: list[str]) -> _Rows:
    first = text.split("\n", 1)[0]
    other = max(("\t", ";"), key=first.count)        # a tab- or semicolon-separated header: that is the delimiter
    delimiter = other if first.count(other) > first.count(",") else ","

    def fields(line: str) -> int:
        return len(next(csv.reader([line], delimiter=delimiter), []))
    text = without_cut_last_line(path, text, lambda ln: fields(ln) < fields(first), notes)
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
            if delimiter == ";":        # a spreadsheet's CSV where the decimal mark is a comma: 0,125 is 0.125
                rec = [_DECIMAL_COMMA.sub(r"\1.\2", c.strip()) for c in rec]
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
        out.single_metric = name
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


def _read_rows(path: Path, notes: list[str] | None = None) -> _Rows:
    """The rows of one file (any format of the module docstring); ``notes`` gets what the reader inferred and the
    record left out of a log that ends inside it (:mod:`._cut_short`)."""
    notes = [] if notes is None else notes
    if _is_tfevents(path):
        return _rows_from_tfevents(path, notes)
    if path.suffix == ".wandb":
        return rows_from_wandb_file(path)
    text = _read_text(path)
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{path}: the file is empty")
    if "\x00" in text:
        raise ValueError(f"{path}: binary content (NUL bytes); expected a text log")
    if stripped.startswith("{'"):                     # a printed Python dict (TRL console), never JSON
        rows, inferred = _rows_from_trl_console(path, text)
        if rows:
            notes.extend(inferred)
            return rows
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            first = stripped.split("\n", 1)[0]
            if stripped.startswith("[") or not _is_json_object(first):
                raise json_document_error(path, stripped, exc) from None
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
        return _rows_from_jsonl(path, without_cut_last_line(path, text, lambda ln: not _is_json_object(ln), notes))
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    if lines and all(_MLFLOW_LINE.match(ln) for ln in (lines[:-1] or lines)[:50]):
        return _mlflow_metric_rows(path, path.name, notes)
    if any(_VERL_STEP.search(ln) for ln in lines[:200]):
        return _rows_from_console(path, without_cut_last_line(path, text, is_verl_record, notes))
    if is_trl_console(text):
        rows, inferred = _rows_from_trl_console(path, text)
        notes.extend(inferred)
        return rows
    return _rows_from_csv(path, text, notes)


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


def _checkpoint_number(p: Path) -> int:
    try:
        return int(p.name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def _folder_sources(path: Path, notes: list[str] | None = None) -> list[tuple[Path, str]]:
    """The sources of a folder argument, oldest first: ``[(file or folder to read, kind)]`` (read notes appended to
    ``notes``).

    - a project run folder (``metrics.csv``), an MLflow run (``metrics/``), a W&B run folder
      (``files/wandb-history.jsonl`` or ``run-<id>.wandb``): that one log;
    - a TRL ``output_dir``: its ``trainer_state.json`` (``trainer.save_state()``), the newest
      ``checkpoint-N/trainer_state.json`` and each TensorBoard event file (in the folder or under ``runs/*/``), by
      modification time: the segments :mod:`._segments` combines (a resumed run is read whole; a run stopped between
      two saves to its last logged step). A trainer state that disagrees with one written after it belongs to an
      older run of a reused folder and is left out (:mod:`._checkpoints`).
    """
    notes = [] if notes is None else notes
    if (path / "metrics.csv").is_file() and not (path / "trainer_state.json").is_file():
        return [(path / "metrics.csv", "file")]
    wandb = wandb_run_file(path)
    if wandb is not None:
        return [(wandb, "file")]
    ckpts = sorted((p for p in path.glob("checkpoint-*") if (p / "trainer_state.json").is_file()),
                   key=_checkpoint_number)
    root = path / "trainer_state.json" if (path / "trainer_state.json").is_file() else None
    root, ckpts, cut = whole_states(root, ckpts, path)
    states, note = current_states(root, ckpts, path)
    notes += cut + ([note] if note else [])
    sources: list[tuple[Path, str]] = [(p, "file") for p in states]
    events = [p for p in path.glob("*tfevents*") if p.is_file()]
    events += [p for p in path.glob("runs/*/*tfevents*") if p.is_file()]
    sources += [(p, "tfevents") for p in events]
    if sources:
        return sorted(sources, key=lambda s: (s[0].stat().st_mtime, s[1] == "file", str(s[0])))
    if (path / "metrics").is_dir() or (path.name == "metrics" and any(path.iterdir())):
        return [(path, "mlflow")]
    raise ValueError(f"{path} is a folder without a log: expected trainer_state.json, metrics.csv, "
                     "checkpoint-*/trainer_state.json, TensorBoard event files, an MLflow metrics/ folder or a W&B "
                     "run folder (files/wandb-history.jsonl, run-*.wandb)")


def resolved_source(path: str | Path) -> Path:
    """The file :func:`load_log` reads for ``path``; for a folder of several segments, the newest
    (:func:`_folder_sources`); the event folder ``runs/<date>`` for an event file in it. ValueError for a folder
    without a log."""
    path = Path(path)
    if not path.is_dir():
        return path
    src, kind = _folder_sources(path)[-1]
    return src.parent if kind == "tfevents" and src.parent != path else src


def _source_rows(src: Path, kind: str, notes: list[str]) -> _Rows:
    if kind == "tfevents":
        return _rows_from_tfevents(src, notes)
    if kind == "mlflow":
        return _rows_from_mlflow(src, notes)
    return _read_rows(src, notes)


def load_log(path: str | Path, reward_column: str | None = None, *, min_points: int = 2) -> RunLog:
    """Read ``path`` (any format of the module docstring) into a :class:`RunLog`; a folder of several segments
    (a resumed TRL run) is read whole (:mod:`._segments`).

    ValueError names the file (and line) and what is wrong: missing file, not UTF-8, no step column, a non-integer
    step, a repeated step whose rows disagree, no reward column (listing the numeric columns found), a reward column
    without a finite value (naming it and the columns found), or fewer than ``min_points`` logged rewards (2, the
    fewest a curve fit can use; a reader of partial logs may ask for 1), naming the reward cells read as missing
    (NaN, infinite, non-numeric, beyond ±:data:`REWARD_LIMIT`).
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(f"log file {path} does not exist")
    notes: list[str] = []
    sources = _folder_sources(path, notes) if path.is_dir() else [(path, "file")]
    with_trainer_state = len(sources) > 1 and any(k == "file" for _, k in sources)
    tables = []
    for src, kind in sources:
        rows = _source_rows(src, kind, notes)
        start = rows.start_time if rows.start_time is not None else mtime(src)
        if kind == "tfevents" and with_trainer_state:      # one name per column beside the trainer's own log
            rows = _Rows([{untrl_tensorboard_name(k): v for k, v in r.items()} for r in rows], rows.lines)
        if not rows:
            if len(sources) > 1:
                continue                  # an event file that holds no scalar yet (a run just started)
            raise ValueError(f"{src}: no rows")
        table, resumed = resumed_table(src, rows, STEP_COLUMNS, _is_doctor_output) if kind == "file" else \
            (step_table(src, rows, STEP_COLUMNS, _is_doctor_output), None)
        notes += [resumed] if resumed else []
        table.kind, table.start, table.open_ended = ("events" if kind == "tfevents" else "file"), start, \
            kind == "tfevents"
        tables.append(table)
    if not tables:
        raise ValueError(f"{path}: no rows in any of {[str(s) for s, _ in sources]}")
    tables = order(tables)
    table = combine(tables)
    log = _build(table, reward_column, min_points,
                 single_metric=getattr(rows, "single_metric", None) if len(tables) == 1 else None)
    log.segments = [{"source": str(t.source), "first_step": int(t.first_step), "last_step": int(t.last_step)}
                    for t in tables]
    if len(tables) > 1:
        notes.insert(0, segment_note(tables, path))
    log.read_notes = notes + log.read_notes
    return log


__all__ = ["RunLog", "load_log", "resolved_source", "REWARD_COLUMNS", "STEP_COLUMNS", "DIAGNOSTIC_COLUMNS",
           "REWARD_LIMIT", "VALUE_LIMIT", "DYNAMICS_NAMESPACES"]

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


def _build(table: StepTable, reward_column: str | None, min_points: int, *,
           single_metric: str | None = None) -> RunLog:
    path, merged = table.source, table.values
    steps = np.array(sorted(merged), dtype=np.int64)
    keys = {k for r in merged.values() for k in r}
    names = sorted(keys)
    series = columns(merged, steps, names)
    series = {n: v for n, v in series.items() if np.isfinite(v).any()}
    series = _with_bare_dynamics_names(series)
    reward_column = find_reward_column(table, series, keys | set(series), reward_column, single_metric,
                                       REWARD_COLUMNS)
    overflow = overflowing_cells(series, steps, reward_column)
    log = RunLog(source=str(path), steps=steps, series=series, reward_column=reward_column)
    reward = log.reward
    beyond, huge = beyond_limit_rewards(reward, steps, reward_column)
    bad = table.bad.get(reward_column, {})
    dropped = describe_bad_cells(reward_column, bad) + beyond
    if np.isfinite(reward).sum() < min_points:
        why = f" ({'; '.join(dropped)})" if dropped else ""
        raise ValueError(f"{path}: column {reward_column!r} has fewer than {min_points} logged values{why}")
    logged = np.isfinite(reward) | np.isin(steps, list(bad))
    logged[huge] = True                  # read as missing, not a gap in the steps
    log.read_notes = gap_notes(steps[logged]) + dropped + overflow + constant_reward_note(reward, reward_column)
    return log
