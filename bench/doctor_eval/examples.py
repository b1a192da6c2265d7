"""The Diagnose page's worked examples: one run with known truth per status, its figure and a caption computed from
its report (``bench/bench_doctor.py --figures`` writes them to ``book/doctor_examples.md``)."""
from __future__ import annotations

import sys
from pathlib import Path

from rlvr_dynamics.paths import REPO_ROOT

from . import corpus as C

EXAMPLE_SOURCES = ("shared", "cs336", "project", "project-fail", "sim")
"""Where the worked examples are looked for, in this order (real logs first; simulated runs from the test part)."""
EXAMPLES_MD = REPO_ROOT / "book" / "doctor_examples.md"


def example_runs() -> list[tuple[str, object]]:
    """One worked example per status (``doctor.status.STATES`` but ``too short``), chosen by a fixed rule: the first
    run in :data:`EXAMPLE_SOURCES` order (corpus order within a source; simulated runs of the test part only) whose
    full-log status is that state and whose label agrees with it (a healthy label for ``rising``, ``plateaued`` and
    ``noise only``; a collapse, unstable or failure label for the six failure states), so that each example shows
    the doctor right on a run with known truth. ``[(state, run or None)]``."""
    from rlvr_dynamics.doctor.status import FAILURE_STATES, STATES, decide_status

    wanted = [st for st in STATES if st != "too short"]
    found: dict[str, object] = {}
    for source in EXAMPLE_SOURCES:
        for r in C.load_corpus(sources=(source,)):
            if source == "sim" and r.split != "test":
                continue
            if len(found) == len(wanted):
                break
            state = decide_status(r.log, r.reward_bounds).state
            if state in found or state not in wanted:
                continue
            if (state in FAILURE_STATES) == (r.outcome == "healthy"):
                continue
            found[state] = r
    return [(st, found.get(st)) for st in wanted]


def delta_chi2_words(first: bool) -> str:
    """What Δχ² in a dynamics reading means (``doctor.reading.dynamics``: ``(rss_stable − rss_growing)/s²``), in
    words: in full the first time a caption shows it, short after that."""
    from rlvr_dynamics.doctor.reading.dynamics import GROWTH_DELTA_BIC
    if not first:
        return "(Δχ²: the misfit without growth minus the misfit with it; positive favours a growing oscillation.)"
    return ("(Δχ² measures how much better a growing oscillation on top of the stable law fits than the best "
            "oscillation that does not grow: the residual sum of squares without growth minus that with growth, in "
            "units of the run's step noise variance corrected for its autocorrelation. A positive value favours the "
            "growing oscillation, zero or below the stable law; the doctor considers growth only from "
            f"Δχ² = {GROWTH_DELTA_BIC:g} up, and then tests whether the amplitude rises.)")


def quiet_sentence(steps, status: dict, diagnostics: dict) -> str:
    """When the doctor is quiet on the run shown: the detectors that never fired and those the log cannot feed,
    and the step of the first detector event against the status step (and the reward's peak, when the status names
    it), in logged points; or that no detector fired at all."""
    import numpy as np

    quiet = [n.replace("_", " ") for n, d in diagnostics.items() if d.get("available", True) and not d["fired"]]
    na = [n.replace("_", " ") for n, d in diagnostics.items() if not d.get("available", True)]
    tail = ((f" Quiet over the whole run: {', '.join(quiet)}." if quiet else "")
            + (f" Not available (the log lacks its signal): {', '.join(na)}." if na else ""))
    first = [(min(e["step"] for e in (d.get("events") or [{"step": d["step"]}])), n.replace("_", " "))
             for n, d in diagnostics.items() if d["fired"]]
    if not first:
        return "No detector fired: the doctor is quiet on this run, and the status comes from the reward alone." + tail
    step, name = min(first)
    def points(a, b) -> str:   # how many logged points apart two steps are
        k = int(abs(np.searchsorted(steps, b) - np.searchsorted(steps, a)))
        return f"{k} logged point{'' if k == 1 else 's'}"
    out = f"The doctor is quiet until step {step}, its first detector event ({name})"
    at = status.get("step")
    if status.get("failure") and at is not None:
        out += (f", {points(step, at)} before the status step {at}" if step < at else
                " at the status step itself" if step == at else
                f", {points(at, step)} after the status step {at}")
        peak = (status.get("numbers") or {}).get("peak_step")
        if peak is not None and peak < step:
            out += f" and {points(peak, step)} after the reward's peak at step {peak}: no warning came before the fall began"
    return out + "." + tail


def examples(folder: Path) -> str:
    """Write one figure per status (:func:`example_runs`; ``rlvr-dynamics fit … --png``) and the Markdown that shows
    them, each caption computed from its report: the status with its evidence and what to do, the run and its label,
    the reading (with Δχ² defined in words where it appears) and the detectors that fired, and when the doctor is quiet
    (:func:`quiet_sentence`)."""
    from rlvr_dynamics.doctor.render.html import write_report
    from rlvr_dynamics.doctor.pipeline import fit_run
    from rlvr_dynamics.runs.hyperparams import find_hyperparameters

    parts, defined = [], False
    for state, run in example_runs():
        if run is None:
            parts.append(f"**{state}**: no run of the corpus with a label that agrees reads this status.\n")
            print(f"{state}: no example run found; listed as missing", file=sys.stderr)
            continue
        k_ref = find_hyperparameters(run.log.source)["refresh_interval"] if run.source in ("project", "project-fail") \
            else None
        report = fit_run(run.log, refresh_interval=k_ref, p1_laws=False, reward_bounds=run.reward_bounds or "auto")
        key = state.replace(" ", "_")
        png = folder / f"example_{key}.png"
        write_report(run.log, report, png=png, dpi=80, run_name=run.name)
        st, dyn = report["status"], report["dynamics"]
        fired = [f"{name.replace('_', ' ')} at step{'s' if len(d.get('events') or []) > 1 else ''} "
                 f"{', '.join(str(e['step']) for e in (d.get('events') or [{'step': d['step']}])[:6])}"
                 for name, d in report["diagnostics"].items() if d["fired"]]
        label = run.outcome if run.failure_mode is None else f"{run.outcome} ({run.failure_mode.replace('_', ' ')})"
        at = "" if st["step"] is None else f" at step {st['step']}"
        reason = dyn.get("reason") or ""
        caption = (f"**{state.upper()}**{at}"
                   f" — {st['evidence']}." + (f" *Warning:* {st['warning']}." if st.get("warning") else "") +
                   (f" *What to do:* {st['action']}." if st.get("action") else "") +
                   f" Run `{run.name}` ({run.source}, labelled {label}; {run.prompts_per_step or '?'} prompts per step, "
                   f"{report['n_points']} logged steps). Reading: {dyn['verdict']}"
                   + (f" — {reason}" if reason else "") + "."
                   + (f" {delta_chi2_words(not defined)}" if "Δχ²" in reason else "")
                   + (f" Detectors: {'; '.join(fired)}." if fired else "") + " "
                   + quiet_sentence(run.log.steps, st, report["diagnostics"]))
        defined = defined or "Δχ²" in reason
        parts.append(f"```{{figure}} {png.relative_to(REPO_ROOT / 'book').as_posix()}\n:name: fig-doctor-{key}\n"
                     f":width: 100%\n\n{caption}\n```\n")
        print(f"wrote {png.relative_to(REPO_ROOT)}", file=sys.stderr)
    text = ("<!-- generated by bench/bench_doctor.py --figures; do not edit -->\n" + "\n".join(parts))
    from rlvr_dynamics._io import atomic_write_text

    atomic_write_text(EXAMPLES_MD, text)
    return text
