"""Small plotting helpers shared by the GRPO notebooks (``grpo_p1_dynamics``, ``grpo_smollm``, ``grpo_p2_alignment``,
``grpo_p2_length``, ``grpo_failure_runs``): one look for a reward curve with its two fitted laws, legends that never
sit on data, proxy legend entries that stand for data drawn elsewhere, and the reference line of a tested slope.

Conventions (the book's figure rules, :mod:`rlvr_dynamics.plotting`): a fit is drawn *over* the data it fits and the
two laws never share a colour and a line style, so a single exponential that coincides with the three-phase law
still shows as black dashes on the coloured line; a legend that would cover data goes below the panels
(:func:`legend_below`, a figure legend in the constrained layout's outer margin); every panel of a multi-panel
figure gets a letter (:func:`panel_title`).
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np

from .. import plotting

RAW_ALPHA = 0.15
"""Opacity of the per-step reward (the noisy series under the curves)."""
FIT_ZORDER = 3
"""z-order of the three-phase fit (above the data, whose z-order is 2)."""
EXP_ZORDER = 4
"""z-order of the single-exponential fit (above the three-phase fit, so that it stays visible where they agree)."""


def panel_title(ax: Any, index: int, text: str) -> None:
    """Title ``"(a) text"`` for the ``index``-th panel (0 → a)."""
    if not 0 <= index < 26:
        raise ValueError(f"index must be in [0, 26), got {index!r}")
    ax.set_title(f"({chr(ord('a') + index)}) {text}")


def proxy(label: str, color: str = "k", *, ls: Any = None, lw: float = 1.6, marker: str | None = None,
          alpha: float = 1.0, ms: float = 6.0) -> Any:
    """A legend handle for data drawn elsewhere (a line or marker style, not an artist of any axes), so that a legend
    can name a kind of line once without an empty plotted entry. ``ls`` defaults to a solid line, or to no line when
    a ``marker`` is given."""
    from matplotlib.lines import Line2D

    if ls is None:
        ls = "none" if marker else "-"
    return Line2D([], [], color=color, ls=ls, lw=lw, marker=marker, alpha=alpha, ms=ms, label=label)


def legend_below(fig: Any, handles: Sequence[Any], *, ncol: int = 2) -> Any:
    """A figure legend under the panels, in the constrained layout's outer margin (it cannot cover data). Needs a
    figure made with the book's style (constrained layout, :func:`rlvr_dynamics.plotting.use_style`)."""
    if not handles:
        raise ValueError("legend_below needs at least one handle")
    if not (isinstance(ncol, int) and ncol >= 1):
        raise ValueError(f"ncol must be an integer >= 1, got {ncol!r}")
    return fig.legend(handles=list(handles), loc="outside lower center", ncol=min(ncol, len(handles)),
                      fontsize=max(plotting.MIN_FONT_PT, 10.0))


def reward_fit_panel(ax: Any, rows: Iterable[dict], colors: Sequence[str] | None = None) -> list[str]:
    """Per run row (:func:`rlvr_dynamics.verdicts.grpo_p1.run_row`: ``t``, ``y``, ``ys``, ``fit``): the per-step
    reward (light), its rolling mean (thin), the three-phase fit (thick, the run's colour) and the single-exponential
    fit (black dashes, drawn last so it stays visible where the two laws agree). Returns the colours used, in order."""
    colors = list(colors) if colors is not None else list(plotting.SEQUENCE)
    used = []
    for i, w in enumerate(rows):
        c = colors[i % len(colors)]
        tt = np.asarray(w["t"], float) - float(w["t"][0])
        ax.plot(w["t"], w["y"], color=c, alpha=RAW_ALPHA, lw=1)
        ax.plot(w["t"], w["ys"], color=c, lw=0.9, alpha=0.8)
        ax.plot(w["t"], w["fit"]["three_phase"].predict(tt), color=c, lw=2.6, zorder=FIT_ZORDER)
        ax.plot(w["t"], w["fit"]["single_exponential"].predict(tt), color="k", lw=1.2, ls=(0, (4, 3)),
                zorder=EXP_ZORDER)
        used.append(c)
    return used


def reward_fit_handles(smooth_window: int, seeds: Iterable[int], colors: Sequence[str] | None = None) -> list[Any]:
    """Legend handles of :func:`reward_fit_panel`: the four kinds of line (in grey) and one colour per seed."""
    colors = list(colors) if colors is not None else list(plotting.SEQUENCE)
    grey = plotting.COLORS["muted"]
    kinds = [proxy("per-step reward", grey, alpha=0.4, lw=1), proxy(f"rolling mean ({smooth_window} steps)", grey, lw=0.9),
             proxy("three-phase fit", grey, lw=2.6), proxy("single-exponential fit", "k", ls=(0, (4, 3)), lw=1.2)]
    return kinds + [proxy(f"seed {s}", colors[i % len(colors)], lw=2.6) for i, s in enumerate(seeds)]


def panel_fit_panel(ax: Any, rows: Iterable[dict], colors: Sequence[str] | None = None) -> list[str]:
    """Per panel row (:func:`rlvr_dynamics.verdicts.grpo_p1.panel_row`: ``t``, ``y``, ``se``, ``fit``): the panel
    reward with ±1 binomial SE bars (markers), the three-phase fit drawn on every step (thick, the run's colour) and
    the single-exponential fit (black dashes). Returns the colours used, in order."""
    colors = list(colors) if colors is not None else list(plotting.SEQUENCE)
    used = []
    for i, w in enumerate(rows):
        c = colors[i % len(colors)]
        t = np.asarray(w["t"], float)
        dense = np.arange(0.0, t[-1] + 1.0)
        ax.errorbar(t, w["y"], yerr=w["se"], fmt="o", ms=3, color=c, alpha=0.75, elinewidth=0.8, capsize=0)
        ax.plot(dense, w["fit"]["three_phase"].predict(dense), color=c, lw=2.2, zorder=FIT_ZORDER)
        ax.plot(dense, w["fit"]["single_exponential"].predict(dense), color="k", lw=1.1, ls=(0, (4, 3)),
                zorder=EXP_ZORDER)
        used.append(c)
    return used


def panel_fit_handles(n_panel: int, seeds: Iterable[int], colors: Sequence[str] | None = None) -> list[Any]:
    """Legend handles of :func:`panel_fit_panel`: the three kinds of mark (in grey) and one colour per seed."""
    colors = list(colors) if colors is not None else list(plotting.SEQUENCE)
    grey = plotting.COLORS["muted"]
    kinds = [proxy(f"panel reward ({n_panel} prompts) ± 1 SE", grey, lw=0, marker="o"),
             proxy("three-phase fit", grey, lw=2.2), proxy("single-exponential fit", "k", ls=(0, (4, 3)), lw=1.1)]
    return kinds + [proxy(f"seed {s}", colors[i % len(colors)], lw=2.2) for i, s in enumerate(seeds)]


def slope_reference(ax: Any, x: Sequence[float], x0: float, y0: float, slope: float, label: str, *,
                    color: str = "k", ls: Any = ":") -> Any:
    """On log-log axes, the line y = y0 (x/x0)^slope over the range of ``x``: the reference of a tested slope."""
    x = np.asarray(x, float)
    if not (np.all(x > 0) and x0 > 0 and y0 > 0 and math.isfinite(slope)):
        raise ValueError("slope_reference needs positive x, x0, y0 and a finite slope")
    grid = np.geomspace(x.min(), x.max(), 20)
    line, = ax.plot(grid, y0 * (grid / x0) ** slope, color=color, ls=ls, lw=1.3, label=label, zorder=1)
    return line
