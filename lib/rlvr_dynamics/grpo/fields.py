"""Names of the metrics :class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` logs (torch-free).

The callback logs them through the trainer's own metric path under the namespace :data:`DYNAMICS_PREFIX`
(``dynamics/gap_alignment``, …), so W&B shows ``train/dynamics/gap_alignment`` next to TRL's ``train/clip_ratio/*``.
The project's ``metrics.csv`` files keep the bare names (:func:`bare_name`), and the log loader accepts either.
"""
from __future__ import annotations

DYNAMICS_PREFIX = "dynamics/"
"""Namespace of every metric the callback (and the live :class:`~rlvr_dynamics.runs.live.RunDoctor`) logs."""

GAP_FIELDS = ("gap_alignment", "cumulative_gap_alignment", "n_mixed_groups", "logp_change_correct",
              "logp_change_incorrect")
RATIO_FIELDS = ("is_ratio_mean", "is_ratio_std", "is_ratio_min", "is_ratio_max", "is_log_ratio_abs_mean")
GROUP_FIELDS = ("group_reward_std", "group_distinct_frac", "group_reward_var_unbiased")
CALLBACK_FIELDS = GROUP_FIELDS + RATIO_FIELDS + GAP_FIELDS + ("update_norm", "step_size")
"""Fields the callback adds to every logged training step (plus ``eval_*`` when an ``eval_fn`` is given)."""
FRESH_GAP_FIELDS = ("gap_alignment_fresh", "cumulative_gap_alignment_fresh", "n_mixed_groups_fresh", "fresh_success")
"""Fields added with ``fresh_samples > 0``: the gap alignment on fresh samples not used by the update (P2-C14)."""
PANEL_FIELDS = ("panel_reward", "panel_reward_se", "panel_greedy_reward")
"""Fields of the panel evaluation (``RunConfig.panel_size > 0``, :mod:`~rlvr_dynamics.grpo.panel`), logged under
the same namespace at the panel's scheduled steps only (the greedy one with ``panel_greedy``)."""


def is_callback_field(name: str) -> bool:
    """Whether bare ``name`` is one of the callback's own fields (:data:`CALLBACK_FIELDS`, :data:`FRESH_GAP_FIELDS`,
    :data:`PANEL_FIELDS` or ``eval_*``)."""
    return name in CALLBACK_FIELDS or name in FRESH_GAP_FIELDS or name in PANEL_FIELDS or name.startswith("eval_")


def bare_name(key: str) -> str:
    """``key`` without :data:`DYNAMICS_PREFIX` when what follows is a callback field; else ``key`` unchanged.

    The live doctor's own outputs (``dynamics/plateau``, ``dynamics/flag/…``) keep their namespace."""
    if key.startswith(DYNAMICS_PREFIX) and is_callback_field(key[len(DYNAMICS_PREFIX):]):
        return key[len(DYNAMICS_PREFIX):]
    return key
