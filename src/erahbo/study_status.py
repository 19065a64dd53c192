"""A read-only look at a study journal: runs, rounds, incumbent, finished or not.

:func:`study_status` opens the journal read-only (no lock: it works while the study runs,
and writes nothing), counts its runs and rounds and, by replaying the journaled results into
a fresh optimizer without calling any objective, finds the incumbent (``erahbo status PATH``).

>>> s = study_status("study.db")                    # doctest: +SKIP
>>> s.state, s.n_counted, s.budget, s.incumbent_id  # doctest: +SKIP
('finished', 200, 200, 17)
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.journaling import replay_into
from erahbo.optimizer.study import study_options
from erahbo.runtime.journal import Journal
from erahbo.runtime.journal_format import validate_existing
from erahbo.space import SearchSpace

__all__ = ["StudyStatus", "study_status"]


@dataclass
class StudyStatus:
    """What a journal holds (see :func:`study_status`).

    Attributes
    ----------
    path : str
    state : str
        ``"finished"`` (budget spent, nothing pending), ``"running"`` (another process holds
        the journal) or ``"stopped"`` (resumable: ``erahbo resume PATH``).
    method : str
    budget : int or None
        The current budget (after any extension).
    n_counted : int
        Counted training runs (``ok`` and ``penalized``).
    run_status : dict
        Runs per status (``ok``, ``penalized``, ``retried``, ``failed``, ``interrupted``...).
    n_trials, n_pending : int
        Trials asked, and asked but not told (in flight, or cut by a crash).
    n_rounds : int
        Rounds with at least one trial (initial design included).
    incumbent_id, incumbent, incumbent_mv :
        The recommendation from the replayed results (None / NaN if it could not be made).
    note : str
        Why there is no incumbent, or ``""``.
    settings : dict
        The journaled settings (without the space).
    info : dict
        The journaled facts (objective, executor, out...).
    """

    path: str
    state: str
    method: str
    budget: int | None
    n_counted: int
    run_status: dict[str, int]
    n_trials: int
    n_pending: int
    n_rounds: int
    incumbent_id: int | None = None
    incumbent: dict[str, Any] | None = None
    incumbent_mv: float = float("nan")
    note: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def _locked(path: str) -> bool:
    """Whether another process holds the journal's lock (a running study)."""
    lock = path + ".lock"
    if not os.path.exists(lock):
        return False
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return False
    try:
        with open(lock) as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    except FileNotFoundError:
        return False
    return False


def _replay_incumbent(j: Journal) -> tuple[Any, str]:
    """A fresh optimizer driven through the journal's results (no objective is called)."""
    spec = j.settings.get("space") or {}
    if "table" in spec:
        return None, "a study on a candidate table: the journal does not store the table"
    opt = Optimizer(SearchSpace.from_json(spec), **study_options(j.settings))
    replay_into(opt, j)
    return opt, ""


def study_status(path: str | os.PathLike[str]) -> StudyStatus:
    """Summarize a study journal without changing it (safe while the study runs).

    Parameters
    ----------
    path : str or path-like
        The journal (``erahbo optimize --journal PATH``, ``OUT/study.db`` of ``erahbo tune``).

    Returns
    -------
    StudyStatus

    Raises
    ------
    FileNotFoundError
        No such file.
    erahbo.runtime.journal.JournalCorruptError
        Not an erahbo journal.
    """

    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"journal {p} does not exist; give the path of a study journal "
                                "(erahbo optimize --journal PATH, or OUT/study.db of erahbo tune)")
    validate_existing(p)
    conn = sqlite3.connect(f"file:{os.path.abspath(p)}?mode=ro", uri=True,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    j = Journal(p, conn, None, False)  # read-only, unlocked: only its readers are used
    try:
        settings = dict(j.settings)
        counts: dict[str, int] = {}
        for r in j._rows("SELECT status, COUNT(*) FROM runs GROUP BY status"):
            counts[str(r[0])] = int(r[1])
        n_rounds = int(j._rows("SELECT COUNT(DISTINCT round) FROM trials")[0][0])
        n_trials, n_told = j.n_trials(), j.n_trials(told=True)
        n_counted, budget = j.n_counted(), j.budget()
        out = StudyStatus(p, "stopped", str(settings.get("method")), budget, n_counted, counts,
                          n_trials, n_trials - n_told, n_rounds,
                          settings={k: v for k, v in settings.items()
                                    if k not in ("space", "warm_start")},
                          info=dict(j.info))
        try:
            opt, note = _replay_incumbent(j)
        except Exception as exc:  # a journal of another erahbo version: counts still shown
            opt, note = None, f"the replay failed ({type(exc).__name__}: {exc})"
        # finished: nothing pending and the optimizer asks for nothing more (a new
        # configuration needs 2 seeds: a budget can end 1 run short)
        done = n_trials == n_told and budget is not None and n_counted >= budget - 1
        if opt is not None:
            out.incumbent_id = opt.incumbent_id
            out.incumbent = opt.recommend()
            out.incumbent_mv = opt.incumbent_mv
            if out.incumbent is None:
                note = "no configuration was evaluated successfully yet"
            done = n_trials == n_told and opt.ask() is None
        out.state = "running" if _locked(p) else ("finished" if done else "stopped")
        out.note = note
        return out
    finally:
        conn.close()
