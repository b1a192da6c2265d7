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


# ------------------------------------------------------------------------------------------------ garbage collector
_HEAVY = frozenset({"numpy", "scipy", "matplotlib", "torch", "transformers", "trl"})
_frozen: set[str] = set()


def _freeze_new_imports() -> None:
    """Move the objects alive now into the collector's permanent generation (:func:`gc.freeze`) once a heavy library
    has been imported: torch, transformers and TRL leave ~450,000 long-lived objects that every full collection walked
    again (0.4 s each; 11 % of the training tests' time went to the collector). Garbage is collected first, so only
    objects alive at that moment are frozen; the modules stay imported for the rest of the worker's life anyway."""
    import gc

    new = (_HEAVY & sys.modules.keys()) - _frozen
    if new:
        gc.collect()
        gc.freeze()
        _frozen.update(new)


def pytest_collection_finish(session) -> None:
    _freeze_new_imports()


def pytest_runtest_teardown(item, nextitem) -> None:
    _freeze_new_imports()
