"""Every stored figure is legible at the width the book shows it: at most the text column's width in pixels (so
it is never shrunk and its ≥ 10 pt text stays ≥ 10 pt on screen), at most two panels per row, and every axis whose
tick labels are shown carries a label.

Size is read from the PNGs stored in ``notebooks/*.ipynb``. Labels, fonts and panel layout are read from the
figure audit that ``rlvr_dynamics.plotting.use_style()`` attaches to each displayed figure
(``plotting.AUDIT_MIME``). A notebook stored before the audit existed cannot be checked for labels: its test is
marked xfail (with the size problems found) until it is re-executed with ``rlvr-dynamics run <id> --store``.
"""
from __future__ import annotations

import base64
import struct

import nbformat
import pytest

from rlvr_dynamics import plotting
from rlvr_dynamics.book import registry

ENTRIES = registry.load_registry()
WIDTH_SLACK_PX = 12
"""Tolerance on the PNG width (the inline backend's tight bounding box adds a few pixels)."""


def png_size(data: str | list[str]) -> tuple[int, int]:
    raw = base64.b64decode("".join(data) if isinstance(data, list) else data)
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return struct.unpack(">II", raw[16:24])


LEGEND_COVER_MAX = 0.01
"""A legend inside its axes may cover at most this fraction of the axes' data points (and never more than 2)."""


def legend_problems(audit: dict) -> list[str]:
    """A legend that sits on data (covers more than :data:`LEGEND_COVER_MAX` of its axes' points, and > 2 of them)
    or lists an entry that draws nothing (an empty scatter, a zero-area swatch)."""
    out = []
    for leg in audit.get("legends", []):
        where = f"legend of '{leg.get('axes_title') or 'untitled'}'"
        covered, total = leg["points_covered"], max(leg["points_total"], 1)
        if leg["inside_axes"] and covered > max(2, LEGEND_COVER_MAX * total):
            out.append(f"{where} sits on data ({covered} of {total} plotted points under it): move it outside "
                       f"the axes or to an empty corner")
        if leg["empty_entries"]:
            out.append(f"{where} lists entries that draw nothing: {leg['empty_entries']}")
    return out


def figure_problems(audit: dict) -> list[str]:
    """Problems with one figure's audit: fonts, unlabelled axes, more than two panels per row, legends on data or
    with empty entries."""
    out = legend_problems(audit)
    if audit.get("min_font_pt") is not None and audit["min_font_pt"] < plotting.MIN_FONT_PT - 1e-9:
        out.append(f"text at {audit['min_font_pt']} pt < {plotting.MIN_FONT_PT} pt")
    panels = []
    for i, ax in enumerate(audit["axes"], 1):
        if ax.get("colorbar"):
            if not (ax["xlabel"] or ax["ylabel"]):
                out.append(f"colorbar {i} has no label")
            continue
        if ax["x_ticklabels"] and not ax["xlabel"].strip():
            out.append(f"axes {i} ({ax['title'] or 'untitled'}): x axis has no label")
        if ax["y_ticklabels"] and not ax["ylabel"].strip():
            out.append(f"axes {i} ({ax['title'] or 'untitled'}): y axis has no label")
        panels.append(tuple(ax.get("bbox") or (0, 0, 0, 0)))
    rows: dict[int, set[float]] = {}
    for x0, y0, w, h in set(panels):  # twin axes share a bbox
        rows.setdefault(round((y0 + h / 2) * 20), set()).add(round(x0, 2))
    widest = max((len(v) for v in rows.values()), default=0)
    if widest > 2:
        out.append(f"{widest} panels in one row (at most 2: stack rows instead)")
    return out


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_stored_figures_fit_the_book_column_and_label_every_axis(entry):
    nb = nbformat.read(entry.path, as_version=4)
    problems, unaudited = [], 0
    n = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" not in data:
                continue
            n += 1
            width, height = png_size(data["image/png"])
            if width > plotting.DISPLAY_WIDTH_PX + WIDTH_SLACK_PX:
                problems.append(f"figure {n}: {width} px wide > the book's {plotting.DISPLAY_WIDTH_PX} px column "
                                f"(text shrinks to {10 * plotting.DISPLAY_WIDTH_PX / width:.1f} pt)")
            audit = data.get(plotting.AUDIT_MIME)
            if audit is None:
                unaudited += 1
                continue
            problems += [f"figure {n}: {p}" for p in figure_problems(audit)]
    if unaudited and problems:
        pytest.xfail(f"{entry.id}: {unaudited} figure(s) stored before the figure audit; re-execute with "
                     f"`rlvr-dynamics run {entry.id} --store`. Size problems now: " + "; ".join(problems))
    assert not problems, f"{entry.id}: " + "; ".join(problems)
    if unaudited:
        pytest.xfail(f"{entry.id}: {unaudited} figure(s) stored before the figure audit: axis labels unchecked")


def test_the_audit_flags_unlabelled_axes_small_text_and_three_panels_per_row():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plotting.use_style()
    fig, axes = plt.subplots(1, 3, figsize=plotting.figsize(2))
    axes[0].set_xlabel("step"); axes[0].set_ylabel("reward")  # noqa: E702
    axes[1].text(0.5, 0.5, "tiny", fontsize=6)
    fig.canvas.draw()
    problems = figure_problems(plotting.figure_audit(fig))
    plt.close(fig)
    assert any("3 panels in one row" in p for p in problems)
    assert any("axes 2" in p and "x axis" in p for p in problems)
    assert any("6.0 pt" in p for p in problems)
    fig, axes = plt.subplots(2, 2, sharex=True, figsize=plotting.figsize(2, 2))
    for ax in axes.flat:
        ax.set_ylabel("reward")
    for ax in axes[1]:
        ax.set_xlabel("step")
    fig.canvas.draw()
    assert figure_problems(plotting.figure_audit(fig)) == []  # hidden shared tick labels need no label
    plt.close(fig)


def test_the_audit_flags_a_legend_on_data_and_empty_legend_entries():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import numpy as np

    plotting.use_style()
    fig, ax = plt.subplots(figsize=plotting.figsize(1))
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="rises")
    ax.scatter([], [], label="no points")
    ax.fill_between([0, 1], [0.5, 0.5], [0.5, 0.5], label="zero area")
    ax.set_xlabel("x"); ax.set_ylabel("y")  # noqa: E702
    ax.legend(loc="center")
    fig.canvas.draw()
    problems = legend_problems(plotting.figure_audit(fig))
    assert any("sits on data" in p for p in problems)
    assert any("'no points'" in p and "'zero area'" in p for p in problems)
    ax.get_legend().remove()
    ax.plot([], [], label="_hidden")
    ax.legend(handles=ax.lines[:1], loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.canvas.draw()
    assert legend_problems(plotting.figure_audit(fig)) == []
    plt.close(fig)


def test_caption_is_authored_and_checked():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig = plt.figure()
    with pytest.raises(ValueError, match="caption must say"):
        plotting.caption(fig, "Tiny-m4.")
    plotting.caption(fig, "Reward per step.  The dashed fit hides under the curve.")
    assert plotting.figure_audit(fig)["caption"] == "Reward per step. The dashed fit hides under the curve."
    plt.close(fig)


def test_figsize_allows_at_most_two_panels_per_row():
    assert plotting.figsize(1)[0] * plotting.DPI <= plotting.DISPLAY_WIDTH_PX
    with pytest.raises(ValueError, match="ncols"):
        plotting.figsize(3)
