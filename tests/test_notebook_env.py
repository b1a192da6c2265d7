"""The environment every notebook runs in (``paths.NOTEBOOK_ENV``): offline, and the same floating-point code paths
on any x86-64 CPU with AVX2, so the stored notebooks (the nbval baseline) reproduce on CI machines with or without
AVX-512. Checked in a fresh interpreter, as a notebook kernel would start."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from rlvr_dynamics import paths

X86 = platform.machine().lower() in ("x86_64", "amd64")

PROBE = r"""
import ctypes, glob, json, os
import numpy
from numpy._core._multiarray_umath import __cpu_features__ as features
libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "libscipy_openblas*.so"))
core = threads = None
if libs:
    lib = ctypes.CDLL(libs[0])
    for suffix in ("64_", ""):
        name = getattr(lib, f"scipy_openblas_get_corename{suffix}", None)
        count = getattr(lib, f"scipy_openblas_get_num_threads{suffix}", None)
        if name is not None and count is not None:
            name.restype = ctypes.c_char_p
            core, threads = name().decode(), int(count())
            break
print(json.dumps({"avx512": [k for k in ("X86_V4", "AVX512_ICL", "AVX512_SPR") if features.get(k)],
                  "core": core, "threads": threads}))
"""


def _probe(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_notebook_env_is_offline_and_keeps_the_offline_values():
    for key, value in paths.OFFLINE_ENV.items():
        assert paths.NOTEBOOK_ENV[key] == value


@pytest.mark.skipif(not X86, reason="the numeric pins are for x86-64 only")
def test_notebook_env_pins_numpy_and_openblas_to_the_avx2_code_paths():
    env = {k: v for k, v in os.environ.items() if k not in paths.PORTABLE_NUMERICS_ENV}
    pinned = _probe({**env, **paths.PORTABLE_NUMERICS_ENV})
    assert pinned["avx512"] == []                       # numpy's AVX-512 kernels (other rounding) are off
    assert (pinned["core"], pinned["threads"]) == ("Haswell", 1)   # the wheel's OpenBLAS: Haswell, one thread


@pytest.mark.skipif(not X86, reason="the numeric pins are for x86-64 only")
def test_the_test_session_runs_notebooks_with_the_pins():
    """The root conftest puts NOTEBOOK_ENV into the environment nbval's kernels inherit."""
    for key, value in paths.PORTABLE_NUMERICS_ENV.items():
        assert os.environ.get(key) == value, key
