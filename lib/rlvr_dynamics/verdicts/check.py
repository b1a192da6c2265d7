"""A verdict with its deciding statistic (:class:`Check`), and how the binding part of a composite PASS rule is chosen
(:func:`binding`). Every claim check of :mod:`rlvr_dynamics.verdicts` returns a :class:`Check`; ``Check.claim_kwargs``
turns it into the keyword arguments of :class:`rlvr_dynamics.book.claims.Claim`, the rule read from ``book/claims.yml``
(:func:`.ledger.rule`), never retyped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

@dataclass
class Check:
    """A verdict with its deciding statistic (see the module docstring)."""

    verdict: str
    reason: str
    in_scope: list = field(default_factory=list, repr=False)
    measured: float | None = None
    """The deciding statistic: the binding part of the PASS rule (the worst run), or the number that made the test
    inconclusive."""
    unit: str = ""
    rule: str | None = None
    """Name of the rule in ``book/claims.yml`` (``criterion.values.rules``) that ``measured`` is compared with."""
    ci: tuple[float, float] | None = None

    def __iter__(self):
        """``verdict, reason, in_scope = check`` (the tuple the functions returned before the deciding statistic)."""
        return iter((self.verdict, self.reason, self.in_scope))

    def claim_kwargs(self, claim_id: str) -> dict:
        """``measured, verdict, reason, unit, ci, rule`` for :class:`rlvr_dynamics.book.claims.Claim`; the rule is
        read from ``book/claims.yml`` (never retyped)."""
        from .ledger import rule

        return dict(measured=self.measured, verdict=self.verdict, reason=self.reason, unit=self.unit, ci=self.ci,
                    rule=rule(claim_id, self.rule) if self.rule else None)



def binding(parts: list[tuple[str, float, float, str, str]]) -> tuple[str, float, str]:
    """The binding part of a composite PASS rule: ``parts`` = ``[(rule name, measured, bound, op, unit)]`` with op one
    of ``<``, ``<=``, ``>``, ``>=``. Returns ``(name, measured, unit)`` of the part with the smallest signed relative
    margin to its bound (positive on the PASS side, negative when violated): for a PASS the part closest to its bound,
    otherwise the one that misses it by the most (as :func:`rlvr_dynamics.verdicts.grpo_p1_slow_start.relative_margin`)."""
    def margin(m: float, b: float, op: str) -> float:
        sign = 1.0 if op in ("<", "<=") else -1.0
        return sign * (b - m) / max(abs(b), 1e-12)

    name, m, _, _, unit = min(parts, key=lambda p: margin(p[1], p[2], p[3]))
    return name, m, unit

