"""The package layout keeps its promises: imports point one way, and reading runs never needs torch."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from rlvr_dynamics.paths import REPO_ROOT, RUNS_DIR

LIB = REPO_ROOT / "lib" / "rlvr_dynamics"


def _imports(path) -> set[str]:
    """Absolute module names a file imports (relative imports resolved against its package)."""
    pkg = path.relative_to(LIB.parent).with_suffix("").parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(pkg[:len(pkg) - node.level + 1]) if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


@pytest.mark.parametrize("layer", ["p1", "p2"])
def test_theory_layers_import_nothing_above_them(layer):
    for path in (LIB / layer).glob("*.py"):
        bad = {m for m in _imports(path) if m.split(".")[:2] in (["rlvr_dynamics", x] for x in
                                                                 ("grpo", "runs", "doctor", "book", "cli"))}
        assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("package", ["runs", "doctor"])
def test_runs_and_the_doctor_never_import_the_trainer(package):
    allowed = {"rlvr_dynamics.grpo.config", "rlvr_dynamics.grpo.tasks", "rlvr_dynamics.grpo.model_sizes",
               "rlvr_dynamics.grpo.fields"}  # torch-free: the callback's metric names
    for path in (LIB / package).rglob("*.py"):
        grpo = {m for m in _imports(path) if m.startswith("rlvr_dynamics.grpo")
                and not m.startswith("rlvr_dynamics.grpo.fields.")}   # any name of the torch-free fields module
        assert grpo <= allowed | {m.rsplit(".", 1)[0] for m in allowed} | {f"{a}.{n}" for a in allowed
                                                                               for n in ("RunConfig", "EVAL_FAMILIES",
                                                                                         "TINY_SIZES",
                                                                                         "is_callback_field")}, \
            f"{path.name} imports {sorted(grpo - allowed)}"


BLOCK_TORCH = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] in ('torch', 'transformers', 'trl', 'datasets', 'papermill'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
"""


def test_fit_runs_without_torch(tmp_path):
    """`rlvr-dynamics fit` and `rlvr_dynamics.runs` work in an environment without torch, TRL or papermill."""
    run_dir = sorted(RUNS_DIR.glob("p1-long-*"))[0]
    code = BLOCK_TORCH + f"""
import rlvr_dynamics.runs as runs
run = runs.load_committed_run({str(run_dir)!r})
assert run.refresh_interval == 1
from rlvr_dynamics.cli import main
sys.exit(main(['fit', {str(run_dir / 'metrics.csv')!r}, '--json', '--details']))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["fits"]["three_phase"]["r2"] <= 1.0


def test_cli_fit_reproduces_the_notebook_fit():
    """The fit `rlvr-dynamics fit data/runs/<id>/metrics.csv` prints is the one the GRPO notebooks use (1e-6)."""
    from rlvr_dynamics import runs
    from rlvr_dynamics.doctor import fit_laws

    run = runs.load_committed_runs("p1-long")[0]
    notebook_fit = fit_laws(run.log)
    out = subprocess.run([sys.executable, "-m", "rlvr_dynamics.cli", "fit", str(run.path / "metrics.csv"), "--json", "--details"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    assert cli["reward_bounds"] == [0.0, 1.0]
    for law in ("three_phase", "single_exponential"):
        for name, value in notebook_fit[law].params.items():
            assert cli["fits"][law]["params"][name] == pytest.approx(value, rel=1e-6, abs=1e-9), (law, name)
        assert cli["fits"][law]["r2"] == pytest.approx(notebook_fit[law].r2, rel=1e-6)
