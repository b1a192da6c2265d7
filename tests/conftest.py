"""Test-session setup: ``bench/`` on ``sys.path``, so that tests import the doctor's judge (``doctor_eval``: the
corpus and the benchmark, which live outside the product package) as ``bench/bench_doctor.py`` does."""
from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

try:    # property tests draw the same examples on every run, so a red CI is a regression, never a new draw
    from hypothesis import settings as _hypothesis_settings
except ImportError:        # pragma: no cover - hypothesis is in the test extra
    pass
else:
    _hypothesis_settings.register_profile("deterministic", derandomize=True, deadline=None)
    _hypothesis_settings.load_profile("deterministic")
