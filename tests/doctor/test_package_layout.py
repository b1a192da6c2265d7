"""The doctor's package keeps its shape (DESIGN.md, "The run doctor's shape"): every module importable on its own in
a fresh interpreter, the corpus and the benchmark outside it. No import circle and no long module anywhere in the
package: ``tests/test_package_shape.py``."""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from rlvr_dynamics.paths import REPO_ROOT

LIB = REPO_ROOT / "lib"
DOCTOR = LIB / "rlvr_dynamics" / "doctor"


def _module(path) -> str:
    parts = path.relative_to(LIB).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in sorted(DOCTOR.rglob("*.py"))}


def _imports(path) -> set[str]:
    """Absolute names a file imports anywhere in it (function-level imports too), relative ones resolved."""
    pkg = _module(path).split(".") if path.name == "__init__.py" else _module(path).split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg[:len(pkg) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_doctor_module_imports_first_in_a_fresh_interpreter(module):
    out = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_product_holds_no_corpus_and_no_benchmark():
    """The corpus and the scoring of the doctor live in ``bench/doctor_eval``, outside the product package."""
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        for word in ("def benchmark_", "def load_corpus", "def calibrate_conformal", "def write_conformal"):
            assert word not in text, f"{name} defines {word[4:]}"
        assert not any(m.startswith(("doctor_eval", "rlvr_dynamics.runs.corpus")) for m in _imports(path)), name
