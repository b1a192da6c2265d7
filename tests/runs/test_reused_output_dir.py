"""A TRL ``output_dir`` reused for a new run: the run written last is read, the older one left out and named."""
from __future__ import annotations

import json
import os

import numpy as np

from rlvr_dynamics.runs.logs import load_log


def _state(folder, steps, reward, mtime):
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "trainer_state.json"
    p.write_text(json.dumps({"global_step": max(steps), "log_history": [
        {"step": s, "reward": reward(s), "loss": 0.1} for s in steps]}))
    os.utime(p, (mtime, mtime))
    return p


def _old(s):
    return round(0.2 + 0.6 * (1 - float(np.exp(-s / 100))), 4)


def _new(s):
    return round(0.5 - 0.004 * s, 4)


def test_a_new_run_in_a_reused_folder_is_read_not_the_old_runs_higher_checkpoint(tmp_path):
    _state(tmp_path / "checkpoint-400", range(1, 401), _old, 1000)
    _state(tmp_path / "checkpoint-500", range(1, 501), _old, 1100)
    _state(tmp_path / "checkpoint-100", range(1, 101), _new, 2000)        # the new run, from scratch
    log = load_log(tmp_path)
    assert log.steps[-1] == 100 and log.reward[0] == _new(1)
    note = " ".join(log.read_notes)
    assert "checkpoint-100/trainer_state.json, written last, disagrees with checkpoint-500" in note
    assert "(step 100, 'reward')" in note


def test_saves_of_one_run_agree_whatever_their_file_times(tmp_path):
    """A copied folder scrambles modification times: states that agree are one run, read to its last save."""
    _state(tmp_path / "checkpoint-500", range(1, 501), _old, 1000)
    _state(tmp_path / "checkpoint-400", range(1, 401), _old, 2000)
    log = load_log(tmp_path)
    assert log.steps[-1] == 500 and not any("disagrees" in n for n in log.read_notes)


def test_a_branch_resumed_from_an_earlier_checkpoint_replaces_the_abandoned_one(tmp_path):
    _state(tmp_path / "checkpoint-100", range(1, 101), _old, 1000)
    _state(tmp_path / "checkpoint-300", range(1, 301), _old, 1100)
    _state(tmp_path / "checkpoint-200", range(1, 201), lambda s: _old(s) if s <= 100 else round(_old(s) - 0.1, 4), 2000)
    log = load_log(tmp_path)
    assert log.steps[-1] == 200 and abs(log.reward[-1] - (_old(200) - 0.1)) < 1e-9
    assert any("disagrees with checkpoint-300/trainer_state.json (step 200, 'reward')" in n for n in log.read_notes)


def test_an_old_runs_saved_state_beside_a_new_runs_checkpoint(tmp_path):
    _state(tmp_path, range(1, 501), _old, 1000)                          # trainer.save_state() of the old run
    _state(tmp_path / "checkpoint-50", range(1, 51), _new, 2000)
    log = load_log(tmp_path)
    assert log.steps[-1] == 50 and any("disagrees with trainer_state.json" in n for n in log.read_notes)
