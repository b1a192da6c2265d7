"""Rows of one log source → one value per step (:class:`StepTable`), several sources of one run → one log
(:func:`order`, :func:`combine`), one table → column arrays (:func:`columns`), and what the reading dropped or
joined, in words (:func:`describe_bad_cells`, :func:`gap_notes`, :func:`segment_note`).

**Segments.** A TRL ``output_dir`` of a run that was stopped and resumed (``trainer.train(resume_from_checkpoint=…)``)
holds several sources: one TensorBoard event file per ``train()`` call under ``runs/<date>/`` (each from the step its
run started at), the newest ``checkpoint-N/trainer_state.json`` (the history up to step N, as the run that saved it
had it) and ``trainer_state.json`` (``trainer.save_state()``). They are read as segments and put in the order they were
written (:func:`order`), from what the files say, not from their modification times (a copied folder has new ones):

- an event file by its first wall time (when its run began);
- a ``trainer_state.json`` right after the latest-begun event file that agrees with it at the last step they share
  (the run that saved it); by modification time only when no event file agrees with it.

They are combined (:func:`combine`), oldest first:

- on a step two segments both logged, the newer segment's value wins, column by column;
- a step an older segment logged that a newer segment covers but lacks is dropped: an event file covers every step
  from its first on (the run it records started there: a killed run's steps after the checkpoint the next run resumed
  from were redone), a ``trainer_state.json`` the steps from its first to its last (every step from its first on
  when it disagrees with an older event file: a newer run, without event files, redid those steps);
- the rest is kept, so a run killed between two saves is read to its last logged step.

When a ``trainer_state.json`` is among the segments, TensorBoard tags are renamed back to the trainer's own names
(transformers' ``rewrite_logs``: ``train/reward`` → ``reward``, ``eval/reward`` → ``eval_reward``), so both name one
column.
"""
from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BOOKKEEPING = frozenset({"epoch", "total_flos", "train_runtime", "_runtime", "_timestamp", "timestamp",
                         "wall_time", "Wall time", "_step", "train/epoch", "train/total_flos", "train/train_runtime"})
"""Columns a repeated step may carry with different values (time stamps, epoch counters, W&B's own ``_step``, which
counts every ``wandb.log`` call: transformers' W&B callback logs the training and the evaluation metrics of one
``train/global_step`` in two calls): the last one is kept."""

NAN_WORDS = frozenset({"nan", "-nan", "+nan"})
INF_WORDS = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


def to_float(value) -> float:
    """A cell as a float; NaN for an empty, missing, non-numeric or non-finite cell (:func:`cell_problem` says
    which)."""
    if value is None or value == "":
        return math.nan
    if isinstance(value, bool):
        return float(value)
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def cell_problem(value) -> str | None:
    """Why a non-empty cell gives no finite value: ``"NaN"``, ``"infinite"`` or ``"non-numeric"``; None for a
    finite number or an empty cell (a step that did not log the column)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, (dict, list)):
        return "non-numeric"
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        text = str(value).strip().lower()
        return None if not text else "NaN" if text in NAN_WORDS else "infinite" if text in INF_WORDS else \
            "non-numeric"
    if math.isnan(x):
        return "NaN"
    return "infinite" if math.isinf(x) else None


@dataclass
class StepTable:
    """One source's rows merged to one value per step and column."""

    source: Path
    step_key: str
    values: dict[int, dict[str, float]]
    """step → column → value (NaN for a cell that gave no finite value)."""
    where: dict[int, str]
    """step → "file: line N" (or "file: entry N") of the step's first row, for error messages."""
    bad: dict[str, dict[int, tuple[str, object]]] = field(default_factory=dict)
    """column → step → (problem, raw cell) for the cells :func:`cell_problem` refuses."""
    kind: str = "file"
    """``"events"`` for a TensorBoard event file, else ``"file"``."""
    open_ended: bool = False
    """Whether it covers every step from its first on (:func:`order`): an event file, or a ``trainer_state.json``
    that redid steps an older event file logged (else it covers its first to its last step)."""
    start: float = 0.0
    """When the source was written (seconds since the epoch): an event file's first wall time, else the file's
    modification time; :func:`order` uses it where the contents do not say."""

    @functools.cached_property
    def first_step(self) -> int:
        return min(self.values)        # cached: :func:`combine` asks once per step of every older segment

    @functools.cached_property
    def last_step(self) -> int:
        return max(self.values)


def where(path: Path, rows, i: int) -> str:
    line = rows.lines[i] if i < len(rows.lines) else None
    return f"{path}: line {line}" if line is not None else f"{path}: entry {i + 1}"


def step_table(path: Path, rows, step_columns: tuple[str, ...], is_doctor_output) -> StepTable:
    """Merge ``rows`` (a ``_Rows``) to one value per step; a row without a step value (none, empty) is left out, as
    it cannot be placed. ValueError naming the file and line: no step column, a non-integer step, a step repeated
    with a different value of a measurement (rows of one step with disjoint columns, such as TRL's training and
    evaluation entries, are merged; :data:`BOOKKEEPING` columns and the live doctor's own outputs keep the later
    value)."""
    keys = {k for k in set().union(*rows) if isinstance(k, str)}
    lower = {k.lower(): k for k in sorted(keys)}
    step_key = next((lower[k] for k in step_columns if k in lower), None)
    if step_key is None:
        raise ValueError(f"{path}: no step column; expected one of {list(step_columns)} (any case), found "
                         f"{sorted(keys)[:12]}")
    merged: dict[int, dict[str, float]] = {}
    origin: dict[int, int] = {}
    bad: dict[str, dict[int, tuple[str, object]]] = {}
    for i, row in enumerate(rows):
        raw = row.get(step_key)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue        # a row without a step (W&B logs a table of completions in a call of its own): not placed
        step = to_float(raw)
        if not math.isfinite(step) or step != int(step) or abs(step) > 2 ** 53:
            raise ValueError(f"{where(path, rows, i)}: invalid {step_key!r} value {raw!r} (an integer step is "
                             "required)")
        step = int(step)
        if step not in merged:       # the first row of a step (the common case): no earlier value to compare with
            merged[step] = _first_row(row, step_key, step, bad)
            origin[step] = i
            continue
        target = merged[step]
        first = origin[step]
        for k, v in row.items():
            if k == step_key or not isinstance(k, str):
                continue
            x = to_float(v) if not isinstance(v, (dict, list)) else math.nan
            if not math.isfinite(x):
                problem = cell_problem(v)
                if problem is not None and not math.isfinite(target.get(k, math.nan)):
                    bad.setdefault(k, {})[step] = (problem, v)
            old = target.get(k, math.nan)
            if math.isfinite(x) and math.isfinite(old) and x != old and is_doctor_output(k):
                target[k] = x      # the live doctor's own outputs: its later (final) report supersedes the earlier
                continue
            if math.isfinite(x) and math.isfinite(old) and x != old and k not in BOOKKEEPING:
                raise ValueError(f"{where(path, rows, i)}: step {step} is repeated ({where(path, rows, first)}) "
                                 f"with a different {k!r} ({old!r} vs {x!r}); a log must have one value per step")
            if math.isfinite(x) or k not in target:
                target[k] = x if not (k in BOOKKEEPING and not math.isfinite(x)) else target.get(k, x)
            if math.isfinite(x) and k in bad:
                bad[k].pop(step, None)
    if not merged:
        raise ValueError(f"{path}: no row has a {step_key!r} value")
    return StepTable(path, step_key, merged, {s: where(path, rows, i) for s, i in origin.items()}, bad)


def resumed_table(path: Path, rows, step_columns: tuple[str, ...], is_doctor_output) -> tuple[StepTable, str | None]:
    """:func:`step_table` of one source, and a read note or None. A file whose steps go back (a run resumed from a
    checkpoint that appended to the log the run before it wrote: steps 1–100, then 81–150) repeats steps with other
    values; it is read as segments cut where the step goes back, each covering every step from its first on, the
    later winning (:func:`combine`). Only a file :func:`step_table` refuses is cut, so rows appended out of order
    with other columns (evaluations after training) are merged as before; a step repeated within a segment is still
    the error it was."""
    try:
        return step_table(path, rows, step_columns, is_doctor_output), None
    except ValueError as exc:
        lower = {k.lower(): k for r in rows for k in r if isinstance(k, str)}
        key = next((lower[k] for k in step_columns if k in lower), None)
        steps = [to_float(r.get(key)) for r in rows]
        last = [x for x in steps]                 # the last finite step at or before each row
        for i in range(1, len(last)):
            last[i] = last[i] if last[i] == last[i] else last[i - 1]
        cuts = [i for i in range(1, len(rows)) if steps[i] < last[i - 1]]
        if "is repeated" not in str(exc) or not cuts:
            raise
    bounds = [0] + cuts + [len(rows)]
    pieces = [step_table(path, type(rows)(rows[a:b], rows.lines[a:b]), step_columns, is_doctor_output)
              for a, b in zip(bounds, bounds[1:]) if b > a]
    for t in pieces:
        t.open_ended = True
    dropped = sum(1 for n, t in enumerate(pieces) for st in t.values if any(st >= u.first_step for u in pieces[n + 1:]))
    first = bounds[1]
    note = (f"the steps go back {len(pieces) - 1} time(s) (at {where(path, rows, first)}: step {steps[first]:g} after "
            f"{last[first - 1]:g}): a run resumed from a checkpoint appended to this log; the later rows are read, "
            f"{dropped} earlier rows of the steps redone are dropped")
    return combine(pieces), note


def _first_row(row, step_key: str, step: int, bad: dict) -> dict[str, float]:
    """The values of a step's first row (what :func:`step_table`'s merge gives when nothing came before): every
    cell as :func:`to_float`, a non-finite one's problem recorded in ``bad``.

    A loader's hot loop (a third of reading 900 logs): the cells are converted by ``float`` in one comprehension, an
    empty cell (a column this step did not log) to NaN, and only the non-finite values are looked at again; a cell
    ``float`` refuses (non-numeric, None, nested) sends the row through the cell-by-cell path. The same values and
    problems either way."""
    try:
        target = {k: (float(v) if v != "" else math.nan) for k, v in row.items()
                  if k.__class__ is str and k != step_key}
    except (TypeError, ValueError, OverflowError):
        pass
    else:
        if not all(map(math.isfinite, target.values())):
            for k, x in target.items():
                if not math.isfinite(x):
                    v = row[k]
                    if v != "":
                        target[k] = math.nan
                        problem = cell_problem(v)
                        if problem is not None:
                            bad.setdefault(k, {})[step] = (problem, v)
        return target
    target = {}
    for k, v in row.items():
        if k == step_key or not isinstance(k, str):
            continue
        x = to_float(v) if not isinstance(v, (dict, list)) else math.nan
        if x != x:
            problem = cell_problem(v)
            if problem is not None:
                bad.setdefault(k, {})[step] = (problem, v)
        target[k] = x
    return target


def columns(merged: dict[int, dict[str, float]], steps: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """``{name: values at steps}``, NaN where a step lacks the name. When every step has every name (a CSV log, most
    logs) the rows are gathered with one ``itemgetter`` each into one array, not cell by cell."""
    rows = [merged[s] for s in steps.tolist()]
    if names and rows:
        try:
            gathered = list(map(operator.itemgetter(*names), rows))
        except KeyError:
            pass
        else:
            table = np.array(gathered, dtype=float).reshape(len(rows), len(names))
            return {n: table[:, j].copy() for j, n in enumerate(names)}
    return {n: np.array([r.get(n, math.nan) for r in rows], dtype=float) for n in names}


def untrl_tensorboard_name(tag: str) -> str:
    """The trainer's own name of a TensorBoard tag transformers wrote (the inverse of ``rewrite_logs``)."""
    if tag.startswith("train/"):
        return tag[len("train/"):]
    for prefix in ("eval", "test"):
        if tag.startswith(prefix + "/"):
            return f"{prefix}_{tag[len(prefix) + 1:]}"
    return tag


def _agrees(a: StepTable, b: StepTable, step: int) -> bool:
    """Whether ``a`` and ``b`` logged ``step`` with the same values (within float32 rounding: TensorBoard keeps 32
    bits) on at least one measurement they share."""
    ra, rb = a.values.get(step), b.values.get(step)
    if ra is None or rb is None:
        return False
    shared = [k for k in ra if k in rb and k not in BOOKKEEPING and math.isfinite(ra[k]) and math.isfinite(rb[k])]
    return bool(shared) and all(abs(ra[k] - rb[k]) <= 1e-6 * max(abs(ra[k]), abs(rb[k])) + 1e-30 for k in shared)


def _latest_shared(a: StepTable, b: StepTable) -> int | None:
    shared = [step for step in a.values if step in b.values]
    return max(shared) if shared else None


def order(tables: list[StepTable]) -> list[StepTable]:
    """The segments in the order they were written, oldest first (module docstring).

    Event files by their first wall time. Each other source (a ``trainer_state.json``) right after the latest-begun
    event file that agrees with it at the last step they share (the run that saved it: it covers its own steps
    only, so that run's steps after the save are kept), else by its modification time; placed so, and disagreeing
    with an event file before it at a shared step, it is a newer run that redid those steps, and covers every step
    from its first on (``open_ended``)."""
    out = sorted((t for t in tables if t.kind == "events"), key=lambda t: (t.start, str(t.source)))
    for s in sorted((t for t in tables if t.kind != "events"), key=lambda t: (t.last_step, t.start)):
        at = next((i for i in range(len(out) - 1, -1, -1) if out[i].kind == "events" and
                   _latest_shared(out[i], s) is not None and _agrees(out[i], s, _latest_shared(out[i], s))), None)
        if at is None:
            at = max((i for i, t in enumerate(out) if t.start <= s.start), default=-1)
            s.open_ended = any(t.kind == "events" and _latest_shared(t, s) is not None and
                               not _agrees(t, s, _latest_shared(t, s)) for t in out[:at + 1])
        at += 1
        while at < len(out) and out[at].kind != "events":
            at += 1
        out.insert(at, s)
    return out


def _covers(t: StepTable, step: int) -> bool:
    """Whether segment ``t`` speaks for ``step`` (module docstring): an event file from its first step on, another
    source from its first to its last (unless :func:`order` found it open-ended)."""
    return step >= t.first_step and (t.open_ended or step <= t.last_step)


def combine(tables: list[StepTable]) -> StepTable:
    """One table from segments given oldest first (:func:`order`, module docstring); its ``source`` is the newest
    segment's."""
    if len(tables) == 1:
        return tables[0]
    values: dict[int, dict[str, float]] = {}
    where_: dict[int, str] = {}
    bad: dict[str, dict[int, tuple[str, object]]] = {}
    for n, t in enumerate(tables):
        later = tables[n + 1:]
        for step, row in t.values.items():
            if any(_covers(u, step) and step not in u.values for u in later):
                continue                       # redone by a run that followed
            target = values.setdefault(step, {})
            where_.setdefault(step, t.where[step])
            for k, x in row.items():
                cell = t.bad.get(k, {}).get(step)
                if math.isfinite(x) or cell is not None or k not in target:
                    target[k] = x              # a newer segment's value (or refused cell) wins
                    if cell is not None:
                        bad.setdefault(k, {})[step] = cell
                    elif k in bad:
                        bad[k].pop(step, None)
                    if math.isfinite(x) or cell is not None:
                        where_[step] = t.where[step]
    return StepTable(tables[-1].source, tables[-1].step_key, values, where_, bad, tables[-1].kind,
                     tables[-1].open_ended, tables[-1].start)


def _steps_text(steps: list[int], most: int = 6) -> str:
    if len(steps) <= most:
        return ", ".join(map(str, steps))
    return ", ".join(map(str, steps[:most - 1])) + f", … {steps[-1]}"


def describe_bad_cells(column: str, cells: dict[int, tuple[str, object]]) -> list[str]:
    """One line per kind of dropped cell: ``3 NaN rewards at steps 40, 50, 60``, ``1 non-numeric reward cell
    ('n/a') at step 30``."""
    lines = []
    noun = "reward" if "reward" in column.lower() or column.lower() in ("accuracy", "critic/score/mean") else \
        f"{column!r} value"
    for kind in ("NaN", "infinite", "non-numeric"):
        steps = sorted(s for s, (k, _) in cells.items() if k == kind)
        if not steps:
            continue
        n, at = len(steps), f"at step{'s' if len(steps) > 1 else ''} {_steps_text(steps)}"
        if kind == "non-numeric":
            shown = list(dict.fromkeys(str(cells[s][1])[:20] for s in steps))[:3]
            lines.append(f"{n} non-numeric {noun} cell{'s' if n > 1 else ''} "
                         f"({', '.join(repr(v) for v in shown)}) {at}")
        else:
            lines.append(f"{n} {kind} {noun}{'s' if n > 1 else ''} {at}")
    return lines


def gap_notes(steps: np.ndarray, most: int = 5) -> list[str]:
    """``gap: no logged step between 60 and 90`` for each spacing larger than 1.5× the median spacing (the log's
    usual spacing), at most ``most`` lines (then how many more)."""
    steps = np.asarray(steps)
    if steps.size < 3:
        return []
    d = np.diff(steps)
    usual = float(np.median(d))
    at = np.flatnonzero(d > 1.5 * usual)
    lines = [f"gap: no logged step between {int(steps[i])} and {int(steps[i + 1])} (the log's usual spacing is "
             f"{usual:g})" for i in at[:most]]
    if at.size > most:
        lines.append(f"… and {at.size - most} more gaps")
    return lines


def segment_note(tables: list[StepTable], base: Path) -> str:
    """``3 segments, the newest wins where they overlap: runs/Dec01/events… (steps 10–60), …``."""
    def name(p: Path) -> str:
        try:
            return str(p.relative_to(base))
        except ValueError:
            return str(p)
    parts = [f"{name(t.source)} (steps {t.first_step}–{t.last_step})" for t in tables]
    return f"{len(tables)} segments, oldest first, the newest wins where they overlap: " + ", ".join(parts)
