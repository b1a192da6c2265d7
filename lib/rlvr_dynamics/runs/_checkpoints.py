"""Which ``trainer_state.json`` files of a TRL ``output_dir`` belong to the run written last.

A folder reused for a new run keeps the old run's checkpoints: a new run from scratch (or one resumed from an
earlier checkpoint) writes ``checkpoint-100`` beside the old ``checkpoint-500``. The highest-numbered checkpoint is
then the old run, and reading it reports a run the user is no longer training, without a word. The files say which
run is which: two saves of one run agree at every step they both logged; two runs (or two branches of one run
after a resume from an earlier checkpoint) disagree at some step. Which run came last only the files' modification
times can say (a trainer state holds no clock), so they decide only when two states disagree; a copied folder
whose states all agree reads as before, whatever its file times.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from ._segments import BOOKKEEPING


def _history(path: Path) -> list[dict]:
    """The ``log_history`` entries of a trainer state that carry an integer step ([] for an unreadable file)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8")).get("log_history", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("step"), int)] \
        if isinstance(entries, list) else []


def _at(entries: list[dict], step: int) -> dict[str, float]:
    """The finite numbers the entries of ``step`` logged (bookkeeping columns left out)."""
    out: dict[str, float] = {}
    for e in entries:
        if e["step"] == step:
            for k, v in e.items():
                if k != "step" and k not in BOOKKEEPING and isinstance(v, (int, float)) and math.isfinite(v):
                    out.setdefault(k, float(v))
    return out


def disagreement(a: list[dict], b: list[dict]) -> tuple[int, str] | None:
    """(step, key) where two histories differ (beyond float32 rounding) at the last step both logged, or None. The
    last shared step is enough, as for the segments of :mod:`._segments`: two runs differ there, and a branch resumed
    from an earlier checkpoint differs from the step after that checkpoint on."""
    shared = {e["step"] for e in a} & {e["step"] for e in b}
    if not shared:
        return None
    step = max(shared)
    ra, rb = _at(a, step), _at(b, step)
    for k in sorted(set(ra) & set(rb)):
        if abs(ra[k] - rb[k]) > 1e-6 * max(abs(ra[k]), abs(rb[k])) + 1e-30:
            return step, k
    return None


def _whole(path: Path) -> bool:
    """Whether a trainer state parses as JSON (not cut short by a run killed while saving it)."""
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return True


def whole_states(root_state: Path | None, checkpoints: list[Path], base: Path) -> tuple[Path | None, list[Path],
                                                                                       list[str]]:
    """The root state and the checkpoints without the trainer states cut short (a run killed while saving one), and
    a read note per state left out: the newest checkpoint's is replaced by the one before it, the root state by the
    checkpoints. A cut state that is the folder's only one is kept, so that reading it names what is wrong."""
    notes = []
    while (len(checkpoints) > 1 or checkpoints and root_state is not None) and \
            not _whole(checkpoints[-1] / "trainer_state.json"):
        notes.append(f"{_rel(checkpoints[-1] / 'trainer_state.json', base)} is cut short (a run killed while saving "
                     f"it?): left out, the state before it read instead")
        checkpoints = checkpoints[:-1]
    if root_state is not None and checkpoints and not _whole(root_state):
        notes.append(f"{_rel(root_state, base)} is cut short (a run killed while saving it?): left out, the "
                     "checkpoints read instead")
        root_state = None
    return root_state, checkpoints, notes


def current_states(root_state: Path | None, checkpoints: list[Path], base: Path) -> tuple[list[Path], str | None]:
    """The trainer states to read, and a read note or None.

    ``root_state``: the folder's own ``trainer_state.json`` (``trainer.save_state()``) or None; ``checkpoints``: the
    ``checkpoint-N`` folders holding one, by N. As before, the root state and the highest-numbered checkpoint's; but
    when the state written last (modification time) disagrees with one of them at the last step both logged
    (:func:`disagreement`), it is the run written last: it is read instead of every state it disagrees with, which
    the note names."""
    states = [p / "trainer_state.json" for p in checkpoints]
    candidates = ([root_state] if root_state is not None else []) + states
    chosen = candidates[:1] + states[-1:] if root_state is not None else states[-1:]
    newest = max(candidates, key=mtime, default=None)
    if newest is None or set(chosen) <= {newest}:
        return chosen, None
    ref = _history(newest)
    keep, left = [], []
    for p in (p for p in chosen if p != newest):
        clash = disagreement(_history(p), ref)
        if clash:
            left.append((p, clash))
        else:
            keep.append(p)
    if not left:
        return chosen, None
    keep.append(newest)
    said = "; ".join(f"{_rel(p, base)} (step {s}, {k!r})" for p, (s, k) in left)
    return keep, (f"{_rel(newest, base)}, written last, disagrees with {said}: those hold another run (or a branch "
                  "of this one before a resume from an earlier checkpoint) and are left out; pass one of them to "
                  "read it")


def _rel(p: Path, base: Path) -> str:
    try:
        return str(p.relative_to(base))
    except ValueError:
        return str(p)


def mtime(p: Path) -> float:
    """A file's modification time (0 when it cannot be read)."""
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0
