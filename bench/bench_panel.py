"""Benchmark: seconds of one panel evaluation (``rlvr_dynamics.grpo.panel.evaluate_panel``) per model and precision.

Shapes: SmolLM2-135M-Instruct (the offline GGUF checkpoint the runs train) on the panel of
``data/configs/grpo_smollm_panel.yml`` (256 two-digit sums in chat format, 24 tokens, temperature 0.5,
``last_number`` reward), in bf16 autocast (how that grid trains, ``mixed_precision: bf16``) and float32; tiny-m4
(the P1 testbed, plain prompts, its warm start when cached, else a fresh model: the cost is the same) at 256 x 6
tokens (its runs' cap) and 256 x 24. One sampled pass per repeat (no greedy pass), the whole panel in one batch
(``PANEL_BATCH_SIZE``), KV cache on; the figure is the best of ``--repeats`` after one warm-up pass.

    .venv/bin/python bench/bench_panel.py                        # both models
    .venv/bin/python bench/bench_panel.py --models tiny-m4

Target (issue 23): <= 30 s for SmolLM2 at 256 x 24 on 2 cores. Run it alone: two torch processes at once on 2 cores
slow both several-fold.

Measured 2026-12-01 on the 2 cores (no other torch job), best of 2 after a warm-up:

    smollm2-135m  256 x 24 tokens bf16 autocast   27.57 s  (223 tokens/s, reward 0.117)
    smollm2-135m  256 x 24 tokens float32         44.42 s  (138 tokens/s, reward 0.121)
    tiny-m4       256 x  6 tokens float32          0.05 s  (cached warm start; its completions end early)
    tiny-m4       256 x 24 tokens float32          0.06 s
    tiny-m4       256 x 24 tokens bf16 autocast    0.04 s

SmolLM2 meets the <= 30 s target in bf16 autocast only, with little margin: the prompt (48 tokens, the chat
template's system prompt included) costs 11.3 s of prefill, the 24 decoding steps 0.7 s each. Tried and rejected:
a bf16 copy of the weights without autocast, 91 s (3.3x slower; every op then runs in bf16, the cause was not
investigated further). Not tried: caching the KV of the system prompt shared by every prompt (about half the prefill).
On these shared cores the same measurement varies by up to 30 %.
"""
from __future__ import annotations

import argparse
import time

from rlvr_dynamics.paths import set_offline_env

set_offline_env()


def _smollm():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rlvr_dynamics.grpo.smollm import smollm2_checkpoint

    path = smollm2_checkpoint()
    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return AutoModelForCausalLM.from_pretrained(path), tok, "checkpoint"


def _tiny_m4():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rlvr_dynamics.grpo.config import load_experiment
    from rlvr_dynamics.grpo.runner import warm_start_spec
    from rlvr_dynamics.grpo.tiny_model import build_tiny_model
    from rlvr_dynamics.grpo.tokenizer import char_tokenizer
    from rlvr_dynamics.paths import REPO_ROOT, cache_dir

    cfg = load_experiment(REPO_ROOT / "data" / "configs" / "grpo_p1_slow_start.yml")[0]
    spec = warm_start_spec(cfg)
    folder = cache_dir() / "warmstart" / f"{spec.size}-{spec.key()}"
    if (folder / "warmstart.json").exists():
        tok = AutoTokenizer.from_pretrained(folder)
        return AutoModelForCausalLM.from_pretrained(folder), tok, "cached warm start"
    return build_tiny_model("tiny-m4", seed=0), char_tokenizer(), "fresh model (warm start not cached)"


def bench(model, tok, *, size: int, tokens: int, prompt_style: str, temperature: float, reward: str, bf16: bool,
          repeats: int) -> tuple[float, float]:
    """(best seconds, panel reward) of one sampled panel pass."""
    from rlvr_dynamics.grpo.panel import evaluate_panel, panel_problems

    problems = panel_problems(size, digits=2, train_pool_size=4096)
    kw = dict(max_new_tokens=tokens, temperature=temperature, reward=reward, prompt_style=prompt_style, bf16=bf16)
    evaluate_panel(model, tok, problems, seed=0, **kw)  # warm-up (allocator, oneDNN kernels)
    best, est = float("inf"), None
    for r in range(repeats):
        t = time.perf_counter()
        est = evaluate_panel(model, tok, problems, seed=r + 1, **kw)
        best = min(best, time.perf_counter() - t)
    return best, est.reward


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2-135m,tiny-m4", help="comma-separated: smollm2-135m, tiny-m4")
    parser.add_argument("--size", type=int, default=256, help="panel size (prompts)")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes (best is printed)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    args = parser.parse_args(argv)
    if args.size < 1 or args.repeats < 1 or args.threads < 1:
        parser.error("--size, --repeats and --threads must be >= 1")
    import torch

    torch.set_num_threads(args.threads)
    print(f"panel evaluation, {args.size} prompts, {args.threads} threads, best of {args.repeats}")
    for name in [m for m in args.models.split(",") if m]:
        if name == "smollm2-135m":
            model, tok, what = _smollm()
            shapes = [(24, True), (24, False)]
            style, temp, reward = "chat", 0.5, "last_number"
        elif name == "tiny-m4":
            model, tok, what = _tiny_m4()
            shapes = [(6, False), (24, False), (24, True)]
            style, temp, reward = "plain", 1.0, "exact"
        else:
            parser.error(f"--models: unknown model {name!r}")
        for tokens, bf16 in shapes:
            sec, p = bench(model, tok, size=args.size, tokens=tokens, prompt_style=style, temperature=temp,
                           reward=reward, bf16=bf16, repeats=args.repeats)
            print(f"{name:13s} {args.size} x {tokens:2d} tokens {'bf16 autocast' if bf16 else 'float32      '} "
                  f"{sec:7.2f} s  ({args.size * tokens / sec:7.0f} tokens/s, reward {p:.3f}; {what})", flush=True)
        del model
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
