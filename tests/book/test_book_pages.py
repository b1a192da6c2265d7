"""The build-time transform from an executed notebook to a book page (``pages.book_page``), on a small synthetic
notebook: results box first, code folded, stray reprs gone, figures numbered and captioned, provenance last."""
from __future__ import annotations

import nbformat
import pytest

from rlvr_dynamics.book import claims, explorer, markup, pages, registry
from rlvr_dynamics.verdicts import ledger

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


def _entry() -> registry.NotebookEntry:
    return registry.NotebookEntry(id="demo_page", title="Demo", paper="P1", chapter="The oscillator model",
                                  section="§3.4", claims=("P1-C2", "P1-C3"), figure="first thing; second thing; third thing",
                                  order=1)


def _image(size="<Figure size 770x300 with 1 Axes>", caption="A demo figure. Notice the rising line."):
    audit = {"caption": caption} if caption else {}
    return nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": size,
                                                        "application/vnd.rlvr-dynamics.figure-audit+json": audit})


def _notebook():
    nb = nbformat.v4.new_notebook()
    title = nbformat.v4.new_markdown_cell("# Demo page\n\n**Claims:** P1-C2 (inertia), see spec §3.4 and `P1-C3`.")
    prov = nbformat.v4.new_markdown_cell("```{admonition} Provenance\n:class: note\nNotebook `notebooks/demo_page"
                                         ".ipynb`\n```")
    prov.metadata["tags"] = ["provenance"]
    params = nbformat.v4.new_code_cell("x = 1  # a knob")
    params.metadata["tags"] = ["parameters"]
    fig1 = nbformat.v4.new_code_cell("plt.plot(); plt.legend()")
    fig1.outputs = [nbformat.v4.new_output("stream", name="stdout", text="short line\n"),
                    nbformat.v4.new_output("execute_result", data={
                        "text/plain": "<matplotlib.legend.Legend at 0x7f1d42ed3310>"}, execution_count=1),
                    _image(),
                    nbformat.v4.new_output("stream", name="stderr", text="UserWarning: noise\n")]
    section = nbformat.v4.new_markdown_cell("## Lag erodes the damping\n\nThe fitted damping falls with $K_{\\rm "
                                            "ref}$ at slope 1.5. More text here.")
    fig2 = nbformat.v4.new_code_cell("two figures")
    fig2.outputs = [_image(caption="Second figure. The damping falls."),
                    nbformat.v4.new_output("stream", name="stdout", text="row\n" * 30),
                    _image(caption="Third figure. The inertia grows.")]
    claims_cell = nbformat.v4.new_code_cell("_ = claims.record('demo_page', [...])\nrows")
    claims_cell.metadata["tags"] = ["nbval-check-output"]
    claims_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="id verdict\n"),
                           nbformat.v4.new_output("execute_result", data={"text/plain": "[{'id': 'P1-C2'}]"},
                                                  execution_count=2)]
    nb.cells = [title, prov, params, fig1, section, fig2, claims_cell]
    return nb


ROWS = [{"id": "P1-C2", "notebook": "demo_page", "verdict": "PARTIAL", "statement": "M_fit vs (1+mu)/2",
         "measured": "0.2/0.9", "paper_value": 1, "tolerance": 0.1, "reason": "ratio off at mu*=0 [low]"},
        {"id": "P1-C3", "notebook": "demo_page", "verdict": "PASS", "statement": "C falls with K_ref",
         "measured": -0.001, "paper_value": -0.001, "tolerance": "rel 0.1", "reason": ""}]


@pytest.fixture(scope="module")
def page():
    verdicts = {c["id"]: c for c in claims.claim_verdicts(ROWS)}
    return pages.book_page(_notebook(), _entry(), ROWS, verdicts)


def test_page_leads_with_a_reading_and_its_key_figure_then_the_results_box(page):
    assert page.cells[0].source == "# Demo page"
    reading, key = page.cells[1], page.cells[2]
    assert "rlvr-lead" in reading.metadata["tags"] and reading.source.startswith("**The result.**")
    # per claim of the key figure's section its headline badge, the deciding measurement and the pass rule
    assert reading.source.count("verdict-badge") == 1 and "{ref}`P1-C2 <claim-p1-c2>`" in reading.source
    assert "judged by the rule: pass if" in reading.source and 3 <= reading.source.count(". ") + 1 <= 6
    assert "rlvr-key-figure" in key.metadata["tags"] and "rlvr-figure" in key.metadata["tags"]
    # the key figure keeps its number; a pointer stays where it was
    no = key.metadata["mystnb"]["figure"]["name"].rsplit("-", 1)[1]
    assert f"Figure {no}" in reading.source
    assert any("rlvr-key-figure-pointer" in c.metadata.get("tags", []) and f"Figure {no}," in c.source
               for c in page.cells)
    box = page.cells[3].source
    assert "rlvr-results" in box
    # one badge per evidence row and one headline badge per claim (outside the robustness folds, whose tables
    # carry their own badges: P1-C3 is audited)
    import re
    main = re.sub(r":::\{admonition\} Robustness.*?\n:::\n", "", box, flags=re.S)
    assert box.count(":::{admonition} Robustness") == 2
    assert main.count("verdict-badge") == 4 and "verdict-partial" in main and "verdict-pass" in main
    assert box.count("Headline verdict") == 2 and "*exact*" in box
    assert "{ref}`P1-C2 <claim-p1-c2>`" in box and "{ref}`P1-C3 <claim-p1-c3>`" in box
    assert "0.2/0.9" in box and "mu\\*=0" in box  # recorded text is escaped, not read as Markdown


def test_results_box_shows_every_row_and_the_scorecard_headline():
    rows = ROWS + [
        {"id": "P1-C2", "notebook": "demo_page", "verdict": "CONSISTENT", "statement": "by construction",
         "measured": 1.0, "reason": "holds by construction", "setting": "exact"},
        {"id": "P1-C2", "notebook": "demo_page", "verdict": "FAIL", "statement": "Adam variant", "measured": 3.0,
         "reason": "variant", "setting": "context"},
        {"id": "P1-C2", "notebook": "other_page", "verdict": "FAIL", "statement": "elsewhere", "measured": 2.0,
         "reason": "fails elsewhere", "setting": "testbed", "ci": [1.5, 2.5], "unit": "ratio"}]
    verdicts = {c["id"]: c for c in claims.claim_verdicts(rows)}
    box = pages.results_box(_entry(), rows, verdicts)
    part = box.split("P1-C3")[0]
    # the last row recorded (a context FAIL) no longer stands for the page: every row is listed with its setting
    assert part.count("*exact*") == 2 and part.count("*context*") == 1
    assert "Headline verdict** <span class=\"verdict-badge verdict-fail\"" in part  # the testbed FAIL decides
    assert "over the 2 pages that test it" in part
    other = pages.results_box(registry.NotebookEntry(id="other_page", title="O", paper="P1", chapter="c",
                                                     section="§1", claims=("P1-C2",), figure="f", order=2),
                              rows, verdicts)
    assert "`2.0` [1.5, 2.5] (ratio)" in other


def test_results_box_says_whether_the_criterion_was_fixed_or_amended(monkeypatch):
    """Every results box says, per claim, "criterion unchanged since its first result" or "amended after the result (dates):
    verdict under the first rule → now" with the changes folded (issue 30); the scorecard reads the same function."""
    from rlvr_dynamics.book import markup, site_pages
    known = {k: dict(v) for k, v in claims.checklist().items()}
    known["P1-C2"]["changed_after_result"] = [{"date": "2026-11-30", "change": "Threshold moved (issue 9).",
                                                "verdict_before": "PASS"}]
    known["P1-C3"]["changed_after_result"] = None
    monkeypatch.setattr(ledger, "checklist", lambda: known)
    monkeypatch.setattr(markup, "checklist", lambda: known)
    rows = ROWS + [{"id": "P1-C2", "notebook": "demo_page", "verdict": "FAIL", "statement": "s", "measured": 1.0,
                    "reason": "r", "setting": "exact"}]
    verdicts = {c["id"]: c for c in claims.claim_verdicts(rows)}
    box = pages.results_box(_entry(), rows, verdicts)
    c2, c3 = box.split("**{ref}`P1-C3")[0], box.split("**{ref}`P1-C3")[1].split(":::{admonition}")[0]
    assert "Criterion amended after the result (2026-11-30; 1 change): verdict under the first rule, when it was " \
           "applied, PASS → now FAIL" in c2
    assert "Criterion unchanged since its first result" in c3 and "amended" not in c3
    assert "*2026-11-30* (verdict before this change: PASS): Threshold moved." in box   # tracker ref dropped
    assert "Pre-registered" not in box
    card = site_pages.scorecard_markdown(rows, [_entry()])
    assert "amended 2026-11-30 · first rule PASS → FAIL" in card and "unchanged since its first result" in card
    assert "fixed before" not in card
    assert "verdicts rest on a criterion amended after a result was seen" in card


def test_claim_ids_and_spec_sections_link_to_the_appendix_outside_code(page):
    intro = page.cells[4].source
    assert intro.startswith("::::{admonition} What this page tests, and how") and ":class: dropdown" in intro
    assert "{ref}`P1-C2 <claim-p1-c2>`" in intro
    assert "{ref}`P1's regimes and thresholds <theory-sources-p1>`" in intro   # a citation, not a private section
    assert "spec" not in intro and "§" not in intro
    assert "`P1-C3`" in intro  # inline code is left alone


def test_code_is_folded_stray_outputs_are_gone_and_figures_are_captioned(page):
    code = [c for c in page.cells if c.cell_type == "code"]
    sources = [c for c in code if "remove-input" not in c.metadata.get("tags", [])]
    assert all("hide-input" in c.metadata["tags"] for c in sources)
    texts = [str(o) for c in code for o in c.outputs]
    assert not any("matplotlib.legend" in t or "UserWarning" in t or "'id': 'P1-C2'" in t for t in texts)
    assert not any("figure-audit" in t for t in texts)
    figures = [c for c in code if "rlvr-figure" in c.metadata.get("tags", [])]
    assert len(figures) == 3 and all(len(c.outputs) == 1 for c in figures)
    names = [c.metadata["mystnb"]["figure"]["name"] for c in figures]
    assert names == ["fig-demo-page-1", "fig-demo-page-2", "fig-demo-page-3"]
    caps = [c.metadata["mystnb"]["figure"]["caption"] for c in figures]
    # the authored captions (plotting.caption, read from the figure audit), in order
    assert caps == ["A demo figure. Notice the rising line.", "Second figure. The damping falls.",
                    "Third figure. The inertia grows."]
    # the 30-row printout between the two figures is folded, the short one stays with its cell
    long = [c for c in code if any("row\nrow" in o.get("text", "") for o in c.outputs)]
    assert len(long) == 1 and "hide-output" in long[0].metadata["tags"]
    assert any("short line" in str(o) for o in sources[1].outputs)
    claims_out = [c for c in code if any("id verdict" in str(o) for o in c.outputs)]
    assert claims_out and "hide-output" in claims_out[0].metadata["tags"]


def test_provenance_is_folded_at_the_bottom_with_downloads(page):
    last = page.cells[-1]
    assert "provenance" in last.metadata["tags"]
    assert ":class: note dropdown" in last.source and "{download}`executed notebook" in last.source
    assert page.metadata["rlvr_dynamics"]["book_page"] is True


def test_the_transform_is_idempotent_from_the_raw_copy(tmp_path):
    entry = _entry()
    verdicts = {c["id"]: c for c in claims.claim_verdicts(ROWS)}
    once = pages.book_page(_notebook(), entry, ROWS, verdicts)
    twice = pages.book_page(_notebook(), entry, ROWS, verdicts)
    strip = lambda nb: [(c.cell_type, c.source, c.metadata.get("tags")) for c in nb.cells]  # noqa: E731
    assert strip(once) == strip(twice)


def test_first_sentence_keeps_math_and_decimals():
    assert markup.first_sentence("Slope is 1.5 at $x=0.5. y$ here. Next one.") == "Slope is 1.5 at $x=0.5. y$ here."


def test_explorer_data_comes_from_the_closed_forms():
    from rlvr_dynamics.p1 import oscillator as osc

    data = explorer.explorer_data(n_time=20, n_map=8)
    g = explorer.EXPLORER_GRID
    assert len(data["curves"]) == len(g["momentum"]) * len(g["eta_k"]) * len(g["refresh_interval"])
    i, j, k = 3, 6, 3
    c = data["curves"][f"{i}_{j}_{k}"]
    mu, a, kref = g["momentum"][i], g["eta_k"][j], g["refresh_interval"][k]
    assert c["zeta"] == pytest.approx(osc.damping_ratio(a, mu, 1.0, kref), rel=1e-3)
    assert c["regime"] == osc.regime(a, mu, 1.0, kref)
    assert c["reward"][0] == pytest.approx(data["p0"])
    # stationary spread falls as 1/sqrt(G)
    ratio = c["sd"][0] / c["sd"][-1]
    assert ratio == pytest.approx((g["group_size"][-1] / g["group_size"][0]) ** 0.5, rel=1e-3)
    # the threshold line is K_ref = (1 - mu)/(eta K)
    assert data["threshold"][str(i)][0] == pytest.approx((1 - mu) / data["map_axes"]["eta_k"][0], rel=1e-4)
    unstable = data["curves"][f"{i}_{j}_{len(g['refresh_interval']) - 1}"]
    assert unstable["regime"] == "unstable" and unstable["sd"] is None


def test_panel_titles_are_never_turned_into_a_caption():
    nb = _notebook()
    audit = {"suptitle": "Reward against step", "axes": [{"title": "G = 4"}, {"title": "G = 4"}, {"title": ""}]}
    nb.cells[3].outputs[2]["data"]["application/vnd.rlvr-dynamics.figure-audit+json"] = audit
    with pytest.raises(pages.MissingCaption, match=r"figure\(s\) \[1\]"):
        pages.figure_captions(nb, _entry())


def test_an_explicit_caption_in_the_cell_metadata_wins():
    nb = _notebook()
    nb.cells[5].metadata["mystnb"] = {"figure": {"caption": "My own caption."}}
    caps = pages.figure_captions(nb, _entry())
    assert caps[1] == caps[2] == "My own caption."


def test_figure_data_is_written_as_a_long_csv():
    audit = {"series": [{"axes": 1, "kind": "line", "label": "G = 4", "x": [0.0, 1.0], "y": [0.5, None]}]}
    assert pages.figure_data_csv(audit) == "axes,kind,label,x,y\n1,line,G = 4,0.0,0.5\n1,line,G = 4,1.0,\n"
    assert pages.figure_data_csv({"series": []}) is None


def test_make_pages_keeps_the_raw_copy_and_rebuilds_from_it(tmp_path, monkeypatch):
    out = tmp_path / "executed"
    out.mkdir()
    nbformat.write(_notebook(), out / "demo_page.ipynb")
    verdicts = {c["id"]: c for c in claims.claim_verdicts(ROWS)}
    pages.make_pages(tmp_path, [_entry()], ROWS, verdicts)
    first = (out / "demo_page.ipynb").read_text()
    assert (out / "demo_page.raw.ipynb").exists()
    pages.make_pages(tmp_path, [_entry()], ROWS, verdicts)  # the page is not transformed twice
    again = nbformat.read(out / "demo_page.ipynb", as_version=4)
    assert [c.source for c in again.cells] == [c.source for c in nbformat.reads(first, as_version=4).cells]
    assert sum("Results on this page" in c.source for c in again.cells) == 1


@pytest.mark.parametrize("text, want", [
    ("was seen (issue 9).", "was seen."), ("2026-12-01 (issue 21), after the v2", "2026-12-01, after the v2"),
    ("a (Issue 9). PASS rule", "a. PASS rule"),
    ("(fixed 2026-12-01, before any run was read; issue 23): the row", "(fixed 2026-12-01, before any run was read): the row"),
    ("(see x, issue 4) y", "(see x) y"), ("no reference here", "no reference here"), (None, "")])
def test_reader_text_drops_tracker_references(text, want):
    assert markup.reader_text(text) == want


def test_the_build_refuses_a_figure_without_an_authored_caption():
    nb = _notebook()
    nb.cells[5].outputs[2] = _image(caption=None)
    with pytest.raises(pages.MissingCaption, match=r"demo_page: figure\(s\) \[3\] of 3 have no authored caption"):
        pages.figure_captions(nb, _entry())


def test_figures_are_numbered_per_page():
    verdicts = {c["id"]: c for c in claims.claim_verdicts(ROWS)}
    page = pages.book_page(_notebook(), _entry(), ROWS, verdicts, page_no=3)
    caps = [c.metadata["mystnb"]["figure"]["caption"] for c in page.cells
            if "rlvr-figure" in c.metadata.get("tags", [])]
    assert [c.split(". ")[0] for c in caps] == ["Figure 3.1", "Figure 3.2", "Figure 3.3"]
    note = pages._verdict_note(["P1-C2"], "demo_page", verdicts, "3.1")
    assert "What figure 3.1 shows for" in note.source and "*exact*" in note.source


def test_a_figure_note_quotes_only_the_rows_its_section_shows():
    """A figure in a claim's section quotes the in-scope rows; a figure in its "Context" subsection quotes the
    context rows (a note never quotes the rows of another figure: issue 30, Fig 16.2)."""
    rows = ROWS + [{"id": "P1-C2", "notebook": "demo_page", "verdict": "INCONCLUSIVE", "statement": "trap model",
                    "measured": 0.0, "reason": "constant by construction, spread 5e-14", "setting": "context"}]
    verdicts = {c["id"]: c for c in claims.claim_verdicts(rows)}
    scoped = pages._verdict_note(["P1-C2"], "demo_page", verdicts, "3.1")
    ctx = pages._verdict_note(["P1-C2"], "demo_page", verdicts, "3.2", context=True)
    assert "*exact*" in scoped.source and "trap" not in scoped.source and "*context*" not in scoped.source
    assert "*context*" in ctx.source and "*exact*" not in ctx.source
    assert pages._verdict_note(["P1-C3"], "demo_page", verdicts, "3.2", context=True) is None
    entries = registry.load_registry()
    numbers = markup.page_numbers(entries)
    assert sorted(numbers.values()) == list(range(1, len(entries) + 1))


def test_a_page_whose_own_row_differs_from_the_headline_leads_with_its_own_verdict():
    """P1-C8 on a GRPO page: the page's row is INCONCLUSIVE, the headline PASS comes from the exact bandit."""
    from rlvr_dynamics.book.pages import lead_sentence
    overall = dict(id="P1-C8", paper="P1", verdict="PASS", kind="universal", evidence=[], provenance={})
    row = dict(id="P1-C8", setting="testbed", verdict="INCONCLUSIVE", notebook="nb", measured=0.5, unit="")
    text = lead_sentence("P1-C8", overall, row, "nb")
    assert text.index("INCONCLUSIVE") < text.index("PASS")
    assert "reads **INCONCLUSIVE** on this page (testbed" in text and "decided by another page's row" in text
    same = lead_sentence("P1-C8", overall, {**row, "verdict": "PASS"}, "nb")
    assert "over every page that tests it; on this page (testbed)" in same
    assert "over every page that tests it, judged" in lead_sentence("P1-C8", overall, None, "nb")


def test_the_toc_puts_results_then_the_readers_own_runs_then_explore_and_rerun(tmp_path):
    """Every hand-written page but the landing and part pages is in exactly one part after the papers', in reading
    order: results, then what a practitioner does with them, then the explorer, reruns and downloads."""
    import yaml

    from rlvr_dynamics.book import registry, site_pages

    book = tmp_path / "book"
    book.mkdir()
    for page in site_pages.STATIC_PAGES:
        (book / f"{page}.md").parent.mkdir(parents=True, exist_ok=True)
        (book / f"{page}.md").write_text(f"# {page}\n")
    toc = yaml.safe_load(site_pages.write_toc(book, registry.load_registry()).read_text())
    captions = [p["caption"] for p in toc["parts"]]
    assert captions[2:] == ["Results", "Your own GRPO runs", "Explore and rerun"], captions
    files = {p["caption"]: [c["file"] for c in p["chapters"]] for p in toc["parts"][2:]}
    assert files["Results"][0] == "scorecard" and files["Your own GRPO runs"][:3] == [
        "_generated/practice", "own-runs", "diagnose"]
    placed = [f for fs in files.values() for f in fs]
    assert len(placed) == len(set(placed))
    assert set(site_pages.STATIC_PAGES) - {"intro", "p1/index", "p2/index"} <= set(placed)
