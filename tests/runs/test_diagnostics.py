"""P1-C13 detectors: each fires on a log built with its signature, at a step the rule predicts, and stays quiet on a
log without it; a detector whose series is missing says so."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlvr_dynamics.paths import SHARED_DIR
from rlvr_dynamics.runs import diagnostics as dg
from rlvr_dynamics.runs.logs import RunLog, load_log
from rlvr_dynamics.runs.report import fit_run, to_jsonable

SHARED_LOGS = SHARED_DIR / "grpo_logs"
N = 200
STEPS = np.arange(1, N + 1)
RNG = np.random.default_rng(0)


def _log(**series) -> RunLog:
    base = {"reward": 0.2 + 0.4 * (1 - np.exp(-STEPS / 40)) + RNG.normal(0, 0.01, N)}
    base.update(series)
    return RunLog("synthetic.csv", STEPS.copy(), {k: np.asarray(v, float) for k, v in base.items()}, "reward")


def _evals(values_at):
    """An evaluation every 10 steps (NaN between), as TRL's trainer_state gives it."""
    e = np.full(N, np.nan)
    e[::10] = values_at(STEPS[::10])
    return e


def test_hacking_fires_when_eval_stays_flat_and_not_when_it_follows():
    flat = dg.detect_reward_hacking(_log(eval_reward=_evals(lambda s: np.full(s.size, 0.2))))
    assert flat.fired and flat.detail["ratio"] < 0.5
    assert 20 <= flat.step <= 60          # once the training reward has risen by δ, two evaluations in a row
    coupled = dg.detect_reward_hacking(_log(eval_reward=_evals(lambda s: 0.2 + 0.4 * (1 - np.exp(-s / 40)))))
    assert coupled.available and not coupled.fired


def test_project_metrics_repeat_the_last_evaluation_which_counts_once():
    e = np.repeat(np.full(20, 0.2), 10)
    es = np.repeat(STEPS[::10], 10).astype(float)
    d = dg.detect_reward_hacking(_log(eval_reward=e, eval_step=es))
    assert d.fired and int(d.step) % 10 == 1   # fires on a row where a new evaluation arrived


def test_degeneracy_needs_a_sustained_fraction_and_a_not_collapsed_entropy():
    frac = np.where(STEPS > 100, 0.8, 0.2)
    d = dg.detect_advantage_degeneracy(_log(frac_reward_zero_std=frac, entropy=np.full(N, 0.6)))
    w, k = dg._window(N)
    # the smoothed fraction (mean of the last k) exceeds 0.5 once m > k/2 of them are 0.8 (strictly), i.e. at
    # step 100 + ⌊k/2⌋ + 1; it must then hold for k rows in a row
    assert d.fired and d.step == 100 + math.floor(k * 0.3 / 0.6) + 1 + k - 1
    conc = dg.detect_advantage_degeneracy(_log(frac_reward_zero_std=frac, entropy=0.6 * np.exp(-STEPS / 20)))
    assert not conc.fired   # zero-variance groups caused by a concentrated policy are the other detector's


def test_concentration_fires_on_entropy_and_spread_falling_together():
    h = 0.6 * np.exp(-STEPS / 40)
    spread = 0.6 * np.exp(-STEPS / 80)
    d = dg.detect_policy_concentration(_log(entropy=h, group_distinct_frac=spread))
    assert d.fired and d.detail["entropy_ratio"] < 0.25
    quiet = dg.detect_policy_concentration(_log(entropy=0.6 - 0.1 * STEPS / N, group_distinct_frac=np.full(N, 0.5)))
    assert not quiet.fired


def test_instability_from_grad_norm_growth_or_clipping():
    g = np.where(STEPS < 80, 1.0, np.exp((STEPS - 80) / 10)) * (1 + RNG.normal(0, 0.05, N))
    d = dg.detect_dynamical_instability(_log(grad_norm=g))
    assert d.fired and 96 <= d.step <= 130
    c = dg.detect_dynamical_instability(_log(grad_norm=np.ones(N), clip_ratio=np.where(STEPS > 50, 0.35, 0.01)))
    assert c.fired and "(b)" in c.detail["reasons"][0]
    assert not dg.detect_dynamical_instability(_log(grad_norm=np.ones(N), clip_ratio=np.full(N, 0.01))).fired


def test_collapse_warning_comes_before_the_collapse():
    r = np.where(STEPS < 100, 0.2 + 0.5 * STEPS / 100, 0.7 - 0.7 * (STEPS - 100) / 60)
    d = dg.detect_collapse(_log(reward=np.clip(r, 0, 1) + RNG.normal(0, 0.01, N)), reward_bounds=(0.0, 1.0))
    assert d.fired and d.detail["collapse_step"] is not None and d.detail["lead_steps"] > 0
    assert not dg.detect_collapse(_log(), reward_bounds=(0.0, 1.0)).fired


def test_missing_series_are_reported_not_silently_quiet():
    dets = dg.diagnose(_log())
    assert not dets["reward_hacking"].available and "no held-out" in dets["reward_hacking"].signal
    assert not dets["advantage_degeneracy"].available
    assert not dets["policy_concentration"].available


def test_report_carries_the_diagnostics_as_strict_json():
    report = fit_run(_log(entropy=np.full(N, 0.5)), p1_laws=False, forecast_steps=[300])
    text = json.dumps(to_jsonable(report), allow_nan=False)
    assert set(json.loads(text)["diagnostics"]) == set(dg.DETECTORS)


@pytest.mark.skipif(not SHARED_LOGS.exists(), reason="../shared/grpo_logs is not beside this clone")
def test_every_shared_log_gets_a_full_strict_report():
    for csv in sorted(SHARED_LOGS.glob("*.csv")):
        report = fit_run(load_log(csv), p1_laws=False, forecast_steps=[1000], refresh_interval=1)
        json.dumps(to_jsonable(report), allow_nan=False)
        reading = report["response"]["reading"]
        assert reading["status"] in ("reliable", "at bound", "unreliable"), csv.name
        lo, hi = report["forecast_interval"][1000]
        assert lo <= report["forecast"][1000] <= hi


def test_live_doctor_reports_namespaced_scalars_and_stops_on_instability():
    from rlvr_dynamics.runs.live import RunDoctor

    doctor = RunDoctor(every=20, refresh_interval=1, stop_on_instability=True)
    reward = 0.2 + 0.4 * (1 - np.exp(-STEPS / 40))
    grad = np.where(STEPS < 120, 1.0, np.exp((STEPS - 120) / 8))
    outs = [doctor.update(int(s), {"reward": r, "grad_norm": g, "note": "text"})
            for s, r, g in zip(STEPS, reward, grad)]
    reports = [o for o in outs if o]
    assert len(reports) == N // 20
    assert all(k.startswith("dynamics/") and math.isfinite(v) for o in reports for k, v in o.items())
    assert reports[2]["dynamics/plateau"] == pytest.approx(0.6, abs=0.05)
    assert doctor.should_stop and doctor.fired["dynamical_instability"] > 120


def test_html_report_embeds_the_figure(tmp_path):
    from rlvr_dynamics.runs.html_report import write_report

    log = _log(entropy=np.full(N, 0.5), eval_reward=_evals(lambda s: np.full(s.size, 0.2)))
    report = fit_run(log, p1_laws=False, forecast_steps=[300])
    paths = write_report(log, report, html=tmp_path / "r.html", png=tmp_path / "r.png")
    assert [p.name for p in paths] == ["r.png", "r.html"]
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "r.html").read_text()
    assert "data:image/png;base64," in page and "reward_hacking" in page and "http" not in page.split("<body>")[1]
