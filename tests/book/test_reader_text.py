"""The reader-text rules of the book (``browser_check.reader_text_problems``, run by every book build) and the
formatters that keep generated pages inside them (``markup.prose``, ``markup.link_references``,
``display.damping_words``): each rule catches a planted phrase, names the page and the phrase, and passes clean text.
No browser and no book build: plain strings and a folder of two tiny HTML pages."""
from __future__ import annotations

import pytest

from rlvr_dynamics.book import browser_check as bc
from rlvr_dynamics.book import markup
from rlvr_dynamics.book.display import damping_regime, damping_words

CLEAN = ("The fitted damping falls with K_ref at slope −0.95 (95 % CI −1.02 to −0.88); η_c = 0.31 and eta_c, M_pred "
         "and Var_inf are symbols. None of the runs collapsed. True to the theory, a NaN loss stops the run. "
         "P1 Theorem 7 (arXiv:2606.30789) gives the form; this book derived the coefficients. Lists: [0.1, 0.2].")

PLANTED = [
    ("private notes", "the coefficients of spec §3.3 hold", "spec"),
    ("private notes", "as derived in §3.5", "§"),
    ("how the work was done", "(the audit of 2026-12-02)", "the audit"),
    ("how the work was done", "No new run (the issue asked for more seeds)", "the issue"),
    ("how the work was done", "it is trained across sessions", "sessions"),
    ("how the work was done", "the tracker lists it", "tracker"),
    ("code name outside a code span", "the rule is_collapsed decides", "is_collapsed"),
    ("code name outside a code span", "read by p2.step_size.is_collapsed here", "p2.step_size.is_collapsed"),
    ("code name outside a code span", "the config data/configs/grpo_p1_main.yml", "data/configs/grpo_p1_main.yml"),
    ("raw Python value", "measured nan on this page", "nan"),
    ("raw Python value", "plateau at eta [] with gain []", "[]"),
    ("raw Python value", "reference table reproduced: True.", ": True"),
    ("raw Python value", "the values array([0.1, 0.2])", "array("),
    ("raw Python value", "the values [0.1 0.25 0.5]", "[0.1 0.25 0"),
]


def test_clean_reader_text_passes_every_rule():
    assert bc.text_problems(CLEAN) == []


@pytest.mark.parametrize("rule, text, phrase", PLANTED)
def test_each_rule_catches_its_planted_phrase_and_quotes_it(rule, text, phrase):
    problems = bc.text_problems(CLEAN + " " + text)
    assert problems, text
    assert any(p.startswith(rule) and f'"{phrase}' in p for p in problems), problems


def _page(body: str) -> str:
    return ("<html><body><nav>spec § nan</nav><main><article class='bd-article'>" + body
            + "</article></main></body></html>")


def test_built_pages_are_scanned_outside_code_math_and_the_allowed_pages(tmp_path):
    (tmp_path / "index.html").write_text(_page("<p>spec</p>"))                      # the redirect: skipped
    (tmp_path / "good.html").write_text(_page(
        "<p>Clean text.</p><p>A name in code: <code>dr_grpo</code>, <code>nan</code>.</p>"
        "<pre>printed: True [] nan spec §3.3</pre><div class='math notranslate'>\\(K_{\\rm ref}\\) x_ref [] </div>"
        "<div class='admonition note'><p>Provenance: c3_momentum = nan</p></div>"))
    (tmp_path / "bad.html").write_text(_page("<p>Seen in the spec, §3.5: gain [] with dr_grpo.</p>"))
    sub = tmp_path / "_generated"
    sub.mkdir()
    (sub / "practice.html").write_text(_page("<p>the audit of the spec</p>"))   # allowed only when asked
    assert bc.READER_TEXT_ALLOWED_PAGES == ()
    assert set(bc.reader_text_problems(tmp_path)) == {"bad.html", "_generated/practice.html"}
    found = bc.reader_text_problems(tmp_path, allowed=("_generated/*.html",))
    assert set(found) == {"bad.html"}, found
    text = " ".join(found["bad.html"])
    for phrase in ('"spec"', '"§"', '"[]"', '"dr_grpo"'):
        assert phrase in text, (phrase, text)


@pytest.mark.parametrize("html,text", [
    # the article only; code, math, the note box and heading links skipped with everything inside them
    ('<body><nav>menu</nav><article class="bd-article"><h1>Title<a class="headerlink">#</a></h1><p>a &amp; b '
     '<code>x_y</code> c<br>d</p><div class="admonition note"><p>c3_momentum</p></div><div class="note">kept</div>'
     '<span class="math notranslate">\\(K\\)</span><div class="cell_input"><p>in</p></div></article>'
     '<footer>foot</footer></body>', "Title a & b c d kept"),
    ("<body><nav>menu</nav><main>m <pre>p</pre>n</main></body>", "m n"),          # no article: main
    ("<body>only <b>body</b><script>var x_y = 1;</script><!-- c_d --></body>", "only body"),
    ("<p>open <b>bold</p> after <img src=x>z<br/>end", "open bold after z end"),  # unclosed and void tags
    ("<main>a<main>b</main>c</main><p>d</p>", "a b c"),                          # the first main, whole
])
def test_page_reader_text_is_the_article_without_code_math_and_notes(html, text):
    assert bc.page_reader_text(html) == text


def test_prose_turns_private_references_raw_values_and_code_names_into_reader_text():
    raw = ("the closed forms of spec §3.3 (a spec value [D]); spec table reproduced: True; plateau at eta [] "
           "measured nan; decided by p2.step_size.is_collapsed and dr_grpo at K_ref")
    out = markup.prose(raw, "P1")
    assert "P1 Theorem 7" in out and "derived in this book" in out
    assert ": yes" in out and "eta none" in out and "undefined" in out
    assert "`p2.step_size.is_collapsed`" in out and "`dr_grpo`" in out and "K\\_ref" in out
    # what the reader sees (code spans and escapes removed) passes the rules
    shown = out.replace("\\", "")
    for name in ("`p2.step_size.is_collapsed`", "`dr_grpo`"):
        shown = shown.replace(name, "")
    assert bc.text_problems(shown) == [], bc.text_problems(shown)


def test_markdown_citations_link_to_the_theory_sources_and_leave_math_and_code_alone():
    md = ("The spec's §3.6–3.7 derivation, see §3.5 and open choice §8.6; $x_{ref}$ and `is_collapsed` stay; "
          "is_collapsed is code.\n\n## Spec check 8 (§3.1)\n")
    out = markup.link_references(md, "P1")
    assert "{ref}`P1 Proposition 14 and P1's overdamped limit <theory-sources-p1>`" in out
    assert "{ref}`this book's check of the linearisation <theory-sources-p1>`" in out
    assert "this book's open choice 6" in out
    assert "$x_{ref}$" in out and out.count("`is_collapsed`") == 2
    heading = out.split("## ", 1)[1]
    assert "§" not in out and "spec" not in heading.lower() and "{ref}" not in heading   # headings get no links


def test_every_registered_section_has_a_theory_source_and_a_citation_in_words():
    from rlvr_dynamics.book.registry import load_registry
    for e in load_registry():
        text = markup.sections_text(e.paper, e.section)
        assert text and "§" not in text and "spec" not in text.lower(), (e.id, text)
    assert markup.cite_text("P2", "3.5") == "P2 Theorem 2"
    with pytest.raises(ValueError, match="no theory source"):
        markup.theory_source("P1", "42")


def test_measured_nan_reads_not_measured():
    assert markup.measured_text({"id": "P2-C9", "measured": "nan", "unit": "fraction"}) == "not measured"
    assert markup.measured_text({"id": "P2-C9", "measured": float("nan")}) == "not measured"


@pytest.mark.parametrize("zeta, regime", [(0.5, "underdamped"), (1.0, "critically damped"), (1.61, "overdamped")])
def test_damping_regime_is_computed_from_the_ratio(zeta, regime):
    assert damping_regime(zeta) == regime


def test_a_damping_reading_says_what_its_ratio_says():
    out = damping_words("(At momentum 0.9, ζ = 1.61, too underdamped to score, the fitted T is 132 steps.)")
    assert "ζ = 1.61: overdamped" in out and "underdamped" not in out
    assert "underdamped, so not scored" in damping_words("ζ = 0.40, too overdamped to score, x")
    with pytest.raises(ValueError, match="damping_ratio"):
        damping_regime(float("nan"))


def test_generated_doctor_markdown_becomes_reader_text(tmp_path):
    from rlvr_dynamics.book.reader_copies import READER_DIR, write_reader_copies
    (tmp_path / "doctor_rules.md").write_text(
        "| rule | source |\n|---|---|\n| a fall larger than JUMP_OVER_LARGEST × the largest | P1 spec §4 |\n"
        "reward_hacking fires (P2-C6); `kept_code` and $x_{ref}$ stay.\n")
    (path,) = write_reader_copies(tmp_path)
    assert path == tmp_path / READER_DIR / "doctor_rules.md"
    out = path.read_text()
    assert "`JUMP_OVER_LARGEST`" in out and "`reward_hacking`" in out and "`kept_code`" in out and "$x_{ref}$" in out
    assert "spec" not in out and "§" not in out and "P1's four diagnostics" in out
    assert "{ref}`P2-C6 <claim-p2-c6>`" in out
