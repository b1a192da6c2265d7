"""Markdown shared by every generated page: verdict badges, claim and spec links, criterion text, verdicts.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
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
                        r"\{[a-z:-]+\}`[^`]*`|^#+ [^\n]*$|^\([^)\n]*\)=$|<[/!A-Za-z][^>\n]*>|^:[a-z-]+:[^\n]*$)",
                        re.S | re.M)
_CLAIM_ID = re.compile(r"\b(P[12]-C\d+)\b")
_SECTION = re.compile(r"§\s?(\d+(?:\.\d+)*(?:\s?[–-]\s?\d+(?:\.\d+)*)?)")


def link_references(markdown: str, paper: str | None, link: bool = True) -> str:
    """Link claim IDs (``P1-C3``) to the claims appendix; turn references to the project's private notes
    (``spec §3.5``) into linked citations of the paper or of this book (:func:`cite_text`), raw Python values into
    words and code names into code (:func:`prose`'s rules).

    Math, code, existing links, roles, headings and HTML are left untouched.
    """
    known = checklist()
    parts = _PROTECTED.split(markdown)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 1 and re.match(r"#+ ", part):   # a heading: its words, never a link (headings label sections)
            out.append(plain_markdown(part, paper))
            continue
        if i % 2 == 1 or not part:  # protected span
            out.append(part)
            continue
        part = _words(part, paper, link=link)
        part = _IDENT.sub(lambda m: f"`{m.group(1)}`" if is_code_identifier(m.group(1)) else m.group(0), part)
        if link:
            part = _CLAIM_ID.sub(lambda m: claim_ref(m.group(1)) if m.group(1) in known else m.group(1), part)
        out.append(part)
    return "".join(out)


def plain_markdown(markdown: str, paper: str | None) -> str:
    """:func:`link_references` without links: for headings and figure captions."""
    if re.match(r"#+ ", markdown):
        hashes, rest = markdown.split(" ", 1)
        return hashes + " " + link_references(rest, paper, link=False)
    return link_references(markdown, paper, link=False)


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
    value = row["measured"]
    if isinstance(value, str) and value.strip().lower() in ("nan", "none", ""):
        return "not measured"
    if isinstance(value, float) and value != value:
        return "not measured"
    out = md_code(value)
    if row.get("ci"):
        lo, hi = row["ci"]
        out += f" [{lo}, {hi}]"
    if row.get("unit"):
        out += f" ({prose(row['unit'], row.get('id', 'P1')[:2])})"
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
                out.append((label, prose(text, cid[:2])))
        if out:
            return out
    if isinstance(crit, str) and crit.strip():
        return [("Criterion", prose(crit, cid[:2]))]
    return [("Pass if", link_references(info.get("confirm") or "–", cid[:2]))]


def criterion_text(cid: str, verdict: dict | None = None) -> str:
    """The short form of a claim's criterion: its pass rule (``threshold``), else the whole criterion."""
    fields = dict(criterion_fields(cid))
    return fields.get("Pass if") or format_criterion(checklist()[cid].get("criterion")) or "–"


def statement_text(cid: str) -> str:
    """The claim as the paper states it (``paper_statement``, escaped), else the spec's checklist line (math)."""
    info = checklist()[cid]
    if info.get("paper_statement"):
        return prose(str(info["paper_statement"]).strip(), cid[:2])
    return _plain_links(cid[:2], (info.get("statement") or "").strip())


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
        out.append(f"- *{a['date']}* (verdict before this change: {before}): {prose(a['change'], verdict.get('paper'))}")
    return out


def amended_claims(verdicts: list[dict]) -> list[dict]:
    """The claims whose headline verdict rests on a criterion amended after the result was seen."""
    return [c for c in verdicts if (c.get("provenance") or {}).get("amended")]


# ---------------------------------------------------------------------------------------------------------------
# Where the theory comes from: the papers (arXiv id, theorem) or this book's own derivation
# ---------------------------------------------------------------------------------------------------------------

ARXIV = {"P1": "arXiv:2606.30789", "P2": "arXiv:2510.08539"}
"""The papers' arXiv identifiers (P1: Ghosh et al., "Predictable GRPO"; P2: Suk & Duan, "Gradient gap")."""


@dataclass(frozen=True)
class TheorySource:
    """One part of a paper's theory as this book uses it: what the paper states and what this book derived.

    The papers' full texts are not available here, so the book cannot cite their section numbers; it cites the
    paper (arXiv id) and its numbered results (Theorem 7, Proposition 14, …) where they are known, and says which
    steps it derived itself."""

    topic: str
    """What it is about, e.g. ``"the oscillator"``."""
    paper: str | None
    """What the paper states, e.g. ``"Theorem 7"``; None when the part is this book's own."""
    derived: str | None
    """The steps this book derived (or chose) itself, in words; None when the paper states all of it."""
    cite: str
    """The short citation the pages write in place of a section number (read in running text)."""


def _ts(topic: str, paper: str | None, derived: str | None, cite: str) -> TheorySource:
    return TheorySource(topic, paper, derived, cite)


THEORY_SOURCES: dict[str, dict[str, TheorySource]] = {
    "P1": {
        "1": _ts("the claims", "the numbered claims (abstract and summaries)", None, "P1's claims"),
        "2": _ts("setup and notation", "the setting and symbols", None, "P1's setup"),
        "3": _ts("the oscillator theory", "Theorem 7 and Proposition 14", "the second-order expansion and the "
                 "coefficient formulas", "P1's oscillator theory (Theorem 7, Proposition 14)"),
        "3.1": _ts("the discrete GRPO update", None, "the update written as a recursion (the paper's exact form is not "
                   "available)", "this book's reconstruction of the update"),
        "3.2": _ts("mean-field assumption and linearised recursion", "the mean-field assumption",
                   "the linearised lagged recursion", "P1's mean-field assumption (recursion derived here)"),
        "3.3": _ts("the oscillator", "Theorem 7: a stochastically forced damped oscillator",
                   "the coefficients M, C, K_eff from a second-order expansion", "P1 Theorem 7"),
        "3.4": _ts("regimes and thresholds", "the stability threshold and the overdamped-to-oscillatory transition",
                   "the damping ratio and the threshold formulas", "P1's regimes and thresholds"),
        "3.5": _ts("accuracy of the linearisation and the lag", None,
                   "the exact-recursion ratios and the lag semantics, checked numerically",
                   "this book's check of the linearisation"),
        "3.6": _ts("the three-phase law", "Proposition 14: slow start, rise, plateau",
                   "the parametrisation fitted here", "P1 Proposition 14"),
        "3.7": _ts("single-exponential baseline and size exponent", "the overdamped limit is the single exponential",
                   "the mapping formulas (timescale = C/K_eff)", "P1's overdamped limit"),
        "3.8": _ts("stationary variance and group size", "fluctuations scale as 1/G; a residual G-dependence (v2)",
                   "the stationary-variance formula and the finite-G mechanisms", "P1's 1/G law"),
        "3.9": _ts("the fixed point p*", "imported from Mroueh (2025, arXiv:2503.06639)",
                   "the bandit form of the fixed point", "Mroueh's fixed point (arXiv:2503.06639)"),
        "4": _ts("diagnostics", "four diagnostics that separate failure modes",
                 "the windows and thresholds", "P1's four diagnostics"),
        "5": _ts("the paper's experiments", "GRPO on GSM8K, three models, G = 4 and 16", None, "P1's experiments"),
        "6": _ts("related work", "Mroueh (2025) and the saturation law", None, "P1's related work"),
        "7": _ts("small-scale reproduction design", None, "the whole design", "this book's reproduction design"),
        "7.1": _ts("CPU numerics", None, "the exact numerics", "this book's CPU numerics"),
        "7.2": _ts("the softmax-bandit reduction", "the bandit setting",
                   "the analytic stiffness K_z(β) and the lag models", "this book's softmax-bandit reduction"),
        "7.3": _ts("the CPU stand-in for the LLM runs", None, "tiny models trained with GRPO on CPU",
                   "this book's CPU stand-in for the LLM runs"),
        "7.4": _ts("acceptance checks", None, "the reference values", "this book's acceptance list"),
        "7.5": _ts("fitting procedure", None, "the fits and their protocol", "this book's fitting procedure"),
        "8": _ts("open choices", None, "every choice the paper leaves open", "this book's open choices"),
    },
    "P2": {
        "1": _ts("the claims", "the numbered claims (abstract and summaries)", None, "P2's claims"),
        "2": _ts("setup and notation", "the setting and symbols", None, "P2's setup"),
        "2.1": _ts("basic objects", "the setting and symbols", None, "P2's setup"),
        "2.2": _ts("the Gradient Gap", "the Gradient Gap (definition)", "its identities, checked numerically",
                   "P2's Gradient Gap"),
        "2.3": _ts("the log-odds potential", "the log-odds potential", "its identities", "P2's log-odds potential"),
        "2.4": _ts("update and gap alignment", "gap alignment and its cumulative form",
                   "the index conventions", "P2's gap alignment"),
        "2.5": _ts("response-length quantities", "the length symbols", "their meaning", "P2's length quantities"),
        "2.6": _ts("assumptions", "the assumptions' existence and topic", "their wording", "P2's assumptions"),
        "3": _ts("the theory", "Theorems 1-3", "the reconstructions of their statements", "P2's theory (Theorems 1-3)"),
        "3.1": _ts("the exact one-step identity", None, "the identity and its Hoeffding bound, checked numerically",
                   "this book's one-step identity"),
        "3.2": _ts("Theorem 1: the convergence pathway", "Theorem 1 (its rate)", "the constant and the formula",
                   "P2 Theorem 1"),
        "3.3": _ts("the convergence guarantee", "convergence when updates stay aligned", None,
                   "P2's convergence guarantee"),
        "3.4": _ts("stagnation", "stagnation below 100 % at a fixed step", "the mechanism", "P2's stagnation result"),
        "3.5": _ts("Theorem 2: the sharp threshold and catastrophic failure", "Theorem 2",
                   "the curved two-outcome instance used here", "P2 Theorem 2"),
        "3.6": _ts("Theorem 3: token-level refinement", "Theorem 3 (the length scaling)", "the mechanism",
                   "P2 Theorem 3"),
        "3.7": _ts("algorithm update directions", "the scope (REINFORCE, GRPO, Dr. GRPO)",
                   "each algorithm's direction and its gap alignment, checked numerically",
                   "P2's algorithm directions"),
        "3.8": _ts("gradient norm vs reward", "the claim", "the explanation", "P2's gradient-norm claim"),
        "3.9": _ts("scope limits", "limits named in summaries", None, "P2's scope limits"),
        "4": _ts("the paper's experiments", "bandit simulations and GRPO on Qwen2.5-Math-7B", None,
                 "P2's experiments"),
        "5": _ts("small-scale reproduction design", None, "the whole design", "this book's reproduction design"),
        "5.1": _ts("CPU numerics", None, "the deterministic checks", "this book's CPU numerics"),
        "5.2": _ts("the contextual bandit", "a bandit experiment", "the bandit's exact setup",
                   "this book's contextual bandit"),
        "5.3": _ts("the token-level stand-in", None, "the trap model of response length",
                   "this book's token-level stand-in"),
        "5.4": _ts("LLM-scale runs", "GRPO on a 7B model", "the CPU-scale settings", "this book's LLM-scale plan"),
        "5.5": _ts("sanity numbers from toy runs", None, "the reference numbers", "this book's toy-run numbers"),
        "5.6": _ts("library surface", None, "the functions", "this book's library"),
        "6": _ts("open choices", None, "every choice the paper leaves open", "this book's open choices"),
    },
}
"""Per paper, the parts of the theory the pages refer to, keyed by the number the project's notes give them
(the notes are not public, so the pages never show these numbers: they show :attr:`TheorySource.cite`)."""

OPEN_CHOICES = {"P1": "8", "P2": "6"}
"""Key of the "open choices" entry of each paper in :data:`THEORY_SOURCES` (an item ``8.6`` is open choice 6)."""


def theory_source(paper: str, number: str) -> TheorySource:
    """The :class:`TheorySource` of a numbered part (``"3.5"``, ``"7.2"``, an open choice ``"8.6"``); a number
    without its own entry falls back to its parent (``"3.4.1"`` → ``"3.4"``)."""
    table = THEORY_SOURCES[paper]
    key = number.strip(".")
    top = OPEN_CHOICES[paper]
    if key.startswith(top + ".") and key not in table:
        n = key.split(".", 1)[1]
        return _ts(f"open choice {n}", None, "this choice", f"this book's open choice {n}")
    while key not in table and "." in key:
        key = key.rsplit(".", 1)[0]
    if key not in table:
        raise ValueError(f"no theory source for {paper} part {number!r}; add it to THEORY_SOURCES")
    return table[key]


def _parts(paper: str, ref: str) -> list[TheorySource]:
    """The sources a reference covers: ``"3.3"`` → one; a range ``"3.3–3.5"`` → each part from 3.3 to 3.5."""
    ref = ref.replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)*)(?:[–-](\d+(?:\.\d+)*))?", ref.strip("."))
    if not m:
        raise ValueError(f"not a part number or range: {ref!r}")
    lo, hi = m.group(1), m.group(2)
    if hi is None:
        return [theory_source(paper, lo)]
    if "." not in hi and "." in lo:          # "3.5-7" means 3.5-3.7
        hi = lo.rsplit(".", 1)[0] + "." + hi
    head, a = (lo.rsplit(".", 1) + [""])[:2] if "." in lo else ("", lo)
    b = hi.rsplit(".", 1)[1] if "." in hi else hi
    if head and hi.startswith(head + ".") and a.isdigit() and b.isdigit():
        keys = [f"{head}.{k}" for k in range(int(a), int(b) + 1)]
    else:
        keys = [lo, hi]
    return list(dict.fromkeys(theory_source(paper, k) for k in keys))


def cite_text(paper: str, ref: str) -> str:
    """How a page refers to a part of the theory, in words: ``cite_text("P1", "3.3")`` → ``"P1 Theorem 7"``;
    a range joins its parts (``"3.6–3.7"`` → ``"P1 Proposition 14 and P1's overdamped limit"``)."""
    cites = [s.cite for s in _parts(paper, ref)]
    if len(cites) > 3:
        return f"{cites[0]} to {cites[-1]}"
    return cites[0] if len(cites) == 1 else ", ".join(cites[:-1]) + " and " + cites[-1]


def sources_label(paper: str) -> str:
    """Anchor of the "where the theory comes from" table of a paper (in its claims appendix)."""
    return f"theory-sources-{paper.lower()}"


spec_label = sources_label   # older name, kept for callers


def sections_text(paper: str, section: str) -> str:
    """A registry ``section`` field (``"§3.3–3.4, §7.2"``) as words: the cites of its parts, joined."""
    refs = [r.strip().lstrip("§").strip() for r in section.split(",") if r.strip()]
    out: list[str] = []
    for r in refs:
        for s in _parts(paper, r):
            if s.cite not in out:
                out.append(s.cite)
    return "; ".join(out) or "–"


# Words about a private document or about how the work was done, as the reader should read them.
_SPEC_REF = re.compile(
    r"(?:\b(?:see |cf\. )?(?:the |this )?(?:project[’']s )?(?:technical )?"
    r"(?:spec(?:ification)?(?:[’']s)?|specs)\s+)?(?:open\s+choice\s+)?"
    r"§\s?(\d+(?:\.\d+)*(?:\s?[–-]\s?\d+(?:\.\d+)*)?)"
    r"(?:\s+of\s+the\s+(?:project[’']s\s+)?spec(?:ification)?\b)?", re.I)
_SPEC_WORDS = (
    (re.compile(r"\b(?:a |the )?spec values?\b", re.I), lambda m: "values derived in this book"
     if m.group(0).lower().rstrip().endswith("values") else "a value derived in this book"),
    (re.compile(r"\bspec(?:[’']s)? derivations?\b", re.I), lambda m: "this book's derivation"),
    (re.compile(r"\bthe spec[’']s (author|derivation|rounding|grid|momenta|caution|form)\b", re.I),
     lambda m: {"author": "this book's author", "derivation": "this book's derivation",
                "rounding": "this book's rounding", "grid": "this book's grid", "momenta": "this book's momenta",
                "caution": "this book's caution", "form": "this book's form"}[m.group(1).lower()]),
    (re.compile(r"\bspec (grid|momenta|caution|form|table|checklist line|defaults)\b", re.I),
     lambda m: f"this book's {m.group(1)}"),
    (re.compile(r"\bas read in the spec\b", re.I), lambda m: "as read in a summary of the paper"),
    (re.compile(r"\bspec used\b", re.I), lambda m: "this book's reference used"),
    (re.compile(r"\bthe spec says\b", re.I), lambda m: "this book's plan says"),
    (re.compile(r"\b(?:in|of|from) the (?:project[’']s )?specs?\b", re.I),
     lambda m: m.group(0).split()[0] + " this book's reading of the paper"),
    (re.compile(r"\bthe (?:project[’']s )?specs?\b", re.I), lambda m: "this book's reading of the paper"),
    (re.compile(r"\bspecs?\b", re.I), lambda m: "this book's reading of the paper"),
)
_TRUTH = re.compile(r"(?<=[:=] )(True|False)\b|(?<=[:=])(True|False)\b")
_EMPTY_LIST = re.compile(r"\[\s*\]")
_NAN = re.compile(r"(?<![\w.])nan(?![\w(])")
_IDENT = re.compile(r"(?<![\w\\$`/-])(?<![A-Za-z0-9]\.)((?:[A-Za-z][\w.-]*/)*[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)*"
                    r"(?:\(\))?)(?![\w`/])")
_MATH_NAMES = frozenset({"alpha", "beta", "gamma", "delta", "Delta", "eta", "zeta", "theta", "mu", "rho", "omega",
                         "sigma", "tau", "lambda", "psi", "phi", "kappa", "epsilon", "nu", "pi", "chi", "xi",
                         "Omega", "Sigma", "Gamma", "Lambda", "Theta", "Phi", "Psi", "Var", "dBIC", "dAIC", "SE"})


def is_code_identifier(token: str) -> bool:
    """``True`` for a name from the code (``is_collapsed``, ``dr_grpo``, ``p2_length_scaling``,
    ``trainer_state``), ``False`` for a symbol written in ASCII (``K_ref``, ``eta_c``, ``M_pred``, ``Var_inf``): its
    first part is one letter or a Greek letter's name."""
    if "/" in token:     # a path: code when it names a file or holds a code name
        return "_" in token or bool(re.search(r"\.[a-z]{1,5}$", token))
    if "_" not in token:
        return False
    first = re.split(r"[_.]", token, maxsplit=1)[0]
    return not (len(first) == 1 or first in _MATH_NAMES)


def _words(text: str, paper: str | None, link: bool) -> str:
    """The spec and raw-value rules on plain (unprotected) text."""
    def cite(m: re.Match) -> str:
        if paper is None:
            return "this book's reading of the paper"
        words = cite_text(paper, m.group(1))
        return f"{{ref}}`{words} <{sources_label(paper)}>`" if link else words
    text = _SPEC_REF.sub(cite, text)
    for pat, repl in _SPEC_WORDS:
        text = pat.sub(repl, text)
    text = _TRUTH.sub(lambda m: "yes" if (m.group(1) or m.group(2)) == "True" else "no", text)
    text = _EMPTY_LIST.sub("none", text)
    return _NAN.sub("undefined", text)


def prose(text: Any, paper: str | None = None) -> str:
    """Plain text recorded by a notebook or written in ``book/claims.yml`` as reader Markdown: escaped like
    :func:`md_escape`, tracker references dropped (:func:`reader_text`), references to the project's private notes
    turned into citations of the paper or of this book (:func:`cite_text`), raw Python values turned into words
    (``: True`` → ``: yes``, ``[]`` → ``none``, ``nan`` → ``undefined``) and code names set as code
    (``dr_grpo`` → ```dr_grpo```)."""
    if text is None:
        return "–"
    text = _words(reader_text(text), paper, link=False)
    out, pos = [], 0
    for m in _IDENT.finditer(text):
        if not is_code_identifier(m.group(1)):
            continue
        out += [md_escape(text[pos:m.start()]), md_code(m.group(1))]
        pos = m.end()
    out.append(md_escape(text[pos:]))
    return "".join(out)



def _plain_links(paper: str, markdown: str) -> str:
    """:func:`link_references` without linking claim IDs (a claim's own line names no other claim)."""
    return link_references(markdown, paper)
