"""The page "What this means for your GRPO run": the project's own findings and what the run doctor can and cannot
tell, with every number computed at build time from the committed verdicts, bisections and benchmark (never typed),
and each piece of advice shown next to the verdicts it rests on.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..paths import DATA_DIR
from .markup import badge, claim_ref, md_escape

BENCHMARK_JSON = "doctor_benchmark.json"
"""The run doctor's benchmark on the test part of the labelled corpus (``bench/bench_doctor.py --write``)."""


def _row(rows: list[dict], notebook: str, cid: str, setting: str) -> dict:
    found = [r for r in rows if r["notebook"] == notebook and r["id"] == cid and r.get("setting") == setting]
    if not found:
        raise KeyError(f"findings: no {setting} row for {cid} on {notebook} (have: "
                       f"{sorted({(r['notebook'], r['id'], r.get('setting')) for r in rows if r['id'] == cid})})")
    return found[0]


def gap_magnitude_spread(bisection: str = "p2-len") -> dict[str, float]:
    """How far the critical SGD step of the length sweep moves over T, and how far η_c·‖g₊ − g₋‖ moves (the
    starting policy's gradient gap of the per-response mean score, as measured by ``rlvr-dynamics bisect``):
    ``{"algo": ..., "eta_spread", "product_spread", "t_min", "t_max"}`` per loss, max/min over T of the seed
    geometric mean."""
    from ..grpo import critical_step as cs

    summary = cs.load_bisection(DATA_DIR / "bisections" / f"{bisection}.json")
    cells = cs.estimates_table(summary)
    lengths = np.array(sorted(cells["length"].unique()), float)
    seeds = sorted(cells["seed"].unique())
    start_of = cells.groupby("length")["start"].first()
    gap = np.array([summary["gap_norms"][start_of[t]]["mean_score"] for t in lengths])
    out = {}
    for algo in ("grpo", "dr_grpo"):
        eta = np.array([[cells[(cells.loss_type == algo) & (cells.length == t) & (cells.seed == s)]["estimate"].item()
                         for t in lengths] for s in seeds])
        mean = np.exp(np.nanmean(np.log(eta), axis=0))
        prod = mean * gap
        out[algo] = {"eta_spread": float(mean.max() / mean.min()), "product_spread": float(prod.max() / prod.min()),
                     "t_min": int(lengths[0]), "t_max": int(lengths[-1])}
    return out


def practice_markdown(book_dir: Path, rows: list[dict], verdicts: list[dict]) -> str:
    """The page's Markdown (see the module docstring). ``rows``: every recorded evidence row (with ``setting``);
    ``verdicts``: :func:`rlvr_dynamics.book.claims.claim_verdicts`."""
    by_id = {v["id"]: v for v in verdicts}

    def head(cid: str) -> str:
        v = by_id[cid]
        cells = " · ".join(f"{s} {badge(x)}" for s, x in v["by_setting"].items() if s != "context")
        return f"{claim_ref(cid)}: {cells}; headline {badge(v['verdict'])}"

    def page(nb: str, title: str) -> str:
        return f"{{doc}}`{title} <../executed/{nb}>`"

    c5 = _row(rows, "p1_group_size", "P1-C5", "exact")
    rloo = _row(rows, "p1_group_size", "P1-C5", "context")
    c5_grpo = _row(rows, "grpo_p1_dynamics", "P1-C5", "testbed")
    c10 = _row(rows, "p1_stability", "P1-C10", "exact")
    gaps = gap_magnitude_spread()
    bench = json.loads((book_dir / BENCHMARK_JSON).read_text())
    det = bench["detectors"]
    live = det.get("live", {})

    def ci(r: dict) -> str:
        return f" [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]" if r.get("ci") else ""

    lines = [
        "# What this means for your GRPO run\n",
        "The four findings of this book that a practitioner can use, each with the verdicts it rests on and a link "
        "to the evidence; then what the run doctor can and cannot tell about your own run. Every number on this "
        "page is computed from the committed results when the book is built. Advice is stated only as strongly as "
        "the verdicts allow: where the evidence is a bandit or a tiny model, that is said.\n",
        "## 1. GRPO's group size moves where the reward settles\n",
        f"In the bandit where P1's mean-field picture is exact, GRPO's std-normalised advantage moves the plateau by "
        f"**{float(c5['measured']):+.1%} of the reward rise** between G = 4 and G = 16{ci(c5)}, while an unbiased "
        f"leave-one-out (RLOO-type) advantage moves it by {float(rloo['measured']):+.2%} "
        f"({page('p1_group_size', 'group size')}). So the paper's statement that the mean trajectory does not "
        f"depend on G is not what the std normalisation does ({head('P1-C5')}). On the tiny GRPO testbed the "
        f"plateau difference is {float(c5_grpo['measured']):+.3f}{ci(c5_grpo)} of the rise, too noisy to decide "
        f"({page('grpo_p1_dynamics', 'GRPO reward dynamics')}).\n",
        "*For your run:* when you compare runs at different G, expect the plateau itself to move, not only the "
        "noise; an RLOO or Dr. GRPO advantage (no division by the group std) removes this mechanism.\n",
        "## 2. The safe step follows the gradient gap's size, not 1/T\n",
        f"Over response lengths T = {gaps['grpo']['t_min']}–{gaps['grpo']['t_max']} tokens on the tiny testbed, the "
        f"critical SGD step of GRPO moves {gaps['grpo']['eta_spread']:.0f}× (Dr. GRPO "
        f"{gaps['dr_grpo']['eta_spread']:.0f}×), while the critical step times the starting policy's gradient-gap "
        f"norm ‖g₊ − g₋‖ stays within {gaps['grpo']['product_spread']:.1f}× (Dr. GRPO "
        f"{gaps['dr_grpo']['product_spread']:.1f}×) ({page('grpo_p2_length', 'length on real GRPO')}). P2's 1/T law "
        f"for the un-normalised loss is a statement about the token model; on a network the gap's size is what sets "
        f"the threshold ({head('P2-C7')}).\n",
        "*For your run:* a learning rate that was safe at one response length is not safe at another in proportion "
        "to 1/T; measure the gradient gap (or bisect the step, `rlvr-dynamics bisect`) at the length you train at.\n",
        "## 3. The stability threshold K·η·K_ref = 1 − μ is a short-lag limit\n",
        f"Where the threshold's own linearisation is accurate (short lag), the measured critical refresh interval "
        f"is within {float(c10['measured']):.0%} of (1 − μ)/(ηK) at worst ({head('P1-C10')}, "
        f"{page('p1_stability', 'stability threshold')}); at long lag the exact boundary drifts from the formula, "
        "towards π/2 times it (the spec's derivation), so the formula is not a safe bound there.\n",
        "*For your run:* keep η·K·K_ref well below 1 − μ; the formula tells you the order of magnitude of the "
        "largest safe refresh interval, not its exact value.\n",
        "## 4. What the run doctor can and cannot tell\n",
        f"On the test part of a labelled corpus ({bench['detectors']['runs']} runs, "
        f"{bench['detectors']['healthy']} healthy, simulated and real; {{doc}}`Diagnose a run </diagnose>`), at "
        f"least one detector raised a false alarm on **{bench['detectors']['any_false_alarm_rate']:.1%}** of "
        "healthy runs. Per detector:\n",
        "| detector | false alarms on healthy runs | failures of that kind detected |",
        "|---|---:|---:|"]
    for name, d in det["detectors"].items():
        found = "–" if d.get("detection_rate") is None else f"{d['mode_detected']} of {d['mode_runs']}"
        lines.append(f"| {md_escape(name.replace('_', ' '))} | {d['false_alarms']} of {d['healthy_runs']} "
                     f"({d['false_alarm_rate']:.1%}) | {found} |")
    lead = det["detectors"].get("collapse_warning", {}).get("lead", {})
    lines += [""]
    if lead:
        lines.append(f"Before a collapse, the warning came at least 10 logged steps ahead in "
                     f"{lead['warned_10_ahead']} of {lead['population']} collapses (median lead "
                     f"{lead['median_lead']:.0f} steps).")
    if live.get("healthy"):
        lines.append(f" The live doctor's stop rule stopped {live['healthy']['stopped']} of "
                     f"{live['healthy']['runs']} healthy runs.")
    fc = bench["forecast"]
    errs = [(k, v["forecast"]["median_error"], v["persistence"]["median_error"]) for k, v in fc["prefixes"].items()]
    lines += ["", "", f"The reward forecast, scored on {fc['n_runs']} runs from {len(errs)} cut points, has a "
              "median error (in units of each run's reward range) of "
              + ", ".join(f"{e:.3f} vs {p:.3f}" for _, e, p in errs)
              + " for \"the reward stays where it is\" (at "
              + ", ".join(f"{float(k):.0%}" for k, _, _ in errs) + " of the run seen).\n",
              "*For your run:* read a detector's alarm as a reason to look at the named signal, not as a diagnosis; "
              "most failures of each kind are not detected, so a quiet doctor is not a clean bill of health. Trust "
              "the forecast's interval more than its point, which is barely better than persistence.\n"]
    return "\n".join(lines) + "\n"
