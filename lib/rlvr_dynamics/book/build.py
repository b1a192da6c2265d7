"""Build the Jupyter Book (v1, execution off) from the registry: reader-first pages, scorecard, landing page.

``build_book`` is what ``rlvr-dynamics book`` (and so ``make book``) runs:

1. make sure every registered notebook has an executed copy in ``<book>/executed`` (``execute="stale"``: run the
   ones that are missing or whose code changed, keeping copies a user made with other parameters;
   ``"all"``: rerun everything at defaults; ``"none"``: copy the committed, already executed notebooks);
2. turn each executed copy into a book page (:func:`.pages.book_page`, a build-time transform: the notebooks themselves
   need no edits). The untransformed copy is kept as ``executed/<id>.raw.ipynb``;
3. write ``_toc.yml``, the chapter pages, the scorecard (one row per claim), the claims appendix (one page per
   paper, an anchor per claim), the landing page's results (``_generated/landing.md``, included by ``intro.md``),
   the downloads page, the explorer's precomputed data and the reader copies of the generated Markdown the
   doctor's pages include (:mod:`.reader_copies`);
4. unpack MathJax 3 from the npm registry (cached) into ``_mathjax`` so that the book renders math offline;
5. run ``jupyter-book build -W -n --keep-going``: a warning or a broken reference fails the build;
6. check the reader text of every built page (:func:`.browser_check.reader_text_problems`: no "spec" or "§", no
   words about how the work was done, no code name outside a code span, no raw Python value): a hit fails the
   build, naming the page and the phrase.

Page layout (:func:`.pages.book_page`), top to bottom: the title; **the result**: a reading of 3–5 sentences (per
claim its headline verdict, the deciding measurement on this page and the pass rule; whether the rule was amended)
above the page's **key figure** (:func:`.pages.key_figure`: the first figure of the section that tests the page's
first claim; it keeps its number, a pointer stays where it was); a **results box** per claim the page records (the
paper's statement from ``book/claims.yml``, what was tested, the paper's and the measured value, the
criterion, a verdict badge and the computed reason); the page's own introduction (claims, theory
references, open choices: the methods), folded; then the notebook, with every code cell folded (``hide-input``), every
figure numbered and captioned, stray reprs removed and printouts over :data:`MAX_PRINT_LINES` lines folded;
the provenance box last, folded.

**Figure captions** (first rule that applies, per figure):

1. the code cell's metadata ``mystnb.figure.caption`` (a notebook can set its own caption);
2. when the nearest markdown cell above the figure's code cell opens with a ``##`` heading (it introduces the
   section the figure belongs to): that heading and the first sentence of the text under it;
3. else the figure's own titles (``suptitle``, axes titles) from the figure audit that
   ``rlvr_dynamics.plotting.use_style()`` attaches (:data:`FIGURE_AUDIT_MIME`);
4. else the registry's ``figure`` field (what the page mirrors), with "figure i of n" when the page has several.

Figures are numbered per page by the build ("Figure <page>.<n>", :func:`.markup.page_numbers`) and named
``fig-<notebook>-<n>``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path


from .._io import atomic_write_text
from ..paths import BOOK_DIR, OFFLINE_ENV, cache_dir
from .explorer import write_explorer_data
from .markup import GENERATED, load_verdicts, per_claim
from .pages import make_pages
from .findings import practice_markdown
from .reader_copies import write_reader_copies
from .site_pages import (appendix_markdown, landing_markdown, paper_pages_markdown, scorecard_markdown,
                         write_downloads, write_scorecard_downloads, gallery_markdown, write_headline_figures,
                         write_toc)
from .registry import (PAPERS, NotebookEntry, copy_stored, executed_is_current,
                       load_registry, run_notebook)


MATHJAX_VERSION = "3.2.2"
"""MathJax release taken from the npm registry (``npm pack mathjax@3.2.2``) at build time."""
MATHJAX_PARTS = ("tex-svg.js", "input/tex/extensions", "ui", "a11y", "sre")
"""Files under ``es5/`` the book needs: the combined TeX→SVG component, TeX extensions, menu and a11y modules."""

def ensure_mathjax(book_dir: Path) -> Path:
    """Unpack MathJax (``npm pack``, cached in ``cache_dir()``) into ``<book>/_mathjax/mathjax``; return that folder."""
    target = book_dir / "_mathjax" / "mathjax"
    if (target / "tex-svg.js").exists():
        return target
    cache_dir().mkdir(parents=True, exist_ok=True)
    tgz = cache_dir() / f"mathjax-{MATHJAX_VERSION}.tgz"
    if not tgz.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed once to fetch MathJax from the npm registry (apt-get install npm)")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([npm, "pack", f"mathjax@{MATHJAX_VERSION}", "--silent"], cwd=tmp, check=True,
                           capture_output=True)
            shutil.move(str(next(Path(tmp).glob("mathjax-*.tgz"))), tgz)
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(tgz) as tar:
        tar.extractall(tmp, filter="data")
        es5 = Path(tmp) / "package" / "es5"
        staging = Path(tmp) / "out"
        for part in MATHJAX_PARTS:
            src = es5 / part
            if src.is_dir():
                shutil.copytree(src, staging / part)
            elif src.exists():
                (staging / part).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, staging / part)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging), target)
    return target


def prepare_notebooks(book_dir: Path, entries: list[NotebookEntry], execute: str = "stale",
                      progress: bool = True) -> list[str]:
    """Make ``<book>/executed`` hold one executed copy per registered notebook; return the ids (re)made."""
    if execute not in ("stale", "all", "none"):
        raise ValueError(f"execute must be 'stale', 'all' or 'none', got {execute!r}")
    out_dir = book_dir / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    keep = {e.id for e in entries}
    for path in out_dir.glob("*"):  # drop pages of notebooks that left the registry
        if path.name.split(".")[0] not in keep:
            path.unlink()
    made = []
    for i, e in enumerate(entries, 1):
        if execute == "none":
            copy_stored(e, out_dir)
            made.append(e.id)
        elif execute == "all" or not executed_is_current(e, out_dir):
            print(f"[{i}/{len(entries)}] executing {e.id} …", flush=True)
            run_notebook(e, store=False, out_dir=out_dir, progress=progress)
            made.append(e.id)
        else:
            refresh_markdown(e, out_dir)
    return made


def refresh_markdown(entry: NotebookEntry, out_dir: Path) -> bool:
    """Give a current executed copy (same code, see :func:`.registry.executed_is_current`) the notebook's current
    Markdown cells: a change of prose needs no re-execution, but must reach the book. Code cells and their outputs
    stay as executed. Returns whether the copy changed; a copy whose code cells do not line up is left alone."""
    import nbformat

    path = out_dir / f"{entry.id}.ipynb"
    raw = out_dir / f"{entry.id}.raw.ipynb"
    done = nbformat.read(path, as_version=4)
    if done.metadata.get("rlvr_dynamics", {}).get("book_page"):   # a book page: its untransformed copy is the raw
        if not raw.exists():
            return False
        path, done = raw, nbformat.read(raw, as_version=4)
    source = nbformat.read(entry.path, as_version=4)
    tags = lambda c: c.metadata.get("tags", [])  # noqa: E731
    provenance = [c for c in done.cells if "provenance" in tags(c)]
    injected = [c for c in done.cells if "injected-parameters" in tags(c)]
    code = [c for c in done.cells if c.cell_type == "code" and "injected-parameters" not in tags(c)]
    src_code = [c for c in source.cells if c.cell_type == "code"]
    if len(code) != len(src_code) or any(a.source != b.source for a, b in zip(code, src_code)):
        return False
    cells, k = [], 0
    for c in source.cells:
        if c.cell_type == "code":
            cells.append(code[k])
            k += 1
            if "parameters" in tags(c):
                cells += injected
        else:
            cells.append(c)
    cells[1:1] = provenance
    if [(c.cell_type, c.source) for c in cells] == [(c.cell_type, c.source) for c in done.cells]:
        return False
    done.cells = cells
    atomic_write_text(path, nbformat.writes(done) + "\n")
    if path == raw:   # the page is rewritten from the raw copy by make_pages
        atomic_write_text(out_dir / f"{entry.id}.ipynb", nbformat.writes(done) + "\n")
    return True


def write_generated(book_dir: Path, entries: list[NotebookEntry]) -> None:
    """Pages, TOC, scorecard, appendix, landing results, downloads and explorer data (after the notebooks)."""
    rows = load_verdicts(book_dir / "executed")
    ids = {e.id for e in entries}
    rows = [r for r in rows if r["notebook"] in ids]
    verdicts = per_claim(rows, entries)
    by_claim = {c["id"]: c for c in verdicts}
    make_pages(book_dir, entries, rows, by_claim)
    write_toc(book_dir, entries, rows)
    gen = book_dir / GENERATED
    atomic_write_text(book_dir / "scorecard.md", scorecard_markdown(rows, entries))
    for paper in PAPERS:
        atomic_write_text(gen / f"claims-{paper.lower()}.md", appendix_markdown(paper, verdicts, entries))
        atomic_write_text(gen / f"{paper.lower()}-pages.md", paper_pages_markdown(paper, entries, rows))
    headline = write_headline_figures(book_dir, entries)
    atomic_write_text(gen / "landing.md", landing_markdown(verdicts, entries, rows, headline))
    write_downloads(book_dir, entries)
    write_scorecard_downloads(book_dir, verdicts)
    atomic_write_text(gen / "gallery.md", gallery_markdown(book_dir, entries, rows))
    atomic_write_text(gen / "practice.md", practice_markdown(book_dir, [r for v in verdicts for r in v["evidence"]],
                                                             verdicts))
    write_explorer_data(book_dir)
    write_reader_copies(book_dir)


def build_book(book_dir: Path = BOOK_DIR, execute: str = "stale", progress: bool = True,
               builder: str = "html") -> Path:
    """Prepare notebooks, pages, TOC, scorecard and MathJax, then build; return the HTML folder. Raises on a
    failed build."""
    book_dir = Path(book_dir)
    entries = load_registry()
    prepare_notebooks(book_dir, entries, execute=execute, progress=progress)
    write_generated(book_dir, entries)
    ensure_mathjax(book_dir)
    env = {**os.environ, **OFFLINE_ENV}
    args = ["build", str(book_dir), "--builder", builder, "-W", "-n", "--keep-going"]
    print("$ jupyter-book", " ".join(args), flush=True)
    # jupyter-book's command line with the garbage collector off (:mod:`._jupyter_book`: 22 % of the build)
    proc = subprocess.run([sys.executable, "-m", "rlvr_dynamics.book._jupyter_book", *args], env=env,
                          capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    atomic_write_text(book_dir / "_build" / "build.log", log)
    if proc.returncode != 0:
        warnings = [ln for ln in log.splitlines() if "WARNING" in ln or "ERROR" in ln]
        raise RuntimeError("jupyter-book build failed (warnings are errors):\n" + "\n".join(warnings[-30:] or
                                                                                           log.splitlines()[-30:]))
    html = book_dir / "_build" / "html"
    if builder == "html":
        from .browser_check import reader_text_problems
        problems = reader_text_problems(html)
        if problems:
            raise RuntimeError("the book's reader text breaks the reader-text rules "
                               "(rlvr_dynamics.book.browser_check.READER_TEXT_RULES):\n" + "\n".join(
                                   f"{page}: {p}" for page, ps in problems.items() for p in ps))
    return html
