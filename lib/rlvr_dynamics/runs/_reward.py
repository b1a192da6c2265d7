"""The reward column of a log and the values no reading can use: which column is the reward
(:func:`find_reward_column`: only ever a reward), a reward beyond ±:data:`REWARD_LIMIT` (read as missing:
:func:`beyond_limit_rewards`), values of other columns beyond ±:data:`VALUE_LIMIT` (:func:`overflowing_cells`) and a
reward that never moves (:func:`constant_reward_note`)."""
from __future__ import annotations

import math

import numpy as np

from ._segments import StepTable, _steps_text, describe_bad_cells

REWARD_LIMIT = 1e12
"""A reward beyond ± this is read as missing (a diverged reward model, a unit or logging error): no fit can use it,
and the arithmetic of one would overflow (:func:`beyond_limit_rewards`)."""


def _aliases(name: str) -> list[str]:
    """A column's name as the trainer logs it and as TensorBoard and W&B name it (``reward``, ``train/reward``;
    ``eval_reward``, ``eval/reward``)."""
    out = [name]
    if name.startswith("train/"):
        out.append(name[len("train/"):])
    else:
        out.append("train/" + name)
    if name.startswith("eval_"):
        out.append("eval/" + name[len("eval_"):])
    elif name.startswith("eval/"):
        out.append("eval_" + name[len("eval/"):])
    return out


def find_reward_column(table: StepTable, series: dict, keys: set[str], reward_column: str | None,
                       single_metric: str | None, candidates: tuple[str, ...]) -> str:
    """The reward column: the one named (or its TensorBoard/W&B alias), else the first of ``candidates``
    (:data:`~.logs.REWARD_COLUMNS`) the log has, else the one metric of a TensorBoard UI export; never another
    signal. ValueError when the column has no finite value (naming it, the dropped cells and the columns found) or
    none is found."""
    path = table.source

    def empty(name: str) -> ValueError:
        why = "; ".join(describe_bad_cells(name, table.bad.get(name, {}))) or "every cell is empty"
        return ValueError(f"{path}: reward column {name!r} has no finite value ({why}); columns found: "
                          f"{sorted(keys)}; {_choices(series, '(--reward-column) ')}" + _per_function_hint(series))

    if reward_column is not None:
        for name in _aliases(reward_column):
            if name in series:
                return name
        for name in _aliases(reward_column):
            if name in keys:
                raise empty(name)
        raise ValueError(f"{path}: reward_column {reward_column!r} not found; numeric columns: {sorted(series)}")
    lower = {k.lower(): k for k in sorted(keys)}
    for c in candidates:
        if c in lower:
            if lower[c] in series:
                return lower[c]
            raise empty(lower[c])
    if single_metric is not None and single_metric in series:
        return single_metric          # a one-metric export (TensorBoard UI), named after its file
    raise ValueError(f"{path}: no reward column among {list(candidates)}; {_choices(series, '(--reward-column) ')}"
                     + _per_function_hint(series))


def _per_function_hint(series: dict) -> str:
    """What TRL's per-function reward columns are, where the log has them: terms of the training reward."""
    per_function = sorted(k for k in series if k.startswith(("rewards/", "train/rewards/")) and k.endswith("/mean"))
    return (f" (TRL's per-function rewards {per_function} are there: the training reward is their sum, weighted by "
            "reward_weights, 1 each by default; one of them alone is one term of it)") if per_function else ""


def _choices(series: dict, flag: str = "") -> str:
    """What the user can pass instead: the log's numeric columns, or that it has none."""
    if not series:
        return "the log has no numeric column with a finite value to pass as reward_column="
    return f"pass reward_column= {flag}one of the numeric columns {sorted(series)}"


def beyond_limit_rewards(reward: np.ndarray, steps: np.ndarray, column: str) -> tuple[list[str], np.ndarray]:
    """Set the rewards beyond ±:data:`REWARD_LIMIT` to NaN (in place), as an infinite cell is read: missing, so
    one such row (a reward model that blew up once, a logging error) leaves the rest of the run readable, and a run
    that goes on logging them reads as diverged (non-finite rewards, :mod:`~rlvr_dynamics.doctor.divergence`), as
    the live doctor reads it. ``(notes, at)``: one note naming the column, the steps and the first value (none when
    there is none), and the indices set to NaN."""
    with np.errstate(invalid="ignore"):
        at = np.flatnonzero(np.abs(reward) > REWARD_LIMIT)
    if not at.size:
        return [], at
    first = float(reward[at[0]])
    reward[at] = math.nan
    n = int(at.size)
    return [f"{n} {column!r} value{'s' if n > 1 else ''} beyond ±{REWARD_LIMIT:g} ({first:g}{'…' if n > 1 else ''}) "
            f"at step{'s' if n > 1 else ''} {_steps_text([int(s) for s in steps[at]])}, read as missing (a reward "
            "model that blew up, a unit or logging error?)"], at


VALUE_LIMIT = 1e150
"""A value of another column beyond ± this is read as infinite, i.e. missing, like an ``inf`` cell (a blown-up loss
or gradient norm: the squares that step noise and variances need would overflow float64); the reading says so."""


def overflowing_cells(series: dict[str, np.ndarray], steps: np.ndarray, reward_column: str) -> list[str]:
    """Set the cells beyond ±:data:`VALUE_LIMIT` of every column but the reward to NaN (in place); one note naming
    the columns, the first step of each and the value."""
    found, seen = [], {id(series[reward_column])}       # a bare dynamics name shares its namespaced column's array
    for name, values in series.items():
        if id(values) in seen:
            continue
        seen.add(id(values))
        with np.errstate(invalid="ignore"):
            at = np.flatnonzero(np.abs(values) > VALUE_LIMIT)
        if at.size:
            found.append(f"{name!r} at step{'s' if at.size > 1 else ''} {int(steps[at[0]])}"
                         f"{'…' if at.size > 1 else ''} ({float(values[at[0]])!r})")
            values[at] = math.nan
    return [f"values beyond ±{VALUE_LIMIT:g} read as infinite (missing): " + ", ".join(found)] if found else []


CONSTANT_MIN_POINTS = 10
"""A reward with one exact value at every one of at least this many logged points gets a read note."""


def constant_reward_note(reward: np.ndarray, reward_column: str) -> list[str]:
    """One note when the reward takes one exact value at every logged point (at least :data:`CONSTANT_MIN_POINTS`),
    the first included: at 0 no completion was ever rewarded, not even before training moved the model (a task
    beyond it, or a reward function that never pays); at any other value the reward never moved (a reward function
    that pays every completion the same, a setting read as the reward, a task every completion solves). The reading
    goes on; the note says what to check."""
    v = reward[np.isfinite(reward)]
    if v.size < CONSTANT_MIN_POINTS or float(np.ptp(v)) > 0.0:
        return []
    head = (f"the reward column {reward_column!r} is exactly {float(v[0]):g} at all {v.size} logged points, the first "
            "included: ")
    if v[0] == 0.0:
        return [head + "no completion was ever rewarded, not even before training moved the model (a task beyond the "
                "model, or a reward function that never pays: check it on a right completion)"]
    return [head + "the reward never moved (a reward function that pays every completion the same, a setting read as "
            "the reward, or a task every completion solves); check the reward function on a right and a wrong "
            "completion, and that this column is the training reward (pass --reward-column otherwise)"]
