"""The measured gradient gap (grpo.gap_norm) against per-sample gradients computed one by one."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

# torch (and grpo.gap_norm, which imports it) are imported by the tests, not at collection (~3 s per worker)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


def test_gap_weights_average_the_per_prompt_gaps():
    from rlvr_dynamics.grpo.gap_norm import gap_weights

    r = np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1]])
    w = gap_weights(r)
    assert np.allclose(w.sum(1), 0)                                  # a gap: + mean minus - mean
    assert np.allclose(w[0], [0.25, -0.25, -0.25, 0.25]) and np.allclose(w[1], 0)
    assert np.allclose(w[2], [1 / 6, -1 / 2, 1 / 6, 1 / 6])          # 1/(P n+) and -1/(P n-), P = 2 mixed prompts
    scores = np.array([[3.0, 1.0, 2.0, 5.0], [9.0, 9.0, 9.0, 9.0], [1.0, 4.0, 1.0, 1.0]])
    gaps = [(4.0 - 1.5), (1.0 - 4.0)]
    assert (w * scores).sum() == pytest.approx(np.mean(gaps))


def test_weighted_score_norms_match_per_sample_gradients():
    import torch

    from rlvr_dynamics.grpo.gap_norm import weighted_score_norms
    from rlvr_dynamics.grpo.tiny_model import build_tiny_model

    torch.manual_seed(0)
    model = build_tiny_model("tiny-s", seed=3)
    ids = torch.randint(4, 14, (5, 9))
    att = torch.ones_like(ids)
    cmask = torch.ones(5, 4, dtype=torch.long)
    cmask[1, 3:] = 0
    cmask[4, 2:] = 0                                                  # two shorter completions
    w = torch.tensor([0.5, 0.5, -1.0, 0.3, -0.3])
    got_sum, got_mean = weighted_score_norms(model, ids, att, cmask, w, temperature=0.7)
    params = [p for p in model.parameters() if p.requires_grad]
    total_sum = [torch.zeros_like(p) for p in params]
    total_mean = [torch.zeros_like(p) for p in params]
    for i in range(5):                                               # one sample at a time
        model.zero_grad(set_to_none=True)
        logits = model(input_ids=ids[i:i + 1], attention_mask=att[i:i + 1]).logits[:, -5:-1] / 0.7
        lp = (torch.log_softmax(logits, -1).gather(-1, ids[i:i + 1, -4:].unsqueeze(-1)).squeeze(-1)
              * cmask[i:i + 1]).sum()
        grads = torch.autograd.grad(lp, params)
        n = float(cmask[i].sum())
        for acc_s, acc_m, g in zip(total_sum, total_mean, grads):
            acc_s += w[i] * g
            acc_m += w[i] * g / n
    want_sum = float(torch.sqrt(sum((g ** 2).sum() for g in total_sum)))
    want_mean = float(torch.sqrt(sum((g ** 2).sum() for g in total_mean)))
    assert got_sum == pytest.approx(want_sum, rel=1e-4) and got_mean == pytest.approx(want_mean, rel=1e-4)
    assert all(p.grad is None for p in params)
