"""Tasks, rewards, tokenizer and RunConfig of rlvr_dynamics.grpo (no training here)."""
from __future__ import annotations

import pytest

from rlvr_dynamics.grpo import tasks
from rlvr_dynamics.grpo.config import RunConfig, expand
from rlvr_dynamics.grpo.tokenizer import char_tokenizer, vocab_size


@pytest.mark.parametrize("completion,answer,exact,last,units,shaped", [
    ("42", "42", 1.0, 1.0, 1.0, 2.5),
    (" 42 ", "42", 1.0, 1.0, 1.0, 2.5),
    ("420", "42", 0.0, 0.0, 0.0, 0.5),
    ("4 2", "42", 0.0, 0.0, 1.0, 0.0),
    ("2", "42", 0.0, 0.0, 1.0, 0.5),
    ("12+30=42", "42", 0.0, 1.0, 1.0, 2.0),
    ("The answer is -17.", "-17", 0.0, 1.0, 0.0, 2.0),
    ("", "42", 0.0, 0.0, 0.0, 0.0),
    ("0042", "0042", 1.0, 1.0, 1.0, 2.5),
    ("042", "0042", 0.0, 1.0, 1.0, 2.5),
    ("-17", "-17", 1.0, 1.0, 1.0, 2.5),
])
def test_reward_functions_exact_on_known_strings(completion, answer, exact, last, units, shaped):
    assert tasks.score_exact(completion, answer) == exact
    assert tasks.score_last_number(completion, answer) == last
    assert tasks.score_units_digit(completion, answer) == units
    assert tasks.score_shaped(completion, answer) == shaped == \
        tasks.SHAPED_FORMAT * (shaped in (0.5, 2.5)) + tasks.SHAPED_CORRECT * last


def test_trl_reward_function_handles_both_formats():
    f = tasks.make_reward_function("exact")
    assert f(prompts=["1+1=", "2+2="], completions=["2", "5"], answer=["2", "4"]) == [1.0, 0.0]
    conv = [[{"role": "assistant", "content": "4"}]]
    assert f(prompts=[[{"role": "user", "content": "2+2"}]], completions=conv, answer=["4"]) == [1.0]
    with pytest.raises(ValueError, match="reward"):
        tasks.make_reward_function("fuzzy")


def test_generators_are_seeded_and_answers_correct():
    a = tasks.add_problems(50, seed=3, digits=2)
    assert a == tasks.add_problems(50, seed=3, digits=2)
    assert a != tasks.add_problems(50, seed=4, digits=2)
    for p in a:
        x, y = p.prompt.rstrip("=").split("+")
        assert int(p.answer) == int(x) + int(y)
    padded = tasks.add_problems(20, seed=0, digits=2, answer_length=6)
    assert all(len(p.answer) == 6 and p.answer.lstrip("0") == str(int(p.answer)).lstrip("0") for p in padded)
    with pytest.raises(ValueError, match="answer_length"):
        tasks.add_problems(5, seed=0, digits=3, answer_length=2)


def test_eval_families_fixed_and_disjoint_from_training():
    held = tasks.heldout_problems(64)
    train = tasks.train_problems(2000, seed=0, heldout=held)
    assert not {p.prompt for p in held} & {p.prompt for p in train}
    assert len(tasks.EVAL_FAMILIES) == 8
    for fam in tasks.EVAL_FAMILIES:
        probs = tasks.eval_problems(fam, 8)
        assert probs == tasks.eval_problems(fam, 8)
        assert all(p.answer.lstrip("-").isdigit() for p in probs), fam
    for p in tasks.eval_problems("sub", 30):
        x, y = p.prompt.rstrip("=").split("-")
        assert int(p.answer) == int(x) - int(y) >= 0
    with pytest.raises(ValueError, match="family"):
        tasks.eval_problems("aime", 4)


def test_char_tokenizer_roundtrip():
    tok = char_tokenizer()
    assert len(tok) == vocab_size() == 99
    text = "Calculate 12 + -3 = ?"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert len(ids) == len(text)
    assert tok.decode(ids + [tok.eos_token_id, tok.pad_token_id], skip_special_tokens=True) == text


def test_shaped_terms_are_two_trl_reward_functions_summing_to_the_shaped_reward():
    """TRL sums the reward functions into ``reward`` and logs each as ``rewards/<name>/mean``: the two terms of
    ``shaped_terms`` sum to ``shaped`` on every completion, and their names read as a format and a correctness term."""
    from rlvr_dynamics.doctor.signals import sub_rewards
    from rlvr_dynamics.runs.logs import RunLog
    import numpy as np

    fmt, corr = tasks.make_reward_functions("shaped_terms")
    completions, answers = ["42", "41", "It is 42", "", "-3"], ["42", "42", "42", "42", "-3"]
    kw = dict(prompts=["x"] * 5, completions=completions, answer=answers)
    total = [a + b for a, b in zip(fmt(**kw), corr(**kw))]
    assert total == [tasks.score_shaped(c, a) for c, a in zip(completions, answers)] == [2.5, 0.5, 2.0, 0.0, 2.5]
    assert [f.__name__ for f in tasks.make_reward_functions("exact")] == ["reward_exact"]
    log = RunLog("t", np.arange(1, 4), {"reward": np.ones(3), f"rewards/{fmt.__name__}/mean": np.ones(3),
                                          f"rewards/{corr.__name__}/mean": np.ones(3)}, "reward")
    assert sub_rewards(log) == (["rewards/reward_correct/mean"], ["rewards/reward_format/mean"])


def test_penalised_terms_pay_and_penalise_like_the_later_notebooks():
    """``penalised_terms``: a format term of ±1 and an answer term of 3 / −1.5 / −2 (right, wrong, none), two TRL
    reward functions whose sum is :func:`score_penalised`; an untrained model's chatty wrong reply scores −2.5."""
    fmt, ans = tasks.make_reward_functions("penalised_terms")
    completions, answers = ["42", "41", "It is 42", "", "It is 7", "-3"], ["42"] * 5 + ["-3"]
    kw = dict(prompts=["x"] * 6, completions=completions, answer=answers)
    assert fmt(**kw) == [1.0, 1.0, -1.0, -1.0, -1.0, 1.0] and ans(**kw) == [3.0, -1.5, 3.0, -2.0, -1.5, 3.0]
    total = [a + b for a, b in zip(fmt(**kw), ans(**kw))]
    assert total == [tasks.score_penalised(c, a) for c, a in zip(completions, answers)] == [4.0, -0.5, 2.0, -3.0,
                                                                                             -2.5, 4.0]
    assert [f.__name__ for f in (fmt, ans)] == ["reward_format", "reward_correct"]


@pytest.mark.parametrize("field,value", [
    ("num_generations", 1), ("learning_rate", 0.0), ("learning_rate", -1e-3), ("momentum", 1.0),
    ("loss_type", "ppo"), ("optimizer", "lion"), ("reward", "fuzzy"), ("model", ""), ("max_steps", 0),
    ("answer_length", 2), ("steps_per_generation", 0), ("temperature", 0.0), ("device", "tpu"),
    ("name", "a b"), ("eval_reward", "units_digit"), ("digits", 7),
])
def test_run_config_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=rf"RunConfig\.{field}"):
        RunConfig(**{field: value})


def test_run_config_hash_and_sweeps():
    a = RunConfig()
    assert a.run_id() == RunConfig().run_id()
    assert a.run_id() != RunConfig(seed=1).run_id()
    assert a.config_hash() == RunConfig(notes="other text").config_hash()
    assert RunConfig(steps_per_generation=4, num_iterations=2).refresh_interval == 8
    runs = expand({"base": {"max_steps": 10}, "grid": {"model": ["tiny-s", "tiny-m"], "seed": [0, 1]},
                   "runs": [{"learning_rate": 0.1}]})
    assert [(r.model, r.seed) for r in runs[:4]] == [("tiny-s", 0), ("tiny-s", 1), ("tiny-m", 0), ("tiny-m", 1)]
    assert runs[4].learning_rate == 0.1 and all(r.max_steps == 10 for r in runs)
    with pytest.raises(ValueError, match="unknown RunConfig field"):
        expand({"base": {"lr": 1.0}})
