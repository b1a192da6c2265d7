"""Every use of TRL's private API, in one place, with the TRL versions it is tested on.

:class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` needs three things ``GRPOTrainer`` does not expose
publicly (TRL 1.16):

1. each generated batch (prompt and completion ids and masks) and the dataset rows it came from:
   :func:`capture_rollouts` wraps ``GRPOTrainer._generate_and_score_completions``;
2. the rewards of every completion, gathered over processes: it also wraps ``GRPOTrainer._calculate_rewards``;
3. the trainer's metric accumulator ``GRPOTrainer._metrics[mode]``, a ``defaultdict(list)`` that
   ``GRPOTrainer.log`` averages (NaN-aware), merges into the logged dict and clears. :func:`push_metric` appends
   there, which is how TRL's own ``clip_ratio/*`` reach W&B, TensorBoard and trackio: the reporting callbacks run
   *before* user callbacks in ``on_log``, so editing the logged dict from a callback never reaches them.

For the fresh-sample gap alignment it also samples and scores completions the way ``GRPOTrainer`` does
(:func:`sample_completions`, :func:`score_completions`: the trainer's sampling settings, and TRL's calling
convention for plain reward functions, ``f(prompts=, completions=, completion_ids=, **dataset columns)``).

:data:`TESTED_TRL` is the range ``tests/grpo/test_trl_compat.py`` checks; outside it the callback warns once and
:func:`require_private_api` fails with a clear error if an attribute it needs is gone.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

from .rng import isolated_rng

TESTED_TRL = ("1.16.0", "1.17.0")
"""TRL versions ``[low, high)`` on which the wrapped private methods are tested (requirements pin 1.16.0)."""

PRIVATE_API = ("_generate_and_score_completions", "_calculate_rewards", "_metrics", "reward_weights",
               "num_generations")
"""Attributes of ``GRPOTrainer`` the callback needs (``generation_config``, read by :func:`sample_completions` when
present, is optional)."""


def trl_version() -> str | None:
    """The installed TRL version, or None when TRL is not installed."""
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("trl")
    except PackageNotFoundError:
        return None


def trl_version_tested(installed: str | None = None) -> bool:
    """Whether ``installed`` (default: the installed TRL) lies in :data:`TESTED_TRL`."""
    from packaging.version import Version

    installed = installed if installed is not None else trl_version()
    if installed is None:
        return False
    return Version(TESTED_TRL[0]) <= Version(installed) < Version(TESTED_TRL[1])


def require_private_api(trainer) -> None:
    """Raise ``TypeError`` naming what is missing if ``trainer`` lacks the private API (not a TRL ``GRPOTrainer``,
    or a TRL that renamed it); warn once per process if TRL is outside :data:`TESTED_TRL`."""
    missing = [a for a in PRIVATE_API if not hasattr(trainer, a)]
    if missing:
        raise TypeError(f"GRPODynamicsCallback needs a TRL GRPOTrainer (tested on TRL {TESTED_TRL[0]} to "
                        f"<{TESTED_TRL[1]}); {type(trainer).__name__} lacks {missing} (installed TRL: "
                        f"{trl_version()})")
    installed = trl_version()
    if not trl_version_tested(installed) and installed not in _WARNED:
        _WARNED.add(installed)          # once per process, not once per trainer
        warnings.warn(f"rlvr_dynamics: TRL {installed} is outside the range GRPODynamicsCallback is tested on "
                      f"(>={TESTED_TRL[0]},<{TESTED_TRL[1]}). The private methods it wraps are present (checked), "
                      "so it runs; compare its fields with a short run of a tested TRL if the numbers matter. "
                      "Shown once per process.", stacklevel=3)


_WARNED: set[str | None] = set()
"""TRL versions already warned about in this process (:func:`require_private_api`)."""


def capture_rollouts(trainer, on_rewards: Callable[[Any], None], on_batch: Callable[[dict[str, Any]], None]) -> None:
    """Wrap the trainer's rollout and reward methods (idempotent per trainer).

    ``on_rewards(rewards)`` gets the weighted reward of every completion of every process (a CPU tensor, in TRL's
    gathered order) each time TRL computes rewards; ``on_batch(out, inputs)`` gets the dict TRL returns from a
    training rollout (``prompt_ids``, ``prompt_mask``, ``completion_ids``, ``completion_mask``, …) and this
    process's dataset rows (one per completion, each prompt's ``num_generations`` rows consecutive), after
    ``on_rewards``.
    """
    if getattr(trainer, "_rlvr_dynamics_attached", False):
        return
    require_private_api(trainer)
    generate = trainer._generate_and_score_completions
    calculate = trainer._calculate_rewards

    def _calculate_rewards(*args, **kwargs):
        rewards_per_func = calculate(*args, **kwargs)  # (n_completions of all processes, n_reward_funcs)
        weights = trainer.reward_weights.to(rewards_per_func.device)
        on_rewards((rewards_per_func * weights.unsqueeze(0)).nansum(dim=1).detach().cpu())
        return rewards_per_func

    def _generate_and_score_completions(inputs):
        out = generate(inputs)
        if trainer.model.training:
            on_batch(out, inputs)
        return out

    trainer._calculate_rewards = _calculate_rewards
    trainer._generate_and_score_completions = _generate_and_score_completions
    trainer._rlvr_dynamics_attached = True


def push_metric(trainer, name: str, value: float, mode: str = "train") -> None:
    """Add ``value`` to the trainer's metric ``name`` for the next log (skipped when not finite: TRL then leaves
    the cell empty rather than averaging in a NaN)."""
    x = float(value)
    if math.isfinite(x):
        trainer._metrics[mode][name].append(x)


def check_plain_reward_functions(trainer) -> None:
    """Raise ``ValueError`` naming the first reward the fresh samples cannot be scored with (a reward model or an
    async function): :func:`score_completions` calls plain functions only."""
    import torch

    for func in trainer.reward_funcs:
        if isinstance(func, torch.nn.Module) or _is_async(func):
            raise ValueError(f"fresh_samples > 0 needs plain reward functions; {func!r} is a reward model or an "
                             "async function (use fresh_samples=0)")


def _is_async(func) -> bool:
    import inspect

    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(getattr(func, "__call__", None))


def sample_completions(trainer, model, prompt_ids, prompt_mask, n_per_prompt: int, seed: int):
    """``n_per_prompt`` completions of each (left-padded) prompt, sampled as the trainer samples its rollouts
    (``GRPOTrainer.generation_config``: temperature, top-p, top-k, completion cap), on an isolated RNG stream
    seeded by ``seed`` (the training stream is untouched). Returns ``(prompt_ids, prompt_mask, completion_ids, completion_mask)`` repeated per sample, the mask covering
    each completion up to and including its first end-of-sequence token, as TRL's."""
    import torch

    unwrapped = trainer.accelerator.unwrap_model(model)
    tok = trainer.processing_class
    eos = getattr(tok, "eos_token_id", None)
    pad = getattr(tok, "pad_token_id", None)
    pad = eos if pad is None else pad
    ids = prompt_ids.repeat_interleave(n_per_prompt, dim=0)
    att = prompt_mask.repeat_interleave(n_per_prompt, dim=0)
    config = getattr(trainer, "generation_config", None)  # TRL's own sampling settings (transformers path)
    if config is not None:
        kw = {"generation_config": config}
    else:  # vLLM or another backend: rebuild the settings TRL passes
        kw = {"do_sample": True, "temperature": float(getattr(trainer, "temperature", 1.0) or 1.0),
              "max_new_tokens": int(trainer.max_completion_length), "pad_token_id": pad, "eos_token_id": eos}
        for name in ("top_p", "top_k"):
            value = getattr(trainer, name, None)
            if value is not None:
                kw[name] = value
    with isolated_rng(ids.device, seed), torch.no_grad():
        out = unwrapped.generate(input_ids=ids, attention_mask=att, **kw)
    comp = out[:, ids.shape[1]:]
    stop_ids = list(getattr(trainer, "eos_token_ids", None) or ([] if eos is None else [eos]))
    if stop_ids and comp.shape[1]:  # TRL's mask: up to and including the first of any end-of-sequence id
        is_eos = torch.isin(comp, torch.tensor(stop_ids, device=comp.device))
        first = torch.where(is_eos.any(dim=1), is_eos.int().argmax(dim=1),
                            torch.full((comp.shape[0],), comp.shape[1], device=comp.device))
        mask = (torch.arange(comp.shape[1], device=comp.device)[None, :] <= first[:, None]).int()
    else:
        mask = torch.ones_like(comp, dtype=torch.int)
    return ids, att, comp, mask


def score_completions(trainer, inputs: list[dict[str, Any]], completion_ids, completion_mask) -> list[float]:
    """The weighted reward of each completion, with ``inputs[i]`` the dataset row of completion ``i``: every reward
    function of the trainer called as TRL calls a plain reward function (``log_extra``/``log_metric`` are no-ops
    here, so TRL's own logs stay untouched). Reward models and async reward functions are not supported here
    (``ValueError`` naming them)."""
    tok = trainer.processing_class
    ids = [c[m.bool()].tolist() for c, m in zip(completion_ids, completion_mask)]
    completions = tok.batch_decode(ids, skip_special_tokens=True)
    prompts = [x["prompt"] for x in inputs]
    keys = [k for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")]
    kwargs = {k: [x[k] for x in inputs] for k in keys}
    kwargs.update(trainer_state=trainer.state, log_extra=lambda *a, **k: None, log_metric=lambda *a, **k: None)
    check_plain_reward_functions(trainer)
    if isinstance(prompts[0], list):  # conversational: TRL passes message lists
        completions_in = [[{"role": "assistant", "content": c}] for c in completions]
    else:
        completions_in = completions
    total = [0.0] * len(completions)
    for func, w in zip(trainer.reward_funcs, [float(w) for w in trainer.reward_weights]):
        values = func(prompts=prompts, completions=completions_in, completion_ids=ids, **kwargs)
        for i, v in enumerate(values):
            total[i] += w * (float(v) if v is not None else 0.0)  # None counts 0, as TRL's nansum
    return total


def score_completion_tokens_only() -> bool:
    """Make TRL's fused LM head score only the completion tokens on CPU, as it already does on GPUs.

    TRL 1.16's ``add_fused_lm_head`` (``trl.trainer.utils``) projects the hidden states onto the vocabulary in
    chunks (``trl.kernels.chunked_logprob``). On devices with Triton it first keeps the positions that carry a label
    (the completion tokens); elsewhere it scores *every* position, prompt included, and masks the result, so that
    Neuron compilers see fixed tile shapes. On CPU (eager PyTorch, no compilation) that only wastes work: with
    SmolLM2's 49,152-token vocabulary and a 48-token chat prompt before 24 completion tokens, three quarters of the
    LM head's forward and backward went to positions whose result is thrown away. The kept positions and their
    values are identical (``tests/grpo/test_trl_compat.py`` checks the log-probabilities and the gradient).

    Patches ``trl.trainer.utils._use_triton``, which ``_fused_forward`` reads only to make this choice (the kernel
    module keeps its own reference, so the CPU tiles still run as torch ops). Idempotent; returns whether the patch
    is in place (False where TRL has no such function: the default behaviour is then kept, only slower).
    """
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:  # pragma: no cover - TRL is pinned
        return False
    original = getattr(trl_utils, "_use_triton", None)
    if original is None:
        return False
    if getattr(original, "_rlvr_compact_cpu", False):
        return True

    def _use_triton_or_cpu(device) -> bool:
        return device.type == "cpu" or original(device)

    _use_triton_or_cpu._rlvr_compact_cpu = True
    _use_triton_or_cpu.original = original            # TRL's own choice (a test restores it)
    trl_utils._use_triton = _use_triton_or_cpu
    return True
