"""``_trl_compat.score_completion_tokens_only``: TRL's fused LM head on CPU scores only the labelled positions,
with the same log-probabilities, entropies and gradients as its default every-position path."""
from __future__ import annotations

import importlib.util

import pytest

# skipped without torch or TRL, which are imported by the tests themselves (not at collection: ~5 s per worker)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None or importlib.util.find_spec("trl") is None,
                                reason="needs torch and trl")


def _fused_outputs(compact: bool, monkeypatch):
    import torch
    import trl.trainer.utils as trl_utils
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    from rlvr_dynamics.grpo import _trl_compat

    if compact:
        assert _trl_compat.score_completion_tokens_only()
        assert _trl_compat.score_completion_tokens_only()  # idempotent
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(cfg)
    add_fused_lm_head(model, temperature=0.7, outputs=("log_probs", "entropy"))
    ids = torch.randint(0, 300, (3, 12))
    mask = torch.ones_like(ids)
    mask[0, :2] = 0  # left padding
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :-5] = -100  # only the last 5 (completion) tokens are scored
    out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    (out.log_probs[:, -5:].sum() + 0.3 * out.entropy[:, -5:].sum()).backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return out.log_probs[:, -5:].detach(), out.entropy[:, -5:].detach(), grads, trl_utils


def test_compact_cpu_scoring_matches_the_default(monkeypatch):
    import torch
    import trl.trainer.utils as trl_utils

    original = trl_utils._use_triton
    original = getattr(original, "original", original)  # TRL's own, when a test before this one (same process) patched it
    monkeypatch.setattr(trl_utils, "_use_triton", original)  # restored after the test
    assert not original(torch.device("cpu"))  # the default path on CPU scores every position
    lp0, ent0, g0, _ = _fused_outputs(False, monkeypatch)
    lp1, ent1, g1, mod = _fused_outputs(True, monkeypatch)
    assert mod._use_triton(torch.device("cpu"))
    torch.testing.assert_close(lp1, lp0, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ent1, ent0, rtol=1e-5, atol=1e-6)
    assert g0.keys() == g1.keys() and "model.embed_tokens.weight" in g0  # tied head: its gradient lands here
    for name in g0:
        torch.testing.assert_close(g1[name], g0[name], rtol=1e-4, atol=1e-6)
