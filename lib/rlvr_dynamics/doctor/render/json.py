"""The JSON report of ``rlvr-dynamics fit LOG --json``: strict JSON (no NaN), keys as
:meth:`~rlvr_dynamics.doctor.report.Report.to_dict` orders them."""
from __future__ import annotations

import json
from typing import Any

from ..report import to_jsonable


def to_json(report: dict[str, Any], indent: int = 1) -> str:
    """``report`` (a :meth:`~rlvr_dynamics.doctor.report.Report.to_dict`) as strict JSON: NaN/inf → null."""
    return json.dumps(to_jsonable(report), indent=indent, allow_nan=False, ensure_ascii=False)
