"""``rlvr-dynamics reproduce``: committed runs retrain bit for bit; a difference names its first step."""
from __future__ import annotations

import os

import pytest

from rlvr_dynamics.grpo import reproduce as rp


def _csv(path, rows):
    path.write_text("step,reward,loss,grad_norm,eval_reward\n"
                    + "".join(f"{s},{r},{l},{g},{e}\n" for s, r, l, g, e in rows))
    return path


def test_compare_metrics_identical_and_first_difference(tmp_path):
    a = _csv(tmp_path / "a.csv", [(1, 0.25, 0.1, 1.0, 0.3), (2, 0.5, 0.2, 1.1, ""), (3, 0.5, 0.2, 1.2, "")])
    same = _csv(tmp_path / "b.csv", [(1, 0.25, 0.1, 1.0, 0.3), (2, 0.5, 0.2, 1.1, ""), (3, 0.5, 0.2, 1.2, "")])
    assert rp.compare_metrics(a, same, 3) == (True, None, {"reward": 0.0, "loss": 0.0, "grad_norm": 0.0,
                                                            "eval_reward": 0.0})
    other = _csv(tmp_path / "c.csv", [(1, 0.25, 0.1, 1.0, 0.3), (2, 0.75, 0.2, 1.1, ""), (3, 0.5, 0.2, 1.2, "")])
    ok, first, worst = rp.compare_metrics(a, other, 3)
    assert (ok, first, worst["reward"]) == (False, 2, 0.25)
    short = _csv(tmp_path / "d.csv", [(1, 0.25, 0.1, 1.0, 0.3)])
    assert rp.compare_metrics(a, short, 2)[:2] == (False, 2)
    with pytest.raises(ValueError, match="steps must be <= 3"):
        rp.compare_metrics(a, same, 5)


def test_report_says_how_to_check_out_the_recorded_commit():
    r = rp.ReproduceResult("p1-main-x", 40, False, 1, {"reward": 0.2}, recorded_commit="923a9e3" + "0" * 33,
                           head_commit="f" * 40, code_commit="f" * 40, named_streams=False)
    text = r.report()
    assert "differs from step 1 on" in text and "reward 0.2" in text and "before the named random streams" in text
    assert "made at commit 923a9e3000" in text and "reproduce p1-main-x --steps 40 --at-commit" in text


def test_reproduce_errors_name_the_argument(tmp_path):
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        rp.reproduce("x", 0)
    with pytest.raises(FileNotFoundError, match="run_id 'nope'"):
        rp.reproduce("nope", 3, runs_dir=tmp_path)


@pytest.mark.trains
def test_a_tiny_run_retrains_bit_for_bit_from_empty_caches(tmp_path, monkeypatch):
    """Train a short run with one empty cache (the 'committed' run), then reproduce it with another empty cache:
    the warm start is rebuilt and every step matches."""
    pytest.importorskip("trl")
    from test_grpo_training import smoke_config

    from rlvr_dynamics.grpo.runner import run

    cfg = smoke_config(name="repro", max_steps=4, checkpoint_every=4)
    monkeypatch.setenv("RLVR_DYNAMICS_CACHE", str(tmp_path / "cache-a"))
    run(cfg, runs_dir=tmp_path / "runs", progress=False)
    monkeypatch.setenv("RLVR_DYNAMICS_CACHE", str(tmp_path / "cache-b"))
    result = rp.reproduce(cfg.run_id(), 4, runs_dir=tmp_path / "runs", work_dir=tmp_path)
    assert result.identical, result.report()
    assert os.listdir(tmp_path / "cache-b"), "the second run rebuilt its warm start in its own empty cache"
    # with the code of the run's recorded commit (a git worktree of HEAD here), in a third empty cache
    from rlvr_dynamics.paths import REPO_ROOT

    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout: --at-commit needs git worktree")
    monkeypatch.setenv("RLVR_DYNAMICS_CACHE", str(tmp_path / "cache-c"))
    at = rp.reproduce(cfg.run_id(), 4, runs_dir=tmp_path / "runs", work_dir=tmp_path, at_commit=True)
    assert at.identical and at.code_commit == at.recorded_commit, at.report()
