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
}
"""The three model sizes of the P1 experiments (≈ 30 k, 110 k and 600 k parameters)."""
