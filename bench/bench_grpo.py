"""Benchmark: seconds per GRPO step (TRL GRPOTrainer) per model, and the overhead of the dynamics callback.

Fixed generation shape: 8 prompts × G = 4 completions, ``max_completion_length`` 8 tokens for the tiny models;
2 prompts × G = 4, 32 tokens for SmolLM2-135M (chat prompts). Each variant runs ``--warmup`` steps, then times
``--steps`` steps (wall clock of ``trainer.train``, minus the warm-up run's time measured separately).

Variants: ``bare`` (TRL only), ``callback`` (GRPODynamicsCallback with the gap alignment, no evaluation),
``callback+eval`` (plus a held-out greedy+sampled evaluation of 128 problems every 5 steps, the runner's default).

    .venv/bin/python bench/bench_grpo.py                 # tiny models (≈ 2 min on 2 cores)
    .venv/bin/python bench/bench_grpo.py --smollm        # also SmolLM2 (≈ 2 more minutes)

Prints one line per (model, variant) and the overhead ratios. Run alone on the machine: two torch processes at
once on 2 cores slow both several-fold.
"""
from __future__ import annotations

import argparse
import tempfile
import time

from rlvr_dynamics.paths import set_offline_env

set_offline_env()


def time_steps(cfg, variant: str, steps: int, warmup: int) -> float:
    import torch
    from transformers import AutoTokenizer

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

    def one(n_steps: int) -> float:
        cb = None
        if variant != "bare":
            cb = GRPODynamicsCallback(eval_fn=eval_fn if variant == "callback+eval" else None, eval_every=5)
        with tempfile.TemporaryDirectory() as tmp:
            c = cfg.replace(max_steps=n_steps, checkpoint_every=10_000)
            trainer = make_trainer(c, path, tok, data, tmp, "cpu", callback=cb)
            t = time.perf_counter()
            trainer.train()
            return time.perf_counter() - t

    t_warm = one(warmup)
    t_all = one(warmup + steps)
    return (t_all - t_warm) / steps


def main(argv=None) -> None:
    from rlvr_dynamics.grpo.config import RunConfig

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--smollm", action="store_true", help="also time SmolLM2-135M (3 steps after 1 warm-up)")
    ap.add_argument("--models", default="tiny-s,tiny-m,tiny-l")
    args = ap.parse_args(argv)
    results = {}
    for model in args.models.split(","):
        cfg = RunConfig(name="bench", model=model, num_prompts_per_step=8, num_generations=4,
                        max_completion_length=8, learning_rate=1e-3)
        for variant in ("bare", "callback", "callback+eval"):
            sps = time_steps(cfg, variant, args.steps, args.warmup)
            results[(model, variant)] = sps
            print(f"{model:14s} {variant:14s} {sps:.4f} s/step", flush=True)
        bare = results[(model, "bare")]
        print(f"{model:14s} overhead: callback {100 * (results[(model, 'callback')] / bare - 1):+.1f} %, "
              f"callback+eval {100 * (results[(model, 'callback+eval')] / bare - 1):+.1f} %", flush=True)
    if args.smollm:
        cfg = RunConfig(name="bench", model="smollm2-135m", num_prompts_per_step=2, num_generations=4,
                        max_completion_length=32, prompt_style="chat", reward="last_number",
                        eval_reward="last_number", learning_rate=1e-6, digits=1)
        for variant in ("bare", "callback"):
            sps = time_steps(cfg, variant, 3, 1)
            results[("smollm2-135m", variant)] = sps
            print(f"{'smollm2-135m':14s} {variant:14s} {sps:.3f} s/step", flush=True)
        print(f"{'smollm2-135m':14s} overhead: callback "
              f"{100 * (results[('smollm2-135m', 'callback')] / results[('smollm2-135m', 'bare')] - 1):+.1f} %")


if __name__ == "__main__":
    main()
