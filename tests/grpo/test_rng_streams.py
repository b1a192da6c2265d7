"""Named random streams: each purpose draws from its own stream, so adding one never moves another."""
from __future__ import annotations

import pytest

from rlvr_dynamics.grpo import rng


def test_streams_are_deterministic_distinct_and_32_bit():
    seeds = {p: rng.stream_seed(1, p) for p in rng.STREAMS}
    assert seeds == {p: rng.stream_seed(1, p) for p in rng.STREAMS}
    assert len(set(seeds.values())) == len(rng.STREAMS)
    assert all(0 <= s < 2 ** 32 for s in seeds.values())
    assert rng.stream_seed(1, "sampling") != rng.stream_seed(2, "sampling")


def test_adding_a_stream_leaves_the_others_draws_unchanged(monkeypatch):
    before = {p: rng.numpy_stream(7, p).random(5).tolist() for p in rng.STREAMS}
    monkeypatch.setattr(rng, "STREAMS", ("a_new_purpose", *rng.STREAMS))   # a new feature, listed first
    after = {p: rng.numpy_stream(7, p).random(5).tolist() for p in before}
    assert after == before
    assert rng.numpy_stream(7, "a_new_purpose").random(5).tolist() not in before.values()


def test_stream_errors_name_the_argument():
    with pytest.raises(ValueError, match="purpose 'dropout'"):
        rng.stream_seed(1, "dropout")
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        rng.stream_seed(-1, "sampling")
