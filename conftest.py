"""Test-session set-up (root conftest, so it also applies to nbval over notebooks/): nothing touches the network,
notebooks run with the same CPU-portable numerics as when they were stored (``paths.NOTEBOOK_ENV``), and notebooks
executed by nbval write their verdicts to a temporary folder instead of the repository.

Under pytest-xdist each worker gets its share of the cores for torch/OpenMP/MKL (``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS`` = cores // workers, at least 1; set before torch is imported, inherited by the notebook kernels
and the training subprocesses). torch's default is one thread per core in every process: with two workers on two
cores that is four spinning OpenMP threads on two cores, and a 150-step tiny-model TRL test took 23 s beside two busy
processes instead of 5.8 s (measured 2026-12-04 on a 2-core EPYC). Runs whose config fixes ``num_threads`` still set it."""
from __future__ import annotations

import os
import tempfile

from rlvr_dynamics.paths import OFFLINE_ENV, PORTABLE_NUMERICS_ENV

for _k, _v in OFFLINE_ENV.items():
    os.environ.setdefault(_k, _v)
os.environ.update(PORTABLE_NUMERICS_ENV)    # forced: the baseline was stored with exactly these
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
if _workers > 0:
    _threads = str(max(1, (os.cpu_count() or 1) // _workers))
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = _threads
os.environ["RLVR_CLAIMS_DIR"] = tempfile.mkdtemp(prefix="rlvr-nbval-claims-")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer than a few seconds; still part of the default run")
    config.addinivalue_line("markers", "browser: needs Chromium (skipped locally without it, required in CI)")
    config.addinivalue_line("markers", "trains: trains a model (tiny TRL or torch runs, kill-and-resume, torchrun); part "
                                       "of the default run, `-m 'not trains'` leaves them out of a quick loop")
