"""Generated Markdown that a hand-written page includes, as reader text: the build copies each file of
:data:`INCLUDED` into ``<book>/_generated/reader/`` through :func:`reader_markdown`, and the pages include the copy.

The files are written by other layers (the run doctor's rules and status table from its docstrings, the doctor
benchmark's tables and worked examples by ``bench/bench_doctor.py``, the field references): their text is addressed
to whoever reads the code, so it cites the project's notes ("P1 spec §4") and names constants and detectors as the
code does (``JUMP_OVER_LARGEST``, ``reward_hacking``). In the book a citation becomes the paper's part in words
(:func:`.markup.cite_text`) and a code name a code span, by the same rules as every notebook page
(:func:`.markup.link_references`). The committed files are left as they are (their tests compare them with their
generators).
"""
from __future__ import annotations

import re
from pathlib import Path

from .._io import atomic_write_text
from .markup import GENERATED, cite_text, link_references

INCLUDED = ("doctor_status.md", "doctor_examples.md", "doctor_precursors.md", "doctor_rules.md", "doctor_fields.md",
            "callback_fields.md", "doctor_benchmark.md", "doctor_benchmark_v1.md")
"""Generated files under ``book/`` that hand-written pages include (``diagnose.md``, ``doctor-benchmark.md``)."""
READER_DIR = f"{GENERATED}/reader"
"""Where the reader copies go, relative to the book folder; a page includes ``_generated/reader/<name>``."""

_DIRECTIVE = re.compile(r"^(```\{(?:figure|admonition|note|warning|dropdown)\}[^\n]*\n)(.*?)(^```$)", re.S | re.M)
_PAPER_SPEC = re.compile(r"\b(P[12])(?:[’']s)? spec(?:ification)? §\s?(\d+(?:\.\d+)*)")


def reader_markdown(markdown: str) -> str:
    """``markdown`` as reader text: "P1 spec §4" → the paper's part in words, code names → code spans, raw values
    → words, claim ids linked."""
    def cite(m: re.Match) -> str:
        try:
            return cite_text(m.group(1), m.group(2))
        except ValueError:
            return f"{m.group(1)}'s theory"
    def body(m: re.Match) -> str:   # a directive's content (a caption, a box) is reader text; its options are not
        lines = m.group(2).split("\n")
        k = next((i for i, ln in enumerate(lines) if not ln.startswith(":")), len(lines))
        return m.group(1) + "\n".join(lines[:k] + [link_references("\n".join(lines[k:]), None)]) + m.group(3)
    text = _PAPER_SPEC.sub(cite, markdown)
    return _DIRECTIVE.sub(body, link_references(text, None))


def write_reader_copies(book_dir: Path) -> list[Path]:
    """Write the reader copy of every file of :data:`INCLUDED` that exists under ``book_dir``; return the paths."""
    out_dir = Path(book_dir) / READER_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for name in INCLUDED:
        src = Path(book_dir) / name
        if src.exists():
            out.append(out_dir / name)
            atomic_write_text(out[-1], reader_markdown(src.read_text(encoding="utf-8")))
    return out
