"""Every input format gives the same RunLog; every bad input is one line naming the file (exit 2 from the CLI)."""
from __future__ import annotations

import json
import math
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from rlvr_dynamics.cli import main
from rlvr_dynamics.runs.logs import load_log

STEPS = [1, 2, 3, 4, 5, 6, 7, 8]
REWARDS = [0.1, 0.2, 0.35, 0.5, 0.6, 0.65, 0.7, 0.72]


def _assert_same(log, column="reward"):
    assert log.reward_column == column
    np.testing.assert_array_equal(log.steps, STEPS)
    np.testing.assert_allclose(log.reward, REWARDS, rtol=1e-6)


def test_wandb_ui_csv_export(tmp_path):
    p = tmp_path / "wandb_export.csv"
    p.write_text('"Step","run-7 - train/reward","run-7 - train/reward__MIN","run-7 - train/reward__MAX"\n' +
                 "".join(f"{s},{r},{r - 0.1},{r + 0.1}\n" for s, r in zip(STEPS, REWARDS)))
    log = load_log(p)
    _assert_same(log, "train/reward")
    assert set(log.series) == {"train/reward"}


def test_tensorboard_ui_csv_export(tmp_path):
    p = tmp_path / "run_train_reward.csv"
    p.write_text("Wall time,Step,Value\n" + "".join(f"{1.7e9 + s},{s},{r}\n" for s, r in zip(STEPS, REWARDS)))
    _assert_same(load_log(p), "run_train_reward")


def test_step_column_is_case_insensitive(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("Global_Step,Reward\n" + "".join(f"{s},{r}\n" for s, r in zip(STEPS, REWARDS)))
    _assert_same(load_log(p), "Reward")


def test_a_spreadsheet_csv_with_semicolons_and_decimal_commas(tmp_path):
    """A CSV saved by a spreadsheet in a locale whose decimal mark is a comma: ``Step;reward`` and ``0,125``. It read
    as one column named ``step;reward`` (no step column); now as the comma file does, and a tab-separated one too."""
    p = tmp_path / "m.csv"
    p.write_text("Step;reward;note\n" + "".join(f"{s};{str(r).replace('.', ',')};a,b\n" for s, r in zip(STEPS, REWARDS)))
    _assert_same(load_log(p), "reward")
    p.write_text("Step\treward\n" + "".join(f"{s}\t{r}\n" for s, r in zip(STEPS, REWARDS)))
    _assert_same(load_log(p), "reward")
    p.write_text("step;reward\n1;1e-1\n2;2,5e-1\n3;-0,5\n4;n/a\n5;0,75\n")
    log = load_log(p)
    assert log.reward[:3].tolist() == [0.1, 0.25, -0.5] and np.isnan(log.reward[3]) and log.reward[4] == 0.75


def test_trl_output_dir_reads_the_latest_checkpoint(tmp_path):
    for n, upto in ((4, 4), (8, 8)):
        ck = tmp_path / f"checkpoint-{n}"
        ck.mkdir()
        hist = [{"step": s, "reward": r, "epoch": s / 8} for s, r in zip(STEPS[:upto], REWARDS[:upto])]
        (ck / "trainer_state.json").write_text(json.dumps({"global_step": n, "log_history": hist}))
    (tmp_path / "checkpoint-10-tmp").mkdir()   # not a checkpoint with a state
    _assert_same(load_log(tmp_path))


def test_verl_console_log(tmp_path):
    p = tmp_path / "train.log"
    lines = ["INFO: starting", "(main_task pid=42) Training from scratch"]
    lines += [f"(main_task pid=42) step:{s} - actor/entropy:0.5 - critic/score/mean:{r} - timing_s/gen:1.25"
              for s, r in zip(STEPS, REWARDS)]
    p.write_text("\n".join(lines) + "\n")
    log = load_log(p)
    _assert_same(log, "critic/score/mean")
    assert log.diagnostic("entropy") is not None


def test_mlflow_file_store(tmp_path):
    run = tmp_path / "mlruns" / "0" / "abc123"
    (run / "metrics" / "train").mkdir(parents=True)
    (run / "metrics" / "train" / "reward").write_text(
        "".join(f"{1700000000000 + s} {r} {s}\n" for s, r in zip(STEPS, REWARDS)))
    (run / "metrics" / "loss").write_text("".join(f"{1700000000000 + s} 0.5 {s}\n" for s in STEPS))
    _assert_same(load_log(run), "train/reward")
    _assert_same(load_log(run / "metrics" / "train" / "reward"), "reward")


def test_mlflow_real_writer(tmp_path):
    mlflow = pytest.importorskip("mlflow")
    mlflow.set_tracking_uri(f"file://{tmp_path}/mlruns")
    with mlflow.start_run() as run:
        for s, r in zip(STEPS, REWARDS):
            mlflow.log_metric("reward", r, step=s)
    folder = tmp_path / "mlruns" / run.info.experiment_id / run.info.run_id
    _assert_same(load_log(folder))


# --- TensorBoard: a byte-exact event file (TFRecord framing + Event/Summary protobuf), as SummaryWriter writes ---

def _masked_crc(data: bytes) -> int:
    crc = zlib.crc32(data) & 0xFFFFFFFF   # (CRC-32C in TF; the reader does not check it)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _ld(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _event(step: int, tag: str, value: float, *, tensor: bool = False) -> bytes:
    if tensor:   # TF2 writers: Summary.Value.tensor (TensorProto dtype=DT_FLOAT, float_val)
        proto = _varint(1 << 3 | 0) + _varint(1) + _ld(5, struct.pack("<f", value))
        val = _ld(1, tag.encode()) + _ld(8, proto)
    else:        # simple_value
        val = _ld(1, tag.encode()) + _varint(2 << 3 | 5) + struct.pack("<f", value)
    ev = _varint(1 << 3 | 1) + struct.pack("<d", 1.7e9 + step) + _varint(2 << 3 | 0) + _varint(step) + _ld(5, _ld(1, val))
    header = struct.pack("<Q", len(ev))
    return header + struct.pack("<I", _masked_crc(header)) + ev + struct.pack("<I", _masked_crc(ev))


@pytest.mark.parametrize("tensor", [False, True])
def test_tensorboard_event_file(tmp_path, tensor):
    version = _varint(1 << 3 | 1) + struct.pack("<d", 1.7e9) + _ld(3, b"brain.Event:2")
    head = struct.pack("<Q", len(version))
    data = head + struct.pack("<I", 0) + version + struct.pack("<I", 0)
    data += b"".join(_event(s, "train/reward", r, tensor=tensor) for s, r in zip(STEPS, REWARDS))
    p = tmp_path / "events.out.tfevents.1700000000.host.1.0"
    p.write_bytes(data)
    _assert_same(load_log(p), "train/reward")
    _assert_same(load_log(tmp_path), "train/reward")   # a log directory
    for cut in (7, len(_event(8, "train/reward", 0.72, tensor=tensor)) - 3):   # inside the body, inside the header
        p.write_bytes(data[:-cut])
        log = load_log(p)                          # the records before the cut one (tests/runs/test_cut_short.py)
        np.testing.assert_array_equal(log.steps, STEPS[:-1])
        assert "ends inside TensorBoard record 9 " in log.read_notes[0]


def test_tensorboard_real_writer(tmp_path):
    tb = pytest.importorskip("torch.utils.tensorboard", exc_type=ImportError)
    writer = tb.SummaryWriter(str(tmp_path))
    for s, r in zip(STEPS, REWARDS):
        writer.add_scalar("train/reward", r, s)
    writer.close()
    _assert_same(load_log(tmp_path), "train/reward")


# --- errors --------------------------------------------------------------------------------------------------------

def test_non_utf8_names_the_file(tmp_path):
    p = tmp_path / "latin1.csv"
    p.write_bytes("step,reward\n1,0.1\n2,0.2 ü\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"{p.name}: not UTF-8 text \(invalid byte 0xfc"):
        load_log(p)


def test_repeated_step_with_different_values_is_an_error_naming_both_lines(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("step,reward\n1,0.1\n2,0.2\n2,0.3\n3,0.4\n")
    with pytest.raises(ValueError, match=r"dup.csv: line 4: step 2 is repeated \(.*line 3\) with a different 'reward'"):
        load_log(p)
    p.write_text("step,reward,eval_reward\n1,0.1,\n2,0.2,\n2,,0.5\n3,0.4,\n")   # disjoint columns: merged
    log = load_log(p)
    assert log.series["eval_reward"][1] == 0.5 and log.reward[1] == 0.2


def test_a_log_a_resumed_run_appended_to_is_read_from_its_later_rows(tmp_path):
    """A callback that appends to one file across a resume: steps 1–6, then (resumed from the checkpoint at step 4)
    5–8. The steps redone are read from the later rows, the earlier ones dropped and counted; resumed twice, the
    same. A step repeated without going back stays the error of the test above, and evaluation rows appended after
    training at lower steps (other columns) are merged, not cut."""
    p = tmp_path / "appended.csv"
    p.write_text("step,reward\n1,0.1\n2,0.2\n3,0.3\n4,0.4\n5,0.5\n6,0.6\n5,0.45\n6,0.55\n7,0.65\n8,0.75\n")
    log = load_log(p)
    assert log.steps.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert log.reward.tolist() == [0.1, 0.2, 0.3, 0.4, 0.45, 0.55, 0.65, 0.75]
    assert any("the steps go back 1 time(s) (at" in n and "line 8: step 5 after 6" in n and "2 earlier rows" in n
               for n in log.read_notes), log.read_notes
    p.write_text("step,reward\n1,0.1\n2,0.2\n3,0.3\n4,0.4\n3,0.35\n4,0.45\n5,0.5\n2,0.25\n3,0.3\n")
    log = load_log(p)
    assert log.reward.tolist() == [0.1, 0.25, 0.3]           # the last resume (from step 1) redid steps 2 on
    assert log.steps.tolist() == [1, 2, 3] and any("go back 2 time(s)" in n for n in log.read_notes)
    p.write_text("step,reward\n1,0.1\n2,0.2\n3,0.3\n3,0.9\n2,0.25\n")
    with pytest.raises(ValueError, match="step 3 is repeated"):
        load_log(p)
    p.write_text("step,reward,eval_reward\n1,0.1,\n2,0.2,\n3,0.3,\n4,0.4,\n2,,0.5\n4,,0.6\n")
    log = load_log(p)
    assert log.reward.tolist() == [0.1, 0.2, 0.3, 0.4] and log.series["eval_reward"][[1, 3]].tolist() == [0.5, 0.6]
    assert not any("go back" in n for n in log.read_notes)


def test_a_long_appended_log_reads_in_linear_time(tmp_path):
    """20,000 steps, then a resume from step 15,000 to 30,000: each segment's first step is computed once, not once
    per step of the segments before it (8 s before, about 0.2 s now; generous bound for a shared CPU)."""
    import time

    p = tmp_path / "long.csv"
    p.write_text("step,reward\n" + "\n".join(f"{i},0.3" for i in range(1, 20001)) + "\n"
                 + "\n".join(f"{i},0.4" for i in range(15000, 30001)) + "\n")
    t = time.perf_counter()
    log = load_log(p)
    assert time.perf_counter() - t < 3.0
    assert log.steps.size == 30000 and log.reward[14998] == 0.3 and log.reward[14999] == 0.4


def test_extra_fields_name_the_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("step,reward\n1,0.1\n2,0.2,9\n")
    with pytest.raises(ValueError, match="bad.csv: line 3 has 3 fields, the header has 2"):
        load_log(p)


def _cli(capsys, *args):
    rc = main(["fit", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_json_is_strict_and_forecast_does_not_swallow_the_log(tmp_path, capsys):
    p = tmp_path / "m.csv"
    y = laws_curve = [0.2 + 0.5 * (1 - math.exp(-s / 30)) for s in range(1, 121)]
    p.write_text("step,reward,entropy\n" + "".join(f"{s},{r},\n" for s, r in zip(range(1, 121), laws_curve)))
    rc, out, err = _cli(capsys, "--forecast", 200, 400, p, "--json", "--quick")
    assert rc == 0, err
    def refuse(constant):                 # strict JSON: NaN / Infinity tokens are refused (words in text are fine)
        raise AssertionError(f"non-strict JSON constant {constant}")

    report = json.loads(out, parse_constant=refuse)
    assert set(report["forecast"]) == {"200", "400"}
    lo, hi = report["forecast_interval"]["400"]
    assert lo <= report["forecast"]["400"] <= hi
    # the forecast never leaves the observed range (doctor.forecast.POINT_FACTOR = 0); the interval covers the plateau
    assert max(laws_curve) - 0.01 <= report["forecast"]["400"] <= max(laws_curve) + 1e-12
    assert lo <= 0.7 <= hi
    del y


def test_cli_momentum_without_refresh_interval_is_an_error(tmp_path, capsys):
    p = tmp_path / "m.csv"
    p.write_text("step,reward\n" + "".join(f"{s},{0.1 + 0.01 * s}\n" for s in range(1, 30)))
    rc, out, err = _cli(capsys, p, "--momentum", 0.9)
    assert rc == 2 and "--momentum needs --refresh-interval" in err


# --- fuzz ------------------------------------------------------------------------------------------------------------

def _base_files() -> list[tuple[str, bytes]]:
    rows = list(zip(range(1, 41), np.linspace(0.1, 0.8, 40)))
    csv_ = ("step,reward,entropy\n" + "".join(f"{s},{r:.4f},{1 - r:.3f}\n" for s, r in rows)).encode()
    jsonl = "\n".join(json.dumps({"step": s, "data": {"critic/score/mean": r}}) for s, r in rows).encode()
    state = json.dumps({"log_history": [{"step": s, "reward": r} for s, r in rows]}).encode()
    console = "\n".join(f"step:{s} - critic/score/mean:{r:.4f} - actor/entropy:0.5" for s, r in rows).encode()
    mlflow = "".join(f"170000000{s:04d} {r:.4f} {s}\n" for s, r in rows).encode()
    return [("csv", csv_), ("jsonl", jsonl), ("json", state), ("log", console), ("reward", mlflow)]


def _mutate(data: bytes, rng: np.random.Generator) -> bytes:
    kind = int(rng.integers(12))
    n = len(data)
    i = int(rng.integers(0, max(n, 1)))
    if kind == 0:
        return data[:i]                                                        # truncated
    if kind == 1:
        return data[:i] + bytes(rng.integers(0, 256, int(rng.integers(1, 8)), dtype=np.uint8)) + data[i:]
    if kind == 2:
        return data[:i] + b"\xff\xfe" + data[i:]                               # invalid UTF-8
    if kind == 3:
        lines = data.split(b"\n")
        j = int(rng.integers(len(lines)))
        return b"\n".join(lines[:j] + [lines[j]] + lines[j:])                  # a duplicated line
    if kind == 4:
        return data.replace(b"0.", rng.choice([b"x.", b"nan", b"1e999", b"-", b""]), int(rng.integers(1, 5)))
    if kind == 5:
        return data.replace(b"step", rng.choice([b"stp", b"", b"Step", b"s,t"]), 1)
    if kind == 6:
        return b"[" * int(rng.integers(1, 5000)) + data[:i]                    # deep nesting
    if kind == 7:
        return data[:i] + b"\x00" + data[i:]
    if kind == 8:
        return data.replace(b",", b",,", int(rng.integers(1, 4)))
    if kind == 9:
        return data.replace(b"\n", b"\r", int(rng.integers(1, 10)))
    if kind == 10:
        return bytes(rng.integers(0, 256, int(rng.integers(0, 64)), dtype=np.uint8))
    return data.replace(b"1", b"-1", int(rng.integers(1, 10))).replace(b'"', b"", int(rng.integers(0, 3)))


def test_fuzz_bad_files_give_one_value_error_naming_the_file(tmp_path):
    """≥ 1,000 generated broken logs: each loads or raises ValueError naming the file — nothing else escapes."""
    rng = np.random.default_rng(0)
    bases = _base_files()
    loaded = failed = 0
    for k in range(1200):
        ext, data = bases[k % len(bases)]
        p = tmp_path / f"f{k}.{ext}"
        p.write_bytes(_mutate(data, rng))
        try:
            log = load_log(p)
        except ValueError as exc:
            msg = str(exc)
            assert str(p) in msg and "\n" not in msg, (p.read_bytes()[:200], msg)
            failed += 1
        else:
            assert np.isfinite(log.reward).sum() >= 2 and np.all(np.diff(log.steps) > 0)
            loaded += 1
    assert failed > 300 and loaded > 100


def test_fuzz_through_the_cli_exit_2_and_no_traceback(tmp_path, capsys):
    rng = np.random.default_rng(1)
    bases = _base_files()
    for k in range(60):
        ext, data = bases[k % len(bases)]
        p = tmp_path / f"c{k}.{ext}"
        p.write_bytes(_mutate(data, rng))
        rc, out, err = _cli(capsys, p, "--quick", "--json")
        assert rc in (0, 2), err
        if rc == 2:
            assert err.count("\n") == 1 and str(p) in err and "Traceback" not in err
        else:
            json.loads(out)


# --- hyper-parameters beside the log ---------------------------------------------------------------------------------

def test_hyperparameters_from_verl_hydra_config(tmp_path):
    from rlvr_dynamics.runs.hyperparams import find_hyperparameters, merge

    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text(
        "data:\n  train_batch_size: 1024\nactor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: 256\n"
        "    ppo_epochs: 2\n    optim:\n      lr: 1.0e-06\n      betas: [0.9, 0.999]\n")
    found = find_hyperparameters(tmp_path / "train.log")
    assert found["learning_rate"] == 1e-6 and found["momentum"] == 0.9
    assert found["refresh_interval"] == 8          # 2 epochs × 1024/256 mini-batches between rollouts
    values, notes = merge({"momentum": None, "refresh_interval": 4, "learning_rate": None}, found)
    assert values["refresh_interval"] == 4 and values["momentum"] == 0.9   # the flag wins
    assert any("read from" in n for n in notes)


def test_hyperparameters_from_trl_args_and_partial_warning(tmp_path):
    from rlvr_dynamics.runs.hyperparams import find_hyperparameters, merge

    # TRL steps the optimizer once per gradient_accumulation_steps micro-batches and generates once per
    # steps_per_generation (default: gradient_accumulation_steps) × num_iterations of them: K_ref = num_iterations
    (tmp_path / "training_args.json").write_text(json.dumps({"learning_rate": 5e-6, "num_iterations": 2,
                                                             "gradient_accumulation_steps": 4}))
    found = find_hyperparameters(tmp_path / "checkpoint-10" / "trainer_state.json")
    assert found["refresh_interval"] == 2 and found["momentum"] == 0.9
    (tmp_path / "training_args.json").write_text(json.dumps({"learning_rate": 5e-6, "num_iterations": 3,
                                                             "gradient_accumulation_steps": 2,
                                                             "steps_per_generation": 8}))
    assert find_hyperparameters(tmp_path / "checkpoint-10" / "trainer_state.json")["refresh_interval"] == 12
    _, notes = merge({}, {"learning_rate": None, "momentum": None, "refresh_interval": None, "source": None})
    assert any(n.startswith("warning: no refresh interval") for n in notes)


def test_cli_reads_the_project_run_config(capsys):
    from rlvr_dynamics.runs import load_committed_runs

    runs = load_committed_runs("p1-fail-instability-lag")
    if not runs:
        pytest.skip("committed failure runs absent")
    rc, out, err = _cli(capsys, runs[0].path, "--quick", "--json")
    assert rc == 0, err
    assert "refresh_interval = 32 read from" in err
    report = json.loads(out)
    assert report["hyperparameters"]["refresh_interval"] == 32
    # its reward is logged on only 7 steps and then turns NaN: it diverged, so its dynamics are not read and no
    # stability margin is given
    assert report["status"]["state"] == "diverged"
    assert report["dynamics"]["verdict"] == "not read"
    assert "stability" not in (report["response"].get("reading") or {})


@pytest.mark.parametrize("folder", ["tensorboardx", "tensorboard"])
def test_event_files_written_by_the_real_writers(folder):
    """Samples written by tensorboardX 2.6.5's ``SummaryWriter.add_scalar`` (simple_value) and by tensorboard
    2.21.0's ``EventFileWriter`` with a scalar TensorProto (what ``torch.utils.tensorboard`` writes), steps 1–8."""
    from pathlib import Path

    log = load_log(Path(__file__).parent / "data" / folder)
    _assert_same(log, "train/reward")


def test_mlflow_file_store_written_by_mlflow():
    """Metric files written by mlflow 3.17.2 (``MLFLOW_ALLOW_FILE_STORE=true``, ``mlflow.log_metric``), steps 1–8."""
    from pathlib import Path

    run = Path(__file__).parent / "data" / "mlruns" / "0" / "3af7b01102d84f5ea7379dc0c9425113"
    log = load_log(run)
    _assert_same(log, "train/reward")
    assert "entropy" in log.series


TRL_OUTPUT = Path(__file__).parent / "data" / "trl_output"
"""A TRL 1.16 ``output_dir`` sample: ``training_args.bin`` written by ``torch.save(GRPOConfig(learning_rate=3e-6,
adam_beta1=0.8, num_iterations=2, steps_per_generation=8, gradient_accumulation_steps=2, …))`` and one TensorBoard
run folder written by torch's ``SummaryWriter`` (the ``args`` text as transformers' TensorBoardCallback writes it,
and 20 ``train/reward`` scalars 0.23, 0.26, …); no checkpoint."""


def test_training_args_bin_is_read_without_torch():
    from rlvr_dynamics.runs.hyperparams import read_training_args_bin

    args = read_training_args_bin(TRL_OUTPUT / "training_args.bin")
    assert args["learning_rate"] == 3e-6 and args["adam_beta1"] == 0.8
    assert (args["num_iterations"], args["steps_per_generation"], args["gradient_accumulation_steps"]) == (2, 8, 2)
    assert args["lr_scheduler_type"] == "linear"          # an enum field comes back as its value


def test_output_dir_without_checkpoint_reads_events_and_their_args(tmp_path):
    from rlvr_dynamics.runs.hyperparams import find_hyperparameters
    from rlvr_dynamics.runs.logs import resolved_source

    log = load_log(TRL_OUTPUT)
    np.testing.assert_allclose(log.reward, 0.2 + 0.03 * np.arange(1, 21), rtol=1e-6)
    assert resolved_source(TRL_OUTPUT).parent.name == "runs"
    found = find_hyperparameters(TRL_OUTPUT)
    # K_ref = steps_per_generation × num_iterations / gradient_accumulation_steps = 8 × 2 / 2
    assert (found["learning_rate"], found["momentum"], found["refresh_interval"]) == (3e-6, 0.8, 8)
    assert found["source"].endswith("training_args.bin")
    # without training_args.bin the same values come from the TensorBoard 'args' text
    import shutil

    shutil.copytree(TRL_OUTPUT / "runs", tmp_path / "runs")
    found = find_hyperparameters(tmp_path)
    assert (found["learning_rate"], found["momentum"], found["refresh_interval"]) == (3e-6, 0.8, 8)
    assert "TensorBoard 'args' text" in found["source"]


def test_newest_of_checkpoint_and_events_is_read(tmp_path):
    import os
    import shutil

    shutil.copytree(TRL_OUTPUT / "runs", tmp_path / "runs")
    ck = tmp_path / "checkpoint-5"
    ck.mkdir()
    (ck / "trainer_state.json").write_text(json.dumps({"log_history": [
        {"step": s, "reward": 0.1 * s} for s in range(1, 6)]}))
    events = next((tmp_path / "runs").glob("*/*tfevents*"))
    # the checkpoint's values disagree with the events', so no event file is the run that saved it: its modification
    # time says where it goes, beside the events' own first wall time (2026-12-01), not their modification time
    os.utime(ck / "trainer_state.json", (1_000, 1_000))     # checkpoint older than the events: events win
    assert load_log(tmp_path).steps.size == 20
    os.utime(events, (500, 500))                              # the event file's modification time says nothing
    assert load_log(tmp_path).steps.size == 20
    os.utime(ck / "trainer_state.json", (2e9, 2e9))         # a checkpoint written after the events began: a newer
    log = load_log(tmp_path)                                  # run redid steps 1-5; the events' later steps are stale
    assert log.steps.size == 5 and log.reward[-1] == 0.5


def test_a_malicious_training_args_bin_runs_no_code(tmp_path):
    """A pickle that would call os.system when loaded with pickle/torch.load: the reader imports nothing from it."""
    import pickle
    import zipfile

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            import os
            return (os.system, (f"touch {marker}",))

    data = pickle.dumps({"learning_rate": 1e-5, "payload": Evil()}, protocol=2)
    with zipfile.ZipFile(tmp_path / "training_args.bin", "w") as z:
        z.writestr("training_args/data.pkl", data)
    from rlvr_dynamics.runs.hyperparams import find_hyperparameters, read_training_args_bin

    args = read_training_args_bin(tmp_path / "training_args.bin")
    assert not marker.exists()
    assert args["learning_rate"] == 1e-5
    assert find_hyperparameters(tmp_path)["learning_rate"] == 1e-5
    (tmp_path / "bad.bin").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="bad.bin"):
        read_training_args_bin(tmp_path / "bad.bin")
