"""Benchmarks and validation tables for ``rlvr-dynamics fit`` (prints figures; not a test).

(a) milliseconds per response-law fit on a 1,000-step log (target ≤ 10 ms), against P1's multi-start fit;
(b) seconds for the whole ``../shared/grpo_logs`` folder, load + response fits + diagnostics (target ≤ 2 s);
(c) the forecast calibration table (DESIGN.md "Judging the run tools") on the project's committed runs (development
    set: where the forecaster's constants were set), on the P1 main grid ``p1-main`` (held out: trained after the
    forecaster and the detectors were frozen) and on ``../shared/grpo_logs`` (held out), prefixes 10–50 %;
(d) P1-C13: the diagnostics' confusion matrix on ``data/runs/p1-fail-*`` and the false-alarm rate on the shared logs
    and on the healthy ``p1-main`` runs.

    .venv/bin/python bench/bench_runs.py [--skip-dev] [--skip-mmf]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from doctor_eval import forecasts as fc
from doctor_eval.detectors import confusion_matrix
from rlvr_dynamics.doctor import detectors as dg
from rlvr_dynamics.doctor.pipeline import resolve_reward_bounds
from rlvr_dynamics.doctor.reading import response_laws as rl
from rlvr_dynamics.p1 import laws
from rlvr_dynamics.paths import SHARED_DIR
from rlvr_dynamics.runs import load_committed_runs, load_log

SHARED = SHARED_DIR / "grpo_logs"


def fit_speed() -> None:
    rng = np.random.default_rng(0)
    t = np.arange(1000.0)
    curves = {"overdamped": laws.three_phase(t, 0.2, 0.7, 200.0, 40.0),
              "underdamped": laws.three_phase_underdamped(t, 0.2, 0.7, 0.3, 2 * math.pi / 300),
              "first order": laws.single_exponential(t, 0.2, 0.7, 150.0)}
    print("(a) ms per law fit, 1,000-step log, σ = 0.02: CPU time (wall time), median of 15; P1's fit: one run, "
          "wall")
    print("| curve | " + " | ".join(rl.LAW_NAMES) + " | P1 multi-start three-phase |")
    print("|---|" + "---|" * (len(rl.LAW_NAMES) + 1))
    all_ms = []
    for name, clean in curves.items():
        y = clean + rng.normal(0, 0.02, t.size)
        cells = []
        for law in rl.LAW_NAMES:
            rl.fit_response(t, y, law, reward_bounds=(0, 1))
            ts, cpu = [], []
            for _ in range(15):
                t0, c0 = time.perf_counter(), time.process_time()
                rl.fit_response(t, y, law, reward_bounds=(0, 1))
                ts.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            ms = 1000 * float(np.median(cpu))
            all_ms.append(ms)
            cells.append(f"{ms:.1f} ({1000 * float(np.median(ts)):.1f})")
        t0 = time.perf_counter()
        laws.fit_three_phase(t, y, r_bounds=(0, 1))
        cells.append(f"{1000 * (time.perf_counter() - t0):.0f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"CPU time per law fit: median {np.median(all_ms):.1f} ms, max {max(all_ms):.1f} ms (target ≤ 10 ms)\n")


def shared_logs():
    out = []
    if not SHARED.exists():
        return out
    import json

    index = {r["csv"]: r for r in json.loads((SHARED / "index.json").read_text())}
    for p in sorted(SHARED.glob("*.csv")):
        out.append((p, index.get(p.name, {})))
    return out


def folder_speed() -> None:
    logs = shared_logs()
    if not logs:
        print("(b) ../shared/grpo_logs absent: skipped\n")
        return
    t0, c0 = time.perf_counter(), time.process_time()
    for p, _ in logs:
        log = load_log(p)
        st, y = log.reward_curve()
        rb = resolve_reward_bounds(y)
        fits = rl.fit_response_laws(st, y, reward_bounds=rb)
        dg.diagnose(log, response=fits, reward_bounds=rb)
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    print(f"(b) whole shared folder ({len(logs)} logs): load + 3 response laws + 5 detectors in {dt:.2f} s wall, "
          f"{dc:.2f} s CPU (target ≤ 2 s)\n")


def _curves(runs) -> list:
    """``(id, steps, reward, reward bounds)`` of committed runs, the input of :func:`doctor_eval.forecasts.calibration_table`."""
    out = []
    for r in runs:
        st, y = r.log.reward_curve()
        out.append((r.id, st.astype(float), y, resolve_reward_bounds(y)))
    return out


def calibration(skip_dev: bool) -> None:
    if not skip_dev:
        dev = [c for pre in ("p1-long", "p1-sizes", "p2-lr") for c in _curves(load_committed_runs(pre))
               if len(c[1]) >= 40]
        print(fc.format_calibration(fc.calibration_table(dev), f"(c1) development set: {len(dev)} committed runs "
                                                                "(share within 5 % of the range / median error)"))
        print()
    main_grid = _curves(load_committed_runs("p1-main"))
    if main_grid:
        print(fc.format_calibration(fc.calibration_table(main_grid), f"(c1b) held out: the P1 main grid, "
                                                                      f"{len(main_grid)} runs trained afterwards"))
        print()
    logs = shared_logs()
    if not logs:
        return
    rows = []
    for p, meta in logs:
        log = load_log(p)
        st, y = log.reward_curve()
        rows.append((p.name, st.astype(float), y, resolve_reward_bounds(y), meta.get("prompts_per_step", 0)))
    batch = [r[:4] for r in rows if (r[4] or 0) >= 64]
    t0 = time.perf_counter()
    tab_all = fc.calibration_table([r[:4] for r in rows])
    tab_batch = fc.calibration_table(batch)
    print(fc.format_calibration(tab_batch, f"(c2) held out: ../shared/grpo_logs, batch-averaged (≥ 64 prompts/step), "
                                           f"{len(batch)} logs"))
    print()
    print(fc.format_calibration(tab_all, f"(c3) held out: all {len(rows)} shared logs"))
    print(f"({time.perf_counter() - t0:.1f} s)\n")


def diagnostics_tables() -> None:
    runs = load_committed_runs("p1-fail")
    results = {}
    for run in runs:
        st, y = run.log.reward_curve()
        rb = resolve_reward_bounds(y)
        fits = rl.fit_response_laws(st, y, reward_bounds=rb)
        pref = fits["preferred"]
        margin = (rl.stability_margin(fits[pref].damping_over_stiffness, fits[pref].damping_over_stiffness_sd,
                                      run.refresh_interval) if pref else None)
        results[run.id.rsplit("-", 1)[0].replace("p1-fail-", "")] = dg.diagnose(run.log, response=fits,
                                                                                 margin=margin, reward_bounds=rb)
    print("(d1) P1-C13 confusion matrix on the committed failure runs (step at which each detector fires)")
    print(confusion_matrix(results))
    expected = {"reward-hacking": "reward_hacking", "degeneracy-easy": "advantage_degeneracy",
                "degeneracy-hard": "advantage_degeneracy", "concentration": "policy_concentration",
                "instability-lag": "dynamical_instability", "instability-lr": "dynamical_instability",
                "healthy": None}
    hits = sum(results[r][d].fired for r, d in expected.items() if d and r in results)
    n_fail = sum(1 for d in expected.values() if d)
    off = sum(v.fired for r, dets in results.items() for name, v in dets.items()
              if name != expected.get(r) and name != "collapse_warning")
    n_off = sum(1 for r, dets in results.items() for name in dets if name != expected.get(r)
                and name != "collapse_warning")
    print(f"\nmatching detector fires on {hits}/{n_fail} failure runs; off-diagonal detector firings {off}/{n_off}\n")
    healthy = {}
    for run in load_committed_runs("p1-main"):
        st, y = run.log.reward_curve()
        rb = resolve_reward_bounds(y)
        healthy[run.id] = dg.diagnose(run.log, response=rl.fit_response_laws(st, y, reward_bounds=rb), reward_bounds=rb)
    if healthy:
        print(f"(d1b) the detectors on the {len(healthy)} healthy P1 main-grid runs (trained after they were frozen)")
        print(confusion_matrix(healthy))
        print()
    logs = shared_logs()
    if not logs:
        return
    shared = {}
    for p, _ in logs:
        log = load_log(p)
        st, y = log.reward_curve()
        rb = resolve_reward_bounds(y)
        shared[p.stem] = dg.diagnose(log, response=rl.fit_response_laws(st, y, reward_bounds=rb), reward_bounds=rb)
    print("(d2) the same detectors on the 15 shared logs (healthy published runs)")
    print(confusion_matrix(shared))
    print("\n| detector | available on | fires on (false-alarm rate) |\n|---|---|---|")
    for name in dg.DETECTORS:
        avail = [d[name] for d in shared.values() if d[name].available]
        fired = sum(d.fired for d in avail)
        rate = f"{fired}/{len(avail)} ({fired / len(avail):.0%})" if avail else "–"
        print(f"| {name} | {len(avail)}/{len(shared)} | {rate} |")
    any_fire = sum(any(d.fired for d in dets.values()) for dets in shared.values())
    print(f"\nlogs with at least one detector firing: {any_fire}/{len(shared)}")


BOOK_FIGURES = {"shared_verl_q7b_mcore_off.png": SHARED / "verl_asyncrew_q7b_mcore_off.csv",
                "p1_fail_reward_hacking.png": "p1-fail-reward-hacking"}
"""The two figures of ``book/diagnose.md``: one shared (third-party, Apache-2.0) log and one committed failure run."""


def book_figures(folder: str) -> None:
    """Write the figures of ``book/diagnose.md`` (``rlvr-dynamics fit … --png``, at a small size)."""
    from pathlib import Path

    from rlvr_dynamics.doctor.render.html import write_report
    from rlvr_dynamics.doctor.pipeline import fit_run

    out = Path(folder)
    for name, src in BOOK_FIGURES.items():
        if isinstance(src, str):
            run = load_committed_runs(src)[0]
            log, k_ref = run.log, run.refresh_interval
        else:
            if not src.exists():
                print(f"{src} absent: {name} not written")
                continue
            log, k_ref = load_log(src), 1
        report = fit_run(log, p1_laws=False, refresh_interval=k_ref)
        write_report(log, report, png=out / name, dpi=72)
        print(f"wrote {out / name}")


def issue19_speed() -> None:
    """Issue 19 item 5: seconds per log for fit + forecast + diagnosis with P1's reference fit (target ≤ 0.5 s),
    wall time of `rlvr-dynamics --help` (≤ 0.4 s) and of `rlvr-dynamics fit <shared folder>` (15 logs, ≤ 3 s)."""
    import subprocess
    import sys

    from rlvr_dynamics.doctor.pipeline import fit_run

    per = []
    for path in sorted(SHARED.glob("*.csv")):
        log = load_log(path)
        steps = log.reward_curve()[0]
        fit_run(log, forecast_steps=[int(steps[-1] * 1.1)])  # warm
        t0 = time.perf_counter()
        fit_run(log, forecast_steps=[int(steps[-1] * 1.1)])
        per.append(time.perf_counter() - t0)
    print(f"(e) fit+forecast+diagnose with P1's reference fit, per shared log: median {np.median(per):.3f} s, "
          f"max {max(per):.3f} s (target ≤ 0.5 s)")
    exe = [sys.executable, "-m", "rlvr_dynamics.cli"]
    for label, cmd, target in (("--help", [*exe, "--help"], 0.4), ("fit <15 shared logs>", [*exe, "fit", str(SHARED)],
                                                                      3.0)):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        print(f"    rlvr-dynamics {label}: {time.perf_counter() - t0:.2f} s wall (target ≤ {target} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-dev", action="store_true", help="skip the development-set calibration (≈ 1 min)")
    ap.add_argument("--figures", metavar="DIR", help="only write the figures of book/diagnose.md into DIR")
    args = ap.parse_args()
    if SHARED.exists():
        issue19_speed()
    if args.figures:
        book_figures(args.figures)
        return
    fit_speed()
    folder_speed()
    calibration(args.skip_dev)
    diagnostics_tables()


if __name__ == "__main__":
    main()
