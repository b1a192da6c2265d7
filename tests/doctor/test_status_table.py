"""The book's status vocabulary (``book/doctor_status.md``) is generated from the docstring of
``rlvr_dynamics.doctor.status``, agrees with the code's vocabulary and its constants, and is current."""
from __future__ import annotations

import re

import pytest

from rlvr_dynamics.doctor import status
from rlvr_dynamics.paths import BOOK_DIR


def test_the_docstring_table_lists_the_code_vocabulary_in_its_order_of_precedence():
    rows = status.status_rows()
    assert tuple(state for state, _ in rows) == status.STATES
    assert all(len(when) > 15 for _, when in rows)


def test_the_docstring_names_the_act_now_states_of_the_code():
    doc = status.__doc__
    sentence = doc[doc.index("=\n\n", doc.index("Vocabulary")):]
    sentence = sentence[: sentence.index("*act-now* states")]
    assert tuple(re.findall(r"``([^`]+)``", sentence)) == status.FAILURE_STATES


def test_the_docstring_states_the_constants_of_the_code():
    when = dict(status.status_rows())
    from rlvr_dynamics.doctor.detectors.collapse import FIRST_POINT

    assert f"fewer than {FIRST_POINT + 1} logged rewards" in when["too short"]
    assert f"at least {status.UNSTABLE_MIN_POINTS} logged points" in when["unstable"]
    assert f"below {status.NOISE_ONLY:g}" in when["noise only"]
    assert f"(at least {status.RISING_MIN_POINTS})" in when["rising"] and f"t > {status.RISING_T:g}" in when["rising"]


def test_the_table_has_one_row_per_state_with_its_failure_flag_and_live_code():
    table = status.status_table()
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and not ln.startswith("| precedence")]
    assert len(rows) == len(status.STATES)
    for k, (row, state) in enumerate(zip(rows, status.STATES)):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[:4] == [str(k + 1), f"`{state}`", "**yes**" if state in status.FAILURE_STATES else "no", str(k)]
    assert ":mod:" not in table and ":data:" not in table and "``" not in table


def test_sphinx_roles_become_inline_code_and_a_constant_shows_its_value():
    from rlvr_dynamics.doctor import precursors

    cell = status._markdown_cell("at :data:`~.precursors.ZERO_STD` or more (:mod:`.detectors.collapse`), ``a | b``")
    assert cell == (f"at `ZERO_STD` = {precursors.ZERO_STD:g} or more (`rlvr_dynamics.doctor.detectors.collapse`), "
                    "`a \\| b`")


def test_the_book_includes_the_current_status_table():
    assert (BOOK_DIR / status.STATUS_MD).read_text(encoding="utf-8") == status.status_table(), (
        "book/doctor_status.md is stale: run `python -c 'from rlvr_dynamics.doctor import status; "
        "status.write_status_table()'`")
    assert "{include} _generated/reader/doctor_status.md" in (BOOK_DIR / "diagnose.md").read_text(encoding="utf-8")


def test_write_puts_the_table_into_a_book_folder(tmp_path):
    path = status.write_status_table(tmp_path)
    assert path.name == "doctor_status.md" and f"| {status.STATES.index('plateaued') + 1} | `plateaued` |" in path.read_text(encoding="utf-8")


def test_a_docstring_without_its_table_is_refused(monkeypatch):
    monkeypatch.setattr(status, "__doc__", "The run's status.\n\nNo table here.\n")
    with pytest.raises(ValueError, match="vocabulary table"):
        status.status_rows()
