"""Mroueh's fixed point (P1 spec §3.9, §7.4 check 1)."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from rlvr_dynamics.p1 import fixed_point as fp

TABLE = [(0.1, 1, 0.45305), (0.2, 2, 0.4087), (0.3, 4, 0.4158), (0.5, 2, 0.7647)]


def test_reference_values_and_identity():
    p = fp.mroueh_fixed_point([r[0] for r in TABLE], [r[1] for r in TABLE])
    for got, (_, _, ref) in zip(p, TABLE):
        assert got == pytest.approx(ref, abs=1e-4 if ref != 0.45305 else 1e-5)
    assert np.max(np.abs(p - fp.mroueh_h(p, [r[0] for r in TABLE], [r[1] for r in TABLE]))) < 1e-12


def test_iteration_converges_to_the_same_point():
    seq = fp.mroueh_iterate(0.1, 1.0, 200)
    assert seq[-1] == pytest.approx(fp.mroueh_fixed_point(0.1, 1.0), abs=1e-12)
    assert seq[0] == 0.1


@settings(max_examples=50, deadline=None)
@given(p_ref=st.floats(0.02, 0.9), beta=st.floats(1.0, 20.0), eps=st.sampled_from([0.0, 1e-4, 1e-2]),
       place=st.sampled_from(["inside", "outside"]))
def test_fixed_point_identity_property(p_ref, beta, eps, place):
    if not fp.has_fixed_point(p_ref, beta, eps, place):      # small β, large p_ref: runaway to p = 1
        with pytest.raises(ValueError, match="beta"):
            fp.mroueh_fixed_point(p_ref, beta, eps, place)
        assume(False)
    p = fp.mroueh_fixed_point(p_ref, beta, eps, place)
    assert abs(p - fp.mroueh_h(p, p_ref, beta, eps, place)) < 1e-12
    assert p > p_ref      # success amplification


def test_mean_only_closed_form_limit():
    # eps large: w ≈ 1/sqrt(eps) constant, p* → σ(z_ref + 1/(β sqrt(eps)))
    p = fp.mroueh_fixed_point(0.3, 2.0, eps=1e6)
    assert p == pytest.approx(fp.sigmoid(fp.logit(0.3) + 1 / (2.0 * 1e3)), abs=1e-9)


def test_no_fixed_point_raises_and_flags():
    assert not fp.has_fixed_point(0.1, 0.1)
    assert fp.has_fixed_point(0.1, 1.0)
    with pytest.raises(ValueError, match="beta"):
        fp.mroueh_fixed_point(0.1, 0.1)


def test_invalid_inputs():
    with pytest.raises(ValueError, match="p_ref"):
        fp.mroueh_fixed_point(0.0, 1.0)
    with pytest.raises(ValueError, match="beta"):
        fp.mroueh_fixed_point(0.1, -1.0)
    with pytest.raises(ValueError, match="eps_placement"):
        fp.mroueh_fixed_point(0.1, 1.0, eps_placement="middle")
    with pytest.raises(ValueError, match="broadcast"):
        fp.mroueh_fixed_point(np.array([0.1, 0.2]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="p_ref"):
        fp.mroueh_fixed_point(np.nan, 1.0)
