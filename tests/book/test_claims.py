"""The claims ledger: IDs must exist in the spec checklists, verdicts are validated, output is rounded and stable."""
from __future__ import annotations

import json

import pytest

from rlvr_dynamics.paths import REPO_ROOT, SHARED_DIR
from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts import ledger

SPECS = SHARED_DIR / "papers"


def test_checklist_has_every_claim_of_both_papers():
    ids = claims.checklist()
    assert [i for i in ids if i.startswith("P1-")] == [f"P1-C{k}" for k in range(1, 17)]
    assert [i for i in ids if i.startswith("P2-")] == [f"P2-C{k}" for k in range(1, 16)]
    assert ids["P1-C10"]["scale"] == "CPU" and ids["P2-C14"]["scale"] == "GPU"


@pytest.mark.skipif(not SPECS.exists(), reason="../shared/papers is not beside this clone")
def test_checklist_copy_matches_the_specs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("extract", REPO_ROOT / "tools/extract_claims.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for paper, name in mod.SPECS.items():
        fresh = mod.parse_checklist((SPECS / name).read_text(encoding="utf-8"))
        stored = [{"id": cid, **{k: row[k] for k in claims.SPEC_FIELDS}}
                  for cid, row in claims.checklist().items() if row["paper"] == paper]
        assert [{k: r[k] for k in ("id", *claims.SPEC_FIELDS)} for r in fresh] == stored


def test_unknown_id_is_rejected_with_the_known_ids():
    with pytest.raises(ValueError, match=r"'P1-C99'.*P1-C1, P1-C2"):
        claims.Claim("P1-C99", "x", verdict="PASS")


@pytest.mark.parametrize("kwargs, match", [
    ({"verdict": "OK"}, "must be one of"),
    ({"verdict": "FAIL"}, "needs a reason"),
    ({"verdict": "N/A", "reason": "  "}, "needs a reason"),
    ({"verdict": "PASS", "statement": ""}, "statement"),
])
def test_invalid_claims(kwargs, match):
    args = {"id": "P2-C6", "statement": "catastrophic failure", **kwargs}
    with pytest.raises(ValueError, match=match):
        claims.Claim(**args)


def test_record_rounds_prints_and_writes_json(tmp_path, capsys):
    rows = claims.record("nb", [
        claims.Claim("P1-C10", "threshold", measured=1.0000004321, paper_value=1, tolerance=0.05, verdict="PASS"),
        {"id": "P1-C11", "statement": "onset", "measured": float("nan"), "verdict": "FAIL", "reason": "diverged"},
    ], out_dir=tmp_path)
    assert rows[0]["measured"] == 1.0 and rows[1]["measured"] == "nan"
    data = json.loads((tmp_path / "nb.claims.json").read_text())
    assert data["notebook"] == "nb" and [r["id"] for r in data["claims"]] == ["P1-C10", "P1-C11"]
    assert data["claims"][0]["paper"] == "P1"
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "setting", "verdict", "measured", "ci", "paper_value", "tolerance"]
    assert out[2].split() == ["P1-C10", "exact", "PASS", "1.0", "-", "1", "0.05"]
    assert list(tmp_path.iterdir()) == [tmp_path / "nb.claims.json"]  # no temp file left behind


def test_record_rejects_duplicates_and_empty(tmp_path):
    c = claims.Claim("P1-C1", "x", verdict="PASS")
    with pytest.raises(ValueError, match="duplicate"):
        claims.record("nb", [c, c], out_dir=tmp_path)
    # several evidence rows for one claim are fine when they say different things (e.g. a context variant)
    other = claims.Claim("P1-C1", "y", verdict="FAIL", reason="variant", context=True)
    claims.record("nb", [c, other], out_dir=tmp_path)
    assert [r["statement"] for r in json.loads((tmp_path / "nb.claims.json").read_text())["claims"]] == ["x", "y"]
    with pytest.raises(ValueError, match="empty"):
        claims.record("nb", [], out_dir=tmp_path)


@pytest.mark.parametrize("value, expected", [(123456.789, 123500.0), (0.000123456, 0.0001235), (3, 3),
                                             (True, True), ("x", "x"), (None, None), (float("inf"), "inf")])
def test_rounding_to_significant_digits(value, expected):
    assert claims._round(value) == expected


# --- one verdict per claim -------------------------------------------------------------------------------------

def _row(cid, verdict, nb, measured=None, reason="", **kw):
    return {"id": cid, "verdict": verdict, "notebook": nb, "measured": measured, "reason": reason,
            "paper": cid[:2], "statement": "s", "paper_value": None, "tolerance": None, **kw}


def _by_id(out):
    return {v["id"]: v for v in out}


def test_claim_verdicts_lists_every_claim_once_in_checklist_order_with_the_documented_keys():
    out = claims.claim_verdicts([])
    assert [v["id"] for v in out] == list(claims.checklist())
    assert len(out) == 31
    assert all(set(v) == {"id", "paper", "kind", "same_phenomenon_as", "statement", "criterion", "scope",
                          "changed_after_result", "provenance", "headline_rule", "verdict", "decider", "measured", "ci", "unit", "reason", "evidence",
                          "by_setting", "by_page"} for v in out)
    assert {v["verdict"] for v in out} == {"NOT TESTED"}
    assert out[0]["reason"] == "no notebook records this claim" and out[0]["evidence"] == []
    known = claims.checklist()["P1-C1"]
    assert out[0]["paper"] == "P1"
    assert out[0]["statement"] == (known.get("paper_statement") or known["statement"])
    assert out[0]["criterion"] == known.get("criterion") and out[0]["scope"] == known.get("scope")


@pytest.mark.parametrize("verdicts, expected", [
    (["PASS"], "PASS"),
    (["PASS", "PASS"], "PASS"),
    (["PASS", "PARTIAL"], "PARTIAL"),
    (["PARTIAL", "INCONCLUSIVE"], "PARTIAL"),      # rule (2): INCONCLUSIVE decides only without a decisive row
    (["PASS", "INCONCLUSIVE"], "PASS"),
    (["INCONCLUSIVE", "INCONCLUSIVE"], "INCONCLUSIVE"),
    (["INCONCLUSIVE", "CONSISTENT"], "INCONCLUSIVE"),
    (["INCONCLUSIVE", "FAIL", "PASS"], "FAIL"),
    (["PASS", "CONSISTENT"], "PASS"),          # a consistency check neither weakens nor strengthens
    (["FAIL", "CONSISTENT"], "FAIL"),
    (["CONSISTENT"], "CONSISTENT"),            # never PASS from by-construction checks alone
    (["CONSISTENT", "CONSISTENT", "N/A"], "CONSISTENT"),
    (["N/A"], "N/A"),
    (["N/A", "PARTIAL"], "PARTIAL"),
    (["N/A", "N/A"], "N/A"),
])
def test_headline_rule(verdicts, expected):
    assert (claims.checklist()["P1-C9"].get("kind") or "universal") == "universal"
    rows = [_row("P1-C9", v, f"nb{i}", measured=i, reason="" if v == "PASS" else f"r{i}")
            for i, v in enumerate(verdicts)]
    got = _by_id(claims.claim_verdicts(rows))["P1-C9"]
    assert got["verdict"] == expected
    assert [{k: v for k, v in r.items() if k != "setting"} for r in got["evidence"]] == rows


@pytest.mark.parametrize("verdicts, expected", [
    (["FAIL", "PASS"], "PASS"), (["FAIL", "PARTIAL"], "PARTIAL"), (["FAIL", "INCONCLUSIVE"], "FAIL"),
    (["INCONCLUSIVE"], "INCONCLUSIVE"),
])
def test_existence_claims_take_the_strongest_decisive_row(verdicts, expected):
    rows = [_row("P2-C9", v, f"nb{i}", reason=f"r{i}") for i, v in enumerate(verdicts)]
    assert claims.headline(rows, "existence")[0] == expected
    assert claims.headline(rows, "universal")[0] == min(
        (v for v in verdicts if v in claims.DECISIVE_ORDER), key=claims.DECISIVE_ORDER.index, default="INCONCLUSIVE")
    with pytest.raises(ValueError, match="kind 'some'"):
        claims.headline(rows, "some")


def test_rows_of_one_phenomenon_count_once():
    rows = [_row("P2-C9", "PASS", "a", phenomenon="sweep"), _row("P2-C9", "FAIL", "b", reason="x",
                                                                  phenomenon="sweep")]
    assert claims.headline(rows)[0] == "PASS"
    rows[1]["phenomenon"] = None
    assert claims.headline(rows)[0] == "FAIL"


def test_settings_matrix_and_pages():
    rows = [_row("P1-C9", "PASS", "grpo_p1_dynamics", measured=0.95),
            _row("P1-C9", "INCONCLUSIVE", "grpo_smollm", reason="noise ceiling 0.2 < 0.91"),
            _row("P1-C9", "FAIL", "p1_three_phase", reason="r 0.5", context=True)]
    v = _by_id(claims.claim_verdicts(rows))["P1-C9"]
    assert v["verdict"] == "PASS" and v["decider"]["notebook"] == "grpo_p1_dynamics"
    assert v["by_setting"] == {"paper": "INCONCLUSIVE", "testbed": "PASS", "context": "FAIL"}
    assert v["by_page"] == {"grpo_p1_dynamics": {"testbed": "PASS"}, "grpo_smollm": {"paper": "INCONCLUSIVE"},
                            "p1_three_phase": {"context": "FAIL"}}
    assert claims.row_setting({"notebook": "p1_regimes"}) == "exact"
    assert claims.row_setting({"notebook": "p1_regimes", "setting": "testbed"}) == "testbed"


def test_setting_validation():
    assert claims.Claim("P1-C9", "r2", verdict="PASS", setting="context").context is True
    assert claims.Claim("P1-C9", "r2", verdict="PASS", context=True).setting == "context"
    with pytest.raises(ValueError, match="setting 'lab'"):
        claims.Claim("P1-C9", "r2", verdict="PASS", setting="lab")
    with pytest.raises(ValueError, match="contradicts"):
        claims.Claim("P1-C9", "r2", verdict="PASS", setting="exact", context=True)
    with pytest.raises(ValueError, match="ci must be"):
        claims.Claim("P1-C9", "r2", verdict="PASS", ci="wide")


@pytest.mark.parametrize("rule, measured, ci, holds", [
    ({"op": "<=", "bound": 0.1}, 0.1, None, True), ({"op": "<", "bound": 0.1}, 0.1, None, False),
    ({"op": ">=", "bound": 0.9}, 0.95, None, True), ({"op": ">", "bound": 0.9}, 0.5, None, False),
    ({"op": "abs<=", "bound": 0.1}, -0.05, None, True), ({"op": "abs<=", "bound": 0.1}, -0.5, None, False),
    ({"op": "within", "bound": [0.75, 1.25]}, 1.0, None, True), ({"op": "within", "bound": [0.75, 1.25]}, 0.2,
                                                                     None, False),
    ({"op": "outside", "bound": [-0.1, 0.1]}, 0.2, None, True),
    ({"op": "ci_within", "bound": [-0.1, 0.1]}, 0.0, [-0.05, 0.05], True),
    ({"op": "ci_within", "bound": [-0.1, 0.1]}, 0.0, [-0.05, 0.15], False),
    ({"op": "ci_above", "bound": 0.0}, 0.3, [0.1, 0.5], True), ({"op": "ci_below", "bound": 0.0}, 0.3, [0.1, 0.5],
                                                                False),
    ({"op": "ci_excludes", "bound": [-0.01, 0.01]}, 0.02, [0.012, 0.03], True),
    ({"op": "<=", "bound": 0.1}, float("nan"), None, False),
])
def test_rule_holds(rule, measured, ci, holds):
    assert claims.rule_holds(rule, measured, ci) is holds


def test_rule_errors_name_the_problem():
    with pytest.raises(ValueError, match="decided by a CI"):
        claims.rule_holds({"op": "ci_above", "bound": 0}, 1.0)
    with pytest.raises(ValueError, match="needs bound"):
        claims.Claim("P1-C9", "r2", verdict="PASS", rule={"op": "within", "bound": 0.1})
    with pytest.raises(ValueError, match="rule op"):
        claims.Claim("P1-C9", "r2", verdict="PASS", rule={"op": "~", "bound": 0.1})
    with pytest.raises(KeyError, match="P1-C99"):
        claims.rule("P1-C99")


def test_claim_verdicts_exact_output():
    rows = [
        _row("P1-C15", "PASS", "p1_group_size", measured=0.12),
        _row("P1-C15", "FAIL", "grpo_p1_dynamics", measured=0.01, reason="std gap 0.01 within 2 SE"),
        _row("P2-C9", "PASS", "p2_token", measured=-0.02, context=True),       # mean baseline, not GRPO
        _row("P2-C9", "FAIL", "grpo_p2_alignment", measured=0.5, reason="slope +0.50"),
        _row("P1-C12", "CONSISTENT", "grpo_p1_dynamics", measured=1.3, reason="zeta>=1 by the fitted family"),
        _row("P2-C10", "PASS", "p2_engineered", measured=0.0, context=True),
        _row("P1-C16", "N/A", "grpo_failure_runs", reason="needs 1.5B-7B models"),
        _row("P1-C9", "INCONCLUSIVE", "nb_b", measured=0.2, reason="noise ceiling 0.36 < 0.91"),
        _row("P1-C9", "INCONCLUSIVE", "nb_c", measured=0.1, reason="noise ceiling 0.01 < 0.91"),
        _row("P1-C8", "PASS", "nb_a", measured=0.95),
        _row("P1-C8", "INCONCLUSIVE", "nb_b", measured=0.2, reason="noise ceiling 0.36 < 0.91"),
    ]
    out = _by_id(claims.claim_verdicts(rows))
    pick = lambda cid: (out[cid]["verdict"], out[cid]["measured"], out[cid]["reason"],  # noqa: E731
                        [r["notebook"] for r in out[cid]["evidence"]])
    assert pick("P1-C15") == ("FAIL", 0.01, "grpo_p1_dynamics (testbed): std gap 0.01 within 2 SE "
                              "[weakest decisive row of 2 in-scope rows]", ["p1_group_size", "grpo_p1_dynamics"])
    assert pick("P2-C9") == ("FAIL", 0.5, "grpo_p2_alignment (testbed): slope +0.50 [1 context row not counted]",
                             ["p2_token", "grpo_p2_alignment"])
    assert pick("P1-C12") == ("CONSISTENT", 1.3, "grpo_p1_dynamics (testbed): zeta>=1 by the fitted family "
                              "[a by-construction check only, not evidence for PASS]", ["grpo_p1_dynamics"])
    assert pick("P2-C10") == ("NOT TESTED", None, "only context rows (1): no test of the paper's algorithm in the "
                              "claim's scope", ["p2_engineered"])
    assert pick("P1-C16") == ("N/A", None, "grpo_failure_runs (testbed): needs 1.5B-7B models", ["grpo_failure_runs"])
    assert pick("P1-C9") == ("INCONCLUSIVE", 0.2, "nb_b (exact): noise ceiling 0.36 < 0.91 "
                             "[no decisive row of 2 in-scope rows]", ["nb_b", "nb_c"])
    assert pick("P1-C8") == ("PASS", 0.95, "nb_a [weakest decisive row of 2 in-scope rows]", ["nb_a", "nb_b"])
    assert out["P1-C1"]["verdict"] == "NOT TESTED"
    assert sum(v["verdict"] != "NOT TESTED" for v in out.values()) == 6


def test_claim_verdicts_rejects_unknown_ids_and_verdicts():
    with pytest.raises(ValueError, match="unknown claim id 'P1-C99'"):
        claims.claim_verdicts([_row("P1-C99", "PASS", "nb")])
    with pytest.raises(ValueError, match="'OK' is not one of"):
        claims.claim_verdicts([_row("P1-C1", "OK", "nb")])


def test_claim_verdicts_reads_the_stored_notebook_verdicts():
    from rlvr_dynamics.book.markup import load_verdicts
    from rlvr_dynamics.paths import STORED_CLAIMS_DIR
    rows = load_verdicts(STORED_CLAIMS_DIR)
    out = claims.claim_verdicts(rows)
    assert len(out) == 31 and sum(len(v["evidence"]) for v in out) == len(rows)
    assert all(v["verdict"] != "PASS" or any(r["verdict"] == "PASS" and r["setting"] != "context"
                                             for r in v["evidence"]) for v in out)


def test_new_verdicts_and_context_flag():
    c = claims.Claim("P1-C12", "zeta >= 1", verdict="CONSISTENT", reason="holds by the fitted family")
    assert c.as_row()["context"] is False
    assert claims.Claim("P2-C9", "mean baseline", verdict="PASS", context=True).as_row()["context"] is True
    for v in ("CONSISTENT", "INCONCLUSIVE"):
        with pytest.raises(ValueError, match="needs a reason"):
            claims.Claim("P1-C9", "r2", verdict=v)
    with pytest.raises(ValueError, match="computed number"):
        claims.Claim("P1-C9", "r2", verdict="INCONCLUSIVE", reason="runs too noisy")
    row = claims.Claim("P1-C9", "r2", verdict="INCONCLUSIVE", reason="noise ceiling 0.36 < 0.91").as_row()
    assert row["verdict"] == "INCONCLUSIVE" and row["context"] is False


def test_criterion_returns_the_preregistered_fields():
    c = claims.criterion("P1-C10")
    assert set(c) == {"id", "paper", "statement", *claims.PREREGISTERED_FIELDS}
    assert c["id"] == "P1-C10" and c["paper"] == "P1"
    with pytest.raises(KeyError):
        claims.criterion("P1-C99")
    assert claims.format_criterion({"statistic": "R2", "threshold": ">= 0.91", "seeds": 3}) == \
        "statistic: R2; threshold: >= 0.91; seeds: 3"


# --- pre-registered criteria in book/claims.yml ----------------------------------------------------------------

@pytest.mark.parametrize("cid", list(claims.checklist()))
def test_every_claim_has_a_preregistered_criterion(cid):
    c = claims.criterion(cid)
    for key in ("paper_statement", "quantity", "scope"):
        assert isinstance(c[key], str) and len(c[key].strip()) > 20, (cid, key)
    crit = c["criterion"]
    assert isinstance(crit, dict), cid
    assert set(crit) <= set(claims.CRITERION_KEYS), (cid, set(crit) - set(claims.CRITERION_KEYS))
    for key in ("statistic", "threshold", "tolerance", "seeds"):
        assert str(crit.get(key) or "").strip(), (cid, key)
    assert "PASS" in crit["threshold"], cid
    # every number's source is labelled: the paper's, the spec author's derivation, or this project's choice
    assert any(s in crit["tolerance"] for s in ("paper value", "spec value", "project choice")), cid
    assert c["changed_after_result"] is None or isinstance(c["changed_after_result"], list), cid
    for a in claims.amendments(cid):  # each amendment is dated, says what changed, and the verdict before it
        assert a["change"].strip() and a["date"] >= "2026-11-29", (cid, a)
    values = dict(crit.get("values") or {})
    rules = values.pop("rules", None) or {}
    assert all(isinstance(v, (int, float)) for v in values.values()), cid
    for name in rules:  # machine-readable pass rules parse and name their statistic
        rule = claims.rule(cid, name)
        assert rule["stat"].strip(), (cid, name)


def _extract_tool():
    import importlib.util
    spec = importlib.util.spec_from_file_location("extract", REPO_ROOT / "tools/extract_claims.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_extract_tool_and_ledger_agree_on_field_names():
    mod = _extract_tool()
    assert mod.SPEC_FIELDS == claims.SPEC_FIELDS and mod.PREREGISTERED_FIELDS == claims.PREREGISTERED_FIELDS


def test_extract_merge_keeps_hand_written_fields_by_id():
    mod = _extract_tool()
    spec_rows = [{"id": "P1-C1", "tag": "P", "statement": "new text", "confirm": "c", "scale": "CPU"},
                 {"id": "P1-C2", "tag": "P", "statement": "s2", "confirm": "c2", "scale": "GPU"}]
    existing = [{"id": "P1-C2", "tag": "P", "statement": "old", "confirm": "old", "scale": "CPU",
                 "paper_statement": "ps", "quantity": "q", "criterion": {"statistic": "x"}, "scope": "sc",
                 "changed_after_result": "why"},
                {"id": "P1-C9", "paper_statement": "gone"}]
    rows, dropped = mod.merge(spec_rows, existing)
    assert dropped == ["P1-C9"]
    assert rows[0] == {"id": "P1-C1", "tag": "P", "statement": "new text", "confirm": "c", "scale": "CPU",
                       "paper_statement": None, "quantity": None, "criterion": None, "scope": None,
                       "changed_after_result": None}
    assert rows[1] == {"id": "P1-C2", "tag": "P", "statement": "s2", "confirm": "c2", "scale": "GPU",
                       "paper_statement": "ps", "quantity": "q", "criterion": {"statistic": "x"}, "scope": "sc",
                       "changed_after_result": "why"}


@pytest.mark.skipif(not SPECS.exists(), reason="../shared/papers is not beside this clone")
def test_regenerating_the_ledger_changes_nothing(tmp_path):
    mod = _extract_tool()
    target = tmp_path / "claims.yml"
    target.write_text(claims.CHECKLIST_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    mod.main(str(SPECS), target)
    assert target.read_text(encoding="utf-8") == claims.CHECKLIST_PATH.read_text(encoding="utf-8")


# --- criterion provenance: fixed before the result, or amended after it (issue 30) -----------------------------

def _ledger_with(monkeypatch, cid, changed, kind=None):
    """claims.checklist() with ``cid``'s changed_after_result (and kind) replaced."""
    known = {k: dict(v) for k, v in claims.checklist().items()}
    known[cid]["changed_after_result"] = changed
    if kind:
        known[cid]["kind"] = kind
    monkeypatch.setattr(ledger, "checklist", lambda: known)
    return known


def test_provenance_of_a_criterion_fixed_before_the_result(monkeypatch):
    _ledger_with(monkeypatch, "P1-C3", None)
    prov = claims.criterion_provenance("P1-C3", [_row("P1-C3", "PASS", "nb")])
    assert prov == {"amended": False, "amendments": [], "dates": [], "first_verdict": None, "verdict": "PASS"}


def test_provenance_first_verdict_unchanged_entries_and_a_computed_kind_change(monkeypatch):
    changed = [{"date": "2026-11-30", "change": "first change", "verdict_before": "PASS"},
               {"date": "2026-12-01", "change": "wording", "verdict_before": "unchanged"},
               {"date": "2026-12-01", "change": "relabelled existence", "kind_before": "universal"}]
    _ledger_with(monkeypatch, "P2-C10", changed, kind="existence")
    rows = [_row("P2-C10", "PASS", "nb_a"), _row("P2-C10", "FAIL", "nb_b")]
    prov = claims.criterion_provenance("P2-C10", rows)
    assert prov["verdict"] == "PASS"                                  # existence: the strongest decisive row
    assert [a["verdict_before"] for a in prov["amendments"]] == ["PASS", "FAIL", "FAIL"]
    assert prov["amendments"][2]["computed"] and prov["first_verdict"] == "PASS"
    assert prov["dates"] == ["2026-11-30", "2026-12-01"]
    by_id = {v["id"]: v for v in claims.claim_verdicts(rows)}
    assert by_id["P2-C10"]["provenance"] == prov                      # the one function claim_verdicts carries


@pytest.mark.parametrize("changed, match", [
    ("a free-text reason", "must be null or a list"),
    ([{"date": "2026-12-01", "change": "x"}], "exactly one of verdict_before and kind_before"),
    ([{"date": "2026-12-01", "change": "x", "verdict_before": "GOOD"}], "verdict_before 'GOOD'"),
    ([{"date": "Dec 1", "change": "x", "verdict_before": "PASS"}], "date YYYY-MM-DD"),
    ([{"date": "2026-12-01", "change": "x", "verdict_before": "PASS", "why": "y"}], "keys from"),
    ([{"date": "2026-12-01", "change": "b", "verdict_before": "PASS"},
      {"date": "2026-11-30", "change": "a", "verdict_before": "PASS"}], "oldest first"),
])
def test_amendments_are_checked(monkeypatch, changed, match):
    _ledger_with(monkeypatch, "P1-C3", changed)
    with pytest.raises(ValueError, match=match):
        claims.amendments("P1-C3")


def test_the_ledger_records_the_amendments_found_after_the_fact():
    """The five changes an audit found unrecorded (issue 30) are in the ledger, with the verdict before each."""
    def has(cid, words, before=None):
        return any(words in a["change"] and (before is None or a.get("verdict_before") == before)
                   for a in claims.amendments(cid))
    assert has("P1-C12", "full oscillation signature", "PASS")
    assert has("P2-C15", "CIs that exclude the effects", "INCONCLUSIVE")
    assert has("P1-C13", "induction check", "FAIL")
    assert has("P2-C8", "prototype slopes", "FAIL")
    for cid in ("P2-C9", "P2-C10"):
        assert any(a.get("kind_before") == "universal" for a in claims.amendments(cid)), cid
