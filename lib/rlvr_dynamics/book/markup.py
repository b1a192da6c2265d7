"""Markdown shared by every generated page: verdict badges, claim links, reader text (citations of the theory in
words, code names as code, raw values as words), criterion text, verdicts and their provenance.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable


from .claims import NOT_TESTED, SETTINGS, checklist, claim_verdicts, format_criterion
from ..verdicts.headline import first_rule_verdict, passed_after_fail, verdict_chain  # noqa: F401
from .registry import (PAPERS, NotebookEntry)
from .theory_sources import (ARXIV, OPEN_CHOICES, THEORY_SOURCES, TheorySource, cite_text, parts, sections_text,  # noqa: F401
                             sources_label, theory_source)


GENERATED = "_generated"
"""Folder (under the book) of everything the build writes; wiped at each build."""
VERDICT_ORDER = ("PASS", "PARTIAL", "FAIL", "CONSISTENT", "INCONCLUSIVE", "N/A", NOT_TESTED)
"""Order in which verdicts are counted and listed."""
VERDICT_HELP = {
    "PASS": "the criterion is met",
    "PARTIAL": "the criterion is met in part",
    "FAIL": "the criterion is not met",
    "CONSISTENT": "holds by construction here: a consistency check, never evidence for a PASS",
    "INCONCLUSIVE": "undecided here: the test could not have shown the effect, or the result neither meets nor refutes the criterion",
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


_PROTECTED = re.compile(r"(\$\$.*?\$\$|\$[^$\n]*\$|```.*?```|~~~.*?~~~|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|"
                        r"\{[a-z:-]+\}`[^`]*`|^#+ [^\n]*$|^\([^)\n]*\)=$|<[/!A-Za-z][^>\n]*>|^:[a-z-]+:[^\n]*$)",
                        re.S | re.M)
CLAIM_ID = re.compile(r"\b(P[12]-C\d+)\b")
"""A claim id in text (``P1-C3``)."""
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
            part = CLAIM_ID.sub(lambda m: claim_ref(m.group(1)) if m.group(1) in known else m.group(1), part)
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
"""Fields of a criterion (``book/claims.yml``) in the order the book shows them."""


def criterion_fields(cid: str) -> list[tuple[str, str]]:
    """The criterion of a claim as ``[(label, markdown), …]``: the fields of its ``criterion``
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
# Criterion provenance: unchanged since its first result, or amended after it
# ---------------------------------------------------------------------------------------------------------------

FIXED_BEFORE = "criterion unchanged since its first result"
"""What every page says beside a verdict whose criterion was never changed after a result was seen. Every criterion
of ``book/claims.yml`` was written on 2026-11-30 after the pages' first versions had run; an unchanged one keeps the
threshold that first version already used (a criterion that does not is recorded as changed after the result)."""
FIXED_BEFORE_SHORT = "unchanged since its first result"


PASS_AFTER_FAIL = "PASS after a FAIL"
"""The mark beside a PASS reached by amending the criterion with a FAIL in view
(:func:`rlvr_dynamics.verdicts.headline.passed_after_fail`)."""
PASS_AFTER_FAIL_SIGN = "†"
"""Its short form, in tables (the matrix, the landing cards), with a legend."""


def chain_text(verdict: dict) -> str:
    """The chain of a claim's verdicts, one per rule, with the date each rule came in
    (:func:`rlvr_dynamics.verdicts.headline.verdict_chain`): ``"v1 PASS → v2 (2026-11-30) FAIL → now (2026-12-01)
    PASS"``; a criterion never amended gives its verdict now."""
    return " → ".join(f"{step['rule']}" + (f" ({step['since']})" if step["since"] else "") + f" {step['verdict']}"
                      for step in verdict_chain(_provenance(verdict)))


def amendment_mark(verdict: dict, short: bool = False) -> str:
    """The mark every page sets beside a PASS reached after a FAIL was seen (``""`` for any other verdict): a small
    badge with the chain as its tooltip, or ``short``, :data:`PASS_AFTER_FAIL_SIGN` (tables)."""
    if not passed_after_fail(_provenance(verdict)):
        return ""
    tip = md_escape(chain_text(verdict)).replace('"', "'")
    text = PASS_AFTER_FAIL_SIGN if short else PASS_AFTER_FAIL
    return f' <span class="rlvr-amended-mark" title="{PASS_AFTER_FAIL}: {tip}">{text}</span>'


def _provenance(verdict: dict) -> dict:
    prov = dict(verdict.get("provenance") or {})
    prov.setdefault("verdict", verdict.get("verdict"))
    prov.setdefault("amendments", [])
    return prov


def provenance_line(verdict: dict, short: bool = False) -> str:
    """One line on where a claim's criterion stands, from ``verdict["provenance"]``
    (:func:`rlvr_dynamics.book.claims.criterion_provenance`, the one function every page reads):
    ``"criterion unchanged since its first result"``, or ``"criterion amended after the result (2026-11-30, 2026-12-01; 2
    changes): verdict under the first rule, when it was applied, PASS → now FAIL; every rule: v1 PASS → v2
    (2026-11-30) PARTIAL → now (2026-12-01) FAIL"`` (:func:`chain_text`), with :data:`PASS_AFTER_FAIL` when it
    applies. ``short`` gives the scorecard cell (``"amended 2026-11-30, 2026-12-01 · first rule PASS → FAIL · v1 PASS
    → v2 (2026-11-30) PARTIAL → now (2026-12-01) FAIL"``)."""
    prov = verdict.get("provenance") or {}
    if not prov.get("amended"):
        return FIXED_BEFORE_SHORT if short else FIXED_BEFORE
    n = len(prov["amendments"])
    dates = ", ".join(prov["dates"])
    first, now = prov["first_verdict"], prov["verdict"]
    flag = f" ({PASS_AFTER_FAIL})" if passed_after_fail(_provenance(verdict)) else ""
    if short:
        return f"amended {dates} · first rule {first} → {now} · every rule: {chain_text(verdict)}{flag}"
    return (f"criterion amended after the result ({dates}; {n} change{'s' if n > 1 else ''}): verdict under the "
            f"first rule, when it was applied, {first} → now {now}; every rule: {chain_text(verdict)}{flag}")


def headline_rule_line(verdict: dict) -> str:
    """One sentence, on a claim whose headline the change of the headline rule moved (``verdict["headline_rule"]``,
    from :func:`rlvr_dynamics.verdicts.headline.headline_rule_change`: the rule before it rerun on today's rows), or
    ``""``."""
    hr = verdict.get("headline_rule") or {}
    if not hr.get("changed"):
        return ""
    return (f"Headline rule changed after the results: the rule that turns this claim's rows into one verdict was "
            f"written on {hr['date']}, when the results were known; under the rule before it (the weakest in-scope "
            f"row, with INCONCLUSIVE ranked between FAIL and PARTIAL) the same rows give {hr['previous']}, not "
            f"{hr['now']}.")


def amendment_items(verdict: dict) -> list[str]:
    """The amendments of a claim as Markdown list items (``- *2026-11-30* (verdict before: PASS): what changed``),
    oldest first; ``[]`` for a criterion never amended. A verdict computed from the evidence (a change of
    the claim's kind) says so."""
    out = []
    for a in (verdict.get("provenance") or {}).get("amendments", []):
        before = a["verdict_before"] + (", computed from the rows under the earlier kind" if a.get("computed") else "")
        out.append(f"- *{a['date']}* (verdict before this change: {before}): {prose(a['change'], verdict.get('paper'))}")
    return out


def amended_claims(verdicts: list[dict]) -> list[dict]:
    """The claims whose headline verdict rests on a criterion amended after the result was seen."""
    return [c for c in verdicts if (c.get("provenance") or {}).get("amended")]


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
