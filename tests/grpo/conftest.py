"""Fixtures shared by the GRPO tests."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """An empty warm-start / model cache for one test module (``$RLVR_DYNAMICS_CACHE``), restored afterwards."""
    path = tmp_path_factory.mktemp("cache")
    old = os.environ.get("RLVR_DYNAMICS_CACHE")
    os.environ["RLVR_DYNAMICS_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("RLVR_DYNAMICS_CACHE", None)
    else:
        os.environ["RLVR_DYNAMICS_CACHE"] = old
