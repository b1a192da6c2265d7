"""The Gradient Gap of a real policy, measured: ‖g₊ − g₋‖ for the sum and the per-response-mean log-probability
(P2 spec §2.2, §3.6; used by the length sweep of issue 10).

For each prompt the gap is ``g₊ − g₋``: the mean score ``∇ log π(o)`` of its correct samples minus that of its
incorrect ones. With the sum score ``log π(o) = Σ_t log π(o_t)`` it is the gap of the un-normalised loss; with the
mean score ``(1/|o|) Σ_t log π(o_t)`` that of the length-normalised one. Both are averaged over the prompts whose
samples hold both outcomes and obtained from **one** backward pass each, of ``Σ_i w_i · score(o_i)`` with
``w_i = +1/(P·n₊)`` for the correct and ``−1/(P·n₋)`` for the incorrect samples of each of the ``P`` mixed prompts.
Theorem 3 bounds the safe step by the response length; P2-C5 sets the threshold by the gap's magnitude: these norms
say how the magnitude itself changes with the length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .._checks import check_int
from .evaluation import completion_text, encode_prompts, scorer
from .rng import isolated_rng
from .tasks import Problem


@dataclass(frozen=True)
class GapNorms:
    """The measured gap of one policy on one set of prompts."""

    sum_score: float
    """‖g₊ − g₋‖ of the sum score Σ_t log π(o_t) (no length normalisation)."""
    mean_score: float
    """‖g₊ − g₋‖ of the mean score (1/|o|) Σ_t log π(o_t) (GRPO's per-response 1/|o|)."""
    success: float
    """Sampled success rate of the policy on these prompts."""
    mixed_prompts: int
    """Prompts whose samples hold both outcomes (the gap is averaged over them)."""
    mean_length: float
    """Mean completion length in tokens."""


def gap_weights(rewards: np.ndarray) -> np.ndarray:
    """Weights ``w`` (prompts, samples) with ``Σ w·score`` = the mean over mixed prompts of ``g₊ − g₋``; zero for
    prompts whose samples all agree.

    >>> gap_weights(np.array([[1, 0, 0], [1, 1, 1]])).round(3).tolist()
    [[1.0, -0.5, -0.5], [0.0, 0.0, 0.0]]
    """
    r = np.asarray(rewards, float) > 0.5
    n_plus, n_minus = r.sum(1, keepdims=True), (~r).sum(1, keepdims=True)
    mixed = (n_plus > 0) & (n_minus > 0)
    w = np.where(r, 1.0 / np.maximum(n_plus, 1), -1.0 / np.maximum(n_minus, 1)) * mixed
    return w / max(int(mixed.sum()), 1)


def weighted_score_norms(model, ids: torch.Tensor, attention_mask: torch.Tensor, completion_mask: torch.Tensor,
                         weights: torch.Tensor, *, temperature: float = 1.0) -> tuple[float, float]:
    """``(‖∇ Σ_i w_i Σ_t log π(o_it)‖, ‖∇ Σ_i w_i (1/|o_i|) Σ_t log π(o_it)‖)`` over the model's trainable
    parameters; the completions are the last ``completion_mask.shape[1]`` columns of ``ids``. Gradients are left
    cleared."""
    tc = completion_mask.shape[1]
    comp = ids[:, -tc:]
    mask = completion_mask.float()
    lengths = mask.sum(1).clamp(min=1.0)
    params = [p for p in model.parameters() if p.requires_grad]
    norms = []
    for per_sequence in (lambda s: s, lambda s: s / lengths):
        model.zero_grad(set_to_none=True)
        logits = model(input_ids=ids, attention_mask=attention_mask).logits[:, -tc - 1:-1].float() / temperature
        logp = torch.log_softmax(logits, -1).gather(-1, comp.unsqueeze(-1)).squeeze(-1) * mask
        (weights * per_sequence(logp.sum(1))).sum().backward()
        norms.append(float(torch.sqrt(sum((p.grad.float() ** 2).sum() for p in params if p.grad is not None))))
    model.zero_grad(set_to_none=True)
    return norms[0], norms[1]


def measure_gap_norms(model, tokenizer, problems: Sequence[Problem], *, samples: int, max_new_tokens: int,
                      reward: str = "exact", temperature: float = 1.0, seed: int = 0,
                      prompt_style: str = "plain") -> GapNorms:
    """Sample ``samples`` completions per problem from ``model`` (isolated RNG ``seed``), score them, and return the
    norms of the sum-score and mean-score gaps (two backward passes; the model's gradients are left cleared)."""
    samples = check_int("samples", samples, 2, 1024)
    check_int("max_new_tokens", max_new_tokens, 1)
    score = scorer(reward)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    texts = encode_prompts(tokenizer, problems, prompt_style)
    enc = tokenizer(texts, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False)
    prompt_ids = enc["input_ids"].repeat_interleave(samples, 0).to(device)
    prompt_mask = enc["attention_mask"].repeat_interleave(samples, 0).to(device)
    with torch.no_grad(), isolated_rng(device, seed):
        gen = model.generate(input_ids=prompt_ids, attention_mask=prompt_mask, max_new_tokens=max_new_tokens,
                             do_sample=True, temperature=temperature, top_p=None, top_k=None,
                             pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    comp = gen[:, prompt_ids.shape[1]:]
    eos = (comp == tokenizer.eos_token_id).int()
    after_eos = (eos.cumsum(1) - eos) > 0          # tokens after the first EOS (the EOS itself counts, as in TRL)
    comp_mask = (~after_eos).long()
    decoded = tokenizer.batch_decode(comp, skip_special_tokens=True)
    rewards = np.array([score(completion_text(c), problems[i // samples].answer) for i, c in enumerate(decoded)],
                       float).reshape(len(problems), samples)
    weights = torch.tensor(gap_weights(rewards).ravel(), dtype=torch.float32, device=device)
    ids = torch.cat([prompt_ids, comp], 1)
    att = torch.cat([prompt_mask, comp_mask], 1)
    norms = weighted_score_norms(model, ids, att, comp_mask, weights, temperature=temperature)
    lengths = comp_mask.sum(1).clamp(min=1).float()
    model.train(was_training)
    mixed = int(((rewards > 0.5).any(1) & (rewards <= 0.5).any(1)).sum())
    return GapNorms(sum_score=norms[0], mean_score=norms[1], success=float(rewards.mean()), mixed_prompts=mixed,
                    mean_length=float(lengths.mean()))
