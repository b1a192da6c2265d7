"""``rlvr-dynamics train CONFIG.yml``: run every GRPO run of an experiment file, sequentially, resumably.

Wire into the top-level CLI with :func:`add_train_subcommand` (argparse sub-parsers) or call :func:`train_main`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("config", help="experiment YAML (one run, or base/grid/runs; see rlvr_dynamics.grpo.config)")
    parser.add_argument("--runs-dir", default=None, help="where run folders go (default: data/runs)")
    parser.add_argument("--only", default=None, help="run only configs whose name contains this text")
    parser.add_argument("--dry-run", action="store_true", help="list the runs (id, status) and exit")
    parser.add_argument("--force", action="store_true", help="recompute runs even if complete")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=_run_from_args)
    return parser


def add_train_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``train`` to an argparse ``subparsers`` object; the parsed namespace's ``func(args)`` runs it."""
    return _configure(subparsers.add_parser("train", help="train GRPO runs of an experiment YAML with TRL"))


def _run_from_args(args: argparse.Namespace) -> int:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.setdefault(var, "1")
    from pathlib import Path

    from .config import load_experiment
    from .runner import RUNS_DIR, run

    runs = load_experiment(args.config)
    if args.only:
        runs = [r for r in runs if args.only in r.name]
    root = Path(args.runs_dir) if args.runs_dir else RUNS_DIR
    for i, cfg in enumerate(runs, 1):
        path = root / cfg.run_id() / "config.json"
        status = "complete" if path.exists() and '"complete": true' in path.read_text() else (
            "partial" if path.exists() else "new")
        print(f"[{i}/{len(runs)}] {cfg.run_id()} {status}", flush=True)
        if args.dry_run or (status == "complete" and not args.force):
            continue
        t = time.time()
        run(cfg, runs_dir=root, progress=not args.no_progress, force=args.force)
        print(f"    done in {time.time() - t:.1f} s", flush=True)
    return 0


def train_main(argv: list[str] | None = None) -> int:
    """Entry point: ``train_main(["data/configs/p1_sizes.yml"])``."""
    parser = _configure(argparse.ArgumentParser(prog="rlvr-dynamics train", description=__doc__))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(train_main())
