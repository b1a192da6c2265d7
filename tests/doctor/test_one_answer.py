"""Issue 35 item 4: no renderer contradicts the status: text, JSON, HTML and the figure's data tell one answer."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rlvr_dynamics.doctor import render as hr
from rlvr_dynamics.doctor.pipeline import NOT_READ, fit_run
from rlvr_dynamics.doctor.render.text import format_report
from rlvr_dynamics.runs.logs import RunLog


def _runs():
    rng = np.random.default_rng(4)
    t = np.arange(160)
    rise = 0.8 - 0.5 * np.exp(-t / 30) + rng.normal(0, 0.02, t.size)
    collapsed = rise.copy()
    collapsed[100:] = 0.05 + rng.normal(0, 0.01, 60).clip(-0.04)
    nan_end = np.r_[rise[:150], [np.nan] * 10]
    zero = np.zeros(160)
    return {"plateaued": (rise, {}), "collapsed": (collapsed, {}),
            "diverged": (nan_end, {"loss": np.r_[np.full(150, 0.1), [np.nan] * 10], "learning_rate": np.ones(160)}),
            "diverged-at-floor": (zero, {"frac_reward_zero_std": np.ones(160), "completions/clipped_ratio": np.ones(160),
                                        "entropy": np.r_[1.0, np.full(159, 0.01)]})}


@pytest.mark.parametrize("name", list(_runs()))
def test_every_renderer_tells_the_status_and_the_same_forecast(name, tmp_path):
    reward, extra = _runs()[name]
    steps = np.arange(1, reward.size + 1)
    log = RunLog(name, steps, {"reward": reward, **extra}, "reward")
    report = fit_run(log, forecast_steps=[200], p1_laws=False)
    st = report["status"]
    assert st["state"] == name.split("-")[0], st
    text = format_report(report)
    assert text.splitlines()[0].startswith(f"status: {st['state'].upper()}")
    if st["failure"]:
        assert f"what to do: {st['action']}" in text
    js = json.loads(json.dumps(hr.to_jsonable(report) if hasattr(hr, "to_jsonable") else report, default=str))
    assert js["status"]["state"] == st["state"]
    if st["state"] in NOT_READ:
        assert report["dynamics"]["verdict"] == "not read" and report["plateau"]["value"] is None
        assert "plateau R∞" not in text
    fig = hr.report_figure(log, report)
    (value, (low, high)) = report["forecast"][200], report["forecast_interval"][200]
    assert fig.rlvr_forecast == {200: (value, low, high)}
    assert low <= value <= high
    page = hr.render_html(log, report, b"")
    assert f"status: {st['state'].upper()}" in page


def test_the_status_and_the_report_share_one_pass_of_the_detectors(monkeypatch):
    """``fit`` runs each detector once: the status's degeneracy and hacking detections are the report's."""
    from rlvr_dynamics.doctor import detectors as dg
    from rlvr_dynamics.doctor.detectors import advantage_degeneracy as ad, reward_hacking as rh

    calls = {"advantage_degeneracy": 0, "reward_hacking": 0}

    def counting(name, fn):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapped

    for module in (ad, dg):
        monkeypatch.setattr(module, "detect_advantage_degeneracy",
                            counting("advantage_degeneracy", ad.detect_advantage_degeneracy))
    for module in (rh, dg):
        monkeypatch.setattr(module, "detect_reward_hacking", counting("reward_hacking", rh.detect_reward_hacking))
    steps = np.arange(1, 121)
    rng = np.random.default_rng(3)
    log = RunLog("x", steps, {"reward": np.clip(0.2 + 0.5 * (1 - np.exp(-steps / 30)) + rng.normal(0, 0.05, 120), 0, 1),
                              "frac_reward_zero_std": np.full(120, 0.2), "eval_reward": np.full(120, 0.4)}, "reward")
    report = fit_run(log, diagnostics=True)
    assert calls == {"advantage_degeneracy": 1, "reward_hacking": 1}
    assert set(report["diagnostics"]) == set(dg.DETECTORS)


def _every_state() -> dict[str, tuple[np.ndarray, dict, tuple | None]]:
    """One log per state of the status vocabulary (reward, other columns, declared bounds)."""
    rng = np.random.default_rng(11)
    n = 200
    t = np.arange(n)
    rise = 0.2 + 0.6 * (1 - np.exp(-t / 30))
    out = {name: (reward, extra, None) for name, (reward, extra) in _runs().items()}
    out["too short"] = (np.array([0.1, 0.2, 0.3]), {}, None)
    # a fall to near the floor at the very last point, from a clean level: the next point confirms it (k = 2)
    out["collapsing"] = (np.r_[0.6 + 0.01 * np.resize([1, -1], 40), 0.35, 0.12], {}, None)
    hard = 0.03 + rng.normal(0, 0.01, n)
    out["degenerate groups"] = (hard, {"frac_reward_zero_std": np.where(t > 150, 0.95, 0.2),
                                       "entropy": np.full(n, 0.6)}, (0.0, 1.0))
    ev = np.full(n, np.nan)
    ev[::10] = np.where(t[::10] < 120, 0.6, 0.6 - 0.4 * (t[::10] - 120) / 80)
    out["hacking suspected"] = (rise + rng.normal(0, 0.01, n), {"eval_reward": ev}, None)
    crash = np.clip(0.2 + 0.6 * (1 - np.exp(-np.arange(240) / 30)) + rng.normal(0, 0.02, 240), 0, 1)
    crash[150:165] = 0.1 + rng.normal(0, 0.02, 15)
    out["unstable"] = (crash, {}, (0.0, 1.0))
    out["noise only"] = (0.5 + rng.normal(0, 0.1, n), {}, (0.0, 1.0))
    out["rising"] = (0.1 + 0.004 * t + rng.normal(0, 0.01, n), {}, None)
    # a rise to 0.7, then a steady fall to 0.45 over the last half: significant, but half its gain is still there
    out["falling"] = (np.where(t < 100, rise, rise[100] - 0.25 * (t - 100) / 100) + rng.normal(0, 0.01, n), {},
                      (0.0, 1.0))
    return out


def test_every_state_is_walked():
    from rlvr_dynamics.doctor.status import STATES

    assert {name.split("-")[0] for name in _every_state()} == set(STATES)


@pytest.mark.parametrize("name", list(_every_state()))
def test_every_state_reads_the_same_in_text_json_html_figure_and_live_fields(name):
    """Each state of the vocabulary through every renderer: the text's first line, the JSON, the HTML page and the
    live doctor's ``dynamics/status`` code name the same state; a failure state carries its action everywhere; a
    state the reading skips has no plateau and no law reading; the figure draws the text's forecast, and a run too
    short to read has none anywhere."""
    from rlvr_dynamics.doctor.live import RunDoctor
    from rlvr_dynamics.doctor.status import ACTIONS, NEVER_LEFT_FLOOR_ACTION, STATES

    reward, extra, bounds = _every_state()[name]
    steps = np.arange(1, reward.size + 1)
    log = RunLog(name, steps, {"reward": reward, **extra}, "reward")
    state = name.split("-")[0]
    report = fit_run(log, forecast_steps=[reward.size + 20], p1_laws=False,
                     reward_bounds=bounds if bounds is not None else "auto")
    st = report["status"]
    assert st["state"] == state, st
    text = format_report(report)
    assert text.splitlines()[0].startswith(f"status: {state.upper()}")
    action = NEVER_LEFT_FLOOR_ACTION if st["numbers"].get("never_left_floor") else ACTIONS.get(state)
    assert (f"what to do: {action}" in text) == (state in ACTIONS)
    js = json.loads(json.dumps(hr.to_jsonable(report) if hasattr(hr, "to_jsonable") else report, default=str))
    assert js["status"]["state"] == state and js["status"]["action"] == action
    if state in NOT_READ:
        assert report["dynamics"]["verdict"] == "not read" and "plateau R∞" not in text
    page = hr.render_html(log, report, b"")
    assert f"status: {state.upper()}" in page
    h = reward.size + 20
    fig = hr.report_figure(log, report)
    if state == "too short":        # no forecast and no interval from 3 rewards: none in the text, JSON or figure
        assert report["forecast"] == {} and js["forecast"] == {} and report["forecast_law"].startswith("none: ")
        assert "  forecast: none — 3 logged reward(s)" in text and "forecast at step" not in text + page
        assert fig.rlvr_forecast == {} and not [a for ax in fig.axes for a in ax.get_legend_handles_labels()[1]
                                                if "forecast" in a]
    else:
        value, (low, high) = report["forecast"][h], report["forecast_interval"][h]
        assert fig.rlvr_forecast == {h: (value, low, high)}
    doc = RunDoctor(every=10 ** 9, reward_bounds=bounds, reward_column="reward")
    fields = {}
    for i, s in enumerate(steps):
        fields = doc.update(int(s), {k: float(v[i]) for k, v in log.series.items()}) or fields
    assert doc.status is not None and doc.status.state == state
    assert fields["dynamics/status"] == STATES.index(state)
    assert fields["dynamics/status_failure"] == float(state in ACTIONS)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_a_plateaued_run_has_a_plateau_line_whatever_the_reading():
    """A one-prompt shaped reward whose rising share of right answers the reading takes for a growing oscillation:
    the status is plateaued, so the plateau line gives the level of the status' last points and says why no law's
    R∞ is read; it never says 'no plateau' under a PLATEAUED status."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_collapse import _spiky_one_prompt

    t, y = _spiky_one_prompt(0)
    log = RunLog("spiky", t[:116], {"reward": y[:116]}, "reward")
    report = fit_run(log, p1_laws=False)
    text = format_report(report)
    if report["status"]["state"] == "plateaued":
        assert report["plateau"]["value"] is not None and report["plateau"]["from"] == "status"
        assert "no plateau" not in text
    for seed in range(6):
        t, y = _spiky_one_prompt(seed)
        for n in (80, 120, 160, 250):
            rep = fit_run(RunLog("s", t[:n], {"reward": y[:n]}, "reward"), p1_laws=False)
            if rep["status"]["state"] == "plateaued":
                assert rep["plateau"]["value"] is not None, rep["plateau"]


def test_a_falling_reward_is_never_plateaued_and_its_forecast_follows_the_fall():
    """A significant fall that has not lost half the gain read "PLATEAUED — no significant trend (slope t ≤ -100)";
    its forecast came from a rise law and lay above the last rewards. Now: ``falling``, no law read, and the forecast
    continues the recent line, inside the bounds and below the recent highest reward. A fall with −3 ≤ t < −2 stays
    ``plateaued`` and says it is short of the bar."""
    from rlvr_dynamics.doctor import status

    reward, _, bounds = _every_state()["falling"]
    steps = np.arange(1, reward.size + 1)
    report = fit_run(RunLog("f", steps, {"reward": reward}, "reward"), forecast_steps=[220, 10_000], p1_laws=False,
                     reward_bounds=bounds)
    st = report["status"]
    assert st["state"] == "falling" and not st["failure"] and st["numbers"]["slope_t"] < -status.FALLING_T
    assert "no significant trend" not in st["evidence"]
    last = float(np.mean(reward[-10:]))
    assert report["forecast"][220] < last and report["forecast_law"] == "recent trend, continued (falling)"
    low, high = report["forecast_interval"][10_000]
    assert report["forecast"][10_000] == 0.0 and low == 0.0 and high >= 0.0      # the line ends at the floor
    exact = np.r_[np.linspace(0.2, 0.5, 60), np.linspace(0.5, 0.3, 50)]           # a noise-free line down
    st = fit_run(RunLog("x", np.arange(1, 111), {"reward": exact}, "reward"), p1_laws=False)["status"]
    assert st["state"] == "falling" and "slope t ≤ -100" in st["evidence"]
    # the sentence names the line's ends (the last 28 points of the exact line: 0.5 − 0.2·22/49 = 0.41 → 0.3) and the
    # share of the gain (0.5 above the floor 0) that the fall is
    a, b = st["numbers"]["line_from"], st["numbers"]["line_to"]
    assert a - b == pytest.approx(st["numbers"]["drop"]) and b == pytest.approx(0.3)
    assert f"its line goes from {a:.3g} to {b:.3g}, a fall of {a - b:.3g}, 22 % of its gain" in st["evidence"]
    wiggle = 0.6 + 0.03 * np.resize([1.0, -1.0, 0.5, -0.5, 0.0], 120)
    for slope in np.linspace(0.0, 0.002, 201):             # the gentlest fall whose recent t lies in (−3, −2)
        y = wiggle - slope * np.maximum(np.arange(120) - 60, 0)
        if -status.FALLING_T < status.recent_slope_t(y) < -status.RISING_T:
            break
    st = fit_run(RunLog("p", np.arange(1, 121), {"reward": y}, "reward"), p1_laws=False)["status"]
    assert st["state"] == "plateaued" and "short of the t < −3 a fall needs" in st["evidence"]
    # a rise 1 → 4.39, then a plateau that sinks by 0.0025 over its last 50 points (t ≪ −3, under 0.1 % of the gain)
    flat = np.r_[1 + 3.39 * (1 - np.exp(-np.arange(100) / 15)), 4.39 - 0.00005 * np.arange(100)]
    flat = flat + 0.0002 * np.resize([1.0, -1.0], 200)
    st = fit_run(RunLog("s", np.arange(1, 201), {"reward": flat}, "reward"), p1_laws=False)["status"]
    assert st["state"] == "plateaued" and "under the 10% of its gain a fall needs" in st["evidence"]
    assert st["evidence"].startswith("no material trend")           # not "no significant trend" at t ≪ −3


def test_a_plateaued_run_s_plateau_agrees_with_the_level_it_sits_at():
    """Under a PLATEAUED status the law's R∞ is shown only within PLATEAU_AGREE_Z standard errors of the mean of the
    status' last points; a law that puts the plateau below where the run has sat for its last quarter (a verl run:
    0.977 ± 0.002 under a level of 0.987) gives way to that level, and the note says by how much it missed."""
    from types import SimpleNamespace

    from rlvr_dynamics.doctor import pipeline as P

    rng = np.random.default_rng(0)
    reward = 0.987 + 0.003 * rng.standard_normal(100)
    level, se, m = P._status_level(reward)
    assert m == 25 and level == pytest.approx(np.mean(reward[-25:])) and se == pytest.approx(
        np.std(reward[-25:], ddof=1) / 5)
    plateaued, rising = SimpleNamespace(state="plateaued"), SimpleNamespace(state="rising")
    law = {"value": 0.977, "sd": 0.002, "law": "overdamped", "status": "reliable", "note": None}
    shown = P._agree_with_status(law, plateaued, reward)
    z = (0.977 - level) / np.hypot(se, 0.002)
    assert z < -P.PLATEAU_AGREE_Z
    assert shown["from"] == "status" and shown["value"] == level and shown["sd"] == se
    assert f"lies {abs(z):.1f} s.e. below it" in shown["note"] and "0.977 ± 0.002" in shown["note"]
    near = {**law, "value": level + 0.5 * np.hypot(se, 0.002)}
    assert P._agree_with_status(near, plateaued, reward) is near          # within the bound: the law's R∞
    assert P._agree_with_status(law, rising, reward) is law               # a rising run heads to the law's R∞


def test_a_real_plateau_below_its_level_reads_the_level_in_text_and_json():
    """The public verl log whose overdamped law put R∞ 4.4 s.e. below its last quarter: text and JSON both give the
    level of the status' last points."""
    from rlvr_dynamics.paths import SHARED_DIR
    from rlvr_dynamics.runs.logs import load_log

    path = SHARED_DIR / "grpo_logs" / "verl_asyncrew_q7b_fsdp_off_ppl.csv"
    if not path.exists():
        pytest.skip("../shared/grpo_logs is not beside this clone")
    report = fit_run(load_log(path), p1_laws=False)
    assert report["status"]["state"] == "plateaued" and report["plateau"]["from"] == "status"
    text = format_report(report)
    line = next(x for x in text.splitlines() if "plateau R∞" in x)
    assert f"{report['plateau']['value']:.5g}" in line and "s.e. below it" in line
    assert json.loads(json.dumps(report, default=str))["plateau"]["value"] == report["plateau"]["value"]


def test_a_noise_only_curve_reads_no_law_in_the_text_the_page_and_the_live_fields():
    """Before: `fit --details` said "no law can be read from this curve", then "law read: oscillatory (reliable);
    ζ=0.07" with the law starred, and the live doctor logged that ζ (a one-prompt SmolLM2 run under a cosine
    schedule, noise ceiling ≤ 0). The text now shows the statuses as the HTML page does, and the live fields leave the
    law and its ζ out, as they leave out the stability margin."""
    from rlvr_dynamics.doctor.live import RunDoctor

    rng = np.random.default_rng(7)
    n = 300
    reward = (rng.random((n, 8)) < 0.2).mean(axis=1)                 # one prompt × 8 at 20 %: noise only
    steps = np.arange(1, n + 1)
    log = RunLog("noisy", steps, {"reward": reward}, "reward")
    report = fit_run(log, p1_laws=False)
    assert report["dynamics"]["verdict"] == "noise only"
    text = format_report(report)
    laws = [ln for ln in text.splitlines() if ln.startswith("   ") and "R²=" in ln and "ceiling" in ln]
    assert laws and not any(ln.startswith("   *") for ln in laws), laws
    assert "law read: none (not read: noise only)" in text and "ζ=" not in text.split("  reading:")[1].split("\n")[1]
    assert "but not the law read" not in text
    doctor = RunDoctor(every=n)
    out = {}
    for s, r in zip(steps, reward):
        out = doctor.update(int(s), {"reward": float(r)}) or out
    assert out["dynamics/verdict"] == 3.0                     # noise only
    assert np.isnan(out["dynamics/damping_ratio"]) and out["dynamics/damping_ratio_is_nan"] == 1.0
    assert np.isnan(out["dynamics/law"]) and out["dynamics/reliable"] == 0.0
    assert np.isfinite(out["dynamics/r2"])


def test_a_noise_only_curve_reads_no_law_in_the_json_either():
    """The JSON of ``fit --json`` carried the raw fit statuses: on a noise-only curve its reading said ``law
    oscillatory``, ``regime growing``, ``status reliable`` with a negative ζ, its plateau named the law, and the
    forecast was labelled with the best-fitting law although it is a weighted mean of candidates. It now shows what
    the text and the page show."""
    rng = np.random.default_rng(7)
    n = 300
    reward = (rng.random((n, 8)) < 0.2).mean(axis=1)
    log = RunLog("noisy", np.arange(1, n + 1), {"reward": reward}, "reward")
    report = fit_run(log, forecast_steps=[330])
    assert report["dynamics"]["verdict"] == "noise only"
    js = json.loads(hr.to_json(report))
    reading = js["response"]["reading"]
    assert reading["law"] == "none" and reading["regime"] is None and reading["damping_ratio"] is None
    assert {fit["status"] for fit in js["response"]["laws"].values()} == {"not read: noise only"}
    assert all(fit["status"] != "reliable" for fit in js["fits"].values())
    assert js["plateau"]["value"] is None and js["plateau"]["law"] is None
    assert js.get("oscillator") is None and "as an oscillator" not in format_report(report)
    assert js["forecast_law"].startswith("weighted candidates (largest weight: ")
    assert js["status"]["state"] == report["status"]["state"]
