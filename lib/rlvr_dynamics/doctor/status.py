"""The run's status: what a user must act on, decided from the logged signals before any curve is fitted.

Every report of the doctor (``rlvr-dynamics fit`` text, ``--json``, ``--html``, the live ``dynamics/status``) opens
with one status from a fixed vocabulary, with the step it refers to and its evidence in numbers. The fits, the
forecast and P1's oscillator reading come after it, and only where they mean something: a collapsed or collapsing
run is never read as a damped response and never called stable or plateaued.

Vocabulary, in order of precedence (the first that applies is the status):

=====================  ==========================================================================================
``too short``          fewer than 4 logged rewards: nothing can be decided
``diverged``           the run blew up (:mod:`.divergence`): non-finite values at its last logged rows, or the reward
                       at its floor with no spread left in any group while the policy broke (completions at the
                       length cap, entropy blown up or gone, length doubled or halved): nothing trains any more;
                       after a fall from a level above the floor, a tenth of the rows may lie above it (a prompt
                       still solved now and then)
``collapsed``          the reward lost half its gain and has not come back (:mod:`.detectors.collapse`): step, peak
                       → now
``collapsing``         the reward itself is falling: a halving at the last logged point that the next point
                       confirms (the level it fell from never came that low), or the collapse warning on at the
                       last point while the reward, smoothed on its noise window, has fallen a quarter of its gain
                       (:mod:`.precursors`): which signals. A halving that the run's own rewards need more points
                       to confirm is a warning, with the points it takes
``degenerate groups``  the advantage-degeneracy detector still on at the last logged row, or its last event in
                       the last quarter of the run (most groups all-failed, or at one prompt a step all on one
                       partial reward, so GRPO's advantages vanish, while learning has stalled; a reward at its
                       floor on every step is exactly that)
``hacking suspected``  the reward-hacking detector on in the last quarter of the run (the training reward holds or
                       rises while the held-out evaluation or the correctness sub-reward falls)
``unstable``           the reward crashed below half its gain for at least 5 logged points and came back (a
                       temporary collapse), the crash deeper than the run's own step noise allows: its mean at
                       least Z_CRASH + √(2·ln(n/d)) standard errors below the level before it (d points, n in the run)
``noise only``         the noise ceiling 1 − σ²/Var(r) below 0.2 and no significant trend over the whole run
                       (|t| ≤ 3 for the least-squares slope of every point): the curve is mostly step noise
``rising``             the least-squares slope over the last quarter of the points (at least 10) is significantly
                       positive (t > 2)
``plateaued``          none of the above, and that slope not significantly negative either (``falling``, below)
``falling``            that slope is significantly negative (t < −3), its line falling by at least a tenth of the
                       run's gain, while the reward has not lost half of it (else it is a collapse state): not a
                       failure, and no plateau; the collapse report watches it. Exclusive with ``rising`` and
                       ``plateaued`` (the sign of one t), so it comes last and leaves the older states' live codes
                       as they were
=====================  ==========================================================================================

``diverged``, ``collapsed``, ``collapsing``, ``degenerate groups``, ``hacking suspected`` and ``unstable`` are the
*act-now* states, the failures (:data:`FAILURE_STATES`), each with one sentence of what to do (:data:`ACTIONS`).

A collapse warning that the reward does not confirm (a precursor alone: length, entropy, KL, gradient norm, the
share of zero-std groups) never sets a failure state: it is attached to the status as its ``warning``, with the
signals named, whatever the state.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ..runs.logs import RunLog
from ..runs.noise import ceiling_text, noise_ceiling, step_sigma
from . import precursors as pre
from . import warning_rule as wr
from .detectors.collapse import FIRST_POINT, CollapseEvent, collapse_events

STATES = ("too short", "diverged", "collapsed", "collapsing", "degenerate groups", "hacking suspected", "unstable",
          "noise only",
          "rising", "plateaued", "falling")
"""The status vocabulary, in order of precedence (``falling`` excludes ``rising`` and ``plateaued``; the live code of a
state is its index here)."""
FAILURE_STATES = ("diverged", "collapsed", "collapsing", "degenerate groups", "hacking suspected", "unstable")
"""States that ask the user to act."""
NOISE_ONLY = 0.2
"""Noise ceiling below which the curve is read as noise only (DESIGN, "Never absurd")."""
RISING_T = 2.0
"""t-statistic of the recent slope above which the run is still rising."""
TREND_T = 3.0
"""A run whose least-squares slope over all its points has |t| above this is never ``noise only``: a one-prompt
reward rising 0.69 → 0.86 in 150 steps has a noise ceiling below 0.2 and a trend all the same."""
FALLING_T = 3.0
"""t-statistic of the recent slope below −FALLING_T for ``falling``: a stricter bar than RISING_T, as a fall is the
claim a user acts on and the least-squares t of autocorrelated step noise overstates its significance (dev: at −2,
16 of 250 healthy simulated runs read falling, 6 at −3; the 4 simulated collapses that read falling are below −3)."""
FALL_SHARE = 0.1
"""… and a fall of at least this share of the run's gain along the recent line: a smooth reward that loses 0.01 of a
gain of 3 has a large t and no fall worth the word (changed after the test result, 2026-12-06: a simulated plateau
of the test part read "falling" from 4.39 to 4.38)."""
RISING_MIN_POINTS = 10
"""The recent slope is taken over max(RISING_MIN_POINTS, n/4) points."""
UNSTABLE_MIN_POINTS = 5
"""A recovered collapse makes the run ``unstable`` when it lasted at least this many logged points (a shorter dip is
the noise of a one-prompt reward: the collapse report itself still lists it)."""
Z_CRASH = 3.0
"""… and when the crash's mean lies at least Z_CRASH + √(2·ln(n/d)) standard errors σ̂·√(1/d + 1/d₀) below the mean
of the d₀ = max(d, 5) points before it (d points in the crash, n in the run, σ̂ the plain step noise of the run):
the √(2·ln(n/d)) is the deepest dip that noise alone digs among the n/d windows of a run."""
ACTIONS = {
    "diverged": "stop the run: lower the learning rate (÷10 is a start) and restart from the last checkpoint before "
                "the blow-up, or from the start",
    "collapsed": "stop the run and roll back to the checkpoint before the collapse; lower the learning rate or "
                 "raise the group size before resuming",
    "collapsing": "save a checkpoint now and watch the next logged points; if the reward keeps falling, roll back "
                  "and lower the learning rate",
    "degenerate groups": "the groups carry no advantage: use easier prompts (or a curriculum), raise the group size "
                         "G, or add partial credit to the reward; if every completion earns the same partial reward "
                         "(a format term alone), weight correctness higher",
    "hacking suspected": "check the format and correctness rewards against held-out answers; tighten the format "
                         "reward or weight correctness higher",
    "unstable": "lower the learning rate or raise G (fewer, larger steps are noisier, not faster); the run "
                "recovered this time",
}
"""One sentence of what to do, per failure state (the text report, the JSON and the live stop line)."""
NEVER_LEFT_FLOOR_ACTION = ("the reward never left its floor, so no group had a right answer to learn from before the "
                           "policy broke: check that the model solves any of these prompts (sample a few), use easier "
                           "prompts or partial credit; if it solved some before training, a learning rate too high "
                           "broke it at once: lower the learning rate (÷10 is a start) and restart")
"""What to do for a ``diverged`` run whose every logged reward sat at the floor (:mod:`.divergence`,
``never_left_floor``): a task too hard from the first step and a learning rate that broke the policy at once look
the same from the reward; lowering the learning rate alone would not help the first."""


@dataclass(frozen=True)
class Status:
    """The status of a run: ``state`` (one of :data:`STATES`), the ``step`` it refers to and its ``evidence``."""

    state: str
    step: int | None
    evidence: str
    numbers: dict[str, Any] = field(default_factory=dict)
    """The numbers behind the evidence (peak, now, signals, …), for the JSON report."""
    warning: str | None = None
    """A collapse warning the reward does not confirm (precursors alone, named), or None: never a failure state."""

    @property
    def failure(self) -> bool:
        return self.state in FAILURE_STATES

    @property
    def action(self) -> str | None:
        """What to do (:data:`ACTIONS`; :data:`NEVER_LEFT_FLOOR_ACTION` for a run diverged at the floor it never
        left), for a failure state; None otherwise."""
        if self.state == "diverged" and self.numbers.get("never_left_floor"):
            return NEVER_LEFT_FLOOR_ACTION
        return ACTIONS.get(self.state)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["failure"] = self.failure
        d["action"] = self.action
        return d


def _g(x: float) -> str:
    return f"{x:.3g}"


def _collapsed(ev: CollapseEvent, now: float, last_step: int) -> Status:
    how = "in one step" if ev.kind == "jump" else f"confirmed at step {ev.reported_step}"
    return Status("collapsed", ev.step,
                  f"the reward fell below half its gain at step {ev.step} ({how}): peak {_g(ev.peak)} at step "
                  f"{ev.peak_step} → {_g(now)} now (step {last_step}), floor {_g(ev.floor)}",
                  {"peak": ev.peak, "peak_step": ev.peak_step, "now": now, "floor": ev.floor,
                   "reported_step": ev.reported_step, "kind": ev.kind})


def recent_slope_t(y: np.ndarray) -> float:
    """t-statistic of the least-squares slope of ``y`` over its last max(10, n/4) points (NaN if fewer than 4)."""
    y = y[np.isfinite(y)]
    m = max(RISING_MIN_POINTS, int(math.ceil(0.25 * y.size)))
    return slope_t(y[-m:])


def slope_t(z: np.ndarray) -> float:
    """t-statistic of the least-squares slope of ``z`` on its index (NaN if fewer than 4 finite points)."""
    z = z[np.isfinite(z)]
    if z.size < 4:
        return math.nan
    x = np.arange(z.size, dtype=float)
    x -= x.mean()
    b = float(np.dot(x, z - z.mean()) / np.dot(x, x))
    resid = z - z.mean() - b * x
    se = math.sqrt(float(np.dot(resid, resid)) / (z.size - 2) / float(np.dot(x, x)))
    if se == 0:
        return 0.0 if b == 0 else math.copysign(math.inf, b)
    return b / se


def decide_status(log: RunLog, reward_bounds: tuple[float, float] | None = None, *,
                  detections: dict[str, Any] | None = None, stop: dict[str, Any] | None = None,
                  events: list[CollapseEvent] | None = None, cross: dict[str, np.ndarray] | None = None) -> Status:
    """The status of ``log`` by the precedence of the module docstring.

    ``reward_bounds``: the declared bounds (None: 0 is the floor while no reward lies below 0); ``detections``:
    the doctor's detector results by name (:class:`~.detectors.causal.Detection` or their ``to_dict()``), read for
    hacking and degeneracy; computed here when None. ``stop``: a live doctor's stop record (``doctor_stop.json``),
    named in the evidence. ``events``/``cross``: the log's collapse events and precursor crossings when the caller
    has them already (the live doctor keeps them up to date); computed here when None.
    """
    steps, r = log.reward_curve()
    n = r.size
    last = int(steps[-1]) if n else None
    if n <= FIRST_POINT:
        return Status("too short", last, f"{n} logged reward(s); the doctor needs at least {FIRST_POINT + 1}")
    status = _decide(log, steps, r, reward_bounds, detections, events, cross)
    if stop:
        status = replace(status, evidence=status.evidence + "; the live doctor stopped the run at step "
                         f"{stop.get('stopped_at_step', stop.get('step'))} (rule: {stop.get('rule', 'not recorded')})",
                         numbers={**status.numbers, "stop": stop})
    return status


def _decide(log, steps, r, reward_bounds, detections, events, cross) -> Status:
    from .divergence import detect_divergence

    div = detect_divergence(log, reward_bounds)
    if div is not None and div.kind == "non-finite":
        return Status("diverged", div.step, div.sentence(), {"kind": div.kind, "signals": div.signals, **div.numbers})
    status = _decide_reward(log, steps, r, reward_bounds, detections, events, cross)
    if div is None:
        return status
    if status.state == "collapsed":      # the collapse says more (peak → now); the blow-up is its aftermath
        return replace(status, evidence=f"{status.evidence}; {_blow_up_clause(div)}",
                       numbers={**status.numbers, "diverged": {"step": div.step, "signals": div.signals}})
    return Status("diverged", div.step, div.sentence(), {"kind": div.kind, "signals": div.signals, **div.numbers})


def _blow_up_clause(div) -> str:
    """The divergence's sentence as a clause after a collapse's evidence: from its step on ("since step 2 (99 logged
    rows) with no spread left in any group, and the policy broke: …")."""
    sentence = div.sentence()
    return f"since step {sentence.split(' since step ', 1)[1]}" if " since step " in sentence else sentence


def _decide_reward(log, steps, r, reward_bounds, detections, events, cross) -> Status:
    if events is None:
        events = collapse_events(steps, r, reward_bounds)
    done = [e for e in events if e.kind != "pending"]
    if done and done[-1].recovered_step is None:
        since = r[steps >= done[-1].step]
        now = float(np.mean(since[-max(2, done[-1].window):]))
        return _collapsed(done[-1], now, int(steps[-1]))
    if cross is None:
        cross = pre.crossings(log, reward_bounds)
    rows = np.flatnonzero(np.isfinite(log.reward))
    last_row = int(rows[-1])
    pending = events[-1] if events and events[-1].kind == "pending" else None
    if pending is not None and pending.confirm_points <= 2:
        ev = pending
        on = wr.signals_on(cross, last_row)
        return Status("collapsing", ev.step,
                      f"the reward fell below half its gain at the last logged step {ev.step} (peak {_g(ev.peak)} at "
                      f"step {ev.peak_step} → {_g(ev.value)}); the next logged point confirms or clears it" +
                      (f"; signals on: {', '.join(on)}" if on else ""),
                      {"peak": ev.peak, "peak_step": ev.peak_step, "now": ev.value, "signals": on})
    warn, _ = wr.warning_flags(cross, log.steps.size)
    warning = None if pending is None else (
        f"the reward fell below half its gain at step {pending.step} (peak {_g(pending.peak)} at step "
        f"{pending.peak_step} → {_g(pending.value)}); in this run's noise {pending.confirm_points} rewards in a row "
        f"below that line confirm a collapse, {pending.below} so far")
    if warn[max(0, last_row - wr.WARNING_WINDOW + 1): last_row + 1].any():
        on = wr.signals_on(cross, last_row)
        text = "; ".join(pre.SIGNAL_MEANING[s] for s in on)
        if "reward_fall" in on and bool(cross["reward_fall"][last_row]):
            return Status("collapsing", int(steps[-1]), "collapse warning with the reward falling: " + text,
                          {"signals": on})
        warning = "; ".join(filter(None, [warning, "collapse warning, not confirmed by the reward: " + text]))
    status = _decide_rest(log, steps, r, reward_bounds, detections, done)
    return replace(status, warning=warning) if warning else status


def _decide_rest(log, steps, r, reward_bounds, detections, done) -> Status:
    dets = detections if detections is not None else status_detections(log, reward_bounds)
    degenerate = _get(dets, "advantage_degeneracy")
    if degenerate and degenerate.get("fired") and _on_at_end(degenerate, steps):
        return Status("degenerate groups", degenerate["events"][-1]["step"],
                      f"advantage degeneracy ({degenerate['signal']}): the share of unsolved groups without reward "
                      f"spread stayed high while learning stalled (from step {degenerate['events'][-1]['step']})",
                      {"events": len(degenerate["events"])})
    hacking = _get(dets, "reward_hacking")
    if hacking and hacking.get("fired") and _on_at_end(hacking, steps):
        e = hacking["events"][-1]
        return Status("hacking suspected", e["step"],
                      f"the training reward held while {hacking['signal']} fell (reward-hacking detector, "
                      f"{len(hacking['events'])} event(s), last at step {e['step']})",
                      {"events": len(hacking["events"])})
    crashes = [e for e in done if int(np.sum((steps >= e.step) & (steps < e.recovered_step))) >= UNSTABLE_MIN_POINTS
               and crash_z(steps, r, e)[0] > crash_z(steps, r, e)[1]]
    if crashes:
        ev, done = crashes[-1], crashes
        return Status("unstable", ev.step,
                      f"the reward crashed below half its gain at step {ev.step} (peak {_g(ev.peak)} → {_g(ev.value)}) "
                      f"and recovered by step {ev.recovered_step}" +
                      (f" ({len(done)} crashes)" if len(done) > 1 else ""),
                      {"crashes": [e.to_dict() for e in done]})
    ceiling = noise_ceiling(r)
    trend_t = slope_t(r)
    if math.isfinite(ceiling) and ceiling < NOISE_ONLY and not abs(trend_t) > TREND_T:
        return Status("noise only", int(steps[-1]),
                      f"noise ceiling {ceiling_text(ceiling)} < {NOISE_ONLY}: the step noise explains most of the reward's "
                      "variance; no trend to read", {"noise_ceiling": ceiling})
    t = recent_slope_t(r)
    m = max(RISING_MIN_POINTS, int(math.ceil(0.25 * r.size)))
    if math.isfinite(t) and t > RISING_T or t == math.inf:
        return Status("rising", int(steps[-1]),
                      f"the reward still rises over the last {min(m, r.size)} logged points ({_slope_t(t)} > "
                      f"{RISING_T:g})", {"slope_t": t})
    recent = float(np.mean(r[-min(m, r.size):]))
    drop, gain = _recent_drop(r, m, reward_bounds)
    if (math.isfinite(t) and t < -FALLING_T or t == -math.inf) and drop >= FALL_SHARE * gain:
        # the line's ends, not the window's mean beside the one before: a window that rose and then fell has a
        # mean above the one before while its line falls ("falls …; mean 0.745, 0.748 before" read as no fall)
        return Status("falling", int(steps[-1]),
                      f"the reward falls over the last {min(m, r.size)} logged points ({_slope_t(t)} < "
                      f"−{FALLING_T:g}): its line goes from {recent + drop / 2:.3g} to {recent - drop / 2:.3g}, "
                      f"a fall of {drop:.3g}" + (f", {100 * drop / gain:.0f} % of its gain" if gain > 0 else "") +
                      "; not yet half its gain lost, which the collapse report would call a collapse",
                      {"slope_t": t, "drop": drop, "line_from": recent + drop / 2, "line_to": recent - drop / 2})
    small = t < -FALLING_T         # significant, but too small a fall to be one
    short = (f", a fall of {drop:.3g} along its line, under the {FALL_SHARE:.0%} of its gain a fall needs" if small
             else f", short of the t < −{FALLING_T:g} a fall needs" if t < -RISING_T else "")
    return Status("plateaued", int(steps[-1]),
                  f"no {'material' if small else 'significant'} trend over the last {min(m, r.size)} logged points "
                  f"({_slope_t(t)}{short}); mean {recent:.3g}", {"slope_t": t})


def _recent_drop(r: np.ndarray, m: int, reward_bounds) -> tuple[float, float]:
    """(drop, gain): how far the least-squares line over the last m rewards falls across them, and the run's gain,
    its highest reward less the floor (the lower bound; 0 for a reward never below 0; else its lowest reward)."""
    w = r[-min(m, r.size):]
    slope = float(np.polyfit(np.arange(w.size, dtype=float), w, 1)[0]) if w.size >= 2 else 0.0
    floor = (float(reward_bounds[0]) if reward_bounds is not None else
             0.0 if float(r.min()) >= 0.0 else float(r.min()))
    return -slope * (w.size - 1), float(r.max()) - floor


def _slope_t(t: float) -> str:
    """``slope t = 4.8``; beyond ±100 (a reward that lies on a near-exact line, e.g. a smoothed export) the bound,
    not a 16-digit number."""
    return f"slope t = {t:.1f}" if abs(t) < 100 else f"slope t {'≥' if t > 0 else '≤'} {100 if t > 0 else -100}"


def crash_z(steps: np.ndarray, r: np.ndarray, ev: CollapseEvent) -> tuple[float, float]:
    """(z, bar) of a recovered crash (:data:`Z_CRASH`): how many standard errors its mean lies below the level
    before it, and the depth noise alone reaches in a run of this length."""
    inside = (steps >= ev.step) & (steps < ev.recovered_step)
    d = int(inside.sum())
    first = int(np.argmax(inside))
    d0 = max(d, UNSTABLE_MIN_POINTS)
    before = r[max(0, first - d0):first]
    sigma = step_sigma(r, robust=False)
    if d == 0 or before.size < 2 or sigma <= 0:
        return -math.inf, 0.0
    se = sigma * math.sqrt(1 / d + 1 / before.size)
    z = (float(np.mean(before)) - float(np.mean(r[inside]))) / se
    return z, Z_CRASH + math.sqrt(2 * math.log(max(r.size / d, 1.0)))


def _get(dets: dict[str, Any], name: str) -> dict[str, Any] | None:
    d = dets.get(name)
    if d is None:
        return None
    return d if isinstance(d, dict) else d.to_dict()


def _on_at_end(det: dict[str, Any], steps: np.ndarray) -> bool:
    """The detector's condition holds at the last logged row (``on_at_end`` in its detail, where it reports it) or
    its last event lies in the last quarter of the logged steps: it is still the run's state."""
    last = det["events"][-1]["step"]
    return bool(det["detail"].get("on_at_end")) or last >= steps[0] + 0.75 * (steps[-1] - steps[0])


def status_detections(log: RunLog, reward_bounds=None) -> dict[str, Any]:
    """The detectors the status reads (advantage degeneracy, reward hacking), by name: what
    :func:`decide_status` computes when not given ``detections``; ``fit`` runs them once for the status and the
    report (:func:`~.detectors.diagnose` ``done=``)."""
    from .detectors.advantage_degeneracy import detect_advantage_degeneracy
    from .detectors.reward_hacking import detect_reward_hacking

    return {"advantage_degeneracy": detect_advantage_degeneracy(log, reward_bounds),
            "reward_hacking": detect_reward_hacking(log)}


# --- the book's table of the vocabulary, generated from the module docstring (its one source) -----------------------

STATUS_MD = "doctor_status.md"
"""The page ``book/diagnose.md`` includes: :func:`status_table`, written by :func:`write_status_table`."""


def status_rows() -> list[tuple[str, str]]:
    """``(state, when)`` for each row of the vocabulary table in the module docstring, in its order (the order of
    precedence). A row starts where the first column is not blank; the lines below it continue its second column.
    ``tests/doctor/test_status_table.py`` checks the states against :data:`STATES`."""
    lines = (__doc__ or "").split("\n")
    borders = [i for i, ln in enumerate(lines) if ln.startswith("===") and set(ln) <= {"=", " "}]
    if len(borders) < 2:
        raise ValueError("doctor.status: the module docstring lacks its vocabulary table")
    width = len(lines[borders[0]].split(" ")[0])
    rows: list[tuple[str, list[str]]] = []
    for ln in lines[borders[0] + 1: borders[1]]:
        head, text = ln[:width].strip(), ln[width:].strip()
        if head:
            rows.append((head.strip("`"), [text]))
        elif rows and text:
            rows[-1][1].append(text)
    return [(state, " ".join(parts)) for state, parts in rows]


def _markdown_cell(text: str) -> str:
    """Sphinx roles to inline code (a :data: constant with its value), RST literals to Markdown."""
    import importlib
    import re

    def role(m: re.Match) -> str:
        kind, target = m.group(1), m.group(2).lstrip("~")
        name = target.rsplit(".", 1)[-1]
        if kind == "data":
            mod_name, _, attr = (target[1:] if target.startswith(".") else target).rpartition(".")
            mod = importlib.import_module(f"{__package__}.{mod_name}" if mod_name else __name__)
            value = getattr(mod, attr)
            return f"`{name}` = {value:g}" if isinstance(value, (int, float)) else f"`{name}`"
        full = f"{__package__}{target}" if target.startswith(".") else target
        return f"`{full}`"

    text = re.sub(r":(mod|data|func|class):`([^`]+)`", role, text)
    return text.replace("``", "`").replace("|", "\\|")


def status_table() -> str:
    """The vocabulary as a Markdown table (precedence, state, act now or not, the live ``dynamics/status`` code,
    when), from :func:`status_rows` and :data:`FAILURE_STATES`."""
    out = ["<!-- generated from the docstring of rlvr_dynamics.doctor.status by status.write_status_table(); "
           "do not edit -->", "",
           "| precedence | state | act now | `dynamics/status` | when |",
           "|---:|---|---|---:|---|"]
    for k, (state, when) in enumerate(status_rows(), start=1):
        act_now = "**yes**" if state in FAILURE_STATES else "no"
        code = STATES.index(state) if state in STATES else "?"
        out.append(f"| {k} | `{state}` | {act_now} | {code} | {_markdown_cell(when)} |")
    return "\n".join(out) + "\n"


def write_status_table(book_dir=None):
    """Write :data:`STATUS_MD` (atomically) into ``book_dir`` (default ``book/``); returns its path."""
    from pathlib import Path

    from .._io import atomic_write_text
    from ..paths import BOOK_DIR

    return atomic_write_text(Path(book_dir if book_dir is not None else BOOK_DIR) / STATUS_MD, status_table())
