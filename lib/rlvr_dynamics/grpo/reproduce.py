"""``rlvr-dynamics reproduce RUN_ID [--steps N]``: retrain the first N steps of a committed run with the current code
(or, with ``--at-commit``, with the code of the run's recorded commit) and say whether they are bit-identical to the
committed ``metrics.csv``.

The run's recorded config (``data/runs/<run-id>/config.json``) is retrained from scratch (its warm start included,
from the cache or rebuilt) into a temporary folder and stopped after N optimizer steps; the per-step training
metrics are compared column by column. Same seed on the same machine kind gives bitwise-identical numbers, so any
difference is a code change (or a different machine). Where the run's recorded commit differs from HEAD, the
report says so; ``--at-commit`` retrains with that commit's library (a temporary ``git worktree`` first on
``PYTHONPATH``, the same venv), which is how runs made before the named random streams reproduce. Since the named random streams
(:mod:`rlvr_dynamics.grpo.rng`), a new feature draws from its own stream and leaves committed runs reproducible.
"""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..paths import REPO_ROOT, RUNS_DIR
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
    code_commit: str = "unknown"
    """The commit whose code retrained the steps (HEAD, or the recorded commit with ``at_commit``)."""
    named_streams: bool = True
    """Whether the run was made with the named random streams (``rng_streams`` in its config.json)."""

    def report(self) -> str:
        """The lines ``reproduce`` prints."""
        lines = [f"{self.run_id}: first {self.steps} steps retrained with the code at {self.code_commit[:10]}"]
        if self.identical:
            lines.append(f"bit-identical to the committed metrics ({', '.join(self.max_abs_diff)} compared)")
        else:
            worst = ", ".join(f"{k} {v:.3g}" for k, v in self.max_abs_diff.items() if v > 0)
            lines.append(f"differs from step {self.first_diff_step} on; max |difference| over the steps: {worst}")
        if not self.named_streams and not self.identical and self.code_commit != self.recorded_commit:
            lines.append("the run was made before the named random streams (no rng_streams in its config.json): "
                         "its numbers reproduce only with the code of its commit")
        if self.recorded_commit not in ("unknown", self.code_commit):
            short = self.recorded_commit[:10]
            lines.append(f"the run was made at commit {short} (this code: {self.code_commit[:10]}); retrain it with "
                         f"the code of that commit: rlvr-dynamics reproduce {self.run_id} --steps {self.steps} "
                         "--at-commit")
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
    {column: max |difference|})`` over :data:`COMPARED` plus the evaluation and panel columns present. NaN equals
    NaN; a step missing from the fresh file is a difference at that step."""
    a, b = _read_metrics(committed), _read_metrics(fresh)
    missing = [s for s in range(1, steps + 1) if s not in a]
    if missing:
        raise ValueError(f"the committed metrics have no step(s) {missing[:5]}: steps must be <= {max(a, default=0)}")
    cols = [c for c in (*COMPARED, "eval_reward", "eval_reward_sampled", "panel_reward") if c in a[1]]
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


def _train_at_commit(config: dict, commit: str, steps: int, tmp: Path) -> Path:
    """Retrain ``config`` for ``steps`` steps with the library as it was at ``commit``: a detached ``git worktree``
    of that commit in ``tmp`` whose ``lib/`` goes first on ``PYTHONPATH`` of a fresh interpreter (same venv).
    Returns the run folder."""
    code = tmp / "code"
    git = ["git", "-C", str(REPO_ROOT)]
    done = subprocess.run([*git, "worktree", "add", "--detach", str(code), commit], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"cannot check out commit {commit} (git worktree add): {done.stderr.strip()}")
    # the training stack imported with the collector off and frozen, as `rlvr-dynamics train` does (grpo.cli; the
    # commit's own library may predate that helper): 3 s less per retraining
    script = ("import gc, json, sys\n"
              "gc.disable()\n"
              "import datasets, torch, transformers, trl\n"
              "gc.freeze()\n"
              "gc.enable()\n"
              "from rlvr_dynamics.grpo.config import RunConfig\n"
              "from rlvr_dynamics.grpo.runner import run\n"
              "cfg = RunConfig.from_dict(json.loads(sys.argv[1]))\n"
              "print(run(cfg, runs_dir=sys.argv[2], progress=False, force=True, max_steps_this_call=int(sys.argv[3])))")
    env = {**os.environ, "PYTHONPATH": str(code / "lib"), "RLVR_GIT_COMMIT": commit}
    try:
        done = subprocess.run([sys.executable, "-c", script, json.dumps(config), str(tmp / "runs"), str(steps)],
                              cwd=code, env=env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"training with the code of {commit} failed:\n{done.stderr[-2000:]}")
        return Path(done.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(code)], capture_output=True)


def reproduce(run_id: str, steps: int = 40, *, runs_dir: str | Path | None = None, work_dir: str | Path | None = None,
              progress: bool = False, at_commit: bool = False) -> ReproduceResult:
    """Retrain the first ``steps`` steps of committed run ``run_id`` (in ``runs_dir``, default ``data/runs``) in a
    temporary folder (or under ``work_dir``) and compare them with its ``metrics.csv`` (:func:`compare_metrics`).
    ``at_commit``: with the code of the run's recorded commit (:func:`_train_at_commit`), not the current one."""
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
    recorded = str(info.get("git_commit", "unknown"))
    if at_commit and recorded == "unknown":
        raise ValueError(f"at_commit: run {run_id} records no git_commit")
    with tempfile.TemporaryDirectory(prefix="rlvr-reproduce-", dir=work_dir) as tmp:
        if at_commit:
            from .config import ADDED_FIELD_DEFAULTS

            # fields at their added defaults are left to the old code's own defaults (the same, by the rule of
            # ADDED_FIELD_DEFAULTS), so a commit that predates a field still reads the config
            old = {k: v for k, v in asdict(cfg).items()
                   if k not in ADDED_FIELD_DEFAULTS or v != ADDED_FIELD_DEFAULTS[k]}
            out = _train_at_commit(old, recorded, steps, Path(tmp))
        else:
            out = run(cfg, runs_dir=tmp, progress=progress, force=True, max_steps_this_call=steps)
        same, first, worst = compare_metrics(folder / "metrics.csv", out / "metrics.csv", steps)
    head = git_commit()
    return ReproduceResult(run_id=run_id, steps=steps, identical=same, first_diff_step=first, max_abs_diff=worst,
                           recorded_commit=recorded, head_commit=head, code_commit=recorded if at_commit else head,
                           named_streams="rng_streams" in info)


def add_reproduce_subcommand(subparsers):
    """Add ``reproduce RUN_ID [--steps N] [--runs-dir D]`` to an argparse ``subparsers`` object."""
    p = subparsers.add_parser("reproduce", help="retrain the first steps of a committed run and compare bit for bit")
    p.add_argument("run_id", help="a folder name under data/runs, e.g. p1-main-089a171f7e")
    p.add_argument("--steps", type=int, default=40, help="optimizer steps to retrain and compare (default 40)")
    p.add_argument("--runs-dir", default=None, help="where the committed run folder is (default: data/runs)")
    p.add_argument("--at-commit", action="store_true",
                   help="retrain with the code of the run's recorded commit (a temporary git worktree), not yours")
    p.set_defaults(func=_reproduce_from_args)
    return p


def _reproduce_from_args(args) -> int:
    result = reproduce(args.run_id, args.steps, runs_dir=args.runs_dir, at_commit=args.at_commit)
    print(result.report())
    return 0 if result.identical else 1
