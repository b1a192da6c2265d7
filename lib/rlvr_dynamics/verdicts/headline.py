"""One verdict per claim from its evidence rows, by the headline rule of 2026-12-01 (``book/claims.yml`` header).

Each evidence row names its **setting** (:data:`~.ledger.SETTINGS`: paper, testbed, exact, context). Several
notebooks may give rows for one claim; :func:`claim_verdicts` turns them into **one headline verdict per claim** and
a claim × setting matrix (:func:`headline`: decisive rows decide, the weakest; INCONCLUSIVE only when no decisive row
exists; existence claims take the strongest; context never decides; CONSISTENT never counts as PASS), and says
beside it whether the criterion is unchanged since its first result or amended after it (:func:`criterion_provenance`). The
scorecard, each page's results box and its badges all read these functions.
"""
from __future__ import annotations

from typing import Any

from . import ledger
from .ledger import CLAIM_KINDS, DECISIVE_ORDER, NOT_TESTED, SETTINGS, VERDICTS, claim_sort_key

def criterion_provenance(claim_id: str, rows: list[dict[str, Any]], verdict: str | None = None
                         ) -> dict[str, Any]:
    """Whether the headline verdict of ``claim_id`` rests on a criterion unchanged since its first result or amended
    after it: the one function every page (results box, scorecard, landing page, claims appendix) reads.

    ``rows`` are the claim's evidence rows (as :func:`claim_verdicts` gets them); ``verdict`` is its headline now
    (computed from ``rows`` when omitted). Returns ``{"amended", "amendments", "dates", "first_verdict",
    "verdict"}``: ``amendments`` as :func:`amendments` returns them, each with ``verdict_before`` resolved (an entry
    with ``kind_before`` gets the headline of ``rows`` under that kind; ``"unchanged"`` takes the verdict after the
    change); ``first_verdict`` is the verdict under the first rule, when it was applied (``None`` when the criterion
    was never amended); ``verdict`` the headline now.
    """
    entry = ledger.checklist()[claim_id]
    kind = entry.get("kind") or "universal"
    now = verdict if verdict is not None else headline(rows, kind)[0]
    items = ledger.amendments(claim_id)
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


def count_once(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
    scoped = count_once([r for r in rows if row_setting(r) != "context"])
    decisive = [r for r in scoped if r["verdict"] in DECISIVE_ORDER]
    if decisive:
        pick = max if kind == "existence" else min
        verdict = pick((r["verdict"] for r in decisive), key=DECISIVE_ORDER.index)
    else:
        verdict = next((v for v in ("INCONCLUSIVE", "CONSISTENT", "N/A") if any(r["verdict"] == v for r in scoped)),
                       NOT_TESTED)
    decider = next((r for r in scoped if r["verdict"] == verdict), None)
    return verdict, decider




HEADLINE_RULE_DATE = "2026-12-01"
"""The day the headline rule of :func:`headline` was written, after the results it decides were known."""
PREVIOUS_ORDER = ("FAIL", "INCONCLUSIVE", "PARTIAL", "PASS")
"""The rule before :data:`HEADLINE_RULE_DATE`: tested verdicts, weakest first (INCONCLUSIVE between FAIL and PARTIAL)."""


def previous_rule_headline(rows: list[dict[str, Any]]) -> str:
    """The headline the same rows get under the rule in force before :data:`HEADLINE_RULE_DATE` (the book's rule until
    then, recomputed, not recorded): context rows never decide; the **weakest** in-scope row in the order
    :data:`PREVIOUS_ORDER` (so an INCONCLUSIVE row outranks a PARTIAL or PASS one, and there is no existence kind and
    no counting once); else CONSISTENT, else N/A, else :data:`NOT_TESTED`."""
    scoped = [r for r in rows if row_setting(r) != "context"]
    tested = [r["verdict"] for r in scoped if r["verdict"] in PREVIOUS_ORDER]
    if tested:
        return min(tested, key=PREVIOUS_ORDER.index)
    return next((v for v in ("CONSISTENT", "N/A") if any(r["verdict"] == v for r in scoped)), NOT_TESTED)


def headline_rule_change(rows: list[dict[str, Any]], verdict: str) -> dict[str, Any]:
    """What the change of the headline rule on :data:`HEADLINE_RULE_DATE` did to one claim: ``{"date", "previous",
    "now", "changed"}``, ``previous`` from :func:`previous_rule_headline` on the claim's rows today."""
    prev = previous_rule_headline(rows)
    return {"date": HEADLINE_RULE_DATE, "previous": prev, "now": verdict, "changed": prev != verdict}


def claim_verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One headline verdict per claim, for all claims of ``book/claims.yml`` in checklist order.

    ``rows`` are evidence rows as :func:`rlvr_dynamics.book.markup.load_verdicts` returns them (each
    ``*.claims.json`` row plus its ``"notebook"``). Returns one dict per claim with keys ``id, paper, kind,
    same_phenomenon_as, statement, criterion, scope, changed_after_result, provenance, headline_rule, verdict,
    measured, ci, unit, decider, reason, evidence, by_setting, by_page``:

    - ``verdict``: the headline (:func:`headline` over all rows of the claim);
    - ``provenance``: :func:`criterion_provenance` (unchanged since its first result, or amended after it: when, what, and
      the verdict under the first rule), what every page says beside the verdict;
    - ``headline_rule``: :func:`headline_rule_change`, the headline these rows get under the rule before
      :data:`HEADLINE_RULE_DATE`, shown on every claim where it differs;
    - ``decider``: the deciding row (``None`` when NOT TESTED); ``measured``, ``ci`` and ``unit`` are its;
    - ``by_setting``: ``{setting: verdict}`` for each setting with rows (:func:`headline` over that setting's rows;
      the ``context`` cell uses the context rows as if in scope, and is shown, never counted);
    - ``by_page``: ``{notebook: {setting: verdict}}``, the same function over one page's rows per setting: what the
      page's results box and badges show;
    - ``evidence``: all input rows of the claim (context included, input order), each with its notebook and
      ``setting`` filled in by :func:`row_setting`.
    """
    known = ledger.checklist()
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
    for cid in sorted(known, key=claim_sort_key):
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
            "headline_rule": headline_rule_change(evidence, verdict),
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


def verdict_chain(provenance: dict[str, Any]) -> list[dict[str, Any]]:
    """Every verdict a claim's headline has had, one per rule, oldest first, from :func:`criterion_provenance`:
    ``[{"rule": "v1", "since": None, "verdict": …}, {"rule": "v2", "since": "2026-11-30", "verdict": …}, …,
    {"rule": "now", "since": <date of the last change>, "verdict": <headline now>}]``. Rule v(k+1) is in force from
    the date of the k-th amendment; its verdict is the one recorded as "before" the next amendment (the headline
    now for the last). A criterion never amended has one entry, ``{"rule": "now", "since": None, …}``."""
    items = provenance.get("amendments") or []
    chain = [{"rule": f"v{k + 1}", "since": items[k - 1]["date"] if k else None, "verdict": a["verdict_before"]}
             for k, a in enumerate(items)]
    chain.append({"rule": "now", "since": items[-1]["date"] if items else None, "verdict": provenance["verdict"]})
    return chain


def passed_after_fail(provenance: dict[str, Any]) -> bool:
    """Whether a claim's headline is PASS now while an earlier rule of its chain (:func:`verdict_chain`) read FAIL: a
    PASS reached by amending the criterion with a FAIL in view. Every page that shows the verdict marks it."""
    chain = verdict_chain(provenance)
    return chain[-1]["verdict"] == "PASS" and any(step["verdict"] == "FAIL" for step in chain[:-1])


def first_rule_verdict(provenance: dict[str, Any]) -> str:
    """The headline under the claim's first recorded rule (v1 of :func:`verdict_chain`): the scorecard's second
    headline, beside today's."""
    return verdict_chain(provenance)[0]["verdict"]


def _audited_entries(claim_id: str, results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The entries of ``book/robustness_results.json`` for one claim, in file order: its own key and any
    ``<claim id>/<setting>`` key (a second audited row)."""
    return [(k, e) for k, e in results.items() if k == claim_id or k.startswith(claim_id + "/")]


def robustness(claim: dict[str, Any], results: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A claim's robustness (issue 39) from ``book/robustness_results.json`` (:mod:`.robustness`): for each audited
    row of the claim (the entry keyed by its id and any keyed ``<id>/<setting>``), the table of alternatives
    (alternative, verdict, number) with the **headline** each would give, recomputed by :func:`headline` with the
    audited row's verdict replaced (the audited row: the claim's evidence rows in the entry's setting, and of its
    ``notebook`` when the entry names one, whose verdict is the table's "page" verdict).

    Returns None when the claim was not audited, else ``dict(setting, row, table, label, rows, held_by)``:
    ``rows`` one dict per audited row (``key, setting, row, table, row_label, matched, notebooks``; ``row_label`` the
    row's own :func:`.robustness.label`; ``notebooks`` the pages whose rows are the audited row); ``setting``, ``row`` and ``table`` those of the first; ``label`` "robust", or
    "fragile: <headline> under <alternative>" for each headline an alternative moves to (the first alternative
    that gives it, joined by "; "), or "not matched: …" when an audited row is not among the claim's rows;
    ``held_by``: when the headline is robust but an audited row is fragile, the settings of the other rows that
    hold the headline (else [])."""
    from .robustness import label as row_label_of, load_results

    entries = [(k, e) for k, e in _audited_entries(claim["id"], load_results() if results is None else results)
               if e["table"][0]["verdict"] is not None]
    if not entries:
        return None
    rows = claim.get("evidence") or []
    parts, flips, unmatched, targets = [], {}, [], set()      # targets: the audited rows that are fragile
    for key, entry in entries:
        page = entry["table"][0]["verdict"]
        target = [k for k, r in enumerate(rows) if row_setting(r) == entry["setting"] and r["verdict"] == page
                  and (not entry.get("notebook") or r.get("notebook") == entry["notebook"])]
        if row_label_of(entry["table"]).startswith("fragile"):
            targets.update(target)
        table = []
        for alt in entry["table"]:
            moved = None
            if target and alt["verdict"] is not None:
                moved = headline([{**r, "verdict": alt["verdict"]} if k in target else r for k, r in enumerate(rows)],
                                 claim.get("kind", "universal"))[0]
            table.append({**alt, "headline": moved})
            if moved is not None and moved != claim["verdict"]:
                flips.setdefault(moved, alt["alternative"])
        if not target:
            unmatched.append(f"no {entry['setting']} row reads {page}")
        parts.append(dict(key=key, setting=entry["setting"], row=entry["row"], table=table,
                          row_label=row_label_of(entry["table"]), matched=bool(target),
                          notebooks=list(dict.fromkeys(rows[k].get("notebook") for k in target))))
    label = ("fragile: " + "; ".join(f"{v} under {a}" for v, a in flips.items())) if flips else "robust"
    if unmatched:
        label = "not matched: " + "; ".join(unmatched)
    held_by = []
    if label == "robust" and any(p["row_label"].startswith("fragile") for p in parts):
        held_by = list(dict.fromkeys(row_setting(r) for k, r in enumerate(rows) if k not in targets
                                     and row_setting(r) != "context" and r["verdict"] == claim["verdict"]))
    first = parts[0]
    return dict(setting=first["setting"], row=first["row"], table=first["table"], label=label, rows=parts,
                held_by=held_by)


def row_fragility(rob: dict[str, Any] | None) -> str:
    """What a reader must know when the headline is robust but an audited row is not: "the <setting> row is fragile
    (<verdict> under <alternative>); the headline is held by the <settings> row(s)", or "" (robust rows, a fragile
    headline, or no audit)."""
    if not rob or not rob.get("held_by"):
        return ""
    weak = [p for p in rob["rows"] if p["row_label"].startswith("fragile")]
    rows_text = "; ".join(f"the {p['setting']} row is fragile ({p['row_label'][len('fragile: '):]})" for p in weak)
    held = rob["held_by"]
    return (f"{rows_text}; the headline is held by the {' and '.join(held)} row{'s' if len(held) > 1 else ''}")


def holding_row(claim: dict[str, Any], results: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The evidence row a reader should see as the one that decides the headline: the headline's decider
    (``claim["decider"]``), unless that row is an audited row that is fragile while the headline is robust
    (:func:`robustness` ``held_by``), in which case the first in-scope row of a setting that holds the headline
    (P1-C5: the exact row, not the fragile paper row)."""
    decider = claim.get("decider")
    rob = robustness(claim, results)
    if decider is None or not rob or not rob.get("held_by") or row_setting(decider) in rob["held_by"]:
        return decider
    return next((r for r in claim.get("evidence") or [] if row_setting(r) in rob["held_by"]
                 and r["verdict"] == claim["verdict"]), decider)


def headline_rule_flip(claim: dict[str, Any]) -> str:
    """"INCONCLUSIVE under the headline rule before 2026-12-01" when the headline rule of that day moved the claim's
    headline (the rule before it, rerun on today's rows: one more reasonable analysis that moves it); else ""."""
    hr = claim.get("headline_rule") or {}
    return f"{hr['previous']} under the headline rule before {hr['date']}" if hr.get("changed") else ""


def headline_note(claim: dict[str, Any], results: dict[str, Any] | None = None) -> str:
    """What follows a headline verdict wherever it is listed, in one parenthesis: its fragile label under the
    alternative analyses (:func:`robustness`) and, when the headline rule of 2026-12-01 moved it, the headline under
    the rule before: " (fragile: FAIL under first-rule-20pct)", " (fragile: INCONCLUSIVE under the headline rule
    before 2026-12-01)"; else ""."""
    rob = robustness(claim, results)
    parts = [rob["label"]] if rob and rob["label"].startswith("fragile") else []
    flip = headline_rule_flip(claim)
    if flip:
        parts.append(flip if parts else f"fragile: {flip}")
    return f" ({'; '.join(parts)})" if parts else ""


def headline_text(claim: dict[str, Any], results: dict[str, Any] | None = None) -> str:
    """The headline verdict as every page writes it: "FAIL", or "FAIL (fragile: INCONCLUSIVE under welch)" when an
    alternative analysis or the headline rule before 2026-12-01 moves it (:func:`headline_note`). The verdict value
    itself is unchanged."""
    return claim["verdict"] + headline_note(claim, results)
