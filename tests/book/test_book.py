"""The book builds offline with warnings as errors, opens in headless Chromium with every figure and formula
rendered, and nbval really fails when a stored claims output changes."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from rlvr_dynamics.book import build, registry
from rlvr_dynamics.book.browser_check import check_book, find_chromium

from test_notebooks import fastest_notebook

IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    """A copy of book/ built from the committed (already executed) notebooks, without re-executing them."""
    src = registry.BOOK_DIR
    dst = tmp_path_factory.mktemp("book") / "book"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("_build", "executed", "_generated", "_mathjax", "__pycache__",
                                                            "_toc.yml", "scorecard.md"))
    html = build.build_book(dst, execute="none", progress=False)
    return dst, html


@pytest.mark.slow
def test_book_has_a_page_per_notebook_and_a_complete_scorecard(built_book):
    book_dir, html = built_book
    entries = registry.load_registry()
    for e in entries:
        page = (html / "executed" / f"{e.id}.html").read_text(encoding="utf-8")
        assert "Provenance" in page and f"notebooks/{e.id}.ipynb" in page
    score = (book_dir / "scorecard.md").read_text()
    for e in entries:
        for cid in e.claims:
            assert f"| {cid} | **" in score
    for page in ("intro", "scorecard", "rerun", "own-runs", "p1/index", "p2/index"):
        assert (html / f"{page}.html").exists()
    assert (html / "_static" / "mathjax" / "tex-svg.js").exists()


@pytest.mark.slow
@pytest.mark.browser
def test_book_opens_offline_in_chromium_with_math_and_figures(built_book, tmp_path):
    if find_chromium() is None:
        if IN_CI:
            pytest.fail("Chromium is required in CI (.ci/run installs Debian's chromium)")
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    _, html = built_book
    shot = tmp_path / "intro.png"
    reports = check_book(html, screenshot=shot)
    problems = [f"{r.page}: {p}" for r in reports for p in r.problems]
    assert not problems, "\n".join(problems)
    assert sum(r.math_elements for r in reports) > 20, "expected typeset math across the book"
    assert sum(r.images for r in reports) >= len(registry.load_registry()), "expected a figure per notebook"
    assert shot.stat().st_size > 20_000


@pytest.mark.slow
def test_nbval_reports_a_changed_claims_output(tmp_path):
    entry = fastest_notebook()
    nb = nbformat.read(entry.path, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    stream = next(o for o in last.outputs if o.output_type == "stream")
    verdict = "FAIL" if "PASS" in stream.text else "PASS"
    stream.text = stream.text.replace("PASS", verdict, 1) if verdict == "FAIL" else \
        stream.text.replace("FAIL", verdict, 1).replace("PARTIAL", verdict, 1).replace("N/A", verdict, 1)
    bad = tmp_path / f"{entry.id}.ipynb"
    nbformat.write(nb, bad)
    env = {**os.environ, "RLVR_CLAIMS_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p",
                          "no:cacheprovider", "-q", str(bad)], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert res.returncode == 1, res.stdout[-2000:]
    assert "1 failed" in res.stdout and "mismatch" in res.stdout.lower()
