"""Sections 8 and 9 of the practice page: what a group size costs and buys, and what to log for the run doctor and
what that costs. Every number comes from committed files when the book is built: the SmolLM2-135M runs
(:func:`rlvr_dynamics.runs.group_size.group_size_summary`), the doctor's own code
(:func:`rlvr_dynamics.doctor.needs.signal_uses`) and the overhead benchmark (``bench/bench_live_overhead.py
--write`` → ``book/live_overhead.json``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..runs.group_size import finite_mean
from .markup import md_escape

GROUP_SIZE_GRIDS = (("smollm-main-", "main grid (training reward, 64 held-out prompts)"),
                    ("smollm-panel-", "panel grid (256-prompt panel)"))
"""The SmolLM2-135M grids that train G = 4 and G = 16 on the same prompts per step, and how the page names them."""
REFERENCE_RUN = "smollm-panel-"
"""The grid whose logs tell which metric TRL (1.16, as pinned) and the callback write by default."""
OVERHEAD_JSON = "live_overhead.json"


def _span(v, fmt: str) -> str:
    """``mean (min–max)`` of the finite values, or the one value, or "–"."""
    v = np.asarray(v, float)
    v = v[np.isfinite(v)]
    if not v.size:
        return "–"
    if v.size == 1 or np.ptp(v) == 0:
        return format(v[0], fmt)
    return f"{format(v.mean(), fmt)} ({format(v.min(), fmt)}–{format(v.max(), fmt)})"


def group_size_section(page, book_dir: Path | None = None, attribution: dict | None = None) -> list[str]:
    """Section 8: per grid and G, the share of groups without reward spread, the held-out accuracy, the late panel
    reward, the completions and wall seconds per step; the sentence's numbers are the G = 16 / G = 4 ratios. With
    ``book_dir``, the section's figure is drawn there (:func:`.practice_figures.group_size_figure`)."""
    from ..runs.group_size import group_size_summary
    from .practice_figures import group_size_figure
    rows, ratios, configs, seeds, grids = [], [], [], set(), []
    for prefix, label in GROUP_SIZE_GRIDS:
        try:
            grid = group_size_summary(prefix, model="smollm2-135m")
        except ValueError:
            continue
        grids.append((label, grid))
        configs += [d["config"] for d in grid.values()]
        seeds |= {s for d in grid.values() for s in d["seeds"]}
        for G, d in grid.items():
            rows.append(f"| {label} | {G} | {len(d['runs'])} | {_span(d['zero_std_share'], '.0%')} | "
                        f"{finite_mean(d['heldout_before']):.2f} → {_span(d['heldout_after'], '.2f')} | "
                        f"{_span(d['late_panel'], '.3f')} | {d['completions_per_step']} | "
                        f"{_span(d['seconds_per_step'], '.1f')} |")
        if {4, 16} <= set(grid):
            ratios.append((label, finite_mean(grid[16]["seconds_per_step"]) / finite_mean(grid[4]["seconds_per_step"]),
                           finite_mean(grid[16]["heldout_after"]) - finite_mean(grid[4]["heldout_after"]),
                           finite_mean(grid[4]["zero_std_share"]), finite_mean(grid[16]["zero_std_share"])))
    if not rows:
        return []
    def setting(field: str, fmt: str = "") -> str:
        return "/".join(sorted({format(getattr(c, field), fmt) for c in configs}))

    out = ["## 8. Group size in practice: what G = 16 buys over G = 4, and what it costs\n",
           f"SmolLM2-135M-Instruct trained with TRL's GRPO ({setting('optimizer')}, learning rate "
           f"{setting('learning_rate', 'g')}, {setting('lr_scheduler')} schedule, "
           f"{setting('num_prompts_per_step')} prompts per step, {setting('max_steps')} steps, task "
           f"{setting('task')} with {setting('digits')} digits) at G = {' and '.join(map(str, sorted({c.num_generations for c in configs})))} "
           f"on the same prompts, seeds {', '.join(map(str, sorted(seeds)))} "
           f"({page('grpo_smollm', 'SmolLM2 panel')}). *Groups without spread*: the share of prompt groups whose "
           "completions all got the same reward (TRL's `frac_reward_zero_std`, mean over the run), which give no "
           "gradient under a group-relative advantage. Mean (min–max) over seeds; the wall seconds are as recorded "
           "on the machines the runs trained on (panel evaluations included in the panel grid).\n",
           "| grid | G | runs | groups without spread | held-out accuracy before → after | late panel reward "
           "(steps ≥ 100) | completions per step | seconds per step |",
           "|---|---:|---:|---:|---:|---:|---:|---:|", *rows, ""]
    if book_dir is not None:
        out.append(group_size_figure(book_dir, grids))
    if ratios:
        said = "; ".join(f"{label}: groups without spread {z4:.0%} → {z16:.0%}, held-out accuracy {dh:+.2f}, "
                         f"{cost:.1f}× the seconds per step" for label, cost, dh, z4, z16 in ratios)
        out.append(f"From G = 4 to G = 16: {said}.\n")
    p = (attribution or {}).get("plateau") or {}
    same = (f"G = 4 given the same compute as more prompts per step (16 prompts × 4 = 64 completions, as G = 16) did "
            f"as well: late panel reward {p['C']:.3f} against G = 16's {p['B']:.3f} (equal-compute arm, "
            f"{page('grpo_smollm', 'SmolLM2 panel')}); G = 4 given the same compute as more steps was not measured"
            if (attribution or {}).get("counts", {}).get("C", 0) >= 2 and p.get("C") is not None else
            "whether G = 4 given the same compute does as well was not measured")
    out.append("*For your run:* at a fixed number of steps and prompts a larger group wastes fewer prompts and reached "
               f"a higher held-out accuracy here, at about the cost ratio above per step; {same}. A share of groups "
               "without spread near 1 means most of the batch teaches nothing: the run doctor reports it as `degenerate groups`.\n")
    return out


def _logged_by(name: str | None) -> str:
    from ..grpo.fields import CALLBACK_FIELDS, DYNAMICS_PREFIX
    if name is None:
        return "not in the reference runs' logs"
    if name in CALLBACK_FIELDS:
        return f"the callback (`{DYNAMICS_PREFIX}{name}`)"
    if name.startswith("eval_"):
        return f"the callback with an `eval_fn` (`{name}`)"
    return f"TRL (`{name}`)"


def logging_section(book_dir: Path) -> list[str]:
    """Section 9: per standard signal, the names the doctor reads, who logs it in the reference runs, and what uses
    it (:func:`~rlvr_dynamics.doctor.needs.signal_uses`); then the callback's measured overhead, if benchmarked."""
    from ..doctor.needs import signal_uses
    from ..doctor.signals import SIGNALS
    from ..runs.committed import load_committed_runs
    ref = load_committed_runs(REFERENCE_RUN)
    columns = set(ref[0].log.series) if ref else set()
    uses = signal_uses()

    def used(u: dict) -> str:
        parts = [", ".join(d.replace("_", " ") for d in u["detectors"])]
        if u["precursors"]:
            parts.append("precursors " + ", ".join(f"`{p}`" for p in u["precursors"]))
        return "; ".join(p for p in parts if p) or "nothing yet"

    rows = [f"| reward | `reward` | TRL (`reward`) | the status, the collapse report, {used(uses['reward'])} |"]
    for sig, names in SIGNALS.items():
        present = next((n for n in names if n in columns), None)
        rows.append(f"| {sig.replace('_', ' ')} | {', '.join(f'`{n}`' for n in names[:3])}"
                    f"{', …' if len(names) > 3 else ''} | {_logged_by(present)} | {used(uses[sig])} |")
    from ..doctor.signals import CORRECTNESS_WORDS, FORMAT_WORDS
    subs = sorted(c for c in columns if c.startswith("rewards/") and c.endswith("/mean"))
    rows.append("| sub-rewards | `rewards/<function>/mean`, one per reward function: a correctness term when the name "
                f"holds {', '.join(f'`{w}`' for w in CORRECTNESS_WORDS)}, a format term when it holds "
                f"{', '.join(f'`{w}`' for w in FORMAT_WORDS)} | "
                + (f"TRL ({', '.join(f'`{c}`' for c in subs)})" if subs else "not in the reference runs' logs")
                + f" | {used(uses['sub_rewards'])} (needs a correctness and a format term) |")
    out = ["## 9. What to log for the run doctor, and what it costs\n",
           "What the doctor reads, under which names (the first few it tries, in order), whether TRL (as pinned here) "
           f"or the project's callback wrote it in the {ref[0].config.model if ref else 'reference'} panel runs, and "
           "which detectors and collapse precursors use it. The last column is measured on the doctor's code: a "
           "detector uses a signal when dropping the signal changes it, or when the signal alone makes it "
           "available. A signal not logged is not read as quiet: what needs it reports itself unavailable.\n",
           "| signal | names read | logged by | used by |", "|---|---|---|---|", *rows, ""]
    path = Path(book_dir) / OVERHEAD_JSON
    from .practice_figures import overhead_figure
    out.append(overhead_figure(book_dir, OVERHEAD_JSON))
    if path.exists():
        b = json.loads(path.read_text(encoding="utf-8"))
        for model, m in b["models"].items():
            o = m["overhead"]
            out.append(
                f"The cost, measured on {md_escape(model)} ({b['machine']['cpu']}, {b['machine']['cores']} cores, "
                f"float32, {b['settings']['batch']} completions per step, {b['measured']}): a bare TRL step takes "
                f"{m['seconds_per_step']['bare']:.3f} s. The callback with its defaults (the gap alignment measured "
                f"every step) adds {o['doctor every=1']:+.0%} with `RunDoctor(every=1)` and "
                f"{o['doctor every=10']:+.0%} with `RunDoctor(every=10)`; with `gap_alignment_every=10` as well it "
                f"adds {o['doctor every=10, gap every 10']:+.0%}. The two bare runs differ by "
                f"{m['bare_drift']:+.0%}: the machine's own drift, the resolution of these figures.\n")
    by_trl = [sig.replace("_", " ") for sig, names in SIGNALS.items()
              if _logged_by(next((n for n in names if n in columns), None)).startswith("TRL")]
    missing = [sig.replace("_", " ") for sig, names in SIGNALS.items() if not any(n in columns for n in names)]
    beta = ref[0].config.beta if ref else None
    out.append(f"*For your run:* TRL's defaults already carry the reward and {', '.join(by_trl) or 'nothing else'}; "
               + (f"the reference runs lacked {', '.join(missing)}" + (f" (the KL because they train at β = {beta:g})"
                                                                       if "kl" in missing and beta == 0 else "")
                  + ": log what your trainer has of these for the detectors that use them. " if missing else "")
               + "The callback adds the within-group spread and P2's gap alignment; measure the gap alignment every "
               "10 steps (`gap_alignment_every=10`) where its cost above matters.\n")
    return out
