"""Readers for the less common log formats of :mod:`.logs`: verl console logs, MLflow file-store metrics and
TensorBoard event files (TFRecord framing plus the few protobuf fields of Event/Summary that carry scalars, so
neither TensorFlow nor tensorboard is needed). Each returns rows with their source lines for error messages.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

from ._cut_short import cut_record_note, without_cut_last_line


class _Rows(list):
    """Rows (dicts) with the source line of each (None where there is no line)."""

    def __init__(self, rows=(), lines=None):
        super().__init__(rows)
        self.lines = list(lines) if lines is not None else [None] * len(self)
        self.start_time: float | None = None
        """When the source began (an event file's first wall time, seconds since the epoch), where it says."""


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


_VERL_STEP = re.compile(r"(?:^|[\s(|])step:\s*(-?\d+)\s+-\s+(.*)$")
_VERL_CONTINUATION = re.compile(r"\s*-?\s*[^\s:]*(?::\S*)?(?:\s+-\s*\S+|\s*-\s+\S+)*\s*-?\s*")
_VERL_SEPARATOR = re.compile(r"\s+-\s*|\s*-\s+")
WRAP_MIN_WIDTH = 40
"""A verl console line at least this long may continue on the next line (a terminal or a job scheduler wrapped it)."""


def _verl_records(text: str):
    """(line number, joined text) of each verl step record: a ``step:N - …`` line and the lines that continue it
    when it was wrapped (the previous line at least :data:`WRAP_MIN_WIDTH` characters long, the next one made only of
    ``key:value`` fragments and `` - `` separators; joined without a space, as a wrap cuts anywhere)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _VERL_STEP.search(lines[i])
        if not m:
            i += 1
            continue
        start, joined, prev = i + 1, lines[i].rstrip(), lines[i]
        i += 1
        while i < len(lines) and len(prev.rstrip()) >= WRAP_MIN_WIDTH and lines[i].strip() and \
                not _VERL_STEP.search(lines[i]) and (":" in lines[i] or lines[i].lstrip().startswith("-")) and \
                _VERL_CONTINUATION.fullmatch(lines[i]):
            joined += lines[i].rstrip()
            prev = lines[i]
            i += 1
        yield start, joined


def is_verl_record(line: str) -> bool:
    """Whether a console line carries a verl record or a wrapped piece of one (a ``step:N - …`` line, or only
    ``key:value`` fragments and separators): a tqdm bar or other output does not."""
    return bool(_VERL_STEP.search(line) or (":" in line and _VERL_CONTINUATION.fullmatch(line)))


def _rows_from_console(path: Path, text: str) -> _Rows:
    """verl console logger: ``step:N - key:value - key:value …`` (other lines ignored; wrapped lines joined,
    :func:`_verl_records`)."""
    rows, lines = [], []
    for lineno, record in _verl_records(text):
        m = _VERL_STEP.search(record)
        row: dict[str, object] = {"step": m.group(1)}
        for part in _VERL_SEPARATOR.split(m.group(2)):
            if ":" in part:
                k, v = part.rsplit(":", 1)
                row[k.strip()] = v.strip()
        rows.append(row)
        lines.append(lineno)
    return _Rows(rows, lines)


# --- TRL / accelerate console logs: the dicts transformers' ProgressCallback prints, amid tqdm bars ---

_TRL_DICT = re.compile(r"\{'[^'{}\n\r]+': [^{}\n\r]*\}")
_TQDM_COUNT = re.compile(r"\|\s*(\d+)/(\d+)\s*\[")
_TRAINING_KEYS = ("loss", "reward", "grad_norm", "learning_rate")


def is_trl_console(text: str) -> bool:
    """Whether ``text`` holds the ``{'loss': …, 'reward': …}`` dicts a transformers trainer prints."""
    return any(_TRL_DICT.search(m.group(0)) and _dict_row(m.group(0)) is not None
               for m in _TRL_DICT.finditer(text[:2_000_000]))


_NUMBER_REPR = re.compile(r"\b(?:(?:np|numpy|torch)\.)?(?:float(?:16|32|64)|int(?:32|64)|tensor|array)\(\s*\[?\s*"
                          r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf)\s*\]?(?:,[^()]*)?\)")
"""A number printed as NumPy 2 or torch print it (``np.float32(0.25)``, ``tensor(0.01, device='cuda:0')``): a metric
a callback logged without ``.item()``; its first argument is the value."""


def _dict_row(text: str) -> dict | None:
    """A printed log dict; one that holds NumPy or torch number reprs (:data:`_NUMBER_REPR`) is read with their
    values (before, such a dict was not a row, and the reward of its step was lost)."""
    import ast

    for attempt in (text, _NUMBER_REPR.sub(lambda m: m.group(1) if m.group(1)[-1].isdigit() else repr(m.group(1)),
                                           text)):
        try:
            obj = ast.literal_eval(attempt)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        return obj if isinstance(obj, dict) and all(isinstance(k, str) for k in obj) else None
    return None


def _rows_from_trl_console(path: Path, text: str) -> tuple[_Rows, list[str]]:
    """The printed log dicts of a transformers / TRL run (``{'loss': '0.01', 'reward': '0.5', 'epoch': '0.1'}``,
    floats printed as quoted text), also inside a SLURM ``.out`` file among tqdm bars and other output. The final
    summary (``train_runtime``) is skipped. The dicts carry no step: a dict's own ``step`` is used where it has one;
    else each training row (one with ``loss``, ``reward``, ``grad_norm`` or ``learning_rate``) is the next logged
    row, and an evaluation dict joins the row before it. Rows are numbered 1, 2, …, or k·L when the progress bars
    say the logging interval L (their highest count is L × the number of rows, and ``epoch`` grows in proportion);
    the notes say which."""
    rows, lines, counts, epochs = [], [], [], []
    k = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        counts += [int(m.group(1)) for m in _TQDM_COUNT.finditer(line)]
        for m in _TRL_DICT.finditer(line):
            row = _dict_row(m.group(0))
            if row is None or "train_runtime" in row:
                continue
            if "step" not in row and "global_step" not in row:
                if any(key in row for key in _TRAINING_KEYS) or k == 0:
                    k += 1
                    epochs.append(row.get("epoch"))
                row = {**row, "step": k}
            rows.append(row)
            lines.append(lineno)
    notes = []
    if k:
        interval = _logging_interval(max(counts, default=0), k, epochs)
        if interval > 1:
            for row in rows:
                row["step"] = row["step"] * interval if isinstance(row["step"], int) else row["step"]
            notes.append(f"steps inferred: the printed dicts carry no step; row k is step {interval}·k (the "
                         f"progress bar reached {max(counts)} in {k} logged rows, 'epoch' grows in proportion)")
        else:
            notes.append(f"steps inferred: the printed dicts carry no step; they are numbered by their order "
                         f"1…{k} (logged rows, not optimizer steps)")
    return _Rows(rows, lines), notes


def _logging_interval(last_count: int, n_rows: int, epochs: list) -> int:
    """L when the progress bar's highest count is exactly L × ``n_rows`` and each row's ``epoch`` is k × the
    first's (within the printed 4 digits); 1 otherwise."""
    if n_rows < 2 or last_count < n_rows or last_count % n_rows:
        return 1
    try:
        e = [float(x) for x in epochs]
    except (TypeError, ValueError):
        return last_count // n_rows if all(x is None for x in epochs) else 1
    if e[0] <= 0 or any(abs(x / e[0] - (i + 1)) > 2e-3 * (i + 1) + 0.5 / 1e4 * (i + 1) / e[0] for i, x in
                        enumerate(e)):
        return 1
    return last_count // n_rows


# --- Weights & Biases offline runs ---

def rows_from_wandb_file(path: Path) -> _Rows:
    """The history records of a W&B run file (``run-<id>.wandb``, W&B's own binary log) through the ``wandb``
    package; ValueError naming the file when the package is not installed (it is not a requirement of this
    project) or the file cannot be read by it."""
    try:
        from wandb.proto import wandb_internal_pb2
        from wandb.sdk.internal import datastore
    except ImportError:
        raise ValueError(f"{path}: a W&B binary run file (.wandb); reading it needs the wandb package (pip install "
                         "wandb), which is not installed: install it, or point at the run's "
                         "files/wandb-history.jsonl where there is one, or export the run's history as CSV from W&B"
                         ) from None
    import json

    rows = _Rows()
    try:
        store = datastore.DataStore()
        store.open_for_scan(str(path))
        while True:
            data = store.scan_data()
            if data is None:
                break
            rec = wandb_internal_pb2.Record()
            rec.ParseFromString(data)
            if rec.WhichOneof("record_type") != "history":
                continue
            row = {}
            for item in rec.history.item:
                key = item.key or "/".join(item.nested_key)
                try:
                    row[key] = json.loads(item.value_json)
                except ValueError:
                    row[key] = item.value_json
            rows.append(row)
            rows.lines.append(None)
    except Exception as exc:  # noqa: BLE001 - whatever wandb raises on a bad file is the file's problem
        raise ValueError(f"{path}: the wandb package could not read this run file ({type(exc).__name__}: {exc})"
                         ) from None
    return rows


def wandb_run_file(folder: Path) -> Path | None:
    """The log of a W&B run folder (``wandb/offline-run-<date>-<id>/`` or ``run-…``): its
    ``files/wandb-history.jsonl`` where there is one (no package needed), else its ``run-<id>.wandb``."""
    history = folder / "files" / "wandb-history.jsonl"
    if history.is_file():
        return history
    found = sorted(folder.glob("*.wandb"))
    return found[-1] if found else None


_MLFLOW_LINE = re.compile(r"^\s*-?\d+\s+\S+\s+-?\d+\s*$")


def _mlflow_metric_rows(path: Path, name: str, notes: list[str]) -> _Rows:
    rows, lines = [], []
    text = without_cut_last_line(path, _read_text(path), lambda ln: True, notes)   # MLflow ends every line it writes
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"{path}: line {i} is not an MLflow metric line 'timestamp value step'")
        rows.append({"step": parts[2], name: parts[1]})
        lines.append(i)
    return _Rows(rows, lines)


def _rows_from_mlflow(folder: Path, notes: list[str]) -> _Rows:
    metrics = folder / "metrics" if (folder / "metrics").is_dir() else folder
    files = sorted(p for p in metrics.rglob("*") if p.is_file())
    if not files:
        raise ValueError(f"{folder}: an MLflow metrics folder without metric files")
    out = _Rows()
    for f in files:
        part = _mlflow_metric_rows(f, f.relative_to(metrics).as_posix(), notes)
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


def _tensor_scalar(buf: bytes) -> float | None:
    """The scalar a TensorProto holds (NaN and inf as they are), None when it holds none (a text summary)."""
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
    return None


def _rows_from_tfevents(path: Path, notes: list[str] | None = None) -> _Rows:
    """The scalar rows of an event file; one that ends inside its last record (:mod:`._cut_short`) is read to the
    record before, with a note in ``notes``."""
    data = path.read_bytes()
    rows, i, rec = _Rows(), 0, 0
    while i < len(data):
        header_cut = i + 12 > len(data)
        (n,) = (0,) if header_cut else struct.unpack("<Q", data[i:i + 8])
        body = data[i + 12:i + 12 + n]
        if header_cut or len(body) != n:
            (notes if notes is not None else []).append(cut_record_note(path, rec + 1, i, len(data)))
            break
        i += 12 + n + 4
        rec += 1
        step, values = None, {}
        try:
            for num, wt, v in _fields(body):
                if num == 1 and wt == 1 and rows.start_time is None:
                    rows.start_time = struct.unpack("<d", v)[0]      # the file's first wall time: when its run began
                elif num == 2 and wt == 0:
                    step = v - (1 << 64) if v >= 1 << 63 else v
                elif num == 5 and wt == 2:
                    for snum, swt, sv in _fields(v):
                        if snum != 1 or swt != 2:
                            continue
                        tag, val = None, None
                        for vnum, vwt, vv in _fields(sv):
                            if vnum == 1 and vwt == 2:
                                tag = vv.decode("utf-8", "replace")
                            elif vnum == 2 and vwt == 5:
                                val = struct.unpack("<f", vv)[0]
                            elif vnum == 8 and vwt == 2:
                                val = _tensor_scalar(vv)
                        if tag is not None and val is not None:
                            values[tag] = val        # NaN and inf too: the reading counts them
        except (ValueError, struct.error, IndexError) as exc:
            raise ValueError(f"{path}: TensorBoard record {rec} is not a valid Event ({exc})") from None
        if values and step is not None:
            rows.append({"step": step, **values})
            rows.lines.append(None)
    return rows


def tfevents_texts(path: Path) -> dict[str, str]:
    """Text summaries of a TensorBoard event file, ``{tag: text}`` (the last one per tag). transformers'
    ``TensorBoardCallback`` writes the whole ``TrainingArguments`` as JSON under ``args`` (tag ``args/text_summary``
    from ``SummaryWriter.add_text``): TensorProto field 8 (``string_val``) of a value with the ``text`` plugin.
    Malformed records are skipped (this is a convenience for reading hyper-parameters, never an error)."""
    data = path.read_bytes()
    out: dict[str, str] = {}
    i = 0
    while i + 12 <= len(data):
        (n,) = struct.unpack("<Q", data[i:i + 8])
        body = data[i + 12:i + 12 + n]
        i += 12 + n + 4
        try:
            for num, wt, v in _fields(body):
                if num != 5 or wt != 2:
                    continue
                for snum, swt, sv in _fields(v):
                    if snum != 1 or swt != 2:
                        continue
                    tag, text = None, None
                    for vnum, vwt, vv in _fields(sv):
                        if vnum == 1 and vwt == 2:
                            tag = vv.decode("utf-8", "replace")
                        elif vnum == 8 and vwt == 2:
                            for tnum, twt, tv in _fields(vv):
                                if tnum == 8 and twt == 2:
                                    text = tv.decode("utf-8", "replace")
                    if tag is not None and text is not None:
                        out[tag] = text
        except (ValueError, struct.error, IndexError):
            continue
    return out


def _is_tfevents(path: Path) -> bool:
    return "tfevents" in path.name
