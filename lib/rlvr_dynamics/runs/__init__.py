"""Reading GRPO training logs, the project's or a user's: any log format → :class:`RunLog`, committed runs.

- :mod:`.logs`: any training log (TRL ``trainer_state.json``, CSV, JSON Lines, verl console, MLflow, TensorBoard)
  → :class:`RunLog`;
- :mod:`.committed`: the project's committed runs → :class:`CommittedRun` (config as ``RunConfig``, log as
  ``RunLog``);
- :mod:`.hyperparams`: η, μ, K_ref read from the files beside a log;
- :mod:`.noise`: the step noise σ and the noise ceiling 1 − σ²/Var(r) of a logged series;
- :mod:`.analysis`: helpers the GRPO notebooks share (implied oscillator, curves, transfer table).

Fitting, forecasting, reading and diagnosing a run is the run doctor's: :mod:`rlvr_dynamics.doctor`.
Nothing here imports torch or the trainer.
"""
import importlib

_API = {"noise_ceiling": ".noise", "step_sigma": ".noise", "CommittedRun": ".committed",
        "load_committed_run": ".committed", "load_committed_runs": ".committed", "RunLog": ".logs",
        "load_log": ".logs"}
"""The package's API, imported on first use: ``rlvr-dynamics fit`` reads a log without importing the committed-run
and notebook helpers (and the trainer's config and tasks they need), which cost a tenth of its start-up."""
_SUBMODULES = ("logs", "committed", "analysis", "noise", "hyperparams")

__all__ = ["logs", "committed", "analysis", "RunLog", "load_log", "CommittedRun", "load_committed_run",
           "load_committed_runs", "noise", "noise_ceiling", "step_sigma"]


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(_API[name], __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
