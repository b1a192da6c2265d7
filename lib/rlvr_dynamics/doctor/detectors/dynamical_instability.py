"""Dynamical instability: the optimisation itself blows up.

What it detects
    A growing grad norm, a large clip fraction, a KL jump, an entropy blow-up, a widening step-to-step envelope of
    the reward next to one of those, a stability margin above 1, or a reading of the reward curve as unstable.

Why it matters in GRPO
    P1 models the reward as a damped oscillator whose damping falls with the learning rate and the refresh interval
    K_ref: past the margin ηK·K_ref/(1 − μ) = 1 the run oscillates with growing amplitude (P1-C10). In practice the
    optimiser's own signals (grad norm, clipping, KL, entropy) show it before the reward does.

Signals
    (a) grad norm g; (b) clip fraction c (only when ever non-zero: TRL num_iterations=1 logs 0); (e) |Δreward|
    envelope; (f) KL; (g) entropy; (c) the stability margin ηK·K_ref/(1−μ) from the fit and K_ref;
    (d) :func:`~rlvr_dynamics.doctor.reading.dynamics.read_dynamics`.

Rule
    (a) smoothed log g ≥ log 5 + log g₀ (g₀: median of the first k) and rising (trailing slope > 0), sustained;
    (b) smoothed c > 0.2, sustained; (e) trailing std of Δr over 10 rows ≥ 3·max(√2·σ of the first half of the
    prefix, 0.01 × running range), sustained, and only within 20 rows of an (a), (b), (f) or (g) event;
    (f) smoothed KL ≥ 10 × its value k rows earlier and > 0.01 (log-KL), sustained; (g) smoothed H ≥ 2 × its
    running min after the first 2k rows AND ≥ 1.5 × its initial level (mean of the first k), sustained; (c) the
    margin's 80 % interval above 1; (d) verdict ``unstable``. (c) and (d) are whole-prefix readings and fire at the
    last step.
    The optimiser's own signals (a), (b), (f), (g) count only within REWARD_CORROBORATION = 20 logged rows of a
    reward fall — the reward's trailing mean REWARD_FALL_FRACTION = 20 % of its gain below its running peak,
    significantly on its own noise window (:func:`~rlvr_dynamics.doctor.precursors.reward_fall`) — or of a
    collapse-warning event (:mod:`.collapse_warning`: a reward fall of 40 % with a precursor, three precursors at
    once, or a failure signal; a one-prompt reward cannot show its fall in time); such an event is dated at the later
    of its own row and the first corroborating row (``signal_step`` keeps its own).

Dev evidence for its constants
    (g)'s ENTROPY_ABOVE_INITIAL was added on the corpus dev part (v2) before its test part was scored. (e) counts
    only next to (a), (b), (f) or (g) (ENVELOPE_CORROBORATION = 20 rows): alone it caught none of the 80 simulated
    unstable dev runs and fired on 3 of the 4 healthy one-prompt-per-step Unsloth logs. Test part: 0/207 false
    alarms on healthy runs, 14/42 induced instabilities caught. The corroboration of (a), (b), (f), (g) by the
    reward or the collapse warning was set on the development part (2026-12-06): without it those signals fired on
    4 of the 25 healthy course logs (entropy 25–43× its running minimum while the reward held or rose; grad norm
    8–22× its first median while the reward rose off the floor, as it does when groups gain reward spread), on 5
    of the project's 126 healthy runs and on 7 of 190 surrogates; with it on 1 course log (a clip-free run whose
    reward fell 0.69 → 0.34 for five steps while its grad norm reached 10⁷: a real, recovered blow-up), none of
    the project's and 3 surrogates (of that run); both course runs labelled unstable still fire, and 63 of the 64
    simulated collapses it fired on. History: the design notes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...runs.logs import RunLog
from ..precursors import reward_fall, reward_floor
from ..signals import CLIP_COLUMNS, ENTROPY_COLUMNS, GRAD_COLUMNS, KL_COLUMNS, column
from .collapse_warning import detect_collapse
from .causal import (K_MAX, SIGMA_FIRST, Detection, sustained_events, full_window, on_rows, detection, running_initial_mean,
                      running_initial_median, running_scale, smoothed, trailing_mean, trailing_slope_t,
                      causal_sigma, noise_window)

GRAD_NORM_GROWTH = 5.0
"""(a) smoothed grad norm ≥ this × its initial median."""
CLIP_FRACTION = 0.2
"""(b) smoothed clip fraction above this."""
ENVELOPE_GROWTH = 3.0
"""(e) trailing std of Δreward ≥ this × √2σ (σ of the first half of the prefix)."""
ENVELOPE_WINDOW = 10
"""(e) rows of the trailing std of Δreward."""
ENVELOPE_CORROBORATION = 20
"""(e) counts only within this many logged rows of an (a), (b), (f) or (g) event."""
REWARD_CORROBORATION = 20
"""(a), (b), (f), (g) count only within this many logged rows of a reward fall (REWARD_FALL_FRACTION) or of a
collapse-warning event."""
REWARD_FALL_FRACTION = 0.2
"""… the reward's trailing mean this fraction of its gain below its running peak, significantly."""
ENVELOPE_FLOOR = 0.01
"""(e) the noise baseline is at least this × the reward's running range."""
KL_JUMP = 10.0
"""(f) smoothed KL ≥ this × its value k rows earlier."""
KL_FLOOR = 0.01
"""(f) and only when the smoothed KL is above this."""
ENTROPY_BLOWUP = 2.0
"""(g) smoothed entropy ≥ this × its running minimum …"""
ENTROPY_ABOVE_INITIAL = 1.5
"""(g) … and ≥ this × its initial level."""


def _growth_events(log: RunLog, y: np.ndarray, cond_fn, label: str) -> list[dict]:
    """Events of a growth rule on a positive diagnostic series: ``cond_fn(values, smoothed, k) -> (cond, ratio)``
    on its finite values with the noise-scaled window for a factor-2 effect on log y."""
    ok = np.isfinite(y) & (y > 0)
    if ok.sum() < SIGMA_FIRST:
        return []
    ly = np.where(ok, np.log(np.where(ok, y, 1.0)), np.nan)
    v = ly[ok]
    sig = causal_sigma(v)
    k = noise_window(sig, math.log(2.0))
    s = trailing_mean(v, k)
    cond, ratio = cond_fn(v, s, k)
    cond = cond & full_window(k)
    rows = np.flatnonzero(ok)
    return [{"step": int(log.steps[rows[i]]), "reason": label, "ratio": float(ratio[i])} for i in sustained_events(cond, k)]


def detect_dynamical_instability(log: RunLog, response: dict[str, Any] | None = None,
                                 margin: dict[str, Any] | None = None,
                                 reward_bounds: tuple[float, float] | None = None, *,
                                 reading: bool = True, warning: Detection | None = None) -> Detection:
    """(a)–(g) of the module docstring's Rule. ``response``: a
    :func:`~rlvr_dynamics.doctor.reading.response_laws.fit_response_laws` result for the reward (passed to the
    reading); ``margin``: :func:`~rlvr_dynamics.doctor.reading.response_laws.stability_margin` output (needs
    K_ref); ``reading=False`` skips (d) (the causal signals only); ``warning``: the ``collapse_warning`` detection
    of this log with these bounds, when the caller has it (made here only if an optimiser signal needs it)."""
    thr = (f"(a) smoothed grad norm ≥ {GRAD_NORM_GROWTH:g}× initial and rising; (b) smoothed clip fraction > "
           f"{CLIP_FRACTION}; (e) std of Δreward over {ENVELOPE_WINDOW} rows ≥ {ENVELOPE_GROWTH:g}·√2σ (σ of the "
           f"first half); (f) KL ×{KL_JUMP:g} within "
           f"a window; (g) entropy ≥ {ENTROPY_BLOWUP:g}× its running min and ≥ {ENTROPY_ABOVE_INITIAL:g}× initial; all sustained; (c) stability margin 80 % "
           f"interval above 1; (d) reading verdict 'unstable'")
    events: list[dict] = []
    used = []
    gname, g = column(log, GRAD_COLUMNS)
    if gname is not None:
        used.append(gname)

        def grad_rule(v, s, k):
            g0 = np.array([np.median(v[:kk]) for kk in np.minimum(k, np.arange(1, v.size + 1))]) \
                if v.size <= 64 else running_initial_median(v, k)
            rising = trailing_slope_t(v, np.maximum(k, 4)) > 0
            return (s >= math.log(GRAD_NORM_GROWTH) + g0) & rising, np.exp(s - g0)
        events += _growth_events(log, g, grad_rule, "(a) grad norm")
    cname, c = column(log, CLIP_COLUMNS)
    if cname is not None and np.nanmax(np.abs(c)) > 0:
        used.append(cname)
        cs, k, _ = smoothed(c, lambda v, s: np.full(v.size, CLIP_FRACTION / 2))
        cond = on_rows(log, c, (full_window(k) & (cs > CLIP_FRACTION)).astype(float)) > 0.5
        kr = np.nan_to_num(on_rows(log, c, k.astype(float)), nan=K_MAX).astype(int)
        csr = on_rows(log, c, cs)
        events += [{"step": int(log.steps[i]), "reason": "(b) clip fraction", "ratio": csr[i]}
                   for i in sustained_events(cond, kr)]
    steps, r = log.reward_curve()
    if r.size >= SIGMA_FIRST:
        used.append(f"|Δ{log.reward_column}|")
        d = np.concatenate([[0.0], np.diff(r)])
        kw = np.full(r.size, ENVELOPE_WINDOW)
        m1 = trailing_mean(d, kw)
        rms = np.sqrt(np.maximum(trailing_mean(d * d, kw) - m1 * m1, 0.0))   # spread of Δr, trend removed
        full = np.arange(1, r.size + 1) >= ENVELOPE_WINDOW + 1
        sig_r = causal_sigma(r)
        base = np.maximum(math.sqrt(2.0) * sig_r[np.arange(r.size) // 2],   # σ of the first half of the prefix
                          ENVELOPE_FLOOR * running_scale(r))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(base > 0, rms / base, 0.0)
        cond = full & (np.arange(r.size) >= 2 * ENVELOPE_WINDOW) & (ratio >= ENVELOPE_GROWTH)
        rows = np.flatnonzero(np.isfinite(log.reward))
        envelope = [{"step": int(log.steps[rows[i]]), "reason": "(e) |Δreward| envelope", "ratio": float(ratio[i])}
                    for i in sustained_events(cond, ENVELOPE_WINDOW)]
    else:
        envelope = []
    kname, kl = column(log, KL_COLUMNS)
    if kname is not None:
        used.append(kname)

        def kl_rule(v, s, k):
            idx = np.arange(v.size)
            prev = s[np.maximum(idx - k, 0)]
            jump = s - prev
            return (idx >= k) & (jump >= math.log(KL_JUMP)) & (s >= math.log(KL_FLOOR)), np.exp(jump)
        events += _growth_events(log, kl, kl_rule, "(f) KL jump")
    hname, h = column(log, ENTROPY_COLUMNS)
    if hname is not None:
        used.append(hname)

        def ent_rule(v, s, k):
            full = full_window(k)
            low = np.minimum.accumulate(np.where(full, s, np.inf))
            h0 = running_initial_mean(v, k)           # log of the initial level (mean of the first k logs)
            above = s - h0 >= math.log(ENTROPY_ABOVE_INITIAL)
            return full & (s - low >= math.log(ENTROPY_BLOWUP)) & above, np.exp(s - low)
        events += _growth_events(log, np.abs(h), ent_rule, "(g) entropy blow-up")
    events = _corroborated(log, events, reward_bounds, warning)
    # (e) alone is the noise of a reward that climbs (a shaped reward's terms switching on, a success rate leaving 0
    # make every step noisier) as often as a blow-up: it counts only next to a causal signal of the optimisation
    # itself, (a), (b), (f) or (g), within ENVELOPE_CORROBORATION rows
    pos = {int(s): i for i, s in enumerate(log.steps)}
    others = np.array(sorted(pos[e["step"]] for e in events), dtype=int)
    events += [e for e in envelope
               if others.size and np.min(np.abs(others - pos[e["step"]])) <= ENVELOPE_CORROBORATION]
    last = int(log.steps[-1])
    if margin and margin.get("unstable") == "yes":
        used.append("stability margin")
        events.append({"step": last, "reason": f"(c) stability margin 80 % interval {margin.get('margin_80')} "
                                               "above 1"})
    if reading and r.size >= SIGMA_FIRST:
        verdict = _reading_verdict(steps, r, reward_bounds, response)
        if verdict is not None:
            used.append("reading")
            if verdict[0] == "unstable":
                events.append({"step": last, "reason": f"(d) reading: unstable ({verdict[1]})"})
    if not used:
        return Detection("dynamical_instability", False, False, None, "no grad norm, clip fraction, KL, entropy, "
                         "K_ref or reward", thr)
    det = detection("dynamical_instability", ", ".join(used), thr, events)
    if det.fired:
        det.detail["reasons"] = [e["reason"] for e in det.events]
    return det


def _corroborated(log: RunLog, events: list[dict], reward_bounds, warning: Detection | None) -> list[dict]:
    """The optimiser's events that lie within REWARD_CORROBORATION logged rows of a reward fall
    (REWARD_FALL_FRACTION, :func:`~rlvr_dynamics.doctor.precursors.reward_fall`) or of a collapse-warning event,
    each dated at the later of its own row and the first such row in that window (the row where both could be
    known; causal), ``signal_step`` its own step. A grad norm, clip fraction, KL or entropy that grows while the
    reward holds or rises, with no collapse warning, is a run changing how it learns, not an unstable one."""
    if not events:
        return []
    r = np.asarray(log.reward, dtype=float)
    beside = reward_fall(r, reward_floor(r, reward_bounds), REWARD_FALL_FRACTION)
    pos = {int(s): i for i, s in enumerate(log.steps)}
    if warning is None:
        warning = detect_collapse(log, reward_bounds)
    for e in warning.events:
        beside[pos[int(e["step"])]] = True
    out, seen = [], set()
    for e in events:
        i = pos[e["step"]]
        lo = max(0, i - REWARD_CORROBORATION)
        hit = np.flatnonzero(beside[lo: i + REWARD_CORROBORATION + 1])
        if not hit.size:
            continue
        step = int(log.steps[max(i, lo + int(hit[0]))])
        if (step, e["reason"]) not in seen:
            seen.add((step, e["reason"]))
            out.append({**e, "step": step, "signal_step": e["step"]})
    return sorted(out, key=lambda e: e["step"])


def _reading_verdict(steps, reward, reward_bounds, response) -> tuple[str, str] | None:
    """(verdict, reason) of :func:`~rlvr_dynamics.doctor.reading.dynamics.read_dynamics`, or None while that
    module is absent."""
    try:
        from ..reading.dynamics import read_dynamics
    except ImportError:
        return None
    rd = read_dynamics(steps, reward, reward_bounds=reward_bounds, fits=response)
    return str(rd.verdict), str(getattr(rd, "reason", ""))

