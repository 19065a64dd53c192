"""Resume from a snapshot of the optimizer (erahbo.study.snapshot), not by re-deciding.

Rules checked, each on a study built here:

* a study closed with nothing pending stores a snapshot; reopening it re-decides no round
  (nothing is asked during the open) and continues to exactly the history of an
  uninterrupted study;
* a snapshot of other code (another key) is ignored: the journal is replayed in full, with
  the same result;
* ``verify=True`` replays every event and accepts a journal whose replay arrives at its
  snapshot; a snapshot that does not match the replay is reported;
* a journaled optimizer refuses pickling with the fix (its journal is its saved state).
"""

from __future__ import annotations

import pickle
import sqlite3

import pytest

import erahbo
from erahbo.objectives.synthetic import Figure1Task
from erahbo.runtime.journal import Journal
from erahbo.runtime.journal_format import ReplayDivergenceError

TASK = Figure1Task()
KW = {"budget": 60, "seed": 5, "raw_samples": 64}


def _run(path, stop=None, **kw):
    """Ask/tell until ``stop`` counted runs (None: the budget); returns the result."""
    with erahbo.Optimizer(TASK.space, journal=path, **{**KW, **kw}) as opt:
        while (stop is None or opt.n_evals < stop) and (t := opt.ask()) is not None:
            opt.tell(t, [TASK(t.config, s) for s in t.seeds])
        return opt.result(), opt.n_replayed


def _runs(result):
    return result.history.drop(columns=["wall_time", "worker"])


def test_a_closed_study_reopens_from_its_snapshot_and_continues_exactly(tmp_path):
    full, _ = _run(tmp_path / "full.db")
    _run(tmp_path / "cut.db", stop=25)
    with Journal.open(tmp_path / "cut.db") as j:
        snap = j.snapshot()
        assert snap is not None and snap[0] == j.n_events()  # stored at close, up to date
    resumed, n_replayed = _run(tmp_path / "cut.db")
    assert n_replayed == 0  # nothing re-decided: the snapshot stood for every event
    assert _runs(resumed).equals(_runs(full))
    assert resumed.rounds.equals(full.rounds)


def test_a_snapshot_of_other_code_is_ignored(tmp_path):
    full, _ = _run(tmp_path / "full.db")
    _run(tmp_path / "cut.db", stop=25)
    con = sqlite3.connect(tmp_path / "cut.db")
    con.execute("UPDATE snapshots SET key = 'another version of erahbo'")
    con.commit()
    con.close()
    resumed, n_replayed = _run(tmp_path / "cut.db")
    assert n_replayed > 0  # replayed from the first event
    assert _runs(resumed).equals(_runs(full))


def test_verify_replays_every_event_and_checks_the_snapshot(tmp_path):
    _run(tmp_path / "a.db", stop=30)
    _, n_replayed = _run(tmp_path / "a.db", stop=30, verify=True)
    assert n_replayed > 0  # every round re-decided, and it agrees with the snapshot
    # a snapshot of another study's state (same code, same settings key) does not agree
    _run(tmp_path / "b.db", stop=30, seed=6)
    with Journal.open(tmp_path / "b.db") as jb, Journal.open(tmp_path / "a.db") as ja:
        state_b = jb.snapshot()[2]
        ja.write_snapshot(ja.n_events(), ja.snapshot()[1], state_b)
    with pytest.raises(ReplayDivergenceError, match="verify"):
        _run(tmp_path / "a.db", stop=30, verify=True)
    # refused before anything is written: not even the extension to a larger budget
    before = (tmp_path / "a.db").read_bytes()
    with pytest.raises(ReplayDivergenceError, match="verify"):
        _run(tmp_path / "a.db", stop=30, verify=True, budget=80)
    assert (tmp_path / "a.db").read_bytes() == before


def test_a_journaled_optimizer_is_not_pickled_but_says_how_to_save_it(tmp_path):
    with erahbo.Optimizer(TASK.space, journal=tmp_path / "j.db", **KW) as opt:
        with pytest.raises(TypeError, match="journal is its saved state"):
            pickle.dumps(opt)
    plain = erahbo.Optimizer(TASK.space, **KW)
    assert pickle.loads(pickle.dumps(plain)).options == plain.options


def test_cli_resume_verify_replays_and_agrees(tmp_path, monkeypatch):
    """`erahbo resume --verify` re-decides the journaled rounds and finishes the study."""
    from typer.testing import CliRunner

    from erahbo.cli import app

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    args = ["optimize", "--objective", "figure1", "--budget", "30", "--journal", "s.db",
            "--out", "o", "--no-progress"]
    assert runner.invoke(app, args).exit_code == 0
    res = runner.invoke(app, ["resume", "s.db", "--budget", "40", "--verify", "--no-progress"])
    assert res.exit_code == 0, res.output
    with Journal.open(tmp_path / "s.db") as j:
        assert 38 <= j.n_counted() <= 40
        assert j.snapshot()[0] == j.n_events()  # closed: a snapshot of the extended study


def test_a_damaged_snapshot_is_replayed_instead(tmp_path):
    """Rule: a snapshot whose bytes changed (one flipped byte) fails its checksum and is not
    loaded: the journal is replayed from the first event, to the same result."""
    full, _ = _run(tmp_path / "full.db")
    _run(tmp_path / "cut.db", stop=25)
    con = sqlite3.connect(tmp_path / "cut.db")
    state = bytearray(con.execute("SELECT state FROM snapshots").fetchone()[0])
    state[len(state) // 2] ^= 0x01
    con.execute("UPDATE snapshots SET state = ?", (bytes(state),))
    con.commit()
    con.close()
    resumed, n_replayed = _run(tmp_path / "cut.db")
    assert n_replayed > 0
    assert _runs(resumed).equals(_runs(full))


def test_status_starts_from_the_snapshot_and_agrees_with_a_full_replay(tmp_path):
    """Rule: `erahbo status` re-decides only the events after a usable snapshot, and arrives
    where re-deciding every event does (the incumbent, the rounds)."""
    from erahbo.optimizer.core import Optimizer
    from erahbo.study.opening import replay_into
    from erahbo.study.rebuild import study_options
    from erahbo.study_status import study_status

    path = tmp_path / "s.db"
    full, _ = _run(path, stop=40)
    with Journal.open(path) as j:
        opts = study_options(j.settings)
        fast, slow = Optimizer(TASK.space, **opts), Optimizer(TASK.space, **opts)
        assert replay_into(fast, j) == j.n_events()  # nothing re-decided
        assert replay_into(slow, j, snapshot=False) == 0
    assert fast.result().rounds.equals(slow.result().rounds)
    assert fast.incumbent_id == slow.incumbent_id == full.incumbent_id
    status = study_status(path)
    assert (status.state, status.incumbent_id) == ("stopped", full.incumbent_id)

