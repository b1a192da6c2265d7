"""Executed notebook → book page, a build-time transform (the notebooks need no edits): the page leads with its
key figure and a reading of its verdicts (:func:`lead_with_key_figure`), then the results box, the page's methods
folded, the notebook with code folded, stray reprs removed, figures numbered and captioned, provenance folded last
(see :mod:`.build`).
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import nbformat

from .._io import atomic_write_text
from .markup import (CLAIM_ID, GENERATED, amendment_items, badge, claim_label, claim_ref, criterion_fields,
                     amendment_mark, chain_text, criterion_text, headline_rule_line,
                     link_references, measured_text, plain_markdown, prose, page_cells, page_numbers, provenance_line,
                     statement_text)
from .display import damping_words
from ..verdicts.headline import headline_text
from .robustness_view import page_cell_note, robustness_fold, summary as robustness_summary
from .registry import NotebookEntry


MAX_PRINT_LINES = 10
"""Printed outputs longer than this are folded on the page."""
FIGURE_AUDIT_MIME = "application/vnd.rlvr-dynamics.figure-audit+json"
"""Mime type of the figure audit (``rlvr_dynamics.plotting.AUDIT_MIME``); stripped from the pages."""
_JUNK_REPR = re.compile(r"^\s*(\[?<(matplotlib|mpl_toolkits)\.|<Figure size|Text\(|\[?\{'id':|"
                        r"\[<matplotlib|<Axes)")



# ---------------------------------------------------------------------------------------------------------------
# Notebook → book page
# ---------------------------------------------------------------------------------------------------------------

def results_box(entry: NotebookEntry, rows: list[dict], verdicts: dict[str, dict]) -> str:
    """The results box at the top of a page: per claim the page records, one line per evidence row of this page
    (verdict, setting, what was tested, the deciding measurement), then the claim's headline verdict over all pages
    and whether its criterion is unchanged since its first result or amended after it (:func:`.markup.provenance_line`);
    criteria, their amendments and reasons folded. Every badge comes from :func:`rlvr_dynamics.book.claims.claim_verdicts` (the
    ``verdicts`` mapping, claim id → its record), the function the scorecard uses, so the two cannot disagree."""
    mine = [r for r in rows if r["notebook"] == entry.id]
    ids = list(dict.fromkeys(r["id"] for r in mine))
    order = [c for c in entry.claims if c in ids] + [c for c in ids if c not in entry.claims]
    lines = ["::::{admonition} Results on this page", ":class: rlvr-results", ""]
    if not order:
        lines += ["No verdict recorded for this page yet (run `rlvr-dynamics run "
                  f"{entry.id}`).", "::::"]
        return "\n".join(lines)
    details = []
    for cid in order:
        overall = verdicts[cid]
        here = [r for r in overall["evidence"] if r["notebook"] == entry.id]
        cells = dict(page_cells(overall, entry.id))
        lines.append(f"**{claim_ref(cid)}** {statement_text(cid)}")
        lines.append("")
        for r in sorted(here, key=lambda r: r["setting"] == "context"):
            lines.append(f"- {badge(r['verdict'])} *{r['setting']}* · {prose(r.get('statement'), entry.paper)} · "
                         f"measured {measured_text(r)}")
        n_pages = len({e["notebook"] for e in overall["evidence"]})
        where = f"over the {n_pages} pages that test it" if n_pages > 1 else "this page is its only evidence"
        fragile = headline_text(overall)[len(overall["verdict"]):]
        held = robustness_summary(overall)
        fragile += f" (robustness: {held})" if not fragile and held.startswith("robust;") else ""
        lines.append(f"- **Headline verdict** {badge(overall['verdict'])}{amendment_mark(overall)}{fragile} ({where}; see the "
                     f"{{doc}}`scorecard </scorecard>`)" + (
                         f"; this page: " + ", ".join(f"{s} {badge(v)}" for s, v in cells.items())
                         if len(cells) > 1 else ""))
        prov = provenance_line(overall)
        lines.append(f"- *Criterion:* {prov[0].upper() + prov[1:]}"
                     + (f" (what changed: {{ref}}`claims appendix <{claim_label(cid)}>` and below)."
                        if overall.get("provenance", {}).get("amended") else "."))
        if headline_rule_line(overall):
            lines.append(f"- {headline_rule_line(overall)}")
        lines += [*robustness_fold(overall), ""]
        fields = criterion_fields(cid)
        status = ("amended after the result" if overall.get("provenance", {}).get("amended")
                  else "unchanged since its first result")
        details.append(f"**{cid}.** *Criterion ({status}):* " + "; ".join(
            f"{label.lower()}: {text}" for label, text in fields if label in ("Statistic", "Pass if")))
        changes = amendment_items(overall)
        if changes:
            details += ["", "*Changed after a result was seen:*", "", *changes, ""]
        for r in here:
            if r.get("reason"):
                details.append(f"- *{r['setting']}, {r['verdict']}:* {prose(r['reason'], entry.paper)}")
        details.append("")
    lines += [":::{admonition} Criteria and reasons", ":class: dropdown", "", *details, ":::", "::::"]
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


class MissingCaption(ValueError):
    """A figure of a notebook has no authored caption (``plotting.caption`` or cell metadata)."""


def figure_captions(nb: Any, entry: NotebookEntry) -> list[str]:
    """One authored caption per image output, in order: the cell's ``mystnb.figure.caption`` metadata, else the
    caption attached with :func:`rlvr_dynamics.plotting.caption` (in the figure audit). The build refuses a figure
    without one (:class:`MissingCaption`, naming the page and the figure): captions are written by the notebook's
    author, never generated from panel titles."""
    figures = []  # (explicit caption or None, figure audit or None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        explicit = (cell.metadata.get("mystnb", {}).get("figure", {}) or {}).get("caption")
        for o in cell.get("outputs", []):
            if _is_image(o):
                figures.append((explicit, o.get("data", {}).get(FIGURE_AUDIT_MIME)))
    captions, missing = [], []
    for n, (explicit, audit) in enumerate(figures, 1):
        text = explicit or (audit.get("caption") if isinstance(audit, dict) else None)
        if not text:
            missing.append(n)
        captions.append(str(text or ""))
    if missing:
        raise MissingCaption(f"{entry.id}: figure(s) {missing} of {len(figures)} have no authored caption; call "
                             "plotting.caption(fig, \"What it shows. What to notice.\") before showing each figure "
                             f"and re-execute with `rlvr-dynamics run {entry.id} --store`")
    return captions


def book_page(nb: Any, entry: NotebookEntry, rows: list[dict], verdicts: dict[str, dict],
              page_no: int | None = None) -> Any:
    """The book page for one executed notebook (layout in the module docstring); returns a new notebook. With
    ``page_no`` every caption starts "Figure <page_no>.<n>." (numbering restarts per page)."""
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
    section_context = False           # a "Context" (sub)section: its figures show the context rows
    noted: set[tuple[str, bool]] = set()
    figures: list[tuple[Any, list[str], bool, int]] = []   # (figure cell, its section's claims, context?, number)
    for cell in cells:
        tags = list(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            src = cell.source
            heading = re.match(r"\s*#{2,4}\s+([^\n]+)", src)
            if heading:
                ids = [c for c in CLAIM_ID.findall(heading.group(1)) if c in mine]
                section_context = "context" in heading.group(1).lower()
                if ids or not section_context:   # a Context subsection without ids keeps its section's claims
                    section_claims = ids
            if not title_done:
                title_done = True
                m = re.match(r"\s*(#\s+[^\n]+)\n?(.*)", src, re.S)
                title, rest = (m.group(1), m.group(2).strip()) if m else (f"# {entry.title}", src.strip())
                out_cells.append(nbformat.v4.new_markdown_cell(title))
                box = nbformat.v4.new_markdown_cell(results_box(entry, rows, verdicts))
                box.metadata["tags"] = ["rlvr-results"]
                out_cells.append(box)
                if rest:
                    out_cells.append(nbformat.v4.new_markdown_cell(methods_fold(link_references(rest, entry.paper))))
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
                md = o["data"].get("text/markdown")
                if md:   # a reading or a table written for the reader: the reader-text rules apply
                    o["data"]["text/markdown"] = link_references(
                        damping_words("".join(md) if isinstance(md, list) else md), entry.paper)
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
                text = plain_markdown(captions[fig_no - 1] if fig_no <= len(captions) else entry.title, entry.paper)
                if page_no is not None:
                    text = f"Figure {page_no}.{fig_no}. {text}"
                extra.metadata["mystnb"] = {"figure": {
                    "caption": text,
                    "name": f"fig-{entry.id.replace('_', '-')}-{fig_no}"}}
                extra.metadata["tags"].append("rlvr-figure")
                figures.append((extra, list(section_claims), section_context, fig_no))
            elif claims_cell or _output_lines(group) > MAX_PRINT_LINES:
                extra.metadata["tags"].append("hide-output")
            out_cells.append(extra)
            if kind == "figure":
                todo = [c for c in section_claims if (c, section_context) not in noted]
                if todo:
                    noted.update((c, section_context) for c in todo)
                    label = f"{page_no}.{fig_no}" if page_no is not None else str(fig_no)
                    note = _verdict_note(todo, entry.id, verdicts, label, context=section_context)
                    if note is not None:
                        out_cells.append(note)
    out_cells = _merge_quiet_code(out_cells)
    if figures:
        out_cells = lead_with_key_figure(out_cells, figures, entry, rows, verdicts, page_no)
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


def methods_fold(markdown: str) -> str:
    """A page's own introduction (claims, theory references, open choices: its methods), folded below the result."""
    fence = ":" * max(4, max((len(m) for m in re.findall(r"^(:{3,})", markdown, re.M)), default=0) + 1)
    return f"{fence}{{admonition}} What this page tests, and how\n:class: dropdown rlvr-methods\n\n{markdown}\n{fence}"


def key_figure(figures: list[tuple[Any, list[str], bool, int]], entry: NotebookEntry) -> int:
    """Index (in ``figures``) of the page's key figure, by a fixed rule: the first figure of a section that tests the
    page's first registered claim that has rows here; else the first figure of any section that tests a claim (not a
    "Context" section); else the first figure."""
    tested = [c for _, ids, _, _ in figures for c in ids]
    main = next((c for c in entry.claims if c in tested), None)
    for want in ((lambda ids, ctx: main in ids and not ctx), (lambda ids, ctx: bool(ids) and not ctx)):
        for k, (_, ids, ctx, _) in enumerate(figures):
            if want(ids, ctx):
                return k
    return 0


def lead_sentence(cid: str, overall: dict, row: dict | None, notebook: str) -> str:
    """One claim's sentence in a page's lead: the badge first is this page's own verdict (``row``, the page's row
    with the headline verdict, else its first in-scope row), so a page whose row is INCONCLUSIVE does not open with
    another page's PASS; then the headline over every page, with its labels and mark, and the pass rule."""
    rule = f"judged by the rule: pass if {criterion_text(cid).rstrip('.')}."
    what = f"**{claim_ref(cid)}** ({statement_text(cid).rstrip('.')})"
    overall_text = f"**{headline_text(overall)}**{amendment_mark(overall)}"
    if row is None or row["verdict"] == overall["verdict"]:
        measured = f"; on this page ({row['setting']}) it measures {measured_text(row)}" if row else ""
        return f"{badge(overall['verdict'])} {what} reads {overall_text} over every page that tests it{measured}, {rule}"
    label = page_cell_note(overall, notebook, row["setting"], row["verdict"]).strip(" ()")
    return (f"{badge(row['verdict'])} {what} reads **{row['verdict']}** on this page ({row['setting']}: measured "
            f"{measured_text(row)}{'; ' + label if label else ''}); over every page "
            f"that tests it the claim reads {overall_text}, decided by another page's row; {rule}")


def lead_reading(entry: NotebookEntry, claim_ids: list[str], rows: list[dict], verdicts: dict[str, dict],
                 label: str) -> str:
    """The reading above a page's key figure, in 3–5 sentences: per claim (at most three) its headline verdict (the
    scorecard's function), the deciding measurement on this page and the pass rule it is judged by; whether the rule
    is unchanged since its first result; where the figure sits in the argument."""
    mine = [r for r in rows if r["notebook"] == entry.id]
    ids = [c for c in claim_ids if c in verdicts] or list(dict.fromkeys(r["id"] for r in mine))[:1]
    sentences = []
    for cid in ids[:3]:
        overall = verdicts[cid]
        here = [r for r in overall["evidence"] if r["notebook"] == entry.id and r["setting"] != "context"]
        row = next((r for r in here if r["verdict"] == overall["verdict"]), here[0] if here else None)
        sentences.append(lead_sentence(cid, overall, row, entry.id))
    amended = [c for c in ids[:3] if (verdicts[c].get("provenance") or {}).get("amended")]
    sentences.append(f"The rule of {', '.join(amended)} was amended after a result was seen; every rule's verdict: "
                     + "; ".join(f"{c} {chain_text(verdicts[c])}" for c in amended) + "." if amended else
                     "No rule was changed after a result was seen.")
    moved = [c for c in ids[:3] if headline_rule_line(verdicts[c])]
    if moved:
        sentences.append("The headline rule itself was written after the results were known; under the rule before "
                         "it " + "; ".join(f"{c} reads {verdicts[c]['headline_rule']['previous']}" for c in moved) + ".")
    sentences.append(f"Figure {label} below is the page's key figure; the results box, the methods and every other "
                     "figure follow it.")
    return "**The result.** " + " ".join(sentences)


def lead_with_key_figure(cells: list[Any], figures: list[tuple[Any, list[str], bool, int]], entry: NotebookEntry,
                         rows: list[dict], verdicts: dict[str, dict], page_no: int | None) -> list[Any]:
    """Move the page's key figure (:func:`key_figure`) right under the title, after its reading
    (:func:`lead_reading`); a one-line pointer stays where the figure was. The figure keeps its number, so every
    "figure n" in the text still points at it."""
    cell, ids, _, no = figures[key_figure(figures, entry)]
    label = f"{page_no}.{no}" if page_no is not None else str(no)
    k = next(i for i, c in enumerate(cells) if c is cell)
    pointer = nbformat.v4.new_markdown_cell(f"*Figure {label}, this page's key figure, is shown at the top of the "
                                            "page.*")
    pointer.metadata["tags"] = ["rlvr-key-figure-pointer"]
    cells = cells[:k] + [pointer] + cells[k + 1:]
    reading = nbformat.v4.new_markdown_cell(lead_reading(entry, ids, rows, verdicts, label))
    reading.metadata["tags"] = ["rlvr-lead"]
    cell.metadata["tags"] = sorted(set(cell.metadata["tags"]) | {"rlvr-key-figure"})
    return cells[:1] + [reading, cell] + cells[1:]


def _verdict_note(claim_ids: list[str], entry_id: str, verdicts: dict[str, dict], fig_no: int | str,
                  context: bool = False) -> Any:
    """A short "what this figure shows" note after a figure whose section tests a claim: per setting the page
    records, its verdict (the same function as the scorecard) and the deciding measurement and reason. A figure in
    a section quotes the page's in-scope rows of its claims; a figure in a "Context" (sub)section quotes the context
    rows (so a figure never quotes the rows of another figure). ``None`` when no row fits."""
    lines = []
    for cid in claim_ids:
        for r in verdicts[cid]["evidence"]:
            if r["notebook"] != entry_id or (r["setting"] == "context") != context:
                continue
            lines.append(f"{badge(r['verdict'])} **What figure {fig_no} shows for {claim_ref(cid)}** "
                         f"(*{r['setting']}*): measured {measured_text(r)}. "
                         + prose(r.get("reason") or r.get("statement"), cid[:2]))
    if not lines:
        return None
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
    numbers = page_numbers(entries)
    for e in entries:
        page, raw = out_dir / f"{e.id}.ipynb", out_dir / f"{e.id}.raw.ipynb"
        nb = nbformat.read(page, as_version=4)
        if nb.metadata.get("rlvr_dynamics", {}).get("book_page"):
            nb = nbformat.read(raw, as_version=4)
        else:
            atomic_write_text(raw, nbformat.writes(nb) + "\n")
        atomic_write_text(page, nbformat.writes(book_page(nb, e, rows, verdicts, numbers[e.id])) + "\n")


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
