"""The hyper-parameters P1's oscillator reading needs — learning rate η, momentum μ (Adam β1) and the refresh
interval K_ref — read from the files a trainer leaves beside its log, when they are there.

Looked for, from the log's folder up to two levels above it:

- this project's run folder: ``config.json`` (``config.learning_rate``, ``config.momentum``, ``refresh_interval``);
- TRL / transformers: ``training_args.json``, ``args.json`` or ``trainer_config.json`` (a JSON dump of the
  ``GRPOConfig``): ``learning_rate``, ``adam_beta1`` (default 0.9 when absent), K_ref = ``steps_per_generation``
  (default ``gradient_accumulation_steps``, then 1) × ``num_iterations`` (default 1). TRL's own
  ``training_args.bin`` is a torch pickle and is not read (no torch here);
- verl (Hydra): ``.hydra/config.yaml`` or ``config.yaml``: ``actor_rollout_ref.actor.optim.lr``,
  ``…optim.betas[0]`` (default 0.9), K_ref = ``ppo_epochs`` × ``data.train_batch_size`` /
  ``actor_rollout_ref.actor.ppo_mini_batch_size`` (optimizer steps between two rollouts).

Flags given on the command line win; :func:`merge` says which came from where and warns when only part of what the
reading needs is known.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NAMES = ("learning_rate", "momentum", "refresh_interval")


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


def _from_project(path: Path) -> dict[str, Any] | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    cfg = data.get("config") if isinstance(data, dict) else None
    if not isinstance(cfg, dict) or "learning_rate" not in cfg:
        return None
    return {"learning_rate": _num(cfg.get("learning_rate")), "momentum": _num(cfg.get("momentum")),
            "refresh_interval": int(data["refresh_interval"]) if _num(data.get("refresh_interval")) else None}


def _from_trl(path: Path) -> dict[str, Any] | None:
    cfg = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(cfg, dict) or "learning_rate" not in cfg:
        return None
    spg = _num(cfg.get("steps_per_generation")) or _num(cfg.get("gradient_accumulation_steps")) or 1
    its = _num(cfg.get("num_iterations")) or 1
    return {"learning_rate": _num(cfg.get("learning_rate")), "momentum": _num(cfg.get("adam_beta1", 0.9)),
            "refresh_interval": int(spg * its)}


def _from_verl(path: Path) -> dict[str, Any] | None:
    import yaml

    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    actor = _get(cfg, "actor_rollout_ref.actor")
    if not isinstance(actor, dict):
        return None
    betas = _get(actor, "optim.betas") or [0.9]
    out = {"learning_rate": _num(_get(actor, "optim.lr")), "momentum": _num(betas[0]) if betas else None,
           "refresh_interval": None}
    batch, mini, epochs = (_num(_get(cfg, "data.train_batch_size")), _num(actor.get("ppo_mini_batch_size")),
                           _num(actor.get("ppo_epochs")) or 1)
    if batch and mini:
        out["refresh_interval"] = max(1, int(round(epochs * batch / mini)))
    return out


READERS = (("config.json", _from_project), ("training_args.json", _from_trl), ("args.json", _from_trl),
           ("trainer_config.json", _from_trl), (".hydra/config.yaml", _from_verl), ("config.yaml", _from_verl))


def find_hyperparameters(log_path: str | Path) -> dict[str, Any]:
    """``{"learning_rate", "momentum", "refresh_interval", "source"}`` from the first readable file of
    :data:`READERS` beside ``log_path`` (or up to two folders above); values None when not found; ``source`` None
    when no file was found. Unreadable files are skipped (this is a convenience, never an error)."""
    p = Path(log_path)
    folder = p if p.is_dir() else p.parent
    for d in (folder, folder.parent, folder.parent.parent):
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
    return {"learning_rate": None, "momentum": None, "refresh_interval": None, "source": None}


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
