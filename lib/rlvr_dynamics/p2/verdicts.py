"""P2: the deciding statistic of a composite pass rule.

A claim's PASS rule often joins several parts ("identity error <= 1e-9 **and** order within 1 +- 0.1 **and** ...",
``book/claims.yml``, one machine-readable rule per part). An evidence row records one ``measured`` value with one
rule, and its verdict must agree with it (PASS: the rule holds; PARTIAL / FAIL: it does not). :func:`deciding_part`
picks that value: the first part whose rule fails (the binding part), else the part named first (the claim's
headline statistic). The rule test is passed in (``rlvr_dynamics.book.claims.rule_holds``): the theory layer imports
nothing from the book layer.

>>> from rlvr_dynamics.p2.verdicts import Part, deciding_part
>>> le = {"name": "err", "op": "<=", "bound": 1e-9}
>>> ge = {"name": "frac", "op": ">=", "bound": 1.0}
>>> holds = lambda rule, m, ci: m <= rule["bound"] if rule["op"] == "<=" else m >= rule["bound"]
>>> ok, part = deciding_part([Part(le, 2e-12, unit="error"), Part(ge, 0.9, unit="fraction")], holds)
>>> ok, part.rule["name"], part.measured
(False, 'frac', 0.9)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["Part", "deciding_part"]


@dataclass(frozen=True)
class Part:
    """One part of a composite rule: the rule (from :func:`rlvr_dynamics.book.claims.rule`), its statistic and unit."""

    rule: dict
    measured: Any
    ci: Any = None
    unit: str = ""


def deciding_part(parts: Sequence[Part], rule_holds: Callable[[dict, Any, Any], bool]) -> tuple[bool, Part]:
    """``(every part holds, the deciding part)``: the first part for which ``rule_holds(rule, measured, ci)`` is
    False, else the first part."""
    if not parts:
        raise ValueError("deciding_part needs at least one part")
    failing = [p for p in parts if not rule_holds(p.rule, p.measured, p.ci)]
    return (not failing), (failing[0] if failing else parts[0])
