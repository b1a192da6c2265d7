"""One book, one verdict: every page badge equals the scorecard's record for that page and setting, and every
decisive row's ``measured`` sits on the side of its pre-registered rule that its verdict says.

These tests read the committed verdicts (``notebooks/claims/*.claims.json``, what nbval checks and what the book is
built from) and the generated Markdown of the scorecard, the chapter badges and the results boxes.
"""
from __future__ import annotations

import re

import pytest

from rlvr_dynamics.book import claims, pages, registry, site_pages
from rlvr_dynamics.book.markup import load_verdicts, per_claim
from rlvr_dynamics.paths import STORED_CLAIMS_DIR

ENTRIES = registry.load_registry()
ROWS = [r for r in load_verdicts(STORED_CLAIMS_DIR) if r["notebook"] in {e.id for e in ENTRIES}]
VERDICTS = {c["id"]: c for c in per_claim(ROWS, ENTRIES)}
BADGE = re.compile(r'verdict-badge verdict-[a-z-]+" title="[^"]*">([^<]+)</span>')


def _rows(cid: str) -> list[dict]:
    return VERDICTS[cid]["evidence"]


@pytest.mark.parametrize("cid", list(claims.checklist()))
def test_every_row_names_a_setting(cid):
    for r in _rows(cid):
        assert r["setting"] in claims.SETTINGS, (cid, r["notebook"], r.get("setting"))
        assert "setting" in r or r.get("verdict") == "N/A", f"{cid} row of {r['notebook']} records no setting"


@pytest.mark.parametrize("cid", list(claims.checklist()))
def test_decisive_rows_use_the_rule_in_claims_yml_and_measured_sits_on_the_side_the_badge_says(cid):
    """PASS: the rule holds for ``measured`` (or ``ci``); FAIL and PARTIAL: it does not. The rule must be the one in
    ``book/claims.yml``, byte for byte (read by ``claims.rule``, never retyped in the notebook)."""
    for r in _rows(cid):
        if r["verdict"] not in claims.DECISIVE_ORDER:
            continue
        where = f"{cid} {r['verdict']} row of {r['notebook']} ({r['setting']})"
        assert r.get("rule"), f"{where} has no rule: decisive rows must record claims.rule({cid!r}, name)"
        assert r["rule"] == claims.rule(cid, r["rule"]["name"]), f"{where}: rule differs from book/claims.yml"
        holds = claims.rule_holds(r["rule"], r.get("measured"), r.get("ci"))
        assert holds == (r["verdict"] == "PASS"), (
            f"{where}: measured {r.get('measured')} ci {r.get('ci')} {'meets' if holds else 'misses'} "
            f"{r['rule']['op']} {r['rule']['bound']}")


def _scorecard_cells() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(claim, notebook) -> [(setting, verdict)] as the scorecard page prints them in its evidence column."""
    md = site_pages.scorecard_markdown(ROWS, ENTRIES)
    out = {}
    body = md.split("## Claim by claim")[1]
    for block in body.split("\n* - ")[1:]:
        head = re.search(r"claim-(p\d-c\d+)>", block.split("\n")[0])
        if not head:                                   # the header row
            continue
        cid = head.group(1).upper()
        evidence = block.rsplit("\n  - ", 1)[-1]
        for item in evidence.split("<br>"):
            m = re.search(r"<executed/([a-z0-9_]+)>`", item)
            if m:
                cells = re.findall(r"<small>([a-z]+)</small>&nbsp;<span class=\"verdict-badge verdict-[a-z-]+\" "
                                   r"title=\"[^\"]*\">([^<]+)</span>", item)
                out[(cid, m.group(1))] = cells
    return out


def test_page_badges_and_results_boxes_equal_the_scorecard_record_for_that_page_and_setting():
    scorecard = _scorecard_cells()
    assert len(scorecard) >= 30 and all(scorecard.values()), "the scorecard's evidence column did not parse"
    compared = 0
    for e in ENTRIES:
        badges = site_pages.page_badges(e, ROWS)
        box = pages.results_box(e, ROWS, VERDICTS)
        for cid in e.claims:
            key = (cid, e.id)
            if key not in scorecard:
                continue
            want = scorecard[key]
            # chapter / landing badges: "<claim ref> <small>setting</small>&nbsp;badge ..."
            seg = badges.split(f"{cid} <")[1].split("{ref}")[0] if f"{cid} <" in badges else ""
            got = re.findall(r"<small>([a-z]+)</small>&nbsp;<span class=\"verdict-badge verdict-[a-z-]+\" "
                             r"title=\"[^\"]*\">([^<]+)</span>", seg)
            assert got == want, (e.id, cid, got, want)
            compared += 1
            # results box: the headline equals the scorecard's headline; every row of the page is listed
            part = box.split(f"claim-{cid.lower()}>`**")[1].split("\n\n**{ref}")[0]
            headline = BADGE.findall(part.split("**Headline verdict**")[1])[0]
            assert headline == VERDICTS[cid]["verdict"], (e.id, cid)
            n_rows = sum(r["notebook"] == e.id for r in _rows(cid))
            assert len(BADGE.findall(part.split("**Headline verdict**")[0])) == n_rows, (e.id, cid)
    assert compared == len(scorecard)


def test_headline_counts_add_up():
    counted = claims.counted_once(list(VERDICTS.values()))
    assert len(counted) <= len(VERDICTS) == len(claims.checklist())
    for c in VERDICTS.values():
        verdict, decider = claims.headline(c["evidence"], c["kind"])
        assert verdict == c["verdict"] and (decider is None) == (verdict == claims.NOT_TESTED)
        if decider is not None:
            assert decider["setting"] != "context"
