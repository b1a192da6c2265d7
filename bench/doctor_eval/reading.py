"""Scoring the evidence reading (:func:`~rlvr_dynamics.doctor.reading.dynamics.read_dynamics`) on labelled runs:
the share read ``unstable`` on stable simulated curves, healthy real runs and simulated unstable curves."""
from __future__ import annotations

from typing import Any, Iterable

from rlvr_dynamics.doctor.reading.dynamics import MIN_POINTS, NOISE_ONLY_CEILING, VERDICTS, read_dynamics


def _group(run) -> str:
    """The benchmark group of a corpus run: ``sim <regime>`` for stable simulated curves, ``sim unstable``,
    ``sim collapse``, ``sim noise``, ``sim <failure mode>``; for real runs ``real <outcome>``."""
    if run.source == "sim":
        if run.outcome == "unstable" or run.regime == "growing":
            return "sim unstable"
        if run.outcome in ("collapse", "noise"):
            return f"sim {run.outcome}"
        if run.failure_mode:
            return f"sim {run.failure_mode}"
        return f"sim stable: {run.regime}"
    return f"real {run.outcome}"


def benchmark_reading(runs: Iterable) -> dict[str, Any]:
    """Read every run's full reward curve; per group (:func:`_group`) the count of each verdict and the share
    read ``unstable`` (targets: ≤ 2 % on stable simulated curves and healthy real runs, ≥ 90 % on simulated
    unstable curves; also on the readable ones only: a curve below the noise-ceiling rule reads ``noise only`` by
    design, whatever drew it). Returns ``{"groups": {group: {"n", verdict: count, "unstable_rate"}}, "targets": {...}}``."""
    groups: dict[str, dict[str, Any]] = {}
    for run in runs:
        steps, reward = run.log.reward_curve()
        r = read_dynamics(steps, reward, reward_bounds=run.reward_bounds)
        g = groups.setdefault(_group(run), {"n": 0, **{v: 0 for v in VERDICTS}, "readable": 0,
                                            "readable_unstable": 0})
        g["n"] += 1
        g[r.verdict] += 1
        readable = r.verdict != "noise only" and r.evidence.get("n", 0) >= MIN_POINTS
        g["readable"] += readable
        g["readable_unstable"] += readable and r.verdict == "unstable"
    for g in groups.values():
        g["unstable_rate"] = g["unstable"] / g["n"] if g["n"] else None
    pooled = lambda pred: [g for k, g in groups.items() if pred(k)]  # noqa: E731
    stable_sim = pooled(lambda k: k.startswith("sim stable"))
    healthy = pooled(lambda k: k == "real healthy")
    unstable = pooled(lambda k: k == "sim unstable")

    def rate(gs):
        n = sum(g["n"] for g in gs)
        return {"n": n, "unstable": sum(g["unstable"] for g in gs),
                "rate": sum(g["unstable"] for g in gs) / n if n else None}
    readable = [{"n": g["readable"], "unstable": g["readable_unstable"]} for g in unstable]
    targets = {"sim stable → unstable (≤ 2 %)": {**rate(stable_sim), "target": ("≤", 0.02)},
               "healthy real → unstable (≤ 2 %)": {**rate(healthy), "target": ("≤", 0.02)},
               "sim unstable → unstable (≥ 90 %)": {**rate(unstable), "target": ("≥", 0.90)},
               f"sim unstable, readable (ceiling ≥ {NOISE_ONLY_CEILING}, n ≥ {MIN_POINTS}) → unstable (≥ 90 %)":
                   {**rate(readable), "target": ("≥", 0.90)}}
    for t in targets.values():
        op, val = t["target"]
        t["met"] = None if t["rate"] is None else (t["rate"] <= val if op == "≤" else t["rate"] >= val)
    return {"groups": dict(sorted(groups.items())), "targets": targets}


def format_benchmark(result: dict[str, Any], title: str = "") -> str:
    """Markdown tables of :func:`benchmark_reading`: verdict counts per group, then the three targets."""
    lines = [f"### {title}" if title else "", "| group | n | " + " | ".join(VERDICTS) + " | unstable rate |",
             "|---|---:|" + "---:|" * (len(VERDICTS) + 1)]
    for name, g in result["groups"].items():
        rate = "n/a" if g["unstable_rate"] is None else f"{100 * g['unstable_rate']:.1f} %"
        lines.append(f"| {name} | {g['n']} | " + " | ".join(str(g[v]) for v in VERDICTS) + f" | {rate} |")
    lines += ["", "| target | unstable / n | rate | met |", "|---|---:|---:|---|"]
    for name, t in result["targets"].items():
        rate = "n/a" if t["rate"] is None else f"{100 * t['rate']:.1f} %"
        met = "n/a" if t["met"] is None else ("yes" if t["met"] else "NO")
        lines.append(f"| {name} | {t['unstable']} / {t['n']} | {rate} | {met} |")
    return "\n".join(x for x in lines if x is not None).lstrip("\n")
