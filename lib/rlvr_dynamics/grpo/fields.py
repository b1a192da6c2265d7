"""Names of the metrics :class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` logs (torch-free).

The callback logs them through the trainer's own metric path under the namespace :data:`DYNAMICS_PREFIX`
(``dynamics/gap_alignment``, …), so W&B shows ``train/dynamics/gap_alignment`` next to TRL's ``train/clip_ratio/*``.
The project's ``metrics.csv`` files keep the bare names (:func:`bare_name`), and the log loader accepts either.
"""
from __future__ import annotations

DYNAMICS_PREFIX = "dynamics/"
"""Namespace of every metric the callback (and the live :class:`~rlvr_dynamics.doctor.live.RunDoctor`) logs."""

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

FIELD_REFERENCE: dict[str, tuple[str, str, str]] = {
    "group_reward_std": ("mean over prompt groups of the within-group reward std (population convention, ddof 0)",
                         "reward", "P1-C6, P1-C15"),
    "group_reward_var_unbiased": ("mean over groups of the unbiased (ddof 1) within-group reward variance; its "
                                  "expectation E[p(1−p)] does not depend on G, so a G-dependence at matched batch "
                                  "reward is P1-C15's residual", "reward²", "P1-C15"),
    "group_distinct_frac": ("mean over groups of the fraction of distinct completions; falling towards 1/G is "
                            "policy concentration", "1", "P1-C13"),
    "is_ratio_mean": ("mean token-level importance ratio π_θk / π_old between the policy about to be updated and the "
                      "one that sampled the rollouts (exactly 1 on-policy, spreads with refresh lag)", "1",
                      "P1-C3, P1-C13"),
    "is_ratio_std": ("std of that token-level ratio", "1", "P1-C3, P1-C13"),
    "is_ratio_min": ("smallest token-level ratio of the step", "1", "P1-C3, P1-C13"),
    "is_ratio_max": ("largest token-level ratio of the step", "1", "P1-C3, P1-C13"),
    "is_log_ratio_abs_mean": ("mean |log π_θk − log π_old| per token", "nats per token", "P1-C3, P1-C13"),
    "gap_alignment": ("Δμ_k, the finite-difference gap alignment (P2 spec §5.4): [mean over correct − mean over "
                      "incorrect completions of Δlog π(o)] / η_k, per mixed group, averaged (0 when no group is mixed). "
                      "Per unit learning rate: with Adam, whose step per unit η is O(1) in every parameter, it grows "
                      "with the parameter count (committed runs, 5th–95th percentile of |Δμ| per family of healthy "
                      "runs: 40–8,000 on the tiny testbed models, 5e4–2e6 on SmolLM2-135M; with SGD 0.02–170)",
                      "nats per unit η", "P2-C2, P2-C14"),
    "cumulative_gap_alignment": ("M_k = Σ_{j≤k} η_j [Δμ_j]₊ (P2 spec §2.4): the accumulated alignment that drives J "
                                 "to 1 when it diverges", "nats", "P2-C4, P2-C12, P2-C14"),
    "n_mixed_groups": ("prompt groups holding both correct and incorrect completions, where the gap is measured "
                       "(0: every group tied, no learning signal: advantage degeneracy)", "groups", "P1-C13, P2-C2"),
    "logp_change_correct": ("mean change of the sequence log-probability log π(o) over the update, correct "
                            "completions", "nats", "P2-C1"),
    "logp_change_incorrect": ("the same for the incorrect completions", "nats", "P2-C1"),
    "update_norm": ("‖θ_{k+1} − θ_k‖₂, the length of the realised update (models below 50 M parameters unless "
                    "`track_update_norm`)", "parameter units", "P2-C5, P2-C13"),
    "step_size": ("η_k, the scheduler's learning rate at this step (also for Adam: the theory's η with "
                  "w_k = Δθ/η_k)", "learning rate", "P2-C5"),
    "gap_alignment_fresh": ("`gap_alignment` on `fresh_samples` completions per prompt drawn from π_θk and not "
                            "used by the update (free of the in-sample bias)", "nats per unit η", "P2-C14"),
    "cumulative_gap_alignment_fresh": ("running sum of `gap_alignment_fresh` as for `cumulative_gap_alignment`",
                                       "nats", "P2-C14"),
    "n_mixed_groups_fresh": ("mixed groups among the fresh completions", "groups", "P2-C14"),
    "fresh_success": ("success rate of the fresh completions: an unbiased batch accuracy of π_θk", "1", "P2-C14"),
    "panel_reward": ("mean reward on the fixed panel of held-out prompts (`RunConfig.panel_size`), one completion "
                     "each at the training temperature, at the panel's scheduled steps", "reward",
                     "P1-C5, P1-C8, P1-C9, P1-C12"),
    "panel_reward_se": ("its binomial standard error √(p(1−p)/n)", "reward", "P1-C9, P1-C12"),
    "panel_greedy_reward": ("the panel scored with greedy decoding (`panel_greedy`)", "reward", "P1-C14"),
}
"""Every field above with ``(meaning, unit, claim)``: the reference table of the callback's own fields, shown in
the book beside the live doctor's (:func:`rlvr_dynamics.book.field_reference.callback_fields_markdown`). Units:
``reward`` is the reward's own scale, ``1`` a pure number, ``nats`` a change of log-probability."""


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
