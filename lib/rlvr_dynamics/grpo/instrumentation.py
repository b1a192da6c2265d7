"""``GRPODynamicsCallback``: per-step training-dynamics instrumentation for TRL's ``GRPOTrainer``.

Usable by anyone training with TRL::

    cb = GRPODynamicsCallback(eval_fn=my_eval)     # eval_fn(model) -> dict of floats, optional
    trainer = GRPOTrainer(..., callbacks=[cb])
    cb.attach(trainer)                            # captures rollouts and rewards (needed for the gap alignment)
    trainer.train()

Every logged step then carries, in ``trainer.state.log_history`` (and so in ``trainer_state.json``), on top of
TRL's own ``reward``, ``reward_std``, ``frac_reward_zero_std``, ``entropy``, ``kl``, ``grad_norm``, ``clip_ratio/*``:

* ``group_reward_std``: mean over groups of the within-group reward std (population convention) — P1-C15;
* ``group_distinct_frac``: mean over groups of the fraction of distinct completions — policy concentration;
* ``is_ratio_mean``/``is_ratio_std``/``is_ratio_min``/``is_ratio_max`` and ``is_log_ratio_abs_mean``: token-level
  importance ratio π_θk / π_old between the policy about to be updated and the one that sampled the rollouts
  (exactly 1 on-policy; spreads with refresh lag) — dynamical instability;
* ``gap_alignment``: the finite-difference estimate of Δμ_k (P2 spec §5.4)
  ``[mean_{r=1} Δlogπ(o) − mean_{r=0} Δlogπ(o)] / η_k``, Δlogπ = log π_{θ_{k+1}}(o) − log π_{θ_k}(o) (sequence
  log-probability at the sampling temperature), per prompt group, averaged over mixed groups (0.0 when no group is
  mixed; ``n_mixed_groups`` says how many were); ``logp_change_correct``/``logp_change_incorrect`` are the two means;
* ``cumulative_gap_alignment``: M_k = Σ_{j≤k} η_j [Δμ_j]_+ (P2 spec §2.4);
* ``update_norm``: ‖θ_{k+1} − θ_k‖₂ (tiny models only, see ``track_update_norm``);

With ``gap_alignment_every = k > 1`` the gap alignment and the importance-ratio fields are estimated on steps 1,
k+1, 2k+1, … only (empty cells in between, no extra forward pass), and the cumulative sum adds k·η·[Δμ]₊ at each
estimate (the rectangle rule). Multi-process (DDP) training: rewards are TRL's gathered rewards, each process
computes its own groups' log-probability changes and the gap alignment is all-reduced, so it equals the
single-process value on the same batch; ``group_distinct_frac`` and the ratio fields are the main process's share;
``eval_fn`` runs on the main process only.
* ``eval_*``: whatever ``eval_fn(model)`` returns, every ``eval_every`` steps (and at the first step); the value is
  carried forward between evaluations and ``eval_step`` says when it was measured.

Departures from the spec [D]: with refresh lag (K_ref > 1) the rollouts come from π_old, not π_θk, so the gap
alignment is then a stale-sample estimate; the step size η_k is the scheduler's learning rate, also for Adam, where
the realised direction w_k is Adam's preconditioned step (the theory's η·w_k with w_k = Δθ/η_k).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import torch
from transformers import TrainerCallback

GAP_FIELDS = ("gap_alignment", "cumulative_gap_alignment", "n_mixed_groups", "logp_change_correct",
              "logp_change_incorrect")
RATIO_FIELDS = ("is_ratio_mean", "is_ratio_std", "is_ratio_min", "is_ratio_max", "is_log_ratio_abs_mean")
GROUP_FIELDS = ("group_reward_std", "group_distinct_frac")
CALLBACK_FIELDS = GROUP_FIELDS + RATIO_FIELDS + GAP_FIELDS + ("update_norm", "step_size")
"""Fields the callback adds to every logged training step (plus ``eval_*`` when an ``eval_fn`` is given)."""


@torch.no_grad()
def sequence_logprobs(model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, completion_ids: torch.Tensor,
                      completion_mask: torch.Tensor, *, temperature: float = 1.0,
                      batch_size: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probabilities of the completions (B, Tc), masked to 0 outside ``completion_mask``, and their
    sum per sequence (B,). Logits are divided by ``temperature`` as TRL does."""
    out = []
    for i in range(0, prompt_ids.shape[0], batch_size):
        sl = slice(i, i + batch_size)
        ids = torch.cat([prompt_ids[sl], completion_ids[sl]], dim=1)
        att = torch.cat([prompt_mask[sl], completion_mask[sl]], dim=1)
        logits = model(input_ids=ids, attention_mask=att).logits.float()
        tc = completion_ids.shape[1]
        logits = logits[:, -tc - 1:-1, :] / temperature
        logp = torch.log_softmax(logits, dim=-1).gather(-1, completion_ids[sl].unsqueeze(-1)).squeeze(-1)
        out.append(logp * completion_mask[sl].to(logp.dtype))
    tok = torch.cat(out, dim=0)
    return tok, tok.sum(dim=1)


class GRPODynamicsCallback(TrainerCallback):
    """Per-step dynamics instrumentation for TRL ``GRPOTrainer`` (see the module docstring for the fields)."""

    def __init__(self, *, eval_fn: Callable[[Any], dict[str, float]] | None = None, eval_every: int = 5,
                 gap_alignment: bool = True, track_update_norm: bool | None = None,
                 gap_alignment_every: int = 1) -> None:
        """
        Args:
            eval_fn: ``eval_fn(model) -> {name: value}``; logged as ``eval_<name>``. Must not touch the global RNG
                stream (see :func:`rlvr_dynamics.grpo.evaluation.generate`) if runs are to stay reproducible.
            eval_every: evaluation period in optimizer steps (also evaluated at step 1).
            gap_alignment: compute the gap alignment (two extra forward passes over the rollouts per step).
            track_update_norm: record ‖Δθ‖ (copies the parameters each step); default on below 50 M parameters.
            gap_alignment_every: estimate the gap alignment and the ratio fields every this many steps only.
        """
        if eval_every < 1:
            raise ValueError(f"eval_every must be >= 1, got {eval_every}")
        if isinstance(gap_alignment_every, bool) or not isinstance(gap_alignment_every, int) or gap_alignment_every < 1:
            raise ValueError(f"gap_alignment_every must be an integer >= 1, got {gap_alignment_every!r}")
        self.gap_alignment_every = gap_alignment_every
        self._measure = True
        self.eval_fn = eval_fn
        self.eval_every = int(eval_every)
        self.gap_alignment = bool(gap_alignment)
        self.track_update_norm = track_update_norm
        self.trainer = None
        self._batch: dict[str, Any] | None = None
        self._rewards: torch.Tensor | None = None
        self._gen_token_logps: torch.Tensor | None = None
        self._pre_seq_logps: torch.Tensor | None = None
        self._pre_params: list[torch.Tensor] | None = None
        self._row: dict[str, float] = {}
        self._last_eval: dict[str, float] = {}
        self.cumulative_gap_alignment = 0.0

    # ------------------------------------------------------------------------------------------ capturing
    def attach(self, trainer) -> "GRPODynamicsCallback":
        """Wrap ``trainer``'s rollout and reward methods to capture each generated batch (idempotent)."""
        if getattr(trainer, "_rlvr_dynamics_attached", False):
            return self
        self.trainer = trainer
        gen = trainer._generate_and_score_completions
        calc = trainer._calculate_rewards
        cb = self

        def _calculate_rewards(*args, **kwargs):
            rewards_per_func = calc(*args, **kwargs)  # gathered over processes by TRL
            w = trainer.reward_weights.to(rewards_per_func.device)
            cb._all_rewards = (rewards_per_func * w.unsqueeze(0)).nansum(dim=1).detach().cpu()
            return rewards_per_func

        def _generate_and_score_completions(inputs):
            out = gen(inputs)
            if trainer.model.training:
                n = out["completion_ids"].shape[0]
                if getattr(cb, "_all_rewards", None) is not None:
                    rank = trainer.accelerator.process_index
                    cb._rewards = cb._all_rewards[rank * n:(rank + 1) * n]
                cb._on_new_batch(trainer, out)
            return out

        trainer._calculate_rewards = _calculate_rewards
        trainer._generate_and_score_completions = _generate_and_score_completions
        trainer._rlvr_dynamics_attached = True
        if trainer.callback_handler is not None and self not in trainer.callback_handler.callbacks:
            trainer.add_callback(self)
        return self

    def _measured(self, step: int) -> bool:
        """Whether optimizer step ``step`` (1-based) gets the gap alignment and ratio fields."""
        return (step - 1) % self.gap_alignment_every == 0

    def _on_new_batch(self, trainer, out: dict[str, Any]) -> None:
        keys = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask")
        self._batch = {k: out[k].detach() for k in keys}
        self._pre_seq_logps = None
        temp = float(getattr(trainer, "temperature", 1.0) or 1.0)
        self._temperature = temp
        first = trainer.state.global_step + 1
        steps = range(first, first + max(1, int(getattr(trainer.args, "steps_per_generation", 1) or 1)))
        self._batch_measured = any(self._measured(k) for k in steps)
        if self._batch_measured:
            tok_logps, seq_logps = sequence_logprobs(trainer.model, *(self._batch[k] for k in keys),
                                                     temperature=temp)
        else:
            tok_logps = seq_logps = None
        self._gen_token_logps = tok_logps
        # On-policy: the policy about to be updated is the sampling policy, so these are also the θ_k log-probs.
        self._pre_seq_logps_candidate = seq_logps
        self._updates_since_generation = 0
        G = trainer.num_generations
        row: dict[str, float] = {}
        all_rewards = getattr(self, "_all_rewards", None)
        if all_rewards is not None and all_rewards.numel() % G == 0:  # every group of every process
            groups = all_rewards.numpy().reshape(-1, G)
            row["group_reward_std"] = float(np.nanstd(groups, axis=1).mean())
        comp = self._batch["completion_ids"].cpu().numpy()
        mask = self._batch["completion_mask"].cpu().numpy().astype(bool)
        texts = [tuple(c[m].tolist()) for c, m in zip(comp, mask)]
        if len(texts) % G == 0:
            row["group_distinct_frac"] = float(np.mean([len(set(texts[i:i + G])) / G
                                                         for i in range(0, len(texts), G)]))
        self._group_row = row

    # ------------------------------------------------------------------------------------------ TRL events
    def on_train_begin(self, args, state, control, **kwargs):
        # Resume: continue the running sum from the last logged training step.
        for rec in reversed(state.log_history):
            if "cumulative_gap_alignment" in rec:
                self.cumulative_gap_alignment = float(rec["cumulative_gap_alignment"])
                break
        for rec in reversed(state.log_history):
            eval_keys = {k: v for k, v in rec.items() if k.startswith("eval_")}
            if eval_keys:
                self._last_eval = eval_keys
                break

    def on_step_begin(self, args, state, control, **kwargs):
        self._row = {}

    def on_pre_optimizer_step(self, args, state, control, model=None, optimizer=None, **kwargs):
        if self._batch is None or model is None:
            return
        self._measure = self._measured(state.global_step + 1) and self._gen_token_logps is not None
        if not self._measure:
            self._pre_params = None
            track = self.track_update_norm
            if track is None:
                track = sum(p.numel() for p in model.parameters()) < 50_000_000
            self._pre_params = [p.detach().clone() for p in model.parameters()] if track else None
            return
        b = self._batch
        if self._updates_since_generation == 0:
            seq = self._pre_seq_logps_candidate
            tok = self._gen_token_logps
        else:
            tok, seq = sequence_logprobs(model, b["prompt_ids"], b["prompt_mask"], b["completion_ids"],
                                         b["completion_mask"], temperature=self._temperature)
        self._pre_seq_logps = seq
        # importance ratio pi_theta_k / pi_old, token level, over the whole generated batch
        m = b["completion_mask"].bool()
        log_ratio = (tok - self._gen_token_logps)[m]
        ratio = torch.exp(log_ratio)
        self._row.update({
            "is_ratio_mean": float(ratio.mean()), "is_ratio_std": float(ratio.std(unbiased=False)),
            "is_ratio_min": float(ratio.min()), "is_ratio_max": float(ratio.max()),
            "is_log_ratio_abs_mean": float(log_ratio.abs().mean()),
        })
        track = self.track_update_norm
        if track is None:
            track = sum(p.numel() for p in model.parameters()) < 50_000_000
        self._pre_params = [p.detach().clone() for p in model.parameters()] if track else None

    def on_optimizer_step(self, args, state, control, model=None, optimizer=None, **kwargs):
        if self._batch is None or model is None:
            return
        self._updates_since_generation += 1
        lr = float(optimizer.param_groups[0]["lr"]) if optimizer is not None else float(args.learning_rate)
        self._row["step_size"] = lr
        if self._pre_params is not None:
            sq = sum(float(((p.detach() - q) ** 2).sum()) for p, q in zip(model.parameters(), self._pre_params))
            self._row["update_norm"] = math.sqrt(sq)
            self._pre_params = None
        else:
            self._row["update_norm"] = float("nan")
        if not self.gap_alignment or self._rewards is None:
            return
        if not self._measure:
            nan = float("nan")
            self._row.update({"gap_alignment": nan, "cumulative_gap_alignment": self.cumulative_gap_alignment,
                              "n_mixed_groups": nan, "logp_change_correct": nan, "logp_change_incorrect": nan})
            return
        b = self._batch
        _, post = sequence_logprobs(model, b["prompt_ids"], b["prompt_mask"], b["completion_ids"],
                                    b["completion_mask"], temperature=self._temperature)
        delta = (post - self._pre_seq_logps).cpu().numpy()
        rewards = self._rewards[: delta.shape[0]].numpy()
        G = self.trainer.num_generations if self.trainer is not None else len(delta)
        per_group, plus, minus = [], [], []
        for g in range(0, len(delta), G):
            r, d = rewards[g:g + G], delta[g:g + G]
            ok = r > 0.5
            if ok.any() and (~ok).any():
                plus.append(d[ok].mean())
                minus.append(d[~ok].mean())
                per_group.append(d[ok].mean() - d[~ok].mean())
        sums = [float(np.sum(per_group)), float(len(per_group)), float(np.sum(plus)), float(np.sum(minus))]
        if torch.distributed.is_available() and torch.distributed.is_initialized() \
                and torch.distributed.get_world_size() > 1:  # mean over the groups of every process
            t = torch.tensor(sums, dtype=torch.float64)
            torch.distributed.all_reduce(t)
            sums = t.tolist()
        n_groups = int(round(sums[1]))
        if n_groups:
            dmu = sums[0] / n_groups / lr
            self._row.update({"logp_change_correct": sums[2] / n_groups,
                              "logp_change_incorrect": sums[3] / n_groups})
        else:
            dmu = 0.0
            self._row.update({"logp_change_correct": 0.0, "logp_change_incorrect": 0.0})
        self.cumulative_gap_alignment += self.gap_alignment_every * lr * max(dmu, 0.0)
        self._row.update({"gap_alignment": dmu, "cumulative_gap_alignment": self.cumulative_gap_alignment,
                          "n_mixed_groups": float(n_groups)})

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if self.eval_fn is not None and model is not None and state.is_world_process_zero and (
                state.global_step == 1 or state.global_step % self.eval_every == 0):
            res = self.eval_fn(model)
            self._last_eval = {f"eval_{k}": float(v) for k, v in res.items()}
            self._last_eval["eval_step"] = float(state.global_step)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.log_history or "loss" not in state.log_history[-1] and "reward" not in state.log_history[-1]:
            return
        row = {**getattr(self, "_group_row", {}), **self._row, **self._last_eval}
        if self.gap_alignment and "gap_alignment" not in row:
            row.update({"gap_alignment": 0.0, "cumulative_gap_alignment": self.cumulative_gap_alignment,
                        "n_mixed_groups": 0.0, "logp_change_correct": 0.0, "logp_change_incorrect": 0.0})
        state.log_history[-1].update(row)
        if logs is not None:
            logs.update(row)
