"""The live doctor's console line (:mod:`rlvr_dynamics.grpo.console`): one line in words when the status changes,
on a line of its own, never glued to tqdm's bar; and the callback prints it (issue 36)."""
from __future__ import annotations

import math
import sys

import pytest

from rlvr_dynamics.grpo.console import StatusConsole, status_change_line, write_line

COLLAPSED = {"state": "collapsed", "step": 104, "evidence": "the reward fell below half its gain at step 104 …",
             "numbers": {"peak": 0.7312, "now": 0.1104, "peak_step": 90}, "warning": None}


def test_collapse_line_reads_in_words_with_the_stop_and_its_checkpoint():
    line = status_change_line(110, COLLAPSED, previous="plateaued", stopping=True, checkpoint="checkpoint-110")
    assert line == ("rlvr-dynamics: step 110: collapsed (was plateaued) — reward 0.731 → 0.11; stopping, "
                    "checkpoint-110")
    assert "\n" not in line


def test_states_without_peak_and_now_give_their_evidence_and_warning():
    rising = {"state": "rising", "evidence": "the reward still rises over the last 10 logged points (slope t = 3.1 > 2)",
              "numbers": {"slope_t": 3.1}, "warning": "collapse warning, not confirmed by the reward: entropy"}
    assert status_change_line(40, rising) == ("rlvr-dynamics: step 40: rising — the reward still rises over the "
                                              "last 10 logged points (slope t = 3.1 > 2); warning: collapse warning, "
                                              "not confirmed by the reward: entropy")
    nan_now = {**COLLAPSED, "numbers": {"peak": 0.7, "now": math.nan}}       # no number to show: the evidence
    assert status_change_line(5, nan_now).endswith("— the reward fell below half its gain at step 104 …")


def test_the_line_refuses_a_bad_step_or_a_status_without_state():
    with pytest.raises(ValueError, match="step must be an integer"):
        status_change_line(1.5, COLLAPSED)
    with pytest.raises(ValueError, match="status must have a state"):
        status_change_line(3, {"evidence": "x"})


def test_console_prints_only_changes_and_never_too_short():
    printed = []
    console = StatusConsole(write=printed.append)
    assert console.update(1, {"state": "too short", "evidence": "1 logged reward(s)"}) is None
    assert console.update(2, None) is None
    console.update(4, {"state": "rising", "evidence": "up"})
    assert console.update(5, {"state": "rising", "evidence": "still up"}) is None
    console.update(9, COLLAPSED)
    console.update(9, COLLAPSED, stopping=True, checkpoint="checkpoint-9")     # a stop is always said
    assert printed == ["rlvr-dynamics: step 4: rising — up",
                       "rlvr-dynamics: step 9: collapsed (was rising) — reward 0.731 → 0.11",
                       "rlvr-dynamics: step 9: collapsed — reward 0.731 → 0.11; stopping, checkpoint-9"]
    assert console.update(3, None, stopping=True, checkpoint="checkpoint-3", reason="the rule fired") == \
        "rlvr-dynamics: step 3: stopping, checkpoint-3 — the rule fired"


def test_the_line_is_written_on_its_own_line_above_tqdms_bar(capsys):
    """Before: the stop line was glued to the bar (``…| 110/200 [00:11<…]rlvr-dynamics: stopping…``)."""
    tqdm = pytest.importorskip("tqdm").tqdm
    bar = tqdm(total=200, file=sys.stdout, ascii=True, mininterval=0, dynamic_ncols=False, ncols=60)
    bar.update(110)
    line = "rlvr-dynamics: step 110: collapsed — reward 0.73 → 0.11; stopping, checkpoint-110"
    write_line(line)
    bar.update(1)
    bar.close()
    out = capsys.readouterr().out
    rows = [r.rsplit("\r", 1)[-1] for r in out.split("\n")]        # what a terminal shows on each line
    assert line in rows, out
    assert all(line not in r or r == line for r in rows)


def test_without_tqdm_the_line_goes_to_stderr_after_a_newline(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    write_line("rlvr-dynamics: step 3: rising — up")
    assert capsys.readouterr().err == "\nrlvr-dynamics: step 3: rising — up\n"


def test_the_callback_prints_one_line_per_status_change_and_the_stop(tmp_path, capsys):
    """The callback with a real RunDoctor fed a rising then collapsing reward (no training: ``on_log`` as TRL calls
    it): one line when the status is first decided, one at the collapse, which stops the run at a checkpoint."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from rlvr_dynamics.doctor.live import RunDoctor
    from rlvr_dynamics.grpo.instrumentation import GRPODynamicsCallback

    cb = GRPODynamicsCallback(doctor=RunDoctor(every=100, stop_on_instability=True))
    cb.trainer = object()
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    state, control = TrainerState(), TrainerControl()
    rewards = [0.2 + 0.05 * k for k in range(12)] + [0.75] * 8 + [0.05] * 6
    for step, r in enumerate(rewards, 1):
        state.global_step = step
        cb.on_log(args, state, control, logs={"loss": 0.0, "reward": r})
        if control.should_training_stop:
            break
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("rlvr-dynamics: ")]
    assert control.should_training_stop and len(lines) >= 2, lines
    assert lines[0].startswith("rlvr-dynamics: step 4: ")              # the first decided status (after too short)
    assert f"step {state.global_step}: collapsed" in lines[-1]
    assert lines[-1].endswith(f"; stopping, checkpoint-{state.global_step}") and "reward 0.75 → 0.05" in lines[-1]
    assert len(set(lines)) == len(lines)
