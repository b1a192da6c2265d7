"""Figure helpers of the P2 pages (rlvr_dynamics.p2.figures)."""
import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rlvr_dynamics import plotting  # noqa: E402
from rlvr_dynamics.p2 import figures  # noqa: E402


def test_reference_slope_has_the_slope_and_passes_through_the_anchor():
    fig, ax = plt.subplots()
    x = np.array([4.0, 8.0, 16.0, 128.0])
    line = figures.reference_slope(ax, x, -1.0, (4.0, 1e4))
    xs, ys = line.get_data()
    assert ys[0] == pytest.approx(1e4)
    assert np.allclose(np.diff(np.log(ys)) / np.diff(np.log(xs)), -1.0)
    assert line.get_label() == "slope −1 (reference)"
    assert line.get_zorder() > 2                      # drawn above the data
    with pytest.raises(ValueError, match="> 0"):
        figures.reference_slope(ax, x, 1.0, (0.0, 1.0))
    plt.close(fig)


def test_log_binned_envelope_shows_an_oscillation_as_a_band():
    k = np.arange(1, 10001, dtype=float)
    steady = 0.5 * np.ones_like(k)
    swing = np.where(k % 2 == 0, 0.9, 0.1)
    c, lo, med, hi = figures.log_binned_envelope(k, steady, 20)
    assert np.allclose(lo, 0.5) and np.allclose(hi, 0.5) and np.all(np.diff(c) > 0)
    c, lo, med, hi = figures.log_binned_envelope(k, swing, 20)
    wide = c > 10                                     # bins past the first few hold both phases
    assert np.allclose(lo[wide], 0.1) and np.allclose(hi[wide], 0.9) and wide.sum() >= 10
    assert c.min() >= 1 and c.max() <= 10000 and c.size <= 20
    with pytest.raises(ValueError, match="> 0"):
        figures.log_binned_envelope(np.arange(5.0), np.ones(5))
    with pytest.raises(ValueError, match="same length"):
        figures.log_binned_envelope(k, k[:-1])


def test_plot_envelope_and_legend_outside_leave_the_data_uncovered():
    plotting.use_style()
    fig, ax = plt.subplots(figsize=plotting.figsize(1))
    k = np.arange(1, 2001, dtype=float)
    line = figures.plot_envelope(ax, k, 1 / k, label="1/k", color=plotting.COLORS["measured"])
    assert line.get_label() == "1/k" and len(ax.collections) == 1
    ax.set(xscale="log", yscale="log", xlabel="step", ylabel="value")
    leg = figures.legend_outside(ax)
    fig.canvas.draw()
    assert leg.get_window_extent().x0 >= ax.get_window_extent().x1 - 1
    plt.close(fig)


def test_panel_titles_and_figure_legend_are_the_shared_helpers():
    from rlvr_dynamics.p1 import figures as p1fig

    assert figures.panel_titles is p1fig.panel_titles and figures.figure_legend is p1fig.figure_legend
