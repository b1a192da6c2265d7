"""The pages the build generates around the notebooks: TOC, chapter and part pages, the scorecard (one row per
claim), the claims appendix, the landing page's results, downloads and headline figures.
"""
from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable

import yaml

from .._io import atomic_write_bytes, atomic_write_text
from ..paths import RUNS_DIR
from .claims import NOT_TESTED, SETTINGS, checklist, claim_verdicts, counted_once
from .markup import (PASS_AFTER_FAIL, PASS_AFTER_FAIL_SIGN, amendment_mark, GENERATED, SETTING_LABELS, amended_claims, amendment_items, provenance_line, reader_text, SHORT_VERDICTS, VERDICT_HELP, VERDICT_ORDER, badge, chapters, claim_label, claim_ref,
                     criterion_fields, criterion_text, md_code, md_escape, measured_text, page_cells, per_claim, slug,
                     sources_label, statement_text, prose, sections_text, THEORY_SOURCES, OPEN_CHOICES, ARXIV,
                     theory_source, parts, link_references, headline_rule_line)
from .scorecard import (FRAGILE_SIGN, counts_table, amended_summary, pass_after_fail_lines, scorecard_markdown,  # noqa: F401
                        scorecard_records, settings_matrix, write_scorecard_downloads)
from .pages import figure_data_csv, page_figures, page_images
from .registry import (PAPERS, NotebookEntry)
from .robustness_view import page_cell_note, setting_label, verdict_note, why_text
from ..verdicts.headline import holding_row
from .weight_of_evidence import weight_of_evidence_box


STATIC_PAGES = ("intro", "p1/index", "p2/index", "rerun", "own-runs", "explorer", "diagnose",
                "doctor-benchmark", "doctor-design-notes")
"""Hand-written pages of the book (``book/<page>.md``); those beyond the landing and part pages are placed in the
parts after the papers' by :func:`after_the_papers`."""


# ---------------------------------------------------------------------------------------------------------------
# Generated pages: TOC, chapters, scorecard, claims appendix, landing, downloads
# ---------------------------------------------------------------------------------------------------------------

def page_badges(entry: NotebookEntry, rows: list[dict], compact: bool = False) -> str:
    """``P1-C2 exact PARTIAL · P1-C5 testbed FAIL`` with badges: per claim the page records, its verdict per
    setting on this page (:func:`rlvr_dynamics.book.markup.page_cells`, the scorecard's function), each cell followed
    by its fragile label when this page's row is a fragile audited row
    (:func:`rlvr_dynamics.book.robustness_view.page_cell_note`), and the PASS-after-a-FAIL mark after the PASS cell
    that carries the headline (never after another verdict); ``compact`` (a table column) writes the fragile label as
    :data:`FRAGILE_SIGN` with the label as its tooltip."""
    by_id = {v["id"]: v for v in claim_verdicts(rows)}
    out = []
    for c in entry.claims:
        cells = page_cells(by_id[c], entry.id) if c in by_id else []
        if not cells:
            out.append(f"{claim_ref(c)}&nbsp;{badge(NOT_TESTED)}")
            continue
        claim = by_id[c]
        mark = amendment_mark(claim, short=True)
        marked = next((s for s, v in cells if v == "PASS" == claim["verdict"] and s != "context"), None) if mark else None
        out.append(f"{claim_ref(c)} " + " ".join(
            (f"<small>{s}</small>&nbsp;" if s != "context" or len(cells) > 1 else "<small>context</small>&nbsp;")
            + badge(v) + (mark if s == marked else "")
            + _fragile_tag(page_cell_note(claim, entry.id, s, v), compact) for s, v in cells))
    return " ".join(out)


def _fragile_tag(note: str, compact: bool = False) -> str:
    """A cell's fragile label in a badge list, short: "(fragile: PARTIAL)", or ``compact`` :data:`FRAGILE_SIGN`, with
    the full label ("fragile: PARTIAL under bound-0.05") as its tooltip; "" for no label."""
    label = note.strip(" ()")
    if not label:
        return ""
    moved = "; ".join(part.split(" under ", 1)[0] for part in label[len("fragile: "):].split("; "))
    tip = md_escape(label).replace('"', "'")
    return f' <small class="rlvr-fragile" title="{tip}">{FRAGILE_SIGN if compact else f"(fragile: {moved})"}</small>'


def after_the_papers() -> list[tuple[str, list[str]]]:
    """The parts of the TOC after the two papers' and their pages, in reading order: what was found (the scorecard,
    the claims appendices, the paper figures beside this book's), then what a practitioner does with it (the advice,
    then the tools on their own runs and how well those work), then the explorer, reruns and downloads. Every page
    of :data:`STATIC_PAGES` but the landing and part pages is in one of them."""
    return [("Results", ["scorecard", *(f"{GENERATED}/claims-{p.lower()}" for p in PAPERS), f"{GENERATED}/gallery"]),
            ("Your own GRPO runs", [f"{GENERATED}/practice", "own-runs", "diagnose", "doctor-benchmark",
                                    "doctor-design-notes"]),
            ("Explore and rerun", ["explorer", "rerun", f"{GENERATED}/downloads"])]


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
            lines = [f"# {chapter}\n", "| page | claims and verdicts | mirrors |", "|---|---|---|"]
            for e in items:
                lines.append(f"| {{doc}}`{e.title} <../executed/{e.id}>` | {page_badges(e, rows, compact=True)} | "
                             f"{prose(e.figure, e.paper)} |")
            lines += ["", f"{PASS_AFTER_FAIL_SIGN} {PASS_AFTER_FAIL} (the criterion amended with a FAIL in view); "
                      f"{FRAGILE_SIGN} fragile: another reasonable analysis of the same data moves this row's verdict "
                      "(the alternative and its verdict in the tooltip and in the page's robustness fold)."]
            atomic_write_text(gen / f"{name}.md", "\n".join(lines) + "\n")
            chapter_items.append({"file": f"{GENERATED}/{name}",
                                  "sections": [{"file": f"executed/{e.id}"} for e in items]})
        parts.append({"caption": f"{paper} · {PAPERS[paper]}", "chapters": chapter_items})
    for caption, pages in after_the_papers():
        present = [f for f in pages if f not in STATIC_PAGES or (book_dir / f"{f}.md").exists()]
        parts.append({"caption": caption, "chapters": [{"file": f} for f in present]})
    toc = {"format": "jb-book", "root": "intro", "parts": parts}
    return atomic_write_text(book_dir / "_toc.yml",
                             "# Generated by rlvr_dynamics.book.build from notebooks/registry; do not edit.\n"
                             + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))


def appendix_markdown(paper: str, verdicts: list[dict], entries: list[NotebookEntry]) -> str:
    """The claims appendix of one paper: each claim's statement, criterion, verdict and pages, with an anchor."""
    known = checklist()
    mine = [c for c in verdicts if c["paper"] == paper]
    out = [f"# Claims of {paper}: {PAPERS[paper]}\n",
           f"Every numbered claim of {paper} ({ARXIV[paper]}), as this book restates it, with its test, the verdict "
           "over all pages and the pages with the evidence. No criterion was fixed before its page's first result: "
           "every one was written into the claims ledger on 2026-11-30, after the pages' first versions had run. A "
           "criterion is *unchanged since its first result* when it keeps the rule that first version applied; "
           "otherwise it is *amended after the result*, with each change dated and the verdict under the rule "
           f"before it. After each verdict: {PASS_AFTER_FAIL_SIGN} a PASS reached after a FAIL was seen, the "
           "fragile label when another reasonable analysis of the same data moves the headline, and the headline "
           "under the headline rule before 2026-12-01 where that rule gave another. "
           "Tags: [P] the paper's, [S] secondary, [D] this project's derivation, [?] unknown.\n"]
    by_id = {e.id: e for e in entries}
    for c in mine:
        cid = c["id"]
        info = known[cid]
        tag = f"[{info.get('tag', '?')}]"
        stated = statement_text(cid)
        out += [f"({claim_label(cid)})=", f"## {cid}", "",
                f"{badge(c['verdict'])}{amendment_mark(c, short=True)}{md_escape(verdict_note(c))} "
                + ("" if stated.lstrip().startswith(md_escape(tag)) or stated.lstrip().startswith(tag)
                   else f"**{tag}** ") + stated, ""]
        if info.get("paper_statement") and info.get("statement") and info["paper_statement"] != info["statement"]:
            out += [f"*As this book restates it:* {link_references(info['statement'], paper)}", ""]
        if info.get("quantity"):
            out += [f"*Quantity measured:* {prose(info['quantity'], paper)}", ""]
        out += [f"*Criterion ({'amended after the result' if c['provenance']['amended'] else 'unchanged since its first result'}):*", ""]
        out += [f"- *{label}:* {text}" for label, text in criterion_fields(cid)] + [""]
        if c.get("scope") or info.get("scope"):
            out += [f"*Scope:* {prose(c.get('scope') or info.get('scope'), paper)}", ""]
        if c["provenance"]["amended"]:
            line = provenance_line(c)
            out += [f"*{line[0].upper() + line[1:]}.* The changes, oldest first:", "", *amendment_items(c), ""]
        if headline_rule_line(c):
            out += [f"*{headline_rule_line(c)}*", ""]
        out += [f"*Scale:* {info.get('scale', '–')}", ""]
        pages = [f"{{doc}}`{by_id[n].title} </executed/{n}>`"
                 for n in dict.fromkeys(r["notebook"] for r in c["evidence"]) if n in by_id]
        out += [f"*Tested on:* {', '.join(pages) if pages else 'no page yet'}. *Why this verdict:* "
                f"{prose(why_text(c), paper)}", ""]
    out += theory_sources_markdown(paper, entries)
    return "\n".join(out) + "\n"


def theory_sources_markdown(paper: str, entries: list[NotebookEntry]) -> list[str]:
    """The "where the theory comes from" table of a paper (the target of every citation the pages write, see
    :func:`rlvr_dynamics.book.markup.cite_text`): per part of the theory, what the paper states (with its arXiv id
    and numbered result where known), which steps this book derived, and the pages that test it."""
    used: dict[str, list[NotebookEntry]] = {}
    for e in entries:
        if e.paper != paper:
            continue
        for ref in (r.strip().lstrip("§").strip() for r in e.section.split(",") if r.strip()):
            for src in parts(paper, ref):
                used.setdefault(src.cite, [])
                if e not in used[src.cite]:
                    used[src.cite].append(e)
    out = [f"({sources_label(paper)})=", "## Where the theory comes from", "",
           f"The pages cite {paper} ({ARXIV[paper]}) by its numbered results where they are known (the paper's own "
           "section numbers are not available here) and say which steps this book derived itself. Each row is "
           "one part of the theory as the pages name it.", "",
           "| the pages write | what the paper states | what this book derived | pages |", "|---|---|---|---|"]
    seen = set()
    for key, src in THEORY_SOURCES[paper].items():
        if src.cite in seen:
            continue
        seen.add(src.cite)
        pages = ", ".join(f"{{doc}}`{e.title} </executed/{e.id}>`" for e in used.get(src.cite, [])) or "–"
        stated = f"{src.paper} ({ARXIV[paper]})" if src.paper else "– (this book's own)"
        out.append(f"| {prose(src.cite, None)} | {prose(stated, None)} | {prose(src.derived or '–', None)} | {pages} |")
    return out + [""]


def landing_markdown(verdicts: list[dict], entries: list[NotebookEntry], rows: list[dict],
                     headline: dict[str, str]) -> str:
    """The landing page's results (included by ``intro.md``): an abstract computed from the verdicts, the counts
    per paper and a grid of headline figures (``headline``: notebook id → figure path) with verdict badges."""
    counts = Counter(c["verdict"] for c in counted_once(verdicts))

    def ids(paper: str | None, verdict: str) -> list[str]:
        return [c["id"] for c in verdicts if c["verdict"] == verdict and (paper is None or c["paper"] == paper)]

    by_claim = {c["id"]: c for c in verdicts}

    def listing(v: str, paper: str) -> str:
        found = ids(paper, v)
        return ", ".join(claim_ref(x) + md_escape(verdict_note(by_claim[x])) for x in found)

    n = len(verdicts)
    n_counted = len(counted_once(verdicts))
    phrases = [("PASS", "**{k} reproduce{s}** as stated (PASS)"), ("PARTIAL", "{k} reproduce{s} in part (PARTIAL)"),
               ("FAIL", "**{k} {do} not reproduce** (FAIL)"),
               ("CONSISTENT", "{k} {are} {a}consistency check{s_} that hold{s} by construction of the model used "
                              "(CONSISTENT, never counted as a reproduction)"),
               ("INCONCLUSIVE", "{k} {are} undecided here (INCONCLUSIVE: the test could not have shown the effect, "
                                "or its result neither meets nor refutes the criterion)"),
               ("N/A", "{k} need{s} models or hardware this machine lacks (N/A)"),
               (NOT_TESTED, "{k} {are} not tested yet")]
    clauses = [p.format(k=counts[v], s="s" if counts[v] == 1 else "", do="does" if counts[v] == 1 else "do",
                        are="is" if counts[v] == 1 else "are", a="a " if counts[v] == 1 else "",
                        s_="" if counts[v] == 1 else "s") for v, p in phrases if counts.get(v)]
    summary = ("; ".join(clauses[:-1]) + " and " + clauses[-1]) if len(clauses) > 1 else "".join(clauses)
    abstract = (f"**In short.** This book tests all {n} claims of the two papers with code you can rerun, at CPU "
                f"scale: closed forms, bandit simulations and small models trained with GRPO on CPUs. Of the {n}"
                + (f" ({n_counted} when claims measured by one experiment count once)" if n_counted < n else "")
                + ", "
                f"{summary}."
                + (" Fragile under another reasonable analysis of the same data (each labelled on its page and the "
                   "scorecard, with the analysis that moves it): " + "; ".join(
                       f"{c['id']} {c['verdict']}{verdict_note(c)}" for c in verdicts if verdict_note(c)) + "."
                   if any(verdict_note(c) for c in verdicts) else "")
                + " Claims about GPU-scale models are tested on scaled-down stand-ins or marked N/A; each "
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
        held = holding_row(c)
        other = [f"the {r['setting']} row is fragile ({setting_label(c, r['setting']).strip(' ()')[len('fragile: '):]}),"
                 f" measured {measured_text(r)}" for r in [c["decider"]] if held is not r and setting_label(c, r["setting"])]
        fail_lines.append(f"- {badge('FAIL')}{md_escape(verdict_note(c))} {claim_ref(c['id'])} {statement_text(c['id'])} "
                          f"(*{held['setting']}*, measured {measured_text(held)}"
                          + (f"; {other[0]}; the headline is held by the {held['setting']} row" if other else "")
                          + f"; see {', '.join(pages) or 'the scorecard'})")
    out = ["## Results at a glance", "",
           f"**Training with GRPO yourself?** Start with {{doc}}`What this means for your GRPO run "
           f"<{GENERATED}/practice>`: the book's findings, what the run doctor can tell, and advice only as strong "
           f"as the verdicts. The {{doc}}`scorecard` has every verdict per setting; the {{doc}}`gallery "
           f"<{GENERATED}/gallery>` puts each figure of the papers next to this book's.", "",
           abstract, "", *weight_of_evidence_box(verdicts, entries), "", *counts_table(verdicts), "",
           amended_summary(verdicts), "",
           *pass_after_fail_lines(verdicts),
           "## Headline figures", "",
           "The first figure of one page per chapter, with the verdicts that page records "
           f"({PASS_AFTER_FAIL_SIGN}: {PASS_AFTER_FAIL}, the criterion amended with a FAIL in view); click a card to "
           "open the page.", "", "::::{grid} 1 1 2 2", ":gutter: 3", ""]
    for nb_id, img in headline.items():
        e = by_id[nb_id]
        out += [f":::{{grid-item-card}} {e.title}", f":link: executed/{nb_id}", ":link-type: doc",
                f":img-top: {img}", f":img-alt: first figure of {e.title}", ":class-card: rlvr-card", "",
                page_badges(e, rows), ":::", ""]
    out += ["::::", "", "## Claim by claim", "", *(t + "\n" for t in per_paper)]
    if fail_lines:
        out += ["**What does not reproduce here:**", "", *fail_lines, ""]
    out += ["Every verdict, with what was measured and why, is on the {doc}`scorecard`; each claim's statement and "
            "criterion (every one written into the ledger after its page's first version had run: unchanged since "
            "that first result, or amended after it and how) are in the claims appendices ("
            + ", ".join(f"{{doc}}`{p} <{GENERATED}/claims-{p.lower()}>`" for p in PAPERS) + ").", ""]
    return "\n".join(out) + "\n"


def paper_pages_markdown(paper: str, entries: list[NotebookEntry], rows: list[dict]) -> str:
    """The list of a paper's pages with their verdict badges (included by ``p1/index.md``, ``p2/index.md``)."""
    out = ["## Pages and verdicts", ""]
    for chapter, items in chapters(entries).get(paper, []):
        out += [f"**{chapter}**", ""]
        for e in items:
            out.append(f"- {{doc}}`{e.title} </executed/{e.id}>` ({sections_text(e.paper, e.section)}) — "
                       f"{page_badges(e, rows)}")
        out.append("")
    return "\n".join(out) + "\n"


def _run_info(run: Path) -> dict:
    try:
        return json.loads((run / "config.json").read_text())
    except (OSError, ValueError):
        return {}


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
    out += ["**Reproducing a run.** `rlvr-dynamics reproduce RUN_ID --steps N` retrains the first N steps of a "
            "committed run (its warm start included) with the code you have and prints `bit-identical` or the "
            "first step that differs. Runs draw from named random streams since they record `rng_streams` in "
            "their `config.json`; runs made before reproduce with the code of their recorded commit (`--at-commit`, "
            "a temporary git worktree).", ""]
    for group, items in groups.items():
        infos = [_run_info(run) for run in items]
        commits = sorted({i.get("git_commit", "unknown")[:10] for i in infos})
        streams = all("rng_streams" in i for i in infos)
        first = items[0].name
        how = (f"Made with the named random streams at commit{'s' if len(commits) > 1 else ''} "
               f"{', '.join(f'`{c}`' for c in commits)}: `rlvr-dynamics reproduce {first} --steps 10` should print "
               "bit-identical with the current code." if streams else
               f"Made before the named random streams, at commit{'s' if len(commits) > 1 else ''} "
               f"{', '.join(f'`{c}`' for c in commits)}: it reproduces with the code of its commit, "
               f"`rlvr-dynamics reproduce {first} --steps 10 --at-commit`.")
        out += [f"### {group}-… ({len(items)} run{'s' if len(items) > 1 else ''})", "", how, "",
                "| run | model | G | learning rate | steps | files |",
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


PAPER_FIGURES = "paper_figures.yml"
"""``book/paper_figures.yml``: every figure of the papers that the specs describe, with the book's counterpart."""


def gallery_markdown(book_dir: Path, entries: list[NotebookEntry], rows: list[dict]) -> str:
    """The "Paper figure vs this book" page: per figure of the papers (``book/paper_figures.yml``) what is known
    it shows, and the book's counterpart figure (from the downloads folder, so :func:`write_downloads` runs
    first) with its caption, setting and the verdicts of its page; or the stated reason there is none."""
    items = yaml.safe_load((book_dir / PAPER_FIGURES).read_text(encoding="utf-8"))
    by_id = {e.id: e for e in entries}
    out = ["# Paper figure vs this book\n",
           f"Every figure of the two papers (P1 {ARXIV['P1']}, P2 {ARXIV['P2']}) known to this book, next to the "
           "figure of this book that mirrors it, or the reason there is none. The papers' full texts are not "
           "available here: *[P]* the figure is described in the paper's abstract or its source summary, *[S]* in a "
           "secondary summary, *[D]* this book infers that such a figure exists. "
           "Each counterpart names its setting, and its page's verdicts follow the figure.\n"]
    for paper in PAPERS:
        out.append(f"## {paper} · {PAPERS[paper]}\n")
        for item in (i for i in items if i["paper"] == paper):
            out += [f"### {md_escape(item['figure'])}\n",
                    f"*In the paper* ({prose(item['status'], paper)}): {prose(item['described'], paper)}.\n"]
            page = item.get("page")
            if not page:
                out.append(f"*In this book:* no counterpart: {prose(item['none_because'], paper)}.\n")
                continue
            if page not in by_id:
                raise ValueError(f"{PAPER_FIGURES}: page {page!r} of {item['figure']!r} is not a registered notebook")
            e = by_id[page]
            figs = page_figures(book_dir, e)
            if not figs:
                raise ValueError(f"{PAPER_FIGURES}: page {page!r} has no figure to show for {item['figure']!r}")
            caps = [(a or {}).get("caption") or "" for _, a in figs]
            n = next((k for k, c in enumerate(caps, 1) if item.get("match") and item["match"].lower() in c.lower()), 1)
            out += [f"*In this book* ({md_escape(item['setting'])}): {{doc}}`{e.title} <../executed/{page}>`, "
                    f"figure {n} of {len(figs)} on that page — " + page_badges(e, rows) + "\n",
                    "```{image} " + f"downloads/figures/{page}-fig{n}.png", f":alt: {md_escape(e.title)}, figure {n}",
                    ":width: 100%", "```", ""]
            if caps[n - 1]:
                out.append(f"*{prose(caps[n - 1], paper)}*\n")
    return "\n".join(out) + "\n"

