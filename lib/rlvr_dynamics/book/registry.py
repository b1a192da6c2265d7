"""The notebook registry and the papermill runner behind ``rlvr-dynamics run``.

Every notebook is listed in ``notebooks/registry/*.yml`` (one file per part of the book; format in
``docs/CONTRIBUTING.md``). Its default parameters are the notebook's own ``parameters`` cell, read with papermill,
so there is one source of truth. The runner:

- rejects an unknown notebook id or parameter name (papermill alone silently accepts unknown names) and a value
  whose type does not match the default's, listing what is valid;
- executes with papermill in ``notebooks/`` (so relative paths to ``data/`` work), with the claims ledger writing
  ``<id>.claims.json`` beside the executed copy;
- writes the executed copy atomically to ``book/executed/<id>.ipynb`` with a provenance cell (notebook path,
  parameters, package version, git commit), which the next book build shows;
- with ``store=True`` (default parameters only) also refreshes the committed notebook ``notebooks/<id>.ipynb``
  and its verdicts ``notebooks/claims/<id>.claims.json``: the nbval baseline.
"""
from __future__ import annotations

import ast
import copy
import datetime as _dt
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from .. import __version__
from .._io import atomic_write_text
from ..paths import BOOK_DIR, NOTEBOOK_DIR, NOTEBOOK_ENV, REGISTRY_DIR, REPO_ROOT, STORED_CLAIMS_DIR
from .claims import CLAIMS_DIR_ENV, checklist

PAPERS = {"P1": "Predictable GRPO", "P2": "Gradient gap and step-size thresholds"}
_REQUIRED = ("id", "title", "paper", "chapter", "section", "claims", "figure", "order")


def _nbformat():
    """nbformat, imported on use: the base install (``pip install rlvr-dynamics``) lists notebooks without it."""
    import nbformat

    return nbformat


class NotebookError(RuntimeError):
    """A notebook failed to execute; the message names the notebook, the failing cell and the error."""


@dataclass(frozen=True)
class NotebookEntry:
    """One registered notebook."""

    id: str
    """File stem: ``notebooks/<id>.ipynb``."""
    title: str
    """Page title in the book."""
    paper: str
    """``P1`` or ``P2``: which part of the book the page belongs to."""
    chapter: str
    """Chapter inside the part; entries with the same chapter are grouped."""
    section: str
    """Spec section the notebook mirrors, e.g. ``§3.4``."""
    claims: tuple[str, ...]
    """Claim IDs its claims cell records."""
    figure: str
    """Paper figure it mirrors, or what it shows."""
    order: int
    """Position inside its part."""
    source: str = field(default="", compare=False)
    """Registry file it came from (for error messages)."""

    @property
    def path(self) -> Path:
        return NOTEBOOK_DIR / f"{self.id}.ipynb"


def load_registry(registry_dir: Path = REGISTRY_DIR) -> list[NotebookEntry]:
    """All registered notebooks, sorted by (paper, order, id); ValueError on a malformed entry."""
    entries: list[NotebookEntry] = []
    known_claims = checklist()
    for yml in sorted(Path(registry_dir).glob("*.yml")):
        rows = yaml.safe_load(yml.read_text(encoding="utf-8")) or []
        if not isinstance(rows, list):
            raise ValueError(f"{yml}: the registry file must hold a YAML list of entries")
        for i, row in enumerate(rows):
            where = f"{yml.name} entry {i} ({row.get('id', '?') if isinstance(row, dict) else row!r})"
            if not isinstance(row, dict):
                raise ValueError(f"{where}: must be a mapping")
            missing = [k for k in _REQUIRED if k not in row]
            if missing:
                raise ValueError(f"{where}: missing field(s) {missing}; required: {list(_REQUIRED)}")
            extra = sorted(set(row) - set(_REQUIRED))
            if extra:
                raise ValueError(f"{where}: unknown field(s) {extra}; allowed: {list(_REQUIRED)}")
            if row["paper"] not in PAPERS:
                raise ValueError(f"{where}: paper must be one of {list(PAPERS)}, got {row['paper']!r}")
            unknown = [c for c in row["claims"] if c not in known_claims]
            if unknown:
                raise ValueError(f"{where}: claim id(s) {unknown} are not in book/claims.yml")
            entries.append(NotebookEntry(**{**row, "claims": tuple(row["claims"]), "order": int(row["order"]),
                                            "section": str(row["section"])}, source=yml.name))
    ids = [e.id for e in entries]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"duplicate notebook id(s) in the registry: {dupes}")
    return sorted(entries, key=lambda e: (e.paper, e.order, e.id))


def get_entry(notebook_id: str, entries: Iterable[NotebookEntry] | None = None) -> NotebookEntry:
    """The entry for ``notebook_id`` (a ``.ipynb`` suffix or ``notebooks/`` prefix is tolerated)."""
    entries = list(entries if entries is not None else load_registry())
    key = Path(notebook_id).name.removesuffix(".ipynb")
    for e in entries:
        if e.id == key:
            return e
    raise ValueError(f"unknown notebook {notebook_id!r}; registered notebooks: "
                     f"{', '.join(e.id for e in entries) or '(none)'}")


def notebook_parameters(entry: NotebookEntry) -> dict[str, dict[str, Any]]:
    """The notebook's parameters: ``{name: {"default": value, "type": str, "help": str}}`` from its tagged cell.

    The cell is parsed with :mod:`ast` (papermill's own inspector gives up on comments holding ``>=`` or ``=``):
    every top-level ``name = <literal>`` is a parameter, its trailing ``# comment`` the help text.
    """
    if not entry.path.exists():
        raise ValueError(f"notebook file {entry.path} for registry id {entry.id!r} does not exist (notebooks ship "
                         "with the repository, not with the installed package: clone it to rerun notebooks)")
    nb = json.loads(entry.path.read_text(encoding="utf-8"))        # plain JSON: listing knobs needs no nbformat
    cell = next((c for c in nb.get("cells", []) if c.get("cell_type") == "code"
                 and "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise ValueError(f"{entry.path}: no cell tagged 'parameters'")
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{entry.path}: the parameters cell is not valid Python ({exc.msg}, line {exc.lineno})")
    lines = source.splitlines()
    out: dict[str, dict[str, Any]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ValueError(f"{entry.path}: parameters cell line {node.lineno} is not 'name = literal'")
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            raise ValueError(f"{entry.path}: parameter {node.targets[0].id!r} must be a Python literal") from None
        tail = lines[node.end_lineno - 1][node.end_col_offset:]
        help_text = tail.split("#", 1)[1].strip() if "#" in tail else ""
        out[node.targets[0].id] = {"default": default, "type": type(default).__name__, "help": help_text}
    return out


def _parse_value(raw: Any) -> Any:
    """A ``-p`` value as papermill's CLI reads it: a Python literal if it parses, else the raw string."""
    if not isinstance(raw, str):
        return raw
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


def coerce_parameters(entry: NotebookEntry, overrides: dict[str, Any]) -> dict[str, Any]:
    """Validate ``overrides`` against the notebook's parameters; return them parsed.

    ValueError names an unknown parameter (listing the valid ones) or a value whose type differs from the
    default's (an int is accepted where the default is a float; a list where the default is a list or tuple).
    """
    params = notebook_parameters(entry)
    out: dict[str, Any] = {}
    for name, raw in overrides.items():
        if name not in params:
            listing = ", ".join(f"{n}={p['default']!r}" for n, p in params.items())
            raise ValueError(f"unknown parameter {name!r} for notebook {entry.id!r}; valid parameters: {listing}")
        value = _parse_value(raw)
        default = params[name]["default"]
        ok = (
            default is None
            or (isinstance(default, bool) and isinstance(value, bool))
            or (isinstance(default, float) and isinstance(value, (int, float)) and not isinstance(value, bool))
            or (isinstance(default, int) and not isinstance(default, bool) and isinstance(value, int)
                and not isinstance(value, bool))
            or (isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)))
            or (isinstance(default, str) and isinstance(raw, str))
            or (isinstance(default, dict) and isinstance(value, dict))
        )
        if not ok:
            raise ValueError(f"parameter {name!r} of notebook {entry.id!r} expects {type(default).__name__} "
                             f"(default {default!r}), got {raw!r} ({type(value).__name__})")
        if isinstance(default, float) and isinstance(value, int):
            value = float(value)
        if isinstance(default, str):
            value = raw
        out[name] = value
    return out


def git_commit(short: bool = True) -> str:
    """The repository's HEAD commit, ``+dirty`` if tracked files changed; ``unknown`` outside git."""
    try:
        cmd = ["git", "rev-parse", "--short", "HEAD"] if short else ["git", "rev-parse", "HEAD"]
        rev = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def source_hash(entry: NotebookEntry) -> str:
    """Hash of the notebook's code cells (not outputs): decides whether an executed copy is stale."""
    nb = _nbformat().read(entry.path, as_version=4)
    code = "\n\0".join(c.source for c in nb.cells if c.cell_type == "code")
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def _provenance_cell(entry: NotebookEntry, used: dict[str, Any], defaults: dict[str, Any]) -> Any:
    changed = {k: v for k, v in used.items() if defaults.get(k) != v}
    rows = "\n".join(f"| `{k}` | `{v!r}` |{' **changed**' if k in changed else ''}" for k, v in used.items())
    text = (
        "```{admonition} Provenance\n:class: note\n"
        f"Notebook `notebooks/{entry.id}.ipynb` · rlvr-dynamics {__version__} · commit `{git_commit()}` · "
        f"executed {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} · "
        f"{'default parameters' if not changed else 'parameters changed: ' + ', '.join(changed)}.\n"
        f"Rerun: `rlvr-dynamics run {entry.id} -p NAME VALUE …`\n\n"
        "| parameter | value |\n|---|---|\n" + rows + "\n```"
    )
    cell = _nbformat().v4.new_markdown_cell(text)
    cell.metadata["tags"] = ["provenance"]
    return cell


def plan_run(entry: NotebookEntry, overrides: dict[str, Any] | None = None, *, store: bool = False,
             out_dir: Path | None = None) -> dict[str, Any]:
    """Validate a run of ``entry`` without executing anything (``rlvr-dynamics run --dry-run``).

    Checks what :func:`run_notebook` checks before it starts (parameter names and types, ``store`` only with
    defaults) and returns ``{"notebook", "path", "overrides", "parameters", "changed", "out_dir", "store"}``:
    ``overrides`` are the coerced values given, ``parameters`` every parameter as the run would use it,
    ``changed`` the names that differ from the defaults. Raises ValueError like ``run_notebook``.
    """
    params = coerce_parameters(entry, overrides or {})
    defaults = {k: v["default"] for k, v in notebook_parameters(entry).items()}
    changed = [k for k, v in params.items() if defaults[k] != v]
    if store and changed:
        raise ValueError("store=True (--store) refreshes the committed nbval baseline and is only allowed "
                         f"with default parameters; got overrides {params}")
    return {"notebook": entry.id, "path": entry.path, "overrides": params, "parameters": {**defaults, **params},
            "changed": changed, "out_dir": Path(out_dir or BOOK_DIR / "executed"), "store": store}


def run_notebook(entry: NotebookEntry, overrides: dict[str, Any] | None = None, *, store: bool = False,
                 out_dir: Path | None = None, progress: bool = True, timeout_s: int = 1800) -> Path:
    """Execute ``entry`` with ``overrides`` (validated); return the path of the executed copy.

    The executed copy goes to ``out_dir`` (default ``book/executed``) with a provenance cell and
    ``<id>.claims.json``. ``store=True`` refreshes the committed notebook and its stored verdicts; it is refused
    unless the parameters are the defaults. Raises NotebookError naming the failing cell.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    params = coerce_parameters(entry, overrides or {})
    defaults = {k: v["default"] for k, v in notebook_parameters(entry).items()}
    if store and any(defaults[k] != v for k, v in params.items()):
        raise ValueError("store=True (--store) refreshes the committed nbval baseline and is only allowed "
                         f"with default parameters; got overrides {params}")
    out_dir = Path(out_dir or BOOK_DIR / "executed")
    out_dir.mkdir(parents=True, exist_ok=True)
    used = {**defaults, **params}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"rlvr-{entry.id}-") as tmp:
        tmp_nb = Path(tmp) / f"{entry.id}.ipynb"
        saved_env = {k: os.environ.get(k) for k in (*NOTEBOOK_ENV, CLAIMS_DIR_ENV)}
        os.environ.update(NOTEBOOK_ENV)
        os.environ[CLAIMS_DIR_ENV] = tmp
        try:
            papermill.execute_notebook(str(entry.path), str(tmp_nb), parameters=params, kernel_name="python3",
                                       cwd=str(NOTEBOOK_DIR), progress_bar=progress, log_output=False,
                                       execution_timeout=timeout_s)
        except PapermillExecutionError as exc:
            failed = out_dir / f"{entry.id}.failed.ipynb"
            if tmp_nb.exists():
                shutil.copyfile(tmp_nb, failed)
            raise NotebookError(
                f"notebook {entry.id!r} failed in cell {exc.exec_count} ({exc.ename}: {exc.evalue}); "
                f"the partly executed notebook is at {failed}") from None
        finally:
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        claims_json = Path(tmp) / f"{entry.id}.claims.json"
        if not claims_json.exists():
            raise NotebookError(f"notebook {entry.id!r} ran but recorded no claims (its last cell must call "
                                f"claims.record({entry.id!r}, [...]))")
        recorded = {row["id"] for row in json.loads(claims_json.read_text())["claims"]}
        if recorded != set(entry.claims):
            raise NotebookError(f"notebook {entry.id!r} recorded claims {sorted(recorded)} but the registry "
                                f"lists {sorted(entry.claims)}: make them agree")
        nb = _nbformat().read(tmp_nb, as_version=4)
        runtime_s = round(time.perf_counter() - started, 1)
        if store:
            stored = copy.deepcopy(nb)
            stored.metadata.pop("papermill", None)
            stored.metadata["rlvr_dynamics"] = {"runtime_s": runtime_s}
            for cell in stored.cells:
                cell.metadata.pop("papermill", None)
                cell.metadata.pop("execution", None)
            atomic_write_text(entry.path, _nbformat().writes(stored) + "\n")
            STORED_CLAIMS_DIR.mkdir(parents=True, exist_ok=True)
            atomic_write_text(STORED_CLAIMS_DIR / f"{entry.id}.claims.json", claims_json.read_text())
        nb.metadata["rlvr_dynamics"] = {"parameters": used, "defaults": defaults, "commit": git_commit(),
                                        "version": __version__, "source_hash": source_hash(entry),
                                        "runtime_s": runtime_s}
        nb.cells.insert(1, _provenance_cell(entry, used, defaults))
        atomic_write_text(out_dir / f"{entry.id}.claims.json", claims_json.read_text())
        target = out_dir / f"{entry.id}.ipynb"
        atomic_write_text(target, _nbformat().writes(nb) + "\n")
        (out_dir / f"{entry.id}.failed.ipynb").unlink(missing_ok=True)
    return target


def copy_stored(entry: NotebookEntry, out_dir: Path) -> Path:
    """Put the committed (already executed, default-parameter) notebook into ``out_dir`` without executing it."""
    claims_json = STORED_CLAIMS_DIR / f"{entry.id}.claims.json"
    if not claims_json.exists():
        raise ValueError(f"no stored verdicts {claims_json} for {entry.id!r}: run `rlvr-dynamics run {entry.id} "
                         "--store` first")
    nb = _nbformat().read(entry.path, as_version=4)
    defaults = {k: v["default"] for k, v in notebook_parameters(entry).items()}
    nb.metadata["rlvr_dynamics"] = {"parameters": defaults, "defaults": defaults, "commit": git_commit(),
                                    "version": __version__, "source_hash": source_hash(entry), "stored": True}
    nb.cells.insert(1, _provenance_cell(entry, defaults, defaults))
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out_dir / f"{entry.id}.claims.json", claims_json.read_text())
    return atomic_write_text(out_dir / f"{entry.id}.ipynb", _nbformat().writes(nb) + "\n")


def executed_is_current(entry: NotebookEntry, out_dir: Path) -> bool:
    """True if ``out_dir`` holds an executed copy of the notebook's current source (any parameters)."""
    path = out_dir / f"{entry.id}.ipynb"
    if not path.exists() or not (out_dir / f"{entry.id}.claims.json").exists():
        return False
    meta = _nbformat().read(path, as_version=4).metadata.get("rlvr_dynamics", {})
    return meta.get("source_hash") == source_hash(entry)
