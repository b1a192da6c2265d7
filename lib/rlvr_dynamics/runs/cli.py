"""``rlvr-dynamics fit LOG``: fit the reward laws to your own training log and read it as an oscillator."""
from __future__ import annotations

import argparse
import json


def _cmd_fit(args: argparse.Namespace) -> int:
    from .logs import load_log
    from .report import fit_run, format_report

    log = load_log(args.log, reward_column=args.reward_column)
    report = fit_run(log, momentum=args.momentum, refresh_interval=args.refresh_interval,
                     forecast_steps=args.forecast)
    print(json.dumps(report, indent=1) if args.json else format_report(report))
    return 0


def add_fit_subcommand(sub) -> None:
    """Register ``fit`` on the top-level ``rlvr-dynamics`` parser."""
    p = sub.add_parser("fit", help="fit the three-phase and single-exponential laws to a training log",
                       description="LOG: a TRL trainer_state.json (or its checkpoint folder), a CSV with a step "
                                   "column, or JSON Lines (verl file logger, W&B export).")
    p.add_argument("log", help="path to the log file or folder")
    p.add_argument("--reward-column", help="column to fit (default: first of reward, critic/score/mean, …)")
    p.add_argument("--momentum", type=float, help="optimizer momentum / Adam beta1 of the run, in [0, 1)")
    p.add_argument("--refresh-interval", type=int,
                   help="optimizer steps between refreshes of the sampling policy (K_ref ≥ 1)")
    p.add_argument("--forecast", type=int, nargs="+", metavar="STEP", help="predict the reward at these steps")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.set_defaults(func=_cmd_fit)
