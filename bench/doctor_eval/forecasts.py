"""Scoring and calibrating the forecast (:mod:`rlvr_dynamics.doctor.forecast`) with the protocol of
``../shared/DESIGN.md`` ("Judging the run tools"): prefixes of 10/20/30/50 % of the logged steps, target = mean
reward of the last 10 %, error = |forecast − target| / (max − min of the whole curve). The baselines are the
published methods as a user would run them, unclipped: persistence (mean of the last max(1, N/25) prefix rewards, N
the full log length, as in the 2026-12-01 measurement), MMF, Weibull, pow3 (Domhan et al. 2015) and the single
exponential, each falling back to persistence when its fit fails. :func:`benchmark_forecasts` also reports the
interval reliability: for each level of :data:`~rlvr_dynamics.doctor.forecast.LEVELS`, the share of targets inside
the interval per noise class. :func:`calibrate_conformal` / :func:`write_conformal` write the conformal table that
:func:`~rlvr_dynamics.doctor.forecast.forecast` reads (``_data/forecast_conformal.json``).
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from rlvr_dynamics.doctor.conformal import (CONFORMAL_PATH, COVERAGE, HORIZON_EDGES, LEVELS, MIN_CONFORMAL_ROWS,
                                            level_key, load_conformal_table, conformal_quantile, conformal_quantile_for)
from rlvr_dynamics.doctor.forecast import DRIFT_FACTOR, PREFIXES, Forecast, mean_prediction, forecast, persistence
from rlvr_dynamics.runs.noise import NOISE_CLASSES
from rlvr_dynamics.doctor.reading.learning_curves import CURVE_FAMILIES, finite_curve, fit_curve
from rlvr_dynamics.doctor.reading.response_laws import fit_response

BASELINES = ("persistence", "mmf", "weibull", "pow3", "single_exponential")
"""Baselines reported beside the forecast by :func:`score_log`."""
TOLERANCE = 0.05
"""'Within 5 %' of the range in the benchmark tables."""
MIN_BENCH_POINTS = 40
"""Only logs with at least this many logged rewards enter the forecast benchmark."""

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
        v = mean_prediction(cf.predict, target_steps) if cf is not None else pers
        out[fam] = v if math.isfinite(v) else pers
    se = fit_response(tp, yp, "single_exponential", reward_bounds=bounds)
    v = mean_prediction(se.predict, target_steps) if se.status != "failed" and se._theta is not None else pers
    out["single_exponential"] = v if math.isfinite(v) else pers
    return out


def score_log(steps, reward, *, prefixes: Iterable[float] = PREFIXES,
              reward_bounds: tuple[float, float] | None = None, conformal: dict[str, Any] | None = None,
              baselines: bool = True) -> list[dict[str, Any]]:
    """The DESIGN.md protocol on one log: per prefix fraction, on the same row, the error (share of the whole
    curve's range) of the forecast and of each baseline (:data:`BASELINES`), whether the 80 % interval covered the
    target, the interval width (share of the range), the prefix's noise class, conformal stratum and score, and
    ``covered_levels``: {level: whether the interval at that level of :data:`LEVELS` covered the target}."""
    t, y = finite_curve(steps, reward)
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
        out["levels"][level_key(lvl)] = tab
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
                          "pooled; see rlvr_dynamics.doctor.forecast"})
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
    load_conformal_table.cache_clear()
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
        entry["coverage"] = float(np.mean([x["covered"] for x in sel])) if sel else math.nan
        entry["median_width"] = float(np.median([x["interval_width"] for x in sel])) if sel else math.nan
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
