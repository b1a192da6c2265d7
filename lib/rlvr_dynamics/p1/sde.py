"""P1's noisy oscillator (P1 spec §3.8): stationary variances and the vectorised SDE ensemble.

    M_eff ë + C_eff ė + K_eff e = sqrt(D/G) ξ(t)

with the coefficients of :mod:`.oscillator`. :func:`sde_ensemble` integrates many paths for many parameter sets at
once (semi-implicit Euler–Maruyama, independently seeded blocks so results do not depend on the thread count).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._checks import as_finite_array, check_in_range, check_int, check_positive
from .oscillator import Coefficients, coefficient_arrays, scalar_or_array

__all__ = ["stationary_variance", "SDEResult", "sde_ensemble"]

# ---------------------------------------------------------------------------------------------------------------
# Stationary statistics and the SDE ensemble (P1 §3.8)
# ---------------------------------------------------------------------------------------------------------------

def stationary_variance(coeffs: Coefficients, noise_strength, group_size=1):
    """(Var∞(e), Var∞(ė)) = (D / (2 G C K_eff), D / (2 G C M)) for M ë + C ė + K e = sqrt(D/G) ξ (P1 §3.8 [D]).

    ``noise_strength`` is D (per-rollout noise), ``group_size`` is G ≥ 1. Requires C > 0 (else no stationary
    state: ValueError naming ``damping``).
    """
    m, c, k = coefficient_arrays(coeffs)
    d = check_in_range("noise_strength", noise_strength, 0.0, None)
    g = check_in_range("group_size", group_size, 1.0, None)
    if np.any(c <= 0):
        raise ValueError(f"damping must be > 0 for a stationary state (unstable regime), got {c[c <= 0][:3]}")
    return scalar_or_array(d / (2.0 * g * c * k)), scalar_or_array(d / (2.0 * g * c * m))


@dataclass
class SDEResult:
    """Output of :func:`sde_ensemble`. Shapes: P parameter sets, N paths, R recorded times."""

    t: np.ndarray
    """Recorded times, shape (R,)."""
    mean: np.ndarray
    """Ensemble mean of e over paths, shape (P, R)."""
    var: np.ndarray
    """Ensemble variance of e over paths (ddof=0), shape (P, R)."""
    paths: np.ndarray | None
    """e for every path at every recorded time, shape (P, N, R), only when ``return_paths=True``."""
    time_avg_var: np.ndarray | None
    """Time average of e² over the last ``stationary_fraction`` of the run, per parameter set and path, (P, N)."""


_BLOCK = 8192  # paths per independently seeded block: results do not depend on the number of threads


def sde_ensemble(coeffs: Coefficients, noise_std, *, e0=1.0, n_paths: int = 1000, n_steps: int = 1000,
                 dt: float = 0.1, seed: int | np.random.Generator | None = 0, record_every: int = 1,
                 return_paths: bool = False, stationary_fraction: float = 0.5, n_threads: int = 1,
                 dtype=np.float64) -> SDEResult:
    """Euler–Maruyama ensemble of M ë + C ė + K e = σ ξ, many paths × many parameter sets in one array program.

    ``coeffs`` arrays have shape (P,) (scalars allowed); ``noise_std`` is σ = sqrt(D/G), broadcast to (P,).
    All paths start at e = e0, ė = 0. Scheme (explicit EM, weak order 1)::

        e_{n+1} = e_n + dt v_n
        v_{n+1} = v_n − dt (C v_n + K e_n)/M + σ sqrt(dt)/M · N(0,1)

    Paths are split into blocks of 8192, each with its own child seed (``SeedSequence.spawn``), so results are
    the same for any ``n_threads`` (threads work because numpy releases the GIL in ufuncs and the generator).
    ``time_avg_var`` accumulates e² over the last ``stationary_fraction`` of the steps (every step) for
    stationary-variance estimates. Differs from the paper only in being a discretisation (bias O(dt)).
    """
    m, c, k = coefficient_arrays(coeffs)
    m, c, k = (np.atleast_1d(x).astype(float).ravel() for x in np.broadcast_arrays(m, c, k))
    n_par = m.size
    sigma = np.broadcast_to(check_in_range("noise_std", noise_std, 0.0, None), (n_par,)).astype(float)
    e0 = np.broadcast_to(as_finite_array("e0", e0), (n_par,)).astype(float)
    n_paths = check_int("n_paths", n_paths, 1)
    n_steps = check_int("n_steps", n_steps, 1)
    record_every = check_int("record_every", record_every, 1)
    n_threads = check_int("n_threads", n_threads, 1, 64)
    dt = float(check_positive("dt", dt))
    stationary_fraction = float(check_in_range("stationary_fraction", stationary_fraction, 0.0, 1.0,
                                               low_inclusive=False))
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if not isinstance(seed, np.random.Generator):
        ss = np.random.SeedSequence(seed)
    else:
        ss = np.random.SeedSequence(int(seed.integers(2**63)))

    blocks = [(s, min(s + _BLOCK, n_paths)) for s in range(0, n_paths, _BLOCK)]
    child = ss.spawn(len(blocks))
    n_rec = n_steps // record_every + 1
    t_rec = np.arange(n_rec) * record_every * dt
    s1 = np.zeros((n_par, n_rec))
    s2 = np.zeros((n_par, n_rec))
    paths = np.empty((n_par, n_paths, n_rec)) if return_paths else None
    tav = np.zeros((n_par, n_paths))
    start_avg = n_steps - max(1, int(round(stationary_fraction * n_steps)))

    a_v = (1.0 - dt * c / m).astype(dtype)[:, None]      # v multiplier
    a_e = (dt * k / m).astype(dtype)[:, None]            # force coefficient
    a_n = (sigma * np.sqrt(dt) / m).astype(dtype)[:, None]
    dt_c = dtype.type(dt)

    def run_block(ib: int):
        lo, hi = blocks[ib]
        nb = hi - lo
        rng = np.random.Generator(np.random.PCG64(child[ib]))
        e = np.empty((n_par, nb), dtype=dtype)
        e[:] = e0[:, None]
        v = np.zeros_like(e)
        tmp = np.empty_like(e)
        noise = np.empty_like(e)
        acc = np.zeros((n_par, nb))
        rec1 = np.zeros((n_par, n_rec))
        rec2 = np.zeros((n_par, n_rec))
        rec1[:, 0] = e.sum(axis=1)
        rec2[:, 0] = np.einsum("ij,ij->i", e, e, dtype=float)
        if paths is not None:
            paths[:, lo:hi, 0] = e
        for n in range(1, n_steps + 1):
            rng.standard_normal(out=noise, dtype=dtype)
            np.multiply(e, a_e, out=tmp)
            e += dt_c * v
            v *= a_v
            v -= tmp
            noise *= a_n
            v += noise
            if n > start_avg:
                acc += e * e
            if n % record_every == 0:
                j = n // record_every
                rec1[:, j] = e.sum(axis=1)
                rec2[:, j] = np.einsum("ij,ij->i", e, e, dtype=float)
                if paths is not None:
                    paths[:, lo:hi, j] = e
        tav[:, lo:hi] = acc / (n_steps - start_avg)
        return rec1, rec2

    if n_threads == 1 or len(blocks) == 1:
        results = [run_block(i) for i in range(len(blocks))]
    else:
        with ThreadPoolExecutor(max_workers=n_threads) as ex:
            results = list(ex.map(run_block, range(len(blocks))))
    for r1, r2 in results:
        s1 += r1
        s2 += r2
    mean = s1 / n_paths
    var = np.maximum(s2 / n_paths - mean**2, 0.0)
    return SDEResult(t=t_rec, mean=mean, var=var, paths=paths, time_avg_var=tav)
