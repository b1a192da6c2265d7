"""Live run doctor: the fit, forecast and diagnostics of ``rlvr-dynamics fit``, updated while a run trains.

Trainer-agnostic (no torch, no transformers): feed it each logged step's metrics and it returns namespaced
``dynamics/*`` scalars to log through the trainer's own metric path (so they reach W&B, TensorBoard and trackio like
TRL's ``clip_ratio/*``), plus whether training should stop (opt-in: on a collapse, or on strong evidence of
instability). The run's status (:mod:`.status`) is decided at every update that logs a reward, from the 4th on.

Usage::

    from rlvr_dynamics.doctor.live import RunDoctor

    doctor = RunDoctor(every=10, refresh_interval=1, stop_on_instability=True)
    for step, metrics in training_loop():                # metrics: {"reward": 0.4, "entropy": 0.6, ...}
        extra = doctor.update(step, metrics)             # {} except when a report is due
        logger.log({**metrics, **extra}, step=step)
        if doctor.should_stop:
            print(doctor.stop_reason["text"])
            break
    logger.log(doctor.finish())                          # the last report, at the end of training

In TRL, pass it to :class:`rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` (``doctor=``): the callback
feeds it every step from ``on_step_end``, logs its outputs through the trainer's metrics, stops training when
:attr:`should_stop` is set (reading :attr:`stop_reason`) and calls :meth:`finish` at ``on_train_end``.

Args:
    every: refit and rediagnose (a report) every this many ``update`` calls (default 10; a report costs a few ms
        to ~0.1 s). The status and the stop rule do not wait for it: they are checked at every ``update`` that
        brings a reward, and ``dynamics/status`` is returned then. Count in logged rows: with TRL's default
        ``logging_steps=10`` a report comes every 100 training steps, while the status still changes at the logged
        row where the run collapses.
    refresh_interval: K_ref of the run (steps_per_generation × num_iterations); enables the stability margin.
    reward_column: metric name of the training reward (default: the first of ``REWARD_COLUMNS`` seen).
    stop_on_instability: check the stop rule below at every ``update`` and set :attr:`should_stop` and
        :attr:`stop_reason` when it fires (default False: no check, never stops).
    min_points: no report before this many logged rewards (default 4, the fewest from which the status can be
        more than ``too short``). The first report comes at the first ``update`` where both hold: ``every`` calls
        since the last report, and ``min_points`` rewards logged.
    reward_bounds: declared (lo, hi) of the reward; default: (0, 1) while every reward so far lies in [0, 1] (the
        default of ``rlvr-dynamics fit``, applied to the detectors and fits alike). Rewards outside a declared range
        are read as ``fit --reward-range`` reads them (:mod:`.declared_range`): a few as missing, more drop the range.

**The stop rule** (``stop_on_instability=True``; checked at every ``update`` on the causal status and detectors,
so the run stops at the step where the rule fires, not at the next report). Stop when

    (collapse) the status is ``collapsed``: the reward lost half its gain, confirmed (:mod:`.detectors.collapse`);
    or (diverged) the status is ``diverged``: the run blew up, its reward at the floor with no spread left and the
    policy broken, or non-finite values logged (:mod:`.divergence`);
    or (instability) a ``dynamical_instability`` event AND a ``collapse_warning`` event lie within STOP_WINDOW = 20
    logged rows of each other (either order), the later of the two at or before the current row;

the stop step is the current row (the later event's row, or the first row after it where the rule is checked).
Either signal alone is not enough: on the healthy dev runs an instability signal alone (grad-norm growth, an
entropy blow-up, a KL jump, a growing |Δreward| envelope) or a reward fall alone (a 1-prompt dip, an underdamped
overshoot) each fire on a few % of runs; together they mean the reward is falling *while* the optimisation is
blowing up. The whole-prefix readings (instability (c) stability margin, (d) the oscillator reading's
``unstable`` verdict) count as instability events at the report that makes them. :attr:`stop_reason` then holds
``{"rule", "step", "numbers", "text"}`` (``text``: one line, e.g. ``doctor stop at step 212: (f) KL jump ×14.2 at
step 205 + collapse warning (kl_jump, reward_fall) at step 210, within 20 rows``).

**Agreement with the full log**: the detectors are causal (:mod:`.detectors`), so the events a report finds with
step ≤ its own step are exactly the full log's events up to that step; each event is recorded once, with the step
it happened (``step``) and the step of the report (or stop check) that found it (``reported_at``), in
:attr:`events`. The exceptions are instability (c) and (d), readings of a fit of the whole prefix: live, they are
dated at the report that makes them. ``bench/doctor_eval`` measures it on the corpus.

**Output fields** (every report has every key below, except ``stability_margin`` without ``refresh_interval``; the
fit fields of a run that is not read (collapsed, collapsing, diverged) or that no law fits are NaN, so a dead run
never shows the last plateau it had; an undefined value is NaN and an infinite one ±inf, never a stand-in number):

===================================  =====================================================  ======  =============
field                                meaning                                                unit    claim
===================================  =====================================================  ======  =============
``dynamics/status``                  the run's status (:mod:`.status`), decided before any  code    P1-C13,
                                     fit, at every logged reward: 0 too short, 1 diverged,          P2-C6
                                     2 collapsed, 3 collapsing, 4 degenerate groups,
                                     5 hacking suspected, 6 unstable, 7 noise only,
                                     8 rising, 9 plateaued, 10 falling
``dynamics/status_failure``          1 when the status asks the user to act (diverged,      0/1     P1-C13
                                     collapsed, collapsing, degenerate groups, hacking
                                     suspected, unstable), else 0
``dynamics/warning``                 1 when a collapse warning is on that the reward does   0/1     P2-C6
                                     not confirm (precursors alone: never a failure
                                     status), else 0
``dynamics/noise_ceiling``           share of the reward's variance a smooth curve can      1       P1-C9
                                     explain (:func:`~.noise.noise_ceiling`); < 0.2 reads
                                     "noise only"
``dynamics/verdict``                 the reading of the reward so far, as ``rlvr-dynamics    code    P1-C10,
                                     fit`` gives it (:mod:`.reading`): 0 stable, 1 unstable         P1-C12
                                     (a growing oscillation with evidence), 2 undetermined,
                                     3 noise only, 4 not read (collapsed or collapsing)
``dynamics/plateau``                 R∞ of the law read (the level the run is heading to);  reward  P1-C7
                                     ``plateaued``: the last quarter's mean unless R∞
                                     agrees within 2 s.e.; NaN (``_is_nan`` = 1) when
                                     noise only, unstable, out of band or still rising
``dynamics/damping_ratio``           ζ of the law read (> 1 overdamped, 0–1 underdamped,    1       P1-C1, P1-C12
                                     < 0 growing: only if ``unstable``); NaN: noise only
``dynamics/r2``                      R² of the law (the best fit when noise only) on the    1       P1-C9
                                     reward so far (compare ``dynamics/noise_ceiling``)
``dynamics/law``                     the law read, NaN when noise only: index in            index   P1-C7, P1-C8
                                     ``response_laws.LAW_NAMES`` (0 single exponential, 1
                                     overdamped, 2 oscillatory)
``dynamics/reliable``                1 if the law read is ``reliable`` (time scales         0/1     P1-C9
                                     resolved, no parameter at a bound) and the verdict is
                                     stable or unstable, else 0
``dynamics/stability_margin``        m = ηK·K_ref/(1−μ) of the law read and K_ref           1       P1-C10
                                     (unstable at m ≥ 1; above 1 only with an ``unstable``
                                     verdict); NaN when the verdict is undetermined or
                                     noise only; +inf when no stable solution exists
``dynamics/flag/<detector>``         1 if this report (or a stop check since the last       0/1     P1-C13 (the
                                     report) found a new event of that detector, else 0: a          four), P2-C6
                                     pulse, back to 0 at the next report (:attr:`fired`             (collapse)
                                     keeps each detector's first event)
``dynamics/should_stop``             1 once the stop rule has fired (only with              0/1     P1-C10, P2-C6
                                     ``stop_on_instability``), else 0
``dynamics/<field>_is_inf``          for ``stability_margin``, ``plateau``,                 −1/0/1  —
                                     ``damping_ratio``, ``r2``: 1 when the value is +inf,
                                     −1 when −inf, else 0 (a chartable marker)
``dynamics/<field>_is_nan``          same fields: 1 when the value is undefined (NaN),      0/1     —
                                     else 0 (a chartable marker of the gap)
===================================  =====================================================  ======  =============

Codes (``dynamics/status``, ``dynamics/verdict``, ``dynamics/law``) are numbers because trackers chart scalars; this
table is their legend (also on the book's "Diagnose a run" page). Flags (``dynamics/flag/<detector>``) are pulses: 1
in the report that finds a new event, 0 in the next one. NaN and ±inf are logged as they are (no sentinel such as
−1e9 that would flatten a chart), with the ``_is_inf`` / ``_is_nan`` markers beside the four fields that can take
them. The last report of a run comes from :meth:`finish`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..runs.logs import REWARD_COLUMNS, REWARD_LIMIT, VALUE_LIMIT, RunLog
from ..runs.noise import noise_ceiling
from . import detectors as diag
from . import precursors as pre
from .declared_range import read_with_declared_range
from .detectors.collapse import FIRST_POINT, CollapseTracker
from .growing_columns import GrowingColumns
from .pipeline import resolve_reward_bounds
from .reading import response_laws as rl
from .status import STATES, Status, decide_status

STOP_WINDOW = 20
"""Logged rows within which an instability event and a collapse warning must both lie to stop (module docstring)."""
VERDICT_CODES = ("stable", "unstable", "undetermined", "noise only", "not read")
"""``dynamics/verdict``: the index of the reading's verdict (:mod:`.reading.dynamics`) in this tuple."""
MARKED_FIELDS = ("plateau", "damping_ratio", "r2", "stability_margin")
"""Fields that can be infinite or undefined: each comes with ``_is_inf`` and ``_is_nan`` markers."""
STOP_DETECTORS = ("dynamical_instability", "collapse_warning")


class RunDoctor:
    """Accumulates a run's metrics, reports its dynamics every ``every`` updates and checks the stop rule at every
    update (module docstring: arguments, stop rule, output fields)."""

    def __init__(self, *, every: int = 10, refresh_interval: int | None = None, reward_column: str | None = None,
                 stop_on_instability: bool = False, min_points: int | None = None,
                 reward_bounds: tuple[float, float] | None = None) -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an integer ≥ 1, got {every!r}")
        if refresh_interval is not None and (not isinstance(refresh_interval, int) or refresh_interval < 1):
            raise ValueError(f"refresh_interval must be an integer ≥ 1, got {refresh_interval!r}")
        min_points = FIRST_POINT + 1 if min_points is None else min_points
        if not isinstance(min_points, int) or min_points < 2:
            raise ValueError(f"min_points must be an integer ≥ 2, got {min_points!r}")
        if reward_bounds is not None:     # fit's check, here rather than at an update in the middle of training
            reward_bounds = resolve_reward_bounds(np.zeros(0), reward_bounds)
        self.every, self.refresh_interval = every, refresh_interval
        self.reward_column, self.stop_on_instability, self.min_points = reward_column, stop_on_instability, min_points
        self.reward_bounds = self._bounds = reward_bounds     # _bounds: the range read under now (declared_range)
        self._rows: dict[int, dict[str, float]] = {}
        self._columns, self._last_step = GrowingColumns(), -math.inf     # log() without a rebuild (None: rebuild)
        self._since = 0
        self._pending: set[str] = set()
        self.should_stop = False
        """True once the stop rule has fired (only with ``stop_on_instability``)."""
        self.stop_reason: dict[str, Any] | None = None
        """None, or once the doctor wants to stop: ``{"rule", "step", "numbers", "text"}`` (module docstring)."""
        self.fired: dict[str, int] = {}
        """Detector → step of its first event."""
        self.events: dict[str, list[dict[str, Any]]] = {name: [] for name in diag.DETECTORS}
        """Detector → every event found so far: the event's numbers plus ``reported_at`` (the report's step)."""
        self.last_report: dict[str, float] = {}
        """The latest report's ``dynamics/*`` scalars."""
        self.status: Status | None = None
        """The run's status after the latest update with a reward (None before the first)."""
        self._status_rewards = 0
        self._report_rows = -1             # rows recorded at the latest report
        self._tracker = CollapseTracker(self._bounds)
        self._fed: list[int] = []          # the reward steps fed to the tracker, in order
        self._cross: dict[str, np.ndarray] | None = None

    # ------------------------------------------------------------------------------------------------- feeding
    def update(self, step: int, metrics: dict[str, Any]) -> dict[str, float]:
        """Record ``metrics`` at ``step``, check the stop rule (with ``stop_on_instability``), and return the
        ``dynamics/*`` scalars when a report is due (module docstring), else ``{}``."""
        self.record(step, metrics)
        self._since, news = self._since + 1, self._update_status()
        if self.stop_on_instability and not self.should_stop:
            self._check_stop()
        if self._since < self.every or self._n_rewards() < self.min_points:
            return self._status_fields() if news else {}
        self._since = 0
        return self.report()

    def _update_status(self) -> bool:
        """Decide the status again on a new reward, or on a row with a NaN reward, loss or gradient norm (a run
        that logs NaN has diverged, as ``fit`` says) (True then)."""
        n, last = self._n_rewards(), self._rows.get(self._last_step, {})
        if n == self._status_rewards and not (n and any(v != v for k, v in last.items()
                                                        if k in (self.reward_column, "loss", "grad_norm"))):
            return False
        self._status_rewards, log = n, self.log()
        if log is None:
            return False
        steps, reward = log.reward_curve()
        k = len(self._fed)
        if k > len(steps) or list(steps[:k]) != self._fed or self._tracker.bounds != self._bounds:    # out of order,
            # a reward outside the declared range read as missing, or the range dropped: start again
            self._tracker, self._fed, k = CollapseTracker(self._bounds), [], 0
        for st, r in zip(steps[k:], reward[k:]):
            self._tracker.push(int(st), float(r))
            self._fed.append(int(st))
        self._cross = pre.crossings(log, self._bounds)
        self.status = decide_status(log, self._bounds, stop=self.stop_reason, events=self._tracker.events,
                                    cross=self._cross)
        return True

    def _status_fields(self) -> dict[str, float]:
        if self.status is None:
            return {}
        return {"dynamics/status": float(STATES.index(self.status.state)),
                "dynamics/status_failure": float(self.status.failure),
                "dynamics/warning": float(self.status.warning is not None),
                "dynamics/should_stop": float(self.should_stop)}

    def _n_rewards(self) -> int:
        col = self.reward_column
        return 0 if col is None else sum(1 for r in self._rows.values() if math.isfinite(r.get(col, math.nan)))

    def record(self, step: int, metrics: dict[str, Any]) -> None:
        """Record ``metrics`` at ``step`` without fitting (replaying a resumed run's history): non-numeric values are
        ignored; non-finite ones and those ``fit`` reads as missing (a reward beyond ±``REWARD_LIMIT``, another value
        beyond ±``VALUE_LIMIT``) are kept as NaN (a run that logs NaN has diverged: :mod:`.divergence`)."""
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise ValueError(f"step must be an integer, got {step!r}")
        step = int(step)
        appended = step not in self._rows and (not self._rows or step > self._last_step)
        row = self._rows.setdefault(step, {})
        for k, v in metrics.items():
            try:
                x = float(v)
            except (TypeError, ValueError):
                continue
            limit = REWARD_LIMIT if k == self.reward_column or k in REWARD_COLUMNS else VALUE_LIMIT
            row[k] = x if abs(x) <= limit else math.nan         # NaN, ±inf and what fit reads as missing: NaN
        if appended and self._columns is not None:
            self._columns.append(step, row)
        else:                       # a step logged again or out of order: the columns are rebuilt at the next log()
            self._columns = None
        self._last_step = max(step, self._last_step)
        if self.reward_column is None:
            self.reward_column = next((c for c in REWARD_COLUMNS if c in row), None)

    def log(self) -> RunLog | None:
        """The metrics so far as a :class:`~rlvr_dynamics.runs.logs.RunLog` (None before a reward has been seen)."""
        if self.reward_column is None:
            return None
        if self._columns is None:
            self._columns = GrowingColumns()
            for st in sorted(self._rows):
                self._columns.append(st, self._rows[st])
        steps, series = self._columns.arrays()
        if self.reward_column not in series:
            return None
        log, self._bounds = read_with_declared_range(RunLog("live", steps, series, self.reward_column),
                                                     self.reward_bounds)
        return log

    # ------------------------------------------------------------------------------------------------- stopping
    def _check_stop(self) -> None:
        """The stop rule (module docstring) on the causal status and detectors of the log so far (no fit)."""
        log = self.log()
        if log is None:
            return
        if self.status is not None and self.status.state in ("collapsed", "diverged"):
            st = self.status
            now = int(log.steps[-1])
            self.should_stop = True
            rule = "collapse" if st.state == "collapsed" else "diverged"
            self.stop_reason = {"rule": rule, "step": now, "numbers": dict(st.numbers, halving_step=st.step),
                                "text": f"doctor stop at step {now}: {st.state} — {st.evidence}; {st.action}"}
            self.status = decide_status(log, self._bounds, stop=self.stop_reason,
                                        events=self._tracker.events, cross=self._cross)
            return
        if int(np.isfinite(log.reward).sum()) < diag.SIGMA_FIRST:
            return
        now, warning = int(log.steps[-1]), self._collapse_warning(log)
        dets = {"dynamical_instability": diag.detect_dynamical_instability(log, None, None, self._bounds,
                                                                           reading=False, warning=warning),
                "collapse_warning": warning}
        for name, d in dets.items():
            if self._new_events(name, d, now):
                self._pending.add(name)
        self._apply_stop_rule(log)

    def _collapse_warning(self, log: RunLog) -> diag.Detection:
        """The ``collapse_warning`` detector on the log so far, from the tracker's events and the crossings."""
        if self._cross is None or len(self._fed) != int(np.isfinite(log.reward).sum()):
            return diag.detect_collapse(log, self._bounds)
        if any(v.size != log.steps.size for v in self._cross.values()):      # rows without a reward since
            self._cross = pre.crossings(log, self._bounds)
        return diag.detect_collapse(log, self._bounds, collapses=self._tracker.events, cross=self._cross)

    def _apply_stop_rule(self, log: RunLog) -> None:
        if self.should_stop or not self.stop_on_instability:
            return
        inst, warn = self.events["dynamical_instability"], self.events["collapse_warning"]
        if not inst or not warn:
            return
        row = {int(s): i for i, s in enumerate(log.steps)}
        now = int(log.steps[-1])
        best = None
        for a in inst:
            ra = row.get(int(a["step"]), row.get(int(a.get("reported_at", now)), len(row) - 1))
            for w in warn:
                rw = row.get(int(w["step"]), len(row) - 1)
                if abs(ra - rw) <= STOP_WINDOW:
                    later = max(int(a["step"]), int(w["step"]))
                    if best is None or later < best[0]:
                        best = (later, a, w)
        if best is None:
            return
        _, a, w = best
        numbers = {"instability_step": int(a["step"]), "instability_reason": str(a.get("reason", "")),
                   "instability_ratio": _num(a.get("ratio")), "warning_step": int(w["step"]),
                   "warning_rule": str(w.get("rule") or w.get("kind", "")), "warning_signals": list(w.get("signals", [])),
                   "precursors": int(w.get("precursors", 0)), "reward": _num(w.get("value")),
                   "reward_peak": _num(w.get("peak")), "window_rows": STOP_WINDOW}
        ratio = "" if numbers["instability_ratio"] is None else f" ×{numbers['instability_ratio']:.3g}"
        what = (f"collapse ({numbers['warning_rule']}, reward {numbers['reward']:.3g} from peak "
                f"{numbers['reward_peak']:.3g})" if None not in (numbers["reward"], numbers["reward_peak"]) else
                f"collapse warning ({', '.join(numbers['warning_signals']) or numbers['warning_rule']})")
        text = (f"doctor stop at step {now}: {numbers['instability_reason']}{ratio} at step {a['step']} + {what} at "
                f"step {w['step']}, within {STOP_WINDOW} rows")
        self.should_stop = True
        self.stop_reason = {"rule": "instability + collapse warning within STOP_WINDOW rows", "step": now,
                            "numbers": numbers, "text": text}

    # ------------------------------------------------------------------------------------------------- reports
    def report(self) -> dict[str, float]:
        """Fit, forecast and diagnose now; the ``dynamics/*`` scalars (NaN where undefined, ±inf where infinite:
        module docstring). ``{}`` before ``min_points`` rewards."""
        log = self.log()
        if log is None:
            return {}
        steps, reward = log.reward_curve()
        if reward.size < max(self.min_points, 2):
            return {}
        fit_bounds = self._bounds or ((0.0, 1.0) if reward.min() >= 0 and reward.max() <= 1 else None)
        # the same reading as `rlvr-dynamics fit` (report.fit_run): the law read with evidence, its plateau only
        # when identified, the stability margin only for a stable or unstable verdict
        from .pipeline import fit_run

        fits = rl.fit_response_laws(steps, reward, reward_bounds=fit_bounds)   # shared by the report and (d)
        rep = fit_run(log, refresh_interval=self.refresh_interval, reward_bounds=self._bounds or "auto",
                      p1_laws=False, diagnostics=False, fits=fits, stop=self.stop_reason)
        self._update_status()
        out: dict[str, float] = self._status_fields()
        out["dynamics/noise_ceiling"] = _float(noise_ceiling(reward))
        verdict = rep["dynamics"]["verdict"]
        out["dynamics/verdict"] = float(VERDICT_CODES.index(verdict))
        margin = None
        reading = rep["response"].get("reading")
        if reading is None:              # not read (collapsed, diverged) or no law: no stale value survives
            for name in MARKED_FIELDS[:3]:
                _emit(out, name, math.nan)
            out["dynamics/law"], out["dynamics/reliable"] = math.nan, 0.0
            if self.refresh_interval is not None:
                _emit(out, "stability_margin", math.nan)
        else:
            plateau = (rep.get("plateau") or {}).get("value")
            _emit(out, "plateau", math.nan if plateau is None else plateau)
            _emit(out, "damping_ratio", math.nan if verdict == "noise only" else _float(reading["damping_ratio"]))
            _emit(out, "r2", math.nan if reading.get("r2") is None else reading["r2"])
            out["dynamics/law"] = math.nan if verdict == "noise only" else float(rl.LAW_NAMES.index(reading["law"]))
            out["dynamics/reliable"] = float(reading["status"] == "reliable" and verdict in ("stable", "unstable"))
            margin = reading.get("stability")
            if self.refresh_interval is not None:
                m = None if margin is None else margin["margin"]
                _emit(out, "stability_margin", math.inf if m == "inf" else (math.nan if m is None else float(m)))
        dets = diag.diagnose(log, response=fits, margin=margin, reward_bounds=fit_bounds)
        now = int(log.steps[-1])
        for name, d in dets.items():
            new = self._new_events(name, d, now)
            out[f"dynamics/flag/{name}"] = float(bool(new) or name in self._pending)
            if self.events[name] and name not in self.fired:
                self.fired[name] = int(self.events[name][0]["step"])
        self._pending.clear()
        self._apply_stop_rule(log)
        out["dynamics/should_stop"] = float(self.should_stop)
        self.last_report = {k: _float(v) for k, v in out.items()}
        self._report_rows = len(self._rows)
        return dict(self.last_report)

    def finish(self) -> dict[str, float]:
        """The last report at the end of training (whatever ``every``): :meth:`report` on everything logged; ``{}``
        before ``min_points`` rewards, and ``{}`` when the latest :meth:`update` already brought a report on every
        row (logging a second report at that step would repeat it, with its one-report flags at 0: a step logged
        twice with different values, which no log reader accepts; :attr:`last_report` holds it)."""
        if self.last_report and self._report_rows == len(self._rows):
            return {}
        self._since = 0
        return self.report()

    def _new_events(self, name: str, det: diag.Detection, now: int) -> list[dict[str, Any]]:
        """Events of ``det`` not recorded yet (same step and reason), stamped ``reported_at = now``."""
        seen = {_event_key(e) for e in self.events[name]}
        new = [{**e, "reported_at": now} for e in det.events if _event_key(e) not in seen]
        self.events[name].extend(new)
        self.events[name].sort(key=lambda e: e["step"])
        if self.events[name] and name not in self.fired:
            self.fired[name] = int(self.events[name][0]["step"])
        return new


def _num(x) -> float | None:
    """``x`` as a finite float, else None."""
    return v if math.isfinite(v := _float(x)) else None


def _float(v) -> float:
    """``v`` as a float, NaN and ±inf kept (trackers draw them as gaps; a stand-in number would flatten the chart);
    NaN when ``v`` is not a number."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _emit(out: dict[str, float], field: str, value) -> None:
    """``dynamics/<field>`` (NaN or ±inf as they are) and its ``_is_inf`` / ``_is_nan`` markers (module docstring)."""
    v = _float(value)
    out[f"dynamics/{field}"] = v
    out[f"dynamics/{field}_is_inf"] = float(np.sign(v)) if math.isinf(v) else 0.0
    out[f"dynamics/{field}_is_nan"] = float(math.isnan(v))


def _event_key(event: dict[str, Any]) -> tuple:
    """Identity of an event: (step, reason, kind); a whole-prefix reading ((c), (d)) counts once per run."""
    reason = str(event.get("reason", ""))
    if reason.startswith(("(c)", "(d)")):
        return (reason[:3],)
    return (event["step"], event.get("reason"), event.get("kind"))
