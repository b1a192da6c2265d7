"""The book's rule reference, generated from the block each detector module opens with (like Ruff's rule pages).

Every detector module's docstring holds, after its one-line summary, the sections of :data:`SECTIONS`, each a
heading at the start of a line followed by indented text. :func:`rule_reference` turns them into the Markdown page
``book/doctor_rules.md`` that ``book/diagnose.md`` includes; :func:`write` writes it, and
``tests/doctor/test_rule_reference.py`` checks that the committed file is what this gives now.
"""
from __future__ import annotations

import importlib
import re
import textwrap
from pathlib import Path

from ...paths import BOOK_DIR

RULES_MD = BOOK_DIR / "doctor_rules.md"
SECTIONS = ("What it detects", "Why it matters in GRPO", "Signals", "Rule", "Dev evidence for its constants")
"""The headings every detector block has, in this order."""
RULE_MODULES = ("collapse", "reward_hacking", "advantage_degeneracy", "policy_concentration",
                "dynamical_instability", "collapse_warning")
"""Detector modules of :mod:`rlvr_dynamics.doctor.detectors` in the reference, in report order."""


def rule_block(module_name: str) -> dict[str, str]:
    """``{"title": summary line, <section>: text, …}`` from the docstring of ``detectors.<module_name>``;
    ValueError when a section of :data:`SECTIONS` is missing."""
    mod = importlib.import_module(f"{__package__}.{module_name}")
    doc = mod.__doc__ or ""
    lines = doc.strip("\n").split("\n")
    out = {"title": lines[0].strip()}
    current, body = None, []
    for line in lines[1:] + [""]:
        head = next((s for s in SECTIONS if line.startswith(s)), None)
        if head is not None and not line.startswith(" "):
            if current:
                out[current] = textwrap.dedent("\n".join(body)).strip()
            current, body = head, []
        elif current is not None:
            body.append(line)
    if current:
        out[current] = textwrap.dedent("\n".join(body)).strip()
    missing = [s for s in SECTIONS if not out.get(s)]
    if missing:
        raise ValueError(f"detectors.{module_name}: its docstring lacks {', '.join(missing)}")
    return out


def _markdown(text: str) -> str:
    """Sphinx roles to inline code, RST literals to Markdown, paragraphs joined."""
    text = re.sub(r":(?:func|mod|class|data|attr|meth):`~?\.?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    return "\n\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", text))


def rule_reference() -> str:
    """The rule reference: one section per detector, its block's sections in order."""
    parts = ["<!-- generated from the detector modules' docstrings by rlvr_dynamics.doctor.detectors.reference; "
             "do not edit -->"]
    for name in RULE_MODULES:
        block = rule_block(name)
        parts += ["", f"### `{name}`", "", f"*{_markdown(block['title'])}* "
                  f"(`rlvr_dynamics.doctor.detectors.{name}`)", ""]
        for section in SECTIONS:
            parts += [f"**{section}.** {_markdown(block[section])}", ""]
    text = "\n".join(parts)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


def write(book_dir: str | Path | None = None) -> Path:
    """Write ``doctor_rules.md`` (atomically) into ``book_dir`` (default ``book/``); returns its path."""
    from ..._io import atomic_write_text

    book = Path(book_dir) if book_dir is not None else BOOK_DIR
    return atomic_write_text(book / RULES_MD.name, rule_reference())
