"""P1's overdamped three-phase fit read as a damped oscillator (P1 spec §3.3–3.4) [D].

The fit of :func:`rlvr_dynamics.doctor.pipeline.fit_laws` (:mod:`rlvr_dynamics.p1.laws`, P1 spec §3.6–3.7): with slow and fast times :math:`T_s, T_f` the characteristic roots are :math:`\\lambda_\\pm = 1/T_f, 1/T_s`, so

.. math::  M/K_{\\rm eff} = T_sT_f,\\qquad C/K_{\\rm eff}=T_s+T_f,\\qquad \\zeta=\\frac{T_s+T_f}{2\\sqrt{T_sT_f}}\\ (\\ge 1).

Given the run's learning rate :math:`\\eta`, momentum :math:`\\mu` (Adam :math:`\\beta_1`) and refresh interval
:math:`K_{\\rm ref}`, the damping relation :math:`C/K_{\\rm eff} = ((1-\\mu)-\\eta K K_{\\rm ref})/(\\eta K)` in steps
(:math:`\\delta=1`) gives the curvature :math:`\\eta K=(1-\\mu)/(C/K_{\\rm eff}+K_{\\rm ref})` and the stability margin
:math:`\\eta K K_{\\rm ref}/(1-\\mu)` (unstable at ≥ 1, P1-C10). This inversion uses only the slow time's sum
with the fast one and assumes the paper's single-curvature model; it is a diagnostic, not a measurement.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..._checks import check_in_range, check_int, check_positive


@dataclass
class OscillatorReading:
    """The overdamped three-phase fit read as a damped oscillator (time in optimizer steps) [D]."""

    mass_over_stiffness: float
    """M/K_eff = T_s·T_f (steps²)."""
    damping_over_stiffness: float
    """C/K_eff = T_s + T_f (steps)."""
    damping_ratio: float
    """ζ = (T_s+T_f)/(2√(T_s T_f)); ≥ 1 for the overdamped law."""
    eta_curvature: float | None = None
    """ηK implied by the hyperparameters, if given."""
    stability_margin: float | None = None
    """ηK·K_ref/(1−μ): the run is dynamically unstable at ≥ 1 (P1-C10)."""


def read_oscillator(t_slow: float, t_fast: float, momentum: float | None = None,
                    refresh_interval: int | None = None) -> OscillatorReading:
    """Oscillator coefficients (ratios) from the fitted slow/fast times; curvature if the hyperparameters are given."""
    t_slow, t_fast = float(check_positive("t_slow", t_slow)), float(check_positive("t_fast", t_fast))
    reading = OscillatorReading(t_slow * t_fast, t_slow + t_fast, (t_slow + t_fast) / (2 * math.sqrt(t_slow * t_fast)))
    if momentum is not None and refresh_interval is not None:
        mu = float(check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False))
        k_ref = check_int("refresh_interval", refresh_interval, 1)
        reading.eta_curvature = (1 - mu) / (reading.damping_over_stiffness + k_ref)
        reading.stability_margin = reading.eta_curvature * k_ref / (1 - mu)
    return reading
