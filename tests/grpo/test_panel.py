"""Panel evaluation (issue 23): the schedule, the fixed panel, the binomial SE, and a tiny-s run with and without the
panel whose training is bit-identical (the panel samples on an isolated stream), with the panel's columns exactly at
the scheduled steps, resumable after a kill."""
from __future__ import annotations

import json
import math

import pytest

from rlvr_dynamics.grpo.config import ADDED_FIELD_DEFAULTS, RunConfig
from rlvr_dynamics.grpo.panel import (DEFAULT_PANEL_STEPS, PANEL_SEED, binomial_se, canonical_panel_steps,
                                      config_panel_problems, panel_problems, panel_sample_seed, panel_schedule,
                                      parse_panel_steps)


# ------------------------------------------------------------------------------------------------ schedule
@pytest.mark.parametrize("spec, max_steps, steps", [
    ("2:20,5:60,10", 150, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50, 55, 60,
                           70, 80, 90, 100, 110, 120, 130, 140, 150]),
    ("2:20,5:60,10", 12, [2, 4, 6, 8, 10, 12]),           # the run ends inside the first segment
    ("2:20,5:60,10", 23, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 23]),  # the last step is always measured
    ("3:10", 12, [3, 6, 9, 12]),                         # no open segment: nothing after 10 but the last step
    ("3:10,4", 20, [3, 6, 9, 14, 18, 20]),               # each segment counts from the previous end (10)
    ("1", 4, [1, 2, 3, 4]),
    (5, 12, [5, 10, 12]),
    (["1:3", "2:7", 10], 30, [1, 2, 3, 5, 7, 17, 27, 30]),
])
def test_schedule_closed_cases(spec, max_steps, steps):
    assert panel_schedule(spec, max_steps) == steps


def test_schedule_parse_and_canonical_form():
    assert parse_panel_steps(DEFAULT_PANEL_STEPS) == ((2, 20), (5, 60), (10, None))
    assert parse_panel_steps(" 2 : 20 , 10 ".replace(" : ", ":")) == ((2, 20), (10, None))
    assert canonical_panel_steps(["2:20", "5:60", 10]) == canonical_panel_steps("2:20, 5:60, 10") == DEFAULT_PANEL_STEPS
    assert canonical_panel_steps(4) == "4"
    # a list in a YAML file and the string give the same run id
    a = RunConfig(panel_size=32, panel_steps=["2:20", "5:60", 10])
    b = RunConfig(panel_size=32, panel_steps="2:20,5:60,10")
    assert a.panel_steps == DEFAULT_PANEL_STEPS and a.run_id() == b.run_id()


@pytest.mark.parametrize("spec, why", [
    ("", "empty"), ([], "empty"), ("0:5", "period 0"), ("2:0", "end 0 does not exceed"),
    ("5:20,3:10", "end 10 does not exceed the previous end 20"), ("2:10,3:10", "end 10 does not exceed"),
    ("5,2:10", "must be the last"), ("a", "'a' is not an integer"), ("2:3:4", "more than one ':'"),
    ("-2:5", "is not an integer"), ("2.5", "is not an integer"), (True, "a bool"), (2.0, "a float"),
    ([None], "is not 'period:end'"), (0, "period 0"),
])
def test_schedule_errors_name_the_field(spec, why):
    with pytest.raises(ValueError, match="RunConfig.panel_steps must be") as exc:
        RunConfig(panel_size=8, panel_steps=spec)
    assert why in str(exc.value)
    with pytest.raises(ValueError, match="max_steps"):
        panel_schedule("2:10", 0)


def test_panel_fields_enter_the_hash_only_when_set():
    base = RunConfig()
    for field in ("panel_size", "panel_steps", "panel_greedy"):
        assert field in ADDED_FIELD_DEFAULTS and field not in base.hashed_fields()
    on = RunConfig(panel_size=256)
    assert on.hashed_fields()["panel_size"] == 256 and "panel_steps" not in on.hashed_fields()
    assert on.run_id() != base.run_id()
    assert RunConfig(panel_size=256, panel_steps="5").run_id() != on.run_id()
    with pytest.raises(ValueError, match="RunConfig.panel_size must be"):
        RunConfig(panel_size=-1)
    with pytest.raises(ValueError, match="RunConfig.panel_greedy must be False when panel_size is 0"):
        RunConfig(panel_greedy=True)


# ------------------------------------------------------------------------------------------------ the panel
def test_the_panel_is_the_same_for_every_run_of_a_grid_and_held_out():
    runs = [RunConfig(panel_size=64, seed=s, num_generations=g, learning_rate=lr, warm_start_seed=w)
            for s, g, lr, w in [(1, 4, 1e-3, 0), (2, 16, 1e-5, 0), (3, 4, 3e-3, 5), (0, 8, 1e-4, 1)]]
    panels = [config_panel_problems(c) for c in runs]
    assert all(p == panels[0] for p in panels[1:])
    assert panels[0] == panel_problems(64, digits=2, train_pool_size=4096) and PANEL_SEED == 0
    prompts = [p.prompt for p in panels[0]]
    assert len(set(prompts)) == 64                                  # distinct problems
    assert panel_problems(32) == panel_problems(64)[:32]              # a smaller panel is a prefix of a larger one
    datasets = pytest.importorskip("datasets")  # noqa: F841
    from rlvr_dynamics.grpo.runner import training_dataset

    train = {row["prompt"] for row in training_dataset(runs[0])}
    assert not train & set(prompts)                                   # never a training prompt
    for p in panels[0]:                                               # answers are the sums
        a, b = (int(x) for x in p.prompt.rstrip("=").split("+"))
        assert int(p.answer) == a + b
    with pytest.raises(ValueError, match="panel_size=60 is too large"):
        panel_problems(60, digits=1, train_pool_size=256)


def test_binomial_se_and_sample_seeds():
    assert binomial_se(0.5, 100) == 0.05
    assert binomial_se(0.0, 256) == 0.0 == binomial_se(1.0, 256)
    assert binomial_se(0.25, 256) == pytest.approx(math.sqrt(0.25 * 0.75 / 256), rel=1e-15)
    with pytest.raises(ValueError, match="n must be"):
        binomial_se(0.5, 0)
    with pytest.raises(ValueError, match="p must lie"):
        binomial_se(1.5, 10)
    seeds = {panel_sample_seed(s, k) for s in (1, 2, 3) for k in range(30)}
    assert len(seeds) == 90                                           # a fresh sub-stream per (run seed, step)
    assert panel_sample_seed(1, 4) == panel_sample_seed(1, 4)


# ------------------------------------------------------------------------------------------ a run with the panel
def _rows(path):
    import csv

    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.trains
def test_training_is_bit_identical_with_and_without_the_panel(cache, tmp_path):
    from rlvr_dynamics.paths import set_offline_env

    set_offline_env()
    pytest.importorskip("trl")
    from rlvr_dynamics.grpo.panel import panel_curve
    from rlvr_dynamics.grpo.runner import run
    from test_grpo_training import smoke_config

    plain = smoke_config()
    panel = smoke_config(panel_size=24, panel_steps="2:4,1", panel_greedy=True)
    assert panel_schedule(panel.panel_steps, panel.max_steps) == [2, 4, 5, 6]
    a = _rows(run(plain, runs_dir=tmp_path / "a", progress=False) / "metrics.csv")
    b_dir = run(panel, runs_dir=tmp_path / "b", progress=False)
    b = _rows(b_dir / "metrics.csv")
    panel_cols = {"panel_reward", "panel_reward_se", "panel_greedy_reward"}
    assert panel_cols <= set(b[0]) and not panel_cols & set(a[0])
    assert set(b[0]) - panel_cols == set(a[0])
    for ra, rb in zip(a, b, strict=True):      # every training column, bit for bit (the CSV holds repr(float))
        assert {k: rb[k] for k in ra} == ra
        for k in ("reward", "loss", "grad_norm"):
            assert ra[k] != "" and ra[k] == rb[k]
    measured = [int(r["step"]) for r in b if r["panel_reward"] != ""]
    assert measured == [2, 4, 5, 6]
    assert all(r["panel_reward_se"] == r["panel_greedy_reward"] == "" for r in b if r["panel_reward"] == "")
    for r in b:
        if r["panel_reward"]:
            p = float(r["panel_reward"])
            assert 0.0 <= p <= 1.0 and round(p * 24) == pytest.approx(p * 24, abs=1e-9)  # k successes out of 24
            assert float(r["panel_reward_se"]) == pytest.approx(math.sqrt(p * (1 - p) / 24), rel=1e-12, abs=1e-15)
            assert 0.0 <= float(r["panel_greedy_reward"]) <= 1.0
    assert json.loads((b_dir / "config.json").read_text())["panel_seconds_per_point"] > 0
    ev = json.loads((b_dir / "eval.json").read_text())
    p0 = ev["panel_before"]["panel_reward"]
    assert ev["n_panel"] == 24 and ev["panel_before"]["panel_reward_se"] == pytest.approx(
        math.sqrt(p0 * (1 - p0) / 24), abs=1e-15)
    curve = panel_curve(b_dir)
    assert curve["step"] == [0, 2, 4, 5, 6] and curve["reward"][0] == p0 and len(curve["greedy_reward"]) == 5
    with pytest.raises(ValueError, match="no panel_reward column"):
        panel_curve(tmp_path / "a" / plain.run_id())

    # killed after 3 steps and resumed: the same file as the uninterrupted run, panel columns included
    c_dir = run(panel, runs_dir=tmp_path / "c", progress=False, max_steps_this_call=3)
    assert not json.loads((c_dir / "config.json").read_text())["complete"]
    run(panel, runs_dir=tmp_path / "c", progress=False)
    assert (c_dir / "metrics.csv").read_bytes() == (b_dir / "metrics.csv").read_bytes()
    assert json.loads((c_dir / "eval.json").read_text())["panel_before"] == ev["panel_before"]
