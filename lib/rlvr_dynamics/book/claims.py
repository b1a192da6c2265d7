"""The claims ledger: every notebook ends by recording its evidence on each paper claim it tests.

A claim ID (``P1-C10``, ``P2-C6``) must exist in the checklists of the paper specs, copied into
``book/claims.yml`` so that the repository stands alone. Each claim there also carries its **pre-registered test**
(:func:`criterion`): the claim as the paper states it, the independent quantity measured, the criterion (statistic,
threshold, tolerance, seeds, and machine-readable pass rules read by :func:`rule`) and the scope. ``record`` prints a small rounded table (the notebook's
``nbval-check-output`` cell, so nbval catches any change in a verdict or a rounded number) and writes a JSON file.
Each row names its **setting** (:data:`SETTINGS`: paper, testbed, exact, context). Several notebooks may give rows
for one claim; :func:`claim_verdicts` turns them into **one headline verdict per claim** and a claim × setting
matrix by the rule of 2026-12-01 (:func:`headline`: decisive rows decide, the weakest; INCONCLUSIVE only when no
decisive row exists; existence claims take the strongest; context never decides; CONSISTENT never counts as PASS).
The scorecard, each page's results box and its badges all read that one function.

Example (in a notebook's last cell)::

    from rlvr_dynamics.book import claims
    crit = claims.criterion("P1-C10")["criterion"]          # pre-registered: read, never tuned here
    tol = crit["values"]["rel_tol"]
    rule = claims.rule("P1-C10", "ratio_error")           # {"op": "<=", "bound": 0.15, ...} from claims.yml
    claims.record("p1_stability", [
        claims.Claim("P1-C10", "Critical K_ref / (1-mu)/(eta K) in the small-lag cells", setting="exact",
                     measured=worst, unit="max |ratio - 1|", rule=rule, paper_value=0.0, tolerance=tol,
                     verdict="PASS" if claims.rule_holds(rule, worst) else "FAIL",
                     reason=f"max |ratio - 1| {worst:.3f} vs {tol}"),
        claims.Claim("P1-C7", "Plateau equals Mroueh's p*", setting="exact", measured=err, verdict="CONSISTENT",
                     reason=f"holds by construction of the bandit force (max error {err:.1e})"),
    ])
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from .._io import atomic_write_text
from ..paths import CLAIMS_PATH

VERDICTS = ("PASS", "PARTIAL", "FAIL", "CONSISTENT", "INCONCLUSIVE", "N/A")
"""Allowed verdicts of one evidence row. An honest FAIL (with the measured numbers) beats a tuned PASS.

- ``PASS`` / ``PARTIAL`` / ``FAIL``: the pre-registered criterion (``book/claims.yml``) met, met in part, not met.
- ``CONSISTENT``: a consistency check whose quantity holds by construction of the model used. It can catch a bug,
  but it is **never evidence for a PASS** (see :func:`claim_verdicts`).
- ``INCONCLUSIVE``: the test could not have shown the effect (a noise ceiling below the R² target, no headroom,
  a quantity constant by construction, a setting outside the theorem's hypotheses); the reason must say which,
  with the computed numbers.
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
"""Hand-written fields of a ``book/claims.yml`` entry: the pre-registered test of the claim (see :func:`criterion`)."""

OPTIONAL_FIELDS = ("kind", "same_phenomenon_as")
"""Optional hand-written claim-level fields: ``kind`` (:data:`CLAIM_KINDS`) and ``same_phenomenon_as`` (another
claim measured by the same experiment; headline rule (4))."""

CLAIMS_DIR_ENV = "RLVR_CLAIMS_DIR"
"""Environment variable: where ``record`` writes ``<notebook>.claims.json`` (set by the papermill runner and by
the nbval tests); defaults to the current directory, i.e. beside the notebook when run from Jupyter."""

CHECKLIST_PATH = CLAIMS_PATH


@lru_cache(maxsize=1)
def checklist() -> dict[str, dict[str, Any]]:
    """All known claims, ``{claim_id: {paper, tag, statement, confirm, scale, paper_statement, quantity, criterion,
    scope, changed_after_result}}``, from ``book/claims.yml``, in checklist order."""
    data = yaml.safe_load(CHECKLIST_PATH.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for paper, block in data.items():
        for row in block["claims"]:
            out[row["id"]] = {"paper": paper, **{k: v for k, v in row.items() if k != "id"}}
    return out


def criterion(claim_id: str) -> dict[str, Any]:
    """The pre-registered test of ``claim_id``, as written in ``book/claims.yml`` before the result was seen.

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


def _check_rule(cid: str, rule: Any) -> None:
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
    _check_rule(claim_id, out)
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
    first, each ``{"date", "change", "verdict_before" or "kind_before"}``; ``[]`` when the criterion was fixed before
    the result. Raises ``ValueError`` for an entry with unknown or missing keys."""
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


def criterion_provenance(claim_id: str, rows: list[dict[str, Any]], verdict: str | None = None
                         ) -> dict[str, Any]:
    """Whether the headline verdict of ``claim_id`` rests on a criterion fixed before the result or amended after
    it: the one function every page (results box, scorecard, landing page, claims appendix) reads.

    ``rows`` are the claim's evidence rows (as :func:`claim_verdicts` gets them); ``verdict`` is its headline now
    (computed from ``rows`` when omitted). Returns ``{"amended", "amendments", "dates", "first_verdict",
    "verdict"}``: ``amendments`` as :func:`amendments` returns them, each with ``verdict_before`` resolved (an entry
    with ``kind_before`` gets the headline of ``rows`` under that kind; ``"unchanged"`` takes the verdict after the
    change); ``first_verdict`` is the verdict under the first rule, when it was applied (``None`` when the criterion
    was never amended); ``verdict`` the headline now.
    """
    entry = checklist()[claim_id]
    kind = entry.get("kind") or "universal"
    now = verdict if verdict is not None else headline(rows, kind)[0]
    items = amendments(claim_id)
    resolved: list[dict[str, Any]] = []
    for item in items:
        out = dict(item)
        if item.get("kind_before") is not None:
            out["verdict_before"] = headline(rows, item["kind_before"])[0]
            out["computed"] = True
        resolved.append(out)
    # "unchanged": the verdict after the change, i.e. the next entry's verdict before it, else the verdict now
    for k in range(len(resolved) - 1, -1, -1):
        if resolved[k]["verdict_before"] == "unchanged":
            resolved[k]["verdict_before"] = resolved[k + 1]["verdict_before"] if k + 1 < len(resolved) else now
    return {"amended": bool(resolved), "amendments": resolved,
            "dates": list(dict.fromkeys(a["date"] for a in resolved)),
            "first_verdict": resolved[0]["verdict_before"] if resolved else None, "verdict": now}


CRITERION_KEYS = ("statistic", "threshold", "partial", "fail", "inconclusive_if", "consistent_only", "tolerance",
                  "seeds", "values")
"""Keys of a pre-registered ``criterion`` mapping, in display order. ``statistic``, ``threshold`` (the PASS rule),
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


def _round(value: Any, digits: int = 4) -> Any:
    """Round floats to ``digits`` significant digits so printed tables are stable across BLAS builds."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return str(v)
    if v == 0.0:
        return 0.0
    return float(f"{v:.{digits}g}")


@dataclass
class Claim:
    """One verdict on one paper claim."""

    id: str
    """Claim ID from the spec checklist, e.g. ``"P1-C10"``."""
    statement: str
    """What is tested here, in one sentence (may narrow the paper's claim)."""
    measured: Any = None
    """The measured value (number, short string, or None when N/A)."""
    verdict: str = "N/A"
    """One of :data:`VERDICTS`."""
    paper_value: Any = None
    """The paper's (or the closed form's) value, if any."""
    tolerance: Any = None
    """The tolerance used for the verdict, e.g. ``0.05`` or ``"rel 5%"``."""
    reason: str = ""
    """Why this verdict, computed from the data: required for every verdict but PASS; an INCONCLUSIVE reason must
    hold at least one computed number (the noise ceiling, the families at 0, the fraction of steps outside the
    hypotheses, ...)."""
    context: bool = False
    """True for a variant that is not the paper's algorithm or setting (outside the claim's scope): the row is shown
    as context and never decides the claim's verdict (see :func:`claim_verdicts`). Same as ``setting="context"``."""
    setting: str | None = None
    """Where the evidence comes from, one of :data:`SETTINGS`: ``paper`` (GRPO on a pretrained LLM), ``testbed``
    (GRPO on the project's tiny models), ``exact`` (oscillator, recursion, bandit, token model) or ``context``
    (shown, never decides). ``None`` is inferred from the notebook id by :func:`row_setting`."""
    ci: Any = None
    """``(low, high)``: the 95 % CI of ``measured`` when the CI decides (the rule's op starts with ``ci_``)."""
    unit: str = ""
    """The unit of ``measured`` (``"ratio"``, ``"slope"``, ``"ΔBIC"``, ``"variance"``, ``"runs"``, ...)."""
    rule: dict | None = None
    """The pass rule that ``measured`` is compared with, read from ``book/claims.yml`` by :func:`rule` (never
    retyped): ``{"name", "op", "bound", "stat"}``. Required for PASS / PARTIAL / FAIL rows."""
    phenomenon: str | None = None
    """Rows of one claim that measure one phenomenon (the same sweep seen twice) share this key and count once."""
    digits: int = field(default=4, repr=False)
    """Significant digits shown in the printed table and stored in the JSON."""

    def __post_init__(self) -> None:
        known = checklist()
        if self.id not in known:
            raise ValueError(
                f"claim id {self.id!r} is not in the spec checklists (book/claims.yml); "
                f"known ids: {', '.join(sorted(known, key=_claim_sort_key))}"
            )
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} for {self.id} must be one of {VERDICTS}")
        if self.verdict != "PASS" and not self.reason.strip():
            raise ValueError(f"claim {self.id}: a {self.verdict} verdict needs a reason")
        if self.verdict == "INCONCLUSIVE" and not any(ch.isdigit() for ch in self.reason):
            raise ValueError(f"claim {self.id}: an INCONCLUSIVE reason must carry the computed number that shows "
                             f"the test could not have seen the effect (e.g. 'noise ceiling 0.36 < R^2 target "
                             f"0.91'); got {self.reason!r}")
        if not self.statement.strip():
            raise ValueError(f"claim {self.id}: statement must not be empty")
        if self.setting is not None and self.setting not in SETTINGS:
            raise ValueError(f"claim {self.id}: setting {self.setting!r} must be one of {SETTINGS}")
        if self.context and self.setting not in (None, "context"):
            raise ValueError(f"claim {self.id}: context=True contradicts setting={self.setting!r}")
        if self.setting == "context":
            self.context = True
        elif self.context:
            self.setting = "context"
        if self.rule is not None:
            _check_rule(self.id, self.rule)
        if self.ci is not None:
            try:
                lo, hi = (float(x) for x in self.ci)
            except (TypeError, ValueError):
                raise ValueError(f"claim {self.id}: ci must be a (low, high) pair of numbers, got {self.ci!r}") from None
            if not lo <= hi:
                raise ValueError(f"claim {self.id}: ci low {lo} must be <= high {hi}")

    def as_row(self) -> dict[str, Any]:
        row = asdict(self)
        row.pop("digits")
        row["measured"] = _round(self.measured, self.digits)
        row["paper_value"] = _round(self.paper_value, self.digits)
        row["tolerance"] = _round(self.tolerance, self.digits)
        row["ci"] = None if self.ci is None else [_round(x, self.digits) for x in self.ci]
        row["paper"] = checklist()[self.id]["paper"]
        return row


def _claim_sort_key(claim_id: str) -> tuple[int, int]:
    paper, num = claim_id.split("-C")
    return int(paper[1:]), int(num)


def format_table(rows: list[dict[str, Any]]) -> str:
    """A fixed-width text table of id, verdict, measured, paper value, tolerance (what nbval compares)."""
    cols = ("id", "setting", "verdict", "measured", "ci", "paper_value", "tolerance")
    show = lambda v: "-" if v is None else f"[{v[0]}, {v[1]}]" if isinstance(v, list) else str(v)  # noqa: E731
    cells = [[show(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    line = lambda xs: "  ".join(x.ljust(w) for x, w in zip(xs, widths)).rstrip()  # noqa: E731
    return "\n".join([line(cols), line(["-" * w for w in widths]), *(line(x) for x in cells)])


def record(notebook: str, claims: Iterable[Claim | dict[str, Any]], *, out_dir: str | os.PathLike | None = None
           ) -> list[dict[str, Any]]:
    """Record the verdicts of ``notebook`` (its registry id): print the table, write ``<notebook>.claims.json``.

    The JSON goes to ``out_dir``, else ``$RLVR_CLAIMS_DIR``, else the current directory. Returns the rows.
    """
    items = [c if isinstance(c, Claim) else Claim(**c) for c in claims]
    if not items:
        raise ValueError(f"record({notebook!r}): claims must not be empty")
    # One notebook may give several evidence rows for one claim (e.g. the paper's algorithm and a context variant),
    # but never the same row twice: (id, statement) must be unique.
    keys = [(c.id, c.statement) for c in items]
    dupes = sorted({k[0] for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"record({notebook!r}): duplicate rows (same claim id and statement) for {dupes}")
    rows = [c.as_row() for c in items]
    for row in rows:
        row["setting"] = row_setting({**row, "notebook": notebook})
    target = Path(out_dir or os.environ.get(CLAIMS_DIR_ENV) or ".")
    target.mkdir(parents=True, exist_ok=True)
    payload = {"notebook": notebook, "claims": rows}
    atomic_write_text(target / f"{notebook}.claims.json", json.dumps(payload, indent=1, sort_keys=False) + "\n")
    print(format_table(rows))
    return rows


# ---------------------------------------------------------------------------------------------------------------
# One verdict per claim
# ---------------------------------------------------------------------------------------------------------------

def row_setting(row: dict[str, Any]) -> str:
    """The setting of an evidence row (:data:`SETTINGS`): its own ``setting``; else ``context`` for a context row,
    ``paper`` for the pretrained-LLM notebook (``grpo_smollm``), ``testbed`` for the other ``grpo_*`` notebooks
    and ``exact`` for the rest."""
    if row.get("setting"):
        return row["setting"]
    if row.get("context"):
        return "context"
    nb = str(row.get("notebook") or "")
    if nb.startswith("grpo_smollm"):
        return "paper"
    return "testbed" if nb.startswith("grpo_") else "exact"


def _count_once(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Headline rule (4): rows sharing a ``phenomenon`` key count once (the first of them, in input order)."""
    seen, out = set(), []
    for r in rows:
        key = r.get("phenomenon")
        if key:
            if key in seen:
                continue
            seen.add(key)
        out.append(r)
    return out


def headline(rows: list[dict[str, Any]], kind: str = "universal") -> tuple[str, dict[str, Any] | None]:
    """The headline verdict of a set of evidence rows of one claim, and the row that decides it.

    The rule of 2026-12-01 (``book/claims.yml`` header): context rows never decide; rows sharing a ``phenomenon``
    count once; (1) decisive rows (PASS / PARTIAL / FAIL) decide, the weakest of them; (3) for ``kind ==
    "existence"`` the strongest; (2) INCONCLUSIVE decides only when no decisive row exists; (5) then CONSISTENT
    (never PASS), then N/A; no in-scope row gives :data:`NOT_TESTED`. The decider is the first row, in input order,
    with the deciding verdict. The same function decides a page's results box, its badges, the claim × setting
    matrix and the scorecard.
    """
    if kind not in CLAIM_KINDS:
        raise ValueError(f"kind {kind!r} must be one of {CLAIM_KINDS}")
    scoped = _count_once([r for r in rows if row_setting(r) != "context"])
    decisive = [r for r in scoped if r["verdict"] in DECISIVE_ORDER]
    if decisive:
        pick = max if kind == "existence" else min
        verdict = pick((r["verdict"] for r in decisive), key=DECISIVE_ORDER.index)
    else:
        verdict = next((v for v in ("INCONCLUSIVE", "CONSISTENT", "N/A") if any(r["verdict"] == v for r in scoped)),
                       NOT_TESTED)
    decider = next((r for r in scoped if r["verdict"] == verdict), None)
    return verdict, decider


CLAIM_KINDS = ("universal", "existence")
"""``kind`` of a claim in ``book/claims.yml``: ``existence`` for the paper's "can" / "there exists" statements (the
strongest decisive row decides), ``universal`` (the default) otherwise."""


def claim_verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One headline verdict per claim, for all claims of ``book/claims.yml`` in checklist order.

    ``rows`` are evidence rows as :func:`rlvr_dynamics.book.markup.load_verdicts` returns them (each
    ``*.claims.json`` row plus its ``"notebook"``). Returns one dict per claim with keys ``id, paper, kind,
    same_phenomenon_as, statement, criterion, scope, changed_after_result, provenance, verdict, measured, ci, unit,
    decider, reason, evidence, by_setting, by_page``:

    - ``verdict``: the headline (:func:`headline` over all rows of the claim);
    - ``provenance``: :func:`criterion_provenance` (fixed before the result, or amended after it: when, what, and
      the verdict under the first rule), what every page says beside the verdict;
    - ``decider``: the deciding row (``None`` when NOT TESTED); ``measured``, ``ci`` and ``unit`` are its;
    - ``by_setting``: ``{setting: verdict}`` for each setting with rows (:func:`headline` over that setting's rows;
      the ``context`` cell uses the context rows as if in scope, and is shown, never counted);
    - ``by_page``: ``{notebook: {setting: verdict}}``, the same function over one page's rows per setting: what the
      page's results box and badges show;
    - ``evidence``: all input rows of the claim (context included, input order), each with its notebook and
      ``setting`` filled in by :func:`row_setting`.
    """
    known = checklist()
    by_id: dict[str, list[dict[str, Any]]] = {cid: [] for cid in known}
    for row in rows:
        if row.get("id") not in by_id:
            raise ValueError(f"evidence row for unknown claim id {row.get('id')!r} "
                             f"(notebook {row.get('notebook')!r})")
        if row.get("verdict") not in VERDICTS:
            raise ValueError(f"evidence row {row['id']} from {row.get('notebook')!r}: verdict "
                             f"{row.get('verdict')!r} is not one of {VERDICTS}")
        by_id[row["id"]].append({**row, "setting": row_setting(row)})

    def cell(rs: list[dict[str, Any]], kind: str, setting: str) -> str:
        if setting == "context":                       # shown as if in scope; never counted in the headline
            rs = [{**r, "setting": "exact"} for r in rs]
        return headline(rs, kind)[0]

    out = []
    for cid in sorted(known, key=_claim_sort_key):
        entry = known[cid]
        kind = entry.get("kind") or "universal"
        evidence = by_id[cid]
        verdict, decider = headline(evidence, kind)
        n_context = sum(r["setting"] == "context" for r in evidence)
        if decider is not None:
            notes = []
            scoped = [r for r in evidence if r["setting"] != "context"]
            if len(scoped) > 1:
                rule_name = ("strongest decisive row (existence claim)" if kind == "existence"
                             and verdict in DECISIVE_ORDER else "weakest decisive row" if verdict in DECISIVE_ORDER
                             else "no decisive row")
                notes.append(f"{rule_name} of {len(scoped)} in-scope rows")
            if verdict == "CONSISTENT":
                notes.append("a by-construction check only, not evidence for PASS")
            if n_context:
                notes.append(f"{n_context} context row{'s' if n_context > 1 else ''} not counted")
            why = decider.get("reason") or ""
            reason = f"{decider.get('notebook')} ({decider['setting']}): {why}" if why else str(decider.get("notebook"))
            if notes:
                reason += f" [{'; '.join(notes)}]"
        else:
            reason = (f"only context rows ({n_context}): no test of the paper's algorithm in the claim's scope"
                      if n_context else "no notebook records this claim")
        settings = [s for s in SETTINGS if any(r["setting"] == s for r in evidence)]
        pages = list(dict.fromkeys(r.get("notebook") for r in evidence))
        out.append({
            "id": cid,
            "paper": entry["paper"],
            "kind": kind,
            "same_phenomenon_as": entry.get("same_phenomenon_as"),
            "statement": entry.get("paper_statement") or entry.get("statement"),
            "criterion": entry.get("criterion"),
            "scope": entry.get("scope"),
            "changed_after_result": entry.get("changed_after_result"),
            "provenance": criterion_provenance(cid, evidence, verdict),
            "verdict": verdict,
            "decider": decider,
            "measured": decider.get("measured") if decider else None,
            "ci": decider.get("ci") if decider else None,
            "unit": decider.get("unit", "") if decider else "",
            "reason": reason,
            "evidence": list(evidence),
            "by_setting": {s: cell([r for r in evidence if r["setting"] == s], kind, s) for s in settings},
            "by_page": {nb: {s: cell([r for r in evidence if r.get("notebook") == nb and r["setting"] == s], kind, s)
                             for s in SETTINGS if any(r.get("notebook") == nb and r["setting"] == s
                                                      for r in evidence)}
                        for nb in pages},
        })
    return out


def counted_once(verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Headline rule (4) across claims: a claim whose ``same_phenomenon_as`` names another claim with the same
    headline verdict is left out of the totals (the two measure one phenomenon on one experiment)."""
    by_id = {v["id"]: v for v in verdicts}
    return [v for v in verdicts if not (v.get("same_phenomenon_as") in by_id
                                        and by_id[v["same_phenomenon_as"]]["verdict"] == v["verdict"])]
