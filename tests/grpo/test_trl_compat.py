"""The TRL private-API shim and the namespaced metric names (torch-free parts; the live path is tested in
``test_grpo_training.py::test_metrics_reach_reporting_callbacks_and_doctor_stops``)."""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from rlvr_dynamics.grpo import _trl_compat as compat
from rlvr_dynamics.grpo.fields import CALLBACK_FIELDS, DYNAMICS_PREFIX, bare_name
from rlvr_dynamics.grpo.store import metrics_csv_text, metrics_rows
from rlvr_dynamics.runs.logs import load_log


@pytest.mark.parametrize("version, ok", [("1.16.0", True), ("1.16.7", True), ("1.15.9", False), ("1.17.0", False),
                                         ("2.0.0", False)])
def test_tested_version_range(version, ok):
    assert compat.trl_version_tested(version) is ok


def test_installed_trl_is_in_the_tested_range():
    pytest.importorskip("trl")
    assert compat.trl_version_tested(), (compat.trl_version(), compat.TESTED_TRL)


def test_trainer_without_the_private_api_is_refused_naming_it():
    class NotGRPO:
        _metrics = {}

    with pytest.raises(TypeError, match=r"_generate_and_score_completions.*TRL"):
        compat.require_private_api(NotGRPO())


def test_push_metric_skips_nan():
    class Fake:
        _metrics = {"train": defaultdict(list), "eval": defaultdict(list)}

    t = Fake()
    compat.push_metric(t, "dynamics/a", 1.0)
    compat.push_metric(t, "dynamics/a", 3.0)
    compat.push_metric(t, "dynamics/b", math.nan)  # skipped: TRL would otherwise log None for an all-NaN key
    assert dict(t._metrics["train"]) == {"dynamics/a": [1.0, 3.0]}


def test_bare_names_strip_only_the_callback_fields():
    for f in CALLBACK_FIELDS:
        assert bare_name(DYNAMICS_PREFIX + f) == f
    assert bare_name("dynamics/eval_reward") == "eval_reward"
    assert bare_name("dynamics/plateau") == "dynamics/plateau"  # the live doctor's outputs keep their namespace
    assert bare_name("clip_ratio/region_mean") == "clip_ratio/region_mean"
    assert bare_name("gap_alignment") == "gap_alignment"


def test_metrics_csv_keeps_bare_names_and_loader_reads_namespaced_logs(tmp_path):
    history = [{"step": s, "loss": 0.0, "reward": 0.1 * s, "dynamics/gap_alignment": 2.0 * s,
                "dynamics/eval_reward": 0.5, "dynamics/plateau": 0.9} for s in range(1, 4)]
    rows = metrics_rows(history)
    assert set(rows[0]) == {"step", "loss", "reward", "gap_alignment", "eval_reward", "dynamics/plateau"}
    path = tmp_path / "metrics.csv"
    path.write_text(metrics_csv_text(rows))
    log = load_log(path, min_points=1)
    np.testing.assert_allclose(log.series["gap_alignment"], [2.0, 4.0, 6.0])
    # a W&B/TensorBoard export names them train/dynamics/*: the loader adds the bare names
    wb = tmp_path / "wandb.csv"
    wb.write_text("Step,train/reward,train/dynamics/group_distinct_frac,train/dynamics/eval_reward\n"
                  "1,0.1,0.9,0.2\n2,0.2,0.8,0.3\n")
    log = load_log(wb, min_points=1)
    np.testing.assert_allclose(log.series["group_distinct_frac"], [0.9, 0.8])
    np.testing.assert_allclose(log.series["eval_reward"], [0.2, 0.3])
    assert "train/dynamics/eval_reward" in log.series
    # the live doctor's outputs keep only their namespaced name
    doc = tmp_path / "doctor.csv"
    doc.write_text("step,reward,dynamics/plateau,dynamics/gap_alignment\n1,0.1,0.9,1.0\n2,0.2,0.9,2.0\n")
    log = load_log(doc, min_points=1)
    assert "plateau" not in log.series and "gap_alignment" in log.series


def test_doctor_nan_round_trips_through_tensorboard(tmp_path):
    """Issue 32 item 4: the doctor's undefined values reach TensorBoard as NaN (a gap in the chart) and come back as
    missing values, never as a −1e9 stand-in that flattens the chart. Written by transformers' own
    TensorBoardCallback, read back by the project's loader."""
    pytest.importorskip("tensorboard")
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from transformers.integrations import TensorBoardCallback

    from rlvr_dynamics.doctor.live import RunDoctor

    args = TrainingArguments(output_dir=str(tmp_path), report_to="tensorboard", use_cpu=True)
    tb, state, control = TensorBoardCallback(), TrainerState(), TrainerControl()
    tb.on_train_begin(args, state, control)
    doctor = RunDoctor(every=1)
    seen_nan = False
    for step in range(1, 9):
        logs = {"reward": 0.5, "loss": 0.0}          # a constant reward: its noise ceiling is undefined
        logs.update(doctor.update(step, logs))
        seen_nan |= any(isinstance(v, float) and math.isnan(v) for v in logs.values())
        state.global_step = step
        tb.on_log(args, state, control, logs=logs)
    tb.on_train_end(args, state, control)
    assert seen_nan
    log = load_log(tmp_path, min_points=1)                # the output_dir: its runs/<date>/ event files
    assert np.isfinite(log.reward).all()
    for name, values in log.series.items():
        finite = values[np.isfinite(values)]
        assert not (np.abs(finite) >= 1e8).any(), (name, finite)
    ceiling = log.series.get("train/dynamics/noise_ceiling")
    assert ceiling is None or np.isnan(ceiling).all()


def test_untested_trl_warns_once_per_process(monkeypatch):
    class Trainer:
        _generate_and_score_completions = _calculate_rewards = _metrics = reward_weights = num_generations = None

    monkeypatch.setattr(compat, "trl_version", lambda: "9.9.9")
    monkeypatch.setattr(compat, "_WARNED", set())
    with pytest.warns(UserWarning, match="TRL 9.9.9 is outside the range"):
        compat.require_private_api(Trainer())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.require_private_api(Trainer())        # a second trainer: no second warning
