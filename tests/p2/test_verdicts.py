"""Tests for rlvr_dynamics.p2.verdicts: the deciding part of a composite rule agrees with claims.rule_holds."""
import pytest

from rlvr_dynamics.book import claims
from rlvr_dynamics.p2.verdicts import Part, deciding_part


def test_the_first_failing_part_decides_else_the_first_part():
    le = {"name": "err", "op": "<=", "bound": 1e-9}
    ci = {"name": "order", "op": "ci_within", "bound": [0.9, 1.1]}
    ok, part = deciding_part([Part(le, 1e-12), Part(ci, 1.0, (0.95, 1.05))], claims.rule_holds)
    assert ok and part.rule["name"] == "err"
    ok, part = deciding_part([Part(le, 1e-12), Part(ci, 1.0, (0.85, 1.05))], claims.rule_holds)
    assert not ok and part.rule["name"] == "order" and part.ci == (0.85, 1.05)
    assert claims.rule_holds(part.rule, part.measured, part.ci) is False
    with pytest.raises(ValueError):
        deciding_part([], claims.rule_holds)
