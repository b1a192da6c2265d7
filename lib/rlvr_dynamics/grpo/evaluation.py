"""Batched evaluation of a causal LM on a list of problems with an exact reward (greedy or sampled).

Used for the held-out evaluation reward during training (instrumentation), the warm start's stopping rule, and the
before/after transfer table on the eight evaluation families (P1-C14).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from .._checks import check_int
from .rng import isolated_rng
from .rewards import completion_text, scorer
from .tasks import Problem, format_prompt


def encode_prompts(tokenizer, problems: Sequence[Problem], prompt_style: str = "plain") -> list[str]:
    """Prompt strings exactly as TRL builds them (chat template applied for the ``chat`` style)."""
    texts = []
    for p in problems:
        prompt = format_prompt(p, prompt_style)
        if prompt_style == "chat":
            prompt = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        texts.append(prompt)
    return texts


@torch.no_grad()
def generate(model, tokenizer, problems: Sequence[Problem], *, max_new_tokens: int, prompt_style: str = "plain",
             do_sample: bool = False, temperature: float = 1.0, seed: int = 0, batch_size: int = 64,
             num_samples: int = 1) -> list[list[str]]:
    """Completions (decoded, special tokens skipped): ``num_samples`` per problem, in problem order.

    Sampling runs on :func:`~rlvr_dynamics.grpo.rng.isolated_rng` seeded with ``seed``, so evaluation never perturbs
    the training RNG stream (resume and determinism rely on it).
    """
    check_int("max_new_tokens", max_new_tokens, 1)
    check_int("batch_size", batch_size, 1)
    check_int("num_samples", num_samples, 1)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    texts = encode_prompts(tokenizer, problems, prompt_style)
    texts = [t for t in texts for _ in range(num_samples)]
    out: list[str] = []
    try:
        with isolated_rng(device, seed):
            for i in range(0, len(texts), batch_size):
                chunk = texts[i:i + batch_size]
                enc = tokenizer(chunk, return_tensors="pt", padding=True, padding_side="left",
                                add_special_tokens=False)
                enc = {k: v.to(device) for k, v in enc.items()}
                gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=do_sample,
                                     temperature=temperature if do_sample else None, top_p=None, top_k=None,
                                     pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
                out.extend(tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True))
    finally:
        model.train(was_training)
    return [out[i * num_samples:(i + 1) * num_samples] for i in range(len(problems))]


def accuracy(model, tokenizer, problems: Sequence[Problem], *, max_new_tokens: int, reward: str = "exact",
             prompt_style: str = "plain", do_sample: bool = False, temperature: float = 1.0, seed: int = 0,
             batch_size: int = 64, num_samples: int = 1) -> float:
    """Mean reward of the model's completions on ``problems`` (greedy by default; sampled if ``do_sample``)."""
    score = scorer(reward)
    comps = generate(model, tokenizer, problems, max_new_tokens=max_new_tokens, prompt_style=prompt_style,
                     do_sample=do_sample, temperature=temperature, seed=seed, batch_size=batch_size,
                     num_samples=num_samples)
    vals = [score(completion_text(c), p.answer) for p, cs in zip(problems, comps) for c in cs]
    return float(np.mean(vals))
