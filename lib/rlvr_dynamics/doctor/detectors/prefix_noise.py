"""The step noise of a run's prefix as the causal tests read it: σ̂ of the rewards before a point, and how far noise
lifts the largest of many trailing means.

The collapse report (:mod:`.collapse`) and the precursors' reward fall (:mod:`rlvr_dynamics.doctor.precursors`)
judge a fall against the noise of the points before it, re-estimated as the run grows (:class:`PrefixSigma`), and
against a peak that is the largest of about m/w trailing means (:func:`peak_bias`: the expected maximum of that
many normal values, in standard errors).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from ...runs.noise import step_sigma
from .own_rewards import small_sample_factor

SHORT_PREFIX = 6
"""Below this many values σ̂ is at least their standard deviation (three points on a line have std(Δr) = 0)."""
SIGMA_EXACT_UNTIL = 64
"""σ̂ is re-estimated at every point up to this many rewards, then whenever the count grows by SIGMA_GROWTH."""
SIGMA_GROWTH = 1.05


def peak_bias(m: int, w: int) -> float:
    """√(2·ln(m/w)) (0 when m ≤ w): about how many SEs noise lifts the largest of m/w independent means."""
    ratio = m / max(w, 1)
    return math.sqrt(2 * math.log(ratio)) if ratio > 1 else 0.0


class PrefixSigma:
    """σ̂ of the values before a point: the robust step noise × :func:`small_sample_factor` (or the plain one, or no
    factor), re-estimated on the schedule of :data:`SIGMA_EXACT_UNTIL` (call it with growing prefixes)."""

    def __init__(self, *, robust: bool = True, small_sample: bool = True) -> None:
        self.count = -1
        self.value = 0.0
        self.robust, self.small_sample = robust, small_sample

    def __call__(self, before: np.ndarray) -> float:
        n = before.size
        if n != self.count and (n <= SIGMA_EXACT_UNTIL or n >= SIGMA_GROWTH * self.count):
            key = (self.robust, self.small_sample,
                   hashlib.blake2b(np.ascontiguousarray(before, dtype=float).tobytes(), digest_size=16).digest())
            value = _PREFIX_SIGMA_CACHE.get(key)
            if value is None:
                factor = small_sample_factor(n - 1) if self.small_sample else 1.0
                sigma = step_sigma(before, robust=self.robust)
                if n < SHORT_PREFIX:       # a few points cannot tell trend from noise: take the larger reading
                    sigma = max(sigma, float(np.std(before[np.isfinite(before)], ddof=1)) if n >= 2 else 0.0)
                if len(_PREFIX_SIGMA_CACHE) > 200_000:
                    _PREFIX_SIGMA_CACHE.clear()
                value = _PREFIX_SIGMA_CACHE[key] = sigma * factor
            self.value, self.count = value, n
        return self.value


_PREFIX_SIGMA_CACHE: dict[tuple, float] = {}
"""σ̂ of a prefix, memoised on its bytes: the live doctor re-reads the same prefixes at every update (a pure
speed-up, bounded at 200,000 entries)."""
