"""Panel evaluation: the expected training reward E[r_t] measured on a fixed panel of held-out prompts (issue 23).

P1's oscillator describes the *expected* reward over the prompt distribution; a training batch of a few prompts
estimates it with a noise dominated by which prompts were drawn. The panel estimates it directly: one completion per
prompt of a fixed set of ``panel_size`` held-out problems, sampled at the training temperature with the training
sampler's settings (top-p 1, no top-k, the trainer's end-of-sequence tokens), scored with the *training* reward, at
the steps of a schedule that is dense during the rise. Logged in ``metrics.csv`` as ``panel_reward`` (mean reward)
and ``panel_reward_se`` (binomial standard error ``sqrt(p(1-p)/n)``), optionally ``panel_greedy_reward`` (greedy
decoding on the same panel); the measurement at step 0 (the model before training) is in ``eval.json`` under
``panel_before`` (:func:`panel_curve` joins both).

Choices [D]:

* **The panel** (:func:`panel_problems`) is drawn once with the fixed seed :data:`PANEL_SEED`, never the run's seed:
  ``panel_size`` *distinct* ``add`` problems of the run's operand width, none of them a training prompt of the run's
  pool. Every run of a grid (any seed, G, learning rate) is measured on the same problems.
* **The samples** are drawn on the run's ``panel`` random stream (:func:`~rlvr_dynamics.grpo.rng.stream_seed`), a
  fresh sub-stream per step (:func:`panel_sample_seed`), inside :func:`~rlvr_dynamics.grpo.rng.isolated_rng`: training
  draws the same numbers with and without the panel (tested), and the panel points' sampling noise is independent
  from step to step (one stream reused at every step would correlate it and make the curve look smoother than its
  binomial SE says).
* **The schedule** (:func:`panel_schedule`): ``"2:20,5:60,10"`` is every 2 steps up to step 20, every 5 steps up to
  60 (counted from 20: 25, 30, …), every 10 steps after (70, 80, …); the last step of the run is always measured.
* **Speed**: one batch of up to :data:`PANEL_BATCH_SIZE` prompts, KV cache on, bf16 autocast when the run trains
  in bf16 (``RunConfig.mixed_precision``), float32 otherwise; ``bench/bench_panel.py`` measures it.

This module imports torch only inside the functions that generate, so configs validate without it.
"""
from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .fields import PANEL_FIELDS  # noqa: F401  (the metrics.csv columns the panel writes)
from .tasks import Problem, add_problems, heldout_problems, train_problems

DEFAULT_PANEL_STEPS = "2:20,5:60,10"
"""``RunConfig.panel_steps``'s default: every 2 steps to step 20, every 5 to step 60, every 10 after."""

PANEL_SEED = 0
"""Seed of the panel's draw (the problems), the same for every run: the panel must not depend on the run's seed."""

PANEL_BATCH_SIZE = 256
"""Prompts per ``generate`` call (the whole panel of the project's configs in one batch)."""



# --------------------------------------------------------------------------------------------------- schedule
def parse_panel_steps(spec: Any, field: str = "panel_steps") -> tuple[tuple[int, int | None], ...]:
    """The segments ``((period, end), …)`` of a panel schedule; the last ``end`` may be None (open-ended).

    ``spec`` is a string of comma-separated segments ``"period:end"`` (every ``period`` steps up to step ``end``) with
    an optional last segment ``"period"`` (every ``period`` steps to the end of the run), an integer (every that many
    steps), or a list of such segments (strings or integers). Ends must increase strictly and periods be ≥ 1.
    Raises ``ValueError`` naming ``field``, the value and the expected form.

    >>> parse_panel_steps("2:20,5:60,10")
    ((2, 20), (5, 60), (10, None))
    >>> parse_panel_steps(["1:5", 3])
    ((1, 5), (3, None))
    """
    form = ("a schedule like '2:20,5:60,10' (every 2 steps to step 20, every 5 to 60, every 10 after): "
            "comma-separated 'period:end' segments with increasing ends, optionally ending with an open 'period'; "
            "or an integer period, or a list of such segments")

    def bad(why: str) -> ValueError:
        return ValueError(f"RunConfig.{field} must be {form}; got {spec!r} ({why})")

    if isinstance(spec, bool):
        raise bad("a bool")
    if isinstance(spec, int):
        items: list[Any] = [spec]
    elif isinstance(spec, str):
        if not spec.strip():
            raise bad("empty")
        items = [s.strip() for s in spec.split(",")]
    elif isinstance(spec, (list, tuple)):
        if not spec:
            raise bad("empty")
        items = list(spec)
    else:
        raise bad(f"a {type(spec).__name__}")

    def as_int(text: Any, what: str) -> int:
        if isinstance(text, bool):
            raise bad(f"{what} {text!r} is not an integer")
        if isinstance(text, int):
            return text
        if isinstance(text, str) and text.strip().lstrip("+").isdigit():
            return int(text.strip())
        raise bad(f"{what} {text!r} is not an integer")

    segments: list[tuple[int, int | None]] = []
    last_end = 0
    for i, item in enumerate(items):
        if isinstance(item, str) and ":" in item:
            parts = item.split(":")
            if len(parts) != 2:
                raise bad(f"segment {item!r} has more than one ':'")
            period, end = as_int(parts[0], "period"), as_int(parts[1], "end")
        elif isinstance(item, (int, str)) and not isinstance(item, bool):
            period, end = as_int(item, "period"), None
            if i != len(items) - 1:
                raise bad(f"the open-ended segment {item!r} must be the last")
        else:
            raise bad(f"segment {item!r} is not 'period:end' or a period")
        if period < 1:
            raise bad(f"period {period} is not >= 1")
        if end is not None:
            if end <= last_end:
                raise bad(f"end {end} does not exceed the previous end {last_end}")
            last_end = end
        segments.append((period, end))
    return tuple(segments)


def canonical_panel_steps(spec: Any, field: str = "panel_steps") -> str:
    """The canonical string of a schedule (``[2:20, 10]`` and ``"2:20, 10"`` both give ``"2:20,10"``), so equal
    schedules hash equally."""
    return ",".join(f"{p}:{e}" if e is not None else f"{p}" for p, e in parse_panel_steps(spec, field))


def panel_schedule(spec: Any, max_steps: int) -> list[int]:
    """The optimizer steps (1 … ``max_steps``) at which the panel is measured: step ``start + k·period`` ≤ ``end``
    of each segment, each segment starting at the previous one's end (0 for the first), plus ``max_steps`` itself.
    Step 0 (before training) is measured too, separately.

    >>> panel_schedule("2:10,5:30,10", 60)
    [2, 4, 6, 8, 10, 15, 20, 25, 30, 40, 50, 60]
    >>> panel_schedule("3:10", 12)
    [3, 6, 9, 12]
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"max_steps must be an integer >= 1, got {max_steps!r}")
    steps: set[int] = {max_steps}
    start = 0
    for period, end in parse_panel_steps(spec):
        stop = max_steps if end is None else min(end, max_steps)
        steps.update(range(start + period, stop + 1, period))
        if end is None or end >= max_steps:
            break
        start = end
    return sorted(steps)


# ------------------------------------------------------------------------------------------------------ panel
def panel_problems(size: int, *, digits: int = 2, answer_length: int = 0, answer_copies: int = 1,
                   train_pool_size: int = 4096) -> list[Problem]:
    """The panel: ``size`` distinct ``add`` problems drawn with :data:`PANEL_SEED`, none of them a prompt of the
    training pool that :func:`~rlvr_dynamics.grpo.runner.training_dataset` builds with these arguments.

    Raises ``ValueError`` naming ``panel_size`` when the held-out problems are too few (e.g. one-digit operands)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"panel_size must be an integer >= 1, got {size!r}")
    pool = train_problems(train_pool_size, seed=0, digits=digits, answer_length=answer_length,
                          heldout=heldout_problems(256, digits=digits, answer_length=answer_length, seed=1),
                          answer_copies=answer_copies)
    exclude = {p.prompt for p in pool}
    available = (10 ** digits) ** 2 - len(exclude)
    if size > available // 2:
        raise ValueError(f"panel_size={size} is too large: only {available} {digits}-digit addition problems are "
                         f"not training prompts (train_pool_size={train_pool_size}); use at most {available // 2}")
    draw = add_problems(4 * size + 64, PANEL_SEED, digits=digits, answer_length=answer_length, family="add_panel",
                        exclude=exclude, answer_copies=answer_copies)
    out: list[Problem] = []
    seen: set[str] = set()
    for p in draw:
        if p.prompt not in seen:
            seen.add(p.prompt)
            out.append(p)
            if len(out) == size:
                return out
    raise ValueError(f"panel_size={size}: could not draw that many distinct held-out problems")  # pragma: no cover


def config_panel_problems(cfg) -> list[Problem]:
    """:func:`panel_problems` of a :class:`~rlvr_dynamics.grpo.config.RunConfig` (``cfg.panel_size`` > 0)."""
    return panel_problems(cfg.panel_size, digits=cfg.digits, answer_length=cfg.answer_length,
                          answer_copies=cfg.answer_copies, train_pool_size=cfg.train_pool_size)


def binomial_se(p: float, n: int) -> float:
    """Standard error ``sqrt(p (1 − p) / n)`` of a mean of ``n`` independent 0/1 rewards with mean ``p``.

    >>> binomial_se(0.5, 100)
    0.05
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not (0.0 <= p <= 1.0):
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    return math.sqrt(p * (1.0 - p) / n)


def panel_sample_seed(seed: int, step: int) -> int:
    """Seed of the panel's samples at optimizer step ``step`` of a run seeded ``seed``: the ``step``-th sub-stream of
    the run's ``panel`` stream (``SeedSequence(stream_seed(seed, "panel"), spawn_key=(step,))``)."""
    import numpy as np

    from .rng import stream_seed

    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a non-negative integer, got {step!r}")
    base = stream_seed(seed, "panel")
    return int(np.random.SeedSequence(base, spawn_key=(step,)).generate_state(1, dtype=np.uint32)[0])


@dataclass(frozen=True)
class PanelEstimate:
    """One panel measurement."""

    reward: float
    """Mean training reward of one sampled completion per panel prompt."""
    se: float
    """Binomial standard error ``sqrt(reward (1 − reward) / n)`` (exact for 0/1 rewards)."""
    n: int
    """Panel size (sampled completions)."""
    greedy_reward: float | None = None
    """Mean reward of greedy completions on the same panel (None when not measured)."""
    seconds: float = 0.0
    """Wall time of the measurement (not logged in ``metrics.csv``: it would break byte-identical logs)."""

    def as_metrics(self) -> dict[str, float]:
        out = {"panel_reward": self.reward, "panel_reward_se": self.se}
        if self.greedy_reward is not None:
            out["panel_greedy_reward"] = self.greedy_reward
        return out


def generation_config(model, tokenizer, *, max_new_tokens: int, temperature: float, do_sample: bool = True):
    """A ``GenerationConfig`` with TRL's training settings (``GRPOTrainer``'s: top-p 1, top-k 0, no min-p,
    repetition penalty 1, every end-of-sequence id the model declares plus the tokenizer's), KV cache on."""
    from transformers import GenerationConfig

    eos = getattr(model.generation_config, "eos_token_id", None)
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos:
        eos = [tokenizer.eos_token_id, *eos]
    kw: dict[str, Any] = dict(max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id,
                              bos_token_id=tokenizer.bos_token_id, eos_token_id=eos, use_cache=True,
                              disable_compile=True)
    if do_sample:
        kw.update(do_sample=True, temperature=temperature, top_p=1.0, top_k=0, min_p=None, repetition_penalty=1.0)
    else:
        kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    return GenerationConfig(**kw)


def panel_completions(model, tokenizer, problems: Sequence[Problem], *, max_new_tokens: int, temperature: float,
                      seed: int, prompt_style: str = "plain", bf16: bool = False, do_sample: bool = True,
                      batch_size: int = PANEL_BATCH_SIZE) -> list[str]:
    """One completion per problem (decoded, special tokens skipped), in batches of ``batch_size`` with the KV cache,
    under bf16 autocast if ``bf16``, on :func:`~rlvr_dynamics.grpo.rng.isolated_rng` seeded ``seed``."""
    import contextlib

    import torch

    from .evaluation import encode_prompts
    from .rng import isolated_rng

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    gen_cfg = generation_config(model, tokenizer, max_new_tokens=max_new_tokens, temperature=temperature,
                                do_sample=do_sample)
    device = next(model.parameters()).device
    texts = encode_prompts(tokenizer, problems, prompt_style)
    was_training = model.training
    model.eval()
    out: list[str] = []
    autocast = torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    try:
        with torch.no_grad(), isolated_rng(device, seed), autocast:
            for i in range(0, len(texts), batch_size):
                enc = tokenizer(texts[i:i + batch_size], return_tensors="pt", padding=True, padding_side="left",
                                add_special_tokens=False)
                enc = {k: v.to(device) for k, v in enc.items()}
                gen = model.generate(**enc, generation_config=gen_cfg)
                out.extend(tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True))
    finally:
        model.train(was_training)
    return out


def evaluate_panel(model, tokenizer, problems: Sequence[Problem], *, max_new_tokens: int, temperature: float,
                   seed: int, reward: str, prompt_style: str = "plain", bf16: bool = False, greedy: bool = False,
                   batch_size: int = PANEL_BATCH_SIZE) -> PanelEstimate:
    """The panel's mean reward (one sample per problem at ``temperature``) with its binomial SE, and the greedy
    mean reward if ``greedy``. The global RNG streams are untouched (:func:`panel_completions`)."""
    import time

    from .rewards import scorer

    t = time.perf_counter()
    score = scorer(reward)
    kw = dict(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, prompt_style=prompt_style, bf16=bf16,
              batch_size=batch_size)
    sampled = panel_completions(model, tokenizer, problems, **kw)
    vals = [score(c, p.answer) for p, c in zip(problems, sampled)]
    p = float(sum(vals) / len(vals))
    greedy_reward = None
    if greedy:
        comps = panel_completions(model, tokenizer, problems, do_sample=False, **kw)
        greedy_reward = float(sum(score(c, q.answer) for q, c in zip(problems, comps)) / len(problems))
    return PanelEstimate(reward=p, se=binomial_se(min(max(p, 0.0), 1.0), len(vals)), n=len(vals),
                         greedy_reward=greedy_reward, seconds=time.perf_counter() - t)


class PanelCallback:
    """TrainerCallback measuring the panel at the steps of ``steps`` (main process only) and logging its
    :meth:`PanelEstimate.as_metrics` through the trainer's metric path (``dynamics/panel_*``, bare names in
    ``metrics.csv``).

    Args:
        trainer: the ``GRPOTrainer`` (its ``_metrics`` receive the values).
        tokenizer, problems: the panel (:func:`config_panel_problems`).
        steps: optimizer steps to measure at (:func:`panel_schedule`).
        seed: the run's seed (the samples use :func:`panel_sample_seed` of it and the step).
        max_new_tokens, temperature, reward, prompt_style, bf16, greedy: as :func:`evaluate_panel`.
    """

    def __new__(cls, trainer, tokenizer, problems, *, steps, seed: int, max_new_tokens: int, temperature: float,
                reward: str, prompt_style: str, bf16: bool, greedy: bool):
        from transformers import TrainerCallback

        from . import _trl_compat as trl_compat
        from .fields import DYNAMICS_PREFIX

        scheduled = frozenset(int(s) for s in steps)

        class Panel(TrainerCallback):
            seconds = 0.0
            """Wall time of this call's measurements (with :attr:`points`: the cost per point, for config.json)."""
            points = 0

            def on_step_end(self, args, state, control, model=None, **kwargs):
                if model is None or not state.is_world_process_zero or state.global_step not in scheduled:
                    return control
                est = evaluate_panel(model, tokenizer, problems, max_new_tokens=max_new_tokens,
                                     temperature=temperature, seed=panel_sample_seed(seed, state.global_step),
                                     reward=reward, prompt_style=prompt_style, bf16=bf16, greedy=greedy)
                self.seconds += est.seconds
                self.points += 1
                for name, value in est.as_metrics().items():
                    trl_compat.push_metric(trainer, DYNAMICS_PREFIX + name, value)
                return control

        return Panel()


# ----------------------------------------------------------------------------------------------------- reading
def panel_curve(run_dir: str | os.PathLike) -> dict[str, list[float]]:
    """The panel curve of a run folder: ``{"step", "reward", "se"}`` (and ``"greedy_reward"`` when logged), step 0
    from ``eval.json``'s ``panel_before`` when the run is complete, the others from ``metrics.csv``. Torch-free.
    ValueError naming the folder when it has no panel columns."""
    run_dir = Path(run_dir)
    path = run_dir / "metrics.csv"
    if not path.exists():
        raise ValueError(f"run folder {run_dir} has no metrics.csv")
    out: dict[str, list[float]] = {"step": [], "reward": [], "se": [], "greedy_reward": []}
    ev = run_dir / "eval.json"
    before = json.loads(ev.read_text(encoding="utf-8")).get("panel_before") if ev.exists() else None
    if before:
        out["step"].append(0.0)
        out["reward"].append(float(before["panel_reward"]))
        out["se"].append(float(before["panel_reward_se"]))
        out["greedy_reward"].append(float(before.get("panel_greedy_reward", math.nan)))
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if "panel_reward" not in (reader.fieldnames or []):
            raise ValueError(f"{path} has no panel_reward column (the run was made with panel_size = 0)")
        for row in reader:
            if row.get("panel_reward", "") == "":
                continue
            out["step"].append(float(row["step"]))
            out["reward"].append(float(row["panel_reward"]))
            out["se"].append(float(row["panel_reward_se"]))
            out["greedy_reward"].append(float(row.get("panel_greedy_reward") or math.nan))
    if all(math.isnan(g) for g in out["greedy_reward"]):
        out.pop("greedy_reward")
    return out
