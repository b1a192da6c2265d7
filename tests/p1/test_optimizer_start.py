"""update_growth against the optimizers themselves: torch's heavy-ball SGD starts at rest, bias-corrected Adam not."""
from __future__ import annotations

import numpy as np
import pytest

from rlvr_dynamics.p1.optimizer_start import starts_at_rest, update_growth


def _torch_updates(make, steps):
    """Update norms of ``steps`` steps on the linear loss g·x (a constant gradient g), relative to the last one."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(3, requires_grad=True)
    g = torch.tensor([0.3, -1.2, 0.5])
    opt = make([x])
    sizes = []
    for _ in range(steps):
        opt.zero_grad()
        (g * x).sum().backward()
        before = x.detach().clone()
        opt.step()
        sizes.append(float((x.detach() - before).norm()))
    return np.array(sizes)


@pytest.mark.parametrize("mu", [0.5, 0.9, 0.95])
def test_heavy_ball_grows_as_one_minus_mu_to_the_k(mu):
    torch = pytest.importorskip("torch")
    steps = 100
    sizes = _torch_updates(lambda p: torch.optim.SGD(p, lr=0.01, momentum=mu), steps)
    steady = 0.01 * np.linalg.norm([0.3, -1.2, 0.5]) / (1 - mu)       # eta |g| / (1 - mu)
    np.testing.assert_allclose(sizes / steady, update_growth("sgd", mu, steps), rtol=1e-4, atol=1e-6)   # float32 parameters
    assert update_growth("sgd", mu, 1)[0] == pytest.approx(1 - mu)


def test_bias_corrected_adam_takes_a_full_step_from_the_first():
    torch = pytest.importorskip("torch")
    sizes = _torch_updates(lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.9, 0.999), eps=1e-12,
                                                       weight_decay=0.0), 20)
    np.testing.assert_allclose(sizes / sizes[-1], update_growth("adamw", 0.9, 20), rtol=1e-5)


def test_starts_at_rest_and_argument_checks():
    assert starts_at_rest("sgd", 0.9) and not starts_at_rest("adamw", 0.9) and not starts_at_rest("sgd", 0.0)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        update_growth("adam", 0.9, 3)
    with pytest.raises(ValueError, match="momentum"):
        update_growth("sgd", 1.0, 3)
    with pytest.raises(ValueError, match="steps"):
        update_growth("sgd", 0.9, 0)
