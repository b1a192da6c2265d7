"""Reader-facing tables and sentences (``rlvr_dynamics.book.display``)."""
from __future__ import annotations

import math

import pytest

from rlvr_dynamics.book import display


def test_table_rounds_aligns_and_prints_cis_and_units():
    md = display.table_markdown([{"run": "G=4", "r2": 0.918234, "ci": (0.12345, 0.5), "n": 12345, "ok": True},
                                 {"run": "G=16", "r2": float("nan"), "ci": None, "n": 3, "ok": False}],
                                {"run": "run", "r2": "R² (three-phase)", "ci": "95 % CI", "n": "steps", "ok": "wins"})
    lines = md.splitlines()
    assert lines[0] == "| run | R² (three-phase) | 95 % CI | steps | wins |"
    assert lines[1] == "|:---|---:|:---|---:|:---|"
    assert lines[2] == "| G=4 | 0.918 | [0.123, 0.5] | 12\u202f345 | yes |"
    assert lines[3] == "| G=16 | – | – | 3 | no |"


def test_table_small_and_negative_numbers_and_caption():
    md = display.table_markdown([{"x": -1.6e-10}], digits=2, caption="Max error")
    assert md.startswith("**Max error**") and "−1.6 × 10⁻¹⁰" in md
    assert display.table_markdown([{"x": math.inf}]).endswith("| ∞ |")


def test_table_errors_name_the_argument():
    with pytest.raises(ValueError, match="rows must not be empty"):
        display.table_markdown([])
    with pytest.raises(ValueError, match="digits must be an integer"):
        display.table_markdown([{"a": 1}], digits=0)
    with pytest.raises(KeyError, match=r"columns \['b'\]"):
        display.table_markdown([{"a": 1}], {"b": "B"})


def test_say_is_markdown():
    assert display.say("The law wins on  3 of 4\nruns.").data == "The law wins on 3 of 4 runs."
    with pytest.raises(ValueError, match="must not be empty"):
        display.say("  ")
