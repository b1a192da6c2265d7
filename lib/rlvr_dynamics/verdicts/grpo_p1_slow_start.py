"""The relative margin of a one-sided pass rule: how the binding part of a composite rule is chosen.

P1-C8's PASS rule (``book/claims.yml``) is composite: the worst ΔBIC over the in-scope runs must be below ``dbic``
(rule ``dbic_worst``) **and** the worst slow start R'(0)/max R' at most ``slope_frac`` (``slow_start_worst``). An
evidence row records one deciding statistic, the binding part: the one with the smallest relative margin
m = (bound − measured)/|bound| (positive on the PASS side, negative when violated), i.e. for a PASS the part closest
to its bound and otherwise the part that misses it by the most.
:func:`rlvr_dynamics.verdicts.check.binding` applies this margin for every GRPO page (notebook
``grpo_p1_slow_start`` among them); :func:`relative_margin` states it for one ``<`` / ``<=`` rule of the ledger.
"""
from __future__ import annotations


def relative_margin(rule: dict, measured: float) -> float:
    """(bound − measured)/|bound| for a ``<``/``<=`` rule (``claims.rule``): positive on the PASS side, negative when
    violated. ValueError for another op or a zero bound."""
    if rule["op"] not in ("<", "<="):
        raise ValueError(f"rule {rule.get('name')!r}: op must be '<' or '<=', got {rule['op']!r}")
    bound = float(rule["bound"])
    if bound == 0:
        raise ValueError(f"rule {rule.get('name')!r}: a relative margin needs a non-zero bound")
    return (bound - float(measured)) / abs(bound)


# ---- P1-C8 on GRPO curves, rule amended 2026-12-02 (book/claims.yml): the slow-start bound the theory can meet,
# the runs that are valid, and the test's power by simulation

def slow_start_ratio(t, curve) -> float:
    """R'(0)/max R' of a curve sampled on the grid ``t``, slopes by ``numpy.gradient`` (the first one a forward
    difference), as :func:`rlvr_dynamics.verdicts.grpo_p1.run_row` reads the three-phase fit."""
    import numpy as np

    slope = np.abs(np.gradient(np.asarray(curve, float), np.asarray(t, float)))
    return float(slope[0] / slope.max()) if slope.max() > 0 else float("nan")


def theory_times(t_slow: float, t_fast: float, momentum: float) -> tuple[float, float]:
    """The three-phase law's two times when its fast time is the heavy-ball inertial time 1/(1 − μ) (P1 §3.5: the
    velocity builds up over 1/(1 − μ) steps) and the mean rise time T_s + T_f of a fitted three-phase curve is kept
    (∫(1 − u) dt = T_s + T_f for the law's unit response u): returns ``(T_s', 1/(1 − μ))`` with T_s' = T_s + T_f −
    1/(1 − μ), at least one step."""
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
    inertial = 1.0 / (1.0 - momentum)
    return max(float(t_slow) + float(t_fast) - inertial, 1.0), inertial


def theory_slow_start_bound(n_steps: int, t_slow: float, t_fast: float, momentum: float) -> dict:
    """The slow-start bound a curve that follows the theory can meet [D]: ρ = R'(0)/max R' of the three-phase law
    with the times of :func:`theory_times` on the integer grid 0..n_steps−1 (0.1–0.15 at μ = 0.9 for a rise over
    10–30 steps: with torch's buffer the first update is already 1 − μ of the steady one), and the bound √ρ, the
    geometric midpoint between the theory's value and 1, the value of a single exponential (no slow start): a curve
    below it is nearer the theory than the single exponential. Returns ``{"rho", "bound", "t_slow", "t_fast"}``."""
    import numpy as np

    from ..p1 import laws

    ts, tf = theory_times(t_slow, t_fast, momentum)
    t = np.arange(int(n_steps), dtype=float)
    rho = slow_start_ratio(t, laws.three_phase(t, 0.0, 1.0, ts, tf))
    return dict(rho=rho, bound=float(np.sqrt(rho)), t_slow=ts, t_fast=tf)


def collapsed_mid_run(reward, window: int) -> bool:
    """The validity rule for a run (DESIGN's collapse rule, fixed before the retest): True when the trailing
    ``window``-step mean of the reward falls below half its running peak at some step after the first window."""
    import numpy as np

    from ..runs.analysis import rolling_mean

    ys = rolling_mean(np.asarray(reward, float), window)
    peak = np.maximum.accumulate(ys)
    return bool(np.any(ys[window:] < 0.5 * peak[window:]))


def ar1_noise(n_sim: int, n: int, sigma: float, phi: float, rng) -> "np.ndarray":
    """``n_sim`` stationary AR(1) series of length ``n`` with marginal SD ``sigma`` and lag-1 autocorrelation
    ``phi`` (vectorised over the series)."""
    import math

    import numpy as np

    z = rng.standard_normal((n_sim, n))
    e = np.empty_like(z)
    e[:, 0] = z[:, 0]
    for k in range(1, n):
        e[:, k] = phi * e[:, k - 1] + math.sqrt(1 - phi * phi) * z[:, k]
    return sigma * e


def slow_start_power(n_steps: int, theory: dict, single: dict, *, sigma: float, phi: float, bound: float,
                     dbic: float, n_sim: int = 200, seed: int = 0) -> dict:
    """Size and power of P1-C8's per-run PASS rule (ΔBIC < ``dbic`` and R'(0)/max R' ≤ ``bound``) with a run's
    noise, by simulation: ``n_sim`` curves from the theory (``theory`` = three-phase parameters r0, r_inf, t_slow,
    t_fast) and ``n_sim`` from the single exponential (``single`` = r0, r_inf, timescale), each plus AR(1) noise
    (``sigma``, ``phi``), fitted by the notebooks' fit (:func:`rlvr_dynamics.p1.laws.compare_laws`, bounds from
    :func:`rlvr_dynamics.doctor.pipeline.resolve_reward_bounds`). Returns ``{"power", "false_pass", "dbic_pass",
    "slow_pass", "n_sim"}``: ``power`` the share of theory curves that pass, ``false_pass`` that of single-exponential
    curves, ``dbic_pass`` / ``slow_pass`` the theory curves passing each part."""
    import numpy as np

    from ..doctor.pipeline import resolve_reward_bounds
    from ..p1 import laws

    rng = np.random.default_rng(seed)
    t = np.arange(int(n_steps), dtype=float)
    truths = {"theory": laws.three_phase(t, theory["r0"], theory["r_inf"], theory["t_slow"], theory["t_fast"]),
              "single": laws.single_exponential(t, single["r0"], single["r_inf"], single["timescale"])}
    out = {}
    for name, mean in truths.items():
        noise = ar1_noise(n_sim, t.size, sigma, phi, rng)
        d_ok, s_ok = [], []
        for e in noise:                                      # one nonlinear fit per simulated curve
            y = mean + e
            fit = laws.compare_laws(t, y, r_bounds=resolve_reward_bounds(y))
            d_ok.append(fit["delta_bic"] < dbic)
            s_ok.append(slow_start_ratio(t, fit["three_phase"].predict(t)) <= bound)
        d_ok, s_ok = np.array(d_ok), np.array(s_ok)
        out[name] = (float(np.mean(d_ok & s_ok)), float(np.mean(d_ok)), float(np.mean(s_ok)))
    return dict(power=out["theory"][0], dbic_pass=out["theory"][1], slow_pass=out["theory"][2],
                false_pass=out["single"][0], n_sim=int(n_sim))


def power_inputs(row: dict, momentum: float) -> dict:
    """The simulation inputs of :func:`slow_start_power` for one judged run (a
    :func:`rlvr_dynamics.verdicts.grpo_p1.run_row` dict): the theory's law (R0, R∞ of the run's three-phase fit,
    times :func:`theory_times`), the run's single-exponential fit, and σ, φ (clipped to [0, 0.95]) of the three-phase
    fit's residuals."""
    import numpy as np

    fit = row["fit"]
    tp, se = fit["three_phase"].params, fit["single_exponential"].params
    tt = np.asarray(row["t"], float) - float(row["t"][0])
    resid = np.asarray(row["y"], float) - fit["three_phase"].predict(tt)
    phi = float(np.clip(np.corrcoef(resid[:-1], resid[1:])[0, 1], 0.0, 0.95))
    ts, tf = theory_times(tp["t_slow"], tp["t_fast"], momentum)
    return dict(n_steps=int(tt.size), sigma=float(np.std(resid, ddof=1)), phi=phi,
                theory=dict(r0=float(tp["r0"]), r_inf=float(tp["r_inf"]), t_slow=ts, t_fast=tf),
                single=dict(r0=float(se["r0"]), r_inf=float(se["r_inf"]), timescale=float(se["timescale"])))


def power_table(rows: list[dict], momenta: list[float], v8: dict, *, seed: int = 0) -> dict:
    """``{run id: {**power_inputs, "bound", **slow_start_power}}`` for the judged runs ``rows`` (their momenta in
    the same order), ``v8["power_sims"]`` curves each, seeded per run (``seed`` + index)."""
    out = {}
    for k, (w, mu) in enumerate(zip(rows, momenta)):
        inp = power_inputs(w, mu)
        res = slow_start_power(inp["n_steps"], inp["theory"], inp["single"], sigma=inp["sigma"], phi=inp["phi"],
                               bound=float(w["slow_start_bound"]), dbic=float(v8["dbic"]),
                               n_sim=int(v8["power_sims"]), seed=seed + k)
        out[w["run"]] = {**inp, "bound": float(w["slow_start_bound"]), **res}
    return out
