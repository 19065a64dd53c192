"""Snapshots of an optimizer in its journal: resume without re-deciding every round.

Resume by replay (:mod:`erahbo.runtime.replay`) re-decides every past round: a finished study
of thousands of runs takes as long to reopen as its whole optimizer time. A journaled
optimizer therefore stores its state (the data, the open rounds, the round models with their
fitted hyperparameters and caches, the generator state, the history) in its journal when it
closes with no trial pending, and every :data:`EVERY_S` seconds while it runs. Opening the
journal restores the last snapshot and replays only the events after it.

A snapshot is used only by the code that wrote it: its key hashes erahbo's version, the
source of the package and the study's settings (a changed code or a changed study replays
from the start, as before). ``verify=True`` (``erahbo resume --verify``) replays every event
and checks that the replay arrives at the stored snapshot.

A snapshot is a pickle: open only journals you trust, as with any pickle file.
"""

from __future__ import annotations

import hashlib
import pickle
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from erahbo import __version__
from erahbo.runtime.journal import Journal, canonical_json

__all__ = ["EVERY_S", "capture", "restore", "same_state", "snapshot_key"]

#: Seconds between the snapshots of a running study (one more when it closes).
EVERY_S = 300.0
#: Attributes rebuilt from the journal itself, not stored.
_REBUILT = ("_study", "penalizer", "_snap")


@lru_cache(maxsize=1)
def _source_hash() -> str:
    """SHA-256 of the package's Python source (a snapshot is only as valid as its code)."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def snapshot_key(journal: Journal) -> str:
    """Which code and which study a snapshot belongs to."""
    h = hashlib.sha256(f"{__version__}|{_source_hash()}|".encode())
    h.update(canonical_json(journal.settings, "settings").encode())
    return h.hexdigest()


def capture(opt: Any) -> bytes:
    """The optimizer's state (its attributes, less what the journal rebuilds) as bytes."""
    state = {k: v for k, v in vars(opt).items() if k not in _REBUILT}
    return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


def restore(opt: Any, journal: Journal) -> int:
    """Load the journal's snapshot into ``opt`` if it is this code's and this study's.

    Returns the number of events it stands for (0: no usable snapshot, replay them all).
    """
    snap = journal.snapshot()
    if snap is None or snap[1] != snapshot_key(journal) or snap[0] > journal.n_events():
        return 0
    vars(opt).update(pickle.loads(snap[2]))
    return snap[0]


def same_state(opt: Any, state: bytes) -> bool:
    """Whether a replayed optimizer arrived at a stored state: the same data, rounds and
    runs (``verify``)."""
    old = pickle.loads(state)
    d, e = opt.data, old["state"].data
    return (d.config_ids == e.config_ids
            and all(np.array_equal(a, b) for a, b in zip(d.returns, e.returns, strict=True))
            and _rows(opt.history.rounds) == _rows(old["history"].rounds)
            and repr([r[:8] for r in opt.history.runs])
            == repr([r[:8] for r in old["history"].runs]))


def _rows(rows: list[dict[str, Any]]) -> str:
    return repr([{k: v for k, v in r.items()} for r in rows])
