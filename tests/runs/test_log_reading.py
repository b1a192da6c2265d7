"""Issue 36: ``fit`` reads runs as TRL and verl users leave them.

Each folder is built by TRL on the project's tiny model (a run killed and resumed twice with TRL's own
``resume_from_checkpoint``, its console output, its TensorBoard event files) or written here as the format's own
files (trainer_state.json, CSV, W&B offline run folders, verl and TRL console logs); ``load_log`` and ``rlvr-dynamics
fit`` must read each of them right, or refuse it in one line naming the file, the column, the step and the value.
"""
from __future__ import annotations

import contextlib
import io
import csv
import json
import math
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from rlvr_dynamics.cli import main
from rlvr_dynamics.runs.hyperparams import logged_learning_rate
from rlvr_dynamics.runs.logs import load_log


def _cli(capsys, *args):
    rc = main(["fit", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _refused(capsys, path, *words):
    """``fit PATH`` exits 2 with one line on stderr naming ``path`` and each of ``words``, no traceback."""
    rc, out, err = _cli(capsys, path)
    assert rc == 2, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert str(path) in err, err
    for w in words:
        assert w in err, (w, err)
    return err


def _trainer_state(path: Path, history: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"global_step": history[-1]["step"], "log_history": history}, indent=2))
    return path


def _rise_then_collapse(n: int = 150, at: int = 100, seed: int = 0) -> np.ndarray:
    """A reward that rises to ≈ 0.73 and falls to ≈ 0.11 after step ``at``."""
    rng = np.random.default_rng(seed)
    s = np.arange(1, n + 1)
    r = 0.2 + 0.53 * (1 - np.exp(-s / 20)) + rng.normal(0, 0.01, n)
    r[s > at] = 0.11 + rng.normal(0, 0.01, int((s > at).sum()))
    return r


# ---------------------------------------------------------------------------------------------------------------
# The learning rate: logged where the log has it, configured otherwise, and said which
# ---------------------------------------------------------------------------------------------------------------

def test_a_jumping_learning_rate_is_read_from_the_log_at_the_collapse(tmp_path, capsys):
    """The configured η is 0.0003; the run raised it to 0.01 at step 81 and collapsed after step 100: the report
    gives 0.01 at the collapse step, the schedule's range and the configured value beside it."""
    reward = _rise_then_collapse()
    history = [{"step": s, "loss": 0.01, "reward": float(r), "learning_rate": 3e-4 if s <= 80 else 1e-2,
                "epoch": s / 150} for s, r in zip(range(1, 151), reward)]
    out = tmp_path / "lr-jump"
    _trainer_state(out / "trainer_state.json", history)
    (out / "training_args.json").write_text(json.dumps({"learning_rate": 3e-4, "adam_beta1": 0.9,
                                                        "num_iterations": 1, "num_generations": 8}))
    rc, text, err = _cli(capsys, out, "--json")
    assert rc == 0, err
    report = json.loads(text)
    assert report["status"]["state"] == "collapsed" and report["status"]["step"] > 100
    hp = report["hyperparameters"]
    assert hp["learning_rate"] == 0.01 and hp["learning_rate_source"] == "logged"
    assert hp["learning_rate_step"] == report["status"]["step"]
    assert hp["learning_rate_range"] == [3e-4, 0.01] and hp["learning_rate_configured"] == 3e-4
    assert "learning_rate = 0.01 read from the log's 'learning_rate' column at step" in err
    assert "the schedule ran 0.0003–0.01; configured 0.0003 in" in err
    rc, text, err = _cli(capsys, out)
    assert rc == 0 and "learning rate η = 0.01 logged at step" in text
    # before the jump the logged value is the one at that step
    log = load_log(out)
    assert logged_learning_rate(log, 50)["value"] == 3e-4
    assert logged_learning_rate(log, 0)["value"] == 3e-4          # before the first row: the first logged value


def test_without_a_logged_learning_rate_the_configured_one_is_used_and_said(tmp_path, capsys):
    out = tmp_path / "no-lr-column"
    _trainer_state(out / "trainer_state.json", [{"step": s, "reward": 0.1 + 0.005 * s} for s in range(1, 41)])
    (out / "training_args.json").write_text(json.dumps({"learning_rate": 3e-4}))
    rc, text, err = _cli(capsys, out, "--json")
    assert rc == 0, err
    hp = json.loads(text)["hyperparameters"]
    assert hp["learning_rate"] == 3e-4 and hp["learning_rate_source"] == "configured"
    assert f"learning_rate = 0.0003 read from {out / 'training_args.json'}" in err


def test_a_negative_logged_learning_rate_is_refused_naming_file_column_step_value(tmp_path, capsys):
    p = tmp_path / "m.csv"
    p.write_text("step,reward,learning_rate\n" + "".join(f"{s},{0.1 * s},{-1e-3 if s == 3 else 1e-3}\n"
                                                        for s in range(1, 9)))
    err = _refused(capsys, p, "'learning_rate'", "step 3", "learning rate -0.001 is negative")
    assert "np.float64" not in err, err


# ---------------------------------------------------------------------------------------------------------------
# The reward column: only a reward, never a silent fallback; dropped cells counted
# ---------------------------------------------------------------------------------------------------------------

def test_an_all_nan_reward_is_an_error_naming_it_and_the_columns_found(tmp_path, capsys):
    """Before: ``fit`` fitted ``entropy`` in its place and said "plateaued"."""
    p = _trainer_state(tmp_path / "nan-reward" / "trainer_state.json",
                       [{"step": s, "loss": 0.1, "entropy": 1.0 - 0.01 * s, "reward": math.nan} for s in range(1, 31)])
    with pytest.raises(ValueError) as exc:
        load_log(p)
    msg = str(exc.value)
    assert "reward column 'reward' has no finite value" in msg and "30 NaN rewards at steps 1, 2, 3, 4, 5, … 30" in msg
    assert "columns found: ['entropy', 'loss', 'reward']" in msg
    _refused(capsys, p.parent, "'reward'", "columns found", "'entropy'")


def test_an_all_text_reward_is_an_error_not_a_fit_of_another_column(tmp_path, capsys):
    p = tmp_path / "text.csv"
    p.write_text("step,loss,reward\n" + "".join(f"{s},{0.5 - 0.01 * s},n/a\n" for s in range(1, 21)))
    err = _refused(capsys, p, "reward column 'reward' has no finite value", "20 non-numeric reward cells ('n/a')",
                   "columns found")
    assert "plateau" not in err
    alone = tmp_path / "alone.csv"            # nothing else numeric to point at: said, not an empty list
    alone.write_text("step,reward\n" + "".join(f"{s},n/a\n" for s in range(1, 21)))
    _refused(capsys, alone, "the log has no numeric column with a finite value")


def test_text_nan_and_inf_cells_are_counted_in_the_report(tmp_path, capsys):
    rows = {s: f"{0.2 + 0.004 * s:.4f}" for s in range(1, 101)}
    rows.update({30: "n/a", 40: "nan", 50: "NaN", 60: "nan", 70: "inf"})
    p = tmp_path / "cells.csv"
    p.write_text("step,reward,loss\n" + "".join(f"{s},{v},0.1\n" for s, v in rows.items()))
    log = load_log(p)
    assert log.read_notes == ["3 NaN rewards at steps 40, 50, 60", "1 infinite reward at step 70",
                              "1 non-numeric reward cell ('n/a') at step 30"]
    assert int(np.isfinite(log.reward).sum()) == 95 and np.isnan(log.reward[[29, 39, 69]]).all()
    rc, text, err = _cli(capsys, p)
    assert rc == 0, err
    assert "  read: 3 NaN rewards at steps 40, 50, 60" in text.splitlines()
    rc, text, _ = _cli(capsys, p, "--json", "--html", tmp_path / "report.html")
    assert "1 non-numeric reward cell ('n/a') at step 30" in json.loads(text)["read_notes"]
    head = (tmp_path / "report.html").read_text().split("<figure")[0]      # the page's top, before the figure
    assert "<li>read: 3 NaN rewards at steps 40, 50, 60</li>" in head


def test_a_gap_in_the_logged_steps_is_reported(tmp_path, capsys):
    p = tmp_path / "gap.csv"
    steps = [*range(1, 31), *range(61, 91)]
    p.write_text("step,reward\n" + "".join(f"{s},{0.2 + 0.004 * s:.4f}\n" for s in steps))
    assert load_log(p).read_notes == ["gap: no logged step between 30 and 61 (the log's usual spacing is 1)"]
    rc, text, err = _cli(capsys, p)
    assert rc == 0, err
    assert "  read: gap: no logged step between 30 and 61 (the log's usual spacing is 1)" in text.splitlines()


def test_a_run_whose_last_rewards_are_nan_reads_diverged_not_plateaued(tmp_path, capsys):
    rng = np.random.default_rng(1)
    history = [{"step": s, "loss": 0.1, "reward": float(0.6 + rng.normal(0, 0.01))} for s in range(1, 41)]
    history += [{"step": s, "loss": 0.1, "reward": math.nan} for s in range(41, 46)]     # only the reward
    out = tmp_path / "nan-end"
    _trainer_state(out / "trainer_state.json", history)
    rc, text, err = _cli(capsys, out)
    assert rc == 0, err
    assert text.startswith("status: DIVERGED"), text
    assert "  read: 5 NaN rewards at steps 41, 42, 43, 44, 45" in text.splitlines()


# ---------------------------------------------------------------------------------------------------------------
# Error messages on bad values
# ---------------------------------------------------------------------------------------------------------------

def test_a_reward_of_1e308_is_read_as_missing_naming_column_step_and_value_without_numpy_warnings(tmp_path, capsys):
    # one absurd reward (a reward model that blew up once, a logging error) is read as missing, like an inf cell,
    # so the rest of the run stays readable and the live doctor, which cannot refuse a row, reads it the same way
    p = tmp_path / "huge.csv"
    p.write_text("step,reward\n" + "".join(f"{s},{'1e308' if s == 7 else 0.1 * s}\n" for s in range(1, 11)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no overflow warning on the way to the note
        log = load_log(p)
        rc, text, err = _cli(capsys, p)
    assert np.isnan(log.reward[6]) and np.isfinite(np.delete(log.reward, 6)).all()
    assert log.read_notes == ["1 'reward' value beyond ±1e+12 (1e+308) at step 7, read as missing (a reward model "
                              "that blew up, a unit or logging error?)"]
    assert rc == 0 and "beyond ±1e+12 (1e+308) at step 7" in text, err
    # when nothing else is left, the refusal names them
    q = tmp_path / "all_huge.csv"
    q.write_text("step,reward\n1,1e300\n2,-2e300\n3,0.1\n")
    _refused(capsys, q, "fewer than 2 logged values", "2 'reward' values beyond ±1e+12 (1e+300…) at steps 1, 2")
    # in another column (a blown-up loss or gradient norm) it is read as infinite, i.e. missing, and said so
    q = tmp_path / "huge_loss.csv"
    q.write_text("step,reward,loss,grad_norm\n" + "".join(
        f"{s},{0.2 + 0.005 * s},{'1e308' if s == 30 else 0.1},{'-1e200' if s in (31, 32) else 1.0}\n"
        for s in range(1, 61)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = load_log(q)
        rc, text, err = _cli(capsys, q, "--details")
    assert log.read_notes == ["values beyond ±1e+150 read as infinite (missing): 'grad_norm' at steps 31… (-1e+200), "
                              "'loss' at step 30 (1e+308)"]
    assert np.isnan(log.series["loss"][29]) and np.isnan(log.series["grad_norm"][30:32]).all()
    assert rc == 0 and "Warning" not in err, err


def test_a_truncated_trainer_state_is_named_as_cut_short(tmp_path, capsys):
    p = _trainer_state(tmp_path / "cut" / "trainer_state.json",
                       [{"step": s, "reward": 0.1 * s, "loss": 0.5} for s in range(1, 40)])
    cut = p.read_text()[:len(p.read_text()) // 2]
    p.write_text(cut)
    last_line = cut.rstrip().count("\n") + 1
    assert last_line > 50
    err = _refused(capsys, p, "cut short", f"ends at line {last_line}")
    assert "line 1 " not in err and "line 1:" not in err


def test_a_wandb_binary_file_without_the_wandb_package_names_the_package(tmp_path, capsys, monkeypatch):
    """Before: "not UTF-8". The run folder and the file itself give the same one line."""
    import sys

    monkeypatch.setitem(sys.modules, "wandb", None)            # as if it were not installed
    run = tmp_path / "wandb" / "offline-run-20261203_101500-abcd1234"
    run.mkdir(parents=True)
    (run / "run-abcd1234.wandb").write_bytes(b":W&B\xe1\xbe\x00" + bytes(range(256)))
    for path in (run / "run-abcd1234.wandb", run):
        with pytest.raises(ValueError) as exc:
            load_log(path)
        assert "needs the wandb package" in str(exc.value) and "UTF-8" not in str(exc.value)
        _refused(capsys, path, "run-abcd1234.wandb", "pip install wandb")


# ---------------------------------------------------------------------------------------------------------------
# More of the files users have: W&B offline runs, console logs
# ---------------------------------------------------------------------------------------------------------------

def _wandb_history_rows(n: int = 30) -> list[dict]:
    """What W&B's TRL integration logs: ``train/…`` names, the trainer's ``train/global_step`` beside W&B's own
    ``_step`` (a counter of log calls, here off by one)."""
    return [{"train/loss": 0.5 - 0.01 * s, "train/reward": 0.1 + 0.02 * s, "train/learning_rate": 1e-3,
             "train/global_step": s, "train/epoch": s / n, "_step": s - 1, "_runtime": 2.0 * s,
             "_timestamp": 1.8e9 + 2 * s} for s in range(1, n + 1)]


def _wandb_history_with_evaluations(n: int = 40) -> list[dict]:
    """A TRL GRPO run's W&B history as transformers' callback and TRL write it: every ``wandb.log`` call is a row
    with its own ``_step``; an evaluation (every 10th step) is a call of its own at the same ``train/global_step``,
    and ``log_completions`` logs a table in a call without a global step."""
    rows, k = [], 0
    for s in range(1, n + 1):
        rows.append({"train/loss": 0.01, "train/reward": 0.1 + 0.01 * s, "train/global_step": s, "train/epoch": s / n,
                     "_step": k, "_runtime": 2.0 * s, "_timestamp": 1.8e9 + 2 * s})
        k += 1
        rows.append({"completions": {"_type": "table-file", "path": f"media/table/completions_{k}.json"},
                     "_step": k, "_runtime": 2.0 * s + 0.5, "_timestamp": 1.8e9 + 2 * s + 0.5})
        k += 1
        if s % 10 == 0:
            rows.append({"eval/reward": 0.3 + 0.001 * s, "eval/loss": 0.02, "train/global_step": s,
                         "train/epoch": s / n + 1e-4, "_step": k, "_runtime": 2.0 * s + 1, "_timestamp": 1.8e9 + 2 * s + 1})
            k += 1
    return rows


@pytest.mark.parametrize("form", ["wandb-history.jsonl", "history.csv"])
def test_a_wandb_history_with_evaluations_and_tables_is_read_by_global_step(tmp_path, form):
    """Its evaluation rows repeat a ``train/global_step`` with another ``_step`` (and epoch): fit said "step 10 is
    repeated with a different '_step'" and refused the log; its table rows have no global step (a CSV export leaves
    the cell empty): "invalid 'train/global_step' value ''". Now the rows of one global step merge and a row without
    one is left out, in W&B's offline run folder and in a CSV of the history alike."""
    rows = _wandb_history_with_evaluations()
    if form == "history.csv":
        cols = sorted({c for r in rows for c in r})
        path = tmp_path / form
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, cols)
            w.writeheader()
            w.writerows({c: json.dumps(v) if isinstance(v, dict) else v for c, v in r.items()} for r in rows)
    else:
        path = tmp_path / "wandb" / "offline-run-20261207_101500-ef01" / "files" / form
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = load_log(path)
    assert log.reward_column == "train/reward" and list(log.steps) == list(range(1, 41))
    np.testing.assert_allclose(log.reward, [0.1 + 0.01 * s for s in range(1, 41)])
    ev = log.series["eval/reward"]
    assert np.flatnonzero(np.isfinite(ev)).tolist() == [9, 19, 29, 39] and ev[9] == pytest.approx(0.31)


def test_wandb_offline_run_folder_reads_its_history(tmp_path, capsys):
    run = tmp_path / "wandb" / "offline-run-20261203_101500-abcd1234"
    (run / "files").mkdir(parents=True)
    (run / "files" / "wandb-history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _wandb_history_rows()))
    (run / "run-abcd1234.wandb").write_bytes(b":W&B\xe1\xbe\x00")   # beside it; not needed when the history is there
    log = load_log(run)
    assert log.reward_column == "train/reward" and list(log.steps) == list(range(1, 31))
    np.testing.assert_allclose(log.reward, [0.1 + 0.02 * s for s in range(1, 31)])
    assert logged_learning_rate(log)["column"] == "train/learning_rate"
    rc, text, err = _cli(capsys, run)
    assert rc == 0, err
    assert "wandb-history.jsonl" in text
    # the wandb/ folder holds runs: one line per run
    rc, text, err = _cli(capsys, tmp_path / "wandb")
    assert rc == 0, err
    assert "offline-run-20261203_101500-abcd1234" in text


def test_wandb_binary_run_file_through_the_wandb_package(tmp_path):
    pytest.importorskip("wandb")
    from wandb.proto import wandb_internal_pb2
    from wandb.sdk.internal import datastore

    run = tmp_path / "wandb" / "offline-run-20261203_101500-abcd1234"
    run.mkdir(parents=True)
    store = datastore.DataStore()
    store.open_for_write(str(run / "run-abcd1234.wandb"))
    for row in _wandb_history_rows():
        rec = wandb_internal_pb2.Record()
        for k, v in row.items():
            item = rec.history.item.add()
            item.key, item.value_json = k, json.dumps(v)
        store.write(rec)
    store.close()
    log = load_log(run)
    assert log.reward_column == "train/reward" and list(log.steps) == list(range(1, 31))
    np.testing.assert_allclose(log.reward, [0.1 + 0.02 * s for s in range(1, 31)])


def _tqdm(k: int, total: int) -> str:
    return f"\r {100 * k // total:3d}%|{'█' * (10 * k // total):10s}| {k}/{total} [00:{k:02d}<00:10,  1.23it/s]"


def test_slurm_out_with_tqdm_noise_and_logging_every_10_steps(tmp_path, capsys):
    """A SLURM ``.out``: job chatter, tqdm bars (carriage returns) and the printed dicts of ``logging_steps=10``;
    the bar's count (80 = 10 × 8 rows) and the epochs (proportional) give the steps 10, 20, …, 80."""
    lines = ["srun: job 1234 queued and waiting for resources", "Loading checkpoint shards: 100%|██| 2/2"]
    total = 80
    for k in range(1, 9):
        lines.append("".join(_tqdm(j, total) for j in range(10 * k - 9, 10 * k + 1)) +
                     "{'loss': '0.01', 'grad_norm': '0.5', 'learning_rate': '0.001', 'reward': "
                     f"'{0.1 + 0.05 * k:.4g}', 'reward_std': '0.2', 'epoch': '{k * 0.125:.4g}'}}")
    lines.append("{'train_runtime': '100.0', 'train_samples_per_second': '1.0', 'train_loss': '0.01', 'epoch': '1'}")
    p = tmp_path / "slurm-1234.out"
    p.write_text("\n".join(lines) + "\n")
    log = load_log(p)
    assert list(log.steps) == [10, 20, 30, 40, 50, 60, 70, 80]
    np.testing.assert_allclose(log.reward, [0.1 + 0.05 * k for k in range(1, 9)], rtol=1e-3)
    assert any(n.startswith("steps inferred") and "10·k" in n for n in log.read_notes), log.read_notes
    rc, text, err = _cli(capsys, p)
    assert rc == 0, err
    assert "read: steps inferred" in text


def test_a_trl_console_log_of_printed_dicts_only_is_read(tmp_path):
    """``disable_tqdm=True`` leaves only the printed dicts, one per line: before, the first '{' read as JSON Lines."""
    p = tmp_path / "train.out"
    p.write_text("".join(str({"loss": 0.1, "reward": 0.2 + 0.01 * s, "epoch": s / 100}) + "\n" for s in range(1, 41)))
    log = load_log(p)
    np.testing.assert_array_equal(log.steps, list(range(1, 41)))
    assert log.reward[-1] == pytest.approx(0.6)


def test_printed_dicts_with_numpy_and_torch_numbers_keep_their_rows(tmp_path):
    """A callback that logs a metric without ``.item()`` prints ``np.float32(0.25)`` or ``tensor(0.01,
    device='cuda:0')`` inside the dict: before, the dict was no Python literal and its step's reward was lost."""
    lines = [f"{{'loss': '0.1', 'reward': '{0.2 + 0.01 * s:.2f}', 'custom': np.float32({s / 4}), "
             f"'kl': tensor({s / 100}, device='cuda:0'), 'nan_metric': np.float64(nan), 'epoch': '{s / 100}'}}"
             for s in range(1, 21)]
    p = tmp_path / "slurm-8.out"
    p.write_text("Training...\n" + "\n".join(lines) + "\n")
    log = load_log(p)
    np.testing.assert_array_equal(log.steps, list(range(1, 21)))
    np.testing.assert_allclose(log.reward, [0.2 + 0.01 * s for s in range(1, 21)])
    np.testing.assert_allclose(log.series["custom"], [s / 4 for s in range(1, 21)])
    np.testing.assert_allclose(log.series["kl"], [s / 100 for s in range(1, 21)])
    assert "nan_metric" not in log.series


def test_verl_console_log_wrapped_over_several_lines(tmp_path):
    """verl's console logger writes one long line per step; a terminal or a job scheduler wraps it at 80 columns,
    cutting inside keys and values. Each step is joined back whole, among other output."""
    keys = ["actor/entropy", "actor/pg_loss", "actor/lr", "critic/score/mean", "critic/score/max",
            "response_length/mean", "timing_s/gen", "perf/throughput"]
    text = ["(TaskRunner pid=4242) Training Progress: 0%|          | 0/6", "(TaskRunner pid=4242) INFO: started"]
    want = {}
    for s in range(1, 7):
        vals = {"actor/entropy": 0.9 - 0.05 * s, "actor/pg_loss": -0.01 * s, "actor/lr": 1e-6,
                "critic/score/mean": 0.1 * s, "critic/score/max": 1.0, "response_length/mean": 100.0 + s,
                "timing_s/gen": 12.5, "perf/throughput": 1234.5}
        want[s] = vals
        line = f"(TaskRunner pid=4242) step:{s} - " + " - ".join(f"{k}:{vals[k]:.6g}" for k in keys)
        text += [line[i:i + 80] for i in range(0, len(line), 80)]
    p = tmp_path / "verl.log"
    p.write_text("\n".join(text) + "\n")
    assert max(len(ln) for ln in text) == 80 and len(text) > 6 * 2 + 2      # wrapped: several lines per step
    log = load_log(p)
    assert log.reward_column == "critic/score/mean" and list(log.steps) == [1, 2, 3, 4, 5, 6]
    for k in keys:
        np.testing.assert_allclose(log.series[k], [float(f"{want[s][k]:.6g}") for s in range(1, 7)], err_msg=k)


# ---------------------------------------------------------------------------------------------------------------
# A run killed and resumed twice with TRL's own resume
# ---------------------------------------------------------------------------------------------------------------

MAX_STEPS, SAVE_STEPS, KILLED_AT = 6, 2, (3, 5)


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory):
    """A GRPO run of the tiny model (untrained: no warm start, a few steps) in one ``output_dir``, as TRL leaves it
    when killed between two saves and resumed twice with ``trainer.train(resume_from_checkpoint=True)``:

    - call 1 logs steps 1–3 (its console output kept as a SLURM ``.out``), saves checkpoint-2, stops at 3;
    - call 2 resumes from checkpoint-2, redoes step 3, logs 3–5, saves checkpoint-4, stops at 5;
    - call 3 resumes from checkpoint-4, redoes step 5, logs 5–6, saves checkpoint-6; a copy of the folder taken
      right after it logged step 5 is the run "right after a resume".

    Each call writes its own TensorBoard event file under ``runs/<date>/``. Calls 2 and 3 run with the reward
    function fixed (+1 on every completion, the same name): GRPO's advantages, hence the training, are unchanged,
    but the logged reward of a redone step differs from the killed call's, so which segment wins is visible."""
    pytest.importorskip("trl")
    pytest.importorskip("tensorboard")
    from rlvr_dynamics.paths import set_offline_env

    set_offline_env()
    from transformers import TrainerCallback
    from transformers.integrations import TensorBoardCallback
    from trl import GRPOConfig, GRPOTrainer

    from rlvr_dynamics.grpo.config import RunConfig
    from rlvr_dynamics.grpo.runner import training_dataset
    from rlvr_dynamics.grpo.tasks import make_reward_function
    from rlvr_dynamics.grpo.tiny_model import build_tiny_model
    from rlvr_dynamics.grpo.tokenizer import char_tokenizer

    root = tmp_path_factory.mktemp("resumed")
    model, tok = root / "model", char_tokenizer()
    build_tiny_model("tiny-s", seed=0).save_pretrained(model)
    tok.save_pretrained(model)
    cfg = RunConfig(name="resume", model="tiny-s", num_prompts_per_step=2, num_generations=4, train_pool_size=64,
                    reward="units_digit")
    dataset, out, snapshot = training_dataset(cfg), root / "my-grpo-run", root / "right-after-resume"

    class Kill(TrainerCallback):               # stops between two saves, as a kill would
        def __init__(self, at):
            self.at = at

        def on_step_end(self, args, state, control, **kwargs):
            if self.at is not None and state.global_step >= self.at:
                control.should_training_stop = True

    class Snapshot(TrainerCallback):           # the folder as it is right after the resumed call logged step 5
        def __init__(self, trainer):
            self.trainer = trainer

        def on_log(self, args, state, control, **kwargs):
            if state.global_step == KILLED_AT[1] and not snapshot.exists():
                for cb in self.trainer.callback_handler.callbacks:
                    if isinstance(cb, TensorBoardCallback) and cb.tb_writer is not None:
                        cb.tb_writer.flush()
                shutil.copytree(out, snapshot)

    first = make_reward_function(cfg.reward)

    def fixed(*args, **kwargs):
        return [r + 1.0 for r in first(*args, **kwargs)]

    fixed.__name__ = first.__name__

    def train(kill_at, resume, console=None, snap=False):
        args = GRPOConfig(output_dir=str(out), max_steps=MAX_STEPS, per_device_train_batch_size=4, num_generations=4,
                          max_completion_length=cfg.max_completion_length, learning_rate=3e-3, logging_steps=1,
                          save_steps=SAVE_STEPS, report_to="tensorboard", use_cpu=True, bf16=False, beta=0.0,
                          loss_type="grpo", lr_scheduler_type="constant", gradient_checkpointing=False, seed=3,
                          disable_tqdm=console is None)
        trainer = GRPOTrainer(model=str(model), reward_funcs=[fixed if resume else first], args=args,
                              train_dataset=dataset, processing_class=tok)
        trainer.add_callback(Kill(kill_at))
        if snap:
            trainer.add_callback(Snapshot(trainer))
        with contextlib.redirect_stdout(console or io.StringIO()), contextlib.redirect_stderr(console or io.StringIO()):
            trainer.train(resume_from_checkpoint=resume)
        return trainer.state.global_step

    console = io.StringIO()
    assert train(KILLED_AT[0], None, console) == KILLED_AT[0]
    (root / "slurm-77.out").write_text("srun: job 77 started\n" + console.getvalue())
    assert train(KILLED_AT[1], True) == KILLED_AT[1]
    assert train(None, True, snap=True) == MAX_STEPS
    history = json.loads((out / f"checkpoint-{MAX_STEPS}" / "trainer_state.json").read_text())["log_history"]
    truth = {r["step"]: r for r in history if "reward" in r}
    return {"out": out, "snapshot": snapshot, "console": root / "slurm-77.out", "truth": truth, "root": root}


def _events(folder: Path) -> list[Path]:
    return sorted(folder.glob("runs/*/*tfevents*"), key=lambda p: p.name)


def test_a_run_resumed_twice_is_read_whole_and_its_segments_named(resumed_run, capsys):
    out, truth = resumed_run["out"], resumed_run["truth"]
    events = _events(out)
    assert len(events) == 3 and sorted(truth) == list(range(1, MAX_STEPS + 1))
    killed = load_log(events[0])            # the first call's own log: step 3 before it was redone
    assert list(killed.steps) == [1, 2, 3] and killed.reward[2] == pytest.approx(truth[3]["reward"] - 1, abs=1e-6)
    log = load_log(out)
    assert list(log.steps) == list(range(1, MAX_STEPS + 1))
    np.testing.assert_array_equal(log.reward, [truth[s]["reward"] for s in log.steps])   # the newest: checkpoint-6
    assert log.reward[2] >= 1 and log.reward[1] < 1      # step 3 as the resumed call redid it; step 2 as call 1 did
    assert [(Path(s["source"]).name, s["first_step"], s["last_step"]) for s in log.segments] == [
        (events[0].name, 1, 3), (events[1].name, 3, 5), (events[2].name, 5, 6), ("trainer_state.json", 1, 6)]
    rc, text, err = _cli(capsys, out)
    assert rc == 0, err
    read = [ln for ln in text.splitlines() if ln.startswith("  read: 4 segments")]
    assert len(read) == 1 and all(e.parent.name in read[0] for e in events) and "checkpoint-6" in read[0]
    rc, text, err = _cli(capsys, out, "--json")
    report = json.loads(text)
    assert report["n_points"] == MAX_STEPS and len(report["segments"]) == 4
    assert report["read_notes"][0].startswith("4 segments")


def test_right_after_a_resume_the_whole_history_is_read(resumed_run, capsys):
    """Before: "fewer than 2 logged values" (only the newest event file, one step, was read). The newest checkpoint
    (4) holds steps 1–4; step 5 comes from the resumed call's event file, which redid it."""
    snap, truth = resumed_run["snapshot"], resumed_run["truth"]
    assert not (snap / f"checkpoint-{MAX_STEPS}").exists() and len(_events(snap)) == 3
    log = load_log(snap)
    assert list(log.steps) == [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(log.reward[:4], [truth[s]["reward"] for s in range(1, 5)])
    np.testing.assert_allclose(log.reward[4], truth[5]["reward"], rtol=1e-6)        # float32 in TensorBoard
    assert Path(log.segments[-1]["source"]).parent.name == _events(snap)[-1].parent.name
    rc, text, err = _cli(capsys, snap)
    assert rc == 0, err
    assert "read: 4 segments" in text


def test_a_copied_output_dir_with_new_modification_times_reads_the_same(resumed_run, tmp_path):
    """``cp -r`` (or a download) gives every file a new modification time: the order of the segments comes from
    their contents, so the oldest event file, touched last, does not pass for the newest."""
    out = resumed_run["out"]
    copy = tmp_path / "copied"
    shutil.copytree(out, copy, copy_function=shutil.copyfile)
    now = 2.0e9
    os.utime(copy / f"checkpoint-{MAX_STEPS}" / "trainer_state.json", (now, now))
    for i, e in enumerate(reversed(_events(copy))):                # the first call's file gets the latest time
        os.utime(e, (now + 10 + i, now + 10 + i))
    a, b = load_log(out), load_log(copy)
    np.testing.assert_array_equal(b.steps, a.steps)
    np.testing.assert_array_equal(b.reward, a.reward)
    assert [Path(s["source"]).name for s in b.segments] == [Path(s["source"]).name for s in a.segments]


def test_tensorboard_only_folder_with_trls_reward_names(resumed_run, capsys, tmp_path):
    """The event files alone (no checkpoint): TensorBoard's tags are TRL's names under ``train/`` (``train/reward``,
    ``train/rewards/reward_units_digit/mean``); the reward is found, and TRL's own name of a reward function's mean
    selects it."""
    out, truth = resumed_run["out"], resumed_run["truth"]
    tb = tmp_path / "tb-only"
    shutil.copytree(out / "runs", tb / "runs")
    log = load_log(tb)
    assert log.reward_column == "train/reward" and list(log.steps) == list(range(1, MAX_STEPS + 1))
    np.testing.assert_allclose(log.reward, [truth[s]["reward"] for s in log.steps], rtol=1e-6)
    func = "rewards/reward_units_digit/mean"
    assert func in truth[1] and "train/" + func in log.series
    sub = load_log(tb, reward_column=func)
    assert sub.reward_column == "train/" + func
    np.testing.assert_allclose(sub.reward, [truth[s][func] for s in sub.steps], rtol=1e-6)
    rc, text, err = _cli(capsys, tb, "--reward-column", func)
    assert rc == 0, err
    assert f"reward column 'train/{func}'" in text


def test_a_newest_checkpoint_state_cut_short_gives_way_to_the_state_before(resumed_run, capsys, tmp_path):
    """A run killed while saving checkpoint-6's trainer_state.json: before, the whole folder was refused ("cut
    short"). The state before it (checkpoint-4) and the event files are read, and the note says which was left out;
    a folder whose only state is cut short is still refused, naming it."""
    out, truth = resumed_run["out"], resumed_run["truth"]
    copy = tmp_path / "killed-saving"
    shutil.copytree(out, copy)
    state = copy / f"checkpoint-{MAX_STEPS}" / "trainer_state.json"
    state.write_text(state.read_text()[:200])
    log = load_log(copy)
    assert list(log.steps) == list(range(1, MAX_STEPS + 1))           # step 6 from the last call's event file
    np.testing.assert_allclose(log.reward, [truth[s]["reward"] for s in log.steps], rtol=1e-6)
    assert any(f"checkpoint-{MAX_STEPS}/trainer_state.json is cut short" in n for n in log.read_notes), log.read_notes
    rc, text, err = _cli(capsys, copy)
    assert rc == 0 and "is cut short" in text, (text, err)
    alone = tmp_path / "alone"
    (alone / "checkpoint-6").mkdir(parents=True)
    shutil.copy(state, alone / "checkpoint-6" / "trainer_state.json")
    _refused(capsys, alone, "cut short")


def test_a_killed_calls_event_file_cut_inside_its_last_record_still_reads(resumed_run, capsys, tmp_path):
    """A run killed while TensorBoard wrote its last record (event files only, as a run without checkpoints leaves
    them): before, "truncated TensorBoard record" refused the whole folder. Now the record before is read and the note
    names the file (TRL writes each logged value as its own record: the cut one is the last of the run)."""
    out, truth = resumed_run["out"], resumed_run["truth"]
    tb = tmp_path / "tb-cut"
    shutil.copytree(out / "runs", tb / "runs")
    newest = _events(tb)[-1]
    newest.write_bytes(newest.read_bytes()[:-5])
    shutil.copytree(out / "runs", tmp_path / "tb-whole" / "runs")
    whole = load_log(tmp_path / "tb-whole")
    log = load_log(tb)
    assert list(log.steps) == list(whole.steps) == list(range(1, MAX_STEPS + 1))
    assert not any("cut short" in n for n in whole.read_notes)
    np.testing.assert_allclose(log.reward, [truth[s]["reward"] for s in log.steps], rtol=1e-6)
    assert any(newest.name in n and "cut short" in n for n in log.read_notes), log.read_notes
    rc, text, err = _cli(capsys, tb)
    assert rc == 0 and "cut short" in text, (text, err)


def test_trl_console_output_is_read_as_a_log(resumed_run, capsys):
    """The first call's console output (stdout and stderr in one file, as a SLURM ``.out``: the dicts transformers
    prints, warnings between them): steps 1–3 as the trainer logged them, values as printed (4 significant
    digits). Not a terminal, so tqdm drew no bar here; :func:`test_slurm_out_with_tqdm_noise_and_logging_every_10_steps`
    has them."""
    truth = resumed_run["truth"]
    text = resumed_run["console"].read_text()
    assert text.count("{'loss'") == 3
    # a warning between the dicts, as a first run prints it (Python shows a warning once per process, so whether
    # the real run printed one depends on the tests before it): the reader must step over it
    first = text.index("}\n") + 2
    text = (text[:first] + "/x/trainer.py:1: UserWarning: the reward function returned None for 1 completion\n  warnings.warn(\n"
            + text[first:])
    console = resumed_run["console"].with_name("console-with-warning.out")
    console.write_text(text)
    log = load_log(console)
    assert list(log.steps) == [1, 2, 3]
    for name in ("reward", "loss", "learning_rate"):     # (step 3's reward was logged before the fix: −1)
        want = [truth[s][name] - (name == "reward" and s == 3) for s in (1, 2, 3)]
        np.testing.assert_allclose(log.series[name], want, rtol=5e-4, atol=1e-9, err_msg=name)
    assert any(n.startswith("steps inferred") for n in log.read_notes)
    rc, out, err = _cli(capsys, console)
    assert rc == 0, err
    assert "read: steps inferred" in out


@pytest.mark.parametrize("value", [0.0, 0.5, 1.0])
def test_a_reward_that_never_moves_is_named_in_a_read_note(tmp_path, value):
    """A reward column with one exact value at every step, the first included (a broken reward function, a setting
    read as the reward): the reading goes on and says what to check; a run that merely ends at a constant does not
    get the note, nor does a short log."""
    hist = [{"step": s, "reward": value, "loss": 0.0} for s in range(1, 41)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": hist}))
    log = load_log(path)
    [note] = [n for n in log.read_notes if "exactly" in n]
    assert f"'reward' is exactly {value:g} at all 40 logged points" in note
    assert ("no completion was ever rewarded" in note) == (value == 0) and ("--reward-column" in note) == (value > 0)
    hist[0]["reward"] = value + 0.125 if value < 1 else 0.875      # it moved once: a run, not a constant
    path.write_text(json.dumps({"log_history": hist}))
    assert not [n for n in load_log(path).read_notes if "exactly" in n]
    path.write_text(json.dumps({"log_history": [{"step": s, "reward": value} for s in range(1, 6)]}))
    assert not [n for n in load_log(path).read_notes if "exactly" in n]
