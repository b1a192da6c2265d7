"""The equal-compute attribution of P1-C5's SmolLM2 shift (rlvr_dynamics.verdicts.equal_compute): the rule of
book/robustness.yml on synthetic arms whose truth is known, and Welch's interval against scipy."""
import math

import numpy as np
import pytest
from scipy import stats

from rlvr_dynamics.verdicts.equal_compute import attribute_shift


def _arm(plateaus, start=0.2):
    return [dict(late=p, early=start) for p in plateaus]


# the page's cells: A (G=4, 4 prompts) 0.45, B (G=16, 4 prompts) 0.55, a rise of 0.30 from 0.2
A, B = _arm([0.44, 0.45, 0.46]), _arm([0.54, 0.55, 0.56])


@pytest.mark.parametrize("c, answer", [
    ([0.445, 0.45, 0.455], "group size"),     # C stays with A: G decides
    ([0.545, 0.55, 0.555], "compute"),        # C rises to B: the completions per step decide
    ([0.495, 0.50, 0.505], "both"),           # half way: both move it by more than the margin
    ([0.30, 0.50, 0.70], "undecided"),        # C too noisy to place
])
def test_the_answer_follows_where_arm_c_lies(c, answer):
    out = attribute_shift({"A": A, "B": B, "C": _arm(c)}, margin=0.05)
    assert out["answer"] == answer, out["text"]
    assert out["rise"] == pytest.approx(0.30)
    assert out["d_G"] == pytest.approx((np.mean(c) - 0.55) / 0.30)
    assert out["d_N"] == pytest.approx((np.mean(c) - 0.45) / 0.30)


def test_the_interval_is_welchs_divided_by_the_rise():
    c = [0.47, 0.50, 0.52]
    out = attribute_shift({"A": A, "B": B, "C": _arm(c)}, margin=0.05)
    b = np.array([0.54, 0.55, 0.56])
    va, vb = np.var(c, ddof=1) / 3, np.var(b, ddof=1) / 3
    dof = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 2)
    half = stats.t.ppf(0.975, dof) * math.sqrt(va + vb) / 0.30
    assert out["ci_G"] == pytest.approx((out["d_G"] - half, out["d_G"] + half))
    assert out["dof_G"] == pytest.approx(dof)
    assert stats.ttest_ind(c, b, equal_var=False).df == pytest.approx(dof)


def test_one_run_in_arm_c_gives_point_values_and_no_answer():
    out = attribute_shift({"A": A, "B": B, "C": _arm([0.45])}, margin=0.05)
    assert out["answer"] == "undecided (1 of 3 runs in arm C)" and out["ci_G"] is None
    assert out["d_G"] == pytest.approx(-0.1 / 0.3)
    none = attribute_shift({"A": A, "B": B, "C": []}, margin=0.05)
    assert none["answer"].startswith("undecided (0 of 3") and none["d_G"] is None


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="missing"):
        attribute_shift({"A": A, "B": B}, margin=0.05)
    with pytest.raises(ValueError, match="margin"):
        attribute_shift({"A": A, "B": B, "C": []}, margin=2)
    with pytest.raises(ValueError, match="rise"):
        attribute_shift({"A": _arm([0.1], 0.2), "B": _arm([0.1], 0.2), "C": []}, margin=0.05)


def test_the_meaning_says_what_the_answer_and_d_g_leave_open():
    """'compute' with d_G's interval inside the margin: P1-C5's invariance holds at equal compute; with a wide d_G
    interval (the SmolLM2 case: [−0.04, +0.22]) it is neither shown nor refuted. The sentence never claims more."""
    narrow_b = _arm([0.549, 0.55, 0.551])
    tight = attribute_shift({"A": A, "B": narrow_b, "C": _arm([0.549, 0.55, 0.551])}, margin=0.05)
    assert tight["answer"] == "compute" and "holds at equal compute" in tight["meaning"]
    wide = attribute_shift({"A": A, "B": B, "C": _arm([0.53, 0.56, 0.60])}, margin=0.05)
    assert wide["answer"] == "compute", wide["text"]
    assert "neither shown nor refuted" in wide["meaning"] and "holds" not in wide["meaning"]
    assert attribute_shift({"A": A, "B": B, "C": _arm([0.445, 0.45, 0.455])}, margin=0.05)["meaning"].startswith(
        "The page's shift is the group size's")


def test_smollm_attribution_on_the_committed_runs_is_the_pages_answer():
    """The committed runs at grpo_smollm's defaults: the page prints 'compute', d_G = +0.090 [-0.036, +0.216],
    d_N = +0.326 [+0.137, +0.514] of the rise 0.476, runs 3/3/3."""
    from rlvr_dynamics.verdicts.equal_compute import smollm_attribution
    a = smollm_attribution()
    assert a["answer"] == "compute" and a["counts"] == {"A": 3, "B": 3, "C": 3}
    assert round(a["d_N"], 3) == 0.326 and [round(x, 3) for x in a["ci_N"]] == [0.137, 0.514]
    assert round(a["d_G"], 3) == 0.090 and [round(x, 3) for x in a["ci_G"]] == [-0.036, 0.216]
    assert round(a["plateau"]["C"], 3) == 0.667 and round(a["plateau"]["B"], 3) == 0.625
