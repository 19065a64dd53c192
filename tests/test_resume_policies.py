"""Crash-safe studies with the real optimizer: failure policies, validation at the boundaries."""

from __future__ import annotations

import pytest

from erahbo.runtime.journal import JournalCorruptError
from erahbo.study import Optimizer, optimize
from fault_injection import FAIL_ENV, segfault_objective, table, table_objective
from resume_helpers import KW, one_arg_objective, same_history

# --- failure policies -------------------------------------------------------------------------


@pytest.mark.parametrize("failures", ["penalize", "retry", "exclude"])
def test_failure_policies_show_in_the_history(failures, monkeypatch):
    monkeypatch.setenv(FAIL_ENV, "0.3")
    res = optimize(table_objective, table(), failures=failures, **KW)
    h = res.history
    assert res.failures == failures and res.n_evals == (h.status.isin(["ok", "penalized"])).sum()
    bad = h[h.status != "ok"]
    assert len(bad) and bad.error.str.contains("diverged|NaN").all()
    if failures == "penalize":
        assert set(h.status) == {"ok", "penalized"}
        assert KW["budget"] - 1 <= res.n_evals <= KW["budget"]  # no round starts with 1 left
        ok = h[h.status == "ok"]["return"]
        assert bad["return"].between(ok.min(), ok.max()).all()  # the quartile (issue 13)
    elif failures == "retry":
        assert "retried" in set(h.status)
        assert not h[h.attempt > 0].seed.isin(h[h.attempt == 0].seed).any()  # new seeds
        assert bad[bad.status == "retried"]["return"].isna().all()
    else:
        excluded = set(h[h.status == "failed"].config_id)
        assert excluded and res.incumbent_id not in excluded
        for cid in excluded:  # never asked again after its failure (re-selected before: may be)
            mine = h[h.config_id == cid]
            assert mine.iteration.max() == mine[mine.status == "failed"].iteration.min()
        assert (res.rounds.stop_reason == "infeasible").sum() == len(excluded)


def test_objective_failing_everywhere_stops_with_one_clear_message():
    with pytest.raises(ValueError, match=r"every run of the initial design failed \(Zero"):
        optimize(lambda c, s: 1 / 0 if s else 0.0, table(), **KW)


def test_process_pool_same_decisions_concurrent_seeds_and_crashing_worker(failing):
    from erahbo.runtime.executors import ProcessExecutor

    serial = optimize(table_objective, table(), method="rahbo", failures="retry", **KW)
    with ProcessExecutor(max_workers=2) as pool:
        par = optimize(table_objective, table(), method="rahbo", failures="retry",
                       executor=pool, **KW)
        same_history(serial.history, par.history)  # same decisions on any executor
        assert par.history.worker.nunique() == 2  # seeds of a round ran concurrently
        crash = optimize(segfault_objective, table(), method="rahbo", executor=pool,
                         failures="penalize", **KW)
    h = crash.history
    dead = h[h.x0 < 0.1]
    assert len(dead) and (dead.status == "penalized").all()
    assert dead.error.str.contains("WorkerCrashed: worker process died: killed by signal "
                                   "SIGSEGV").all()
    assert not h[h.x0 >= 0.1].error.str.contains("WorkerCrashed").any()


# --- validation at the boundaries -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "msg"),
    [
        ({"alpha": -1.0}, ValueError, "alpha=-1.0 is negative"),
        ({"k_min": 0}, ValueError, "k_min=0 must be an int >= 1"),
        ({"k_min": 4, "k_max": 3}, ValueError, "k_max=3 is smaller than k_min=4"),
        ({"budget": 5}, ValueError, "budget=5 is smaller than the initial design"),
        ({"failures": "ignore"}, ValueError, "failures='ignore' is not a policy"),
        ({"retries": -1}, ValueError, "retries=-1 must be >= 0"),
        ({"run_timeout": 0}, ValueError, "run_timeout=0 must be > 0"),
        ({"executor": "dask"}, ValueError, "executor='dask' is not known"),
        ({"executor": "serial", "workers": 4}, ValueError, "workers=4 needs executor="),
        ({"workers": 0}, ValueError, "workers=0 must be an int >= 1"),
    ],
)
def test_optimize_validates_options_with_one_message(tmp_path, kwargs, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(".", r"\.")):
        optimize(table_objective, table(), journal=tmp_path / "s.db", **{**KW, **kwargs})
    assert not (tmp_path / "s.db").exists()  # nothing journaled for a bad call


def test_validation_of_objectives_and_journal_paths(tmp_path):
    with pytest.raises(TypeError, match=r"cannot be called as objective\(config, seed\)"):
        optimize(one_arg_objective, table(), **KW)
    with pytest.raises(TypeError, match="cannot be sent to worker processes"):
        optimize(lambda c, s: 0.0, table(), workers=2, **KW)
    with pytest.raises(ValueError, match="is a directory"):
        Optimizer(table(), journal=tmp_path, **KW)
    with pytest.raises(ValueError, match="does not exist; create it first"):
        optimize(table_objective, table(), journal=tmp_path / "no" / "s.db", **KW)
    (tmp_path / "notes.db").write_text("not a journal")
    with pytest.raises(JournalCorruptError, match="not an SQLite database"):
        Optimizer(table(), journal=tmp_path / "notes.db", **KW)
    assert (tmp_path / "notes.db").read_text() == "not a journal"
