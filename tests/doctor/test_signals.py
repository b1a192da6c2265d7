"""Source column names → standard signals (doctor.signals): the first name a log has, per trainer."""
from __future__ import annotations

import numpy as np
import pytest

from rlvr_dynamics.doctor import signals as S
from rlvr_dynamics.runs.logs import RunLog


def _log(**series):
    n = len(next(iter(series.values())))
    return RunLog("x", np.arange(n), {k: np.asarray(v, float) for k, v in series.items()}, "reward")


def test_each_trainer_name_maps_to_its_standard_signal():
    y = [0.1, 0.2, 0.3, 0.4]
    for source, standard in (("entropy", "entropy"), ("actor/entropy", "entropy"), ("policy_entropy", "entropy"),
                             ("actor/ppo_kl", "kl"), ("objective/kl", "kl"), ("actor/grad_norm", "grad_norm"),
                             ("actor/pg_clipfrac", "clip"), ("response_length/clip_ratio", "clipped_ratio"),
                             ("completions/mean_length", "length"), ("response_length/mean", "length"),
                             ("frac_reward_zero_std", "zero_std"), ("val/test_score", "eval"),
                             ("format_accuracy", "format_accuracy")):
        name, values = S.signal(_log(reward=y, **{source: y}), standard)
        assert name == source and np.array_equal(values, y), (source, standard)


def test_every_name_the_loader_knows_reaches_the_detectors():
    """runs.logs.DIAGNOSTIC_COLUMNS (what the loader and the precursors read) and the doctor's signal tables name the
    same columns: a CS336-style log's token_entropy / approx_kl / clip_fraction reach every detector."""
    from rlvr_dynamics.runs.logs import DIAGNOSTIC_COLUMNS

    same = {"entropy": "entropy", "kl": "kl", "grad_norm": "grad_norm", "clip_ratio": "clip",
            "response_length": "length", "clipped_ratio": "clipped_ratio", "format_accuracy": "format_accuracy",
            "frac_reward_zero_std": "zero_std"}
    for concept, standard in same.items():
        missing = set(DIAGNOSTIC_COLUMNS[concept]) - set(S.SIGNALS[standard])
        assert not missing, (standard, missing)
    y = [0.1, 0.2, 0.3, 0.4]
    for source, standard in (("token_entropy", "entropy"), ("approx_kl", "kl"), ("clip_fraction", "clip")):
        assert S.signal(_log(reward=y, **{source: y}), standard)[0] == source


def test_the_first_name_in_the_table_wins_and_too_few_values_do_not_count():
    log = _log(reward=[0, 1, 2, 3], entropy=[np.nan, np.nan, 1, 1], **{"actor/entropy": [1, 2, 3, 4]})
    assert S.signal(log, "entropy")[0] == "actor/entropy"        # `entropy` has 2 finite values (< 3)
    assert S.signal(log, "reward")[0] == "reward"
    assert S.signal(log, "kl") == (None, None)


def test_sub_rewards_sum_into_format_and_correctness():
    log = _log(reward=[0, 1, 2], **{"rewards/match_format_exactly": [1, 1, 1], "rewards/xml_count": [0, 1, 0],
                                    "rewards/correctness_reward": [0, 2, 2]})
    name, values = S.signal(log, "format")
    assert name == "rewards/match_format_exactly + rewards/xml_count" and list(values) == [1, 2, 1]
    assert S.signal(log, "correctness")[0] == "rewards/correctness_reward"


def test_an_unknown_signal_is_refused():
    with pytest.raises(ValueError, match="unknown signal"):
        S.signal(_log(reward=[0, 1, 2]), "temperature")


def test_a_new_evaluation_is_a_new_eval_step_not_a_row_after_a_gap():
    """The project's metrics.csv repeats the last evaluation on every row with its ``eval_step``. A row without one
    (another logger's row in between) made the repeat after it a new evaluation, so one evaluation counted many
    times and its mean of three had no noise: 31 of 130 healthy development runs, with such a row after every fifth,
    read ``hacking suspected``."""
    nan = np.nan
    eval_step = [nan, 10, 10, nan, 10, 20, 20, nan, nan, 20, 30]
    e = [nan, 0.5, 0.5, nan, 0.5, 0.6, 0.6, nan, nan, 0.6, 0.55]
    log = _log(reward=[0.1] * len(e), eval_reward=e, eval_step=eval_step)
    assert S.evaluation_rows(log, np.asarray(e, float)).tolist() == [1, 5, 10]
