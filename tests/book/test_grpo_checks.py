"""The GRPO notebooks' verdict rules (rlvr_dynamics.verdicts.grpo_p1, grpo_p2) on synthetic inputs whose
answers are known in closed form, and the link between each decisive verdict and its rule in book/claims.yml."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts import grpo_p1 as g1, grpo_rows
from rlvr_dynamics.verdicts import grpo_p2 as g2


def values(cid):
    return claims.criterion(cid)["criterion"]["values"]


def agrees(check, cid):
    """PASS iff the row's rule holds on its measured statistic (the book's consistency rule for decisive rows)."""
    kw = check.claim_kwargs(cid)
    if check.verdict in ("PASS", "PARTIAL", "FAIL"):
        assert kw["rule"] is not None
        assert claims.rule_holds(kw["rule"], kw["measured"], kw["ci"]) is (check.verdict == "PASS")
    claims.Claim(cid, "synthetic", setting="testbed", **kw)          # a valid row


def row(**kw):
    base = dict(model="tiny-m4", G=4, seed=1, ceiling=0.95, t=np.arange(50), d_bic=-20.0, d_aic=-25.0,
                slow_start=0.01, first_step_full=False, optimizer="sgd", r2_tp=0.95, detectable=True,
                detect_frac=0.05, d_bic_osc=20.0, osc_regime="overdamped", overshoot_se=1.0)
    return {**base, **kw}


def test_first_step_full_size():
    assert grpo_rows.first_step_full_size("adamw") is True
    assert grpo_rows.first_step_full_size("adamw", "constant_with_warmup") is False
    assert grpo_rows.first_step_full_size("sgd") is False


def test_binding_picks_the_smallest_signed_relative_margin():
    # margins: (-10 - (-12))/10 = +0.2 ; (0.05 - 0.04)/0.05 = +0.2 -> tie broken by order; then a violated one wins
    parts = [("a", -12.0, -10.0, "<", "u"), ("b", 0.04, 0.05, "<=", "v"), ("c", 2.0, 3.0, ">=", "w")]
    assert g1.binding(parts) == ("c", 2.0, "w")                  # (2 - 3)/3 = -1/3
    assert g1.binding(parts[:2])[0] == "a"


def test_c8_adam_runs_are_inconclusive_with_their_slow_start():
    v8 = values("P1-C8")
    rows = [row(first_step_full=True, optimizer="adamw", slow_start=s, d_bic=b) for s, b in ((1.0, 5.7), (0.11, -44.9))]
    c = g1.c8_verdict(rows, v8)
    assert c.verdict == "INCONCLUSIVE" and c.measured == 1.0 and c.rule is None
    assert "1 of 2 runs" in c.reason and "full-size first step" in c.reason
    agrees(c, "P1-C8")


def c8_rows(d_bics, slows, d_aics, **kw):
    return [row(run=f"r{k}", d_bic=b, slow_start=s, d_aic=a, slow_start_bound=0.3, slow_start_rho=0.09, **kw)
            for k, (b, s, a) in enumerate(zip(d_bics, slows, d_aics))]


def powers(rows, p=0.95):
    return {w["run"]: dict(power=p, dbic_pass=p, slow_pass=1.0, false_pass=0.0, n_sim=200) for w in rows}


@pytest.mark.parametrize("d_bics, slows, d_aics, verdict, rule, measured", [
    ((-20.0, -15.0), (0.03, 0.06), (-25, -20), "PASS", "dbic_worst", -15.0),   # margins 0.5 (dBIC) vs 0.8
    ((-20.0, 5.7), (0.03, 0.06), (-25, 2.0), "PARTIAL", "dbic_worst", 5.7),
    ((-20.0, 5.7, 5.7), (0.03, 0.6, 0.6), (-25, 2.0, 2.0), "FAIL", "dbic_worst", 5.7),   # -1.57 vs -1.0
    ((-20.0, -15.0, -15.0), (0.03, 0.6, 0.6), (-25, -20, -20), "PARTIAL", "slow_start_theory", 2.0),
])
def test_c8_decides_on_the_worst_run_against_the_theory_bound(d_bics, slows, d_aics, verdict, rule, measured):
    rows = c8_rows(d_bics, slows, d_aics)
    c = g1.c8_verdict(rows, values("P1-C8"), powers(rows, 0.99))
    assert (c.verdict, c.rule) == (verdict, rule) and c.measured == pytest.approx(measured)
    agrees(c, "P1-C8")


def test_c8_low_power_is_inconclusive_and_collapsed_runs_are_excluded():
    rows = c8_rows((5.0, -7.9), (0.19, 0.09), (1.0, -11.0))
    c = g1.c8_verdict(rows, values("P1-C8"), powers(rows, 0.6))
    assert c.verdict == "INCONCLUSIVE" and c.rule == "power" and c.measured == pytest.approx(0.36)
    assert "could not show the law" in c.reason
    agrees(c, "P1-C8")
    assert g1.c8_verdict(rows, values("P1-C8")).verdict == "INCONCLUSIVE"        # power not measured
    rows[0]["collapsed_mid_run"] = True
    c = g1.c8_verdict(rows, values("P1-C8"), powers(rows, 0.99))
    assert [w["run"] for w in c.in_scope] == ["r1"] and "collapsed mid-run" in c.reason


def test_theory_bound_and_collapse_rule():
    from rlvr_dynamics.verdicts import grpo_p1_slow_start as ss
    b = ss.theory_slow_start_bound(300, 20.0, 10.0, 0.9)        # mean rise time 30 kept, fast time 10
    assert (b["t_slow"], b["t_fast"]) == (pytest.approx(20.0), pytest.approx(10.0))
    assert 0.05 < b["rho"] < 0.2 and b["bound"] == pytest.approx(math.sqrt(b["rho"]))
    y = np.r_[np.linspace(0.2, 0.8, 50), np.full(50, 0.8), np.full(50, 0.3)]
    assert ss.collapsed_mid_run(y, 10) and not ss.collapsed_mid_run(y[:100], 10)


def test_c8_below_the_noise_ceiling():
    c = g1.c8_verdict([row(ceiling=0.2552, first_step_full=True, optimizer="adamw")], values("P1-C8"))
    assert c.verdict == "INCONCLUSIVE" and c.measured == 0.2552 and "max 0.255" in c.reason and "adamw" in c.reason


@pytest.mark.parametrize("r2s, ceilings, verdict, measured", [
    ((0.95, 0.92), (0.97, 0.95), "PASS", 0.92),
    ((0.95, 0.90), (0.97, 0.95), "PARTIAL", 0.90),           # half of the in-scope runs reach 0.91
    ((0.80, 0.90, 0.85), (0.97, 0.95, 0.95), "FAIL", 0.80),  # 0/3, and R^2/ceiling 0.825 < 0.91
    ((0.93, 0.90, 0.90), (0.97, 0.96, 0.96), "PARTIAL", 0.90),  # 1/3 but every R^2/ceiling >= 0.9375
])
def test_c9(r2s, ceilings, verdict, measured):
    c = g1.c9_verdict([row(r2_tp=r, ceiling=k) for r, k in zip(r2s, ceilings)], values("P1-C9"))
    assert (c.verdict, c.measured, c.rule) == (verdict, measured, "r2_worst")
    agrees(c, "P1-C9")


def test_c9_inconclusive_below_the_floor():
    c = g1.c9_verdict([row(ceiling=0.3, r2_tp=0.2)], values("P1-C9"))
    assert c.verdict == "INCONCLUSIVE" and c.measured == 0.3


UNIFORM_NULL = np.arange(10_000) / 10_000 * 4.0       # noise-alone maxima uniform on [0, 4): quantile q is 4q


@pytest.mark.parametrize("overs, dbics, regimes, verdict, rule, measured", [
    # m = 2 runs: envelope = 4 * (1 - 0.025) = 3.9; ratios 0.26, 0.51 (margin 0.49) vs dBIC margin 0.21
    ((1.0, 2.0), (20.0, -7.9), ("overdamped", "underdamped"), "PASS", "dbic_osc_worst", -7.9),
    # an overshoot above its envelope, overdamped law preferred: one part broken, no signature
    ((4.5, 1.0), (40.0, 7.1), ("overdamped", "overdamped"), "PARTIAL", "overshoot_envelope_worst", 4.5 / 3.9),
    # the oscillatory law wins by BIC but no overshoot above the envelope (m = 1: envelope 3.8)
    ((1.0,), (-12.0,), ("underdamped",), "PARTIAL", "dbic_osc_worst", -12.0),
    # the full signature: dBIC < -10, zeta < 1 and an overshoot above the envelope
    ((5.0,), (-12.0,), ("underdamped",), "FAIL", "overshoot_envelope_worst", 5.0 / 3.8),
])
def test_c12_rule_with_the_noise_envelope(overs, dbics, regimes, verdict, rule, measured):
    rows = [row(overshoot_ac=o, d_bic_osc=b, osc_regime=g, overshoot_null=UNIFORM_NULL, resid_phi=0.3)
            for o, b, g in zip(overs, dbics, regimes)]
    c = g1.c12_verdict(rows, values("P1-C12"))
    assert (c.verdict, c.rule) == (verdict, rule)
    assert c.measured == pytest.approx(measured, rel=1e-3)
    agrees(c, "P1-C12")


def test_ar1_mean_se_and_the_null_envelope():
    assert grpo_rows.ar1_mean_se(2.0, 0.0, 4) == pytest.approx(1.0)
    assert grpo_rows.ar1_mean_se(1.0, 0.5, 2) == pytest.approx(math.sqrt(1.5 / 2))     # (1 + 2 * (1/2) * phi) / 2
    null = grpo_rows.overshoot_null(np.ones(50), seed=1, n_sim=500)
    assert null.shape == (500,) and np.all(null >= 0)          # a mean-zero series has a non-negative maximum
    np.testing.assert_array_equal(null, grpo_rows.overshoot_null(np.ones(50), seed=1, n_sim=500))
    # autocorrelation widens nothing in SE units by itself, but smoothing + AR(1) must still give finite maxima
    assert np.isfinite(grpo_rows.overshoot_null(np.ones(200), phi=0.6, window=25, start=25, n_sim=200)).all()
    with pytest.raises(ValueError, match="phi"):
        grpo_rows.overshoot_null(np.ones(50), phi=1.0)


def test_c12_inconclusive_when_no_overshoot_is_detectable():
    c = g1.c12_verdict([row(detectable=False, detect_frac=0.5), row(detectable=False, detect_frac=0.7)],
                       values("P1-C12"))
    assert c.verdict == "INCONCLUSIVE" and c.measured == 0.5


def bins(*cis):
    return [dict(lo=0.1 * i, hi=0.1 * (i + 1), diff=(a + b) / 2, ci=(a, b)) for i, (a, b) in enumerate(cis)]


@pytest.mark.parametrize("cis, verdict, measured", [
    (((0.01, 0.02), (0.001, 0.003), (-0.01, 0.01)), "PASS", 2),       # two above 0 (|diff| < 0.01 passes as first
                                                                      # registered)
    (((-0.005, 0.005), (-0.008, 0.009), (-0.002, 0.01)), "FAIL", 0),  # none excludes 0, half-widths <= 0.01
    (((-0.0245, 0.0008), (-0.0143, 0.0065), (0.0090, 0.0174)), "INCONCLUSIVE", 1),
    (((0.01, 0.02), (-0.02, -0.01)), "INCONCLUSIVE", 1),                # < min_bins 3
])
def test_c15_rule_as_first_registered(cis, verdict, measured):
    c = g1.c15_verdict(bins(*cis), values("P1-C15"))
    assert (c.verdict, c.measured, c.rule) == (verdict, measured, "first_registered_pass")
    agrees(c, "P1-C15")


def test_c15_later_version_is_reported_not_deciding():
    c = g1.c15_verdict(bins((0.001, 0.003), (0.002, 0.004), (-0.01, 0.01)), values("P1-C15"))
    # later version: no |diff| >= 0.01, and every CI inside +-0.01
    assert c.verdict == "PASS" and "later version (written after a result, not deciding): FAIL" in c.reason


def tables(before, after4, after16):
    return {G: {f: {"before": b, "after": a, "delta": a - b} for f, b, a in zip(before, before, aft)}
            for G, aft in ((4, after4), (16, after16))}


def test_c14_headroom_is_strictly_between_0_and_1_and_the_half_width_closed_form():
    fams = ["f0", "f1", "f2", "f3", "f4", "f5"]
    before = {"f0": 0.5, "f1": 0.005, "f2": 0.01, "f3": 0.0, "f4": 1.0, "f5": 0.003}
    t = {G: {f: {"before": before[f], "after": before[f], "delta": 0.0} for f in fams} for G in (4, 16)}
    c, n = g1.c14_verdict(t, fams, 64, {4: 6, 16: 6}, values("P1-C14"), rng=np.random.default_rng(0),
                          n_permutations=200)
    assert n["headroom"] == ["f0", "f1", "f2", "f5"] and n["zero"] == ["f3"]
    # p = 0.5, n = 64, 6 runs per G: h = 1.96 * sqrt(2 * 0.25 / 64) * sqrt(1/6 + 1/6)
    assert n["half"][0] == pytest.approx(1.96 * math.sqrt(0.5 / 64) * math.sqrt(1 / 3))
    assert c.verdict == "INCONCLUSIVE" and c.rule == "halfwidth" and c.measured == pytest.approx(0.10003, abs=1e-4)


def test_c14_too_few_families_and_a_decisive_case():
    fams = ["f0", "f1", "f2", "f3", "f4"]
    t = {G: {f: {"before": 0.0, "after": 0.0, "delta": 0.0} for f in fams} for G in (4, 16)}
    t[4]["f0"] = t[16]["f0"] = {"before": 0.3, "after": 0.9, "delta": 0.6}
    c, _ = g1.c14_verdict(t, fams, 64, {4: 3, 16: 3}, values("P1-C14"), rng=np.random.default_rng(0))
    assert c.verdict == "INCONCLUSIVE" and c.measured == 1 and c.rule == "families"
    # narrow CIs (many problems), equal gains falling from near to far: (a) and (b) met, (c) untestable -> PARTIAL
    gains = [0.4, 0.3, 0.2, 0.1, 0.05]
    t = {G: {f: {"before": 0.01, "after": 0.01 + g, "delta": g} for f, g in zip(fams, gains)} for G in (4, 16)}
    c, n = g1.c14_verdict(t, fams, 100_000, {4: 6, 16: 6}, values("P1-C14"), rng=np.random.default_rng(0),
                          n_permutations=2000)
    assert n["rho"] == pytest.approx(-1.0) and n["p"] < 0.05 and c.verdict == "PARTIAL"


def test_bound_agreement_closed_form():
    acc = np.array([0.5, 0.6, 0.7, 0.8])
    bound = np.array([0.5, 0.7, 0.7, 0.9])
    se = np.full(4, 0.01)
    b = g2.bound_agreement([(acc, bound, se)], block=4, n_boot=50)
    assert b["frac"] == 0.5                        # 0.5 >= 0.48 and 0.7 >= 0.68; 0.6 < 0.68, 0.8 < 0.88
    assert b["median"] == pytest.approx(0.05)      # distances 0, 0.1, 0, 0.1
    assert b["frac_ci"][0] <= b["frac"] <= b["frac_ci"][1]


def test_cumulative_alignment_se_closed_form():
    every, eta = 5, 0.1
    dmu = np.full(20, np.nan)
    dmu[::every] = [1.0, 3.0, 1.0, 3.0]            # consecutive differences +2, -2, +2
    se, rng = g2.cumulative_alignment_se(dmu, np.full(20, eta), every)
    d = np.diff([1.0, 3.0, 1.0, 3.0])
    sigma = np.std(d, ddof=1) / math.sqrt(2)
    assert se == pytest.approx(sigma * math.sqrt(4 * (every * eta) ** 2))
    assert rng == pytest.approx(eta * every * (1 + 3 + 1 + 3))


VIOLATED = dict(n=60, g_low=10.0, fd_upper=0.8, ratio=12.6, violated=True)
NOT_SHOWN = dict(n=60, g_low=1.0, fd_upper=0.8, ratio=0.5, violated=False)


def c14(rho, frac, frac_ci, median=0.06, median_ci=(0.05, 0.07), *, cond=(NOT_SHOWN,), se=(1.0, 10.0), bias=True):
    b = dict(frac=frac, frac_ci=frac_ci, median=median, median_ci=median_ci)
    judged = any(not c["violated"] for c in cond)
    return g2.c14_verdict(rho, b if judged else None, values("P2-C14"), bias_ok=bias, m_se=[se],
                          step_condition=list(cond))


@pytest.mark.parametrize("args, verdict, rule", [
    (((0.8, 0.6, 0.9), 0.95, (0.93, 0.97)), "PASS", "rho"),
    (((0.8, 0.6, 0.9), 0.02, (0.01, 0.03)), "PARTIAL", "frac_above"),
    (((0.5, 0.3, 0.6), 0.95, (0.93, 0.97)), "PARTIAL", "rho"),
    (((0.75, 0.45, 0.9), 0.95, (0.93, 0.97)), "PARTIAL", "rho_ci_low"),
    (((0.5, 0.3, 0.6), 0.02, (0.01, 0.03)), "FAIL", "rho"),
    (((0.582, 0.408, 0.711), 0.022, (0.012, 0.033)), "INCONCLUSIVE", "fail_rho_excluded"),  # (a) not excluded
])
def test_c14_with_b_judged(args, verdict, rule):
    c = c14(*args)
    assert (c.verdict, c.rule) == (verdict, rule)
    agrees(c, "P2-C14")


@pytest.mark.parametrize("rho, verdict, rule", [
    ((0.8, 0.6, 0.9), "PARTIAL", "b_judged"),              # (a) met, (b) outside the hypotheses: not judged
    ((0.5, 0.3, 0.6), "FAIL", "rho"),                      # (a) excluded: FAIL on (a) alone
    ((0.582, 0.408, 0.711), "INCONCLUSIVE", "fail_rho_excluded"),
])
def test_c14_b_outside_the_hypotheses_when_the_step_condition_is_shown_violated(rho, verdict, rule):
    c = c14(rho, 0.95, (0.93, 0.97), cond=(VIOLATED, VIOLATED))
    assert (c.verdict, c.rule) == (verdict, rule)
    assert "outside the theorem's hypotheses" in c.reason and "2 of 2 runs" in c.reason
    agrees(c, "P2-C14")


def test_c14_inconclusive_if_is_checked_with_numbers():
    c = c14((0.5, 0.3, 0.6), 0.02, (0.01, 0.03), se=(11.0, 10.0))
    assert c.verdict == "INCONCLUSIVE" and "as written otherwise: FAIL" in c.reason
    assert c14((0.5, 0.3, 0.6), 0.02, (0.01, 0.03), bias=False).verdict == "INCONCLUSIVE"


def test_step_condition_check_closed_form():
    # noise-free (sigma = 0): FD_k = eta*dmu = 0.4 at every step, u = 0.1 -> G_low = 0.4/(2*0.1) = 2,
    # ratio = 8 * 2^2 * 0.01 / 0.4 = 0.8; for a constant FD the test reduces to FD <= 4/c = 0.5 whatever u is
    n = 10
    s = g2.step_condition_check(np.full(n, 400.0), np.full(n, 1e-3), np.full(n, 0.1))
    assert s["g_low"] == pytest.approx(2.0) and s["fd_upper"] == pytest.approx(0.4)
    assert s["ratio"] == pytest.approx(0.8) and not s["violated"]
    s = g2.step_condition_check(np.full(n, 800.0), np.full(n, 1e-3), np.full(n, 0.1))   # FD 0.8 > 0.5
    assert s["ratio"] == pytest.approx(8 * 4.0 ** 2 * 0.01 / 0.8) and s["violated"]
    s = g2.step_condition_check(np.full(n, 800.0), np.full(n, 1e-3), np.full(n, 0.1), c_factor=4.0)
    assert not s["violated"]                                   # FD <= 4/c = 1 with the weaker constant
    with pytest.raises(ValueError, match="shape"):
        g2.step_condition_check(np.ones(3), np.ones(4), np.ones(3))


def stall(J, ci, seeds=5, horizon=True):
    return dict(J_star=J, ci=ci, seeds=seeds, horizon_ok=horizon)


def test_c10():
    v10 = values("P2-C10")
    flat = (-1e-3, 1e-3)
    rows = {("fixed", 3e-4): stall(0.99, flat), ("fixed", 1e-3): stall(0.95, flat), ("fixed", 2e-3): stall(0.7, flat),
            ("decay", 1e-3): stall(0.996, (-1e-2, -1e-3))}
    c = g2.c10_verdict(rows, v10)
    assert c.verdict == "PASS" and c.rule == "plateaus"         # margin 0, tied with monotone
    agrees(c, "P2-C10")
    rows[("fixed", 3e-4)] = stall(0.971, (-1.2e-2, -3e-3))       # still falling: 2 plateaus; decay 0.066/0.0157
    rows[("fixed", 1e-3)] = stall(1 - 0.066, flat)
    rows[("decay", 1e-3)] = stall(1 - 0.0157, flat)
    c = g2.c10_verdict(rows, v10)
    assert c.verdict == "PARTIAL" and c.rule == "decay" and c.measured == pytest.approx(0.066 / 0.0157)
    agrees(c, "P2-C10")
    falling = {k: stall(w["J_star"], (-2e-2, -1e-2)) for k, w in rows.items()}
    c = g2.c10_verdict(falling, v10)
    assert c.verdict == "FAIL"
    agrees(c, "P2-C10")
    assert g2.c10_verdict({k: {**w, "seeds": 3} for k, w in rows.items()}, v10).verdict == "INCONCLUSIVE"


def slope(mean, lo, hi, n=5):
    from rlvr_dynamics.p2.step_size import SlopeEstimate
    return SlopeEstimate(mean, (lo, hi), np.full(n, mean), 0)


@pytest.mark.parametrize("fit, verdict", [
    (slope(-1.0, -1.1, -0.9), "PASS"), (slope(-0.5, -0.6, -0.4), "PARTIAL"), (slope(0.24, 0.17, 0.30), "FAIL"),
    (slope(0.05, -0.004, 0.11), "FAIL"),
])
def test_c7(fit, verdict):
    c = g2.c7_verdict(fit, values("P2-C7"), design_ok=True, design="synthetic")
    assert (c.verdict, c.rule, c.ci) == (verdict, "slope", fit.ci)
    agrees(c, "P2-C7")
    assert g2.c7_verdict(slope(-1.0, -1.1, -0.9, n=2), values("P2-C7"), design_ok=True, design="").verdict == "INCONCLUSIVE"
    assert g2.c7_verdict(fit, values("P2-C7"), design_ok=False, design="").verdict == "INCONCLUSIVE"


@pytest.mark.parametrize("fit, frac, verdict, rule", [
    (slope(0.0, -0.1, 0.1), 0.8, "PASS", "flat"),
    (slope(0.0, -0.1, 0.1), 0.2, "PARTIAL", "collapse"),
    (slope(0.05, -0.004, 0.11), None, "PARTIAL", "collapse"),        # (b) not run: measured NaN, never holds
    (slope(1.15, 1.09, 1.22), 0.8, "PARTIAL", "flat"),
    (slope(1.15, 1.09, 1.22), 0.2, "FAIL", "flat"),
])
def test_c9(fit, frac, verdict, rule):
    c = g2.c9_verdict(fit, frac, values("P2-C9"), design_ok=True, desc_b="synthetic", design="synthetic")
    assert (c.verdict, c.rule) == (verdict, rule)
    agrees(c, "P2-C9")


def test_slow_start_power_noise_free_limit():
    # with (almost) no noise the theory's curves pass both parts and a single exponential fails the dBIC part
    from rlvr_dynamics.verdicts import grpo_p1_slow_start as ss
    b = ss.theory_slow_start_bound(120, 20.0, 10.0, 0.9)
    p = ss.slow_start_power(120, dict(r0=0.2, r_inf=0.8, t_slow=b["t_slow"], t_fast=b["t_fast"]),
                            dict(r0=0.2, r_inf=0.8, timescale=30.0), sigma=1e-4, phi=0.3, bound=b["bound"],
                            dbic=-10.0, n_sim=2, seed=0)
    assert p["power"] == 1.0 and p["false_pass"] == 0.0 and p["n_sim"] == 2
