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
    min_points: no report before this many logged rewards (default :data:`~.diagnostics.SIGMA_FIRST` = 8, the
        fewest from which a detector can fire: its step noise needs 8 values). The first report comes at the first
        ``update`` where both hold: ``every`` calls since the last report, and ``min_points`` rewards logged — so
        with a log written every 5 steps it comes at step 40, whatever ``every``.
    reward_bounds: declared (lo, hi) of the reward; default: (0, 1) while every reward so far lies in [0, 1].

Agreement with the full log: the detectors are causal (:mod:`.diagnostics`), so the events a report finds with step
≤ its own step are exactly the full log's events up to that step; each event is recorded once, with the step it
happened (``step``) and the step of the report that found it (``reported_at``), in :attr:`events`. The exceptions
are instability (c) and (d), readings of a fit of the whole prefix: live, they are dated at the report that makes
them. ``dynamics/flag/<detector>`` is 1 in a report when that report found a new event, else 0.
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
                 stop_on_instability: bool = False, min_points: int | None = None,
                 reward_bounds: tuple[float, float] | None = None) -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an integer ≥ 1, got {every!r}")
        if refresh_interval is not None and (not isinstance(refresh_interval, int) or refresh_interval < 1):
            raise ValueError(f"refresh_interval must be an integer ≥ 1, got {refresh_interval!r}")
        if min_points is None:
            min_points = diag.SIGMA_FIRST
        if not isinstance(min_points, int) or min_points < 2:
            raise ValueError(f"min_points must be an integer ≥ 2, got {min_points!r}")
        if reward_bounds is not None and not (len(reward_bounds) == 2 and reward_bounds[0] < reward_bounds[1]):
            raise ValueError(f"reward_bounds must be (lo, hi) with lo < hi, got {reward_bounds!r}")
        self.every, self.refresh_interval = every, refresh_interval
        self.reward_column, self.stop_on_instability, self.min_points = reward_column, stop_on_instability, min_points
        self.reward_bounds = reward_bounds
        self._rows: dict[int, dict[str, float]] = {}
        self._since = 0
        self.should_stop = False
        """True once ``dynamical_instability`` has fired and ``stop_on_instability`` is set."""
        self.fired: dict[str, int] = {}
        """Detector → step of its first event."""
        self.events: dict[str, list[dict[str, Any]]] = {name: [] for name in diag.DETECTORS}
        """Detector → every event found so far: the event's numbers plus ``reported_at`` (the report's step)."""

    def update(self, step: int, metrics: dict[str, Any]) -> dict[str, float]:
        """Record ``metrics`` at ``step``; return ``dynamics/*`` scalars when a report is due (module docstring),
        else ``{}``."""
        self.record(step, metrics)
        self._since += 1
        if self._since < self.every or self._n_rewards() < self.min_points:
            return {}
        self._since = 0
        return self.report()

    def _n_rewards(self) -> int:
        col = self.reward_column
        return 0 if col is None else sum(1 for r in self._rows.values() if col in r)

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
        if reward.size < max(self.min_points, 2):
            return {}
        bounds = self.reward_bounds
        fit_bounds = bounds or ((0.0, 1.0) if reward.min() >= 0 and reward.max() <= 1 else None)
        fits = rl.fit_response_laws(steps, reward, reward_bounds=fit_bounds)
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
        now = int(log.steps[-1])
        for name, d in dets.items():
            new = self._new_events(name, d, now)
            out[f"dynamics/flag/{name}"] = float(bool(new))
            if self.events[name] and name not in self.fired:
                self.fired[name] = int(self.events[name][0]["step"])
        if self.stop_on_instability and self.events["dynamical_instability"]:
            self.should_stop = True
        return {k: float(v) for k, v in out.items() if v is not None and math.isfinite(float(v))}

    def _new_events(self, name: str, det: diag.Detection, now: int) -> list[dict[str, Any]]:
        """Events of ``det`` not recorded yet (same step and reason), stamped ``reported_at = now``."""
        seen = {_event_key(e) for e in self.events[name]}
        new = [{**e, "reported_at": now} for e in det.events if _event_key(e) not in seen]
        self.events[name].extend(new)
        self.events[name].sort(key=lambda e: e["step"])
        return new


def _event_key(event: dict[str, Any]) -> tuple:
    """Identity of an event: (step, reason, kind); a whole-prefix reading ((c), (d)) counts once per run."""
    reason = str(event.get("reason", ""))
    if reason.startswith(("(c)", "(d)")):
        return (reason[:3],)
    return (event["step"], event.get("reason"), event.get("kind"))
