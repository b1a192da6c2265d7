"""``rlvr-dynamics fit LOG``: fit, forecast and diagnose your own training log.

Every bad input ends in one line on stderr that names the file (and the line, where there is one) and exit code 2;
never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys


def _parse_forecast(args: argparse.Namespace) -> None:
    """``--forecast 200 400 LOG``: argparse gives LOG to --forecast; take it back."""
    items = list(args.forecast or [])
    steps = []
    for i, item in enumerate(items):
        try:
            steps.append(int(item))
        except ValueError:
            if args.log is None and i == len(items) - 1:
                args.log = item
            else:
                raise ValueError(f"--forecast takes integer steps, got {item!r}") from None
    args.forecast = steps or None


def _cmd_fit(args: argparse.Namespace) -> int:
    from .logs import load_log
    from .report import fit_run, format_report, to_jsonable

    _parse_forecast(args)
    if args.log is None:
        raise ValueError("missing LOG: the log file or folder to fit")
    from .hyperparams import find_hyperparameters, merge

    if args.momentum is not None and args.refresh_interval is None:
        raise ValueError("--momentum needs --refresh-interval (K_ref = steps_per_generation × num_iterations); "
                         "alone it would be ignored")
    log = load_log(args.log, reward_column=args.reward_column)
    flags = {"momentum": args.momentum, "refresh_interval": args.refresh_interval, "learning_rate": None}
    hp, notes = merge(flags, find_hyperparameters(args.log) if not args.no_config else {})
    for note in notes:
        print(f"rlvr-dynamics fit: {note}", file=sys.stderr)
    try:
        report = fit_run(log, momentum=hp["momentum"] if hp["refresh_interval"] is not None else None,
                         refresh_interval=hp["refresh_interval"], forecast_steps=args.forecast,
                         p1_laws=not args.quick)
        report["hyperparameters"] = {**hp, "notes": notes}
    except ValueError:
        raise
    except Exception as exc:  # a log that loads but breaks a fit is still the log's problem: one line, exit 2
        raise ValueError(f"{log.source}: could not be fitted ({type(exc).__name__}: {exc})") from None
    if args.html or args.png:
        from .html_report import write_report

        for path in write_report(log, report, html=args.html, png=args.png):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(to_jsonable(report), indent=1, allow_nan=False, ensure_ascii=False))
    else:
        print(format_report(report))
    return 0


def add_fit_subcommand(sub) -> None:
    """Register ``fit`` on the top-level ``rlvr-dynamics`` parser."""
    p = sub.add_parser("fit", help="fit, forecast and diagnose a GRPO training log",
                       description="LOG: a TRL trainer_state.json, a TRL output_dir (latest checkpoint) or checkpoint "
                                   "folder, a CSV with a step column (project metrics.csv, W&B or TensorBoard UI "
                                   "export), JSON Lines (verl file logger), a verl console log, or an MLflow run "
                                   "folder / metric file.")
    p.add_argument("log", nargs="?", help="path to the log file or folder")
    p.add_argument("--reward-column", help="column to fit (default: first of reward, critic/score/mean, …)")
    p.add_argument("--momentum", type=float, help="optimizer momentum / Adam beta1 of the run, in [0, 1); needs "
                                                  "--refresh-interval")
    p.add_argument("--refresh-interval", type=int,
                   help="optimizer steps between refreshes of the sampling policy (K_ref ≥ 1): gives the "
                        "stability margin")
    p.add_argument("--forecast", nargs="+", metavar="STEP", help="predict the reward at these steps (80 %% "
                                                                  "interval)")
    p.add_argument("--json", action="store_true", help="print the full report as strict JSON")
    p.add_argument("--quick", action="store_true", help="skip P1's multi-start reference fits (most of the time)")
    p.add_argument("--no-config", action="store_true",
                   help="do not read learning rate, momentum and K_ref from a config beside the log")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (figure embedded)")
    p.add_argument("--png", metavar="FILE", help="write the report figure as PNG")
    p.set_defaults(func=_cmd_fit)
