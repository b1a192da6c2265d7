"""The finite-difference gap alignment of one update on a batch of completions (P2 spec §5.4), in torch.

:func:`sequence_logprobs` gives log π(o) of whole completions before and after an update; :func:`group_gap_sums`
turns the change Δlog π into the per-group gap ``mean_{r=1} Δlogπ − mean_{r=0} Δlogπ`` summed over mixed groups;
:func:`all_reduce` sums such sums over processes. Used by
:class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback`, on the step's own rollouts and on fresh samples.
"""
from __future__ import annotations

import numpy as np
import torch


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


def group_gap_sums(delta: np.ndarray, rewards: np.ndarray, group_size: int) -> list[float]:
    """``[Σ gap, number of mixed groups, Σ mean Δlogπ of correct, Σ mean Δlogπ of incorrect]`` over the groups of
    ``group_size`` consecutive completions that hold both rewards (reward > 0.5 is correct); gap = the difference of
    the two means (P2 spec §5.4)."""
    per_group, plus, minus = [], [], []
    for g in range(0, len(delta), group_size):
        r, d = rewards[g:g + group_size], delta[g:g + group_size]
        ok = r > 0.5
        if ok.any() and (~ok).any():
            plus.append(d[ok].mean())
            minus.append(d[~ok].mean())
            per_group.append(d[ok].mean() - d[~ok].mean())
    return [float(np.sum(per_group)), float(len(per_group)), float(np.sum(plus)), float(np.sum(minus))]


def all_reduce(trainer, values: list[float], op: str) -> list[float]:
    """``values`` reduced (``"sum"`` or ``"max"``) over every process under DDP; unchanged in one process. The
    tensor sits on the trainer's device, as NCCL requires."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
        return list(values)
    device = getattr(getattr(trainer, "accelerator", None), "device", "cpu")
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM if op == "sum" else dist.ReduceOp.MAX)
    return t.cpu().tolist()
