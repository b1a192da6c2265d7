"""The tiny character-level Llama sizes (torch-free, so configs validate without torch)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TinySize:
    """Shape of one tiny Llama model."""

    hidden_size: int
    """Width of the residual stream."""
    num_hidden_layers: int
    """Number of transformer blocks."""
    num_attention_heads: int
    """Attention heads (head dim = hidden_size / heads)."""
    intermediate_size: int
    """MLP width."""


TINY_SIZES: dict[str, TinySize] = {
    "tiny-s": TinySize(32, 2, 2, 64),
    "tiny-m": TinySize(64, 2, 4, 128),
    "tiny-l": TinySize(128, 3, 4, 256),
    "tiny-m4": TinySize(64, 4, 4, 128),
    "tiny-l4": TinySize(128, 4, 4, 256),
}
"""Model sizes: the three of the first P1 experiments (≈ 24 k, 89 k and 505 k parameters; committed runs name them,
so they never change) and two deeper ones for the sharpening testbed (4 layers; ≈ 170 k and 670 k parameters)."""
