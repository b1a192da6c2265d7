"""The relative margin of a one-sided pass rule: how the binding part of a composite rule is chosen.

P1-C8's PASS rule (``book/claims.yml``) is composite: the worst ΔBIC over the in-scope runs must be below ``dbic``
(rule ``dbic_worst``) **and** the worst slow start R'(0)/max R' at most ``slope_frac`` (``slow_start_worst``). An
evidence row records one deciding statistic, the binding part: the one with the smallest relative margin
m = (bound − measured)/|bound| (positive on the PASS side, negative when violated), i.e. for a PASS the part closest
to its bound and otherwise the part that misses it by the most.
:func:`rlvr_dynamics.book.grpo_p1_checks.binding` applies this margin for every GRPO page (notebook
``grpo_p1_slow_start`` among them); :func:`relative_margin` states it for one ``<`` / ``<=`` rule of the ledger.
"""
from __future__ import annotations


def relative_margin(rule: dict, measured: float) -> float:
    """(bound − measured)/|bound| for a ``<``/``<=`` rule (``claims.rule``): positive on the PASS side, negative when
    violated. ValueError for another op or a zero bound."""
    if rule["op"] not in ("<", "<="):
        raise ValueError(f"rule {rule.get('name')!r}: op must be '<' or '<=', got {rule['op']!r}")
    bound = float(rule["bound"])
    if bound == 0:
        raise ValueError(f"rule {rule.get('name')!r}: a relative margin needs a non-zero bound")
    return (bound - float(measured)) / abs(bound)
