"""``rlvr-dynamics reproduce RUN_ID [--steps N]``: retrain the first N steps of a committed run with the current code
and say whether they are bit-identical to the committed ``metrics.csv``.

The run's recorded config (``data/runs/<run-id>/config.json``) is retrained from scratch (its warm start included,
from the cache or rebuilt) into a temporary folder and stopped after N optimizer steps; the per-step training
metrics are compared column by column. Same seed on the same machine kind gives bitwise-identical numbers, so any
difference is a code change (or a different machine). Where the run's recorded commit differs from HEAD, the
report says how to check that commit out and rerun there. Since the named random streams
(:mod:`rlvr_dynamics.grpo.rng`), a new feature draws from its own stream and leaves committed runs reproducible.
"""
from __future__ import annotations

import csv
import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import RUNS_DIR
from .store import git_commit

COMPARED = ("reward", "reward_std", "loss", "grad_norm", "entropy")
"""Per-step training metrics compared (those a run always logs; evaluation columns are compared when present)."""


@dataclass
class ReproduceResult:
    """The outcome of :func:`reproduce`."""

    run_id: str
    steps: int
    identical: bool
    first_diff_step: int | None
    max_abs_diff: dict[str, float] = field(default_factory=dict)
    recorded_commit: str = "unknown"
    head_commit: str = "unknown"
    named_streams: bool = True
    """Whether the run was made with the named random streams (``rng_streams`` in its config.json)."""

    def report(self) -> str:
        """The lines ``reproduce`` prints."""
        lines = [f"{self.run_id}: first {self.steps} steps retrained with the code at {self.head_commit[:10]}"]
        if self.identical:
            lines.append(f"bit-identical to the committed metrics ({', '.join(self.max_abs_diff)} compared)")
        else:
            worst = ", ".join(f"{k} {v:.3g}" for k, v in self.max_abs_diff.items() if v > 0)
            lines.append(f"differs from step {self.first_diff_step} on; max |difference| over the steps: {worst}")
        if not self.named_streams and not self.identical:
            lines.append("the run was made before the named random streams (no rng_streams in its config.json): "
                         "its numbers reproduce only with the code of its commit")
        if self.recorded_commit not in ("unknown", self.head_commit):
            short = self.recorded_commit[:10]
            lines.append(f"the run was made at commit {short} (HEAD is {self.head_commit[:10]}); to reproduce it "
                         f"there: git worktree add ../rlvr-{short} {short} && cd ../rlvr-{short} && make venv && "
                         f".venv/bin/rlvr-dynamics reproduce {self.run_id} --steps {self.steps} --runs-dir "
                         f"{RUNS_DIR}")
        return "\n".join(lines)


def _read_metrics(path: Path) -> dict[int, dict[str, float]]:
    with path.open(newline="") as fh:
        out = {}
        for row in csv.DictReader(fh):
            vals = {}
            for k, v in row.items():
                try:
                    vals[k] = float(v) if v not in ("", None) else math.nan
                except ValueError:
                    continue
            out[int(float(row["step"]))] = vals
    return out


def compare_metrics(committed: Path, fresh: Path, steps: int) -> tuple[bool, int | None, dict[str, float]]:
    """Compare steps 1..``steps`` of two ``metrics.csv`` files: ``(identical, first differing step or None,
    {column: max |difference|})`` over :data:`COMPARED` plus the evaluation columns present in both. NaN equals
    NaN; a step missing from the fresh file is a difference at that step."""
    a, b = _read_metrics(committed), _read_metrics(fresh)
    missing = [s for s in range(1, steps + 1) if s not in a]
    if missing:
        raise ValueError(f"the committed metrics have no step(s) {missing[:5]}: steps must be <= {max(a, default=0)}")
    cols = [c for c in (*COMPARED, "eval_reward", "eval_reward_sampled") if c in a[1]]
    first, worst = None, {c: 0.0 for c in cols}
    for s in range(1, steps + 1):
        if s not in b:
            first = s if first is None else first
            continue
        for c in cols:
            x, y = a[s].get(c, math.nan), b[s].get(c, math.nan)
            if math.isnan(x) and math.isnan(y):
                continue
            d = math.inf if (math.isnan(x) or math.isnan(y)) else abs(x - y)
            if d > 0:
                worst[c] = max(worst[c], d)
                first = s if first is None else first
    return first is None, first, worst


def reproduce(run_id: str, steps: int = 40, *, runs_dir: str | Path | None = None, work_dir: str | Path | None = None,
              progress: bool = False) -> ReproduceResult:
    """Retrain the first ``steps`` steps of committed run ``run_id`` (in ``runs_dir``, default ``data/runs``) in a
    temporary folder (or ``work_dir``) and compare them with its ``metrics.csv`` (:func:`compare_metrics`)."""
    from .config import RunConfig
    from .runner import run

    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    folder = Path(runs_dir or RUNS_DIR) / run_id
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"run_id {run_id!r}: no {folder / 'config.json'} (list the committed runs with "
                                f"`ls {Path(runs_dir or RUNS_DIR)}`)")
    info = json.loads((folder / "config.json").read_text())
    cfg = RunConfig.from_dict(info["config"])
    if steps > cfg.max_steps:
        raise ValueError(f"steps must be <= the run's max_steps {cfg.max_steps}, got {steps}")
    with tempfile.TemporaryDirectory(prefix="rlvr-reproduce-", dir=work_dir) as tmp:
        out = run(cfg, runs_dir=tmp, progress=progress, force=True, max_steps_this_call=steps)
        same, first, worst = compare_metrics(folder / "metrics.csv", out / "metrics.csv", steps)
    return ReproduceResult(run_id=run_id, steps=steps, identical=same, first_diff_step=first, max_abs_diff=worst,
                           recorded_commit=str(info.get("git_commit", "unknown")), head_commit=git_commit(),
                           named_streams="rng_streams" in info)


def add_reproduce_subcommand(subparsers):
    """Add ``reproduce RUN_ID [--steps N] [--runs-dir D]`` to an argparse ``subparsers`` object."""
    p = subparsers.add_parser("reproduce", help="retrain the first steps of a committed run and compare bit for bit")
    p.add_argument("run_id", help="a folder name under data/runs, e.g. p1-main-089a171f7e")
    p.add_argument("--steps", type=int, default=40, help="optimizer steps to retrain and compare (default 40)")
    p.add_argument("--runs-dir", default=None, help="where the committed run folder is (default: data/runs)")
    p.set_defaults(func=_reproduce_from_args)
    return p


def _reproduce_from_args(args) -> int:
    result = reproduce(args.run_id, args.steps, runs_dir=args.runs_dir)
    print(result.report())
    return 0 if result.identical else 1
