"""Copy the claims checklists of ../shared/papers/*.md into book/claims.yml, keeping the hand-written fields.

The repository must stand alone (a user's clone has no ../shared), so the checklist lives in ``book/claims.yml``.
Each claim entry has two kinds of fields:

- **copied from the spec** (``tag``, ``statement``, ``confirm``, ``scale``): rewritten by this tool on every run;
  ``tests/book/test_claims.py`` checks that they still match the specs when ``../shared/papers`` is present;
- **hand-written** (``paper_statement``, ``quantity``, ``criterion``, ``scope``,
  ``changed_after_result``): never touched by this tool. They are merged back by claim id; a claim new in the spec
  gets them as ``null`` (to be written by hand before any notebook records a verdict on it); a claim that left the
  spec is dropped with a warning that lists its hand-written fields.

Run from the repository root: ``python tools/extract_claims.py [SPEC_DIR]``.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

PATTERN = re.compile(
    r"^- \[ \] \*\*(?P<id>P[12]-C\d+)\*\* \[(?P<tag>[A-Z?]+)[^\]]*\] (?P<statement>.*?)"
    r"(?: \*Confirm:\* (?P<confirm>.*?))?\s*(?P<scale>(?:CPU|GPU)(?: \(?\+ ?GPU\)?)?[^.]*)\.\s*$"
)
SPECS = {"P1": "predictable-grpo.md", "P2": "gradient-gap.md"}
SPEC_FIELDS = ("tag", "statement", "confirm", "scale")
"""Fields copied from the spec checklist line (same tuple as ``rlvr_dynamics.book.claims.SPEC_FIELDS``)."""
PREREGISTERED_FIELDS = ("paper_statement", "quantity", "criterion", "scope", "changed_after_result")
"""Hand-written fields kept across regenerations (same as ``rlvr_dynamics.book.claims.PREREGISTERED_FIELDS``)."""
OPTIONAL_FIELDS = ("kind", "same_phenomenon_as")
"""Hand-written claim-level fields kept only where set (``rlvr_dynamics.book.claims.OPTIONAL_FIELDS``)."""
CLAIMS_YML = Path("book/claims.yml")

HEADER = """\
# The claims ledger: every claim of both papers, with its test. Every criterion was written here on 2026-11-30,
# after the pages' first versions had run; none was fixed before its page's first result.
# Fields tag, statement, confirm, scale are copied from ../shared/papers/*.md by tools/extract_claims.py
# (do not edit them by hand; rerun the tool). Fields paper_statement, quantity, criterion, scope,
# changed_after_result are hand-written and kept by the tool (merged by claim id):
#   paper_statement       the claim as the paper states it, in one sentence
#   quantity              the independent quantity measured, and why it is not true by construction
#   criterion             statistic, threshold (the PASS rule), tolerance, seeds; optional partial, fail,
#                         inconclusive_if (when the test could not have shown the effect), consistent_only (checks
#                         that hold by construction: CONSISTENT, never PASS), values (numbers for notebooks).
#                         Numbers are labelled "paper value" (stated in the paper), "spec value" (derived by the
#                         spec's author, [D]) or "project choice"
#   scope                 the setting, and the scope the claim covers (rows outside it are context only)
#   changed_after_result  null (the criterion keeps the rule its page's first version applied and has not changed
#                         since), or a list of amendments made after a result was seen (a rule that differs from
#                         the first version's counts as one), oldest first, each in its own commit titled
#                         "changed after the result":
#                           date            the day of the change (YYYY-MM-DD)
#                           change          what changed and what result had been seen
#                           verdict_before  the verdict under the rule in force before this change (a verdict word),
#                                           or 'unchanged' when the change did not move it
#                           kind_before     (instead of verdict_before, for a change of the claim's kind) the kind
#                                           before: the verdict under it is computed from the evidence rows
# Claim-level fields (hand-written, optional): kind (universal | existence: the paper says "can" / "there exists"),
# same_phenomenon_as (another claim id measured by the same experiment: the two count once in the totals).
#
# Settings and the headline rule (rule change of 2026-12-01, copied from ../shared/DESIGN.md; written after the
# results it decides were known, before any notebook was re-run under it). Every evidence row names its setting:
#   paper    GRPO on a pretrained LLM (the papers' own setting)
#   testbed  GRPO on the project's tiny models (CPU)
#   exact    oscillator, recursion, bandit, token model: the theory's own objects
#   context  a variant that is not the paper's algorithm; shown, never decides
# The scorecard shows the claim x setting matrix and one headline verdict:
#   (1) decisive rows (PASS / PARTIAL / FAIL) decide, the weakest of them;
#   (2) INCONCLUSIVE decides only when no decisive row exists;
#   (3) an existence claim (kind: existence) takes the strongest decisive row;
#   (4) rows that measure one phenomenon (e.g. P2-C7 and P2-C9 on the same sweep) count once;
#   (5) CONSISTENT never counts as PASS.
# A page's results box and the scorecard call the same function (rlvr_dynamics.book.claims.claim_verdicts).
# `measured` is the deciding statistic (with its CI when the CI decides, and its unit).
# Previous rule (until 2026-12-01): the weakest in-scope row, INCONCLUSIVE ranked between FAIL and PARTIAL.
"""


def parse_checklist(text: str) -> list[dict]:
    """Return one dict per checklist line ``- [ ] **Pn-Cm** [TAG] statement *Confirm:* ... SCALE.``."""
    rows = []
    for line in text.splitlines():
        m = PATTERN.match(line)
        if m:
            rows.append({k: (v or "").strip() for k, v in m.groupdict().items()})
    return rows


def merge(spec_rows: list[dict], existing: list[dict]) -> tuple[list[dict], list[str]]:
    """Spec rows (in spec order) with the hand-written fields of ``existing`` merged in by id.

    Returns ``(rows, dropped_ids)``: ``dropped_ids`` are ids present in ``existing`` but no longer in the spec.
    """
    by_id = {row["id"]: row for row in existing}
    out = []
    for row in spec_rows:
        old = by_id.get(row["id"], {})
        out.append({"id": row["id"], **{k: row[k] for k in SPEC_FIELDS},
                    **{k: old.get(k) for k in PREREGISTERED_FIELDS},
                    **{k: old[k] for k in OPTIONAL_FIELDS if old.get(k) is not None}})
    spec_ids = {row["id"] for row in spec_rows}
    return out, [cid for cid in by_id if cid not in spec_ids]


def render(data: dict) -> str:
    """The YAML text of ``book/claims.yml`` (header comment + one block per paper)."""
    return HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)


def main(spec_dir: str = "../shared/papers", target: str | Path = CLAIMS_YML) -> dict:
    target = Path(target)
    old = yaml.safe_load(target.read_text(encoding="utf-8")) if target.exists() else {}
    out = {}
    for paper, name in SPECS.items():
        rows = parse_checklist((Path(spec_dir) / name).read_text(encoding="utf-8"))
        merged, dropped = merge(rows, (old or {}).get(paper, {}).get("claims", []))
        for cid in dropped:
            print(f"warning: {cid} is no longer in {name}; its hand-written fields were dropped", file=sys.stderr)
        missing = [r["id"] for r in merged if any(r[k] is None for k in PREREGISTERED_FIELDS[:-1])]
        if missing:
            print(f"note: {paper} claims without a criterion yet: {missing}", file=sys.stderr)
        out[paper] = {"spec": name, "claims": merged}
    target.write_text(render(out), encoding="utf-8")
    print({p: len(v["claims"]) for p, v in out.items()})
    return out


if __name__ == "__main__":
    main(*sys.argv[1:])
