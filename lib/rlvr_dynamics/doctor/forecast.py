"""Forecast a run's reward from any prefix of its log, never absurdly, with conformal intervals (80 % by default) [D].

The rule (constants set on the run-doctor corpus dev split only, ``bench/doctor_eval``; the test split and
``../shared/grpo_logs`` were never used to choose them; how they were chosen: the design notes). n is the number of
prefix points, h the distance from the last prefix step to the mean target step in logged intervals, h/n the horizon
ratio (:func:`horizon_ratio`).

1. **Band.** The point forecast lies in the prefix's observed range ``[min, max]`` (∩ ``reward_bounds``): since the
   target is a mean of logged rewards, which also lie in the whole curve's range, **the error can never exceed 1× the
   range**. The interval lies in the plausible band ``[min − F·r, max + F·r] ∩ reward_bounds`` with r = max − min of
   the prefix and ``F = BAND_FACTOR·(1 + h/n)`` (:data:`BAND_FACTOR` = 0.5: the reward may move half its observed
   range beyond what was seen, more the further ahead we look; at a 10 % prefix F ≈ 4.8, at 50 % F ≈ 0.95). A
   constant prefix gives r = 0: forecast and interval are the observed value.
2. **Candidates** (:data:`CANDIDATES`): three persistence levels, the trailing means of the last ⌈share·n⌉ prefix
   points for share in :data:`LEVEL_SHARES` (40, 20, 10 %); P1's response laws ``single_exponential``,
   ``overdamped``, ``oscillatory`` (:func:`~.reading.response_laws.fit_response_laws`); the learning-curve families
   ``mmf``, ``weibull``, ``pow3`` (:mod:`.reading.learning_curves`). A candidate's forecast is its mean over the
   target steps, clipped to the observed range. A law whose fit failed is dropped. **A growing oscillatory fit (decay
   rate < 0, ζ < 0) gets weight 0**: instability is a finding (reported by the oscillator reading), never a curve to
   extend.
3. **Rolling-origin weights.** With n ≥ :data:`MIN_ROLLING` (16), each candidate is refitted on the first
   ⌊:data:`ORIGIN_FRAC`·n⌋ points (the origin, 50 %) and asked for the mean of the last ⌈:data:`CHECK_FRAC`·n⌉ prefix
   points (the check window, 20 %; its forecast clipped to the origin part's observed range). Its error e_k = |that
   forecast − the observed check-window mean|. Weight ``w_k = π_k / (e_k² + τ²)``, τ² = σ²/m_c (the noise of the
   observed check-window mean of m_c points, σ the robust step noise of the prefix,
   :func:`~rlvr_dynamics.runs.noise.step_sigma`), normalised. Priors (:func:`prior`): π = 1 for each persistence
   level and each learning-curve family, :data:`LAW_PRIOR` = 0.3 for P1's laws — the rolling-origin check alone
   decides between "it stays where it is" and a curve. Below :data:`MIN_ROLLING` (12) points, the 40 % level alone
   (the least noisy; 12 points leave 6 at the origin, one more than a 4-parameter curve fit needs). The forecast is
   the weighted mean of the candidates (inside the observed range).
4. **Interval (normalised split-conformal, Mondrian by noise class × horizon).** ``ŷ ± q·s`` clipped to the band. The
   scale has a noise part and a **drift** part (:func:`interval_scale`): ``s² = (σ² + d²)·(1 + h/n) +
   (DRIFT_FACTOR·D·H/L)²`` with d the weighted standard deviation of the candidates around ŷ (their disagreement),
   **D the prefix's own level change**: the difference between the means of its second and first halves (k = ⌊n/2⌋
   points each), noise-corrected, ``D = sqrt(max(Δ² − 2σ²/k, 0))``, L = n − k the distance between the two halves'
   centres in points, and H = h + 0.2·n the distance from the centre of the level estimate to the target: the level
   may keep moving at the rate the prefix shows, and :data:`DRIFT_FACTOR` = 0.5 of it (D = 0 on a stationary prefix).
   ``q`` is the conformal quantile of the prefix's **stratum**: noise class
   (:func:`~rlvr_dynamics.runs.noise.noise_class`) × horizon bucket of h/n (:data:`~.conformal.HORIZON_EDGES` 1.5 /
   2.9 / 5: the protocol's 50 / 30 / 20 / 10 % prefixes fall one per bucket). For a nominal level α and each corpus
   source of the dev split (``sim``, ``project``: the sources are unlike each other, and unseen runs are unlike both)
   with ≥ :data:`~.conformal.MIN_CONFORMAL_ROWS` rows in the stratum, the source's quantile is the ⌈(m+1)·α⌉-th
   smallest of its m dev scores ``|target − ŷ|/s`` (∞ when the target lay outside the band: no clipped interval could
   cover it); ``q`` is the **largest of the sources' quantiles**, so that every dev source reaches α in every stratum
   (the source enters the calibration only, never the forecast of a run). Without such a source, the stratum's rows
   pooled; a stratum with fewer than :data:`~.conformal.MIN_CONFORMAL_ROWS` rows (or an infinite quantile) falls back
   to its noise class, then to all rows pooled, then (no file) to :data:`~.conformal.DEFAULT_QUANTILE` ×
   z_{(1+α)/2}/z_0.9 (stated, uncalibrated). ``bench/doctor_eval`` computes the quantiles for every level of
   :data:`~.conformal.LEVELS` (0.5 … 0.95) and stores them in :data:`~.conformal.CONFORMAL_PATH`;
   ``forecast(level=α)`` accepts exactly those levels. ``bench/doctor_eval/forecasts.py`` scores the forecast against
   persistence, MMF, Weibull, pow3 and the single exponential.

"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..runs.noise import noise_class, step_sigma
from .conformal import COVERAGE, check_level, conformal_quantile_for, stratum
from .reading.learning_curves import CURVE_FAMILIES, finite_curve, fit_curve
from .reading.learning_curves import mmf as mmf  # re-exported: the public name of the MMF curve
from .reading.response_laws import fit_response_laws

PREFIXES = (0.1, 0.2, 0.3, 0.5)
"""Prefix fractions of the forecast protocol."""
BAND_FACTOR = 0.5
"""F0: the interval band is the prefix's observed range widened by F0·(1 + h/n) × its width on each side."""
POINT_FACTOR = 0.0
"""F_p: point forecasts (each candidate's, the rolling-origin checks' and the combined one) lie in the prefix's
observed range widened by F_p × its width on each side (∩ reward bounds). 0: a forecast never leaves what was seen,
so a still-rising curve is forecast at most at its highest level so far (its plateau R∞ is the reading's, not the
forecast's)."""
LEVEL_SHARES = (0.4, 0.2, 0.1)
"""The persistence candidates average the last 40, 20 and 10 % of the prefix."""
LAWS = ("single_exponential", "overdamped", "oscillatory")
CANDIDATES = tuple(f"level_{round(100 * s)}" for s in LEVEL_SHARES) + LAWS + CURVE_FAMILIES
"""Candidates averaged by :func:`forecast`."""
LAW_PRIOR = 0.3
"""π of P1's response laws in the rolling-origin weights (levels and learning-curve families: 1)."""
MIN_ROLLING = 12
"""Fewer prefix points than this: persistence only."""
ORIGIN_FRAC = 0.5
"""The rolling origin: candidates are refitted on the first half of the prefix …"""
CHECK_FRAC = 0.2
"""… and scored on the mean of its last 20 %."""
DRIFT_FACTOR = 0.5
"""c of the drift part of the interval scale, c·D·H/L (module docstring, step 4)."""


@dataclass
class Forecast:
    """Forecast of the reward (its mean over the target steps) from a prefix, with its 80 % interval."""

    value: float
    low: float
    high: float
    """80 % interval (conformal, clipped to the band)."""
    persistence: float
    """The persistence candidate (trailing mean of the prefix)."""
    law: str | None
    """The candidate with the largest weight."""
    law_value: float
    """That candidate's (band-clipped) forecast."""
    weight: float
    """Total weight on the fitted curves (1 − persistence's weight)."""
    prefix_end: int
    band: tuple[float, float] = (math.nan, math.nan)
    """The plausible band (module docstring, step 1)."""
    noise_class: str = ""
    """Noise class of the prefix (:func:`~rlvr_dynamics.runs.noise.noise_class`), which picks the conformal quantile."""
    scale: float = math.nan
    """s of the interval (:func:`interval_scale`)."""
    quantile: float = math.nan
    """q: the interval is value ± q·s, clipped to the band."""
    weights: dict[str, float] = field(default_factory=dict)
    """Normalised weight of each candidate used."""
    candidates: dict[str, float] = field(default_factory=dict)
    """Each candidate's band-clipped forecast."""
    excluded: dict[str, str] = field(default_factory=dict)
    """Candidates given weight 0 and why (e.g. a growing oscillation)."""
    level: float = COVERAGE
    """Nominal coverage of [low, high]."""
    horizon_ratio: float = math.nan
    """h/n of this forecast (:func:`horizon_ratio`)."""
    stratum: str = ""
    """Conformal stratum: noise class × horizon bucket (:func:`stratum`)."""

    def to_dict(self) -> dict[str, Any]:
        f = lambda x: None if x is None or not math.isfinite(x) else float(x)  # noqa: E731
        return {"value": f(self.value), "low_80": f(self.low), "high_80": f(self.high), "level": float(self.level),
                "persistence": f(self.persistence), "law": self.law, "law_value": f(self.law_value),
                "weight": f(self.weight), "prefix_end": int(self.prefix_end),
                "band": [f(self.band[0]), f(self.band[1])], "noise_class": self.noise_class,
                "weights": {k: f(v) for k, v in self.weights.items()}, "excluded": dict(self.excluded)}


# ---------------------------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------------------------

def persistence(reward, window: int) -> float:
    """Persistence: the mean of the last ``window`` rewards (finite values; window ≥ 1, capped at their count)."""
    y = np.asarray(reward, dtype=float)
    y = y[np.isfinite(y)]
    if y.size == 0:
        raise ValueError("reward must contain at least one finite value")
    if int(window) < 1:
        raise ValueError(f"window must be ≥ 1, got {window}")
    return float(np.mean(y[-int(window):]))


def plausible_band(reward, reward_bounds: tuple[float, float] | None = None,
                   factor: float = BAND_FACTOR) -> tuple[float, float]:
    """``[min − factor·r, max + factor·r] ∩ reward_bounds`` over the finite rewards (r = max − min): the band that
    every forecast and interval is clipped to (module docstring, step 1). Bounds that miss the observed values
    entirely are ignored (they cannot be the reward's bounds)."""
    if not (math.isfinite(factor) and factor >= 0):
        raise ValueError(f"factor must be finite and ≥ 0, got {factor}")
    y = np.asarray(reward, dtype=float)
    y = y[np.isfinite(y)]
    if y.size == 0:
        raise ValueError("reward must contain at least one finite value")
    lo, hi = float(y.min()), float(y.max())
    r = hi - lo
    if not math.isfinite(r):            # values near ±1.8e308: their difference overflows
        return lo, hi
    blo, bhi = lo - factor * r, hi + factor * r
    if not (math.isfinite(blo) and math.isfinite(bhi)):
        blo, bhi = lo, hi
    if reward_bounds is not None:
        rlo, rhi = float(reward_bounds[0]), float(reward_bounds[1])
        if rlo <= hi and rhi >= lo:
            blo, bhi = max(blo, rlo), min(bhi, rhi)
    return blo, bhi



def _growing(fit) -> bool:
    return fit.law == "oscillatory" and fit._theta is not None and float(fit._theta[2]) < 0


def _candidate_models(t, y, bounds, fits=None) -> tuple[dict[str, Any], dict[str, str]]:
    """Fit every curve candidate on (t, y): {name: callable(steps) → values}, and the exclusions with reasons."""
    models: dict[str, Any] = {}
    excluded: dict[str, str] = {}
    if fits is None:
        fits = fit_response_laws(t, y, reward_bounds=bounds)
    for law in LAWS:
        f = fits.get(law)
        if f is None or f.status == "failed" or f._theta is None:
            excluded[law] = "fit failed"
        elif _growing(f):
            excluded[law] = "growing oscillation (decay rate < 0): a finding, never extrapolated"
        else:
            models[law] = f.predict
    for fam in CURVE_FAMILIES:
        cf = fit_curve(t, y, fam)
        if cf is None:
            excluded[fam] = "nothing to fit"
        else:
            models[fam] = cf.predict
    return models, excluded


def mean_prediction(model, steps) -> float:
    with np.errstate(all="ignore"):
        v = float(np.mean(model(steps)))
    return v


def _levels(y) -> dict[str, float]:
    """The persistence candidates: trailing means over the last ⌈n·share⌉ points for each share of LEVEL_SHARES."""
    n = y.size
    return {f"level_{round(100 * sh)}": float(np.mean(y[-max(1, math.ceil(sh * n)):])) for sh in LEVEL_SHARES}


def _clip(v: float, band: tuple[float, float]) -> float:
    return min(max(v, band[0]), band[1])


def horizon_ratio(steps, target_steps) -> float:
    """h/n: how many logged intervals the mean target step lies beyond the last prefix step (h, ≥ 0), per prefix
    point (n). Used by the persistence prior, the band and the interval scale (module docstring)."""
    t = np.asarray(steps, dtype=float)
    n = t.size
    dts = np.diff(t)
    dts = dts[dts > 0]
    dt = float(np.median(dts)) if dts.size else 1.0
    h = max(float(np.mean(target_steps)) - float(t[-1]), 0.0) / dt
    return h / max(n, 1)


def _fit_candidates(t, y, bounds, fits=None):
    """Fit the curve candidates on the prefix and score every candidate at the rolling origin (module docstring,
    steps 2–3). Returns (models, errors, tau², excluded); no models below MIN_ROLLING points or on a constant."""
    n = t.size
    point = plausible_band(y, bounds, 0.0)
    if n < MIN_ROLLING or point[1] <= point[0]:
        return {}, {}, 0.0, {}
    models, excluded = _candidate_models(t, y, bounds, fits)
    # rolling origin: refit on the first ORIGIN_FRAC, forecast the mean of the last CHECK_FRAC of the prefix
    m0 = int(ORIGIN_FRAC * n)
    mc = max(1, math.ceil(CHECK_FRAC * n))
    to, yo = t[:m0], y[:m0]
    check_t, check_mean = t[-mc:], float(np.mean(y[-mc:]))
    point_o = plausible_band(yo, bounds, POINT_FACTOR)
    errors = {k: abs(v - check_mean) for k, v in _levels(yo).items()}
    omodels = _candidate_models(to, yo, bounds)[0] if np.ptp(yo) > 0 else {}
    for name in models:
        v = mean_prediction(omodels[name], check_t) if name in omodels else math.nan
        errors[name] = abs(_clip(v, point_o) - check_mean) if math.isfinite(v) else math.inf
    sigma = step_sigma(y)
    return models, errors, sigma * sigma / mc, excluded


def _candidates(t, y, target, bounds, models, excluded):
    """Candidate forecasts of mean(reward at target), clipped to the observed range: the levels and each fitted
    model (a non-finite one is moved to ``excluded``)."""
    point = plausible_band(y, bounds, POINT_FACTOR)
    preds = _levels(y)
    excluded = dict(excluded)
    for name, mdl in models.items():
        v = mean_prediction(mdl, target)
        if math.isfinite(v):
            preds[name] = _clip(v, point)
        else:
            excluded[name] = "non-finite forecast"
    return preds, excluded


def prior(name: str, hratio: float) -> float:
    """π_k: :data:`LAW_PRIOR` for P1's laws, 1 for the persistence levels and the learning-curve families, whatever
    the horizon ratio ``hratio`` (module docstring, step 3; kept in the signature for callers)."""
    return LAW_PRIOR if name in LAWS else 1.0


def _combine(preds: dict[str, float], errors: dict[str, float], tau2: float, hratio: float) -> dict[str, float]:
    """Normalised weights w_k ∝ π_k/(e_k² + τ²) (module docstring, step 3); the longest level alone when nothing
    was scored."""
    raw = {}
    for k in preds:
        e = errors.get(k)
        if e is None or not math.isfinite(e):
            continue
        d = e * e + tau2
        raw[k] = prior(k, hratio) / d if d > 0 else math.inf
    if not raw:
        raw = {CANDIDATES[0]: 1.0}
    if any(math.isinf(v) for v in raw.values()):   # exact candidates on noiseless data: share equally
        raw = {k: 1.0 for k, v in raw.items() if math.isinf(v)}
    tot = sum(raw.values())
    return {k: v / tot for k, v in raw.items()}


# ---------------------------------------------------------------------------------------------------------------
# The forecast
# ---------------------------------------------------------------------------------------------------------------

def _check(steps, reward, reward_bounds, level):
    check_level(level)
    t, y = finite_curve(steps, reward)
    if t.size < 2:
        raise ValueError(f"a forecast needs at least 2 finite logged rewards, got {t.size}")
    if reward_bounds is not None and not (reward_bounds[0] < reward_bounds[1]):
        raise ValueError(f"reward_bounds must be (low, high) with low < high, got {reward_bounds}")
    return t, y


def _target(target_steps) -> np.ndarray:
    target = np.atleast_1d(np.asarray(target_steps, dtype=float))
    if target.size == 0 or not np.all(np.isfinite(target)):
        raise ValueError("target_steps must be one or more finite steps")
    return target


def forecast(steps, reward, target_steps, *, reward_bounds: tuple[float, float] | None = None,
             fits: dict[str, Any] | None = None, window: int | None = None, level: float = COVERAGE,
             conformal: dict[str, Any] | None = None) -> Forecast:
    """Forecast the mean reward over ``target_steps`` from the prefix ``(steps, reward)`` by the rule of the module
    docstring. ``fits``: a :func:`~.reading.response_laws.fit_response_laws` result for exactly this prefix (saves a
    refit); ``window``: the trailing window of the reported ``persistence`` (default: the 20 % level);
    ``level``: the nominal coverage of the interval, one of the calibrated :data:`LEVELS`; ``conformal``: a
     table (``bench/doctor_eval``) to use instead of the committed file."""
    t, y = _check(steps, reward, reward_bounds, level)
    target = _target(target_steps)
    fitted = _fit_candidates(t, y, reward_bounds, fits)
    return _evaluate(t, y, target, reward_bounds, fitted, conformal, window, level)


def forecast_path(steps, reward, target_steps, *, reward_bounds: tuple[float, float] | None = None,
                  fits: dict[str, Any] | None = None, conformal: dict[str, Any] | None = None,
                  level: float = COVERAGE) -> list[Forecast]:
    """:func:`forecast` of the reward at each step of ``target_steps`` separately (e.g. a forecast band for a
    figure), fitting the candidates once: the same numbers as one :func:`forecast` call per step."""
    t, y = _check(steps, reward, reward_bounds, level)
    target = _target(target_steps)
    fitted = _fit_candidates(t, y, reward_bounds, fits)
    return [_evaluate(t, y, np.array([s]), reward_bounds, fitted, conformal, None, level) for s in target]


def level_drift(y) -> tuple[float, int]:
    """(D, L) of the drift part of the interval scale (module docstring, step 4): the noise-corrected difference
    between the means of the second and first halves of ``y`` (k = ⌊n/2⌋ points each),
    ``sqrt(max(Δ² − 2σ²/k, 0))``, and the distance L = n − k between the halves' centres in points. (0, 1) below
    4 points."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    n = y.size
    k = n // 2
    if k < 2:
        return 0.0, 1
    sigma = step_sigma(y)
    delta = float(np.mean(y[-k:]) - np.mean(y[:k]))
    return math.sqrt(max(delta * delta - 2.0 * sigma * sigma / k, 0.0)), n - k


def interval_scale(y, hratio: float, disagreement: float) -> float:
    """s of the interval (module docstring, step 4): ``sqrt((σ² + d²)(1 + h/n) + (DRIFT_FACTOR·D·H/L)²)`` with
    H = h + 0.2·n, h = ``hratio``·n and d = ``disagreement``."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    n = y.size
    sigma = step_sigma(y)
    d_lvl, lag = level_drift(y)
    horizon = hratio * n + 0.2 * n
    drift = DRIFT_FACTOR * d_lvl * horizon / lag
    return math.sqrt((sigma * sigma + disagreement * disagreement) * (1.0 + hratio) + drift * drift)


def _evaluate(t, y, target, reward_bounds, fitted, conformal, window, level=COVERAGE) -> Forecast:
    """Steps 1–4 of the module docstring at one target, from the fitted candidates."""
    models, errors, tau2, excluded = fitted
    hr = horizon_ratio(t, target)
    preds, excluded = _candidates(t, y, target, reward_bounds, models, excluded)
    w = _combine(preds, errors, tau2, hr)
    point = plausible_band(y, reward_bounds, POINT_FACTOR)
    value = _clip(sum(w[k] * preds[k] for k in w), point)
    band = plausible_band(y, reward_bounds, BAND_FACTOR * (1.0 + hr))
    disp = math.sqrt(sum(w[k] * (preds[k] - value) ** 2 for k in w))
    scale = interval_scale(y, hr, disp)
    cls = noise_class(y, reward_bounds) if t.size >= 3 else "noisy"
    q = conformal_quantile_for(cls, conformal, hratio=hr, level=level)
    half = q * scale
    low = max(value - half, band[0]) if math.isfinite(half) else band[0]
    high = min(value + half, band[1]) if math.isfinite(half) else band[1]
    pers = persistence(y, window) if window is not None else preds["level_20"]
    top = max(w, key=w.get)
    return Forecast(float(value), float(low), float(high), float(pers), top, float(preds[top]),
                    float(1.0 - sum(v for k, v in w.items() if k.startswith("level_"))), int(t[-1]), band, cls,
                    float(scale), float(q), dict(w), dict(preds), dict(excluded), float(check_level(level)),
                    float(hr), stratum(cls, hr))
