"""``GRPODynamicsCallback``: per-step training-dynamics instrumentation for TRL's ``GRPOTrainer``.

Usable by anyone training with TRL::

    trainer = GRPOTrainer(...)
    GRPODynamicsCallback(trainer, eval_fn=my_eval)  # adds itself; eval_fn(model) -> dict of floats, optional
    trainer.train()

Every logged step then carries, under the namespace ``dynamics/`` and through the trainer's own metric path (so in
W&B, TensorBoard and trackio as ``train/dynamics/*``, and in ``trainer_state.json``), on top of TRL's own
``reward``, ``reward_std``, ``frac_reward_zero_std``, ``entropy``, ``kl``, ``grad_norm``, ``clip_ratio/*``:

* ``group_reward_std``: mean over groups of the within-group reward std (population convention) — P1-C15;
* ``group_reward_var_unbiased``: mean over groups of the unbiased (ddof 1) within-group reward variance, whose
  expectation E_prompts[p(1−p)] does not depend on G: a G-dependence at matched batch reward is P1-C15's residual;
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
* with ``fresh_samples = F > 0``: ``gap_alignment_fresh``, the same estimate on F *fresh* completions per prompt
  sampled from π_θk and not used by the update (the in-sample estimate is biased upward: the update raised exactly
  the correct samples it is measured on; P2-C14), its running sum ``cumulative_gap_alignment_fresh``,
  ``n_mixed_groups_fresh`` and ``fresh_success``, the fresh samples' success rate (an unbiased batch accuracy of
  π_θk). They are drawn on an isolated RNG stream, so the training trajectory does not change;

With ``gap_alignment_every = k > 1`` the gap alignment and the importance-ratio fields are estimated on steps 1,
k+1, 2k+1, … only (empty cells in between, no extra forward pass), and the cumulative sum adds k·η·[Δμ]₊ at each
estimate (the rectangle rule). Multi-process (DDP) training: rewards are TRL's gathered rewards, each process
computes its own groups' log-probability changes and the gap alignment is all-reduced, so it equals the
single-process value on the same batch; ``group_distinct_frac`` and the ratio fields are the main process's share;
``eval_fn`` runs on the main process only.
* ``eval_*``: whatever ``eval_fn(model)`` returns, every ``eval_every`` steps (and at the first step); the value is
  carried forward between evaluations and ``eval_step`` says when it was measured.

Each field's unit and the claim it serves: :data:`rlvr_dynamics.grpo.fields.FIELD_REFERENCE` (the table on the
book's "Diagnose a run" page); ``gap_alignment`` is per unit learning rate, so with Adam it grows with the
parameter count (typical ranges there).

With a :class:`~rlvr_dynamics.doctor.live.RunDoctor` (``doctor=``), the run is also fitted and diagnosed live from each
logged row, and stopped where its stop rule fires: :mod:`rlvr_dynamics.grpo.doctor_hooks`.

One callback (and one ``RunDoctor``) per trainer: a callback, or a doctor, that already followed one trainer refuses a
second one at ``on_train_begin`` (its running sums, rollout capture and doctor rows belong to the first run).

Values are averaged over the steps of a logging window as TRL averages its own (exact with ``logging_steps=1``; with
more, ``cumulative_gap_alignment`` is the window's mean). The project's ``metrics.csv`` keeps the bare field names
(:func:`rlvr_dynamics.grpo.fields.bare_name`); :func:`rlvr_dynamics.runs.load_log` reads either. TRL's private API
is touched in :mod:`rlvr_dynamics.grpo._trl_compat` alone, with the TRL versions it is tested on.

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

from . import _trl_compat as trl_compat
from .console import StatusConsole
from .doctor_hooks import LiveDoctorHooks
from .fields import CALLBACK_FIELDS, DYNAMICS_PREFIX, GAP_FIELDS, GROUP_FIELDS, RATIO_FIELDS, bare_name
from .logprob_changes import all_reduce, group_gap_sums, sequence_logprobs
from .rng import isolated_rng

__all__ = ["GRPODynamicsCallback", "sequence_logprobs", "CALLBACK_FIELDS", "GAP_FIELDS", "GROUP_FIELDS",
           "RATIO_FIELDS", "DYNAMICS_PREFIX"]


class GRPODynamicsCallback(LiveDoctorHooks, TrainerCallback):
    """Per-step dynamics instrumentation for TRL ``GRPOTrainer`` (see the module docstring for the fields).

    Args:
        trainer: the ``GRPOTrainer`` to instrument (TRL's convention for callbacks that need the trainer); the
            callback wraps its rollout and reward methods and adds itself to its callbacks. May be left out: then
            ``trainer.add_callback(cb)`` or ``GRPOTrainer(..., callbacks=[cb])`` bind it when training begins (or
            call :meth:`attach`).
        eval_fn: ``eval_fn(model) -> {name: value}``; logged as ``dynamics/eval_<name>`` on the main process. Must
            not touch the global RNG stream (see :func:`rlvr_dynamics.grpo.evaluation.generate`) if runs are to
            stay reproducible.
        eval_every: evaluation period in optimizer steps (also evaluated at step 1).
        gap_alignment: compute the gap alignment (two extra forward passes over the rollouts per measured step).
        track_update_norm: record ‖Δθ‖ (copies the parameters each step); default on below 50 M parameters.
        gap_alignment_every: estimate the gap alignment and the ratio fields every this many steps only.
        fresh_samples: 0 (off), or also estimate the gap alignment on this many fresh completions per prompt,
            sampled from the policy about to be updated on an isolated RNG stream and not used by the update: the
            estimate free of in-sample bias (``gap_alignment_fresh``, ``cumulative_gap_alignment_fresh``,
            ``n_mixed_groups_fresh``, ``fresh_success``). Needs plain-function rewards.
        fresh_seed: seed of the fresh samples' RNG stream (combined with the step and the process index).
        doctor: a :class:`~rlvr_dynamics.doctor.live.RunDoctor` fed every logged row's metrics (``on_log``: it counts
            logged rows, see the module docstring on ``logging_steps``); its ``dynamics/*`` outputs are logged, and
            ``doctor.should_stop`` ends training (set it with ``stop_on_instability=True``). One doctor per run.

    Usage::

        from rlvr_dynamics.grpo.instrumentation import GRPODynamicsCallback
        from rlvr_dynamics.doctor.live import RunDoctor

        trainer = GRPOTrainer(model=..., args=GRPOConfig(..., report_to="wandb"), reward_funcs=..., train_dataset=...)
        GRPODynamicsCallback(trainer, eval_fn=my_eval, doctor=RunDoctor(every=10, refresh_interval=1))
        trainer.train()

        # or TRL's usual ways, bound to their trainer when training begins:
        trainer.add_callback(GRPODynamicsCallback(doctor=RunDoctor(refresh_interval=1)))
        trainer = GRPOTrainer(..., callbacks=[GRPODynamicsCallback()])
    """

    def __init__(self, trainer=None, *, eval_fn: Callable[[Any], dict[str, float]] | None = None,
                 eval_every: int = 5, gap_alignment: bool = True, track_update_norm: bool | None = None,
                 gap_alignment_every: int = 1, fresh_samples: int = 0, fresh_seed: int = 0, doctor=None) -> None:
        if isinstance(eval_every, bool) or not isinstance(eval_every, int) or eval_every < 1:
            raise ValueError(f"eval_every must be an integer >= 1, got {eval_every!r}")
        if isinstance(gap_alignment_every, bool) or not isinstance(gap_alignment_every, int) or gap_alignment_every < 1:
            raise ValueError(f"gap_alignment_every must be an integer >= 1, got {gap_alignment_every!r}")
        if isinstance(fresh_samples, bool) or not isinstance(fresh_samples, int) or not (
                fresh_samples == 0 or fresh_samples >= 2):
            raise ValueError(f"fresh_samples must be 0 (off) or an integer >= 2, got {fresh_samples!r}")
        if doctor is not None and not (hasattr(doctor, "update") and hasattr(doctor, "should_stop")):
            raise TypeError(f"doctor must be a rlvr_dynamics.doctor.live.RunDoctor, got {type(doctor).__name__}")
        self.gap_alignment_every = gap_alignment_every
        self._measure = True
        self.eval_fn = eval_fn
        self.eval_every = int(eval_every)
        self.gap_alignment = bool(gap_alignment)
        self.track_update_norm = track_update_norm
        self.doctor = doctor
        self.fresh_samples, self.fresh_seed = fresh_samples, int(fresh_seed)
        self._fresh: dict[str, Any] | None = None
        self._inputs: list[dict[str, Any]] | None = None
        self.cumulative_gap_alignment_fresh = 0.0
        self._stopped, self._in_final_log, self._console = False, False, StatusConsole()
        self.trainer = None
        self._batch: dict[str, Any] | None = None
        self._all_rewards: torch.Tensor | None = None
        self._rewards: torch.Tensor | None = None
        self._gen_token_logps: torch.Tensor | None = None
        self._pre_seq_logps: torch.Tensor | None = None
        self._pre_params: list[torch.Tensor] | None = None
        self._group_row: dict[str, float] = {}
        self._row: dict[str, float] = {}
        self._last_eval: dict[str, float] = {}
        self.cumulative_gap_alignment = 0.0
        if trainer is not None:
            self.attach(trainer)

    # ------------------------------------------------------------------------------------------ capturing
    def attach(self, trainer) -> "GRPODynamicsCallback":
        """Instrument ``trainer``: capture each generated batch and its rewards, and add this callback (idempotent)."""
        owner = getattr(trainer, "_rlvr_dynamics_owner", None)
        if owner is not None and owner is not self:
            raise ValueError("this trainer already has a GRPODynamicsCallback; use that one (one per trainer)")
        self.trainer = trainer
        trl_compat.capture_rollouts(trainer, self._on_rewards, self._on_batch)
        trainer._rlvr_dynamics_owner = self
        handler = trainer.callback_handler
        if handler is not None:
            # first in line: the doctor's fields, added to the step's logs in on_log, then reach the reporting
            # integrations (W&B, TensorBoard, trackio) that run after it, at the step they describe
            handler.callbacks[:] = [self] + [cb for cb in handler.callbacks if cb is not self]
        return self

    def _on_rewards(self, all_rewards: torch.Tensor) -> None:
        self._all_rewards = all_rewards

    def _on_batch(self, out: dict[str, Any], inputs: list[dict[str, Any]]) -> None:
        trainer = self.trainer
        self._inputs = inputs
        n = out["completion_ids"].shape[0]
        if self._all_rewards is not None:
            rank = trainer.accelerator.process_index
            self._rewards = self._all_rewards[rank * n:(rank + 1) * n]
        self._on_new_batch(trainer, out)

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
        a = trainer.args  # optimizer steps per generation: steps_per_generation × num_iterations / grad. accumulation
        per_generation = max(1, int(getattr(a, "steps_per_generation", 1) or 1) * int(getattr(a, "num_iterations", 1)
                                 or 1) // max(1, int(getattr(a, "gradient_accumulation_steps", 1) or 1)))
        steps = range(first, first + per_generation)
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
        all_rewards = self._all_rewards
        if all_rewards is not None and all_rewards.numel() % G == 0:  # every group of every process
            groups = all_rewards.numpy().reshape(-1, G)
            row["group_reward_std"] = float(np.nanstd(groups, axis=1).mean())
            if G > 1:  # unbiased within-group variance, mean over groups: E = E_prompts[p(1-p)] for any G (P1-C15)
                row["group_reward_var_unbiased"] = float(np.nanvar(groups, axis=1, ddof=1).mean())
        comp = self._batch["completion_ids"].cpu().numpy()
        mask = self._batch["completion_mask"].cpu().numpy().astype(bool)
        texts = [tuple(c[m].tolist()) for c, m in zip(comp, mask)]
        if len(texts) % G == 0:
            row["group_distinct_frac"] = float(np.mean([len(set(texts[i:i + G])) / G
                                                         for i in range(0, len(texts), G)]))
        self._group_row = row

    # ------------------------------------------------------------------------------------------ TRL events
    def _trainer_on_stack(self):
        """The trainer whose ``train()`` is calling this callback: the ``self`` of the first frame up the stack whose
        callback handler holds this callback (how ``trainer.add_callback(cb)`` and ``GRPOTrainer(callbacks=[cb])``
        bind it: transformers hands callbacks no reference to their trainer). None when called from elsewhere."""
        import sys

        frame = sys._getframe(1)
        while frame is not None:
            obj = frame.f_locals.get("self")
            handler = getattr(obj, "callback_handler", None)
            if handler is not None and any(cb is self for cb in getattr(handler, "callbacks", ())):
                return obj
            frame = frame.f_back
        return None

    def on_train_begin(self, args, state, control, **kwargs):
        running = self._trainer_on_stack()
        if self.trainer is None:
            if running is None:
                raise RuntimeError("GRPODynamicsCallback needs its trainer: GRPODynamicsCallback(trainer, ...), "
                                   "trainer.add_callback(cb), GRPOTrainer(..., callbacks=[cb]) or cb.attach(trainer) "
                                   "before trainer.train()")
            self.attach(running)
        elif running is not None and running is not self.trainer:
            raise ValueError("this GRPODynamicsCallback is already bound to another trainer (it holds that run's rollout "
                             "capture, running gap-alignment sum and RunDoctor rows, which would mix with this run's); "
                             "create a new GRPODynamicsCallback, and a new RunDoctor, for each trainer")
        if self.doctor is not None:
            owner = getattr(self.doctor, "_rlvr_dynamics_owner", None)
            if owner is not None and owner is not self:
                raise ValueError("this RunDoctor already follows another run (through another GRPODynamicsCallback): "
                                 "its rows and events would mix with this run's; give each trainer a new RunDoctor")
            try:
                self.doctor._rlvr_dynamics_owner = self
            except AttributeError:   # a doctor object that takes no attributes: nothing to guard
                pass
        per_device = int(args.per_device_train_batch_size) * int(getattr(args, "steps_per_generation", 1) or 1)
        if per_device % self.trainer.num_generations:
            raise ValueError(f"GRPODynamicsCallback needs whole prompt groups on every process: per-device generation "
                             f"batch {per_device} (per_device_train_batch_size × steps_per_generation) is not a "
                             f"multiple of num_generations = {self.trainer.num_generations}")
        if self.fresh_samples:
            trl_compat.check_plain_reward_functions(self.trainer)
        # Resume: continue the running sum and the carried evaluation from the last logged training step
        # (namespaced keys, or the bare ones of logs written before the namespace).
        for rec in reversed(state.log_history):
            bare = {bare_name(k): v for k, v in rec.items()}
            if bare.get("cumulative_gap_alignment") is not None:
                self.cumulative_gap_alignment = float(bare["cumulative_gap_alignment"])
                if bare.get("cumulative_gap_alignment_fresh") is not None:
                    self.cumulative_gap_alignment_fresh = float(bare["cumulative_gap_alignment_fresh"])
                break
        for rec in reversed(state.log_history):
            eval_keys = {k: v for k, v in ((bare_name(k), v) for k, v in rec.items())
                         if k.startswith("eval_") and v is not None}
            if eval_keys:
                self._last_eval = eval_keys
                break
        if self.doctor is not None:  # replay the logged history so the live fit continues where it stopped
            for rec in state.log_history:
                if "step" in rec and ("loss" in rec or "reward" in rec):
                    self.doctor.record(int(rec["step"]), {bare_name(k): v for k, v in rec.items()
                                                          if not bare_name(k).startswith(DYNAMICS_PREFIX)})

    def on_step_begin(self, args, state, control, **kwargs):
        self._row = {}

    def on_pre_optimizer_step(self, args, state, control, model=None, optimizer=None, **kwargs):
        if self._batch is None or model is None:
            return
        self._measure = self._measured(state.global_step + 1) and self._gen_token_logps is not None
        if not self._measure:
            self._pre_params = self._copy_params(model)
            return
        b = self._batch
        if self._updates_since_generation == 0:
            seq = self._pre_seq_logps_candidate
            tok = self._gen_token_logps
        else:
            tok, seq = sequence_logprobs(model, b["prompt_ids"], b["prompt_mask"], b["completion_ids"],
                                         b["completion_mask"], temperature=self._temperature)
        self._pre_seq_logps = seq
        if self.fresh_samples and self.gap_alignment and self._rewards is not None and self._inputs is not None:
            self._sample_fresh(model, state.global_step + 1)
        # importance ratio pi_theta_k / pi_old, token level, over the whole generated batch
        m = b["completion_mask"].bool()
        log_ratio = (tok - self._gen_token_logps)[m]
        ratio = torch.exp(log_ratio)
        self._row.update({
            "is_ratio_mean": float(ratio.mean()), "is_ratio_std": float(ratio.std(unbiased=False)),
            "is_ratio_min": float(ratio.min()), "is_ratio_max": float(ratio.max()),
            "is_log_ratio_abs_mean": float(log_ratio.abs().mean()),
        })
        self._pre_params = self._copy_params(model)

    def _copy_params(self, model) -> list[torch.Tensor] | None:
        """θ_k before the update, for ‖Δθ‖ (``track_update_norm``; decided once: on below 50 M parameters)."""
        if self.track_update_norm is None:
            self.track_update_norm = sum(p.numel() for p in model.parameters()) < 50_000_000
        return [p.detach().clone() for p in model.parameters()] if self.track_update_norm else None

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
            if self.fresh_samples:
                self._row["cumulative_gap_alignment_fresh"] = self.cumulative_gap_alignment_fresh
            return
        b = self._batch
        _, post = sequence_logprobs(model, b["prompt_ids"], b["prompt_mask"], b["completion_ids"],
                                    b["completion_mask"], temperature=self._temperature)
        delta = (post - self._pre_seq_logps).cpu().numpy()
        rewards = self._rewards[: delta.shape[0]].numpy()
        G = self.trainer.num_generations if self.trainer is not None else len(delta)
        sums = all_reduce(self.trainer, group_gap_sums(delta, rewards, G), "sum")  # over every process's groups
        n_groups = int(round(sums[1]))
        if n_groups and lr <= 0:  # a schedule at zero: no step, no alignment to estimate
            dmu = float("nan")
            self._row.update({"logp_change_correct": sums[2] / n_groups,
                              "logp_change_incorrect": sums[3] / n_groups})
        elif n_groups:
            dmu = sums[0] / n_groups / lr
            self._row.update({"logp_change_correct": sums[2] / n_groups,
                              "logp_change_incorrect": sums[3] / n_groups})
        else:
            dmu = 0.0
            self._row.update({"logp_change_correct": 0.0, "logp_change_incorrect": 0.0})
        if math.isfinite(dmu):
            self.cumulative_gap_alignment += self.gap_alignment_every * lr * max(dmu, 0.0)
        self._row.update({"gap_alignment": dmu, "cumulative_gap_alignment": self.cumulative_gap_alignment,
                          "n_mixed_groups": float(n_groups)})
        if self._fresh is not None:
            self._fresh_alignment(model, lr)

    # ------------------------------------------------------------------------------------------ fresh samples
    def _sample_fresh(self, model, step: int) -> None:
        """Draw ``fresh_samples`` completions per prompt of the batch from the policy about to be updated (not
        used by the update), score them and record their log-probabilities before the update."""
        trainer, b, G = self.trainer, self._batch, self.trainer.num_generations
        rank = int(getattr(trainer.accelerator, "process_index", 0))
        seed = (self.fresh_seed * 1_000_003 + step * 7_919 + rank) % (2 ** 63)
        pi, pm, ci, cm = trl_compat.sample_completions(trainer, model, b["prompt_ids"][::G], b["prompt_mask"][::G],
                                                       self.fresh_samples, seed)
        rows = [self._inputs[i] for i in range(0, len(self._inputs), G) for _ in range(self.fresh_samples)]
        rewards = np.asarray(trl_compat.score_completions(trainer, rows, ci, cm), dtype=float)
        with isolated_rng(pi.device, seed):  # dropout in train mode must not draw on the training stream
            _, pre = sequence_logprobs(model, pi, pm, ci, cm, temperature=self._temperature)
        self._fresh = {"batch": (pi, pm, ci, cm), "rewards": rewards, "pre": pre}

    def _fresh_alignment(self, model, lr: float) -> None:
        f = self._fresh
        with isolated_rng(f["batch"][0].device, 0):
            _, post = sequence_logprobs(model, *f["batch"], temperature=self._temperature)
        delta = (post - f["pre"]).cpu().numpy()
        rewards = f["rewards"]
        sums = group_gap_sums(delta, rewards, self.fresh_samples) + [float(np.sum(rewards > 0.5)), float(len(rewards))]
        sums = all_reduce(self.trainer, sums, "sum")
        n_groups = int(round(sums[1]))
        dmu = (sums[0] / n_groups / lr if lr > 0 else float("nan")) if n_groups else 0.0
        if math.isfinite(dmu):
            self.cumulative_gap_alignment_fresh += self.gap_alignment_every * lr * max(dmu, 0.0)
        self._row.update({"gap_alignment_fresh": dmu, "cumulative_gap_alignment_fresh":
                          self.cumulative_gap_alignment_fresh, "n_mixed_groups_fresh": float(n_groups),
                          "fresh_success": sums[4] / sums[5] if sums[5] else float("nan")})
        self._fresh = None

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if self.eval_fn is not None and model is not None and state.is_world_process_zero and (
                state.global_step == 1 or state.global_step % self.eval_every == 0):
            res = self.eval_fn(model)
            self._last_eval = {f"eval_{k}": float(v) for k, v in res.items()}
            self._last_eval["eval_step"] = float(state.global_step)
        row = {**self._group_row, **self._row}
        if state.is_world_process_zero:
            row.update(self._last_eval)
        if self.gap_alignment and "gap_alignment" not in row:  # nothing captured this step: no estimate (empty cells)
            row["cumulative_gap_alignment"] = self.cumulative_gap_alignment
        trainer = self.trainer
        for name, value in row.items():
            trl_compat.push_metric(trainer, DYNAMICS_PREFIX + name, value)
        return control
