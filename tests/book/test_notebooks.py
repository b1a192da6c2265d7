"""The registry, the stored notebooks (nbval baselines) and the papermill runner's argument checks."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest
import yaml

from rlvr_dynamics.book import claims, registry

ENTRIES = registry.load_registry()
IDS = [e.id for e in ENTRIES]


def fastest_notebook(prefixes=("p1_", "p2_")) -> registry.NotebookEntry:
    """The registered numerics notebook with the smallest stored runtime (for tests that execute one)."""
    cands = [e for e in ENTRIES if e.id.startswith(prefixes)] or ENTRIES
    if not cands:
        pytest.skip("no notebook registered yet")
    runtime = lambda e: nbformat.read(e.path, as_version=4).metadata.get("rlvr_dynamics", {}).get("runtime_s", 1e9)
    return min(cands, key=runtime)


def test_registry_is_not_empty_and_covers_both_papers():
    assert {e.paper for e in ENTRIES} == {"P1", "P2"}


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_stored_notebook_follows_the_contract(entry):
    nb = nbformat.read(entry.path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", []), "first code cell must be tagged 'parameters'"
    last = code[-1]
    assert "nbval-check-output" in last.metadata.get("tags", []), "claims cell must be tagged nbval-check-output"
    assert re.search(rf"claims\.record\(\s*['\"]{entry.id}['\"]", last.source), "last cell must record the claims"
    assert all(c.outputs or not c.source.strip() for c in code[1:]) or last.outputs, "stored without outputs"
    for name, p in registry.notebook_parameters(entry).items():
        assert p["help"], f"parameter {name!r} needs a comment saying what it is"


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_stored_verdicts_match_the_stored_claims_table(entry):
    """The committed notebooks/claims/<id>.claims.json is what the stored claims cell printed."""
    data = json.loads((registry.STORED_CLAIMS_DIR / f"{entry.id}.claims.json").read_text())
    assert {r["id"] for r in data["claims"]} == set(entry.claims)
    nb = nbformat.read(entry.path, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    printed = "".join(o.get("text", "") for o in last.outputs if o.output_type == "stream")
    assert claims.format_table(data["claims"]) in printed


def _write_registry(tmp_path, rows):
    (tmp_path / "x.yml").write_text(yaml.safe_dump(rows))
    return tmp_path


GOOD = {"id": "a", "title": "A", "paper": "P1", "chapter": "c", "section": "§1", "claims": ["P1-C1"],
        "figure": "f", "order": 1}


@pytest.mark.parametrize("change, match", [
    ({"paper": "P3"}, "paper must be one of"),
    ({"claims": ["P9-C1"]}, "not in book/claims.yml"),
    ({"colour": "red"}, "unknown field"),
])
def test_registry_rejects_bad_entries(tmp_path, change, match):
    with pytest.raises(ValueError, match=match):
        registry.load_registry(_write_registry(tmp_path, [{**GOOD, **change}]))


def test_registry_rejects_missing_fields_and_duplicates(tmp_path):
    with pytest.raises(ValueError, match=r"missing field\(s\) \['title'\]"):
        registry.load_registry(_write_registry(tmp_path, [{k: v for k, v in GOOD.items() if k != "title"}]))
    with pytest.raises(ValueError, match="duplicate notebook id"):
        registry.load_registry(_write_registry(tmp_path, [GOOD, GOOD]))


def test_unknown_notebook_lists_the_registered_ones():
    with pytest.raises(ValueError, match="unknown notebook 'nope'; registered notebooks: " + re.escape(IDS[0])):
        registry.get_entry("nope")
    assert registry.get_entry(f"notebooks/{IDS[0]}.ipynb").id == IDS[0]


def test_parameter_checks():
    entry = fastest_notebook()
    params = registry.notebook_parameters(entry)
    with pytest.raises(ValueError, match="unknown parameter 'no_such_knob'.*valid parameters: "):
        registry.coerce_parameters(entry, {"no_such_knob": "1"})
    floats = [n for n, p in params.items() if p["type"] == "float"]
    ints = [n for n, p in params.items() if p["type"] == "int"]
    if floats:
        assert registry.coerce_parameters(entry, {floats[0]: "2"}) == {floats[0]: 2.0}
        with pytest.raises(ValueError, match=f"parameter '{floats[0]}'.*expects float"):
            registry.coerce_parameters(entry, {floats[0]: "'abc'"})
    if ints:
        with pytest.raises(ValueError, match=f"parameter '{ints[0]}'.*expects int"):
            registry.coerce_parameters(entry, {ints[0]: "0.5"})


def test_cli_rejects_unknown_names_with_exit_code_2():
    entry = fastest_notebook()
    cli = [sys.executable, "-m", "rlvr_dynamics.cli"]
    res = subprocess.run([*cli, "run", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and "unknown notebook 'nope'" in res.stderr and "Traceback" not in res.stderr
    res = subprocess.run([*cli, "run", entry.id, "-p", "bogus", "1"], capture_output=True, text=True)
    assert res.returncode == 2 and "valid parameters:" in res.stderr


@pytest.mark.slow
def test_run_with_a_changed_parameter_writes_copy_verdicts_and_provenance(tmp_path):
    entry = fastest_notebook()
    params = registry.notebook_parameters(entry)
    name, p = next((n, p) for n, p in params.items() if p["type"] in ("int", "float"))
    new = p["default"] + 1 if p["type"] == "int" else p["default"] * 1.1
    path = registry.run_notebook(entry, {name: repr(new)}, out_dir=tmp_path, progress=False)
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["rlvr_dynamics"]["parameters"][name] == new
    assert "provenance" in nb.cells[1].metadata["tags"] and f"`{name}`" in nb.cells[1].source
    assert "parameters changed: " + name in nb.cells[1].source
    assert {r["id"] for r in json.loads((tmp_path / f"{entry.id}.claims.json").read_text())["claims"]} == \
        set(entry.claims)
    assert registry.executed_is_current(entry, tmp_path)
    with pytest.raises(ValueError, match="only allowed with default parameters"):
        registry.run_notebook(entry, {name: repr(new)}, store=True, out_dir=tmp_path)


def _entry_with_parameters(tmp_path, monkeypatch, source):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    nbformat.write(nb, tmp_path / "t.ipynb")
    monkeypatch.setattr(registry, "NOTEBOOK_DIR", tmp_path)
    return registry.NotebookEntry("t", "T", "P1", "c", "§1", ("P1-C1",), "f", 1)


def test_parameters_cell_is_parsed_with_its_comments(tmp_path, monkeypatch):
    entry = _entry_with_parameters(tmp_path, monkeypatch,
                                   "window = 20  # steps, >= 1 (x = y)\nlr = 1e-3\nnames = ['a', 'b']  # labels\n")
    params = registry.notebook_parameters(entry)
    assert params == {"window": {"default": 20, "type": "int", "help": "steps, >= 1 (x = y)"},
                      "lr": {"default": 1e-3, "type": "float", "help": ""},
                      "names": {"default": ["a", "b"], "type": "list", "help": "labels"}}
    assert registry.coerce_parameters(entry, {"names": "['c']", "window": "3"}) == {"names": ["c"], "window": 3}


@pytest.mark.parametrize("source, match", [("import numpy as np\n", "is not 'name = literal'"),
                                           ("x = np.arange(3)\n", "must be a Python literal"),
                                           ("x = (\n", "not valid Python")])
def test_parameters_cell_must_hold_literals(tmp_path, monkeypatch, source, match):
    entry = _entry_with_parameters(tmp_path, monkeypatch, source)
    with pytest.raises(ValueError, match=match):
        registry.notebook_parameters(entry)
