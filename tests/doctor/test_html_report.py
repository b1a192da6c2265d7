"""The HTML report of ``rlvr-dynamics fit LOG --html`` (issue 20, "The HTML report"): run name and hyper-parameters in
the title, the evidence verdict (``noise only`` never drawn or labelled as a fit), the rules that fired with their
steps and numbers, the dynamics fields panel, fonts ≥ 9 pt and captions."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rlvr_dynamics.paths import SHARED_DIR
from rlvr_dynamics.doctor import render as hr
from rlvr_dynamics.doctor.pipeline import fit_run
from rlvr_dynamics.runs.hyperparams import find_hyperparameters, merge
from rlvr_dynamics.runs.logs import load_log

ROOT = Path(__file__).resolve().parents[2]
TRL_OUTPUT = Path(__file__).parent.parent / "runs" / "data" / "trl_output"   # the log-format fixtures of tests/runs
SHARED_LOGS = SHARED_DIR / "grpo_logs"
HEALTHY_RUN = ROOT / "data" / "runs" / "p1-fail-healthy-8e2d6542c7"


def _csv(path: Path, columns: dict[str, np.ndarray]) -> Path:
    names = list(columns)
    n = len(next(iter(columns.values())))
    lines = [",".join(["step"] + names)]
    lines += [",".join([str(i + 1)] + [repr(float(columns[c][i])) for c in names]) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _rising(n: int = 160, seed: int = 0) -> np.ndarray:
    t = np.arange(n, dtype=float)
    return 0.8 - 0.6 * np.exp(-t / 35.0) + np.random.default_rng(seed).normal(0, 0.03, n)


def _noise(n: int = 160, seed: int = 1) -> np.ndarray:
    return np.clip(0.3 + np.random.default_rng(seed).normal(0, 0.1, n), 0, 1)


def _page(tmp_path: Path, log, report, **kw) -> str:
    paths = hr.write_report(log, report, html=tmp_path / "r.html", png=tmp_path / "r.png", **kw)
    assert [p.name for p in paths] == ["r.png", "r.html"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []   # atomic: no temp left
    return (tmp_path / "r.html").read_text(encoding="utf-8")


def _h1(page: str) -> str:
    return re.sub(r"<[^>]+>", " ", re.search(r"<h1>(.*?)</h1>", page, re.S).group(1))


def _title(page: str) -> str:
    return re.search(r"<title>(.*?)</title>", page, re.S).group(1)


def _small_texts(fig) -> list[tuple[str, float]]:
    """Visible, non-empty texts of the drawn figure below 9 pt."""
    from matplotlib.text import Text

    fig.canvas.draw()
    return [(t.get_text(), t.get_fontsize()) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and t.get_fontsize() < hr.MIN_FONT_PT]


# ---------------------------------------------------------------------------------------------------- run name

@pytest.mark.parametrize("path, name", [
    ("out/checkpoint-12/trainer_state.json", "out"),
    ("out/checkpoint-12", "out"),
    ("out/trainer_state.json", "out"),
    ("out/runs/Dec01_03-30-00_vm/events.out.tfevents.1796095357.vm.7236.0", "out"),
    ("data/runs/p1-long-03aacbc63d/metrics.csv", "p1-long-03aacbc63d"),
    ("logs/wandb_export_my_run.csv", "wandb_export_my_run"),
    ("mlruns/0/3af7b011/metrics/train/reward.txt", "reward"),  # a plain file is named by its stem
    ("mlruns/0/3af7b011/metrics", "3af7b011"),
])
def test_run_name_is_the_run_not_the_checkpoint_or_event_file(tmp_path, path, name):
    assert hr.run_name_from_path(tmp_path / path) == name      # as a path not (yet) on disk
    target = tmp_path / path                                    # and as the files a trainer leaves
    if target.suffix or "tfevents" in target.name or "metrics" in target.parts[:-1]:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    else:
        target.mkdir(parents=True)
    assert hr.run_name_from_path(target) == name


def test_run_name_of_the_trl_event_folder_is_the_output_dir():
    log = load_log(TRL_OUTPUT)
    assert "Dec01" in log.source                          # the loader read the runs/<date>/ event folder ...
    assert hr.run_name_from_path(log.source) == "trl_output"   # ... the report names the output_dir


# ---------------------------------------------------------------------------------------------------- title

def test_title_names_the_trl_output_dir_and_its_hyperparameters(tmp_path):
    log = load_log(TRL_OUTPUT)
    report = fit_run(log, p1_laws=False)
    page = _page(tmp_path, log, report, hyperparameters=find_hyperparameters(TRL_OUTPUT))
    h1, title = _h1(page), _title(page)
    for head in (h1, title):
        assert "trl_output" in head
        assert "η = 3e-06" in head and "K_ref = 8" in head and "μ = 0.8" in head
        assert "checkpoint" not in head and "tfevents" not in head and "Dec01" not in head
    src = re.search(r'<p class="hpsrc">(.*?)</p>', page, re.S).group(1)
    assert "training_args.bin" in src and "not found" not in src


def test_title_from_the_cli_report_says_where_each_value_came_from(tmp_path):
    """``rlvr-dynamics fit`` stores ``report["hyperparameters"]`` = merge(flags, found) with its notes: a flag is
    'given on the command line', the others 'read from' their file."""
    log = load_log(TRL_OUTPUT)
    report = fit_run(log, p1_laws=False)
    hp, notes = merge({"learning_rate": None, "momentum": 0.5, "refresh_interval": None},
                      find_hyperparameters(TRL_OUTPUT))
    report["hyperparameters"] = {**hp, "notes": notes}
    rows = {r["name"]: r for r in hr.hyperparameter_rows(report)}
    assert rows["learning_rate"]["value"] == pytest.approx(3e-6)
    assert rows["learning_rate"]["source"].endswith("training_args.bin")
    assert rows["refresh_interval"]["value"] == 8 and rows["refresh_interval"]["source"].endswith("training_args.bin")
    assert rows["momentum"]["source"] == "given on the command line"
    page = _page(tmp_path, log, report)
    assert "η = 3e-06" in _h1(page) and "K_ref = 8" in _h1(page) and "μ = 0.5" in _h1(page)


def test_missing_hyperparameters_say_not_found(tmp_path):
    log = load_log(_csv(tmp_path / "plain.csv", {"reward": _rising()}))
    report = fit_run(log, p1_laws=False)
    page = _page(tmp_path, log, report)
    assert "plain" in _h1(page)
    assert "η not found" in _h1(page) and "K_ref not found" in _h1(page)


def test_cli_html_names_the_run_and_reads_training_args(tmp_path, capsys):
    from rlvr_dynamics.cli import main

    out = tmp_path / "report.html"
    assert main(["fit", str(TRL_OUTPUT), "--quick", "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "trl_output" in _h1(page) and "η = 3e-06" in _h1(page) and "K_ref = 8" in _h1(page)
    assert "training_args.bin" in page


# ---------------------------------------------------------------------------------------------------- verdict

def _assert_noise_only(page: str, fig, report) -> None:
    assert report["dynamics"]["verdict"] == "noise only"
    assert "noise only: noise ceiling" in page and "&lt; 0.2" in page
    assert re.search(r'<section class="verdict v-noise-only"><h2>noise only: noise ceiling (?:≤ 0|[0-9.]+) &lt; 0\.2</h2>',
                     page)
    assert "reliable" not in page.lower()              # neither "reliable" nor "unreliable": no fit is read
    reward_ax = fig.axes[0]
    labels = [ln.get_label() for ln in reward_ax.get_lines()]
    assert not any(lab in " ".join(labels) for lab in ("first order", "overdamped", "oscillatory"))
    assert "mean reward" in labels
    assert any("noise only: noise ceiling" in t.get_text() for t in reward_ax.texts)


def test_noise_only_log_is_never_drawn_or_labelled_as_a_fit(tmp_path):
    log = load_log(_csv(tmp_path / "flat.csv", {"reward": _noise()}))
    report = fit_run(log, p1_laws=True)
    page = _page(tmp_path, log, report)
    fig = hr.report_figure(log, report)
    _assert_noise_only(page, fig, report)
    assert "no response law is drawn" in hr.figure_caption(log, report, fig)


@pytest.mark.skipif(not (HEALTHY_RUN / "metrics.csv").is_file(), reason="project run data/runs not present")
def test_noise_only_project_run(tmp_path):
    """The healthy testbed run reads 'noise only' (ceiling 0.07); its single exponential is 'reliable' in the
    text report, and the page must not say so."""
    log = load_log(HEALTHY_RUN / "metrics.csv")
    report = fit_run(log, p1_laws=True)
    assert report["response"]["laws"]["single_exponential"]["status"] == "reliable"   # what the page must hide
    page = _page(tmp_path, log, report)
    _assert_noise_only(page, hr.report_figure(log, report), report)
    assert "p1-fail-healthy-8e2d6542c7" in _h1(page) and "η = 0.0005" in _h1(page)


@pytest.mark.parametrize("verdict, regime, shown", [
    ("noise only", "first-order", "not read: noise only"), ("noise only", "overdamped", "not read: noise only"),
    ("undetermined", "overdamped", "fitted; reading undetermined"),
    ("stable", "growing", "fitted; growth not evidenced"), ("stable", "overdamped", "reliable"),
    ("unstable", "first-order", "fitted; rejected by the growth test"), ("unstable", "growing", "reliable"),
])
def test_reliable_only_where_the_verdict_agrees(verdict, regime, shown):
    assert hr.display_status("reliable", regime, verdict) == shown
    assert hr.display_status("at bound", regime, "stable") == "at bound"


def test_stable_run_shows_its_verdict_and_law_read(tmp_path):
    log = load_log(_csv(tmp_path / "rise.csv", {"reward": _rising()}))
    report = fit_run(log, p1_laws=False, forecast_steps=[200])
    assert report["dynamics"]["verdict"] == "stable"
    page = _page(tmp_path, log, report)
    assert '<section class="verdict v-stable"><h2>reading: stable</h2>' in page
    assert report["dynamics"]["reason"].split(";")[0][:30] in page
    fig = hr.report_figure(log, report)
    assert any("(law read)" in ln.get_label() for ln in fig.axes[0].get_lines())


# ---------------------------------------------------------------------------------------------------- rules

def test_fired_detector_steps_and_numbers_are_in_the_page(tmp_path):
    log = load_log(_csv(tmp_path / "rise.csv", {"reward": _rising()}))
    report = fit_run(log, p1_laws=False)
    report["diagnostics"]["reward_hacking"] = {
        "available": True, "fired": True, "step": 137, "signal": "reward vs eval_reward", "threshold": "the rule",
        "detail": {"step": 137, "eval": 0.2305}, "events": [{"step": 137, "kind": "evaluation fell", "eval": 0.2305},
                                                             {"step": 151, "kind": "evaluation fell", "eval": 0.1875}]}
    page = _page(tmp_path, log, report)
    rules = page.split("<h2>Rules that fired</h2>")[1].split("<figure>")[0]
    assert "reward_hacking at step 137 (events at steps 137, 151): kind = evaluation fell, eval = 0.2305" in rules
    quiet = [n for n, d in report["diagnostics"].items() if d["available"] and not d["fired"]]
    na = [n for n, d in report["diagnostics"].items() if not d["available"]]
    assert f"Quiet: {', '.join(quiet) or 'none'}." in rules
    assert f"Not applicable (signal missing from the log): {', '.join(na) or 'none'}." in rules
    table = page.split("<h2>Diagnostics</h2>")[1]
    assert "fired at step 137" in table and "step 151: kind = evaluation fell, eval = 0.1875" in table
    fig = hr.report_figure(log, report)
    assert any(t.get_text() == "step 137" for t in fig.axes[-1].texts)


@pytest.mark.skipif(not SHARED_LOGS.is_dir(), reason="../shared/grpo_logs not present")
def test_fired_detector_of_a_committed_failure_run(tmp_path):
    from rlvr_dynamics.paths import RUNS_DIR

    runs = sorted(RUNS_DIR.glob("p1-fail-reward-hacking-*"))
    if not runs:
        pytest.skip("committed failure runs absent")
    log = load_log(runs[0] / "metrics.csv")
    report = fit_run(log, p1_laws=False)
    fired = {n: d for n, d in report["diagnostics"].items() if d["fired"]}
    assert "reward_hacking" in fired
    page = _page(tmp_path, log, report)
    for name, d in fired.items():
        assert f"{name} at step {d['step']}" in page
        for e in d["events"][:12]:
            assert f"step {e['step']}:" in page
    assert runs[0].name in _h1(page)


# ---------------------------------------------------------------------------------------------------- dynamics panel

@pytest.mark.parametrize("column", ["dynamics/gap_alignment", "train/dynamics/group_reward_std"])
def test_dynamics_panel_when_the_log_has_dynamics_fields(tmp_path, column):
    rng = np.random.default_rng(3)
    log = load_log(_csv(tmp_path / "dyn.csv", {"reward": _rising(), column: rng.normal(0.2, 0.05, 160),
                                              "dynamics/flag/collapse_warning": np.zeros(160)}))
    assert column in hr.dynamics_columns(log)
    assert not any("flag" in c for c in hr.dynamics_columns(log))
    report = fit_run(log, p1_laws=False)
    fig = hr.report_figure(log, report)
    assert fig.rlvr_panels == ["reward", "residual", "dynamics", "diagnostics"] and len(fig.axes) == 4
    assert [ln.get_label() for ln in fig.axes[2].get_lines()] == [column.split("dynamics/")[1]]
    page = _page(tmp_path, log, report)
    caption = re.search(r"<figcaption>(.*?)</figcaption>", page, re.S).group(1)
    assert "Third: the dynamics fields" in caption and column.split("dynamics/")[1] in caption


def test_no_dynamics_panel_without_dynamics_fields(tmp_path):
    log = load_log(_csv(tmp_path / "plain.csv", {"reward": _rising(), "entropy": np.linspace(1, 0.5, 160)}))
    assert hr.dynamics_columns(log) == []
    report = fit_run(log, p1_laws=False)
    fig = hr.report_figure(log, report)
    assert fig.rlvr_panels == ["reward", "residual", "diagnostics"] and len(fig.axes) == 3
    page = _page(tmp_path, log, report)
    assert "dynamics fields" not in page


# ---------------------------------------------------------------------------------------------------- legibility

@pytest.mark.parametrize("kind", ["rising+dynamics", "noise"])
def test_no_text_below_9_pt_at_the_rendered_size(tmp_path, kind):
    rng = np.random.default_rng(4)
    cols = ({"reward": _rising(), "dynamics/gap_alignment": rng.normal(0, 1, 160),
             "dynamics/is_ratio_mean": 1 + rng.normal(0, 0.01, 160), "group_reward_std": rng.uniform(0, 0.4, 160),
             "eval_reward": np.where(np.arange(160) % 10 == 0, 0.5, np.nan)}
            if kind != "noise" else {"reward": _noise()})
    log = load_log(_csv(tmp_path / "log.csv", cols))
    report = fit_run(log, p1_laws=False, forecast_steps=[200])
    fig = hr.report_figure(log, report)
    assert _small_texts(fig) == []
    page = _page(tmp_path, log, report)
    # the page shows the image at the figure's physical width (96 CSS px per inch), so points are points
    width = int(re.search(r'<img [^>]*width="(\d+)"', page).group(1))
    assert width == round(fig.get_figwidth() * 96)
    assert "max-width:62rem" in page                       # body wider than the image: never scaled down


def test_every_figure_has_a_caption_and_the_page_is_self_contained(tmp_path):
    log = load_log(_csv(tmp_path / "rise.csv", {"reward": _rising()}))
    page = _page(tmp_path, log, fit_run(log, p1_laws=False))
    assert page.count("<figure>") == page.count("<figcaption>") == page.count("<img ") == 1
    caption = re.search(r"<figcaption>(.*?)</figcaption>", page, re.S).group(1)
    assert "Top:" in caption and "residuals" in caption and "diagnostics timeline" in caption
    assert 'src="data:image/png;base64,' in page
    body = page.split("<body>")[1]
    assert "http" not in body and "src=\"//" not in body and "<script" not in body


def test_run_name_of_an_mlflow_metric_file_is_the_run_id():
    run = Path(__file__).parent.parent / "runs" / "data" / "mlruns" / "0" / "3af7b01102d84f5ea7379dc0c9425113"
    assert hr.run_name_from_path(run / "metrics" / "train" / "reward") == run.name
    assert hr.run_name_from_path(run) == run.name
