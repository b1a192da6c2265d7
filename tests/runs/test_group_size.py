"""group_size_summary against the committed files it summarises (recomputed here from the CSV and JSON directly)."""
from __future__ import annotations

import csv
import json
import math
import shutil

import numpy as np
import pytest

from rlvr_dynamics.paths import RUNS_DIR
from rlvr_dynamics.runs.committed import grid_runs, load_committed_runs
from rlvr_dynamics.runs.group_size import LATE_STEPS, group_size_summary


def _column(run_dir, name):
    rows = list(csv.DictReader(open(run_dir / "metrics.csv")))
    return np.array([float(r["step"]) for r in rows]), np.array([float(r[name]) if r.get(name) else np.nan for r in rows])


def test_summary_recomputes_from_the_run_files():
    grid = group_size_summary("smollm-panel-")
    assert set(grid) == {4, 16}
    for G, d in grid.items():
        assert d["completions_per_step"] == 4 * G and d["model"] == "smollm2-135m"
        assert len(d["runs"]) == len(d["seeds"]) == len(d["zero_std_share"]) == len(d["late_panel"])
        for i, rid in enumerate(d["runs"]):
            run_dir = RUNS_DIR / rid
            info = json.loads((run_dir / "config.json").read_text())
            ev = json.loads((run_dir / "eval.json").read_text())
            assert info["config"]["num_generations"] == G and info["complete"]
            assert info["config"]["name"] == "smollm-panel" and info["config"]["num_prompts_per_step"] == 4
            _, z = _column(run_dir, "frac_reward_zero_std")
            assert d["zero_std_share"][i] == pytest.approx(np.nanmean(z))
            steps, p = _column(run_dir, "panel_reward")
            late = p[(steps >= info["config"]["max_steps"] - LATE_STEPS) & np.isfinite(p)]
            assert late.size >= 3 and d["late_panel"][i] == pytest.approx(late.mean())
            assert d["heldout_after"][i] == ev["after"]["heldout"]
            assert d["seconds_per_step"][i] == info["seconds_per_step"]


def test_runs_without_a_panel_have_no_late_panel_reward():
    grid = group_size_summary("smollm-main-")
    assert all(math.isnan(x) for d in grid.values() for x in d["late_panel"])


def test_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="no complete committed run of the grid 'nothing-'"):
        group_size_summary("nothing-")
    ids = sorted({d.name for d in RUNS_DIR.glob("p1-main-*")})
    models = {json.loads((RUNS_DIR / i / "config.json").read_text())["config"]["model"]: i for i in ids}
    assert len(models) >= 2
    for rid in list(models.values())[:2]:
        shutil.copytree(RUNS_DIR / rid, tmp_path / rid)
    with pytest.raises(ValueError, match="train .* pass model="):
        group_size_summary("p1-main-", runs_dir=tmp_path)
    one = next(iter(models))
    assert all(d["model"] == one for d in group_size_summary("p1-main-", model=one, runs_dir=tmp_path).values())


def test_a_grid_is_its_name_not_a_prefix_of_a_longer_one():
    """smollm-panel and smollm-panel-compute share a prefix: each grid holds only its own runs (ids <name>-<hash>),
    whether the name is given with its trailing '-' or without."""
    panel = {r.id for r in grid_runs("smollm-panel-")}
    compute = {r.id for r in grid_runs("smollm-panel-compute")}
    assert panel and compute and not panel & compute
    assert panel == {r.id for r in grid_runs("smollm-panel")}
    assert all(r.config.name == "smollm-panel" for r in grid_runs("smollm-panel"))
    assert panel | compute <= {r.id for r in load_committed_runs("smollm-panel-")}
