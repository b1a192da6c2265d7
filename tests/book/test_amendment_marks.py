"""The chain of verdicts of an amended claim (v1 → v2 → now, with dates), the PASS-after-FAIL mark and the headline
under each claim's first recorded rule: one function each in ``rlvr_dynamics.verdicts.headline``, read by every page
(results box, claim × setting matrix, landing cards, scorecard)."""
from __future__ import annotations

from rlvr_dynamics.book import markup
from rlvr_dynamics.verdicts.headline import first_rule_verdict, passed_after_fail, verdict_chain


def _prov(now: str, *steps: tuple[str, str]) -> dict:
    amendments = [{"date": d, "verdict_before": v, "change": f"changed on {d}"} for d, v in steps]
    return {"amended": bool(amendments), "amendments": amendments,
            "dates": list(dict.fromkeys(d for d, _ in steps)),
            "first_verdict": amendments[0]["verdict_before"] if amendments else None, "verdict": now}


# P1-C12 as the ledger has it: PASS, PASS, a FAIL seen on 2026-12-01's rule, PASS again after 2026-12-02's change
FLIP = _prov("PASS", ("2026-11-30", "PASS"), ("2026-12-01", "PASS"), ("2026-12-02", "FAIL"))


def test_the_chain_lists_each_rule_with_the_date_it_came_in_and_its_verdict():
    assert verdict_chain(FLIP) == [
        {"rule": "v1", "since": None, "verdict": "PASS"},
        {"rule": "v2", "since": "2026-11-30", "verdict": "PASS"},
        {"rule": "v3", "since": "2026-12-01", "verdict": "FAIL"},
        {"rule": "now", "since": "2026-12-02", "verdict": "PASS"}]
    assert verdict_chain(_prov("FAIL")) == [{"rule": "now", "since": None, "verdict": "FAIL"}]


def test_a_pass_reached_after_a_fail_is_marked_and_nothing_else_is():
    assert passed_after_fail(FLIP)
    assert passed_after_fail(_prov("PASS", ("2026-11-30", "FAIL")))
    assert not passed_after_fail(_prov("PASS", ("2026-11-30", "PASS")))           # amended, never a FAIL
    assert not passed_after_fail(_prov("PARTIAL", ("2026-11-30", "FAIL")))        # not a PASS now
    assert not passed_after_fail(_prov("PASS"))                                   # never amended


def test_the_first_rule_headline_is_v1_or_the_verdict_of_an_unamended_claim():
    assert first_rule_verdict(FLIP) == "PASS"
    assert first_rule_verdict(_prov("PARTIAL", ("2026-11-30", "FAIL"), ("2026-12-01", "PASS"))) == "FAIL"
    assert first_rule_verdict(_prov("FAIL")) == "FAIL"


def test_the_chain_text_shows_the_intermediate_flip_that_first_rule_to_now_hid():
    text = markup.chain_text({"provenance": FLIP, "verdict": "PASS"})
    assert text == "v1 PASS → v2 (2026-11-30) PASS → v3 (2026-12-01) FAIL → now (2026-12-02) PASS"
    assert markup.PASS_AFTER_FAIL in markup.amendment_mark({"provenance": FLIP, "verdict": "PASS"})
    assert markup.amendment_mark({"provenance": _prov("PASS"), "verdict": "PASS"}) == ""
    line = markup.provenance_line({"provenance": FLIP, "verdict": "PASS"})
    assert "v3 (2026-12-01) FAIL" in line and "PASS after a FAIL" in line


def test_unchanged_text_names_the_criteria_never_amended_and_agrees_in_number():
    from rlvr_dynamics.book.scorecard import unchanged_text
    claims = [dict(id="X-C1"), dict(id="X-C2"), dict(id="X-C3")]
    assert unchanged_text(claims, claims[:2]) == "the other one (X-C3) has had no change after a result was seen"
    assert unchanged_text(claims, claims[:1]) == "the other 2 (X-C2, X-C3) have had no change after a result was seen"
    assert unchanged_text(claims, claims) == "every criterion has been amended since"
    assert "keep the threshold" not in unchanged_text(claims, [])
