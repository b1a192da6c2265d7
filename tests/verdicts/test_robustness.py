"""rlvr_dynamics.verdicts.robustness (issue 39) on synthetic inputs with known answers, and the committed
book/robustness_results.json against a fresh computation from the committed runs."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from rlvr_dynamics.verdicts import robustness as rb

A = np.array([0.50, 0.52, 0.61, 0.40])          # unequal variances and sizes
B = np.array([0.60, 0.61, 0.605, 0.62, 0.598])


@pytest.mark.parametrize("test,equal_var", [(rb.pooled_t, True), (rb.welch_t, False)])
def test_t_intervals_agree_with_scipy(test, equal_var):
    diff, half, dof = test(A, B)
    ref = stats.ttest_ind(A, B, equal_var=equal_var)
    ci = ref.confidence_interval(0.95)
    assert diff == pytest.approx(A.mean() - B.mean())
    assert diff - half == pytest.approx(ci.low) and diff + half == pytest.approx(ci.high)
    assert dof == pytest.approx(ref.df)


def test_welch_differs_from_pooled_on_unequal_variances():
    assert rb.welch_t(A, B)[1] > rb.pooled_t(A, B)[1] * 1.2


def test_permutation_p_known_values():
    a, b = [3.0, 4.0, 5.0], [0.0, 1.0, 2.0]       # a's values are the 3 largest of 6: 1 split of 20
    assert rb.permutation_p(a, b, alternative="greater") == pytest.approx(1 / 20)
    assert rb.permutation_p(a, b) == pytest.approx(2 / 20)
    assert rb.permutation_p(a, b, alternative="less") == pytest.approx(1.0)
    assert rb.permutation_p(a, b, shift=10.0, alternative="less") == pytest.approx(1 / 20)  # b + 10 all above a
    ref = stats.permutation_test((a, b), lambda x, y: np.mean(x) - np.mean(y), permutation_type="independent",
                                 alternative="greater", n_resamples=math.inf)
    assert rb.permutation_p(a, b, alternative="greater") == pytest.approx(ref.pvalue)


@pytest.mark.parametrize("delta,half,verdict", [(0.0, 0.04, "PASS"), (-0.2, 0.1, "FAIL"), (-0.2, 0.2, "INCONCLUSIVE"),
                                                (0.0, math.nan, "INCONCLUSIVE")])
def test_equivalence_verdict(delta, half, verdict):
    assert rb.equivalence_verdict(delta, half, 0.05) == verdict


def _rows(g4, g16):
    return ([dict(G=4, seed=i, late=x, early=0.0) for i, x in enumerate(g4)]
            + [dict(G=16, seed=i, late=x, early=0.0) for i, x in enumerate(g16)])


def test_c5_welch_flips_when_one_cell_is_noisy():
    rows = _rows([0.42, 0.45, 0.48], [0.54, 0.541, 0.539])
    table = {r["alternative"]: r for r in rb.c5_alternatives(rows, 0.05)}
    assert table["page"]["verdict"] == "FAIL"
    assert table["welch"]["verdict"] == "INCONCLUSIVE"
    assert table["permutation"]["verdict"] == "INCONCLUSIVE"      # 3 + 3 runs: smallest one-sided p is 1/20
    assert rb.label(list(table.values())).startswith("fragile: INCONCLUSIVE under welch")


def test_c5_robust_when_clearly_equal():
    rows = _rows([0.700, 0.701, 0.699, 0.7005], [0.7002, 0.6998, 0.7001, 0.6999])
    table = rb.c5_alternatives(rows, 0.05, late_rows=rows)
    assert {r["verdict"] for r in table} - {"PASS"} <= {"INCONCLUSIVE"}
    assert table[0]["verdict"] == "PASS" and table[1]["verdict"] == "PASS"


def test_label():
    t = [dict(alternative="page", verdict="PASS"), dict(alternative="x", verdict=None),
         dict(alternative="y", verdict="PASS")]
    assert rb.label(t) == "robust"
    t.append(dict(alternative="z", verdict="FAIL"))
    assert rb.label(t) == "fragile: FAIL under z"


def test_ceiling_alternatives_use_each_formula():
    y = np.linspace(0, 1, 10)
    w = dict(y=y, sigma_binomial=0.1, sigma_difference=0.2, ceiling=0.0)
    var = np.var(y, ddof=1)
    assert rb._ceiling_rows([w], "binomial")[0]["ceiling"] == pytest.approx(1 - 0.01 / var)
    assert rb._ceiling_rows([w], "difference")[0]["ceiling"] == pytest.approx(1 - 0.04 / var)


def test_every_listed_alternative_has_a_result_and_the_results_are_current():
    import yaml
    listed = yaml.safe_load(rb.ALTERNATIVES.read_text())["claims"]
    committed = rb.load_results()
    assert set(committed) == set(listed)
    for cid, spec in listed.items():
        assert [r["alternative"] for r in committed[cid]["table"]] == ["page"] + [a["id"] for a in spec["alternatives"]]
    assert json.loads(json.dumps(rb.compute())) == committed, \
        "book/robustness_results.json is stale: python -m rlvr_dynamics.verdicts.robustness --write"


def _claim(rows, verdict):
    return dict(id="X-C1", verdict=verdict, kind="universal", evidence=rows)


RESULTS = {"X-C1": dict(setting="paper", row="r", table=[
    dict(alternative="page", verdict="FAIL", number=1.0, ci=None, note=""),
    dict(alternative="welch", verdict="INCONCLUSIVE", number=1.0, ci=None, note="")])}


def test_headline_text_fragile_only_when_the_headline_moves():
    from rlvr_dynamics.verdicts.headline import headline_text, robustness
    alone = _claim([dict(id="X-C1", setting="paper", verdict="FAIL")], "FAIL")
    assert headline_text(alone, RESULTS) == "FAIL (fragile: INCONCLUSIVE under welch)"
    backed = _claim([dict(id="X-C1", setting="paper", verdict="FAIL"),
                     dict(id="X-C1", setting="exact", verdict="FAIL")], "FAIL")   # another FAIL row still decides
    assert headline_text(backed, RESULTS) == "FAIL"
    assert robustness(backed, RESULTS)["table"][1]["headline"] == "FAIL"
    assert robustness(_claim([], "NOT TESTED"), {}) is None


def _claims_json(tmp_path, alternatives):
    row = dict(id="P2-C15", setting="exact", verdict="FAIL", measured=1.9, ci=None, unit="u",
               rule=dict(name="eta_q"), alternatives=alternatives)
    other = dict(id="P2-C15", setting="context", verdict="PASS", measured=0.1, ci=None, unit="u")
    (tmp_path / "nb.claims.json").write_text(json.dumps(dict(notebook="nb", claims=[other, row])))
    return dict(notebook="nb", setting="exact", alternatives=[dict(id="raw-eta")])


def test_notebook_alternatives_reads_the_rows_own_alternatives(tmp_path):
    spec = _claims_json(tmp_path, [dict(alternative="raw-eta", verdict="PARTIAL", number=0.8, ci=None, note="n")])
    table = rb.notebook_alternatives("P2-C15", spec, tmp_path)
    assert [(r["alternative"], r["verdict"], r["number"]) for r in table] == [("page", "FAIL", 1.9),
                                                                            ("raw-eta", "PARTIAL", 0.8)]
    assert rb.label(table) == "fragile: PARTIAL under raw-eta"
    with pytest.raises(ValueError, match="does not record the alternatives"):
        rb.notebook_alternatives("P2-C15", _claims_json(tmp_path, [dict(alternative="x", verdict="FAIL")]), tmp_path)



def test_audited_notebook_rows_carry_every_listed_alternative():
    """The alternatives a notebook computes (P1-C8's rows, P2-C15, ...) are stored in its rows: the stored rows hold each listed alternative,
    judged by a verdict word, and the page row of the table is the row the headline reads."""
    import yaml
    listed = yaml.safe_load(rb.ALTERNATIVES.read_text())["claims"]
    for cid, spec in listed.items():
        if "notebook" not in spec:
            continue
        table = rb.notebook_alternatives(cid.split("/")[0], spec)
        assert [r["alternative"] for r in table] == ["page"] + [a["id"] for a in spec["alternatives"]]
        assert all(r["verdict"] in ("PASS", "PARTIAL", "FAIL", "INCONCLUSIVE") for r in table)


PANEL_T = np.r_[np.arange(0, 21, 2), np.arange(25, 61, 5), np.arange(70, 151, 10)].astype(float)   # the 28 points


def _rise_rows(cells: dict, noise: float = 0.004, seeds: int = 3):
    """Panel-like rows of exponential rises from 0.1: ``cells`` G → (asymptote, time constant); plateau window
    t >= 100 as the page's; each row fitted by the three-phase law with bounds [0, 1] as panel_row fits it."""
    from rlvr_dynamics.p1 import laws
    rng = np.random.default_rng(0)
    rows = []
    for G, (r_inf, tau) in cells.items():
        for s in range(seeds):
            y = r_inf - (r_inf - 0.1) * np.exp(-PANEL_T / tau) + noise * rng.standard_normal(PANEL_T.size)
            rows.append(dict(G=G, seed=s, early=float(y[0]), late=float(y[PANEL_T >= 100].mean()),
                             fit=dict(three_phase=laws.fit_three_phase(PANEL_T, y, r_bounds=(0.0, 1.0)))))
    return rows


@pytest.mark.parametrize("cells,true_delta", [
    ({4: (0.6, 8.0), 16: (0.7, 60.0)}, (0.6 - 0.7) / 0.55),    # G=16 higher but still rising at step 150
    ({4: (0.65, 8.0), 16: (0.65, 60.0)}, 0.0),                 # same plateau, G=4 rises faster
])
def test_asymptote_alternative_recovers_the_true_shift_not_the_late_window_difference(cells, true_delta):
    rows = _rise_rows(cells)
    table = {r["alternative"]: r for r in rb.c5_alternatives(rows, 0.05)}
    page, asym = table["page"], table["asymptote"]
    assert asym["number"] == pytest.approx(true_delta, abs=0.02)
    assert abs(page["number"] - true_delta) > 0.07        # the late window mistakes the slower rise for a lower plateau
    assert asym["ci"][0] < true_delta < asym["ci"][1]
    assert "not identified" not in asym["note"]
    if true_delta == 0.0:
        assert asym["verdict"] == "PASS" and page["verdict"] != "PASS"
    else:
        assert asym["verdict"] == "FAIL"


def test_asymptote_not_identified_makes_the_alternative_inconclusive():
    from rlvr_dynamics.p1 import laws
    rows = _rise_rows({4: (0.6, 8.0), 16: (0.6, 8.0)})
    linear = 0.1 + 0.003 * PANEL_T                             # no bend in 150 steps: R_inf runs to the bound 1
    rows[-1]["fit"] = dict(three_phase=laws.fit_three_phase(PANEL_T, linear, r_bounds=(0.0, 1.0)))
    asym = rb.c5_alternatives(rows, 0.05)[-1]
    assert asym["alternative"] == "asymptote" and asym["verdict"] == "INCONCLUSIVE"
    assert "not identified: G=16 s2 (r_inf at a bound)" in asym["note"]
    assert rb.asymptote(rows[0]["fit"]["three_phase"])[2] is None


def test_check_alternative_carries_the_checks_verdict_number_and_reason():
    from rlvr_dynamics.verdicts.check import Check
    alt = rb.check_alternative("x", Check("FAIL", "why", [], 5.666, "largest dBIC", "dbic_worst", (1.0, 2.0)))
    assert alt == dict(alternative="x", verdict="FAIL", number=5.666, ci=[1.0, 2.0], note="largest dBIC 5.666: why")
    assert rb.check_alternative("y", Check("INCONCLUSIVE", "none"))["note"] == "none"


def test_c9_no_ceiling_margin_judges_the_runs_between_the_floors():
    """Two runs clear 0.94 with R^2 0.95; a third has ceiling 0.93 (judged only without the margin) and R^2 0.90."""
    v9 = dict(r2_min=0.91, ceiling_margin=0.03)
    rows = [dict(model="m", G=4, seed=s, y=np.linspace(0, 1, 10), sigma_binomial=0.0, sigma_difference=0.0,
                 ceiling=c, r2_tp=r2) for s, (c, r2) in enumerate([(0.96, 0.95), (0.97, 0.95), (0.93, 0.90)])]
    table = {r["alternative"]: r for r in rb.c9_alternatives(rows, v9)}
    assert table["page"]["verdict"] == "PASS" and table["page"]["number"] == pytest.approx(0.95)
    assert table["no-ceiling-margin"]["verdict"] == "PARTIAL"          # 2 of 3 judged runs reach 0.91
    assert table["no-ceiling-margin"]["number"] == pytest.approx(0.90)
    assert "3 of 3 runs reach the ceiling floor 0.91" in table["no-ceiling-margin"]["note"]


TWO_ROWS = {
    "X-C1": dict(setting="exact", row="e", table=[dict(alternative="page", verdict="PASS", number=1.0, ci=None, note=""),
                                                  dict(alternative="a", verdict="PARTIAL", number=1.0, ci=None, note="")]),
    "X-C1/testbed": dict(setting="testbed", notebook="nb2", row="t", table=[
        dict(alternative="page", verdict="INCONCLUSIVE", number=1.0, ci=None, note=""),
        dict(alternative="b", verdict="FAIL", number=1.0, ci=None, note="")]),
}


def test_robustness_reads_every_audited_row_and_names_each_headline_it_moves_to():
    from rlvr_dynamics.verdicts.headline import headline_text, robustness
    rows = [dict(id="X-C1", setting="exact", verdict="PASS", notebook="nb1"),
            dict(id="X-C1", setting="testbed", verdict="INCONCLUSIVE", notebook="nb3"),   # another page: not audited
            dict(id="X-C1", setting="testbed", verdict="INCONCLUSIVE", notebook="nb2")]
    claim = _claim(rows, "PASS")
    rob = robustness(claim, TWO_ROWS)
    assert [p["key"] for p in rob["rows"]] == ["X-C1", "X-C1/testbed"]
    assert [a["headline"] for a in rob["rows"][1]["table"]] == ["PASS", "FAIL"]
    assert rob["label"] == "fragile: PARTIAL under a; FAIL under b"
    assert headline_text(claim, TWO_ROWS) == "PASS (fragile: PARTIAL under a; FAIL under b)"
    # the notebook names the audited row: the INCONCLUSIVE testbed row of nb3 alone does not match
    assert robustness(_claim(rows[:2], "PASS"), TWO_ROWS)["label"].startswith("not matched: no testbed row")


def test_a_fragile_row_under_a_robust_headline_says_which_row_holds_the_headline():
    from rlvr_dynamics.verdicts.headline import robustness, row_fragility
    backed = _claim([dict(id="X-C1", setting="paper", verdict="FAIL"),
                     dict(id="X-C1", setting="exact", verdict="FAIL")], "FAIL")
    rob = robustness(backed, RESULTS)
    assert rob["label"] == "robust" and rob["held_by"] == ["exact"]
    assert row_fragility(rob) == ("the paper row is fragile (INCONCLUSIVE under welch); the headline is held by the "
                                  "exact row")
    alone = _claim([dict(id="X-C1", setting="paper", verdict="FAIL")], "FAIL")
    assert row_fragility(robustness(alone, RESULTS)) == "" and row_fragility(None) == ""


def test_holding_row_is_the_robust_row_that_holds_the_headline():
    from rlvr_dynamics.verdicts.headline import holding_row
    paper = dict(id="X-C1", setting="paper", verdict="FAIL", measured=-0.24)
    exact = dict(id="X-C1", setting="exact", verdict="FAIL", measured=-0.25)
    backed = dict(id="X-C1", verdict="FAIL", kind="universal", evidence=[paper, exact], decider=paper)
    assert holding_row(backed, RESULTS) is exact                      # the paper row is fragile, the exact row holds
    alone = dict(id="X-C1", verdict="FAIL", kind="universal", evidence=[paper], decider=paper)
    assert holding_row(alone, RESULTS) is paper                       # a fragile headline: its own decider
    other = dict(id="X-C9", verdict="FAIL", kind="universal", evidence=[paper], decider=paper)
    assert holding_row(other, RESULTS) is paper                       # not audited
    assert holding_row(dict(id="X-C1", verdict="NOT TESTED", evidence=[], decider=None), RESULTS) is None
