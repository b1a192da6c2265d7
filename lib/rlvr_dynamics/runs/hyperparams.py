"""The hyper-parameters P1's oscillator reading needs — learning rate η, momentum μ (Adam β1) and the refresh
interval K_ref — and the group size G (``num_generations``, the completions per prompt), read from the files a
trainer leaves beside its log, when they are there.

Looked for beside the log that was read (:func:`hyperparameters_beside`: a TRL ``output_dir`` with checkpoints only is
read from ``checkpoint-N/trainer_state.json``, whose ``training_args.bin`` sits beside it), from its folder up to two
levels above it (and, in each, TensorBoard's ``runs/*/`` folders); then beside the path given:

- this project's run folder: ``config.json`` (``config.learning_rate``, ``config.momentum``, ``refresh_interval``);
- TRL / transformers:
  - ``training_args.bin``, what ``Trainer`` saves in every ``output_dir`` and checkpoint: a ``torch.save`` zip
    archive holding a pickled ``GRPOConfig``. It is read **without torch and without running any code from the
    file**: the pickle is replayed by a restricted unpickler that builds every object as a plain attribute record
    (no class from the file is ever imported), so only the stored field values come out;
  - the ``args`` text that transformers' ``TensorBoardCallback`` writes into the event files (the same
    ``TrainingArguments`` as JSON);
  - ``training_args.json``, ``args.json`` or ``trainer_config.json`` (a JSON dump of the ``GRPOConfig``).

  From any of them: ``learning_rate``, ``adam_beta1`` (default 0.9 when absent), ``num_generations`` (G), and
  K_ref = ``steps_per_generation`` × ``num_iterations`` / ``gradient_accumulation_steps`` (TRL generates once per
  ``steps_per_generation × num_iterations`` micro-batches and steps the optimizer once per
  ``gradient_accumulation_steps`` of them; ``steps_per_generation`` defaults to ``gradient_accumulation_steps``, so
  TRL's defaults give K_ref = ``num_iterations``), rounded to an integer ≥ 1;
- verl (Hydra): ``.hydra/config.yaml`` or ``config.yaml``: ``actor_rollout_ref.actor.optim.lr``,
  ``…optim.betas[0]`` (default 0.9), G = ``actor_rollout_ref.rollout.n``, K_ref = ``ppo_epochs`` × ``data.train_batch_size`` /
  ``actor_rollout_ref.actor.ppo_mini_batch_size`` (optimizer steps between two rollouts).

Flags given on the command line win; :func:`merge` says which came from where and warns when only part of what the
reading needs is known.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NAMES = ("learning_rate", "momentum", "refresh_interval", "num_generations")


def _get(d: Any, dotted: str):
    for part in dotted.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def _num(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


def _int(x) -> int | None:
    v = _num(x)
    return int(v) if v is not None and v == int(v) and v >= 1 else None


def _from_project(path: Path) -> dict[str, Any] | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    cfg = data.get("config") if isinstance(data, dict) else None
    if not isinstance(cfg, dict) or "learning_rate" not in cfg:
        return None
    return {"learning_rate": _num(cfg.get("learning_rate")), "momentum": _num(cfg.get("momentum")),
            "refresh_interval": int(data["refresh_interval"]) if _num(data.get("refresh_interval")) else None,
            "num_generations": _int(cfg.get("num_generations"))}


def trl_refresh_interval(cfg: dict[str, Any]) -> int:
    """K_ref of a TRL ``GRPOConfig`` (as a dict): steps_per_generation × num_iterations / gradient_accumulation_steps,
    rounded, at least 1 (module docstring)."""
    ga = _num(cfg.get("gradient_accumulation_steps")) or 1
    spg = _num(cfg.get("steps_per_generation")) or ga
    its = _num(cfg.get("num_iterations")) or 1
    return max(1, int(round(spg * its / ga)))


def _from_trl_dict(cfg: Any) -> dict[str, Any] | None:
    if not isinstance(cfg, dict) or "learning_rate" not in cfg:
        return None
    return {"learning_rate": _num(cfg.get("learning_rate")), "momentum": _num(cfg.get("adam_beta1", 0.9)),
            "refresh_interval": trl_refresh_interval(cfg), "num_generations": _int(cfg.get("num_generations"))}


def _from_trl(path: Path) -> dict[str, Any] | None:
    return _from_trl_dict(json.loads(path.read_text(encoding="utf-8")))


class _Record:
    """What the restricted unpickler builds for any object of the file: its constructor arguments and its
    attributes (a subclass per class name of the file, made here; nothing of the file is imported)."""

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj.args, obj.state = args, {}
        return obj

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __setstate__(self, state) -> None:
        if isinstance(state, tuple) and len(state) == 2:     # (dict, slots)
            state = {**(state[0] or {}), **(state[1] or {})}
        if isinstance(state, dict):
            self.state.update(state)


def _plain(x: Any, depth: int = 0) -> Any:
    """A record's value as plain Python: enums (records built from one argument) become that argument."""
    if depth > 20:
        return None
    if isinstance(x, _Record):
        if x.state:
            return {str(k): _plain(v, depth + 1) for k, v in x.state.items()}
        return _plain(x.args[0], depth + 1) if len(x.args) == 1 else None
    if isinstance(x, dict):
        return {str(k): _plain(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v, depth + 1) for v in x]
    return x


def read_training_args_bin(path: str | Path) -> dict[str, Any]:
    """The fields of the ``TrainingArguments``/``GRPOConfig`` in a ``training_args.bin`` (module docstring), without
    torch and without importing or calling anything named by the file. ValueError when it is not such a file."""
    import io
    import pickle
    import zipfile

    path = Path(path)
    try:
        with zipfile.ZipFile(path) as z:
            name = next((n for n in z.namelist() if n.endswith("data.pkl")), None)
            if name is None:
                raise ValueError(f"{path}: a torch.save archive without data.pkl")
            data = z.read(name)
    except zipfile.BadZipFile:
        data = path.read_bytes()          # legacy (non-zip) torch.save: a plain pickle after a few magic records

    records: dict[str, type] = {}

    class Restricted(pickle.Unpickler):
        def find_class(self, module, qualname):   # never import: every class becomes a record type
            if (module, qualname) == ("copyreg", "_reconstructor"):
                return lambda cls, base, state=None: cls()
            if (module, qualname) == ("builtins", "object"):
                return object
            key = f"{module}.{qualname}"
            if key not in records:
                records[key] = type(qualname.replace(".", "_"), (_Record,), {"qualname": key})
            return records[key]

        def persistent_load(self, pid):          # tensor storages: not needed for the arguments
            return None

    try:
        obj = Restricted(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001 - any malformed pickle is the file's problem
        raise ValueError(f"{path}: not a readable training_args.bin ({type(exc).__name__}: {exc})") from None
    out = _plain(obj)
    if not isinstance(out, dict):
        raise ValueError(f"{path}: training_args.bin does not hold an arguments object")
    return out


def _from_trl_bin(path: Path) -> dict[str, Any] | None:
    return _from_trl_dict(read_training_args_bin(path))


def _event_files(folder: Path) -> list[Path]:
    """TensorBoard event files in ``folder`` and in its ``runs/*/`` sub-folders (transformers' default), newest
    last."""
    files = [p for p in folder.glob("*tfevents*") if p.is_file()]
    files += [p for p in folder.glob("runs/*/*tfevents*") if p.is_file()]
    return sorted(files, key=lambda p: p.stat().st_mtime)


def _from_tfevents(path: Path) -> dict[str, Any] | None:
    from ._log_formats import tfevents_texts

    texts = tfevents_texts(path)
    for tag in ("args/text_summary", "args"):
        if tag in texts:
            try:
                return _from_trl_dict(json.loads(texts[tag]))
            except json.JSONDecodeError:
                return None
    return None


def _from_verl(path: Path) -> dict[str, Any] | None:
    import yaml

    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    actor = _get(cfg, "actor_rollout_ref.actor")
    if not isinstance(actor, dict):
        return None
    betas = _get(actor, "optim.betas") or [0.9]
    out = {"learning_rate": _num(_get(actor, "optim.lr")), "momentum": _num(betas[0]) if betas else None,
           "refresh_interval": None, "num_generations": _int(_get(cfg, "actor_rollout_ref.rollout.n"))}
    batch, mini, epochs = (_num(_get(cfg, "data.train_batch_size")), _num(actor.get("ppo_mini_batch_size")),
                           _num(actor.get("ppo_epochs")) or 1)
    if batch and mini:
        out["refresh_interval"] = max(1, int(round(epochs * batch / mini)))
    return out


READERS = (("config.json", _from_project), ("training_args.bin", _from_trl_bin), ("training_args.json", _from_trl),
           ("args.json", _from_trl), ("trainer_config.json", _from_trl), (".hydra/config.yaml", _from_verl),
           ("config.yaml", _from_verl))
"""File name → reader, tried in this order in each folder; then the TensorBoard ``args`` text of the folder's
event files (:func:`_event_files`)."""


def find_hyperparameters(log_path: str | Path, *, levels: int = 3) -> dict[str, Any]:
    """``{"learning_rate", "momentum", "refresh_interval", "num_generations", "source"}`` from the first readable
    file of :data:`READERS` beside ``log_path`` (or up to ``levels − 1`` folders above); values None when not found;
    ``source`` None when no file was found. Unreadable files are skipped (this is a convenience, never an error)."""
    p = Path(log_path)
    folder = p if p.is_dir() else p.parent
    for d in (folder, folder.parent, folder.parent.parent)[:levels]:
        for name, reader in READERS:
            f = d / name
            if not f.is_file():
                continue
            try:
                found = reader(f)
            except Exception:   # noqa: BLE001 - a malformed side file must not break reading the log
                continue
            if found:
                return {**found, "source": str(f)}
        for f in reversed(_event_files(d)):
            try:
                found = _from_tfevents(f)
            except Exception:   # noqa: BLE001 - same: never break reading the log
                continue
            if found:
                return {**found, "source": f"{f} (TensorBoard 'args' text)"}
    return {"learning_rate": None, "momentum": None, "refresh_interval": None, "num_generations": None,
            "source": None}


def hyperparameters_beside(source: str | Path, given: str | Path | None = None) -> dict[str, Any]:
    """:func:`find_hyperparameters` for the log that was read (``source``, e.g. ``RunLog.source``:
    ``out/checkpoint-6/trainer_state.json`` or ``out/runs/<date>``) of the path the user gave (``given``, e.g.
    ``out``): in the folder given itself first (a TRL ``output_dir``'s own ``training_args.bin``), then beside the
    log read and up to two folders above it (a checkpoints-only ``output_dir``: ``checkpoint-N/training_args.bin``),
    then above the path given."""
    tries = [(source, 3)]
    if given is not None and Path(given) != Path(source):
        tries = ([(given, 1)] if Path(given).is_dir() else []) + tries + [(given, 3)]
    for path, levels in tries:
        found = find_hyperparameters(path, levels=levels)
        if found["source"] is not None:
            return found
    return found


def merge(flags: dict[str, Any], found: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Flags win over found values. Returns (values, notes): where each value came from, and a warning when the
    oscillator reading is only partly specified (K_ref gives the stability margin; μ is needed for ηK)."""
    values, notes = {}, []
    for name in NAMES:
        if flags.get(name) is not None:
            values[name] = flags[name]
        elif found.get(name) is not None:
            values[name] = found[name]
            notes.append(f"{name} = {found[name]:g} read from {found['source']}")
        else:
            values[name] = None
    if values["refresh_interval"] is None:
        notes.append("warning: no refresh interval K_ref (pass --refresh-interval): the stability margin is not "
                     "reported")
    elif values["momentum"] is None:
        notes.append("warning: no momentum μ (pass --momentum): the stability margin is reported, the curvature ηK "
                     "is not")
    return values, notes


def logged_learning_rate(log, step: int | None = None) -> dict[str, Any] | None:
    """η as the run logged it: the value of its learning-rate column (the first of
    ``DIAGNOSTIC_COLUMNS["learning_rate"]`` with a finite value: TRL's ``learning_rate``, verl's ``actor/lr``, …) at
    the last logged row at or before ``step`` (default: the last row; the first logged value when ``step`` comes
    before it), and the schedule's range over the run.

    Returns ``{"value", "step", "column", "min", "max"}``, or None when the log has no such column. ValueError
    naming the file, the column, the step and the value for a negative learning rate."""
    import numpy as np

    from .logs import DIAGNOSTIC_COLUMNS

    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, np.integer))):
        raise ValueError(f"step must be an integer, got {step!r}")
    column = next((c for c in DIAGNOSTIC_COLUMNS["learning_rate"]
                   if c in log.series and np.isfinite(log.series[c]).any()), None)
    if column is None:
        return None
    values = np.asarray(log.series[column], dtype=float)
    ok = np.flatnonzero(np.isfinite(values))
    negative = ok[values[ok] < 0]
    if negative.size:
        i = int(negative[0])
        raise ValueError(f"{log.source}: column {column!r} at step {int(log.steps[i])}: learning rate "
                         f"{float(values[i]):g} is negative")
    before = ok[log.steps[ok] <= step] if step is not None else ok
    i = int(before[-1]) if before.size else int(ok[0])
    return {"value": float(values[i]), "step": int(log.steps[i]), "column": column,
            "min": float(values[ok].min()), "max": float(values[ok].max())}


def schedule_range(low: float, high: float) -> str:
    """``constant over the run`` or ``the schedule ran 0.0003–0.01``."""
    return "constant over the run" if low == high else f"the schedule ran {low:g}–{high:g}"


def with_logged_learning_rate(values: dict[str, Any], notes: list[str], logged: dict[str, Any] | None,
                              given: bool = False) -> tuple[dict[str, Any], list[str]]:
    """η from the log where it logs one (:func:`logged_learning_rate`), else the configured value of
    :func:`merge`'s ``values``; says which: ``learning_rate_source`` is ``"logged"``, ``"configured"``, ``"given"``
    (``given``: a flag set it, and it wins) or None, with the logged step, column and range
    (``learning_rate_step``, ``learning_rate_column``, ``learning_rate_range``) and the configured value beside a
    logged one (``learning_rate_configured``). The notes' ``learning_rate = … read from …`` line says the same."""
    values, notes = dict(values), list(notes)
    configured = values.get("learning_rate")
    note = next((n for n in notes if n.startswith("learning_rate = ")), None)
    if given:
        values["learning_rate_source"] = "given"
    elif logged is not None:
        values.update(learning_rate=logged["value"], learning_rate_source="logged", learning_rate_step=logged["step"],
                      learning_rate_column=logged["column"], learning_rate_range=[logged["min"], logged["max"]],
                      learning_rate_configured=configured)
        conf = f"; configured {configured:g} in {note.split(' read from ', 1)[1]}" if note and configured else ""
        line = (f"learning_rate = {logged['value']:g} read from the log's {logged['column']!r} column at step "
                f"{logged['step']} ({schedule_range(logged['min'], logged['max'])}{conf})")
        notes = [line if n is note else n for n in notes] if note else [line] + notes
    else:
        values["learning_rate_source"] = "configured" if configured is not None else None
    return values, notes
