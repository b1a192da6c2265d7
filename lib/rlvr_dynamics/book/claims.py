"""A notebook's evidence on the paper claims it tests: :class:`Claim` rows, printed and written by :func:`record`.

Every notebook ends by recording its rows: each names its claim (an ID of ``book/claims.yml``, read by
:mod:`rlvr_dynamics.verdicts.ledger`), its **setting** (paper, testbed, exact, context), the deciding statistic and
the verdict its rule gives. ``record`` prints a small rounded table (the notebook's ``nbval-check-output`` cell, so
nbval catches any change in a verdict or a rounded number) and writes ``<notebook>.claims.json``; the book turns
the rows into one headline verdict per claim with :func:`rlvr_dynamics.verdicts.headline.claim_verdicts`.

The ledger's readers and the headline rule are re-exported here (``claims.rule``, ``claims.criterion``,
``claims.claim_verdicts``, …), so a notebook imports one module.

Example (in a notebook's last cell)::

    from rlvr_dynamics.book import claims
    crit = claims.criterion("P1-C10")["criterion"]          # the ledger's: read, never tuned here
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
from pathlib import Path
from typing import Any, Iterable

from .._io import atomic_write_text
from ..verdicts.headline import (claim_verdicts, count_once, counted_once, criterion_provenance,  # noqa: F401
                                 headline, row_setting)
from ..verdicts.ledger import (AMENDMENT_KEYS, CHECKLIST_PATH, CLAIM_KINDS, CRITERION_KEYS,  # noqa: F401
                               DECISIVE_ORDER, NOT_TESTED, OPTIONAL_FIELDS, PREREGISTERED_FIELDS, RULE_OPS,
                               SETTINGS, SPEC_FIELDS, VERDICTS, amendments, check_rule, checklist, claim_sort_key,
                               criterion, format_criterion, rule, rule_holds)

__all__ = ["Claim", "record", "format_table", "CLAIMS_DIR_ENV",
           # re-exported from rlvr_dynamics.verdicts: the ledger's readers and the headline rule
           "claim_verdicts", "count_once", "counted_once", "criterion_provenance", "headline", "row_setting",
           "AMENDMENT_KEYS", "CHECKLIST_PATH", "CLAIM_KINDS", "CRITERION_KEYS", "DECISIVE_ORDER", "NOT_TESTED",
           "OPTIONAL_FIELDS", "PREREGISTERED_FIELDS", "RULE_OPS", "SETTINGS", "SPEC_FIELDS", "VERDICTS", "amendments",
           "check_rule", "checklist", "claim_sort_key", "criterion", "format_criterion", "rule", "rule_holds"]

CLAIMS_DIR_ENV = "RLVR_CLAIMS_DIR"
"""Environment variable: where ``record`` writes ``<notebook>.claims.json`` (set by the papermill runner and by
the nbval tests); defaults to the current directory, i.e. beside the notebook when run from Jupyter."""


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
    alternatives: list | None = None
    """The row's verdict under the alternative analyses of ``book/robustness.yml`` that the page computes itself,
    each ``dict(alternative, verdict, number, ci, note)`` from the same verdict function as the row's own verdict
    (read by :mod:`rlvr_dynamics.verdicts.robustness`); left out of the JSON when ``None``."""
    digits: int = field(default=4, repr=False)
    """Significant digits shown in the printed table and stored in the JSON."""

    def __post_init__(self) -> None:
        known = checklist()
        if self.id not in known:
            raise ValueError(
                f"claim id {self.id!r} is not in the spec checklists (book/claims.yml); "
                f"known ids: {', '.join(sorted(known, key=claim_sort_key))}"
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
            check_rule(self.id, self.rule)
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
        if self.alternatives is None:
            row.pop("alternatives")
        else:
            row["alternatives"] = [{**a, "number": _round(a.get("number"), self.digits),
                                    "ci": None if a.get("ci") is None else [_round(x, self.digits) for x in a["ci"]]}
                                   for a in self.alternatives]
        row["measured"] = _round(self.measured, self.digits)
        row["paper_value"] = _round(self.paper_value, self.digits)
        row["tolerance"] = _round(self.tolerance, self.digits)
        row["ci"] = None if self.ci is None else [_round(x, self.digits) for x in self.ci]
        row["paper"] = checklist()[self.id]["paper"]
        return row




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
