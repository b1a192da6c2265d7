"""The deciding statistic of P1-C8's composite rule (rlvr_dynamics.book.grpo_p1_slow_start)."""
from __future__ import annotations

import pytest

from rlvr_dynamics.book import claims
from rlvr_dynamics.book.grpo_p1_slow_start import c8_decision, relative_margin

RULES = {"dbic_worst": {"name": "dbic_worst", "op": "<", "bound": -10.0, "stat": "s"},
         "slow_start_worst": {"name": "slow_start_worst", "op": "<=", "bound": 0.05, "stat": "s"}}


def _rows(*pairs):
    return [{"d_bic": d, "slow_start": s} for d, s in pairs]


def test_relative_margin():
    assert relative_margin(RULES["dbic_worst"], -30.0) == pytest.approx(2.0)
    assert relative_margin(RULES["slow_start_worst"], 0.1) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="op must be"):
        relative_margin({"name": "x", "op": ">=", "bound": 1.0}, 0.5)


def test_pass_is_decided_by_the_component_closest_to_its_bound():
    d = c8_decision(_rows((-50.0, 0.01), (-12.0, 0.02)), RULES, "PASS")   # margins: dBIC 0.2, slow start 0.6
    assert d["rule"]["name"] == "dbic_worst" and d["measured"] == -12.0
    assert d["other"][1] == 0.02 and d["other"][2] == pytest.approx(0.6)


def test_fail_is_decided_by_the_component_that_misses_by_the_most():
    d = c8_decision(_rows((-50.0, 0.2), (-40.0, 0.08)), RULES, "FAIL")    # slow start misses: margin -3
    assert d["rule"]["name"] == "slow_start_worst" and d["measured"] == 0.2
    assert not claims.rule_holds(d["rule"], d["measured"])
    d = c8_decision(_rows((5.7, 0.06)), RULES, "PARTIAL")                  # dBIC -1.57 beats slow start -0.2
    assert d["rule"]["name"] == "dbic_worst" and d["measured"] == 5.7


def test_a_verdict_that_contradicts_the_rule_raises():
    with pytest.raises(ValueError, match="disagrees"):
        c8_decision(_rows((-50.0, 0.2)), RULES, "PASS")
    with pytest.raises(ValueError, match="at least one"):
        c8_decision([], RULES, "FAIL")


def test_rules_are_read_from_claims_yml():
    for name in RULES:
        r = claims.rule("P1-C8", name)
        assert r["op"] == RULES[name]["op"] and r["bound"] == RULES[name]["bound"]
