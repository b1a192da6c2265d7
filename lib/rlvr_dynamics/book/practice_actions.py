"""Section 10 of the practice page: what to do when the run doctor reports a failure or one of its detectors fires.

One source for every sentence: what a status means is the doctor's own vocabulary table
(:func:`rlvr_dynamics.doctor.status.status_rows`), what to check is the ``Signals`` block of the module that decides it
(a detector of :mod:`rlvr_dynamics.doctor.detectors`, or :mod:`rlvr_dynamics.doctor.divergence`), why it matters is
the first sentence of that module's ``Why it matters in GRPO`` block, and what to do is the sentence the doctor itself
prints (:data:`rlvr_dynamics.doctor.status.ACTIONS`: the text report, the JSON and the live stop line). The
detectors that decide no status get the same fields from their own module; the doctor prints no action for them, and
the page says so. The section's figure is the collapsed worked example of the Diagnose page (written by
``bench/bench_doctor.py --figures``).
"""
from __future__ import annotations

import importlib
import re
import textwrap
from pathlib import Path

from .markup import first_sentence
from .reader_copies import reader_markdown

STATUS_SOURCES = {"diverged": "divergence", "collapsed": "detectors.collapse",
                  "collapsing": "detectors.collapse_warning", "degenerate groups": "detectors.advantage_degeneracy",
                  "hacking suspected": "detectors.reward_hacking", "unstable": "detectors.collapse"}
"""The module of :mod:`rlvr_dynamics.doctor` whose rule decides each failure status (as
:func:`rlvr_dynamics.doctor.status.decide_status` calls them; ``unstable`` is a collapse that recovered)."""
EXAMPLE_STATE = "collapsed"
"""The Diagnose page's worked example shown as the section's figure."""
_ROLE = re.compile(r":(?:mod|data|func|class|attr|meth):`~?([^`]+)`")


def doc_section(module: str, heading: str) -> str:
    """The block ``heading`` of the docstring of ``rlvr_dynamics.doctor.<module>`` (a heading at the start of a line,
    its text indented below it), dedented and joined to one paragraph; KeyError naming both when absent."""
    doc = importlib.import_module(f"rlvr_dynamics.doctor.{module}").__doc__ or ""
    m = re.search(rf"^{re.escape(heading)}\n((?:[ \t]+.*\n|[ \t]*\n)+)", doc + "\n", re.M)
    if not m:
        raise KeyError(f"doctor.{module}: its docstring has no {heading!r} block")
    return " ".join(textwrap.dedent(m.group(1)).split())


def doctor_text(text: str) -> str:
    """The doctor's docstring text as reader Markdown: a parenthesis that only names a module dropped, a Sphinx role
    to the last part of its name as code, a constant of the status module as its value, RST literals as code; the
    evidence a status line lists (a tail of at most 4 words after the deciding module's name) as "the report gives:
    …"."""
    from ..doctor import status as st
    text = re.sub(r"\s*\(" + _ROLE.pattern + r"\): (.+)$",   # a short tail lists the evidence, a long one goes on
                  lambda m: f" (the report gives: {m.group(2)})" if len(m.group(2).split()) <= 4 else f": {m.group(2)}",
                  text)
    text = re.sub(r"\s*\(" + _ROLE.pattern + r"\)", "", text)
    text = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text).replace("``", "`")

    def constant(m: re.Match) -> str:
        value = getattr(st, m.group(1), None)
        return f"{value:g}" if isinstance(value, (int, float)) else m.group(1)
    text = re.sub(r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b", constant, text)
    return reader_markdown(text)


def _example_figure(book_dir: Path) -> str:
    """The Diagnose page's worked example of :data:`EXAMPLE_STATE` as a figure, its caption naming what it shows and
    the status line the doctor printed for it; ``""`` when the examples file lacks it."""
    from .practice_figures import figure_block
    key = EXAMPLE_STATE.replace(" ", "_")
    path = Path(book_dir) / "doctor_examples.md"
    m = re.search(rf"```{{figure}} (\S+)\n:name: fig-doctor-{key}\n(?::.*\n)*\n(\*\*[^*]+\*\*[^—]*— [^*]+?\.) ",
                  path.read_text(encoding="utf-8")) if path.exists() else None
    if not m:
        return ""
    return figure_block(f"../{m.group(1)}",
                        "What the doctor's report shows when it fires, on the collapsed run of the worked examples "
                        f"({{ref}}`Diagnose a run <fig-doctor-{key}>`): top, the logged reward; middle, its residuals "
                        "against the step-noise band; bottom, one row per detector, red from each event, \"quiet\" "
                        "where it never fired and \"n/a\" where the log lacks its signal. The report's first line: "
                        + reader_markdown(m.group(2)), "fig-practice-detector-fires",
                        "the doctor's report figure of a collapsed run")


def actions_section(book_dir: Path) -> list[str]:
    """Section 10's Markdown lines (see the module docstring)."""
    from ..doctor.detectors.reference import RULE_MODULES
    from ..doctor.status import ACTIONS, FAILURE_STATES, NEVER_LEFT_FLOOR_ACTION, STATES, status_rows
    missing = [s for s in FAILURE_STATES if s not in STATUS_SOURCES or s not in ACTIONS]
    if missing:
        raise KeyError(f"practice page: no deciding module or no action for the failure states {missing}")
    when = dict(status_rows())
    quiet = [s for s in STATES if s not in FAILURE_STATES]
    out = ["## 10. What to do when the doctor reports a failure or a detector fires\n",
           "A report opens with the run's status. Six states ask you to act; for each, what it means (the doctor's "
           "rule in words and why it matters in GRPO), what to check in your logs (the signals that rule reads) and "
           "what to do: the sentence the doctor prints itself, in the text report, the JSON and the live doctor's "
           "stop line. The other states ("
           + ", ".join(f"`{s}`" for s in quiet) + ") ask for no action. A collapse warning that the reward does not "
           "confirm is printed beside the status, never as a failure: read it as a reason to watch the signals it "
           "names.\n", _example_figure(book_dir)]
    seen: set[str] = set()
    for state in FAILURE_STATES:
        src = STATUS_SOURCES[state]
        why = "" if src in seen else " " + doctor_text(first_sentence(doc_section(src, "Why it matters in GRPO")))
        seen.add(src)   # a module's "why" is said once (a recovered collapse is not "rarely comes back")
        meaning = doctor_text(when[state])
        out += [f"### `{state}`\n",
                f"- **What it means.** {meaning[:1].upper()}{meaning[1:]}.{why}",
                f"- **What to check.** {doctor_text(doc_section(src, 'Signals'))}",
                f"- **What to do.** {ACTIONS[state][:1].upper()}{ACTIONS[state][1:]}."]
        if state == "diverged":
            out.append(f"- **What to do when the reward never left its floor.** {NEVER_LEFT_FLOOR_ACTION[:1].upper()}"
                       f"{NEVER_LEFT_FLOOR_ACTION[1:]}.")
        out.append("")
    deciding = {v.rsplit(".", 1)[-1] for v in STATUS_SOURCES.values()}
    for name in (n for n in RULE_MODULES if n not in deciding):
        src = f"detectors.{name}"
        out += [f"### The {name.replace('_', ' ')} detector\n",
                f"- **What it means.** {doctor_text(doc_section(src, 'What it detects'))} "
                f"{doctor_text(first_sentence(doc_section(src, 'Why it matters in GRPO')))}",
                f"- **What to check.** {doctor_text(doc_section(src, 'Signals'))}",
                "- **What to do.** This detector decides no status, and the doctor prints no action for it: its "
                "events show on the report's detector timeline. Act on the status it comes with; alone, it is a "
                "reason to look at the signals above.", ""]
    return out
