"""The run-doctor benchmark shown in the book is the one the current tools produce (no stale tables)."""
from __future__ import annotations

import importlib.util
import re

import pytest

from rlvr_dynamics.paths import REPO_ROOT

TABLES = REPO_ROOT / "book" / "doctor_benchmark.md"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_doctor", REPO_ROOT / "bench" / "bench_doctor.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_book_tables_match_the_current_tools():
    """``book/doctor_benchmark.md`` records the hash of the tools' sources it was computed with: a change to any of
    them (corpus, noise, forecast, reading, response laws, detectors, live doctor) needs
    ``python bench/bench_doctor.py --write`` before it lands."""
    if not TABLES.exists():
        pytest.skip("book/doctor_benchmark.md absent (not a checkout)")
    m = re.search(r"tools hash ([0-9a-f]{16})", TABLES.read_text())
    assert m, "book/doctor_benchmark.md carries no tools hash"
    assert m.group(1) == _bench().tools_hash(), (
        "the run tools changed since book/doctor_benchmark.md was generated: rerun "
        "`python bench/bench_doctor.py --write` (and --figures)")


def test_targets_table_marks_each_target_met_or_not():
    text = TABLES.read_text() if TABLES.exists() else ""
    if not text:
        pytest.skip("book/doctor_benchmark.md absent")
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.rstrip().endswith("|")]
    target_rows = [r for r in rows if r.rstrip("| ").endswith(("**yes**", "**no**"))]
    assert len(target_rows) >= 20, "the targets table lists every target of issue 19"
    # persistence and MMF stand beside the project on every forecast-error row
    for r in target_rows:
        if r.startswith("| forecast median error"):
            cells = [c.strip() for c in r.strip("|").split("|")]
            assert all(re.fullmatch(r"\d\.\d{3}", c) for c in cells[1:4]), r
