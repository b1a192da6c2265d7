"""Where things live, and the offline environment: the one definition of every project path.

``REPO_ROOT`` is the checkout (``lib/rlvr_dynamics/paths.py`` → two levels up). ``cache_dir()`` is the download
and checkpoint cache shared by the book build (MathJax) and the GRPO code (warm starts, SmolLM2, resumable runs).
"""
from __future__ import annotations

import os
import platform
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository checkout (meaningless for an installed wheel: see :data:`PACKAGE_DATA`)."""
PACKAGE_DATA = Path(__file__).resolve().parent / "_data"
"""Copies shipped inside the package (in the repository: links to ``book/claims.yml`` and
``notebooks/registry/*.yml``), used when the package is installed without the repository."""
IN_CHECKOUT = (REPO_ROOT / "book" / "claims.yml").exists()
"""True when running from the repository (editable install), False from an installed wheel."""
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
"""Stored (executed) notebooks: the nbval baseline (repository only)."""
REGISTRY_DIR = NOTEBOOK_DIR / "registry" if IN_CHECKOUT else PACKAGE_DATA / "registry"
"""The notebook registry, one YAML per part."""
STORED_CLAIMS_DIR = NOTEBOOK_DIR / "claims"
"""Verdicts recorded by the stored notebooks."""
BOOK_DIR = REPO_ROOT / "book"
"""Jupyter Book sources; ``book/claims.yml`` is the claims ledger."""
CLAIMS_PATH = BOOK_DIR / "claims.yml" if IN_CHECKOUT else PACKAGE_DATA / "claims.yml"
"""Every claim of both papers with its criterion and the changes made after a result."""
DATA_DIR = REPO_ROOT / "data"
"""Committed configs and logs of the project's own GRPO runs."""
RUNS_DIR = DATA_DIR / "runs"
"""Committed run folders (``config.json``, ``metrics.csv``, ``eval.json``)."""

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "HF_HUB_DISABLE_TELEMETRY": "1", "PYTHONHASHSEED": "0", "TQDM_DISABLE": "1"}
"""Environment of every notebook execution and book build: nothing reaches a model or dataset hub."""

PORTABLE_NUMERICS_ENV = ({"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Haswell",
                          "OPENBLAS_NUM_THREADS": "1", "MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
                          "ONEDNN_MAX_CPU_ISA": "AVX2"}
                         if platform.machine().lower() in ("x86_64", "amd64") else {})
"""Environment of every notebook execution on x86-64: the same floating-point code paths on any AVX2 CPU, with or
without AVX-512. NumPy's runtime dispatch stops at AVX2 (its AVX-512 exp/log and SVML kernels round differently),
OpenBLAS uses its Haswell kernels on one thread (blocking and kernels are chosen per CPU otherwise), and torch's
MKL, ATen and oneDNN kernels are held at AVX2. Without it the stored notebooks (the nbval baseline) differ in the
last digits between CI machines (measured on a 2-core AVX2 EPYC: OpenBLAS on 2 threads moved a bisected slope
from 0.5148 to 0.5046 and a plateau count from 1 to 2). Set for notebook executions and the test session only:
the library itself runs at full speed elsewhere."""

NOTEBOOK_ENV = {**OFFLINE_ENV, **PORTABLE_NUMERICS_ENV}
"""Environment of every notebook execution (papermill runner, nbval): offline and CPU-portable."""

HUB_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")
"""The subset that keeps transformers, datasets and the hub client offline."""


def set_offline_env(override: bool = False) -> None:
    """Put :data:`HUB_OFFLINE_VARS` into ``os.environ`` (``setdefault`` unless ``override``)."""
    for var in HUB_OFFLINE_VARS:
        if override:
            os.environ[var] = "1"
        else:
            os.environ.setdefault(var, "1")


def cache_dir() -> Path:
    """Download and checkpoint cache: ``$RLVR_DYNAMICS_CACHE`` or ``~/.cache/rlvr-dynamics`` (never committed)."""
    return Path(os.environ.get("RLVR_DYNAMICS_CACHE", Path.home() / ".cache" / "rlvr-dynamics"))


SHARED_DIR = REPO_ROOT.parent / "shared"
"""The workplace's ``shared/`` folder beside the checkout (paper specs, real GRPO logs); absent on a user's machine,
so tests that read it skip without it."""
