"""Build the Jupyter Book (v1, execution off) from the registry: reader-first pages, scorecard, landing page.

``build_book`` is what ``rlvr-dynamics book`` (and so ``make book``) runs:

1. make sure every registered notebook has an executed copy in ``<book>/executed`` (``execute="stale"``: run the
   ones that are missing or whose code changed, keeping copies a user made with other parameters;
   ``"all"``: rerun everything at defaults; ``"none"``: copy the committed, already executed notebooks);
2. turn each executed copy into a book page (:func:`book_page`, a build-time transform: the notebooks themselves
   need no edits). The untransformed copy is kept as ``executed/<id>.raw.ipynb``;
3. write ``_toc.yml``, the chapter pages, the scorecard (one row per claim), the claims appendix (one page per
   paper, an anchor per claim), the landing page's results (``_generated/landing.md``, included by ``intro.md``),
   the downloads page and the explorer's precomputed data;
4. unpack MathJax 3 from the npm registry (cached) into ``_mathjax`` so that the book renders math offline;
5. run ``jupyter-book build -W -n --keep-going``: a warning or a broken reference fails the build.

Page layout (:func:`book_page`), top to bottom: the title; a **results box** per claim the page records (the
paper's statement from ``book/claims.yml``, what was tested, the paper's and the measured value, the
pre-registered criterion, a verdict badge and the computed reason); the page's own introduction (claims, spec
references, open choices: the methods); then the notebook, with every code cell folded (``hide-input``), every
figure numbered and captioned, stray reprs removed and printouts over :data:`MAX_PRINT_LINES` lines folded;
the provenance box last, folded.

**Figure captions** (first rule that applies, per figure):

1. the code cell's metadata ``mystnb.figure.caption`` (a notebook can set its own caption);
2. when the nearest markdown cell above the figure's code cell opens with a ``##`` heading (it introduces the
   section the figure belongs to): that heading and the first sentence of the text under it;
3. else the figure's own titles (``suptitle``, axes titles) from the figure audit that
   ``rlvr_dynamics.plotting.use_style()`` attaches (:data:`FIGURE_AUDIT_MIME`);
4. else the registry's ``figure`` field (what the page mirrors), with "figure i of n" when the page has several.

Figures are numbered by Sphinx (``numfig``) and named ``fig-<notebook>-<n>``.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

import nbformat
import yaml

from .._io import atomic_write_bytes, atomic_write_text
from ..paths import BOOK_DIR, OFFLINE_ENV, RUNS_DIR, cache_dir
from .claims import NOT_TESTED, _claim_sort_key, checklist, claim_verdicts, format_criterion
from .registry import (PAPERS, NotebookEntry, copy_stored, executed_is_current,
                       load_registry, run_notebook)

MATHJAX_VERSION = "3.2.2"
"""MathJax release taken from the npm registry (``npm pack mathjax@3.2.2``) at build time."""
MATHJAX_PARTS = ("tex-svg.js", "input/tex/extensions", "ui", "a11y", "sre")
"""Files under ``es5/`` the book needs: the combined TeX→SVG component, TeX extensions, menu and a11y modules."""
STATIC_PAGES = ("intro", "p1/index", "p2/index", "rerun", "own-runs", "explorer", "diagnose")
"""Hand-written pages of the book (``book/<page>.md``); those beyond the landing and part pages are listed in the
"Results and tools" part of the TOC."""
GENERATED = "_generated"
"""Folder (under the book) of everything the build writes; wiped at each build."""
VERDICT_ORDER = ("PASS", "PARTIAL", "FAIL", "CONSISTENT", "INCONCLUSIVE", "N/A", NOT_TESTED)
"""Order in which verdicts are counted and listed."""
VERDICT_HELP = {
    "PASS": "the pre-registered criterion is met",
    "PARTIAL": "the criterion is met in part",
    "FAIL": "the criterion is not met",
    "CONSISTENT": "holds by construction here: a consistency check, never evidence for a PASS",
    "INCONCLUSIVE": "the test here could not have shown the effect",
    "N/A": "needs what this machine lacks (GPU-scale models)",
    NOT_TESTED: "no page records this claim",
}
MAX_PRINT_LINES = 10
"""Printed outputs longer than this are folded on the page."""
FIGURE_AUDIT_MIME = "application/vnd.rlvr-dynamics.figure-audit+json"
"""Mime type of the figure audit (``rlvr_dynamics.plotting.AUDIT_MIME``); stripped from the pages."""
_JUNK_REPR = re.compile(r"^\s*(\[?<(matplotlib|mpl_toolkits)\.|<Figure size|Text\(|\[?\{'id':|"
                        r"\[<matplotlib|<Axes)")


def slug(text: str) -> str:
    """``"The oscillator model"`` → ``"the-oscillator-model"``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def chapters(entries: Iterable[NotebookEntry]) -> dict[str, list[tuple[str, list[NotebookEntry]]]]:
    """``{paper: [(chapter, [entries…]), …]}``, chapters ordered by their first entry."""
    grouped: dict[str, dict[str, list[NotebookEntry]]] = defaultdict(dict)
    for e in entries:
        grouped[e.paper].setdefault(e.chapter, []).append(e)
    return {p: list(grouped[p].items()) for p in PAPERS if p in grouped}


# ---------------------------------------------------------------------------------------------------------------
# Small Markdown helpers
# ---------------------------------------------------------------------------------------------------------------

def badge(verdict: str) -> str:
    """Inline HTML verdict badge: ``<span class="verdict-badge verdict-pass" title="…">PASS</span>``."""
    cls = "verdict-" + slug(verdict)
    return (f'<span class="verdict-badge {cls}" title="{VERDICT_HELP.get(verdict, "")}">'
            f'{verdict}</span>')


def md_escape(text: Any) -> str:
    """Text recorded by a notebook, safe inside Markdown (no accidental emphasis, math, roles or tables)."""
    if text is None:
        return "–"
    out = str(text).replace("\\", "\\\\")
    for ch in "*_[]<>$|`{}#":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


def md_code(value: Any) -> str:
    """A value as inline code (``–`` for None)."""
    if value is None:
        return "–"
    text = str(value).replace("`", "'").replace("\n", " ")
    return f"`{text}`"


def claim_label(cid: str) -> str:
    return "claim-" + cid.lower()


def claim_ref(cid: str) -> str:
    """``{ref}`P1-C3 <claim-p1-c3>``` — a link to the claim's entry in the claims appendix."""
    return f"{{ref}}`{cid} <{claim_label(cid)}>`"


def spec_label(paper: str) -> str:
    return f"spec-sections-{paper.lower()}"


_PROTECTED = re.compile(r"(\$\$.*?\$\$|\$[^$\n]*\$|```.*?```|~~~.*?~~~|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|"
                        r"\{[a-z:-]+\}`[^`]*`|^#+ [^\n]*$|^\([^)\n]*\)=$|<[^>\n]+>|^:[a-z-]+:.*$)",
                        re.S | re.M)
_CLAIM_ID = re.compile(r"\b(P[12]-C\d+)\b")
_SECTION = re.compile(r"§\s?(\d+(?:\.\d+)*(?:\s?[–-]\s?\d+(?:\.\d+)*)?)")


def link_references(markdown: str, paper: str) -> str:
    """Link claim IDs (``P1-C3``) to the claims appendix and spec references (``§3.5``) to its section table.

    Math, code, existing links, roles, headings and HTML are left untouched.
    """
    known = checklist()
    parts = _PROTECTED.split(markdown)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 1 or not part:  # protected span
            out.append(part)
            continue
        part = _CLAIM_ID.sub(lambda m: claim_ref(m.group(1)) if m.group(1) in known else m.group(1), part)
        part = _SECTION.sub(lambda m: f"{{ref}}`§{m.group(1)} <{spec_label(paper)}>`", part)
        out.append(part)
    return "".join(out)


def first_sentence(text: str, max_chars: int = 320) -> str:
    """The first sentence of ``text`` (periods inside ``$…$`` math and decimals do not end it)."""
    text = " ".join(text.split())
    in_math = False
    for i, ch in enumerate(text):
        if ch == "$":
            in_math = not in_math
        elif ch in ".!?" and not in_math and (i + 1 == len(text) or text[i + 1] == " "):
            if i + 2 < len(text) and not text[i + 2].isupper() and text[i + 2] not in "($*`":
                continue
            return text[: i + 1]
    return text if len(text) <= max_chars else text


# ---------------------------------------------------------------------------------------------------------------
# Verdicts
# ---------------------------------------------------------------------------------------------------------------

def load_verdicts(claims_dir: Path) -> list[dict]:
    """Every recorded claim row in ``claims_dir/*.claims.json``, with its notebook id."""
    rows = []
    for path in sorted(Path(claims_dir).glob("*.claims.json")):
        data = json.loads(path.read_text())
        for row in data["claims"]:
            rows.append({**row, "notebook": data["notebook"]})
    return rows


def per_claim(rows: list[dict], registered: Iterable[NotebookEntry]) -> list[dict]:
    """One verdict per claim (:func:`rlvr_dynamics.book.claims.claim_verdicts`) over the registered notebooks."""
    ids = {e.id for e in registered}
    return claim_verdicts([r for r in rows if r["notebook"] in ids])


CRITERION_FIELDS = (("statistic", "Statistic"), ("threshold", "Pass if"), ("partial", "Partial if"),
                    ("inconclusive_if", "Inconclusive if"), ("tolerance", "Tolerance"), ("seeds", "Seeds"))
"""Fields of a pre-registered criterion (``book/claims.yml``) in the order the book shows them."""


def criterion_fields(cid: str) -> list[tuple[str, str]]:
    """The pre-registered criterion of a claim as ``[(label, markdown), …]``: the fields of its ``criterion``
    dict (escaped plain text), else the spec's ``confirm`` line (which may hold math)."""
    info = checklist()[cid]
    crit = info.get("criterion")
    if isinstance(crit, dict):
        out = []
        for key, label in CRITERION_FIELDS:
            value = crit.get(key)
            if value not in (None, ""):
                text = re.sub(r"^(PASS|PARTIAL|INCONCLUSIVE):\s*", "", str(value))
                out.append((label, md_escape(text)))
        if out:
            return out
    if isinstance(crit, str) and crit.strip():
        return [("Criterion", md_escape(crit))]
    return [("Pass if", info.get("confirm") or "–")]


def criterion_text(cid: str, verdict: dict | None = None) -> str:
    """The short form of a claim's criterion: its pass rule (``threshold``), else the whole criterion."""
    fields = dict(criterion_fields(cid))
    return fields.get("Pass if") or format_criterion(checklist()[cid].get("criterion")) or "–"


def statement_text(cid: str) -> str:
    """The claim as the paper states it (``paper_statement``, escaped), else the spec's checklist line (math)."""
    info = checklist()[cid]
    if info.get("paper_statement"):
        return md_escape(str(info["paper_statement"]).strip())
    return (info.get("statement") or "").strip()


# ---------------------------------------------------------------------------------------------------------------
# Notebook → book page
# ---------------------------------------------------------------------------------------------------------------

def results_box(entry: NotebookEntry, rows: list[dict], verdicts: dict[str, dict]) -> str:
    """The results box at the top of a page: one block per claim the page records."""
    mine = {r["id"]: r for r in rows if r["notebook"] == entry.id}
    order = [c for c in entry.claims if c in mine] + [c for c in mine if c not in entry.claims]
    lines = [f":::{{admonition}} Results on this page",
             ":class: rlvr-results", ""]
    if not order:
        lines += ["No verdict recorded for this page yet (run `rlvr-dynamics run "
                  f"{entry.id}`).", ":::"]
        return "\n".join(lines)
    for cid in order:
        r = mine[cid]
        overall = verdicts.get(cid, {})
        lines.append(f"{badge(r['verdict'])} **{claim_ref(cid)}** · {statement_text(cid)}")
        lines.append("")
        lines.append(f"- *Tested here:* {md_escape(r.get('statement'))}"
                     + (" *(context: not the paper's setting)*" if r.get("context") else ""))
        values = [f"*{label}:* {md_code(r.get(key))}" for key, label in
                  (("paper_value", "Paper / closed form"), ("measured", "measured"), ("tolerance", "tolerance"))
                  if r.get(key) is not None]
        if values:
            lines.append("- " + " · ".join(values))
        fields = criterion_fields(cid)
        lines.append(f"- *Pre-registered criterion:* " + "; ".join(
            f"{label.lower()}: {text}" for label, text in fields if label in ("Statistic", "Pass if")))
        if r.get("reason"):
            lines.append(f"- *Why this verdict:* {md_escape(r['reason'])}")
        n_pages = len({e['notebook'] for e in overall.get('evidence', [])})
        if n_pages > 1:
            lines.append(f"- *Overall verdict over the {n_pages} pages that test {cid}:* "
                         f"{badge(overall['verdict'])} (see the {{doc}}`scorecard </scorecard>`)")
        lines.append("")
    lines.append(":::")
    return "\n".join(lines)


def _is_image(out: dict) -> bool:
    return out.get("output_type") in ("display_data", "execute_result") and any(
        k.startswith("image/") for k in out.get("data", {}))


def _is_junk(out: dict, claims_cell: bool) -> bool:
    """A stray output: matplotlib reprs, a figure that did not render, the claims list, stderr."""
    kind = out.get("output_type")
    if kind == "stream":
        return out.get("name") == "stderr"
    if kind in ("display_data", "execute_result"):
        data = {k: v for k, v in out.get("data", {}).items() if k != FIGURE_AUDIT_MIME}
        if set(data) <= {"text/plain"}:
            text = data.get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            return (not text.strip() or bool(_JUNK_REPR.match(text)) or bool(re.search(r" at 0x[0-9a-f]+>", text))
                    or (kind == "execute_result" and claims_cell))
    return False


def _output_lines(outs: list[dict]) -> int:
    n = 0
    for o in outs:
        if o.get("output_type") == "stream":
            text = o.get("text", "")
            n += ("".join(text) if isinstance(text, list) else text).count("\n")
        else:
            text = o.get("data", {}).get("text/plain", "")
            n += ("".join(text) if isinstance(text, list) else text).count("\n") + 1
    return n


def figure_captions(nb: Any, entry: NotebookEntry) -> list[str]:
    """One caption per image output, in order (rules in the module docstring)."""
    title_idx = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), None)
    figures = []  # (explicit caption or None, preceding markdown index, figure audit or None)
    last_md = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            last_md = i
            continue
        if cell.cell_type != "code":
            continue
        explicit = (cell.metadata.get("mystnb", {}).get("figure", {}) or {}).get("caption")
        for o in cell.get("outputs", []):
            if _is_image(o):
                figures.append((explicit, last_md, o.get("data", {}).get(FIGURE_AUDIT_MIME)))
    captions = []
    for n, (explicit, md, audit) in enumerate(figures):
        if explicit:
            captions.append(str(explicit))
            continue
        text = nb.cells[md].source.strip() if md is not None and md != title_idx else ""
        m = re.match(r"#{2,4}\s+(.+?)\s*(?:\n|$)(.*)", text, re.S)
        titles = []
        if isinstance(audit, dict):
            titles = [audit.get("suptitle") or ""] + [ax.get("title") or "" for ax in audit.get("axes", [])]
            titles = [t for t in dict.fromkeys(t.strip() for t in titles) if t]
        if m:
            heading, body = m.group(1).strip(), m.group(2).strip()
            sentence = first_sentence(body.split("\n\n")[0]) if body else ""
            cap = heading.rstrip(".") + "." + (" " + sentence if sentence else "")
        elif titles:
            cap = "; ".join(titles) + "."
        else:
            cap = entry.figure + (f" (figure {n + 1} of {len(figures)} on this page)" if len(figures) > 1 else "")
        captions.append(cap[0].upper() + cap[1:] if cap else entry.title)
    return captions


def book_page(nb: Any, entry: NotebookEntry, rows: list[dict], verdicts: dict[str, dict]) -> Any:
    """The book page for one executed notebook (layout in the module docstring); returns a new notebook."""
    nb = copy.deepcopy(nb)
    captions = figure_captions(nb, entry)
    cells = list(nb.cells)
    provenance = [c for c in cells if "provenance" in c.metadata.get("tags", [])]
    cells = [c for c in cells if "provenance" not in c.metadata.get("tags", [])]
    out_cells: list[Any] = []
    title_done = False
    fig_no = 0
    mine = {r["id"]: r for r in rows if r["notebook"] == entry.id}
    section_claims: list[str] = []
    noted: set[str] = set()
    for cell in cells:
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            src = cell.source
            heading = re.match(r"\s*#{2,4}\s+([^\n]+)", src)
            if heading:
                section_claims = [c for c in _CLAIM_ID.findall(heading.group(1)) if c in mine]
            if not title_done:
                title_done = True
                m = re.match(r"\s*(#\s+[^\n]+)\n?(.*)", src, re.S)
                title, rest = (m.group(1), m.group(2).strip()) if m else (f"# {entry.title}", src.strip())
                out_cells.append(nbformat.v4.new_markdown_cell(title))
                box = nbformat.v4.new_markdown_cell(results_box(entry, rows, verdicts))
                box.metadata["tags"] = ["rlvr-results"]
                out_cells.append(box)
                if rest:
                    out_cells.append(nbformat.v4.new_markdown_cell(link_references(rest, entry.paper)))
                continue
            cell.source = link_references(src, entry.paper)
            out_cells.append(cell)
            continue
        if cell.cell_type != "code":
            out_cells.append(cell)
            continue
        claims_cell = "claims.record(" in cell.source
        outs = []
        for o in cell.get("outputs", []):
            if _is_junk(o, claims_cell):
                continue
            o = copy.deepcopy(o)
            if "data" in o:
                o["data"].pop(FIGURE_AUDIT_MIME, None)
            outs.append(o)
        # split the outputs into runs of text and single figures, each in its own cell
        pieces: list[tuple[str, list]] = []
        for o in outs:
            if _is_image(o):
                pieces.append(("figure", [o]))
            elif pieces and pieces[-1][0] == "text":
                pieces[-1][1].append(o)
            else:
                pieces.append(("text", [o]))
        cell.metadata["tags"] = sorted(set(tags) | {"hide-input"})
        cell.metadata.pop("mystnb", None)
        cell.outputs = []
        out_cells.append(cell)
        for kind, group in pieces:
            if (kind == "text" and out_cells[-1] is cell and not cell.outputs and not claims_cell
                    and _output_lines(group) <= MAX_PRINT_LINES):
                cell.outputs = group  # short printout: stays with its cell
                continue
            extra = nbformat.v4.new_code_cell("# output of the cell above (book layout)")  # empty cells are skipped
            extra.outputs = group
            extra.metadata["tags"] = ["remove-input"]
            if kind == "figure":
                fig_no += 1
                extra.metadata["mystnb"] = {"figure": {
                    "caption": captions[fig_no - 1] if fig_no <= len(captions) else entry.title,
                    "name": f"fig-{entry.id.replace('_', '-')}-{fig_no}"}}
                extra.metadata["tags"].append("rlvr-figure")
            elif claims_cell or _output_lines(group) > MAX_PRINT_LINES:
                extra.metadata["tags"].append("hide-output")
            out_cells.append(extra)
            if kind == "figure":
                todo = [c for c in section_claims if c not in noted]
                if todo:
                    noted.update(todo)
                    out_cells.append(_verdict_note(todo, mine, fig_no))
    out_cells = _merge_quiet_code(out_cells)
    for cell in provenance:
        src = cell.source.replace(":class: note\n", ":class: note dropdown\n", 1)
        downloads = (f"\nDownloads: {{download}}`executed notebook </{GENERATED}/downloads/{entry.id}.ipynb>` · "
                     f"{{download}}`verdicts (JSON) </{GENERATED}/downloads/{entry.id}.claims.json>` · "
                     "committed runs and figures: "
                     f"{{doc}}`downloads </{GENERATED}/downloads>`.\n")
        src = src.rstrip()
        if src.endswith("```"):
            src = src[:-3].rstrip() + "\n" + downloads + "```"
        cell.source = src
        out_cells.append(cell)
    nb.cells = out_cells
    nb.metadata.setdefault("rlvr_dynamics", {})["book_page"] = True
    return nb


def _verdict_note(claim_ids: list[str], mine: dict[str, dict], fig_no: int) -> Any:
    """A short "what this figure shows" note after a figure whose section tests a claim: the recorded verdict,
    the measured value against the paper's and the computed reason."""
    lines = []
    for cid in claim_ids:
        r = mine[cid]
        vals = [f"measured {md_code(r.get('measured'))}"] if r.get("measured") is not None else []
        if r.get("paper_value") is not None:
            vals.append(f"paper / closed form {md_code(r.get('paper_value'))}")
        lines.append(f"{badge(r['verdict'])} **What figure {fig_no} shows for {claim_ref(cid)}:** "
                     + (", ".join(vals) + ". " if vals else "")
                     + (md_escape(r.get("reason")) if r.get("reason") else md_escape(r.get("statement"))))
    cell = nbformat.v4.new_markdown_cell("\n\n".join(lines))
    cell.metadata["tags"] = ["rlvr-figure-note"]
    return cell


def _merge_quiet_code(cells: list[Any]) -> list[Any]:
    """Join runs of folded code cells that show nothing into one cell (one "show code" toggle, not five)."""
    out: list[Any] = []
    for cell in cells:
        prev = out[-1] if out else None
        quiet = (cell.cell_type == "code" and not cell.get("outputs")
                 and "remove-input" not in cell.metadata.get("tags", []))
        if (quiet and prev is not None and prev.cell_type == "code" and not prev.get("outputs")
                and "remove-input" not in prev.metadata.get("tags", [])):
            prev.source = prev.source.rstrip() + "\n\n" + cell.source
            prev.metadata["tags"] = sorted(set(prev.metadata.get("tags", [])) | set(cell.metadata.get("tags", [])))
            continue
        out.append(cell)
    return out


def make_pages(book_dir: Path, entries: list[NotebookEntry], rows: list[dict], verdicts: dict[str, dict]) -> None:
    """Rewrite ``executed/<id>.ipynb`` as its book page; the untransformed copy stays as ``<id>.raw.ipynb``."""
    out_dir = book_dir / "executed"
    for e in entries:
        page, raw = out_dir / f"{e.id}.ipynb", out_dir / f"{e.id}.raw.ipynb"
        nb = nbformat.read(page, as_version=4)
        if nb.metadata.get("rlvr_dynamics", {}).get("book_page"):
            nb = nbformat.read(raw, as_version=4)
        else:
            atomic_write_text(raw, nbformat.writes(nb) + "\n")
        atomic_write_text(page, nbformat.writes(book_page(nb, e, rows, verdicts)) + "\n")


def page_figures(book_dir: Path, entry: NotebookEntry) -> list[tuple[bytes, dict | None]]:
    """The PNG figures of a page's executed notebook, in order, each with its figure audit (or None)."""
    import base64
    raw = book_dir / "executed" / f"{entry.id}.raw.ipynb"
    path = raw if raw.exists() else book_dir / "executed" / f"{entry.id}.ipynb"
    nb = nbformat.read(path, as_version=4)
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            png = o.get("data", {}).get("image/png") if _is_image(o) else None
            if png:
                audit = o.get("data", {}).get(FIGURE_AUDIT_MIME)
                out.append((base64.b64decode("".join(png) if isinstance(png, list) else png),
                            audit if isinstance(audit, dict) else None))
    return out


def page_images(book_dir: Path, entry: NotebookEntry) -> list[bytes]:
    """The PNG figures of a page's executed notebook, in order."""
    return [png for png, _ in page_figures(book_dir, entry)]


def figure_data_csv(audit: dict) -> str | None:
    """The data plotted in one figure (its audit's ``series``) as a long CSV: axes, kind, label, x, y."""
    import csv
    import io
    series = audit.get("series") if isinstance(audit, dict) else None
    if not series:
        return None
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["axes", "kind", "label", "x", "y"])
    for sr in series:
        for x, y in zip(sr.get("x", []), sr.get("y", [])):
            writer.writerow([sr.get("axes"), sr.get("kind"), sr.get("label", ""),
                             "" if x is None else x, "" if y is None else y])
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------------------------
# Generated pages: TOC, chapters, scorecard, claims appendix, landing, downloads
# ---------------------------------------------------------------------------------------------------------------

def page_badges(entry: NotebookEntry, rows: list[dict]) -> str:
    """``P1-C2 PARTIAL · P1-C3 PASS`` with badges, for the claims one page records."""
    mine = {r["id"]: r for r in rows if r["notebook"] == entry.id}
    return " ".join(f"{claim_ref(c)}&nbsp;{badge(mine[c]['verdict'])}" if c in mine
                    else f"{claim_ref(c)}&nbsp;{badge(NOT_TESTED)}" for c in entry.claims)


def write_toc(book_dir: Path, entries: list[NotebookEntry], rows: list[dict] | None = None) -> Path:
    """Generate ``_toc.yml`` and the chapter pages ``_generated/<paper>-<chapter>.md`` (pages with badges)."""
    rows = rows or []
    gen = book_dir / GENERATED
    if gen.exists():
        shutil.rmtree(gen)
    gen.mkdir(parents=True)
    parts = []
    for paper, chaps in chapters(entries).items():
        chapter_items = [{"file": f"{paper.lower()}/index"}]
        for chapter, items in chaps:
            name = f"{paper.lower()}-{slug(chapter)}"
            lines = [f"# {chapter}\n", "| page | claims and verdicts | mirrors | spec |", "|---|---|---|---|"]
            for e in items:
                lines.append(f"| {{doc}}`{e.title} <../executed/{e.id}>` | {page_badges(e, rows)} | "
                             f"{md_escape(e.figure)} | {e.section} |")
            atomic_write_text(gen / f"{name}.md", "\n".join(lines) + "\n")
            chapter_items.append({"file": f"{GENERATED}/{name}",
                                  "sections": [{"file": f"executed/{e.id}"} for e in items]})
        parts.append({"caption": f"{paper} · {PAPERS[paper]}", "chapters": chapter_items})
    tools = ["scorecard", "explorer", *(f"{GENERATED}/claims-{p.lower()}" for p in PAPERS), f"{GENERATED}/downloads",
             "rerun", "own-runs"]
    # every other static page (STATIC_PAGES) that exists joins the tools part, in STATIC_PAGES order
    tools += [p for p in STATIC_PAGES if p not in tools and p not in ("intro", "p1/index", "p2/index")
              and (book_dir / f"{p}.md").exists()]
    parts.append({"caption": "Results and tools", "chapters": [{"file": f} for f in tools]})
    toc = {"format": "jb-book", "root": "intro", "parts": parts}
    return atomic_write_text(book_dir / "_toc.yml",
                             "# Generated by rlvr_dynamics.book.build from notebooks/registry; do not edit.\n"
                             + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))


def _counts_table(verdicts: list[dict]) -> list[str]:
    present = [v for v in VERDICT_ORDER if any(c["verdict"] == v for c in verdicts)]
    head = "| paper | claims | " + " | ".join(badge(v) for v in present) + " |"
    out = [head, "|---|---:|" + "---:|" * len(present)]
    for paper in PAPERS:
        mine = [c for c in verdicts if c["paper"] == paper]
        counts = Counter(c["verdict"] for c in mine)
        out.append(f"| {paper} · {PAPERS[paper]} | {len(mine)} | "
                   + " | ".join(str(counts.get(v, 0)) for v in present) + " |")
    counts = Counter(c["verdict"] for c in verdicts)
    out.append(f"| **both papers** | **{len(verdicts)}** | "
               + " | ".join(f"**{counts.get(v, 0)}**" for v in present) + " |")
    return out


def _indent(text: str, n: int) -> str:
    return text.replace("\n", "\n" + " " * n)


def scorecard_markdown(rows: list[dict], registered: Iterable[NotebookEntry]) -> str:
    """The scorecard: counts per paper × verdict, then exactly one row per claim (statement, verdict badge,
    measured vs criterion, evidence pages)."""
    registered = list(registered)
    by_id = {e.id: e for e in registered}
    verdicts = per_claim(rows, registered)
    out = ["# Scorecard\n",
           "One row per claim of the two papers, with **one verdict per claim**: the weakest verdict among the "
           "pages that test it in the claim's scope (a FAIL anywhere in scope fails the claim; a by-construction "
           "check is CONSISTENT, never PASS). Each claim links to its statement and pre-registered criterion in "
           "the claims appendix, and to the pages with the evidence. Verdicts are those recorded at the "
           "parameters each page was last executed with (see its provenance box). "
           "**An honest FAIL is worth more than a tuned PASS.**\n",
           *_counts_table(verdicts), "",
           "Badges: " + " · ".join(f"{badge(v)} {VERDICT_HELP[v]}" for v in VERDICT_ORDER) + ".\n",
           "::::{list-table}", ":header-rows: 1", ":class: rlvr-scorecard", ":widths: 34 11 35 20", "",
           "* - Claim", "  - Verdict", "  - Measured vs criterion", "  - Evidence"]
    for c in verdicts:
        cid = c["id"]
        ev = [r for r in c["evidence"] if r["notebook"] in by_id]
        decider = next((r for r in ev if r["verdict"] == c["verdict"] and not r.get("context")), None)
        measured = (f"measured {md_code(c['measured'])}"
                    + (f" vs paper / closed form {md_code(decider.get('paper_value'))}"
                       f" (tolerance {md_code(decider.get('tolerance'))})" if decider else ""))
        cell3 = (f"{measured}<br>*Pass if:* {criterion_text(cid, c)} ({{ref}}`full criterion <{claim_label(cid)}>`)"
                 f"<br><span class=\"rlvr-reason\">*Why:* {md_escape(c['reason'])}</span>")
        pages = []
        for nb_id in dict.fromkeys(r["notebook"] for r in ev):
            r = next(x for x in ev if x["notebook"] == nb_id)
            pages.append(f"{{doc}}`{by_id[nb_id].title} <executed/{nb_id}>` {badge(r['verdict'])}"
                         + (" (context)" if r.get("context") else ""))
        out += [f"* - {claim_ref(cid)} · {statement_text(cid)}",
                f"  - {badge(c['verdict'])}",
                f"  - {_indent(cell3, 4)}",
                "  - " + ("<br>".join(pages) if pages else "–")]
    out.append("::::")
    return "\n".join(out) + "\n"


def appendix_markdown(paper: str, verdicts: list[dict], entries: list[NotebookEntry]) -> str:
    """The claims appendix of one paper: each claim's statement, criterion, verdict and pages, with an anchor."""
    known = checklist()
    mine = [c for c in verdicts if c["paper"] == paper]
    out = [f"# Claims of {paper}: {PAPERS[paper]}\n",
           f"Every numbered claim of {paper}, as the project's spec states it, with the test fixed before the "
           "result was seen (the *criterion*), the verdict over all pages and the pages with the evidence. "
           "Tags: [P] the paper's, [S] secondary, [D] this project's derivation, [?] unknown.\n"]
    by_id = {e.id: e for e in entries}
    for c in mine:
        cid = c["id"]
        info = known[cid]
        out += [f"({claim_label(cid)})=", f"## {cid}", "",
                f"{badge(c['verdict'])} **[{info.get('tag', '?')}]** {statement_text(cid)}", ""]
        if info.get("paper_statement") and info.get("statement") and info["paper_statement"] != info["statement"]:
            out += [f"*Spec checklist line:* {info['statement']}", ""]
        if info.get("quantity"):
            out += [f"*Quantity measured:* {md_escape(info['quantity'])}", ""]
        out += ["*Pre-registered criterion:*", ""]
        out += [f"- *{label}:* {text}" for label, text in criterion_fields(cid)] + [""]
        if c.get("scope") or info.get("scope"):
            out += [f"*Scope:* {md_escape(c.get('scope') or info.get('scope'))}", ""]
        if c.get("changed_after_result"):
            out += [f"*Criterion changed after a result was seen:* {md_escape(c['changed_after_result'])}", ""]
        out += [f"*Scale:* {info.get('scale', '–')}", ""]
        pages = [f"{{doc}}`{by_id[n].title} </executed/{n}>`"
                 for n in dict.fromkeys(r["notebook"] for r in c["evidence"]) if n in by_id]
        out += [f"*Tested on:* {', '.join(pages) if pages else 'no page yet'}. *Why this verdict:* "
                f"{md_escape(c['reason'])}", ""]
    out += [f"({spec_label(paper)})=", f"## Spec sections and the pages that mirror them", "",
            f"The pages cite sections (§) of the project's technical spec of {paper} (not public here); this "
            "table says which page tests which section.", "",
            "| spec section | page | claims |", "|---|---|---|"]
    for e in entries:
        if e.paper == paper:
            out.append(f"| {e.section} | {{doc}}`{e.title} </executed/{e.id}>` | "
                       f"{', '.join(claim_ref(x) for x in e.claims)} |")
    return "\n".join(out) + "\n"


def landing_markdown(verdicts: list[dict], entries: list[NotebookEntry], rows: list[dict],
                     headline: dict[str, str]) -> str:
    """The landing page's results (included by ``intro.md``): an abstract computed from the verdicts, the counts
    per paper and a grid of headline figures (``headline``: notebook id → figure path) with verdict badges."""
    counts = Counter(c["verdict"] for c in verdicts)

    def ids(paper: str | None, verdict: str) -> list[str]:
        return [c["id"] for c in verdicts if c["verdict"] == verdict and (paper is None or c["paper"] == paper)]

    def listing(v: str, paper: str) -> str:
        found = ids(paper, v)
        return ", ".join(claim_ref(x) for x in found)

    n = len(verdicts)
    phrases = [("PASS", "**{k} reproduce** as stated (PASS)"), ("PARTIAL", "{k} reproduce in part (PARTIAL)"),
               ("FAIL", "**{k} do not reproduce** (FAIL)"),
               ("CONSISTENT", "{k} are consistency checks that hold by construction of the model used "
                              "(CONSISTENT, never counted as a reproduction)"),
               ("INCONCLUSIVE", "{k} could not have shown the effect in the settings here (INCONCLUSIVE)"),
               ("N/A", "{k} need models or hardware this machine lacks (N/A)"),
               (NOT_TESTED, "{k} are not tested yet")]
    clauses = [p.format(k=counts[v]) for v, p in phrases if counts.get(v)]
    summary = ("; ".join(clauses[:-1]) + " and " + clauses[-1]) if len(clauses) > 1 else "".join(clauses)
    abstract = (f"**In short.** This book tests all {n} claims of the two papers with code you can rerun, at CPU "
                f"scale: closed forms, bandit simulations and small models trained with GRPO on CPUs. Of the {n}, "
                f"{summary}. Claims about GPU-scale models are tested on scaled-down stand-ins or marked N/A; each "
                "page states its setting in its results box and methods.")
    per_paper = []
    for paper in PAPERS:
        bits = []
        for v, words in (("PASS", "reproduce"), ("PARTIAL", "reproduce in part"), ("FAIL", "do not reproduce"),
                         ("INCONCLUSIVE", "are inconclusive here"), ("CONSISTENT", "hold by construction"),
                         ("N/A", "cannot be tested here"), (NOT_TESTED, "are not tested yet")):
            if ids(paper, v):
                bits.append(f"{listing(v, paper)} {words}")
        per_paper.append(f"**{paper} ({PAPERS[paper]}).** " + "; ".join(bits) + ".")
    by_id = {e.id: e for e in entries}
    fail_lines = []
    for c in (c for c in verdicts if c["verdict"] == "FAIL"):
        pages = [f"{{doc}}`{by_id[n].title} <executed/{n}>`" for n in
                 dict.fromkeys(r["notebook"] for r in c["evidence"] if r["verdict"] == "FAIL") if n in by_id]
        fail_lines.append(f"- {badge('FAIL')} {claim_ref(c['id'])} {statement_text(c['id'])} "
                          f"(measured {md_code(c['measured'])}; see {', '.join(pages) or 'the scorecard'})")
    out = ["## Results at a glance", "", abstract, "", *_counts_table(verdicts), "",
           "## Headline figures", "",
           "The first figure of one page per chapter, with the verdicts that page records; click a card to open "
           "the page.", "", "::::{grid} 1 1 2 2", ":gutter: 3", ""]
    for nb_id, img in headline.items():
        e = by_id[nb_id]
        out += [f":::{{grid-item-card}} {e.title}", f":link: executed/{nb_id}", ":link-type: doc",
                f":img-top: {img}", f":img-alt: first figure of {e.title}", ":class-card: rlvr-card", "",
                page_badges(e, rows), ":::", ""]
    out += ["::::", "", "## Claim by claim", "", *(t + "\n" for t in per_paper)]
    if fail_lines:
        out += ["**What does not reproduce here:**", "", *fail_lines, ""]
    out += ["Every verdict, with what was measured and why, is on the {doc}`scorecard`; each claim's statement and "
            "pre-registered criterion are in the claims appendices ("
            + ", ".join(f"{{doc}}`{p} <{GENERATED}/claims-{p.lower()}>`" for p in PAPERS) + ").", ""]
    return "\n".join(out) + "\n"


def paper_pages_markdown(paper: str, entries: list[NotebookEntry], rows: list[dict]) -> str:
    """The list of a paper's pages with their verdict badges (included by ``p1/index.md``, ``p2/index.md``)."""
    out = ["## Pages and verdicts", ""]
    for chapter, items in chapters(entries).get(paper, []):
        out += [f"**{chapter}**", ""]
        for e in items:
            out.append(f"- {{doc}}`{e.title} </executed/{e.id}>` ({e.section}) — {page_badges(e, rows)}")
        out.append("")
    return "\n".join(out) + "\n"


def write_downloads(book_dir: Path, entries: list[NotebookEntry], runs_dir: Path = RUNS_DIR) -> Path:
    """Copy every committed run's ``metrics.csv`` and ``config.json`` and every page's figures into the build,
    and write the downloads page that links them."""
    gen = book_dir / GENERATED
    dl = gen / "downloads"
    out = ["# Downloads", "",
           "Everything behind the book's numbers, as plain files: the logs and configurations of the project's own "
           "GRPO runs (committed under `data/runs/`), and for every page its executed notebook, its verdicts and "
           "its figures at full resolution. Each page's provenance box links its own notebook and verdicts.", ""]
    runs = sorted(p for p in Path(runs_dir).glob("*") if p.is_dir()) if Path(runs_dir).exists() else []
    groups: dict[str, list[Path]] = defaultdict(list)
    for run in runs:
        groups["-".join(run.name.split("-")[:2])].append(run)
    out += [f"## Training runs ({len(runs)})", "",
            "One row per committed run: `metrics.csv` holds one row per optimizer step (reward, its spread, "
            "entropy, gradient norm, gap alignment, evaluation reward, …), `config.json` the full run "
            "configuration.", ""]
    for group, items in groups.items():
        out += [f"### {group}-… ({len(items)} run{'s' if len(items) > 1 else ''})", "", "| run | model | G | learning rate | steps | files |",
                "|---|---|---:|---:|---:|---|"]
        for run in items:
            files = []
            for name in ("metrics.csv", "config.json"):
                if (run / name).exists():
                    target = dl / "runs" / run.name / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(run / name, target)
                    files.append(f"{{download}}`{name} <downloads/runs/{run.name}/{name}>`")
            try:
                cfg = json.loads((run / "config.json").read_text()).get("config", {})
            except (OSError, ValueError):
                cfg = {}
            out.append(f"| `{run.name}` | {md_escape(cfg.get('model', '–'))} | {cfg.get('num_generations', '–')} | "
                       f"{cfg.get('learning_rate', '–')} | {cfg.get('max_steps', '–')} | {' · '.join(files)} |")
        out.append("")
    out += ["## Pages: notebooks, verdicts and figures", "",
            "Each figure as a full-resolution PNG and, for pages executed with the book's figure style, the data it "
            "plots as a CSV (one row per plotted point: axes, line or scatter, legend label, x, y).", "",
            "| page | notebook | verdicts | figures (PNG, data as CSV) |",
            "|---|---|---|---|"]
    for e in entries:
        links = []
        for n, (png, audit) in enumerate(page_figures(book_dir, e), 1):
            target = dl / "figures" / f"{e.id}-fig{n}.png"
            atomic_write_bytes(target, png)
            link = f"{{download}}`figure {n} <downloads/figures/{e.id}-fig{n}.png>`"
            table = figure_data_csv(audit) if audit else None
            if table:
                atomic_write_text(target.with_suffix(".csv"), table)
                link += f" ({{download}}`data <downloads/figures/{e.id}-fig{n}.csv>`)"
            links.append(link)
        dl.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(book_dir / "executed" / f"{e.id}.raw.ipynb", dl / f"{e.id}.ipynb")
        shutil.copyfile(book_dir / "executed" / f"{e.id}.claims.json", dl / f"{e.id}.claims.json")
        out.append(f"| {{doc}}`{e.title} </executed/{e.id}>` | {{download}}`{e.id}.ipynb <downloads/{e.id}.ipynb>` | "
                   f"{{download}}`{e.id}.claims.json <downloads/{e.id}.claims.json>` | "
                   f"{' · '.join(links) or '–'} |")
    return atomic_write_text(gen / "downloads.md", "\n".join(out) + "\n")


def write_headline_figures(book_dir: Path, entries: list[NotebookEntry]) -> dict[str, str]:
    """The first figure of the first page with a figure in every chapter, as ``_generated/figs/<id>.png``."""
    out = {}
    for paper, chaps in chapters(entries).items():
        for _, items in chaps:
            for e in items:
                imgs = page_images(book_dir, e)
                if imgs:
                    atomic_write_bytes(book_dir / GENERATED / "figs" / f"{e.id}.png", imgs[0])
                    out[e.id] = f"{GENERATED}/figs/{e.id}.png"
                    break
    return out


# ---------------------------------------------------------------------------------------------------------------
# The explorer's data (precomputed from the closed forms of rlvr_dynamics.p1)
# ---------------------------------------------------------------------------------------------------------------

EXPLORER_GRID = {
    "eta_k": [round(x, 6) for x in (1e-3 * 10 ** (i / 6) for i in range(13))],  # 1e-3 … 1e-1
    "momentum": [0.0, 0.5, 0.8, 0.9, 0.95, 0.99],
    "refresh_interval": [1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 200, 300, 500, 1000],
    "group_size": [2, 4, 8, 16, 32, 64],
}
"""Slider positions of the explorer page."""


def explorer_data(n_time: int = 120, n_map: int = 60) -> dict[str, Any]:
    """Everything the explorer draws, from :mod:`rlvr_dynamics.p1.oscillator` and :mod:`rlvr_dynamics.p1.sde`.

    For every (μ, ηK, K_ref) of :data:`EXPLORER_GRID`: ζ, the regime, (M, C, K_eff), the unit response
    ``u(t) = e(t)/e0`` on ``n_time`` points up to a horizon of 6 decay times at K_ref = 1 (so curves at different
    K_ref share an axis), and the stationary standard deviation ``sqrt(Var∞(e))`` for every G (only where
    C > 0). Noise strength: D = (ηK)² p*(1 − p*) with p* = 0.8, an illustrative per-rollout Bernoulli noise passed
    through the update gain. Also the regime map on an ``n_map × n_map`` log grid per μ, the threshold
    K·η·K_ref = 1 − μ and the ζ = 1 boundary (oscillation onset).
    """
    import numpy as np

    from ..p1 import oscillator as osc
    from ..p1 import sde

    g = EXPLORER_GRID
    p_star, p0 = 0.8, 0.2
    mus = np.asarray(g["momentum"], float)
    aks = np.asarray(g["eta_k"], float)
    krefs = np.asarray(g["refresh_interval"], float)
    groups = np.asarray(g["group_size"], float)
    out: dict[str, Any] = {"grid": g, "p_star": p_star, "p0": p0, "regimes": list(osc.REGIMES), "curves": {},
                           "maps": {}, "threshold": {}, "onset": {}}
    map_a = np.geomspace(aks[0], aks[-1], n_map)
    map_k = np.geomspace(krefs[0], krefs[-1], n_map)
    out["map_axes"] = {"eta_k": [float(f"{x:.4g}") for x in map_a], "refresh_interval":
                       [float(f"{x:.4g}") for x in map_k]}
    for i, mu in enumerate(mus):
        A, KR = np.meshgrid(map_a, map_k)  # rows: K_ref, columns: ηK
        reg = osc.regime(A, np.full_like(A, mu), np.ones_like(A), KR)
        out["maps"][str(i)] = [[g_idx for g_idx in (list(osc.REGIMES).index(x) for x in row)] for row in reg]
        out["threshold"][str(i)] = [float(f"{x:.5g}") for x in
                                    osc.critical_refresh_interval(map_a, np.full_like(map_a, mu),
                                                                  np.ones_like(map_a))]
        out["onset"][str(i)] = [float(f"{x:.5g}") for x in
                                osc.oscillation_onset(map_a, np.full_like(map_a, mu), np.ones_like(map_a))]
        for j, a in enumerate(aks):
            rate = min(r.real for r in osc.characteristic_roots(a, mu, 1.0, 1.0))
            horizon = float(np.clip(6.0 / rate if rate > 0 else 2000.0, 20.0, 20000.0))
            t = np.linspace(0.0, horizon, n_time)
            for k, kref in enumerate(krefs):
                c = osc.coefficients(a, mu, 1.0, kref)
                zeta = float(osc.damping_ratio(a, mu, 1.0, kref))
                u = np.asarray(osc.unit_response(t, osc.Coefficients(*(np.full_like(t, x) for x in c))))
                reward = np.clip(p_star - (p_star - p0) * u, -0.5, 1.5)
                if c.damping > 0:
                    var = np.asarray(sde.stationary_variance(osc.Coefficients(*(np.full_like(groups, x) for x in c)),
                                                             a * a * p_star * (1 - p_star), groups)[0])
                    sd = [float(f"{x:.4g}") for x in np.sqrt(var)]
                else:
                    sd = None
                out["curves"][f"{i}_{j}_{k}"] = {
                    "zeta": float(f"{zeta:.4g}"), "regime": str(osc.regime(a, mu, 1.0, kref)),
                    "M": float(f"{c.mass:.4g}"), "C": float(f"{c.damping:.4g}"), "K": float(f"{c.stiffness_eff:.4g}"),
                    "horizon": round(horizon, 1), "reward": [float(f"{x:.3g}") for x in reward], "sd": sd}
    return out


def write_explorer_data(book_dir: Path) -> Path:
    """``_generated/static/explorer-data.js`` (served as ``_static/explorer-data.js``)."""
    data = explorer_data()
    return atomic_write_text(book_dir / GENERATED / "static" / "explorer-data.js",
                             "window.RLVR_EXPLORER = " + json.dumps(data, separators=(",", ":")) + ";\n")
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
    return made


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
    write_explorer_data(book_dir)


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
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(book_dir), "--builder", builder, "-W", "-n", "--keep-going"]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    atomic_write_text(book_dir / "_build" / "build.log", log)
    if proc.returncode != 0:
        warnings = [ln for ln in log.splitlines() if "WARNING" in ln or "ERROR" in ln]
        raise RuntimeError("jupyter-book build failed (warnings are errors):\n" + "\n".join(warnings[-30:] or
                                                                                           log.splitlines()[-30:]))
    return book_dir / "_build" / "html"
