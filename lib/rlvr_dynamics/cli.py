"""``rlvr-dynamics`` command line.

    rlvr-dynamics list                          registered notebooks, their claims and parameters
    rlvr-dynamics params NOTEBOOK               one notebook's parameters with defaults and help
    rlvr-dynamics run NOTEBOOK -p NAME VALUE …  rerun one notebook with new parameters (papermill)
    rlvr-dynamics run NOTEBOOK --dry-run …      validate the notebook and parameters, print the plan, run nothing
    rlvr-dynamics run --all [--store]           rerun every notebook at default parameters
    rlvr-dynamics book [--execute stale|all|none]   build the Jupyter Book
    rlvr-dynamics scorecard                     print the verdict counts of the executed notebooks
    rlvr-dynamics fit LOG [--momentum M --refresh-interval K] [--forecast STEP …]   fit your own training log
    rlvr-dynamics train CONFIG.yml              run GRPO experiments with TRL (cached by config hash, resumable)
    rlvr-dynamics bisect CONFIG.yml             bisect the critical learning rate of GRPO runs (resumable)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .grpo.cli import add_bisect_subcommand, add_train_subcommand
from .grpo.reproduce import add_reproduce_subcommand
from .doctor.cli import add_fit_subcommand


def _cmd_list(args: argparse.Namespace) -> int:
    from .book.registry import load_registry, notebook_parameters

    for e in load_registry():
        if e.path.exists():
            params = ", ".join(f"{k}={v['default']!r}" for k, v in notebook_parameters(e).items())
        else:   # an installed wheel: the registry ships, the notebooks live in the repository
            params = "(notebook not installed: clone the repository to run it)"
        print(f"{e.id:32s} {e.paper}  {', '.join(e.claims):28s} {e.title}\n{'':35s}parameters: {params}")
    return 0


def _cmd_params(args: argparse.Namespace) -> int:
    from .book.registry import get_entry, notebook_parameters

    entry = get_entry(args.notebook)
    for name, p in notebook_parameters(entry).items():
        print(f"{name:24s} {p['type']:6s} default={p['default']!r:20s} {p['help']}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .book.registry import get_entry, load_registry, run_notebook

    entries = load_registry()
    if args.all == bool(args.notebook):
        raise ValueError("give exactly one of NOTEBOOK or --all")
    overrides: dict[str, str] = {}
    for name, value in args.param or []:
        overrides[name] = value
    for name, value in args.raw or []:
        overrides[name] = value
    targets = entries if args.all else [get_entry(args.notebook, entries)]
    if args.all and overrides:
        raise ValueError("-p/-r apply to one notebook; drop them with --all")
    out_dir = Path(args.out) if args.out else None
    if args.dry_run:
        from .book.registry import plan_run

        plans = [plan_run(entry, overrides, store=args.store, out_dir=out_dir) for entry in targets]
        for plan in plans:
            print(f"would run {plan['notebook']} ({plan['path']})")
            for name, value in plan["parameters"].items():
                print(f"  {name} = {value!r}{'  (changed)' if name in plan['changed'] else ''}")
            print(f"  executed copy and verdicts -> {plan['out_dir']}"
                  + ("; also refreshes the committed notebook (--store)" if plan["store"] else ""))
        print("dry run: nothing executed")
        return 0
    for i, entry in enumerate(targets, 1):
        print(f"[{i}/{len(targets)}] {entry.id}", flush=True)
        path = run_notebook(entry, overrides, store=args.store, out_dir=out_dir, progress=not args.quiet)
        print(f"  executed copy: {path}\n  verdicts: {path.with_suffix('').with_suffix('.claims.json')}")
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    from .book.build import build_book

    html = build_book(execute=args.execute, progress=not args.quiet)
    print(f"book built: {html / 'index.html'}")
    return 0


def _cmd_scorecard(args: argparse.Namespace) -> int:
    from collections import Counter

    from .book.markup import load_verdicts
    from .paths import BOOK_DIR, STORED_CLAIMS_DIR

    folder = Path(args.dir) if args.dir else (BOOK_DIR / "executed" if (BOOK_DIR / "executed").exists()
                                              else STORED_CLAIMS_DIR)
    rows = load_verdicts(folder)
    counts = Counter((r["paper"], r["verdict"]) for r in rows)
    print(f"verdicts in {folder}:")
    for (paper, verdict), n in sorted(counts.items()):
        print(f"  {paper} {verdict:8s} {n}")
    for r in rows:
        print(f"  {r['id']:7s} {r['verdict']:8s} {r['notebook']:30s} measured={r['measured']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlvr-dynamics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"rlvr-dynamics {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="registered notebooks").set_defaults(func=_cmd_list)
    p = sub.add_parser("params", help="one notebook's parameters")
    p.add_argument("notebook")
    p.set_defaults(func=_cmd_params)

    p = sub.add_parser("run", help="execute notebooks with papermill")
    p.add_argument("notebook", nargs="?", help="registry id, e.g. p1_regimes")
    p.add_argument("--all", action="store_true", help="every registered notebook, default parameters")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="parameter as a Python literal (like papermill -p)")
    p.add_argument("-r", "--raw", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="parameter as a raw string (like papermill -r)")
    p.add_argument("--store", action="store_true",
                   help="also refresh the committed notebook and its verdicts (nbval baseline; defaults only)")
    p.add_argument("--out", help="folder for the executed copy (default book/executed)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--dry-run", action="store_true",
                   help="validate the notebook id and parameters, print what would run, execute nothing")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("book", help="build the Jupyter Book")
    p.add_argument("--execute", choices=("stale", "all", "none"), default="stale",
                   help="stale: run notebooks missing or changed since their executed copy (default); "
                        "all: rerun every notebook at defaults; none: use the committed executed notebooks")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=_cmd_book)

    p = sub.add_parser("scorecard", help="verdict counts of the executed notebooks")
    p.add_argument("--dir", help="folder of *.claims.json (default book/executed, else notebooks/claims)")
    p.set_defaults(func=_cmd_scorecard)

    add_fit_subcommand(sub)
    add_train_subcommand(sub)
    add_bisect_subcommand(sub)
    add_reproduce_subcommand(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"rlvr-dynamics {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # NotebookError, build failures: one clear line, no traceback
        from .book.registry import NotebookError

        if isinstance(exc, (NotebookError, RuntimeError)):
            print(f"rlvr-dynamics {args.command}: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
