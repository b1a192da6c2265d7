"""Forecast a run's reward from any prefix of its log, never absurdly, with conformal intervals (80 % by default) [D].

The rule (constants set on the run-doctor corpus dev split only, :mod:`.corpus`; the test split and
``../shared/grpo_logs`` were never used to choose them). n is the number of prefix points, h the distance from the
last prefix step to the mean target step in logged intervals, h/n the horizon ratio (:func:`horizon_ratio`).

1. **Band.** The point forecast lies in the prefix's observed range ``[min, max]`` (∩ ``reward_bounds``): since
   the target is a mean of logged rewards, which also lie in the whole curve's range, **the error can never exceed
   1× the range**. The interval lies in the plausible band ``[min − F·r, max + F·r] ∩ reward_bounds`` with
   r = max − min of the prefix and ``F = BAND_FACTOR·(1 + h/n)`` (:data:`BAND_FACTOR` = 0.5: the reward may move half
   its observed range beyond what was seen, more the further ahead we look; at a 10 % prefix F ≈ 4.8, at 50 %
   F ≈ 0.95). A constant prefix gives r = 0: forecast and interval are the observed value.
2. **Candidates** (:data:`CANDIDATES`): three persistence levels, the trailing means of the last ⌈share·n⌉ prefix
   points for share in :data:`LEVEL_SHARES` (40, 20, 10 %); P1's response laws ``single_exponential``,
   ``overdamped``, ``oscillatory`` (:func:`~.response_laws.fit_response_laws`); the learning-curve families ``mmf``,
   ``weibull``, ``pow3`` (:mod:`.learning_curves`). A candidate's forecast is its mean over the target steps,
   clipped to the observed range. A law whose fit failed is dropped. **A growing oscillatory fit (decay rate < 0,
   ζ < 0) gets weight 0**: instability is a finding (reported by the oscillator reading), never a curve to extend.
3. **Rolling-origin weights.** With n ≥ :data:`MIN_ROLLING` (16), each candidate is refitted on the first
   ⌊:data:`ORIGIN_FRAC`·n⌋ points (the origin, 50 %) and asked for the mean of the last ⌈:data:`CHECK_FRAC`·n⌉
   prefix points (the check window, 20 %; its forecast clipped to the origin part's observed range). Its error
   e_k = |that forecast − the observed check-window mean|. Weight ``w_k = π_k / (e_k² + τ²)``, τ² = σ²/m_c (the
   noise of the observed check-window mean of m_c points, σ the robust step noise of the prefix,
   :func:`~.noise.step_sigma`), normalised. Priors (:func:`prior`): π = 1 for each persistence level and each
   learning-curve family, :data:`LAW_PRIOR` = 0.3 for P1's laws — the rolling-origin check alone decides between
   "it stays where it is" and a curve (round 2; round 1 gave the levels π = 1 + h/n, which counted the horizon twice
   and kept the forecast at persistence on curves that rise fast and then creep). Below :data:`MIN_ROLLING` (12)
   points, the 40 % level alone (the least noisy; 12 points leave 6 at the origin, one more than a 4-parameter
   curve fit needs). The forecast is the weighted mean of the candidates (inside the observed range).
4. **Interval (normalised split-conformal, Mondrian by noise class × horizon).** ``ŷ ± q·s`` clipped to the band.
   The scale has a noise part and a **drift** part (round 2, :func:`interval_scale`):
   ``s² = (σ² + d²)·(1 + h/n) + (DRIFT_FACTOR·D·H/L)²`` with d the weighted standard deviation of the candidates
   around ŷ (their disagreement), **D the prefix's own level change**: the difference between the means of its
   second and first halves (k = ⌊n/2⌋ points each), noise-corrected, ``D = sqrt(max(Δ² − 2σ²/k, 0))``, L = n − k
   the distance between the two halves' centres in points, and H = h + 0.2·n the distance from the centre of the
   level estimate to the target: the level may keep moving at the rate the prefix shows, and :data:`DRIFT_FACTOR`
   = 0.5 of it. Why: with the noise part alone the normalised errors of prefixes that still trend (drift > 3 noise
   sd) and of stationary ones differed by a factor of ~2, so one quantile covered dev's trending prefixes 66–74 %
   and its stationary ones 84–96 % — and the runs of an unseen source trend differently (verl runs creep for
   hundreds of steps, 1-prompt runs rise under noise). DRIFT_FACTOR = 0.5 with linear extrapolation (H/L, not
   √(H/L)) is the value of {0.25, 0.5, 1} × {√, linear} that makes the two groups' coverage equal on dev in every
   noise class; D = 0 on a stationary prefix, so it costs nothing there.
   ``q`` is the conformal quantile of the prefix's **stratum**: noise class (:func:`~.noise.noise_class`) ×
   horizon bucket of h/n (:data:`HORIZON_EDGES` 1.5 / 2.9 / 5: the protocol's 50 / 30 / 20 / 10 % prefixes fall one
   per bucket). For a nominal level α and each corpus source of the dev split (``sim``, ``project``: the sources
   are unlike each other, and unseen runs are unlike both) with ≥ :data:`MIN_CONFORMAL_ROWS` rows in the stratum,
   the source's quantile is the ⌈(m+1)·α⌉-th smallest of its m dev scores ``|target − ŷ|/s`` (∞ when the target
   lay outside the band: no clipped interval could cover it); ``q`` is the **largest of the sources' quantiles**,
   so that every dev source reaches α in every stratum (with one pooled quantile the simulated smooth runs, harder
   than the project's, were covered 65 % when one simulated family was left out; the source enters the
   calibration only, never the forecast of a run). Without such a source, the stratum's rows pooled; a stratum with fewer than :data:`MIN_CONFORMAL_ROWS` rows (or an infinite quantile) falls back to its noise
   class, then to all rows pooled, then (no file) to :data:`DEFAULT_QUANTILE` × z_{(1+α)/2}/z_0.9 (stated,
   uncalibrated). :func:`calibrate_conformal` computes the quantiles for every level of :data:`LEVELS`
   (0.5 … 0.95) and :func:`write_conformal` stores them in ``_data/forecast_conformal.json``; ``forecast(level=α)``
   accepts exactly those levels.

:func:`score_log` / :func:`benchmark_forecasts` score the rule and the baselines with the protocol of
``../shared/DESIGN.md`` ("Judging the run tools"): prefixes of 10/20/30/50 % of the logged steps, target = mean reward
of the last 10 %, error = |forecast − target| / (max − min of the whole curve). The baselines are the published
methods as a user would run them, unclipped: persistence (mean of the last max(1, N/25) prefix rewards, N the full
log length, as in the 2026-12-01 measurement), MMF, Weibull, pow3 (Domhan et al. 2015) and the single exponential,
each falling back to persistence when its fit fails. :func:`benchmark_forecasts` also reports the interval
reliability: for each level of :data:`LEVELS`, the share of targets inside the interval per noise class.
"""
from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .learning_curves import CURVE_FAMILIES, finite_curve, fit_curve
from .learning_curves import mmf as mmf  # re-exported: the public name of the MMF curve
from .noise import NOISE_CLASSES, noise_class, step_sigma
from .response_laws import fit_response, fit_response_laws

PREFIXES = (0.1, 0.2, 0.3, 0.5)
"""Prefix fractions of the forecast protocol."""
BAND_FACTOR = 0.5
"""F0: the interval band is the prefix's observed range widened by F0·(1 + h/n) × its width on each side."""
POINT_FACTOR = 0.0
"""F_p: point forecasts (each candidate's, the rolling-origin checks' and the combined one) lie in the prefix's
observed range widened by F_p × its width on each side (∩ reward bounds). 0: a forecast never leaves what was seen,
so a still-rising curve is forecast at most at its highest level so far (its plateau R∞ is the reading's, not the
forecast's). Chosen on the dev split (324 runs × 4 prefixes): F_p = 0.25 / 0.5 lower the median error at 20–50 %
by 0.002–0.006 but put 5 / 8 forecasts more than 1× the range off (0 at F_p = 0)."""
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
COVERAGE = 0.8
"""Nominal coverage of the default interval."""
LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
"""Nominal levels calibrated on dev (``forecast(level=...)`` accepts these; the reliability table reports them)."""
DRIFT_FACTOR = 0.5
"""c of the drift part of the interval scale, c·D·H/L (module docstring, step 4)."""
HORIZON_EDGES = (1.5, 2.9, 5.0)
"""Edges of the horizon buckets of h/n for the conformal strata (h0: h/n < 1.5, …, h3: ≥ 5)."""
MIN_CONFORMAL_ROWS = 30
"""A noise class needs this many dev rows for its own conformal quantile."""
DEFAULT_QUANTILE = 3.0
"""q at 80 % used when no calibration file is found (uncalibrated: ±3 scales; other levels scaled by the normal
quantile ratio z_{(1+α)/2}/z_0.9)."""
MIN_BENCH_POINTS = 40
"""Only logs with at least this many logged rewards enter the forecast benchmark."""
TOLERANCE = 0.05
"""'Within 5 %' of the range in the benchmark tables."""
CONFORMAL_PATH = Path(__file__).resolve().parent.parent / "_data" / "forecast_conformal.json"
"""Where :func:`write_conformal` writes and :func:`forecast` reads the per-class quantiles."""
BASELINES = ("persistence", "mmf", "weibull", "pow3", "single_exponential")
"""Baselines reported beside the forecast by :func:`score_log`."""


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
    """Noise class of the prefix (:func:`~.noise.noise_class`), which picks the conformal quantile."""
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


def conformal_quantile(scores, coverage: float = COVERAGE) -> float:
    """Split-conformal quantile: the ⌈(m+1)·coverage⌉-th smallest of m scores (∞ when that rank exceeds m), so
    that a new exchangeable score falls at or below it with probability ≥ coverage (Vovk et al. 2005; Lei et al.
    2018, §2.2). NaN scores are an error; ∞ scores are allowed (they count as misses)."""
    if not (0.0 < coverage < 1.0):
        raise ValueError(f"coverage must be in (0, 1), got {coverage}")
    s = np.asarray(scores, dtype=float).ravel()
    if np.isnan(s).any():
        raise ValueError("scores must not contain NaN")
    m = s.size
    if m == 0:
        return math.inf
    k = math.ceil((m + 1) * coverage)
    if k > m:
        return math.inf
    return float(np.sort(s)[k - 1])


_clean = finite_curve


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


def _mean_pred(model, steps) -> float:
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
        v = _mean_pred(omodels[name], check_t) if name in omodels else math.nan
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
        v = _mean_pred(mdl, target)
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


@functools.lru_cache(maxsize=4)
def _load_conformal(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def horizon_bucket(hratio: float) -> str:
    """``h0`` … ``h3``: the bucket of h/n at :data:`HORIZON_EDGES`."""
    return f"h{int(np.searchsorted(HORIZON_EDGES, hratio, side='right'))}"


def stratum(noise_cls: str, hratio: float) -> str:
    """The conformal stratum of a prefix: ``"<noise class>/<horizon bucket>"``, e.g. ``"noisy/h3"``."""
    return f"{noise_cls}/{horizon_bucket(hratio)}"


def _level_key(level: float) -> str:
    return f"{float(level):g}"


def _check_level(level: float) -> float:
    if not any(abs(float(level) - lv) < 1e-9 for lv in LEVELS):
        raise ValueError(f"level must be one of the calibrated levels {LEVELS}, got {level}")
    return min(LEVELS, key=lambda lv: abs(lv - float(level)))


def _default_quantile(level: float) -> float:
    from statistics import NormalDist
    z = NormalDist().inv_cdf
    return DEFAULT_QUANTILE * z((1 + level) / 2) / z((1 + COVERAGE) / 2)


def _usable_entry(entry) -> float | None:
    if entry and entry.get("n", 0) >= MIN_CONFORMAL_ROWS and entry.get("quantile") is not None \
            and math.isfinite(entry["quantile"]):
        return float(entry["quantile"])
    return None


def conformal_quantile_for(noise_cls: str, table: dict[str, Any] | None = None, *, hratio: float | None = None,
                           level: float = COVERAGE) -> float:
    """q for a prefix from the calibration ``table`` (default: the committed file) at nominal ``level``: the
    stratum's own quantile (noise class × horizon bucket of ``hratio``, when given) when it had ≥
    :data:`MIN_CONFORMAL_ROWS` dev rows and was finite, else the noise class's, else the pooled one, else the
    stated default (module docstring, step 4). Tables without per-level entries (``{"classes", "pooled"}``) serve
    the 80 % level."""
    if noise_cls not in NOISE_CLASSES:
        raise ValueError(f"noise_cls must be one of {NOISE_CLASSES}, got {noise_cls!r}")
    level = _check_level(level)
    if table is None:
        table = _load_conformal(str(CONFORMAL_PATH))
    if not table:
        return _default_quantile(level)
    lv = (table.get("levels") or {}).get(_level_key(level))
    if lv is None and abs(level - COVERAGE) < 1e-9:
        lv = table                      # a single-level (80 %) table
    if lv is None:
        return _default_quantile(level)
    entries = []
    if hratio is not None and math.isfinite(hratio):
        entries.append((lv.get("strata") or {}).get(stratum(noise_cls, hratio)))
    entries += [(lv.get("classes") or {}).get(noise_cls), lv.get("pooled")]
    for entry in entries:
        q = _usable_entry(entry)
        if q is not None:
            return q
    return _default_quantile(level)


# ---------------------------------------------------------------------------------------------------------------
# The forecast
# ---------------------------------------------------------------------------------------------------------------

def _check(steps, reward, reward_bounds, level):
    _check_level(level)
    t, y = _clean(steps, reward)
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
    docstring. ``fits``: a :func:`~.response_laws.fit_response_laws` result for exactly this prefix (saves a
    refit); ``window``: the trailing window of the reported ``persistence`` (default: the 20 % level);
    ``level``: the nominal coverage of the interval, one of the calibrated :data:`LEVELS`; ``conformal``: a
    :func:`calibrate_conformal` table to use instead of the committed file."""
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
                    float(scale), float(q), dict(w), dict(preds), dict(excluded), float(_check_level(level)),
                    float(hr), stratum(cls, hr))


# ---------------------------------------------------------------------------------------------------------------
# Protocol, baselines, calibration and the benchmark
# ---------------------------------------------------------------------------------------------------------------

def _protocol_split(n: int, frac: float) -> tuple[int, int]:
    """(prefix length, tail length) of the protocol for a log of n points."""
    tail = max(1, int(math.ceil(0.1 * n)))
    return max(6, int(round(frac * n))), tail


def _baselines(tp, yp, target_steps, bounds, n_full) -> dict[str, float]:
    """The published baselines as a user would run them (unclipped), each falling back to persistence."""
    pers = persistence(yp, max(1, n_full // 25))
    out = {"persistence": pers}
    for fam in CURVE_FAMILIES:
        cf = fit_curve(tp, yp, fam)
        v = _mean_pred(cf.predict, target_steps) if cf is not None else pers
        out[fam] = v if math.isfinite(v) else pers
    se = fit_response(tp, yp, "single_exponential", reward_bounds=bounds)
    v = _mean_pred(se.predict, target_steps) if se.status != "failed" and se._theta is not None else pers
    out["single_exponential"] = v if math.isfinite(v) else pers
    return out


def score_log(steps, reward, *, prefixes: Iterable[float] = PREFIXES,
              reward_bounds: tuple[float, float] | None = None, conformal: dict[str, Any] | None = None,
              baselines: bool = True) -> list[dict[str, Any]]:
    """The DESIGN.md protocol on one log: per prefix fraction, on the same row, the error (share of the whole
    curve's range) of the forecast and of each baseline (:data:`BASELINES`), whether the 80 % interval covered the
    target, the interval width (share of the range), the prefix's noise class, conformal stratum and score, and
    ``covered_levels``: {level: whether the interval at that level of :data:`LEVELS` covered the target}."""
    t, y = _clean(steps, reward)
    n = t.size
    rows = []
    if n < 8:
        return rows
    rng = float(np.ptp(y)) or 1.0
    for frac in prefixes:
        if not (0.0 < frac < 1.0):
            raise ValueError(f"prefix fractions must be in (0, 1), got {frac}")
        m, tail = _protocol_split(n, frac)
        if m >= n - tail:
            continue
        target_steps = t[-tail:]
        target = float(y[-tail:].mean())
        tp, yp = t[:m], y[:m]
        fc = forecast(tp, yp, target_steps, reward_bounds=reward_bounds, conformal=conformal)
        row = {"prefix": frac, "n_prefix": m, "target": target, "range": rng, "forecast": fc.value,
               "error": abs(fc.value - target) / rng, "covered": bool(fc.low <= target <= fc.high),
               "interval_width": (fc.high - fc.low) / rng, "noise_class": fc.noise_class, "law": fc.law,
               "weight": fc.weight, "score": _score(fc, target), "stratum": fc.stratum,
               "hratio": fc.horizon_ratio, "covered_levels": _covered_levels(fc, target, conformal)}
        if baselines:
            for k, v in _baselines(tp, yp, target_steps, reward_bounds, n).items():
                row[f"error_{k}"] = abs(v - target) / rng
        rows.append(row)
    return rows


def _covered_levels(fc: Forecast, target: float, conformal) -> dict[float, bool]:
    """Whether the interval of ``fc`` at each level of :data:`LEVELS` (same point, scale and band; the level's
    quantile) covers ``target``."""
    out = {}
    for lv in LEVELS:
        q = conformal_quantile_for(fc.noise_class, conformal, hratio=fc.horizon_ratio, level=lv)
        half = q * fc.scale
        low = max(fc.value - half, fc.band[0]) if math.isfinite(half) else fc.band[0]
        high = min(fc.value + half, fc.band[1]) if math.isfinite(half) else fc.band[1]
        out[lv] = bool(low <= target <= high)
    return out


def _score(fc: Forecast, target: float) -> float:
    """Conformal score of one dev row: |target − ŷ|/s, ∞ when the target is outside the band."""
    if not (fc.band[0] <= target <= fc.band[1]):
        return math.inf
    d = abs(target - fc.value)
    if d == 0:
        return 0.0
    return d / fc.scale if fc.scale > 0 else math.inf


def _usable(runs) -> list:
    out = []
    for r in runs:
        st, y = r.log.reward_curve()
        if np.isfinite(np.asarray(y, float)).sum() >= MIN_BENCH_POINTS:
            out.append((r, np.asarray(st, float), np.asarray(y, float)))
    return out


def conformal_table(scored: Iterable[tuple], *, coverage: float = COVERAGE,
                    levels: Iterable[float] = LEVELS) -> dict[str, Any]:
    """The calibration table from scored dev rows ``(noise class, stratum, score[, source])``: for each level, the
    conformal quantile per stratum, per noise class and pooled — the largest of the per-source quantiles of the
    sources with ≥ :data:`MIN_CONFORMAL_ROWS` rows in the cell, else the cell's rows pooled (module docstring,
    step 4); the entries at ``coverage`` are also at the top level. Quantiles of ∞ are stored as None."""
    scored = [(x[0], x[1], float(x[2]), x[3] if len(x) > 3 else "") for x in scored]

    def entry(rows):
        sc = [x[2] for x in rows]
        per = {}
        for src in sorted({x[3] for x in rows}):
            s_src = [x[2] for x in rows if x[3] == src]
            if len(s_src) >= MIN_CONFORMAL_ROWS:
                per[src] = conformal_quantile(s_src, lvl)
        q = max(per.values()) if per else (conformal_quantile(sc, lvl) if sc else math.inf)
        out_e = {"quantile": q if math.isfinite(q) else None, "n": len(sc)}
        if len(per) > 1:
            out_e["by_source"] = {k: (v if math.isfinite(v) else None) for k, v in per.items()}
        return out_e
    out: dict[str, Any] = {"coverage": coverage, "levels": {}}
    for lvl in sorted(set(float(x) for x in levels) | {float(coverage)}):
        strata = sorted({x[1] for x in scored})
        tab = {"classes": {c: entry([x for x in scored if x[0] == c]) for c in NOISE_CLASSES},
               "strata": {k: entry([x for x in scored if x[1] == k]) for k in strata},
               "pooled": entry(scored)}
        out["levels"][_level_key(lvl)] = tab
        if abs(lvl - coverage) < 1e-9:
            out.update(tab)
    return out


def calibrate_conformal(runs, *, coverage: float = COVERAGE, prefixes: Iterable[float] = PREFIXES,
                        levels: Iterable[float] = LEVELS) -> dict[str, Any]:
    """Split-conformal quantiles per stratum (noise class × horizon bucket), noise class and pooled, for every
    level of ``levels``, from corpus runs (use ``load_corpus(split="dev")``) with ≥ :data:`MIN_BENCH_POINTS` logged
    rewards, on the protocol's prefixes: ``{"coverage", "classes", "strata", "pooled"`` (at ``coverage``),
    ``"levels": {"0.5": {"classes", "strata", "pooled"}, …}, "runs", "rule"}``, each entry ``{"quantile", "n"}``.
    Quantiles of ∞ are stored as None."""
    scored = []
    used = _usable(runs)
    for r, st, y in used:
        for row in score_log(st, y, prefixes=prefixes, reward_bounds=r.reward_bounds, conformal={},
                             baselines=False):
            scored.append((row["noise_class"], row["stratum"], row["score"], getattr(r, "source", "")))
    table = conformal_table(scored, coverage=coverage, levels=levels)
    table.update({"runs": len(used), "prefixes": list(prefixes), "horizon_edges": list(HORIZON_EDGES),
                  "drift_factor": DRIFT_FACTOR,
                  "rule": "per level: q = the largest over corpus sources (>= 30 rows) of the ceil((m+1)*level)-th "
                          "smallest of |target - forecast|/scale (inf when the target is outside the band), per "
                          "stratum = noise class x horizon bucket of h/n, with fallback to the noise class, then "
                          "pooled; see rlvr_dynamics.runs.forecast"})
    return table


def write_conformal(path: str | os.PathLike | None = None, runs=None, *, table: dict[str, Any] | None = None) -> Path:
    """Write a calibration table atomically (temp file in the same folder, then rename) to ``path`` (default
    :data:`CONFORMAL_PATH`): ``table`` if given, else :func:`calibrate_conformal` of ``runs`` (default: the corpus
    dev split). Clears the cache so the next :func:`forecast` reads it."""
    path = Path(path) if path is not None else CONFORMAL_PATH
    if table is None:
        if runs is None:
            from .corpus import load_corpus
            runs = load_corpus(split="dev")
        table = calibrate_conformal(runs)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(table, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _load_conformal.cache_clear()
    return path


def benchmark_forecasts(runs, *, prefixes: Iterable[float] = PREFIXES, conformal: dict[str, Any] | None = None,
                        tolerance: float = TOLERANCE) -> dict[str, Any]:
    """Score :func:`forecast` and the baselines on corpus runs with ≥ :data:`MIN_BENCH_POINTS` logged rewards:
    ``{"n_runs", "prefixes": {frac: {"n": rows, method: {"median_error", "within", "over_range"}}},
    "noise_classes": {class: {"n", "coverage", "median_width"}}, "reliability": {class: {level: share}}, "rows"}``
    (``within``: share of rows with error ≤ ``tolerance``; ``over_range``: count of rows with error > 1; width:
    share of the whole range; ``reliability``: for each nominal level of :data:`LEVELS`, the share of targets
    inside the interval at that level — the interval reliability diagram)."""
    rows = []
    used = _usable(runs)
    for r, st, y in used:
        for row in score_log(st, y, prefixes=prefixes, reward_bounds=r.reward_bounds, conformal=conformal):
            rows.append({**row, "run": r.name, "source": r.source})
    methods = ("forecast",) + BASELINES
    per: dict[float, Any] = {}
    for frac in prefixes:
        sel = [x for x in rows if x["prefix"] == frac]
        entry: dict[str, Any] = {"n": len(sel)}
        for mth in methods:
            e = np.array([x["error" if mth == "forecast" else f"error_{mth}"] for x in sel], dtype=float)
            entry[mth] = {"median_error": float(np.median(e)) if e.size else math.nan,
                          "within": float(np.mean(e <= tolerance)) if e.size else math.nan,
                          "over_range": int(np.sum(e > 1.0))}
        per[frac] = entry
    classes = {}
    for c in NOISE_CLASSES:
        sel = [x for x in rows if x["noise_class"] == c]
        classes[c] = {"n": len(sel),
                      "coverage": float(np.mean([x["covered"] for x in sel])) if sel else math.nan,
                      "median_width": float(np.median([x["interval_width"] for x in sel])) if sel else math.nan}
    reliability = {c: {lv: float(np.mean([x["covered_levels"][lv] for x in rows if x["noise_class"] == c]))
                       for lv in LEVELS} for c in NOISE_CLASSES if any(x["noise_class"] == c for x in rows)}
    return {"n_runs": len(used), "prefixes": per, "noise_classes": classes, "reliability": reliability,
            "rows": rows}


def format_forecast_benchmark(bench: dict[str, Any], title: str = "") -> str:
    """Markdown tables of :func:`benchmark_forecasts`: per prefix, median error / share within 5 % / count off by
    more than the range for each method; per noise class, the 80 % coverage and median width, and the interval
    reliability (share inside at each nominal level of :data:`LEVELS`)."""
    methods = ("forecast",) + BASELINES
    lines = ([f"**{title}**", ""] if title else []) + [
        f"{bench['n_runs']} runs; cells: median error / within {TOLERANCE:.0%} / # off by > 1× range", "",
        "| prefix | rows | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for frac, e in bench["prefixes"].items():
        cells = [f"{e[m]['median_error']:.3f} / {e[m]['within']:.0%} / {e[m]['over_range']}"
                 if e["n"] else "–" for m in methods]
        lines.append(f"| {frac:.0%} | {e['n']} | " + " | ".join(cells) + " |")
    lines += ["", "| noise class | rows | 80 % coverage | median width (share of range) |", "|---|---|---|---|"]
    for c, e in bench["noise_classes"].items():
        if e["n"]:
            lines.append(f"| {c} | {e['n']} | {e['coverage']:.0%} | {e['median_width']:.3f} |")
        else:
            lines.append(f"| {c} | 0 | – | – |")
    rel = bench.get("reliability") or {}
    if rel:
        lines += ["", "| noise class | " + " | ".join(f"{lv:.0%}" for lv in LEVELS) + " |",
                  "|---|" + "---|" * len(LEVELS)]
        for c, pts in rel.items():
            lines.append(f"| {c} | " + " | ".join(f"{pts[lv]:.0%}" for lv in LEVELS) + " |")
        lines.append("")
        lines.append("Interval reliability: share of targets inside the interval at each nominal level.")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# Kept for report.py / bench_runs.py: the older (name, steps, reward, bounds) interface
# ---------------------------------------------------------------------------------------------------------------

def fit_mmf(t, y) -> np.ndarray | None:
    """MMF parameters (α, β, κ, δ) fitted with t measured from t[0] (:func:`~.learning_curves.fit_curve`);
    None when there is nothing to fit."""
    cf = fit_curve(t, y, "mmf")
    return None if cf is None else np.array(cf.params)


def calibration_table(logs: list[tuple[str, np.ndarray, np.ndarray, tuple[float, float] | None]], *,
                      prefixes: Iterable[float] = PREFIXES, tolerance: float = TOLERANCE) -> dict[float, dict[str, Any]]:
    """Aggregate :func:`score_log` over ``[(name, steps, reward, reward_bounds), …]``: per prefix, the share of
    logs within ``tolerance`` of the range and the median error for each method, and the 80 % coverage."""
    per: dict[float, list[dict[str, Any]]] = {}
    for name, steps, reward, rb in logs:
        for row in score_log(steps, reward, prefixes=prefixes, reward_bounds=rb):
            per.setdefault(row["prefix"], []).append({**row, "log": name})
    out = {}
    for frac, rows in sorted(per.items()):
        entry: dict[str, Any] = {"n_logs": len(rows)}
        for key, label in (("error", "forecast"),) + tuple((f"error_{b}", b) for b in BASELINES):
            e = np.array([r[key] for r in rows], dtype=float)
            e = e[np.isfinite(e)]
            entry[label] = {"within": float(np.mean(e <= tolerance)) if e.size else math.nan,
                            "median_error": float(np.median(e)) if e.size else math.nan}
        entry["coverage_80"] = float(np.mean([r["covered"] for r in rows]))
        entry["median_interval_width"] = float(np.median([r["interval_width"] for r in rows]))
        entry["rows"] = rows
        out[frac] = entry
    return out


def format_calibration(table: dict[float, dict[str, Any]], title: str = "") -> str:
    """Markdown table of :func:`calibration_table` (share within 5 % of the range / median error)."""
    lines = ([f"**{title}**", ""] if title else []) + [
        "| prefix | logs | forecast | persistence | single exp. | MMF | 80 % coverage | median 80 % width |",
        "|---|---|---|---|---|---|---|---|"]
    for frac, e in table.items():
        cells = [f"{e[k]['within']:.0%} / {e[k]['median_error']:.3f}"
                 for k in ("forecast", "persistence", "single_exponential", "mmf")]
        lines.append(f"| {frac:.0%} | {e['n_logs']} | " + " | ".join(cells) +
                     f" | {e['coverage_80']:.0%} | {e['median_interval_width']:.3f} |")
    return "\n".join(lines)
