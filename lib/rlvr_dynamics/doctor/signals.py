"""Source column names → the standard signals the doctor reads (the pipeline's second stage, after loading).

A GRPO log names the same quantity differently in every trainer: TRL, Unsloth (TRL ≤ 0.15 names), verl
(``actor/…``, ``critic/…``, ``response_length/…``, older ``actor/entropy_loss``), OpenRLHF (``policy_entropy``,
``kl``, ``response_length``), CS336-style loops (``token_entropy``, ``approx_kl``, ``clip_fraction``) and the
project's own ``metrics.csv``; every name the loader knows for a concept (``runs.logs.DIAGNOSTIC_COLUMNS``) is in
the table of its signal (tested). The tables below list, per standard signal, the
source names tried in order; :func:`signal` returns the first one the log has with at least 3 finite values.

- ``reward``: the training reward, ``RunLog.reward`` (:data:`~rlvr_dynamics.runs.logs.REWARD_COLUMNS`);
- ``entropy`` (:data:`ENTROPY_COLUMNS`): mean token entropy of the sampled completions;
- ``kl`` (:data:`KL_COLUMNS`): KL to the reference / old policy;
- ``grad_norm`` (:data:`GRAD_COLUMNS`): gradient norm before clipping;
- ``clip`` (:data:`CLIP_COLUMNS`): share of tokens whose importance ratio was clipped;
- ``clipped_ratio`` (:data:`CLIPPED_COLUMNS`): share of completions cut at the length cap;
- ``length`` (:data:`LENGTH_COLUMNS`): mean completion length (tokens);
- ``zero_std`` (:data:`ZERO_STD_COLUMNS`): share of groups with zero reward std;
- ``group_std`` (:data:`GROUP_STD_COLUMNS`): mean within-group reward std;
- ``spread`` (:data:`SPREAD_COLUMNS`): within-group spread of the completions;
- ``format_accuracy`` (:data:`FORMAT_ACCURACY_COLUMNS`): share of completions in the required format;
- ``eval`` (:data:`EVAL_COLUMNS`, then a search: :func:`eval_column`): held-out or strict evaluation reward;
- ``format`` / ``correctness``: the sum of the format / correctness sub-rewards.

Sub-rewards (TRL/Unsloth ``rewards/<name>``) are split by name into correctness terms (:data:`CORRECTNESS_WORDS`)
and format terms (:data:`FORMAT_WORDS`) by :func:`sub_rewards`.
"""
from __future__ import annotations

import numpy as np

from ..runs.logs import RunLog

EVAL_COLUMNS = ("eval_reward", "eval/reward", "eval_accuracy", "eval/accuracy", "val/test_score", "val/score",
                "val-core/test_score/mean", "strict_reward", "heldout_reward")
"""Held-out or strict evaluation reward, tried in order (then any column starting ``val`` or ``eval`` with
``reward``, ``score`` or ``acc`` in its name)."""
ZERO_STD_COLUMNS = ("frac_reward_zero_std", "train/frac_reward_zero_std")
"""TRL's share of groups whose completions all got the same reward."""
GROUP_STD_COLUMNS = ("reward_std", "train/reward_std")
"""TRL/Unsloth ``reward_std``: the mean over groups of the within-group std (0 ⇔ every group degenerate)."""
ENTROPY_COLUMNS = ("entropy", "actor/entropy", "train/entropy", "actor/entropy_loss", "policy_entropy",
                   "train/policy_entropy", "token_entropy", "train/token_entropy")
"""Mean token entropy."""
SPREAD_COLUMNS = ("group_distinct_frac", "group_reward_std", "reward_std", "train/reward_std")
"""Within-group spread: the project's share of distinct completions, else a within-group reward std."""
GRAD_COLUMNS = ("grad_norm", "actor/grad_norm", "train/grad_norm", "actor_grad_norm")
"""Gradient norm."""
CLIP_COLUMNS = ("clip_ratio/region_mean", "clip_ratio", "actor/pg_clipfrac", "train/clip_ratio/region_mean",
                "train/clip_ratio", "ppo_clip_ratio", "clip_fraction", "train/clip_fraction")
"""Share of tokens whose importance ratio was clipped (TRL ``clip_ratio``, verl ``actor/pg_clipfrac``)."""
CLIPPED_COLUMNS = ("completions/clipped_ratio", "train/completions/clipped_ratio", "response_length/clip_ratio",
                   "train/response_length/clip_ratio")
"""Share of completions cut at the length cap (TRL ``completions/clipped_ratio``, verl
``response_length/clip_ratio``)."""
KL_COLUMNS = ("kl", "train/kl", "actor/ppo_kl", "actor/kl_loss", "objective/kl", "actor/kl", "train/kl_loss",
              "approx_kl", "train/approx_kl")
"""KL (TRL ``kl``, verl ``actor/ppo_kl`` / ``actor/kl_loss``)."""
LENGTH_COLUMNS = ("completions/mean_length", "train/completions/mean_length", "completion_length",
                  "response_length/mean", "train/response_length/mean", "response_length", "avg_response_token_length",
                  "train/completion_length", "response_length/mean_length")
"""Mean completion length (TRL ``completions/mean_length``, older ``completion_length``, verl
``response_length/mean``, OpenRLHF ``response_length``)."""
FORMAT_ACCURACY_COLUMNS = ("format_accuracy", "train_format_accuracy", "train/format_accuracy", "format_reward",
                           "rewards/format_reward/mean", "train/rewards/format_reward/mean", "rewards/format_reward")
"""Share of completions in the required format."""
CORRECTNESS_WORDS = ("correct", "answer", "accura", "exact")
"""A sub-reward whose name holds one of these (and none of :data:`FORMAT_WORDS`) is a correctness term."""
FORMAT_WORDS = ("format", "xml", "strict", "soft", "int_reward", "number")
"""A sub-reward whose name holds one of these is a format term (even when it also says "exact")."""

SIGNALS = {"entropy": ENTROPY_COLUMNS, "kl": KL_COLUMNS, "grad_norm": GRAD_COLUMNS, "clip": CLIP_COLUMNS,
           "clipped_ratio": CLIPPED_COLUMNS, "length": LENGTH_COLUMNS, "zero_std": ZERO_STD_COLUMNS,
           "group_std": GROUP_STD_COLUMNS, "spread": SPREAD_COLUMNS, "format_accuracy": FORMAT_ACCURACY_COLUMNS,
           "eval": EVAL_COLUMNS}
"""Standard signal → its source names, in the order tried (``reward`` and ``eval`` have their own lookups)."""
STANDARD_SIGNALS = ("reward", *SIGNALS, "format", "correctness")
"""Every name :func:`signal` knows."""


def column(log: RunLog, names) -> tuple[str | None, np.ndarray | None]:
    """The first of ``names`` that ``log`` has with at least 3 finite values, and its values; (None, None)."""
    for name in names:
        if name in log.series and np.isfinite(log.series[name]).sum() >= 3:
            return name, log.series[name]
    return None, None


def eval_column(log: RunLog) -> tuple[str | None, np.ndarray | None]:
    """The evaluation reward: :data:`EVAL_COLUMNS` in order, then the first column (sorted) starting ``val`` or
    ``eval`` with ``reward``, ``score`` or ``acc`` in its name (not a std, not a sampled score)."""
    name, y = column(log, EVAL_COLUMNS)
    if name:
        return name, y
    for col in sorted(log.series):
        low = col.lower()
        if (low.startswith("val") or low.startswith("eval")) and any(k in low for k in ("reward", "score", "acc")) \
                and "std" not in low and "sampled" not in low and np.isfinite(log.series[col]).sum() >= 3:
            return col, log.series[col]
    return None, None


def evaluation_rows(log: RunLog, e: np.ndarray) -> np.ndarray:
    """Rows that hold a new evaluation: where ``eval_step`` changes when the log has that column (the project's
    metrics.csv repeats the last evaluation on every row), else every row where the evaluation was logged."""
    ok = np.isfinite(e)
    es = log.series.get("eval_step")
    if es is not None and np.isfinite(es).any():
        # compared with the last eval_step logged before, not the row before: a row without one (a row another
        # logger wrote in between) would make the repeated evaluation after it a new one
        fin = np.isfinite(es)
        last = np.maximum.accumulate(np.where(fin, np.arange(es.size), -1))
        prev = np.concatenate([[np.nan], np.where(last[:-1] >= 0, es[np.maximum(last[:-1], 0)], np.nan)])
        ok &= fin & (es != prev)
    return np.flatnonzero(ok)


def sub_rewards(log: RunLog) -> tuple[list[str], list[str]]:
    """(correctness, format) sub-reward columns: ``rewards/<name>`` or ``rewards/<name>/mean`` (TRL, Unsloth)."""
    corr, fmt = [], []
    for col in sorted(log.series):
        low = col.lower()
        if not low.startswith(("rewards/", "train/rewards/")) or low.endswith("/std") or low.endswith("rewards/mean"):
            continue
        if np.isfinite(log.series[col]).sum() < 3:
            continue
        if any(w in low for w in FORMAT_WORDS):        # "match_format_exactly" is a format reward, not a correct one
            fmt.append(col)
        elif any(w in low for w in CORRECTNESS_WORDS):
            corr.append(col)
    return corr, fmt


def signal(log: RunLog, name: str) -> tuple[str | None, np.ndarray | None]:
    """``(source column, values on every row of the log)`` of the standard signal ``name`` (one of
    :data:`STANDARD_SIGNALS`), or ``(None, None)`` when the log lacks it. ``reward`` is the log's reward column;
    ``format`` / ``correctness`` the sum of the format / correctness sub-rewards (:func:`sub_rewards`; the source
    is their names joined by `` + ``)."""
    if name == "reward":
        return log.reward_column, log.reward
    if name == "eval":
        return eval_column(log)
    if name in ("format", "correctness"):
        corr, fmt = sub_rewards(log)
        cols = fmt if name == "format" else corr
        if not cols:
            return None, None
        values = np.sum([log.series[c] for c in cols], axis=0)   # NaN where any term is missing
        return " + ".join(cols), values
    if name not in SIGNALS:
        raise ValueError(f"unknown signal {name!r}; known: {', '.join(STANDARD_SIGNALS)}")
    return column(log, SIGNALS[name])
