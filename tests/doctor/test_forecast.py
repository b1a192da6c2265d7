"""Tests of doctor.forecast and doctor.reading.learning_curves (and the scoring in bench/doctor_eval): exact values against closed forms and invariants that must hold
on adversarial inputs (the band, no extrapolated growth, conformal quantile, persistence)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from doctor_eval import forecasts as FB
from rlvr_dynamics.doctor import conformal as CF
from rlvr_dynamics.doctor import forecast as F
from rlvr_dynamics.doctor.reading.learning_curves import fit_curve, mmf, pow3, weibull

TABLE = {"classes": {c: {"quantile": 1.5, "n": 100} for c in ("smooth", "moderate", "noisy")},
         "pooled": {"quantile": 1.5, "n": 300}}


# ---------------------------------------------------------------------------------------------------------------
# learning curves: noiseless recovery of known parameters
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("family,fn,params", [
    ("mmf", mmf, (0.8, 0.1, 0.01, 1.5)),
    ("weibull", weibull, (0.7, 0.2, 0.005, 1.2)),
])
def test_sigmoid_families_recover_parameters(family, fn, params):
    t = np.arange(0.0, 600.0, 2.0)
    fit = fit_curve(t + 100.0, fn(t, *params), family)      # t0 = 100: parameters are in time since the start
    np.testing.assert_allclose(fit.params, params, rtol=1e-4)
    np.testing.assert_allclose(fit.predict(np.array([1000.0])), fn(np.array([900.0]), *params), rtol=1e-6)


def test_pow3_recovers_parameters():
    t = np.arange(0.0, 400.0)                 # x = t + 1 (dt = 1)
    fit = fit_curve(t, pow3(t + 1.0, 0.9, 0.6, 0.5), "pow3")
    np.testing.assert_allclose(fit.params, (0.9, 0.6, 0.5), rtol=1e-4)


def test_curve_fit_rejects_unknown_family_and_returns_none_on_constant():
    with pytest.raises(ValueError, match="family"):
        fit_curve(np.arange(10.0), np.arange(10.0), "logistic")
    assert fit_curve(np.arange(10.0), np.ones(10), "mmf") is None


# ---------------------------------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------------------------------

def test_persistence_is_the_trailing_mean():
    y = np.array([5.0, 1.0, 2.0, 3.0, 4.0])
    assert F.persistence(y, 2) == 3.5
    assert F.persistence(y, 1) == 4.0
    assert F.persistence(y, 99) == 3.0          # capped at the count
    with pytest.raises(ValueError, match="window"):
        F.persistence(y, 0)


def test_protocol_persistence_baseline_uses_n_over_25():
    t = np.arange(100.0)
    y = np.where(t < 50, 0.0, 1.0) + 0.01 * np.sin(t)
    row = FB.score_log(t, y, prefixes=(0.5,), conformal=TABLE)[0]
    m = row["n_prefix"]
    pers = float(np.mean(y[:m][-4:]))            # N = 100 → window 4
    target = float(np.mean(y[-10:]))
    assert row["error_persistence"] == pytest.approx(abs(pers - target) / np.ptp(y))


def test_conformal_quantile_known_rank():
    scores = np.arange(1.0, 100.0)               # m = 99: rank ⌈100·0.8⌉ = 80 → 80
    assert CF.conformal_quantile(scores, 0.8) == 80.0
    assert CF.conformal_quantile(np.arange(1.0, 5.0), 0.8) == 4.0    # m = 4: rank ⌈5·0.8⌉ = 4
    assert CF.conformal_quantile(np.arange(1.0, 4.0), 0.8) == math.inf   # m = 3: rank 4 > 3
    rng = np.random.default_rng(0)
    s = np.abs(rng.normal(size=20000))
    assert CF.conformal_quantile(s, 0.8) == pytest.approx(1.2816, abs=0.03)   # |N(0,1)| 80 % quantile = z_0.9
    with pytest.raises(ValueError, match="coverage"):
        CF.conformal_quantile(s, 1.0)


def test_conformal_quantile_for_falls_back():
    tab = {"classes": {"smooth": {"quantile": 2.0, "n": 5}, "moderate": {"quantile": 1.1, "n": 50},
                       "noisy": {"quantile": None, "n": 80}},
           "pooled": {"quantile": 1.7, "n": 135}}
    assert CF.conformal_quantile_for("moderate", tab) == 1.1
    assert CF.conformal_quantile_for("smooth", tab) == 1.7      # too few rows → pooled
    assert CF.conformal_quantile_for("noisy", tab) == 1.7       # infinite → pooled
    assert CF.conformal_quantile_for("noisy", {}) == CF.DEFAULT_QUANTILE
    with pytest.raises(ValueError, match="noise_cls"):
        CF.conformal_quantile_for("loud", tab)


def test_write_conformal_is_atomic_and_read_back(tmp_path):
    path = FB.write_conformal(tmp_path / "q.json", table=TABLE)
    assert json.loads(path.read_text()) == TABLE
    assert [p.name for p in tmp_path.iterdir()] == ["q.json"]     # no temp file left behind


class _Log:
    """The part of a RunLog the calibration reads."""

    def __init__(self, y):
        self._y = y

    def reward_curve(self):
        return np.arange(self._y.size), self._y


class _Run:
    """The part of a corpus run the calibration and the benchmark read."""

    reward_bounds = (0.0, 1.0)
    source = "sim"

    def __init__(self, name, y):
        self.name, self.log = name, _Log(y)


def test_calibrate_conformal_on_constant_offset_runs():
    """Runs that step from 0 to 1 right after every prefix: the forecast (inside the observed range [0, 0]) is 0,
    the target 1 lies outside the band → every score is ∞ and the stored quantile is None."""
    y = np.concatenate([np.zeros(60), np.ones(40)])
    tab = FB.calibrate_conformal([_Run("step", y)] * 3, prefixes=(0.3, 0.5))
    assert tab["runs"] == 3 and tab["pooled"]["n"] == 6 and tab["pooled"]["quantile"] is None


# ---------------------------------------------------------------------------------------------------------------
# never absurd
# ---------------------------------------------------------------------------------------------------------------

def test_growing_law_is_never_extrapolated():
    t = np.arange(300.0)
    y = 0.5 + 0.05 * np.exp(t / 80.0) * np.sin(t / 8.0)        # a growing oscillation
    fc = F.forecast(t, y, [900.0], conformal=TABLE)
    assert "oscillatory" in fc.excluded and "growing" in fc.excluded["oscillatory"]
    assert "oscillatory" not in fc.weights
    assert y.min() <= fc.value <= y.max()


def _adversarial():
    t = np.arange(200.0)
    rng = np.random.default_rng(1)
    yield "growing oscillation", t, 0.5 + 0.01 * np.exp(t / 30.0) * np.sin(t / 5.0), None
    yield "exploding", t, np.exp(t / 5.0), None
    yield "1e6 scale", t, 1e6 * (1 - np.exp(-t / 50.0)) + 1e5 * rng.normal(size=t.size), None
    yield "constant", t, np.full(t.size, 0.3), (0.0, 1.0)
    yield "two points", np.array([0.0, 1.0]), np.array([0.2, 0.9]), None
    yield "bounded noise", t, np.clip(0.5 + 0.4 * rng.normal(size=t.size), 0, 1), (0.0, 1.0)
    yield "collapse", t, np.where(t < 150, 0.8, 0.0) + 0.01 * rng.normal(size=t.size), None


@pytest.mark.parametrize("name,t,y,rb", list(_adversarial()), ids=[a[0] for a in _adversarial()])
@pytest.mark.parametrize("target", [None, 1e4])
def test_band_holds_on_adversarial_inputs(name, t, y, rb, target):
    tgt = [t[-1] + 1.0] if target is None else [target]
    fc = F.forecast(t, y, tgt, reward_bounds=rb, conformal=TABLE)
    lo, hi = float(np.min(y)), float(np.max(y))
    assert lo <= fc.value <= hi                                  # point forecast: observed range
    assert fc.band[0] <= fc.low <= fc.value <= fc.high <= fc.band[1]
    r = hi - lo
    hr = F.horizon_ratio(t, tgt)
    f = F.BAND_FACTOR * (1 + hr)
    assert fc.band[0] >= lo - f * r * (1 + 1e-12) and fc.band[1] <= hi + f * r * (1 + 1e-12)
    if rb is not None:
        assert rb[0] <= fc.low and fc.high <= rb[1]
    assert all(math.isfinite(v) for v in (fc.value, fc.low, fc.high))


def test_constant_series_forecasts_itself():
    fc = F.forecast(np.arange(50.0), np.full(50, 0.3), [100.0], conformal=TABLE)
    assert fc.value == fc.low == fc.high == 0.3


def test_protocol_error_never_exceeds_the_range():
    """The point forecast lies in the prefix's observed range, so error ≤ 1 on any curve, even a collapse."""
    t = np.arange(120.0)
    y = np.where(t < 60, 0.9, 0.0) + 0.02 * np.cos(t)
    rows = FB.score_log(t, y, conformal=TABLE)
    assert rows and all(r["error"] <= 1.0 for r in rows)


def test_noiseless_saturating_curve_is_forecast_exactly_by_the_ensemble():
    """On a noiseless single exponential every exact candidate has rolling-origin error 0: the forecast is their
    equal-weight mean, clipped to the observed range, and here that is the law's value at the target within 1e-3
    of the range."""
    t = np.arange(400.0)
    y = 0.2 + 0.6 * (1 - np.exp(-t / 60.0))
    fc = F.forecast(t, y, [399.0 + 50], conformal=TABLE)
    truth = 0.2 + 0.6 * (1 - math.exp(-449 / 60.0))
    assert abs(fc.value - min(truth, y.max())) < 1e-3 * 0.6


def test_forecast_rejects_bad_input():
    with pytest.raises(ValueError, match="at least 2"):
        F.forecast([0.0], [1.0], [5.0])
    with pytest.raises(ValueError, match="target_steps"):
        F.forecast([0.0, 1.0], [1.0, 2.0], [math.nan])
    with pytest.raises(ValueError, match="level"):
        F.forecast([0.0, 1.0], [1.0, 2.0], [5.0], level=0.85)      # not a calibrated level
    with pytest.raises(ValueError, match="reward_bounds"):
        F.forecast([0.0, 1.0], [1.0, 2.0], [5.0], reward_bounds=(1.0, 0.0))


def test_forecast_path_equals_one_forecast_per_step():
    t = np.arange(120.0)
    y = 0.3 + 0.4 * (1 - np.exp(-t / 40.0)) + 0.03 * np.sin(1.7 * t)
    path = F.forecast_path(t, y, [130.0, 200.0], conformal=TABLE)
    for s, fc in zip((130.0, 200.0), path):
        one = F.forecast(t, y, [s], conformal=TABLE)
        assert (fc.value, fc.low, fc.high) == (one.value, one.low, one.high)


# ---------------------------------------------------------------------------------------------------------------
# round 2: drift-aware scale, strata × levels, max over sources, reliability
# ---------------------------------------------------------------------------------------------------------------

def test_level_drift_is_zero_on_stationary_noise_and_the_half_difference_on_a_step():
    rng = np.random.default_rng(3)
    assert F.level_drift(0.5 + 0.01 * rng.normal(size=400))[0] < 0.01 * 0.2    # noise-corrected: ~0
    y = np.concatenate([np.zeros(50), np.ones(50)])
    d, lag = F.level_drift(y)
    assert lag == 50 and d == pytest.approx(1.0, abs=0.02)
    assert F.level_drift([1.0, 2.0, 3.0]) == (0.0, 1)


def test_interval_scale_grows_with_the_prefix_trend():
    t = np.arange(100.0)
    rng = np.random.default_rng(4)
    noise = 0.02 * rng.normal(size=t.size)
    flat, rising = 0.5 + noise, 0.3 + 0.004 * t + noise
    assert F.interval_scale(rising, 2.0, 0.0) > 3 * F.interval_scale(flat, 2.0, 0.0)
    sigma = F.step_sigma(flat)
    d, lag = F.level_drift(flat)
    expect = math.sqrt(sigma ** 2 * 3.0 + (F.DRIFT_FACTOR * d * (2.0 * 100 + 20) / lag) ** 2)
    assert F.interval_scale(flat, 2.0, 0.0) == pytest.approx(expect)


def test_conformal_table_takes_the_largest_source_quantile_and_strata_fall_back():
    scored = [("noisy", "noisy/h3", float(i), "sim") for i in range(1, 100)]          # q80 = 80
    scored += [("noisy", "noisy/h3", float(i) / 10, "project") for i in range(1, 100)]  # q80 = 8
    scored += [("smooth", "smooth/h0", 1.0, "sim")] * 5                              # too few rows
    tab = FB.conformal_table(scored)
    assert tab["strata"]["noisy/h3"]["quantile"] == 80.0
    assert tab["strata"]["noisy/h3"]["by_source"] == {"project": 8.0, "sim": 80.0}
    assert tab["levels"]["0.5"]["strata"]["noisy/h3"]["quantile"] == 50.0
    assert CF.conformal_quantile_for("noisy", tab, hratio=9.0) == 80.0
    assert CF.conformal_quantile_for("noisy", tab, hratio=9.0, level=0.5) == 50.0
    # smooth: stratum and class have 5 rows → pooled (sources pooled over all 203 rows: sim's q80)
    assert CF.conformal_quantile_for("smooth", tab, hratio=0.5) == tab["pooled"]["quantile"]
    assert CF.stratum("noisy", 9.0) == "noisy/h3" and CF.stratum("smooth", 0.9) == "smooth/h0"
    assert CF.stratum("moderate", 2.0) == "moderate/h1" and CF.stratum("moderate", 4.0) == "moderate/h2"


def test_levels_are_nested_and_uncalibrated_default_scales_by_the_normal_quantile():
    t = np.arange(200.0)
    rng = np.random.default_rng(5)
    y = 0.3 + 0.4 * (1 - np.exp(-t / 50.0)) + 0.05 * rng.normal(size=t.size)
    widths = [F.forecast(t, y, [300.0], level=lv).high - F.forecast(t, y, [300.0], level=lv).low for lv in CF.LEVELS]
    assert all(a <= b + 1e-12 for a, b in zip(widths, widths[1:]))
    assert CF.conformal_quantile_for("noisy", {}, level=0.8) == CF.DEFAULT_QUANTILE
    assert CF.conformal_quantile_for("noisy", {}, level=0.5) == pytest.approx(CF.DEFAULT_QUANTILE * 0.6745 / 1.2816,
                                                                              rel=1e-3)
    fc = F.forecast(t, y, [300.0], level=0.95)
    assert fc.level == 0.95 and fc.stratum.startswith(fc.noise_class + "/")


def test_committed_calibration_has_every_level_and_stratum():
    tab = json.loads(CF.CONFORMAL_PATH.read_text())
    for lv in CF.LEVELS:
        entry = tab["levels"][f"{lv:g}"]
        assert set(entry["classes"]) == set(CF.NOISE_CLASSES)
        assert len(entry["strata"]) == 12 and entry["pooled"]["quantile"] is not None
        for c in CF.NOISE_CLASSES:
            for hr in (0.9, 2.0, 4.0, 9.0):
                assert math.isfinite(CF.conformal_quantile_for(c, tab, hratio=hr, level=lv))
    qs = [tab["levels"][f"{lv:g}"]["pooled"]["quantile"] for lv in CF.LEVELS]
    assert qs == sorted(qs)


def test_benchmark_reports_reliability_per_class_and_level():
    Run = _Run
    rng = np.random.default_rng(6)
    t = np.arange(60.0)
    runs = [Run(f"r{i}", np.clip(0.3 + 0.3 * (1 - np.exp(-t / 15)) + 0.05 * rng.normal(size=t.size), 0, 1))
            for i in range(3)]
    bench = FB.benchmark_forecasts(runs, prefixes=(0.3, 0.5))
    rel = bench["reliability"]
    assert rel and all(set(v) == set(CF.LEVELS) for v in rel.values())
    for c, pts in rel.items():
        shares = [pts[lv] for lv in CF.LEVELS]
        assert all(0.0 <= x <= 1.0 for x in shares) and shares == sorted(shares)     # nested intervals
        rows = [r for r in bench["rows"] if r["noise_class"] == c]
        assert pts[0.8] == pytest.approx(np.mean([r["covered"] for r in rows]))
    assert "reliability" in FB.format_forecast_benchmark(bench)
