"""Stopping a training run cleanly on SIGTERM / SIGINT: a checkpoint at the next policy refresh, then exit
(:func:`rlvr_dynamics.grpo.runner.run` exits with code 130; the next ``rlvr-dynamics train`` resumes from it), and
the checkpoint a resume starts from (:func:`last_complete_checkpoint`)."""
from __future__ import annotations

from pathlib import Path


def last_complete_checkpoint(folder: str | Path) -> Path | None:
    """The highest-numbered ``checkpoint-N`` of ``folder`` that holds a ``trainer_state.json``, the file the trainer
    writes last when it saves one; None when there is none. A process killed while saving (SIGKILL, out of memory,
    the machine lost) leaves a ``checkpoint-N`` without it: resuming from that one fails inside the trainer, so a
    resume starts from the last complete one and the trainer writes the partial one again when it gets there."""
    done = [p for p in Path(folder).glob("checkpoint-*")
            if p.name[len("checkpoint-"):].isdigit() and (p / "trainer_state.json").is_file()]
    return max(done, key=lambda p: int(p.name[len("checkpoint-"):])) if done else None


class GracefulStop:
    """SIGTERM / SIGINT during :func:`run` (single process, main thread): the first signal asks the trainer to write a
    checkpoint at the end of the current optimizer step and stop; a second one restores the previous handlers and
    raises ``KeyboardInterrupt`` at once. Use as a context manager; :meth:`callback` is the ``TrainerCallback``."""

    SIGNALS = ("SIGTERM", "SIGINT")

    def __init__(self, enabled: bool = True):
        import threading
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.requested: str | None = None
        self._previous: dict = {}

    def _handle(self, signum, frame):
        import signal
        name = signal.Signals(signum).name
        if self.requested is not None:                     # the second signal: stop now
            self.__exit__()
            raise KeyboardInterrupt(f"{name} twice: stopped without a checkpoint of the current step")
        self.requested = name
        print(f"{name}: stopping at the next policy refresh (this step when K_ref = 1) with a checkpoint; send it "
              "again to stop at once",
              flush=True)

    def __enter__(self):
        import signal
        if self.enabled:
            for name in self.SIGNALS:
                sig = getattr(signal, name)
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        import signal
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
        return False

    def callback(self, every: int = 1):
        """The callback; it stops at the first step end on a multiple of ``every`` (the refresh interval K_ref, so
        that no buffered generation of TRL, which a checkpoint does not hold, is lost)."""
        from transformers import TrainerCallback
        outer = self

        class StopWithCheckpoint(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                if outer.requested is not None and state.global_step % every == 0:
                    control.should_save = True
                    control.should_training_stop = True
                return control

        return StopWithCheckpoint()
