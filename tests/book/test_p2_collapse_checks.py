"""P2-C15's statistics and verdict (rlvr_dynamics.verdicts.p2_collapse) against closed forms."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rlvr_dynamics.book import claims
from rlvr_dynamics.verdicts import p2_collapse as pc


def values():
    return claims.criterion("P2-C15")["criterion"]["values"]


def indicators(fracs, n=20):
    """[seed, eta] indicators whose column means are ``fracs`` (multiples of 1/n)."""
    return np.array([[s < round(f * n) for f in fracs] for s in range(n)])


def test_collapse_step_interpolates_log_linearly():
    grid = [1.0, 10.0, 100.0]
    assert pc.collapse_step(grid, indicators([0.0, 0.05, 0.15]), 0.1) == pytest.approx(10 ** 1.5)
    assert pc.collapse_step(grid, indicators([0.2, 0.3, 0.3]), 0.1) == 1.0
    assert pc.collapse_step(grid, indicators([0.0, 0.0, 0.05]), 0.1) == math.inf
    with pytest.raises(ValueError, match="increasing"):
        pc.collapse_step([10.0, 1.0, 100.0], indicators([0, 0, 0]), 0.1)


def test_ratios_and_powers():
    grid = [1.0, 10.0, 100.0]
    c = {"reinforce": indicators([0.0, 0.05, 0.15]), "grpo": indicators([0.05, 0.15, 0.2])}
    r = pc.collapse_step_ratios(grid, c, 0.1, n_boot=200)
    assert r["eta_q"]["grpo"] == pytest.approx(10 ** 0.5)
    assert r["ratio"]["reinforce"][0] == pytest.approx(0.1)
    assert pc.lowering_power(math.log(2) / (1.959963984540054 + 1.2815515655446004)) == pytest.approx(0.9, abs=1e-6)
    assert pc.lowering_power(math.inf) == 0.0
    assert pc.fisher_power(100_000, 100_000, 0.01, 2.0, n_sim=200) == 1.0          # 2000 vs 1000 events
    assert pc.fisher_power(1000, 1000, 1e-4, 2.0, n_sim=200) < 0.1                  # 0.2 vs 0.1 expected events


def verdict(ratios, p, odds, n_seeds=120):
    a = dict(eta_q={"reinforce": 10.0, "dr_grpo": 10.0, "grpo": 10.0}, ratio=dict(zip(("reinforce", "dr_grpo"), ratios)),
             power=0.9)
    b = dict(p=dict(zip(("reinforce", "dr_grpo"), p)), odds=dict(zip(("reinforce", "dr_grpo"), odds)),
             power={"reinforce": 1.0, "dr_grpo": 0.9}, counts={"reinforce": (1, 10), "dr_grpo": (1, 10)})
    return pc.c15_verdict(a, b, values(), n_seeds=n_seeds)


@pytest.mark.parametrize("ratios, p, odds, v, rule", [
    (((0.4, 0.3, 0.6, 0.1), (0.5, 0.4, 0.8, 0.1)), (0.001, 0.01), ((3, 2.1, 4), (3, 2.2, 4)), "PASS", "eta_q"),
    (((0.4, 0.3, 0.6, 0.1), (0.5, 0.4, 0.8, 0.1)), (0.001, 0.3), ((3, 2.1, 4), (1, 0.6, 2.5)), "PARTIAL", "overshoot"),
    (((1.0, 0.7, 1.3, 0.1), (1.0, 0.8, 1.2, 0.1)), (0.001, 0.01), ((3, 2.1, 4), (3, 2.1, 4)), "PARTIAL", "eta_q"),
    (((1.0, 0.7, 1.3, 0.1), (1.0, 0.4, 2.0, 0.3)), (1.0, 0.2), ((0.1, 0.07, 0.2), (1.5, 0.7, 3.4)), "FAIL", "eta_q"),
    (((1.0, 0.4, 2.0, 0.3), (1.0, 0.4, 2.0, 0.3)), (0.3, 0.2), ((1.5, 0.7, 3.4), (1.5, 0.7, 3.4)), "INCONCLUSIVE",
     "fail_eta_q_excluded"),
])
def test_c15_verdict(ratios, p, odds, v, rule):
    c = verdict(ratios, p, odds)
    assert (c.verdict, c.rule) == (v, rule)
    kw = c.claim_kwargs("P2-C15")
    if v in ("PASS", "PARTIAL", "FAIL"):
        assert claims.rule_holds(kw["rule"], kw["measured"], kw["ci"]) is (v == "PASS")
    claims.Claim("P2-C15", "synthetic", setting="exact", **kw)


def test_c15_inconclusive_when_a_level_is_never_reached():
    a = dict(eta_q={"reinforce": math.inf, "dr_grpo": 10.0, "grpo": 10.0},
             ratio={"reinforce": (math.nan, 0.0, 0.0, math.inf), "dr_grpo": (1.0, 0.5, 2.0, 0.3)}, power=0.0)
    b = dict(p={"reinforce": 1.0, "dr_grpo": 0.2}, odds={"reinforce": (0.1, 0.07, 0.2), "dr_grpo": (1.5, 0.7, 3.4)},
             power={"reinforce": 1.0, "dr_grpo": 0.9}, counts={"reinforce": (1, 10), "dr_grpo": (1, 10)})
    c = pc.c15_verdict(a, b, values(), n_seeds=120)
    assert c.verdict == "INCONCLUSIVE" and "reinforce never reaches 10% collapse" in c.reason


def test_update_size_is_the_per_seed_mean_over_step_sizes():
    w = np.array([[1.0, 2.0, 4.0], [3.0, 2.0, 0.0]])            # [eta, seed]
    assert pc.update_size(w) == pytest.approx([2.0, 2.0, 2.0])
    assert pc.update_size([1.0, 5.0]) == pytest.approx([1.0, 5.0])
    with pytest.raises(ValueError, match="direction_norm"):
        pc.update_size([[1.0, np.nan]])


def test_step_length_units_scale_eta_q_by_the_update_size():
    """In step-length units (P2-C15 as amended 2026-12-04) a GRPO whose raw eta_q is 1/k of the other's, with an
    update k times larger, has the same step length: the ratio is exactly 1 in the point estimate and in every
    resample (the scale is resampled with the seeds). Without ``scale`` the raw ratio is unchanged."""
    grid = [1.0, 10.0, 100.0]
    # every resample reaches the level for both (no infinite eta_q), so the bootstrap quantiles scale exactly
    c = {"reinforce": indicators([0.0, 0.6, 1.0]), "grpo": indicators([0.6, 1.0, 1.0])}
    raw = pc.collapse_step_ratios(grid, c, 0.1, n_boot=200)
    k = 10 ** (1 / 6)                       # closed form: grpo's eta_q is grid[0], reinforce's 10^(0.1/0.6) = k
    assert raw["eta_q"]["grpo"] == 1.0 and raw["eta_q"]["reinforce"] == pytest.approx(k)
    scale = {"reinforce": np.full(20, 0.3), "grpo": np.full(20, 0.3 * k)}
    r = pc.collapse_step_ratios(grid, c, 0.1, scale=scale, n_boot=200)
    assert r["eta_q"]["grpo"] == pytest.approx(raw["eta_q"]["grpo"] * 0.3 * k)
    assert r["ratio"]["reinforce"][0] == pytest.approx(raw["ratio"]["reinforce"][0] * k) == pytest.approx(1.0)
    assert r["ratio"]["reinforce"][1] == pytest.approx(raw["ratio"]["reinforce"][1] * k)
    assert r["ratio"]["reinforce"][2] == pytest.approx(raw["ratio"]["reinforce"][2] * k)
    ones = pc.collapse_step_ratios(grid, c, 0.1, scale={a: np.ones(20) for a in c}, n_boot=200)
    assert ones["ratio"] == raw["ratio"]
    with pytest.raises(ValueError, match="one update size per seed"):
        pc.collapse_step_ratios(grid, c, 0.1, scale={"grpo": np.ones(20)})


def test_stored_p2_c15_row_reads_step_lengths_and_records_raw_eta():
    """The stored notebook's P2-C15 row is judged in step-length units and carries the raw-eta verdict as its
    robustness alternative, with the raw ratios below the step-length ones by GRPO's larger update."""
    import json
    import re
    from rlvr_dynamics.paths import STORED_CLAIMS_DIR

    row = next(r for r in json.loads((STORED_CLAIMS_DIR / "p2_length_scaling.claims.json").read_text())["claims"]
               if r["id"] == "P2-C15")
    assert "step length eta ||w_0|| at 10% collapse" in row["reason"]
    (alt,) = row["alternatives"]
    assert alt["alternative"] == "raw-eta" and alt["verdict"] in ("PASS", "PARTIAL", "FAIL", "INCONCLUSIVE")
    step = [float(x) for x in re.findall(r"GRPO / reinforce ([\d.]+) .*?dr_grpo ([\d.]+) ", row["reason"])[0]]
    raw = [float(x) for x in re.findall(r"GRPO / reinforce ([\d.]+) .*?dr_grpo ([\d.]+) ", alt["note"] + " ")[0]]
    assert all(s > r for s, r in zip(step, raw))
