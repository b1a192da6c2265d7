"""How much evidence stands behind the verdicts, in one place (the scorecard and the landing page): how many of the
PASS headlines rest on the theory's own exact models alone, which settings decide each claim, and what the runs
behind the paper-setting rows are (model, group sizes, seeds per group size, steps, KL weight), read from the
committed runs those pages load, never typed.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from .claims import DECISIVE_ORDER, SETTINGS
from .markup import badge, claim_ref, md_code, prose
from .robustness_view import setting_label, verdict_note
from .registry import NotebookEntry, notebook_parameters

GPU_SCRIPT = "tools/gpu_smollm_grid.sh"
"""The script that trains the paper-setting grid on one GPU, from :data:`GPU_CONFIG`."""
GPU_CONFIG = "grpo_smollm_gpu.yml"
"""Its experiment file in ``data/configs``."""
DECIDING_RUNS = {"grpo_smollm": "panel_prefix"}
"""Per paper-setting page, the parameter that names the runs its paper-setting rows read (the fixed-panel curves); the
page's other committed runs give context rows (the training reward) or an attribution, never a verdict."""


def deciding_settings(claim: dict) -> list[str]:
    """The settings whose rows decide a claim's headline by the headline rule: for a PASS / PARTIAL / FAIL or
    INCONCLUSIVE headline, the in-scope settings whose cell of the claim × setting matrix is that verdict (a setting
    outvoted by the rule, e.g. a testbed PASS under a PARTIAL headline, decides nothing); none for a CONSISTENT, N/A
    or untested headline; context never decides."""
    verdict = claim.get("verdict")
    if verdict not in (*DECISIVE_ORDER, "INCONCLUSIVE"):
        return []
    cells = {s: v for s, v in (claim.get("by_setting") or {}).items() if s != "context"}
    return [s for s in SETTINGS if cells.get(s) == verdict]


def paper_setting_runs(verdicts: list[dict], entries: Iterable[NotebookEntry]) -> dict:
    """The committed runs behind the ``paper`` rows that test a claim (decisive or INCONCLUSIVE; an N/A row tests
    nothing): for each page with such rows, every run folder its parameters
    name (each ``*_prefix`` parameter's default, :func:`rlvr_dynamics.runs.load_committed_runs`), complete runs only.
    Returns ``{"pages", "runs", "models", "group_sizes", "seeds_per_group_size", "steps", "betas", "others"}``
    (sorted values; ``seeds_per_group_size`` maps G to its number of seeds) over the runs that decide
    (:data:`DECIDING_RUNS`; every run of a page not listed there), each run counted under the longest prefix that
    names it; ``others``: ``[(parameter help, number of runs)]`` for the pages' other runs, which decide nothing."""
    from .. import runs as R

    by_id = {e.id: e for e in entries}
    pages = list(dict.fromkeys(r["notebook"] for c in verdicts for r in c["evidence"]
                               if r["setting"] == "paper" and r["notebook"] in by_id
                               and r["verdict"] in (*DECISIVE_ORDER, "INCONCLUSIVE")))
    found: dict[str, object] = {}
    others: list[tuple[str, int]] = []
    for nb in pages:
        specs = {n: s for n, s in notebook_parameters(by_id[nb]).items()
                 if n.endswith("_prefix") and isinstance(s["default"], str)}
        owner: dict[str, tuple[str, object]] = {}
        for name, spec in sorted(specs.items(), key=lambda kv: len(kv[1]["default"])):   # longest prefix last wins
            for run in R.load_committed_runs(spec["default"]):
                if run.complete:
                    owner[run.id] = (name, run.config)
        deciding = DECIDING_RUNS.get(nb)
        for name, spec in specs.items():
            mine = {rid: cfg for rid, (n, cfg) in owner.items() if n == name}
            if deciding is None or name == deciding:
                found.update(mine)
            elif mine:
                others.append((spec.get("help") or name, len(mine)))
    configs = list(found.values())
    seeds: dict[int, set] = {}
    for c in configs:
        seeds.setdefault(int(c.num_generations), set()).add(int(c.seed))
    return {"pages": pages, "runs": len(configs), "models": sorted({str(c.model) for c in configs}),
            "group_sizes": sorted(seeds), "seeds_per_group_size": {g: len(s) for g, s in sorted(seeds.items())},
            "steps": sorted({int(c.max_steps) for c in configs}), "betas": sorted({float(c.beta) for c in configs}),
            "prompts_per_step": sorted({int(c.num_prompts_per_step) for c in configs}), "others": others}


def gpu_grid() -> dict | None:
    """What the GPU script would train (:data:`GPU_CONFIG`): ``{"runs", "models", "prompts_per_step", "steps"}``, or
    None when the file is absent."""
    from ..grpo.config import load_experiment
    from ..paths import DATA_DIR

    path = DATA_DIR / "configs" / GPU_CONFIG
    if not path.exists():
        return None
    cs = load_experiment(path)
    return {"runs": len(cs), "models": sorted({str(c.model) for c in cs}),
            "prompts_per_step": sorted({int(c.num_prompts_per_step) for c in cs}),
            "steps": sorted({int(c.max_steps) for c in cs})}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def weight_of_evidence_box(verdicts: list[dict], entries: Iterable[NotebookEntry]) -> list[str]:
    """The box (Markdown lines): the PASS headlines that rest on exact-model rows alone, the count of claims per
    deciding setting, and the paper setting's runs, all computed from the claim ledger's rows and the committed
    runs."""
    entries = list(entries)
    passes = [c for c in verdicts if c["verdict"] == "PASS"]
    exact_only = [c for c in passes if deciding_settings(c) == ["exact"]]
    grpo = [c for c in passes if c not in exact_only]
    per_setting = Counter(s for c in verdicts for s in deciding_settings(c))
    runs = paper_setting_runs(verdicts, entries)
    by_id = {e.id: e for e in entries}
    lines = [":::{admonition} Weight of evidence", ":class: rlvr-weight", ""]
    if passes:
        lines.append(f"**{len(exact_only)} of the {len(passes)} PASS verdicts rest on the theory's own exact models "
                     "alone** (closed forms, bandits, token models: no GRPO run decides them): "
                     + (", ".join(claim_ref(c["id"]) + verdict_note(c) for c in exact_only) or "none") + "."
                     + (" The PASS verdicts a GRPO run decides: " + "; ".join(
                         f"{claim_ref(c['id'])} ({_and(deciding_settings(c))}){verdict_note(c)}" for c in grpo)
                        + "." if grpo else ""))
        lines.append("")
    lines.append("Claims whose headline each setting decides (the setting's own verdict is the headline by the headline "
                 "rule; a setting the rule outvotes does not count; a claim decided by several settings counts in each): "
                 + "; ".join(f"*{s}* {per_setting[s]}" for s in SETTINGS if s != "context" and per_setting[s])
                 + f", of {len(verdicts)} claims.")
    lines.append("")
    if runs["runs"]:
        seeds = sorted(set(runs["seeds_per_group_size"].values()))
        pages = ", ".join(f"{{doc}}`{by_id[n].title} <executed/{n}>`" for n in runs["pages"])
        lines.append(
            f"**The paper's own setting (GRPO on a pretrained LLM) rests on {runs['runs']} runs:** "
            f"{len(runs['models'])} model{'s' if len(runs['models']) > 1 else ''} ({_and([md_code(m) for m in runs['models']])}), "
            f"group sizes G = {_and([str(g) for g in runs['group_sizes']])}, "
            f"{_and([str(k) for k in seeds])} seed{'s' if seeds != [1] else ''} per group size, "
            f"{_and([str(k) for k in runs['steps']])} training steps, KL weight β = "
            f"{_and([f'{b:g}' for b in runs['betas']])} ({pages}"
            + (f"; the page's other runs decide no verdict: "
               + "; ".join(f"{n} {prose(h)}" for h, n in runs["others"]) if runs.get("others") else "")
            + "). Paper-setting rows: "
            + ", ".join(f"{claim_ref(c['id'])} {badge(c['by_setting']['paper'], short=True)}{setting_label(c, 'paper')}"
                        for c in verdicts if (c.get("by_setting") or {}).get("paper") in (*DECISIVE_ORDER,
                                                                                          "INCONCLUSIVE")) + ".")
        lines.append("")
        gpu = gpu_grid()
        if gpu:
            lines.append(
                f"*What a GPU run would add:* {md_code(GPU_SCRIPT)} trains {gpu['runs']} runs of "
                f"{_and([md_code(m) for m in gpu['models']])} at {_and([str(k) for k in gpu['prompts_per_step']])} "
                f"prompts per step (the runs above: {_and([str(k) for k in runs['prompts_per_step']])}) for "
                f"{_and([str(k) for k in gpu['steps']])} steps, so less noisy curves of the same grid; no verdict here "
                "rests on such runs, and no other model is trained.")
    else:
        lines.append("No committed run is in the paper's own setting (GRPO on a pretrained LLM).")
    return lines + [":::"]
