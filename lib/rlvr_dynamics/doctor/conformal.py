"""The forecast's conformal quantiles: split-conformal (Vovk et al. 2005; Lei et al. 2018), read from the committed
calibration table per stratum = noise class × horizon bucket of h/n (:mod:`.forecast`, step 4).

The table (:data:`CONFORMAL_PATH`, ``_data/forecast_conformal.json``) is written by ``bench/doctor_eval`` from the
corpus's development part; this module only reads it, and falls back to a stated default without it.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..runs.noise import NOISE_CLASSES

COVERAGE = 0.8
"""Nominal coverage of the default interval."""
LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
"""Nominal levels calibrated on dev (``forecast(level=...)`` accepts these; the reliability table reports them)."""
HORIZON_EDGES = (1.5, 2.9, 5.0)
"""Edges of the horizon buckets of h/n for the conformal strata (h0: h/n < 1.5, …, h3: ≥ 5)."""
MIN_CONFORMAL_ROWS = 30
"""A noise class needs this many dev rows for its own conformal quantile."""
DEFAULT_QUANTILE = 3.0
"""q at 80 % used when no calibration file is found (uncalibrated: ±3 scales; other levels scaled by the normal
quantile ratio z_{(1+α)/2}/z_0.9)."""
CONFORMAL_PATH = Path(__file__).resolve().parent.parent / "_data" / "forecast_conformal.json"
"""Where :func:`forecast` reads the per-class quantiles (written by ``bench/doctor_eval``)."""


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


@functools.lru_cache(maxsize=4)
def load_conformal_table(path: str) -> dict[str, Any] | None:
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


def level_key(level: float) -> str:
    return f"{float(level):g}"


def check_level(level: float) -> float:
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
    level = check_level(level)
    if table is None:
        table = load_conformal_table(str(CONFORMAL_PATH))
    if not table:
        return _default_quantile(level)
    lv = (table.get("levels") or {}).get(level_key(level))
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
