"""Tiny decoder-only transformers (Llama architecture, character tokenizer) at three sizes, and their warm start.

The models are built from a config (no download) and warm-started by a short supervised phase on the training task
until the *sampled* success rate (temperature 1, the GRPO sampling distribution) first reaches the target window
(default 10–40 %): GRPO needs some reward signal, and the paper's models start well above zero on GSM8K.

Warm-started checkpoints are not committed: they are rebuilt deterministically (same config and seed give the same
weights bit for bit on the same machine) and cached under :func:`cache_dir` keyed by a hash of everything that
defines them.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from .._checks import check_in_range, check_int
from .._io import atomic_directory, atomic_write_text
from ..paths import cache_dir
from .evaluation import accuracy
from .model_sizes import TINY_SIZES
from .tasks import heldout_problems, train_problems
from .tokenizer import char_tokenizer, vocab_size

WARM_START_VERSION = 1
"""Bump when the warm-start procedure changes (invalidates cached checkpoints)."""


def build_tiny_model(size: str, seed: int = 0):
    """A freshly initialised tiny ``LlamaForCausalLM`` of the named size (``tiny-s``, ``tiny-m``, ``tiny-l``)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if size not in TINY_SIZES:
        raise ValueError(f"size must be one of {tuple(TINY_SIZES)}, got {size!r}")
    s = TINY_SIZES[size]
    tok = char_tokenizer()
    cfg = LlamaConfig(vocab_size=vocab_size(), hidden_size=s.hidden_size, num_hidden_layers=s.num_hidden_layers,
                      num_attention_heads=s.num_attention_heads, num_key_value_heads=s.num_attention_heads,
                      intermediate_size=s.intermediate_size, max_position_embeddings=1024, rope_theta=10000.0,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id,
                      tie_word_embeddings=True, attention_dropout=0.0)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    return model


def n_parameters(model) -> int:
    """Number of distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


@dataclass(frozen=True)
class WarmStart:
    """Everything that defines a warm-started checkpoint (its cache key)."""

    size: str
    """Model size, a key of :data:`TINY_SIZES`."""
    digits: int = 2
    """Operand digits of the ``add`` task used for the supervised phase."""
    answer_length: int = 0
    """Zero-padded answer width of that task (0: no padding)."""
    target_low: float = 0.15
    """Stop at the first evaluation whose sampled success rate is ≥ this (the GRPO start)."""
    target_high: float = 0.40
    """Upper end of the allowed initial success window; overshooting it raises an error."""
    seed: int = 0
    """Seed of the initialisation and of the supervised batches."""
    learning_rate: float = 3e-3
    """AdamW learning rate of the supervised phase."""
    batch_size: int = 64
    """Supervised batch size."""
    check_every: int = 10
    """Evaluate the sampled success rate every this many supervised steps."""
    max_steps: int = 4000
    """Give up (ValueError) if the window is not reached by then."""
    eval_size: int = 256
    """Held-out problems for the sampled success rate (one sample each, temperature 1)."""

    def __post_init__(self) -> None:
        if self.size not in TINY_SIZES:
            raise ValueError(f"size must be one of {tuple(TINY_SIZES)}, got {self.size!r}")
        check_in_range("target_low", self.target_low, 0, 1)
        check_in_range("target_high", self.target_high, self.target_low, 1)
        check_int("check_every", self.check_every, 1)
        check_int("max_steps", self.max_steps, 1)

    def key(self) -> str:
        blob = json.dumps({**asdict(self), "version": WARM_START_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _sft_batch(tok, problems, device):
    seqs, masks = [], []
    for p in problems:
        ids_p = tok(p.prompt, add_special_tokens=False)["input_ids"]
        ids_a = tok(p.answer, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        seqs.append(ids_p + ids_a)
        masks.append([0] * len(ids_p) + [1] * len(ids_a))
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), tok.pad_token_id, dtype=torch.long)
    att = torch.zeros((len(seqs), width), dtype=torch.long)
    lab = torch.full((len(seqs), width), -100, dtype=torch.long)
    for i, (s, m) in enumerate(zip(seqs, masks)):  # left padding, as in generation
        off = width - len(s)
        ids[i, off:] = torch.tensor(s)
        att[i, off:] = 1
        lab[i, off:] = torch.tensor([t if k else -100 for t, k in zip(s, m)])
    return ids.to(device), att.to(device), lab.to(device)


def warm_start(spec: WarmStart, *, progress: bool = False) -> tuple[Path, dict]:
    """Path of the warm-started checkpoint of ``spec`` (built and cached if absent) and its info dict
    (``steps``, ``initial_success``, ``history``).

    Supervised next-token training on ``prompt + answer + <eos>`` (loss on the answer tokens only), checking the
    sampled success rate on a held-out set every ``check_every`` steps; stops at the first check inside the window.
    """
    out = cache_dir() / "warmstart" / f"{spec.size}-{spec.key()}"
    info_path = out / "warmstart.json"
    if info_path.exists():
        return out, json.loads(info_path.read_text())
    tok = char_tokenizer()
    model = build_tiny_model(spec.size, seed=spec.seed)
    model.train()
    device = torch.device("cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=0.0)
    held = heldout_problems(spec.eval_size, digits=spec.digits, answer_length=spec.answer_length, seed=1)
    pool = train_problems(20_000, seed=spec.seed + 7, digits=spec.digits, answer_length=spec.answer_length,
                          heldout=held)
    max_new = len(max((p.answer for p in held), key=len)) + 2
    rng = np.random.default_rng(spec.seed)
    history = []
    success = 0.0
    step = 0
    for step in range(1, spec.max_steps + 1):
        idx = rng.integers(0, len(pool), size=spec.batch_size)
        ids, att, lab = _sft_batch(tok, [pool[i] for i in idx], device)
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % spec.check_every == 0:
            success = accuracy(model, tok, held, max_new_tokens=max_new, do_sample=True, temperature=1.0,
                               seed=spec.seed, batch_size=256)
            history.append((step, float(loss.item()), success))
            if progress:
                print(f"warm start {spec.size}: step {step} loss {loss.item():.3f} sampled success {success:.3f}")
            if success >= spec.target_low:
                break
    else:
        raise ValueError(f"warm start {spec.size} did not reach target_low={spec.target_low} in "
                         f"max_steps={spec.max_steps} (last sampled success {success:.3f})")
    if success > spec.target_high:
        raise ValueError(f"warm start {spec.size} overshot target_high={spec.target_high} (success {success:.3f} "
                         f"at step {step}); lower learning_rate or check_every")
    info = {"spec": asdict(spec), "steps": step, "initial_success": success, "history": history}
    with atomic_directory(out) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        atomic_write_text(tmp / "warmstart.json", json.dumps(info, indent=1))
    return out, info
