"""Test-session set-up (root conftest, so it also applies to nbval over notebooks/): nothing touches the network,
notebooks run with the same CPU-portable numerics as when they were stored (``paths.NOTEBOOK_ENV``), and notebooks
executed by nbval write their verdicts to a temporary folder instead of the repository."""
from __future__ import annotations

import os
import tempfile

from rlvr_dynamics.paths import OFFLINE_ENV, PORTABLE_NUMERICS_ENV

for _k, _v in OFFLINE_ENV.items():
    os.environ.setdefault(_k, _v)
os.environ.update(PORTABLE_NUMERICS_ENV)    # forced: the baseline was stored with exactly these
os.environ["RLVR_CLAIMS_DIR"] = tempfile.mkdtemp(prefix="rlvr-nbval-claims-")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer than a few seconds; still part of the default run")
    config.addinivalue_line("markers", "browser: needs Chromium (skipped locally without it, required in CI)")
