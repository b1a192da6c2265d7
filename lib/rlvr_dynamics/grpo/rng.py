"""An isolated random stream for side computations (evaluation, fresh samples) that must not perturb training.

Resume-after-kill and same-seed determinism rely on the training RNG drawing the same numbers whether or not an
evaluation or a fresh-sample estimate ran in between.
"""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def isolated_rng(device, seed: int):
    """Run the body on a private random stream seeded by ``seed``: the global CPU stream and the stream of
    ``device`` (CUDA, XPU, MPS, …) are saved and restored, so training draws the same numbers as without the body."""
    import torch

    device = torch.device(device)
    kind = device.type
    devices = [device] if kind != "cpu" else []
    with torch.random.fork_rng(devices=devices, device_type=kind if kind != "cpu" else "cuda"):
        torch.manual_seed(int(seed))
        yield


# ---------------------------------------------------------------------------------------------------------------
# Named random streams: one per purpose, derived from the run's seed and the purpose's name
# ---------------------------------------------------------------------------------------------------------------

RNG_STREAMS_VERSION = 1
"""Recorded as ``rng_streams`` in every run's ``config.json`` since runs draw from named streams; a run without it was
made before (its numbers reproduce at its recorded commit only)."""

STREAMS = ("warm_start_init", "warm_start_data", "warm_start_check", "prompt_order", "sampling", "evaluation",
           "fresh_samples", "panel")
"""The purposes that draw random numbers in a run. Each has its own stream (:func:`stream_seed`), keyed by its
*name*, not by its position: a new purpose added later draws from a new stream and never shifts the others."""


def stream_seed(seed: int, purpose: str) -> int:
    """The 32-bit seed of ``purpose``'s stream for a run seeded ``seed``:
    ``numpy.random.SeedSequence(seed, spawn_key=(crc32(purpose),))``'s first word. Independent across purposes
    and stable across Python sessions (no salted hashing). Raises ``ValueError`` for an unknown purpose (add it to
    :data:`STREAMS`) or a negative seed."""
    import zlib

    import numpy as np

    if purpose not in STREAMS:
        raise ValueError(f"purpose {purpose!r} is not a named stream; known: {STREAMS}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    key = zlib.crc32(purpose.encode("utf-8"))
    return int(np.random.SeedSequence(int(seed), spawn_key=(key,)).generate_state(1, dtype=np.uint32)[0])


def numpy_stream(seed: int, purpose: str):
    """A ``numpy.random.Generator`` on ``purpose``'s stream (:func:`stream_seed`)."""
    import numpy as np

    return np.random.default_rng(stream_seed(seed, purpose))
