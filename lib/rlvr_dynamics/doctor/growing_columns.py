"""A run's logged rows kept as growing columns, in step order: what the live doctor (:mod:`.live`) turns into a
:class:`~rlvr_dynamics.runs.logs.RunLog` at every update without rebuilding each column from the row dicts."""
from __future__ import annotations

import math

import numpy as np


class GrowingColumns:
    """The recorded rows as growing columns, in step order: :meth:`~.live.RunDoctor.log` copies them instead of rebuilding
    every column from the row dicts at each update (the same arrays; a pure speed-up)."""

    def __init__(self) -> None:
        self.n = 0
        self.steps = np.empty(64, dtype=np.int64)
        self.cols: dict[str, np.ndarray] = {}

    def append(self, step: int, row: dict[str, float]) -> None:
        if self.n == self.steps.size:
            self.steps = np.concatenate([self.steps, np.empty(self.n, dtype=np.int64)])
            self.cols = {k: np.concatenate([v, np.full(self.n, math.nan)]) for k, v in self.cols.items()}
        for k in row:
            if k not in self.cols:
                self.cols[k] = np.full(self.steps.size, math.nan)
        for k, v in self.cols.items():
            v[self.n] = row.get(k, math.nan)
        self.steps[self.n] = step
        self.n += 1

    def arrays(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(steps, {name: values}) with the names sorted, as copies."""
        return self.steps[: self.n].copy(), {k: self.cols[k][: self.n].copy() for k in sorted(self.cols)}
