"""Reading finished GRPO runs, the project's or a user's: load, fit, forecast, read as an oscillator.

- :mod:`.logs`: any training log (TRL ``trainer_state.json``, CSV, JSON Lines) → :class:`RunLog`.
- :mod:`.committed`: the project's committed runs → :class:`CommittedRun` (config as ``RunConfig``, log as ``RunLog``).
- :mod:`.report`: the one fit of a run (:func:`fit_laws`), its oscillator reading and the report of
  ``rlvr-dynamics fit``.
- :mod:`.analysis`: helpers the GRPO notebooks share (noise ceiling, implied oscillator, curves, transfer table).

Nothing here imports torch or the trainer: ``rlvr-dynamics fit`` runs with numpy, scipy and matplotlib only.
"""
from . import analysis, committed, logs, report
from .analysis import noise_ceiling, step_noise
from .committed import CommittedRun, load_committed_run, load_committed_runs
from .logs import RunLog, load_log
from .report import fit_laws, fit_run, format_report, read_oscillator

__all__ = [
    "logs", "committed", "report", "analysis", "RunLog", "load_log", "CommittedRun", "load_committed_run",
    "load_committed_runs", "fit_laws", "fit_run", "format_report", "read_oscillator", "noise_ceiling", "step_noise",
]
