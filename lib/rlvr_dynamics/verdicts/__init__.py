"""Where each paper claim is decided: the criteria ledger, the headline rule, and the checks that read GRPO runs.

- :mod:`.ledger`: ``book/claims.yml``, every claim's test and its amendments (``criterion``,
  ``rule``, ``rule_holds``, ``amendments``).
- :mod:`.headline`: evidence rows → one verdict per claim and the claim × setting matrix (``claim_verdicts``), with
  whether the criterion was amended after a result (``criterion_provenance``).
- :mod:`.check`: :class:`~.check.Check`, a verdict with its deciding statistic, and the binding part of a composite
  rule.
- The checks on committed GRPO runs, one module per family of claims: :mod:`.grpo_rows` (per-run fits and numbers)
  and :mod:`.grpo_p1` (P1-C5, C8, C9, C12, C14, C15), :mod:`.grpo_p1_slow_start` (P1-C8's slow-start bound and
  its power), :mod:`.grpo_p2` (P2-C7, C9, C10, C14), :mod:`.p2_collapse` (P2-C15).

The claims on the theory's own objects (oscillator, bandit, recursion) are decided in their notebooks from
:mod:`rlvr_dynamics.p1` and :mod:`rlvr_dynamics.p2`. This layer imports the science packages, never
:mod:`rlvr_dynamics.book`; the book imports it. Submodules are imported on use: ``from rlvr_dynamics.verdicts import
grpo_p1``.
"""
