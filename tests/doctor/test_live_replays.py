"""The live RunDoctor on committed GRPO runs, replayed row by row as the training callback feeds it: collapsing
runs are stopped at the collapse, healthy ones are not (a file of its own so that the test workers share the live
doctor's tests: ``--dist loadfile`` runs each file on one worker)."""
from __future__ import annotations

import pytest

from rlvr_dynamics.doctor.live import RunDoctor


def _replay(folder, **kw):
    """Feed a committed run's metrics.csv to a RunDoctor row by row, as GRPODynamicsCallback does during training."""
    import csv

    doc = RunDoctor(every=10, refresh_interval=1, stop_on_instability=True, reward_bounds=(0.0, 1.0), **kw)
    with (folder / "metrics.csv").open(newline="") as fh:
        for row in csv.DictReader(fh):
            metrics = {k: float(v) for k, v in row.items() if v not in ("", None) and k != "step"
                       and not k.startswith("dynamics")}
            doc.update(int(row["step"]), metrics)
            if doc.should_stop:
                break
    return doc


def _pilot_runs():
    import json

    from rlvr_dynamics.paths import RUNS_DIR

    return {json.loads((p / "config.json").read_text())["config"]["learning_rate"]: p
            for p in sorted(RUNS_DIR.glob("p1-slow-pilot-*"))}


def _main_runs():
    """One run per (learning rate, G) cell of the testbed's main grid (the first seed the cell has): a replay costs
    ~6 s on a 2-core CPU. All 12 runs are replayed live in the development part of ``bench/bench_doctor.py``
    (``--split dev``: corpus v2 moved the main grid there)."""
    import json

    from rlvr_dynamics.paths import RUNS_DIR

    cells: dict[tuple, tuple[int, str]] = {}
    for p in sorted(RUNS_DIR.glob("p1-main-*")):
        c = json.loads((p / "config.json").read_text())["config"]
        key = (c["learning_rate"], c["num_generations"])
        cells[key] = min(cells.get(key, (c["seed"], p.name)), (c["seed"], p.name))
    return sorted(name for _, name in cells.values())


SWEEP_CASES = [("collapse", 0.1), ("collapse", 0.3), ("grown", 0.03), ("healthy", 0.003), ("healthy", 0.01)]


@pytest.mark.parametrize("kind,lr", SWEEP_CASES, ids=[f"{k}-lr{lr:g}" for k, lr in SWEEP_CASES])
def test_testbed_sweep_collapsing_runs_are_stopped_at_the_collapse_and_the_others_are_not(kind, lr):
    """The slow-start pilot (heavy-ball SGD, tiny-m4, committed), replayed row by row through the live doctor:
    lr 0.1 and 0.3 collapse within 20 steps (stopped at the collapse, at most one logged row after the halving
    that ``rlvr-dynamics fit`` reports); lr 0.03 has grad-norm growth (instability events from step 101) while its
    reward holds at 0.6–0.85 to the end (not stopped: no collapse, no warning); lr 0.003 and 0.01 converge."""
    from rlvr_dynamics.doctor.status import decide_status
    from rlvr_dynamics.runs.logs import load_log

    runs = _pilot_runs()
    if not runs:
        pytest.skip("the slow-start pilot runs are not committed in this checkout")
    doc = _replay(runs[lr])
    if kind == "collapse":
        full = decide_status(load_log(runs[lr] / "metrics.csv"), (0.0, 1.0))
        # stopped at the collapse; the whole log, trained on past it, ends diverged (reward at 0, no spread)
        # a reward that falls within its first logged points may be stopped as diverged (it lost its start)
        assert doc.should_stop and doc.stop_reason["rule"] in ("collapse", "diverged"), lr
        assert full.state in ("collapsed", "diverged"), lr
        assert full.step <= doc.stop_reason["step"] <= full.step + 1, (lr, full.step, doc.stop_reason["step"])
    elif kind == "grown":
        assert doc.fired.get("dynamical_instability", 0) > 100 and not doc.should_stop
    else:
        assert not doc.should_stop, (lr, doc.stop_reason)


@pytest.mark.parametrize("name", _main_runs() or ["none"])
def test_the_healthy_p1_main_runs_are_not_stopped(name):
    """The healthy runs of the testbed's main grid, one per (learning rate, G) cell, replayed row by row: none is
    stopped."""
    from rlvr_dynamics.paths import RUNS_DIR

    if name == "none":
        pytest.skip("the p1-main runs are not committed in this checkout")
    doc = _replay(RUNS_DIR / name)
    assert not doc.should_stop, (name, doc.stop_reason)
