"""Live run doctor: the fit, forecast and diagnostics of ``rlvr-dynamics fit``, updated while a run trains.

Trainer-agnostic (no torch, no transformers): feed it each logged step's metrics and it returns namespaced
``dynamics/*`` scalars to log through the trainer's own metric path (so they reach W&B, TensorBoard and trackio like
TRL's ``clip_ratio/*``), plus whether training should stop (opt-in, on dynamical instability).

Usage::

    from rlvr_dynamics.runs.live import RunDoctor

    doctor = RunDoctor(every=10, refresh_interval=1, stop_on_instability=True)
    for step, metrics in training_loop():                # metrics: {"reward": 0.4, "entropy": 0.6, ...}
        extra = doctor.update(step, metrics)             # {} except every ``every`` steps
        logger.log({**metrics, **extra}, step=step)
        if doctor.should_stop:
            break

In TRL, pass it to :class:`rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` (``doctor=``): the callback
feeds it every step from ``on_step_end`` and logs its outputs through the trainer's metrics, so they reach the
reporting integrations, and stops training when :attr:`should_stop` is set.

Args:
    every: refit and rediagnose every this many logged steps (default 10; each update costs a few ms).
    refresh_interval: K_ref of the run (steps_per_generation × num_iterations); enables the stability margin.
    reward_column: metric name of the training reward (default: the first of ``REWARD_COLUMNS`` seen).
    stop_on_instability: set :attr:`should_stop` when ``dynamical_instability`` fires (default False).
    min_points: no fit before this many logged rewards (default 12).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import diagnostics as diag
from . import response_laws as rl
from .logs import REWARD_COLUMNS, RunLog
from .noise import noise_ceiling


class RunDoctor:
    """Accumulates a run's metrics and reports its dynamics every ``every`` steps (module docstring)."""

    def __init__(self, *, every: int = 10, refresh_interval: int | None = None, reward_column: str | None = None,
                 stop_on_instability: bool = False, min_points: int = 12) -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an integer ≥ 1, got {every!r}")
        if refresh_interval is not None and (not isinstance(refresh_interval, int) or refresh_interval < 1):
            raise ValueError(f"refresh_interval must be an integer ≥ 1, got {refresh_interval!r}")
        self.every, self.refresh_interval = every, refresh_interval
        self.reward_column, self.stop_on_instability, self.min_points = reward_column, stop_on_instability, min_points
        self._rows: dict[int, dict[str, float]] = {}
        self._since = 0
        self.should_stop = False
        """True once ``dynamical_instability`` has fired and ``stop_on_instability`` is set."""
        self.fired: dict[str, int] = {}
        """Detector → step at which it first fired."""

    def update(self, step: int, metrics: dict[str, Any]) -> dict[str, float]:
        """Record ``metrics`` at ``step``; every ``every`` calls return ``dynamics/*`` scalars (else ``{}``)."""
        self.record(step, metrics)
        self._since += 1
        if self._since < self.every:
            return {}
        self._since = 0
        return self.report()

    def record(self, step: int, metrics: dict[str, Any]) -> None:
        """Record ``metrics`` at ``step`` without fitting (replaying a resumed run's history); non-numeric and
        non-finite values are ignored."""
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise ValueError(f"step must be an integer, got {step!r}")
        row = self._rows.setdefault(int(step), {})
        for k, v in metrics.items():
            try:
                x = float(v)
            except (TypeError, ValueError):
                continue
            if math.isfinite(x):
                row[k] = x
        if self.reward_column is None:
            self.reward_column = next((c for c in REWARD_COLUMNS if c in row), None)

    def log(self) -> RunLog | None:
        """The metrics so far as a :class:`~.logs.RunLog` (None before a reward has been seen)."""
        if self.reward_column is None:
            return None
        steps = np.array(sorted(self._rows), dtype=np.int64)
        names = sorted({k for r in self._rows.values() for k in r})
        series = {n: np.array([self._rows[s].get(n, math.nan) for s in steps]) for n in names}
        if self.reward_column not in series:
            return None
        return RunLog("live", steps, series, self.reward_column)

    def report(self) -> dict[str, float]:
        """Fit, forecast and diagnose now; the ``dynamics/*`` scalars (NaN-free)."""
        log = self.log()
        if log is None:
            return {}
        steps, reward = log.reward_curve()
        if reward.size < self.min_points:
            return {}
        bounds = (0.0, 1.0) if reward.min() >= 0 and reward.max() <= 1 else None
        fits = rl.fit_response_laws(steps, reward, reward_bounds=bounds)
        out: dict[str, float] = {"dynamics/noise_ceiling": noise_ceiling(reward)}
        margin = None
        pref = fits["preferred"]
        if pref is not None:
            fit = fits[pref]
            out["dynamics/plateau"] = fit.params.get("r_inf", math.nan)
            out["dynamics/damping_ratio"] = fit.damping_ratio
            out["dynamics/r2"] = fit.r2
            out["dynamics/law"] = float(rl.LAW_NAMES.index(pref))
            out["dynamics/reliable"] = float(fit.reliable)
            if self.refresh_interval is not None:
                margin = rl.stability_margin(fit.damping_over_stiffness, fit.damping_over_stiffness_sd,
                                             self.refresh_interval)
                m = margin["margin"]
                out["dynamics/stability_margin"] = m if isinstance(m, float) else math.inf
        dets = diag.diagnose(log, response=fits, margin=margin, reward_bounds=bounds)
        for name, d in dets.items():
            out[f"dynamics/flag/{name}"] = float(d.fired)
            if d.fired and name not in self.fired:
                self.fired[name] = int(d.step)
        if self.stop_on_instability and dets["dynamical_instability"].fired:
            self.should_stop = True
        return {k: float(v) for k, v in out.items() if v is not None and math.isfinite(float(v))}
