"""``rlvr-dynamics fit LOG …``: fit, forecast and diagnose your own training logs.

One LOG: the full report. Several LOGs, or one folder of logs that is not itself a run (no ``trainer_state.json``,
``metrics.csv``, checkpoint or event file): one line per run — name, status, points, plateau, the forecast ± its 80 %
interval at the last step + 10 % (or the first ``--forecast`` step), the evidence reading
(:mod:`.reading.dynamics`) and the detectors that fired. Only what a command needs is imported (scipy when a fit runs).

Every bad input ends in one line on stderr that names the file (and the line, where there is one) and exit code 2;
never a traceback. With many logs, each bad one gets its line, the others are still read, and the exit code is 2.
"""
from __future__ import annotations

import argparse
import math
import sys


def _parse_forecast(args: argparse.Namespace) -> None:
    """``--forecast 200 400 LOG``: argparse gives LOG to --forecast; take it back."""
    items = list(args.forecast or [])
    steps = []
    for i, item in enumerate(items):
        try:
            steps.append(int(item))
        except ValueError:
            if not args.log and all(not _is_int(x) for x in items[i:]):
                args.log = items[i:]
                break
            raise ValueError(f"--forecast takes integer steps, got {item!r}") from None
    args.forecast = steps or None


def _is_int(x: str) -> bool:
    try:
        int(x)
        return True
    except ValueError:
        return False


LOG_SUFFIXES = (".csv", ".json", ".jsonl", ".log", ".txt")


def _expand(paths: list[str]) -> list[str] | None:
    """The logs to read one line each, or None for the single-log report: several paths, or one folder that is not
    a run (:func:`~.logs.load_log` cannot read it as one) holding log files or run folders."""
    from pathlib import Path

    if len(paths) > 1:
        return paths
    path = Path(paths[0])
    if not path.is_dir():
        return None
    from ..runs.logs import resolved_source

    try:
        resolved_source(path)     # a run folder (a log is found in it): its report, or the real cause of its error
        return None
    except ValueError:
        pass
    items = sorted(str(p) for p in path.iterdir() if not p.name.startswith(".") and
                   ((p.is_file() and p.suffix in LOG_SUFFIXES and p.name != "index.json") or p.is_dir()))
    return items or None


def default_forecast_step(steps) -> int:
    """The step forecast when ``--forecast`` is not given: the last logged step plus 10 % of the logged span."""
    return int(steps[-1] + math.ceil(0.1 * (steps[-1] - steps[0])))


def _one_line(path: str, args: argparse.Namespace, width: int = 42) -> str:
    """name, points, plateau, forecast ± 80 % half-width, reading verdict, fired detectors (module docstring)."""
    from pathlib import Path

    from ..runs.logs import load_log
    from .pipeline import fit_run

    log = load_log(path, reward_column=args.reward_column)
    steps = log.reward_curve()[0]
    target = args.forecast[0] if args.forecast else default_forecast_step(steps)
    rep = fit_run(log, forecast_steps=[target], p1_laws=False, reward_bounds=_reward_bounds(args),
                  stop=stop_record(path, log.source))
    plat = rep.get("plateau") or {}
    plateau = plat.get("value")
    fc, iv = rep["forecast"].get(target), rep["forecast_interval"].get(target)
    half = None if not iv or None in iv else 0.5 * (iv[1] - iv[0])
    fired = [name for name, d in (rep.get("diagnostics") or {}).items() if d.get("fired")]
    name = Path(path).name
    shown = "rising" if plateau is None and str(plat.get("note") or "").startswith("still rising") else _g(plateau)
    st = rep["status"]
    state = st["state"] + (f"@{st['step']}" if st["state"] in ("collapsed", "collapsing", "unstable") else "")
    return (f"{name:{width}s} {state:22s} {rep['n_points']:6d} {shown:>9s}  {'@' + str(target):>7s} {_g(fc):>9s} ± "
            f"{_g(half):<9s} {rep['dynamics']['verdict']:12s} {','.join(fired) if fired else '-'}")


def no_bounds_note(log) -> str:
    """The read note of a run (a ``RunLog``) whose reward has no known bounds (none declared, a reward outside [0, 1]
    logged). When :func:`.declared_range.read_with_declared_range` would keep a declared (0, 1) and read the few
    rewards outside it as missing, it names them and ``--reward-range 0 1``."""
    import numpy as np

    from .declared_range import read_with_declared_range

    vals = [float(x) for x in log.reward_curve()[1]]
    trial, kept = read_with_declared_range(log, (0.0, 1.0))
    if kept is not None and trial is not log:          # the few rewards outside [0, 1] the flag reads as missing
        out = np.flatnonzero(np.isnan(trial.reward) & np.isfinite(log.reward))
        where = ", ".join(f"{_g(float(log.reward[i]))} at step {int(log.steps[i])}" for i in out)
        return (f"no reward bounds known: every reward lies in [0, 1] but {where}; if the reward is a success "
                f"rate, --reward-range 0 1 reads {'that one' if out.size == 1 else 'those'} as missing (a logging "
                "glitch?), where now it sets the scale of every reading")
    floor = ("none below 0: a collapse is measured from 0, as for a sum of terms that are never negative; the groups "
             "read as solved come from the run itself" if min(vals) >= 0 else
             "the floor a collapse is measured from and the groups read as solved come from the run itself")
    flag = ("every reward lies in [-1, 1]: for a reward of +1 for a right answer and -1 for a wrong one, "
            "--reward-range -1 1 reads it as the success rate it maps to, its floor at -1"
            if min(vals) >= -1 and max(vals) <= 1 else
            "--reward-range LO HI (e.g. 0 2 for a format and a correctness reward of 1 each) reads them from the "
            "bounds, and reads the reward as a share of its range, as a success rate is read")
    return f"no reward bounds known (rewards {_g(min(vals))} to {_g(max(vals))}, not all in [0, 1]; {floor}); {flag}"


def stop_record(path: str, source: str) -> dict | None:
    """The live doctor's ``doctor_stop.json`` of the run at ``path`` (the folder given, or a folder above the log
    read, up to three levels), None when the run was not stopped by the doctor or the file is not readable."""
    import json
    from pathlib import Path

    places = [Path(path)] if Path(path).is_dir() else []
    places += list(Path(source).resolve().parents)[:3]
    for folder in places:
        f = folder / "doctor_stop.json"
        if f.is_file():
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return data if isinstance(data, dict) else None
    return None


def _reward_bounds(args: argparse.Namespace):
    """``--reward-range LO HI`` as ``(lo, hi)``; ``"auto"`` (the report's rule: (0, 1) for a success rate) without
    it. ValueError naming the flag when LO ≥ HI or a value is not finite."""
    if not getattr(args, "reward_range", None):
        return "auto"
    lo, hi = args.reward_range
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"--reward-range takes LO HI with LO < HI (finite), got {lo:g} {hi:g}")
    return (lo, hi)


def _g(x) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.4g}"


def _cmd_many(paths: list[str], args: argparse.Namespace) -> int:
    from pathlib import Path

    width = max([3] + [len(Path(p).name) for p in paths])
    print(f"{'run':{width}s} {'status':22s} {'points':>6s} {'plateau':>9s}  {'at step':>7s} {'forecast ± 80 %':>21s} "
          f"{'reading':12s} fired")
    bad = 0
    for path in paths:
        try:
            print(_one_line(path, args, width), flush=True)
        except ValueError as exc:
            bad += 1
            print(f"rlvr-dynamics fit: error: {exc}", file=sys.stderr)
        except Exception as exc:  # a log that loads but breaks a fit: its line, then the next log
            bad += 1
            print(f"rlvr-dynamics fit: error: {path}: could not be fitted ({type(exc).__name__}: {exc})",
                  file=sys.stderr)
    return 2 if bad else 0


def _cmd_fit(args: argparse.Namespace) -> int:
    from ..runs.logs import load_log
    from .declared_range import read_with_declared_range
    from .pipeline import build_report
    from .render.json import to_json
    from .render.text import format_report, short_report

    _parse_forecast(args)
    _reward_bounds(args)            # a bad --reward-range is refused before any file is read
    if not args.log:
        raise ValueError("missing LOG: the log file or folder to fit")
    many = _expand(args.log)
    if many is not None:
        if args.json or args.html or args.png:
            raise ValueError("--json, --html and --png take one LOG")
        return _cmd_many(many, args)
    args.log = args.log[0]
    from ..runs.hyperparams import hyperparameters_beside, logged_learning_rate, merge, with_logged_learning_rate

    if args.momentum is not None and args.refresh_interval is None:
        raise ValueError("--momentum needs --refresh-interval (K_ref = steps_per_generation × num_iterations); "
                         "alone it would be ignored")
    log = load_log(args.log, reward_column=args.reward_column)
    from pathlib import Path

    if Path(args.log).is_dir():   # a folder: say which of its logs was read (a resumed TRL run: every segment)
        print(f"rlvr-dynamics fit: read {log.source}" if len(log.segments) < 2 else
              f"rlvr-dynamics fit: read {len(log.segments)} segments of {args.log} (the report names them)",
              file=sys.stderr)
    flags = {"momentum": args.momentum, "refresh_interval": args.refresh_interval, "learning_rate": None,
             "num_generations": None}
    hp, notes = merge(flags, hyperparameters_beside(log.source, args.log) if not args.no_config else {})
    bounds = _reward_bounds(args)
    if bounds != "auto":        # rewards outside a declared range: read as missing, or the range dropped; the figure
        log, kept = read_with_declared_range(log, bounds)             # draws the rewards the report read
        bounds = "auto" if kept is None else kept
    try:
        built = build_report(log, reward_bounds=bounds,
                             momentum=hp["momentum"] if hp["refresh_interval"] is not None else None,
                             refresh_interval=hp["refresh_interval"],
                             forecast_steps=args.forecast or [default_forecast_step(log.reward_curve()[0])],
                             p1_laws=args.details and not args.quick, stop=stop_record(args.log, log.source))
    except ValueError:
        raise
    except Exception as exc:  # a log that loads but breaks a fit is still the log's problem: one line, exit 2
        raise ValueError(f"{log.source}: could not be fitted ({type(exc).__name__}: {exc})") from None
    at = (built.status or {}).get("step")          # η where the status is decided (a collapse's step), else the end
    hp, notes = with_logged_learning_rate(hp, notes, logged_learning_rate(log, int(log.steps[-1]) if at is None
                                                                          else int(at)),
                                          given=flags["learning_rate"] is not None)
    for note in notes:
        print(f"rlvr-dynamics fit: {note}", file=sys.stderr)
    built.hyperparameters = {**hp, "notes": notes}
    built.read_notes, built.segments = list(log.read_notes), list(log.segments)
    if args.reward_range is None and built.reward_bounds is None:
        built.read_notes.append(no_bounds_note(log))
    report = built.to_dict()
    if args.html or args.png:
        from .render.html import write_report

        for path in write_report(log, report, html=args.html, png=args.png):
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(to_json(report))
    else:
        print(format_report(report) if args.details else short_report(report))
    return 0


def add_fit_subcommand(sub) -> None:
    """Register ``fit`` on the top-level ``rlvr-dynamics`` parser."""
    p = sub.add_parser("fit", help="fit, forecast and diagnose a GRPO training log",
                       description="LOG: a TRL trainer_state.json; a TRL output_dir (every segment of a resumed "
                                   "run, combined: its TensorBoard event files under runs/ and its latest "
                                   "checkpoint-N/trainer_state.json, the one written last winning where they "
                                   "overlap: a run stopped between two saves is read to its last logged step; the "
                                   "report names the segments and any gap) or checkpoint folder; TensorBoard event "
                                   "files (events.out.tfevents.*) or a folder of them; a CSV with a step column "
                                   "(project metrics.csv, W&B or TensorBoard UI export); JSON Lines (verl file "
                                   "logger); a verl or TRL/accelerate console log (a SLURM .out file); a W&B run "
                                   "folder (wandb/offline-run-*); or an MLflow run folder / metric file. The "
                                   "learning rate is the logged one (learning_rate column) at the status step where "
                                   "the log has it; it, momentum, K_ref and num_generations are otherwise read from "
                                   "the files the trainer leaves beside the log read (training_args.bin, the "
                                   "TensorBoard 'args' text, a config), unless --no-config.")
    p.add_argument("log", nargs="*", help="path to the log file or folder; several, or a folder of logs: one line "
                                          "per run")
    p.add_argument("--reward-column", help="column to fit (default: first of reward, critic/score/mean, …)")
    p.add_argument("--momentum", type=float, help="optimizer momentum / Adam beta1 of the run, in [0, 1); needs "
                                                  "--refresh-interval")
    p.add_argument("--refresh-interval", type=int,
                   help="optimizer steps between refreshes of the sampling policy (K_ref ≥ 1): gives the "
                        "stability margin")
    p.add_argument("--forecast", nargs="+", metavar="STEP",
                   help="predict the reward at these steps (80 %% interval; default: the last logged step + 10 %% of "
                        "the logged span)")
    p.add_argument("--reward-range", nargs=2, type=float, metavar=("LO", "HI"),
                   help="the reward's declared bounds (e.g. 0 1 for a success rate, 0 4 for a sum of four 0/1 "
                        "rewards): fits, forecasts and intervals stay inside them (default: 0 1 when every logged "
                        "reward lies in [0, 1], else the observed range widened, see the book's 'Diagnose a run')")
    p.add_argument("--json", action="store_true", help="print the full report as strict JSON")
    p.add_argument("--details", action="store_true",
                   help="the whole report: P1's multi-start reference fits (most of the time), the response laws, "
                        "the reading and every detector (default: the status, why, what to do, the plateau, the "
                        "forecast and the detectors that fired)")
    p.add_argument("--quick", action="store_true", help="with --details: skip P1's multi-start reference fits")
    p.add_argument("--no-config", action="store_true",
                   help="do not read learning rate, momentum, K_ref and num_generations from the files beside "
                        "the log")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (figure embedded)")
    p.add_argument("--png", metavar="FILE", help="write the report figure as PNG")
    p.set_defaults(func=_cmd_fit)
