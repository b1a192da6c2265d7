"""tools/gpu_smollm_grid.sh: its CPU dry run (2 steps of one run of the GPU grid, shrunk to tiny-s) goes through the
same launching, waiting, summary and archive as the GPU run, and the GPU config validates."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

from rlvr_dynamics.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "tools" / "gpu_smollm_grid.sh"


def test_gpu_config_is_the_grid_at_64_prompts_with_the_panel():
    from rlvr_dynamics.grpo.config import load_experiment

    runs = load_experiment(REPO_ROOT / "data" / "configs" / "grpo_smollm_gpu.yml")
    assert sorted((r.num_generations, r.seed) for r in runs) == [(g, s) for g in (4, 16) for s in (1, 2, 3)]
    for r in runs:
        assert (r.model, r.num_prompts_per_step, r.max_steps, r.learning_rate) == ("smollm2-135m", 64, 150, 1e-5)
        assert (r.device, r.mixed_precision, r.panel_size, r.panel_steps) == ("auto", "bf16", 256, "2:20,5:60,10")
    names = [r.name for r in runs]
    assert not any(a != b and a in b for a in names for b in names)  # `train --only <name>` picks one run each


@pytest.mark.trains
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_on_cpu(tmp_path):
    pytest.importorskip("trl")
    out = tmp_path / "gpu_out"
    env = {**os.environ, "RLVR_DYNAMICS_CACHE": str(tmp_path / "cache"), "PYTHON": sys.executable}
    env.pop("GPU_GRID_DRY_RUN_MODEL", None)
    proc = subprocess.run(["bash", str(SCRIPT), "--dry-run-cpu", "--out", str(out)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = sorted((out / "runs").glob("*/config.json"))
    assert len(runs) == 1
    info = json.loads(runs[0].read_text())
    assert info["complete"] and info["device"] == "cpu" and info["config"]["name"] == "smollm-gpu-g4-s1-dryrun"
    with open(runs[0].parent / "metrics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["step"] for r in rows] == ["1", "2"] and all(r["panel_reward"] != "" for r in rows)
    assert "panel_before" in json.loads((runs[0].parent / "eval.json").read_text())
    assert info["run_id"] in (out / "summary.txt").read_text()
    with tarfile.open(f"{out}.tar.gz") as tar:
        names = tar.getnames()
    assert f"gpu_out/runs/{info['run_id']}/metrics.csv" in names and "gpu_out/summary.txt" in names


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bad_arguments_fail_before_any_model_loads(tmp_path):
    for argv, message in [(["--bogus"], "unknown argument --bogus"), (["--steps", "x"], "--steps must be")]:
        proc = subprocess.run(["bash", str(SCRIPT), *argv, "--out", str(tmp_path / "o")], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr
