"""Plotting helpers of the GRPO notebooks (``rlvr_dynamics.book.grpo_figures``)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rlvr_dynamics import plotting  # noqa: E402
from rlvr_dynamics.book import grpo_figures as gf  # noqa: E402


class _Law:
    def __init__(self, scale: float):
        self.scale = scale

    def predict(self, t):
        return 1 - np.exp(-np.asarray(t, float) / self.scale)


def _row(seed: int) -> dict:
    t = np.arange(1, 101, dtype=float)
    y = 1 - np.exp(-(t - 1) / 20) + 0.05 * np.random.default_rng(seed).standard_normal(t.size)
    return {"t": t, "y": y, "ys": y, "seed": seed, "fit": {"three_phase": _Law(20.0), "single_exponential": _Law(21.0)}}


def test_panel_title_letters_and_range():
    fig, ax = plt.subplots()
    gf.panel_title(ax, 2, "tiny-l4, G = 4")
    assert ax.get_title() == "(c) tiny-l4, G = 4"
    with pytest.raises(ValueError, match="index"):
        gf.panel_title(ax, 26, "x")
    plt.close(fig)


def test_proxy_is_a_marker_or_a_line_and_draws_in_no_axes():
    marker = gf.proxy("G = 4", "C0", marker=".")
    assert marker.get_linestyle() == "None" and marker.get_marker() == "." and marker.axes is None
    line = gf.proxy("bound", "k", ls="--")
    assert line.get_linestyle() == "--" and line.get_label() == "bound"


def test_reward_fit_panel_draws_the_single_exponential_on_top_and_the_legend_below_the_panels():
    plotting.use_style()
    fig, ax = plt.subplots(figsize=plotting.figsize(1))
    colors = gf.reward_fit_panel(ax, [_row(1), _row(2)], ["#0072B2", "#D55E00"])
    assert colors == ["#0072B2", "#D55E00"]
    assert len(ax.lines) == 8
    three, single = ax.lines[2], ax.lines[3]
    assert single.get_zorder() > three.get_zorder() > ax.lines[1].get_zorder()
    assert single.get_color() != three.get_color()
    ax.set_xlabel("optimizer step"); ax.set_ylabel("training reward")  # noqa: E702
    handles = gf.reward_fit_handles(25, [1, 2], colors)
    assert [h.get_label() for h in handles][:4] == ["per-step reward", "rolling mean (25 steps)", "three-phase fit",
                                                    "single-exponential fit"]
    leg = gf.legend_below(fig, handles, ncol=3)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert leg.get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y0 + 1  # under the axes
    assert min(t.get_fontsize() for t in leg.get_texts()) >= plotting.MIN_FONT_PT
    assert plotting.figure_audit(fig)["legends"] == []  # a figure legend: no axes legend to sit on data
    with pytest.raises(ValueError, match="at least one handle"):
        gf.legend_below(fig, [])
    plt.close(fig)


def test_slope_reference_passes_through_its_anchor_with_the_given_slope():
    fig, ax = plt.subplots()
    line = gf.slope_reference(ax, [3, 7, 127], 3.0, 0.5, -1.0, "slope −1")
    x, y = (np.asarray(v) for v in line.get_data())
    assert x[0] == pytest.approx(3) and x[-1] == pytest.approx(127)
    assert y[0] == pytest.approx(0.5)
    assert np.polyfit(np.log(x), np.log(y), 1)[0] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="positive"):
        gf.slope_reference(ax, [0, 1], 1.0, 1.0, -1.0, "bad")
    plt.close(fig)
