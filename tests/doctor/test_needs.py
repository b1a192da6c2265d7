"""What each logged signal buys (doctor.needs), checked against what the detectors' rules say they read."""
from __future__ import annotations

from rlvr_dynamics.doctor.detectors import DETECTORS
from rlvr_dynamics.doctor.needs import signal_uses
from rlvr_dynamics.doctor.signals import SIGNALS


def test_signal_uses_match_the_rules():
    uses = signal_uses()
    assert set(uses) == {"reward", *SIGNALS, "sub_rewards"}
    # policy concentration needs entropy AND a within-group spread: both are seen (ablation), neither alone
    assert "policy_concentration" in uses["entropy"]["detectors"] and "policy_concentration" in uses["spread"]["detectors"]
    # hacking reads only an evaluation / strict reward, or a correctness and a format sub-reward
    assert [s for s, u in uses.items() if "reward_hacking" in u["detectors"]] == ["eval", "sub_rewards"]
    # the reward alone: the collapse report and its reward_fall precursor
    assert "collapse_warning" in uses["reward"]["detectors"] and uses["reward"]["precursors"] == ["reward_fall"]
    # each precursor has its signal: the tables of precursors.crossings
    assert "grad_spike" in uses["grad_norm"]["precursors"] and "kl_jump" in uses["kl"]["precursors"]
    assert "length_cap" in uses["clipped_ratio"]["precursors"] and "format_fall" in uses["format_accuracy"]["precursors"]
    assert "zero_std_share" in uses["zero_std"]["precursors"] and "entropy_rise" in uses["entropy"]["precursors"]
    # every detector is used by something
    assert set(DETECTORS) <= {d for u in uses.values() for d in u["detectors"]}
    assert signal_uses() == uses                                     # deterministic (seeded synthetic log)
