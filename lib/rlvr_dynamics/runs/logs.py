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
import re
import struct
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
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return x if math.isfinite(x) else math.nan


class _Rows(list):
    """Rows (dicts) with the source line of each (None where there is no line)."""

    def __init__(self, rows=(), lines=None):
        super().__init__(rows)
        self.lines = list(lines) if lines is not None else [None] * len(self)


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


_VERL_STEP = re.compile(r"(?:^|[\s(|])step:\s*(-?\d+)\s+-\s+(.*)$")


def _rows_from_console(path: Path, text: str) -> _Rows:
    """verl console logger: ``step:N - key:value - key:value …`` (other lines ignored)."""
    rows, lines = [], []
    for i, line in enumerate(text.splitlines(), 1):
        m = _VERL_STEP.search(line)
        if not m:
            continue
        row: dict[str, object] = {"step": m.group(1)}
        for part in m.group(2).split(" - "):
            if ":" in part:
                k, v = part.rsplit(":", 1)
                row[k.strip()] = v.strip()
        rows.append(row)
        lines.append(i)
    return _Rows(rows, lines)


_MLFLOW_LINE = re.compile(r"^\s*-?\d+\s+\S+\s+-?\d+\s*$")


def _mlflow_metric_rows(path: Path, name: str) -> _Rows:
    rows, lines = [], []
    text = _read_text(path)
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"{path}: line {i} is not an MLflow metric line 'timestamp value step'")
        rows.append({"step": parts[2], name: parts[1]})
        lines.append(i)
    return _Rows(rows, lines)


def _rows_from_mlflow(folder: Path) -> _Rows:
    metrics = folder / "metrics" if (folder / "metrics").is_dir() else folder
    files = sorted(p for p in metrics.rglob("*") if p.is_file())
    if not files:
        raise ValueError(f"{folder}: an MLflow metrics folder without metric files")
    out = _Rows()
    for f in files:
        part = _mlflow_metric_rows(f, f.relative_to(metrics).as_posix())
        out.extend(part)
        out.lines.extend([None] * len(part))
    return out


# --- TensorBoard event files: TFRecord framing + the few protobuf fields of Event/Summary that carry scalars ---

def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes):
    """(field number, wire type, value) of a protobuf message (value: int, bytes or raw fixed bytes)."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wt}")
        if i > len(buf):
            raise ValueError("truncated protobuf field")
        yield num, wt, v


def _tensor_scalar(buf: bytes) -> float:
    dtype, content, floats, doubles = 0, b"", [], []
    for num, wt, v in _fields(buf):
        if num == 1 and wt == 0:
            dtype = v
        elif num == 4 and wt == 2:
            content = v
        elif num == 5:
            floats += list(struct.unpack(f"<{len(v) // 4}f", v)) if wt == 2 else [struct.unpack("<f", v)[0]]
        elif num == 6:
            doubles += list(struct.unpack(f"<{len(v) // 8}d", v)) if wt == 2 else [struct.unpack("<d", v)[0]]
    if floats:
        return float(floats[0])
    if doubles:
        return float(doubles[0])
    if content:
        fmt = {1: "<f", 2: "<d", 3: "<i", 9: "<q"}.get(dtype)
        if fmt and len(content) >= struct.calcsize(fmt):
            return float(struct.unpack(fmt, content[:struct.calcsize(fmt)])[0])
    return math.nan


def _rows_from_tfevents(path: Path) -> _Rows:
    data = path.read_bytes()
    rows, i, rec = _Rows(), 0, 0
    while i < len(data):
        if i + 12 > len(data):
            raise ValueError(f"{path}: truncated TensorBoard record {rec + 1} (byte {i})")
        (n,) = struct.unpack("<Q", data[i:i + 8])
        body = data[i + 12:i + 12 + n]
        if len(body) != n:
            raise ValueError(f"{path}: truncated TensorBoard record {rec + 1} (byte {i})")
        i += 12 + n + 4
        rec += 1
        step, values = None, {}
        try:
            for num, wt, v in _fields(body):
                if num == 2 and wt == 0:
                    step = v - (1 << 64) if v >= 1 << 63 else v
                elif num == 5 and wt == 2:
                    for snum, swt, sv in _fields(v):
                        if snum != 1 or swt != 2:
                            continue
                        tag, val = None, math.nan
                        for vnum, vwt, vv in _fields(sv):
                            if vnum == 1 and vwt == 2:
                                tag = vv.decode("utf-8", "replace")
                            elif vnum == 2 and vwt == 5:
                                val = struct.unpack("<f", vv)[0]
                            elif vnum == 8 and vwt == 2:
                                val = _tensor_scalar(vv)
                        if tag is not None and math.isfinite(val):
                            values[tag] = val
        except (ValueError, struct.error, IndexError) as exc:
            raise ValueError(f"{path}: TensorBoard record {rec} is not a valid Event ({exc})") from None
        if values and step is not None:
            rows.append({"step": step, **values})
            rows.lines.append(None)
    return rows


def _is_tfevents(path: Path) -> bool:
    return "tfevents" in path.name


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                         "expected a CSV, JSON, JSON Lines, console or MLflow log") from None


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
    """(file or folder to read, kind) for a folder argument."""
    for name in ("trainer_state.json", "metrics.csv"):
        if (path / name).is_file():
            return path / name, "file"
    ckpts = sorted((p for p in path.glob("checkpoint-*") if (p / "trainer_state.json").is_file()),
                   key=_checkpoint_number)
    if ckpts:
        return ckpts[-1] / "trainer_state.json", "file"
    events = sorted(p for p in path.glob("*tfevents*") if p.is_file())
    if events:
        return path, "tfevents"
    if (path / "metrics").is_dir() or (path.name == "metrics" and any(path.iterdir())):
        return path, "mlflow"
    raise ValueError(f"{path} is a folder without a log: expected trainer_state.json, metrics.csv, "
                     "checkpoint-*/trainer_state.json, TensorBoard event files or an MLflow metrics/ folder")


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
