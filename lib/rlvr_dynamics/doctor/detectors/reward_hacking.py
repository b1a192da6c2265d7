"""Reward hacking: the training reward rises while what it stands for falls.

What it detects
    The training reward R going up while (i) a held-out or strict evaluation E goes down, or (ii) a correctness
    sub-reward falls while the format sub-rewards rise.

Why it matters in GRPO
    GRPO optimises whatever the verifier scores. A reward made of format and correctness terms can be raised by the
    format terms alone, and a training reward can keep climbing while the held-out accuracy falls (P1-C13, P1 spec
    §4). The training curve alone looks healthy: the divergence is the only sign.

Signals
    The training reward; an evaluation column (``eval_…``, ``val/…``:
    :data:`~rlvr_dynamics.doctor.signals.EVAL_COLUMNS`)
    at the rows where a new evaluation arrived; or the sub-rewards ``rewards/<name>`` (TRL, Unsloth), a name with
    format/xml/strict/soft/int_reward/number a format term, else one with correct/answer/accura/exact a correctness
    term.

Rule
    R (smoothed, effect = 0.1 × its running range) has risen: S_R − R₀ > δ_R = 3σ_R√(2/k). And (i) at 2 consecutive
    evaluations (≥ 6 evaluations logged): the mean of the last 3 E < the running max of such means − δ_E,
    δ_E = max(3σ_E√(2/3), 0.05·max|E|) + b·σ_E/√3 (b = √(2·ln(n/3)), the lift noise gives the running max of
    n/3 means), while the smoothed R ≥ its value at the evaluation's peak − δ_R (train and
    eval diverge; both falling is a collapse); or (ii) the smoothed C < P_C − max(3σ_C√(1/k + 1/4k),
    0.05·max(range_C, range_R)), P_C the running peak of a 4k smoothing, while ΣF smoothed has risen
    > max(3σ_F√(2/k_F), 0.1·range_F) since that peak, sustained k. A greedy evaluation that starts higher or
    saturates never fires.

Dev evidence for its constants
    The 3-evaluation mean, the "training reward has not fallen" condition and the 4k peak smoothing were set on the
    corpus dev part (v2) before its test part was scored; the floor HACKING_MIN_DROP × the training reward's range
    was added after a 0.01 dip of a correctness term that was 0 so far fired on a healthy Unsloth log. Test part:
    6/152 false alarms on healthy runs, 8/16 induced hacking runs caught (``book/doctor_benchmark.md``). History:
    the design notes.
"""
from __future__ import annotations

import math

import numpy as np

from ...runs.logs import RunLog
from ...runs.noise import step_sigma
from ..signals import eval_column, evaluation_rows, sub_rewards
from .prefix_noise import peak_bias
from .causal import (K_MAX, PEAK_WINDOW, SIGMA_FIRST, Detection, sustained_events, full_window, on_rows, detection, running_scale,
                      smoothed, trailing_mean, causal_sigma)

HACKING_EFFECT = 0.1
"""Smoothing effect: 0.1 × the series' running range."""
HACKING_Z = 3.0
"""z of every significance margin (δ_R, δ_E, δ_C, the format rise)."""
HACKING_MIN_DROP = 0.05
"""A fall counts only beyond this fraction of the series' scale (and, for a sub-reward, of the training reward's)."""
HACKING_EVALS = 3
"""Evaluations averaged; 2·HACKING_EVALS evaluations are needed before (i) can fire."""


def detect_reward_hacking(log: RunLog) -> Detection:
    """The rule of the module docstring: the training reward rises while (i) the evaluation falls at two
    consecutive evaluations or (ii) a correctness sub-reward falls below its running peak, sustained."""
    thr = (f"R risen by δ_R = {HACKING_Z:g}σ_R√(2/k) while (i) the mean of the last {HACKING_EVALS} evaluations < "
           f"the running max of such means − max({HACKING_Z:g}σ_E√(2/{HACKING_EVALS}), {HACKING_MIN_DROP}·scale_E) "
           f"at 2 consecutive evaluations and R has not fallen since that peak, or (ii) a correctness sub-reward < "
           f"its smoothed running peak − δ_C while the format sub-rewards rose, sustained")
    ename, e = eval_column(log)
    corr, fmt = sub_rewards(log)
    use_sub = bool(corr and fmt)
    if ename is None and not use_sub:
        return Detection("reward_hacking", False, False, None, "no held-out/strict evaluation reward or correctness "
                         "+ format sub-rewards logged", thr)
    r = log.reward
    ok = np.isfinite(r)
    rv = r[ok]
    scale_r = running_scale(rv)
    rs, k, sig = smoothed(r, lambda v, s: HACKING_EFFECT * scale_r)
    kb = np.minimum(k, rv.size)
    base = np.cumsum(rv)[kb - 1] / kb   # mean of the first k_i values
    rise = rs - base
    delta_r = HACKING_Z * sig * np.sqrt(2.0 / k)
    risen = full_window(k) & (rise > delta_r)
    risen_rows = on_rows(log, r, risen.astype(float)) > 0.5
    rise_rows = on_rows(log, r, rise)
    events, signals = [], [log.reward_column]
    if ename is not None:
        eidx = evaluation_rows(log, e)
        if eidx.size >= 2 * HACKING_EVALS:
            signals.append(ename)
            ev = e[eidx]
            sig_e = causal_sigma(ev)
            early = min(ev.size, SIGMA_FIRST - 1)
            sig_e[:early] = [step_sigma(ev[:j + 1]) for j in range(early)]
            m = HACKING_EVALS
            recent = trailing_mean(ev, np.full(ev.size, m))
            fullm = np.arange(ev.size) >= m - 1
            peak = np.maximum.accumulate(np.where(fullm, recent, -np.inf))   # running max of m-evaluation means
            at_peak = np.maximum.accumulate(np.where(fullm & (recent >= peak), np.arange(ev.size), 0))
            scale_e = np.maximum.accumulate(np.abs(ev))
            # the running max of n/m such means is lifted by noise about √(2·ln(n/m)) of their SEs σ_E/√m
            lift = np.array([peak_bias(j + 1, m) for j in range(ev.size)]) * sig_e / math.sqrt(m)
            drop = np.maximum(HACKING_Z * sig_e * math.sqrt(2.0 / m), HACKING_MIN_DROP * scale_e) + lift
            rs_rows = on_rows(log, r, rs)
            dr_rows = on_rows(log, r, delta_r)
            # the training reward has not fallen since the evaluation's peak (a divergence, not a collapse)
            held = rs_rows[eidx] >= rs_rows[eidx[at_peak]] - dr_rows[eidx]
            fell = (recent < peak - drop) & (np.arange(ev.size) >= 2 * m - 1) & risen_rows[eidx] & held
            for j in sustained_events(fell, 2):
                i = int(eidx[j])
                events.append({"step": int(log.steps[i]), "kind": "evaluation fell", "eval": recent[j],
                               "eval_peak": peak[j], "drop_min": drop[j], "delta_train": rise_rows[i]})
    if use_sub:
        signals += corr
        fmt_sum = np.nansum([log.series[c] for c in fmt], axis=0)
        fmt_ok = np.all([np.isfinite(log.series[c]) for c in fmt], axis=0)
        fmt_sum = np.where(fmt_ok, fmt_sum, np.nan)
        fsv = fmt_sum[fmt_ok]
        fs_s, kf, sf = smoothed(fmt_sum, lambda v, s: HACKING_EFFECT * running_scale(fsv))
        fs_rows, kf_rows = on_rows(log, fmt_sum, fs_s), on_rows(log, fmt_sum, kf.astype(float))
        sf_rows = on_rows(log, fmt_sum, sf)
        fr_rows = on_rows(log, fmt_sum, running_scale(fsv))
        for col in corr:
            c = log.series[col]
            cv = c[np.isfinite(c)]
            scale_c = running_scale(cv)
            cs, kc, sc = smoothed(c, lambda v, s: HACKING_EFFECT * scale_c)
            # peak of a PEAK_WINDOW-times longer smoothing: a running max of short means is biased up by noise
            cl = trailing_mean(cv, PEAK_WINDOW * kc)
            full = full_window(kc, PEAK_WINDOW)
            pk = np.maximum.accumulate(np.where(full, cl, -np.inf))
            at_pk = np.maximum.accumulate(np.where(full & (cl >= pk), np.arange(cv.size), 0))
            dc = HACKING_Z * sc * np.sqrt(1.0 / kc + 1.0 / (PEAK_WINDOW * kc))
            # the fall must also matter next to the training reward's own scale: a correctness term that
            # dips from 0 to -0.01 while the format terms jump by 2 is no hacking
            scale_rc = np.nan_to_num(on_rows(log, r, scale_r)[np.isfinite(c)], nan=0.0)
            cond_c = full & (cs < pk - np.maximum(dc, HACKING_MIN_DROP * np.maximum(scale_c, scale_rc)))
            crow = np.flatnonzero(np.isfinite(c))
            cond_rows = (on_rows(log, c, cond_c.astype(float)) > 0.5) & risen_rows
            # format rose significantly since the correctness peak
            pk_rows = on_rows(log, c, crow[at_pk].astype(float))
            pk_idx = np.nan_to_num(pk_rows, nan=0).astype(int)
            dfmt = np.maximum(HACKING_Z * sf_rows * np.sqrt(2.0 / np.maximum(np.nan_to_num(kf_rows, nan=K_MAX), 1)),
                              HACKING_EFFECT * fr_rows)
            cond_rows &= np.nan_to_num(fs_rows - fs_rows[pk_idx] > dfmt, nan=0).astype(bool)
            kr = on_rows(log, c, kc.astype(float))
            for i in sustained_events(cond_rows, np.nan_to_num(kr, nan=K_MAX).astype(int)):
                events.append({"step": int(log.steps[i]), "kind": f"{col} fell", "delta_train": rise_rows[i]})
    return detection("reward_hacking", " vs ".join(signals), thr, events)

