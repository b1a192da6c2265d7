"""The reading stage: P1's oscillator on a reward curve, read only with evidence [D].

- :mod:`.response_laws`: the second-order step response in every regime (first order, overdamped, oscillatory),
  fitted noise-aware with intervals (engine: :mod:`._response_engine`);
- :mod:`.dynamics`: :func:`read_dynamics`, the evidence reading ``stable`` / ``unstable`` / ``undetermined`` /
  ``noise only``;
- :mod:`.oscillator`: P1's three-phase fit read as an oscillator (M/K, C/K, ζ, the stability margin);
- :mod:`.learning_curves`: the learning-curve families (MMF, Weibull, pow3) the forecast also weighs.
"""
from .dynamics import VERDICTS, DynamicsReading, read_dynamics
from .oscillator import OscillatorReading, read_oscillator
from .response_laws import LAW_NAMES, ResponseFit, fit_response, fit_response_laws, stability_margin

__all__ = ["VERDICTS", "DynamicsReading", "read_dynamics", "OscillatorReading", "read_oscillator", "LAW_NAMES",
           "ResponseFit", "fit_response", "fit_response_laws", "stability_margin"]
