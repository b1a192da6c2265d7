"""The package keeps the layout of ``rlvr_dynamics/__init__.py`` (issue 38): no import circle anywhere in ``lib/``
and ``bench/`` (function-level imports count), the verdict checks never import the book layer, no module over
:data:`MAX_LINES` lines, and no private name (``_x``) imported from a module of another package or from a public
module (a private module's names, ``_log_formats``, ``_response_engine``, are its package's own)."""
from __future__ import annotations

import ast

from rlvr_dynamics.paths import REPO_ROOT

ROOTS = (REPO_ROOT / "lib", REPO_ROOT / "bench")
MAX_LINES = 460


def _module(path, root) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p, root): p for root in ROOTS for p in sorted(root.rglob("*.py"))}


def _imports(name: str, path) -> list[tuple[str, str | None]]:
    """``(module, imported name or None)`` for every import in the file, function-level ones too, relative
    imports resolved to absolute module names."""
    pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = pkg[:len(pkg) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out += [(mod, a.name) for a in node.names]
    return out


def _graph() -> dict[str, set[str]]:
    """Module → the project modules it imports (its own parent packages left out: Python imports them first)."""
    graph = {}
    for name, path in MODULES.items():
        parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        targets = set()
        for mod, item in _imports(name, path):
            for candidate in (f"{mod}.{item}" if item else None, mod):
                if candidate in MODULES and candidate != name and candidate not in parents:
                    targets.add(candidate)
                    break
        graph[name] = targets
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle_in_the_package_or_the_benchmarks():
    found = _cycle(_graph())
    assert found is None, "import circle: " + " → ".join(found)


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_verdict_checks_never_import_the_book_layer():
    for name, path in MODULES.items():
        if name.startswith("rlvr_dynamics.verdicts"):
            bad = [mod for mod, _ in _imports(name, path) if mod.startswith("rlvr_dynamics.book")]
            assert not bad, f"{name} imports {bad}"
    book_imports = {mod for name, path in MODULES.items() if name.startswith("rlvr_dynamics.book")
                    for mod, _ in _imports(name, path)}
    assert any(m.startswith("rlvr_dynamics.verdicts") for m in book_imports), "the book should read the verdicts"


def test_no_module_is_over_the_line_limit():
    long = {name: n for name, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_private_name_crosses_a_package_or_leaves_a_public_module():
    bad = []
    for name, path in MODULES.items():
        pkg = name.rsplit(".", 1)[0] if path.name != "__init__.py" else name
        for mod, item in _imports(name, path):
            if not item or not item.startswith("_") or item.startswith("__"):
                continue
            if f"{mod}.{item}" in MODULES:          # a private module imported by name: `from . import _trl_compat`
                if mod != pkg:
                    bad.append(f"{name}: {mod}.{item}")
                continue
            same_package = mod.rsplit(".", 1)[0] == pkg
            private_module = mod.rsplit(".", 1)[-1].startswith("_")
            if not (same_package and private_module):
                bad.append(f"{name}: {item} from {mod}")
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)
