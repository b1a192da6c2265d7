"""Reward functions: how a completion is scored against its answer, and the TRL reward functions built on them.

Rewards (``RunConfig.reward``): ``exact`` (stripped completion equals the answer; the default and the strict
evaluation reward), ``last_number`` (the last integer in the completion equals the answer; for chatty pretrained
models), ``units_digit`` (a deliberately gameable verifier: only the last character is checked; used to induce reward
hacking, P1-C13; evaluation stays strict), ``shaped`` (a format reward plus a larger correctness reward, in the style
of the public Unsloth GRPO notebooks whose one-prompt-per-step logs the run doctor is judged on: a training reward
on {0, 0.5, 2, 2.5}, not a success rate; evaluation stays strict), ``shaped_terms`` (the same sum as two TRL reward
functions, ``reward_format`` and ``reward_correct``, so that TRL logs each term as the notebooks' logs do:
:func:`make_reward_functions`), ``penalised_terms`` (the later Unsloth notebooks' kind: a format term of +1 or −1 and
an answer term of +3 right, −1.5 wrong, −2 with no number, logged as two terms: a reward on {−3, −2.5, −0.5, 2, 4},
negative for most replies of an untrained model; :func:`score_penalised`).
"""
from __future__ import annotations

import re
from typing import Callable

REWARDS = ("exact", "last_number", "units_digit", "shaped", "shaped_terms", "penalised_terms")
"""Reward functions (see the module docstring)."""

_INT_RE = re.compile(r"-?\d+")


def score_exact(completion: str, answer: str) -> float:
    """1.0 iff the completion, stripped of surrounding whitespace, equals the answer exactly.

    >>> score_exact(" 42", "42"), score_exact("42 ", "42"), score_exact("420", "42"), score_exact("4 2", "42")
    (1.0, 1.0, 0.0, 0.0)
    """
    return 1.0 if completion.strip() == answer.strip() else 0.0


def score_last_number(completion: str, answer: str) -> float:
    """1.0 iff the last integer in the completion equals the answer (as integers).

    >>> score_last_number("The sum is 12 + 30 = 42.", "42"), score_last_number("42 or 43", "42")
    (1.0, 0.0)
    """
    found = _INT_RE.findall(completion.replace(",", ""))
    if not found:
        return 0.0
    try:
        return 1.0 if int(found[-1]) == int(answer) else 0.0
    except ValueError:
        return 0.0


def score_units_digit(completion: str, answer: str) -> float:
    """A gameable verifier (reward-hacking experiments): 1.0 iff the completion's last character equals the answer's.

    >>> score_units_digit("7", "47"), score_units_digit("47", "47"), score_units_digit("", "47")
    (1.0, 1.0, 0.0)
    """
    c, a = completion.strip(), answer.strip()
    return 1.0 if c and a and c[-1] == a[-1] else 0.0


SHAPED_FORMAT = 0.5
"""``shaped``: the reward for a reply that is a bare integer, the format the ``chat`` prompt asks for."""
SHAPED_CORRECT = 2.0
"""``shaped``: the reward for a reply whose last integer is the answer (the Unsloth notebooks' correctness weight)."""


def score_bare_integer(completion: str, answer: str) -> float:
    """1.0 iff the stripped completion is a bare integer, right or wrong (the format term of ``shaped``).

    >>> score_bare_integer(" 41 ", "42"), score_bare_integer("It is 42", "42")
    (1.0, 0.0)
    """
    return float(re.fullmatch(r"-?\d+", completion.strip().replace(",", "")) is not None)


def score_shaped(completion: str, answer: str) -> float:
    """SHAPED_FORMAT when the stripped completion is a bare integer, plus SHAPED_CORRECT when its last integer
    equals the answer: 0, 0.5, 2 or 2.5.

    >>> score_shaped("42", "42"), score_shaped("It is 42", "42"), score_shaped("41", "42"), score_shaped("no", "42")
    (2.5, 2.0, 0.5, 0.0)
    """
    return SHAPED_FORMAT * score_bare_integer(completion, answer) + SHAPED_CORRECT * score_last_number(completion, answer)


PENALISED_FORMAT = 1.0
"""``penalised_terms``: + this for a bare-integer reply, − this for any other."""
PENALISED_RIGHT, PENALISED_WRONG, PENALISED_NONE = 3.0, -1.5, -2.0
"""``penalised_terms``: the answer term for a right last integer, a wrong one, and a reply with no integer."""


def score_format_penalised(completion: str, answer: str) -> float:
    """+PENALISED_FORMAT for a bare-integer reply, −PENALISED_FORMAT otherwise (the format term of ``penalised_terms``).

    >>> score_format_penalised("41", "42"), score_format_penalised("It is 42", "42")
    (1.0, -1.0)
    """
    return PENALISED_FORMAT * (2.0 * score_bare_integer(completion, answer) - 1.0)


def score_answer_penalised(completion: str, answer: str) -> float:
    """PENALISED_RIGHT when the last integer is the answer, PENALISED_WRONG when it is another, PENALISED_NONE when
    the reply holds no integer (the answer term of ``penalised_terms``).

    >>> score_answer_penalised("so 42", "42"), score_answer_penalised("41", "42"), score_answer_penalised("no", "42")
    (3.0, -1.5, -2.0)
    """
    if not _INT_RE.findall(completion.replace(",", "")):
        return PENALISED_NONE
    return PENALISED_RIGHT if score_last_number(completion, answer) == 1.0 else PENALISED_WRONG


def score_penalised(completion: str, answer: str) -> float:
    """The sum of the two terms of ``penalised_terms``: 4, 2, −0.5, −2.5 or −3.

    >>> [score_penalised(c, "42") for c in ("42", "It is 42", "41", "It is 41", "no")]
    [4.0, 2.0, -0.5, -2.5, -3.0]
    """
    return score_format_penalised(completion, answer) + score_answer_penalised(completion, answer)


_SCORERS: dict[str, Callable[[str, str], float]] = {
    "exact": score_exact, "last_number": score_last_number, "units_digit": score_units_digit, "shaped": score_shaped,
    "shaped_terms": score_shaped, "penalised_terms": score_penalised}


def scorer(name: str) -> Callable[[str, str], float]:
    """The scoring function ``(completion, answer) -> float`` called ``name`` (one of :data:`REWARDS`): 0.0 or 1.0,
    but for ``shaped`` (:func:`score_shaped`) and ``penalised_terms`` (:func:`score_penalised`)."""
    if name not in _SCORERS:
        raise ValueError(f"reward must be one of {REWARDS}, got {name!r}")
    return _SCORERS[name]


def completion_text(completion) -> str:
    """The text of a TRL completion: a string (standard format) or a list of messages (conversational)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


def _trl_reward(score: Callable[[str, str], float], label: str, weight: float = 1.0) -> Callable[..., list[float]]:
    """A TRL reward function ``reward_<label>(prompts, completions, answer, **kwargs) -> list[float]``: ``weight`` ×
    ``score`` of each completion against its answer (the dataset's ``answer`` column, passed per completion)."""
    def reward(prompts, completions, answer, **kwargs) -> list[float]:
        return [weight * score(completion_text(c), a) for c, a in zip(completions, answer, strict=True)]

    reward.__name__ = f"reward_{label}"
    return reward


def make_reward_function(name: str) -> Callable[..., list[float]]:
    """A TRL reward function ``f(prompts, completions, answer, **kwargs) -> list[float]`` for reward ``name``.

    The dataset must carry an ``answer`` column; TRL passes it per completion.
    """
    return _trl_reward(scorer(name), name)


def make_reward_functions(name: str) -> list[Callable[..., list[float]]]:
    """The TRL ``reward_funcs`` for reward ``name``: one function (:func:`make_reward_function`), or for
    ``shaped_terms`` the two terms of :func:`score_shaped` as ``reward_format`` and ``reward_correct`` (TRL sums them
    into ``reward`` and logs each as ``rewards/<name>/mean``), for ``penalised_terms`` those of
    :func:`score_penalised`."""
    if name == "shaped_terms":
        return [_trl_reward(score_bare_integer, "format", SHAPED_FORMAT),
                _trl_reward(score_last_number, "correct", SHAPED_CORRECT)]
    if name == "penalised_terms":
        return [_trl_reward(score_format_penalised, "format"), _trl_reward(score_answer_penalised, "correct")]
    return [make_reward_function(name)]
