"""P1's softmax-bandit GRPO (P1 spec §7.2), vectorised over many independent configurations in one array program.

How this simulator differs from the paper's algorithm (whose bandit details are not public [?]):

* Two arms per prompt (arm 1 correct, r = 1; arm 0 wrong, r = 0), one logit z per prompt, p = σ(z): the
  mean-field reduction is exact per prompt. Several prompts have independent logits and their own p_ref; the
  logged reward is the mean of p over prompts.
* Optimizer: heavy-ball ``vel ← momentum·vel + g``, ``z ← z + learning_rate·vel`` (gradient *ascent*), §3.1.
  No Adam, no clipping (clip ε is irrelevant without ratios far from 1; open choice §8.7: clipping off).
* KL to π_ref enters through its exact gradient β·p(1−p)(z − z_ref), not TRL's sampled k3 estimator.
* The stale force (open choice §8.1, stated in every notebook):
    - ``delay`` (model A, default): the whole gradient is evaluated at z_{k−d}, d = ``lag`` ≥ 0
      (0 = on-policy; 1 = one-step delay). This is what the continuum oscillator expands.
    - ``periodic`` (model B): the whole gradient is evaluated at z_{k0}, k0 = K_ref⌊k/K_ref⌋ (refresh every
      K_ref steps); effective lag ≈ K_ref/2.
    - ``surrogate``: GRPO's importance-corrected surrogate with π_old refreshed every K_ref steps: only the
      advantage normalisation (and the sampling) is stale, the ratio p/p_old and the KL use the current z.
* Exact-expectation mode (``group_size=None``, G → ∞)::

        g = p(1−p) [ w(p_old(1−p_old)) − β (z − z_ref) ],     w(v) = 1/sqrt(v+ε) or 1/(sqrt(v)+ε)

  whose on-policy fixed point is Mroueh's p* (:mod:`rlvr_dynamics.p1.fixed_point`).
* Finite-G mode: k ~ Binomial(G, p_old) correct answers per group (sampled exactly from G Bernoulli bits),
  group mean m = k/G, std² s² = m(1−m) (population; × G/(G−1) with ``unbiased_std``), advantages
  (r − m)·w(s²) (``normalisation="std"``, GRPO) or (r − m) (``"none"``, Dr-GRPO-like); with the importance ratio
  the per-group policy gradient is exactly p(1−p)·s²·w(s²)/(p_old(1−p_old)); groups with s = 0 give 0.

Time is in optimizer steps (δ = 1). All knobs broadcast over configurations (shape (C,)); ``p_ref`` has shape
(Q,) (same prompts for every configuration) or (C, Q).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import as_finite_array, check_in_range, check_int, check_positive, check_same_shape
from .bandit_theory import NORMALISATIONS
from .fixed_point import EPS_PLACEMENTS, logit, normaliser, sigmoid

__all__ = ["LAG_MODELS", "BanditRun", "simulate", "simulate_loop", "measure_stiffness", "StiffnessMeasurement"]

LAG_MODELS = ("delay", "periodic", "surrogate")

# ---------------------------------------------------------------------------------------------------------------
# The vectorised simulator
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class BanditRun:
    """Output of :func:`simulate`. C configurations, Q prompts, R recorded steps."""

    steps: np.ndarray
    """Recorded optimizer steps, shape (R,); step 0 is the initial policy."""
    reward: np.ndarray
    """Expected success rate of the current policy, mean over prompts, shape (C, R)."""
    sampled_reward: np.ndarray | None
    """Finite G only: mean sampled reward of the groups used for the update at that step, (C, R) (NaN at step 0)."""
    group_std: np.ndarray | None
    """Finite G only: within-group reward std (population, or unbiased if configured), mean over prompts, (C, R)."""
    logits: np.ndarray | None
    """z per prompt, (C, Q, R), when ``record_logits``."""
    finite: np.ndarray
    """(C,) False where a configuration produced non-finite values (diverged numerically)."""


def _prep(n_steps, learning_rate, momentum, beta, lag, p_ref, group_size, lag_model, eps_std,
          eps_placement, normalisation, z0, p0):
    n_steps = check_int("n_steps", n_steps, 1)
    if lag_model not in LAG_MODELS:
        raise ValueError(f"lag_model must be one of {LAG_MODELS}, got {lag_model!r}")
    if eps_placement not in EPS_PLACEMENTS:
        raise ValueError(f"eps_placement must be one of {EPS_PLACEMENTS}, got {eps_placement!r}")
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {normalisation!r}")
    lr = check_positive("learning_rate", learning_rate)
    mom = check_in_range("momentum", momentum, 0.0, 1.0, high_inclusive=False)
    beta = check_in_range("beta", beta, 0.0, None)
    eps = check_in_range("eps_std", eps_std, 0.0, None)
    kmin = 0 if lag_model == "delay" else 1
    kref = as_finite_array("lag", lag)
    if np.any(kref != np.round(kref)) or np.any(kref < kmin):
        raise ValueError(f"lag must be integers >= {kmin} for lag_model={lag_model!r}, got "
                         f"{np.unique(kref)[:3].tolist()}")
    pr = check_in_range("p_ref", p_ref, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if pr.ndim == 0:
        pr = pr.reshape(1, 1)
    elif pr.ndim == 1:
        pr = pr[None, :]
    elif pr.ndim != 2:
        raise ValueError(f"p_ref must have shape (Q,) or (C, Q), got {pr.shape}")
    if group_size is not None:
        gs = as_finite_array("group_size", group_size)
        if np.any(gs != np.round(gs)) or np.any(gs < 2):
            raise ValueError(f"group_size must be integers >= 2 (or None for G -> infinity), got {group_size!r}")
    else:
        gs = np.array(0.0)
    try:
        c_shape = np.broadcast_shapes(lr.shape, mom.shape, beta.shape, eps.shape, kref.shape, gs.shape,
                                      pr.shape[:1])
    except ValueError as exc:
        raise ValueError(
            "shapes do not broadcast together: learning_rate{}, momentum{}, beta{}, eps_std{}, lag{}, "
            "group_size{}, p_ref{}".format(lr.shape, mom.shape, beta.shape, eps.shape, kref.shape, gs.shape,
                                           pr.shape)) from exc
    if len(c_shape) > 1:
        raise ValueError(f"configuration arrays must be 1-D (C,), got broadcast shape {c_shape}")
    n_c = c_shape[0] if c_shape else 1
    n_q = pr.shape[1]
    pr = np.broadcast_to(pr, (n_c, n_q))
    cfg = {name: np.broadcast_to(x, (n_c,)).astype(float) for name, x in
           (("lr", lr), ("mom", mom), ("beta", beta), ("eps", eps), ("kref", kref), ("gs", gs))}
    if z0 is not None and p0 is not None:
        raise ValueError("give z0 or p0, not both")
    if z0 is not None:
        z_init = as_finite_array("z0", z0)
    elif p0 is not None:
        z_init = logit(check_in_range("p0", p0, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
    else:
        z_init = logit(pr)
    try:
        z_init = np.broadcast_to(z_init if z_init.ndim != 1 or z_init.size == n_q else z_init[:, None],
                                 (n_c, n_q)).astype(float)
    except ValueError as exc:
        raise ValueError(f"z0/p0 shape {np.shape(z_init)} does not broadcast to (C, Q)=({n_c}, {n_q})") from exc
    return n_steps, n_c, n_q, pr, cfg, z_init


def simulate(n_steps: int, *, learning_rate, momentum=0.0, beta=1.0, lag=0, p_ref=0.1,
             group_size=None, lag_model: str = "delay", eps_std=0.0, eps_placement: str = "inside",
             normalisation: str = "std", unbiased_std: bool = False, z0=None, p0=None,
             seed: int | np.random.Generator | None = 0, record_every: int = 1,
             record_logits: bool = False) -> BanditRun:
    """Run C softmax-bandit GRPO configurations for ``n_steps`` optimizer steps at once (see module docstring).

    Per-configuration knobs (scalars or (C,) arrays): ``learning_rate`` (> 0), ``momentum`` ([0, 1)), ``beta``
    (KL weight ≥ 0), ``lag`` (the delay d ≥ 0 in steps for ``lag_model="delay"``; the refresh interval K_ref ≥ 1 otherwise),
    ``group_size`` (None = exact expectation; integers ≥ 2), ``eps_std``. ``p_ref``: (Q,) or (C, Q).
    Initial policy: ``p0``/``z0`` (default p_ref), at rest (zero velocity, history constant).
    """
    n_steps, n_c, n_q, pr, cfg, z_init = _prep(n_steps, learning_rate, momentum, beta, lag, p_ref,
                                               group_size, lag_model, eps_std, eps_placement, normalisation, z0, p0)
    record_every = check_int("record_every", record_every, 1)
    finite_g = group_size is not None
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    bitgen = rng.bit_generator

    n = n_c * n_q
    rep = lambda x: np.repeat(x, n_q)  # noqa: E731  (C,) -> (n,)
    lr, mom, beta_, eps = rep(cfg["lr"]), rep(cfg["mom"]), rep(cfg["beta"]), rep(cfg["eps"])
    kref = rep(cfg["kref"]).astype(np.int64)
    z_ref = logit(pr).ravel()
    z = z_init.ravel().copy()
    vel = np.zeros(n)
    inside = eps_placement == "inside"
    use_std = normalisation == "std"
    scalar_eps = float(eps[0]) if np.all(eps == eps[0]) else eps
    scalar_beta = float(beta_[0]) if np.all(beta_ == beta_[0]) else beta_
    scalar_mom = float(mom[0]) if np.all(mom == mom[0]) else mom
    scalar_lr = float(lr[0]) if np.all(lr == lr[0]) else lr

    if finite_g:
        gs = rep(cfg["gs"]).astype(np.int64)
        g_const = int(gs[0]) if np.all(gs == gs[0]) else None
        g_max = int(gs.max())
        unb = np.where(gs > 1, gs / np.maximum(gs - 1, 1), 1.0) if unbiased_std else None
        active = None if g_const is not None else (np.arange(g_max)[:, None] < gs[None, :])
        inv_g = 1.0 / gs

    # lag bookkeeping
    if lag_model == "delay":
        depth = int(kref.max()) + 1
        if depth == 1:
            ring = None
        else:
            ring = np.empty((depth, n))
            ring[:] = z
            ptr = (-kref) % depth              # row holding z_{k-d} at k = 0 (history = z0)
            ar = np.arange(n)
            flat = ring.reshape(-1)
    else:
        z_old = z.copy()
        count = np.zeros(n, dtype=np.int64)

    n_rec = n_steps // record_every + 1
    reward = np.empty((n_c, n_rec))
    sampled = np.full((n_c, n_rec), np.nan) if finite_g else None
    gstd = np.full((n_c, n_rec), np.nan) if finite_g else None
    logits = np.empty((n_c, n_q, n_rec)) if record_logits else None
    reward[:, 0] = sigmoid(z).reshape(n_c, n_q).mean(1)
    if record_logits:
        logits[:, :, 0] = z.reshape(n_c, n_q)

    two64 = float(2**64)
    tmp = np.empty(n)
    for k in range(n_steps):
        # --- the point where the (stale) gradient is evaluated ---
        if lag_model == "delay":
            if ring is None:
                z_lag = z
            else:
                ring[k % depth] = z
                z_lag = flat[ptr * n + ar]
                ptr += 1
                ptr[ptr == depth] = 0
        else:
            if k > 0:
                count += 1
                hit = count == kref
                if hit.any():
                    np.copyto(z_old, z, where=hit)
                    count[hit] = 0
            z_lag = z_old
        # p_old = σ(z_lag)
        with np.errstate(over="ignore"):
            p_old = np.exp(-z_lag)
        p_old += 1.0
        np.reciprocal(p_old, out=p_old)
        v_old = p_old - p_old * p_old
        if lag_model == "surrogate":
            with np.errstate(over="ignore"):
                p_cur = np.exp(-z)
            p_cur += 1.0
            np.reciprocal(p_cur, out=p_cur)
            v_cur = p_cur - p_cur * p_cur
            z_force = z
        else:
            v_cur = v_old
            z_force = z_lag
        # --- the advantage term: v_cur * s2w / v_old ---
        if not finite_g:
            if use_std:
                if inside:
                    drive = np.sqrt(np.maximum(v_old + scalar_eps, 1e-300))
                    np.divide(v_cur, drive, out=drive)
                else:
                    drive = np.sqrt(v_old)
                    drive += scalar_eps
                    np.divide(v_cur, np.maximum(drive, 1e-300), out=drive)
            else:
                drive = v_cur.copy()
        else:
            thr = p_old * two64
            raw = bitgen.random_raw(g_max * n).reshape(g_max, n)
            with np.errstate(invalid="ignore"):   # NaN p_old (a numerically diverged run) casts to garbage: flagged by `finite`
                hits = raw < thr.astype(np.uint64)    # p_old = 1 maps to 2^64 - 1 (P(miss) = 2^-64)
            if active is not None:
                hits &= active
            kk = np.count_nonzero(hits, axis=0)
            m = kk * (1.0 / g_const) if g_const is not None else kk * inv_g
            s2 = m - m * m
            if unb is not None:
                s2 *= unb
            if use_std:
                if inside:
                    den = np.sqrt(np.maximum(s2 + scalar_eps, 1e-300))
                else:
                    den = np.maximum(np.sqrt(s2) + scalar_eps, 1e-300)
                drive = s2 / den
            else:
                drive = s2.copy()
            if lag_model == "surrogate":
                drive *= v_cur
                drive /= np.maximum(v_old, 1e-300)
            j_rec = (k + 1) if (k + 1) % record_every == 0 else -1
            if j_rec >= 0:
                jj = j_rec // record_every
                sampled[:, jj] = m.reshape(n_c, n_q).mean(1)
                gstd[:, jj] = np.sqrt(s2).reshape(n_c, n_q).mean(1)
        # --- KL term and the heavy-ball update ---
        np.subtract(z_force, z_ref, out=tmp)
        tmp *= v_cur
        tmp *= scalar_beta
        drive -= tmp                         # drive is now the gradient g
        vel *= scalar_mom
        vel += drive
        if np.ndim(scalar_lr) == 0:
            z += scalar_lr * vel
        else:
            z += lr * vel
        if (k + 1) % record_every == 0:
            j = (k + 1) // record_every
            with np.errstate(over="ignore"):
                reward[:, j] = (1.0 / (1.0 + np.exp(-z))).reshape(n_c, n_q).mean(1)
            if record_logits:
                logits[:, :, j] = z.reshape(n_c, n_q)
    fin = np.isfinite(z).reshape(n_c, n_q).all(1)
    return BanditRun(steps=np.arange(n_rec) * record_every, reward=reward, sampled_reward=sampled,
                     group_std=gstd, logits=logits, finite=fin)


def simulate_loop(n_steps: int, *, learning_rate: float, momentum: float = 0.0, beta: float = 1.0,
                  lag: int = 0, p_ref: float = 0.1, group_size: int | None = None,
                  lag_model: str = "delay", eps_std: float = 0.0, p0: float | None = None,
                  seed: int = 0) -> np.ndarray:
    """Straightforward per-run Python reference (one configuration, one prompt, ``eps`` inside, population std,
    std normalisation): returns p_k for k = 0..n_steps. Used to check :func:`simulate` (bitwise in exact mode)
    and as the baseline of ``bench/bench_p1.py``. Finite G draws Bernoulli bits with ``random.Random(seed)``."""
    import random

    if lag_model not in LAG_MODELS:
        raise ValueError(f"lag_model must be one of {LAG_MODELS}, got {lag_model!r}")
    rnd = random.Random(seed)
    z_ref = math.log(p_ref) - math.log1p(-p_ref)
    z = z_ref if p0 is None else math.log(p0) - math.log1p(-p0)
    hist = [z]
    vel = 0.0
    z_old = z
    out = [1.0 / (1.0 + math.exp(-z))]
    for k in range(n_steps):
        if lag_model == "delay":
            z_lag = hist[max(k - lag, 0)]
        else:
            if k % lag == 0:
                z_old = z
            z_lag = z_old
        p_old = 1.0 / (1.0 + math.exp(-z_lag))
        v_old = p_old - p_old * p_old
        if lag_model == "surrogate":
            p_cur = 1.0 / (1.0 + math.exp(-z))
            v_cur, z_force = p_cur - p_cur * p_cur, z
        else:
            v_cur, z_force = v_old, z_lag
        if group_size is None:
            drive = v_cur / math.sqrt(max(v_old + eps_std, 1e-300))
        else:
            kk = sum(1 for _ in range(group_size) if rnd.random() < p_old)
            m = kk / group_size
            s2 = m - m * m
            drive = s2 / math.sqrt(max(s2 + eps_std, 1e-300))
            if lag_model == "surrogate":
                drive = drive * v_cur / max(v_old, 1e-300)
        g = drive - beta * v_cur * (z_force - z_ref)
        vel = momentum * vel + g
        z = z + learning_rate * vel
        hist.append(z)
        out.append(1.0 / (1.0 + math.exp(-z)))
    return np.array(out)


# ---------------------------------------------------------------------------------------------------------------
# Independent stiffness measurement (§7.2; open choice §8.5: relaxation fit, on-policy d = 0, μ = 0)
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class StiffnessMeasurement:
    """Result of :func:`measure_stiffness` (arrays over the (p_ref, beta) grid)."""

    stiffness: np.ndarray
    """K measured from the relaxation rate: K = (1 − ρ)/η with ρ the fitted per-step ratio e_{k+1}/e_k."""
    fixed_point: np.ndarray
    """Plateau of the same runs after ``n_steps`` (p at the end)."""
    ratio: np.ndarray
    """ρ, the fitted per-step contraction of |e| over the fit window."""


def measure_stiffness(p_ref, beta, *, learning_rate: float = 1e-3, n_steps: int = 4000, displacement: float = 1e-4,
                      eps_std=0.0, eps_placement: str = "inside", fit_window: tuple[float, float] = (0.25, 0.75)
                      ) -> StiffnessMeasurement:
    """Measure K from a small-η, μ = 0, on-policy (d = 0) exact-expectation relaxation started ``displacement``
    above z* in logit (§2 "independently measured"; open choice §8.5). The fixed point used to define e is the
    run's own end point after a second, long run, not Mroueh's formula, so the measurement is independent of it.

    Fits log|e_k| linearly over the ``fit_window`` fraction of the steps; in the linear regime e_{k+1} = (1 − ηK) e_k.
    """
    p_ref = check_in_range("p_ref", p_ref, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    beta = check_positive("beta", beta)
    shape = check_same_shape(p_ref=p_ref, beta=beta)
    pr, b = (np.broadcast_to(x, shape).astype(float).ravel() for x in (p_ref, beta))
    lr = float(check_positive("learning_rate", learning_rate))
    n_steps = check_int("n_steps", n_steps, 10)
    disp = float(check_positive("displacement", displacement))
    # 1) locate the plateau by running the same dynamics to convergence (larger step, then polish)
    z = logit(pr)
    for step in (0.5, 0.05):
        for _ in range(4000):
            p = sigmoid(z)
            v = p * (1 - p)
            z = z + step * v * (normaliser(v, eps_std, eps_placement) - b * (z - logit(pr)))
    z_star = z
    # 2) small-eta relaxation from z* + displacement
    run = simulate(n_steps, learning_rate=lr, momentum=0.0, beta=b, lag=0, p_ref=pr[:, None],
                   eps_std=eps_std, eps_placement=eps_placement, z0=(z_star + disp)[:, None], record_logits=True)
    e = run.logits[:, 0, :] - z_star[:, None]
    k = np.arange(e.shape[1])
    lo, hi = int(fit_window[0] * n_steps), int(fit_window[1] * n_steps)
    y = np.log(np.abs(e[:, lo:hi]))
    x = k[lo:hi] - k[lo:hi].mean()
    slope = (y - y.mean(1, keepdims=True)) @ x / (x @ x)
    ratio = np.exp(slope)
    stiff = (1.0 - ratio) / lr
    rs = lambda a: a.reshape(shape) if shape else float(a[0])  # noqa: E731
    return StiffnessMeasurement(stiffness=rs(stiff), fixed_point=rs(sigmoid(z_star)), ratio=rs(ratio))
