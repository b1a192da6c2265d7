"""A log that ends inside its last record (a run still writing it, or killed while writing it) is read to the record
before, with a read note; a log broken anywhere else is still refused (``runs/_cut_short.py``)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_dynamics.cli import main
from rlvr_dynamics.runs.logs import load_log

STEPS = range(1, 41)


def _reward(s: int) -> float:
    return round(0.2 + 0.0137 * s, 4)          # 0.2137 … 0.748: four digits, so a cut can fall inside a number


def _jsonl() -> str:
    return "".join(json.dumps({"step": s, "reward": _reward(s), "loss": 0.1}) + "\n" for s in STEPS)


def _csv() -> str:
    return "step,loss,reward\n" + "".join(f"{s},0.1,{_reward(s)}\n" for s in STEPS)


def _verl() -> str:
    return "".join(f"step:{s} - actor/entropy:0.5 - critic/score/mean:{_reward(s)}\n" for s in STEPS)


def _mlflow() -> str:
    return "".join(f"{1_700_000_000_000 + s} {_reward(s)} {s}\n" for s in STEPS)


FORMATS = {"log.jsonl": _jsonl, "log.csv": _csv, "verl.log": _verl, "reward": _mlflow}


def _write(tmp_path, name: str, text: str):
    path = tmp_path / "mlruns" / "0" / "run" / "metrics" / name if name == "reward" else tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path, (tmp_path / "mlruns" / "0" / "run" if name == "reward" else path)


@pytest.mark.parametrize("name", FORMATS)
def test_every_cut_inside_the_last_line_reads_the_rows_before_it(tmp_path, name):
    whole = FORMATS[name]()
    last = whole.rstrip("\n").rsplit("\n", 1)[1]
    path, target = _write(tmp_path, name, whole)
    np.testing.assert_array_equal(load_log(target).steps, list(STEPS))
    checked = 0
    for keep in range(1, len(last)):
        text = whole[:len(whole) - 1 - len(last) + keep]           # the last line cut after `keep` characters
        path.write_text(text)
        log = load_log(target)
        if log.steps[-1] == 40:                                    # a cut that leaves a whole record: read as is
            assert name == "log.csv" and text.endswith(",0.748"[:len(text) - text.rfind(",")]), text
            continue
        np.testing.assert_array_equal(log.steps, list(STEPS)[:-1])
        assert log.reward[-1] == pytest.approx(_reward(39))
        cut_notes = [n for n in log.read_notes if "cut short" in n]
        if name == "verl.log" and ":" not in text.rsplit("\n", 1)[1]:
            assert not cut_notes                     # 'ste' carries nothing: ignored as any other console line
            continue
        line = 41 if name == "log.csv" else 40                    # after the CSV's header
        assert len(cut_notes) == 1 and f"its last line, line {line} " in cut_notes[0], log.read_notes
        checked += 1
    assert checked >= len(last) - 6


def test_a_csv_cut_inside_its_reward_no_longer_reads_a_cut_number(tmp_path):
    """Before: '40,0.' (of '40,0.748,0.1') read a reward of 0 at the last step, where a collapse is decided. A row cut
    inside its last field cannot be told from a whole one (W&B's CSV exports end without a line end) and is read."""
    p = tmp_path / "log.csv"
    p.write_text("step,reward,loss\n" + "".join(f"{s},{_reward(s)},0.1\n" for s in STEPS)[:-len("748,0.1\n")])
    log = load_log(p)
    assert log.steps[-1] == 39 and log.reward[-1] == pytest.approx(_reward(39))
    p.write_text(_csv()[:-len("748\n")])                          # the reward last: '40,0.1,0.' has every field
    log = load_log(p)
    assert log.steps[-1] == 40 and log.reward[-1] == 0.0 and not any("cut short" in n for n in log.read_notes)


def test_a_whole_last_line_without_a_line_end_is_read(tmp_path):
    """A writer that leaves out the final line end (W&B's CSV export) loses nothing; a verl console line is printed
    with its line end, so an unterminated one is read as cut (the test above)."""
    for name in ("log.jsonl", "log.csv"):
        p = tmp_path / name
        p.write_text(FORMATS[name]().rstrip("\n"))
        log = load_log(p)
        assert log.steps[-1] == 40 and not any("cut short" in n for n in log.read_notes)


def test_a_broken_line_before_the_last_is_still_refused(tmp_path):
    lines = _jsonl().splitlines(keepends=True)
    lines[20] = lines[20][:15] + "\n"
    p = tmp_path / "log.jsonl"
    p.write_text("".join(lines))
    with pytest.raises(ValueError, match="line 21 is not valid JSON"):
        load_log(p)
    p.write_text("".join(lines)[:-10])                      # and a cut last line besides does not hide it
    with pytest.raises(ValueError, match="line 21 is not valid JSON"):
        load_log(p)


def test_a_verl_log_ending_in_a_progress_bar_has_no_note(tmp_path):
    p = tmp_path / "verl.log"
    p.write_text(_verl() + "Training Progress:  40%|████      | 40/100 [01:10<01:45")
    log = load_log(p)
    assert log.steps[-1] == 40 and not any("cut short" in n for n in log.read_notes)


def test_fit_on_a_cut_log_reports_the_run_and_says_what_it_left_out(tmp_path, capsys):
    p = tmp_path / "log.jsonl"
    p.write_text(_jsonl()[:-9])
    assert main(["fit", str(p), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    notes = json.dumps(report)
    assert "log.jsonl: its last line, line 40" in notes and "cut short" in notes
