"""Small figure helpers for the P2 Gradient-Gap pages (p2_identities … p2_gradnorm).

- :func:`panel_titles`, :func:`figure_legend`: panel letters "(a) …" and one legend above all panels, shared with
  the P1 pages (:mod:`rlvr_dynamics.p1.figures`).
- :func:`legend_outside`: an axes' legend to the right of it, never on data.
- :func:`reference_slope`: a power-law reference line on log-log axes, wherever a slope is tested (the −1 slope of
  the critical step against the response length, the +1 slope against 1 − J, a first-order slope of 1).
- :func:`log_binned_envelope` and :func:`plot_envelope`: a long, possibly oscillating trajectory on a log step axis
  drawn as its median per log-spaced bin with the min–max band, so that a period-2 oscillation reads as a band
  instead of a solid block of line.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import plotting
from .._checks import check_int
from ..p1.figures import figure_legend, panel_titles

__all__ = ["panel_titles", "figure_legend", "legend_outside", "reference_slope", "log_binned_envelope",
           "plot_envelope"]


def legend_outside(ax: Any, **kwargs: Any) -> Any:
    """The legend of ``ax`` outside the axes, to the right of their top edge (the figure uses constrained layout,
    which makes room for it). Keyword arguments go to ``ax.legend``. Returns the legend."""
    kwargs.setdefault("loc", "upper left")
    kwargs.setdefault("bbox_to_anchor", (1.02, 1.0))
    return ax.legend(**kwargs)


def reference_slope(ax: Any, x: Any, slope: float, through: tuple[float, float], label: str | None = None,
                    **kwargs: Any) -> Any:
    """Draw ``y = y0 · (x / x0) ** slope`` over ``x`` on ``ax`` (a straight line of that slope on log-log axes),
    through the point ``through = (x0, y0)``; drawn above the data (``zorder`` 4) in the theory colour, dashed,
    unless ``kwargs`` say otherwise. ``label`` defaults to "slope <slope> (reference)". Returns the line."""
    x = np.asarray(x, dtype=float)
    x0, y0 = (float(v) for v in through)
    if not (np.all(x > 0) and x0 > 0 and y0 > 0):
        raise ValueError("reference_slope: x, x0 and y0 must be > 0 (a power law on log axes)")
    kwargs.setdefault("color", plotting.COLORS["theory"])
    kwargs.setdefault("ls", "--")
    kwargs.setdefault("lw", 1.3)
    kwargs.setdefault("zorder", 4)
    if label is None:
        label = f"slope {slope:+g} (reference)".replace("-", "−")
    (line,) = ax.plot(x, y0 * (x / x0) ** float(slope), label=label, **kwargs)
    return line


def log_binned_envelope(steps: Any, values: Any, n_bins: int = 80) -> tuple[np.ndarray, ...]:
    """(centres, low, median, high) of ``values`` over log-spaced bins of ``steps`` (all > 0): per non-empty bin the
    geometric centre of its steps and the minimum, median and maximum of its finite values. A steady trajectory
    gives low ≈ median ≈ high; an oscillation gives a band as wide as its swing."""
    s = np.asarray(steps, dtype=float).ravel()
    v = np.asarray(values, dtype=float).ravel()
    if s.shape != v.shape:
        raise ValueError(f"steps and values must have the same length, got {s.size} and {v.size}")
    if s.size == 0 or np.any(s <= 0):
        raise ValueError("steps must be non-empty and > 0 (a log axis)")
    n = check_int("n_bins", n_bins, 1)
    edges = np.geomspace(s.min(), s.max(), n + 1)
    edges[-1] = np.nextafter(edges[-1], np.inf)
    idx = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, n - 1)
    out = []
    for b in range(n):
        sel = (idx == b) & np.isfinite(v)
        if sel.any():
            vb = v[sel]
            out.append((float(np.exp(np.log(s[sel]).mean())), vb.min(), float(np.median(vb)), vb.max()))
    if not out:
        raise ValueError("values has no finite entry")
    return tuple(np.array(col) for col in zip(*out))


def plot_envelope(ax: Any, steps: Any, values: Any, n_bins: int = 80, label: str | None = None,
                  alpha: float = 0.25, **kwargs: Any) -> Any:
    """Draw :func:`log_binned_envelope` of a trajectory on ``ax``: the median per bin as a line (``kwargs`` go to
    ``ax.plot``; ``label`` labels it) and the min–max band in the same colour at ``alpha``. Returns the line."""
    c, lo, med, hi = log_binned_envelope(steps, values, n_bins)
    (line,) = ax.plot(c, med, label=label, **kwargs)
    ax.fill_between(c, lo, hi, color=line.get_color(), alpha=alpha, lw=0)
    return line
