"""Measure SmolLM2-135M-Instruct's sampled success on candidate GRPO tasks, before any training (issue 10).

The SmolLM2 runs need a task with >= 1,000 distinct training prompts on which the base model's sampled success is
0.1-0.3 (room to learn, enough signal at G = 4). This evaluates the base model only (no training): for each
candidate (operand digits, completion cap) it samples ``--samples`` completions at temperature 1 for ``--problems``
held-out problems in chat format and scores them with the ``last_number`` reward, then writes the table to
``data/smollm2_base_success.json`` (atomically) and prints it with binomial standard errors.

    .venv/bin/python tools/smollm_base_success.py            # about 2-4 min on 2 CPU cores; run it alone
    .venv/bin/python tools/smollm_base_success.py --temperature 0.7 --candidates 2:64

Rows are merged into the JSON file by (digits, max_new_tokens, temperature), so measurements at several temperatures
accumulate.
"""
from __future__ import annotations

import argparse
import json
import math
import time

from rlvr_dynamics.paths import DATA_DIR, set_offline_env

set_offline_env()

CANDIDATES = ((2, 32), (2, 64), (3, 64))
"""(operand digits, max new tokens): 2-digit sums have 10,000 distinct prompts, 3-digit 1,000,000."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=64, help="held-out problems per candidate (>= 8)")
    parser.add_argument("--samples", type=int, default=4, help="sampled completions per problem (>= 1)")
    parser.add_argument("--out", default=str(DATA_DIR / "smollm2_base_success.json"), help="JSON file to write")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature, in (0, 2]")
    parser.add_argument("--candidates", default=",".join(f"{d}:{t}" for d, t in CANDIDATES),
                        help="comma-separated DIGITS:MAX_NEW_TOKENS pairs (digits 1-6, tokens 1-512)")
    args = parser.parse_args(argv)
    if args.problems < 8 or args.samples < 1:
        parser.error("--problems must be >= 8 and --samples >= 1")
    if not 0 < args.temperature <= 2:
        parser.error(f"--temperature must be in (0, 2], got {args.temperature}")
    try:
        candidates = [tuple(int(x) for x in c.split(":")) for c in args.candidates.split(",")]
        assert all(len(c) == 2 and 1 <= c[0] <= 6 and 1 <= c[1] <= 512 for c in candidates)
    except (ValueError, AssertionError):
        parser.error(f"--candidates must be DIGITS:MAX_NEW_TOKENS pairs (digits 1-6, tokens 1-512), got "
                     f"{args.candidates!r}")

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rlvr_dynamics._io import atomic_write_text
    from rlvr_dynamics.grpo.evaluation import accuracy
    from rlvr_dynamics.grpo.smollm import smollm2_checkpoint
    from rlvr_dynamics.grpo.tasks import heldout_problems

    torch.set_num_threads(2)
    path = smollm2_checkpoint()
    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(path)
    from pathlib import Path

    out = Path(args.out)
    old = [{"temperature": 1.0, **r} for r in json.loads(out.read_text())["rows"]] if out.exists() else []
    rows = []
    for digits, max_new in candidates:
        t0 = time.time()
        problems = heldout_problems(args.problems, digits=digits)
        acc = accuracy(model, tok, problems, max_new_tokens=max_new, reward="last_number", prompt_style="chat",
                       do_sample=True, temperature=args.temperature, seed=0, batch_size=64,
                       num_samples=args.samples)
        greedy = accuracy(model, tok, problems, max_new_tokens=max_new, reward="last_number", prompt_style="chat")
        n = args.problems * args.samples
        rows.append({"task": "add", "digits": digits, "distinct_prompts": 10 ** (2 * digits),
                     "temperature": args.temperature,
                     "max_new_tokens": max_new, "sampled_success": acc, "sampled_se": math.sqrt(acc * (1 - acc) / n),
                     "greedy_success": greedy, "n_problems": args.problems, "samples_per_problem": args.samples,
                     "seconds": round(time.time() - t0, 1)})
        r = rows[-1]
        print(f"add, {digits}-digit operands, {max_new} tokens, T = {args.temperature}: sampled {acc:.3f} ± {r['sampled_se']:.3f}, "
              f"greedy {greedy:.3f} ({r['seconds']} s)", flush=True)
    key = lambda r: (r["digits"], r["max_new_tokens"], r.get("temperature", 1.0))  # noqa: E731
    merged = {key(r): r for r in old}
    merged.update({key(r): r for r in rows})
    atomic_write_text(out, json.dumps({"model": "smollm2-135m", "reward": "last_number", "prompt_style": "chat",
                                       "rows": [merged[k] for k in sorted(merged)]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
