"""The practice page's own figures (sections 6 to 9): drawn when the book is built, from committed files only, by
the same data functions the sections' text reads, in the book's figure style (:mod:`rlvr_dynamics.plotting`).

- section 6: per detector, its false-alarm rate on healthy runs and its detection rate on failures of its kind, from
  the doctor's benchmark (``book/doctor_benchmark.json``, written by ``bench/bench_doctor.py --write``);
- section 7: the SmolLM2-135M panel reward per run and group size, from the committed runs (``data/runs``);
- section 8: per grid and group size, the share of groups without spread and the seconds per step
  (:func:`rlvr_dynamics.runs.group_size.group_size_summary`);
- section 9: the live doctor's measured overhead per setting (``book/live_overhead.json``).

Each function writes one PNG under ``<book>/_generated/practice_figures/`` and returns the Markdown that shows it
with its caption (:func:`figure_block`), or ``""`` when its data is missing. The PNGs carry no time stamp, so the same
committed files give the same bytes.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

from .._io import atomic_write_bytes
from .markup import GENERATED

FIGURE_DIR = "practice_figures"
"""Folder of the page's own figures, under ``<book>/_generated/`` (the page is ``_generated/practice.md``)."""


def figure_block(src: str, caption: str, name: str, alt: str) -> str:
    """A MyST figure (full column width, so its legend reads at natural size) with ``caption`` under it."""
    return "\n".join([f"```{{figure}} {src}", f":name: {name}", f":alt: {alt}", ":width: 100%", "",
                      caption, "```", ""])


def _save(fig: Figure, book_dir: Path, stem: str) -> str:
    """Write ``fig`` as ``_generated/practice_figures/<stem>.png`` (no metadata: the bytes depend on the data only);
    return its path relative to the page."""
    from ..plotting import DPI
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    atomic_write_bytes(Path(book_dir) / GENERATED / FIGURE_DIR / f"{stem}.png", buf.getvalue())
    return f"{FIGURE_DIR}/{stem}.png"


def _figure(ncols: int = 1, nrows: int = 1, panel_aspect: float | None = None) -> Figure:
    from ..plotting import figsize
    return Figure(figsize=figsize(ncols, nrows, panel_aspect))


class _style:
    """The book's figure style for the duration of a ``with`` block (the global matplotlib settings are restored)."""

    def __enter__(self):
        from ..plotting import use_style
        self._ctx = mpl.rc_context()
        self._ctx.__enter__()
        use_style()
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def detector_figure(book_dir: Path, bench: dict) -> str:
    """Section 6: false alarms on healthy runs and failures of the detector's kind detected, per detector."""
    from ..plotting import COLORS
    dets = bench.get("detectors", {}).get("detectors", {})
    if not dets:
        return ""
    names = list(dets)
    y = np.arange(len(names))
    with _style():
        fig = _figure(panel_aspect=0.55)
        ax = fig.add_subplot()
        fa = [100 * d["false_alarm_rate"] for d in dets.values()]
        found = [np.nan if d.get("detection_rate") is None else 100 * d["detection_rate"] for d in dets.values()]
        ax.barh(y - 0.2, fa, 0.4, color=COLORS["alert"], label="false alarms on healthy runs")
        ax.barh(y + 0.2, np.nan_to_num(found), 0.4, color=COLORS["measured"], label="failures of its kind detected")
        for k, d in enumerate(dets.values()):
            ax.text(fa[k] + 1, y[k] - 0.2, f"{d['false_alarms']} of {d['healthy_runs']}", va="center", fontsize=10)
            ax.text((0 if np.isnan(found[k]) else found[k]) + 1, y[k] + 0.2,
                    "none of its kind in the test part" if np.isnan(found[k])
                    else f"{d['mode_detected']} of {d['mode_runs']}", va="center", fontsize=10)
        ax.set_yticks(y, [n.replace("_", " ") for n in names])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of the corpus test part's runs (%)")
        ax.legend(loc="center right")
        src = _save(fig, book_dir, "detectors")
    return figure_block(src, "Each of the run doctor's detectors on the test part of the labelled corpus "
                        f"({bench['detectors']['runs']} runs, {bench['detectors']['healthy']} healthy): the share of "
                        "healthy runs on which it fired (red) and the share of the runs with its own kind of failure "
                        f"that it caught (blue), with the counts: at most {max(fa):.0f} % of the healthy runs raise "
                        f"any one detector"
                        + (f", and no detector catches more than {np.nanmax(found):.0f} % of the failures of its "
                           "kind" if np.isfinite(found).any() else "") + ".", "fig-practice-detectors",
                        "false alarms and detections per detector")


def panel_figure(book_dir: Path, prefix: str = "smollm-panel-") -> str:
    """Section 7: the panel reward of every complete SmolLM2-135M panel run against step, one panel per G, the late
    window (:data:`rlvr_dynamics.runs.group_size.LATE_STEPS`) shaded and its mean over the seeds drawn across it."""
    from ..plotting import COLORS, SEQUENCE
    from ..runs.committed import grid_runs
    from ..runs.group_size import LATE_STEPS, finite_mean
    runs = sorted((r for r in grid_runs(prefix) if "panel_reward" in r.log.series),
                  key=lambda r: r.config.seed)
    sizes = sorted({r.config.num_generations for r in runs})
    if not sizes or len(sizes) > 2:
        return ""
    with _style():
        fig = _figure(ncols=len(sizes))
        axes = fig.subplots(1, len(sizes), sharey=True, squeeze=False)[0]
        for ax, G in zip(axes, sizes):
            mine = [r for r in runs if r.config.num_generations == G]
            late = []
            for k, r in enumerate(mine):
                v = np.asarray(r.log.series["panel_reward"], float)
                ok = np.isfinite(v)
                ax.plot(r.log.steps[ok], v[ok], color=SEQUENCE[k % len(SEQUENCE)], marker=".", ms=4,
                        label=f"seed {r.config.seed}")
                late.append(finite_mean(v[r.log.steps >= r.config.max_steps - LATE_STEPS]))
            start = mine[0].config.max_steps - LATE_STEPS
            ax.axvspan(start, mine[0].config.max_steps, color=COLORS["muted"], alpha=0.2, lw=0)
            ax.hlines(np.mean(late), start, mine[0].config.max_steps, color=COLORS["theory"], lw=2.4,
                      label="late mean over seeds")
            ax.set_title(f"G = {G} ({len(mine)} runs)")
            ax.set_xlabel("optimizer step")
            ax.legend(loc="lower right")
        axes[0].set_ylabel("panel reward (256 held-out sums)")
        src = _save(fig, book_dir, "smollm_panel")
    return figure_block(src, "Reward of SmolLM2-135M on the fixed panel of 256 held-out two-digit sums against "
                        "optimizer step, one panel per group size and one colour per seed; the shaded last "
                        f"{LATE_STEPS} steps are the late window whose mean over the seeds (black bar) the group-size "
                        "row compares.", "fig-practice-smollm-panel", "SmolLM2 panel reward per group size")


def group_size_figure(book_dir: Path, grids) -> str:
    """Section 8: the share of groups without spread and the seconds per step against G, per grid (one point per run,
    the line through the means); ``grids``: ``[(label, group_size_summary(...)), ...]``."""
    from ..plotting import SEQUENCE
    from ..runs.group_size import finite_mean
    if not grids:
        return ""
    with _style():
        fig = _figure(ncols=2)
        ax_z, ax_s = fig.subplots(1, 2)
        for k, (label, grid) in enumerate(grids):
            sizes = sorted(grid)
            for ax, key, scale in ((ax_z, "zero_std_share", 100), (ax_s, "seconds_per_step", 1)):
                for G in sizes:
                    v = scale * np.asarray(grid[G][key], float)
                    ax.plot(np.full(v.size, G), v, "o", color=SEQUENCE[k], alpha=0.5, ms=5)
                ax.plot(sizes, [scale * finite_mean(grid[G][key]) for G in sizes], "-", color=SEQUENCE[k],
                        label=label.split(" (")[0])
        for ax in (ax_z, ax_s):
            ax.set_xscale("log", base=2)
            ticks = sorted({G for _, grid in grids for G in grid})
            ax.set_xticks(ticks, [str(G) for G in ticks])
            ax.set_xlabel("group size G")
        ax_z.set_ylabel("groups without spread (%)")
        ax_s.set_ylabel("wall seconds per step")
        ax_z.set_ylim(0, 100)
        ax_s.set_ylim(bottom=0)
        ax_z.legend(loc="upper right")
        src = _save(fig, book_dir, "group_size")
    return figure_block(src, "SmolLM2-135M trained with TRL's GRPO at two group sizes on the same prompts: left, the "
                        "share of prompt groups whose completions all got the same reward (mean over each run); "
                        "right, the wall seconds per optimizer step as recorded. One point per run, the line through "
                        "the means, one colour per grid.", "fig-practice-group-size",
                        "groups without spread and seconds per step against the group size")


def overhead_figure(book_dir: Path, overhead_json: str) -> str:
    """Section 9: the callback's added wall time per setting, per benchmarked model, with the two bare runs' drift
    (the resolution) shaded."""
    from ..plotting import COLORS, SEQUENCE
    path = Path(book_dir) / overhead_json
    if not path.exists():
        return ""
    b = json.loads(path.read_text(encoding="utf-8"))
    models = list(b["models"].items())
    settings = list(models[0][1]["overhead"])
    y = np.arange(len(settings))
    h = 0.8 / len(models)
    with _style():
        fig = _figure(panel_aspect=0.45)
        ax = fig.add_subplot()
        for k, (model, m) in enumerate(models):
            v = [100 * m["overhead"][s] for s in settings]
            ax.barh(y + (k - (len(models) - 1) / 2) * h, v, h, color=SEQUENCE[k], label=model)
            drift = abs(100 * m["bare_drift"])
            ax.axvspan(-drift, drift, color=COLORS["muted"], alpha=0.25, lw=0,
                       label="drift between two bare runs" if k == 0 else None)
        ax.set_yticks(y, [s.replace("doctor ", "").replace("gap every 10", "gap alignment\nevery 10")
                          for s in settings])
        ax.set_ylabel("RunDoctor setting")
        ax.invert_yaxis()
        ax.axvline(0, color=COLORS["theory"], lw=0.8)
        ax.set_xlabel("added wall time per step (% of a bare TRL step)")
        ax.legend(loc="lower right")
        src = _save(fig, book_dir, "overhead")
    return figure_block(src, f"The wall time the live doctor's callback adds to a TRL GRPO step, per setting, measured "
                        f"on {b['machine']['cpu']} ({b['machine']['cores']} cores, {b['settings']['batch']} "
                        "completions per step); the grey band is how far two runs without the callback differ, the "
                        "resolution of the measurement.", "fig-practice-overhead", "callback overhead per setting")
