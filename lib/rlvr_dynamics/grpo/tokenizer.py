"""A character-level tokenizer for the tiny models: one token per printable ASCII character, no download.

It is a real :class:`transformers.PreTrainedTokenizerFast` (built with the ``tokenizers`` library), so TRL's
``GRPOTrainer`` uses it exactly as it uses a hub tokenizer: left padding for prompts, ``eos_token`` ends a completion,
``batch_decode(..., skip_special_tokens=True)`` returns the completion text character for character.
"""
from __future__ import annotations

from functools import lru_cache

SPECIAL_TOKENS = ("<pad>", "<eos>", "<bos>", "<unk>")
"""Special tokens, ids 0..3 in this order."""

CHARACTERS = "".join(chr(c) for c in range(32, 127))
"""The 95 printable ASCII characters (space .. tilde), ids 4..98. Anything else maps to ``<unk>``."""


@lru_cache(maxsize=1)
def char_tokenizer():
    """The project's character tokenizer (cached; vocabulary size 99).

    >>> tok = char_tokenizer()
    >>> tok("12+3=", add_special_tokens=False)["input_ids"]
    [21, 22, 15, 23, 33]
    >>> tok.decode([21, 22, 1], skip_special_tokens=True)
    '12'
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for ch in CHARACTERS:
        vocab[ch] = len(vocab)
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", eos_token="<eos>",
                                  bos_token="<bos>", unk_token="<unk>", clean_up_tokenization_spaces=False)
    tok.padding_side = "left"
    return tok


def vocab_size() -> int:
    """Number of tokens of :func:`char_tokenizer` (99)."""
    return len(SPECIAL_TOKENS) + len(CHARACTERS)
