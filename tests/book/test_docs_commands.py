"""Docs cannot drift: every ``rlvr-dynamics`` command shown in README.md and book/**/*.md must be valid.

Which commands are checked:

- every line of a fenced code block (```` ``` ````) that calls ``rlvr-dynamics`` (with or without ``.venv/bin/``,
  a ``$`` prompt, a trailing ``# comment``, ``\\`` continuations, a ``>``/``|`` redirection, which is cut off);
- inline code spans (`` `rlvr-dynamics …` ``) too, unless they hold a placeholder (``<id>``, ``NOTEBOOK``, ``…``);
  an inline span naming only a subcommand (`` `rlvr-dynamics fit` reads …``) is a mention: the subcommand must exist.

How each is validated (in-process, through :func:`rlvr_dynamics.cli.main` / ``build_parser``):

- ``run``: executed with ``--dry-run`` added, which validates the notebook id, parameter names and types and
  executes nothing; exit status 0 required;
- ``bisect``: executed with ``--dry-run`` added, which validates the experiment file and lists its cells;
- ``list``, ``params``, ``scorecard``: executed for real (cheap, read-only); exit status 0 required;
- ``fit``: executed for real only if its LOG path exists in the repository; docs show the reader's own logs
  (``path/to/…``, ``metrics.csv``), so otherwise it is parsed only (``build_parser().parse_args``): options, types
  and the subcommand name are still checked;
- ``book`` and ``train``: parsed only (they build or train: minutes to hours);
- ``reproduce``: parsed, and its RUN_ID must be a committed run folder under ``data/runs`` (it retrains);
- a command holding a placeholder in a fenced block: parsed only.

Generated pages (``book/_generated``, ``book/executed``, ``book/_build``) are not docs and are skipped.
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlvr_dynamics import cli
from rlvr_dynamics.paths import BOOK_DIR, REPO_ROOT

PROG = "rlvr-dynamics"
RUN_FOR_REAL = {"list", "params", "scorecard"}
PARSE_ONLY = {"book", "train", "reproduce"}
PLACEHOLDER = re.compile(r"<[^>]+>|…|\.\.\.|\bNOTEBOOK\b|\bNAME\b|\bVALUE\b|\bCONFIG\b|\bLOG\b")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"`([^`\n]*\brlvr-dynamics\s[^`\n]*)`")
_STOP = {">", ">>", "|", "&&", "||", ";", "2>", "2>&1", "&"}


@dataclass(frozen=True)
class DocCommand:
    source: str
    """``file:line`` where the command is shown."""
    text: str
    """The command as shown (continuations joined)."""
    argv: tuple[str, ...]
    """Arguments after ``rlvr-dynamics``."""
    placeholder: bool
    """True if the command holds a placeholder such as ``<id>``."""
    mention: bool = False
    """True for an inline span that only names a subcommand (prose, not a command to run)."""


def _argv(command: str) -> tuple[str, ...] | None:
    """The arguments after ``rlvr-dynamics`` in one shell line (None if the line does not call it)."""
    try:
        tokens = shlex.split(command, comments=True)
    except ValueError:  # unbalanced quotes: keep it, it must fail validation
        tokens = command.split()
    for i, tok in enumerate(tokens):
        if Path(tok).name == PROG:
            rest = []
            for t in tokens[i + 1:]:
                if t in _STOP or t.startswith((">", "|")):
                    break
                rest.append(t)
            return tuple(rest)
    return None


def extract_commands(text: str, source: str = "<text>", *, inline: bool = True) -> list[DocCommand]:
    """Every ``rlvr-dynamics`` command shown in Markdown ``text`` (see the module docstring for the rules)."""
    out: list[DocCommand] = []
    lines = text.splitlines()
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
            i += 1
            continue
        start = i
        if in_fence:
            joined = line
            while joined.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                joined = joined.rstrip()[:-1] + " " + lines[i].strip()
            cmd = joined.strip().removeprefix("$ ").strip()
            if re.search(rf"(^|[\s/]){re.escape(PROG)}(\s|$)", cmd.split("#", 1)[0]):
                argv = _argv(cmd)
                if argv is not None:
                    out.append(DocCommand(f"{source}:{start + 1}", cmd, argv, bool(PLACEHOLDER.search(
                        cmd.split("#", 1)[0]))))
        elif inline:
            for m in _INLINE.finditer(line):
                cmd = m.group(1).strip()
                argv = _argv(cmd)
                if argv is not None and not PLACEHOLDER.search(cmd):
                    out.append(DocCommand(f"{source}:{start + 1}", cmd, argv, False, mention=len(argv) == 1))
        i += 1
    return out


def _subcommands() -> set[str]:
    import argparse
    parser = cli.build_parser()
    return {name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices}


def _parse_only(argv: tuple[str, ...]) -> tuple[int, str]:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            cli.build_parser().parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0), err.getvalue().strip()
    return 0, ""


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(argv)
    except SystemExit as exc:  # argparse errors
        rc = int(exc.code or 0)
    return rc, (err.getvalue() + out.getvalue()).strip()


def validate_command(cmd: DocCommand) -> tuple[str, int, str]:
    """Validate one documented command; returns ``(how, exit_status, message)`` (0 = valid)."""
    if cmd.mention:
        known = _subcommands()
        ok = bool(cmd.argv) and cmd.argv[0] in known
        return "mention", 0 if ok else 2, "" if ok else f"no subcommand {cmd.argv[:1]}; known: {sorted(known)}"
    rc, msg = _parse_only(cmd.argv)
    if rc or cmd.placeholder:
        return "parsed", rc, msg
    sub = cmd.argv[0]
    if sub in ("run", "bisect"):
        argv = list(cmd.argv) + ([] if "--dry-run" in cmd.argv else ["--dry-run"])
        rc, msg = _run(argv)
        return "dry-run", rc, msg
    if sub in RUN_FOR_REAL:
        rc, msg = _run(list(cmd.argv))
        return "executed", rc, msg
    if sub == "reproduce":
        from rlvr_dynamics.paths import RUNS_DIR
        ok = (RUNS_DIR / cmd.argv[1] / "config.json").exists()
        return "parsed", 0 if ok else 2, "" if ok else f"no committed run {cmd.argv[1]!r} under data/runs"
    if sub == "fit" and len(cmd.argv) > 1 and (REPO_ROOT / cmd.argv[1]).exists():
        rc, msg = _run(list(cmd.argv))
        return "executed", rc, msg
    return "parsed", 0, ""


def _doc_files() -> list[Path]:
    files = [REPO_ROOT / "README.md"]
    files += sorted(p for p in BOOK_DIR.rglob("*.md")
                    if not any(part.startswith("_") or part == "executed" for part in p.relative_to(BOOK_DIR).parts))
    return [f for f in files if f.exists()]


def _doc_commands() -> list[DocCommand]:
    cmds = []
    for f in _doc_files():
        cmds += extract_commands(f.read_text(encoding="utf-8"), str(f.relative_to(REPO_ROOT)))
    return cmds


DOC_COMMANDS = _doc_commands()


def test_the_docs_show_commands():
    sources = {c.source.split(":")[0] for c in DOC_COMMANDS}
    assert "README.md" in sources and "book/rerun.md" in sources
    assert any(c.argv[:1] == ("run",) and not c.placeholder for c in DOC_COMMANDS), \
        "the docs should show at least one concrete `rlvr-dynamics run` example"


@pytest.mark.parametrize("cmd", DOC_COMMANDS, ids=[f"{c.source} {' '.join(c.argv)}"[:90] for c in DOC_COMMANDS])
def test_documented_command_is_valid(cmd):
    how, rc, msg = validate_command(cmd)
    assert rc == 0, f"{cmd.source}: `{cmd.text}` is invalid ({how}): {msg}"


# --- the extractor and the validator themselves ----------------------------------------------------------------

SAMPLE = """\
Run `rlvr-dynamics params p1_regimes` or `rlvr-dynamics run <id> --store`; `rlvr-dynamics fit` reads logs.

```bash
$ .venv/bin/rlvr-dynamics list                # every notebook
rlvr-dynamics run p1_regimes -p momentum 0.5
rlvr-dynamics run p1_regimes \\
    -p c3_momentum 0.5
rlvr-dynamics fit path/to/trainer_state.json --json > report.json
rlvr-dynamics fitt x
rlvr-dynamics run <id> --store
pip install rlvr-dynamics-extra
```

    rlvr-dynamics list   (indented, outside a fence: not a shown command)
"""


def test_extractor_finds_fenced_inline_and_continued_commands():
    cmds = extract_commands(SAMPLE, "sample.md")
    assert [(c.source, c.argv, c.placeholder) for c in cmds] == [
        ("sample.md:1", ("params", "p1_regimes"), False),
        ("sample.md:1", ("fit",), False),
        ("sample.md:4", ("list",), False),
        ("sample.md:5", ("run", "p1_regimes", "-p", "momentum", "0.5"), False),
        ("sample.md:6", ("run", "p1_regimes", "-p", "c3_momentum", "0.5"), False),
        ("sample.md:8", ("fit", "path/to/trainer_state.json", "--json"), False),
        ("sample.md:9", ("fitt", "x"), False),
        ("sample.md:10", ("run", "<id>", "--store"), True),
    ]


def test_validator_rejects_invalid_documented_commands():
    by_line = {c.source: c for c in extract_commands(SAMPLE, "sample.md")[1:]}
    assert validate_command(DocCommand("x", "", ("fitt",), False, mention=True))[:2] == ("mention", 2)
    how, rc, msg = validate_command(by_line["sample.md:5"])   # p1_regimes has no `momentum` parameter
    assert (how, rc) == ("dry-run", 2) and "unknown parameter 'momentum'" in msg
    how, rc, msg = validate_command(by_line["sample.md:9"])   # no such subcommand
    assert (how, rc) == ("parsed", 2) and "invalid choice: 'fitt'" in msg
    bad_type = DocCommand("x", "", ("run", "p1_regimes", "-p", "c3_momentum", "'fast'"), False)
    how, rc, msg = validate_command(bad_type)
    assert (how, rc) == ("dry-run", 2) and "expects float" in msg
    bad_flag = DocCommand("x", "", ("fit", "path/to/log.csv", "--momentum", "high"), False)
    assert validate_command(bad_flag)[:2] == ("parsed", 2)


def test_validator_accepts_valid_commands_without_executing(tmp_path, monkeypatch):
    cmds = extract_commands(SAMPLE, "sample.md")
    assert cmds[1].mention and validate_command(cmds[1])[:2] == ("mention", 0)   # `rlvr-dynamics fit` reads logs
    by_line = {c.source: c for c in cmds[1:]}
    import rlvr_dynamics.book.registry as registry

    def boom(*a, **k):  # a dry run must never reach papermill
        raise AssertionError("run_notebook called during a dry run")

    monkeypatch.setattr(registry, "run_notebook", boom)
    how, rc, msg = validate_command(by_line["sample.md:6"])
    assert (how, rc) == ("dry-run", 0), msg
    assert "c3_momentum = 0.5  (changed)" in msg and msg.endswith("dry run: nothing executed")
    assert validate_command(by_line["sample.md:8"])[:2] == ("parsed", 0)    # placeholder path: parsed only
    assert validate_command(by_line["sample.md:10"])[:2] == ("parsed", 0)   # placeholder: parsed only
    assert validate_command(by_line["sample.md:4"])[:2] == ("executed", 0)


def test_dry_run_cli_exit_codes(capsys):
    assert cli.main(["run", "no_such_notebook", "--dry-run"]) == 2
    assert "unknown notebook 'no_such_notebook'" in capsys.readouterr().err
    assert cli.main(["run", "p1_regimes", "-p", "no_such_knob", "1", "--dry-run"]) == 2
    assert "valid parameters:" in capsys.readouterr().err
    assert cli.main(["run", "p1_regimes", "--store", "-p", "c3_momentum", "0.5", "--dry-run"]) == 2
    assert "default parameters" in capsys.readouterr().err
    assert cli.main(["run", "p1_regimes", "-p", "c3_momentum", "1", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would run p1_regimes" in out and "c3_momentum = 1.0  (changed)" in out  # int coerced to float


# ------------------------------------------------------------------------------------------ Python snippets
_PY_FENCE = re.compile(r"^\s*```python\s*$")


def fenced_blocks(fence: re.Pattern) -> list[tuple[str, str]]:
    """``(file:line, text)`` of every fenced block opened by ``fence`` in README.md and book/*.md."""
    out = []
    for path in [REPO_ROOT / "README.md", *sorted(BOOK_DIR.glob("*.md"))]:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if fence.match(lines[i]):
                j = i + 1
                while j < len(lines) and not _FENCE.match(lines[j]):
                    j += 1
                out.append((f"{path.relative_to(REPO_ROOT)}:{i + 1}", "\n".join(lines[i + 1:j])))
                i = j
            i += 1
    return out


def python_snippets() -> list[tuple[str, str]]:
    """``(file:line, code)`` of every fenced ``python`` block in README.md and book/*.md."""
    return fenced_blocks(_PY_FENCE)


@pytest.mark.parametrize("where, code", python_snippets(), ids=[w for w, _ in python_snippets()])
def test_python_snippets_parse_and_their_imports_resolve(where, code):
    """Every Python block in the docs parses, and every ``from rlvr_dynamics… import name`` resolves, with the
    call signatures the block uses for the project's own names (keywords must exist)."""
    import ast
    import importlib
    import inspect

    tree = ast.parse(code.replace("...", "None"), filename=where)
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rlvr_dynamics"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):        # `from package import submodule` imports it, as Python does
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ModuleNotFoundError:
                        pass
                assert hasattr(module, alias.name), f"{where}: {node.module} has no {alias.name}"
                names[alias.asname or alias.name] = getattr(module, alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            target = names[node.func.id]
            try:
                params = inspect.signature(target).parameters
            except (TypeError, ValueError):
                continue
            if any(p.kind is p.VAR_KEYWORD for p in params.values()):
                continue
            for kw in node.keywords:
                assert kw.arg is None or kw.arg in params, f"{where}: {node.func.id}() has no argument {kw.arg!r}"


# ------------------------------------------------------------------------------------------ experiment files
_YAML_FENCE = re.compile(r"^\s*```ya?ml\s*$")


def yaml_snippets() -> list[tuple[str, str]]:
    """``(file:line, text)`` of every fenced ``yaml`` block in README.md and book/*.md."""
    return fenced_blocks(_YAML_FENCE)


def test_the_docs_show_an_experiment_file():
    assert yaml_snippets(), "README.md shows an experiment file (my_run.yml)"


@pytest.mark.parametrize("where, text", yaml_snippets(), ids=[w for w, _ in yaml_snippets()])
def test_documented_experiment_files_are_valid_run_configs(where, text):
    """Every YAML block in the docs is an experiment file whose runs validate (field names, types and ranges)."""
    import yaml

    from rlvr_dynamics.grpo.config import expand

    runs = expand(yaml.safe_load(text))
    assert runs, where
