"""Tasks with exact verifiable rewards: the training distribution and eight evaluation families.

Stand-in for the papers' GSM8K training set and eight OOD math benchmarks (P1 spec §5, §7.3; P2 spec §5.3–5.4).
All generators are seeded and deterministic; nothing is downloaded.

* Own synthetic arithmetic (``add``): ``"a+b="`` with ``digits``-digit operands; the answer is the sum, written with
  exactly ``answer_length`` characters (zero-padded on the left) when ``answer_length > 0``. ``answer_length`` is the
  knob for response length of the P2 experiments (P2 spec §3.6, §5.3): the number of tokens the policy must get right
  grows while the arithmetic stays the same.
* ``answer_copies = k > 1`` writes the answer ``k`` times, comma-separated (``"57,57,57"``); the exact reward
  needs every copy right. With the ``mixture`` warm start (:mod:`.tiny_model`) each copy is an independent draw
  (correct or a near miss), so every copy's tokens are uncertain: the length knob of the P2 experiments where, unlike
  zero padding, each extra token carries gradient.
* ``reasoning-gym`` generators (Apache-2.0): ``basic_arithmetic``, ``chain_sum``, ``gsm_symbolic``.

Eight evaluation families, ordered from near to far from the training distribution (the order is ours [D]; the
paper's benchmark list is [?], P1 spec §5):

1. ``add_spaced``     same sums, spaced format ``"a + b ="``          (perturbed in-distribution, like GSM-Plus)
2. ``add_short``      one-digit + two-digit operands
3. ``add_long``       three-digit + two-digit operands              (length generalisation)
4. ``sub``            two-digit subtraction with a non-negative result
5. ``add3``           three one/two-digit terms ``"a+b+c="``
6. ``rg_basic``       reasoning-gym ``basic_arithmetic`` (two terms, + and -, signed), English prompt
7. ``rg_chain_sum``   reasoning-gym ``chain_sum`` (three terms), English prompt
8. ``rg_gsm``         reasoning-gym ``gsm_symbolic`` word problems    (far and hard, like AIME for a 1.5B model)

Rewards: :mod:`.rewards` (re-exported here).
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np

from .._checks import check_int
from .rewards import (REWARDS, SHAPED_CORRECT, SHAPED_FORMAT, completion_text, make_reward_function,  # noqa: F401
                      make_reward_functions, score_bare_integer, score_exact, score_last_number, score_penalised,
                      score_shaped, score_units_digit, scorer)

EVAL_FAMILIES = ("add_spaced", "add_short", "add_long", "sub", "add3", "rg_basic", "rg_chain_sum", "rg_gsm")
"""The eight evaluation families, nearest first."""

TRAIN_TASKS = ("add",)
"""Training task generators (``add`` with its ``digits`` and ``answer_length`` knobs)."""


PROMPT_STYLES = ("plain", "chat")
"""``plain``: the bare problem text (character models); ``chat``: a one-message conversation asking for the
number only (instruction-tuned models; TRL applies the chat template)."""


@dataclass(frozen=True)
class Problem:
    """One problem with its exact answer."""

    prompt: str
    """Problem text as given to the model (without any chat template)."""
    answer: str
    """The exact expected answer string (integers only in this project)."""
    family: str
    """Task or evaluation family name."""


def _family_seed(name: str, seed: int) -> int:
    """A stable 32-bit seed from a family name and an integer seed (independent of Python's hash salt)."""
    digest = hashlib.sha256(f"{name}:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def _fmt(value: int, answer_length: int) -> str:
    if answer_length <= 0:
        return str(value)
    text = str(value).zfill(answer_length)
    if len(text) != answer_length:
        raise ValueError(f"answer_length must be at least {len(text)} for value {value}, got {answer_length}")
    return text


ANSWER_SEPARATOR = ","
"""Separator of the answer copies when ``answer_copies > 1``."""


def repeat_answer(text: str, copies: int) -> str:
    """``text`` written ``copies`` times, separated by :data:`ANSWER_SEPARATOR`.

    >>> repeat_answer("57", 3), repeat_answer("57", 1)
    ('57,57,57', '57')
    """
    check_int("copies", copies, 1, 64)
    return ANSWER_SEPARATOR.join([text] * copies)


def add_problems(n: int, seed: int, *, digits: int = 2, answer_length: int = 0, spaced: bool = False,
                 family: str = "add", exclude: set[str] | None = None, answer_copies: int = 1) -> list[Problem]:
    """``n`` addition problems with ``digits``-digit operands (0 .. 10**digits - 1), seeded.

    ``answer_length > 0`` zero-pads the sum to exactly that many characters (it must be ≥ digits + 1).
    ``answer_copies > 1`` repeats the answer (see :func:`repeat_answer`); the prompts do not depend on it.
    ``exclude`` drops prompts in that set (used to keep training prompts off the test sets).
    """
    check_int("n", n, 1)
    check_int("digits", digits, 1, 6)
    check_int("answer_length", answer_length, 0, 64)
    check_int("answer_copies", answer_copies, 1, 64)
    if 0 < answer_length < digits + 1:
        raise ValueError(f"answer_length must be 0 or >= digits + 1 = {digits + 1}, got {answer_length}")
    rng = np.random.default_rng(_family_seed(family, seed))
    out: list[Problem] = []
    hi = 10 ** digits
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 1000 + 100 * n:
            raise ValueError(f"could not draw n={n} problems with digits={digits} outside the {len(exclude or ())} "
                             "excluded prompts; use more digits or a smaller exclusion set")
        a, b = (int(x) for x in rng.integers(0, hi, size=2))
        prompt = f"{a} + {b} =" if spaced else f"{a}+{b}="
        if exclude and prompt in exclude:
            continue
        out.append(Problem(prompt, repeat_answer(_fmt(a + b, answer_length), answer_copies), family))
    return out


def operands(prompt: str) -> tuple[int, int]:
    """The two operands of an ``add`` prompt (``"a+b="`` or ``"a + b ="``).

    >>> operands("17+85="), operands("3 + 4 =")
    ((17, 85), (3, 4))
    """
    body = prompt.replace(" ", "").rstrip("=")
    parts = body.split("+")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"prompt must look like 'a+b=', got {prompt!r}")
    return int(parts[0]), int(parts[1])


def difficulty(a: int, b: int, digits: int) -> int:
    """Difficulty level of ``a + b`` in the answer mixture: how many operands are in the upper half of their range
    (≥ 5·10^(digits−1)): 0, 1 or 2. A surface feature a small model reads off two characters [D, our choice; the
    number of carries was tried first, and a 4-layer model did not learn a carry-dependent success rate in 3,000
    supervised steps].

    >>> difficulty(17, 85, 2), difficulty(10, 20, 2), difficulty(99, 50, 2), difficulty(7, 2, 1)
    (1, 0, 2, 1)
    """
    half = 5 * 10 ** (digits - 1)
    return int(a >= half) + int(b >= half)


@functools.lru_cache(maxsize=8)
def _training_levels(digits: int) -> np.ndarray:
    """:func:`difficulty` of 20,000 operand pairs drawn uniformly (seed 12345), vectorised (read-only)."""
    ab = np.random.default_rng(12345).integers(0, 10 ** digits, size=(20_000, 2))
    half = 5 * 10 ** (digits - 1)
    levels = (ab[:, 0] >= half).astype(np.int64) + (ab[:, 1] >= half)
    levels.setflags(write=False)
    return levels


def carries(a: int, b: int) -> int:
    """Number of carries in the column addition of ``a + b`` (a difficulty measure).

    >>> carries(17, 85), carries(10, 20), carries(99, 1)
    (2, 0, 2)
    """
    n, c = 0, 0
    while a or b:
        c = 1 if (a % 10 + b % 10 + c) >= 10 else 0
        n += c
        a, b = a // 10, b // 10
    return n


def near_misses(value: int) -> list[int]:
    """The near misses of a correct (non-negative) sum: its last digit one up or one down (mod 10, the other digits
    kept). [D, our choice. Tried first and dropped: off by one in the units or the tens digit (a 4-layer model had
    not fitted that mixture after 3,000 steps), and the last digit replaced by any other digit (the model learned a
    near-uniform last digit, success ≈ 1/10, whatever the mixture said: the correct digit's signal was too weak).]

    >>> near_misses(57), near_misses(50), near_misses(9)
    ([58, 56], [51, 59], [0, 8])
    """
    if value < 0:
        raise ValueError(f"value must be >= 0, got {value}")
    base, d = value - value % 10, value % 10
    return [base + (d + 1) % 10, base + (d - 1) % 10]


def _custom_family(name: str, n: int, seed: int) -> list[Problem]:
    rng = np.random.default_rng(_family_seed(name, seed))
    out = []
    for _ in range(n):
        if name == "add_short":
            a, b = int(rng.integers(0, 10)), int(rng.integers(10, 100))
            if rng.random() < 0.5:
                a, b = b, a
            out.append(Problem(f"{a}+{b}=", str(a + b), name))
        elif name == "add_long":
            a, b = int(rng.integers(100, 1000)), int(rng.integers(0, 100))
            out.append(Problem(f"{a}+{b}=", str(a + b), name))
        elif name == "sub":
            a, b = sorted(int(x) for x in rng.integers(0, 100, size=2))[::-1]
            out.append(Problem(f"{a}-{b}=", str(a - b), name))
        elif name == "add3":
            a, b, c = (int(x) for x in rng.integers(0, 50, size=3))
            out.append(Problem(f"{a}+{b}+{c}=", str(a + b + c), name))
        else:  # pragma: no cover - guarded by the caller
            raise ValueError(name)
    return out


def _reasoning_gym_family(name: str, n: int, seed: int) -> list[Problem]:
    """Problems from reasoning-gym, cached as JSON under ``cache_dir()/evalsets`` (deterministic either way; the
    cache lets machines without reasoning-gym's dependencies evaluate on the same sets)."""
    import json
    import os
    from pathlib import Path

    root = Path(os.environ.get("RLVR_DYNAMICS_CACHE", Path.home() / ".cache" / "rlvr-dynamics")) / "evalsets"
    cached = root / f"{name}-{n}-{seed}.json"
    if cached.exists():
        return [Problem(**x) for x in json.loads(cached.read_text())]
    import reasoning_gym as rg

    spec = {
        "rg_basic": ("basic_arithmetic", dict(min_terms=2, max_terms=2, min_digits=1, max_digits=2,
                                               operators=("+", "-"))),
        "rg_chain_sum": ("chain_sum", dict(min_terms=3, max_terms=3, min_digits=1, max_digits=2)),
        "rg_gsm": ("gsm_symbolic", {}),
    }[name]
    ds = rg.create_dataset(spec[0], seed=_family_seed(name, seed), size=n, **spec[1])
    out = [Problem(str(x["question"]), str(x["answer"]).strip(), name) for x in ds]
    from .._io import atomic_write_text

    atomic_write_text(cached, json.dumps([{"prompt": p.prompt, "answer": p.answer, "family": p.family} for p in out]))
    return out


def eval_problems(family: str, n: int = 64, seed: int = 0) -> list[Problem]:
    """The fixed, seeded test set of an evaluation family (or of the training task ``add``)."""
    check_int("n", n, 1)
    if family == "add":
        return add_problems(n, seed, family="add_test")
    if family == "add_spaced":
        return add_problems(n, seed, spaced=True, family="add_spaced")
    if family in ("add_short", "add_long", "sub", "add3"):
        return _custom_family(family, n, seed)
    if family in ("rg_basic", "rg_chain_sum", "rg_gsm"):
        return _reasoning_gym_family(family, n, seed)
    raise ValueError(f"family must be one of {('add',) + EVAL_FAMILIES}, got {family!r}")


def train_problems(n: int, seed: int, *, digits: int = 2, answer_length: int = 0,
                   heldout: list[Problem] | None = None, answer_copies: int = 1) -> list[Problem]:
    """Training prompts of the ``add`` task, seeded, with any prompt of ``heldout`` removed."""
    exclude = {p.prompt for p in heldout} if heldout else None
    return add_problems(n, seed, digits=digits, answer_length=answer_length, family="add_train", exclude=exclude,
                        answer_copies=answer_copies)


def heldout_problems(n: int, *, digits: int = 2, answer_length: int = 0, seed: int = 0,
                     answer_copies: int = 1) -> list[Problem]:
    """The fixed held-out test set of the training distribution (evaluation reward during training)."""
    return add_problems(n, 10_000 + seed, digits=digits, answer_length=answer_length, family="add_heldout",
                        answer_copies=answer_copies)


# ------------------------------------------------------------------------------------ warm-start mixture
@dataclass(frozen=True)
class AnswerMixture:
    """The supervised targets of the ``mixture`` warm start: a prior that GRPO sharpens.

    For a prompt ``a+b=`` of :func:`difficulty` ``c``, each answer copy is the correct sum with probability
    ``q_copy = q ** (1 / copies)`` and otherwise one of :func:`near_misses` (uniformly), independently per copy, with
    ``q = min(q_max, w * difficulty_factor ** c)``; ``w`` is set so that the mean of ``q`` over the training
    distribution is ``correct_frac``. A model trained to convergence on these targets samples the exact answer
    (all copies right) with probability ≈ ``q``: ``correct_frac`` on average, less on harder prompts (difficulty
    varies across prompts). [D, our choice]

    With ``per_copy=True``, ``q`` is the probability of **each** copy (``q_copy = q``) and the whole answer is right
    with probability ``q ** copies``: the per-token constants stay fixed while the length grows, the premise of
    P2's token-level theorem (P2 spec §3.6) and of the P2 length sweeps.
    """

    correct_frac: float = 0.2
    """Mean over prompts of the probability that a target (all copies) is exactly right."""
    difficulty_factor: float = 0.4
    """Factor of that probability per difficulty level (1: every prompt equally hard)."""
    digits: int = 2
    """Operand digits (for the normalisation over the training distribution)."""
    answer_length: int = 0
    """Zero-padded width of each copy (0: none)."""
    copies: int = 1
    """Answer copies (see :func:`repeat_answer`)."""
    q_max: float = 0.95
    """Cap of the per-prompt probability."""
    per_copy: bool = False
    """``correct_frac`` (and ``q``) is the probability of each copy, not of the whole answer."""

    def __post_init__(self) -> None:
        from .._checks import check_in_range

        check_in_range("correct_frac", self.correct_frac, 0, 1, low_inclusive=False, high_inclusive=False)
        check_in_range("difficulty_factor", self.difficulty_factor, 0, 1, low_inclusive=False)
        check_int("copies", self.copies, 1, 64)
        check_int("digits", self.digits, 1, 6)
        mean = float(np.mean(np.array([self.difficulty_factor ** c for c in range(3)])[self._levels()]))
        object.__setattr__(self, "_scale", self.correct_frac / mean)
        if self.correct_frac / mean > self.q_max:
            raise ValueError(f"correct_frac={self.correct_frac} needs a per-prompt probability above "
                             f"q_max={self.q_max} on the easiest prompts; lower it or raise difficulty_factor")

    def _levels(self) -> np.ndarray:
        """:func:`difficulty` of 20,000 prompts drawn from the training distribution (seed 12345)."""
        return _training_levels(self.digits)

    def level(self, prompt: str) -> int:
        """The :func:`difficulty` of ``prompt``."""
        return difficulty(*operands(prompt), self.digits)

    def success_probability(self, prompt: str) -> float:
        """The probability that a target for ``prompt`` is exactly right (all copies)."""
        q = self._q(prompt)
        return q ** self.copies if self.per_copy else q

    def _q(self, prompt: str) -> float:
        return float(min(self.q_max, self._scale * self.difficulty_factor ** self.level(prompt)))

    def options(self, prompt: str) -> tuple[list[str], list[float]]:
        """The possible texts of one copy for ``prompt`` and their probabilities (correct first)."""
        a, b = operands(prompt)
        q = self._q(prompt) if self.per_copy else self._q(prompt) ** (1.0 / self.copies)
        wrong = near_misses(a + b)
        width = self.answer_length
        texts = [_fmt(v, width if len(str(v)) <= width else 0) for v in [a + b] + wrong]
        return texts, [q] + [(1.0 - q) / len(wrong)] * len(wrong)

    def sample(self, prompt: str, rng: np.random.Generator) -> tuple[str, float]:
        """One target answer for ``prompt`` and its log-probability under the mixture (the loss floor's term)."""
        texts, probs = self.options(prompt)
        picks = rng.choice(len(texts), size=self.copies, p=probs)
        return (ANSWER_SEPARATOR.join(texts[i] for i in picks),
                float(sum(np.log(probs[i]) for i in picks)))


# ----------------------------------------------------------------------------------------------------- rewards
CHAT_INSTRUCTION = "Compute the answer and reply with the final number only."
"""Instruction appended to the problem in the ``chat`` prompt style."""


def format_prompt(problem: Problem, style: str = "plain"):
    """The TRL ``prompt`` field: the bare text (``plain``) or a one-message conversation (``chat``)."""
    if style == "plain":
        return problem.prompt
    if style == "chat":
        return [{"role": "user", "content": f"{problem.prompt.rstrip('=').strip()} = ? {CHAT_INSTRUCTION}"}]
    raise ValueError(f"prompt_style must be one of {PROMPT_STYLES}, got {style!r}")
