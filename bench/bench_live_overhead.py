"""Benchmark: the cost of the live run doctor inside a plain TRL run, as a TRL user adds it (issue 20).

A plain ``trl.GRPOTrainer`` (no project runner) on the tiny testbed model and on SmolLM2-135M, the callback added
the TRL way, ``trainer.add_callback(GRPODynamicsCallback(doctor=RunDoctor(every=N)))``. Variants, each trained from
the same seed (so every variant generates the same completions and the step times compare like for like):

* ``bare``: TRL alone;
* ``doctor every=1 / 5 / 10``: the callback with its defaults (gap alignment every step: two extra forward passes)
  and a ``RunDoctor(every=N)``;
* ``doctor every=10, gap every 10``: the cheap setting, ``gap_alignment_every=10``;
* ``bare (again)``: TRL alone once more, to show the drift of the machine over the benchmark.

Seconds per step: the median of the wall time between consecutive ``on_step_end`` calls after ``--warmup`` steps.
Prints one line per (model, variant) with the overhead against the mean of the two bare runs. Run it alone on the
machine: two torch processes at once slow each other down. Everything is offline.

    .venv/bin/python bench/bench_live_overhead.py [--models tiny-m4,smollm2-135m] [--steps 12] [--warmup 2] [--write]

``--write`` stores the seconds per step, the overheads and the machine in ``book/live_overhead.json``, which the
practice page's "what to log and what it costs" section reads when the book is built.

Measured 2026-12-01 (2-core AMD EPYC, AVX2 only, float32, batch 16 = 4 prompts x G 4, 6 timed steps after 1,
nothing else running), seconds per step and overhead against the mean of the two bare runs:

    smollm2-135m  bare 45.1 / 36.1 (drift -20 %)  every=1 66.2 (+63 %)  every=5 53.5 (+32 %)  every=10 54.9 (+35 %)
                  every=10 with gap every 10: 37.0 (-9 %, within the drift)
    tiny-m4       bare 0.095 / 0.093 (drift -2 %)  every=1 0.121 (+28 %)  every=5 0.112 (+18 %)  every=10 0.113 (+20 %)
                  every=10 with gap every 10: 0.098 (+4 %)

The cost is the gap alignment's two extra forward passes per measured step, not the doctor's fits: with the gap
measured every 10 steps the overhead is within the machine's drift. SmolLM2's step-to-step spread on these shared
cores (the bare runs differ by 20 %) is larger than the doctor's own cost.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from rlvr_dynamics.paths import set_offline_env

VARIANTS = ("bare", "doctor every=1", "doctor every=5", "doctor every=10", "doctor every=10, gap every 10",
            "bare (again)")


def config_for(model: str):
    """The run config whose model, task and prompt style the benchmark trains with (SmolLM2: the panel grid's)."""
    from rlvr_dynamics.grpo.config import RunConfig, load_experiment
    from rlvr_dynamics.paths import DATA_DIR

    if model == "smollm2-135m":
        return load_experiment(DATA_DIR / "configs" / "grpo_smollm_panel.yml")[0]
    return RunConfig(name="bench-live", model=model, task="add", digits=2, max_completion_length=8)


def time_variant(model_path: str, cfg, variant: str, steps: int, warmup: int, batch: int, generations: int) -> float:
    """Median seconds per optimizer step of one variant (a fresh trainer, the same seed)."""
    import torch
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from rlvr_dynamics.grpo.instrumentation import GRPODynamicsCallback
    from rlvr_dynamics.grpo.runner import training_dataset
    from rlvr_dynamics.grpo.tasks import make_reward_function
    from rlvr_dynamics.doctor.live import RunDoctor

    stamps: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            stamps.append(time.perf_counter())

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as out:
        args = GRPOConfig(output_dir=out, max_steps=warmup + steps, per_device_train_batch_size=batch,
                          num_generations=generations, max_completion_length=cfg.max_completion_length,
                          temperature=cfg.temperature, learning_rate=cfg.learning_rate, logging_steps=1,
                          save_strategy="no", report_to="none", use_cpu=True, bf16=False, beta=0.0,
                          loss_type="grpo", disable_tqdm=True, seed=0)
        trainer = GRPOTrainer(model=model_path, reward_funcs=[make_reward_function(cfg.reward)], args=args,
                              train_dataset=training_dataset(cfg),
                              processing_class=AutoTokenizer.from_pretrained(model_path))
        if variant.startswith("doctor"):
            every = int(variant.split("every=")[1].split(",")[0])
            gap_every = 10 if "gap every 10" in variant else 1
            trainer.add_callback(GRPODynamicsCallback(doctor=RunDoctor(every=every, refresh_interval=1),
                                                      gap_alignment_every=gap_every))
        trainer.add_callback(Clock())
        stamps.append(time.perf_counter())
        trainer.train()
    per_step = [b - a for a, b in zip(stamps[:-1], stamps[1:])][warmup:]
    return statistics.median(per_step)


def main(argv=None) -> dict:
    set_offline_env()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="tiny-m4,smollm2-135m", help="comma-separated model names")
    p.add_argument("--steps", type=int, default=12, help="timed steps per variant (>= 3)")
    p.add_argument("--warmup", type=int, default=2, help="untimed first steps per variant (>= 1)")
    p.add_argument("--batch", type=int, default=16, help="completions per step (a multiple of --generations)")
    p.add_argument("--generations", type=int, default=4, help="G, completions per prompt (>= 2)")
    p.add_argument("--write", action="store_true", help=f"store the result in book/{OVERHEAD_JSON} for the book")
    a = p.parse_args(argv)
    if a.steps < 3 or a.warmup < 1 or a.generations < 2 or a.batch % a.generations:
        p.error("need --steps >= 3, --warmup >= 1, --generations >= 2 and --batch a multiple of --generations")
    from rlvr_dynamics.grpo.runner import resolve_model

    results: dict[str, dict[str, float]] = {}
    for model in a.models.split(","):
        cfg = config_for(model)
        model_path, _ = resolve_model(cfg)
        results[model] = {}
        for variant in VARIANTS:
            sec = time_variant(str(model_path), cfg, variant, a.steps, a.warmup, a.batch, a.generations)
            results[model][variant] = sec
            print(f"{model:14s} {variant:30s} {sec:7.3f} s/step", flush=True)
        bare = (results[model]["bare"] + results[model]["bare (again)"]) / 2
        drift = results[model]["bare (again)"] / results[model]["bare"] - 1
        parts = [f"{v}: {results[model][v] / bare - 1:+.1%}" for v in VARIANTS if v.startswith("doctor")]
        print(f"{model:14s} overhead vs bare ({bare:.3f} s/step, drift between the bare runs {drift:+.1%}): "
              + ", ".join(parts), flush=True)
    if a.write:
        write_result(results, a)
    return results


OVERHEAD_JSON = "live_overhead.json"


def _cpu() -> dict:
    """The CPU model, core count and bf16 support of this machine (what the seconds per step depend on)."""
    import os
    from pathlib import Path
    from rlvr_dynamics.grpo.runner import cpu_has_native_bf16
    info = Path("/proc/cpuinfo").read_text(errors="replace") if Path("/proc/cpuinfo").exists() else ""
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    return {"cpu": name, "cores": os.cpu_count(), "native_bf16": cpu_has_native_bf16(info or None)}


def write_result(results: dict, a) -> None:
    """``book/live_overhead.json``: per model, seconds per step of every variant and its overhead against the mean
    of the two bare runs, with the settings and the machine."""
    import datetime
    import json
    from rlvr_dynamics._io import atomic_write_text
    from rlvr_dynamics.paths import BOOK_DIR
    models = {}
    for model, sec in results.items():
        bare = (sec["bare"] + sec["bare (again)"]) / 2
        models[model] = {"seconds_per_step": sec, "bare_drift": sec["bare (again)"] / sec["bare"] - 1,
                         "overhead": {v: sec[v] / bare - 1 for v in VARIANTS if v.startswith("doctor")}}
    out = {"measured": datetime.date.today().isoformat(), "machine": _cpu(), "float32": True,
           "settings": {"steps": a.steps, "warmup": a.warmup, "batch": a.batch, "generations": a.generations},
           "models": models}
    path = atomic_write_text(BOOK_DIR / OVERHEAD_JSON, json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
