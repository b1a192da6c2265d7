"""The learning-rate pilot of the sharpening testbed: a rule written down before the pilot ran.

**Rule (fixed before any pilot run; P1 main grid).** For each model size, one pilot run per learning rate
η ∈ {1e-4, 3e-4, 1e-3} on the pilot seed (``seed = warm_start_seed = 100``, never used by the analysis), G = 4,
64 prompts per step, 300 steps, Adam β1 = 0.9, everything else as in the main grid. On the per-step training reward
r_k (TRL's ``reward``: the mean over the step's 64 × G completions):

* start ``r0`` = mean of r_1 … r_10; smoothed curve ``s`` = trailing 10-step rolling mean;
* ``rise`` = max_{k ≥ 10} s_k − r0;
* ``steps_to_90`` = first k ≥ 10 with s_k ≥ r0 + 0.9 · rise;
* ``collapsed`` = the project's one collapse rule (:func:`rlvr_dynamics.doctor.detectors.collapse_warning.detect_collapse` reports a
  collapse step);
* a learning rate *qualifies* if it does not collapse, its rise is ≥ 0.1 (it learns) and steps_to_90 ≤ 150.

The size's learning rate is the **largest qualifying η**, used for both G = 4 and G = 16 and every seed. If none
qualifies, the largest η that does not collapse and rises ≥ 0.1 is taken and the pilot is reported as failing
the rule; if none even does that, the size is dropped from the main grid.

Reported beside each pilot run (not used by the rule): the noise ceiling 1 − σ²/Var(r), σ = std(Δr)/√2.

**Other pilots.** A pilot file may carry a ``pilot:`` section, written with the file before its runs, that changes
the two thresholds (:class:`PilotRule`: ``max_steps_to_90``, ``min_rise``); its grid states the candidate rates.
Because the rule takes the *largest* qualifying rate, a pilot may run its rates from the largest down and stop at
the first that qualifies: :func:`choose_learning_rate` accepts the choice as soon as every rate not yet run is
smaller than a qualifying one (the SmolLM2 pilot, ``data/configs/grpo_smollm_pilot.yml``).

``collapse: heldout`` (an amendment of the SmolLM2 pilot's rule, made *after* its runs were seen; see that file)
judges collapse with :func:`rlvr_dynamics.p2.step_size.is_collapsed` on the run's held-out greedy accuracy before
and after training (``eval.json``) instead of ``detect_collapse`` on the per-step training reward. At 16 samples per
step the training reward's step noise (σ ≈ 0.12) moves its 7-step smoothing by more than half the rise, so
``detect_collapse`` fires on runs whose held-out accuracy tripled.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

PILOT_LEARNING_RATES = (1e-4, 3e-4, 1e-3)
"""Candidate learning rates of the pilot."""
PILOT_SEED = 100
"""Seed (and warm-start seed) of the pilot runs; excluded from every analysis."""
MAX_STEPS_TO_90 = 150
"""A qualifying run reaches 90 % of its rise within this many steps."""
MIN_RISE = 0.1
"""A qualifying run rises at least this much (it learns)."""
START_WINDOW = 10
"""Steps averaged for the start ``r0`` and the rolling-mean window."""


@dataclass(frozen=True)
class PilotRule:
    """The rule's two thresholds (defaults: the P1 main-grid pilot)."""

    max_steps_to_90: int = MAX_STEPS_TO_90
    min_rise: float = MIN_RISE
    collapse: str = "reward"
    """``reward``: ``detect_collapse`` on the training reward; ``heldout``: ``is_collapsed`` on held-out accuracy."""

    @classmethod
    def from_dict(cls, data) -> "PilotRule":
        """From a YAML ``pilot:`` section; unknown keys and out-of-range values raise ValueError naming them."""
        if not isinstance(data, dict):
            raise ValueError(f"the 'pilot' section must be a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - {"max_steps_to_90", "min_rise", "collapse"})
        if unknown:
            raise ValueError(f"unknown pilot setting(s) {unknown}; allowed: max_steps_to_90, min_rise, collapse")
        rule = cls(**data)
        v = rule.max_steps_to_90
        if isinstance(v, bool) or not isinstance(v, int) or v < START_WINDOW:
            raise ValueError(f"pilot.max_steps_to_90 must be an integer >= {START_WINDOW}, got {v!r}")
        v = rule.min_rise
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
            raise ValueError(f"pilot.min_rise must be in (0, 1], got {v!r}")
        if rule.collapse not in ("reward", "heldout"):
            raise ValueError(f"pilot.collapse must be 'reward' or 'heldout', got {rule.collapse!r}")
        return rule


@dataclass(frozen=True)
class PilotResult:
    """The rule's quantities for one pilot run."""

    learning_rate: float
    r0: float
    """Mean reward of the first ``START_WINDOW`` steps."""
    rise: float
    """Peak of the smoothed reward minus ``r0``."""
    steps_to_90: int | None
    """First step where the smoothed reward reaches ``r0 + 0.9·rise`` (None if the rise is not positive)."""
    collapsed: bool
    """The project's collapse rule fired."""
    noise_ceiling: float
    """1 − σ²/Var(r) of the per-step reward (reported, not used by the rule)."""
    rule: PilotRule = PilotRule()
    """The thresholds the run is judged by."""

    @property
    def learns(self) -> bool:
        """Rises at least ``rule.min_rise`` without collapsing (the fallback's condition)."""
        return not self.collapsed and self.rise >= self.rule.min_rise

    @property
    def qualifies(self) -> bool:
        return self.learns and self.steps_to_90 is not None and self.steps_to_90 <= self.rule.max_steps_to_90

    def as_dict(self) -> dict:
        return {**asdict(self), "qualifies": self.qualifies}


def pilot_result(learning_rate: float, steps, rewards, rule: PilotRule = PilotRule(),
                 heldout: tuple[float, float] | None = None) -> PilotResult:
    """The rule's quantities of one run from its per-step rewards (``steps`` 1-based, one reward per step);
    ``heldout`` = (accuracy before, after), needed when ``rule.collapse == "heldout"``."""
    from ..doctor.detectors.collapse_warning import detect_collapse
    from ..runs.noise import noise_ceiling
    from ..runs.logs import RunLog

    steps = np.asarray(steps, dtype=int)
    r = np.asarray(rewards, dtype=float)
    if r.size < 2 * START_WINDOW or r.shape != steps.shape or not np.all(np.isfinite(r)):
        raise ValueError(f"rewards must be {2 * START_WINDOW} or more finite values, one per step; got {r.size}")
    r0 = float(r[:START_WINDOW].mean())
    tail = np.convolve(r, np.ones(START_WINDOW) / START_WINDOW, mode="valid")  # trailing mean at steps 10, 11, …
    rise = float(tail.max() - r0)
    hit = np.nonzero(tail >= r0 + 0.9 * rise)[0] if rise > 0 else np.array([], dtype=int)
    steps_to_90 = int(steps[START_WINDOW - 1 + hit[0]]) if hit.size else None
    if rule.collapse == "heldout":
        from ..p2.step_size import is_collapsed

        if heldout is None:
            raise ValueError("pilot rule collapse='heldout' needs heldout=(accuracy before, accuracy after)")
        collapsed = bool(is_collapsed(heldout[1], heldout[0]))
    else:
        log = RunLog(steps=steps, series={"reward": r}, reward_column="reward", source="pilot")
        collapsed = detect_collapse(log).detail.get("collapse_step") is not None
    return PilotResult(float(learning_rate), r0, rise, steps_to_90, collapsed, float(noise_ceiling(r)), rule)


def choose_learning_rate(results: list[PilotResult], missing_rates=()) -> tuple[float | None, str]:
    """The rule's choice among one size's pilot runs, and why (see the module docstring).

    ``missing_rates``: candidate rates whose runs are not complete. The choice stands if a qualifying rate exceeds
    all of them (the runs from the largest rate down stopped early); otherwise there is none yet.
    """
    ok = sorted((p for p in results if p.qualifies), key=lambda p: p.learning_rate)
    if missing_rates and not (ok and ok[-1].learning_rate > max(missing_rates)):
        return None, f"pilot incomplete: {len(missing_rates)} run(s) missing"
    if ok:
        extra = f" (smaller rates not run: {sorted(missing_rates)})" if missing_rates else ""
        return ok[-1].learning_rate, "largest qualifying learning rate" + extra
    fallback = sorted((p for p in results if p.learns), key=lambda p: p.learning_rate)
    if fallback:
        return fallback[-1].learning_rate, "no rate qualifies: largest that learns without collapsing (rule failed)"
    return None, "no rate learns without collapsing: size dropped"


def evaluate_pilot(config_path, runs_dir=None, rule: PilotRule | None = None) -> dict[str, dict]:
    """Apply the rule (the file's ``pilot:`` section, else the defaults) to the committed runs of a pilot experiment
    file: ``{model: {"results": [PilotResult as dict, ...], "learning_rate": chosen η or None, "why": str,
    "missing": [run ids not (yet) complete]}}``; see :func:`choose_learning_rate` for missing runs."""
    from pathlib import Path

    import yaml

    from ..paths import RUNS_DIR
    from ..runs.committed import load_committed_run
    from .config import load_experiment

    spec = yaml.safe_load(Path(config_path).read_text(encoding="utf-8")) if Path(config_path).exists() else None
    if rule is None:  # the file's rule (``rule``: another one, e.g. a pilot's rule as first written)
        rule = PilotRule.from_dict(spec["pilot"]) if isinstance(spec, dict) and "pilot" in spec else PilotRule()
    root = Path(runs_dir) if runs_dir else RUNS_DIR
    by_model: dict[str, dict] = {}
    for cfg in load_experiment(config_path):
        entry = by_model.setdefault(cfg.model, {"results": [], "missing": [], "missing_rates": []})
        run_dir = root / cfg.run_id()
        run = load_committed_run(run_dir) if (run_dir / "metrics.csv").exists() else None
        if run is None or not run.complete:
            entry["missing"].append(cfg.run_id())
            entry["missing_rates"].append(cfg.learning_rate)
            continue
        held = None
        if rule.collapse == "heldout":
            held = (run.eval["before"]["heldout"], run.eval["after"]["heldout"])
        entry["results"].append(pilot_result(cfg.learning_rate, run.log.steps, run.log.reward, rule, held))
    for entry in by_model.values():
        entry["learning_rate"], entry["why"] = choose_learning_rate(entry["results"], entry.pop("missing_rates"))
        entry["results"] = [r.as_dict() for r in entry["results"]]
    return by_model
