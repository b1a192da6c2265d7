"""One figure style for the whole book: call ``use_style()`` once at the top of a notebook.

Colours are fixed per concept so that a reader can follow a quantity across chapters: ``COLORS["theory"]`` for
closed forms and predictions, ``COLORS["measured"]`` for simulation or training data, ``REGIME_COLORS`` for the
oscillator regimes of P1 §3.4, ``ALGO_COLORS`` for the P2 algorithms, ``VERDICT_COLORS`` for the book's verdict
badges. Every colour comes from one colour-blind-safe palette (Okabe & Ito 2008, :data:`PALETTE`).

Sizes are chosen for the width at which the book shows a figure. The book's text column is about
:data:`DISPLAY_WIDTH_PX` CSS pixels wide; a PNG saved at :data:`DPI` dots per inch is shown at its natural size up
to that width and shrunk beyond it. A figure :data:`FIG_WIDTH` inches wide (``FIG_WIDTH * DPI`` ≤
``DISPLAY_WIDTH_PX`` pixels) is therefore never shrunk, and text set at ≥ :data:`MIN_FONT_PT` points stays ≥ 10 pt
on screen. Use :func:`figsize` for the size of a figure with 1 or 2 panels per row (never more: stack rows instead).

In a notebook, ``use_style()`` also attaches to every displayed figure a small JSON audit
(:data:`AUDIT_MIME`: size in inches, dpi, each axes' labels and the smallest font): the book's tests read it from
the stored notebooks to check that every figure fits the column and every axis is labelled, that no legend sits
on data or lists an entry that draws nothing, and that the figure carries an authored caption (:func:`caption`,
:func:`figure_audit`).
"""
from __future__ import annotations

from typing import Any

import matplotlib as mpl

PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
    "grey": "#999999",
}
"""The Okabe–Ito colour-blind-safe palette (plus grey): the only colours the book uses."""

COLORS = {
    "theory": PALETTE["black"],
    "measured": PALETTE["blue"],
    "secondary": PALETTE["orange"],
    "tertiary": PALETTE["bluish_green"],
    "alert": PALETTE["vermillion"],
    "muted": PALETTE["grey"],
}
REGIME_COLORS = {"overdamped": PALETTE["blue"], "critical": PALETTE["bluish_green"],
                 "underdamped": PALETTE["orange"], "unstable": PALETTE["vermillion"]}
ALGO_COLORS = {"reinforce": PALETTE["blue"], "grpo": PALETTE["vermillion"],
               "grpo_no_length_norm": PALETTE["reddish_purple"], "dr_grpo": PALETTE["bluish_green"]}
VERDICT_COLORS = {"PASS": PALETTE["bluish_green"], "PARTIAL": PALETTE["orange"], "FAIL": PALETTE["vermillion"],
                  "CONSISTENT": PALETTE["sky_blue"], "INCONCLUSIVE": PALETTE["grey"], "N/A": "#DDDDDD",
                  "NOT TESTED": "#FFFFFF"}
"""Badge colours of the verdicts (the badge always carries the word too: colour is never the only cue)."""
SEQUENCE = [PALETTE[k] for k in ("blue", "vermillion", "bluish_green", "orange", "reddish_purple", "sky_blue",
                                 "black", "yellow")]
"""Line colours in order (the axes' property cycle)."""

DPI = 110
"""Dots per inch of the PNGs stored in the notebooks."""
DISPLAY_WIDTH_PX = 768
"""Width of the book's text column at a 1400 px window, in CSS pixels (measured in Chromium)."""
FIG_WIDTH = 6.9
"""Default figure width in inches: 759 px at :data:`DPI`, so the book shows it at natural size."""
MIN_FONT_PT = 10.0
"""Smallest font size in points allowed in a figure (tick labels, legends, annotations)."""
MAX_DATA_POINTS = 5000
"""At most this many (x, y) points of a figure's plotted data go into its audit (longer series are thinned)."""
AUDIT_MIME = "application/vnd.rlvr-dynamics.figure-audit+json"
"""MIME type of the figure audit attached to displayed figures (ignored by the book's renderer)."""


def figsize(ncols: int = 1, nrows: int = 1, panel_aspect: float | None = None) -> tuple[float, float]:
    """(width, height) in inches for ``nrows × ncols`` panels at the book's width; ``ncols`` must be 1 or 2.

    ``panel_aspect`` is height/width of one panel (default 0.62 for one column, 0.8 for two).
    """
    if ncols not in (1, 2):
        raise ValueError(f"ncols must be 1 or 2 (at most two panels per row, stack rows instead), got {ncols!r}")
    if not (isinstance(nrows, int) and nrows >= 1):
        raise ValueError(f"nrows must be an integer >= 1, got {nrows!r}")
    aspect = panel_aspect if panel_aspect is not None else (0.62 if ncols == 1 else 0.8)
    if not aspect > 0:
        raise ValueError(f"panel_aspect must be > 0, got {panel_aspect!r}")
    width = FIG_WIDTH
    return width, round(nrows * aspect * width / ncols + 0.25, 2)


def use_style() -> None:
    """Apply the book's matplotlib style (colour-blind-safe palette, ≥ 10 pt text at the book's width, light grid,
    PNG at :data:`DPI`) and, inside IPython, attach the figure audit to every displayed figure."""
    mpl.rcParams.update({
        "figure.figsize": (FIG_WIDTH, 3.6),
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "figure.constrained_layout.use": True,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": mpl.cycler(color=SEQUENCE),
        "image.cmap": "cividis",
        "font.size": 10.5,
        "axes.titlesize": 11,
        "axes.labelsize": 10.5,
        "xtick.labelsize": 10,
        "ytick.labelsize": 10,
        "legend.fontsize": 10,
        "legend.title_fontsize": 10,
        "figure.titlesize": 11.5,
        "legend.frameon": True,
        "legend.framealpha": 0.85,
        "legend.edgecolor": "none",
        "lines.linewidth": 1.6,
    })
    _register_audit()


def figure_audit(fig: Any) -> dict[str, Any]:
    """What the book's figure test checks, for one matplotlib figure.

    Returns ``{"width_in", "height_in", "dpi", "suptitle", "min_font_pt", "axes": [{"xlabel", "ylabel", "title",
    "x_ticklabels", "y_ticklabels", "colorbar", "bbox"}, …], "series": [...]}`` (``bbox``: x0, y0, width,
    height in figure fractions; ``series``: :func:`figure_series`): an axis needs a label when its tick labels are shown
    (a shared axis whose tick labels are hidden does not); ``min_font_pt`` is the smallest visible text size.
    """
    width, height = (float(x) for x in fig.get_size_inches())
    axes = []
    sizes = []
    for ax in fig.get_axes():
        if not ax.get_visible() or not ax.axison:
            continue

        def shown(labels) -> bool:
            return any(t.get_visible() and t.get_text() for t in labels)

        axes.append({"xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "title": ax.get_title(),
                     "x_ticklabels": shown(ax.get_xticklabels()), "y_ticklabels": shown(ax.get_yticklabels()),
                     "colorbar": hasattr(ax, "_colorbar") or ax.get_label() == "<colorbar>",
                     "bbox": [round(float(x), 3) for x in ax.get_position().bounds]})
        for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.xaxis.label, ax.yaxis.label, ax.title,
                  *ax.texts]:
            if t.get_visible() and t.get_text():
                sizes.append(float(t.get_fontsize()))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            sizes += [float(t.get_fontsize()) for t in legend.get_texts() if t.get_text()]
    for t in fig.texts:
        if t.get_visible() and t.get_text():
            sizes.append(float(t.get_fontsize()))
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    series = figure_series(fig)
    legends = [_legend_audit(ax) for ax in fig.get_axes() if ax.get_visible() and ax.get_legend() is not None
               and ax.get_legend().get_visible()]
    return {"width_in": round(width, 3), "height_in": round(height, 3), "dpi": float(fig.dpi), "suptitle": suptitle,
            "min_font_pt": min(sizes) if sizes else None, "axes": axes, "series": series, "legends": legends,
            "caption": getattr(fig, CAPTION_ATTR, None)}


CAPTION_ATTR = "_rlvr_caption"
"""Attribute of a matplotlib figure that holds its authored caption (set by :func:`caption`)."""


def caption(fig: Any, text: str) -> Any:
    """Attach the authored caption of ``fig`` ("What it shows. What to notice."): the book prints it under the
    figure as "Figure <page>.<n>. <text>". Returns ``fig``. Raises ``ValueError`` for an empty caption."""
    text = " ".join(str(text).split())
    if len(text) < 20:
        raise ValueError(f"caption must say what the figure shows and what to notice (>= 20 characters), got {text!r}")
    setattr(fig, CAPTION_ATTR, text)
    return fig


def _artist_points(artist: Any) -> Any:
    """Display coordinates of the data of a line (its vertices plus 8 points per segment) or scatter."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D

    if isinstance(artist, Line2D):
        xy = np.column_stack([np.asarray(v, dtype=float).ravel() for v in artist.get_data(orig=False)])
        if len(xy) > 1 and artist.get_linestyle() not in ("None", "", " "):
            t = np.linspace(0, 1, 9)[:-1, None, None]
            xy = np.concatenate([(xy[:-1] + t * (xy[1:] - xy[:-1])).reshape(-1, 2), xy[-1:]])
    elif isinstance(artist, PathCollection):
        xy = np.asarray(artist.get_offsets(), dtype=float).reshape(-1, 2)
    else:
        return np.empty((0, 2))
    xy = xy[np.isfinite(xy).all(axis=1)]
    return artist.get_transform().transform(xy) if len(xy) else xy


def _has_data(artist: Any) -> bool:
    """Whether a legend handle's artist draws anything (points of a line or scatter, area of a patch or fill)."""
    import numpy as np
    from matplotlib.collections import Collection, PathCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(artist, (Line2D, PathCollection)):
        return len(_artist_points(artist)) > 0
    if isinstance(artist, Collection):
        return any(len(p.vertices) and np.isfinite(p.vertices).all() and np.ptp(p.vertices[:, 0]) * np.ptp(
            p.vertices[:, 1]) > 0 for p in artist.get_paths())
    if isinstance(artist, Patch):
        ext = artist.get_path().get_extents()
        return ext.width > 0 and ext.height > 0
    return True


def _legend_audit(ax: Any) -> dict[str, Any]:
    """One legend: how many of its axes' data points it covers (display coordinates, after drawing) and which
    entries draw nothing."""
    import numpy as np

    legend = ax.get_legend()
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    inside_axes = ax.get_window_extent(renderer).contains((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
    covered = total = 0
    for artist in [*ax.lines, *ax.collections]:
        if not artist.get_visible():
            continue
        pts = _artist_points(artist)
        total += len(pts)
        if len(pts):
            covered += int(np.sum((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0)
                                  & (pts[:, 1] <= box.y1)))
    shown = {t.get_text() for t in legend.get_texts()}
    handles, labels = ax.get_legend_handles_labels()
    empty = [lab for h, lab in zip(handles, labels) if lab in shown and not _has_data(h)]
    return {"axes_title": ax.get_title(), "inside_axes": bool(inside_axes), "points_covered": covered,
            "points_total": total, "empty_entries": empty}


def figure_series(fig: Any, max_points: int = MAX_DATA_POINTS) -> list[dict[str, Any]]:
    """The data drawn in ``fig``: one ``{"axes", "kind", "label", "x", "y"}`` per line and scatter (6 significant
    digits; every series thinned evenly when the figure holds more than ``max_points`` points). This is what the
    book offers as each figure's data (CSV)."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D

    raw = []
    for i, ax in enumerate(fig.get_axes(), 1):
        for artist in ax.get_children():
            if isinstance(artist, Line2D) and artist.get_visible():
                x, y = (np.asarray(v, dtype=float).ravel() for v in artist.get_data(orig=True))
                kind = "line"
            elif isinstance(artist, PathCollection) and artist.get_visible():
                offsets = np.asarray(artist.get_offsets(), dtype=float)
                if offsets.ndim != 2 or offsets.shape[1] != 2:
                    continue
                x, y, kind = offsets[:, 0], offsets[:, 1], "scatter"
            else:
                continue
            if x.size == 0 or x.size != y.size:
                continue
            label = str(artist.get_label() or "")
            raw.append((i, kind, "" if label.startswith("_") else label, x, y))
    total = sum(r[3].size for r in raw)
    stride = max(1, int(np.ceil(total / max_points))) if max_points > 0 else 1
    out = []
    for i, kind, label, x, y in raw:
        keep = slice(None, None, stride)
        out.append({"axes": i, "kind": kind, "label": label,
                    "x": [float(f"{v:.6g}") if np.isfinite(v) else None for v in x[keep]],
                    "y": [float(f"{v:.6g}") if np.isfinite(v) else None for v in y[keep]]})
    return out


def _register_audit() -> None:
    """Inside IPython, add :data:`AUDIT_MIME` (a JSON :func:`figure_audit`) to every displayed figure.

    The inline backend drops every printer registered for ``Figure`` when it activates (lazily, at the first
    figure, possibly after this call), so the printer is registered for the base class ``FigureBase`` (found through
    the method resolution order, and never dropped), and re-added before each cell and at its end for safety."""
    try:
        from IPython import get_ipython
        from IPython.core.formatters import JSONFormatter
        from traitlets import Unicode
    except ImportError:  # pragma: no cover - IPython is part of the notebook stack
        return
    ip = get_ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return
    display = ip.display_formatter
    if AUDIT_MIME not in display.formatters:
        class _AuditFormatter(JSONFormatter):
            format_type = Unicode(AUDIT_MIME)

        display.formatters[AUDIT_MIME] = _AuditFormatter(parent=display)
        if AUDIT_MIME not in display.active_types:
            display.active_types = [*display.active_types, AUDIT_MIME]
    _ensure_audit_printer()
    events = getattr(ip, "events", None)
    if events is not None:
        for name in ("pre_run_cell", "post_execute"):
            if _ensure_audit_printer not in events.callbacks.get(name, []):
                events.register(name, _ensure_audit_printer)


def _ensure_audit_printer(*_: Any) -> None:
    """(Re-)register :func:`figure_audit` as the :data:`AUDIT_MIME` printer of matplotlib figures."""
    from IPython import get_ipython
    from matplotlib.figure import FigureBase

    ip = get_ipython()
    formatter = ip.display_formatter.formatters.get(AUDIT_MIME) if ip is not None else None
    if formatter is not None and FigureBase not in formatter.type_printers:
        formatter.for_type(FigureBase, figure_audit)
