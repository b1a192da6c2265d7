"""How the book shows a claim's robustness (the verdict under the other reasonable analysis choices of
``book/robustness.yml``): the fold under each claim's results box, the scorecard's "robust / flips under …" cell, the
label after a verdict wherever a verdict is listed (landing page, weight-of-evidence box), and the project's reading
of a fragile verdict. Every function reads :func:`rlvr_dynamics.verdicts.headline.robustness`, the one function
that decides the label.
"""
from __future__ import annotations

from functools import lru_cache

from ..verdicts.headline import headline_note, headline_rule_flip, holding_row, robustness, row_fragility
from .markup import badge, prose


@lru_cache(maxsize=1)
def _listed() -> dict:
    import yaml

    from ..verdicts.robustness import ALTERNATIVES
    return yaml.safe_load(ALTERNATIVES.read_text())["claims"] if ALTERNATIVES.exists() else {}


def reading(claim_id: str) -> str:
    """The project's reading of a claim's robustness (``reading`` of its entry in ``book/robustness.yml``): whether
    the headline stands with its fragile label or changed, and why; "" when none is written."""
    return str((_listed().get(claim_id) or {}).get("reading") or "")


def listed_when(key: str, alternative: str) -> str:
    """Whether an alternative of ``book/robustness.yml`` (entry ``key``, id ``alternative``) was listed before its
    result was known: "before its result", "after its result was known" (``result_known_when_listed``: printed by
    the page, reported by a referee audit, or the page's own former analysis); "" for the page's analysis or an
    alternative not listed."""
    alts = {a["id"]: a for a in (_listed().get(key) or {}).get("alternatives", [])}
    if alternative not in alts:
        return ""
    return "after its result was known" if alts[alternative].get("result_known_when_listed") else "before its result"


def verdict_note(claim: dict) -> str:
    """What must follow a headline verdict wherever it is listed (:func:`rlvr_dynamics.verdicts.headline.headline_note`:
    its fragile label and the headline under the headline rule before 2026-12-01, in one parenthesis); else ""."""
    return headline_note(claim)


def page_cell_note(claim: dict, notebook: str, setting: str, verdict: str | None = None) -> str:
    """The label after one page's cell of a claim (``setting`` on ``notebook``) when that page's row is an audited
    row that is fragile: " (fragile: PARTIAL under bound-0.05)"; else "". With ``verdict`` (the row's or cell's
    verdict), only a row with the audited row's verdict is labelled: a CONSISTENT check on the same page and setting
    is not the audited row."""
    rob = robustness(claim)
    weak = [p["row_label"] for p in (rob or {}).get("rows", []) if p["setting"] == setting
            and notebook in p.get("notebooks", []) and p["row_label"].startswith("fragile")
            and (verdict is None or p["table"][0]["verdict"] == verdict)]
    return f" ({'; '.join(weak)})" if weak else ""


def setting_label(claim: dict, setting: str) -> str:
    """The label of a claim's audited row in ``setting`` when that row is fragile: " (fragile: INCONCLUSIVE under
    welch)" after the setting's cell; else ""."""
    rob = robustness(claim)
    weak = [p["row_label"] for p in (rob or {}).get("rows", []) if p["setting"] == setting
            and p["row_label"].startswith("fragile")]
    return f" ({'; '.join(weak)})" if weak else ""


def why_text(claim: dict) -> str:
    """The "why this verdict" every listing shows (scorecard, claims appendix): the claim's reason, from its deciding
    row; when that row is a fragile audited row and another row holds the robust headline
    (:func:`rlvr_dynamics.verdicts.headline.holding_row`, P1-C5), the holding row's reason first, then the deciding
    row's with its fragile label."""
    held, decider = holding_row(claim), claim.get("decider")
    if held is None or held is decider:
        return claim["reason"]
    head = f"{decider.get('notebook')} ({decider['setting']}): {decider.get('reason') or ''}"
    notes = claim["reason"][len(head):] if claim["reason"].startswith(head) else ""
    label = setting_label(claim, decider["setting"]).strip(" ()")
    return (f"{held.get('notebook')} ({held['setting']}, the row that holds the headline): {held.get('reason') or ''}; "
            f"{decider.get('notebook')} ({decider['setting']}, {label}): {decider.get('reason') or ''}{notes}")


def summary(claim: dict) -> str:
    """One phrase: "robust", "fragile: …", "robust; the paper row is fragile (…); the headline is held by the exact
    row", or "not audited"."""
    rob = robustness(claim)
    if rob is None:
        flip = headline_rule_flip(claim)
        return f"fragile: {flip} (no alternative analysis listed)" if flip else "not audited"
    held = row_fragility(rob)
    return rob["label"] + (f"; {held}" if held else "")


def robust_cell(claim: dict) -> str:
    """The scorecard's robustness cell: "robust", "flips under <alternative> (to <headline>)" for each headline an
    alternative moves to, a fragile row under a robust headline, or "not audited"."""
    rob = robustness(claim)
    if rob is None:
        return (f"flips under the headline rule before {claim['headline_rule']['date']} (to "
                f"{badge(claim['headline_rule']['previous'], short=True)}); no alternative analysis listed"
                if headline_rule_flip(claim) else "not audited")
    if not rob["label"].startswith("fragile"):
        weak = [p for p in rob["rows"] if p["row_label"].startswith("fragile")] if rob.get("held_by") else []
        rows = "; ".join(f"{p['setting']} row flips under {alt} (to {badge(v, short=True)})" for p in weak
                         for v, alt in [p["row_label"][len("fragile: "):].split(" under ", 1)])
        return rob["label"] + (f"<br><small>{rows}; held by the {' and '.join(rob['held_by'])} row</small>"
                               if weak else "")
    flips = [part.split(" under ", 1) for part in rob["label"][len("fragile: "):].split("; ")]
    return "; ".join(f"flips under {alt} (to {badge(moved)})" for moved, alt in flips)


def robustness_fold(claim: dict) -> list[str]:
    """The claim's robustness tables, folded under its results box: per audited row and alternative analysis, the
    row's verdict, the deciding number and the headline it would give; the project's reading; [] when not
    audited."""
    rob = robustness(claim)
    if rob is None and headline_rule_flip(claim):
        return [f":::{{admonition}} Robustness: {summary(claim)}", ":class: dropdown", "",
                "No alternative analysis of this claim's rows is listed in `book/robustness.yml`, but one choice "
                f"the second referee audit named moves its headline: the headline rule. Under the rule before "
                f"{claim['headline_rule']['date']} (the weakest in-scope row, INCONCLUSIVE ranked between FAIL and "
                f"PARTIAL) the same rows give {claim['headline_rule']['previous']}, not "
                f"{claim['headline_rule']['now']}, so the headline is labelled fragile wherever it is listed.",
                "", ":::"]
    if rob is None:
        return [":::{admonition} Robustness: not audited (no alternative analysis listed)", ":class: dropdown", "",
                "No alternative analysis of this claim's rows is listed in `book/robustness.yml`, and the headline "
                "rule before 2026-12-01 gives the same headline: no referee audit named a reasonable analysis choice "
                "that could move its verdict, so the table has only the page's own analysis, the results box above.", "", ":::"]
    out = [f":::{{admonition}} Robustness: {summary(claim)} (other reasonable analysis choices)", ":class: dropdown", ""]
    if reading(claim["id"]):
        out += [f"*Reading:* {prose(reading(claim['id']))}", ""]
    for part in rob["rows"]:
        known = [a["alternative"] for a in part["table"][1:]
                 if listed_when(part["key"], a["alternative"]) == "after its result was known"]
        out += [f"Audited row: *{part['setting']}*, {prose(part['row'])} (this row: {part['row_label']}). "
                "Alternatives listed in `book/robustness.yml` and computed by the page's own verdict code "
                "(`python -m rlvr_dynamics.verdicts.robustness`); "
                + (f"listed after its result was known (printed by the page, reported by a referee audit, or the "
                   f"page's former analysis): {', '.join(known)}"
                   + ("; the others were listed before their result." if len(known) < len(part["table"]) - 1 else ".")
                   if known else "each was listed before its result."), "",
                "| analysis | listed | row verdict | deciding number | headline | note |", "|---|---|:-:|--:|:-:|---|"]
        for a in part["table"]:
            num = "–" if a["number"] is None else f"{a['number']:.3g}" + (
                f" [{a['ci'][0]:.3g}, {a['ci'][1]:.3g}]" if a.get("ci") else "")
            when = "the page's analysis" if a["alternative"] == "page" else (listed_when(part["key"], a["alternative"])
                                                                             or "–")
            out.append(f"| {a['alternative']} | {when} | {badge(a['verdict']) if a['verdict'] else 'not computed'} | {num} | "
                       f"{badge(a['headline']) if a['headline'] else '–'} | {prose(a['note'])} |")
        out.append("")
    return out + [":::"]
