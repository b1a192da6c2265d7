"""The run-doctor corpus: label rules on curves with known answers, the simulator's closed forms, the splits."""
import math

import numpy as np
import pytest

from doctor_eval import corpus as C
from rlvr_dynamics.runs.noise import noise_class, reward_scale


@pytest.mark.parametrize("zeta", [2.5, 1.0, 0.4, -0.1])
def test_unit_response_starts_at_rest(zeta):
    """u(0) = 1 and u'(0) = 0 in every regime (the oscillator started from rest, P1 spec §3.3)."""
    omega0 = 0.3
    h = 1e-5
    u = C.unit_response(np.array([0.0, h, 2 * h]), zeta, omega0)
    assert u[0] == pytest.approx(1.0, abs=1e-12)
    assert (u[1] - u[0]) / h == pytest.approx(0.0, abs=1e-3)
    # the ODE itself: ü + 2ζω0 u̇ + ω0² u = 0 at t = 5 by central differences
    t = 5.0
    d = 1e-3
    um, u0, up = C.unit_response(np.array([t - d, t, t + d]), zeta, omega0)
    acc, vel = (up - 2 * u0 + um) / d ** 2, (up - um) / (2 * d)
    assert acc + 2 * zeta * omega0 * vel + omega0 ** 2 * u0 == pytest.approx(0.0, abs=1e-5)


def test_hindsight_collapse_finds_the_halving_step():
    """A clean rise to 0.8, then a drop to 0 at step 120: the step where the reward falls below half its gain."""
    t = np.arange(1, 201)
    y = np.where(t < 120, 0.8, 0.0) + 0.0
    step, ends = C.hindsight_collapse(t, y, (0.0, 1.0))
    assert ends
    assert step == 120 - 1 + 1 or abs(step - 120) <= 1


def test_hindsight_collapse_ignores_a_recovered_dip():
    t = np.arange(1, 201)
    y = np.full(t.size, 0.8)
    y[100:110] = 0.0                 # a dip that recovers: not a collapse for good
    assert C.hindsight_collapse(t, y, (0.0, 1.0)) == (None, False)


def test_hindsight_collapse_needs_a_significant_gain():
    rng = np.random.default_rng(0)
    y = 0.3 + 0.05 * rng.standard_normal(300)   # flat noise: no gain to lose
    assert C.hindsight_collapse(np.arange(300), y, None)[0] is None


def test_noise_class_edges():
    t = np.arange(400)
    smooth = 0.5 + 0.001 * np.sin(t)            # σ/scale well below 0.03 on bounds (0, 1)
    assert noise_class(smooth, (0.0, 1.0)) == "smooth"
    rng = np.random.default_rng(1)
    noisy = rng.binomial(1, 0.5, 400).astype(float)   # one 0/1 sample per step: σ ≈ 0.5
    assert noise_class(noisy, (0.0, 1.0)) == "noisy"
    assert reward_scale(noisy, (0.0, 4.0)) == 4.0


@pytest.mark.parametrize("regime", C.SIM_REGIMES)
def test_simulated_run_labels_and_determinism(regime):
    a = C.simulate_run(regime, 7)
    b = C.simulate_run(regime, 7)
    np.testing.assert_array_equal(a.log.reward, b.log.reward)
    assert a.outcome in C.OUTCOMES
    expected = {"growing": "unstable", "collapse": "collapse"}.get(regime)
    if expected:
        assert a.outcome == expected
    elif regime in ("reward_hacking", "advantage_degeneracy", "policy_concentration"):
        assert a.outcome == "failure" and a.failure_mode == regime
    else:
        assert a.outcome == "healthy"
    assert np.all(np.diff(a.log.steps) > 0)
    for name, v in a.log.series.items():
        assert v.shape == a.log.steps.shape, name


def test_simulated_growing_oscillation_grows():
    """The true level of a growing run: the amplitude in the last period exceeds the first period's by ≥ 2×."""
    for i in range(5):
        r = C.simulate_run("growing", np.random.default_rng(np.random.SeedSequence([0, 4, i])))
        level = r.meta["true_level"]
        q = level.size // 4
        assert np.ptp(level[-q:]) > 2 * np.ptp(level[:q])


def test_simulated_collapse_ends_low():
    for i in range(5):
        r = C.simulate_run("collapse", np.random.default_rng(np.random.SeedSequence([0, 5, i])))
        level = r.meta["true_level"]
        assert level[-1] < 0.5 * level.max()


def test_simulated_splits_use_separate_seed_families(monkeypatch):
    """Three runs per regime (the seeding does not depend on the counts: ``SeedSequence([family, regime, i])``); the
    whole corpus's simulated part is built by the benchmark."""
    from doctor_eval import simulated

    monkeypatch.setattr(simulated, "SIM_COUNTS", {regime: 3 for regime in C.SIM_REGIMES})
    dev = C.simulated_runs("dev")
    test = C.simulated_runs("test")
    assert len(dev) == len(test) == 3 * len(C.SIM_REGIMES)
    assert {r.name.rsplit("-", 1)[0] for r in dev} == {f"sim-f0-{regime}" for regime in C.SIM_REGIMES}
    assert not any(np.array_equal(a.log.reward, b.log.reward) for a, b in zip(dev, test) if a.regime == b.regime
                   and a.log.reward.size == b.log.reward.size)


def test_load_corpus_splits_by_source_and_checks_arguments(monkeypatch):
    import functools

    # the committed runs are read once for both split versions (only the split assignment differs between them)
    monkeypatch.setattr(C, "project_runs", functools.lru_cache(maxsize=None)(C.project_runs))
    runs = C.load_corpus(sources=("bisection", "project", "project-fail"), include_shared=False)
    by_family = {}
    for r in runs:
        by_family.setdefault((r.source, r.name.rsplit("-", 1)[0].split("-lr")[0]), set()).add(r.split)
    assert all(len(s) == 1 for s in by_family.values()), "a family sits in both splits"
    assert {r.split for r in runs if r.source == "project-fail"} == {"test"}
    v1 = C.load_corpus(sources=("project",), include_shared=False, version=1)
    assert {r.split for r in v1} == {"dev", "test"}
    assert {r.split for r in runs if r.source == "project"} == {"dev"}   # v2 moved the v1 test families to dev
    with pytest.raises(ValueError, match="version"):
        C.load_corpus(version=5)
    bis = [r for r in runs if r.source == "bisection"]
    assert len(bis) > 500 and {r.outcome for r in bis} == {"healthy", "collapse"}
    with pytest.raises(ValueError, match="split"):
        C.load_corpus(split="train")
    with pytest.raises(ValueError, match="sources"):
        C.load_corpus(sources=("nope",))


def test_lead_time_population_rule():
    r = C.simulate_run("collapse", 3)
    steps, _ = r.log.reward_curve()
    if r.collapse_step is None:
        assert not r.in_lead_time_population
    else:
        assert r.in_lead_time_population == (int(np.searchsorted(steps, r.collapse_step)) >= 30)
    assert not math.isnan(r.meta["wander_sd"])


def test_v3_adds_the_course_logs_to_dev_and_moves_the_shared_logs_to_dev():
    from rlvr_dynamics.paths import SHARED_DIR

    if not (SHARED_DIR / "grpo_logs_cs336" / "index.json").exists():
        pytest.skip("../shared/grpo_logs_cs336 is not beside this checkout")
    runs = C.load_corpus(sources=("cs336", "shared"))
    cs = [r for r in runs if r.source == "cs336"]
    assert len(cs) == 35 and {r.split for r in runs} == {"dev"}
    collapses = [r for r in cs if r.outcome == "collapse"]
    assert len(collapses) == 7 and all(r.collapse_step is not None for r in collapses)
    assert sum(r.outcome == "healthy" for r in cs) == 25
    assert all(r.split == "test" for r in C.load_corpus(sources=("shared",), version=2))


def test_surrogates_move_whole_rows_a_few_places_and_never_repeat_one():
    """A surrogate (doctor_eval.surrogates) is the source's own rows: each at most once, each moved by less than the
    neighbourhood plus a block, every column with its row; the reward keeps its residual about the local trend and
    stays in the source's range; same seed, same surrogate."""
    from doctor_eval import surrogates as S
    from rlvr_dynamics.runs.logs import RunLog

    n = 200
    rng = np.random.default_rng(0)
    reward = np.clip(np.linspace(0.1, 0.8, n) + 0.1 * rng.standard_normal(n), 0, 1)
    row = np.arange(n, dtype=float)
    row[0] = np.nan                      # a column with a gap moves as it is (no trend correction): it names the row
    log = RunLog(source="t", steps=np.arange(1, n + 1), series={"reward": reward, "row": row}, reward_column="reward")
    half = max(S.NEIGHBOURHOOD_MIN, round(S.NEIGHBOURHOOD * n))
    for seed in range(30):
        new, drawn = S.surrogate_log(log, np.random.default_rng(seed), "t")
        rows = new.series["row"][np.isfinite(new.series["row"])]
        assert np.all(np.diff(new.steps) > 0)
        assert new.reward.min() >= reward.min() - 1e-12 and new.reward.max() <= reward.max() + 1e-12
        if drawn["averaged"] == 1:
            assert len(set(rows.tolist())) == rows.size                       # no row twice
            assert np.all(np.abs(rows - np.sort(rows)) <= 2 * half + 2 * S.BLOCK_MAX)   # moved a few places
            assert new.reward.size >= S.MIN_ROWS
        else:
            assert new.steps[0] == drawn["averaged"]
    a, _ = S.surrogate_log(log, np.random.default_rng(7), "t")
    b, _ = S.surrogate_log(log, np.random.default_rng(7), "t")
    assert np.array_equal(a.reward, b.reward)
    with pytest.raises(ValueError, match="at least"):
        S.surrogate_log(RunLog(source="t", steps=np.arange(5), series={"reward": np.ones(5)}, reward_column="reward"),
                        np.random.default_rng(0), "t")


def test_surrogate_split_is_by_source_log():
    from doctor_eval import surrogates as S

    assert all(S.source_split(name, "shared") == "test" for name in S.TEST_SOURCES)
    assert S.source_split("unsloth_nb_qwen25_3b_gsm8k", "shared") == "dev"
    with pytest.raises(ValueError, match="split"):
        S.surrogate_runs("train", [])
    runs = C.load_corpus(sources=("surrogate",))
    if runs:       # ../shared is beside this checkout
        by_source = {}
        for r in runs:
            by_source.setdefault(r.meta["of"], set()).add(r.split)
        assert all(len(s) == 1 for s in by_source.values()) and {r.outcome for r in runs} == {"healthy"}
