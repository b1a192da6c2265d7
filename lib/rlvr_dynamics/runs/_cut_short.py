"""A log that ends inside its last record: the log of a run still writing it (``fit`` pointed at a live run) or of
a run killed while writing it (a job's time limit, an out-of-memory kill). Its whole records are read and a read
note names the one left out, as TensorBoard reads such a file; a file broken anywhere else is still refused.

- Line formats (JSON Lines, CSV, verl console logs, MLflow metric files): their writers end every record with a line
  end, so a last line without one is the record being written. It is left out when it cannot be read as a whole
  record (:func:`without_cut_last_line`): a JSON line that does not parse, a CSV row with fewer fields than the
  header, any MLflow metric line (its file store ends every line it appends; ``… 0.748 4`` of step 40 reads as step
  4), any verl console line that carries a value (``print`` ends every line, and a buffered flush cuts anywhere,
  inside a number too: ``critic/score/mean:0.`` of 0.75 would read 0). A CSV row cut inside its last field cannot be
  told from a whole one (W&B's CSV exports end without a line end) and is read.
- TensorBoard event files: a last record whose length header promises more bytes than the file holds
  (:func:`cut_record_note`, used by :func:`._log_formats._rows_from_tfevents`).

A JSON document (``trainer_state.json``) cut short cannot be read in part and stays an error that says so.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

WHY = "a run still writing this log, or killed while writing it"
"""What a log that ends inside a record means."""


def without_cut_last_line(path: Path, text: str, is_cut: Callable[[str], bool], notes: list[str]) -> str:
    """``text`` without its last line when that line has no line end and ``is_cut`` reads it as a record cut short;
    a note naming the line goes to ``notes``. Anything else is returned as it is (a last line that is whole although
    unterminated is read: a writer that leaves out the final line end)."""
    if not text or text.endswith(("\n", "\r")):
        return text
    head, newline, last = text.rpartition("\n")
    if not last.strip() or not is_cut(last):
        return text
    line = text.count("\n") + 1
    shown = last.strip()
    shown = shown if len(shown) <= 40 else shown[:37] + "…"
    notes.append(f"{path.name}: its last line, line {line} ({shown!r}), has no line end and is not a whole record: "
                 f"read as cut short ({WHY}) and left out; the lines before it are read")
    return head + newline


def cut_record_note(path: Path, record: int, byte: int, size: int) -> str:
    """The read note of an event file that ends inside its record number ``record`` (1-based), which starts at
    ``byte`` of a file of ``size`` bytes."""
    return (f"{path.name}: the file ends inside TensorBoard record {record} (byte {byte} of {size}): read as cut "
            f"short ({WHY}) and left out; the {record - 1} records before it are read")


def json_document_error(path: Path, text: str, exc: json.JSONDecodeError) -> ValueError:
    """The error of a JSON document that does not parse: where, and "cut short" when it ends before it closes (a
    ``trainer_state.json`` of a run killed while it was written), inside a string too."""
    in_last_string = exc.msg.startswith("Unterminated string") and '"' not in text[exc.pos + 1:]
    if exc.pos >= len(text.rstrip()) - 1 or in_last_string:
        return ValueError(f"{path}: the JSON ends at line {text.count(chr(10)) + 1} before the document closes "
                          f"({exc.msg} at line {exc.lineno}, column {exc.colno}): the file was cut short (a run "
                          "killed while writing it?); read an earlier checkpoint's trainer_state.json or the run's "
                          "event files")
    return ValueError(f"{path}: line {exc.lineno} (column {exc.colno}) is not valid JSON ({exc.msg})")
