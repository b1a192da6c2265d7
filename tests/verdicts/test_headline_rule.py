"""The headline rule's change of 2026-12-01 at claim level: the rule before it (rlvr_dynamics.verdicts.headline.
previous_rule_headline) rerun on a claim's rows, and where the book shows the claims it moves."""
from __future__ import annotations

import pytest

from rlvr_dynamics.verdicts.headline import (HEADLINE_RULE_DATE, NOT_TESTED, headline, headline_rule_change,
                                             previous_rule_headline)


def rows(*pairs):
    return [dict(id="X-C1", setting=s, verdict=v) for s, v in pairs]


@pytest.mark.parametrize("evidence, previous, now", [
    (rows(("exact", "PASS"), ("testbed", "INCONCLUSIVE")), "INCONCLUSIVE", "PASS"),    # INCONCLUSIVE outranked PASS
    (rows(("exact", "PARTIAL"), ("paper", "INCONCLUSIVE")), "INCONCLUSIVE", "PARTIAL"),
    (rows(("exact", "FAIL"), ("testbed", "INCONCLUSIVE")), "FAIL", "FAIL"),             # FAIL stays the weakest
    (rows(("exact", "PASS"), ("context", "FAIL")), "PASS", "PASS"),                     # context never decides
    (rows(("exact", "CONSISTENT"), ("testbed", "N/A")), "CONSISTENT", "CONSISTENT"),
    (rows(("context", "PASS")), NOT_TESTED, NOT_TESTED),
])
def test_previous_rule_against_the_rule_now(evidence, previous, now):
    assert previous_rule_headline(evidence) == previous
    assert headline(evidence)[0] == now
    change = headline_rule_change(evidence, now)
    assert change == dict(date=HEADLINE_RULE_DATE, previous=previous, now=now, changed=previous != now)


def test_previous_rule_has_no_existence_kind():
    evidence = rows(("exact", "PASS"), ("testbed", "FAIL"))
    assert headline(evidence, "existence")[0] == "PASS"
    assert previous_rule_headline(evidence) == "FAIL"


def _book_claims():
    from rlvr_dynamics.book.markup import load_verdicts, per_claim
    from rlvr_dynamics.book.registry import load_registry
    from rlvr_dynamics.paths import STORED_CLAIMS_DIR

    entries = load_registry()
    return entries, load_verdicts(STORED_CLAIMS_DIR), per_claim(load_verdicts(STORED_CLAIMS_DIR), entries)


def test_every_moved_claim_says_so_on_its_box_its_scorecard_row_and_the_scorecard_summary():
    from rlvr_dynamics.book.markup import claim_ref, headline_rule_line
    from rlvr_dynamics.book.pages import results_box
    from rlvr_dynamics.book.scorecard import headline_rule_summary, scorecard_markdown

    entries, rows_, verdicts = _book_claims()
    moved = [c for c in verdicts if c["headline_rule"]["changed"]]
    assert moved, "the stored rows no longer give any claim another headline under the previous rule"
    summary = headline_rule_summary(verdicts)
    card = scorecard_markdown(rows_, entries)
    by_id = {c["id"]: c for c in verdicts}
    for c in verdicts:
        line = headline_rule_line(c)
        if c in moved:
            assert f"give {c['headline_rule']['previous']}, not {c['verdict']}" in line
            assert claim_ref(c["id"]) in summary
            page = next(e for e in entries if e.id == next(r["notebook"] for r in c["evidence"]))
            assert line in results_box(page, rows_, by_id)
        else:
            assert line == "" and claim_ref(c["id"]) not in summary
    assert card.count("*headline rule:*") == len(moved)
