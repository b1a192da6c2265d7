"""A metrics writer that acts once a given step's row is written: the resume tests stop a training run at a known
point with it (a signal in the test's own process; a marker file and a wait in a child that is then SIGKILLed, which
imports this file by ``PYTHONPATH``)."""
from __future__ import annotations

from typing import Callable


def writer_acting_at(writer, step: int, action: Callable[[], None]):
    """A stand-in for ``runner._MetricsWriter`` (``writer``): writes every row as it does, then calls ``action``
    after the row of ``step``."""
    from transformers import TrainerCallback

    def make(path):
        inner = writer(path)

        class ActAtStep(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kw):
                inner.on_log(args, state, control, logs=logs, **kw)
                if state.global_step == step:
                    action()

        return ActAtStep()

    return make
