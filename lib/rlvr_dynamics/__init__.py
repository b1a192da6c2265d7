"""rlvr-dynamics: executable reproductions of two papers on RLVR/GRPO training dynamics, and tools for your runs.

Where each kind of code lives (imports point down this list, never up: p1 and p2 import nothing from the layers
after them, ``verdicts`` nothing from ``book``):

- :mod:`rlvr_dynamics.p1`: "Predictable GRPO" — the oscillator model, its SDE, the bandit, the reward laws.
- :mod:`rlvr_dynamics.p2`: "Gradient gap and step size thresholds" — gap, alignment, directions, step sizes.
- :mod:`rlvr_dynamics.grpo`: real GRPO training with TRL (tasks, tiny models, SmolLM2, configs, runner, callback).
- :mod:`rlvr_dynamics.runs`: reading runs (log formats and segments, committed runs, hyperparameters, noise).
- :mod:`rlvr_dynamics.doctor`: the run doctor (status, detectors, precursors, the reading, forecast, live callback,
  the ``fit`` report and its renderers).
- :mod:`rlvr_dynamics.verdicts`: where each claim is decided — the criteria ledger (``book/claims.yml``), the
  headline rule, and the claim checks that read GRPO runs.
- :mod:`rlvr_dynamics.book`: notebook registry and runner, the notebooks' claim rows, book build, pages, browser
  check (it imports ``verdicts``; nothing below imports it).
- :mod:`rlvr_dynamics.paths`: every project path and the offline environment; :mod:`rlvr_dynamics.cli`: the CLI.

Outside the package: ``notebooks/`` (one thin notebook per figure or claim), ``bench/`` (timings and the doctor's
benchmark, ``bench/doctor_eval``), ``tests/`` (mirrors the package), ``tools/`` (ledger extraction, GPU scripts).
"""
__version__ = "0.1.0"
