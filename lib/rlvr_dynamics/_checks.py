"""Argument checks shared by every module: a bad input fails here, naming the argument and the allowed range,
never deep inside numpy."""
from __future__ import annotations

from typing import Any

import numpy as np


def as_finite_array(name: str, value: Any, *, dtype=float) -> np.ndarray:
    """``value`` as a numpy array; ValueError naming ``name`` if it is not numeric or holds NaN/inf."""
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {value!r}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def check_in_range(name: str, value: Any, low: float | None = None, high: float | None = None, *,
                   low_inclusive: bool = True, high_inclusive: bool = True) -> np.ndarray:
    """Check that every element of ``value`` is finite and inside the interval; return it as an array.

    >>> check_in_range("momentum", 0.5, 0, 1, high_inclusive=False)
    array(0.5)
    """
    arr = as_finite_array(name, value)
    ok = np.ones(arr.shape, dtype=bool)
    if low is not None:
        ok &= arr >= low if low_inclusive else arr > low
    if high is not None:
        ok &= arr <= high if high_inclusive else arr < high
    if not np.all(ok):
        lo = "-inf" if low is None else f"{low}"
        hi = "inf" if high is None else f"{high}"
        interval = f"{'[' if low_inclusive and low is not None else '('}{lo}, {hi}{']' if high_inclusive and high is not None else ')'}"
        bad = arr[~ok].ravel()[:3] if arr.ndim else arr
        raise ValueError(f"{name} must lie in {interval}, got {bad.tolist() if hasattr(bad, 'tolist') else bad}")
    return arr


def check_positive(name: str, value: Any) -> np.ndarray:
    """Every element finite and > 0."""
    return check_in_range(name, value, 0.0, None, low_inclusive=False)


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """A Python int (not bool) inside [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must lie in [{low if low is not None else '-inf'}, "
                         f"{high if high is not None else 'inf'}], got {value}")
    return int(value)


def check_same_shape(**arrays: np.ndarray) -> tuple[int, ...]:
    """All arrays broadcast together; ValueError naming them otherwise. Returns the broadcast shape."""
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError as exc:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from exc
