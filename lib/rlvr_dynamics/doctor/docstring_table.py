"""Rows of a reStructuredText simple table written in a docstring (the live doctor's field table is its one source:
:func:`rlvr_dynamics.book.field_reference.field_table`)."""
from __future__ import annotations

import re


def table_rows(doc: str, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of the first simple table in ``doc`` (``====`` rules above the header, below it and at the end), each
    ``{key: cell}`` for ``keys`` in column order; a line with an empty first cell continues the row above (its cells
    are appended with a space). ``[]`` when ``doc`` holds no such table."""
    lines = doc.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("====") and "  " in line]
    if len(rules) < 3:
        return []
    start, end = rules[1] + 1, rules[2]
    cols = [m.start() for m in re.finditer(r"=+", lines[rules[0]])]
    rows: list[dict[str, str]] = []
    for line in lines[start:end]:
        cells = [line[a:(cols[j + 1] if j + 1 < len(cols) else None)].strip() for j, a in enumerate(cols)]
        if cells[0]:
            rows.append(dict(zip(keys, cells)))
        elif rows:
            for key, cell in zip(keys[1:], cells[1:]):
                if cell:
                    rows[-1][key] = (rows[-1][key] + " " + cell).strip()
    return rows
