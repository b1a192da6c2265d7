"""P2: autoregressive token-level sequence policies (P2 spec §2.1, §3.6, §5.3).

Two models, both log-linear in a shared parameter θ ∈ R^d:

* :class:`AutoregressivePolicy` — a bigram (first-order autoregressive) policy
  ``π_θ(o_t | o_{<t}) ∝ exp(b[o_{t−1}, o_t] + ⟨θ, ψ[o_{t−1}, o_t]⟩)`` (``o_0`` = BOS), fixed length T, any binary
  reward on whole sequences. Scores are sums of token scores, ``s(o) = Σ_t (ψ[o_{t−1}, o_t] − E[ψ | o_{t−1}])``.
  Exact by enumeration of all V^T sequences when that is small (:meth:`enumerate`), Monte Carlo with a stated
  standard error otherwise (:meth:`sample`, :meth:`gradient_gap_monte_carlo`).
* :class:`IIDTokenModel` — the prefix-independent special case with reward "every token is in the ok set", in
  closed form for any T: with ``p`` the per-token ok mass, ``m = E ψ``, ``m_ok = E[ψ | ok]``:
  ``J = p^T``, ``g⁺ = T(m_ok − m)``, ``g⁻ = −J g⁺/(1 − J)``, gap ``= T(m_ok − m)/(1 − J)``.

Why a trap (spec §5.3 caution): a prefix-independent softmax token model whose correct tokens lie furthest along
the ascent direction never collapses. :meth:`IIDTokenModel.trap` adds an incorrect "trap" token further along the
early ascent direction than the ok token (and a "sink" token that the first steps suppress): a large step moves
mass onto the trap at every position, J = p^T falls to ~0 and the gradient (∝ J) vanishes — collapse. The model is
realisable (the ok token is a vertex of the feature hull, so sup J = 1).

Length normalisation with fixed-length responses (open choice §6.7): here every response has length T, so GRPO's
``1/|o|`` is ``1/T`` and Dr. GRPO's ``1/L_max`` is a constant (default ``max_length = 128``, the largest T swept).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.special import expit, logsumexp

from . import directions as _dirs
from . import gap as _gap
from .._checks import as_finite_array, check_in_range, check_int

__all__ = ["AutoregressivePolicy", "IIDTokenModel", "SequenceSample", "simulate_token_sweep"]


# ------------------------------------------------------------------------------------------- autoregressive bigram
@dataclass(frozen=True)
class SequenceSample:
    """Sequences with their log-probabilities, scores and rewards (exact enumeration or samples)."""

    sequences: np.ndarray
    """(M, T) token ids."""
    log_probs: np.ndarray
    """(M,) log π_θ(o)."""
    scores: np.ndarray
    """(M, d) ∇_θ log π_θ(o) (sum of token scores)."""
    rewards: np.ndarray
    """(M,) binary rewards."""


@dataclass(frozen=True)
class AutoregressivePolicy:
    """Bigram log-linear sequence policy of fixed length T (module docstring)."""

    features: np.ndarray
    """ψ, shape (V + 1, V, d): row ``prev`` (the last row is BOS), column = next token."""
    length: int
    """T, number of tokens per response."""
    base_logits: np.ndarray = field(default=None)  # type: ignore[assignment]
    """b, shape (V + 1, V), fixed (not learned) logits; zeros by default."""
    reward: Callable[[np.ndarray], np.ndarray] | np.ndarray = field(default=None)  # type: ignore[assignment]
    """A function of (M, T) token arrays returning (M,) booleans, or a boolean ok-mask of shape (V,) meaning
    'every token is ok'."""

    def __post_init__(self) -> None:
        psi = as_finite_array("features", self.features)
        if psi.ndim != 3 or psi.shape[0] != psi.shape[1] + 1 or psi.shape[1] < 2:
            raise ValueError(f"features must have shape (V + 1, V, d) with V >= 2, got {psi.shape}")
        check_int("length", self.length, 1)
        b = np.zeros(psi.shape[:2]) if self.base_logits is None else as_finite_array("base_logits", self.base_logits)
        if b.shape != psi.shape[:2]:
            raise ValueError(f"base_logits must have shape {psi.shape[:2]}, got {b.shape}")
        if self.reward is None:
            raise ValueError("reward must be a callable or an ok-mask of shape (V,)")
        if not callable(self.reward):
            ok = np.asarray(self.reward)
            if ok.shape != (psi.shape[1],) or ok.dtype != bool or ok.all() or not ok.any():
                raise ValueError(f"reward mask must be boolean of shape ({psi.shape[1]},) with both values present")
        object.__setattr__(self, "features", psi)
        object.__setattr__(self, "base_logits", b)

    @property
    def vocab_size(self) -> int:
        return self.features.shape[1]

    @property
    def dim(self) -> int:
        return self.features.shape[2]

    def _rewards(self, seqs: np.ndarray) -> np.ndarray:
        if callable(self.reward):
            return np.asarray(self.reward(seqs), bool)
        return np.asarray(self.reward)[seqs].all(-1)

    def _token_tables(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = self.base_logits + self.features @ theta                 # (V+1, V)
        logp = z - logsumexp(z, axis=-1, keepdims=True)
        mean_psi = np.einsum("pv,pvd->pd", np.exp(logp), self.features)
        return logp, mean_psi

    def _score(self, seqs: np.ndarray, theta: np.ndarray) -> SequenceSample:
        logp, mean_psi = self._token_tables(theta)
        prev = np.concatenate([np.full((seqs.shape[0], 1), self.vocab_size), seqs[:, :-1]], 1)
        lp = logp[prev, seqs].sum(-1)
        sc = (self.features[prev, seqs] - mean_psi[prev]).sum(1)
        return SequenceSample(seqs, lp, sc, self._rewards(seqs).astype(float))

    def enumerate(self, theta: Any, max_sequences: int = 2 ** 18) -> SequenceSample:
        """All V^T sequences with exact log-probabilities and scores (ValueError above ``max_sequences``)."""
        th = _gap._check_theta(theta, self.dim)
        n = self.vocab_size ** self.length
        if n > max_sequences:
            raise ValueError(f"length: V^T = {n} sequences exceeds max_sequences = {max_sequences}; use sample()")
        seqs = np.stack(np.unravel_index(np.arange(n), (self.vocab_size,) * self.length), 1)
        return self._score(seqs, th)

    def sample(self, theta: Any, n: int, rng: np.random.Generator) -> SequenceSample:
        """``n`` i.i.d. sequences from π_θ (vectorised over samples; a loop over the T positions)."""
        th = _gap._check_theta(theta, self.dim)
        n = check_int("n", n, 1)
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        logp, _ = self._token_tables(th)
        cdf = np.cumsum(np.exp(logp), -1)
        seqs = np.empty((n, self.length), int)
        prev = np.full(n, self.vocab_size)
        for t in range(self.length):
            u = rng.random(n) * cdf[prev, -1]
            tok = np.minimum((u[:, None] >= cdf[prev]).sum(-1), self.vocab_size - 1)
            seqs[:, t] = tok
            prev = tok
        return self._score(seqs, th)

    def gradient_gap_exact(self, theta: Any, max_sequences: int = 2 ** 18) -> _gap.GradientGap:
        """Exact g⁺, g⁻, gap and J by enumeration (P2 spec §2.2)."""
        e = self.enumerate(theta, max_sequences)
        return _gap.gradient_gap_from_scores(np.exp(e.log_probs), e.scores, e.rewards.astype(bool))

    def gradient_gap_monte_carlo(self, theta: Any, n: int, rng: np.random.Generator) -> _gap.SampledGradientGap:
        """Monte Carlo gap from ``n`` samples, with per-component standard errors."""
        s = self.sample(theta, n, rng)
        return _gap.gradient_gap_sampled(s.scores, s.rewards)


# --------------------------------------------------------------------------------------------------- i.i.d. model
def _lse(x: np.ndarray) -> np.ndarray:
    """log-sum-exp over the last axis, keepdims; every row holds at least one finite value (ok and not-ok tokens)."""
    m = x.max(-1, keepdims=True)
    return m + np.log(np.exp(x - m).sum(-1, keepdims=True))


@dataclass(frozen=True)
class IIDTokenModel:
    """Prefix-independent log-linear tokens, reward = every one of the T tokens is ok (closed form, any T)."""

    token_features: np.ndarray
    """ψ, shape (V, d)."""
    ok: np.ndarray
    """Boolean (V,): the ok tokens."""
    base_logits: np.ndarray = field(default=None)  # type: ignore[assignment]
    """Fixed logits (V,), zeros by default."""

    def __post_init__(self) -> None:
        psi = _gap._check_features(self.token_features)
        if psi.ndim != 2:
            raise ValueError(f"token_features must have shape (V, d), got {psi.shape}")
        ok = _gap._check_correct(self.ok, psi.shape[0])
        b = np.zeros(psi.shape[0]) if self.base_logits is None else as_finite_array("base_logits", self.base_logits)
        if b.shape != (psi.shape[0],):
            raise ValueError(f"base_logits must have shape ({psi.shape[0]},), got {b.shape}")
        object.__setattr__(self, "token_features", psi)
        object.__setattr__(self, "ok", ok)
        object.__setattr__(self, "base_logits", b)

    @classmethod
    def trap(cls, ok_mass: float = 0.999, trap_share: float = 0.2, trap_feature: tuple[float, float] = (1.5, -1.0)
             ) -> "IIDTokenModel":
        """Three tokens in d = 2: ok ψ = (1, 0), sink ψ = (−1, 0), trap ψ = ``trap_feature`` (incorrect).

        At θ = 0 the per-token masses are ``ok_mass``, ``(1−ok_mass)(1−trap_share)``, ``(1−ok_mass) trap_share``.
        While the sink dominates the incorrect mass, the ascent direction points along +θ₁ where the trap
        (ψ₁ = 1.5) lies beyond the ok token (ψ₁ = 1): the trap of spec §3.1 / §5.3.
        """
        p = float(check_in_range("ok_mass", ok_mass, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
        f = float(check_in_range("trap_share", trap_share, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
        feats = np.array([[1.0, 0.0], [-1.0, 0.0], list(trap_feature)], float)
        masses = np.array([p, (1 - p) * (1 - f), (1 - p) * f])
        return cls(feats, np.array([True, False, False]), np.log(masses))

    @property
    def dim(self) -> int:
        return self.token_features.shape[1]

    def token_state(self, theta: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(log p_ok, log(1 − p_ok), m_ok, m_bad)`` per θ: log ok / not-ok masses, E[ψ | ok], E[ψ | not ok]."""
        return self._token_state(_gap._check_theta(theta, self.dim))

    def _token_state(self, th: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`token_state` of a checked ``th``."""
        z = self.base_logits + th @ self.token_features.T
        zo = np.where(self.ok, z, -np.inf)
        zb = np.where(self.ok, -np.inf, z)
        lse_ok = _lse(zo)                 # lean log-sum-exp (scipy's dominates the sweeps' cost at V = 3)
        lse_bad = _lse(zb)
        d = (lse_bad - lse_ok)[..., 0]
        m_ok = np.exp(zo - lse_ok) @ self.token_features
        m_bad = np.exp(zb - lse_bad) @ self.token_features
        return -np.logaddexp(0.0, d), -np.logaddexp(0.0, -d), m_ok, m_bad

    def success_rate(self, theta: Any, length: Any) -> np.ndarray:
        """``J = p_ok^T``."""
        t = check_in_range("length", length, 1.0, None)
        return np.exp(t * self.token_state(theta)[0])

    def log_odds(self, theta: Any, length: Any) -> np.ndarray:
        """``ℓ = T log p − log(1 − p^T)``, stable near J = 1."""
        t = check_in_range("length", length, 1.0, None)
        lj = t * self.token_state(theta)[0]
        with np.errstate(divide="ignore"):
            return lj - np.log(-np.expm1(lj))

    def gradient_gap(self, theta: Any, length: Any) -> _gap.GradientGap:
        """Closed form (module docstring), written stably as ``g⁺ = T(1−p)(m_ok − m_bad)`` and
        ``gap = T(1−p)/(1−p^T) · (m_ok − m_bad)`` so that it stays finite when J rounds to 1."""
        t = check_in_range("length", length, 1.0, None)
        lp, lq, m_ok, m_bad = self.token_state(theta)
        lj = t * lp
        j = np.exp(lj)
        with np.errstate(divide="ignore"):
            log_one_minus_j = np.log(-np.expm1(lj))
        diff = m_ok - m_bad
        g_plus = (t * np.exp(lq))[..., None] * diff
        gap = (t * np.exp(lq - log_one_minus_j))[..., None] * diff
        return _gap.GradientGap(g_plus=g_plus, g_minus=g_plus - gap, gap=gap, success_rate=j)

    def expected_direction(self, theta: Any, length: Any, algorithm: str, *, group_size: int | None = None,
                           max_length: float | str = 128.0, std: str = "population") -> np.ndarray:
        """Expected direction of ``algorithm`` (spec §3.7): ``c(J)·gap/len`` with len = T for ``grpo``,
        ``max_length`` for ``dr_grpo`` (``"length"``: L_max = T, i.e. a per-response 1/|o| with a mean baseline),
        1 otherwise (fixed-length responses)."""
        gg = self.gradient_gap(theta, length)
        c = _dirs.expected_coefficient(gg.success_rate, algorithm, group_size, std=std)
        div = _length_divisor(algorithm, np.asarray(length, float), max_length)
        return (c / div)[..., None] * gg.gap

    def _direction_of(self, length: np.ndarray, algorithm: str, max_length: float | str = 128.0):
        """``theta -> expected_direction(theta, length, algorithm, max_length=max_length)`` for a loop over steps at
        fixed lengths: the arguments that do not change are checked once, the arithmetic is the same (so are the
        numbers). A non-finite θ or success rate goes through :meth:`expected_direction`, which raises as before."""
        t = check_in_range("length", length, 1.0, None)
        _dirs._check_algorithm(algorithm)
        div = _length_divisor(algorithm, t, max_length)
        plain = algorithm in ("reinforce", "dr_grpo")        # expected_coefficient at G -> inf: J(1-J), else its root

        def direction(theta: np.ndarray) -> np.ndarray:
            th = np.asarray(theta, float)
            if th.ndim < 1 or th.shape[-1] != self.dim or not np.all(np.isfinite(th)):
                return self.expected_direction(theta, length, algorithm, max_length=max_length)
            lp, lq, m_ok, m_bad = self._token_state(th)
            lj = t * lp                                      # gradient_gap's arithmetic
            j = np.exp(lj)
            if not np.all((j >= 0.0) & (j <= 1.0)):
                return self.expected_direction(theta, length, algorithm, max_length=max_length)
            with np.errstate(divide="ignore"):
                log_one_minus_j = np.log(-np.expm1(lj))
            gap = (t * np.exp(lq - log_one_minus_j))[..., None] * (m_ok - m_bad)
            c = j * (1.0 - j) if plain else np.sqrt(j * (1.0 - j))
            return (c / div)[..., None] * gap
        return direction

    def as_autoregressive(self, length: int) -> AutoregressivePolicy:
        """The same model as an :class:`AutoregressivePolicy` (for exact enumeration checks)."""
        v = self.token_features.shape[0]
        feats = np.broadcast_to(self.token_features, (v + 1,) + self.token_features.shape).copy()
        base = np.broadcast_to(self.base_logits, (v + 1, v)).copy()
        return AutoregressivePolicy(feats, length, base, self.ok.copy())


def simulate_token_sweep(model: IIDTokenModel, lengths: Any, step_sizes: Any, algorithm: str, n_steps: int, *,
                         max_length: float | str = 128.0, theta0: Any = None, record_every: int = 1,
                         pairwise: bool = False) -> dict[str, np.ndarray]:
    """Exact population-direction SGD ``θ ← θ + η E[w]`` for every (length T, step size η), one array program.

    How it differs from GRPO training: exact expected directions (G → ∞), fixed-length responses, plain SGD.
    Returns ``success_rate`` and ``log_odds`` of shape (len(lengths), len(step_sizes), n_records) and ``steps``;
    with ``pairwise=True`` ``lengths`` and ``step_sizes`` are paired elementwise (same length R, e.g. the open
    brackets of a bisection) and the arrays are (R, n_records).
    """
    t = check_in_range("lengths", np.atleast_1d(lengths), 1.0, None)
    eta = check_in_range("step_sizes", np.atleast_1d(step_sizes), 0.0, None)
    n_steps = check_int("n_steps", n_steps, 1)
    record_every = check_int("record_every", record_every, 1)
    _dirs._check_algorithm(algorithm)
    if pairwise:
        if t.shape != eta.shape:
            raise ValueError(f"lengths and step_sizes must have the same shape with pairwise=True, got {t.shape} "
                             f"and {eta.shape}")
        tt, ee = t, eta
    else:
        tt = np.repeat(t, eta.size)
        ee = np.tile(eta, t.size)
    th = np.zeros((tt.size, model.dim)) if theta0 is None else np.broadcast_to(
        as_finite_array("theta0", theta0), (tt.size, model.dim)).copy()
    rec = np.unique(np.r_[np.arange(0, n_steps, record_every), n_steps])
    js = np.empty((tt.size, rec.size))
    ls = np.empty((tt.size, rec.size))
    ptr = 0
    direction = model._direction_of(tt, algorithm, max_length)   # model.expected_direction at these lengths
    for k in range(n_steps + 1):
        if ptr < rec.size and rec[ptr] == k:
            js[:, ptr] = model.success_rate(th, tt)
            ls[:, ptr] = model.log_odds(th, tt)
            ptr += 1
        if k == n_steps:
            break
        w = direction(th)
        th = th + ee[:, None] * w
    shape = (t.size, rec.size) if pairwise else (t.size, eta.size, rec.size)
    return {"success_rate": js.reshape(shape), "log_odds": ls.reshape(shape), "steps": rec}


def _length_divisor(algorithm: str, t: np.ndarray, max_length: float | str) -> np.ndarray:
    """The length a direction is divided by (spec §3.7): T for ``grpo``, ``max_length`` for ``dr_grpo`` (``"length"``:
    L_max = T), 1 otherwise; ValueError naming ``max_length`` when it is neither a positive number nor "length"."""
    if isinstance(max_length, str):
        if max_length != "length":
            raise ValueError(f"max_length must be a positive number or 'length', got {max_length!r}")
        lmax = t
    else:
        lmax = np.asarray(float(check_in_range("max_length", max_length, 0.0, None, low_inclusive=False)))
    return {"grpo": t, "dr_grpo": lmax}.get(algorithm, np.asarray(1.0))
