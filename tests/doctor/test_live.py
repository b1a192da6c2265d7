"""The live RunDoctor agrees with the full-log diagnosis: same events at the same steps, each reported at the first
report whose prefix contains it; its first report comes as soon as the detectors can fire."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rlvr_dynamics.doctor import detectors as dg
from rlvr_dynamics.doctor.live import RunDoctor
from rlvr_dynamics.runs.logs import RunLog

N = 240


def _metrics(log_every: int = 1):
    rng = np.random.default_rng(11)
    s = np.arange(1, N + 1)
    r = np.where(s < 130, 0.2 + 0.5 * (1 - np.exp(-s / 30)), 0.7 * np.exp(-(s - 130) / 15))
    series = {"reward": r + rng.normal(0, 0.05, N),
              "entropy": 0.6 * (1 + (s > 120) * (s - 120) / 20),
              "grad_norm": np.exp(rng.normal(0, 0.1, N)) * (1 + 5 * (s > 120)),
              "frac_reward_zero_std": np.where(s > 170, 0.95, 0.2),
              "reward_std": np.where(s < 120, 0.4, 0.4 * np.exp(-(s - 120) / 20))}
    keep = s % log_every == 0
    return s[keep], {k: v[keep] for k, v in series.items()}


@pytest.mark.parametrize("every,log_every", [(1, 2), (7, 1), (25, 1)])
def test_live_events_equal_the_full_log_events(every, log_every):
    """A report at every row (every=1) costs one full diagnosis per row, O(rows²): on the log logged every 2 steps
    (120 rows: 8.5 s alone on a 2-core AVX2 CPU, 20 s at 240 rows; 27 s beside another test worker)."""
    steps, series = _metrics(log_every)
    doctor = RunDoctor(every=every, reward_bounds=(0.0, 1.0))
    for i, st in enumerate(steps):
        doctor.update(int(st), {k: v[i] for k, v in series.items()})
    doctor.report()       # the last partial stretch
    full = dg.diagnose(RunLog("f", steps, series, "reward"), reward_bounds=(0.0, 1.0), reading=False)
    assert full["collapse_warning"].fired and full["policy_concentration"].available
    for name in dg.DETECTORS:
        live = [e["step"] for e in doctor.events[name] if not str(e.get("reason", "")).startswith(("(c)", "(d)"))]
        assert live == [e["step"] for e in full[name].events], name
        for e in doctor.events[name]:
            assert e["step"] <= e["reported_at"] <= e["step"] + every - 1     # found by the next report
    if full["collapse_warning"].fired:
        assert doctor.fired["collapse_warning"] == full["collapse_warning"].step


def test_status_from_the_first_reward_and_the_first_report_at_four_whatever_the_log_interval():
    """TRL logs every 10 steps by default: the doctor counts logged rows, so its status and first report come at
    the 4th logged reward (step 40), and a collapse is reported at the logged row where it happens."""
    steps, series = _metrics(log_every=10)
    doctor = RunDoctor(every=1)
    outs = [doctor.update(int(st), {k: v[i] for k, v in series.items()}) for i, st in enumerate(steps)]
    assert outs[0] == {"dynamics/status": 0.0, "dynamics/status_failure": 0.0, "dynamics/warning": 0.0,
                       "dynamics/should_stop": 0.0}
    first = next(int(st) for st, o in zip(steps, outs) if "dynamics/noise_ceiling" in o)
    assert first == 40 and outs[3]["dynamics/status"] != 0.0          # no longer "too short"
    from rlvr_dynamics.doctor.status import STATES, decide_status

    collapsed = [int(st) for st, o in zip(steps, outs) if o["dynamics/status"] == STATES.index("collapsed")]
    full = decide_status(RunLog("f", steps, series, "reward"))
    assert collapsed and full.state == "collapsed" and collapsed[0] - full.step <= 10    # one logged row


def test_flags_are_set_in_the_report_that_finds_the_event():
    steps, series = _metrics()
    doctor = RunDoctor(every=10, reward_bounds=(0.0, 1.0))
    flagged = []
    for i, st in enumerate(steps):
        out = doctor.update(int(st), {k: v[i] for k, v in series.items()})
        if out.get("dynamics/flag/collapse_warning") == 1.0:
            flagged.append(int(st))
        assert all(abs(v) < 1e8 for v in out.values() if math.isfinite(v))    # NaN stays NaN: no ±1e9 sentinel
    reported = sorted({e["reported_at"] for e in doctor.events["collapse_warning"]})
    assert flagged == reported and flagged


def test_invalid_arguments_name_the_argument():
    with pytest.raises(ValueError, match="min_points"):
        RunDoctor(min_points=1)
    with pytest.raises(ValueError, match="reward_bounds"):
        RunDoctor(reward_bounds=(1.0, 0.0))


def _collapsing(n=240, seed=3):
    rng = np.random.default_rng(seed)
    s = np.arange(1, n + 1)
    r = np.where(s < 150, 0.2 + 0.5 * (1 - np.exp(-s / 30)), 0.7 * np.exp(-(s - 150) / 10))
    grad = np.exp(rng.normal(0, 0.1, n)) * np.where(s < 140, 1.0, np.exp((s - 140) / 6))
    return s, {"reward": r + rng.normal(0, 0.03, n), "grad_norm": grad}


def test_stop_fires_at_the_step_of_the_rule_with_a_one_line_reason():
    s, series = _collapsing()
    doctor = RunDoctor(every=50, stop_on_instability=True, reward_bounds=(0.0, 1.0))
    stopped_at = None
    for i, st in enumerate(s):
        doctor.update(int(st), {k: v[i] for k, v in series.items()})
        if doctor.should_stop:
            stopped_at = int(st)
            break
    assert stopped_at is not None and stopped_at % 50 != 0          # not at a report: at the rule's own step
    why = doctor.stop_reason
    assert set(why) == {"rule", "step", "numbers", "text"} and why["step"] == stopped_at
    assert "\n" not in why["text"] and str(stopped_at) in why["text"]
    n = why["numbers"]
    if why["rule"] == "collapse":        # the reward lost half its gain: stopped at most one logged row after it
        assert 150 < n["halving_step"] <= stopped_at <= n["halving_step"] + 1 and "collapsed" in why["text"]
    else:
        assert abs(n["instability_step"] - n["warning_step"]) <= 20 and max(n["instability_step"],
                                                                             n["warning_step"]) <= stopped_at
    # without stop_on_instability: no check, no stop
    quiet = RunDoctor(every=50, reward_bounds=(0.0, 1.0))
    for i, st in enumerate(s):
        quiet.update(int(st), {k: v[i] for k, v in series.items()})
    assert not quiet.should_stop and quiet.stop_reason is None


def test_healthy_noisy_run_with_a_dip_is_not_stopped():
    rng = np.random.default_rng(4)
    s = np.arange(1, 301)
    level = 0.2 + 0.5 * (1 - np.exp(-s / 40)) - 0.25 * ((s > 150) & (s < 170))
    doctor = RunDoctor(every=10, stop_on_instability=True)
    for st, p in zip(s, level):
        doctor.update(int(st), {"reward": rng.binomial(8, p) / 8, "grad_norm": float(np.exp(rng.normal(0, 0.3))),
                                "entropy": 0.5 * np.exp(-st / 200)})
    assert not doctor.should_stop


def test_finish_gives_the_last_report_and_values_are_never_dropped():
    steps, series = _metrics()
    doctor = RunDoctor(every=1000, refresh_interval=1)
    for i, st in enumerate(steps[:100]):     # only the status, at every reward: no report before `every`
        assert set(doctor.update(int(st), {k: v[i] for k, v in series.items()})) == {
            "dynamics/status", "dynamics/status_failure", "dynamics/warning", "dynamics/should_stop"}
    final = doctor.finish()
    assert final and final == doctor.last_report
    for f in ("plateau", "damping_ratio", "r2", "stability_margin"):
        assert {f"dynamics/{f}", f"dynamics/{f}_is_inf", f"dynamics/{f}_is_nan"} <= set(final), f
        # a value and its markers agree: NaN exactly where _is_nan, ±inf exactly where _is_inf (never a sentinel)
        v = final[f"dynamics/{f}"]
        assert math.isnan(v) == (final[f"dynamics/{f}_is_nan"] == 1), f
        assert (math.isinf(v) and math.copysign(1, v) or 0) == final[f"dynamics/{f}_is_inf"], f
    assert all(abs(v) < 1e8 for v in final.values() if math.isfinite(v))   # no ±1e9 stand-in anywhere
    assert final["dynamics/should_stop"] == 0.0
    assert all(f"dynamics/flag/{name}" in final for name in dg.DETECTORS)


def test_nan_and_inf_are_logged_as_they_are():
    """Issue 32 item 4: trackers draw NaN as a gap; a −1e9 sentinel flattened every TensorBoard/W&B chart."""
    from rlvr_dynamics.doctor import live

    out = {}
    live._emit(out, "stability_margin", math.inf)
    live._emit(out, "damping_ratio", -math.inf)
    live._emit(out, "plateau", math.nan)
    live._emit(out, "r2", 0.5)
    live._emit(out, "noise_ceiling", None)
    assert out["dynamics/stability_margin"] == math.inf and out["dynamics/stability_margin_is_inf"] == 1
    assert out["dynamics/damping_ratio"] == -math.inf and out["dynamics/damping_ratio_is_inf"] == -1
    assert math.isnan(out["dynamics/plateau"]) and out["dynamics/plateau_is_nan"] == 1
    assert math.isnan(out["dynamics/noise_ceiling"]) and out["dynamics/noise_ceiling_is_nan"] == 1
    assert out["dynamics/r2"] == 0.5 and out["dynamics/r2_is_inf"] == 0 and out["dynamics/r2_is_nan"] == 0
    assert not hasattr(live, "NAN_SENTINEL") and not hasattr(live, "INF_SENTINEL")


def test_noise_ceiling_undefined_is_nan_not_a_sentinel():
    """A constant reward has no variance to explain: its noise ceiling is undefined and is logged as NaN."""
    doctor = RunDoctor(every=1)
    out = {}
    for st in range(1, 9):
        out = doctor.update(st, {"reward": 0.5}) or out
    assert "dynamics/noise_ceiling" in out and math.isnan(out["dynamics/noise_ceiling"])


def test_finish_after_a_report_at_the_last_row_repeats_nothing():
    """Issue 32 item 1: when the last update already brought a report (max_steps a multiple of ``every``), finish()
    returns {} — logging a second report at that step, its one-report flags back at 0, made a step logged twice
    with different values that ``rlvr-dynamics fit`` refused. Without such a report, finish() reports."""
    steps, series = _metrics()
    doctor = RunDoctor(every=10, refresh_interval=1)
    for i, st in enumerate(steps[:60]):
        out = doctor.update(int(st), {k: v[i] for k, v in series.items()})
    assert "dynamics/noise_ceiling" in out          # row 60: a report
    assert doctor.finish() == {}
    doctor.update(int(steps[60]), {k: v[60] for k, v in series.items()})
    final = doctor.finish()
    assert "dynamics/noise_ceiling" in final and final == doctor.last_report
    assert doctor.finish() == {}                    # and only once


def test_benchmark_live_measures_stops_and_agreement():
    from doctor_eval.corpus import CorpusRun
    from doctor_eval.live import benchmark_live, format_live_benchmark

    s, series = _collapsing()
    bad = CorpusRun("bad", "sim", "dev", RunLog("bad", s, series, "reward"), (0.0, 1.0), 1, "smooth", "collapse",
                    collapse_step=165)
    steps, m = _metrics()
    ok = {"reward": 0.2 + 0.5 * (1 - np.exp(-steps / 30)) + np.random.default_rng(1).normal(0, 0.03, steps.size)}
    good = CorpusRun("good", "sim", "dev", RunLog("good", steps, ok, "reward"), (0.0, 1.0), 1, "smooth", "healthy")
    res = benchmark_live([bad, good], every=25)
    assert res["healthy"] == {"runs": 1, "stopped": 0, "names": [], "rate": 0.0}
    assert res["collapse"]["stopped"] == 1 and res["collapse"]["population"] == 1
    assert res["agreement"]["equal"] == 2
    assert "healthy runs stopped" in format_live_benchmark(res)


def test_live_margin_above_one_needs_an_unstable_verdict():
    """A harmless noisy run that rises and holds: every report's stability margin is < 1 or undefined, because the
    margin comes from the law the reading reports (a growing fit without evidence never is) — the live doctor reads
    a run exactly as ``rlvr-dynamics fit`` does."""
    import numpy as np

    from rlvr_dynamics.doctor.live import VERDICT_CODES, RunDoctor

    rng = np.random.default_rng(11)
    steps = np.arange(1, 301)
    reward = np.clip(0.3 + 0.4 * (1 - np.exp(-steps / 50)) + 0.08 * rng.standard_normal(steps.size), 0, 1)
    doctor = RunDoctor(every=10, refresh_interval=1)
    for s, r in zip(steps, reward):
        out = doctor.update(int(s), {"reward": float(r)})
        if out and "dynamics/stability_margin" in out:
            m = out["dynamics/stability_margin"]
            verdict = VERDICT_CODES[int(out["dynamics/verdict"])]
            assert math.isnan(m) or m < 1 or verdict == "unstable", (s, m, verdict)


@pytest.mark.parametrize("bad", ["row without a reward", "absurd reward", "absurd gradient norm"])
def test_rows_that_fit_reads_as_missing_neither_crash_the_callback_nor_change_the_answer(tmp_path, bad):
    """A training callback must never raise from inside numpy: a row with diagnostics but no reward (the crossings
    of the row before were kept, one row short: a broadcast error), a reward of 1e300 (an overflow in the collapse
    window). The live doctor reads them as ``fit`` does, as missing, and ends with ``fit``'s status."""
    import csv
    import warnings

    from rlvr_dynamics.doctor.status import decide_status
    from rlvr_dynamics.runs.logs import load_log

    rng = np.random.default_rng(3)
    rows = []
    for s in range(1, 151):
        m = {"reward": float(rng.binomial(8, 0.7 if s < 90 else 0.02) / 8), "entropy": 0.5, "loss": 0.0,
             "grad_norm": float(rng.uniform(0.2, 1.0)), "completions/mean_length": 100.0}
        if s % 9 == 0 and bad == "row without a reward":
            m["reward"] = None
        if s == 30 and bad == "absurd reward":
            m["reward"] = 1e300
        if s % 13 == 0 and bad == "absurd gradient norm":
            m["grad_norm"] = 1e200
        rows.append((s, m))
    doc = RunDoctor(every=10, stop_on_instability=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for s, m in rows:
            doc.update(s, m)
    path = tmp_path / "log.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", *rows[0][1]])
        w.writerows([s, *("" if v is None else v for v in m.values())] for s, m in rows)
    assert doc.status.state == decide_status(load_log(path), None).state == "collapsed"


def test_stop_text_names_the_warning_signals():
    """An instability event beside a collapse *warning* (no collapse yet): the stop line names the warning's
    signals, and the reward and its peak only for a collapse event, which has them."""
    doctor = RunDoctor(every=10, stop_on_instability=True)
    for st in range(1, 41):
        doctor.update(st, {"reward": 0.5})
    doctor.events["dynamical_instability"] = [{"step": 20, "reason": "(d) reading: unstable (…)", "reported_at": 20}]
    doctor.events["collapse_warning"] = [{"step": 36, "kind": "warning", "signals": ["zero_std_share", "reward_fall"],
                                          "precursors": 1, "reported_at": 36}]
    doctor._apply_stop_rule(doctor.log())
    text = doctor.stop_reason["text"]
    assert "collapse warning (zero_std_share, reward_fall) at step 36" in text and "rule ," not in text, text
    doctor = RunDoctor(every=10, stop_on_instability=True)
    for st in range(1, 41):
        doctor.update(st, {"reward": 0.5})
    doctor.events["dynamical_instability"] = [{"step": 30, "reason": "(a) grad norm", "ratio": 7.0}]
    doctor.events["collapse_warning"] = [{"step": 35, "kind": "collapsed", "rule": "confirmed", "value": 0.1,
                                          "peak": 0.6, "precursors": 0}]
    doctor._apply_stop_rule(doctor.log())
    assert "(a) grad norm ×7 at step 30 + collapse (confirmed, reward 0.1 from peak 0.6) at step 35" in \
        doctor.stop_reason["text"]
