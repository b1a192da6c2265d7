"""Score the run doctor on the labelled corpus (:mod:`rlvr_dynamics.runs.corpus`) with the baselines beside it.

DESIGN.md, "Judging the run tools". Prints, for the chosen split (default: the test part, never tuned on):

(1) the corpus: runs per split, source and outcome;
(2) forecasts: median error and share within 5 % of the range at prefixes 10/20/30/50 %, for the project's
    forecaster, persistence, MMF, Weibull, pow3 and the single exponential on the same rows; forecasts off by more
    than 1× the range; 80 % coverage and median width per noise class; the same on the 15 shared logs alone;
(3) the oscillator reading: share read "unstable" on stable simulated curves, healthy real runs and simulated
    unstable curves;
(4) the detectors: false alarms per detector on healthy runs, the collapse warning's lead time, detection of each
    induced failure mode, live ``RunDoctor`` agreement and ``stop_on_instability`` stops on healthy runs;
(5) speed: one log fitted, forecast and diagnosed (P1's reference fit included), ``rlvr-dynamics fit`` start-up,
    and the 15 shared logs through the multi-log command.

With ``--write`` the tables go to ``book/doctor_benchmark.md`` (included by the "Diagnose a run" page) and the
interval reliability diagram to ``book/diagnose_figures/interval_reliability.png``; the page records the hash of
the tools' sources, and ``tests/runs/test_doctor_benchmark.py`` fails when the tools change without a rerun.

    .venv/bin/python bench/bench_doctor.py [--split test|dev] [--write] [--skip-speed]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from rlvr_dynamics import runs as R
from rlvr_dynamics.paths import REPO_ROOT, SHARED_DIR
from rlvr_dynamics.runs import corpus as C

TABLES = REPO_ROOT / "book" / "doctor_benchmark.md"
RELIABILITY_PNG = REPO_ROOT / "book" / "diagnose_figures" / "interval_reliability.png"
TOOL_SOURCES = ("corpus.py", "noise.py", "forecast.py", "learning_curves.py", "reading.py", "response_laws.py",
                "_response_engine.py", "diagnostics.py", "live.py")
"""The modules whose behaviour the tables describe (``runs/``): their hash is written with the tables."""


def tools_hash() -> str:
    """sha256 (first 16 hex) over the sources of :data:`TOOL_SOURCES`, in order."""
    import hashlib

    h = hashlib.sha256()
    base = Path(R.__file__).parent
    for name in TOOL_SOURCES:
        p = base / name
        h.update(name.encode())
        h.update(p.read_bytes() if p.exists() else b"<absent>")
    return h.hexdigest()[:16]


def corpus_table(runs) -> str:
    rows = C.summary(runs)
    lines = ["| split | source | outcome | runs |", "|---|---|---|---|"]
    lines += [f"| {r['split']} | {r['source']} | {r['outcome']} | {r['runs']} |" for r in rows]
    return "\n".join(lines)


def speed() -> str:
    """Seconds per log for the whole report (P1 reference fit, response laws, forecast, reading, detectors), the
    CLI start-up and the multi-log command on the shared logs."""
    from rlvr_dynamics.runs.report import fit_run

    lines = []
    logs = [r for r in C.load_corpus(split="test", sources=("project", "shared"))][:40]
    times = []
    for r in logs:
        steps, _ = r.log.reward_curve()
        t0 = time.perf_counter()
        fit_run(r.log, forecast_steps=[int(steps[-1]) + max(1, len(steps) // 10)])
        times.append(time.perf_counter() - t0)
    times = np.array(times)
    lines.append(f"- one log, whole report (P1 reference fit, response laws, forecast, reading, detectors), "
                 f"{times.size} real logs of 100–600 points: median {np.median(times):.2f} s, max {times.max():.2f} s "
                 f"(target ≤ 0.5 s)")
    exe = REPO_ROOT / ".venv" / "bin" / "rlvr-dynamics"
    if exe.exists():
        starts = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([str(exe), "fit", "--help"], capture_output=True, check=True)
            starts.append(time.perf_counter() - t0)
        lines.append(f"- `rlvr-dynamics fit --help` start-up: median {np.median(starts):.2f} s of 5 (target ≤ 0.4 s)")
        shared = SHARED_DIR / "grpo_logs"
        if shared.exists():
            t0 = time.perf_counter()
            out = subprocess.run([str(exe), "fit", str(shared)], capture_output=True, text=True)
            dt = time.perf_counter() - t0
            lines.append(f"- `rlvr-dynamics fit ../shared/grpo_logs` (15 logs, one line each): {dt:.2f} s, exit "
                         f"{out.returncode} (target ≤ 3 s)")
    return "\n".join(lines)


def reliability_figure(bench: dict, path: Path) -> None:
    """Nominal vs empirical coverage of the forecast intervals per noise class (from ``benchmark_forecasts``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlvr_dynamics import plotting

    plotting.use_style()
    rel = bench.get("reliability") or {}
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect calibration")
    ax.axhspan(0.7, 0.9, xmin=0.75, xmax=0.85, color="0.9")
    for cls, pts in rel.items():
        levels = sorted(float(k) for k in pts)
        ax.plot(levels, [pts[str(k)] if str(k) in pts else pts[k] for k in levels], marker="o", label=cls)
    ax.set_xlabel("nominal coverage of the interval")
    ax.set_ylabel("share of targets inside")
    ax.set_xlim(0.4, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    from rlvr_dynamics.runs import diagnostics as dg
    from rlvr_dynamics.runs import forecast as fc
    from rlvr_dynamics.runs import reading as rd

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("test", "dev"), default="test")
    ap.add_argument("--write", action="store_true", help="write book/doctor_benchmark.md and the reliability figure")
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    t_start = time.perf_counter()
    runs = C.load_corpus(split=args.split)
    sections: list[tuple[str, str]] = []
    sections.append(("The corpus", corpus_table(C.load_corpus())))
    f_runs = [r for r in runs if r.log.reward_curve()[0].size >= 40]
    fbench = fc.benchmark_forecasts(f_runs)
    sections.append((f"Forecasts ({args.split} part, {len(f_runs)} runs with ≥ 40 points)",
                     fc.format_forecast_benchmark(fbench)))
    shared = [r for r in runs if r.source == "shared"]
    if shared:
        sections.append((f"Forecasts on the {len(shared)} shared logs alone",
                         fc.format_forecast_benchmark(fc.benchmark_forecasts(shared))))
    sections.append((f"The oscillator reading ({args.split} part)", rd.format_benchmark(
        rd.benchmark_reading(runs))))
    dbench = dg.benchmark_detectors(runs)
    sections.append((f"The detectors ({args.split} part)", dg.format_detector_benchmark(dbench)))
    if not args.skip_speed:
        sections.append(("Speed", speed()))
    text = "\n\n".join(f"### {title}\n\n{body}" for title, body in sections)
    print(text)
    print(f"\n({time.perf_counter() - t_start:.0f} s; tools hash {tools_hash()})")
    if args.write:
        from rlvr_dynamics._io import atomic_write_text

        header = (f"<!-- generated by bench/bench_doctor.py --split {args.split} --write; tools hash {tools_hash()}; "
                  f"do not edit -->\n")
        atomic_write_text(TABLES, header + text.replace("### ", "#### ") + "\n")
        reliability_figure(fbench, RELIABILITY_PNG)
        summary = {"split": args.split, "tools_hash": tools_hash(),
                   "forecast": _jsonable({k: v for k, v in fbench.items() if k != "rows"}),
                   "detectors": _jsonable(dbench)}
        atomic_write_text(TABLES.with_suffix(".json"), json.dumps(summary, indent=1, allow_nan=False) + "\n")
        print(f"wrote {TABLES.relative_to(REPO_ROOT)} and {RELIABILITY_PNG.relative_to(REPO_ROOT)}", file=sys.stderr)


def _jsonable(obj):
    from rlvr_dynamics.runs.report import to_jsonable

    return to_jsonable(obj)


if __name__ == "__main__":
    main()
