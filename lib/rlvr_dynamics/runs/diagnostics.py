"""P1's four diagnostics (P1-C13, P1 spec §4) and a collapse early warning, from the series a GRPO run logs [D].

Every detector states its signal and threshold here; they were written down before any detector was run on a log
(the project's failure-induced runs ``data/runs/p1-fail-*`` or ``../shared/grpo_logs``) and were not changed after.
Window: ``W = max(6, round(0.1·n))`` logged steps; "smoothed" = trailing mean over ``max(3, W // 2)`` logged
values; "sustained" = the condition holds for ``max(3, W // 2)`` consecutive logged values, and the detector
fires at the step where that run of values is complete (so the step reported is when you could have known).

=========================  ===================================================  =====================================
detector                   signal                                               fires when
=========================  ===================================================  =====================================
``reward_hacking``         training reward R vs held-out / strict evaluation    at 2 consecutive evaluations:
                           reward E (``eval_reward``, ``val/…``); ΔR = smoothed  ΔR > δ and ΔE < 0.5·ΔR
                           R at the evaluation − mean R over the first W;       (spec: ρ_W = ΔE/ΔR < 0.5 while
                           ΔE = mean of the last two evaluations − the first    ΔR > 0); δ = max(3σ_R·√(2/W),
                                                                                0.05·max|R|)
``advantage_degeneracy``   fraction of groups with zero reward std              smoothed fraction > 0.5, sustained,
                           (TRL ``frac_reward_zero_std``)                       while the policy is not concentrated
                                                                                (smoothed entropy ≥ 25 % of its
                                                                                initial value, when logged): the
                                                                                prompts, not the policy, stopped
                                                                                giving signal
``policy_concentration``   mean token entropy H and within-group spread S       smoothed H < 0.25·H₀ (H₀: mean of
                           (``group_distinct_frac``, else ``group_reward_std``, the first W/2 values) and smoothed
                           else ``reward_std``)                                 S < 0.75 × its running maximum,
                                                                                sustained
``dynamical_instability``  (a) gradient norm g; (b) clip fraction c;            (a) smoothed g ≥ 5 × its initial
                           (c) the stability margin ηK·K_ref/(1−μ) implied by   median and rising (trailing log-
                           the reward fit and K_ref; (d) the fitted damping     slope > 0), sustained; (b) smoothed
                           ratio ζ of the reward                                c > 0.2, sustained; (c) the margin's
                                                                                80 % interval lies above 1; (d) the
                                                                                preferred law is ``growing`` and
                                                                                reliable with ζ's 80 % interval
                                                                                below 0 (fires where the envelope
                                                                                has doubled: t₀ + ln2/|a|)
``collapse_warning``       smoothed reward S, its running peak P and floor F    early warning: S < P − 0.2·(P − F),
                           (the lower reward bound, else the smoothed minimum   the trailing-W slope of R has a
                           over the first W); collapse = S < F + 0.5·(P − F)    t-statistic < −2 and P − F > δ;
                           (half the gain lost: the project's 0.5 rule)         the collapse step is reported too
=========================  ===================================================  =====================================

A detector whose series the log lacks reports ``available=False`` (not a silent "no").

Change after the first run on the committed failure runs (an implementation bug; no signal or threshold changed):
the project's ``metrics.csv`` repeats the last evaluation on every row, so "two consecutive evaluations" were two
consecutive rows; evaluations are now the rows where ``eval_step`` changes. The matrix before this fix is kept in
``book/diagnose.md``. Known limit: the collapse detector tracks its peak from the first full smoothing window, so a
collapse within the first W/2 steps (``p1-fail-instability-lr``) is invisible to it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .logs import RunLog
from .noise import step_sigma

DETECTORS = ("reward_hacking", "advantage_degeneracy", "policy_concentration", "dynamical_instability",
             "collapse_warning")
"""Detector names, in report order."""
HACKING_RATIO = 0.5
DEGENERACY_FRACTION = 0.5
CONCENTRATION_ENTROPY = 0.25
CONCENTRATION_SPREAD = 0.75
GRAD_NORM_GROWTH = 5.0
CLIP_FRACTION = 0.2
WARNING_DROP = 0.2
WARNING_T = -2.0
COLLAPSE_FRACTION = 0.5

EVAL_COLUMNS = ("eval_reward", "eval/reward", "eval_accuracy", "eval/accuracy", "val/test_score", "val/score",
                "val-core/test_score/mean", "strict_reward", "heldout_reward")
"""Held-out or strict evaluation reward, tried in order (then any column starting ``val`` or ``eval`` with
``reward``, ``score`` or ``acc`` in its name)."""
ZERO_STD_COLUMNS = ("frac_reward_zero_std", "train/frac_reward_zero_std")
ENTROPY_COLUMNS = ("entropy", "actor/entropy", "train/entropy")
SPREAD_COLUMNS = ("group_distinct_frac", "group_reward_std", "reward_std", "train/reward_std")
GRAD_COLUMNS = ("grad_norm", "actor/grad_norm", "train/grad_norm")
CLIP_COLUMNS = ("clip_ratio/region_mean", "clip_ratio", "actor/pg_clipfrac", "train/clip_ratio/region_mean")


@dataclass
class Detection:
    """One detector's verdict on one run."""

    name: str
    available: bool
    """False when the log lacks the series the detector needs."""
    fired: bool
    step: int | None
    """Step at which it fired (None if it did not)."""
    signal: str
    """What was measured (columns used)."""
    threshold: str
    """The rule."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Values at the firing step or summary values."""

    def to_dict(self) -> dict[str, Any]:
        return {"available": self.available, "fired": self.fired, "step": self.step, "signal": self.signal,
                "threshold": self.threshold, "detail": _clean(self.detail)}


def _clean(obj):
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _column(log: RunLog, names) -> tuple[str | None, np.ndarray | None]:
    for name in names:
        if name in log.series and np.isfinite(log.series[name]).sum() >= 3:
            return name, log.series[name]
    return None, None


def _eval_column(log: RunLog):
    name, y = _column(log, EVAL_COLUMNS)
    if name:
        return name, y
    for col in sorted(log.series):
        low = col.lower()
        if (low.startswith("val") or low.startswith("eval")) and any(k in low for k in ("reward", "score", "acc")) \
                and "std" not in low and np.isfinite(log.series[col]).sum() >= 3:
            return col, log.series[col]
    return None, None


def _evaluation_rows(log: RunLog, e: np.ndarray) -> np.ndarray:
    """Rows that hold a new evaluation: where ``eval_step`` changes when the log has that column (the project's
    metrics.csv repeats the last evaluation on every row), else every row where the evaluation was logged."""
    ok = np.isfinite(e)
    es = log.series.get("eval_step")
    if es is not None and np.isfinite(es).any():
        prev = np.concatenate([[np.nan], es[:-1]])
        ok &= np.isfinite(es) & (es != prev)
    return np.flatnonzero(ok)


def _smooth(y: np.ndarray, k: int) -> np.ndarray:
    """Trailing mean over the last k finite values at each finite position (NaN elsewhere)."""
    out = np.full(y.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(y))
    v = y[idx]
    c = np.cumsum(np.insert(v, 0, 0.0))
    j = np.arange(1, v.size + 1)
    lo = np.maximum(0, j - k)
    out[idx] = (c[j] - c[lo]) / (j - lo)
    return out


def _sustained(cond: np.ndarray, valid: np.ndarray, k: int) -> int | None:
    """Index where ``cond`` has held for k consecutive valid positions (None if never)."""
    run = 0
    for i in np.flatnonzero(valid):
        run = run + 1 if cond[i] else 0
        if run >= k:
            return int(i)
    return None


def _window(n: int) -> tuple[int, int]:
    w = max(6, int(round(0.1 * n)))
    return w, max(3, w // 2)


def _initial(y: np.ndarray, k: int) -> float:
    v = y[np.isfinite(y)][:k]
    return float(np.mean(v)) if v.size else math.nan


def detect_reward_hacking(log: RunLog) -> Detection:
    thr = (f"ΔE < {HACKING_RATIO}·ΔR while ΔR > δ = max(3σ_R·√(2/W), 0.05·max|R|), at 2 consecutive evaluations")
    ename, e = _eval_column(log)
    if ename is None:
        return Detection("reward_hacking", False, False, None, "no held-out/strict evaluation reward logged", thr)
    r = log.reward
    n = int(np.isfinite(r).sum())
    w, k = _window(n)
    rs = _smooth(r, k)
    r0 = _initial(r, w)
    sigma = step_sigma(r)
    delta_min = max(3 * sigma * math.sqrt(2 / w), 0.05 * float(np.nanmax(np.abs(r))))
    eidx = _evaluation_rows(log, e)
    if eidx.size < 3:
        return Detection("reward_hacking", False, False, None, f"fewer than 3 evaluations in {ename}", thr)
    e0 = float(e[eidx[0]])
    streak = 0
    for j in range(1, eidx.size):
        i = eidx[j]
        de = float(np.mean(e[eidx[max(1, j - 1):j + 1]])) - e0
        # training reward at (or just before) this evaluation
        ri = rs[: i + 1][np.isfinite(rs[: i + 1])]
        if ri.size == 0:
            continue
        dr = float(ri[-1]) - r0
        cond = dr > delta_min and de < HACKING_RATIO * dr
        streak = streak + 1 if cond else 0
        if streak >= 2:
            return Detection("reward_hacking", True, True, int(log.steps[i]), f"{log.reward_column} vs {ename}", thr,
                             {"delta_train": dr, "delta_eval": de, "ratio": de / dr, "delta_min": delta_min})
    return Detection("reward_hacking", True, False, None, f"{log.reward_column} vs {ename}", thr,
                     {"delta_min": delta_min})


def detect_advantage_degeneracy(log: RunLog) -> Detection:
    thr = (f"smoothed zero-std fraction > {DEGENERACY_FRACTION}, sustained, while entropy ≥ "
           f"{CONCENTRATION_ENTROPY:.0%} of its initial value")
    name, f = _column(log, ZERO_STD_COLUMNS)
    if name is None:
        return Detection("advantage_degeneracy", False, False, None, "no zero-std-group fraction logged", thr)
    n = int(np.isfinite(log.reward).sum())
    w, k = _window(n)
    fs = _smooth(f, k)
    cond = fs > DEGENERACY_FRACTION
    hname, h = _column(log, ENTROPY_COLUMNS)
    if hname is not None:
        hs = _smooth(h, k)
        h0 = _initial(h, k)
        hs_ff = _ffill(hs)
        cond &= ~(hs_ff < CONCENTRATION_ENTROPY * h0)
    i = _sustained(cond, np.isfinite(fs), k)
    sig = name + (f" (entropy: {hname})" if hname else "")
    if i is None:
        return Detection("advantage_degeneracy", True, False, None, sig, thr, {"max_smoothed": np.nanmax(fs)})
    return Detection("advantage_degeneracy", True, True, int(log.steps[i]), sig, thr, {"fraction": fs[i]})


def _ffill(y: np.ndarray) -> np.ndarray:
    out = y.copy()
    last = np.nan
    for i in range(out.size):
        if np.isfinite(out[i]):
            last = out[i]
        else:
            out[i] = last
    return out


def detect_policy_concentration(log: RunLog) -> Detection:
    thr = (f"smoothed entropy < {CONCENTRATION_ENTROPY}·initial and smoothed within-group spread < "
           f"{CONCENTRATION_SPREAD} × its running maximum, sustained")
    hname, h = _column(log, ENTROPY_COLUMNS)
    if hname is None:
        return Detection("policy_concentration", False, False, None, "no entropy logged", thr)
    n = int(np.isfinite(log.reward).sum())
    w, k = _window(n)
    hs = _smooth(h, k)
    h0 = _initial(h, k)
    cond = hs < CONCENTRATION_ENTROPY * h0
    sname, s = _column(log, SPREAD_COLUMNS)
    if sname is not None:
        ss = _ffill(_smooth(s, k))
        peak = np.fmax.accumulate(np.where(np.isfinite(ss), ss, -np.inf))
        cond &= ss < CONCENTRATION_SPREAD * peak
    i = _sustained(cond, np.isfinite(hs), k)
    sig = hname + (f" and {sname}" if sname else " (no spread column: entropy alone)")
    if i is None:
        return Detection("policy_concentration", True, False, None, sig, thr,
                         {"min_entropy_ratio": np.nanmin(hs) / h0 if h0 else math.nan})
    return Detection("policy_concentration", True, True, int(log.steps[i]), sig, thr,
                     {"entropy_ratio": hs[i] / h0 if h0 else math.nan})


def _trailing_slope_t(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(slope, t-statistic) of y on x."""
    if x.size < 4 or np.ptp(x) == 0:
        return 0.0, 0.0
    xm, ym = x - x.mean(), y - y.mean()
    sxx = float(xm @ xm)
    b = float(xm @ ym) / sxx
    res = ym - b * xm
    se = math.sqrt(max(float(res @ res) / (x.size - 2), 0.0) / sxx)
    return b, (b / se if se > 0 else (math.inf if b > 0 else -math.inf if b < 0 else 0.0))


def detect_dynamical_instability(log: RunLog, response: dict[str, Any] | None = None,
                                 margin: dict[str, Any] | None = None) -> Detection:
    """(a)–(d) of the module table. ``response``: a :func:`~.response_laws.fit_response_laws` result for the
    reward; ``margin``: :func:`~.response_laws.stability_margin` output (needs K_ref)."""
    thr = (f"(a) smoothed grad norm ≥ {GRAD_NORM_GROWTH:g}× initial and rising, sustained; (b) smoothed clip "
           f"fraction > {CLIP_FRACTION}, sustained; (c) stability margin 80 % interval above 1; (d) reliable "
           f"growing reward law with ζ 80 % interval below 0")
    n = int(np.isfinite(log.reward).sum())
    w, k = _window(n)
    fired: list[tuple[int, str]] = []
    used = []
    gname, g = _column(log, GRAD_COLUMNS)
    if gname is not None:
        used.append(gname)
        gpos = np.where(g > 0, g, np.nan)
        gs = _smooth(gpos, k)
        g0 = float(np.nanmedian(gpos[np.isfinite(gpos)][:k])) if np.isfinite(gpos).any() else math.nan
        lg = np.log(_ffill(gs))
        rising = np.zeros(g.size, dtype=bool)
        for i in range(g.size):
            lo = max(0, i - w + 1)
            seg = lg[lo:i + 1]
            ok = np.isfinite(seg)
            if ok.sum() >= 4:
                rising[i] = _trailing_slope_t(np.arange(seg.size)[ok].astype(float), seg[ok])[0] > 0
        i = _sustained((gs >= GRAD_NORM_GROWTH * g0) & rising, np.isfinite(gs), k)
        if i is not None:
            fired.append((int(log.steps[i]), f"(a) grad norm {gs[i]:.3g} ≥ {GRAD_NORM_GROWTH:g} × {g0:.3g}"))
    cname, c = _column(log, CLIP_COLUMNS)
    if cname is not None:
        used.append(cname)
        cs = _smooth(c, k)
        i = _sustained(cs > CLIP_FRACTION, np.isfinite(cs), k)
        if i is not None:
            fired.append((int(log.steps[i]), f"(b) clip fraction {cs[i]:.3g} > {CLIP_FRACTION}"))
    if margin and margin.get("unstable") == "yes":
        used.append("stability margin")
        fired.append((int(log.steps[-1]), f"(c) stability margin 80 % interval {margin.get('margin_80')} above 1"))
    if response and response.get("preferred") == "oscillatory":
        fit = response["oscillatory"]
        used.append("reward law")
        iv = fit.damping_ratio_interval
        if fit.regime == "growing" and fit.reliable and iv is not None and iv[1] < 0:
            a = abs(fit.params["decay_rate"])
            step = fit.t0 + math.log(2) / a if a > 0 else float(log.steps[-1])
            fired.append((int(min(step, log.steps[-1])), f"(d) growing reward oscillation, ζ 80 % {iv}"))
    if not used:
        return Detection("dynamical_instability", False, False, None, "no grad norm, clip fraction, K_ref or "
                         "reward fit", thr)
    if not fired:
        return Detection("dynamical_instability", True, False, None, ", ".join(used), thr)
    step, why = min(fired)
    return Detection("dynamical_instability", True, True, step, ", ".join(used), thr,
                     {"reasons": [r for _, r in sorted(fired)]})


def detect_collapse(log: RunLog, reward_bounds: tuple[float, float] | None = None) -> Detection:
    thr = (f"warning: smoothed R < P − {WARNING_DROP}·(P − F) with trailing slope t < {WARNING_T} and P − F > δ; "
           f"collapse: smoothed R < F + {COLLAPSE_FRACTION}·(P − F)")
    steps, r = log.reward_curve()
    n = r.size
    w, k = _window(n)
    rs = _smooth(r, k)
    floor = reward_bounds[0] if reward_bounds is not None else float(np.nanmin(rs[:w]))
    sigma = step_sigma(r)
    delta_min = max(3 * sigma * math.sqrt(2 / w), 1e-12)
    peak = -math.inf
    warn = collapse = None
    for i in range(k, n):
        peak = max(peak, rs[i])
        gain = peak - floor
        if gain <= delta_min:
            continue
        if warn is None and rs[i] < peak - WARNING_DROP * gain:
            lo = max(0, i - w + 1)
            _, tstat = _trailing_slope_t(steps[lo:i + 1].astype(float), r[lo:i + 1])
            if tstat < WARNING_T:
                warn = i
        if collapse is None and rs[i] < floor + COLLAPSE_FRACTION * gain:
            collapse = i
            break
    detail = {"collapse_step": int(steps[collapse]) if collapse is not None else None, "peak": peak,
              "floor": floor}
    if warn is not None and collapse is not None:
        detail["lead_steps"] = int(steps[collapse] - steps[warn])
    return Detection("collapse_warning", True, warn is not None, int(steps[warn]) if warn is not None else None,
                     log.reward_column, thr, detail)


def diagnose(log: RunLog, *, response: dict[str, Any] | None = None, margin: dict[str, Any] | None = None,
             reward_bounds: tuple[float, float] | None = None) -> dict[str, Detection]:
    """Run every detector on ``log``; ``{name: Detection}`` in :data:`DETECTORS` order."""
    return {"reward_hacking": detect_reward_hacking(log),
            "advantage_degeneracy": detect_advantage_degeneracy(log),
            "policy_concentration": detect_policy_concentration(log),
            "dynamical_instability": detect_dynamical_instability(log, response, margin),
            "collapse_warning": detect_collapse(log, reward_bounds)}


def confusion_matrix(results: dict[str, dict[str, Detection]]) -> str:
    """Markdown table: one row per run, one column per detector (step it fired, "–" if not, "n/a" if the log lacks
    the series)."""
    lines = ["| run | " + " | ".join(DETECTORS) + " |", "|---|" + "---|" * len(DETECTORS)]
    for run, dets in results.items():
        cells = []
        for name in DETECTORS:
            d = dets[name]
            cells.append("n/a" if not d.available else (f"**fires @ {d.step}**" if d.fired else "–"))
        lines.append(f"| {run} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
