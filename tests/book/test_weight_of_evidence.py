"""The weight-of-evidence box (rlvr_dynamics.book.weight_of_evidence): counts from the claims' rows, the paper
setting's runs from the committed run folders, checked against the experiment files by another path."""
from __future__ import annotations

import re

import pytest

from rlvr_dynamics.book import weight_of_evidence as w


def claim(cid, verdict, **by_setting):
    return dict(id=cid, verdict=verdict, by_setting=by_setting, evidence=[])


@pytest.mark.parametrize("verdict, by_setting, expected", [
    ("PASS", dict(exact="PASS"), ["exact"]),
    ("PASS", dict(exact="PASS", testbed="INCONCLUSIVE", context="FAIL"), ["exact"]),    # only decisive cells decide
    ("PASS", dict(paper="PASS", testbed="PASS", context="INCONCLUSIVE"), ["paper", "testbed"]),
    ("INCONCLUSIVE", dict(paper="INCONCLUSIVE", testbed="INCONCLUSIVE"), ["paper", "testbed"]),
    ("PASS", dict(context="PASS"), []),
    ("PARTIAL", dict(paper="PARTIAL", testbed="PASS"), ["paper"]),        # P1-C9: the outvoted testbed PASS decides nothing
    ("FAIL", dict(testbed="FAIL", exact="PASS"), ["testbed"]),            # P2-C7
    ("PARTIAL", dict(testbed="FAIL", exact="PARTIAL"), ["exact"]),        # P2-C9, an existence claim: the strongest
    ("CONSISTENT", dict(exact="CONSISTENT"), []),
])
def test_deciding_settings(verdict, by_setting, expected):
    assert w.deciding_settings(claim("X-C1", verdict, **by_setting)) == expected


def test_box_counts_the_passes_that_rest_on_exact_models_alone(monkeypatch):
    monkeypatch.setattr(w, "paper_setting_runs", lambda verdicts, entries: dict(runs=0))
    verdicts = [claim("P1-C1", "PASS", exact="PASS"), claim("P1-C2", "PASS", exact="PASS", testbed="INCONCLUSIVE"),
                claim("P1-C3", "PASS", exact="PASS", paper="PASS"), claim("P1-C4", "FAIL", paper="FAIL")]
    text = "\n".join(w.weight_of_evidence_box(verdicts, []))
    assert "**2 of the 3 PASS verdicts rest on the theory's own exact models alone**" in text
    assert "P1-C3 <claim-p1-c3>` (paper and exact)" in text
    assert "*paper* 2; *exact* 3, of 4 claims" in text
    assert "No committed run is in the paper's own setting" in text


def test_paper_setting_runs_are_the_experiment_files_of_the_smollm2_grids():
    """Read by another path: the experiment file of the SmolLM2 panel grid (data/configs), whose runs the
    paper-setting rows read, gives the same model, group sizes, seeds, steps and KL weight as the runs the box says the
    verdicts rest on; the grid and equal-compute runs are counted apart, as deciding nothing."""
    from rlvr_dynamics.book.markup import load_verdicts, per_claim
    from rlvr_dynamics.book.registry import load_registry
    from rlvr_dynamics.grpo.config import load_experiment
    from rlvr_dynamics.paths import DATA_DIR, STORED_CLAIMS_DIR

    entries = load_registry()
    verdicts = per_claim(load_verdicts(STORED_CLAIMS_DIR), entries)
    got = w.paper_setting_runs(verdicts, entries)
    from rlvr_dynamics.paths import RUNS_DIR
    def committed(f):
        return [c for c in load_experiment(DATA_DIR / "configs" / f) if (RUNS_DIR / c.run_id() / "config.json").exists()]
    configs = committed("grpo_smollm_panel.yml")          # the panel runs decide; the others give context or attribution
    assert sorted(n for _, n in got["others"]) == sorted([len(committed("grpo_smollm_panel_compute.yml")),
                                                          len(committed("grpo_smollm_main.yml"))])
    assert got["pages"] == ["grpo_smollm"]
    assert got["runs"] == len(configs)
    assert got["models"] == sorted({c.model for c in configs})
    assert got["steps"] == sorted({c.max_steps for c in configs})
    assert got["betas"] == sorted({c.beta for c in configs})
    assert got["seeds_per_group_size"] == {g: len({c.seed for c in configs if c.num_generations == g})
                                           for g in sorted({c.num_generations for c in configs})}
    text = "\n".join(w.weight_of_evidence_box(verdicts, entries))
    n_pass = sum(c["verdict"] == "PASS" for c in verdicts)
    n_exact = sum(c["verdict"] == "PASS" and w.deciding_settings(c) == ["exact"] for c in verdicts)
    assert f"**{n_exact} of the {n_pass} PASS verdicts" in text
    assert re.search(rf"rests on {len(configs)} runs:\*\* 1 model \(`smollm2-135m`\)", text)


def test_scorecard_and_landing_show_the_box():
    from rlvr_dynamics.book.markup import load_verdicts, per_claim
    from rlvr_dynamics.book.registry import load_registry
    from rlvr_dynamics.book.scorecard import scorecard_markdown
    from rlvr_dynamics.book.site_pages import landing_markdown
    from rlvr_dynamics.paths import STORED_CLAIMS_DIR

    entries = load_registry()
    rows = load_verdicts(STORED_CLAIMS_DIR)
    assert scorecard_markdown(rows, entries).count("{admonition} Weight of evidence") == 1
    assert landing_markdown(per_claim(rows, entries), entries, rows, {}).count("{admonition} Weight of evidence") == 1
