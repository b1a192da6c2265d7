"""Tiny decoder-only transformers (Llama architecture, character tokenizer) and their warm start.

The models are built from a config (no download) and warm-started by a supervised phase on the training task, in one
of two modes:

* ``threshold`` (the first P1 runs): correct answers only, stopped at the first check whose *sampled* success rate
  (temperature 1, the GRPO sampling distribution) reaches the target window. GRPO must then still teach the task.
* ``mixture``: trained to convergence (warm-up, cosine decay) on a mixture of correct answers and near misses
  (:class:`~rlvr_dynamics.grpo.tasks.AnswerMixture`), so the model samples the right answer with a prompt-dependent
  probability q (mean ``correct_frac``). GRPO then *sharpens a prior*, as it mostly does in LLMs. Convergence is
  measured, not assumed: the excess loss (model NLL minus the mixture's own NLL on the same fixed held-out targets,
  per answer, an estimate of KL(mixture‖model)) must end below ``max_excess_loss``, and the sampled success must
  land in the target window; otherwise the checkpoint is cached with its problems listed and never trained on.

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

from .rng import numpy_stream, stream_seed
import torch

from .._checks import check_in_range, check_int
from .._io import atomic_directory, atomic_write_text
from ..paths import cache_dir
from .evaluation import accuracy
from .model_sizes import TINY_SIZES
from .tasks import AnswerMixture, Problem, heldout_problems, train_problems
from .tokenizer import char_tokenizer, vocab_size

WARM_START_VERSION = 2
"""Bump when the warm-start procedure changes (invalidates cached checkpoints). 2: named random streams
(:func:`rlvr_dynamics.grpo.rng.stream_seed`: warm_start_init, warm_start_data, warm_start_check)."""

MIXTURE_VERSION = 1
"""Bump when the ``mixture`` targets (:class:`~rlvr_dynamics.grpo.tasks.AnswerMixture`) or procedure change."""

_ADDED_DEFAULTS = {"mode": "threshold", "correct_frac": 0.2, "difficulty_factor": 0.4, "answer_copies": 1,
                   "max_excess_loss": 0.1, "per_copy": False}
"""WarmStart fields added after the first runs: left out of the key at their defaults (cached and recorded keys of
the first runs stay valid)."""


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
    mode: str = "threshold"
    """``threshold`` or ``mixture`` (see the module docstring). In ``mixture`` mode ``max_steps`` is the length of
    the schedule (every step is taken) and ``check_every`` the period of the excess-loss check."""
    correct_frac: float = 0.2
    """``mixture``: mean probability that a target is exactly right."""
    difficulty_factor: float = 0.4
    """``mixture``: factor of that probability per difficulty level (:func:`~rlvr_dynamics.grpo.tasks.difficulty`)."""
    answer_copies: int = 1
    """Copies of the answer in each target."""
    per_copy: bool = False
    """``mixture``: ``correct_frac`` is the probability of each copy (:class:`~.tasks.AnswerMixture`)."""
    max_excess_loss: float = 0.1
    """``mixture``: the warm start is unusable unless its final excess loss (nats per answer, ≈ the KL from the
    target mixture to the model's answer distribution, averaged over held-out prompts) is below this."""

    def __post_init__(self) -> None:
        if self.size not in TINY_SIZES:
            raise ValueError(f"size must be one of {tuple(TINY_SIZES)}, got {self.size!r}")
        if self.mode not in ("threshold", "mixture"):
            raise ValueError(f"mode must be 'threshold' or 'mixture', got {self.mode!r}")
        check_in_range("target_low", self.target_low, 0, 1)
        check_in_range("target_high", self.target_high, self.target_low, 1)
        check_int("check_every", self.check_every, 1)
        check_int("max_steps", self.max_steps, 1)
        check_int("answer_copies", self.answer_copies, 1, 64)
        check_in_range("max_excess_loss", self.max_excess_loss, 0, None, low_inclusive=False)

    def key(self, version: int = WARM_START_VERSION) -> str:
        """The cache key: a hash of the spec and the warm-start procedure's ``version`` (runs record the key; a run
        made before a version bump hashes with the version it was made at)."""
        d = asdict(self)
        for k, v in _ADDED_DEFAULTS.items():
            if d[k] == v:
                d.pop(k)
        if self.mode == "mixture":
            d["mixture_version"] = MIXTURE_VERSION
        blob = json.dumps({**d, "version": version}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def mixture(self) -> AnswerMixture:
        """The supervised target distribution of the ``mixture`` mode."""
        return AnswerMixture(self.correct_frac, self.difficulty_factor, digits=self.digits,
                             answer_length=self.answer_length, copies=self.answer_copies, per_copy=self.per_copy)


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
    if spec.mode == "mixture":
        return _mixture_warm_start(spec, out, progress=progress)
    tok = char_tokenizer()
    model = build_tiny_model(spec.size, seed=stream_seed(spec.seed, "warm_start_init"))
    model.train()
    device = torch.device("cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=0.0)
    held = heldout_problems(spec.eval_size, digits=spec.digits, answer_length=spec.answer_length, seed=1,
                            answer_copies=spec.answer_copies)
    pool = train_problems(20_000, seed=stream_seed(spec.seed, "warm_start_data"), digits=spec.digits, answer_length=spec.answer_length,
                          heldout=held, answer_copies=spec.answer_copies)
    max_new = len(max((p.answer for p in held), key=len)) + 2
    rng = numpy_stream(spec.seed, "warm_start_data")
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
                               seed=stream_seed(spec.seed, "warm_start_check"), batch_size=256)
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


def _sum_nll(model, tok, problems, device, batch_size: int = 256) -> tuple[float, int]:
    """Summed next-token NLL of the answers (+ eos) of ``problems`` under ``model``, and the number of tokens."""
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(problems), batch_size):
            ids, att, lab = _sft_batch(tok, problems[i:i + batch_size], device)
            logits = model(input_ids=ids, attention_mask=att).logits[:, :-1].float()
            target = lab[:, 1:]
            nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                                                    ignore_index=-100, reduction="sum")
            total += float(nll)
            count += int((target != -100).sum())
    return total, count


def _mixture_warm_start(spec: WarmStart, out: Path, *, progress: bool = False) -> tuple[Path, dict]:
    """Supervised training to convergence on the answer mixture of ``spec`` (see the module docstring)."""
    import math

    mix = spec.mixture()
    tok = char_tokenizer()
    model = build_tiny_model(spec.size, seed=stream_seed(spec.seed, "warm_start_init"))
    model.train()
    device = torch.device("cpu")
    opt = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=0.0)
    warmup = min(100, spec.max_steps // 10)

    def lr_factor(step: int) -> float:  # linear warm-up, then cosine decay to 10 %
        if step < warmup:
            return (step + 1) / warmup
        frac = (step - warmup) / max(1, spec.max_steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, frac)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    held = heldout_problems(spec.eval_size, digits=spec.digits, answer_length=spec.answer_length, seed=1,
                            answer_copies=spec.answer_copies)
    pool = [p.prompt for p in train_problems(20_000, seed=stream_seed(spec.seed, "warm_start_data"), digits=spec.digits,
                                             answer_length=spec.answer_length, heldout=held)]
    check_rng = numpy_stream(spec.seed, "warm_start_check")
    check_set, check_true_nll = [], 0.0
    for p in held:
        text, logp = mix.sample(p.prompt, check_rng)
        check_set.append(Problem(p.prompt, text, "warm_check"))
        check_true_nll -= logp
    rng = numpy_stream(spec.seed, "warm_start_data")
    history = []
    excess = float("inf")
    for step in range(1, spec.max_steps + 1):
        idx = rng.integers(0, len(pool), size=spec.batch_size)
        batch = [Problem(pool[i], mix.sample(pool[i], rng)[0], "warm") for i in idx]
        ids, att, lab = _sft_batch(tok, batch, device)
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % spec.check_every == 0 or step == spec.max_steps:
            model.eval()
            nll, ntok = _sum_nll(model, tok, check_set, device)
            model.train()
            excess = (nll - check_true_nll) / len(check_set)
            history.append([step, float(loss.item()), excess])
            if progress:
                print(f"warm start {spec.size} (mixture): step {step} loss {loss.item():.4f} "
                      f"excess {excess:.4f} nats/answer")
    max_new = len(max((p.answer for p in held), key=len)) + 2
    from .evaluation import generate
    from .rewards import score_exact

    comps = generate(model, tok, held, max_new_tokens=max_new, do_sample=True, temperature=1.0,
                     seed=stream_seed(spec.seed, "warm_start_check"),
                     batch_size=256, num_samples=4)
    scores = np.array([[score_exact(c, p.answer) for c in cs] for p, cs in zip(held, comps)])
    success = float(scores.mean())
    level = np.array([mix.level(p.prompt) for p in held])
    by_difficulty = {str(c): {"n_prompts": int((level == c).sum()), "sampled_success": float(scores[level == c].mean()),
                              "target_q": float(np.mean([mix.success_probability(p.prompt)
                                                         for p, k in zip(held, level) if k == c]))}
                     for c in sorted(set(level.tolist()))}
    problems = []
    if excess > spec.max_excess_loss:
        problems.append(f"did not converge: excess loss {excess:.4f} nats/answer > max_excess_loss="
                        f"{spec.max_excess_loss} after max_steps={spec.max_steps}; raise max_steps")
    if not spec.target_low <= success <= spec.target_high:
        problems.append(f"sampled success {success:.3f} is outside [target_low={spec.target_low}, "
                        f"target_high={spec.target_high}]; change correct_frac")
    info = {"spec": asdict(spec), "steps": spec.max_steps, "initial_success": success, "problems": problems,
            "expected_success": float(np.mean([mix.success_probability(p.prompt) for p in held])),
            "excess_loss": excess, "by_difficulty": by_difficulty,
            "frac_prompts_never_right": float((scores.max(axis=1) == 0).mean()), "history": history}
    with atomic_directory(out) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        atomic_write_text(tmp / "warmstart.json", json.dumps(info, indent=1))
    return out, info


def check_warm_start(info: dict) -> None:
    """Raise ValueError if a warm start's info lists problems (a ``mixture`` warm start that did not converge or
    landed outside its success window is kept in the cache for inspection, but never trained on)."""
    if info.get("problems"):
        raise ValueError(f"warm start {info['spec']['size']} (key {WarmStart(**info['spec']).key()}) is unusable: "
                         + "; ".join(info["problems"]))
