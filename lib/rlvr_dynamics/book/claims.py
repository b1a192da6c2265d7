"""The claims ledger: every notebook ends by recording a verdict for each paper claim it tests.

A claim ID (``P1-C10``, ``P2-C6``) must exist in the checklists of the paper specs, copied into
``book/claims.yml`` so that the repository stands alone. ``record`` prints a small rounded table (the notebook's
``nbval-check-output`` cell, so nbval catches any change in a verdict or a rounded number) and writes a JSON file
that the book's scorecard page aggregates (:func:`rlvr_dynamics.book.build.write_scorecard`).

Example (in a notebook's last cell)::

    from rlvr_dynamics import claims
    claims.record("p1_regimes", [
        claims.Claim("P1-C2", "Momentum supplies the inertia", measured=1.0003, paper_value=1.0,
                     tolerance="rel 1e-2", verdict="PASS", reason="M/K ratio vs (1+mu) closed form"),
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

VERDICTS = ("PASS", "FAIL", "PARTIAL", "N/A")
"""Allowed verdicts. An honest FAIL (with the measured numbers) beats a tuned PASS."""

CLAIMS_DIR_ENV = "RLVR_CLAIMS_DIR"
"""Environment variable: where ``record`` writes ``<notebook>.claims.json`` (set by the papermill runner and by
the nbval tests); defaults to the current directory, i.e. beside the notebook when run from Jupyter."""

CHECKLIST_PATH = CLAIMS_PATH


@lru_cache(maxsize=1)
def checklist() -> dict[str, dict[str, Any]]:
    """All known claims, ``{claim_id: {paper, tag, statement, confirm, scale}}``, from ``book/claims.yml``."""
    data = yaml.safe_load(CHECKLIST_PATH.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for paper, block in data.items():
        for row in block["claims"]:
            out[row["id"]] = {"paper": paper, **{k: v for k, v in row.items() if k != "id"}}
    return out


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
    """One of PASS / FAIL / PARTIAL / N/A."""
    paper_value: Any = None
    """The paper's (or the closed form's) value, if any."""
    tolerance: Any = None
    """The tolerance used for the verdict, e.g. ``0.05`` or ``"rel 5%"``."""
    reason: str = ""
    """Why this verdict: required for FAIL, PARTIAL and N/A."""
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
    ids = [c.id for c in items]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"record({notebook!r}): duplicate claim ids {dupes}")
    rows = [c.as_row() for c in items]
    target = Path(out_dir or os.environ.get(CLAIMS_DIR_ENV) or ".")
    target.mkdir(parents=True, exist_ok=True)
    payload = {"notebook": notebook, "claims": rows}
    atomic_write_text(target / f"{notebook}.claims.json", json.dumps(payload, indent=1, sort_keys=False) + "\n")
    print(format_table(rows))
    return rows
