"""What the live doctor prints while a run trains: one line in words when the run's status changes, on a line of its
own (never glued to a progress bar).

Usage (what :class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback` does with a ``RunDoctor``)::

    line = status_change_line(110, doctor.status, previous="plateaued", stopping=True, checkpoint="checkpoint-110")
    write_line(line)
    # rlvr-dynamics: step 110: collapsed (was plateaued) — reward 0.73 → 0.11; stopping, checkpoint-110

The numbers stay in the logged ``dynamics/*`` fields; this is the words for a person watching the console or reading
a SLURM ``.out`` file afterwards. Torch-free and trainer-free.
"""
from __future__ import annotations

import math
import sys
from typing import Any

PREFIX = "rlvr-dynamics: "
"""Every line starts with it, so a console log says where the line came from."""
QUIET_STATES = ("too short",)
"""States that never get a line: nothing is decided yet."""


def _get(status: Any, name: str, default=None):
    return status.get(name, default) if isinstance(status, dict) else getattr(status, name, default)


def _num(x) -> str | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return f"{v:.3g}" if math.isfinite(v) else None


def status_summary(status: Any) -> str:
    """The status in a few words: ``reward 0.73 → 0.11`` where its numbers hold a peak and the value now (collapsed,
    collapsing), else its evidence sentence."""
    numbers = _get(status, "numbers") or {}
    peak, now = _num(numbers.get("peak")), _num(numbers.get("now"))
    if peak is not None and now is not None:
        return f"reward {peak} → {now}"
    return str(_get(status, "evidence") or "")


def status_change_line(step: int, status: Any, *, previous: str | None = None, stopping: bool = False,
                       checkpoint: str | None = None, reason: str | None = None) -> str:
    """One line: ``rlvr-dynamics: step 110: collapsed (was plateaued) — reward 0.73 → 0.11; stopping,
    checkpoint-110``.

    Args:
        step: the logged step the status was decided at.
        status: a :class:`~rlvr_dynamics.doctor.status.Status` or its ``to_dict()`` (``state``, ``evidence``,
            ``numbers``, ``warning``).
        previous: the state before this one (named as ``was …``), None for the first.
        stopping: the doctor stops the run here (``; stopping``), with the ``checkpoint`` it saves and, for a
            stop that the status alone does not explain, the stop rule's ``reason``.
    """
    if isinstance(step, bool) or not isinstance(step, int):
        raise ValueError(f"step must be an integer, got {step!r}")
    state = _get(status, "state")
    if not state:
        raise ValueError(f"status must have a state, got {status!r}")
    was = f" (was {previous})" if previous and previous != state else ""
    line = f"{PREFIX}step {step}: {state}{was} — {status_summary(status)}"
    warning = _get(status, "warning")
    if warning:
        line += f"; warning: {warning}"
    if stopping:
        line += "; stopping" + (f", {checkpoint}" if checkpoint else "") + (f" ({reason})" if reason else "")
    return line


def write_line(text: str) -> None:
    """Print ``text`` on a line of its own: through ``tqdm.write`` where tqdm is installed (it lifts the progress
    bars, prints, and draws them again), else to stderr after a newline (ending whatever partial line is there)."""
    try:
        from tqdm import tqdm
    except ImportError:
        sys.stderr.write("\n" + text + "\n")
        sys.stderr.flush()
        return
    tqdm.write(text)
    sys.stdout.flush()


class StatusConsole:
    """Remembers the last state printed and prints a line when it changes (:func:`status_change_line`)."""

    def __init__(self, write=write_line) -> None:
        self.state: str | None = None
        """The last state a line was printed for (None before the first)."""
        self._write = write

    def update(self, step: int, status: Any, *, stopping: bool = False, checkpoint: str | None = None,
               reason: str | None = None) -> str | None:
        """Print and return the line when ``status``'s state differs from the last one printed (or at a stop);
        None otherwise (no status yet, ``too short``, or no change)."""
        state = None if status is None else _get(status, "state")
        if stopping and state is None:           # a doctor without a status: the stop rule says why
            line = f"{PREFIX}step {int(step)}: stopping" + (f", {checkpoint}" if checkpoint else "") + \
                f" — {reason or 'the doctor asked to stop'}"
            self._write(line)
            return line
        if state is None or (not stopping and (state in QUIET_STATES or state == self.state)):
            return None
        line = status_change_line(int(step), status, previous=self.state, stopping=stopping, checkpoint=checkpoint,
                                  reason=reason)
        self._write(line)
        self.state = state
        return line
