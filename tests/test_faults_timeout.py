"""Faults against real processes (issue 27): the default run timeout (``"auto"`` where runs can
be killed, none for serial runs), a hung run killed and the study going on."""

from __future__ import annotations

import os

import pytest

from fault_injection import HANG_ENV, hang_once, slow_seed_3

pytestmark = pytest.mark.xdist_group("ray")  # the shared Ray instance (conftest.py)

# --------------------------------------------------------------------------------------------
# 4. the default run timeout
# --------------------------------------------------------------------------------------------

def test_run_timeout_defaults_to_auto_where_runs_can_be_killed():
    """Rule: optimize's run_timeout defaults to "auto"; the process and Ray executors carry
    an automatic limit (ten times the longest finished run, at least 60 s, a day before any
    run finished), the serial one none; None is no limit."""
    import inspect

    from erahbo.cli.optimize_cmd import run_timeout_option
    from erahbo.runtime.executors import AutoTimeout, make_executor
    from erahbo.study import optimize

    assert inspect.signature(optimize).parameters["run_timeout"].default == "auto"
    with make_executor("process", max_workers=1) as ex:
        assert isinstance(ex.auto_timeout, AutoTimeout)
        assert (ex.auto_timeout.factor, ex.auto_timeout.floor) == (10.0, 60.0)
    assert make_executor("serial").auto_timeout is None
    auto = AutoTimeout()
    assert auto.limit() == 86400.0  # no run finished yet
    for seconds, limit in ((2.0, 60.0), (30.0, 300.0), (5.0, 300.0)):
        auto.observe(seconds)
        assert auto.limit() == limit
    assert "30 s" in auto.rule()
    assert [run_timeout_option(t) for t in (None, "auto", "none", "90")] == ["auto", "auto",
                                                                            None, 90.0]
    with pytest.raises(ValueError, match="--run-timeout 'soon'"):
        run_timeout_option("soon")


def test_a_hung_run_is_killed_by_the_default_and_the_study_goes_on(tmp_path, monkeypatch):
    """Rule: with worker processes and the default run_timeout, a run that hangs is killed
    once it has taken ten times the longest finished run (floor lowered to 1 s here); it
    counts as failed with a message naming the automatic limit and how to change it, and the
    study spends its budget."""
    from erahbo.runtime.executors import AutoTimeout, ProcessExecutor
    from erahbo.study import optimize

    monkeypatch.setenv(HANG_ENV, str(tmp_path))  # workers inherit it
    with ProcessExecutor(2, auto_timeout=AutoTimeout(floor=1.0)) as ex:
        res = optimize(hang_once, {"x": ("float", 0.0, 1.0)}, budget=12, seed=0, k_min=2,
                       k_max=2, n_init=3, executor=ex, failures="penalize")  # counted at once
    assert (tmp_path / "hang").exists()
    failed = res.history[res.history.status != "ok"]
    assert len(failed) == 1, res.history[["status", "error"]]
    assert "automatic run_timeout" in failed.error.iloc[0]
    assert "run_timeout=SECONDS" in failed.error.iloc[0] and "None for none" in failed.error.iloc[0]
    assert res.n_evals == 12


@pytest.mark.parametrize("kind", ["process", "ray"])
def test_run_timeout_none_is_no_limit(kind, request):
    """Rule: a run far longer than the others is killed under "auto" but not with None (the
    process pool, and Ray where installed)."""
    from erahbo.runtime.evaluate import evaluate
    from erahbo.runtime.executors import AutoTimeout, ProcessExecutor

    def make(auto):
        if kind == "process":
            return ProcessExecutor(1, auto_timeout=auto)
        pytest.importorskip("ray", reason="Ray is not installed (pip install erahbo[ray])")
        from erahbo.runtime.executors import RayExecutor

        request.getfixturevalue("shared_ray")  # joins the shared local instance (conftest.py)
        return RayExecutor(num_cpus=1, max_workers=1, auto_timeout=auto,
                           init_kwargs={"log_to_driver": False})

    with make(AutoTimeout(factor=3.0, floor=0.5)) as ex:  # one pool (Ray starts once; the
        for timeout, status in ((None, "ok"), ("auto", "penalized")):  # kill comes last)
            # runs of seeds 1, 2: well under a second; seed 3: 5 s, past 3 x the longest
            ex.submit(slow_seed_3, {"x": 0.5}, 1).result()  # a worker up, the module imported
            ex.auto_timeout.longest = None  # (that call is not a run; nor the runs before)
            out = evaluate(slow_seed_3, {"x": 0.5}, [1, 2, 3], run_timeout=timeout, executor=ex)
            assert [r.status for r in out.runs] == ["ok", "ok", status], out.runs
            if status == "penalized":
                assert "automatic run_timeout" in out.runs[2].error


def test_serial_runs_keep_no_limit_and_need_no_pickling():
    """Rule: with the serial executor the default adds no limit and no worker process: an
    objective that cannot be pickled (a closure) still runs in this process."""
    from erahbo.study import optimize

    calls = []

    def closure(config, seed):
        calls.append(os.getpid())
        return float(config["x"])

    res = optimize(closure, {"x": ("float", 0.0, 1.0)}, budget=6, seed=0, k_min=2, k_max=2,
                   n_init=3)
    assert res.n_evals == 6 and set(calls) == {os.getpid()}
