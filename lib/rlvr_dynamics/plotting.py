"""One figure style for the whole book: call ``use_style()`` once at the top of a notebook.

Colours are fixed per concept so that a reader can follow a quantity across chapters: ``COLORS["theory"]`` for
closed forms and predictions, ``COLORS["measured"]`` for simulation or training data, ``REGIME_COLORS`` for the
oscillator regimes of P1 §3.4, ``ALGO_COLORS`` for the P2 algorithms.
"""
from __future__ import annotations

import matplotlib as mpl

COLORS = {
    "theory": "#1b1b1b",
    "measured": "#0072B2",
    "secondary": "#E69F00",
    "tertiary": "#009E73",
    "alert": "#D55E00",
    "muted": "#999999",
}
REGIME_COLORS = {"overdamped": "#0072B2", "critical": "#009E73", "underdamped": "#E69F00", "unstable": "#D55E00"}
ALGO_COLORS = {"reinforce": "#0072B2", "grpo": "#D55E00", "grpo_no_length_norm": "#CC79A7", "dr_grpo": "#009E73"}
SEQUENCE = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def use_style() -> None:
    """Apply the book's matplotlib style (colour-blind-safe palette, readable sizes, light grid, PNG at 110 dpi)."""
    mpl.rcParams.update({
        "figure.figsize": (7.0, 4.0),
        "figure.dpi": 110,
        "savefig.dpi": 110,
        "figure.constrained_layout.use": True,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": mpl.cycler(color=SEQUENCE),
        "font.size": 10,
        "axes.titlesize": 11,
        "legend.frameon": False,
        "lines.linewidth": 1.6,
    })
