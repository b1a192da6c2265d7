"""rlvr-dynamics: executable reproductions of two papers on RLVR/GRPO training dynamics, and tools for your runs.

Subpackages by layer (imports point one way: p1 and p2 import nothing from grpo, runs or book):

- :mod:`rlvr_dynamics.p1`: "Predictable GRPO" — the oscillator model, its SDE, the bandit, the reward laws.
- :mod:`rlvr_dynamics.p2`: "Gradient gap and step size thresholds" — gap, alignment, directions, step sizes.
- :mod:`rlvr_dynamics.grpo`: real GRPO training with TRL (tasks, tiny models, SmolLM2, configs, runner, callback).
- :mod:`rlvr_dynamics.runs`: reading finished runs (log loaders, committed runs, fit/forecast report).
- :mod:`rlvr_dynamics.book`: notebook registry and runner, claims ledger, book build, browser check.
- :mod:`rlvr_dynamics.paths`: every project path and the offline environment; :mod:`rlvr_dynamics.cli`: the CLI.
"""
__version__ = "0.1.0"
