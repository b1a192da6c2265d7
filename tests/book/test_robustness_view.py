"""rlvr_dynamics.book.robustness_view: the label after a verdict, the scorecard cell and the fold, on results with
known answers (the headline each alternative gives is recomputed by the headline rule), and the committed book."""
from __future__ import annotations

import pytest

from rlvr_dynamics.book import robustness_view as rv
from rlvr_dynamics.verdicts import robustness as rb
from rlvr_dynamics.verdicts.headline import headline_rule_flip, headline_text


def _alt(name, verdict):
    return dict(alternative=name, verdict=verdict, number=1.0, ci=None, note="n")


RESULTS = {
    "X-C1": dict(setting="exact", row="e", table=[_alt("page", "PASS"), _alt("a", "PARTIAL")]),
    "X-C1/testbed": dict(setting="testbed", notebook="nb", row="t", table=[_alt("page", "INCONCLUSIVE"), _alt("b", "FAIL")]),
    "X-C2": dict(setting="paper", row="p", table=[_alt("page", "FAIL"), _alt("welch", "INCONCLUSIVE")]),
}


@pytest.fixture(autouse=True)
def results(monkeypatch):
    monkeypatch.setattr(rb, "load_results", lambda: RESULTS)


def claim(cid, verdict, rows):
    return dict(id=cid, verdict=verdict, kind="universal", evidence=[dict(id=cid, **r) for r in rows])


C1 = claim("X-C1", "PASS", [dict(setting="exact", verdict="PASS", notebook="x"),
                            dict(setting="testbed", verdict="INCONCLUSIVE", notebook="nb")])
C2 = claim("X-C2", "FAIL", [dict(setting="paper", verdict="FAIL"), dict(setting="exact", verdict="FAIL")])
C3 = claim("X-C3", "PASS", [dict(setting="exact", verdict="PASS")])


def test_verdict_note_names_each_headline_an_alternative_or_the_earlier_headline_rule_moves_to():
    """One note after a headline wherever it is listed (landing lists, weight of evidence, page headline lines): the
    alternatives' label, and the headline under the rule before 2026-12-01 when that rule moves it."""
    assert rv.verdict_note(C1) == " (fragile: PARTIAL under a; FAIL under b)"
    assert rv.verdict_note(C2) == "" and rv.verdict_note(C3) == ""
    moved = dict(C3, headline_rule={"changed": True, "previous": "INCONCLUSIVE", "date": "2026-12-01"})
    assert rv.verdict_note(moved) == " (fragile: INCONCLUSIVE under the headline rule before 2026-12-01)"
    assert headline_text(moved) == "PASS (fragile: INCONCLUSIVE under the headline rule before 2026-12-01)"
    both = dict(C1, headline_rule={"changed": True, "previous": "INCONCLUSIVE", "date": "2026-12-01"})
    assert rv.verdict_note(both) == (" (fragile: PARTIAL under a; FAIL under b; INCONCLUSIVE under the headline rule "
                                     "before 2026-12-01)")


def test_a_fragile_row_under_a_robust_headline_is_labelled_in_its_setting():
    assert rv.setting_label(C2, "paper") == " (fragile: INCONCLUSIVE under welch)"
    assert rv.setting_label(C2, "exact") == "" and rv.setting_label(C3, "paper") == ""
    assert rv.summary(C2) == ("robust; the paper row is fragile (INCONCLUSIVE under welch); the headline is held by "
                              "the exact row")
    assert rv.summary(C3) == "not audited"


def test_scorecard_cell():
    cell = rv.robust_cell(C1)
    assert cell.startswith("flips under a (to ") and "; flips under b (to " in cell and "FAIL" in cell
    assert rv.robust_cell(C2).startswith("robust<br><small>paper row flips under welch (to ")
    assert rv.robust_cell(C2).endswith("; held by the exact row</small>")
    assert rv.robust_cell(C3) == "not audited"


def test_fold_has_one_table_per_audited_row_with_the_headline_each_alternative_gives():
    fold = "\n".join(rv.robustness_fold(C1))
    assert fold.startswith(":::{admonition} Robustness: fragile: PARTIAL under a; FAIL under b")
    assert fold.count("| analysis | listed | row verdict |") == 2
    assert "(this row: fragile: FAIL under b)" in fold
    unaudited = "\n".join(rv.robustness_fold(C3))
    assert unaudited.startswith(":::{admonition} Robustness: not audited") and "| analysis |" not in unaudited


LISTED = {"X-C1": dict(alternatives=[dict(id="a"), dict(id="k", result_known_when_listed=True)])}


def test_listed_when_says_whether_the_result_was_known(monkeypatch):
    monkeypatch.setattr(rv, "_listed", lambda: LISTED)
    assert rv.listed_when("X-C1", "a") == "before its result"
    assert rv.listed_when("X-C1", "k") == "after its result was known"
    assert rv.listed_when("X-C1", "page") == "" and rv.listed_when("X-C9", "a") == ""
    fold = "\n".join(rv.robustness_fold(C1))
    assert "| a | before its result |" in fold and "| page | the page's analysis |" in fold
    assert "before they were computed" not in fold


def test_verdict_note_joins_the_fragile_label_and_the_earlier_headline_rule():
    assert rv.verdict_note(C1) == " (fragile: PARTIAL under a; FAIL under b)"
    moved = {**C3, "headline_rule": dict(date="2026-12-01", previous="INCONCLUSIVE", now="PASS", changed=True)}
    assert rv.verdict_note(moved) == " (fragile: INCONCLUSIVE under the headline rule before 2026-12-01)"
    both = {**C1, "headline_rule": dict(date="2026-12-01", previous="FAIL", now="PASS", changed=True)}
    assert rv.verdict_note(both) == " (fragile: PARTIAL under a; FAIL under b; FAIL under the headline rule before 2026-12-01)"
    assert rv.verdict_note(C2) == "" and rv.verdict_note({**C3, "headline_rule": dict(changed=False)}) == ""


def test_page_cell_note_labels_only_the_page_that_holds_the_audited_row():
    assert rv.page_cell_note(C1, "nb", "testbed") == " (fragile: FAIL under b)"
    assert rv.page_cell_note(C1, "x", "exact") == " (fragile: PARTIAL under a)"
    assert rv.page_cell_note(C1, "x", "testbed") == "" and rv.page_cell_note(C1, "nb", "exact") == ""
    assert rv.page_cell_note(C2, None, "paper") == " (fragile: INCONCLUSIVE under welch)"
    assert rv.page_cell_note(C2, None, "exact") == "" and rv.page_cell_note(C3, None, "exact") == ""


def test_every_fragile_or_row_fragile_claim_of_the_book_has_a_reading(monkeypatch):
    """The committed book: each claim an alternative moves, or whose audited row is fragile, says in
    book/robustness.yml how the project reads it (shown in its fold)."""
    monkeypatch.undo()
    from rlvr_dynamics.book.markup import load_verdicts
    from rlvr_dynamics.paths import STORED_CLAIMS_DIR
    from rlvr_dynamics.verdicts.headline import claim_verdicts
    for c in claim_verdicts(load_verdicts(STORED_CLAIMS_DIR)):
        s = rv.summary(c)
        if s.endswith("(no alternative analysis listed)"):     # fragile by the earlier headline rule alone
            assert "the same rows give" in "\n".join(rv.robustness_fold(c)), c["id"]
        elif s.startswith("fragile") or s.startswith("robust;"):
            assert rv.reading(c["id"]), c["id"]
            assert f"*Reading:* " in "\n".join(rv.robustness_fold(c))


MOVED = {**C3, "headline_rule": dict(date="2026-12-01", previous="FAIL", now="PASS", changed=True)}


def test_a_headline_the_earlier_headline_rule_moves_is_called_fragile_in_every_listing():
    assert headline_rule_flip(MOVED) == "FAIL under the headline rule before 2026-12-01"
    assert headline_rule_flip(C3) == "" and headline_rule_flip({**C3, "headline_rule": dict(changed=False)}) == ""
    assert rv.summary(MOVED) == ("fragile: FAIL under the headline rule before 2026-12-01 (no alternative analysis "
                                 "listed)")
    assert rv.robust_cell(MOVED).startswith("flips under the headline rule before 2026-12-01 (to ")
    fold = "\n".join(rv.robustness_fold(MOVED))
    assert fold.startswith(":::{admonition} Robustness: fragile: FAIL under the headline rule before 2026-12-01")
    assert "no referee audit named" not in fold and "give FAIL, not PASS" in fold
    assert "no referee audit named" in "\n".join(rv.robustness_fold(C3))


def test_page_cell_note_with_a_verdict_labels_only_the_audited_row_not_a_consistent_check_beside_it():
    assert rv.page_cell_note(C1, "nb", "testbed", "INCONCLUSIVE") == " (fragile: FAIL under b)"
    assert rv.page_cell_note(C1, "nb", "testbed", "CONSISTENT") == ""
    assert rv.page_cell_note(C2, None, "paper", "FAIL") == " (fragile: INCONCLUSIVE under welch)"


def test_why_text_leads_with_the_row_that_holds_a_robust_headline():
    paper = dict(id="X-C2", setting="paper", verdict="FAIL", notebook="p", reason="pooled")
    exact = dict(id="X-C2", setting="exact", verdict="FAIL", notebook="e", reason="shift")
    c2 = {**C2, "evidence": [paper, exact], "decider": paper, "reason": "p (paper): pooled [weakest]"}
    assert rv.why_text(c2) == ("e (exact, the row that holds the headline): shift; p (paper, fragile: INCONCLUSIVE "
                               "under welch): pooled [weakest]")
    c1 = {**C1, "decider": C1["evidence"][0], "reason": "x (exact): r"}
    assert rv.why_text(c1) == "x (exact): r"


def test_first_rule_reruns_names_the_alternatives_that_rerun_a_first_rule_today(monkeypatch):
    from rlvr_dynamics.book.scorecard import first_rule_reruns
    monkeypatch.setattr(rb, "load_results", lambda: {
        "X-C4": dict(setting="exact", row="e", table=[_alt("page", "PASS"), _alt("first-rule-20pct", "FAIL")])})
    c4 = {**claim("X-C4", "PASS", [dict(setting="exact", verdict="PASS")]),
          "provenance": dict(amended=True, amendments=[dict(date="2026-11-30", verdict_before="PASS")])}
    assert first_rule_reruns([c4]) == ("; where an alternative reruns it on today's rows: X-C4 first-rule-20pct FAIL "
                                       "(recorded PASS)")
    assert first_rule_reruns([C3]) == ""
