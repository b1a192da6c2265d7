"""The book's two field references are current and complete: the live doctor's (``RunDoctor``'s docstring table)
and the TRL callback's own fields (``grpo.fields.FIELD_REFERENCE``), each with a meaning, a unit and a claim."""
from __future__ import annotations

import re

from rlvr_dynamics.book import field_reference
from rlvr_dynamics.grpo import fields
from rlvr_dynamics.paths import BOOK_DIR

CLAIM = re.compile(r"^(P[12]-C\d+)(, P[12]-C\d+)*$")


def test_every_callback_field_has_a_reference_entry_and_no_entry_is_stale():
    logged = set(fields.CALLBACK_FIELDS) | set(fields.FRESH_GAP_FIELDS) | set(fields.PANEL_FIELDS)
    assert set(fields.FIELD_REFERENCE) == logged


def test_every_reference_entry_has_a_meaning_a_unit_and_claims_of_the_ledger():
    from rlvr_dynamics.book import claims

    known = set(claims.checklist())
    for name, (meaning, unit, claim) in fields.FIELD_REFERENCE.items():
        assert len(meaning) > 20 and unit, name
        assert CLAIM.match(claim), (name, claim)
        assert set(claim.split(", ")) <= known, (name, claim)


def test_the_book_includes_the_current_tables():
    assert (BOOK_DIR / "doctor_fields.md").read_text() == field_reference.doctor_fields_markdown()
    assert (BOOK_DIR / "callback_fields.md").read_text() == field_reference.callback_fields_markdown()
    page = (BOOK_DIR / "diagnose.md").read_text()
    assert "{include} _generated/reader/doctor_fields.md" in page and "{include} _generated/reader/callback_fields.md" in page


def test_write_puts_both_tables_into_a_book_folder(tmp_path):
    paths = field_reference.write(tmp_path)
    assert [p.name for p in paths] == ["doctor_fields.md", "callback_fields.md"]
    assert "`dynamics/stop_reason`" in paths[0].read_text() and "`dynamics/gap_alignment`" in paths[1].read_text()


def test_gap_alignment_states_its_unit_per_unit_learning_rate():
    """The field whose values reach 1e6 with Adam on SmolLM2 says why, so the number is not read as absurd."""
    meaning, unit, _ = fields.FIELD_REFERENCE["gap_alignment"]
    assert unit == "nats per unit η" and "Adam" in meaning
