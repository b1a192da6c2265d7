"""The collapse report (doctor.detectors.collapse): at the point, from the 4th logged point, never on noise."""
import math

import numpy as np
import pytest

from rlvr_dynamics.doctor.detectors import collapse as C
from rlvr_dynamics.doctor.detectors import own_rewards as O
from rlvr_dynamics.doctor.detectors import prefix_noise as PN
from rlvr_dynamics.runs.noise import resolution_samples


def _rise_then_fall(n=60, fall_at=30, top=0.8, low=0.02, noise=0.02, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    level = top * (1 - np.exp(-t / 6.0))
    level[fall_at:] = low
    return t, np.clip(level + noise * rng.standard_normal(n), 0, 1)


def test_abrupt_collapse_reported_at_the_point():
    t, y = _rise_then_fall()
    ev = C.collapse_events(t, y)
    assert len(ev) == 1
    e = ev[0]
    assert e.step == 30 and e.kind == "jump" and e.reported_step == 30
    assert e.recovered_step is None
    assert e.floor == 0.0 and 0.7 < e.peak < 0.9


def test_confirmed_halving_is_reported_one_point_later():
    """A fall to just below half: not a jump, so the next point confirms it (latency exactly one point)."""
    t = np.arange(30)
    y = np.r_[np.full(15, 0.6), np.full(15, 0.25)] + 0.01 * np.resize([1, -1], 30)
    ev = C.collapse_events(t, y)
    assert [(e.step, e.reported_step, e.kind) for e in ev] in ([(15, 16, "confirmed")], [(16, 17, "confirmed")],
                                                               [(15, 15, "jump")])
    assert ev[0].reported_step - ev[0].step <= 1


def test_detection_from_the_fourth_point():
    y = np.array([0.78, 0.80, 0.81, 0.02, 0.01, 0.02])
    ev = C.collapse_events(np.arange(6), y)
    assert ev and ev[0].step == 3 and ev[0].reported_step == 3 and ev[0].kind == "jump"
    # with fewer than SHORT_PREFIX points σ̂ is at least their std: a fall to 0.30 is no jump there, and the
    # 2-point mean (0.555) is not below half (0.4025): nothing yet
    assert C.collapse_events(np.arange(4), [0.78, 0.80, 0.81, 0.30]) == []


def test_no_event_before_the_fourth_point_and_pending_at_the_end():
    assert C.collapse_events([0, 1, 2], [0.8, 0.8, 0.0]) == []
    ev = C.collapse_events(np.arange(5), [0.8, 0.81, 0.8, 0.79, 0.01])
    assert len(ev) == 1 and ev[0].kind == "jump" and ev[0].step == 4
    # a fall in two stages: the second (0.35 → 0.12) is smaller than 1.5× the first, so no jump, but the 2-point
    # mean halves at the last point: pending until the next point
    y = np.r_[0.6 + 0.01 * np.resize([1, -1], 12), 0.35, 0.12]
    ev = C.collapse_events(np.arange(14), y)
    assert len(ev) == 1 and ev[0].kind == "pending" and ev[0].reported_step is None and ev[0].step == 13


@pytest.mark.parametrize("seed", range(20))
def test_no_collapse_on_stationary_noise(seed):
    """Noise around a plateau (σ = 0.1 on a 0.5 level, 400 points) never halves the gain significantly."""
    rng = np.random.default_rng(seed)
    y = np.clip(0.5 + 0.1 * rng.standard_normal(400), 0, 1)
    assert C.collapse_events(np.arange(400), y) == []


@pytest.mark.parametrize("seed", range(10))
def test_no_collapse_on_binary_one_prompt_rewards(seed):
    """A one-prompt 0/1 reward (the noisiest real case) that rises from 0.2 to 0.6 and holds."""
    rng = np.random.default_rng(100 + seed)
    p = 0.2 + 0.4 * (1 - np.exp(-np.arange(300) / 50))
    y = rng.binomial(8, p) / 8
    assert [e for e in C.collapse_events(np.arange(300), y) if e.kind != "pending"] == []


def test_recovery_re_arms_and_a_second_collapse_is_reported():
    y = np.r_[np.linspace(0.1, 0.8, 10), np.full(10, 0.8), np.full(5, 0.02), np.full(15, 0.8), np.full(10, 0.01)]
    y = y + 0.005 * np.resize([1, -1], y.size)
    ev = C.collapse_events(np.arange(y.size), y)
    assert len(ev) == 2
    assert ev[0].step == 20 and ev[0].recovered_step is not None and 25 <= ev[0].recovered_step <= 27
    # the second fall is no larger than the first, so it is no jump: the 2-point mean halves at 41 (at 40 it is
    # (0.8 + 0.01)/2 > 0.4) and the next point confirms it
    assert (ev[1].step, ev[1].reported_step, ev[1].recovered_step) == (41, 42, None)


def test_declared_bounds_set_the_floor():
    y = np.r_[np.full(10, -0.5), np.full(10, 2.0), np.full(10, 0.2)] + 0.01 * np.resize([1, -1], 30)
    assert C.collapse_events(np.arange(30), y, reward_bounds=(-1.0, 3.0))[0].floor == -1.0
    # without bounds the floor is the trailing mean's minimum before the peak: 2.0 → 0.2 loses 72 % of the gain
    ev = C.collapse_events(np.arange(30), y)
    assert ev and math.isclose(ev[0].floor, -0.5, abs_tol=0.02)


def test_a_reward_never_below_0_is_measured_from_0():
    """A format and a correctness reward of 1 each on a model that already scores: the run sits near 1.6 from its
    first step and falls to 0.1. Its own lowest trailing mean lies inside the level's noise, so a floor read from the
    run left no gain to lose and the collapse was never reported; a reward never below 0 is measured from 0. Once a
    reward below 0 is logged, the floor comes from the run again."""
    rng = np.random.default_rng(5)
    y = np.r_[1.6 + 0.15 * rng.standard_normal(120), 0.1 + 0.05 * rng.random(20)].clip(0, 2)
    ev = C.collapse_events(np.arange(140), y)
    assert ev and ev[0].floor == 0.0 and 120 <= ev[0].step <= 121 and ev[0].reported_step <= 122
    y_shifted = y - 0.5                                  # a reward below 0: no floor known, none assumed
    assert all(e.floor < 1.2 for e in C.collapse_events(np.arange(140), y_shifted))
    flat = 1.6 + 0.15 * rng.standard_normal(300)         # the same level, no fall: no collapse from a floor at 0
    assert C.collapse_events(np.arange(300), flat.clip(0, 2)) == []


def test_causal_prefix_gives_the_same_events():
    t, y = _rise_then_fall(n=80, fall_at=50, noise=0.03, seed=3)
    full = [e for e in C.collapse_events(t, y) if e.kind != "pending"]
    for m in range(4, 81):
        part = [e for e in C.collapse_events(t[:m], y[:m]) if e.kind != "pending"]
        assert [(e.step, e.reported_step) for e in part] == \
            [(e.step, e.reported_step) for e in full if e.reported_step <= t[m - 1]]


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="steps and reward"):
        C.collapse_events([1, 2, 3], [0.1, 0.2])


def test_small_sample_factor_and_peak_bias():
    assert O.small_sample_factor(3) == pytest.approx(4.302652729911275 / 1.959963984540054)
    assert O.small_sample_factor(500) == 1.0
    assert PN.peak_bias(2, 2) == 0.0
    assert PN.peak_bias(200, 2) == pytest.approx(math.sqrt(2 * math.log(100)))


# --- the fall judged by the run's own rewards (level_held, level_share, confirm_points) ---------------------------

def test_confirm_points_is_the_run_length_test():
    """k = the smallest k ≥ 2 with p^k ≤ CONFIRM_ALPHA: a clean level (p = 1/22) and one low reward in ten (3/22)
    confirm at the next point; a baseline visited half the time needs 6; a level that was never above needs the cap."""
    assert O.confirm_points(0.5 / 11) == 2
    assert O.confirm_points(1.5 / 11) == 2
    assert O.confirm_points(2.5 / 11) == 3
    assert O.confirm_points(0.5) == 6
    assert 0.5 ** 6 <= O.CONFIRM_ALPHA < 0.5 ** 5
    assert O.confirm_points(1.0) == O.CONFIRM_MAX
    # a level of n rewards: α·LEVEL_POINTS/n (n/10 times the chances to come that low by chance)
    assert O.confirm_points(0.25, 40) == 4 > O.confirm_points(0.25) == 3
    assert O.confirm_points(0.5 / 41, 40) == 2


def test_level_share_counts_the_level_s_rewards_as_low_as_the_fall():
    """The level before the stretch of rewards below the half line; 'as low' within σ̂ of the highest reward since
    the halving (Krichevsky–Trofimov share)."""
    y = np.r_[np.full(10, 0.6), 0.05, 0.04]
    assert O.level_share(y, 10, 11, 0.02, half=0.3) == (pytest.approx(0.5 / 11), 10)
    y2 = np.r_[0.6, 0.05, 0.6, 0.06, 0.6, 0.6, 0.04, 0.6, 0.6, 0.6, 0.05, 0.04]
    assert O.level_share(y2, 10, 11, 0.02, half=0.3) == (pytest.approx(3.5 / 11), 10)
    # the stretch below the line before the halving point is not part of the level: [0.2, 0.1] are skipped
    y3 = np.r_[np.full(10, 0.6), 0.2, 0.1, 0.05]
    assert O.level_share(y3, 12, 12, 0.02, half=0.3) == (pytest.approx(0.5 / 11), 10)


def test_a_level_held_longer_is_read_whole_from_the_first_reward_above_the_line():
    """Up to LEVEL_MAX rewards from the first at or above the half line: the climb below the line is left out, and a
    one-prompt level whose last ten rewards happen to hold no low (one in three of them is low) is read for what it
    is, so its fall to that baseline needs a run of lows, not the next point."""
    climb, level = np.linspace(0.0, 0.25, 15), np.tile([0.6, 0.7, 0.05], 10)
    level[-10:] = 0.65                                   # ten rewards in a row without a low
    y = np.r_[climb, level, 0.04, 0.05]
    i = y.size - 2
    p, n = O.level_share(y, i, i, 0.02, half=0.3)
    assert n == level.size and p == pytest.approx((6 + 0.5) / (level.size + 1))
    assert O.confirm_points(p, n) == 4 > O.confirm_points(*O.level_share(y[-12:], 10, 10, 0.02, half=0.3)) == 2
    # a fall the run recovered from before ``start`` is not part of the level
    assert O.level_share(y, i, i, 0.02, half=0.3, start=y.size - 12) == (pytest.approx(0.5 / 11), 10)
    # a fall to a new low after a long clean level still confirms at the next point
    clean = np.r_[climb, np.full(40, 0.6), 0.04, 0.05]
    assert O.confirm_points(*O.level_share(clean, clean.size - 2, clean.size - 2, 0.02, half=0.3)) == 2


def test_level_held_needs_the_median_above_the_half_line():
    spikes = np.r_[np.full(8, 0.12), 2.3, 0.1, 2.4, 0.12, 0.11]
    assert not O.level_held(spikes, 12, 2, half=1.1)
    plateau = np.r_[np.full(10, 0.6), 0.1, 0.05]
    assert O.level_held(plateau, 11, 2, half=0.3)


def test_three_right_answers_at_the_start_are_no_level(monkeypatch):
    """A one-prompt shaped reward at its format-only baseline, three right answers at its 6th–8th steps, then the
    baseline again (a healthy run of ``bench/stress_one_prompt.py``, rounded): the rewards before the fall are
    mostly baseline, so there was no level to collapse from. Before 2026-12-07 the level was tested only from the
    11th point, and this was a collapse confirmed at step 11."""
    y = np.array([0.13, 0.1, 0.1, 0.1, 0.11, 0.48, 0.43, 0.36, 0.16, 0.13, 0.17, 0.14, 0.1, 0.37, 0.11, 0.38, 0.13,
                  0.09, 0.13, 0.09, 0.12, 0.48, 0.21, 0.71, 0.13, 0.13, 0.15, 0.14, 0.22, 0.14])
    t = np.arange(1, y.size + 1)
    assert C.collapse_events(t, y) == []
    monkeypatch.setattr(O, "LEVEL_MIN_POINTS", O.LEVEL_POINTS)         # the rule before: no level within 10 points
    assert [(e.step, e.reported_step) for e in C.collapse_events(t, y)] == [(10, 11)]


def test_a_level_held_from_the_start_still_collapses_within_the_first_points():
    """Five rewards near 0.6 from the 2nd step, then 0.05: the median before the fall is the level, and the fall is
    reported at its point (a jump), as before the level was tested within the first points."""
    y = np.r_[0.1, 0.5, 0.6, 0.62, 0.6, 0.61, 0.05, 0.04, 0.03, 0.05, 0.02, 0.04]
    assert O.level_held(y, 6, 2, half=0.3)
    zeros = np.zeros(5)
    assert O.level_held(zeros, 3, 2, half=0.3)              # 2 rewards before the window: fewer than LEVEL_MIN_POINTS
    assert not O.level_held(zeros, 4, 2, half=0.3)          # 3: their median is the level
    ev = C.collapse_events(np.arange(1, y.size + 1), y)
    assert [(e.step, e.reported_step, e.kind) for e in ev] == [(7, 7, "jump")]


def _spiky_one_prompt(seed, n=250, base=0.12, spike=2.3):
    """A one-prompt shaped reward (format 0.12, +2.2 when the answer is right), the chance of a right answer rising
    0 → 0.6 over the run, with a little format noise: healthy by construction."""
    rng = np.random.default_rng(seed)
    p = np.clip(np.linspace(-0.1, 0.6, n), 0, 1)
    right = rng.uniform(size=n) < p
    return np.arange(1, n + 1), np.where(right, spike, base) + 0.05 * rng.standard_normal(n)


def test_spiky_one_prompt_rewards_are_rarely_collapses():
    """Two or three right answers make a 3-point-median 'peak'; the baseline after them is no collapse (the level
    was not held), a run of baseline rewards as long as such a run makes by chance is not confirmed, and a window
    with few right answers after one with many is judged by a rank test. On these 40 healthy series the rule of
    2026-12-04 reported a collapse on 37 (on 166 of 200); the rule of 2026-12-05 on 9 (29 of 200); with the trough's
    scan depth since the peak on the adaptive window (2026-12-06) on 8 (30 of 200); with the rules of the next day
    on 4 (16 of 200); with the rank test against the run's longer level too (2026-12-07) on 3 (6 of 200)."""
    hit = sum(bool([e for e in C.collapse_events(*_spiky_one_prompt(seed)) if e.kind != "pending"])
              for seed in range(40))
    assert hit <= 3


def test_a_collapse_after_spikes_became_the_level_is_still_reported():
    """The same reward once right answers are the level (97 % of rewards 2.3 after 20 at the baseline), then wrong
    from step 120 on: reported one point after the halving, as before the rule. The reward never lies below 0, so
    its floor is 0: the 2-point mean at step 120 (2.3 and 0.12: 1.21) lies just above the half line (1.18); from the
    baseline 0.12 as a floor it lay below (1.24), and the halving was step 120."""
    rng = np.random.default_rng(3)
    right = np.r_[np.zeros(20, bool), rng.uniform(size=100) < 0.97, np.zeros(20, bool)]
    y = np.where(right, 2.3, 0.12) + 0.03 * rng.standard_normal(140)
    ev = [e for e in C.collapse_events(np.arange(140), y) if e.kind != "pending" and e.step >= 120]
    assert ev and ev[0].step == 121 and ev[0].reported_step == 122 and ev[0].confirm_points == 2
    assert ev[0].floor == 0.0


def test_a_pending_halving_that_needs_more_points_warns_and_is_no_failure():
    """A fall back to a baseline the level visited often: pending with k > 2, so the status is not a failure; the
    warning names the points it takes."""
    from rlvr_dynamics.doctor.status import decide_status
    from rlvr_dynamics.runs.logs import RunLog

    y = np.r_[np.linspace(0.0, 1.0, 10), 1.0 + 0.01 * np.resize([1, -1], 60)]
    y[[-8, -4]] = 0.1                          # two of the level's last ten rewards were already that low
    y = np.r_[y, 0.1, 0.1]
    ev = C.collapse_events(np.arange(1, y.size + 1), y)
    assert ev and ev[-1].kind == "pending" and ev[-1].confirm_points > 2 and ev[-1].below < ev[-1].confirm_points
    log = RunLog(source="t", steps=np.arange(1, y.size + 1), series={"reward": y}, reward_column="reward")
    st = decide_status(log)
    assert not st.failure
    assert st.warning and f"{ev[-1].confirm_points} rewards in a row" in st.warning


def test_start_trend_p_is_mann_kendall():
    """Five rewards falling in a row: S = −10, Var S = 5·4·15/18, p = Φ(−9/√Var) (continuity-corrected); a flat or
    rising start gives 1; ties lower the variance."""
    p = O.start_trend_p(np.array([0.9, 0.8, 0.7, 0.6, 0.5]))
    assert p == pytest.approx(0.5 * math.erfc(9 / math.sqrt(5 * 4 * 15 / 18) / math.sqrt(2)))
    assert O.start_trend_p(np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert O.start_trend_p(np.array([0.5, 0.5, 0.5])) == 1.0
    ties = (4 * 3 * 13 - 2 * 1 * 9) / 18          # one pair of ties: S = −5
    assert O.start_trend_p(np.array([0.9, 0.5, 0.5, 0.1])) == pytest.approx(0.5 * math.erfc(4 / math.sqrt(ties) / math.sqrt(2)))


def test_a_fall_from_the_first_rewards_is_reported_at_the_halving():
    """A learning rate too high from step 1 on a model that already scores 0.8: the reward falls from its first
    value. A noise estimate from those few points holds the fall itself, so the Gaussian tests reported it a point
    late; the downward trend since the start (Mann–Kendall, p ≤ START_TREND_ALPHA) reports it one point after the
    2-point mean halves the start level."""
    y = np.r_[0.8, 0.7, 0.6, 0.45, 0.3, 0.2, 0.15, 0.1, 0.12, 0.08, 0.1, 0.09]
    ev = C.collapse_events(np.arange(1, y.size + 1), y, (0.0, 1.0))
    assert [(e.step, e.reported_step, e.kind) for e in ev] == [(6, 7, "confirmed")]
    assert ev[0].peak == pytest.approx(0.7) and ev[0].floor == 0.0


def test_start_level_z_is_a_two_sample_test_against_the_noise_after_the_start():
    """(m₃ − ȳ_B)/(σ̂_B·√(1/3 + 1/n_B)), σ̂_B the standard deviation of the rewards after the first three × the
    small-sample factor, at least the floor given; −∞ before two rewards follow the first three."""
    y = np.r_[0.88, 0.66, 0.05, 0.33, 0.16, 0.08, 0.14]
    after = y[3:]
    sd = float(np.std(after, ddof=1)) * O.small_sample_factor(after.size)
    want = (0.66 - after.mean()) / (sd * math.sqrt(1 / 3 + 1 / 4))
    assert O.start_level_z(y, 6, 0.66) == pytest.approx(want)
    assert O.start_level_z(y, 6, 0.66, sigma_floor=1.0) == pytest.approx((0.66 - after.mean()) / math.sqrt(1 / 3 + 1 / 4))
    assert O.start_level_z(y, 3, 0.66) == -math.inf


def test_a_noisy_fall_from_the_start_is_reported_against_the_noise_after_it():
    """A 15-point bisection trial (16 prompts × 4, rewards k/64) whose reward falls from 0.88 to about 0.15 but not
    in order (a 0.05 among the first three, a 0.33 after it): the rank trend is not significant at 0.005, but the
    start level lies more than START_LEVEL_Z standard errors (of the rewards after it) above them. Reported at the
    9th reward, confirmed by the 10th, where the run had been read 'plateaued'."""
    y = np.r_[0.88, 0.66, 0.05, 0.33, 0.16, 0.08, 0.14, 0.31, 0.09, 0.17, 0.06, 0.14, 0.11, 0.11, 0.0]
    y = np.round(y * 64) / 64
    assert O.start_trend_p(y[:9]) > O.START_TREND_ALPHA
    ev = C.collapse_events(np.arange(1, y.size + 1), y, (0.0, 1.0))
    assert [(e.kind, e.recovered_step) for e in ev] == [("confirmed", None)]
    assert (ev[0].step, ev[0].reported_step) == (9, 10) and ev[0].peak == pytest.approx(y[1])


def test_three_easy_prompts_then_three_hard_ones_are_no_fall_from_the_start():
    """One prompt × 8 completions a step (rewards k/8): 7/8, 8/8, 7/8, then 0, 0, 0 is which prompts were drawn. The
    start level lies far above the rewards after it against their (zero) spread and the 8-sample floor, but the
    level test needs at least START_LEVEL_SAMPLES completions a step; the rank trend alone judges it, and it is no
    trend. The same rewards on a grid of 64 are a fall."""
    y = np.r_[0.875, 1.0, 0.875, 0.0, 0.0, 0.0, 0.75, 0.875, 0.125, 0.0, 0.375, 0.0]
    assert O.start_level_z(y, 5, 0.875, sigma_floor=math.sqrt(0.46 * 0.54 / 8)) > O.START_LEVEL_Z
    assert O.fall_from_start(y, 5, 0.0, math.sqrt(0.46 * 0.54 / 8), samples=8) is None
    assert O.fall_from_start(y, 5, 0.0, math.sqrt(0.46 * 0.54 / 64), samples=64) is not None
    assert not [e for e in C.collapse_events(np.arange(y.size), y, (0.0, 1.0)) if e.reported_step is not None]


def test_a_one_prompt_start_above_its_next_rewards_is_no_fall_from_the_start():
    """A first prompt the model happened to solve, then rewards at its usual level: no trend, no event. Logged
    rounded to two decimals, its least common denominator is 100, which is decimals, not 100 completions a step: the
    tests that need a grid of completions stay off."""
    y = np.r_[0.88, 0.25, 0.25, 0.25, 0.12, 0.25, 0.38, 0.25, 0.12, 0.25]
    assert resolution_samples(y) == 100 and not O.on_completion_grid(100)
    assert C.collapse_events(np.arange(y.size), y, (0.0, 1.0)) == []


def test_a_model_broken_by_its_first_update_is_a_fall_from_its_first_reward():
    """16 prompts × 4 (rewards k/64): 0.95, then 0.42, 0.16, 0.08, 0.19, 0.30, … The median of the first three (0.42)
    is already part of the fall, and the run stays above half of it; the first reward alone lies START_FIRST_Z
    standard errors above the rewards after it once enough of them show their spread. Without that test: no event.
    A reward blown to 0 after its first row is reported at the first point the rule may report (step 5)."""
    y = np.round(np.r_[0.95, 0.42, 0.16, 0.08, 0.19, 0.30, 0.27, 0.31, 0.44, 0.23, 0.34, 0.31, 0.47, 0.22, 0.27]
                 * 64) / 64
    ev = C.collapse_events(np.arange(1, y.size + 1), y, (0.0, 1.0))
    assert [(e.kind, e.peak_step, e.recovered_step) for e in ev] == [("confirmed", 1, None)]
    assert ev[0].peak == y[0] and ev[0].reported_step == 13
    assert O.start_level_z(y, 11, y[0], first=1) >= O.START_FIRST_Z > O.start_level_z(y, 10, y[0], first=1)
    blown = np.r_[19 / 64, 0.0, 0.0, 1 / 64, 0.0, 0.0, 0.0, 0.0]
    ev = C.collapse_events(np.arange(1, blown.size + 1), blown, (0.0, 1.0))
    assert [(e.kind, e.step, e.reported_step) for e in ev] == [("confirmed", 4, 5)]


def test_a_log_averaged_over_ten_steps_keeps_the_first_reward_test():
    """TRL's ``logging_steps = 10`` averages 10 steps of 8 completions: rewards on a grid of 80, one factor 5, which
    is a count of completions. Decimals leave a factor 25 (two decimals: 100, three: 1000, 49/800): those stay off.
    A reward blown to 0 after its first row, logged on that grid, is reported within two points of its fall (with a
    factor 5 refused, as before 2026-12-06, it was not reported at all)."""
    assert O.on_completion_grid(80) and O.on_completion_grid(640) and O.on_completion_grid(64)
    assert not any(O.on_completion_grid(n) for n in (25, 50, 100, 800, 1000, 16))
    blown = np.r_[24 / 80, 0.0, 0.0, 1 / 80, 0.0, 0.0, 0.0, 0.0]
    assert resolution_samples(blown) == 80
    ev = C.collapse_events(np.arange(1, blown.size + 1), blown, (0.0, 1.0))
    assert [(e.kind, e.step, e.reported_step) for e in ev] == [("confirmed", 5, 6)]


def test_one_prompt_a_step_has_no_one_point_jump():
    """One prompt × 8 completions: four prompts solved, then one the model cannot do (a noisy SmolLM2 run restarted
    at its 139th step: 1, 1, 1, 1, 1, 0, 1, 0). One reward is which prompt came, not a collapse reported at the
    point; on a grid of 64 completions the same shape of fall is a jump."""
    for y in (np.r_[1.0, 1.0, 1.0, 1.0, 0.0, 0.875, 0.0, 1.0, 1.0], np.r_[1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0]):
        assert not [e for e in C.collapse_events(np.arange(1, y.size + 1), y, (0.0, 1.0)) if e.kind == "jump"]
    y = np.r_[57, 63, 58, 62, 57, 63, 58, 0, 57, 62, 58] / 64
    ev = C.collapse_events(np.arange(1, y.size + 1), y, (0.0, 1.0))
    assert [(e.kind, e.step, e.reported_step) for e in ev] == [("jump", 8, 8)]


def test_a_one_prompt_spike_at_the_start_is_no_fall_from_its_first_reward():
    """A shaped one-prompt reward (a public Unsloth log restarted at its 105th row): 25/32 once (a right answer),
    then its format reward 1/8. The rewards after the start show eighths, not a grid of 32, and 0.06125 = 49/800 is
    a decimal, not 800 completions: the first-reward test stays off, and so does every other test."""
    y = np.r_[0.78125, 0.125, 0.125, 0.125, 0.06125, 0.125, 0.125, 0.125, 0.116, 0.094, 0.125, 0.125]
    assert O.grid_shown(y[1:4], 32) == 8 and not O.on_completion_grid(800)
    assert O.fall_from_start(y, 3, 0.0, 0.08, samples=32) is None
    assert C.collapse_events(np.arange(y.size), y, (0.0, 1.0)) == []
    assert O.grid_shown(np.r_[0.0, 0.0, 1.0], 64) == 64      # 0 and 1 lie on every grid


def test_resolution_sigma_is_the_noise_of_the_fewest_samples_the_reward_can_average():
    """Rewards 1/8, 1/8, 1/8 before the point: at least 8 samples a step, √(p̄(1 − p̄)/8); the fall itself never
    sets the resolution (0/1 would be one sample). Continuous rewards, or rewards outside [0, 1], have no floor."""
    tracker = C.CollapseTracker((0.0, 1.0))
    for i, v in enumerate([0.125, 0.125, 0.125, 0.0]):
        tracker.push(i, v)
    assert tracker.resolution_sigma(3) == pytest.approx(math.sqrt(0.125 * 0.875 / 8))
    mixed = C.CollapseTracker()
    for i, v in enumerate([0.75, 0.8125, 0.5]):          # denominators 4, 16, 2: at least 16 samples
        mixed.push(i, v)
    assert mixed.resolution_sigma(3) == pytest.approx(math.sqrt(0.6875 * 0.3125 / 16))
    for values in ([0.6345501542, 0.61], [2.0, 3.5]):
        other = C.CollapseTracker()
        for i, v in enumerate(values):
            other.push(i, v)
        assert other.resolution_sigma(2) == 0.0


def test_a_one_prompt_reward_at_a_low_success_rate_is_no_collapse():
    """1 prompt × 8 completions at a 10 % success rate: rewards on a 1/8 grid that repeat (0.125 three times, then
    0). A noise estimate of 0 from the repeats made 20 of 200 such runs 'collapse'; the resolution floor (at least 8
    samples a step) makes it at most 2."""
    hits = 0
    for seed in range(200):
        y = np.random.default_rng(seed).binomial(8, 0.1, size=100) / 8
        hits += bool([e for e in C.collapse_events(np.arange(100), y, (0.0, 1.0)) if e.kind != "pending"])
    assert hits <= 2


def test_a_recovery_is_read_on_the_window_the_fall_was_significant_on():
    """noisy-smollm-lr2e5 seed 2 (1 prompt x 8, held-out 0.20 -> 0.02): after its collapse the reward sat at 0 for 150
    steps, and two solved prompts in a row (0.88, 0.5) lifted the 2-point mean over the recovery line: a "recovered"
    collapse and an `unstable` run. The fall was significant on a 15-point mean; the rise back is read on it too."""
    rng = np.random.default_rng(3)
    before = rng.binomial(8, 0.45, 80) / 8
    after = np.zeros(150)
    after[100:102] = [0.875, 0.5]
    y = np.r_[before, after]
    (ev,) = C.collapse_events(np.arange(1, y.size + 1), y, (0.0, 1.0))
    assert ev.window > 2 and ev.recovered_step is None
    back = np.r_[before, np.zeros(100), rng.binomial(8, 0.45, 60) / 8]       # the same level for 60 steps: back
    (ev,) = C.collapse_events(np.arange(1, back.size + 1), back, (0.0, 1.0))
    assert 181 < ev.recovered_step <= 181 + ev.window


@pytest.mark.parametrize("group, seed", [(6, 2), (8, 8)])
def test_a_one_prompt_shaped_reward_back_at_its_format_level_is_no_collapse(group, seed):
    """Two healthy runs of ``bench/stress_one_prompt.py`` (one prompt a step, an Unsloth-like shaped reward, the
    format learnt at step 150) that the live doctor stopped as collapsed when a confirmation read only the last ten
    rewards of the level: a fall to the format-only reward (about 1.45) two or three steps in a row after ten
    rewards that held none, from a level that visits it about one step in four."""
    assert _stress_script().score("late", group, seed) == {"stop": False, "event": False, "act": False}


def _stress_script(name: str = "stress_one_prompt.py"):
    import importlib.util

    from rlvr_dynamics.paths import REPO_ROOT

    spec = importlib.util.spec_from_file_location("stress", REPO_ROOT / "bench" / name)
    stress = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stress)
    return stress


def test_the_penalised_shaped_reward_pays_the_notebook_s_terms():
    """The penalised reward of ``bench/stress_one_prompt.py`` (Unsloth's later notebooks): 3 + 3 × 0.5 + 5 + 3.5 = 13
    for a formatted right answer, 3 + 1.5 − 2.5 − 1.5 = 0.5 for a formatted wrong one (5 when it is within 10 %),
    −3 − 4.5 = −7.5 for an unformatted reply with no answer found (−7 or −2.5 when one is found)."""
    stress = _stress_script()
    rng = np.random.default_rng(0)
    yes, no = np.ones(400, bool), np.zeros(400, bool)
    assert set(stress.penalised_reward(rng, yes, yes, 1.0)) == {13.0}
    assert set(stress.penalised_reward(rng, yes, no, 1.0)) == {0.5, 5.0}
    assert set(stress.penalised_reward(rng, no, no, 0.0)) == {-7.5, -7.0, -2.5}


@pytest.mark.parametrize("kind, group, seed", [("fast", 4, 5000), ("late", 8, 5001)])
def test_a_one_prompt_run_with_the_penalised_reward_is_not_stopped(kind, group, seed):
    """Healthy one-prompt runs with a reward from −7.5 to 13 a completion (no bounds in [0, 1], the floor from the
    run): neither stopped live, nor with a collapse event, nor told to act (180 such runs, seeds 5000–5029: 2 stops,
    0 act-now statuses; the module's docstring)."""
    assert _stress_script().score(kind, group, seed, "penalised") == {"stop": False, "event": False, "act": False}


@pytest.mark.parametrize("seed", [2001, 2003])
def test_a_collapse_of_a_summed_reward_from_where_the_run_started_is_stopped(seed):
    """``bench/stress_reward_sums.py``: a model that already scores, trained with the classic notebook sum (never
    below 0, no bounds declared) at four prompts a step, collapses at step 167 (113). With the floor read from the
    run (its lowest trailing mean, inside the level's noise) the run had no gain to lose: never reported, never
    stopped. Measured from 0, it is stopped within five steps of the fall's start, and its healthy twin is not."""
    stress = _stress_script("stress_reward_sums.py")
    r = stress.score("high-cl", 4, seed, True)
    assert r["act"] == 1 and r["stop"] is not None and 0 < r["stop"] - r["fall"] <= 5
    assert stress.score("high-cl", 4, seed, False) == {"stop": None, "act": 0, "first": None, "fall": None}


def test_a_one_prompt_start_on_easy_prompts_is_no_fall_when_its_trend_is_tested_at_every_point():
    """One prompt of 8 completions a step at about 10 % success: two easy prompts first (3/8, 3/8), then the run's
    usual rewards. On a grid of fewer than 32 completions the start trend decides alone and is tested at every
    point, so its level is shared among them: no collapse (at the plain level it was one at step 12). A fall from a
    start of 6/8 to 0 is still reported at step 7, confirmed at 8; a decimal reward keeps the plain level (the test
    above)."""
    healthy = [0.375, 0.375, 0.0, 0.25, 0.125, 0.25, 0, 0, 0, 0, 0, 0, 0]
    assert C.collapse_events(np.arange(1, 14), np.array(healthy), (0.0, 1.0)) == []
    broken = [0.75, 0.625, 0.75, 0.25, 0.125, 0, 0, 0.125] + [0.0] * 12
    ev = C.collapse_events(np.arange(1, 21), np.array(broken), (0.0, 1.0))
    assert [(e.step, e.reported_step) for e in ev] == [(7, 8)]


ONE_PROMPT_CLUSTER = [0, 2, 0, 0, 1, 4, 0, 0, 1, 1, 4, 0, 1, 1, 0, 0, 2, 0, 0, 2, 2, 3, 1, 1, 0, 0, 0, 1, 2, 0, 2, 1, 1,
                      1, 1, 2, 3, 1, 0, 0, 0, 3, 0, 0, 0, 1, 1, 1, 0, 3, 1, 0, 0, 4, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0,
                      3, 0, 2, 0, 0, 1, 0, 0, 0, 0, 2, 2, 4, 0, 0, 2, 1, 0, 2, 1, 1, 1, 2, 1, 1, 4, 0, 0, 1, 2, 0, 1, 1,
                      0, 1, 0, 2, 0, 0, 2, 0, 1, 1, 0, 1, 3, 3, 1, 0, 1, 0, 1, 2, 1, 1, 1, 0, 2, 0, 0, 0, 2, 3, 5, 1, 2,
                      4, 0, 1, 0, 0, 3, 6, 2, 1, 1, 0, 8, 3, 1, 3, 0, 2, 4, 3, 2, 7, 8, 2, 6, 7, 8, 1, 3, 0, 2, 1, 3, 2,
                      1, 1, 3, 4, 8]


def test_a_cluster_of_right_answers_is_judged_against_the_run_s_longer_level():
    """A healthy one-prompt × 8 run rising from 13 % to 40 % (logit-normal prompt difficulty): six rewards of 6–8/8
    at steps 158–163, then its usual 1–3/8. Against the ten rewards before the 8-point window (the cluster) the fall
    is significant by rank (p < 0.01) and was reported as a collapse at step 167; against the run's longer level,
    from the first reward at or above the half line, it is not."""
    y = np.array(ONE_PROMPT_CLUSTER, dtype=float) / 8
    t = np.arange(1, y.size + 1)
    assert C.collapse_events(t, y) == []
    i, w = 165, 8                      # step 166, the window the fall was tested on
    short = O._mann_whitney_below(y[i - w + 1: i + 1], y[i - w + 1 - 10: i - w + 1])
    assert short < O.RANK_ALPHA < O.rank_fall_p(y, i, w, half=0.35)
    assert O.rank_fall_p(y, i, w) == pytest.approx(short)            # no half line: the ten rewards before it only
    # the same run after a level it held: 0.7 for 40 steps, then its start level again, is a collapse
    held = np.r_[y[:120], np.full(40, 0.7) + np.tile([0.05, -0.05], 20), y[:30]]
    ev = C.collapse_events(np.arange(1, held.size + 1), held)
    assert ev and 160 <= ev[0].step <= 163
