"""Readers for the less common log formats of :mod:`.logs`: verl console logs, MLflow file-store metrics and
TensorBoard event files (TFRecord framing plus the few protobuf fields of Event/Summary that carry scalars, so
neither TensorFlow nor tensorboard is needed). Each returns rows with their source lines for error messages.
"""
from __future__ import annotations

import math
import re
import struct
from pathlib import Path


class _Rows(list):
    """Rows (dicts) with the source line of each (None where there is no line)."""

    def __init__(self, rows=(), lines=None):
        super().__init__(rows)
        self.lines = list(lines) if lines is not None else [None] * len(self)


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
