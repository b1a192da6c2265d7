"""The run store's writing side: what a training run writes into ``data/runs/<run-id>/`` besides its config.

``metrics.csv`` has one row per optimizer step with every TRL metric plus the dynamics callback's; wall-clock
timings are left out so that the same seed gives a byte-identical file. Reading finished runs is
:mod:`rlvr_dynamics.runs.committed` (never imports the trainer).
"""
from __future__ import annotations

import csv
import io
import math
import os
import subprocess
from typing import Any

from ..paths import REPO_ROOT
from .fields import bare_name

TIMING_KEYS = ("step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos",
               "train_loss")
"""Logged keys left out of ``metrics.csv`` (wall-clock dependent, or end-of-run summaries)."""

LEADING_COLUMNS = ("step", "reward", "reward_std", "frac_reward_zero_std", "group_reward_std", "entropy", "kl",
                   "grad_norm", "learning_rate", "loss", "gap_alignment", "cumulative_gap_alignment",
                   "eval_reward", "eval_reward_sampled", "eval_step")
"""Columns first in ``metrics.csv`` (when present); the rest follow in sorted order."""


def git_commit() -> str:
    """HEAD of the repository (``$RLVR_GIT_COMMIT`` overrides it, for copies of the tree without ``.git``)."""
    if os.environ.get("RLVR_GIT_COMMIT"):
        return os.environ["RLVR_GIT_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip() or "unknown"
    except Exception:  # pragma: no cover
        return "unknown"


def package_versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for pkg in ("torch", "transformers", "trl", "datasets", "reasoning-gym", "numpy"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:  # pragma: no cover
            out[pkg] = "missing"
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    return str(v)


def metrics_rows(log_history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Training-step rows of a TRL ``log_history`` (one per logged step), timing keys removed, and the callback's
    fields under their bare names (``dynamics/gap_alignment`` → ``gap_alignment``, :func:`~.fields.bare_name`).

    With refresh lag (K_ref > 1) TRL logs the rollout metrics (``reward``, ``reward_std``, ...) only on steps that
    generate; the other steps have empty cells there.
    """
    rows = []
    for rec in log_history:
        if "step" not in rec or ("loss" not in rec and "reward" not in rec):
            continue
        rows.append({bare_name(k): v for k, v in rec.items() if k not in TIMING_KEYS})
    return rows


def metrics_csv_text(rows: list[dict[str, Any]]) -> str:
    """CSV text of ``rows`` with :data:`LEADING_COLUMNS` first and the other columns sorted."""
    keys = set().union(*(r.keys() for r in rows)) if rows else set()
    cols = [c for c in LEADING_COLUMNS if c in keys] + sorted(keys - set(LEADING_COLUMNS))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([_fmt(r.get(c)) for c in cols])
    return buf.getvalue()
