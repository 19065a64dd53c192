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

A snapshot is a pickle with its SHA-256 (a damaged one is replayed instead): open only
journals you trust, as with any pickle file.
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


def snapshot_key(journal: Journal, n_events: int | None = None) -> str:
    """Which code, which study and which journaled records a snapshot belongs to: the code
    and the settings, then (after ``:``) the SHA-256 of the first ``n_events`` events and
    their trials' records (configurations, seeds, returns). A journal whose records changed
    since is replayed, which detects the change."""
    h = hashlib.sha256(f"{__version__}|{_source_hash()}|".encode())
    h.update(canonical_json(journal.settings, "settings").encode())
    if n_events is None:
        return h.hexdigest()
    return h.hexdigest() + ":" + _records_digest(journal, n_events)


def _records_digest(journal: Journal, n_events: int) -> str:
    events = journal.events()[:n_events]
    trials = {t.trial_id: t for t in journal.trials()}
    h = hashlib.sha256()
    for kind, tid in events:
        t = trials.get(tid)
        rec = None if t is None else [t.config_id, list(t.seeds), t.config,
                                      None if kind == "ask" else t.returns, t.excluded]
        h.update(canonical_json([kind, tid, rec], "record").encode())
    return h.hexdigest()


def capture(opt: Any) -> bytes:
    """The optimizer's state (its attributes, less what the journal rebuilds) as bytes: the
    SHA-256 of the pickle, then the pickle (a damaged snapshot is detected, not loaded)."""
    state = {k: v for k, v in vars(opt).items() if k not in _REBUILT}
    blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    return hashlib.sha256(blob).digest() + blob


def _load(state: bytes) -> dict[str, Any] | None:
    """The state of :func:`capture`, or None when its checksum does not match."""
    digest, blob = state[:32], state[32:]
    if hashlib.sha256(blob).digest() != digest:
        return None
    return pickle.loads(blob)


def restore(opt: Any, journal: Journal) -> int:
    """Load the journal's snapshot into ``opt`` if it is this code's and this study's.

    Returns the number of events it stands for (0: no usable snapshot, replay them all).
    """
    snap = journal.snapshot()
    if snap is None or snap[0] > journal.n_events() or snap[1] != snapshot_key(journal,
                                                                              snap[0]):
        return 0
    state = _load(snap[2])
    if state is None:  # damaged: replay every event instead
        return 0
    vars(opt).update(state)
    return snap[0]


def same_state(opt: Any, state: bytes) -> bool:
    """Whether a replayed optimizer arrived at a stored state: the same data, rounds and
    runs (``verify``)."""
    old = _load(state)
    if old is None:
        return False
    d, e = opt.data, old["state"].data
    return (d.config_ids == e.config_ids
            and all(np.array_equal(a, b) for a, b in zip(d.returns, e.returns, strict=True))
            and repr(opt.history.rounds) == repr(old["history"].rounds)
            and repr([r[:8] for r in opt.history.runs])
            == repr([r[:8] for r in old["history"].runs]))

