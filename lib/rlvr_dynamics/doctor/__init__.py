"""The run doctor: what ``rlvr-dynamics fit LOG`` and the live :class:`RunDoctor` say about a GRPO run.

Laid out as its pipeline, one module (or subpackage) per stage:

load (:mod:`rlvr_dynamics.runs`: any log → ``RunLog``) → :mod:`.signals` (source column names → standard signals)
→ :mod:`.forecast` → :mod:`.reading` (P1's oscillator, read with evidence) → :mod:`.detectors` (one module per
failure mode) → :mod:`.report` (one dataclass, :class:`Report`) → :mod:`.render` (text, JSON, HTML).
:mod:`.pipeline` runs the stages on one log (:func:`build_report`, :func:`fit_run`); :mod:`.live` runs them on a
growing prefix; :mod:`.cli` is ``rlvr-dynamics fit``.

Nothing here imports torch or the trainer: the doctor runs with numpy, scipy and matplotlib only.
"""
from .detectors import DETECTORS, Detection, diagnose
from .forecast import Forecast
from .live import RunDoctor
from .pipeline import build_report, fit_laws, fit_run, resolve_reward_bounds
from .reading import read_dynamics, read_oscillator
from .render.text import format_report
from .report import Report, to_jsonable

__all__ = ["DETECTORS", "Detection", "diagnose", "Forecast", "RunDoctor", "build_report", "fit_laws",
           "fit_run", "resolve_reward_bounds", "read_dynamics", "read_oscillator", "format_report", "Report",
           "to_jsonable"]
