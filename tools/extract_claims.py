"""Copy the claims checklists of ../shared/papers/*.md into book/claims.yml.

The repository must stand alone (a user's clone has no ../shared), so the checklist lives in
``book/claims.yml``; ``tests/test_claims.py`` checks that the copy still matches the specs when they are present.
Run: ``python tools/extract_claims.py [SPEC_DIR]``.
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


def parse_checklist(text: str) -> list[dict]:
    """Return one dict per checklist line ``- [ ] **Pn-Cm** [TAG] statement *Confirm:* ... SCALE.``."""
    rows = []
    for line in text.splitlines():
        m = PATTERN.match(line)
        if m:
            rows.append({k: (v or "").strip() for k, v in m.groupdict().items()})
    return rows


def main(spec_dir: str = "../shared/papers") -> None:
    out = {}
    for paper, name in SPECS.items():
        rows = parse_checklist((Path(spec_dir) / name).read_text(encoding="utf-8"))
        out[paper] = {"spec": name, "claims": rows}
    Path("book/claims.yml").write_text(
        "# Copied from ../shared/papers/*.md by tools/extract_claims.py; do not edit by hand.\n"
        + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=1000),
        encoding="utf-8",
    )
    print({p: len(v["claims"]) for p, v in out.items()})


if __name__ == "__main__":
    main(*sys.argv[1:])
