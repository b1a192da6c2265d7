"""The run doctor: what ``rlvr-dynamics fit LOG`` and the live :class:`RunDoctor` say about a GRPO run.

Laid out as its pipeline, one module (or subpackage) per stage:

load (:mod:`rlvr_dynamics.runs`: any log → ``RunLog``) → :mod:`.signals` (source column names → standard signals)
→ :mod:`.forecast` (intervals: :mod:`.conformal`) → :mod:`.reading` (P1's oscillator, read with evidence) →
:mod:`.detectors` (one module per failure mode) → :mod:`.report` (one dataclass, :class:`Report`) → :mod:`.render`
(text, JSON, HTML).
The status every renderer leads with is :mod:`.status`: the reward's collapse events
(:mod:`.detectors.collapse`), :mod:`.divergence`, and the precursors' crossings (:mod:`.precursors`) combined into
the collapse warning (:mod:`.warning_rule`), which warns and never sets a failure status.
:mod:`.pipeline` runs the stages on one log (:func:`build_report`, :func:`fit_run`); :mod:`.live` runs them on a
growing prefix; :mod:`.cli` is ``rlvr-dynamics fit``.

Nothing here imports torch or the trainer: the doctor runs with numpy, scipy and matplotlib only.
"""
import importlib

_API = {"DETECTORS": ".detectors", "Detection": ".detectors", "diagnose": ".detectors", "Forecast": ".forecast",
        "RunDoctor": ".live", "build_report": ".pipeline", "fit_laws": ".pipeline", "fit_run": ".pipeline",
        "resolve_reward_bounds": ".pipeline", "read_dynamics": ".reading", "read_oscillator": ".reading",
        "format_report": ".render.text", "Report": ".report", "to_jsonable": ".report"}
"""The package's API, imported on first use (``rlvr-dynamics fit`` starts without the stages it does not run)."""

__all__ = list(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(_API[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
