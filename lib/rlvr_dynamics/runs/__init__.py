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
from . import analysis, committed, logs, noise
from .noise import noise_ceiling, step_sigma
from .committed import CommittedRun, load_committed_run, load_committed_runs
from .logs import RunLog, load_log

__all__ = [
    "logs", "committed", "analysis", "RunLog", "load_log", "CommittedRun", "load_committed_run",
    "load_committed_runs", "noise", "noise_ceiling", "step_sigma",
]
