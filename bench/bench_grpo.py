"""Benchmark: seconds per GRPO step (TRL GRPOTrainer) per model, and the overhead of the dynamics callback.

Shapes: the tiny models at the sharpening testbed's shape (64 prompts × G = 4, ``max_completion_length`` 6; warm
start with a loose target, which changes the weights, not the cost); SmolLM2-135M at the shape of its grid
(``data/configs/grpo_smollm_main.yml``: 4 prompts × G = 4, two-digit sums in chat format, 24 tokens, temperature 0.5,
no gradient checkpointing), full fine-tuning and LoRA (``peft``, rank 16), for each ``--smollm-precision``
(``mixed_precision``: ``no`` = float32, ``bf16`` = bf16 autocast).
One training run per (model, variant); s/step is the mean wall time between consecutive step ends after
``--warmup`` steps, so it includes generation, the update, and every callback (and the evaluation, where on).

Variants: ``bare`` (TRL only), ``callback`` (GRPODynamicsCallback, gap alignment every step), ``callback/5`` (gap
alignment every 5 steps: ``gap_alignment_every = 5``), ``callback+eval`` (every step, plus the runner's held-out
greedy and sampled evaluation of 128 problems every 10 steps). SmolLM2 gets ``bare`` and ``callback/5``.

    .venv/bin/python bench/bench_grpo.py                  # tiny models
    .venv/bin/python bench/bench_grpo.py --smollm         # also SmolLM2 (full and LoRA)

Prints one line per (model, variant) and the overhead ratios. Run it alone on the machine: two torch processes at
once on 2 cores slow both several-fold.

Measured 2026-11-30 on 2 cores (other sessions mostly idle; 10 timed steps, so ±10 % noise), s/step
bare / callback / callback/5 / callback+eval:
tiny-s 0.080 / 0.090 / 0.097 / 0.113; tiny-m 0.124 / 0.149 / 0.118 / 0.148; tiny-l 0.252 / 0.344 / 0.300 / 0.399;
tiny-m4 0.163 / 0.213 / 0.180 / 0.246; tiny-l4 0.376 / 0.510 / 0.385 / 0.424 (callback/5 overhead +2 … +21 %);
SmolLM2-135M full 18.6 / 24.4 / 20.6 (4 × 4 × 32 tokens; the ≤ 5 s/step target is not met: generation
dominates); LoRA r16 17.5 bare, 116 with the callback (not understood yet; callback/5 not measured). TRL's
``gradient_checkpointing`` defaults to True and the runner keeps it: every figure includes the recomputation.

SmolLM2-135M, 2026-11-30 evening (``--models "" --smollm``, 5 timed steps), at the grid's shape (24 tokens):
float32 18.8 / callback/5 21.6 s/step (+14.9 %); bf16 autocast 13.4 / 15.7 (+16.7 %). A cProfile of the bf16 step
showed TRL's fused LM head (``trl.kernels.chunked_logprob``) scoring *every* position on CPU, the 48 prompt tokens
included (it keeps only the completion tokens on Triton devices): 6 s of the step.
``_trl_compat.score_completion_tokens_only`` (same values, tested) cuts the step to 10.7 s: generation 4.7 s
(24 decoding steps of 16 sequences at 0.19 s each: the weights are read once per step, so G = 16 costs little more),
forward 1 s, backward 4 s. The grid's runs measure 10.8 s/step with the callback every 10 steps and the evaluations
(``seconds_per_step`` in each ``config.json``). The ≤ 5 s/step target is not met.

Re-measured 2026-11-30 after the callback moved to TRL's metric path (``--models tiny-m4,tiny-l4 --steps 20``, machine
otherwise idle): tiny-m4 0.165 / 0.216 / 0.176 / 0.211; tiny-l4 0.312 / 0.421 / 0.340 / 0.476: callback/5 overhead
+6.7 % and +8.9 % (target ≤ 15 %), every-step callback +31 % and +35 %.
"""
from __future__ import annotations

import argparse
import tempfile
import time

from rlvr_dynamics.paths import set_offline_env

set_offline_env()

TINY_VARIANTS = ("bare", "callback", "callback/5", "callback+eval")
SMOLLM_VARIANTS = ("bare", "callback/5")


def time_steps(cfg, variant: str, steps: int, warmup: int) -> float:
    """Mean seconds per optimizer step of ``cfg`` with the callback ``variant`` (after ``warmup`` steps)."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer, TrainerCallback

    from rlvr_dynamics.grpo.evaluation import accuracy
    from rlvr_dynamics.grpo.instrumentation import GRPODynamicsCallback
    from rlvr_dynamics.grpo.runner import make_trainer, resolve_model, training_dataset
    from rlvr_dynamics.grpo.tasks import heldout_problems

    torch.set_num_threads(cfg.num_threads)
    path, _ = resolve_model(cfg)
    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    data = training_dataset(cfg)
    held = heldout_problems(128, digits=cfg.digits)

    def eval_fn(model):
        kw = dict(max_new_tokens=cfg.max_completion_length, reward=cfg.eval_reward, prompt_style=cfg.prompt_style)
        return {"reward": accuracy(model, tok, held, **kw),
                "reward_sampled": accuracy(model, tok, held, do_sample=True, **kw)}

    class Clock(TrainerCallback):
        ends: list[float] = []

        def on_step_end(self, args, state, control, **kwargs):
            self.ends.append(time.perf_counter())

    cb = None
    if variant != "bare":
        cb = GRPODynamicsCallback(eval_fn=eval_fn if variant == "callback+eval" else None, eval_every=10,
                                  gap_alignment_every=5 if variant == "callback/5" else 1)
    clock = Clock()
    clock.ends = []
    with tempfile.TemporaryDirectory() as tmp:
        c = cfg.replace(max_steps=warmup + steps, checkpoint_every=10_000)
        trainer = make_trainer(c, path, tok, data, tmp, "cpu", callback=cb)
        trainer.add_callback(clock)
        trainer.train()
    return float(np.mean(np.diff(clock.ends[warmup - 1:])))


def _report(results: dict, model: str, variants) -> None:
    bare = results[(model, "bare")]
    parts = [f"{v} {100 * (results[(model, v)] / bare - 1):+.1f} %" for v in variants if v != "bare"]
    print(f"{model:18s} overhead vs bare: " + ", ".join(parts), flush=True)


def main(argv=None) -> dict:
    from rlvr_dynamics.grpo.config import RunConfig

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per (model, variant)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--models", default="tiny-s,tiny-m,tiny-l,tiny-m4,tiny-l4", help="tiny sizes ('' for none)")
    ap.add_argument("--prompts", type=int, default=64, help="prompts per step of the tiny models")
    ap.add_argument("--smollm", action="store_true", help="also time SmolLM2-135M, full and LoRA")
    ap.add_argument("--smollm-steps", type=int, default=5)
    ap.add_argument("--lora-rank", type=int, default=16)
    ap.add_argument("--smollm-cap", type=int, default=24, help="SmolLM2 max_completion_length")
    ap.add_argument("--smollm-group", type=int, default=4, help="SmolLM2 G (4 prompts per step)")
    ap.add_argument("--smollm-precision", default="no,bf16", help="mixed_precision values to time")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    results: dict = {}
    for model in [m for m in args.models.split(",") if m]:
        cfg = RunConfig(name="bench", model=model, num_prompts_per_step=args.prompts, num_generations=4,
                        max_completion_length=6, learning_rate=1e-3, warm_start_target_low=0.0,
                        warm_start_target_high=1.0, num_threads=args.threads)
        for variant in TINY_VARIANTS:
            results[(model, variant)] = sps = time_steps(cfg, variant, args.steps, args.warmup)
            print(f"{model:18s} {variant:14s} {sps:.4f} s/step", flush=True)
        _report(results, model, TINY_VARIANTS)
    if args.smollm:
        for rank in (0, args.lora_rank):
            for precision in args.smollm_precision.split(","):
                name = "smollm2-135m" + (f"+lora{rank}" if rank else "") + f"/{precision}"
                cfg = RunConfig(name="bench", model="smollm2-135m", num_prompts_per_step=4,
                                num_generations=args.smollm_group, max_completion_length=args.smollm_cap,
                                temperature=0.5, prompt_style="chat", reward="last_number", eval_reward="last_number",
                                learning_rate=1e-5 if rank else 1e-6, digits=2, lora_rank=rank,
                                gradient_checkpointing=False, mixed_precision=precision, num_threads=args.threads)
                for variant in SMOLLM_VARIANTS:
                    results[(name, variant)] = sps = time_steps(cfg, variant, args.smollm_steps, 1)
                    print(f"{name:18s} {variant:14s} {sps:.3f} s/step", flush=True)
                _report(results, name, SMOLLM_VARIANTS)
    return results


if __name__ == "__main__":
    main()
