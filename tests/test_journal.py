"""Study journal: durability, refusal of foreign/corrupt files, exact resume by replay.

Uses the deterministic FakeOptimizer of ``fault_injection.py`` (same ask/tell contract as the
real optimizer) and kills studies in-process (an exception right after a commit) and for real
(SIGKILL of a study subprocess).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import sqlite3

import pytest

from erahbo.runtime.evaluate import evaluate
from erahbo.runtime.failures import RunOutcome, TrialOutcome
from erahbo.runtime.journal import (
    Journal,
    JournalCorruptError,
    JournalError,
    JournalLockedError,
    ReplayDivergenceError,
    SettingsMismatchError,
    canonical_json,
    settings_hash,
)
from erahbo.runtime.replay import JournaledStudy, replay
from erahbo.study.run import run_journaled
from fake_study import FakeOptimizer, fake_objective
from fault_kill import (
    check_no_loss_no_duplicates,
    count_runs,
    kill_and_resume,
    run_study_process,
    snapshot,
)
from fault_kill import progress as _progress

BUDGET = 24
SETTINGS = {"method": "fake", "alpha": 1.0, "k_min": 2, "k_max": 4, "budget": BUDGET, "seed": 0}
SCRIPT = os.path.join(os.path.dirname(__file__), "fault_injection.py")


class Crash(BaseException):
    """Stands for SIGKILL in in-process tests (not an Exception: nothing may catch it)."""


def sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def run_to_end(
    path, *, failures="penalize", budget=BUDGET, crash_at=None, cut_after=None, fail_rate=0.0
):
    """Open/resume the journal and run the fake study to its end; returns None if it crashed.

    ``crash_at=N``: crash right after the N-th commit of this incarnation.
    ``cut_after=P``: crash right after the first commit that brings the study's progress
    (:func:`_progress`) above P.
    """
    os.environ["FAKE_FAIL"] = str(fail_rate)
    journal = Journal.open(path, {**SETTINGS, "failures": failures}, synchronous="NORMAL")

    def hook(n):
        if crash_at is not None and n >= crash_at:
            raise Crash
        if cut_after is not None and _progress(journal._conn) > cut_after:
            raise Crash

    journal.on_commit = hook
    try:
        study = JournaledStudy(FakeOptimizer(10, 0), journal, failures=failures)
        run_journaled(study, fake_objective, budget=budget)
        return study
    except Crash:
        journal._abandon()
        return None
    finally:
        journal.close()
        os.environ.pop("FAKE_FAIL", None)


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """Uninterrupted studies, one per (policy, failure rate)."""
    out = {}
    for failures, rate in [("penalize", 0.2), ("retry", 0.3), ("exclude", 0.15)]:
        path = str(tmp_path_factory.mktemp("ref") / f"{failures}.db")
        assert run_to_end(path, failures=failures, fail_rate=rate) is not None
        out[failures] = (path, rate)
    return out


# --- opening, settings, locking --------------------------------------------------------------


def test_create_then_resume_same_settings(tmp_path):
    path = tmp_path / "s.db"
    with Journal.open(path, SETTINGS, info={"executor": "serial"}) as j:
        assert j.created and j.settings == SETTINGS and j.settings_hash == settings_hash(SETTINGS)
        assert j.info == {"executor": "serial"}
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA application_id").fetchone()[0] == 0x45524842
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    reordered = dict(reversed(list(SETTINGS.items())))
    with Journal.open(str(path), reordered, info={"executor": "ray"}) as j:
        assert not j.created and j.info == {"executor": "ray"}
    with Journal.open(path) as j:  # `erahbo resume PATH`: settings from the journal
        assert j.settings == SETTINGS
    with pytest.raises(FileNotFoundError, match="pass the study settings"):
        Journal.open(tmp_path / "missing.db")
    assert not os.path.exists(tmp_path / f"s.db.tmp-{os.getpid()}")


def test_other_settings_are_refused_with_the_difference_and_the_fix(tmp_path):
    path = tmp_path / "s.db"
    Journal.open(path, SETTINGS).close()
    before = sha(path)
    other = {**SETTINGS, "alpha": 2.0, "beta": 2.5}
    other.pop("seed")
    with pytest.raises(SettingsMismatchError) as info:
        Journal.open(path, other)
    msg = str(info.value)
    assert "alpha: 1.0 in the journal, 2.0 now" in msg
    assert "beta: absent in the journal, 2.5 now" in msg
    assert "seed: 0 in the journal, absent now" in msg
    assert "use another journal path" in msg and "erahbo resume" in msg
    assert sha(path) == before
    Journal.open(path, SETTINGS).close()  # the lock was released by the refusal


def test_settings_must_be_json(tmp_path):
    with pytest.raises(TypeError, match=r"settings\['space'\] is a object"):
        Journal.open(tmp_path / "s.db", {"space": object()})
    assert not os.path.exists(tmp_path / "s.db")
    import numpy as np

    assert canonical_json({"b": np.int64(2), "a": (np.float64(0.1),)}) == '{"a":[0.1],"b":2}'


def test_one_process_at_a_time(tmp_path):
    path = tmp_path / "s.db"
    j = Journal.open(path, SETTINGS)
    with pytest.raises(JournalLockedError, match=f"in use by pid {os.getpid()}"):
        Journal.open(path, SETTINGS)
    j.close()
    Journal.open(path, SETTINGS).close()


# --- corrupted, truncated, foreign files -----------------------------------------------------


def _journal_with_runs(path):
    study = run_to_end(str(path))
    assert study is not None
    return path


def _make_text(p):
    p.write_text("epoch,return\n1,0.5\n")


def _make_empty(p):
    p.write_bytes(b"")


def _make_other_sqlite(p):
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE results (x)")
    con.commit()
    con.close()


def _make_truncated(p):
    _journal_with_runs(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _make_short_header(p):
    _journal_with_runs(p)
    p.write_bytes(p.read_bytes()[:60])


def _make_garbage_page(p):
    _journal_with_runs(p)
    data = bytearray(p.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for i in range(page * 2, page * 3):  # third page: a table's b-tree page
        data[i] = (i * 7919) % 251
    p.write_bytes(bytes(data))


def _make_newer_schema(p):
    _journal_with_runs(p)
    con = sqlite3.connect(p)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()


@pytest.mark.parametrize(
    ("make", "exc", "msg"),
    [
        (_make_text, JournalCorruptError, "not an erahbo journal (not an SQLite database)"),
        (_make_empty, JournalCorruptError, "is an empty file"),
        (_make_other_sqlite, JournalCorruptError, "an SQLite database but not an erahbo journal"),
        (_make_truncated, JournalCorruptError, "is truncated"),
        (_make_short_header, JournalCorruptError, "is truncated"),
        (_make_garbage_page, JournalCorruptError, "corrupted"),
        (_make_newer_schema, JournalError, "newer than this erahbo supports"),
    ],
)
def test_bad_files_are_refused_and_left_untouched(tmp_path, make, exc, msg):
    path = tmp_path / "study.db"
    make(path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(path) + suffix):
            os.unlink(str(path) + suffix)
    before = sha(path)
    with pytest.raises(exc, match=re.escape(msg)) as info:
        Journal.open(path, SETTINGS)
    assert sha(path) == before
    if exc is JournalCorruptError:
        assert "was not modified" in str(info.value)
    Journal.open(tmp_path / "fresh.db", SETTINGS).close()  # other paths still work


# --- records and read-back -------------------------------------------------------------------


def test_records_read_back_in_order(tmp_path):
    j = Journal.open(tmp_path / "s.db", SETTINGS)
    t0 = j.record_trial({"x": 0.5}, [11, 12], config_id=3, round=0)
    r1 = j.record_run_start(t0, 0, 11)
    r2 = j.record_run_start(t0, 1, 12)
    assert [r.run_id for r in j.in_flight()] == [r1, r2]
    ok = RunOutcome(0, 11, 0, "ok", 1.5, 1.5, None, 1.0, 2.0, "h:1")
    j.record_run_end(r1, ok)
    assert [r.run_id for r in j.in_flight()] == [r2]
    assert j.pending()[0].trial_id == t0 and not j.pending()[0].told
    with pytest.raises(JournalError, match="not a running run"):
        j.record_run_end(r1, ok)
    with pytest.raises(sqlite3.IntegrityError):  # never two counted runs for one seed slot
        j._conn.execute(
            "INSERT INTO runs (trial_id, slot, attempt, seed, status, started_at) "
            "VALUES (?, 0, 1, 99, 'ok', 0)",
            (t0,),
        )
    pen = RunOutcome(1, 12, 0, "penalized", math.nan, -3.0, "boom", 1.0, 2.0, "h:1")
    j.record_run_end(r2, pen)
    j.record_tell(t0, TrialOutcome([ok, pen], [1.5, -3.0], [1.5, math.nan]))
    (t,) = j.trials()
    assert t.told and t.returns == [1.5, -3.0] and t.config == {"x": 0.5} and t.seeds == [11, 12]
    assert [(r.status, r.value_used) for r in t.runs] == [("ok", 1.5), ("penalized", -3.0)]
    assert j.events() == [("ask", t0), ("tell", t0)]
    assert j.n_counted() == 2 and j.feasible_returns() == [1.5]
    with pytest.raises(JournalError, match="already told"):
        j.record_tell(t0, TrialOutcome([], [1.5, -3.0], [1.5, math.nan]))
    j.close()


def test_history_shows_policy_and_statuses(references, tmp_path):
    path, _ = references["retry"]
    with Journal.open(path) as j:
        h = j.history()
        assert list(h.columns[:9]) == [
            "run_id",
            "trial_id",
            "round",
            "config_id",
            "config",
            "slot",
            "attempt",
            "seed",
            "status",
        ]
        assert set(h.status) <= {"ok", "retried", "penalized"} and (h.status == "retried").any()
        assert int(h.counted.sum()) == j.n_counted() >= BUDGET
        assert h[h.status == "retried"].error.notna().all()
        assert (h[h.attempt > 0].seed != h[h.attempt > 0].slot).all()
    path, _ = references["exclude"]
    with Journal.open(path) as j:
        h = j.history()
        excluded = {t.config_id for t in j.trials() if t.excluded}
        assert excluded and (h.status == "failed").any()
        first_excl = {t.config_id: t.trial_id for t in j.trials() if t.excluded}
        # an excluded configuration is never proposed again
        later = [
            t
            for t in j.trials()
            if t.config_id in excluded and t.trial_id > first_excl[t.config_id]
        ]
        assert later == []


# --- exact resume ----------------------------------------------------------------------------


def test_journal_does_not_change_decisions(references):
    """The journaled loop tells the optimizer exactly what a plain loop would."""
    path, rate = references["retry"]
    os.environ["FAKE_FAIL"] = str(rate)
    try:
        opt = FakeOptimizer(10, 0)
        from erahbo.runtime.failures import Penalizer

        pz, n = Penalizer(), 0
        while n < BUDGET:
            t = opt.ask()
            out = evaluate(fake_objective, t.config, t.seeds, "retry", penalizer=pz)
            pz.observe(r.raw for r in out.runs if r.status == "ok")
            n += len(out.counted)
            opt.tell(t, out.returns, infeasible=out.excluded)
    finally:
        os.environ.pop("FAKE_FAIL")
    with Journal.open(path) as j:
        told = [(t.config_id, t.returns, t.excluded) for t in j.trials()]
    assert [(c, r, e) for c, r, e in opt.told] == told


@pytest.mark.parametrize("failures", ["penalize", "retry", "exclude"])
def test_crash_after_every_commit_then_resume_is_exact(references, tmp_path, failures):
    """The study is cut right after every one of its commits in turn (each incarnation dies at
    the first commit past the previous cut), resumed each time, and must end exactly as the
    uninterrupted one: same asks, same told returns, same runs, none lost, none twice."""
    ref, rate = references[failures]
    path = str(tmp_path / "s.db")
    cut, cuts = 0, 0
    while run_to_end(path, failures=failures, cut_after=cut, fail_rate=rate) is None:
        cut = _progress(path)
        cuts += 1
        assert cuts < 3000
    assert cuts == _progress(ref)  # one cut per commit boundary of the whole study
    check_no_loss_no_duplicates(path, ref)


def test_crash_with_runs_in_flight_reruns_same_seed(references, tmp_path):
    ref, rate = references["retry"]
    path = str(tmp_path / "s.db")
    # commit 1: ask, commit 2: first run started -> crash with that run in flight
    assert run_to_end(path, failures="retry", crash_at=2, fail_rate=rate) is None
    with Journal.open(path, {**SETTINGS, "failures": "retry"}) as j:
        (flying,) = j.in_flight()
    study = run_to_end(path, failures="retry", fail_rate=rate)
    assert study is not None and len(study.interrupted) == 1
    with Journal.open(path) as j:
        runs = j.runs(flying.trial_id)
        same = [r for r in runs if r.slot == flying.slot and r.attempt == flying.attempt]
        assert (same[0].status, same[0].rerun, same[0].seed) == ("interrupted", False, flying.seed)
        assert same[1].rerun and same[1].seed == flying.seed and same[1].status != "running"
    check_no_loss_no_duplicates(path, ref)


def test_a_failed_replay_leaves_the_journal_as_it_was(tmp_path):
    """Rule: resuming marks runs in flight at a crash ``interrupted`` only after the replay
    succeeded; a replay that diverges (another optimizer, changed code) writes nothing, so the
    journal still resumes with the right optimizer."""
    path = str(tmp_path / "s.db")
    # commit 1: ask, commit 2: first run started -> crash with that run in flight
    assert run_to_end(path, failures="retry", crash_at=2, fail_rate=0.0) is None
    before = open(path, "rb").read()
    with Journal.open(path, {**SETTINGS, "failures": "retry"}) as j:
        with pytest.raises(ReplayDivergenceError):
            JournaledStudy(FakeOptimizer(10, seed=1), j, failures="retry")
        assert len(j.in_flight()) == 1  # still running: not marked
    assert open(path, "rb").read() == before
    study = run_to_end(path, failures="retry", fail_rate=0.0)  # the right optimizer resumes
    assert study is not None and len(study.interrupted) == 1


def test_replay_detects_divergence(references):
    path, _ = references["penalize"]
    with Journal.open(path) as j:
        with pytest.raises(ReplayDivergenceError, match="diverged at ask #0") as info:
            replay(FakeOptimizer(10, seed=1), j)
        assert "config_id" in str(info.value) or "seeds" in str(info.value)
        assert "Resume with the same erahbo version" in str(info.value)
        res = replay(FakeOptimizer(10, seed=0), j)
        assert res.n_asked == res.n_told == j.n_trials() and res.pending == []


def test_replay_detects_a_changed_told_value(references, tmp_path):
    """Feeding other returns than journaled makes the optimizer decide differently."""
    path, _ = references["penalize"]
    with Journal.open(path) as j:

        def lying_tell(opt, trial, returns, excluded):
            opt.tell(trial, [v + 10.0 for v in returns], infeasible=excluded)

        with pytest.raises(ReplayDivergenceError):
            replay(FakeOptimizer(10, seed=0), j, tell=lying_tell)


def test_ask_tell_mode_resume_returns_the_pending_trial(tmp_path):
    path = tmp_path / "s.db"
    values = lambda t: [fake_objective(t.config, s) for s in t.seeds]  # noqa: E731
    # uninterrupted reference
    j = Journal.open(tmp_path / "ref.db", SETTINGS)
    st = JournaledStudy(FakeOptimizer(10, 0), j)
    for _ in range(8):
        t = st.ask()
        st.tell(t, values(t))
    ref = [(t.config_id, t.returns) for t in j.trials()]
    j.close()
    # crash after the 5th ask (user never told it)
    j = Journal.open(path, SETTINGS)
    st = JournaledStudy(FakeOptimizer(10, 0), j)
    for _ in range(4):
        t = st.ask()
        st.tell(t, values(t))
    lost = st.ask()
    j._abandon()
    j = Journal.open(path, SETTINGS)
    st = JournaledStudy(FakeOptimizer(10, 0), j)
    assert st.has_pending
    again = st.ask()
    assert (again.config_id, again.seeds, again.config) == (lost.config_id, lost.seeds, lost.config)
    st.tell(again, values(again))
    for _ in range(3):
        t = st.ask()
        st.tell(t, values(t))
    assert [(t.config_id, t.returns) for t in j.trials()] == ref
    with pytest.raises(ValueError, match="not asked through this study"):
        st.tell(again, values(again))
    j.close()


# --- real SIGKILLs of a study process --------------------------------------------------------


@pytest.mark.parametrize("n_kills", [4, pytest.param(22, marks=pytest.mark.slow)])
def test_sigkill_at_random_points_zero_lost_zero_duplicated(references, tmp_path, n_kills):
    """A study process killed ``n_kills`` times at random commits, each time resumed: no run
    lost, none duplicated, the same decisions as without a kill. 4 kills in the default run;
    22 (a kill in nearly every stretch of the study) behind the slow marker."""
    ref, rate = references["retry"]
    path = str(tmp_path / "killed.db")
    rng = random.Random(20240611)
    points = [rng.randint(1, 6) for _ in range(n_kills)]
    argv = [SCRIPT, path, "--failures", "retry", "--budget", str(BUDGET), "--synchronous", "NORMAL"]
    env = {"FAKE_FAIL": str(rate)}
    # the script's settings differ from the in-process ones: build its own reference
    ref_path = str(tmp_path / "ref.db")
    done = run_study_process([SCRIPT, ref_path, *argv[2:]], env=env)
    assert done.returncode == 0, done.stderr
    attempts = kill_and_resume(argv, points, env=env)
    killed = [a for a in attempts if a.killed]
    assert len(killed) == len(points) and not attempts[-1].killed
    check_no_loss_no_duplicates(path, ref_path)
    with Journal.open(path) as j:
        assert j.n_counted() >= BUDGET and not j.in_flight()
    # the subprocess study and the in-process one make the same decisions and runs
    assert snapshot(ref_path)[0] == snapshot(ref)[0]
    assert snapshot(ref_path)[1] == snapshot(ref)[1]


def test_sigkill_from_outside_during_concurrent_runs(tmp_path):
    """Kills not aligned with commits, with runs in flight in a process pool."""
    path = str(tmp_path / "killed.db")
    ref_path = str(tmp_path / "ref.db")
    common = ["--failures", "retry", "--budget", "16", "--executor", "process", "--workers", "2"]
    env = {"FAKE_FAIL": "0.3", "FAKE_SLEEP": "0.02"}
    assert run_study_process([SCRIPT, ref_path, *common], env=env).returncode == 0
    rng = random.Random(7)
    kills = 0
    for target in sorted(rng.sample(range(3, 20), 3)):
        a = run_study_process([SCRIPT, path, *common], kill_when_runs=(path, target), env=env)
        kills += a.killed
        if not a.killed:
            break
    last = run_study_process([SCRIPT, path, *common], env=env)
    assert last.returncode == 0, last.stderr
    assert kills >= 2
    check_no_loss_no_duplicates(path, ref_path)
    assert count_runs(path) >= count_runs(ref_path)


def test_canonical_settings_hash_is_order_free():
    a = {"x": 1, "y": {"b": [1, 2], "a": 0.1}}
    b = json.loads('{"y": {"a": 0.1, "b": [1, 2]}, "x": 1}')
    assert settings_hash(a) == settings_hash(b) and settings_hash(a) != settings_hash({"x": 2})


def test_real_optimizer_resumes_exactly(tmp_path):
    """The engine's Optimizer (continuous space, L-BFGS-B polish) replays bit-exactly."""
    optimizer = pytest.importorskip("erahbo.optimizer")
    synthetic = pytest.importorskip("erahbo.objectives.synthetic")
    task = synthetic.HeteroscedasticBranin()
    settings = {"method": "erahbo", "budget": 40, "seed": 3, "k_min": 2, "k_max": 6, "n_init": 3}

    def objective(config, seed):
        if seed % 7 == 0:
            raise RuntimeError("diverged")
        return task(config, seed)

    def run(path, cut=None):
        j = Journal.open(path, settings, synchronous="NORMAL")
        if cut is not None:

            def hook(n):
                if n >= cut:
                    raise Crash

            j.on_commit = hook
        try:
            opt = optimizer.Optimizer(
                task.space, "erahbo", budget=40, seed=3, k_min=2, k_max=6, n_init=3
            )
            run_journaled(JournaledStudy(opt, j), objective)
            return True
        except Crash:
            j._abandon()
            return False
        finally:
            j.close()

    ref, path = str(tmp_path / "ref.db"), str(tmp_path / "k.db")
    assert run(ref)
    rng, kills = random.Random(5), 0
    while not run(path, cut=rng.randint(1, 20)):
        kills += 1
    assert kills >= 5
    check_no_loss_no_duplicates(path, ref)


def test_a_journal_lock_held_for_a_moment_is_waited_for(tmp_path):
    """Rule: a journal's lock held by another open file of it (another process, a refusing
    resume) is waited for up to LOCK_WAIT_S; held past that, the open is refused with
    JournalLockedError naming the journal. (The holder here is a second descriptor of this
    process, locked directly with flock: the lock belongs to the open file.)"""
    fcntl = pytest.importorskip("fcntl")
    import threading

    from erahbo._lockfile import unlock_inode
    from erahbo.runtime.journal_format import LOCK_WAIT_S, JournalLockedError, lock_journal

    path = tmp_path / "j.db"
    path.write_bytes(b"")
    other = open(path, "rb")  # held across the call
    try:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        release = threading.Timer(LOCK_WAIT_S / 10, other.close)  # closing drops its flock
        release.start()
        fh = lock_journal(str(path))  # waits for the release instead of refusing
        release.join()
        unlock_inode(fh)
        other = open(path, "rb")  # held across the call
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(JournalLockedError, match=r"j\.db is in use by"):
            lock_journal(str(path))
    finally:
        other.close()
