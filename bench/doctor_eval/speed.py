"""The run doctor's speed rows (``bench/bench_doctor.py``): the whole report on one log, the CLI start-up and the
multi-log command on the shared logs, and their rows in the written tables."""
from __future__ import annotations

import subprocess
import time

import numpy as np

from doctor_eval import corpus as C
from rlvr_dynamics.paths import REPO_ROOT, SHARED_DIR


def machine() -> str:
    """The CPU the speed rows were measured on, as ``/proc/cpuinfo`` names it, its cores and its widest vector unit
    (the same code ran 2.8× slower on an AVX2-only EPYC than on an AVX-512 one: the rows are this machine's)."""
    import os
    from pathlib import Path

    info = Path("/proc/cpuinfo")
    text = info.read_text() if info.exists() else ""
    model = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")), "a CPU")
    flags = set(next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), []))
    simd = "AVX-512" if "avx512f" in flags else "AVX2, no AVX-512" if "avx2" in flags else "no AVX2"
    return f"{model}, {os.cpu_count()} cores, {simd}"


def speed() -> list[dict]:
    """Seconds per log for the whole report (P1 reference fit, response laws, forecast, reading, detectors), the
    CLI start-up and the multi-log command on the shared logs: ``[{"what", "value", "target", "text"}]``."""
    from rlvr_dynamics.doctor.pipeline import fit_run

    rows, cpu = [], machine()
    logs = [r for r in C.load_corpus(split="dev", sources=("project",))][:40] + C.shared_runs()
    times = []
    for r in logs:
        steps, _ = r.log.reward_curve()
        t0 = time.perf_counter()
        fit_run(r.log, forecast_steps=[int(steps[-1]) + max(1, len(steps) // 10)])
        times.append(time.perf_counter() - t0)
    times = np.array(times)
    rows.append({"what": "one log, whole report (P1 reference fit, response laws, forecast, reading, detectors)",
                 "value": float(times.max()), "target": 0.5,
                 "text": f"{times.size} real logs of 100–600 points: median {np.median(times):.2f} s, max "
                         f"{times.max():.2f} s (target ≤ 0.5 s; {cpu})"})
    exe = REPO_ROOT / ".venv" / "bin" / "rlvr-dynamics"
    if exe.exists():
        starts = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([str(exe), "fit", "--help"], capture_output=True, check=True)
            starts.append(time.perf_counter() - t0)
        rows.append({"what": "`rlvr-dynamics fit --help` start-up", "value": float(np.median(starts)),
                     "target": 0.4, "text": f"median {np.median(starts):.2f} s of 5 (target ≤ 0.4 s; {cpu})"})
        shared = SHARED_DIR / "grpo_logs"
        if shared.exists():
            t0 = time.perf_counter()
            out = subprocess.run([str(exe), "fit", str(shared)], capture_output=True, text=True)
            dt = time.perf_counter() - t0
            rows.append({"what": "`rlvr-dynamics fit ../shared/grpo_logs` (15 logs, one line each)", "value": dt,
                         "target": 3.0, "text": f"{dt:.2f} s, exit {out.returncode} (target ≤ 3 s; {cpu})"})
    return rows


def speed_target_row(r: dict, yes) -> str:
    """The targets-table row of one speed measurement (``yes``: the table's met/not-met marker)."""
    return f"| speed: {r['what']} (≤ {r['target']:g} s) | {r['value']:.2f} s | | | {yes(r['value'] <= r['target'])} |"


def rewrite_speed(text: str, rows: list[dict], yes) -> str:
    """``text`` (the written tables) with its speed target rows and its Speed section replaced by ``rows`` (a
    re-measurement on an idle machine: the speed of the same tools, whose hash the header keeps)."""
    out = []
    for line in text.split("\n"):
        hit = next((r for r in rows if line.startswith(f"| speed: {r['what']} (")), None)
        if hit is None:
            hit_section = next((r for r in rows if line.startswith(f"- {r['what']}: ")), None)
            out.append(f"- {hit_section['what']}: {hit_section['text']}" if hit_section else line)
        else:
            out.append(speed_target_row(hit, yes))
    return "\n".join(out)
