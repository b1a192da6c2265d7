"""The live doctor inside :class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback`: how a
:class:`~rlvr_dynamics.doctor.live.RunDoctor` is fed from TRL's logged rows, how its fields reach the trackers and
how it stops a run (a mixin of the callback; it reads the callback's ``doctor``, ``trainer`` and console).

With a :class:`~rlvr_dynamics.doctor.live.RunDoctor` (``doctor=``), the run is also fitted and diagnosed live from each
*logged* row's complete metrics (TRL's, ``grad_norm``, ``loss`` and this callback's): the doctor is fed in ``on_log``,
once per row TRL logs, never at the steps TRL does not log. It therefore counts logged rows, whatever
``logging_steps`` is: its status (``dynamics/status``) and its stop rule are decided at every logged row, so with TRL's
default ``logging_steps=10`` a collapse is seen, and the run stopped, at the logged row where it shows (a confirmed
collapse one logged row, 10 training steps, after the halving), while its full reports come every ``every`` logged
rows (every 100 training steps with ``every=10``) and it needs 4 logged rewards (40 training steps) to say more than
"too short". Set a smaller ``logging_steps`` where a few training steps matter. Its outputs (``dynamics/status``,
``dynamics/plateau``, ``dynamics/flag/<detector>``, …) are added to the log of the row they describe (this callback
runs before the reporting integrations). The codes ``dynamics/status``, ``dynamics/verdict`` and ``dynamics/law`` are
numbers, since trackers chart scalars: their legend is the field table of :mod:`rlvr_dynamics.doctor.live` (the
book's "Diagnose a run" page, ``book/doctor_fields.md``); ``dynamics/flag/<detector>`` is a pulse (1 in the report
that finds a new event); NaN and ±inf are logged as they are. The doctor's last report goes into the last logged row
when training ends there (``max_steps`` reached or a stop), else into a row of its own at the final step; never twice
at one step. With ``RunDoctor(stop_on_instability=True)`` training stops at the logged row where the doctor's stop
rule fires, and says why: ``dynamics/stop``, ``dynamics/stop_reason``, a checkpoint, ``<output_dir>/doctor_stop.json``.
Each status change is printed as one line in words above any progress bar (:mod:`rlvr_dynamics.grpo.console`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .fields import DYNAMICS_PREFIX, bare_name
from .logprob_changes import all_reduce


class LiveDoctorHooks:
    """``on_log``, ``on_train_end`` and the stop of :class:`~rlvr_dynamics.grpo.instrumentation.GRPODynamicsCallback`
    (module docstring)."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        """Feed the doctor the step's complete logged metrics (TRL's, the trainer's ``grad_norm`` and ``loss``,
        and this callback's); its ``dynamics/*`` outputs are added to this very log (this callback runs before the
        reporting integrations, :meth:`attach`) and to ``state.log_history``; a stop is decided on every process
        together and explains itself (:meth:`_stop`)."""
        if self.doctor is None or self._in_final_log or not logs or ("loss" not in logs and "reward" not in logs):
            return control
        metrics = {bare_name(k): v for k, v in logs.items() if not bare_name(k).startswith(DYNAMICS_PREFIX)}
        out = dict(self.doctor.update(state.global_step, metrics))
        stop = all_reduce(self.trainer, [float(bool(self.doctor.should_stop))], "max")[0] > 0  # all stop together
        if stop and not self._stopped:
            out.update(self._stop(args, state, control))
        elif state.is_world_process_zero:      # a status change: one line in words (grpo.console)
            self._console.update(state.global_step, getattr(self.doctor, "status", None))
        if control.should_training_stop and hasattr(self.doctor, "finish"):
            # the run's last logged row (max_steps reached, or a stop): the last report goes here, so on_train_end
            # has nothing left to log at this step (a second entry at one step, with the report's one-report flags
            # back at 0, would be a step logged twice with different values)
            out.update(self.doctor.finish())
        self._add_to_log(logs, state, out)
        return control

    def _add_to_log(self, logs: dict[str, Any], state, out: dict[str, Any]) -> None:
        """Add the doctor's fields to the dict the reporting callbacks receive and to the step's log_history entry."""
        if not out:
            return
        logs.update(out)
        last = state.log_history[-1] if state.log_history else None
        if isinstance(last, dict) and last.get("step") == state.global_step:
            last.update(out)

    def _stop(self, args, state, control) -> dict[str, Any]:
        """Stop training at this step and say why: one console line (main process), ``dynamics/stop`` = 1 and
        ``dynamics/stop_reason`` (text) in the log, a checkpoint saved at this step, and
        ``<output_dir>/doctor_stop.json`` (rule, step, the numbers that fired it)."""
        from .._io import atomic_write_text

        self._stopped = control.should_training_stop = control.should_save = True
        reason = {"step": int(state.global_step), "rule": "dynamical_instability",
                  **(getattr(self.doctor, "stop_reason", None) or {})}
        text = reason["text"] = reason.get("text") or f"{reason['rule']} at step {reason['step']}"
        if state.is_world_process_zero:      # the status says why for a collapse or a blow-up; else the rule does
            self._console.update(state.global_step, getattr(self.doctor, "status", None), stopping=True,
                                 checkpoint=f"checkpoint-{state.global_step}",
                                 reason=None if reason["rule"] in ("collapse", "diverged") else text)
            atomic_write_text(Path(args.output_dir) / "doctor_stop.json",
                              json.dumps({**reason, "stopped_at_step": int(state.global_step)}, indent=1,
                                         default=float) + "\n")
        return {"dynamics/stop": 1.0, "dynamics/stop_reason": text}

    def on_train_end(self, args, state, control, **kwargs):
        """The doctor's last report (``RunDoctor.finish``), logged at the final step so a run's end is never lost;
        nothing when the last logged row already carries it (:meth:`on_log`)."""
        if self.doctor is None or self.trainer is None or not hasattr(self.doctor, "finish"):
            return control
        out = self.doctor.finish()
        if out:
            self._in_final_log = True
            try:
                self.trainer.log(dict(out))
            finally:
                self._in_final_log = False
        return control
