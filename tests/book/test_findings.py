"""The practitioner page: its numbers are computed from the committed results (no typed numbers)."""
from __future__ import annotations

import re
from pathlib import Path

from rlvr_dynamics.book import findings, registry
from rlvr_dynamics.book.markup import load_verdicts, per_claim
from rlvr_dynamics.paths import STORED_CLAIMS_DIR


def test_gap_magnitude_spread_is_smaller_than_the_step_spread():
    out = findings.gap_magnitude_spread()
    for algo in ("grpo", "dr_grpo"):
        assert out[algo]["eta_spread"] > 10 * out[algo]["product_spread"] >= 10
        assert out[algo]["t_min"] < out[algo]["t_max"]


def test_practice_page_reads_the_recorded_verdicts_and_benchmark():
    entries = registry.load_registry()
    verdicts = per_claim(load_verdicts(STORED_CLAIMS_DIR), entries)
    rows = [r for v in verdicts for r in v["evidence"]]
    md = findings.practice_markdown(registry.BOOK_DIR, rows, verdicts)
    assert md.startswith("# What this means for your GRPO run")
    assert md.count("\n## ") == 7
    c5 = next(r for r in rows if r["notebook"] == "p1_group_size" and r["id"] == "P1-C5" and r["setting"] == "exact")
    assert f"{float(c5['measured']):+.1%}" in md
    for cid in ("P1-C5", "P2-C7", "P1-C10", "P1-C8", "P2-C10"):
        assert re.search(rf"{cid} <claim-{cid.lower()}>`: .*headline <span", md), cid
    # issue 30: the RLOO plateau move is the plateau shift (not the timescale ratio that decides its row); the
    # plateau advice names the KL weight; Dr. GRPO is not credited with an untested result; one figure per finding
    rloo = next(r for r in rows if r["notebook"] == "p1_group_size" and r["id"] == "P1-C5" and r["setting"] == "context")
    shift = float(re.search(r"plateau shift/rise ([+-]?[\d.e-]+)", rloo["reason"]).group(1))
    assert f"moves it by {shift:+.2%}" in md and f"{float(rloo['measured']):+.2%}" not in md
    assert "β = 2" in md and "Dr. GRPO, which also drops the std, was not tested" in md
    assert "## 2. Context:" in md and "Under Adam (context) the critical step is flat in T" in md
    assert md.count("```{image} downloads/figures/") == 5
    assert "criterion fixed before the result" in md or "amended after the result" in md
    assert "Trust the forecast's interval" not in md
    # status first on runs with known outcomes (from the benchmark), and the SmolLM2 rows with their run count
    import json
    bench = json.loads((registry.BOOK_DIR / findings.BENCHMARK_JSON).read_text())
    t = bench["failures"]["test part"]["targets"]
    assert f"within one logged point on only {t['reported_within_one']} of {t['collapses']} collapses" in md
    assert "<diagnose-precursors>" in md and "(diagnose-precursors)=" in (registry.BOOK_DIR / "diagnose.md").read_text()
    paper = {r["id"]: r for r in rows if r["notebook"] == "grpo_smollm" and r["setting"] == "paper"}
    n_done = re.search(r"on (\d+) of 6 panel runs complete", paper["P1-C9"]["reason"]).group(1)
    assert f"{n_done} of the 6 panel runs are trained" in md
    section = md.split("## 7.")[1]
    assert all(f"{cid} <claim-{cid.lower()}>" in section for cid in paper)


def test_paper_figures_list_names_a_page_or_a_reason():
    import yaml

    items = yaml.safe_load((registry.BOOK_DIR / "paper_figures.yml").read_text())
    ids = {e.id for e in registry.load_registry()}
    assert {i["paper"] for i in items} == {"P1", "P2"}
    for i in items:
        assert (i.get("page") in ids) != bool(i.get("none_because")), i["figure"]
        assert i["status"].startswith("[") and i["described"]
