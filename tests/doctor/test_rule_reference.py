"""The book's rule reference is generated from the detector modules' opening blocks and is current."""
from __future__ import annotations

import pytest

from rlvr_dynamics.doctor.detectors import DETECTORS, reference
from rlvr_dynamics.paths import BOOK_DIR


@pytest.mark.parametrize("name", reference.RULE_MODULES)
def test_every_detector_module_opens_with_the_five_sections(name):
    block = reference.rule_block(name)
    for section in reference.SECTIONS:
        assert len(block[section]) > 40, (name, section)


def test_the_reference_covers_every_detector_of_the_report():
    assert set(DETECTORS) <= set(reference.RULE_MODULES)


def test_the_book_includes_the_current_rule_reference():
    assert (BOOK_DIR / "doctor_rules.md").read_text(encoding="utf-8") == reference.rule_reference(), (
        "book/doctor_rules.md is stale: run `python -c 'from rlvr_dynamics.doctor.detectors import reference; "
        "reference.write()'` (bench/bench_doctor.py --write also writes it)")
    assert "{include} _generated/reader/doctor_rules.md" in (BOOK_DIR / "diagnose.md").read_text(encoding="utf-8")


def test_write_puts_the_reference_into_a_book_folder(tmp_path):
    path = reference.write(tmp_path)
    assert path.name == "doctor_rules.md" and "### `collapse_warning`" in path.read_text(encoding="utf-8")


def test_a_block_without_a_section_is_refused(monkeypatch):
    from rlvr_dynamics.doctor.detectors import reward_hacking

    monkeypatch.setattr(reward_hacking, "__doc__", "Title.\n\nWhat it detects\n    something.\n")
    with pytest.raises(ValueError, match="lacks"):
        reference.rule_block("reward_hacking")
