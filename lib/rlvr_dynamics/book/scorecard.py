"""The scorecard: counts of headline verdicts (today's, and under each claim's first recorded rule), the claim ×
setting matrix, one row per claim, and its CSV / JSON download. Every badge and every amendment mark comes from
:mod:`rlvr_dynamics.verdicts.headline` (:func:`~rlvr_dynamics.verdicts.headline.claim_verdicts`,
:func:`~rlvr_dynamics.verdicts.headline.verdict_chain`, :func:`~rlvr_dynamics.verdicts.headline.passed_after_fail`),
as on the pages.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable

from .._io import atomic_write_text
from .claims import SETTINGS, counted_once
from .markup import (GENERATED, PASS_AFTER_FAIL, PASS_AFTER_FAIL_SIGN, SETTING_LABELS, SHORT_VERDICTS, VERDICT_HELP,
                     VERDICT_ORDER, amended_claims, amendment_mark, badge, chain_text, claim_label, claim_ref,
                     criterion_text, first_rule_verdict, measured_text, page_cells, passed_after_fail, per_claim,
                     prose, provenance_line, statement_text)
from .registry import PAPERS, NotebookEntry
from .robustness_view import (page_cell_note, robust_cell, setting_label, summary as robustness_summary, verdict_note,
                              why_text)
from .weight_of_evidence import weight_of_evidence_box


FRAGILE_SIGN = "‡"
"""The matrix's mark after a verdict that another reasonable analysis of the same data moves (a fragile headline, or a
fragile audited row in that setting), with a legend."""


def first_rule_verdicts(verdicts: list[dict]) -> list[dict]:
    """The claims with their headline under each claim's first recorded rule
    (:func:`rlvr_dynamics.verdicts.headline.first_rule_verdict`) in place of today's: the second headline."""
    return [{**c, "verdict": first_rule_verdict({**(c.get("provenance") or {}), "verdict": c["verdict"],
                                                 "amendments": (c.get("provenance") or {}).get("amendments", [])})}
            for c in verdicts]


def headline_rule_summary(verdicts: list[dict]) -> str:
    """The headline rule's date and the claims whose headline the rule before it gives otherwise on today's rows
    (``headline_rule`` of :func:`rlvr_dynamics.verdicts.headline.claim_verdicts`, the previous rule rerun)."""
    moved = [c for c in verdicts if (c.get("headline_rule") or {}).get("changed")]
    date = next((c["headline_rule"]["date"] for c in verdicts if c.get("headline_rule")), "?")
    by_prev: dict[str, list[str]] = {}
    for c in moved:
        by_prev.setdefault(c["headline_rule"]["previous"], []).append(claim_ref(c["id"]))
    return (f"rule written on {date}, after the results it decides were known; under the previous rule, the weakest "
            "in-scope row with INCONCLUSIVE ranked between FAIL and PARTIAL, today's rows give "
            + ("; ".join(f"{', '.join(ids)} {v}" for v, ids in by_prev.items()) if moved else "the same headlines")
            + (", each noted on its claim" if moved else ""))


def counts_table(verdicts: list[dict]) -> list[str]:
    """Headline verdicts per paper; claims that measure one phenomenon with another claim (``same_phenomenon_as``,
    same verdict) count once (headline rule (4))."""
    counted = counted_once(verdicts)
    present = [v for v in VERDICT_ORDER if any(c["verdict"] == v for c in counted)]
    head = "| paper | claims | " + " | ".join(badge(v, short=True) for v in present) + " |"
    out = [head, "|---|---:|" + "---:|" * len(present)]
    for paper in PAPERS:
        mine = [c for c in counted if c["paper"] == paper]
        counts = Counter(c["verdict"] for c in mine)
        out.append(f"| {paper} | {len(mine)} | "
                   + " | ".join(str(counts.get(v, 0)) for v in present) + " |")
    counts = Counter(c["verdict"] for c in counted)
    out.append(f"| **both** | **{len(counted)}** | "
               + " | ".join(f"**{counts.get(v, 0)}**" for v in present) + " |")
    merged = [c for c in verdicts if c not in counted]
    if merged:
        out += ["", "Counted once: " + "; ".join(f"{claim_ref(c['id'])} measures the same phenomenon on the same "
                                                 f"experiment as {claim_ref(c['same_phenomenon_as'])}"
                                                 for c in merged) + "."]
    return out


FIRST_RULE_PREFIXES = ("first-rule", "v1-")
"""Names of the robustness alternatives (``book/robustness.yml``) that rerun a claim's first rule on today's rows."""


def first_rule_reruns(verdicts: list[dict]) -> str:
    """The clause after "it is not rerun on today's rows": where a robustness alternative reruns a claim's first rule
    (named with a :data:`FIRST_RULE_PREFIXES` prefix), the verdict it gives today, ``"; where an alternative reruns it
    on today's rows: P1-C3 first-rule-20pct FAIL (recorded PASS)"``; ``""`` when none does."""
    from ..verdicts.headline import first_rule_verdict, robustness

    found = []
    for c in verdicts:
        for part in (robustness(c) or {}).get("rows", []):
            for alt in part["table"]:
                if alt["alternative"].startswith(FIRST_RULE_PREFIXES) and alt["verdict"]:
                    then = first_rule_verdict({**(c.get("provenance") or {}), "verdict": c["verdict"]})
                    found.append(f"{c['id']} {alt['alternative']} {alt['verdict']} (recorded {then})")
    return "; where an alternative reruns it on today's rows: " + ", ".join(found) if found else ""


def unchanged_text(verdicts: list[dict], amended: list[dict], name=lambda x: x) -> str:
    """The clause on the criteria never amended: ``"the other one (P1-C16) has had no change after a result was
    seen"``, or ``"every criterion was amended"`` when none is left."""
    done = {c["id"] for c in amended}
    rest = [name(c["id"]) for c in verdicts if c["id"] not in done]
    if not rest:
        return "every criterion has been amended since"
    one = len(rest) == 1
    return (f"the other {'one' if one else len(rest)} ({', '.join(rest)}) {'has' if one else 'have'} had no change "
            "after a result was seen")


def amended_summary(verdicts: list[dict], link: bool = True) -> str:
    """One sentence: how many headline verdicts rest on a criterion amended after the result was seen, and which
    (:func:`rlvr_dynamics.book.markup.amended_claims`, from :func:`rlvr_dynamics.book.claims.criterion_provenance`)."""
    amended = amended_claims(verdicts)
    n_changes = sum(len(c["provenance"]["amendments"]) for c in amended)
    moved = [c for c in amended if c["provenance"]["first_verdict"] != c["verdict"]]
    name = claim_ref if link else (lambda x: x)
    return (f"**{len(amended)} of {len(verdicts)} verdicts rest on a criterion amended after a result was seen** "
            f"({n_changes} changes, each dated with what had been seen). Every criterion was written into the claims "
            f"ledger on 2026-11-30, after the pages' first versions had run; {unchanged_text(verdicts, amended, name)}. "
            f"On {len(moved)} of the {len(amended)} the verdict under the "
            f"first rule, when it was applied, differs from the verdict now (the rule and, for some, the runs "
            f"changed since): "
            + "; ".join(f"{name(c['id'])} {chain_text(c)}" for c in moved)
            + ". Amended: " + ", ".join(name(c["id"]) for c in amended) + ".")


def pass_after_fail_lines(verdicts: list[dict]) -> list[str]:
    """The count of PASSes reached by amending a criterion with a FAIL in view
    (:func:`rlvr_dynamics.verdicts.headline.passed_after_fail`), each with its chain of verdicts; ``[]`` when
    none."""
    marked = [c for c in verdicts if amendment_mark(c)]
    if not marked:
        return []
    n_pass = sum(c["verdict"] == "PASS" for c in verdicts)
    return [f"**{len(marked)} of the {n_pass} PASSes came after a FAIL was seen** ({PASS_AFTER_FAIL_SIGN} on every "
            "table): their criterion was amended with the FAIL in view, so read them as weaker than a PASS under a "
            "rule fixed in advance: " + "; ".join(f"{claim_ref(c['id'])} {chain_text(c)}" for c in marked) + ".", ""]


def settings_matrix(verdicts: list[dict]) -> list[str]:
    """The claim × setting matrix (Markdown table): each setting's verdict and the headline."""
    head = "| claim | " + " | ".join(SETTINGS) + " | headline | first rule |"
    out = [head, "|---|" + ":-:|" * (len(SETTINGS) + 2)]
    first = {c["id"]: c["verdict"] for c in first_rule_verdicts(verdicts)}
    for c in verdicts:
        cells = [badge(c["by_setting"][s], short=True) + (FRAGILE_SIGN if setting_label(c, s) else "")
                 if s in c["by_setting"] else "·" for s in SETTINGS]
        out.append(f"| {claim_ref(c['id'])} | " + " | ".join(cells) + f" | {badge(c['verdict'], short=True)}"
                   f"{amendment_mark(c, short=True)}{FRAGILE_SIGN if verdict_note(c).startswith(' (fragile') else ''} | "
                   + (badge(first[c["id"]], short=True) if (c.get("provenance") or {}).get("amended") else "=")
                   + " |")
    out += ["", "Short badges: " + ", ".join(f"{SHORT_VERDICTS[v]} = {v}" for v in VERDICT_ORDER
                                               if SHORT_VERDICTS[v] != v) + "; · no evidence in that setting; "
            f"{PASS_AFTER_FAIL_SIGN} {PASS_AFTER_FAIL} (the criterion amended with a FAIL in view); {FRAGILE_SIGN} "
            "fragile: another reasonable analysis of the same data moves this verdict (which analysis, and to what, "
            "in the claim's robustness column below); *first rule*: where the criterion was amended after a result, the "
            "headline the rule of the claim's first page version gave when it was applied, on the rows of that time "
            "(a badge there marks an amended criterion); = where it was never amended."]
    return out


def scorecard_records(verdicts: list[dict]) -> list[dict]:
    """The scorecard as flat records (one per claim × page × setting, plus the headline): the CSV / JSON download.
    Each record carries the headline's robustness (:func:`rlvr_dynamics.book.robustness_view.summary`), whether its
    criterion was amended after a result, the headline under the first recorded rule, the PASS-after-a-FAIL flag, the
    headline under the rule before 2026-12-01 where it differs, and the row's own fragile label when it is a fragile
    audited row."""
    out = []
    for c in verdicts:
        prov = c.get("provenance") or {}
        flags = {"headline_robustness": robustness_summary(c), "amended": bool(prov.get("amended")),
                 "first_rule_headline": first_rule_verdicts([c])[0]["verdict"] if prov.get("amended") else c["verdict"],
                 "pass_after_fail": bool(amendment_mark(c)),
                 "headline_before_rule_change": (c.get("headline_rule") or {}).get("previous")
                 if (c.get("headline_rule") or {}).get("changed") else None}
        for r in c["evidence"]:
            out.append({"claim": c["id"], "headline": c["verdict"], **flags,
                        "row_robustness": page_cell_note(c, r["notebook"], r["setting"], r["verdict"]).strip(" ()") or None,
                        "kind": c["kind"], "notebook": r["notebook"],
                        "setting": r["setting"], "verdict": r["verdict"], "statement": r.get("statement"),
                        "measured": r.get("measured"), "ci_low": (r.get("ci") or [None, None])[0],
                        "ci_high": (r.get("ci") or [None, None])[1], "unit": r.get("unit", ""),
                        "rule": (r.get("rule") or {}).get("name"), "reason": r.get("reason", "")})
        if not c["evidence"]:
            out.append({"claim": c["id"], "headline": c["verdict"], **flags, "row_robustness": None,
                        "kind": c["kind"], "notebook": None,
                        "setting": None, "verdict": None, "statement": None, "measured": None, "ci_low": None,
                        "ci_high": None, "unit": "", "rule": None, "reason": c["reason"]})
    return out


def write_scorecard_downloads(book_dir: Path, verdicts: list[dict]) -> tuple[Path, Path]:
    """``_generated/downloads/scorecard.csv`` and ``scorecard.json`` (:func:`scorecard_records`)."""
    import csv
    import io
    recs = scorecard_records(verdicts)
    dl = book_dir / GENERATED / "downloads"
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(recs[0]))
    w.writeheader()
    w.writerows(recs)
    return (atomic_write_text(dl / "scorecard.csv", buf.getvalue()),
            atomic_write_text(dl / "scorecard.json", json.dumps(recs, indent=1) + "\n"))


def _indent(text: str, n: int) -> str:
    return text.replace("\n", "\n" + " " * n)


def scorecard_markdown(rows: list[dict], registered: Iterable[NotebookEntry]) -> str:
    """The scorecard: counts of headline verdicts, the claim × setting matrix, then one row per claim (statement,
    headline badge, deciding measurement vs criterion, evidence per page and setting). Every badge comes from
    :func:`rlvr_dynamics.book.claims.claim_verdicts`, as on the pages."""
    registered = list(registered)
    by_id = {e.id: e for e in registered}
    verdicts = per_claim(rows, registered)
    out = ["# Scorecard\n",
           "One row per claim of the two papers. Each piece of evidence names its **setting**: "
           + "; ".join(f"*{s}*: {SETTING_LABELS[s]}" for s in SETTINGS)
           + f". **The headline verdict** ({headline_rule_summary(verdicts)}): decisive rows "
           "(PASS, PARTIAL, FAIL) decide, the weakest of them; INCONCLUSIVE decides only when no decisive row "
           "exists; a claim the paper states as a possibility (\"can\") takes the strongest decisive row; context "
           "rows never decide; rows that measure one phenomenon count once; a by-construction check is "
           "CONSISTENT, never PASS. Verdicts are those recorded at the parameters each page was last executed "
           "with (see its provenance box). **An honest FAIL is worth more than a tuned PASS.** "
           f"Download the scorecard as {{download}}`CSV <{GENERATED}/downloads/scorecard.csv>` or "
           f"{{download}}`JSON <{GENERATED}/downloads/scorecard.json>`.\n",
           *weight_of_evidence_box(verdicts, registered), "",
           "**Today's rules:**", "", *counts_table(verdicts), "",
           "**Under each claim's first rule** (the second headline: the verdict the rule of each claim's first page "
           "version gave when it was applied, on the rows of that time, before any criterion was amended after a "
           "result; it is not rerun on today's rows" + first_rule_reruns(verdicts) + "):", "",
           *counts_table(first_rule_verdicts(verdicts)), "", amended_summary(verdicts), "",
           *pass_after_fail_lines(verdicts),
           "Badges: " + " · ".join(f"{badge(v)} {VERDICT_HELP[v]}" for v in VERDICT_ORDER) + ".\n",
           "## Claims × settings\n", *settings_matrix(verdicts), "",
           "## Claim by claim\n",
           "::::{list-table}", ":header-rows: 1", ":class: rlvr-scorecard", ":widths: 16 14 21 18 13 18", "",
           "* - Claim", "  - Verdict", "  - Deciding measurement vs criterion", "  - Criterion",
           "  - Robust / flips under …", "  - Evidence"]
    for c in verdicts:
        cid = c["id"]
        ev = [r for r in c["evidence"] if r["notebook"] in by_id]
        kind = " (a possibility claim: the strongest decisive row decides)" if c["kind"] == "existence" else ""
        cell3 = (f"measured {measured_text(c['decider'])}<br>*Pass if:* {criterion_text(cid, c)}{kind} "
                 f"({{ref}}`full criterion <{claim_label(cid)}>`)"
                 f"<br><span class=\"rlvr-reason\">*Why:* {prose(why_text(c), c['paper'])}</span>")
        pages = []
        for nb_id in dict.fromkeys(r["notebook"] for r in ev):
            pages.append(f"{{doc}}`{by_id[nb_id].title} <executed/{nb_id}>` "
                         + " ".join(f"<small>{s}</small>&nbsp;{badge(v)}" for s, v in page_cells(c, nb_id)))
        out += [f"* - {claim_ref(cid)} · {statement_text(cid)}",
                f"  - {badge(c['verdict'])}{amendment_mark(c)}",
                f"  - {_indent(cell3, 4)}",
                f"  - {provenance_line(c, short=True)}"
                + (f" ({{ref}}`what changed <{claim_label(cid)}>`)" if c["provenance"]["amended"] else "")
                + (f"<br>*headline rule:* {c['headline_rule']['previous']} under the rule before "
                   f"{c['headline_rule']['date']}" if (c.get("headline_rule") or {}).get("changed") else ""),
                "  - " + robust_cell(c),
                "  - " + ("<br>".join(pages) if pages else "–")]
    out.append("::::")
    return "\n".join(out) + "\n"
