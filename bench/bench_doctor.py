"""Score the run doctor on the labelled corpus (``bench/doctor_eval/corpus.py``) with the baselines beside it.

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
the tools' sources, and ``tests/doctor/test_doctor_benchmark.py`` fails when the tools change without a rerun.

    .venv/bin/python bench/bench_doctor.py [--split test|dev] [--write] [--skip-speed] [--speed-only]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from doctor_eval import corpus as C
from doctor_eval import speed as SP
from rlvr_dynamics.paths import REPO_ROOT

TABLES = REPO_ROOT / "book" / "doctor_benchmark.md"
RELIABILITY_PNG = REPO_ROOT / "book" / "diagnose_figures" / "interval_reliability.png"
TOOL_SOURCES = ("bench/doctor_eval/corpus.py", "bench/doctor_eval/corpus_run.py", "bench/doctor_eval/simulated.py",
                "bench/doctor_eval/surrogates.py",
                "lib/rlvr_dynamics/runs/noise.py", "lib/rlvr_dynamics/doctor/forecast.py",
                "lib/rlvr_dynamics/doctor/conformal.py",
                "lib/rlvr_dynamics/doctor/reading/learning_curves.py", "lib/rlvr_dynamics/doctor/reading/dynamics.py",
                "lib/rlvr_dynamics/doctor/reading/response_laws.py",
                "lib/rlvr_dynamics/doctor/reading/_response_engine.py", "lib/rlvr_dynamics/doctor/signals.py",
                "lib/rlvr_dynamics/doctor/detectors/*.py", "lib/rlvr_dynamics/doctor/live.py",
                "lib/rlvr_dynamics/doctor/growing_columns.py",
                "bench/doctor_eval/forecasts.py", "bench/doctor_eval/reading.py", "bench/doctor_eval/detectors.py",
                "bench/doctor_eval/live.py", "bench/doctor_eval/failures.py", "lib/rlvr_dynamics/doctor/precursors.py",
                "lib/rlvr_dynamics/doctor/status.py", "lib/rlvr_dynamics/doctor/pipeline.py",
                "lib/rlvr_dynamics/doctor/divergence.py", "lib/rlvr_dynamics/doctor/warning_rule.py",
                "lib/rlvr_dynamics/doctor/declared_range.py")
"""The files whose behaviour the tables describe (repository paths; a ``*`` pattern stands for its files in name
order): their hash is written with the tables."""


def tools_hash() -> str:
    """sha256 (first 16 hex) over the sources of :data:`TOOL_SOURCES`, in order."""
    import hashlib

    h = hashlib.sha256()
    for pattern in TOOL_SOURCES:
        paths = sorted(REPO_ROOT.glob(pattern)) if "*" in pattern else [REPO_ROOT / pattern]
        for p in paths:
            h.update(p.relative_to(REPO_ROOT).as_posix().encode())
            h.update(p.read_bytes() if p.exists() else b"<absent>")
    return h.hexdigest()[:16]


def corpus_table(runs) -> str:
    rows = C.summary(runs)
    lines = ["| split | source | outcome | runs |", "|---|---|---|---|"]
    lines += [f"| {r['split']} | {r['source']} | {r['outcome']} | {r['runs']} |" for r in rows]
    return "\n".join(lines)


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f} %"


def _yes(ok) -> str:
    return "n/a" if ok is None else ("**yes**" if ok else "**no**")


def targets_table(fbench, sbench, rbench, dbench, speed_rows, fail: dict | None = None) -> str:
    """One row per target of issue 19 with the measured value, persistence and MMF beside it where they apply."""
    lines = ["| target | the project | persistence | MMF | met |", "|---|---|---|---|---|"]
    for label, bench in (("corpus test part", fbench), ("the 15 shared logs", sbench)):
        if not bench:
            continue
        for frac, e in bench["prefixes"].items():
            f, p, m = (e[k]["median_error"] for k in ("forecast", "persistence", "mmf"))
            lines.append(f"| forecast median error, {float(frac):.0%} prefix, {label} (below both) | {f:.3f} | "
                         f"{p:.3f} | {m:.3f} | {_yes(f < p and f < m)} |")
        for frac, e in bench["prefixes"].items():
            if "coverage" in e:
                cov, wid = e["coverage"], e["median_width"]
                ok = 0.7 <= cov <= 0.9 and (float(frac) < 0.3 or wid <= 0.5)
                lines.append(f"| 80 % interval, {float(frac):.0%} prefix, {label}: coverage 70–90 % at a median width "
                             f"(share of the range) ≤ 0.5 from the 30 % prefix | {_pct(cov)}, width {wid:.2f} | | | "
                             f"{_yes(ok)} |")
        over = [sum(e[k]["over_range"] for e in bench["prefixes"].values()) for k in ("forecast", "persistence",
                                                                                       "mmf")]
        lines.append(f"| forecasts off by more than 1× the range, {label} (0) | {over[0]} | {over[1]} | {over[2]} | "
                     f"{_yes(over[0] == 0)} |")
        for cls, c in bench["noise_classes"].items():
            cov = c["coverage"]
            lines.append(f"| 80 % interval coverage, {cls} runs, {label} (70–90 %, {c['n']} forecasts) | "
                         f"{_pct(cov)}, width {c['median_width']:.2f} | | | "
                         f"{_yes(None if cov is None else 0.7 <= cov <= 0.9)} |")
    for name, t in rbench["targets"].items():
        lines.append(f"| reading: {name} | {t['unstable']}/{t['n']} ({_pct(t['rate'])}) | | | {_yes(t['met'])} |")
    for name, d in dbench["detectors"].items():
        rate = d["false_alarm_rate"]
        lines.append(f"| {name}: false alarms on healthy runs (≤ 10 %) | {d['false_alarms']}/{d['healthy_runs']} "
                     f"({_pct(rate)}) | | | {_yes(None if rate is None else rate <= 0.10)} |")
    lead = dbench["detectors"]["collapse_warning"].get("lead") or {}
    n, ok = lead.get("population"), lead.get("warned_10_ahead")
    if n:
        lines.append(f"| collapse warned ≥ 10 steps before the reward halves (≥ 80 % of {n}) | {ok}/{n} "
                     f"({_pct(ok / n)}) | | | {_yes(ok / n >= 0.8)} |")
    live = dbench["live"]
    a, h = live["agreement"], live["healthy"]
    lines.append(f"| live RunDoctor agrees with the full-log detectors (all runs) | {a['equal']}/{a['runs']} | | | "
                 f"{_yes(a['equal'] == a['runs'])} |")
    lines.append(f"| `stop_on_instability` stops healthy runs (≤ 2 %) | {h['stopped']}/{h['runs']} "
                 f"({_pct(h['rate'])}) | | | {_yes(h['rate'] <= 0.02)} |")
    for label, f in (fail or {}).items():
        t, b = f["targets"], f["baselines"]
        n, h = t["collapses"], t["healthy"]
        naive, legacy = b["rules"]["naive"], b["rules"]["legacy"]

        def frac(a, m):
            return f"{a}/{m} ({_pct(a / m) if m else 'n/a'})"

        lines += [f"| collapse reported within one logged point of the halving (≥ 90 %), {label} | "
                  f"{frac(t['reported_within_one'], n)} | raw halving {frac(naive['within_one'], n)} | earlier rule "
                  f"{frac(legacy['within_one'], n)} | {_yes(n and t['reported_within_one'] / n >= 0.9)} |",
                  f"| collapse warned ≥ 1 logged point ahead (≥ 50 %), {label} | {frac(t['warned_ahead'], n)} | | | "
                  f"{_yes(n and t['warned_ahead'] / n >= 0.5)} |",
                  f"| collapsed runs with a healthy status (0), {label} | "
                  f"{frac(t['collapsed_with_healthy_status'], t['collapse_runs'])} | | | "
                  f"{_yes(t['collapsed_with_healthy_status'] == 0)} |",
                  f"| healthy runs with an act-now status (≤ 5 %), {label} | "
                  f"{frac(t['healthy_with_failure_status'], h)} | raw halving fires on {frac(naive['healthy_fired'], h)}"
                  f" | earlier rule {frac(legacy['healthy_fired'], h)} | "
                  f"{_yes(h and t['healthy_with_failure_status'] / h <= 0.05)} |"]
        if b["live_runs"]:
            lines += [f"| live status equals `fit`'s, {label} | {frac(b['live_equal'], b['live_runs'])} | | | "
                      f"{_yes(b['live_equal'] == b['live_runs'])} |",
                      f"| live stop on collapsing runs (≥ 80 %), {label} | "
                      f"{frac(b['stopped_collapses'], b['collapse_runs'])} | | | "
                      f"{_yes(b['collapse_runs'] and b['stopped_collapses'] / b['collapse_runs'] >= 0.8)} |",
                      f"| live stop on healthy runs (≤ 2 %), {label} | {frac(b['stopped_healthy'], b['healthy_runs'])}"
                      f" | | | {_yes(b['healthy_runs'] and b['stopped_healthy'] / b['healthy_runs'] <= 0.02)} |"]
    lines += [SP.speed_target_row(r, _yes) for r in speed_rows or []]
    return "\n".join(lines)


def reliability_figure(bench: dict, path: Path) -> None:
    """Nominal vs empirical coverage of the forecast intervals per noise class (``benchmark_forecasts``'s
    ``reliability``), with the diagonal of perfect calibration and the 70–90 % target at the nominal 80 %."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rlvr_dynamics import plotting

    plotting.use_style()
    rel = bench.get("reliability") or {}
    fig, ax = plt.subplots(figsize=(4.6, 3.8))
    ax.plot([0.4, 1.0], [0.4, 1.0], color="0.6", lw=1, ls="--", label="perfect calibration")
    ax.plot([0.8, 0.8], [0.7, 0.9], color="0.3", lw=5, alpha=0.35, solid_capstyle="butt", label="target at 80 %")
    for cls, pts in rel.items():
        levels = sorted(float(k) for k in pts)
        shares = [pts[str(k)] if str(k) in pts else pts[k] for k in levels]
        n = (bench.get("noise_classes") or {}).get(cls, {}).get("n")
        ax.plot(levels, shares, marker="o", label=f"{cls} ({n} forecasts)" if n else cls)
    ax.set_xlabel("nominal coverage of the interval")
    ax.set_ylabel("share of targets inside it")
    ax.set_xlim(0.45, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.legend(loc="lower right", fontsize=9, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def live_cost(everies=(1, 5, 10), lengths=(100, 300, 1000)) -> str:
    """Milliseconds of ``RunDoctor.update`` per training step (its refit and stop checks averaged over ``every``
    calls) once the run has logged 100, 300 and 1,000 steps, on a noisy rising reward with entropy, grad norm and
    zero-std fraction logged; the share of a training step it adds at the measured step times of the tiny testbed
    (tiny-m4, 0.245 s) and SmolLM2-135M (10.8 s, bench_grpo.py)."""
    from rlvr_dynamics.doctor.live import RunDoctor

    rng = np.random.default_rng(0)
    n = max(lengths) + 50
    steps = np.arange(1, n + 1)
    reward = np.clip(0.2 + 0.5 * (1 - np.exp(-steps / 150)) + 0.05 * rng.standard_normal(n), 0, 1)
    entropy = 0.8 * np.exp(-steps / 2000) + 0.01 * rng.standard_normal(n)
    grad = np.exp(0.2 * rng.standard_normal(n))
    zero = np.clip(0.3 + 0.05 * rng.standard_normal(n), 0, 1)
    lines = ["| every | ms per step at 100 / 300 / 1,000 logged steps | tiny-m4 step (0.245 s) | SmolLM2 step (10.8 s) |",
             "|---|---|---|---|"]
    for every in everies:
        doctor = RunDoctor(every=every, refresh_interval=1, stop_on_instability=True)
        cost = {}
        for i in range(n):
            metrics = {"reward": reward[i], "entropy": entropy[i], "grad_norm": grad[i],
                       "frac_reward_zero_std": zero[i]}
            if i + 1 in lengths:   # time the next `window` steps at this history length
                window = max(every, 10) * 2
                t0 = time.perf_counter()
                for j in range(i, min(i + window, n)):
                    doctor.update(int(steps[j]), {"reward": reward[j], "entropy": entropy[j], "grad_norm": grad[j],
                                                  "frac_reward_zero_std": zero[j]})
                cost[i + 1] = 1000 * (time.perf_counter() - t0) / window
                doctor = RunDoctor(every=every, refresh_interval=1, stop_on_instability=True)
                for j in range(i + 1):   # rebuild the history without timing it (replay)
                    doctor.record(int(steps[j]), {"reward": reward[j], "entropy": entropy[j],
                                                  "grad_norm": grad[j], "frac_reward_zero_std": zero[j]})
                continue
            doctor.record(int(steps[i]), metrics)
        worst = max(cost.values())
        lines.append(f"| {every} | {' / '.join(f'{cost[k]:.0f}' for k in lengths)} | +{worst / 2.45:.0f} % | "
                     f"+{worst / 108:.1f} % |")
    return "\n".join(lines)


PRECURSORS_MD = REPO_ROOT / "book" / "doctor_precursors.md"
"""The table "which logged metric warns first of a GRPO collapse" (dev part), included by the Diagnose page."""


def failure_sections(runs, split: str, live: bool = True) -> tuple[list[tuple[str, str]], dict]:
    """The failure-first targets on ``runs`` (the chosen split) and on the CS336 dev logs, with the baselines."""
    from doctor_eval import failures as fl

    out, summaries = [], {}
    parts = [(f"{split} part", runs)]
    cs = C.load_corpus(split="dev", sources=("cs336",))
    if cs:
        parts.append(("the 35 CS336 course logs (dev)", cs))
    for label, rs in parts:
        scored = [fl.score_baselines_and_live(r, fl.score_run(r), live=live) for r in rs]
        s, b = fl.summarise(scored), fl.summarise_baselines(scored)
        summaries[label] = {"targets": s, "baselines": b}
        by_src = fl.format_by_source(fl.by_source(scored)) if len({r.source for r in rs}) > 1 else ""
        by_noise = fl.format_by_source(fl.by_source(scored, "noise_class"), "noise_class")
        by_seen = fl.format_by_source(sorted(fl.by_source(scored, "reward_seen"), key=lambda r: r["source"]),
                                      "source: what the training reward did") if by_src else ""
        out.append((f"Failures first: status, collapse report and warning ({label})",
                    fl.format_summary(s) + "\n\n" + fl.format_baselines(b)
                    + (f"\n\nBy source (where the misses and the false alarms come from):\n\n{by_src}" if by_src else "")
                    + "\n\nBy noise class (the step noise against the reward's range; a halving within one logged "
                    f"point of a noisy run is mostly its own noise):\n\n{by_noise}"
                    + (SEEN_TEXT + by_seen if by_seen else "")))
    return out, summaries


SEEN_TEXT = ("\n\nBy what the training reward did (a breakdown, not a target): each run read again by the corpus' "
             "hindsight rule on its whole training reward (the reward smoothed on its noise window loses half its "
             "gain for good). The labels of the bisection trials and the project runs come from held-out accuracy, "
             "which the doctor never reads: a collapse whose training reward holds is one no rule on the logged "
             "reward can report, and a healthy run whose training reward halves is one the doctor should report.\n\n")
"""The paragraph before the table of :func:`failure_sections` that splits every source by what its training reward
did (:func:`doctor_eval.failures.score_run`'s ``reward_seen``)."""


PREVIOUS_RULE = "360cc97"
"""The commit of the previous rule (before the collapse report judged falls by the run's own rewards, 2026-12-05).
Its tools were run on the current corpus, so that both rules are scored on the same rows:
``git worktree add ../prev 360cc97``, the current ``bench/doctor_eval/{corpus,corpus_run,simulated,surrogates}.py``
copied in, ``PYTHONPATH=../prev/lib:../prev/bench python bench/bench_doctor.py --split test --skip-speed --write``
there; its ``book/doctor_benchmark.json`` is :data:`PREVIOUS_JSON`."""
PREVIOUS_JSON = REPO_ROOT / "book" / "doctor_benchmark_previous.json"


def previous_rule_table(summaries: dict, dbench: dict) -> str | None:
    """The failure targets and the detectors' false alarms of the previous rule (:data:`PREVIOUS_RULE`, scored on
    the same rows: :data:`PREVIOUS_JSON`) beside the current ones; None when that file is absent."""
    try:
        old = json.loads(PREVIOUS_JSON.read_text())
    except (OSError, json.JSONDecodeError):
        return None

    def pct(a, b):
        return f"{a}/{b}" + (f" ({100 * a / b:.0f} %)" if b else "")

    rows = ["| on the same rows | previous rule | now | target |", "|---|---|---|---|"]
    keys = (("healthy runs with an act-now status", "healthy_with_failure_status", "healthy", "≤ 5 %"),
            ("healthy runs with a collapse warning", "healthy_warned", "healthy", "≤ 10 %"),
            ("collapses reported within one logged point", "reported_within_one", "collapses", "≥ 90 %"),
            ("collapses warned ≥ 1 logged point ahead", "warned_ahead", "collapses", "≥ 50 %"),
            ("collapsed runs with a healthy status", "collapsed_with_healthy_status", "collapse_runs", "0"))
    for label, part in summaries.items():
        prev = (old.get("failures") or {}).get(label)
        if not prev:
            continue
        a, b = prev["targets"], part["targets"]
        for text, key, of, target in keys:
            rows.append(f"| {text} ({label}) | {pct(a[key], a[of])} | {pct(b[key], b[of])} | {target} |")
        pa, pb = prev["baselines"], part["baselines"]
        rows.append(f"| live stop on healthy runs ({label}) | {pct(pa['stopped_healthy'], pa['healthy_runs'])} | "
                    f"{pct(pb['stopped_healthy'], pb['healthy_runs'])} | ≤ 2 % |")
        rows.append(f"| live stop on collapsing runs ({label}) | {pct(pa['stopped_collapses'], pa['collapse_runs'])} | "
                    f"{pct(pb['stopped_collapses'], pb['collapse_runs'])} | ≥ 80 % |")
    for name, d in dbench["detectors"].items():
        p = (old.get("detectors") or {}).get("detectors", {}).get(name)
        if p:
            rows.append(f"| {name}: false alarms on healthy runs | {pct(p['false_alarms'], p['healthy_runs'])} | "
                        f"{pct(d['false_alarms'], d['healthy_runs'])} | ≤ 10 % |")
    return (f"The previous rule is the doctor of commit {PREVIOUS_RULE} (before the collapse report judged a fall "
            "by the run's own rewards), its tools run on the same corpus rows as this one (`book/"
            f"{PREVIOUS_JSON.name}`, tools hash {old.get('tools_hash', '?')}).\n\n" + "\n".join(rows))


def precursor_markdown() -> str:
    """The table "which logged metric warns first of a GRPO collapse", twice: first on the real LLM logs of the dev
    part (the CS336 course runs and the public logs: the runs a practitioner's resemble), then on the whole dev part
    (simulated runs and the project's tiny-model runs too, which log fewer signals)."""
    from doctor_eval import failures as fl

    dev = C.load_corpus(split="dev")
    scored = [fl.score_run(r) for r in dev]
    llm = [s for s in scored if s["source"] in LLM_LOG_SOURCES]

    def counts(rows):
        return sum(s["outcome"] == "collapse" for s in rows), sum(s["outcome"] == "healthy" for s in rows)

    (n_col_llm, n_ok_llm), (n_col, n_ok) = counts(llm), counts(scored)
    return (f"<!-- generated by bench/bench_doctor.py --write; tools hash {tools_hash()}; do not edit -->\n"
            f"For each signal: the collapsing runs that log it, how many it crossed on within {fl.LOOKBACK} logged "
            "points before the reward halved and how many at least one point before, the median number of points "
            "ahead, and the healthy runs it crossed on at any time. These are development data: the warning's rules "
            "were set on them.\n\n"
            f"*Real LLM logs* ({n_col_llm} collapsing runs, {n_ok_llm} healthy: the CS336 course runs of "
            "Qwen2.5-Math-1.5B on MATH and the public TRL/verl logs; few collapses, so read each count as it is):\n\n"
            + fl.format_precursor_table(fl.precursor_table(llm)) + "\n\n"
            f"*The whole development part* ({n_col} collapsing runs, {n_ok} healthy; mostly simulated runs and the "
            "project's tiny-model runs; not every run logs every signal, see the third column):\n\n"
            + fl.format_precursor_table(fl.precursor_table(scored)) + "\n")


LLM_LOG_SOURCES = ("cs336", "shared")
"""Corpus sources that are real LLM training logs (not simulated, not the project's tiny models)."""


def main() -> None:
    from doctor_eval import detectors as dg
    from doctor_eval import live
    from doctor_eval import forecasts as fc
    from doctor_eval import reading as rd

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("test", "dev"), default="test")
    ap.add_argument("--write", action="store_true", help="write book/doctor_benchmark.md and the reliability figure")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--speed-only", action="store_true",
                    help="only re-measure the speed rows (on an idle machine) and rewrite them in the written tables")
    ap.add_argument("--figures", action="store_true", help="only write the worked examples' figures and Markdown")
    ap.add_argument("--live-cost", action="store_true", help="only time the live doctor per training step")
    ap.add_argument("--precursors", action="store_true", help="only write book/doctor_precursors.md (dev part)")
    args = ap.parse_args()
    if args.speed_only:
        from rlvr_dynamics._io import atomic_write_text

        rows = SP.speed()
        print("\n".join(f"- {r['what']}: {r['text']}" for r in rows))
        if TABLES.exists():
            atomic_write_text(TABLES, SP.rewrite_speed(TABLES.read_text(), rows, _yes))
            print(f"rewrote the speed rows of {TABLES.relative_to(REPO_ROOT)}", file=sys.stderr)
        return
    if args.precursors:
        from rlvr_dynamics._io import atomic_write_text

        atomic_write_text(PRECURSORS_MD, precursor_markdown())
        print(f"wrote {PRECURSORS_MD.relative_to(REPO_ROOT)}", file=sys.stderr)
        return
    if args.figures:
        from doctor_eval.examples import examples
        examples(REPO_ROOT / "book" / "diagnose_figures")
        return
    if args.live_cost:
        print(live_cost())
        return
    t_start = time.perf_counter()
    runs = C.load_corpus(split=args.split)
    sections: list[tuple[str, str]] = []
    sections.append(("The corpus", corpus_table(C.load_corpus())))
    f_runs = [r for r in runs if r.log.reward_curve()[0].size >= 40]
    fbench = fc.benchmark_forecasts(f_runs)
    sections.append((f"Forecasts ({args.split} part, {len(f_runs)} runs with ≥ 40 points)",
                     fc.format_forecast_benchmark(fbench)))
    shared = [r for r in runs if r.source == "shared"]
    sbench = fc.benchmark_forecasts(shared) if shared else None
    if shared:
        sections.append((f"Forecasts on the {len(shared)} shared logs alone", fc.format_forecast_benchmark(sbench)))
    rbench = rd.benchmark_reading(runs)
    sections.append((f"The oscillator reading ({args.split} part)", rd.format_benchmark(rbench)))
    dbench = dg.benchmark_detectors(runs)
    dbench["live"] = live.benchmark_live(runs, every=10)
    sections.append((f"The detectors ({args.split} part)", dg.format_detector_benchmark(dbench) + "\n\n"
                     + live.format_live_benchmark(dbench["live"])))
    fail_sections, fail_summary = failure_sections(runs, args.split)
    sections[1:1] = fail_sections
    prev = previous_rule_table(fail_summary, dbench)
    if prev:
        sections.insert(1, ("The previous rule beside this one", prev))
    speed_rows = None
    if not args.skip_speed:
        speed_rows = SP.speed()
        sections.append(("Speed", "\n".join(f"- {r['what']}: {r['text']}" for r in speed_rows)))
    sections.insert(0, ("Targets (fixed before scoring) on the " + args.split + " part: the project beside the baselines",
                        targets_table(fbench, sbench, rbench, dbench, speed_rows, fail_summary)))
    text = "\n\n".join(f"**{title}**\n\n{body}" for title, body in sections)
    print(text)
    print(f"\n({time.perf_counter() - t_start:.0f} s; tools hash {tools_hash()})")
    if args.write:
        from rlvr_dynamics._io import atomic_write_text

        header = (f"<!-- generated by bench/bench_doctor.py --split {args.split} --write; tools hash {tools_hash()}; "
                  f"do not edit -->\n")
        atomic_write_text(TABLES, header + text + "\n")
        reliability_figure(fbench, RELIABILITY_PNG)
        from rlvr_dynamics.book import field_reference
        from rlvr_dynamics.doctor.detectors import reference

        field_reference.write()
        reference.write()
        atomic_write_text(PRECURSORS_MD, precursor_markdown())
        summary = {"split": args.split, "tools_hash": tools_hash(), "failures": _jsonable(fail_summary),
                   "forecast": _jsonable({k: v for k, v in fbench.items() if k != "rows"}),
                   "detectors": _jsonable(dbench)}
        atomic_write_text(TABLES.with_suffix(".json"), json.dumps(summary, indent=1, allow_nan=False) + "\n")
        print(f"wrote {TABLES.relative_to(REPO_ROOT)} and {RELIABILITY_PNG.relative_to(REPO_ROOT)}", file=sys.stderr)


def _jsonable(obj):
    from rlvr_dynamics.doctor.report import to_jsonable

    return to_jsonable(obj)


if __name__ == "__main__":
    main()
