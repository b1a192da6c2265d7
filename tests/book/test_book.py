"""The book builds offline with warnings as errors; every page opens with its verdicts, folds its code, numbers and
captions its figures; the scorecard has one row per claim; the explorer reacts to its sliders; it opens in headless
Chromium with every figure and formula rendered and nothing wider than a 1280 px window, each notebook page's first figure in its first 1,200 px; and nbval really fails
when a stored claims output changes."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from rlvr_dynamics.book import build, claims, markup, pages, registry, site_pages
from rlvr_dynamics.book.browser_check import MAX_FIRST_FIGURE_PX, check_book, find_chromium

from rlvr_dynamics.paths import RUNS_DIR
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
def test_book_has_a_page_per_notebook_one_scorecard_row_per_claim_and_the_reader_pages(built_book):
    book_dir, html = built_book
    entries = registry.load_registry()
    for e in entries:
        page = (html / "executed" / f"{e.id}.html").read_text(encoding="utf-8")
        assert "Provenance" in page and f"notebooks/{e.id}.ipynb" in page
        assert "Results on this page" in page and "verdict-badge" in page
        # the page leads with its result: the reading, then the key figure, then the results box; provenance last
        if "<figure" in page:
            assert page.index("The result.") < page.index("<figure") < page.index("Results on this page")
            assert "What this page tests, and how" in page
        assert page.index("Results on this page") < page.index("Provenance")
        assert "&lt;matplotlib" not in page
    known = claims.checklist()
    score = (book_dir / "scorecard.md").read_text()
    rows = re.findall(r"^\* - \{ref\}`(P\d-C\d+) <", score, re.M)
    assert sorted(rows) == sorted(known), "the scorecard must have exactly one row per claim"
    assert len(rows) == len(set(rows)) == len(known)
    for paper in registry.PAPERS:
        appendix = (html / "_generated" / f"claims-{paper.lower()}.html").read_text(encoding="utf-8")
        for cid, info in known.items():
            if info["paper"] == paper:
                assert f'id="{markup.claim_label(cid)}"' in appendix, f"no anchor for {cid}"
    for page in ("intro", "scorecard", "rerun", "own-runs", "p1/index", "p2/index", "explorer",
                 "_generated/downloads"):
        assert (html / f"{page}.html").exists(), page
    for page in site_pages.STATIC_PAGES:  # every hand-written page is in the TOC and built
        if (registry.BOOK_DIR / f"{page}.md").exists():
            assert (html / f"{page}.html").exists(), page
    intro = (html / "intro.html").read_text(encoding="utf-8")
    assert "Results at a glance" in intro and "Headline figures" in intro and "verdict-badge" in intro
    assert (html / "_static" / "mathjax" / "tex-svg.js").exists()
    assert (html / "_static" / "explorer.js").exists() and (html / "_static" / "explorer-data.js").exists()
    # every committed run's metrics.csv and config.json can be downloaded
    downloads = (html / "_generated" / "downloads.html").read_text(encoding="utf-8")
    runs = [p for p in RUNS_DIR.glob("*") if p.is_dir()]
    for run in runs:
        for name in ("metrics.csv", "config.json"):
            if (run / name).exists():
                assert f"downloads/runs/{run.name}/{name}" in (book_dir / "_generated" / "downloads.md").read_text()
    assert downloads.count("_downloads/") >= 2 * len(runs)
    assert len(list((html / "_downloads").rglob("metrics.csv"))) == sum((r / "metrics.csv").exists() for r in runs)


@pytest.mark.slow
@pytest.mark.browser
def test_book_opens_offline_in_chromium_with_math_figures_captions_and_a_working_explorer(built_book, tmp_path):
    if find_chromium() is None:
        if IN_CI:
            pytest.fail("Chromium is required in CI (.ci/run installs Debian's chromium-headless-shell)")
        pytest.skip("no Chromium on this machine (apt-get install chromium-headless-shell)")
    book_dir, html = built_book
    shot = tmp_path / "intro.png"
    reports = check_book(html, screenshot=shot)
    problems = [f"{r.page}: {p}" for r in reports for p in r.problems]
    assert not problems, "\n".join(problems)
    assert sum(r.math_elements for r in reports) > 20, "expected typeset math across the book"
    built_figures = sum(len(pages.page_images(book_dir, e)) for e in registry.load_registry())
    assert built_figures >= 1
    by_page = {r.page: r for r in reports}
    for e in registry.load_registry():
        assert by_page[f"executed/{e.id}.html"].badges >= len(e.claims), e.id
    # every figure of every page is a numbered, captioned <figure> (the check above fails on any that is not)
    assert sum(r.figures for r in reports if r.page.startswith("executed/") and " @ " not in r.page) == built_figures
    # every notebook page leads with its key figure (the check above fails a page whose first figure is lower)
    first = {p: r.first_figure_px for p, r in by_page.items() if p.startswith("executed/") and " @ " not in p}
    assert first and all(v is not None and v <= MAX_FIRST_FIGURE_PX for v in first.values()), first
    assert by_page["explorer.html"].sliders_checked == 4
    assert by_page["scorecard.html"].badges >= len(claims.checklist())
    assert shot.stat().st_size > 20_000


@pytest.mark.slow
def test_nbval_reports_a_changed_claims_output(tmp_path):
    entry = fastest_notebook()
    nb = nbformat.read(entry.path, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    stream = next(o for o in last.outputs if o.output_type == "stream")
    # change the first recorded verdict, whichever it is, to another one
    found = re.search(r"\b(PASS|PARTIAL|FAIL|CONSISTENT|INCONCLUSIVE|N/A)\b", stream.text)
    assert found, "the claims cell prints no verdict"
    other = "FAIL" if found.group(1) != "FAIL" else "PASS"
    stream.text = stream.text[:found.start()] + other + stream.text[found.end():]
    bad = tmp_path / f"{entry.id}.ipynb"
    nbformat.write(nb, bad)
    # the outer run's PYTEST_ADDOPTS (-q, --durations) would change the summary line read below
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["RLVR_CLAIMS_DIR"] = str(tmp_path)
    res = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p",
                          "no:cacheprovider", "-q", str(bad)], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert res.returncode == 1, res.stdout[-2000:]
    assert "1 failed" in res.stdout and "mismatch" in res.stdout.lower()
