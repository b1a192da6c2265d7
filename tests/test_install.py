"""`pip install rlvr-dynamics` (the base install, no torch): a built wheel lists the notebooks, ships the claims and
the registry as package data, and runs `fit` on a real log, with torch, TRL, datasets and papermill unavailable."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rlvr_dynamics.paths import REPO_ROOT, RUNS_DIR

BLOCK = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in ('torch', 'transformers', 'trl', 'datasets', 'papermill', 'nbformat', 'tqdm'):
            raise ImportError('not installed: ' + name)
sys.meta_path.insert(0, Block())
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from this checkout, installed into a folder of its own (``pip --target``)."""
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp / "dist"), str(REPO_ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next((tmp / "dist").glob("rlvr_dynamics-*.whl"))
    inst = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(tmp / "site"),
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert inst.returncode == 0, inst.stderr
    return tmp


def _run(installed, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(installed / "site")}
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, timeout=300,
                          cwd=str(installed), env=env)


def test_wheel_ships_claims_and_registry(installed):
    site = installed / "site" / "rlvr_dynamics" / "_data"
    assert (site / "claims.yml").is_file() and not (site / "claims.yml").is_symlink()
    assert sorted(p.name for p in (site / "registry").glob("*.yml")) == ["grpo.yml", "p1.yml", "p2.yml"]
    out = _run(installed, """
import rlvr_dynamics, rlvr_dynamics.paths as P
assert P.PACKAGE_DATA.is_relative_to(P.Path(rlvr_dynamics.__file__).parent), rlvr_dynamics.__file__
assert not P.IN_CHECKOUT and P.CLAIMS_PATH.parent == P.PACKAGE_DATA
from rlvr_dynamics.book import claims
assert len(claims.checklist()) == 31
from rlvr_dynamics.cli import main
sys.exit(main(['list']))
""")
    assert out.returncode == 0, out.stderr
    assert "p1_regimes" in out.stdout and "notebook not installed" in out.stdout


def test_wheel_fits_a_log_without_torch(installed):
    metrics = sorted(RUNS_DIR.glob("p1-long-*"))[0] / "metrics.csv"
    out = _run(installed, f"""
from rlvr_dynamics.cli import main
sys.exit(main(['fit', {str(metrics)!r}, '--json']))
""")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["noise"]["noise_ceiling"] < 1.0


def test_wheel_params_says_the_notebooks_are_not_installed(installed):
    out = _run(installed, "from rlvr_dynamics.cli import main\nsys.exit(main(['params', 'p1_regimes']))")
    assert out.returncode == 2 and "clone it to rerun notebooks" in out.stderr and "Traceback" not in out.stderr
