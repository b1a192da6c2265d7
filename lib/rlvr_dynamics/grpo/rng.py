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
