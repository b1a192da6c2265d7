"""The relative margin of P1-C8's one-sided rules, and the shared rule's binding part agrees with it."""
from __future__ import annotations

import pytest

from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts import grpo_p1 as checks
from rlvr_dynamics.verdicts.grpo_p1_slow_start import relative_margin

RULES = {name: claims.rule("P1-C8", name) for name in ("dbic_worst", "slow_start_worst")}


def test_rules_restate_the_thresholds_of_the_criterion():
    v8 = claims.criterion("P1-C8")["criterion"]["values"]
    assert (RULES["dbic_worst"]["op"], RULES["dbic_worst"]["bound"]) == ("<", v8["dbic"])
    assert (RULES["slow_start_worst"]["op"], RULES["slow_start_worst"]["bound"]) == ("<=", v8["slope_frac"])


def test_relative_margin():
    assert relative_margin(RULES["dbic_worst"], -30.0) == pytest.approx(2.0)
    assert relative_margin(RULES["slow_start_worst"], 0.1) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="op must be"):
        relative_margin({"name": "x", "op": ">=", "bound": 1.0}, 0.5)
    with pytest.raises(ValueError, match="non-zero bound"):
        relative_margin({"name": "x", "op": "<", "bound": 0.0}, 0.5)


@pytest.mark.parametrize("worst_bic, worst_slow, want", [
    (-12.0, 0.02, "dbic_worst"),          # PASS: dBIC margin 0.2 < slow-start margin 0.6
    (-50.0, 0.2, "slow_start_worst"),     # FAIL: slow start misses by 3 bounds
    (5.7, 0.06, "dbic_worst"),            # both miss: dBIC by 1.57 bounds, slow start by 0.2
])
def test_the_shared_binding_part_is_the_smallest_relative_margin(worst_bic, worst_slow, want):
    parts = [("dbic_worst", worst_bic, -10.0, "<", "dBIC"), ("slow_start_worst", worst_slow, 0.05, "<=", "slope")]
    name, measured, _ = checks.binding(parts)
    margins = {"dbic_worst": relative_margin(RULES["dbic_worst"], worst_bic),
               "slow_start_worst": relative_margin(RULES["slow_start_worst"], worst_slow)}
    assert name == want == min(margins, key=margins.get)
    assert claims.rule_holds(RULES[name], measured) == (margins[name] > 0)
