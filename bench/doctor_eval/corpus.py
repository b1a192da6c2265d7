"""The run-doctor corpus: GRPO reward curves with known truth, split dev/test by source, to score the run tools.

Every forecaster, reading and detector in :mod:`rlvr_dynamics.doctor` is judged on this corpus by
``bench/bench_doctor.py`` (DESIGN.md, "Judging the run tools"). The label rules below were written and committed
(2026-12-01) before any forecaster, reading or detector was scored on the corpus; constants of the tools are tuned
on ``split == "dev"`` only.

Split versions
--------------
**v2 (default since 2026-12-01, a rule change made after the v1 test part was scored once,
``book/doctor_benchmark_v1.md``).** The v1 test part showed false alarms coming from real families that v1's dev part
lacked (p1-main, p2-stall, p2-fresh, SmolLM2), so tuning on them now requires moving them out of the test part. v2:
dev = v1 dev + the v1 test project families + simulated seed family 1; test = simulated seed family **2** (never
generated before this change), ``p2-len-adam``, ``project-fail`` and ``shared`` (these three were scored once, in
aggregate, under v1; no rule was tuned on them). ``load_corpus(version=1)`` gives the v1 split for the record.

**v3 (default since 2026-12-02, changed after the result).** Adds ``cs336``: the 35 labelled course logs of
``../shared/grpo_logs_cs336`` (7 collapses, 25 healthy, 2 unstable, 1 floor; dev, issue 29). Moves ``shared`` to
dev: the 15 public logs were looked at while the collapse report and the status rule were built (their false
reports shaped the heavy-tail safeguards), so they are no longer a clean test. Test part: simulated family 2,
``p2-len-adam`` and ``project-fail``, which the new rules were not built on. Since 2026-12-03 the dev part also
holds ``noisy-1p``/``noisy-2p`` (``data/configs/grpo_noisy_healthy.yml``): the testbed at 1 and 2 prompts × 8
completions per step, 400 steps logged at every step, labelled by the held-out rule like the other project runs
(issue 35: the public runs' false alarms came from such noise, which the dev part lacked). Since 2026-12-05 also
``noisy-smollm-1p`` (``data/configs/grpo_noisy_smollm.yml``): SmolLM2-135M at 1 prompt × 8 completions, 300 steps
logged at every step, the same noise on a pretrained LM; since 2026-12-06 ``noisy-smollm-t1``
(``data/configs/grpo_noisy_smollm_t1.yml``), the same at TRL's default sampling temperature 1.0, and
``noisy-smollm-g4`` (``data/configs/grpo_noisy_smollm_g4.yml``), that at groups of 4 completions (400 steps), and
``noisy-smollm-lr3e5`` (``data/configs/grpo_noisy_smollm_lr3e5.yml``), the temperature-1.0 run at a learning rate of
3e-5 (its held-out accuracy collapsed, 0.20 → 0.03); since 2026-12-06 (second batch) ``noisy-smollm-lr2e5``, the same at
2e-5 (healthy, 0.20 → 0.42), and ``noisy-smollm-shaped`` (``data/configs/grpo_noisy_smollm_shaped.yml``), the
temperature-1.0 run with the shaped reward of the Unsloth notebooks (0.5 for the format, +2 when right; it learnt the
format alone, held-out accuracy 0.20 → 0), and ``noisy-smollm-terms`` (``data/configs/grpo_noisy_smollm_terms.yml``),
that reward as two logged terms at another seed; since 2026-12-06 (third batch) ``noisy-smollm-shaped-d1``
(``data/configs/grpo_noisy_smollm_shaped_d1.yml``), the shaped reward on one-digit sums, where the model learns the
correctness term (held-out accuracy 0.69 → 0.95) and then every group earns 2 with no spread, and ``noisy-smollm-kl``
(``data/configs/grpo_noisy_smollm_kl.yml``), the temperature-1.0 run with a KL penalty to the reference model
(beta = 0.04, TRL's default before 0.16; held-out accuracy 0.20 → 0.56), the first run of the corpus with a KL term;
since 2026-12-06 (fourth batch) ``noisy-smollm-mu2`` (``data/configs/grpo_noisy_smollm_mu2.yml``), the
temperature-1.0 run with TRL's ``num_iterations = 2`` (each batch trained on twice: its reward logged at every other
row, its loss at every row; held-out accuracy 0.20 → 0.66), the log shape that crashed the live doctor's callback.
Since 2026-12-06 (fifth batch) ``noisy-smollm-d3`` (``data/configs/grpo_noisy_smollm_d3.yml``), the temperature-1.0
run on three-digit sums, which the 135M model almost never gets right. A label rule fixed before the doctor read it:
a project run whose held-out accuracy is below :data:`NEVER_LEARNED` both before and after training never learned;
it is neither a collapse nor a healthy run but a ``failure`` at its ``floor`` (the label of the course log stuck at
its floor), so a failure status on it is no false alarm and a healthy one no success. Since 2026-12-06 (sixth batch)
``noisy-smollm-2p-terms`` (``data/configs/grpo_noisy_smollm_2p_terms.yml``), the one-digit shaped reward as two
logged terms at 2 prompts × 4 completions a step: a reward without known bounds at several prompts a step, near its
ceiling. Since 2026-12-07 ``noisy-smollm-penalised`` (``data/configs/grpo_noisy_smollm_penalised.yml``): one-digit
sums at 1 prompt × 4 completions with the penalised reward of Unsloth's later notebooks (±1 for the format, 3 / −1.5 /
−2 for a right, wrong or missing number), negative until the model answers; held-out accuracy 0.69 → 0.98, its reward
−1.5 → 2 (right answers in prose: it never took the bare-number format), most groups without spread at the end.
Since 2026-12-07 ``noisy-smollm-cosine`` (``data/configs/grpo_noisy_smollm_cosine.yml``): two-digit sums at 1 prompt ×
8 completions under the schedule of TRL's and Unsloth's GRPO examples (10 % linear warmup to 2e-5, then cosine to
0); held-out accuracy 0.20 → 0.28, its training reward at 0–0.75 a step throughout. Since 2026-12-07
``noisy-smollm-trl-defaults`` (``data/configs/grpo_noisy_smollm_trl_defaults.yml``): the same task under the
optimisation defaults of TRL's ``GRPOConfig`` (DAPO loss, learning rate 1e-6 decaying linearly to 0, temperature 1);
held-out accuracy 0.20 → 0.56, its training reward 0.04 → 0.15–0.23 (means of 20 steps). Since 2026-12-07
``noisy-smollm-dr-grpo`` (``data/configs/grpo_noisy_smollm_dr_grpo.yml``): the same task with the Dr. GRPO settings
(``loss_type: dr_grpo``, ``scale_rewards: none``, lr 1e-5, temperature 0.7), meant as a healthy run; its training
reward sat near 0 from the start, its completions shrank from 10 to 3 tokens and its held-out accuracy fell 0.20 →
0.03: a collapse by the rule above; ``noisy-smollm-dr-grpo-t05``, the same at temperature 0.5 (held-out accuracy
0.20 → 0.59, its training reward 0.1 → 0.3–0.7 a step, means of 10 steps): healthy.

**v4 (default since 2026-12-05, before any rule was scored on it).** Adds ``surrogate``: 10 surrogates of every
healthy shared and CS336 log (:mod:`.surrogates`: whole rows moved a few positions in blocks, thinned, truncated,
some averaged over a logging interval), labelled ``healthy``. Split by source log, fixed in
:data:`.surrogates.TEST_SOURCES` before the doctor of 2026-12-05 was scored on any surrogate: the test part's noise
shapes (two of the four one-prompt Unsloth logs among them) were never tuned on. Issue 35: the public runs' false
alarms came from one-prompt shaped rewards, of which the dev part had two real logs.

Sources (v1 split)
------------------
=================  ===========================================================================  =====
source             what                                                                         split
=================  ===========================================================================  =====
``sim``            curves simulated from P1's second-order response (:func:`simulate_run`)      dev: seed family 0,
                   in every regime, collapse scenarios and the three other failure modes,       test: seed family 1
                   with the noise of real logs (1–1,024 prompts per step) and AR(1) level
                   wander
``bisection``      the P2 length-sweep bisection trials (``data/runs/p2-len*``): hundreds of    dev: ``p2-len`` (SGD),
                   15-step real GRPO runs, each with a recorded collapse outcome at its η       test: ``p2-len-adam``
``project``        the project's other committed GRPO runs (tiny models, SmolLM2)               dev: p1-long, p1-sizes,
                                                                                                p2-lr, p1-pilot;
                                                                                                test: p1-main, p2-stall,
                                                                                                p2-fresh, smollm*
``project-fail``   the runs with one failure induced on purpose (``data/runs/p1-fail-*``)       test
``shared``         the 15 public logs of ``../shared/grpo_logs`` (all healthy; absent in a      test
                   user's clone: skipped)
=================  ===========================================================================  =====

Label rules
-----------
``outcome`` is one of ``healthy``, ``collapse``, ``unstable``, ``failure`` (another induced failure mode):

- ``sim``: by construction (the regime the curve was drawn from): ``growing`` → ``unstable``; ``collapse`` →
  ``collapse``; ``reward_hacking`` / ``advantage_degeneracy`` / ``policy_concentration`` → ``failure``; every other
  regime (``first-order``, ``overdamped``, ``underdamped``, ``flat``) → ``healthy``.
- ``bisection``: the trial's recorded outcome (``collapsed`` in ``data/bisections/<name>.json``: final held-out
  success below half the initial one, :func:`rlvr_dynamics.p2.step_size.is_collapsed`).
- ``project``: the same held-out rule on ``eval.json`` (``after.heldout < 0.5 × before.heldout``) → ``collapse``,
  else ``healthy``; without ``eval.json``, the training-reward rule below (``collapse`` when the reward ends below
  half its gain).
- ``project-fail``: ``failure_mode`` from the induced mode in the run name (``healthy`` has none); ``outcome`` is
  ``healthy`` for the healthy control, ``failure`` for the hacking / degeneracy / concentration inductions (whatever
  the held-out accuracy did: a hacked run's held-out accuracy falls by design), and for the two instability
  inductions ``collapse`` when the held-out rule says so, else ``unstable``. ``meta["heldout_collapsed"]`` keeps the
  held-out outcome of every run.
- ``shared``: ``healthy`` (the logs' README: every run trains normally).

``collapse_step`` (hindsight, on the logged training reward, for every run whose outcome is ``collapse``): smooth
the reward with a centred moving mean over ``k`` logged points, ``k`` the smallest odd number ≥ 3 with
σ/√k ≤ 0.1·gain (σ: :func:`~rlvr_dynamics.runs.noise.step_sigma`; gain: the 95th percentile of the reward minus the floor),
at most n/5; floor F = the lower reward bound when declared, else the minimum of the smoothed reward over the first
10 % of points; P = the running maximum of the smoothed reward. ``collapse_step`` is the first step where the
smoothed reward is below F + ½(P − F) while P − F exceeds 6σ/√k (a smoothed flat noise series spans about
3σ/√k over a few hundred points), and stays below it for the rest of the run. None
when the training reward never halves that way (e.g. a held-out collapse the sampled reward does not show).

``noise_class``: :func:`~rlvr_dynamics.runs.noise.noise_class` of the whole reward curve with its declared bounds.

The lead-time population of the collapse warning: collapsing runs whose ``collapse_step`` lies ≥ 30 logged points
after the first step (room for a warning 10 steps ahead after a minimal history).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from rlvr_dynamics.paths import DATA_DIR, RUNS_DIR, SHARED_DIR
from rlvr_dynamics.runs.logs import RunLog, load_log
from rlvr_dynamics.runs.noise import noise_class as _noise_class

# the corpus' vocabulary and its simulated runs live in their own modules; the names callers use are re-exported
from .corpus_run import (BISECTION_SPLIT, FAILURE_MODES, LEAD_TIME_MIN_HISTORY, OUTCOMES,  # noqa: F401
                         PROJECT_SPLIT, SIM_COUNTS, SIM_REGIMES, SOURCES, CorpusRun, hindsight_collapse)
from .simulated import (CS336_LABELS, PROJECT_TEST_FAMILIES_V1, SIM_FAMILIES, SPLIT_VERSION,  # noqa: F401
                        simulate_run, simulated_runs, unit_response)
from .surrogates import surrogate_runs

# ---------------------------------------------------------------------------------------------------------------
# Real runs
# ---------------------------------------------------------------------------------------------------------------

def _family(run_name: str) -> str:
    return run_name.rsplit("-", 1)[0]


NEVER_LEARNED = 0.05
"""Held-out accuracy below which, before and after training, a project run never learned (module docstring)."""


def _heldout_accuracy(run_dir: Path) -> tuple[float, float] | None:
    p = run_dir / "eval.json"
    if not p.exists():
        return None
    ev = json.loads(p.read_text())
    try:
        return float(ev["before"]["heldout"]), float(ev["after"]["heldout"])
    except (KeyError, TypeError, ValueError):
        return None


def _heldout_collapsed(run_dir: Path) -> bool | None:
    acc = _heldout_accuracy(run_dir)
    return None if acc is None else acc[1] < 0.5 * acc[0]


def _read_config(run_dir: Path) -> dict[str, Any]:
    p = run_dir / "config.json"
    return json.loads(p.read_text()).get("config", {}) if p.exists() else {}


def _bounds_of(y: np.ndarray) -> tuple[float, float] | None:
    return (0.0, 1.0) if y.size and np.nanmin(y) >= 0 and np.nanmax(y) <= 1 else None


def _real_run(name: str, source: str, split: str, log: RunLog, outcome: str, prompts: int | None,
              failure_mode: str | None = None, meta: dict | None = None,
              bounds: tuple[float, float] | None | str = "auto") -> CorpusRun:
    steps, y = log.reward_curve()
    rb = _bounds_of(y) if bounds == "auto" else bounds
    cs = hindsight_collapse(steps, y, rb)[0] if outcome == "collapse" else None
    return CorpusRun(name, source, split, log, rb, prompts, _noise_class(y, rb), outcome, cs, None, failure_mode,
                     meta or {})


def bisection_runs(runs_dir: Path = RUNS_DIR, bisections_dir: Path = DATA_DIR / "bisections") -> list[CorpusRun]:
    """Every trial of the committed bisections with its recorded outcome."""
    out = []
    for name, split in BISECTION_SPLIT.items():
        p = bisections_dir / f"{name}.json"
        if not p.exists():
            continue
        cells = json.loads(p.read_text())["cells"]
        for cell in cells.values():
            for trial in cell.get("trials", []):
                d = runs_dir / trial["run_id"]
                if not (d / "metrics.csv").exists():
                    continue
                log = load_log(d / "metrics.csv")
                cfg = _read_config(d)
                out.append(_real_run(trial["run_id"], "bisection", split, log,
                                     "collapse" if trial["collapsed"] else "healthy",
                                     cfg.get("num_prompts_per_step"),
                                     meta={"learning_rate": trial["learning_rate"], "length": cell.get("length")}))
    return out


def project_runs(runs_dir: Path = RUNS_DIR) -> list[CorpusRun]:
    """The committed non-bisection runs (healthy grids, SmolLM2, induced failures) with their labels."""
    out = []
    for d in sorted(runs_dir.iterdir()) if runs_dir.exists() else []:
        if not (d / "metrics.csv").exists():
            continue
        fam = _family(d.name)
        if fam.startswith("p1-fail-"):
            mode = fam[len("p1-fail-"):]
            failure = {"reward-hacking": "reward_hacking", "degeneracy-easy": "advantage_degeneracy",
                       "degeneracy-hard": "advantage_degeneracy", "concentration": "policy_concentration",
                       "instability-lr": "dynamical_instability", "instability-lag": "dynamical_instability",
                       "healthy": None}.get(mode)
            collapsed = _heldout_collapsed(d)
            outcome = ("healthy" if mode == "healthy" else "failure" if failure != "dynamical_instability" else
                       "collapse" if collapsed else "unstable")
            log = load_log(d / "metrics.csv")
            out.append(_real_run(d.name, "project-fail", "test", log, outcome,
                                 _read_config(d).get("num_prompts_per_step"), failure,
                                 meta={"heldout_collapsed": collapsed}))
            continue
        split = PROJECT_SPLIT.get(fam) or PROJECT_SPLIT.get(fam.split("-lr")[0])
        if split is None:
            continue
        log = load_log(d / "metrics.csv")
        collapsed = _heldout_collapsed(d)
        if collapsed is None:
            steps, y = log.reward_curve()
            collapsed = hindsight_collapse(steps, y, _bounds_of(y))[1]
        acc = _heldout_accuracy(d)
        never = acc is not None and max(acc) < NEVER_LEARNED
        out.append(_real_run(d.name, "project", split, log,
                             "failure" if never else "collapse" if collapsed else "healthy",
                             _read_config(d).get("num_prompts_per_step"), "floor" if never else None))
    return out


def shared_runs(folder: Path | None = None) -> list[CorpusRun]:
    """The public logs of ``../shared/grpo_logs`` (all healthy); [] when the folder is absent."""
    folder = folder or SHARED_DIR / "grpo_logs"
    if not (folder / "index.json").exists():
        return []
    index = {r["csv"]: r for r in json.loads((folder / "index.json").read_text())}
    out = []
    for p in sorted(folder.glob("*.csv")):
        meta = index.get(p.name, {})
        log = load_log(p, reward_column=meta.get("reward_column"))
        bounds = (0.0, 1.0) if str(meta.get("framework", "")).startswith("verl") else None
        out.append(_real_run(p.stem, "shared", "test", log, "healthy", meta.get("prompts_per_step"),
                             meta={k: meta.get(k) for k in ("repo", "model", "group_size", "lr")}, bounds=bounds))
    return out


def cs336_runs(folder: Path | None = None) -> list[CorpusRun]:
    """The 35 labelled course logs of ``../shared/grpo_logs_cs336`` (dev; [] when the folder is absent): outcome from
    the person-read label, ``collapse_step`` the labelled step (the rule of the logs' README), bounds (0, 1)."""
    folder = folder or SHARED_DIR / "grpo_logs_cs336"
    if not (folder / "index.json").exists():
        return []
    out = []
    for meta in json.loads((folder / "index.json").read_text()):
        log = load_log(folder / meta["csv"])
        outcome = CS336_LABELS[meta["label"]]
        y = log.reward_curve()[1]
        cs = meta.get("collapse_step")
        out.append(CorpusRun(meta["name"], "cs336", "dev", log, (0.0, 1.0), None, _noise_class(y, (0.0, 1.0)),
                             outcome, int(cs) if cs is not None else None, None,
                             "floor" if meta["label"] == "floor" else None,
                             {"label_reason": meta.get("label_reason")}))
    return out


def _with_split(run: CorpusRun, split: str) -> CorpusRun:
    from dataclasses import replace

    return run if run.split == split else replace(run, split=split)


PARTS = ("sim", "bisection", "project", "shared", "cs336", "surrogate")
"""How the corpus is built, in corpus order: each part is loaded once per process and only when asked for."""
PART_OF = {"sim": "sim", "bisection": "bisection", "project": "project", "project-fail": "project",
           "shared": "shared", "cs336": "cs336", "surrogate": "surrogate"}
"""The part that holds each source (:func:`project_runs` gives both the project's runs and its failure runs)."""


@lru_cache(maxsize=None)
def _load_part(part: str, include_shared: bool, version: int) -> tuple[CorpusRun, ...]:
    if part == "sim":
        return tuple(r for split, fams in SIM_FAMILIES[version].items() for fam in fams
                     for r in simulated_runs(split, fam))
    if part == "bisection":
        return tuple(bisection_runs())
    if part == "project":
        runs = []
        for r in project_runs():
            fam = _family(r.name)
            moved = version >= 2 and r.source == "project" and (fam in PROJECT_TEST_FAMILIES_V1 or
                                                                 fam.split("-lr")[0] in PROJECT_TEST_FAMILIES_V1)
            runs.append(_with_split(r, "dev") if moved else r)
        return tuple(runs)
    if not include_shared:
        return ()
    if part == "shared":
        return tuple(_with_split(r, "dev") if version >= 3 else r for r in shared_runs())
    if part == "surrogate":
        if version < 4:
            return ()
        sources = shared_runs() + cs336_runs()
        return tuple(surrogate_runs("dev", sources) + surrogate_runs("test", sources))
    return tuple(cs336_runs()) if version >= 3 else ()


def load_corpus(split: str | None = None, sources: Iterable[str] | None = None, *,
                include_shared: bool = True, version: int = SPLIT_VERSION) -> list[CorpusRun]:
    """The labelled corpus (module docstring), optionally one ``split`` (``"dev"``/``"test"``) and some
    ``sources`` (:data:`SOURCES`), under split ``version`` (1, 2 or 3, module docstring). Deterministic; cached per
    process, each part (:data:`PARTS`) built on first use."""
    if split not in (None, "dev", "test"):
        raise ValueError(f"split must be None, 'dev' or 'test', got {split!r}")
    if version not in SIM_FAMILIES:
        raise ValueError(f"version must be one of {sorted(SIM_FAMILIES)}, got {version!r}")
    src = tuple(sources) if sources is not None else SOURCES
    bad = [s for s in src if s not in SOURCES]
    if bad:
        raise ValueError(f"sources must be among {SOURCES}, got {bad}")
    parts = [part for part in PARTS if any(PART_OF[source] == part for source in src)]
    return [r for part in parts for r in _load_part(part, include_shared, version)
            if (split is None or r.split == split) and r.source in src]


def summary(runs: list[CorpusRun]) -> list[dict[str, Any]]:
    """Counts per (split, source, outcome) for the benchmark's corpus table."""
    keys: dict[tuple[str, str, str], int] = {}
    for r in runs:
        keys[(r.split, r.source, r.outcome)] = keys.get((r.split, r.source, r.outcome), 0) + 1
    return [{"split": k[0], "source": k[1], "outcome": k[2], "runs": v} for k, v in sorted(keys.items())]
