"""The criteria ledger, ``book/claims.yml``: every paper claim, its test and its amendments.

A claim ID (``P1-C10``, ``P2-C6``) must exist in the checklists of the paper specs, copied into ``book/claims.yml``
so that the repository stands alone (``tools/extract_claims.py``). Each claim there also carries its
**test** (:func:`criterion`): the claim as the paper states it, the independent quantity measured,
the criterion (statistic, threshold, tolerance, seeds, and machine-readable pass rules read by :func:`rule` and
compared by :func:`rule_holds`), the scope, and the changes made after a result was seen (:func:`amendments`).

This module only reads and checks the ledger; :mod:`.headline` turns evidence rows into one verdict per claim, and
:mod:`rlvr_dynamics.book.claims` records a notebook's rows (``Claim``, ``record``).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import yaml

from ..paths import CLAIMS_PATH

VERDICTS = ("PASS", "PARTIAL", "FAIL", "CONSISTENT", "INCONCLUSIVE", "N/A")
"""Allowed verdicts of one evidence row. An honest FAIL (with the measured numbers) beats a tuned PASS.

- ``PASS`` / ``PARTIAL`` / ``FAIL``: the criterion of ``book/claims.yml`` met, met in part, not met.
- ``CONSISTENT``: a consistency check whose quantity holds by construction of the model used. It can catch a bug,
  but it is **never evidence for a PASS** (see :func:`~.headline.claim_verdicts`).
- ``INCONCLUSIVE``: undecided: the test could not have shown the effect (a noise ceiling below the R² target, no
  headroom, a quantity constant by construction, a setting outside the theorem's hypotheses), or the result neither
  meets nor refutes the criterion (a CI that straddles the threshold); the reason must say which, with the computed
  numbers.
- ``N/A``: not testable here (needs what this machine lacks).
"""

NOT_TESTED = "NOT TESTED"
"""The verdict :func:`claim_verdicts` gives a claim with no evidence row inside its scope."""

SETTINGS = ("paper", "testbed", "exact", "context")
"""Settings of an evidence row (rule of 2026-12-01, ``book/claims.yml`` header): ``paper`` GRPO on a pretrained
LLM, ``testbed`` GRPO on the project's tiny models, ``exact`` the theory's own objects (oscillator, recursion,
bandit, token model), ``context`` a variant that is not the paper's algorithm (shown, never decides)."""

DECISIVE_ORDER = ("FAIL", "PARTIAL", "PASS")
"""Decisive verdicts, weakest first (headline rule (1) and (3))."""

RULE_OPS = ("<=", "<", ">=", ">", "abs<=", "within", "outside", "ci_within", "ci_above", "ci_below", "ci_excludes")
"""Comparisons a pass rule may use. ``within``/``outside``/``ci_within``/``ci_excludes`` take ``bound = [lo, hi]``
(``ci_excludes``: the CI lies entirely outside ``[lo, hi]``); the ``ci_`` ops read the row's ``ci``, the others its
``measured``."""

SPEC_FIELDS = ("tag", "statement", "confirm", "scale")
"""Fields of a ``book/claims.yml`` entry copied from the specs' checklists by ``tools/extract_claims.py``."""

PREREGISTERED_FIELDS = ("paper_statement", "quantity", "criterion", "scope", "changed_after_result")
"""Hand-written fields of a ``book/claims.yml`` entry: the test of the claim (see :func:`criterion`)."""

OPTIONAL_FIELDS = ("kind", "same_phenomenon_as")
"""Optional hand-written claim-level fields: ``kind`` (:data:`CLAIM_KINDS`) and ``same_phenomenon_as`` (another
claim measured by the same experiment; headline rule (4))."""

CHECKLIST_PATH = CLAIMS_PATH


@lru_cache(maxsize=1)
def checklist() -> dict[str, dict[str, Any]]:
    """All known claims, ``{claim_id: {paper, tag, statement, confirm, scale, paper_statement, quantity, criterion,
    scope, changed_after_result}}``, from ``book/claims.yml``, in checklist order."""
    # libyaml's parser where installed (same constructor, so the same objects as yaml.safe_load; ~15x faster on
    # this file, which every notebook kernel reads once)
    data = yaml.load(CHECKLIST_PATH.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    out: dict[str, dict[str, Any]] = {}
    for paper, block in data.items():
        for row in block["claims"]:
            out[row["id"]] = {"paper": paper, **{k: v for k, v in row.items() if k != "id"}}
    return out


def criterion(claim_id: str) -> dict[str, Any]:
    """The test of ``claim_id``, as written in ``book/claims.yml`` (every criterion was written there on 2026-11-30,
    after the pages' first versions had run; :func:`amendments` lists the changes made after a result was seen).

    Returns ``{"id", "paper", "statement", "paper_statement", "quantity", "criterion", "scope",
    "changed_after_result"}``: ``statement`` is the spec's checklist line, ``paper_statement`` the claim as the paper
    states it, ``quantity`` the independent quantity measured (and why it is not true by construction),
    ``criterion`` a dict ``{"statistic", "threshold", "tolerance", "seeds"}``, ``scope`` the setting and the scope
    the claim covers, ``changed_after_result`` ``None`` or the list of changes made after a result was seen
    (:func:`amendments` reads and checks it). Missing fields are ``None``. Raises ``KeyError`` for an unknown id.
    """
    known = checklist()
    if claim_id not in known:
        raise KeyError(f"claim id {claim_id!r} is not in book/claims.yml")
    row = known[claim_id]
    out = {"id": claim_id, "paper": row["paper"], "statement": row.get("statement")}
    out.update({k: row.get(k) for k in PREREGISTERED_FIELDS})
    return out


def check_rule(cid: str, rule: Any) -> None:
    if not isinstance(rule, dict) or "op" not in rule or "bound" not in rule:
        raise ValueError(f"claim {cid}: rule must be a mapping with 'op' and 'bound' (use claims.rule({cid!r}, "
                         f"name)), got {rule!r}")
    if rule["op"] not in RULE_OPS:
        raise ValueError(f"claim {cid}: rule op {rule['op']!r} must be one of {RULE_OPS}")
    pair = rule["op"] in ("within", "outside", "ci_within", "ci_excludes")
    bound = rule["bound"]
    if pair != (isinstance(bound, (list, tuple)) and len(bound) == 2):
        raise ValueError(f"claim {cid}: rule op {rule['op']!r} needs bound "
                         f"{'[lo, hi]' if pair else 'a number'}, got {bound!r}")


def rule(claim_id: str, name: str | None = None) -> dict[str, Any]:
    """The machine-readable pass rule ``name`` of ``claim_id``, read from ``book/claims.yml``
    (``criterion.values.rules.<name>``): ``{"name", "op", "bound", "stat"}``; ``name`` may be omitted when the
    claim has one rule. Notebooks pass it to :class:`Claim` so the threshold is read, never retyped; the book's
    consistency test checks that every decisive row's ``measured`` sits on the side of the rule its verdict says.
    Raises ``KeyError`` naming the known rules."""
    crit = criterion(claim_id)["criterion"] or {}
    rules = ((crit.get("values") or {}) if isinstance(crit, dict) else {}).get("rules") or {}
    if not rules:
        raise KeyError(f"{claim_id} has no machine-readable rules in book/claims.yml (criterion.values.rules)")
    if name is None:
        if len(rules) != 1:
            raise KeyError(f"{claim_id} has rules {sorted(rules)}: name one")
        name = next(iter(rules))
    if name not in rules:
        raise KeyError(f"{claim_id}: no rule {name!r} in book/claims.yml; known: {sorted(rules)}")
    out = {"name": name, **rules[name]}
    check_rule(claim_id, out)
    return out


def rule_holds(rule: dict[str, Any], measured: Any, ci: Any = None) -> bool:
    """True when ``measured`` (or ``ci`` for the ``ci_`` ops) satisfies ``rule`` (see :data:`RULE_OPS`)."""
    op, bound = rule["op"], rule["bound"]
    if op.startswith("ci_"):
        if ci is None:
            raise ValueError(f"rule {rule.get('name')!r} ({op}) is decided by a CI, but the row has no ci")
        lo, hi = (float(x) for x in ci)
        if op == "ci_within":
            return bound[0] <= lo and hi <= bound[1]
        if op == "ci_excludes":
            return hi < bound[0] or lo > bound[1]
        return lo > float(bound) if op == "ci_above" else hi < float(bound)
    try:
        m = float(measured)
    except (TypeError, ValueError):
        raise ValueError(f"rule {rule.get('name')!r}: measured {measured!r} is not a number") from None
    if not math.isfinite(m):
        return False
    if op == "within":
        return bound[0] <= m <= bound[1]
    if op == "outside":
        return m < bound[0] or m > bound[1]
    if op == "abs<=":
        return abs(m) <= float(bound)
    b = float(bound)
    return {"<=": m <= b, "<": m < b, ">=": m >= b, ">": m > b}[op]


AMENDMENT_KEYS = ("date", "change", "verdict_before", "kind_before")
"""Keys of one entry of a claim's ``changed_after_result`` list in ``book/claims.yml``: ``date`` (YYYY-MM-DD),
``change`` (what changed and what result had been seen), and either ``verdict_before`` (the verdict under the rule in
force before the change, a word of :data:`VERDICTS`, or ``"unchanged"``) or ``kind_before`` (for a change of the
claim's ``kind``: the verdict under the earlier kind is computed from the evidence rows, never typed)."""


def amendments(claim_id: str) -> list[dict[str, Any]]:
    """The criterion changes made after a result was seen (``changed_after_result`` in ``book/claims.yml``), oldest
    first, each ``{"date", "change", "verdict_before" or "kind_before"}``; ``[]`` when the criterion keeps the rule
    its page's first version applied. Raises ``ValueError`` for an entry with unknown or missing keys."""
    raw = criterion(claim_id)["changed_after_result"]
    if raw in (None, [], ""):
        return []
    if not isinstance(raw, list):
        raise ValueError(f"{claim_id}: changed_after_result must be null or a list of amendments "
                         f"({AMENDMENT_KEYS}), got {type(raw).__name__}")
    out = []
    for k, item in enumerate(raw):
        if not isinstance(item, dict) or set(item) - set(AMENDMENT_KEYS):
            raise ValueError(f"{claim_id}: amendment {k} must be a mapping with keys from {AMENDMENT_KEYS}, "
                             f"got {item!r}")
        date, change = str(item.get("date") or ""), str(item.get("change") or "").strip()
        if len(date) != 10 or date[4] != "-" or date[7] != "-" or not change:
            raise ValueError(f"{claim_id}: amendment {k} needs a date YYYY-MM-DD and a change, got {item!r}")
        has_v, has_k = item.get("verdict_before") is not None, item.get("kind_before") is not None
        if has_v == has_k:
            raise ValueError(f"{claim_id}: amendment {k} needs exactly one of verdict_before and kind_before")
        if has_v and item["verdict_before"] not in (*VERDICTS, "unchanged"):
            raise ValueError(f"{claim_id}: amendment {k} verdict_before {item['verdict_before']!r} must be one of "
                             f"{VERDICTS} or 'unchanged'")
        if has_k and item["kind_before"] not in CLAIM_KINDS:
            raise ValueError(f"{claim_id}: amendment {k} kind_before {item['kind_before']!r} must be one of "
                             f"{CLAIM_KINDS}")
        out.append(dict(item))
    if [a["date"] for a in out] != sorted(a["date"] for a in out):
        raise ValueError(f"{claim_id}: amendments must be listed oldest first")
    return out




CRITERION_KEYS = ("statistic", "threshold", "partial", "fail", "inconclusive_if", "consistent_only", "tolerance",
                  "seeds", "values")
"""Keys of a ``criterion`` mapping, in display order. ``statistic``, ``threshold`` (the PASS rule),
``tolerance`` and ``seeds`` are always present; ``partial``, ``fail``, ``inconclusive_if`` (when the test could not
have shown the effect), ``consistent_only`` (checks that hold by construction) and ``values`` (machine-readable
numbers for notebooks) are optional."""


def format_criterion(crit: Any) -> str:
    """One line for a criterion mapping (``statistic: ...; threshold: ...; ...``); a string passes through."""
    if crit is None:
        return ""
    if isinstance(crit, str):
        return crit
    keys = [k for k in CRITERION_KEYS if k in crit] + [k for k in crit if k not in CRITERION_KEYS]
    parts = []
    for k in keys:
        v = crit[k]
        if v in (None, ""):
            continue
        if isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items())
        parts.append(f"{k}: {v}")
    return "; ".join(parts)



CLAIM_KINDS = ("universal", "existence")
"""``kind`` of a claim in ``book/claims.yml``: ``existence`` for the paper's "can" / "there exists" statements (the
strongest decisive row decides), ``universal`` (the default) otherwise."""



def claim_sort_key(claim_id: str) -> tuple[int, int]:
    paper, num = claim_id.split("-C")
    return int(paper[1:]), int(num)

