"""Markdown shared by every generated page: verdict badges, claim and spec links, criterion text, verdicts.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable


from .claims import NOT_TESTED, SETTINGS, checklist, claim_verdicts, format_criterion
from .registry import (PAPERS, NotebookEntry)


GENERATED = "_generated"
"""Folder (under the book) of everything the build writes; wiped at each build."""
VERDICT_ORDER = ("PASS", "PARTIAL", "FAIL", "CONSISTENT", "INCONCLUSIVE", "N/A", NOT_TESTED)
"""Order in which verdicts are counted and listed."""
VERDICT_HELP = {
    "PASS": "the criterion is met",
    "PARTIAL": "the criterion is met in part",
    "FAIL": "the criterion is not met",
    "CONSISTENT": "holds by construction here: a consistency check, never evidence for a PASS",
    "INCONCLUSIVE": "the test here could not have shown the effect",
    "N/A": "needs what this machine lacks (GPU-scale models)",
    NOT_TESTED: "no page records this claim",
}

def slug(text: str) -> str:
    """``"The oscillator model"`` → ``"the-oscillator-model"``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def chapters(entries: Iterable[NotebookEntry]) -> dict[str, list[tuple[str, list[NotebookEntry]]]]:
    """``{paper: [(chapter, [entries…]), …]}``, chapters ordered by their first entry."""
    grouped: dict[str, dict[str, list[NotebookEntry]]] = defaultdict(dict)
    for e in entries:
        grouped[e.paper].setdefault(e.chapter, []).append(e)
    return {p: list(grouped[p].items()) for p in PAPERS if p in grouped}


def page_numbers(entries: Iterable[NotebookEntry]) -> dict[str, int]:
    """``{notebook id: page number}`` in the book's reading order (parts, chapters, pages as in the TOC), from 1:
    figures are numbered "Figure <page>.<n>" and restart on every page, like a lecture."""
    order = [e.id for chaps in chapters(entries).values() for _, items in chaps for e in items]
    return {nb: k for k, nb in enumerate(order, 1)}



# ---------------------------------------------------------------------------------------------------------------
# Small Markdown helpers
# ---------------------------------------------------------------------------------------------------------------

SHORT_VERDICTS = {"PASS": "PASS", "PARTIAL": "PART", "FAIL": "FAIL", "CONSISTENT": "CONS", "INCONCLUSIVE": "INC",
                  "N/A": "N/A", NOT_TESTED: "–"}
"""Short badge words for dense tables (the claim × setting matrix); the full word is the badge's tooltip."""


def badge(verdict: str, short: bool = False) -> str:
    """Inline HTML verdict badge: ``<span class="verdict-badge verdict-pass" title="…">PASS</span>``; ``short``
    writes :data:`SHORT_VERDICTS`' word (the tooltip names the verdict)."""
    cls = "verdict-" + slug(verdict)
    title = VERDICT_HELP.get(verdict, "")
    if short:
        title = f"{verdict}: {title}"
    return (f'<span class="verdict-badge {cls}" title="{title}">'
            f'{SHORT_VERDICTS.get(verdict, verdict) if short else verdict}</span>')


def md_escape(text: Any) -> str:
    """Text recorded by a notebook, safe inside Markdown (no accidental emphasis, math, roles or tables)."""
    if text is None:
        return "–"
    out = str(text).replace("\\", "\\\\")
    for ch in "*_[]<>$|`{}#":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


_TRACKER = re.compile(r"\s*\((?:see )?issues? #?\d+\)", re.I)
_TRACKER_IN_PARENS = re.compile(r"\s*[;,]\s*(?:see )?issues? #?\d+(?=\s*\))", re.I)


def reader_text(text: Any) -> str:
    """Text written for developers (claims.yml's ``changed_after_result``, reasons) without its tracker references:
    ``"... was seen (issue 9)."`` → ``"... was seen."``; ``"2026-12-01 (issue 21), after"`` → ``"2026-12-01, after"``;
    ``"(fixed 2026-12-01, before a run was read; issue 23)"`` → ``"(fixed 2026-12-01, before a run was read)"``."""
    if text is None:
        return ""
    text = _TRACKER_IN_PARENS.sub("", _TRACKER.sub(" ", str(text)))
    return re.sub(r"\s+([,.;])", r"\1", text).strip()


def md_code(value: Any) -> str:
    """A value as inline code (``–`` for None)."""
    if value is None:
        return "–"
    text = str(value).replace("`", "'").replace("\n", " ")
    return f"`{text}`"


def claim_label(cid: str) -> str:
    return "claim-" + cid.lower()


def claim_ref(cid: str) -> str:
    """``{ref}`P1-C3 <claim-p1-c3>``` — a link to the claim's entry in the claims appendix."""
    return f"{{ref}}`{cid} <{claim_label(cid)}>`"


def spec_label(paper: str) -> str:
    return f"spec-sections-{paper.lower()}"


_PROTECTED = re.compile(r"(\$\$.*?\$\$|\$[^$\n]*\$|```.*?```|~~~.*?~~~|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|"
                        r"\{[a-z:-]+\}`[^`]*`|^#+ [^\n]*$|^\([^)\n]*\)=$|<[^>\n]+>|^:[a-z-]+:.*$)",
                        re.S | re.M)
_CLAIM_ID = re.compile(r"\b(P[12]-C\d+)\b")
_SECTION = re.compile(r"§\s?(\d+(?:\.\d+)*(?:\s?[–-]\s?\d+(?:\.\d+)*)?)")


def link_references(markdown: str, paper: str) -> str:
    """Link claim IDs (``P1-C3``) to the claims appendix and spec references (``§3.5``) to its section table.

    Math, code, existing links, roles, headings and HTML are left untouched.
    """
    known = checklist()
    parts = _PROTECTED.split(markdown)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 1 or not part:  # protected span
            out.append(part)
            continue
        part = _CLAIM_ID.sub(lambda m: claim_ref(m.group(1)) if m.group(1) in known else m.group(1), part)
        part = _SECTION.sub(lambda m: f"{{ref}}`§{m.group(1)} <{spec_label(paper)}>`", part)
        out.append(part)
    return "".join(out)


def first_sentence(text: str, max_chars: int = 320) -> str:
    """The first sentence of ``text`` (periods inside ``$…$`` math and decimals do not end it)."""
    text = " ".join(text.split())
    in_math = False
    for i, ch in enumerate(text):
        if ch == "$":
            in_math = not in_math
        elif ch in ".!?" and not in_math and (i + 1 == len(text) or text[i + 1] == " "):
            if i + 2 < len(text) and not text[i + 2].isupper() and text[i + 2] not in "($*`":
                continue
            return text[: i + 1]
    return text if len(text) <= max_chars else text


# ---------------------------------------------------------------------------------------------------------------
# Verdicts
# ---------------------------------------------------------------------------------------------------------------

def load_verdicts(claims_dir: Path) -> list[dict]:
    """Every recorded claim row in ``claims_dir/*.claims.json``, with its notebook id."""
    rows = []
    for path in sorted(Path(claims_dir).glob("*.claims.json")):
        data = json.loads(path.read_text())
        for row in data["claims"]:
            rows.append({**row, "notebook": data["notebook"]})
    return rows


SETTING_LABELS = {"paper": "paper's setting (pretrained LLM)", "testbed": "GRPO testbed (tiny models, CPU)",
                  "exact": "exact model", "context": "context (not the paper's algorithm)"}
"""How each setting (:data:`rlvr_dynamics.book.claims.SETTINGS`) is named on the pages."""
SETTING_SHORT = {"paper": "paper", "testbed": "testbed", "exact": "exact", "context": "context"}


def measured_text(row: dict | None) -> str:
    """``measured`` of a row (or a claim verdict) with its CI and unit: ``0.95 [0.91, 0.99] (ratio)``."""
    if not row or row.get("measured") is None:
        return "–"
    out = md_code(row["measured"])
    if row.get("ci"):
        lo, hi = row["ci"]
        out += f" [{lo}, {hi}]"
    if row.get("unit"):
        out += f" ({md_escape(row['unit'])})"
    return out


def page_cells(verdict: dict, notebook: str) -> list[tuple[str, str]]:
    """``[(setting, verdict), ...]`` that one page shows for one claim: the claim's ``by_page`` cells
    (:func:`rlvr_dynamics.book.claims.claim_verdicts`), in :data:`SETTINGS` order."""
    cells = verdict.get("by_page", {}).get(notebook, {})
    return [(s, cells[s]) for s in SETTINGS if s in cells]


def per_claim(rows: list[dict], registered: Iterable[NotebookEntry]) -> list[dict]:
    """One verdict per claim (:func:`rlvr_dynamics.book.claims.claim_verdicts`) over the registered notebooks."""
    ids = {e.id for e in registered}
    return claim_verdicts([r for r in rows if r["notebook"] in ids])


CRITERION_FIELDS = (("statistic", "Statistic"), ("threshold", "Pass if"), ("partial", "Partial if"),
                    ("inconclusive_if", "Inconclusive if"), ("tolerance", "Tolerance"), ("seeds", "Seeds"))
"""Fields of a pre-registered criterion (``book/claims.yml``) in the order the book shows them."""


def criterion_fields(cid: str) -> list[tuple[str, str]]:
    """The pre-registered criterion of a claim as ``[(label, markdown), …]``: the fields of its ``criterion``
    dict (escaped plain text), else the spec's ``confirm`` line (which may hold math)."""
    info = checklist()[cid]
    crit = info.get("criterion")
    if isinstance(crit, dict):
        out = []
        for key, label in CRITERION_FIELDS:
            value = crit.get(key)
            if value not in (None, ""):
                text = re.sub(r"^(PASS|PARTIAL|INCONCLUSIVE):\s*", "", str(value))
                out.append((label, md_escape(text)))
        if out:
            return out
    if isinstance(crit, str) and crit.strip():
        return [("Criterion", md_escape(crit))]
    return [("Pass if", info.get("confirm") or "–")]


def criterion_text(cid: str, verdict: dict | None = None) -> str:
    """The short form of a claim's criterion: its pass rule (``threshold``), else the whole criterion."""
    fields = dict(criterion_fields(cid))
    return fields.get("Pass if") or format_criterion(checklist()[cid].get("criterion")) or "–"


def statement_text(cid: str) -> str:
    """The claim as the paper states it (``paper_statement``, escaped), else the spec's checklist line (math)."""
    info = checklist()[cid]
    if info.get("paper_statement"):
        return md_escape(str(info["paper_statement"]).strip())
    return (info.get("statement") or "").strip()


# ---------------------------------------------------------------------------------------------------------------
# Criterion provenance: fixed before the result, or amended after it
# ---------------------------------------------------------------------------------------------------------------

FIXED_BEFORE = "criterion fixed before the result"
"""What every page says beside a verdict whose criterion was never changed after a result was seen."""


def provenance_line(verdict: dict, short: bool = False) -> str:
    """One line on where a claim's criterion stands, from ``verdict["provenance"]``
    (:func:`rlvr_dynamics.book.claims.criterion_provenance`, the one function every page reads):
    ``"criterion fixed before the result"``, or ``"criterion amended after the result (2026-11-30, 2026-12-01; 2
    changes): verdict under the first rule PASS → now FAIL"``. ``short`` gives the scorecard cell
    (``"amended 2026-11-30, 2026-12-01 · first rule PASS → FAIL"``)."""
    prov = verdict.get("provenance") or {}
    if not prov.get("amended"):
        return "fixed before the result" if short else FIXED_BEFORE
    n = len(prov["amendments"])
    dates = ", ".join(prov["dates"])
    first, now = prov["first_verdict"], prov["verdict"]
    if short:
        return f"amended {dates} · first rule {first} → {now}"
    return (f"criterion amended after the result ({dates}; {n} change{'s' if n > 1 else ''}): verdict under the "
            f"first rule, when it was applied, {first} → now {now}")


def amendment_items(verdict: dict) -> list[str]:
    """The amendments of a claim as Markdown list items (``- *2026-11-30* (verdict before: PASS): what changed``),
    oldest first; ``[]`` for a criterion fixed before the result. A verdict computed from the evidence (a change of
    the claim's kind) says so."""
    out = []
    for a in (verdict.get("provenance") or {}).get("amendments", []):
        before = a["verdict_before"] + (", computed from the rows under the earlier kind" if a.get("computed") else "")
        out.append(f"- *{a['date']}* (verdict before this change: {before}): {md_escape(reader_text(a['change']))}")
    return out


def amended_claims(verdicts: list[dict]) -> list[dict]:
    """The claims whose headline verdict rests on a criterion amended after the result was seen."""
    return [c for c in verdicts if (c.get("provenance") or {}).get("amended")]
