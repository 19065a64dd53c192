"""A read-only look at a study journal: runs, rounds, incumbent, finished or not.

:func:`study_status` opens the journal read-only (no lock: it works while the study runs,
and writes nothing), counts its runs and rounds and, by replaying the journaled results into
a fresh optimizer without calling any objective, finds the incumbent (``erahbo status PATH``).
The replay starts from the journal's snapshot of the optimizer when it is this code's and
this study's (:mod:`erahbo.study.snapshot`: a pickle, so open only journals you trust), and
re-decides only the events after it.

>>> s = study_status("study.db")                    # doctest: +SKIP
>>> s.state, s.n_counted, s.budget, s.incumbent_id  # doctest: +SKIP
('finished', 200, 200, 17)
"""

from __future__ import annotations

import glob
import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from erahbo._lockfile import inode_locked
from erahbo.optimizer.core import Optimizer
from erahbo.runtime.journal import Journal
from erahbo.runtime.journal_check import read_only, validate_existing
from erahbo.space import SearchSpace
from erahbo.study.opening import replay_into
from erahbo.study.rebuild import study_options

__all__ = ["StudyStatus", "study_status"]


@dataclass
class StudyStatus:
    """What a journal holds (see :func:`study_status`).

    Attributes
    ----------
    path : str
    state : str
        ``"finished"`` (budget spent, nothing pending), ``"running"`` (another process holds
        the journal's lock, by any name of the file), ``"stopped"`` (resumable: ``erahbo
        resume PATH``) or ``"inconsistent"`` (the journaled events do not replay: a damaged
        value, or a journal of an erahbo version that decides otherwise; resume refuses it).
    method : str
    budget : int or None
        The current budget (after any extension).
    n_counted : int
        Counted training runs (``ok`` and ``penalized``).
    run_status : dict
        Runs of told trials per status (``ok``, ``penalized``, ``retried``, ``failed``,
        ``interrupted``): the ``ok`` and ``penalized`` ones are the ``n_counted``.
    n_trials, n_pending : int
        Trials asked, and asked but not told (in flight, or cut by a crash).
    n_rounds : int
        Rounds with at least one trial (initial design included).
    incumbent_id, incumbent, incumbent_mv :
        The recommendation from the replayed results (None / NaN if it could not be made).
    note : str
        Why there is no incumbent, or ``""``.
    pid : int or None
        The process running the study (``state == "running"``), where the OS tells it.
    pending_runs : dict
        Runs of the trials not told yet, per status: in flight (``running``), or, after a
        crash or Ctrl-C, finished ones (kept on resume) and ``running`` ones (cut: re-run
        with the same seed on resume). Not counted until their trial is told.
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
    pid: int | None = None
    pending_runs: dict[str, int] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def _replay_incumbent(j: Journal) -> tuple[Any, str]:
    """A fresh optimizer driven through the journal's results (no objective is called)."""
    spec = j.settings.get("space") or {}
    if "table" in spec:
        return None, "a study on a candidate table: the journal does not store the table"
    if "hyperparameters" not in spec:
        return None, "the journal holds no search space (a study of another optimizer)"
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
        No such file, or a folder (the message lists the journals in it).
    erahbo.runtime.journal.JournalCorruptError
        Not an erahbo journal.
    """

    p = os.fspath(path)
    if os.path.isdir(p):
        found = journals_in(p)
        listed = (f"; the journals in it: {', '.join(found)}" if found else
                  "; it holds no erahbo journal (nor do its subfolders)")
        raise FileNotFoundError(
            f"{p} is a folder; erahbo status expects a study journal, an SQLite file "
            f"(erahbo optimize --journal PATH, or OUT/study.db of erahbo tune){listed}")
    if not os.path.isfile(p):
        raise FileNotFoundError(f"journal {p} does not exist; give the path of a study journal "
                                "(erahbo optimize --journal PATH, or OUT/study.db of erahbo tune)")
    running, pid = inode_locked(p)  # before any connection: see erahbo._lockfile
    with read_only(p, live=running) as conn:
        validate_existing(p, conn)
        conn.row_factory = sqlite3.Row
        j = Journal(p, conn, None, False)  # read-only, unlocked: only its readers are used
        return _summary(j, running, pid)


def journals_in(folder: str, limit: int = 10) -> list[str]:
    """The erahbo journals in ``folder`` and its subfolders (one level), at most ``limit``:
    ``.db`` / ``.sqlite`` files that open as a journal."""
    names = []
    for pattern in ("*", os.path.join("*", "*")):
        for ext in (".db", ".sqlite", ".sqlite3"):
            names += sorted(glob.glob(os.path.join(folder, pattern + ext)))
    found = []
    for name in names:
        try:
            validate_existing(name)
        except Exception:  # not a journal (another SQLite file), unreadable
            continue
        found.append(name)
        if len(found) == limit:
            break
    return found


def _summary(j: Journal, running: bool, pid: int | None) -> StudyStatus:
    settings = dict(j.settings)
    told: dict[str, int] = {}
    pending: dict[str, int] = {}
    for r in j._rows("SELECT r.status, t.told_at IS NOT NULL, COUNT(*) FROM runs r "
                     "JOIN trials t USING (trial_id) GROUP BY r.status, t.told_at IS NOT NULL"):
        into = told if r[1] else pending
        into[str(r[0])] = int(r[2])
    n_rounds = int(j._rows("SELECT COUNT(DISTINCT round) FROM trials")[0][0])
    n_trials, n_told = j.n_trials(), j.n_trials(told=True)
    n_counted, budget = j.n_counted(), j.budget()
    out = StudyStatus(j.path, "stopped", str(settings.get("method")), budget, n_counted, told,
                      n_trials, n_trials - n_told, n_rounds,
                      settings={k: v for k, v in settings.items()
                                if k not in ("space", "warm_start")},
                      info=dict(j.info), pending_runs=pending)
    replayed = True
    try:
        opt, note = _replay_incumbent(j)
    except Exception as exc:  # a damaged value, or a journal of another erahbo version
        opt, note, replayed = None, f"the replay failed ({type(exc).__name__}: {exc})", False
    # finished: nothing pending and the optimizer asks for nothing more (a new
    # configuration may need 2 seeds (k_min or k_init 2): a budget can end 1 run short)
    done = n_trials == n_told and budget is not None and n_counted >= budget - 1
    if opt is not None:
        out.incumbent_id = opt.incumbent_id
        out.incumbent = opt.recommend()
        out.incumbent_mv = opt.incumbent_mv
        if out.incumbent is None:
            note = "no configuration was evaluated successfully yet"
        done = n_trials == n_told and opt.ask() is None
    if running:
        out.state, out.pid = "running", pid
    else:
        out.state = "inconsistent" if not replayed else ("finished" if done else "stopped")
    out.note = note
    return out
