"""Surrogates of real healthy runs: many new healthy logs with the noise of the real ones, for the doctor's false
alarms.

Why
    The doctor's false alarms on public runs came from noise the corpus' simulations do not have: one prompt per
    step, shaped reward sums with spikes (a format reward of 0.12 most steps, 2.3 when the answer is right), level
    changes as the data order moves, completion lengths that drift. Forty real healthy logs are too few to measure a
    rate of 5 %, and each has one noise realisation only. A surrogate keeps what makes a log real and healthy (its
    trend, its local distribution of rows, the relations between its columns) and draws a new realisation.

How (:func:`surrogate_log`)
    * **Thinned**: a random share in [0, :data:`DROP_MAX`] of the source's rows is dropped (a shorter run of the same
      shape; no row is ever repeated, so no dip is made longer than the source's own).
    * **Local block shuffle, whole rows.** The rows are cut into blocks of 1–:data:`BLOCK_MAX` consecutive rows and
      the blocks reordered by their position plus a uniform jitter of ± :data:`NEIGHBOURHOOD` of the run's length:
      each row moves a few positions at most. Every column of a row travels with it (reward, length, KL, entropy,
      sub-rewards), so the cross-column relations and the short autocorrelation stay; the trend stays because the
      moves are local. The value of a moved row keeps its residual about the source's local trend (a centred moving
      mean over the neighbourhood) and takes the trend where it lands, so a row moved back on a steep rise is not a
      fall; it stays within the source's observed range. This holds for every column logged on every reward row
      (reward, format accuracy, length, entropy, …): without it a steep early rise of the format accuracy, shuffled,
      made format "falls" at the 5th logged point that the real logs never show. Columns with gaps move as they
      are.
    * **Truncation** at a random point from :data:`KEEP_MIN` of the run on: a user asks at any point of a healthy
      run, and the final status counts.
    * **Logging interval**: with probability :data:`AVERAGED_SHARE`, consecutive rows are averaged k at a time,
      k ∈ {2, 5, 10} (TRL's ``logging_steps`` averages the metrics of the steps between two logs).
    A surrogate is healthy by construction: it draws from the same local distribution as a run a person labelled
    healthy. A doctor that calls it collapsing or unstable calls the source's own noise a failure.

Split (fixed 2026-12-05, before any doctor rule was scored on a surrogate)
    By source log, so the test part's noise shapes were never tuned on: :data:`TEST_SOURCES` (two of the four
    one-prompt Unsloth logs, three verl runs) and the CS336 healthy logs whose name's blake2b digest is odd go to
    ``test``; the rest to ``dev``. Seeds: dev family 0, test family 1.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from rlvr_dynamics.runs.logs import RunLog

NEIGHBOURHOOD = 0.04
"""Blocks move by a uniform jitter of ± this share of the rows (at least :data:`NEIGHBOURHOOD_MIN` rows)."""
NEIGHBOURHOOD_MIN = 4
BLOCK_MAX = 4
"""Blocks of 1 to BLOCK_MAX consecutive rows."""
DROP_MAX = 0.3
KEEP_MIN = 0.3
"""Truncated at a uniform share in [KEEP_MIN, 1] of the stretched run (at least :data:`MIN_ROWS` rows)."""
MIN_ROWS = 12
AVERAGED_SHARE = 0.25
AVERAGING = (2, 5, 10)
PER_SOURCE = 10
"""Surrogates per source log and split family."""
TEST_SOURCES = ("unsloth_nb_llama31_8b_gsm8k_v1", "unsloth_nb_adv_llama32_3b_gsm8k_g4",
                "verl_asyncrew_q7b_fsdp_base", "verl_asyncrew_q7b_fsdp_off_ppl", "verl_asyncrew_q7b_mcore_off")
"""Shared logs whose surrogates form the test part (module docstring)."""


def source_split(name: str, source: str) -> str:
    """``"dev"`` or ``"test"`` for a source log (module docstring, Split)."""
    if source == "shared":
        return "test" if name in TEST_SOURCES else "dev"
    digest = hashlib.blake2b(name.encode(), digest_size=4).digest()
    return "test" if digest[-1] % 2 else "dev"


def surrogate_log(log: RunLog, rng: np.random.Generator, name: str) -> tuple[RunLog, dict]:
    """One surrogate of ``log`` (module docstring): the new log and what was drawn (kept share, averaging)."""
    rows = np.flatnonzero(np.isfinite(log.reward))
    n = rows.size
    if n < MIN_ROWS:
        raise ValueError(f"log must have at least {MIN_ROWS} rewards for a surrogate, got {n}")
    half = max(NEIGHBOURHOOD_MIN, int(round(NEIGHBOURHOOD * n)))
    kept = np.sort(rng.permutation(n)[: max(MIN_ROWS, int(round(n * (1 - rng.uniform(0, DROP_MAX)))))])
    m = kept.size
    cuts = np.cumsum(rng.integers(1, BLOCK_MAX + 1, size=m))
    starts = np.r_[0, cuts[cuts < m]]
    keys = starts + rng.uniform(-half, half, size=starts.size)
    order = np.concatenate([np.arange(a, b) for a, b in
                            zip(starts[np.argsort(keys, kind="stable")],
                                np.r_[starts[1:], m][np.argsort(keys, kind="stable")])])
    picked = kept[order]                                   # source positions, in the new order
    keep = max(MIN_ROWS, int(round(m * rng.uniform(KEEP_MIN, 1.0))))
    picked, landed = picked[:keep], kept[:keep]            # where each row lands, in source positions
    idx = rows[picked]
    series = {}
    for column, v in log.series.items():
        v = np.asarray(v, dtype=float)[rows]
        if np.isfinite(v).all():     # a column logged on every reward row keeps its residual about its local trend
            trend = _moving_mean(v, half)
            series[column] = np.clip(v[picked] + trend[landed] - trend[picked], float(np.min(v)), float(np.max(v)))
        else:
            series[column] = v[picked]
    spacing = max(1, int(np.median(np.diff(log.steps[rows]))) if n > 1 else 1)
    k = int(rng.choice(AVERAGING)) if rng.uniform() < AVERAGED_SHARE and keep >= MIN_ROWS * 2 else 1
    if k > 1:
        m = keep // k
        series = {c: _block_mean(v[: m * k], k) for c, v in series.items()}
        keep = m
    steps = (np.arange(1, keep + 1) * spacing * k).astype(np.int64)
    new = RunLog(source=f"surrogate of {log.source}", steps=steps, series=series, reward_column=log.reward_column)
    return new, {"kept": int(m), "rows": keep, "averaged": k, "of": name}


def _moving_mean(y: np.ndarray, half: int) -> np.ndarray:
    """Centred moving mean over ±half values, the ends padded by odd reflection (a straight line is its own trend
    up to the first and last value: a steep rise at the start is not flattened)."""
    h = min(half, y.size - 1)
    if h <= 0:
        return y.astype(float).copy()
    padded = np.concatenate([2 * y[0] - y[h:0:-1], y, 2 * y[-1] - y[-2:-h - 2:-1]])
    c = np.concatenate([[0.0], np.cumsum(padded)])
    i = np.arange(y.size) + h
    return (c[i + h + 1] - c[i - h]) / (2 * h + 1)


def _block_mean(v: np.ndarray, k: int) -> np.ndarray:
    """Mean of each k consecutive values over the finite ones (NaN where a block has none)."""
    b = v.reshape(-1, k)
    ok = np.isfinite(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(ok, b, 0.0).sum(axis=1) / ok.sum(axis=1)
    out[ok.sum(axis=1) == 0] = math.nan
    return out


def surrogate_runs(split: str, sources: list, per_source: int = PER_SOURCE) -> list:
    """The surrogate part of ``split`` (``"dev"``/``"test"``): :data:`PER_SOURCE` surrogates of every healthy run of
    ``sources`` (the corpus' shared and CS336 runs) that belongs to that split, labelled ``healthy`` (source
    ``surrogate``)."""
    from rlvr_dynamics.runs.noise import noise_class

    from .corpus_run import CorpusRun

    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    family = 0 if split == "dev" else 1
    out = []
    for src in [r for r in sources if r.outcome == "healthy"]:
        if source_split(src.name, src.source) != split:
            continue
        seed = int.from_bytes(hashlib.blake2b(f"{src.name}/{family}".encode(), digest_size=8).digest(), "little")
        rng = np.random.default_rng(seed)
        for j in range(per_source):
            name = f"sur-{src.name}-{family}-{j:02d}"
            log, drawn = surrogate_log(src.log, rng, src.name)
            y = log.reward_curve()[1]
            out.append(CorpusRun(name, "surrogate", split, log, src.reward_bounds, src.prompts_per_step,
                                 noise_class(y, src.reward_bounds), "healthy", meta={**drawn, "source": src.source}))
    return out
