"""The doctor's report on one run: one dataclass, whose :meth:`Report.to_dict` is the JSON of ``rlvr-dynamics fit
--json`` (keys in this order; a part that was not computed is absent, not null).

Built by :func:`rlvr_dynamics.doctor.pipeline.build_report`; rendered by :mod:`rlvr_dynamics.doctor.render` (text,
JSON, HTML).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Report:
    """What the doctor says about one run (:func:`~rlvr_dynamics.doctor.pipeline.build_report`)."""

    source: str
    """The log's path."""
    reward_column: str
    """The column read as the reward."""
    n_points: int
    """Logged rewards."""
    first_step: int
    last_step: int
    reward_bounds: tuple[float, float] | None
    """Bounds used by every fit (:func:`~rlvr_dynamics.doctor.pipeline.resolve_reward_bounds`)."""
    status: dict[str, Any] | None = None
    """What the user must act on, decided before any fit (:class:`~rlvr_dynamics.doctor.status.Status`:
    ``state``, ``step``, ``evidence``); the first key of the JSON."""
    fits: dict[str, Any] | None = None
    """P1's three-phase and single-exponential reference fits (None: not computed, ``p1_laws=False``)."""
    preferred_law: str | None = None
    delta_aic: float | None = None
    delta_bic: float | None = None
    features: dict[str, Any] | None = None
    oscillator: dict[str, Any] | None = None
    """The three-phase fit read as an oscillator (:mod:`~rlvr_dynamics.doctor.reading.oscillator`), when reliable."""
    noise: dict[str, Any] | None = None
    """σ, the plain σ, the noise ceiling and σ/range."""
    dynamics: dict[str, Any] | None = None
    """The evidence reading (:func:`~rlvr_dynamics.doctor.reading.dynamics.read_dynamics`)."""
    plateau: dict[str, Any] | None = None
    """R∞ of the law read, or None with why (absent when no law was fitted)."""
    response: dict[str, Any] | None = None
    """The second-order response laws and the reading of the preferred one."""
    forecast_law: str | None = None
    """What the forecast extends: the level since a collapse, the current level down to the floor, the recent trend
    of a falling run, else the rolling-origin weighted candidates (:mod:`~.forecast`) with the one weighted most;
    ``"none: …"`` with why when there is no forecast (a ``too short`` run: under 4 rewards no level or interval can
    be told, and ``forecast`` is empty)."""
    forecast: dict[int, float] | None = None
    """Forecast reward at each requested step (None: no step requested)."""
    forecast_interval: dict[int, list[float]] | None = None
    """80 % prediction interval at each requested step."""
    diagnostics: dict[str, Any] | None = None
    """Every detector's :meth:`~rlvr_dynamics.doctor.detectors.Detection.to_dict` (None: not run)."""
    hyperparameters: dict[str, Any] | None = None
    """η, μ, K_ref used and where they were read (``rlvr-dynamics fit`` sets it; None: not given)."""
    read_notes: list[str] | None = None
    """What reading the log did beyond reading (:attr:`~rlvr_dynamics.runs.logs.RunLog.read_notes`: the segments
    combined, gaps, dropped reward cells, inferred steps; ``rlvr-dynamics fit`` sets it, and so does
    :func:`~.pipeline.build_report` when rewards outside a declared range changed the reading; None: not given)."""
    segments: list[dict[str, Any]] | None = None
    """The sources read, oldest first (:attr:`~rlvr_dynamics.runs.logs.RunLog.segments`; None: not given)."""

    def to_dict(self) -> dict[str, Any]:
        """The report as ``fit --json`` gives it (before :func:`to_jsonable`)."""
        out: dict[str, Any] = {} if self.status is None else {"status": self.status}
        out.update({"source": self.source, "reward_column": self.reward_column,
                               "n_points": self.n_points, "first_step": self.first_step,
                               "last_step": self.last_step, "reward_bounds": self.reward_bounds})
        if self.segments is not None:
            out["segments"] = self.segments
        if self.read_notes is not None:
            out["read_notes"] = self.read_notes
        if self.fits is not None:
            out.update(fits=self.fits, preferred_law=self.preferred_law, delta_aic=self.delta_aic,
                       delta_bic=self.delta_bic, features=self.features)
            if self.oscillator is not None:
                out["oscillator"] = self.oscillator
        out.update(noise=self.noise, dynamics=self.dynamics)
        if self.plateau is not None:
            out["plateau"] = self.plateau
        out["response"] = self.response
        if self.forecast is not None:
            out.update(forecast_law=self.forecast_law, forecast=self.forecast,
                       forecast_interval=self.forecast_interval)
        if self.diagnostics is not None:
            out["diagnostics"] = self.diagnostics
        if self.hyperparameters is not None:
            out["hyperparameters"] = self.hyperparameters
        return out


def to_jsonable(obj):
    """Strict-JSON version of a report: NaN/inf → None, numpy scalars → Python, tuples → lists, keys → str."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj
