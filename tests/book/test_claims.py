"""The claims ledger: IDs must exist in the spec checklists, verdicts are validated, output is rounded and stable."""
from __future__ import annotations

import json

import pytest

from rlvr_dynamics.paths import REPO_ROOT, SHARED_DIR
from rlvr_dynamics.book import claims

SPECS = SHARED_DIR / "papers"


def test_checklist_has_every_claim_of_both_papers():
    ids = claims.checklist()
    assert [i for i in ids if i.startswith("P1-")] == [f"P1-C{k}" for k in range(1, 17)]
    assert [i for i in ids if i.startswith("P2-")] == [f"P2-C{k}" for k in range(1, 16)]
    assert ids["P1-C10"]["scale"] == "CPU" and ids["P2-C14"]["scale"] == "GPU"


@pytest.mark.skipif(not SPECS.exists(), reason="../shared/papers is not beside this clone")
def test_checklist_copy_matches_the_specs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("extract", REPO_ROOT / "tools/extract_claims.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for paper, name in mod.SPECS.items():
        fresh = mod.parse_checklist((SPECS / name).read_text(encoding="utf-8"))
        stored = [{"id": cid, **{k: v for k, v in row.items() if k != "paper"}}
                  for cid, row in claims.checklist().items() if row["paper"] == paper]
        assert fresh == stored


def test_unknown_id_is_rejected_with_the_known_ids():
    with pytest.raises(ValueError, match=r"'P1-C99'.*P1-C1, P1-C2"):
        claims.Claim("P1-C99", "x", verdict="PASS")


@pytest.mark.parametrize("kwargs, match", [
    ({"verdict": "OK"}, "must be one of"),
    ({"verdict": "FAIL"}, "needs a reason"),
    ({"verdict": "N/A", "reason": "  "}, "needs a reason"),
    ({"verdict": "PASS", "statement": ""}, "statement"),
])
def test_invalid_claims(kwargs, match):
    args = {"id": "P2-C6", "statement": "catastrophic failure", **kwargs}
    with pytest.raises(ValueError, match=match):
        claims.Claim(**args)


def test_record_rounds_prints_and_writes_json(tmp_path, capsys):
    rows = claims.record("nb", [
        claims.Claim("P1-C10", "threshold", measured=1.0000004321, paper_value=1, tolerance=0.05, verdict="PASS"),
        {"id": "P1-C11", "statement": "onset", "measured": float("nan"), "verdict": "FAIL", "reason": "diverged"},
    ], out_dir=tmp_path)
    assert rows[0]["measured"] == 1.0 and rows[1]["measured"] == "nan"
    data = json.loads((tmp_path / "nb.claims.json").read_text())
    assert data["notebook"] == "nb" and [r["id"] for r in data["claims"]] == ["P1-C10", "P1-C11"]
    assert data["claims"][0]["paper"] == "P1"
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "verdict", "measured", "paper_value", "tolerance"]
    assert out[2].split() == ["P1-C10", "PASS", "1.0", "1", "0.05"]
    assert list(tmp_path.iterdir()) == [tmp_path / "nb.claims.json"]  # no temp file left behind


def test_record_rejects_duplicates_and_empty(tmp_path):
    c = claims.Claim("P1-C1", "x", verdict="PASS")
    with pytest.raises(ValueError, match="duplicate"):
        claims.record("nb", [c, c], out_dir=tmp_path)
    with pytest.raises(ValueError, match="empty"):
        claims.record("nb", [], out_dir=tmp_path)


@pytest.mark.parametrize("value, expected", [(123456.789, 123500.0), (0.000123456, 0.0001235), (3, 3),
                                             (True, True), ("x", "x"), (None, None), (float("inf"), "inf")])
def test_rounding_to_significant_digits(value, expected):
    assert claims._round(value) == expected
