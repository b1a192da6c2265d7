"""Log loaders: every supported format gives the same RunLog; bad input names the file and the problem."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_dynamics.paths import SHARED_DIR
from rlvr_dynamics.runs.logs import load_log

SHARED_LOGS = SHARED_DIR / "grpo_logs"
REWARDS = [0.1, 0.25, 0.5, 0.7]


def _trainer_state(tmp_path):
    hist = [{"step": i + 1, "reward": r, "kl": 0.01 * i, "loss": 0.0} for i, r in enumerate(REWARDS)]
    hist.insert(2, {"step": 2, "eval_reward": 0.3})  # an evaluation entry for a step that already logged
    hist.append({"train_runtime": 12.0, "total_flos": 0})  # TRL's final summary has no step
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"global_step": 4, "log_history": hist}))
    return p


def _csv(tmp_path):
    p = tmp_path / "metrics.csv"
    p.write_text("step,reward,entropy\n" + "".join(f"{i + 1},{r},\n" for i, r in enumerate(REWARDS)))
    return p


def _verl_jsonl(tmp_path):
    p = tmp_path / "verl.jsonl"
    p.write_text("\n".join(json.dumps({"step": i + 1, "data": {"critic/score/mean": r, "actor/entropy": 1.0}})
                           for i, r in enumerate(REWARDS)))
    return p


@pytest.mark.parametrize("make, column", [(_trainer_state, "reward"), (_csv, "reward"),
                                          (_verl_jsonl, "critic/score/mean")])
def test_formats_agree(tmp_path, make, column):
    log = load_log(make(tmp_path))
    assert log.reward_column == column
    np.testing.assert_array_equal(log.steps, [1, 2, 3, 4])
    np.testing.assert_allclose(log.reward, REWARDS)


def test_trainer_state_merges_eval_rows_and_folder_lookup(tmp_path):
    _trainer_state(tmp_path)
    log = load_log(tmp_path)  # a folder holding trainer_state.json
    assert log.series["eval_reward"][1] == 0.3 and np.isnan(log.series["eval_reward"][0])
    assert log.diagnostic("kl") is not None and log.diagnostic("entropy") is None


def test_empty_column_is_dropped(tmp_path):
    assert "entropy" not in load_log(_csv(tmp_path)).series


@pytest.mark.parametrize("content, match", [
    ("reward\n0.1\n0.2\n", "no step column"),
    ("step,reward\n1,0.1\nx,0.2\n", "invalid 'step'"),
    ("step,score\n1,0.1\n2,0.2\n", r"no reward column.*'score'"),
    ("step,reward\n1,0.1\n2,\n", "fewer than 2"),
    ('{"step": 1, "reward": 0.1}\n{bad json\n', "line 2 is not valid JSON"),
])
def test_bad_logs_name_file_and_problem(tmp_path, content, match):
    p = tmp_path / "log.txt"
    p.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_log(p)


def test_missing_file_and_unknown_column(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_log(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match=r"reward_column 'acc' not found; numeric columns: \['reward'\]"):
        load_log(_csv(tmp_path), reward_column="acc")


def test_only_per_function_rewards_name_their_sum(tmp_path):
    """A log with TRL's per-function rewards but no total: the error names the CLI flag and what the columns are."""
    p = tmp_path / "log.csv"
    p.write_text("step,rewards/format/mean,rewards/correct/mean\n1,0.5,0.1\n2,0.5,0.3\n")
    with pytest.raises(ValueError, match=r"\(--reward-column\) one of the numeric columns .*TRL's per-function "
                                         r"rewards \['rewards/correct/mean', 'rewards/format/mean'\] are there: the "
                                         r"training reward is their sum"):
        load_log(p)
    p.write_text("step,score\n1,0.1\n2,0.2\n")
    with pytest.raises(ValueError) as err:
        load_log(p)
    assert "per-function" not in str(err.value)
    # a TRL log whose total is empty at every step (a custom trainer that logs only the terms) says the same
    p.write_text("step,reward,train/rewards/format/mean,train/rewards/correct/mean\n1,,0.5,0.1\n2,,0.5,0.3\n")
    with pytest.raises(ValueError, match=r"reward column 'reward' has no finite value \(every cell is empty\).*"
                                         r"per-function rewards \['train/rewards/correct/mean', "):
        load_log(p)


@pytest.mark.skipif(not SHARED_LOGS.exists(), reason="../shared/grpo_logs is not beside this clone")
def test_shared_logs_load_with_their_declared_reward_column():
    index = json.loads((SHARED_LOGS / "index.json").read_text())
    for run in index:
        log = load_log(SHARED_LOGS / run["csv"])
        assert log.reward_column == run["reward_column"], run["csv"]
        assert len(log.steps) == run["n_rows"]
        assert log.reward[0] == pytest.approx(run["reward_first"])
        for concept, column in run.get("diagnostic_columns", {}).items():
            if concept in ("entropy", "grad_norm", "learning_rate") and column in log.series:
                assert log.diagnostic(concept) is not None, (run["csv"], concept)


def test_a_rows_cells_read_alike_on_the_fast_and_the_cell_by_cell_path():
    """``_segments._first_row`` converts a row of finite numbers and empty cells in one comprehension and sends a
    row with a cell ``float`` refuses through the cell-by-cell path: both give every cell as ``to_float`` and the same
    problems."""
    import math

    from rlvr_dynamics.runs._segments import _first_row, cell_problem, to_float

    fast = {"step": "3", "reward": "0.5", "eval": "", "kl": "nan", "loss": "-inf", "lr": " 2e-3 ", "n": 4,
            "ok": True, "big": "1e999"}
    slow = {**fast, "name": "run-a", "none": None, "nested": {"x": 1}, 7: "not a column name"}
    for row in (fast, slow):
        bad: dict = {}
        got = _first_row(row, "step", 3, bad)
        names = [k for k in row if isinstance(k, str) and k != "step"]
        assert list(got) == names
        for k in names:
            want = math.nan if isinstance(row[k], (dict, list)) else to_float(row[k])
            assert got[k] == want or (math.isnan(got[k]) and math.isnan(want)), k
        problems = {k: (cell_problem(row[k]) if not isinstance(row[k], (dict, list)) else "non-numeric")
                    for k in names}
        assert bad == {k: {3: (p, row[k])} for k, p in problems.items() if p is not None}
        assert set(bad) >= {"kl", "loss", "big"} and "eval" not in bad and "reward" not in bad
