"""Reader-facing output of a notebook: results as tables and figure interpretations with computed numbers.

A page shows numbers a reader needs as a rounded table with units (:func:`table`), never as a wide ``print``; the
one or two sentences that read a figure are written by code right after it (:func:`say`), so every number in them
is computed, not typed (the showyourwork habit). Both return IPython ``Markdown`` objects: the book renders them
as Markdown, nbval compares their text. Debug prints belong in folded cells.

Example::

    from rlvr_dynamics.book.display import say, table
    table([{"run": "G=4, seed 1", "R2": 0.93, "dBIC": -12.1}], {"run": "run", "R2": "R² (three-phase)",
          "dBIC": "ΔBIC (three-phase − single)"}, digits=3)
    say(f"The three-phase law wins on {n_win} of {n} runs (ΔBIC < −10); the median ΔBIC is {med:+.1f}.")
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Mapping


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}".replace(",", "\u202f") if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "–" if math.isnan(value) else ("∞" if value > 0 else "−∞")
        if value == 0:
            return "0"
        text = f"{value:.{digits}g}"
        if "e" in text:
            mant, exp = text.split("e")
            text = f"{mant} × 10{str(int(exp)).translate(_SUPERSCRIPT)}"
        return text.replace("-", "−")
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return f"[{_cell(float(value[0]), digits)}, {_cell(float(value[1]), digits)}]"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table_markdown(rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str] | None = None, *, digits: int = 3,
                   caption: str | None = None) -> str:
    """A Markdown table of ``rows`` (dicts), one column per key of ``columns`` (key → header, with the unit in the
    header, e.g. ``{"slope": "slope of log η_c vs log T"}``); numbers rounded to ``digits`` significant digits,
    CIs given as ``(low, high)`` pairs print as ``[low, high]``. ``columns=None`` uses the first row's keys."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows must not be empty")
    if columns is None:
        columns = {k: k for k in rows[0]}
    if not isinstance(digits, int) or not 1 <= digits <= 12:
        raise ValueError(f"digits must be an integer in [1, 12], got {digits!r}")
    missing = [k for k in columns if not any(k in r for r in rows)]
    if missing:
        raise KeyError(f"columns {missing} are in no row; row keys: {sorted(rows[0])}")
    head = "| " + " | ".join(str(h).replace("|", "\\|") for h in columns.values()) + " |"
    align = "|" + "|".join("---:" if all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
                                         for r in rows if r.get(k) is not None) else ":---" for k in columns) + "|"
    body = ["| " + " | ".join(_cell(r.get(k), digits) for k in columns) + " |" for r in rows]
    out = "\n".join([head, align, *body])
    return (f"**{caption}**\n\n" + out) if caption else out


def table(rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str] | None = None, *, digits: int = 3,
          caption: str | None = None) -> Any:
    """:func:`table_markdown` as an IPython ``Markdown`` object (display it as a cell's last expression)."""
    from IPython.display import Markdown

    return Markdown(table_markdown(rows, columns, digits=digits, caption=caption))


def damping_regime(damping_ratio: float) -> str:
    """The regime a damping ratio ζ names, in words: ``"underdamped"`` (ζ < 1, the error oscillates),
    ``"critically damped"`` (ζ = 1) or ``"overdamped"`` (ζ > 1, no oscillation)."""
    if not math.isfinite(damping_ratio) or damping_ratio < 0:
        raise ValueError(f"damping_ratio must be finite and >= 0, got {damping_ratio!r}")
    if abs(damping_ratio - 1.0) < 1e-9:
        return "critically damped"
    return "underdamped" if damping_ratio < 1 else "overdamped"


_TOO_DAMPED = re.compile(r"ζ = (\d+(?:\.\d+)?), too (?:under|over)damped to score,")


def damping_words(text: str) -> str:
    """A reading that names a damping ratio's regime says what the ratio says: ``"ζ = 1.61, too underdamped to
    score,"`` → ``"ζ = 1.61: overdamped, but too close to critical damping (ζ = 1) to score;"`` (the regime from
    :func:`damping_regime`, never typed)."""
    def fix(m: re.Match) -> str:
        zeta = float(m.group(1))
        regime = damping_regime(zeta)
        words = ("overdamped, but too close to critical damping (ζ = 1) to score" if regime == "overdamped"
                 else f"{regime}, so not scored")
        return f"ζ = {m.group(1)}: {words};"
    return _TOO_DAMPED.sub(fix, text)


def say(text: str) -> Any:
    """A sentence or two that read the figure or table above, with numbers formatted by the caller (an f-string).
    Returns an IPython ``Markdown`` object (display it). A damping regime named beside a damping ratio is
    recomputed from the ratio (:func:`damping_words`)."""
    from IPython.display import Markdown

    text = damping_words(" ".join(str(text).split()))
    if not text:
        raise ValueError("say(text): text must not be empty")
    return Markdown(text)
