"""The sharpening testbed (no GRPO training here): committed run ids, the answer mixture, answer copies, the
deeper tiny sizes and the new RunConfig fields."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rlvr_dynamics.grpo import tasks
from rlvr_dynamics.grpo.config import ADDED_FIELD_DEFAULTS, RunConfig
from rlvr_dynamics.grpo.model_sizes import TINY_SIZES, TinySize
from rlvr_dynamics.paths import REPO_ROOT

COMMITTED = sorted((REPO_ROOT / "data" / "runs").glob("*/config.json"))


def test_committed_runs_keep_their_ids_and_warm_start_keys():
    """Every committed run's recorded config still hashes to its folder's id, and its warm start to its key."""
    pytest.importorskip("torch")
    from rlvr_dynamics.grpo.runner import warm_start_spec

    assert COMMITTED, "no committed runs found"
    for path in COMMITTED:
        info = json.loads(path.read_text())
        cfg = RunConfig.from_dict(info["config"])
        assert cfg.run_id() == info["run_id"] == path.parent.name, path
        if cfg.is_tiny and "warm_start_key" in info.get("model", {}):
            # a run made before a warm-start version bump hashes with the version it was made at
            version = info["model"].get("warm_start_version", 1)
            assert warm_start_spec(cfg).key(version) == info["model"]["warm_start_key"], path


def test_first_sizes_unchanged_and_deeper_sizes_exist():
    assert TINY_SIZES["tiny-s"] == TinySize(32, 2, 2, 64)
    assert TINY_SIZES["tiny-m"] == TinySize(64, 2, 4, 128)
    assert TINY_SIZES["tiny-l"] == TinySize(128, 3, 4, 256)
    deep = [name for name, s in TINY_SIZES.items() if s.num_hidden_layers >= 4]
    assert len(deep) >= 2


def test_added_fields_enter_the_hash_only_when_set():
    base = RunConfig()
    for field, default in ADDED_FIELD_DEFAULTS.items():
        assert getattr(base, field) == default, field
        assert field not in base.hashed_fields()
    changed = RunConfig(answer_copies=2, max_completion_length=8, gap_alignment_every=5)
    assert changed.hashed_fields()["answer_copies"] == 2 and changed.hashed_fields()["gap_alignment_every"] == 5
    assert changed.run_id() != base.run_id()
    mix = RunConfig(model="tiny-m4", warm_start="mixture")
    assert mix.hashed_fields()["warm_start"] == "mixture"


@pytest.mark.parametrize("kw,match", [
    (dict(warm_start="sharpen"), r"warm_start must be one of \('threshold', 'mixture'\)"),
    (dict(warm_start="mixture", model="smollm2-135m"), r"warm_start must be 'threshold' for model 'smollm2-135m'"),
    (dict(warm_start="mixture", warm_start_correct_frac=0.0), r"warm_start_correct_frac must be in \(0.0, 1.0\)"),
    (dict(warm_start="mixture", warm_start_correct_frac=0.9, warm_start_difficulty_factor=0.1),
     r"warm_start_correct_frac=0.9 .*q_max"),
    (dict(warm_start_difficulty_factor=1.5), r"warm_start_difficulty_factor must be in \(0.0, 1.0\]"),
    (dict(warm_start_steps=10), r"warm_start_steps must be an integer in \[100,"),
    (dict(answer_copies=0), r"answer_copies must be an integer in \[1, 32\]"),
    (dict(answer_copies=3), r"max_completion_length must be >= 11 \(answer_copies=3 copies of up to 3 characters"),
    (dict(gap_alignment_every=0), r"gap_alignment_every must be an integer in \[1,"),
    (dict(lora_rank=-1), r"lora_rank must be an integer in \[0, 1024\]"),
    (dict(warmup_ratio=1.0), r"warmup_ratio must be in \[0.0, 1.0\)"),
])
def test_new_fields_fail_clearly(kw, match):
    with pytest.raises(ValueError, match=match):
        RunConfig(**kw)


def test_the_warmup_ratio_reaches_trl_as_a_share_of_the_steps(tmp_path):
    """transformers 5 reads a float warmup_steps < 1 as the share of the steps (its warmup_ratio is gone)."""
    pytest.importorskip("trl")
    from rlvr_dynamics.grpo.runner import grpo_args

    cfg = RunConfig(name="w", max_steps=300, lr_scheduler="cosine", warmup_ratio=0.1)
    assert grpo_args(cfg, tmp_path, "cpu").get_warmup_steps(300) == 30
    assert grpo_args(cfg.replace(warmup_ratio=0.0), tmp_path, "cpu").get_warmup_steps(300) == 0


def test_repeated_answers_and_helpers():
    assert tasks.repeat_answer("57", 3) == "57,57,57"
    probs = tasks.add_problems(20, seed=0, digits=2, answer_copies=3)
    plain = tasks.add_problems(20, seed=0, digits=2)
    assert [p.prompt for p in probs] == [p.prompt for p in plain]  # the prompts do not depend on the copies
    for p, q in zip(probs, plain):
        assert p.answer == ",".join([q.answer] * 3)
        assert tasks.score_exact(p.answer, p.answer) == 1.0
        wrong = ",".join([q.answer, q.answer, str(int(q.answer) + 1)])
        assert tasks.score_exact(wrong, p.answer) == 0.0  # every copy counts
    assert tasks.carries(17, 85) == 2 and tasks.carries(10, 20) == 0 and tasks.carries(95, 5) == 2
    assert tasks.carries(45, 15) == 1
    for a in range(0, 100, 7):
        for b in range(0, 100, 11):
            expect = int(a % 10 + b % 10 >= 10) + int((a // 10 + b // 10 + (a % 10 + b % 10 >= 10)) >= 10)
            assert tasks.carries(a, b) == expect
    assert tasks.near_misses(57) == [58, 56] and tasks.near_misses(3) == [4, 2] and tasks.near_misses(90) == [91, 99]
    assert tasks.operands("17+85=") == (17, 85)
    assert [tasks.difficulty(a, b, 2) for a, b in [(49, 49), (50, 0), (0, 99), (50, 50)]] == [0, 1, 1, 2]
    with pytest.raises(ValueError, match="prompt"):
        tasks.operands("17-85=")


@pytest.mark.parametrize("copies", [1, 3])
def test_answer_mixture_probabilities(copies):
    mix = tasks.AnswerMixture(correct_frac=0.2, difficulty_factor=0.4, digits=2, copies=copies)
    # the mean of q over the training distribution is correct_frac (exact on the normalising sample; close on others)
    prompts = [p.prompt for p in tasks.add_problems(4000, seed=5, digits=2)]
    q = np.array([mix.success_probability(p) for p in prompts])
    assert abs(q.mean() - 0.2) < 0.01
    # difficulty varies: each level multiplies q by difficulty_factor
    by = {c: mix.success_probability(p) for p in prompts for c in [tasks.difficulty(*tasks.operands(p), 2)]}
    assert by[1] / by[0] == pytest.approx(0.4) and by[2] / by[1] == pytest.approx(0.4)
    assert by[0] > by[1] > by[2]
    texts, probs = mix.options("17+85=")
    assert texts == ["102", "103", "101"]
    assert sum(probs) == pytest.approx(1.0)
    assert probs[0] ** copies == pytest.approx(mix.success_probability("17+85="))
    # sampled targets: exact rate q, log-probabilities as stated
    rng = np.random.default_rng(0)
    draws = [mix.sample("17+85=", rng) for _ in range(4000)]
    exact = np.mean([t == tasks.repeat_answer("102", copies) for t, _ in draws])
    qp = mix.success_probability("17+85=")
    assert abs(exact - qp) < 4 * math.sqrt(qp * (1 - qp) / 4000)
    lookup = dict(zip(texts, probs))
    for text, logp in draws[:50]:
        assert logp == pytest.approx(sum(math.log(lookup[c]) for c in text.split(",")))


@pytest.mark.trains
def test_mixture_warm_start_converges_on_a_small_problem(tmp_path, monkeypatch):
    """Short mixture warm start of tiny-s on 1-digit sums: the excess loss falls and the info is complete."""
    pytest.importorskip("torch")
    monkeypatch.setenv("RLVR_DYNAMICS_CACHE", str(tmp_path))
    from rlvr_dynamics.grpo.tiny_model import WarmStart, warm_start

    # a short schedule: not converged, only checked for its bookkeeping (three checks, the excess loss falling
    # between the first and the last; was 300 steps with a check every 100, the same checks at twice the cost)
    spec = WarmStart("tiny-s", digits=1, mode="mixture", correct_frac=0.3, difficulty_factor=0.5, max_steps=150,
                     check_every=50, batch_size=64, eval_size=64, target_low=0.0, target_high=1.0,
                     max_excess_loss=1.0)
    path, info = warm_start(spec)
    assert (path / "config.json").exists() and info["steps"] == 150 and len(info["history"]) == 3
    excess = [h[2] for h in info["history"]]
    assert excess[-1] < excess[0]
    assert 0.0 <= info["initial_success"] <= 1.0 and set(info["by_difficulty"]) <= {"0", "1", "2"}
    assert info["expected_success"] == pytest.approx(
        np.mean([spec.mixture().success_probability(p.prompt)
                 for p in tasks.heldout_problems(64, digits=1, seed=1)]))
    assert warm_start(spec)[1] == info  # cached
    assert spec.key() != WarmStart("tiny-s", digits=1).key()


def test_unusable_warm_start_is_refused():
    pytest.importorskip("torch")
    from rlvr_dynamics.grpo.tiny_model import WarmStart, check_warm_start

    spec = WarmStart("tiny-m4", mode="mixture")
    check_warm_start({"spec": spec.__dict__, "problems": []})
    with pytest.raises(ValueError, match=r"warm start tiny-m4 .* is unusable: did not converge"):
        check_warm_start({"spec": dict(spec.__dict__), "problems": ["did not converge: excess loss 0.3"]})


def test_pilot_rule_on_known_curves():
    from rlvr_dynamics.grpo.pilot import MAX_STEPS_TO_90, choose_learning_rate, pilot_result

    k = np.arange(1, 301)
    # a noiseless saturating exponential: r0, the rise and the 90 % step follow in closed form
    r = 0.2 + 0.7 * (1 - np.exp(-k / 30.0))
    p = pilot_result(3e-4, k, r)
    assert p.r0 == pytest.approx(np.mean(r[:10]))
    assert p.rise == pytest.approx(r[-10:].mean() - p.r0, abs=1e-12)  # the 10-step mean peaks at the end
    s = np.convolve(r, np.ones(10) / 10, mode="valid")  # trailing mean at steps 10 … 300
    assert p.steps_to_90 == 10 + int(np.argmax(s >= p.r0 + 0.9 * p.rise))
    assert not p.collapsed and p.qualifies
    slow = pilot_result(1e-4, k, 0.2 + 0.5 * k / 300)  # linear: 90 % of the rise only near step 270
    assert slow.steps_to_90 > MAX_STEPS_TO_90 and not slow.qualifies
    crash = pilot_result(1e-3, k, np.where(k < 80, 0.2 + 0.6 * k / 80, 0.8 - 0.7 * np.minimum(1, (k - 80) / 40)))
    assert crash.collapsed and not crash.qualifies
    flat = pilot_result(1e-3, k, np.full(300, 0.2) + 0.01 * np.sin(k))
    assert flat.rise < 0.1 and not flat.qualifies
    assert choose_learning_rate([p, slow, crash]) == (3e-4, "largest qualifying learning rate")
    assert choose_learning_rate([slow, crash])[0] == 1e-4  # the fallback: learns, does not collapse
    assert choose_learning_rate([crash, flat])[0] is None
    with pytest.raises(ValueError, match="rewards"):
        pilot_result(1e-3, k[:5], r[:5])


def test_pilot_rule_thresholds_per_file_and_early_stop_from_the_largest_rate(tmp_path):
    """A pilot file's ``pilot:`` section sets the thresholds; the choice stands once every rate not yet run is
    smaller than a qualifying one, and not before."""
    from rlvr_dynamics.grpo.pilot import PilotRule, choose_learning_rate, evaluate_pilot, pilot_result

    k = np.arange(1, 151)
    r = 0.1 + 0.3 * (1 - np.exp(-k / 40.0))  # 90 % of the rise near step 95 (10-step trailing mean)
    strict = pilot_result(1e-5, k, r, PilotRule(max_steps_to_90=60))
    loose = pilot_result(1e-5, k, r, PilotRule(max_steps_to_90=120))
    assert strict.steps_to_90 == loose.steps_to_90 and 60 < loose.steps_to_90 <= 120
    assert loose.qualifies and not strict.qualifies
    assert not pilot_result(1e-5, k, r, PilotRule(min_rise=0.5)).learns
    assert choose_learning_rate([loose], missing_rates=[3e-6])[0] == 1e-5          # smaller rates need not run
    assert choose_learning_rate([loose], missing_rates=[3e-5])[0] is None          # a larger rate could still win
    assert "incomplete" in choose_learning_rate([strict], missing_rates=[3e-6])[1]  # nothing qualified yet
    # collapse judged on held-out accuracy (is_collapsed: after < 0.5 x before) instead of the noisy reward curve
    noisy = r + np.where(np.arange(150) % 20 < 7, -0.3, 0.0)  # seven-step dips: detect_collapse fires
    held = PilotRule(max_steps_to_90=120, collapse="heldout")
    assert pilot_result(1e-5, k, noisy).collapsed
    assert not pilot_result(1e-5, k, noisy, held, heldout=(0.2, 0.6)).collapsed
    assert pilot_result(1e-5, k, noisy, held, heldout=(0.2, 0.09)).collapsed
    with pytest.raises(ValueError, match="heldout"):
        pilot_result(1e-5, k, r, held)
    for bad, match in (({"max_steps_to_90": 5}, "max_steps_to_90"), ({"min_rise": 0}, "min_rise"),
                       ({"steps": 3}, "unknown pilot setting"), ({"collapse": "loss"}, "collapse")):
        with pytest.raises(ValueError, match=match):
            PilotRule.from_dict(bad)
    cfg = tmp_path / "pilot.yml"
    cfg.write_text("pilot: {max_steps_to_90: 100}\nbase: {name: pp, model: tiny-s, max_steps: 150}\n"
                   "grid: {learning_rate: [3.0e-5, 1.0e-5]}\n")
    out = evaluate_pilot(cfg, runs_dir=tmp_path / "runs")["tiny-s"]
    assert out["learning_rate"] is None and len(out["missing"]) == 2


def test_mixed_precision_field():
    cfg = RunConfig(name="x", mixed_precision="bf16")
    assert cfg.run_id() != RunConfig(name="x").run_id()
    assert "mixed_precision" not in RunConfig(name="x").hashed_fields()  # old runs keep their ids
    with pytest.raises(ValueError, match=r"mixed_precision must be one of \('auto', 'bf16', 'no'\)"):
        RunConfig(name="x", mixed_precision="fp16")
    from rlvr_dynamics.grpo.runner import use_bf16

    assert use_bf16(cfg, "cpu") and not use_bf16(RunConfig(name="x"), "cpu")
    assert not use_bf16(RunConfig(name="x", mixed_precision="no"), "cuda")


def test_per_copy_mixture_fixes_each_copy_and_powers_the_whole_answer():
    """per_copy: every copy is right with q (independent of the number of copies); the answer with q ** copies."""
    for copies in (1, 4, 32):
        mix = tasks.AnswerMixture(correct_frac=0.95, difficulty_factor=1.0, digits=2, answer_length=3,
                                  copies=copies, per_copy=True)
        texts, probs = mix.options("17+85=")
        assert texts[0] == "102" and probs[0] == pytest.approx(0.95)
        assert mix.success_probability("17+85=") == pytest.approx(0.95 ** copies)
    rng = np.random.default_rng(1)
    mix = tasks.AnswerMixture(correct_frac=0.9, difficulty_factor=1.0, digits=2, answer_length=3, copies=8,
                              per_copy=True)
    copies = np.array([[c == "102" for c in mix.sample("17+85=", rng)[0].split(",")] for _ in range(3000)])
    assert abs(copies.mean() - 0.9) < 4 * math.sqrt(0.09 / copies.size)
    # independent copies: the whole answer is right at the product rate
    assert abs(copies.all(axis=1).mean() - 0.9 ** 8) < 4 * math.sqrt(0.43 * 0.57 / 3000)


def test_per_copy_run_config_rules():
    from rlvr_dynamics.grpo.config import RunConfig

    base = dict(model="tiny-m4", digits=2, answer_length=3, warm_start="mixture", warm_start_per_copy=True,
                warm_start_correct_frac=0.95, warm_start_difficulty_factor=1.0, warm_start_answer_copies=32)
    cfg = RunConfig(**base, answer_copies=4, max_completion_length=15)
    assert cfg.run_id() != RunConfig(**base, answer_copies=2, max_completion_length=7).run_id()
    with pytest.raises(ValueError, match="max_completion_length.*exactly 15"):
        RunConfig(**base, answer_copies=4, max_completion_length=16)
    with pytest.raises(ValueError, match="warm_start_answer_copies"):
        RunConfig(**{**base, "warm_start_answer_copies": 2}, answer_copies=4, max_completion_length=15)
    with pytest.raises(ValueError, match="warm_start"):
        RunConfig(**{**base, "warm_start": "threshold"}, answer_copies=4, max_completion_length=15)
    with pytest.raises(ValueError, match="answer_length"):
        RunConfig(**{**base, "answer_length": 0}, answer_copies=4, max_completion_length=15)
    # one warm start (32 copies) serves every length
    from rlvr_dynamics.grpo.runner import warm_start_spec

    keys = {warm_start_spec(RunConfig(**base, answer_copies=k, max_completion_length=4 * k - 1)).key()
            for k in (1, 2, 32)}
    assert len(keys) == 1
