"""`rlvr-dynamics fit`: a synthetic run generated from known oscillator coefficients is read back exactly."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from rlvr_dynamics.paths import SHARED_DIR
from rlvr_dynamics.p1 import laws
from rlvr_dynamics.runs.logs import load_log
from rlvr_dynamics.doctor import fit_run, format_report, read_oscillator

SHARED_LOGS = SHARED_DIR / "grpo_logs"
ETA_K, MOMENTUM, K_REF = 1e-3, 0.9, 2


def _roots():
    """Characteristic roots of M e'' + C e' + K e = 0 with the P1 §3.3 coefficients (δ = 1, lag mass on)."""
    mass = (1 + MOMENTUM) / 2 + ETA_K * K_REF**2 / 2
    damping = (1 - MOMENTUM) - ETA_K * K_REF
    disc = math.sqrt(damping**2 - 4 * mass * ETA_K)
    return (damping + disc) / (2 * mass), (damping - disc) / (2 * mass)


@pytest.fixture
def synthetic_log(tmp_path):
    fast, slow = _roots()
    steps = np.arange(1, 401)
    reward = laws.three_phase(steps - 1, 0.2, 0.7, 1 / slow, 1 / fast)
    path = tmp_path / "metrics.csv"
    path.write_text("step,reward\n" + "".join(f"{s},{r:.12f}\n" for s, r in zip(steps, reward)))
    return path


def test_reading_an_overdamped_fit_recovers_eta_k(synthetic_log):
    report = fit_run(load_log(synthetic_log), momentum=MOMENTUM, refresh_interval=K_REF, forecast_steps=[1000])
    fast, slow = _roots()
    osc = report["oscillator"]
    assert osc["damping_over_stiffness"] == pytest.approx(1 / slow + 1 / fast, rel=1e-4)
    assert osc["mass_over_stiffness"] == pytest.approx(1 / (slow * fast), rel=1e-4)
    assert osc["eta_curvature"] == pytest.approx(ETA_K, rel=1e-4)
    assert osc["stability_margin"] == pytest.approx(ETA_K * K_REF / (1 - MOMENTUM), rel=1e-4)
    assert report["fits"]["three_phase"]["r2"] > 0.999999
    assert report["preferred_law"] == "three_phase"
    # the forecast never leaves the observed range (doctor.forecast.POINT_FACTOR = 0): a curve still rising at its last
    # logged step is forecast at most at its highest level so far, and the 80 % interval covers the true value
    true_1000 = 0.7 - 0.5 * math.exp(-999 * slow) * (1 / slow) / (1 / slow - 1 / fast)
    seen_max = float(load_log(synthetic_log).reward.max())
    assert report["forecast"][1000] <= seen_max + 1e-12
    assert report["forecast"][1000] == pytest.approx(seen_max, abs=0.01 * (true_1000 - 0.2))
    lo, hi = report["forecast_interval"][1000]
    assert lo <= true_1000 <= hi
    assert report["plateau"]["value"] == pytest.approx(0.7, abs=1e-4)   # where it is heading: the reading's R∞
    assert "ζ=" in format_report(report)


def test_damping_ratio_of_equal_times_is_critical():
    assert read_oscillator(10.0, 10.0).damping_ratio == pytest.approx(1.0)
    assert read_oscillator(40.0, 10.0).damping_ratio == pytest.approx(50 / (2 * 20))


@pytest.mark.parametrize("kwargs, match", [({"t_slow": -1, "t_fast": 1}, "t_slow"),
                                           ({"t_slow": 2, "t_fast": 1, "momentum": 1.0, "refresh_interval": 1},
                                            "momentum"),
                                           ({"t_slow": 2, "t_fast": 1, "momentum": 0.5, "refresh_interval": 0},
                                            "refresh_interval")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        read_oscillator(**kwargs)


def test_cli_json_and_errors(synthetic_log, tmp_path):
    cli = [sys.executable, "-m", "rlvr_dynamics.cli", "fit"]
    res = subprocess.run([*cli, str(synthetic_log), "--json", "--details"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["preferred_law"] == "three_phase"
    res = subprocess.run([*cli, str(tmp_path / "missing.csv")], capture_output=True, text=True)
    assert res.returncode == 2 and "does not exist" in res.stderr and "Traceback" not in res.stderr
    res = subprocess.run([*cli, str(synthetic_log), "--momentum", "1.5", "--refresh-interval", "1"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and "momentum must lie in [0.0, 1.0)" in res.stderr


@pytest.mark.skipif(not SHARED_LOGS.exists(), reason="../shared/grpo_logs is not beside this clone")
def test_every_shared_log_fits_without_crashing():
    for csv in sorted(SHARED_LOGS.glob("*.csv")):
        report = fit_run(load_log(csv))
        assert report["preferred_law"] in ("three_phase", "single_exponential", "tie", "undetermined")
        assert all(math.isfinite(f["r2"]) for f in report["fits"].values()), csv.name


def test_cli_many_logs_one_line_each(synthetic_log, tmp_path):
    """Several LOGs print one line per log (name, points, reading); a bad one gets its error line and exit 2."""
    other = tmp_path / "b" / "metrics.csv"
    other.parent.mkdir()
    other.write_text(synthetic_log.read_text())
    cli = [sys.executable, "-m", "rlvr_dynamics.cli", "fit"]
    res = subprocess.run([*cli, str(synthetic_log), str(other)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 3 and all("metrics.csv" in ln and " 400 " in ln and "stable" in ln for ln in lines[1:])
    res = subprocess.run([*cli, str(synthetic_log), str(tmp_path / "missing.csv")], capture_output=True, text=True)
    assert res.returncode == 2 and len(res.stdout.strip().splitlines()) == 2
    assert res.stderr.count("\n") == 1 and "does not exist" in res.stderr and "Traceback" not in res.stderr


def test_cli_help_imports_no_scipy():
    res = subprocess.run([sys.executable, "-c", "import sys; from rlvr_dynamics.cli import build_parser; "
                          "build_parser(); print(sorted(m for m in ('scipy', 'matplotlib', 'torch', 'papermill') "
                          "if m in sys.modules))"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


def test_reward_range_flag_bounds_the_report(tmp_path, capsys):
    """``--reward-range LO HI`` declares the reward's bounds: the forecast interval stays inside them, and a bad pair
    is refused in one line naming the flag (exit 2)."""
    import json

    from rlvr_dynamics.cli import main

    rng = np.random.default_rng(0)
    steps = np.arange(1, 201)
    reward = np.clip(3.6 + 0.3 * rng.standard_normal(steps.size), 0, 4)   # a sum of four 0/1 rewards near its top
    p = tmp_path / "m.csv"
    p.write_text("step,reward\n" + "".join(f"{s},{r}\n" for s, r in zip(steps, reward)))
    assert main(["fit", str(p), "--reward-range", "0", "4", "--forecast", "400", "--json", "--quick"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reward_bounds"] == [0.0, 4.0]
    lo, hi = report["forecast_interval"]["400"]
    assert 0.0 <= lo <= hi <= 4.0
    assert main(["fit", str(p), "--reward-range", "4", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and "--reward-range" in err[-1] and "LO < HI" in err[-1]
    # without the flag the bounds are not known (a reward outside [0, 1]): the report says so and names the flag;
    # with it, or for a reward in [0, 1], no such note
    assert main(["fit", str(p), "--quick"]) == 0
    note = [ln for ln in capsys.readouterr().out.splitlines() if "no reward bounds known" in ln]
    assert len(note) == 1 and "--reward-range LO HI" in note[0] and f"{reward.max():.4g}" in note[0]
    assert main(["fit", str(p), "--reward-range", "0", "4", "--quick"]) == 0
    assert "no reward bounds known" not in capsys.readouterr().out
    p.write_text("step,reward\n" + "".join(f"{s},{r / 4}\n" for s, r in zip(steps, reward)))
    assert main(["fit", str(p), "--quick"]) == 0
    assert "no reward bounds known" not in capsys.readouterr().out


def test_a_reward_within_plus_minus_one_is_told_which_range_to_declare(tmp_path, capsys):
    """A reward of +1 right, -1 wrong (one prompt × 8 here) has no known bounds; the read note says that every reward
    lies in [-1, 1] and that ``--reward-range -1 1`` reads it as the success rate it maps to; declared, the status is
    the success rate's."""
    from rlvr_dynamics.cli import main

    rng = np.random.default_rng(3)
    steps = np.arange(1, 121)
    share = rng.binomial(8, np.linspace(0.2, 0.6, steps.size)) / 8
    p, q = tmp_path / "pm1.csv", tmp_path / "share.csv"
    p.write_text("step,reward\n" + "".join(f"{s},{2 * r - 1}\n" for s, r in zip(steps, share)))
    q.write_text("step,reward\n" + "".join(f"{s},{r}\n" for s, r in zip(steps, share)))
    assert main(["fit", str(p), "--quick"]) == 0
    note = [ln for ln in capsys.readouterr().out.splitlines() if "no reward bounds known" in ln]
    assert len(note) == 1 and "every reward lies in [-1, 1]" in note[0] and "--reward-range -1 1" in note[0]
    assert main(["fit", str(p), "--reward-range", "-1", "1", "--quick", "--json"]) == 0
    declared = json.loads(capsys.readouterr().out)["status"]
    assert main(["fit", str(q), "--quick", "--json"]) == 0
    as_share = json.loads(capsys.readouterr().out)["status"]
    assert (declared["state"], declared["step"]) == (as_share["state"], as_share["step"])


def test_plateau_only_when_the_curve_has_reached_it():
    """A first-order curve that has covered 1 − e^{−1.5} ≈ 78 % of its rise has no identified plateau (the report says
    it is still rising); after 1 − e^{−4} ≈ 98 % the plateau is the law's R∞."""
    from rlvr_dynamics.runs.logs import RunLog

    rng = np.random.default_rng(3)
    steps = np.arange(1, 301)
    for span_over_t, reached in ((1.5, False), (4.0, True)):   # covered 78 % (R∞ inside the band) and 98 %
        y = 0.2 + 0.6 * (1 - np.exp(-(steps - 1) / (300 / span_over_t))) + 0.01 * rng.standard_normal(steps.size)
        rep = fit_run(RunLog("m", steps, {"reward": y}, "reward"), p1_laws=False, diagnostics=False)
        plateau = rep["plateau"]
        if reached:
            assert plateau["value"] == pytest.approx(0.8, abs=0.02)
        else:
            assert plateau["value"] is None and plateau["note"].startswith("still rising")


def test_a_rise_is_not_read_as_a_slow_oscillation():
    """A logistic-like rise that an oscillatory law fits as a quarter of a slow sinusoid (period longer than the log)
    is reported by a monotone law: no 'oscillates around its plateau' sentence."""
    from rlvr_dynamics.runs.logs import RunLog

    rng = np.random.default_rng(4)
    steps = np.arange(1, 401)
    y = 0.1 + 0.7 / (1 + np.exp(-(steps - 200) / 40)) + 0.02 * rng.standard_normal(steps.size)
    rep = fit_run(RunLog("m", steps, {"reward": y}, "reward"), p1_laws=False, diagnostics=False)
    reading = rep["response"]["reading"]
    if reading["law"] == "oscillatory":
        omega = rep["response"]["laws"]["oscillatory"]["params"]["omega_d"]
        assert 2 * np.pi / omega <= steps[-1] - steps[0]
    assert "oscillates" not in reading["meaning"] or reading["law"] == "oscillatory"


def test_the_details_never_print_nan_or_a_standard_error_of_a_million():
    """``--details`` of a 3-point log printed "noise ceiling on R²: nan"; a law at a bound of its family printed
    "t_slow=27±5.063e+06". Now "n/a", and a standard error over 100× its value is "±n/a (not identified)"."""
    from rlvr_dynamics.doctor.render.text import _f, _pm
    from rlvr_dynamics.runs.logs import RunLog

    short = RunLog("s", np.arange(1, 4), {"reward": np.array([0.2, 0.2, 0.2])}, "reward")
    text = format_report(fit_run(short))
    assert "nan" not in text.lower().replace("n/a", "")
    assert _f(math.nan) == "n/a" and _f(math.inf) == "∞" and _f(-math.inf) == "−∞" and _f(0.123456) == "0.1235"
    assert _pm(27.0, 5.063e6) == "±n/a (not identified)" and _pm(27.0, math.inf) == "±n/a (not identified)"
    assert _pm(27.0, 5.063) == "±5.063" and _pm(27.0, None) == "" and _pm(0.0, 0.5) == "±n/a (not identified)"


def test_a_negative_noise_ceiling_is_printed_as_at_most_zero():
    """Anti-correlated step noise (a reward that alternates from step to step, as one-prompt rewards of easy and hard
    prompts can) makes the estimate 1 − σ²/Var negative. The ceiling on R² is then 0 (the mean alone reaches it):
    no report prints a negative ceiling."""
    from rlvr_dynamics.doctor.status import decide_status
    from rlvr_dynamics.runs.logs import RunLog
    from rlvr_dynamics.runs.noise import ceiling_text, noise_ceiling

    rng = np.random.default_rng(3)
    y = 0.4 + 0.3 * (-1.0) ** np.arange(120) + rng.normal(0, 0.05, 120)
    assert noise_ceiling(y) < 0
    assert ceiling_text(noise_ceiling(y)) == "≤ 0" and ceiling_text(0.1234) == "0.12"
    assert ceiling_text(math.nan) == "n/a" and ceiling_text(None) == "n/a"
    log = RunLog("alternating", np.arange(1, 121), {"reward": y}, "reward")
    status = decide_status(log, (0.0, 1.0))
    assert status.state == "noise only" and "noise ceiling ≤ 0 <" in status.evidence
    text = format_report(fit_run(log, reward_bounds=(0.0, 1.0)))
    assert "noise ceiling on R²: ≤ 0" in text
    assert not any(f"ceiling {s}-" in text or f"ceiling is -" in text for s in ("", "on R²: "))


@pytest.mark.parametrize("value, sd, text", [
    (0.775, 0.04082, "0.775 ± 0.041"), (2.274, 0.2185, "2.27 ± 0.22"), (12345.6, 2185.0, "12346 ± 2185"),
    (1e8, 1e7, "1e+08 ± 1e+07"), (3e-6, 1e-7, "3e-06 ± 1e-07"), (0.5, None, "0.5"), (0.5, 0.0, "0.5"),
    (0.5, math.nan, "0.5")])
def test_a_value_and_its_spread_share_their_last_digit(value, sd, text):
    """The plateau line printed "R∞ = 2.274 ± 0.2185": the spread is given to two significant digits and the value
    to the same decimal place, in the text report and the HTML alike (one formatter)."""
    from rlvr_dynamics.doctor.render.summary import fmt_pm

    assert fmt_pm(value, sd) == text
