"""Issue 35: a failure status is what the reward did, tested against the run's own noise; a precursor alone warns."""
from __future__ import annotations

import numpy as np
import pytest

from rlvr_dynamics.doctor import precursors as pre
from rlvr_dynamics.doctor import warning_rule as wr
from rlvr_dynamics.doctor.divergence import MIN_ROWS, detect_divergence
from rlvr_dynamics.doctor.status import ACTIONS, FAILURE_STATES, crash_z, decide_status
from rlvr_dynamics.doctor.detectors.collapse import collapse_events
from rlvr_dynamics.runs.logs import RunLog


def _log(reward, **series) -> RunLog:
    steps = np.arange(1, len(reward) + 1)
    return RunLog("synthetic", steps, {"reward": np.asarray(reward, float), **{k: np.asarray(v, float)
                                                                              for k, v in series.items()}}, "reward")


def _rise(n=200, lo=0.4, hi=0.95):
    t = np.arange(n)
    return hi + (lo - hi) * np.exp(-t / (n / 5))


def test_a_precursor_alone_warns_and_never_sets_a_failure_status():
    """The public verl run of the issue: the reward rises cleanly while the completions run into the length cap and
    their length doubles. The length-cap share crosses 50 % at the all-time high: a warning at most, never
    ``collapsing``."""
    n = 200
    r = _rise(n) + np.random.default_rng(0).normal(0, 0.01, n)
    length = np.linspace(300, 900, n)
    clipped = np.clip(np.linspace(0.0, 0.8, n), 0, 1)
    st = decide_status(_log(r, **{"completions/mean_length": length, "completions/clipped_ratio": clipped}), (0, 1))
    assert not st.failure, st
    # the same signals while the reward falls past the precursor's share of its gain (0.95 → 0.52 of a gain of
    # 0.95: 45 %): the reward confirms, collapsing
    r2 = r.copy()
    assert pre.REWARD_FALL < 0.45
    r2[-12:] = np.linspace(r[-13], 0.52, 12)
    st2 = decide_status(_log(r2, **{"completions/mean_length": length, "completions/clipped_ratio": clipped}), (0, 1))
    assert st2.state in ("collapsing", "collapsed"), st2


@pytest.mark.parametrize("seed", range(6))
def test_a_one_prompt_run_whose_dips_are_its_own_noise_is_not_unstable(seed):
    """1 prompt × 8 completions per step at a success rate near 0.45 → 0.7: five-point dips below half the gain
    happen in the noise alone; none is ``unstable``, none is a failure."""
    rng = np.random.default_rng(seed)
    p = _rise(300, 0.45, 0.7)
    r = rng.binomial(8, p) / 8
    st = decide_status(_log(r), (0, 1))
    assert st.state not in FAILURE_STATES, st


def test_a_crash_deeper_than_the_noise_allows_is_unstable_and_its_z_says_why():
    rng = np.random.default_rng(1)
    r = np.clip(_rise(240, 0.2, 0.8) + rng.normal(0, 0.02, 240), 0, 1)
    r[150:165] = 0.1 + rng.normal(0, 0.02, 15)
    log = _log(r)
    st = decide_status(log, (0, 1))
    assert st.state == "unstable", st
    ev = [e for e in collapse_events(log.steps, r, (0, 1)) if e.recovered_step is not None][-1]
    z, bar = crash_z(log.steps, r, ev)
    assert z > bar > 3


def test_nan_rewards_at_the_end_are_a_divergence_not_a_plateau():
    r = list(_rise(60)) + [np.nan] * 5
    loss = [0.1] * 60 + [np.nan] * 5
    st = decide_status(_log(r, loss=loss, learning_rate=[1e-5] * 65), (0, 1))
    assert st.state == "diverged" and st.step == 61 and "non-finite" in st.evidence
    assert st.action == ACTIONS["diverged"]


def test_a_hard_task_that_starts_at_zero_is_not_diverged_until_the_policy_breaks():
    n = 40
    zero = np.zeros(n)
    calm = dict(frac_reward_zero_std=np.ones(n), entropy=np.full(n, 0.8), **{"completions/clipped_ratio": zero})
    assert detect_divergence(_log(zero, **calm), (0, 1)) is None
    broken = dict(calm, entropy=np.r_[0.8, 0.5, np.full(n - 2, 0.01)])
    div = detect_divergence(_log(zero, **broken), (0, 1))
    assert div is not None and div.kind == "blown up" and "entropy" in div.sentence()
    # fewer rows at the floor than the window: not yet
    assert detect_divergence(_log(zero[:MIN_ROWS - 1], **{k: v[:MIN_ROWS - 1] for k, v in broken.items()}),
                             (0, 1)) is None


def test_a_broken_policy_is_judged_against_its_level_before_the_reward_reached_the_floor():
    """noisy-smollm-1p seed 3 (healthy: held-out 0.20 -> 0.56): its first completion is 8 tokens long, then 9-18 while
    the format is learnt and the reward scores; its reward then sits at 0 for 50 steps at one prompt a step. Against
    the first row the length 'doubled' (8 -> 16) and the live doctor stopped the run as diverged; against its level
    before the floor (15) it did not move. A doubling after the reward reached the floor is a broken policy, and so
    is a learning rate too high from step 1 (the reward at the floor from the start: the first row is the level)."""
    n = 70
    reward = np.r_[0.0, 0.12, 0.0, 0.0, 0.0, 0.0, 0.0, 0.75, 0.25, 0.62, 0.75, np.zeros(n - 11)]
    length = np.r_[8.0, 9.4, 10.4, 13.6, 15.5, 18.5, 18.5, 13.8, 15.5, 15.1, 13.4, np.full(n - 11, 16.1)]
    zero_std = np.r_[np.full(11, 0.5), np.ones(n - 11)]
    calm = dict(frac_reward_zero_std=zero_std, entropy=np.full(n, 0.4), **{"completions/mean_length": length})
    assert detect_divergence(_log(reward, **calm), (0, 1)) is None
    doubled = dict(calm, **{"completions/mean_length": np.r_[length[:11], np.full(n - 11, 31.0)]})
    div = detect_divergence(_log(reward, **doubled), (0, 1))
    assert div is not None and "mean completion length 13.8 → 31" in div.sentence()      # the 11 rows' median
    at_once = dict(frac_reward_zero_std=np.ones(n), entropy=np.r_[0.17, np.full(n - 1, 0.8)],
                   **{"completions/mean_length": np.r_[13.0, np.full(n - 1, 3.8)]})
    div = detect_divergence(_log(np.zeros(n), **at_once), (0, 1))
    assert div is not None and "mean completion length 13 → 3.8" in div.sentence() and "entropy 0.17" in div.sentence()


def test_a_few_solved_prompts_after_the_fall_do_not_hide_a_blow_up():
    """noisy-smollm-lr3e5 (1 prompt x 8, lr 3e-5): the reward fell from ~0.3 to 0 with completions at the length cap,
    but one prompt in ~40 was still solved, so no 30-step window was all at the floor for 150 steps. Up to a tenth
    of the window's rows may lie above the floor once the reward fell there from a level above it; a hard task at
    the floor from its start, scoring now and then, gets no such allowance, and four rows above it in 31 are too
    many."""
    rng = np.random.default_rng(0)
    before = rng.binomial(8, 0.3, 80) / 8
    after = np.zeros(60)
    after[[10, 35, 50]] = [0.625, 0.375, 0.5]             # three in the last 31 rows: 50 and 35 (and 10 is older)
    reward = np.r_[before, after]
    n = reward.size
    zero_std = np.where(reward == 0, 1.0, 0.0)
    cap = np.r_[np.full(80, 0.2), np.full(60, 0.97)]
    broken = dict(frac_reward_zero_std=zero_std, **{"completions/clipped_ratio": cap})
    div = detect_divergence(_log(reward, **broken), (0, 1))
    assert div is not None and div.kind == "blown up" and div.numbers["off_floor"] == 2
    assert "2 of them above it" in div.sentence() and "groups at the floor" in div.sentence()
    # the fall itself is a collapse that the solved prompts after it do not lift back (a recovery is read on the
    # event's own window): the status is that collapse, with the blow-up as its aftermath
    status = decide_status(_log(reward, **broken), (0, 1))
    assert status.state == "collapsed" and "97 % of completions at the length cap" in status.evidence
    # a hard task: at the floor from the start with the same few solved prompts, the same broken policy
    hard = np.r_[np.zeros(80), after]
    assert detect_divergence(_log(hard, **dict(broken, frac_reward_zero_std=np.where(hard == 0, 1.0, 0.0))),
                             (0, 1)) is None
    # four rows above the floor among the last 31 (31 // 10 = 3 allowed): not at the floor
    more = reward.copy()
    more[[-3, -6]] = 0.25
    assert detect_divergence(_log(more, **dict(broken, frac_reward_zero_std=np.where(more == 0, 1.0, 0.0))),
                             (0, 1)) is None
    # … and at TRL's logging_steps=10 the window is 5 rows: none may lie above the floor
    def every_ten(last5):
        coarse = np.r_[np.full(8, 0.3), last5]
        series = {"reward": coarse, "frac_reward_zero_std": np.where(coarse == 0, 1.0, 0.0),
                  "completions/clipped_ratio": np.r_[np.full(8, 0.2), np.full(5, 0.97)]}
        return RunLog("synthetic", np.arange(1, coarse.size + 1) * 10, series, "reward")

    assert detect_divergence(every_ten([0.0, 0.0, 0.125, 0.0, 0.0]), (0, 1)) is None
    assert detect_divergence(every_ten([0.0] * 5), (0, 1)) is not None


def test_a_one_prompt_entropy_is_judged_against_a_level_of_as_many_rows_as_the_window():
    """noisy-smollm-lr2e5 (healthy: held-out 0.20 -> 0.42 at steps 100, 200 and 300): its training reward sat near 0
    for ~60 steps with a prompt solved now and then, then came back. Its per-row entropy moves between 0.02 and 0.6;
    the median of the three rows before the stretch (0.026) made the window's 0.11 a '×4.3 blow-up' and the live
    doctor stopped it as diverged. Against the median of as many rows as the window has, the entropy did not move."""
    rng = np.random.default_rng(1)
    n = 120
    reward = np.r_[rng.binomial(8, 0.4, 80) / 8, np.zeros(40)]
    reward[[90, 100, 110]] = [1.0, 0.25, 0.375]
    entropy = np.exp(rng.normal(np.log(0.07), 0.8, n))
    entropy[77:80] = 0.025                         # three quiet rows just before the stretch
    series = dict(frac_reward_zero_std=np.where(reward == 0, 1.0, 0.0), entropy=entropy)
    assert detect_divergence(_log(reward, **series), (0, 1)) is None
    blown = dict(series, entropy=np.r_[entropy[:80], 10 * entropy[80:]])      # the same run whose entropy did blow up
    div = detect_divergence(_log(reward, **blown), (0, 1))
    assert div is not None and "token entropy" in div.sentence()


def test_the_length_cap_warns_alone_only_while_the_reward_is_not_rising():
    n = 120
    clipped = np.r_[np.zeros(60), np.full(60, 0.9)]
    rising = _log(_rise(n, 0.2, 0.9), **{"completions/clipped_ratio": clipped})
    flat = _log(np.full(n, 0.5) + np.random.default_rng(0).normal(0, 0.01, n),
                **{"completions/clipped_ratio": clipped})
    for log, warns in ((rising, False), (flat, True)):
        cross = pre.crossings(log, (0, 1))
        warn, _ = wr.warning_flags(cross, n)
        assert cross["length_cap"].any()
        assert bool(warn[60:].any()) is warns


def test_an_entropy_rise_is_shown_but_never_counted_toward_the_warning():
    """Three leading signals at once warn whatever the reward; an entropy rise (or blow-up) is not one of them (it
    crossed on 4 of 36 healthy real LLM logs, at any threshold up to 3×), so with two others it does not warn,
    while a third counted signal does; beside a reward fall it is no leading signal either."""
    n = 10
    on, off = np.r_[np.zeros(5, bool), np.ones(5, bool)], np.zeros(n, bool)
    two = dict(length_shift=on, kl_jump=on, entropy_rise=on, entropy_blowup=on, reward_fall=off)
    assert not wr.warning_flags(two, n)[0].any()
    assert wr.warning_flags(dict(two, zero_std_share=on), n)[0][5:].all()
    assert not wr.warning_flags(dict(reward_fall=on, entropy_rise=on, entropy_blowup=on), n)[0].any()
    assert wr.signal_role("entropy_rise") == wr.signal_role("entropy_blowup") == "not used by the warning (shown only)"
    # and a warning names only what counted toward it
    assert wr.signals_on(dict(two, zero_std_share=on), 7) == ["length_shift", "kl_jump", "zero_std_share"]


def test_the_length_cap_share_of_eight_completions_is_read_against_its_noise():
    """1 prompt × 8 completions: a share swinging around 35 % (0 of 8 one step, 5 of 8 the next) is not completions
    running into the cap; the same share climbing from 5 % to 70 % is, and so is an exact share (a large batch)
    jumping from 0 to 0.9."""
    rng = np.random.default_rng(3)
    for seed in range(8):
        noisy = np.random.default_rng(seed).binomial(8, 0.35, 300) / 8
        assert not pre.length_cap(noisy).any(), seed
    climb = rng.binomial(8, np.r_[np.full(60, 0.05), np.linspace(0.05, 0.7, 30), np.full(60, 0.7)]) / 8
    assert pre.length_cap(climb)[60:].any() and not pre.length_cap(climb)[:60].any()
    jump = np.r_[np.zeros(30), np.full(30, 0.9)]
    assert np.flatnonzero(pre.length_cap(jump))[0] <= 32


@pytest.mark.parametrize("seed", range(4))
def test_a_noisy_run_that_trends_is_not_noise_only(seed):
    """The issue's logging_steps=1 run: 1 prompt × 8 completions rising 0.69 → 0.86 over 150 steps. Its noise ceiling
    is below 0.2, but its whole-run slope is significant: never ``noise only``; pure noise at 0.75 still is."""
    rng = np.random.default_rng(seed)
    p = np.linspace(0.69, 0.86, 150)
    st = decide_status(_log(rng.binomial(8, p) / 8), (0, 1))
    assert st.state in ("rising", "plateaued"), st
    flat = decide_status(_log(np.random.default_rng(seed + 10).binomial(8, 0.75, 150) / 8), (0, 1))
    assert flat.state == "noise only", flat


def test_a_one_prompt_reward_at_a_low_success_rate_does_not_lose_its_start():
    """1/8 three times, then 0 five times: one completion of eight, not a fall. Judged against the Bernoulli noise of
    the start at that resolution (√(p(1 − p)/8) ≈ 0.12), it is no divergence; the same fall from 0.75 (6/8) is one
    only after the floor held MIN_STEPS steps (one prompt a step), and at once at 64 completions a step."""
    def log(y):
        return RunLog(source="t", steps=np.arange(1, len(y) + 1), series={"reward": np.asarray(y, float)},
                      reward_column="reward")

    assert detect_divergence(log([0.125] * 3 + [0.0] * 5), (0.0, 1.0)) is None
    # at one prompt a step three easy prompts, then five hard ones, is which prompts came (a healthy run at 10 %
    # success did that): the floor must hold as long as a blow-up's window, MIN_STEPS = 30 steps
    assert detect_divergence(log([0.75] * 3 + [0.0] * 5), (0.0, 1.0)) is None
    assert detect_divergence(log([0.75] * 3 + [0.0] * 30), (0.0, 1.0)) is None
    blown = detect_divergence(log([0.75] * 3 + [0.0] * 31), (0.0, 1.0))       # 31 rows span 30 steps
    assert blown is not None and blown.kind == "blown up" and blown.step == 4
    # a success rate of 64 completions a step has its start's level in its first rewards: five rows tell
    many = detect_divergence(log([45 / 64, 49 / 64, 47 / 64] + [0.0] * 5), (0.0, 1.0))
    assert many is not None and many.kind == "lost its start"


def test_a_collapse_that_broke_the_policy_names_the_blow_up_once_in_its_evidence():
    """A model broken by its first update (16 prompts × 4: 19/64, then 0 with no spread and the entropy gone) is
    ``collapsed``: the collapse says more (the level it fell from), and the blow-up follows it in the evidence, from
    its step on, the step written once."""
    n = 40
    r = np.r_[19 / 64, np.zeros(n - 1)]
    log = _log(r, frac_reward_zero_std=np.r_[0.5, np.ones(n - 1)], entropy=np.r_[0.8, np.full(n - 1, 0.01)])
    div = detect_divergence(log, (0, 1))
    st = decide_status(log, (0, 1))
    assert st.state == "collapsed" and st.step == 4 and st.numbers["diverged"]["step"] == div.step == 2
    assert "; since step 2 (39 logged rows) with no spread left in any group, and the policy broke: " in st.evidence
    assert "since step 2 2" not in st.evidence and st.evidence.count("since step") == 1


def test_a_reward_on_an_exact_line_prints_a_bounded_slope_t():
    """A reward exported smoothed (or synthetic) can lie on a near-exact line: its slope t is ~1e15. The evidence
    says "slope t ≥ 100", never a 16-digit number; an ordinary t keeps its value."""
    st = decide_status(_log(np.linspace(0.2, 0.65, 150)), (0, 1))
    assert st.state == "rising" and "slope t ≥ 100 > 2" in st.evidence, st.evidence
    rng = np.random.default_rng(0)
    st = decide_status(_log(np.linspace(0.2, 0.65, 150) + rng.normal(0, 0.05, 150)), (0, 1))
    assert st.state == "rising" and "slope t = " in st.evidence and "≥ 100" not in st.evidence, st.evidence


def test_a_run_diverged_at_a_floor_it_never_left_is_told_to_check_the_task_as_well_as_the_learning_rate():
    """A reward at its floor from the first row (or scoring now and then below a level) with a broken policy is a
    task too hard from the start or a learning rate that broke the policy at once; lowering the learning rate alone
    would not help the first (dev run ``noisy-smollm-d3``: three-digit sums the model never solved). A run that fell
    to the floor from a level keeps the learning-rate action."""
    from rlvr_dynamics.doctor.status import NEVER_LEFT_FLOOR_ACTION
    n = 60
    broken = dict(frac_reward_zero_std=np.ones(n), entropy=np.r_[0.8, np.full(n - 1, 0.02)])
    st = decide_status(_log(np.zeros(n), **broken), (0, 1))
    assert st.state == "diverged" and st.numbers["never_left_floor"] and st.action == NEVER_LEFT_FLOOR_ACTION
    assert "lower the learning rate" in st.action and "easier prompts" in st.action
    rng = np.random.default_rng(0)
    fell = np.r_[rng.binomial(8, 0.4, 30) / 8, np.zeros(n)]
    fell_log = _log(fell, frac_reward_zero_std=np.r_[np.full(30, 0.3), np.ones(n)],
                    entropy=np.r_[np.full(30, 0.8), np.full(n, 0.02)])
    st = decide_status(fell_log, (0, 1))
    assert st.state in ("diverged", "collapsed"), st
    assert st.action == ACTIONS[st.state] and not st.numbers.get("never_left_floor", False)
