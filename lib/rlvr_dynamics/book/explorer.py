"""The interactive explorer's data, precomputed from the closed forms of :mod:`rlvr_dynamics.p1` (the page
``book/explorer.md`` and ``book/_assets/explorer.js`` draw it offline).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


from .._io import atomic_write_text
from .markup import GENERATED


# ---------------------------------------------------------------------------------------------------------------
# The explorer's data (precomputed from the closed forms of rlvr_dynamics.p1)
# ---------------------------------------------------------------------------------------------------------------

EXPLORER_GRID = {
    "eta_k": [round(x, 6) for x in (1e-3 * 10 ** (i / 6) for i in range(13))],  # 1e-3 … 1e-1
    "momentum": [0.0, 0.5, 0.8, 0.9, 0.95, 0.99],
    "refresh_interval": [1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 200, 300, 500, 1000],
    "group_size": [2, 4, 8, 16, 32, 64],
}
"""Slider positions of the explorer page."""


def explorer_data(n_time: int = 120, n_map: int = 60) -> dict[str, Any]:
    """Everything the explorer draws, from :mod:`rlvr_dynamics.p1.oscillator` and :mod:`rlvr_dynamics.p1.sde`.

    For every (μ, ηK, K_ref) of :data:`EXPLORER_GRID`: ζ, the regime, (M, C, K_eff), the unit response
    ``u(t) = e(t)/e0`` on ``n_time`` points up to a horizon of 6 decay times at K_ref = 1 (so curves at different
    K_ref share an axis), and the stationary standard deviation ``sqrt(Var∞(e))`` for every G (only where
    C > 0). Noise strength: D = (ηK)² p*(1 − p*) with p* = 0.8, an illustrative per-rollout Bernoulli noise passed
    through the update gain. Also the regime map on an ``n_map × n_map`` log grid per μ, the threshold
    K·η·K_ref = 1 − μ and the ζ = 1 boundary (oscillation onset).
    """
    import numpy as np

    from ..p1 import oscillator as osc
    from ..p1 import sde

    g = EXPLORER_GRID
    p_star, p0 = 0.8, 0.2
    mus = np.asarray(g["momentum"], float)
    aks = np.asarray(g["eta_k"], float)
    krefs = np.asarray(g["refresh_interval"], float)
    groups = np.asarray(g["group_size"], float)
    out: dict[str, Any] = {"grid": g, "p_star": p_star, "p0": p0, "regimes": list(osc.REGIMES), "curves": {},
                           "maps": {}, "threshold": {}, "onset": {}}
    map_a = np.geomspace(aks[0], aks[-1], n_map)
    map_k = np.geomspace(krefs[0], krefs[-1], n_map)
    out["map_axes"] = {"eta_k": [float(f"{x:.4g}") for x in map_a], "refresh_interval":
                       [float(f"{x:.4g}") for x in map_k]}
    for i, mu in enumerate(mus):
        A, KR = np.meshgrid(map_a, map_k)  # rows: K_ref, columns: ηK
        reg = osc.regime(A, np.full_like(A, mu), np.ones_like(A), KR)
        out["maps"][str(i)] = [[g_idx for g_idx in (list(osc.REGIMES).index(x) for x in row)] for row in reg]
        out["threshold"][str(i)] = [float(f"{x:.5g}") for x in
                                    osc.critical_refresh_interval(map_a, np.full_like(map_a, mu),
                                                                  np.ones_like(map_a))]
        out["onset"][str(i)] = [float(f"{x:.5g}") for x in
                                osc.oscillation_onset(map_a, np.full_like(map_a, mu), np.ones_like(map_a))]
        for j, a in enumerate(aks):
            rate = min(r.real for r in osc.characteristic_roots(a, mu, 1.0, 1.0))
            horizon = float(np.clip(6.0 / rate if rate > 0 else 2000.0, 20.0, 20000.0))
            t = np.linspace(0.0, horizon, n_time)
            for k, kref in enumerate(krefs):
                c = osc.coefficients(a, mu, 1.0, kref)
                zeta = float(osc.damping_ratio(a, mu, 1.0, kref))
                u = np.asarray(osc.unit_response(t, osc.Coefficients(*(np.full_like(t, x) for x in c))))
                reward = np.clip(p_star - (p_star - p0) * u, -0.5, 1.5)
                if c.damping > 0:
                    var = np.asarray(sde.stationary_variance(osc.Coefficients(*(np.full_like(groups, x) for x in c)),
                                                             a * a * p_star * (1 - p_star), groups)[0])
                    sd = [float(f"{x:.4g}") for x in np.sqrt(var)]
                else:
                    sd = None
                out["curves"][f"{i}_{j}_{k}"] = {
                    "zeta": float(f"{zeta:.4g}"), "regime": str(osc.regime(a, mu, 1.0, kref)),
                    "M": float(f"{c.mass:.4g}"), "C": float(f"{c.damping:.4g}"), "K": float(f"{c.stiffness_eff:.4g}"),
                    "horizon": round(horizon, 1), "reward": [float(f"{x:.3g}") for x in reward], "sd": sd}
    return out


def write_explorer_data(book_dir: Path) -> Path:
    """``_generated/static/explorer-data.js`` (served as ``_static/explorer-data.js``)."""
    data = explorer_data()
    return atomic_write_text(book_dir / GENERATED / "static" / "explorer-data.js",
                             "window.RLVR_EXPLORER = " + json.dumps(data, separators=(",", ":")) + ";\n")
