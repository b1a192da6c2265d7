"""The practice page: one captioned figure per section, drawn from committed files (the same bytes twice), and its
section on what to do when the doctor fires says what the doctor itself says."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from rlvr_dynamics.book import findings, practice_actions, practice_figures, registry
from rlvr_dynamics.book.markup import GENERATED, load_verdicts, per_claim
from rlvr_dynamics.paths import STORED_CLAIMS_DIR

FIGURE = re.compile(r"```\{figure\} (\S+)\n((?::[a-z]+:.*\n)*)\n(.+?)\n```", re.S)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page's Markdown, built into a copy of the files it reads (so the test writes nothing into book/)."""
    book = tmp_path_factory.mktemp("book")
    for name in (findings.BENCHMARK_JSON, "doctor_benchmark.md", "doctor_examples.md", "live_overhead.json"):
        if (registry.BOOK_DIR / name).exists():
            shutil.copy(registry.BOOK_DIR / name, book / name)
    verdicts = per_claim(load_verdicts(STORED_CLAIMS_DIR), registry.load_registry())
    return book, findings.practice_markdown(book, [r for v in verdicts for r in v["evidence"]], verdicts)


def _sections(md: str) -> dict[str, str]:
    parts = re.split(r"^## ", md, flags=re.M)[1:]
    return {p.split("\n", 1)[0]: p for p in parts}


def test_every_section_has_a_captioned_figure_that_exists(page):
    book, md = page
    sections = _sections(md)
    assert len(sections) == 10
    for title, text in sections.items():
        figs = FIGURE.findall(text)
        assert figs, f"section {title!r} has no figure"
        for src, options, caption in figs:
            assert ":name: fig-practice-" in options and ":alt: " in options and ":width: 100%" in options, title
            assert len(caption.split()) >= 12, f"section {title!r}: figure {src} has no real caption"
            if not src.startswith("downloads/"):   # the notebooks' figures are copied by the build
                assert (book / GENERATED / src).resolve().exists() or (registry.BOOK_DIR / GENERATED / src).resolve() \
                    .exists(), src


def test_the_page_figures_are_the_same_bytes_from_the_same_files(tmp_path):
    bench = json.loads((registry.BOOK_DIR / findings.BENCHMARK_JSON).read_text())
    out = []
    for k in (1, 2):
        d = tmp_path / str(k)
        shutil.copy(registry.BOOK_DIR / "live_overhead.json", d.mkdir() or d / "live_overhead.json")
        md = (practice_figures.detector_figure(d, bench) + practice_figures.panel_figure(d)
              + practice_figures.overhead_figure(d, "live_overhead.json"))
        out.append({p.name: p.read_bytes() for p in (d / GENERATED / practice_figures.FIGURE_DIR).glob("*.png")})
        assert md.count("```{figure}") == 3
    assert set(out[0]) == {"detectors.png", "smollm_panel.png", "overhead.png"} and out[0] == out[1]


def test_detector_figure_caption_counts_come_from_the_benchmark(tmp_path):
    bench = json.loads((registry.BOOK_DIR / findings.BENCHMARK_JSON).read_text())
    md = practice_figures.detector_figure(tmp_path, bench)
    dets = bench["detectors"]["detectors"].values()
    assert f"({bench['detectors']['runs']} runs, {bench['detectors']['healthy']} healthy)" in md
    assert f"at most {max(100 * d['false_alarm_rate'] for d in dets):.0f} % of the healthy runs" in md


def test_what_to_do_section_says_what_the_doctor_says(page):
    from rlvr_dynamics.doctor.detectors.reference import RULE_MODULES
    from rlvr_dynamics.doctor.status import ACTIONS, FAILURE_STATES, STATES
    _, md = page
    section = _sections(md)[next(t for t in _sections(md) if t.startswith("10. What to do"))]
    assert set(practice_actions.STATUS_SOURCES) == set(FAILURE_STATES)
    for state in FAILURE_STATES:
        block = section.split(f"### `{state}`\n", 1)[1].split("\n### ", 1)[0]
        action = ACTIONS[state]
        assert f"- **What to do.** {action[:1].upper()}{action[1:]}." in block, state
        assert "**What it means.**" in block and "**What to check.**" in block, state
        signals = practice_actions.doc_section(practice_actions.STATUS_SOURCES[state], "Signals")
        assert f"- **What to check.** {practice_actions.doctor_text(signals)}" in block, state
    for state in STATES:
        if state not in FAILURE_STATES:
            assert f"`{state}`" in section.split("\n### ", 1)[0], state
    deciding = {v.rsplit(".", 1)[-1] for v in practice_actions.STATUS_SOURCES.values()}
    for name in RULE_MODULES:
        if name not in deciding:
            assert f"### The {name.replace('_', ' ')} detector" in section, name
    assert not re.search(r"\bspec\b|§", section)


def test_what_to_do_section_follows_a_changed_action(monkeypatch, tmp_path):
    from rlvr_dynamics.doctor import status
    monkeypatch.setitem(status.ACTIONS, "unstable", "halve the learning rate and try again")
    md = "\n".join(practice_actions.actions_section(tmp_path))
    assert "- **What to do.** Halve the learning rate and try again." in md
    floor = status.NEVER_LEFT_FLOOR_ACTION
    assert f"- **What to do when the reward never left its floor.** {floor[:1].upper()}{floor[1:]}." in md
    monkeypatch.delitem(status.ACTIONS, "unstable")
    with pytest.raises(KeyError, match="unstable"):
        practice_actions.actions_section(tmp_path)
