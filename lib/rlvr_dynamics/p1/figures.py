"""Small figure helpers for the P1 oscillator-model pages (p1_regimes … p1_transition).

- :func:`panel_titles`: panel letters "(a) …", "(b) …" on a multi-panel figure, so captions can refer to them.
- :func:`figure_legend`: one legend for all panels of a figure, outside the axes at the top (never on data).
- :func:`regime_patches`: legend swatches for the oscillator regimes that actually cover an area of a phase diagram
  (the critical regime, damping ratio exactly 1, is a curve of zero area and gets no swatch).
- :func:`exact_recursion_coefficients`: the inertia and damping that the exact delayed heavy-ball recursion shows
  when read as an oscillator, a reference curve for identified coefficients (P1 spec §3.3, §3.5).
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from .. import plotting
from .._checks import check_in_range, check_int, check_positive
from . import lagged_recursion as lagged

__all__ = ["panel_titles", "figure_legend", "regime_patches", "exact_recursion_coefficients"]

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def panel_titles(axes: Any, titles: Sequence[str]) -> list[Any]:
    """Set the titles of ``axes`` (any array or list, read in row-major order) to "(a) title", "(b) title", …
    Hidden axes are skipped (they get no letter). Returns the titled axes. ``titles`` must have one entry per
    visible axes."""
    visible = [ax for ax in np.ravel(np.asarray(axes, dtype=object)) if ax.get_visible()]
    titles = list(titles)
    if len(titles) != len(visible):
        raise ValueError(f"{len(titles)} titles for {len(visible)} visible panels")
    if len(visible) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} panels, got {len(visible)}")
    for letter, ax, title in zip(LETTERS, visible, titles):
        ax.set_title(f"({letter}) {title}")
    return visible


def figure_legend(fig: Any, axes: Any = None, handles: Iterable[Any] | None = None,
                  labels: Iterable[str] | None = None, ncol: int | None = None) -> Any:
    """One legend for the whole figure, outside the axes above them (``loc="outside upper center"``; the figure
    must use constrained layout, as :func:`rlvr_dynamics.plotting.use_style` sets).

    Without ``handles``, the labelled artists of ``axes`` (default: every axes of ``fig``) are collected, first
    occurrence of each label kept, so an entry shared by several panels is listed once. ``ncol`` defaults to at
    most 3 columns. Returns the legend."""
    if handles is None:
        seen: dict[str, Any] = {}
        for ax in (fig.get_axes() if axes is None else np.ravel(np.asarray(axes, dtype=object))):
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        handles, labels = list(seen.values()), list(seen)
    else:
        handles = list(handles)
        labels = [h.get_label() for h in handles] if labels is None else list(labels)
    if not handles:
        raise ValueError("no labelled artists for the legend")
    ncol = min(3, len(handles)) if ncol is None else int(ncol)
    return fig.legend(handles, labels, loc="outside upper center", ncol=ncol)


def regime_patches(codes: Any, names: Sequence[str], alpha: float = 0.6) -> list[Any]:
    """Legend swatches (``matplotlib.patches.Patch``, colours from ``plotting.REGIME_COLORS``) for the regimes
    ``names[i]`` whose code ``i`` occurs in ``codes`` (the integer regime map drawn with ``pcolormesh``), in the
    order of ``names``. A regime that covers no cell of the map (the critical one, a curve) gets no swatch."""
    from matplotlib.patches import Patch

    present = set(np.unique(np.asarray(codes)).tolist())
    return [Patch(facecolor=plotting.REGIME_COLORS[n], alpha=alpha, label=n) for i, n in enumerate(names)
            if i in present]


def exact_recursion_coefficients(momentum: float, eta_k: float, delays: Any) -> tuple[np.ndarray, np.ndarray]:
    """(M, C) that the exact constant-delay heavy-ball recursion (model A, P1 spec §3.5) shows when its two slowest
    modes are read as an oscillator with K_eff = ``eta_k`` sampled once per step, the way
    :func:`rlvr_dynamics.p1.oscillator.fit_modes` reads a trajectory [D].

    With z1, z2 the two characteristic roots of largest modulus and s_i = −ln z_i the decay rates,
    K_eff/M = Re(s1 s2) and C/M = Re(s1 + s2). For a one-step delay at small gain this is
    :func:`lagged_recursion.discrete_mass`; as the delay grows it departs from the closed forms
    M = (1+μ)/2 + ηK K_ref²/2, C = 1 − μ − ηK K_ref, which keep the delay expansion only to second order.
    Returns two arrays with one entry per delay (NaN where a slow root is ≤ 0 on the real axis)."""
    mu = float(check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False))
    a = float(check_positive("eta_k", eta_k))
    ds = np.atleast_1d(np.asarray(delays))
    mass, damping = np.full(ds.size, np.nan), np.full(ds.size, np.nan)
    for i, d in enumerate(ds):
        roots = lagged.characteristic_roots(mu, a, check_int("delay", d, 0)).astype(complex)
        z = roots[np.argsort(-np.abs(roots), kind="stable")][:2]
        if np.any((np.abs(z.imag) < 1e-12) & (z.real <= 0.0)):
            continue
        s = -np.log(z)
        w0sq = float(np.real(s[0] * s[1]))
        mass[i] = a / w0sq
        damping[i] = float(np.real(s.sum())) * mass[i]
    return mass, damping
