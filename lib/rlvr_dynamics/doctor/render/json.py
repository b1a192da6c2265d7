"""The JSON report of ``rlvr-dynamics fit LOG --json``: strict JSON (no NaN), keys as
:meth:`~rlvr_dynamics.doctor.report.Report.to_dict` orders them, fit statuses as the text and the page show them
(:func:`~.summary.display_report`: a noise-only curve reads no law)."""
from __future__ import annotations

import json
from typing import Any

from ..report import to_jsonable
from .summary import display_report


def to_json(report: dict[str, Any], indent: int = 1) -> str:
    """``report`` (a :meth:`~rlvr_dynamics.doctor.report.Report.to_dict`) as strict JSON: NaN/inf → null, through
    :func:`~.summary.display_report`."""
    return json.dumps(to_jsonable(display_report(report)), indent=indent, allow_nan=False, ensure_ascii=False)
