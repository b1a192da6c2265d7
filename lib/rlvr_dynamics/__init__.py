"""rlvr-dynamics: executable reproductions of two papers on RLVR/GRPO training dynamics, and tools for your runs.

Modules (one concept each):
- ``oscillator``: P1's damped-oscillator model (coefficients, regimes, thresholds, trajectories, SDE).
- ``claims``: the claims ledger every notebook ends with.
- ``notebooks``: the notebook registry and the papermill runner behind ``rlvr-dynamics run``.
"""
__version__ = "0.1.0"
