"""Box-bounded nonlinear least squares for the few-parameter learning curves: Levenberg–Marquardt with projection.

Minimises ½‖r(x)‖² subject to lo ≤ x ≤ hi. Parameters at a bound whose gradient points out of the box are held
there (an active set); for the others each iteration solves (JᵀJ + λ·diag(JᵀJ)) δ = −Jᵀr (Marquardt's scaling,
which is what ``x_scale="jac"`` does in ``scipy.optimize.least_squares``), projects x + δ onto the box, and keeps the
step only when it lowers the cost (λ ÷ 3 then, × 4 otherwise). The Jacobian is a forward difference. It exists so
that ``rlvr-dynamics fit`` does not import ``scipy.optimize`` (about 0.6 s of start-up on this machine kind, more than
the whole report): the learning curves start from a grid optimum (:mod:`.learning_curves`) and need only a short
refinement, where this and trust-region reflective agree to the tolerance of the fit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LsqResult:
    """``x`` the solution, ``cost`` = ½‖r(x)‖², ``nfev`` the residual evaluations, ``converged``."""

    x: np.ndarray
    cost: float
    nfev: int
    converged: bool


def bounded_least_squares(fun, x0, lo, hi, *, max_nfev: int = 60, xtol: float = 1e-10,
                          ftol: float = 1e-10) -> LsqResult:
    """Minimise ½‖fun(x)‖² over the box [lo, hi] from ``x0`` (module docstring); ``max_nfev`` evaluations at most.

    >>> import numpy as np
    >>> t = np.linspace(0, 1, 20)
    >>> r = bounded_least_squares(lambda p: p[0] * np.exp(-p[1] * t) - 2 * np.exp(-3 * t), [1, 1], [0, 0], [5, 5])
    >>> np.round(r.x, 6).tolist()
    [2.0, 3.0]
    """
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if lo.shape != hi.shape or not np.all(lo <= hi):
        raise ValueError(f"bounds must have one shape with lo <= hi, got lo={lo!r}, hi={hi!r}")
    x = np.clip(np.asarray(x0, dtype=float), lo, hi)
    r = np.asarray(fun(x), dtype=float)
    nfev = 1
    if not np.all(np.isfinite(r)):
        raise ValueError("the residuals are not finite at the starting point")
    cost = 0.5 * float(r @ r)
    lam = 1e-3
    eps = np.sqrt(np.finfo(float).eps)
    while nfev < max_nfev:
        h = eps * np.maximum(np.abs(x), 1.0)
        h = np.where(x + h > hi, -h, h)                 # step inside the box
        J = np.empty((r.size, x.size))
        for i in range(x.size):
            xi = x.copy()
            xi[i] += h[i]
            J[:, i] = (np.asarray(fun(xi), dtype=float) - r) / h[i]
        nfev += x.size
        if not np.all(np.isfinite(J)):
            break
        A, g = J.T @ J, J.T @ r
        # active set: a parameter at a bound whose gradient pushes it out stays there this iteration
        free = ~(((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0)))
        if not free.any():
            return LsqResult(x, cost, nfev, True)
        Af, gf = A[np.ix_(free, free)], g[free]
        d = np.maximum(np.diag(Af), 1e-30)
        improved = False
        while nfev < max_nfev:
            try:
                step = np.zeros_like(x)
                step[free] = np.linalg.solve(Af + lam * np.diag(d), -gf)
            except np.linalg.LinAlgError:
                lam *= 4.0
                continue
            x_new = np.clip(x + step, lo, hi)
            r_new = np.asarray(fun(x_new), dtype=float)
            nfev += 1
            cost_new = 0.5 * float(r_new @ r_new) if np.all(np.isfinite(r_new)) else np.inf
            if cost_new < cost:
                dx = float(np.linalg.norm(x_new - x))
                done = cost - cost_new <= ftol * cost or dx <= xtol * (xtol + float(np.linalg.norm(x)))
                x, r, cost, lam, improved = x_new, r_new, cost_new, max(lam / 3.0, 1e-12), True
                if done:
                    return LsqResult(x, cost, nfev, True)
                break
            lam *= 4.0
            if lam > 1e12:
                return LsqResult(x, cost, nfev, True)
        if not improved:
            break
    return LsqResult(x, cost, nfev, False)
