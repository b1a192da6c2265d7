"""``rlvr-dynamics fit`` on the folders a TRL run with ``GRPODynamicsCallback`` leaves (issue 32): a run folder whose
log cannot be read gives the log's own error, hyper-parameters (η, μ, K_ref, G) are read beside the log actually read,
a model folder's config.json is named for what it is, and a fit stuck at its bound is no instability. Torch-free:
the folders are built from the committed fixtures of ``tests/runs/data``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rlvr_dynamics.cli import main

TRL_ARGS = Path(__file__).parent.parent / "runs" / "data" / "trl_output" / "training_args.bin"


def _history(n: int = 12, duplicate_last: bool = False, conflicting_reward: bool = False) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = [{"step": s, "loss": 0.01, "reward": float(0.2 + 0.5 * (1 - np.exp(-s / 4)) + 0.02 * rng.normal()),
             "entropy": 0.5, "dynamics/status": 7.0, "dynamics/flag/collapse_warning": 0.0} for s in range(1, n + 1)]
    if duplicate_last:   # what the callback wrote before issue 32: the final report at the last report's step
        rows[-1]["dynamics/flag/collapse_warning"] = 1.0
        rows.append({"step": n, "dynamics/status": 7.0, "dynamics/flag/collapse_warning": 0.0})
    if conflicting_reward:   # a log that really measures one step twice
        rows.append({"step": n, "reward": rows[n - 1]["reward"] + 0.1})
    return rows


def test_fit_reads_a_folder_the_old_callback_wrote_its_final_report_twice_in(tmp_path, capsys):
    """Folders written before issue 32's fix repeat the last step with the doctor's own outputs changed (a flag is a
    one-step pulse): those are not measurements, the later report wins, and the folder is read."""
    out = tmp_path / "old-callback-run"
    _checkpoint(out, _history(duplicate_last=True), 12)
    rc = main(["fit", str(out), "--quick", "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    from rlvr_dynamics.runs.logs import load_log
    log = load_log(out / "checkpoint-12" / "trainer_state.json")
    assert log.series["dynamics/flag/collapse_warning"][-1] == 0.0 and log.steps[-1] == 12


def _checkpoint(out: Path, rows: list[dict], step: int, args: bool = True) -> Path:
    ck = out / f"checkpoint-{step}"
    ck.mkdir(parents=True)
    (ck / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": rows}))
    if args:
        shutil.copy(TRL_ARGS, ck / "training_args.bin")
    return ck


def test_fit_dir_gives_the_real_cause_of_a_repeated_step(tmp_path, capsys):
    """A TRL output_dir (checkpoints and an empty runs/ folder) whose log repeats a step: the error is the log's
    ("step 12 is repeated … with a different …"), not "runs is a folder without a log"."""
    out = tmp_path / "my-run"
    _checkpoint(out, _history(conflicting_reward=True), 12)
    (out / "runs").mkdir()
    rc = main(["fit", str(out), "--quick"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "step 12 is repeated" in err and "'reward'" in err, err
    assert "folder without a log" not in err


def test_fit_folder_of_runs_reads_every_run_and_names_each_bad_one(tmp_path, capsys):
    runs = tmp_path / "runs-of-a-sweep"
    _checkpoint(runs / "a-bad", _history(conflicting_reward=True), 12)
    _checkpoint(runs / "b-good", _history(), 12)
    _checkpoint(runs / "c-good", _history(), 12)
    rc = main(["fit", str(runs), "--quick"])
    cap = capsys.readouterr()
    assert rc == 2
    assert "step 12 is repeated" in cap.err
    lines = [ln for ln in cap.out.splitlines() if ln.startswith(("b-good", "c-good"))]
    assert len(lines) == 2, cap.out


def test_checkpoints_only_output_dir_reads_eta_mu_kref_and_g_beside_the_log(tmp_path, capsys):
    """``report_to="none"``: the output_dir holds checkpoints only; ``training_args.bin`` sits beside the
    trainer_state.json that is read (in checkpoint-N), not in the folder typed. η, μ, K_ref and G are read and
    reported."""
    out = tmp_path / "no-tracker-run"
    _checkpoint(out, _history()[:6], 6)
    _checkpoint(out, _history(), 12)
    rc = main(["fit", str(out), "--quick", "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "checkpoint-12" in cap.err
    for note in ("learning_rate = 3e-06 read from", "momentum = 0.8 read from", "refresh_interval = 8 read from",
                 "num_generations = 4 read from"):
        assert note in cap.err, (note, cap.err)
    assert str(out / "checkpoint-12" / "training_args.bin") in cap.err
    report = json.loads(cap.out)
    hp = report["hyperparameters"]
    assert (hp["learning_rate"], hp["momentum"], hp["refresh_interval"], hp["num_generations"]) == (3e-6, 0.8, 8, 4)


def test_html_title_reports_g(tmp_path, capsys):
    out = tmp_path / "no-tracker-run"
    _checkpoint(out, _history(), 12)
    rc = main(["fit", str(out), "--quick", "--html", str(tmp_path / "r.html")])
    assert rc == 0, capsys.readouterr().err
    head = (tmp_path / "r.html").read_text().split("</h1>")[0]
    assert "η = 3e-06" in head and "K_ref = 8" in head and "G = 4" in head


def test_a_model_config_json_is_named_for_what_it_is(tmp_path, capsys):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 64},
                                                  indent=2))
    rc = main(["fit", str(model / "config.json")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "not valid JSON" not in err
    assert "not a training log" in err and "config.json" in err


def test_fit_help_names_event_files_and_the_newer_of_checkpoint_and_events(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "events.out.tfevents" in text
    assert "written last" in text and "num_generations" in text


def test_margin_stuck_at_its_bound_is_not_instability():
    """Issue 32 item 6: a fit whose C/K sits at its bound has a zero-width margin interval [1.0, 1.0]; it raised
    "(c) stability margin 80 % interval [1.0, 1.0] above 1" on healthy runs. It is undecided, not unstable."""
    from rlvr_dynamics.doctor import detectors as dg
    from rlvr_dynamics.doctor.reading import response_laws as rl
    from rlvr_dynamics.runs.logs import RunLog

    stuck = rl.stability_margin(0.0, 0.0, 1)
    assert stuck["margin_80"] == [1.0, 1.0] and stuck["unstable"] == "undecided"
    assert rl.stability_margin(-0.5, 0.1, 1)["unstable"] == "yes"       # a real interval above 1 still is
    steps = np.arange(1, 41)
    log = RunLog("x", steps, {"reward": 0.3 + 0.3 * (1 - np.exp(-steps / 8))}, "reward")
    det = dg.detect_dynamical_instability(log, None, stuck, (0.0, 1.0), reading=False)
    assert not any(str(e.get("reason", "")).startswith("(c)") for e in det.events)
