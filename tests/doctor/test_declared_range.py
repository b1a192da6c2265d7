"""Rewards outside a declared range (``--reward-range``, ``reward_bounds=``, ``RunDoctor(reward_bounds=…)``): a few
are read as missing, more drop the range; ``fit`` and the live doctor read them alike (:mod:`.declared_range`)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_dynamics.doctor import declared_range as dr
from rlvr_dynamics.doctor.live import RunDoctor
from rlvr_dynamics.doctor.pipeline import fit_run
from rlvr_dynamics.runs.logs import RunLog


def _rising(n: int = 200, seed: int = 1, m: int = 8) -> np.ndarray:
    """A healthy one-prompt × m success rate rising from 0.1 to 0.8."""
    rng = np.random.default_rng(seed)
    p = 0.1 + 0.7 * (1 - np.exp(-np.arange(1, n + 1) / 50))
    return rng.binomial(m, p) / m


def _log(reward, name="r") -> RunLog:
    reward = np.asarray(reward, dtype=float)
    return RunLog(name, np.arange(1, reward.size + 1), {"reward": reward}, "reward")


def _live(log: RunLog, bounds, stop: bool = False) -> RunDoctor:
    doc = RunDoctor(every=10 ** 9, reward_bounds=bounds, reward_column="reward", stop_on_instability=stop)
    for s, r in zip(log.steps, log.reward):
        doc.update(int(s), {"reward": float(r)})
    return doc


def test_a_glitch_outside_the_declared_range_is_read_as_missing():
    """One reward of 50 in a declared 0–1 success rate: read without the range it turned the rising run into
    ``noise only`` with its forecast dragged up; now that one row is missing and the report equals the report of the log
    without it (status, forecast, interval), with a read note naming it; the live doctor reads the same."""
    y = _rising()
    glitch = y.copy()
    glitch[120] = 50.0
    clean = RunLog("r", np.delete(np.arange(1, 201), 120), {"reward": np.delete(y, 120)}, "reward")
    got = fit_run(_log(glitch), forecast_steps=[220], p1_laws=False, reward_bounds=(0, 1))
    want = fit_run(clean, forecast_steps=[220], p1_laws=False, reward_bounds=(0, 1))
    assert got["status"] == want["status"] and got["status"]["state"] != "noise only"
    assert got["forecast"] == want["forecast"] and got["forecast_interval"] == want["forecast_interval"]
    assert got["n_points"] == 199 and got["reward_bounds"] == (0.0, 1.0)
    assert got["read_notes"] == ["1 reward outside the declared reward range 0 to 1 (50 at step 121), read as "
                                 "missing: a reward the declared range cannot hold (a logging glitch?)"]
    assert "read_notes" not in want                     # nothing outside: the report is as before
    undeclared = fit_run(_log(glitch), forecast_steps=[220], p1_laws=False)
    assert undeclared["status"]["state"] == "noise only" and undeclared["forecast"][220] > got["forecast"][220] + 0.1
    doc = _live(_log(glitch), (0, 1))
    assert doc.status.to_dict() == got["status"] and doc._bounds == (0.0, 1.0)


def test_more_rewards_outside_than_a_glitch_drop_the_range():
    """A percentage declared as 0 1: the range does not fit the column; the run reads as without a declared range
    (status and forecast equal), with a note that says so; the live doctor drops it too."""
    pct = _rising() * 100
    got = fit_run(_log(pct), forecast_steps=[220], p1_laws=False, reward_bounds=(0, 1))
    want = fit_run(_log(pct), forecast_steps=[220], p1_laws=False)
    assert got["status"] == want["status"] and got["forecast"] == want["forecast"]
    assert got["reward_bounds"] is None and got["n_points"] == 200
    (note,) = got["read_notes"]
    assert note.startswith(f"{int((pct > 1).sum())} of 200 rewards lie outside the declared reward range 0 to 1 (")
    assert "the range does not fit this column and is not used" in note and "a percentage 0 100" in note
    doc = _live(_log(pct), (0, 1))
    assert doc._bounds is None and doc.status.to_dict() == want["status"]


def test_the_glitch_allowance_is_one_or_one_percent_and_float32_rounding_is_inside():
    """300 rewards: up to 3 outside (1 %) are read as missing, a 4th drops the range; 20 rewards: 1 allowed. A 1
    stored as float32 and read back (1 + 6e-8 away at most) lies inside."""
    y = _rising(300)
    for k, kept in ((3, True), (4, False)):
        g = y.copy()
        g[[50, 100, 150, 200][:k]] = 2.0
        log, bounds = dr.read_with_declared_range(_log(g), (0.0, 1.0))
        assert (bounds == (0.0, 1.0)) is kept
        assert int(np.isnan(log.reward).sum()) == (k if kept else 0)
    short = _rising(20)
    short[[5, 10]] = -1.0
    assert dr.read_with_declared_range(_log(short), (0.0, 1.0))[1] is None
    short[10] = 0.5
    assert dr.read_with_declared_range(_log(short), (0.0, 1.0))[1] == (0.0, 1.0)
    f32 = np.float64(np.float32(1.0 + 5e-8))
    assert dr.outside_declared_range(np.array([f32, 1.0 + 2e-6, -2e-6, 1.0 + 5e-7]), (0.0, 1.0)).tolist() == [1, 2]
    log = _log(y)
    assert dr.read_with_declared_range(log, (0.0, 1.0)) == (log, (0.0, 1.0))       # nothing outside: the same log
    assert dr.read_with_declared_range(log, None) == (log, None)


def test_a_reward_that_outgrows_a_wrong_declared_range_is_never_stopped_as_diverged():
    """A reward of two terms (0–2) rising past a declared 1: reading every reward above 1 as missing would leave the
    trailing rows without a finite reward, as a diverged run logs them. The range is dropped instead: live, with the
    stop rule on, the run is never stopped and ends with the status ``fit`` gives it without a declared range."""
    rng = np.random.default_rng(3)
    t = np.arange(1, 301)
    y = np.clip(0.2 + 1.5 * (1 - np.exp(-t / 60)) + rng.normal(0, 0.08, t.size), 0, 2)
    loss = 0.1 + rng.normal(0, 0.01, t.size)
    log = RunLog("two-terms", t, {"reward": y, "loss": loss}, "reward")
    doc = RunDoctor(every=25, reward_bounds=(0, 1), reward_column="reward", stop_on_instability=True)
    states = set()
    for i, s in enumerate(t):
        doc.update(int(s), {"reward": float(y[i]), "loss": float(loss[i])})
        states.add(doc.status.state)
    assert not doc.should_stop and "diverged" not in states and doc._bounds is None
    want = fit_run(log, forecast_steps=[330], p1_laws=False)
    assert doc.status.to_dict() == want["status"]
    assert fit_run(log, forecast_steps=[330], p1_laws=False, reward_bounds=(0, 1))["status"] == want["status"]


def test_fit_names_the_glitch_with_and_without_the_flag(tmp_path, capsys):
    """The CLI: with ``--reward-range 0 1`` the glitch is a read note and the JSON counts 199 points; without it the
    no-bounds note names the one reward outside [0, 1] and the flag that reads it as missing."""
    from rlvr_dynamics.cli import main

    y = _rising()
    y[120] = 50.0
    path = tmp_path / "glitch.csv"
    path.write_text("step,reward\n" + "".join(f"{i + 1},{v}\n" for i, v in enumerate(y)))
    assert main(["fit", str(path), "--reward-range", "0", "1", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["n_points"] == 199 and any("(50 at step 121), read as missing" in n for n in js["read_notes"])
    assert main(["fit", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("no reward bounds known: every reward lies in [0, 1] but 50 at step 121; if the reward is a success rate, "
            "--reward-range 0 1 reads that one as missing") in " ".join(out.split())


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1.0, 1.0)])
def test_a_declared_range_every_reward_keeps_reads_as_before(bounds):
    """Nothing outside: the log object itself is read, no read note is added, the range is kept."""
    y = _rising() if bounds[0] == 0 else 2 * _rising() - 1
    got = fit_run(_log(y), forecast_steps=[220], p1_laws=False, reward_bounds=bounds)
    assert "read_notes" not in got and got["reward_bounds"] == bounds


@pytest.mark.parametrize("bounds", [(0, float("inf")), (1, 0), (float("nan"), 1), "0,1", (0, 1, 2)])
def test_a_bad_live_range_is_refused_when_the_doctor_is_made(bounds):
    """A range ``fit`` would refuse is refused by ``RunDoctor(...)`` itself, before training starts: (0, inf) was
    accepted there and raised at the first report, in the middle of a run."""
    with pytest.raises(ValueError, match="reward_bounds must be"):
        RunDoctor(reward_bounds=bounds)
    assert RunDoctor(reward_bounds=[0, 1]).reward_bounds == (0.0, 1.0)
