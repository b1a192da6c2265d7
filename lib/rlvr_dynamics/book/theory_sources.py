"""Where the theory comes from: each numbered part of the papers' theory, as the papers state it (arXiv id, theorem)
or as this book derived it, and how a page cites it in words (:func:`cite_text`) in place of a section number of
the project's private notes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass



ARXIV = {"P1": "arXiv:2606.30789", "P2": "arXiv:2510.08539"}
"""The papers' arXiv identifiers (P1: Ghosh et al., "Predictable GRPO"; P2: Suk & Duan, "Gradient gap")."""


@dataclass(frozen=True)
class TheorySource:
    """One part of a paper's theory as this book uses it: what the paper states and what this book derived.

    The papers' full texts are not available here, so the book cannot cite their section numbers; it cites the
    paper (arXiv id) and its numbered results (Theorem 7, Proposition 14, …) where they are known, and says which
    steps it derived itself."""

    topic: str
    """What it is about, e.g. ``"the oscillator"``."""
    paper: str | None
    """What the paper states, e.g. ``"Theorem 7"``; None when the part is this book's own."""
    derived: str | None
    """The steps this book derived (or chose) itself, in words; None when the paper states all of it."""
    cite: str
    """The short citation the pages write in place of a section number (read in running text)."""


def _ts(topic: str, paper: str | None, derived: str | None, cite: str) -> TheorySource:
    return TheorySource(topic, paper, derived, cite)


THEORY_SOURCES: dict[str, dict[str, TheorySource]] = {
    "P1": {
        "1": _ts("the claims", "the numbered claims (abstract and summaries)", None, "P1's claims"),
        "2": _ts("setup and notation", "the setting and symbols", None, "P1's setup"),
        "3": _ts("the oscillator theory", "Theorem 7 and Proposition 14", "the second-order expansion and the "
                 "coefficient formulas", "P1's oscillator theory (Theorem 7, Proposition 14)"),
        "3.1": _ts("the discrete GRPO update", None, "the update written as a recursion (the paper's exact form is not "
                   "available)", "this book's reconstruction of the update"),
        "3.2": _ts("mean-field assumption and linearised recursion", "the mean-field assumption",
                   "the linearised lagged recursion", "P1's mean-field assumption (recursion derived here)"),
        "3.3": _ts("the oscillator", "Theorem 7: a stochastically forced damped oscillator",
                   "the coefficients M, C, K_eff from a second-order expansion", "P1 Theorem 7"),
        "3.4": _ts("regimes and thresholds", "the stability threshold and the overdamped-to-oscillatory transition",
                   "the damping ratio and the threshold formulas", "P1's regimes and thresholds"),
        "3.5": _ts("accuracy of the linearisation and the lag", None,
                   "the exact-recursion ratios and the lag semantics, checked numerically",
                   "this book's check of the linearisation"),
        "3.6": _ts("the three-phase law", "Proposition 14: slow start, rise, plateau",
                   "the parametrisation fitted here", "P1 Proposition 14"),
        "3.7": _ts("single-exponential baseline and size exponent", "the overdamped limit is the single exponential",
                   "the mapping formulas (timescale = C/K_eff)", "P1's overdamped limit"),
        "3.8": _ts("stationary variance and group size", "fluctuations scale as 1/G; a residual G-dependence (v2)",
                   "the stationary-variance formula and the finite-G mechanisms", "P1's 1/G law"),
        "3.9": _ts("the fixed point p*", "imported from Mroueh (2025, arXiv:2503.06639)",
                   "the bandit form of the fixed point", "Mroueh's fixed point (arXiv:2503.06639)"),
        "4": _ts("diagnostics", "four diagnostics that separate failure modes",
                 "the windows and thresholds", "P1's four diagnostics"),
        "5": _ts("the paper's experiments", "GRPO on GSM8K, three models, G = 4 and 16", None, "P1's experiments"),
        "6": _ts("related work", "Mroueh (2025) and the saturation law", None, "P1's related work"),
        "7": _ts("small-scale reproduction design", None, "the whole design", "this book's reproduction design"),
        "7.1": _ts("CPU numerics", None, "the exact numerics", "this book's CPU numerics"),
        "7.2": _ts("the softmax-bandit reduction", "the bandit setting",
                   "the analytic stiffness K_z(β) and the lag models", "this book's softmax-bandit reduction"),
        "7.3": _ts("the CPU stand-in for the LLM runs", None, "tiny models trained with GRPO on CPU",
                   "this book's CPU stand-in for the LLM runs"),
        "7.4": _ts("acceptance checks", None, "the reference values", "this book's acceptance list"),
        "7.5": _ts("fitting procedure", None, "the fits and their protocol", "this book's fitting procedure"),
        "8": _ts("open choices", None, "every choice the paper leaves open", "this book's open choices"),
    },
    "P2": {
        "1": _ts("the claims", "the numbered claims (abstract and summaries)", None, "P2's claims"),
        "2": _ts("setup and notation", "the setting and symbols", None, "P2's setup"),
        "2.1": _ts("basic objects", "the setting and symbols", None, "P2's setup"),
        "2.2": _ts("the Gradient Gap", "the Gradient Gap (definition)", "its identities, checked numerically",
                   "P2's Gradient Gap"),
        "2.3": _ts("the log-odds potential", "the log-odds potential", "its identities", "P2's log-odds potential"),
        "2.4": _ts("update and gap alignment", "gap alignment and its cumulative form",
                   "the index conventions", "P2's gap alignment"),
        "2.5": _ts("response-length quantities", "the length symbols", "their meaning", "P2's length quantities"),
        "2.6": _ts("assumptions", "the assumptions' existence and topic", "their wording", "P2's assumptions"),
        "3": _ts("the theory", "Theorems 1-3", "the reconstructions of their statements", "P2's theory (Theorems 1-3)"),
        "3.1": _ts("the exact one-step identity", None, "the identity and its Hoeffding bound, checked numerically",
                   "this book's one-step identity"),
        "3.2": _ts("Theorem 1: the convergence pathway", "Theorem 1 (its rate)", "the constant and the formula",
                   "P2 Theorem 1"),
        "3.3": _ts("the convergence guarantee", "convergence when updates stay aligned", None,
                   "P2's convergence guarantee"),
        "3.4": _ts("stagnation", "stagnation below 100 % at a fixed step", "the mechanism", "P2's stagnation result"),
        "3.5": _ts("Theorem 2: the sharp threshold and catastrophic failure", "Theorem 2",
                   "the curved two-outcome instance used here", "P2 Theorem 2"),
        "3.6": _ts("Theorem 3: token-level refinement", "Theorem 3 (the length scaling)", "the mechanism",
                   "P2 Theorem 3"),
        "3.7": _ts("algorithm update directions", "the scope (REINFORCE, GRPO, Dr. GRPO)",
                   "each algorithm's direction and its gap alignment, checked numerically",
                   "P2's algorithm directions"),
        "3.8": _ts("gradient norm vs reward", "the claim", "the explanation", "P2's gradient-norm claim"),
        "3.9": _ts("scope limits", "limits named in summaries", None, "P2's scope limits"),
        "4": _ts("the paper's experiments", "bandit simulations and GRPO on Qwen2.5-Math-7B", None,
                 "P2's experiments"),
        "5": _ts("small-scale reproduction design", None, "the whole design", "this book's reproduction design"),
        "5.1": _ts("CPU numerics", None, "the deterministic checks", "this book's CPU numerics"),
        "5.2": _ts("the contextual bandit", "a bandit experiment", "the bandit's exact setup",
                   "this book's contextual bandit"),
        "5.3": _ts("the token-level stand-in", None, "the trap model of response length",
                   "this book's token-level stand-in"),
        "5.4": _ts("LLM-scale runs", "GRPO on a 7B model", "the CPU-scale settings", "this book's LLM-scale plan"),
        "5.5": _ts("sanity numbers from toy runs", None, "the reference numbers", "this book's toy-run numbers"),
        "5.6": _ts("library surface", None, "the functions", "this book's library"),
        "6": _ts("open choices", None, "every choice the paper leaves open", "this book's open choices"),
    },
}
"""Per paper, the parts of the theory the pages refer to, keyed by the number the project's notes give them
(the notes are not public, so the pages never show these numbers: they show :attr:`TheorySource.cite`)."""

OPEN_CHOICES = {"P1": "8", "P2": "6"}
"""Key of the "open choices" entry of each paper in :data:`THEORY_SOURCES` (an item ``8.6`` is open choice 6)."""


def theory_source(paper: str, number: str) -> TheorySource:
    """The :class:`TheorySource` of a numbered part (``"3.5"``, ``"7.2"``, an open choice ``"8.6"``); a number
    without its own entry falls back to its parent (``"3.4.1"`` → ``"3.4"``)."""
    table = THEORY_SOURCES[paper]
    key = number.strip(".")
    top = OPEN_CHOICES[paper]
    if key.startswith(top + ".") and key not in table:
        n = key.split(".", 1)[1]
        return _ts(f"open choice {n}", None, "this choice", f"this book's open choice {n}")
    while key not in table and "." in key:
        key = key.rsplit(".", 1)[0]
    if key not in table:
        raise ValueError(f"no theory source for {paper} part {number!r}; add it to THEORY_SOURCES")
    return table[key]


def parts(paper: str, ref: str) -> list[TheorySource]:
    """The sources a reference covers: ``"3.3"`` → one; a range ``"3.3–3.5"`` → each part from 3.3 to 3.5."""
    ref = ref.replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)*)(?:[–-](\d+(?:\.\d+)*))?", ref.strip("."))
    if not m:
        raise ValueError(f"not a part number or range: {ref!r}")
    lo, hi = m.group(1), m.group(2)
    if hi is None:
        return [theory_source(paper, lo)]
    if "." not in hi and "." in lo:          # "3.5-7" means 3.5-3.7
        hi = lo.rsplit(".", 1)[0] + "." + hi
    head, a = (lo.rsplit(".", 1) + [""])[:2] if "." in lo else ("", lo)
    b = hi.rsplit(".", 1)[1] if "." in hi else hi
    if head and hi.startswith(head + ".") and a.isdigit() and b.isdigit():
        keys = [f"{head}.{k}" for k in range(int(a), int(b) + 1)]
    else:
        keys = [lo, hi]
    return list(dict.fromkeys(theory_source(paper, k) for k in keys))


def cite_text(paper: str, ref: str) -> str:
    """How a page refers to a part of the theory, in words: ``cite_text("P1", "3.3")`` → ``"P1 Theorem 7"``;
    a range joins its parts (``"3.6–3.7"`` → ``"P1 Proposition 14 and P1's overdamped limit"``)."""
    cites = [s.cite for s in parts(paper, ref)]
    if len(cites) > 3:
        return f"{cites[0]} to {cites[-1]}"
    return cites[0] if len(cites) == 1 else ", ".join(cites[:-1]) + " and " + cites[-1]


def sources_label(paper: str) -> str:
    """Anchor of the "where the theory comes from" table of a paper (in its claims appendix)."""
    return f"theory-sources-{paper.lower()}"




def sections_text(paper: str, section: str) -> str:
    """A registry ``section`` field (``"§3.3–3.4, §7.2"``) as words: the cites of its parts, joined."""
    refs = [r.strip().lstrip("§").strip() for r in section.split(",") if r.strip()]
    out: list[str] = []
    for r in refs:
        for s in parts(paper, r):
            if s.cite not in out:
                out.append(s.cite)
    return "; ".join(out) or "–"
