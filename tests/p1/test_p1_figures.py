"""Figure helpers of the P1 pages (rlvr_dynamics.p1.figures)."""
import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rlvr_dynamics import plotting  # noqa: E402
from rlvr_dynamics.p1 import figures, lagged_recursion as lagged, oscillator as osc  # noqa: E402


def test_panel_titles_letter_visible_panels_in_row_major_order():
    fig, axes = plt.subplots(2, 2)
    axes[1, 1].set_visible(False)
    figures.panel_titles(axes, ["one", "two", "three"])
    assert [ax.get_title() for ax in axes.ravel()[:3]] == ["(a) one", "(b) two", "(c) three"]
    with pytest.raises(ValueError, match="3 visible panels"):
        figures.panel_titles(axes, ["one"])
    plt.close(fig)


def test_figure_legend_lists_each_label_once_outside_the_axes():
    plotting.use_style()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=plotting.figsize(2))
    for ax in (a1, a2):
        ax.plot([0, 1], [0, 1], label="identity")
    a2.plot([0, 1], [1, 0], label="other")
    leg = figures.figure_legend(fig)
    assert [t.get_text() for t in leg.get_texts()] == ["identity", "other"]
    fig.canvas.draw()
    box = leg.get_window_extent()
    assert all(box.y0 >= ax.get_window_extent().y1 - 1 for ax in (a1, a2))   # above the panels
    plt.close(fig)
    with pytest.raises(ValueError, match="no labelled"):
        figures.figure_legend(plt.figure())


def test_regime_patches_skip_regimes_without_area():
    names = list(osc.REGIMES)
    codes = np.array([[0, 0, 2], [2, 3, 3]])               # no "critical" cell
    patches = figures.regime_patches(codes, names)
    assert [p.get_label() for p in patches] == ["overdamped", "underdamped", "unstable"]
    assert patches[0].get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(plotting.REGIME_COLORS["overdamped"]))


def test_exact_recursion_coefficients_match_the_closed_forms_at_short_delay_and_exceed_them_at_long_delay():
    a, mu = 1e-3, 0.9
    m, c = figures.exact_recursion_coefficients(mu, a, [1, 16])
    assert m[0] == pytest.approx(float(lagged.discrete_mass(mu)), rel=2e-3)   # one-step delay: (1-mu)/ln(1/mu)
    closed = osc.coefficients(1.0, mu, a, np.array([1, 16]))                 # learning_rate * stiffness = a
    assert c[0] == pytest.approx(closed.damping[0], rel=1e-3)
    assert m[1] - m[0] > 1.4 * (closed.mass[1] - closed.mass[0])            # the delay expansion's higher orders
    with pytest.raises(ValueError):
        figures.exact_recursion_coefficients(mu, a, [1.5])
