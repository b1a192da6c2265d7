"""P1-C13 detectors: each fires on a log built with its signature, at a step the rule predicts, and stays quiet on a
log without it; a detector whose series is missing says so."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlvr_dynamics.paths import SHARED_DIR
from rlvr_dynamics.doctor import detectors as dg
from rlvr_dynamics.doctor.detectors import causal, solved_groups
from rlvr_dynamics.doctor.pipeline import fit_run
from rlvr_dynamics.doctor.report import to_jsonable
from rlvr_dynamics.doctor.signals import sub_rewards
from rlvr_dynamics.runs.logs import RunLog, load_log
from rlvr_dynamics.runs.noise import step_sigma

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


def test_hacking_fires_when_eval_falls_not_when_a_greedy_eval_starts_higher_and_stays():
    falling = dg.detect_reward_hacking(_log(eval_reward=_evals(lambda s: 0.6 - 0.4 * s / N)))
    assert falling.fired and falling.detail["eval"] < falling.detail["eval_peak"] - falling.detail["drop_min"]
    # a greedy evaluation above the sampled reward that saturates at once: no ratio of gains, no alarm
    greedy = dg.detect_reward_hacking(_log(eval_reward=_evals(lambda s: np.full(s.size, 0.9))))
    assert greedy.available and not greedy.fired
    coupled = dg.detect_reward_hacking(_log(eval_reward=_evals(lambda s: 0.2 + 0.4 * (1 - np.exp(-s / 40)))))
    assert coupled.available and not coupled.fired


def test_hacking_from_a_correctness_sub_reward_that_falls_while_format_rises():
    fmt = 2.0 * STEPS / N
    corr = np.where(STEPS < 80, 0.5, 0.5 - 0.4 * (STEPS - 80) / 120) + RNG.normal(0, 0.01, N)
    d = dg.detect_reward_hacking(_log(reward=fmt + corr, **{"rewards/format": fmt, "rewards/correctness": corr}))
    assert d.fired and d.events[0]["kind"] == "rewards/correctness fell" and 80 < d.step < 140
    flat = dg.detect_reward_hacking(_log(reward=fmt + 0.5, **{"rewards/format": fmt,
                                                               "rewards/correctness": np.full(N, 0.5)}))
    assert flat.available and not flat.fired
    # correctness dips while the format reward has long saturated: not hacking (no format gain over the fall)
    sat = 2.0 * (1 - np.exp(-STEPS / 20))
    dip = dg.detect_reward_hacking(_log(reward=sat + corr, **{"rewards/format": sat, "rewards/correctness": corr}))
    assert dip.available and not dip.fired


def test_hacking_needs_the_training_reward_to_hold_while_the_evaluation_falls():
    # both fall together: a collapse, not a train/eval divergence
    r = np.where(STEPS < 100, 0.2 + 0.5 * STEPS / 100, 0.7 - 0.5 * (STEPS - 100) / 100) + RNG.normal(0, 0.01, N)
    both = dg.detect_reward_hacking(_log(reward=r, eval_reward=_evals(lambda s: np.where(
        s < 100, 0.3 + 0.5 * s / 100, 0.8 - 0.5 * (s - 100) / 100))))
    assert both.available and not both.fired


def test_noise_window_is_the_closed_form():
    # k = ceil((2σ/effect)²): σ = 0.2, effect 0.1 → 16; clipped to [3, 100]
    assert dg.noise_window(np.array([0.2, 0.01, 5.0]), 0.1).tolist() == [16, 3, 100]


def test_causal_sigma_is_step_sigma_of_the_prefix_at_its_checkpoints():
    y = RNG.normal(0, 0.3, 100)
    s = dg.causal_sigma(y)
    assert np.isnan(s[:7]).all()
    assert s[7] == pytest.approx(step_sigma(y[:8])) and s[9] == pytest.approx(step_sigma(y[:10]))
    assert s[10] == s[9]          # held until the next checkpoint (⌈10·1.25⌉ = 13 values)
    assert s[12] == pytest.approx(step_sigma(y[:13]))


def test_degeneracy_needs_a_sustained_fraction_and_a_not_collapsed_entropy():
    frac = np.where(STEPS > 100, 0.95, 0.2)
    hard = 0.03 + RNG.normal(0, 0.01, N)                  # a hard task: the zero-std groups all failed
    d = dg.detect_advantage_degeneracy(_log(reward=hard, frac_reward_zero_std=frac, entropy=np.full(N, 0.6)))
    assert d.fired and 100 < d.step <= 100 + 2 * dg.K_MAX
    conc = dg.detect_advantage_degeneracy(_log(reward=hard, frac_reward_zero_std=frac,
                                               entropy=0.6 * np.exp(-STEPS / 20)))
    assert not conc.fired   # zero-variance groups caused by a concentrated policy are the other detector's


def test_degeneracy_from_trl_reward_std_zero_at_one_prompt_and_the_upper_bound_gate():
    std = np.where(STEPS > 100, 0.0, 0.4)
    d = dg.detect_advantage_degeneracy(_log(reward=0.03 + RNG.normal(0, 0.01, N), reward_std=std))
    assert d.available and d.fired and "reward_std == 0" in d.signal and d.step > 100
    learning = _log(reward=np.clip(0.02 + 0.5 * STEPS / N, 0, 1), reward_std=std)
    assert not dg.detect_advantage_degeneracy(learning).fired        # the reward still rises: not starved
    solved = _log(reward=np.full(N, 0.99), reward_std=std)          # every group all-correct: a solved task
    assert not dg.detect_advantage_degeneracy(solved, reward_bounds=(0.0, 1.0)).fired
    # 85 % zero-std groups at a reward of 0.8: mostly all-correct groups, f − u = 0.05 — not starved
    easy = _log(reward=np.full(N, 0.8) + RNG.normal(0, 0.01, N), frac_reward_zero_std=np.full(N, 0.85))
    assert not dg.detect_advantage_degeneracy(easy, reward_bounds=(0.0, 1.0)).fired


def test_one_partial_reward_on_every_completion_of_a_one_prompt_step_is_degenerate():
    """noisy-smollm-shaped (1 prompt x 8, 0.5 for a bare number + 2 when right): from step 9 on every completion was a
    bare wrong number, so the step's one group scored 0.5 on all eight, with no spread and no advantage. Its rewards
    all lay in [0, 1], so u = 0.5 said "up to half the groups may be all-correct" and f − u = 0.5 never fired. At one
    prompt a step (f is 0 or 1 on every row) the group is all-correct only where u = 1."""
    rng = np.random.default_rng(0)
    f = np.r_[np.zeros(8), np.ones(N - 8)]
    stuck = _log(reward=np.r_[np.linspace(0.06, 0.44, 8), np.full(N - 8, 0.5)], frac_reward_zero_std=f,
                 entropy=1.0 + 0.1 * rng.standard_normal(N))
    d = dg.detect_advantage_degeneracy(stuck)
    assert d.fired and d.detail["on_at_end"]
    # a binary reward at one prompt a step is unchanged: its zero-spread rows are all-failed (u = 0) or solved (u = 1)
    right = rng.uniform(size=N) < 0.5
    binary = _log(reward=np.where(right, 1.0, 0.0), frac_reward_zero_std=np.ones(N),
                  entropy=1.0 + 0.1 * rng.standard_normal(N))
    assert not dg.detect_advantage_degeneracy(binary).fired
    # two prompts a step (f in {0, 0.5, 1}): a mean of 0.5 with no spread may be one solved and one failed group
    two = _log(reward=np.full(N, 0.5), frac_reward_zero_std=np.where(STEPS % 2 == 0, 1.0, 0.5),
               entropy=1.0 + 0.1 * rng.standard_normal(N))
    assert not dg.detect_advantage_degeneracy(two).fired


def test_concentration_fires_on_entropy_and_spread_falling_together_once_learning_stalls():
    h = 0.6 * np.exp(-STEPS / 40)
    spread = 0.6 * np.exp(-STEPS / 80)
    d = dg.detect_policy_concentration(_log(entropy=h, group_distinct_frac=spread))
    assert d.fired and d.detail["entropy_ratio"] < 0.25
    stalled_from = 0.2 + 0.4 * (1 - np.exp(-STEPS / 40))
    assert d.step > 60          # the reward (time constant 40) is still rising significantly before
    rising = _log(reward=0.1 + 0.5 * STEPS / N + RNG.normal(0, 0.01, N), entropy=h, group_distinct_frac=spread)
    assert not dg.detect_policy_concentration(rising).fired            # still learning: not a failure
    converged = _log(reward=0.8 + 0 * stalled_from + RNG.normal(0, 0.01, N), entropy=h, group_distinct_frac=spread)
    assert not dg.detect_policy_concentration(converged, reward_bounds=(0.0, 1.0)).fired   # within 25 % of bound
    quiet = dg.detect_policy_concentration(_log(entropy=0.6 - 0.1 * STEPS / N, group_distinct_frac=np.full(N, 0.5)))
    assert not quiet.fired
    near_bound = _log(reward=np.full(N, 0.97), entropy=h, group_distinct_frac=spread)
    assert not dg.detect_policy_concentration(near_bound, reward_bounds=(0.0, 1.0)).fired


def _falling_from(step: int, per_step: float = 0.01) -> np.ndarray:
    """The default rise, falling ``per_step`` a step from ``step`` on (noise 0.01)."""
    rise = 0.2 + 0.4 * (1 - np.exp(-STEPS / 40))
    return np.where(STEPS < step, rise, rise[step - 1] - per_step * (STEPS - step)) + RNG.normal(0, 0.01, N)


def test_instability_from_grad_norm_growth_or_clipping():
    """The optimiser's signals count beside a reward fall (20 % of its gain, significant) within 20 rows, dated
    where both are known: the grad norm grows from step 80 (×5 by ~96), the reward falls from step 100 (20 % of
    0.57 by ~111)."""
    g = np.where(STEPS < 80, 1.0, np.exp((STEPS - 80) / 10)) * (1 + RNG.normal(0, 0.05, N))
    d = dg.detect_dynamical_instability(_log(reward=_falling_from(100), grad_norm=g), reading=False)
    assert d.fired and 108 <= d.step <= 130 and d.events[0]["signal_step"] < d.step
    c = dg.detect_dynamical_instability(_log(reward=_falling_from(50), grad_norm=np.ones(N),
                                             clip_ratio=np.where(STEPS > 50, 0.35, 0.01)), reading=False)
    assert c.fired and "(b)" in c.detail["reasons"][0]
    assert not dg.detect_dynamical_instability(_log(grad_norm=np.ones(N), clip_ratio=np.full(N, 0.01)),
                                               reading=False).fired
    # TRL num_iterations=1: the clip ratio is always 0 and is not used
    zero = dg.detect_dynamical_instability(_log(grad_norm=np.ones(N), clip_ratio=np.zeros(N)), reading=False)
    assert "clip_ratio" not in zero.signal and not zero.fired


def test_entropy_blow_up_needs_to_rise_above_the_initial_level():
    back = 0.6 * np.where(STEPS < 80, np.exp(-STEPS / 20), np.exp(-4) + (1 - np.exp(-4)) * (STEPS - 80) / 120)
    d = dg.detect_dynamical_instability(_log(entropy=back), reading=False)
    assert not d.fired           # falls, then recovers towards its start: ≥ 2× its minimum but not a blow-up
    up = 0.6 * np.where(STEPS < 100, 1.0, 1 + 3 * (STEPS - 100) / 100)
    d = dg.detect_dynamical_instability(_log(reward=_falling_from(110), entropy=up), reading=False)
    assert d.fired and "(g)" in d.detail["reasons"][0] and d.step > 110


def test_optimiser_signals_while_the_reward_holds_or_rises_are_not_instability():
    """Grad norm ×e¹² and entropy ×4 while the reward rises to its plateau and holds (as on healthy course runs
    whose entropy jumps 25–43× with the reward unharmed): no event; the same signals with the reward falling 20 %
    of its gain within 20 rows: an event."""
    g = np.where(STEPS < 80, 1.0, np.exp((STEPS - 80) / 10))
    up = 0.6 * np.where(STEPS < 100, 1.0, 1 + 3 * (STEPS - 100) / 100)
    held = dg.detect_dynamical_instability(_log(grad_norm=g, entropy=up), reading=False)
    assert held.available and not held.fired
    late = _falling_from(180)             # the fall comes > 20 rows after both signals' events: still none
    assert not dg.detect_dynamical_instability(_log(reward=late, grad_norm=g), reading=False).fired
    near = dg.detect_dynamical_instability(_log(reward=_falling_from(95), grad_norm=g), reading=False)
    assert near.fired and "(a)" in near.detail["reasons"][0]


def test_collapse_warning_from_precursors_alone_comes_before_a_noisy_reward_halves():
    """Completions running into the length cap warn by themselves (a failure of the policy in itself), before a
    one-prompt reward, too noisy to show its fall in time, halves."""
    rng = np.random.default_rng(7)
    level = np.where(STEPS < 150, 0.6, 0.6 * np.exp(-(STEPS - 150) / 10))
    reward = rng.binomial(8, level) / 8                     # one prompt of 8 completions: too noisy to see a fall
    ramp = np.clip((STEPS - 110) / 30, 0, 1)
    log = _log(reward=reward, entropy=0.5 * (1 + 2 * ramp), grad_norm=1 + 6 * ramp,
               **{"completions/clipped_ratio": 0.9 * ramp})
    d = dg.detect_collapse(log, reward_bounds=(0.0, 1.0))
    warnings = [e for e in d.events if e["kind"] == "warning"]
    assert warnings and 110 < warnings[0]["step"] <= 140 and "length_cap" in warnings[0]["signals"]
    calm = _log(reward=reward[:100].tolist() * 2, entropy=np.full(N, 0.5), grad_norm=np.ones(N))
    assert not [e for e in dg.detect_collapse(calm, reward_bounds=(0.0, 1.0)).events if e["kind"] == "warning"]


def test_instability_from_a_growing_reward_envelope_needs_a_second_signal():
    """(e) alone (the steps get 8× noisier at step 120) is the noise of learning as often as a blow-up: no event;
    with the gradient norm growing from step 115 (a), the envelope's event counts too (Round 3)."""
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 0.02, N) * np.where(STEPS > 120, 8.0, 1.0)
    fall = 0.5 - 0.3 * np.clip((STEPS - 120) / 20, 0, 1)         # and the reward falls (a) needs beside it
    alone = dg.detect_dynamical_instability(_log(reward=fall + noise), reading=False)
    assert not alone.fired
    grad = np.exp(rng.normal(0, 0.05, N)) * np.where(STEPS > 115, np.exp((STEPS - 115) / 6), 1.0)
    both = dg.detect_dynamical_instability(_log(reward=fall + noise, grad_norm=grad), reading=False)
    reasons = both.detail["reasons"]
    assert both.fired and any("(e)" in r for r in reasons) and any("(a)" in r for r in reasons)
    assert 115 < both.step <= 140


def test_collapse_is_reported_at_the_halving_and_rearms():
    """A slow fall (0.7 at step 100 → 0 at 160, 0.0117 a step) is reported as ``collapsed`` within 4 logged points
    of its halving (0.35 at step 130): the half line is drawn from the peak less its noise lift and the next point
    must confirm it, which on a slow fall costs ~3 steps (abrupt falls: at the point, or one point after). A dip to
    below half that recovers, then a second collapse: two reports."""
    r = np.where(STEPS < 100, 0.2 + 0.5 * STEPS / 100, 0.7 - 0.7 * (STEPS - 100) / 60)
    d = dg.detect_collapse(_log(reward=np.clip(r, 0, 1) + RNG.normal(0, 0.01, N)), reward_bounds=(0.0, 1.0))
    collapsed = [e for e in d.events if e["kind"] == "collapsed"]
    assert len(collapsed) == 1 and 130 <= collapsed[0]["halving_step"] <= 134
    assert collapsed[0]["step"] - collapsed[0]["halving_step"] <= 1 and d.detail["collapse_step"] is not None
    assert not dg.detect_collapse(_log(), reward_bounds=(0.0, 1.0)).fired
    dip = 0.7 - 0.5 * ((STEPS > 60) & (STEPS < 80)) - 0.5 * (STEPS > 150)      # dip, recovery, then collapse
    two = dg.detect_collapse(_log(reward=dip + RNG.normal(0, 0.01, N)), reward_bounds=(0.0, 1.0))
    got = [(e["halving_step"], e["recovered_step"]) for e in two.events if e["kind"] == "collapsed"]
    assert len(got) == 2 and 61 <= got[0][0] <= 62 and got[0][1] is not None and 151 <= got[1][0] <= 152
    assert got[1][1] is None and two.step == min(e["step"] for e in two.events)


def test_detectors_are_causal_every_prefix_gives_the_same_events():
    rng = np.random.default_rng(5)
    r = np.where(STEPS < 120, 0.2 + 0.5 * (1 - np.exp(-STEPS / 30)), 0.7 * np.exp(-(STEPS - 120) / 15))
    log = _log(reward=r + rng.normal(0, 0.05, N), entropy=0.6 * (1 + (STEPS > 110) * (STEPS - 110) / 20),
               grad_norm=np.exp(rng.normal(0, 0.1, N)) * (1 + 5 * (STEPS > 110)),
               frac_reward_zero_std=np.where(STEPS > 150, 0.9, 0.2))
    full = dg.diagnose(log, reward_bounds=(0.0, 1.0), reading=False)
    assert full["collapse_warning"].fired
    for cut in (60, 115, 130, 170):
        part = RunLog("p", log.steps[:cut], {k: v[:cut] for k, v in log.series.items()}, "reward")
        pre = dg.diagnose(part, reward_bounds=(0.0, 1.0), reading=False)
        for name in dg.DETECTORS:
            want = [e["step"] for e in full[name].events if e["step"] <= log.steps[cut - 1]]
            assert [e["step"] for e in pre[name].events] == want, (name, cut)


def test_metric_aliases_of_verl_openrlhf_and_older_verl():
    h = 0.6 * np.exp(-STEPS / 40)
    spread = 0.4 * np.exp(-STEPS / 60)
    for col in ("actor/entropy_loss", "policy_entropy"):
        assert dg.detect_policy_concentration(_log(**{col: h, "reward_std": spread})).available
        alone = dg.detect_policy_concentration(_log(**{col: h}))       # entropy alone is not evidence (d5f65fb)
        assert not alone.available and col in alone.signal and "within-group spread" in alone.signal


def test_all_detectors_on_a_1000_step_log_take_under_50_ms():
    import time
    n = 1000
    s = np.arange(1, n + 1)
    rng = np.random.default_rng(0)
    series = {"reward": 0.3 + 0.4 * (1 - np.exp(-s / 200)) + rng.normal(0, 0.1, n), "entropy": np.full(n, 0.5),
              "grad_norm": np.exp(rng.normal(0, 0.2, n)), "kl": 0.01 * s / n, "reward_std": rng.uniform(0, 0.4, n),
              "completions/clipped_ratio": np.zeros(n)}
    log = RunLog("x", s, series, "reward")
    dg.diagnose(log, reading=False)
    t = time.perf_counter()
    dg.diagnose(log, reading=False)
    assert time.perf_counter() - t < 0.5     # generous here (shared CPU); the bench measures the 50 ms target


def test_missing_series_are_reported_not_silently_quiet():
    dets = dg.diagnose(_log())
    assert not dets["reward_hacking"].available and "no held-out" in dets["reward_hacking"].signal
    # a reward in [0, 1] with no zero-std column: the floor bound is available (a lower bound), quiet here
    assert dets["advantage_degeneracy"].available and not dets["advantage_degeneracy"].fired
    summed = dg.diagnose(_log(reward=1.5 + 2 * (1 - np.exp(-STEPS / 40))))   # a sum of rewards, no bounds
    assert not summed["advantage_degeneracy"].available and "reward bounds" in summed["advantage_degeneracy"].signal
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
    from rlvr_dynamics.doctor.live import RunDoctor

    reward = 0.2 + 0.4 * (1 - np.exp(-STEPS / 40))
    grad = np.where(STEPS < 120, 1.0, np.exp((STEPS - 120) / 8))
    # grad-norm growth alone while the reward holds: no instability event, no stop (stop rule, live.py)
    doctor = RunDoctor(every=20, refresh_interval=1, stop_on_instability=True)
    outs = [doctor.update(int(s), {"reward": r, "grad_norm": g, "note": "text"})
            for s, r, g in zip(STEPS, reward, grad)]
    assert all(o and set(o) >= {"dynamics/status", "dynamics/status_failure"} for o in outs[3:])  # every reward
    reports = [o for o in outs if "dynamics/noise_ceiling" in o]        # the full reports: every 20 updates
    assert len(reports) == N // 20
    # NaN / inf are logged as they are (issue 32), only in the fields that can take them and with their markers
    for o in reports:
        assert all(k.startswith("dynamics/") and isinstance(v, float) for k, v in o.items())
        for k, v in o.items():
            if not math.isfinite(v):
                assert o[f"{k}_is_nan"] == float(math.isnan(v)) and o[f"{k}_is_inf"] == float(math.isinf(v)), k
    # step 60: 78 % of the rise covered, the plateau is not identified yet (NaN sentinel, flagged); by step 200 it is
    assert reports[2]["dynamics/plateau_is_nan"] == 1.0 and reports[2]["dynamics/verdict"] == 0.0
    assert reports[-1]["dynamics/plateau"] == pytest.approx(0.6, abs=0.05)
    assert doctor.fired.get("dynamical_instability") is None and not doctor.should_stop and doctor.stop_reason is None
    # with the reward falling as the grad norm blows up: stop, at the update where the rule fires
    falling = np.where(STEPS < 125, reward, reward[124] * np.exp(-(STEPS - 125) / 10)) + RNG.normal(0, 0.01, N)
    doctor = RunDoctor(every=20, refresh_interval=1, stop_on_instability=True)
    for s, r, g in zip(STEPS, falling, grad):
        doctor.update(int(s), {"reward": r, "grad_norm": g})
        if doctor.should_stop:
            break
    assert doctor.should_stop and 120 < doctor.stop_reason["step"] == int(s) < 170


def test_html_report_embeds_the_figure(tmp_path):
    from rlvr_dynamics.doctor.render.html import write_report

    log = _log(entropy=np.full(N, 0.5), eval_reward=_evals(lambda s: np.full(s.size, 0.2)))
    report = fit_run(log, p1_laws=False, forecast_steps=[300])
    paths = write_report(log, report, html=tmp_path / "r.html", png=tmp_path / "r.png")
    assert [p.name for p in paths] == ["r.png", "r.html"]
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "r.html").read_text()
    assert "data:image/png;base64," in page and "reward_hacking" in page and "http" not in page.split("<body>")[1]


def test_a_reward_stuck_at_zero_is_advantage_degeneracy():
    """The plainest degeneracy: every group scores 0 (zero-std fraction 1), the reward is exactly flat at 0 and the
    entropy holds. The trailing slope of an exactly flat stretch is 0 (stalled), not NaN."""
    from rlvr_dynamics.runs.logs import RunLog

    steps = np.arange(1, 121)
    rng = np.random.default_rng(0)
    series = {"reward": np.zeros(steps.size), "frac_reward_zero_std": np.ones(steps.size),
              "entropy": 0.7 + 0.01 * rng.standard_normal(steps.size)}
    det = dg.detect_advantage_degeneracy(RunLog("stuck", steps, series, "reward"), (0.0, 1.0))
    assert det.fired and det.step <= 40
    np.testing.assert_array_equal(causal.trailing_slope_t(np.zeros(10), np.full(10, 6)), np.zeros(10))


def test_a_format_reward_named_exactly_is_not_a_correctness_reward():
    steps = np.arange(1, 11)
    series = {"reward": np.ones(10), "rewards/match_format_exactly": np.ones(10), "rewards/check_answer": np.ones(10),
              "rewards/correctness_reward_func": np.ones(10), "rewards/strict_format_reward_func": np.ones(10)}
    corr, fmt = sub_rewards(RunLog("x", steps, series, "reward"))
    assert corr == ["rewards/check_answer", "rewards/correctness_reward_func"]
    assert fmt == ["rewards/match_format_exactly", "rewards/strict_format_reward_func"]


def test_a_reward_only_log_at_its_floor_reads_degenerate_groups_not_plateaued():
    """A step whose mean reward is the lower bound had every completion fail: every group is all-failed, exactly.
    A reward-only log stuck at 0 is degenerate from its first rows and still is at its end, so the status says so
    (it read "plateaued, mean 0"); a start at 0 that then rises is not; a reward that never touches its floor is
    not; a sum of rewards with no known bounds gives no floor."""
    from rlvr_dynamics.doctor.status import decide_status

    steps = np.arange(1, 121)
    stuck = RunLog("stuck.csv", steps, {"reward": np.zeros(steps.size)}, "reward")
    det = dg.detect_advantage_degeneracy(stuck)
    assert det.fired and det.signal == "reward at its lower bound" and det.step <= 20 and det.detail["on_at_end"]
    st = decide_status(stuck)
    assert st.state == "degenerate groups" and "reward at its lower bound" in st.evidence
    declared = RunLog("stuck.csv", steps, {"reward": np.full(steps.size, -1.0)}, "reward")
    assert decide_status(declared, (-1.0, 1.0)).state == "degenerate groups"      # the declared floor
    rng = np.random.default_rng(1)
    late = np.r_[np.zeros(40), np.clip(np.linspace(0.05, 0.6, 80) + rng.normal(0, 0.05, 80), 0.01, 1)]
    assert decide_status(RunLog("late.csv", steps, {"reward": late}, "reward")).state == "rising"
    above = RunLog("above.csv", steps, {"reward": np.full(steps.size, 0.02) + rng.uniform(0, 0.01, steps.size)},
                   "reward")
    assert not dg.detect_advantage_degeneracy(above).fired                  # never at the floor: no evidence
    # the TRL column says the same: degenerate throughout is the run's state at its end, not only in its last quarter
    trl = RunLog("trl.csv", steps, {"reward": np.zeros(steps.size), "frac_reward_zero_std": np.ones(steps.size)},
                 "reward")
    assert decide_status(trl).state == "degenerate groups"


def _one_prompt_pm1(success, seed=0, group=8):
    """One prompt × ``group`` completions a step, reward +1 right / −1 wrong (no bounds declared), TRL's columns:
    the step's mean reward, its frac_reward_zero_std (0 or 1) and an entropy that holds."""
    rng = np.random.default_rng(seed)
    steps = np.arange(1, success.size + 1)
    k = rng.binomial(group, success)
    reward = (2 * k - group) / group
    zero = ((k == 0) | (k == group)).astype(float)
    return RunLog("pm1.csv", steps, {"reward": reward, "frac_reward_zero_std": zero,
                                     "entropy": 0.5 + 0.01 * rng.standard_normal(steps.size)}, "reward")


def test_one_prompt_groups_solved_at_the_best_reward_logged_are_not_degeneracy_without_bounds():
    """At one prompt a step a group with no spread at the highest reward the run has logged is solved: a healthy
    ±1-reward run at its ceiling (95 % right, most groups all right) is not starved (it read ``degenerate groups``
    with u = 0 for want of bounds), while the same run stuck at −1 (every group all wrong) still is, bounds or not."""
    t = np.arange(300)
    ceiling = np.clip(0.5 + 0.45 * (1 - np.exp(-t / 40)), 0, 1)
    for seed in range(5):
        log = _one_prompt_pm1(ceiling, seed)
        assert np.mean(log.series["frac_reward_zero_std"][-100:]) > 0.5     # most late groups have no spread
        assert not dg.detect_advantage_degeneracy(log, None).fired
    starved = _one_prompt_pm1(np.where(t < 5, 0.1, 0.0))
    assert dg.detect_advantage_degeneracy(starved, None).fired
    assert dg.detect_advantage_degeneracy(starved, (-1.0, 1.0)).fired
    np.testing.assert_allclose(solved_groups.observed_unit_reward(np.array([np.nan, -1, -1, 0.5, 1, -1])),
                               [np.nan, np.nan, np.nan, 1.0, 1.0, 0.0])


def _prompts_pm1(success, prompts, seed=0, group=8):
    """``prompts`` prompts × ``group`` completions a step, each prompt's success drawn from Beta(2c, 2(1 − c)) around
    the step's success c (easy and hard prompts), reward +1 right / −1 wrong (no bounds), TRL's columns."""
    rng = np.random.default_rng(seed)
    c = np.clip(success, 1e-3, 1 - 1e-3)[:, None]
    k = rng.binomial(group, rng.beta(2 * c, 2 * (1 - c), size=(success.size, prompts)))
    return RunLog("pm1.csv", np.arange(1, success.size + 1),
                  {"reward": (2 * k / group - 1).mean(axis=1),
                   "frac_reward_zero_std": ((k == 0) | (k == group)).mean(axis=1),
                   "entropy": 0.5 + 0.01 * rng.standard_normal(success.size)}, "reward")


def test_groups_without_spread_that_rise_with_the_reward_are_solved_ones_at_several_prompts_a_step():
    """At four prompts a step with a ±1 reward (no bounds) a healthy run at its ceiling has most groups all right:
    the reward rises with the share of groups without spread, so those are solved (it read ``degenerate groups``
    in 6 of these 8 runs before). A run stuck low, whose groups without spread are the all-wrong ones, still reads
    degenerate, and so does one whose reward rose through a learned format term alone."""
    t = np.arange(400)
    ceiling = 0.5 + 0.45 / (1 + np.exp(-(t / 400 - 0.3) / 0.08))
    for seed in range(8):
        log = _prompts_pm1(ceiling, 4, seed)
        assert np.mean(log.series["frac_reward_zero_std"][-100:]) > 0.75
        assert not dg.detect_advantage_degeneracy(log, None).fired
    low = _prompts_pm1(0.02 + 0.13 / (1 + np.exp(-(t / 400 - 0.3) / 0.08)), 4)
    assert dg.detect_advantage_degeneracy(low, None).fired
    rng = np.random.default_rng(3)
    fmt = _prompts_pm1(np.full(t.size, 0.02), 4)
    fmt.series["reward"] = fmt.reward + 1.0 - np.exp(-t / 20) + 0.05 * rng.standard_normal(t.size)
    fmt = RunLog("fmt.csv", fmt.steps, fmt.series, "reward")
    assert dg.detect_advantage_degeneracy(fmt, None).fired


def test_solved_share_is_the_spread_free_groups_mean_reward_in_the_observed_range():
    """R = f·m₀ + (1 − f)·mₛ exactly: the trailing line recovers m₀ = 0.6 in an observed range [0, 1] (share 0.6);
    a line that falls (the groups without spread are the worse ones) reads 0; a window at f = 1 reads 1 at the best
    reward logged and 0 below it; the first SPREAD_FREE_MIN rows read 0."""
    share = solved_groups.solved_share
    f = np.r_[0.5, 0.5, np.tile(np.linspace(0.2, 0.8, 7), 16)]
    r = np.r_[0.0, 1.0, 0.6 * f[2:]]
    s = share(r, f)
    assert s[-1] == pytest.approx(0.6) and np.all(s[:solved_groups.SPREAD_FREE_MIN - 1] == 0)
    assert share(np.r_[0.0, 1.0, 0.6 - 0.5 * f[2:]], f)[-1] == 0
    ones = np.ones(120)
    assert share(np.r_[0.0, np.ones(119)], ones)[-1] == 1
    assert share(np.r_[1.0, np.zeros(119)], ones)[-1] == 0
    assert np.isnan(share(np.r_[np.nan, r[1:]], f)[0])


def test_a_policy_converged_on_right_answers_is_not_concentration_without_bounds():
    """A sum of a correctness and a format term (no bounds the doctor can assume) at one prompt × 8 a step: the
    policy converges, entropy and the share of distinct completions fall, and every group earns the best reward the
    run has logged (2.0): converged, not concentrated (dev run ``noisy-smollm-2p-terms`` read ``policy_concentration``
    at step 58 before). The same picture at a partial reward below that best (every completion a bare wrong number
    earning the format term alone, after the run had scored) is concentration."""
    rng = np.random.default_rng(5)
    h = 2.5 * np.exp(-STEPS / 25) + 0.05
    spread = 0.3 + 0.7 * np.exp(-STEPS / 60)
    right = np.clip(0.5 + 0.5 * (1 - np.exp(-STEPS / 20)) + 0.1 * (STEPS > 60), 0, 1)
    k = rng.binomial(8, right)
    solved = _log(reward=2.0 * k / 8, entropy=h, group_distinct_frac=spread,
                  frac_reward_zero_std=((k == 0) | (k == 8)).astype(float))
    assert np.mean(k[-100:] == 8) > 0.9
    assert not dg.detect_policy_concentration(solved).fired
    assert dg.detect_policy_concentration(solved, reward_bounds=(0.0, 3.0)).fired       # declared: 2 is not the top
    wrong = np.where(STEPS < 40, 2.0 * rng.binomial(8, 0.5, N) / 8, 0.5)
    stuck = _log(reward=wrong, entropy=h, group_distinct_frac=spread,
                 frac_reward_zero_std=np.where(STEPS < 40, 0.0, 1.0))
    assert dg.detect_policy_concentration(stuck).fired
