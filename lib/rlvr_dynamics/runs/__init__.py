"""Reading finished GRPO runs, the project's or a user's: load, fit, forecast, read as an oscillator.

- :mod:`.logs`: any training log (TRL ``trainer_state.json``, CSV, JSON Lines) → :class:`RunLog`.
- :mod:`.committed`: the project's committed runs → :class:`CommittedRun` (config as ``RunConfig``, log as ``RunLog``).
- :mod:`.report`: the one fit of a run (:func:`fit_laws`), its oscillator reading and the report of
  ``rlvr-dynamics fit``.
- :mod:`.noise`: the step noise σ and the noise ceiling 1 − σ²/Var(r) printed beside every R².
- :mod:`.response_laws`: the second-order step response in every regime (overdamped, underdamped, growing, first
  order), fitted noise-aware with intervals; :mod:`.forecast`: forecasts with 80 % intervals and their calibration.
- :mod:`.diagnostics`: P1's four diagnostics and the collapse early warning (P1-C13).
- :mod:`.hyperparams`: η, μ, K_ref read from the files beside a log; :mod:`.html_report`: ``fit --html/--png``;
  :mod:`.live`: ``RunDoctor``, the same report on a run in progress.
- :mod:`.analysis`: helpers the GRPO notebooks share (implied oscillator, curves, transfer table).

Nothing here imports torch or the trainer: ``rlvr-dynamics fit`` runs with numpy, scipy and matplotlib only.
"""
from . import analysis, committed, diagnostics, forecast, logs, noise, report, response_laws
from .diagnostics import diagnose
from .noise import noise_ceiling, step_sigma
from .committed import CommittedRun, load_committed_run, load_committed_runs
from .logs import RunLog, load_log
from .report import fit_laws, fit_run, format_report, read_oscillator

__all__ = [
    "logs", "committed", "report", "analysis", "RunLog", "load_log", "CommittedRun", "load_committed_run",
    "load_committed_runs", "fit_laws", "fit_run", "format_report", "read_oscillator", "noise", "noise_ceiling",
    "step_sigma", "response_laws", "forecast", "diagnostics", "diagnose",
]
