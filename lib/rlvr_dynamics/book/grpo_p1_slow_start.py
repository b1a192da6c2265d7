"""P1-C8 on the heavy-ball SGD runs (notebook ``grpo_p1_slow_start``): which part of the composite rule decides.

The PASS rule of P1-C8 (``book/claims.yml``) is composite: on every in-scope curve ΔBIC(three-phase − single
exponential) < ``dbic`` **and** R'(0)/max R' ≤ ``slope_frac``, i.e. the worst ΔBIC (the largest) and the worst slow
start (the largest fraction) must both meet their bounds, the rules ``dbic_worst`` and ``slow_start_worst``. The row
records one deciding statistic: the binding component, the one with the smallest relative margin to its bound
(negative when violated): m_ΔBIC = (bound − worst ΔBIC)/|bound|, m_slow = (bound − worst fraction)/|bound|. For a
PASS that is the component closest to its bound; for a FAIL or PARTIAL the one that misses it by the most. The
verdict itself comes from :func:`rlvr_dynamics.book.grpo_p1_checks.c8_verdict` (shared with the other GRPO notebooks);
:func:`c8_decision` only names the statistic, and checks that the rule it picks agrees with that verdict.
"""
from __future__ import annotations

import math

DBIC_RULE = "dbic_worst"
SLOW_START_RULE = "slow_start_worst"


def relative_margin(rule: dict, measured: float) -> float:
    """(bound − measured)/|bound| for ``<``/``<=`` rules: positive on the PASS side, negative when violated."""
    if rule["op"] not in ("<", "<="):
        raise ValueError(f"rule {rule.get('name')!r}: op must be '<' or '<=', got {rule['op']!r}")
    bound = float(rule["bound"])
    if bound == 0:
        raise ValueError(f"rule {rule.get('name')!r}: a relative margin needs a non-zero bound")
    return (bound - float(measured)) / abs(bound)


def c8_decision(in_scope: list[dict], rules: dict[str, dict], verdict: str) -> dict:
    """The deciding statistic of P1-C8 over the ``in_scope`` rows (each with ``d_bic`` and ``slow_start``).

    ``rules``: ``{"dbic_worst": claims.rule("P1-C8", "dbic_worst"), "slow_start_worst": ...}``. Returns ``{"rule",
    "measured", "unit", "other"}`` where ``other`` is ``(unit, value, margin)`` of the component that does not decide.
    ValueError if ``in_scope`` is empty or if the picked rule disagrees with ``verdict`` (PASS iff it holds).
    """
    from .claims import rule_holds

    if not in_scope:
        raise ValueError("in_scope must hold at least one run (an INCONCLUSIVE row has no deciding statistic)")
    worst = {DBIC_RULE: max(float(w["d_bic"]) for w in in_scope),
             SLOW_START_RULE: max(float(w["slow_start"]) for w in in_scope)}
    if not all(math.isfinite(v) for v in worst.values()):
        raise ValueError(f"non-finite worst statistics {worst}")
    units = {DBIC_RULE: "ΔBIC, largest over in-scope runs", SLOW_START_RULE: "R'(0)/max R', largest over in-scope runs"}
    margin = {k: relative_margin(rules[k], worst[k]) for k in (DBIC_RULE, SLOW_START_RULE)}
    pick = min(margin, key=margin.get)
    other = SLOW_START_RULE if pick == DBIC_RULE else DBIC_RULE
    holds = rule_holds(rules[pick], worst[pick])
    if holds != (verdict == "PASS"):
        raise ValueError(f"verdict {verdict!r} disagrees with rule {pick!r} on {worst[pick]:.4g} (holds={holds})")
    return {"rule": rules[pick], "measured": worst[pick], "unit": units[pick],
            "other": (units[other], worst[other], margin[other])}
