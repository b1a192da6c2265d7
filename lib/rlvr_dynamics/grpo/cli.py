"""``rlvr-dynamics train CONFIG.yml``: run every GRPO run of an experiment file, sequentially, resumably.

Wire into the top-level CLI with :func:`add_train_subcommand` (argparse sub-parsers) or call :func:`train_main`.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("config", help="experiment YAML (one run, or base/grid/runs; see rlvr_dynamics.grpo.config); several: comma-separated")
    parser.add_argument("--runs-dir", default=None, help="where run folders go (default: data/runs)")
    parser.add_argument("--only", default=None, help="run only configs whose name or run id contains this text; several: comma-separated")
    parser.add_argument("--dry-run", action="store_true", help="list the runs (id, status) and exit")
    parser.add_argument("--force", action="store_true", help="recompute runs even if complete")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--jobs", type=int, default=1,
                        help="run this many runs at once in separate processes (machines with many cores; "
                             "warm starts are built first, once each)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per run (overrides num_threads, which is not part of the run hash)")
    parser.set_defaults(func=_run_from_args)
    return parser


def add_train_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``train`` to an argparse ``subparsers`` object; the parsed namespace's ``func(args)`` runs it."""
    return _configure(subparsers.add_parser("train", help="train GRPO runs of an experiment YAML with TRL"))


def add_bisect_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``bisect``: ``rlvr-dynamics bisect CONFIG.yml [--only TEXT] [--runs-dir D] [--out-dir D] [--dry-run]``
    (:mod:`rlvr_dynamics.grpo.critical_step`)."""
    p = subparsers.add_parser("bisect", help="bisect the critical learning rate of GRPO runs (P2 length sweeps)")
    p.add_argument("config", help="experiment YAML with a 'bisect' section (see rlvr_dynamics.grpo.critical_step)")
    p.add_argument("--only", default=None, help="bisect only cells whose summary contains this text")
    p.add_argument("--runs-dir", default=None, help="where run folders go (default: data/runs)")
    p.add_argument("--out-dir", default=None, help="where the summary goes (default: data/bisections)")
    p.add_argument("--dry-run", action="store_true", help="validate the file, list the cells and exit")
    p.set_defaults(func=_bisect_from_args)
    return p


def _bisect_from_args(args: argparse.Namespace) -> int:
    from ..paths import set_offline_env
    from .critical_step import cell_summary, load_bisection_experiment, run_bisection

    set_offline_env()
    if args.dry_run:
        name, cells, settings = load_bisection_experiment(args.config)
        for cell in cells:
            print(name, cell_summary(cell))
        print(f"{len(cells)} cells; {settings}")
        return 0
    print(run_bisection(args.config, runs_dir=args.runs_dir, out_dir=args.out_dir, only=args.only))
    return 0


def _run_from_args(args: argparse.Namespace) -> int:
    from ..paths import set_offline_env

    set_offline_env()
    from pathlib import Path

    from .config import load_experiment
    from ..paths import RUNS_DIR
    from .runner import run

    runs = []
    for path in args.config.split(","):
        runs.extend(load_experiment(path))
    if args.only:
        wanted = [w for w in args.only.split(",") if w]
        runs = [r for r in runs if any(w in r.name or w in r.run_id() for w in wanted)]
    if args.threads:
        runs = [r.replace(num_threads=args.threads) for r in runs]
    root = Path(args.runs_dir) if args.runs_dir else RUNS_DIR
    if not args.dry_run:
        _import_training_stack()
    if args.jobs > 1 and not args.dry_run:
        return _run_parallel(runs, root, args)
    for i, cfg in enumerate(runs, 1):
        path = root / cfg.run_id() / "config.json"
        status = "complete" if path.exists() and '"complete": true' in path.read_text() else (
            "partial" if path.exists() else "new")
        print(f"[{i}/{len(runs)}] {cfg.run_id()} {status}", flush=True)
        if args.dry_run or (status == "complete" and not args.force):
            continue
        t = time.time()
        run_dir = run(cfg, runs_dir=root, progress=not args.no_progress, force=args.force)
        info = json.loads((run_dir / "config.json").read_text())
        if not info.get("complete"):       # asked to stop (graceful_stop.GracefulStop): checkpoint written, the rest waits
            print(f"    stopped after {time.time() - t:.1f} s with a checkpoint at step {_last_checkpoint_step(cfg, root)}"
                  f"; the same command resumes it", flush=True)
            return 130
        print(f"    done in {time.time() - t:.1f} s", flush=True)
    return 0


def _import_training_stack() -> None:
    """Import torch, transformers, datasets and TRL with the garbage collector off and freeze what they built
    (:func:`gc.freeze`; the imports' own few cycles are frozen with them, not collected): their ~450,000 long-lived
    objects are then never walked again. With the collector on, the growing heap set off ~8 full collections during
    the imports and more during training: 2.5 s of a 13 s six-step run on a 2-core AVX2 CPU (10.2 s with this).
    This command's process only trains, so its heap is its own business (:func:`~.runner.run` called from a user's
    program leaves the collector alone)."""
    import gc

    gc.disable()
    try:
        import datasets  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
        from trl import GRPOConfig, GRPOTrainer  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()


def _last_checkpoint_step(cfg, root) -> int | None:
    from .graceful_stop import last_complete_checkpoint
    from .runner import cache_run_dir

    ckpt = last_complete_checkpoint(cache_run_dir(cfg, root))
    return None if ckpt is None else int(ckpt.name.rsplit("-", 1)[1])


def _task(job) -> tuple[str, str, float, str]:
    kind, cfg, root, force = job
    import torch

    from .runner import resolve_model, run

    torch.set_num_threads(cfg.num_threads)
    t = time.time()
    try:
        if kind == "warm":
            resolve_model(cfg)
        else:
            run(cfg, runs_dir=root, progress=False, force=force)
        return kind, cfg.run_id(), time.time() - t, "ok"
    except Exception as exc:  # report and go on with the other runs
        return kind, cfg.run_id(), time.time() - t, f"error: {type(exc).__name__}: {exc}"


def _run_parallel(runs, root, args) -> int:
    """Runs in a process pool: warm starts not yet cached are built first (once per key), then the runs whose warm
    start is cached, then the others (which, if they start before their warm start is ready, build it again —
    correct, since builds are deterministic and written atomically, only wasteful)."""
    import multiprocessing as mp

    from ..paths import cache_dir
    from .runner import warm_start_spec

    def warm_dir(cfg):
        spec = warm_start_spec(cfg)
        if spec is None:
            return None
        return cache_dir() / "warmstart" / f"{spec.size}-{spec.key()}"

    missing: dict[str, object] = {}
    for cfg in runs:
        d = warm_dir(cfg)
        if d is not None and not (d / "warmstart.json").exists():
            missing.setdefault(str(d), cfg)
    def cost(cfg) -> float:  # rough relative cost, so that the longest runs start first
        size = {"tiny-s": 1.0, "tiny-m": 1.5, "tiny-l": 4.0, "tiny-m4": 2.5, "tiny-l4": 5.0}.get(cfg.model, 100.0)
        return size * cfg.max_steps * cfg.num_prompts_per_step * cfg.num_generations / cfg.refresh_interval

    ready = sorted((c for c in runs if warm_dir(c) is None or str(warm_dir(c)) not in missing), key=cost,
                   reverse=True)
    later = sorted((c for c in runs if c not in ready), key=cost, reverse=True)
    jobs = ([("warm", c, root, False) for c in missing.values()] + [("run", c, root, args.force) for c in ready]
            + [("run", c, root, args.force) for c in later])
    failed = 0
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for kind, rid, dt, status in pool.imap_unordered(_task, jobs):
            failed += status != "ok"
            print(f"{kind} {rid} {status} {dt:.1f} s", flush=True)
    return 1 if failed else 0


def train_main(argv: list[str] | None = None) -> int:
    """Entry point: ``train_main(["data/configs/p1_sizes.yml"])``."""
    parser = _configure(argparse.ArgumentParser(prog="rlvr-dynamics train", description=__doc__))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(train_main())
