"""The page "What this means for your GRPO run": the project's own findings and what the run doctor can and cannot
tell (sections 1–7; 8 and 9, what a group size and the doctor's logging cost, are :mod:`.practice_costs`, 10, what
to do when the doctor fires, is :mod:`.practice_actions`; every section has a captioned figure, the page's own drawn
by :mod:`.practice_figures`), with every number computed at build time from the committed verdicts, bisections and
benchmark (never typed), and each piece of advice shown next to the verdicts it rests on.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ..paths import DATA_DIR
from .markup import badge, claim_ref, md_escape
from .robustness_view import setting_label, verdict_note
from .practice_actions import actions_section
from .practice_costs import group_size_section, logging_section
from .practice_figures import detector_figure, panel_figure

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


def _number(text: str, pattern: str, what: str) -> float:
    """The first number captured by ``pattern`` in a recorded reason (computed text of a notebook); raises naming
    ``what`` when the notebook no longer writes it."""
    import re
    m = re.search(pattern, text or "")
    if not m:
        raise KeyError(f"findings: {what} not found (pattern {pattern!r}) in {text!r:.200}")
    return float(m.group(1))


def _figure(book_dir: Path, notebook: str, match: str) -> str:
    """The figure of ``notebook`` whose caption holds ``match`` (from the downloads folder, so
    :func:`rlvr_dynamics.book.site_pages.write_downloads` runs first), at the column's full width (its legend at the
    size it was drawn for), captioned with the notebook's own caption and a link to its page."""
    import nbformat
    from ..paths import NOTEBOOK_DIR
    from .markup import prose
    from .pages import FIGURE_AUDIT_MIME
    from .practice_figures import figure_block
    ex = Path(book_dir) / "executed"
    path = next(p for p in (ex / f"{notebook}.raw.ipynb", ex / f"{notebook}.ipynb", NOTEBOOK_DIR / f"{notebook}.ipynb")
                if p.exists())
    caps = [(o.get("data", {}).get(FIGURE_AUDIT_MIME) or {}).get("caption") or ""
            for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
            for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    n = next((k for k, c in enumerate(caps, 1) if match.lower() in c.lower()), None)
    if n is None:
        raise KeyError(f"findings: no figure of {notebook} has {match!r} in its caption")
    return figure_block(f"downloads/figures/{notebook}-fig{n}.png",
                        f"{prose(caps[n - 1])} (Figure {n} of {{doc}}`its page <../executed/{notebook}>`.)",
                        f"fig-practice-{notebook.replace('_', '-')}", f"{notebook}, figure {n}")


def _shared_log_coverage(book_dir: Path) -> tuple[float, int, int] | None:
    """(coverage, forecasts, logs) of the forecast's 80 % interval on the noisy shared real logs, from the benchmark
    page (``doctor_benchmark.md``, written by ``bench/bench_doctor.py``); ``None`` when the page has no such row."""
    import re
    path = book_dir / "doctor_benchmark.md"
    if not path.exists():
        return None
    m = re.search(r"80 % interval coverage, noisy runs, the (\d+) shared logs \([^,]*, (\d+) forecasts\) \| (\d+) %",
                  path.read_text(encoding="utf-8"))
    return (int(m.group(3)) / 100, int(m.group(2)), int(m.group(1))) if m else None


def _status_first_lines(bench: dict) -> list[str]:
    """Section 6's first paragraph: the status and collapse report on runs whose outcome is known, from the
    benchmark's failure targets (real course logs: development data; the corpus test part: scored after each rule
    change)."""
    fails = bench.get("failures", {})
    cs = next((v["targets"] for k, v in fails.items() if "CS336" in k), None)
    test = fails.get("test part", {}).get("targets")
    if not (cs and test):
        return []
    n_cs = sum(sum(by_state.values()) for by_state in cs["status_counts"].values())
    return [f"**Status first.** Every report opens with a status (collapsed, collapsing, degenerate groups, ...) "
            f"decided before any fit. On {n_cs} real course runs (Qwen2.5-Math-1.5B on MATH; development data, the "
            f"rules were set on them) {cs['collapse_runs'] - cs['collapsed_with_healthy_status']} of the "
            f"{cs['collapse_runs']} collapsed runs get an act-now status; the collapse is reported within one logged "
            f"point of the reward's "
            f"halving on {cs['reported_within_one']} of {cs['collapses']}, and {cs['healthy_with_failure_status']} "
            f"of {cs['healthy']} healthy runs get an act-now status. On the corpus test part (simulated and tiny-model "
            f"runs; scored again after each rule change fixed on the development part, so no longer a clean test: "
            f"{{doc}}`the benchmark </doctor-benchmark>` tells each scoring) the report comes within one logged "
            f"point on only "
            f"{test['reported_within_one']} of {test['collapses']} collapses (median latency "
            f"{test['report_latency_median']:.0f} points, {test['missed']} missed), "
            f"{test['collapsed_with_healthy_status']} of {test['collapse_runs']} collapsed runs still get a healthy "
            f"status, and {test['healthy_with_failure_status']} of {test['healthy']} healthy runs an act-now status. "
            "Which logged metric crosses first before a collapse, and how often it fires on healthy runs, is tabled "
            "in {ref}`which logged metric warns first <diagnose-precursors>`.\n"]


def _attribution() -> dict | None:
    """The equal-compute attribution of the SmolLM2 plateau shift from the committed runs, or None when its runs are
    not there (:func:`rlvr_dynamics.verdicts.equal_compute.smollm_attribution`)."""
    from ..verdicts.equal_compute import smollm_attribution
    try:
        return smollm_attribution()
    except (ValueError, FileNotFoundError):
        return None


def _ci(r: dict) -> str:
    """A row's 95 % CI as " [lo, hi]", or "" when it has none."""
    return f" [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]" if r.get("ci") else ""


def attribution_text(attribution: dict | None) -> str:
    """One sentence on what moved the SmolLM2 plateau between G = 4 and G = 16 (the equal-compute arm of
    :func:`rlvr_dynamics.verdicts.equal_compute.smollm_attribution`), or "" when it is not decided by complete arms:
    "compute" names the completions per step, with d_N and d_G and their intervals."""
    if not attribution or attribution.get("ci_G") is None:
        return ""
    (g_lo, g_hi), (n_lo, n_hi) = attribution["ci_G"], attribution["ci_N"]
    what = {"compute": "to the completions per step, not the group size",
            "group size": "to the group size, not the completions per step",
            "both": "to both the group size and the completions per step"}.get(attribution["answer"],
                                                                              "neither to the group size nor to the "
                                                                              "completions per step alone")
    p = attribution["plateau"]
    return (f"runs at equal compute attribute that shift {what}: G = 4 at 16 prompts per step (64 completions, as "
            f"G = 16) reached a late panel reward of {p['C']:.3f} against G = 16's {p['B']:.3f} (4× the prompts at "
            f"G = 4: d_N = {attribution['d_N']:+.3f} [{n_lo:+.3f}, {n_hi:+.3f}] of the rise; the group size at equal "
            f"completions: d_G = {attribution['d_G']:+.3f} [{g_lo:+.3f}, {g_hi:+.3f}], which neither shows nor "
            "excludes a group-size effect)")


def _smollm_c5_clause(rows: list[dict], label: str = "", attribution: dict | None = None) -> str:
    """", and on SmolLM2-135M …" when P1-C5's paper row (the SmolLM2 panel) is decisive (with the row's fragile
    ``label`` and the equal-compute ``attribution``, :func:`attribution_text`); else ""."""
    try:
        r = _row(rows, "grpo_smollm", "P1-C5", "paper")
    except KeyError:
        return ""
    if r["verdict"] not in ("PASS", "FAIL") or r.get("measured") is None:
        return ""
    moved = "moved too" if r["verdict"] == "FAIL" else "did not move"
    why = attribution_text(attribution)
    return (f"; on SmolLM2-135M with TRL's GRPO the late panel reward {moved}: {float(r['measured']):+.1%} of the "
            f"rise{_ci(r)} between G = 4 and G = 16 at 4 prompts per step{md_escape(label)}, section 7"
            + (f", but {why}" if why else "")
            + ". That model trains without a KL term (β = 0), so the bandit's mechanism, in which the KL weight sets "
            "the plateau, cannot explain its shift, and the bandit's remedy below is untested there")


def _pretrained_lm_section(rows: list[dict], head, page, book_dir: Path, label: str = "",
                           attribution: dict | None = None) -> list[str]:
    """Section 7: the SmolLM2-135M panel rows (the paper's setting at CPU size) as far as the grid is trained; the
    run count comes from the recorded reasons ("[on n of 6 panel runs complete (G=4: a, G=16: b)]")."""
    paper = {r["id"]: r for r in rows if r["notebook"] == "grpo_smollm" and r.get("setting") == "paper"}
    if not paper:
        return []
    m = re.search(r"on (\d+) of (\d+) panel runs complete \(G=4: (\d+), G=16: (\d+)\)",
                  " ".join(r["reason"] or "" for r in paper.values()))
    done = (f"{m.group(1)} of the {m.group(2)} panel runs are trained (G = 4: {m.group(3)}, G = 16: {m.group(4)})"
            if m else "the panel grid is being trained")
    complete = bool(m) and m.group(1) == m.group(2)
    out = [f"## 7. On a pretrained LM (SmolLM2-135M): the rows {'decided on the complete grid' if complete else 'decided so far'}\n",
           f"The paper's setting at CPU size: SmolLM2-135M-Instruct (from its 4-bit GGUF file) trained with TRL's GRPO (AdamW, no warm-up) on "
           f"two-digit addition, scored on a fixed panel of 256 held-out prompts; {done} "
           f"({page('grpo_smollm', 'SmolLM2 panel')}). Each row below is decided by the rule in force (its changes after a result, dated, on the claim's entry), "
           "on the runs it names:\n", panel_figure(book_dir)]
    for cid in ("P1-C9", "P1-C12", "P1-C8", "P1-C5"):
        if cid in paper:
            reason = re.sub(r"\s*\[on \d+ of \d+ panel runs complete[^\]]*\]", "", paper[cid]["reason"] or "")
            out.append(f"- {head(cid)}. The paper row: {md_escape(reason)}.")
    verdict = {cid: r["verdict"] for cid, r in paper.items()}
    fit = {"PASS": "the three-phase law fits the held-out reward as closely as the paper reports",
           "PARTIAL": "the three-phase law fits the held-out reward as closely as the paper reports on some runs "
                      "and not on others",
           "FAIL": "the three-phase law does not fit the held-out reward as closely as the paper reports"
           }.get(verdict.get("P1-C9"), "whether the three-phase law fits as the paper reports is not decided")
    osc = {"PASS": "no oscillation above the noise showed",
           "PARTIAL": "a run broke part of the no-oscillation rule without the full oscillation signature",
           "FAIL": "a run oscillated around its plateau"
           }.get(verdict.get("P1-C12"), "whether the reward oscillates is not decided")
    c5 = paper.get("P1-C5")
    group = ""
    if c5 and c5["verdict"] in ("PASS", "FAIL") and c5.get("measured") is not None:
        d = float(c5["measured"])
        why = attribution_text(attribution)
        group = (f"; the late panel reward {'moved' if c5['verdict'] == 'FAIL' else 'did not move'} between G = 4 "
                 f"and G = 16 at 4 prompts per step (G = 4 minus G = 16: {d:+.1%} of the rise{md_escape(label)})"
                 + (f", and {why}" if why else ""))
    out += ["", f"*For your run:* on a small pretrained model {fit}, and {osc}{group}; with Adam (no warm-up) expect "
            "no slow start. These rows rest on the few runs named: read them as a first measurement, not a law.\n"]
    return out


def practice_markdown(book_dir: Path, rows: list[dict], verdicts: list[dict]) -> str:
    """The page's Markdown (see the module docstring). ``rows``: every recorded evidence row (with ``setting``);
    ``verdicts``: :func:`rlvr_dynamics.book.claims.claim_verdicts`. Every statement names its setting and optimizer;
    advice is only as strong as a decisive row, and readings that no verdict rests on say "context"."""
    from .markup import provenance_line
    by_id = {v["id"]: v for v in verdicts}

    def head(cid: str) -> str:
        v = by_id[cid]
        cells = " · ".join(f"{s} {badge(x)}{md_escape(setting_label(v, s))}" for s, x in v["by_setting"].items()
                           if s != "context")
        return f"{claim_ref(cid)}: {cells}; headline {badge(v['verdict'])}{md_escape(verdict_note(v))}, {provenance_line(v)}"

    def page(nb: str, title: str) -> str:
        return f"{{doc}}`{title} <../executed/{nb}>`"

    c5 = _row(rows, "p1_group_size", "P1-C5", "exact")
    c5_label = setting_label(by_id["P1-C5"], "paper") if "P1-C5" in by_id else ""
    attribution = _attribution()
    rloo = _row(rows, "p1_group_size", "P1-C5", "context")
    rloo_plateau = _number(rloo["reason"], r"plateau shift/rise ([+-]?[\d.]+(?:e-?\d+)?)", "RLOO plateau shift")
    c5_grpo = _row(rows, "grpo_p1_dynamics", "P1-C5", "testbed")
    c10 = _row(rows, "p1_stability", "P1-C10", "exact")
    c7_sgd = _row(rows, "grpo_p2_length", "P2-C7", "testbed")
    c9_sgd = _row(rows, "grpo_p2_length", "P2-C9", "testbed")
    adam_len = _row(rows, "grpo_p2_length", "P2-C7", "context")
    c8_adam = _row(rows, "grpo_p1_dynamics", "P1-C8", "testbed")
    c8_sgd = _row(rows, "grpo_p1_slow_start", "P1-C8", "testbed")
    c10_lr = _row(rows, "grpo_p2_alignment", "P2-C10", "testbed")
    stall = {eta: _number(c10_lr["reason"], rf"eta {eta}: 1-J\* ([\d.]+)", f"1-J* at {eta}")
             for eta in ("0.0003", "0.001", "0.002")}
    cosine = _number(c10_lr["reason"], r"cosine decay: 1-J ([\d.]+)", "cosine-decay error")
    # a rate's error is a plateau only when its end-of-run trend's 95 % CI includes 0 (P2-C10's plateau rule)
    trend = {eta: (_number(c10_lr["reason"], rf"eta {eta}: 1-J\* [\d.]+, trend \[([+-]?[\d.e+-]+),", f"trend at {eta}"),
                   _number(c10_lr["reason"], rf"eta {eta}: 1-J\* [\d.]+, trend \[[^,]+, ([+-]?[\d.e+-]+)\]",
                           f"trend at {eta}")) for eta in stall}
    ends = [f"{stall[eta]:.1%} with learning rate {eta}" + ("" if trend[eta][0] <= 0 <= trend[eta][1] else
                                                            " (still falling: its trend's 95 % CI excludes 0, so no "
                                                            "plateau yet)") for eta in ("0.002", "0.001", "0.0003")]
    stall_optim = sorted({json.loads(p.read_text()).get("config", {}).get("optimizer", "?")
                          for p in (DATA_DIR / "runs").glob("p2-stall-*/config.json")}) or ["?"]
    n_adam_full = _number(c8_adam["reason"], r"every one of (\d+) runs", "Adam runs with a full first step")
    sgd_slow = [float(x) for x in re.findall(r"R'\(0\)/max R' ([\d.]+) \(theory", c8_sgd["reason"])]
    sgd_bound = [float(x) for x in re.findall(r"\(theory [\d.]+, bound ([\d.]+)\)", c8_sgd["reason"])]
    sgd_dbic = [float(x) for x in re.findall(r"\(dBIC part ([\d.]+),", c8_sgd["reason"])]
    if not (sgd_slow and len(sgd_slow) == len(sgd_bound) == len(sgd_dbic)):
        raise ValueError("grpo_p1_slow_start's P1-C8 reason no longer lists R'(0)/max R', bound and dBIC power per run")
    gaps = gap_magnitude_spread()
    bench = json.loads((book_dir / BENCHMARK_JSON).read_text())
    det = bench["detectors"]
    live = det.get("live", {})
    shared_cov = _shared_log_coverage(book_dir)

    lines = [
        "# What this means for your GRPO run\n",
        "The findings of this book that a practitioner can use, each with its setting and optimizer, the verdicts it "
        "rests on (with each verdict's fragile label, and whether its criterion, written into the ledger after the "
        "page's first version had run, is unchanged since that first result or was amended after it) and a link to the "
        "evidence; then what the run doctor can and cannot tell about your own run. Every number on this page is "
        "computed from the committed results when the book is built. Advice is only as strong as a decisive verdict "
        "(PASS, PARTIAL or FAIL); a reading that no verdict rests on is marked **context**. None of these settings "
        "is a pretrained LLM at scale: the bandit is P1's exact model, the testbed a 4-layer transformer on CPU.\n",
        "## 1. With GRPO's std normalisation, the group size moves where the reward settles\n",
        f"In the 2-arm bandit where P1's mean-field picture is exact (heavy-ball momentum, KL weight β = 2), GRPO's "
        f"std-normalised advantage moves the plateau by **{float(c5['measured']):+.1%} of the reward rise** between "
        f"G = 4 and G = 16{_ci(c5)}, while an unbiased leave-one-out (RLOO-type) advantage moves it by "
        f"{rloo_plateau:+.2%} (context: not GRPO) ({page('p1_group_size', 'group size')}; {head('P1-C5')}). The "
        f"size of the shift depends on the KL weight, which sets the plateau; β = 2 is this page's choice. On the "
        f"tiny GRPO testbed (Adam) the plateau difference is {float(c5_grpo['measured']):+.3f}{_ci(c5_grpo)} of the "
        f"rise, too noisy to decide ({page('grpo_p1_dynamics', 'GRPO reward dynamics')}).\n",
        _figure(book_dir, "p1_group_size", "Seed-mean reward"),
        "*For your run:* in the bandit, runs at different G settle at different plateaus, not only with different "
        f"noise (a bandit result, decisive there{_smollm_c5_clause(rows, c5_label, attribution)}). In the bandit an RLOO-type advantage (no division by the group "
        "std) removes the shift, which says where the bandit's shift comes from, not that RLOO trains better: the "
        "settling level is a separate question, not compared on this page. Dr. GRPO, which also drops the std, was "
        "not tested for it here.\n",
        "## 2. Context: on the testbed, the safe SGD step follows the gradient gap's size more than 1/T\n",
        f"Over response lengths T = {gaps['grpo']['t_min']}–{gaps['grpo']['t_max']} tokens on the tiny testbed "
        f"(plain SGD, one warm start), the critical step of GRPO moves {gaps['grpo']['eta_spread']:.0f}× (Dr. GRPO "
        f"{gaps['dr_grpo']['eta_spread']:.0f}×), while the critical step times the starting policy's gradient-gap "
        f"norm ‖g₊ − g₋‖ moves {gaps['grpo']['product_spread']:.1f}× (Dr. GRPO "
        f"{gaps['dr_grpo']['product_spread']:.1f}×), not flat ({page('grpo_p2_length', 'length on real GRPO')}). "
        "This is a **context** reading: no verdict rests on it. What the verdicts say: under SGD the un-normalised "
        f"loss's threshold does not fall like 1/T (slope {float(c7_sgd['measured']):+.2f}{_ci(c7_sgd)}, {head('P2-C7')}) "
        f"and GRPO's is not flat (slope {float(c9_sgd['measured']):+.2f}{_ci(c9_sgd)}, {head('P2-C9')}). "
        f"Under Adam (context) the critical step is flat in T: slope {float(adam_len['measured']):+.3f}"
        f"{_ci(adam_len)}.\n",
        _figure(book_dir, "grpo_p2_length", "Norm of the gradient gap"),
        "*For your run:* with SGD, a learning rate that was safe at one response length does not scale with 1/T; "
        "bisect the step at the length you train at (`rlvr-dynamics bisect`). With Adam, the testbed's threshold did "
        "not move with T (context).\n",
        "## 3. Adam: no slow start, because its first step is already full size\n",
        f"P1's slow start is inertia: momentum starting at rest. Bias-corrected Adam without warm-up takes a full-size "
        f"first step, and every one of the {n_adam_full:.0f} Adam testbed runs above the noise ceiling did "
        f"({page('grpo_p1_dynamics', 'GRPO reward dynamics')}: INCONCLUSIVE for P1-C8). With heavy-ball SGD from rest "
        f"(momentum 0.9) the slow start the theory predicts lasts about 1/(1 − μ) = 10 steps: the runs' fitted "
        f"R'(0)/max R' is {', '.join(f'{x:.2f}' for x in sgd_slow)} against the bounds √ρ (midway between the theory's own ρ and 1) "
        f"{', '.join(f'{x:.2f}' for x in sgd_bound)}, but under these runs' noise the test could not show the law: "
        f"a curve that follows the theory beats the single exponential (ΔBIC < −10) in only "
        f"{', '.join(f'{x:.1%}' for x in sgd_dbic)} of simulations, power {float(c8_sgd['measured']):.2g} for all "
        f"three ({page('grpo_p1_slow_start', 'slow start')}; {head('P1-C8')}).\n",
        _figure(book_dir, "grpo_p1_slow_start", "update norm"),
        "*For your run:* do not expect the three-phase curve's slow start with Adam (without warm-up); a flat first "
        "few steps there is not inertia.\n",
        f"## 4. A decaying learning rate lowers the error of a fixed one, by less than the criterion asked "
        f"({c10_lr['verdict']})\n",
        f"On the tiny testbed ({'/'.join(o.replace('adamw', 'AdamW') for o in stall_optim)}, G = 4) the error rate 1 − J at the end of "
        f"the run is {ends[0]}, {ends[1]} and {ends[2]}; a cosine decay from 0.001 "
        f"ends at {cosine:.2%}, {float(c10_lr['measured']):.1f}× lower than the fixed 0.001 (the criterion asked for "
        f"10×) ({page('grpo_p2_alignment', 'alignment on real GRPO')}; {head('P2-C10')}).\n",
        _figure(book_dir, "grpo_p2_alignment", "Error rate"),
        "*For your run:* if the accuracy plateaus at a fixed learning rate, a smaller or decaying rate lowers the "
        "plateau (testbed, PARTIAL).\n",
        "## 5. The stability threshold K·η·K_ref = 1 − μ is a short-lag limit\n",
        f"In the bandit (heavy-ball momentum, constant delay), where the threshold's own linearisation is accurate "
        f"(short lag), the measured critical refresh interval is within {float(c10['measured']):.0%} of "
        f"(1 − μ)/(ηK) at worst ({head('P1-C10')}, {page('p1_stability', 'stability threshold')}); at long lag the "
        "exact boundary drifts from the formula, so the formula is not a safe bound there.\n",
        _figure(book_dir, "p1_stability", "critical refresh interval"),
        "*For your run:* keep η·K·K_ref well below 1 − μ; the formula gives the order of magnitude of the largest "
        "safe refresh interval (bandit evidence), not its exact value.\n",
        "## 6. What the run doctor can and cannot tell\n",
        *_status_first_lines(bench),
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
    lines += ["", detector_figure(book_dir, bench)]
    if lead:
        lines.append(f"Before a collapse, the warning came at least 10 logged steps ahead in "
                     f"{lead['warned_10_ahead']} of {lead['population']} collapses (median lead "
                     f"{lead['median_lead']:.0f} steps).")
    if live.get("healthy"):
        lines.append(f" The live doctor's stop rule stopped {live['healthy']['stopped']} of "
                     f"{live['healthy']['runs']} healthy runs.")
    if live.get("collapse"):
        col = live["collapse"]
        lines.append(f" It stopped only {col['stopped']} of the {col['runs']} collapsing runs ({col['rate']:.0%}); of "
                     f"the {col['population']} collapses it could have stopped before the reward halved, it did on "
                     f"{col['stopped_before']}.")
    fc = bench["forecast"]
    errs = [(k, v["forecast"]["median_error"], v["persistence"]["median_error"]) for k, v in fc["prefixes"].items()]
    cov = fc.get("noise_classes", {})
    lines += ["", "", f"The reward forecast, scored on {fc['n_runs']} runs from {len(errs)} cut points, has a "
              "median error (in units of each run's reward range) of "
              + ", ".join(f"{e:.3f} vs {p:.3f}" for _, e, p in errs)
              + " for \"the reward stays where it is\" (at "
              + ", ".join(f"{float(k):.0%}" for k, _, _ in errs) + " of the run seen). Its 80 % interval covers "
              + ", ".join(f"{v['coverage']:.0%} of the {k} corpus runs"
                          + (f" (median width {v['median_width']:.2f}× the run's reward range)"
                             if v.get("median_width") is not None else "") for k, v in cov.items())
              + (f", but only {shared_cov[0]:.0%} of {shared_cov[1]} forecasts on the noisy real logs "
                 f"({shared_cov[2]} shared logs)" if shared_cov else "") + ".\n",
              "*For your run:* read a detector's alarm as a reason to look at the named signal, not as a diagnosis; "
              "most failures of each kind are not detected, so a quiet doctor is not a clean bill of health. The "
              "forecast's point is barely better than persistence"
              + (", and on a noisy real run its interval is not reliable either" if shared_cov and shared_cov[0] < 0.7
                 else "") + ".\n"]
    lines += _pretrained_lm_section(rows, head, page, book_dir, c5_label, attribution)
    lines += group_size_section(page, book_dir, attribution)
    lines += logging_section(book_dir)
    lines += actions_section(book_dir)
    return "\n".join(lines) + "\n"
