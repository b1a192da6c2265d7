"""The claims ledger: every notebook ends by recording its evidence on each paper claim it tests.

A claim ID (``P1-C10``, ``P2-C6``) must exist in the checklists of the paper specs, copied into
``book/claims.yml`` so that the repository stands alone. Each claim there also carries its **pre-registered test**
(:func:`criterion`): the claim as the paper states it, the independent quantity measured, the criterion (statistic,
threshold, tolerance, seeds) and the scope. ``record`` prints a small rounded table (the notebook's
``nbval-check-output`` cell, so nbval catches any change in a verdict or a rounded number) and writes a JSON file.
Several notebooks may give evidence rows for one claim; :func:`claim_verdicts` turns them into **one verdict per
claim** (the weakest in-scope row; CONSISTENT never counts as a PASS; context rows never decide), which the book's
scorecard page renders.

Example (in a notebook's last cell)::

    from rlvr_dynamics.book import claims
    crit = claims.criterion("P1-C10")["criterion"]          # pre-registered: read, never tuned here
    tol = crit["values"]["rel_tol"]
    claims.record("p1_stability", [
        claims.Claim("P1-C10", "Critical K_ref / (1-mu)/(eta K) in the small-lag cells", measured=ratio,
                     paper_value=1.0, tolerance=tol, verdict="PASS" if abs(ratio - 1) <= tol else "FAIL",
                     reason=f"ratio {ratio:.3f} vs 1 +- {tol}"),
        claims.Claim("P1-C7", "Plateau equals Mroueh's p*", measured=err, verdict="CONSISTENT",
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

SPEC_FIELDS = ("tag", "statement", "confirm", "scale")
"""Fields of a ``book/claims.yml`` entry copied from the specs' checklists by ``tools/extract_claims.py``."""

PREREGISTERED_FIELDS = ("paper_statement", "quantity", "criterion", "scope", "changed_after_result")
"""Hand-written fields of a ``book/claims.yml`` entry: the pre-registered test of the claim (see :func:`criterion`)."""

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
    the claim covers, ``changed_after_result`` ``None`` or the reason the criterion was changed after a result was
    seen. Missing fields are ``None``. Raises ``KeyError`` for an unknown id.
    """
    known = checklist()
    if claim_id not in known:
        raise KeyError(f"claim id {claim_id!r} is not in book/claims.yml")
    row = known[claim_id]
    out = {"id": claim_id, "paper": row["paper"], "statement": row.get("statement")}
    out.update({k: row.get(k) for k in PREREGISTERED_FIELDS})
    return out


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
    as context and never decides the claim's verdict (see :func:`claim_verdicts`)."""
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

    def as_row(self) -> dict[str, Any]:
        row = asdict(self)
        row.pop("digits")
        row["measured"] = _round(self.measured, self.digits)
        row["paper_value"] = _round(self.paper_value, self.digits)
        row["tolerance"] = _round(self.tolerance, self.digits)
        row["paper"] = checklist()[self.id]["paper"]
        return row


def _claim_sort_key(claim_id: str) -> tuple[int, int]:
    paper, num = claim_id.split("-C")
    return int(paper[1:]), int(num)


def format_table(rows: list[dict[str, Any]]) -> str:
    """A fixed-width text table of id, verdict, measured, paper value, tolerance (what nbval compares)."""
    cols = ("id", "verdict", "measured", "paper_value", "tolerance")
    cells = [[str(r[c]) if r[c] is not None else "-" for c in cols] for r in rows]
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
    target = Path(out_dir or os.environ.get(CLAIMS_DIR_ENV) or ".")
    target.mkdir(parents=True, exist_ok=True)
    payload = {"notebook": notebook, "claims": rows}
    atomic_write_text(target / f"{notebook}.claims.json", json.dumps(payload, indent=1, sort_keys=False) + "\n")
    print(format_table(rows))
    return rows


# ---------------------------------------------------------------------------------------------------------------
# One verdict per claim
# ---------------------------------------------------------------------------------------------------------------

TESTED_ORDER = ("FAIL", "INCONCLUSIVE", "PARTIAL", "PASS")
"""Verdicts of rows that test the claim, weakest first. A claim's verdict is the weakest of its in-scope rows:
a FAIL in any setting the claim covers fails the claim; a setting that could not show the effect (INCONCLUSIVE)
leaves the claim unestablished even if another setting passed; PARTIAL sits below PASS."""


def _is_context(row: dict[str, Any]) -> bool:
    return bool(row.get("context", False))


def claim_verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One verdict per claim, for all claims of ``book/claims.yml`` in checklist order.

    ``rows`` are evidence rows as :func:`rlvr_dynamics.book.markup.load_verdicts` returns them (each
    ``*.claims.json`` row plus its ``"notebook"``). Returns one dict per claim with keys ``id, paper, statement,
    criterion, scope, changed_after_result, verdict, measured, reason, evidence``: ``statement`` is the paper's
    statement (``paper_statement``, else the spec's line), ``criterion`` the pre-registered criterion dict,
    ``evidence`` the claim's input rows (all of them, context included, in input order, each with its notebook).

    The rule (the weakest in-scope verdict):

    1. Rows with ``context: true`` (a variant that is not the paper's algorithm/setting) are context only.
       The rest are the claim's in-scope rows.
    2. If any in-scope row is PASS / PARTIAL / FAIL / INCONCLUSIVE, the verdict is the weakest of those, in the
       order :data:`TESTED_ORDER` (FAIL < INCONCLUSIVE < PARTIAL < PASS). CONSISTENT and N/A rows do not weaken
       it and cannot strengthen it: a CONSISTENT check is never evidence for a PASS.
    3. Else, if any in-scope row is CONSISTENT, the verdict is CONSISTENT (never PASS).
    4. Else, if any in-scope row is N/A, the verdict is N/A.
    5. Else (no rows, or context rows only) the verdict is :data:`NOT_TESTED`.

    ``measured`` is the deciding row's measured value (the first row, in input order, with the deciding verdict);
    ``reason`` names the deciding notebook and its reason, and counts the rows not used.
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
        by_id[row["id"]].append(row)

    out = []
    for cid in sorted(known, key=_claim_sort_key):
        entry = known[cid]
        evidence = by_id[cid]
        scoped = [r for r in evidence if not _is_context(r)]
        n_context = len(evidence) - len(scoped)
        tested = [r for r in scoped if r["verdict"] in TESTED_ORDER]
        decider = None
        if tested:
            verdict = min((r["verdict"] for r in tested), key=TESTED_ORDER.index)
        elif any(r["verdict"] == "CONSISTENT" for r in scoped):
            verdict = "CONSISTENT"
        elif scoped:
            verdict = "N/A"
        else:
            verdict = NOT_TESTED
        if verdict != NOT_TESTED:
            decider = next(r for r in scoped if r["verdict"] == verdict)
            notes = []
            others = len(scoped) - 1
            if others:
                notes.append(f"weakest of {len(scoped)} in-scope rows")
            if verdict == "CONSISTENT":
                notes.append("a by-construction check only, not evidence for PASS")
            if n_context:
                notes.append(f"{n_context} context row{'s' if n_context > 1 else ''} not counted")
            why = decider.get("reason") or ""
            reason = f"{decider.get('notebook')}: {why}" if why else str(decider.get("notebook"))
            if notes:
                reason += f" [{'; '.join(notes)}]"
            measured = decider.get("measured")
        else:
            measured = None
            reason = (f"only context rows ({n_context}): no test of the paper's algorithm in the claim's scope"
                      if n_context else "no notebook records this claim")
        out.append({
            "id": cid,
            "paper": entry["paper"],
            "statement": entry.get("paper_statement") or entry.get("statement"),
            "criterion": entry.get("criterion"),
            "scope": entry.get("scope"),
            "changed_after_result": entry.get("changed_after_result"),
            "verdict": verdict,
            "measured": measured,
            "reason": reason,
            "evidence": list(evidence),
        })
    return out
