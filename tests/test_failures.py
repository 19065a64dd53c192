"""Failure handling around objective calls (erahbo.runtime.failures) and input validation."""

from __future__ import annotations

import math
import os
import signal
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from erahbo.runtime.evaluate import evaluate
from erahbo.runtime.executors import ProcessExecutor, SerialExecutor
from erahbo.runtime.failures import (
    FailurePolicy,
    Penalizer,
    RunOutcome,
    apply_penalty,
    outcomes_from_returns,
    penalty_value,
    retry_seed,
)
from erahbo.validation import check_journal_path, check_objective, check_options

CONFIG = {"lr": 1e-3, "act": "relu"}


# --- objectives (module level: picklable for worker processes) ------------------------------


def linear(config, seed):
    return float(seed) / 10.0


def raise_on_odd(config, seed):
    if seed % 2:
        raise RuntimeError(f"diverged on seed {seed}")
    return float(seed)


def nan_on_odd(config, seed):
    return math.nan if seed % 2 else float(seed)


def bad_types(config, seed):
    return {1: None, 2: "high", 3: math.inf, 4: np.float32(4.0), 5: True, 6: np.array(6.0)}[seed]


def thirty_percent(config, seed):
    if seed % 10 < 3:
        raise ValueError("simulated crash of the training code")
    return 1.0


def constant(config, seed):
    return 3.0


def hang_on_2(config, seed):
    if seed == 2:
        time.sleep(60)
    return float(seed)


def segfault_on_2(config, seed):
    if seed == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    return float(seed)


def exit_on_1(config, seed):
    if seed == 1:
        raise SystemExit(3)
    return float(seed)


def batch_obj(config, seeds):
    return [math.nan if s == 2 else float(s) for s in seeds]


batch_obj.__erahbo_batch__ = True  # what erahbo.batch_objective sets


def batch_wrong_len(config, seeds):
    return [1.0]


batch_wrong_len.__erahbo_batch__ = True


class Recorder:
    """Collects recorder calls to check their order."""

    def __init__(self):
        self.events = []

    def run_started(self, slot, seed, attempt, rerun):
        self.events.append(("start", slot, seed, attempt, rerun))
        return len(self.events)

    def run_finished(self, token, outcome):
        self.events.append(("end", token, outcome.slot, outcome.status))


# --- penalty ---------------------------------------------------------------------------------


def test_penalty_value_rules():
    # the lower quartile of the feasible returns (numpy's linear interpolation)
    assert penalty_value([-2.0, 2.0]) == -1.0
    assert penalty_value([1.0, 2.0, 3.0, 4.0, 5.0]) == 2.0
    assert penalty_value([1.0, np.nan, 3.0, np.inf]) == 1.5  # non-finite entries are ignored
    assert penalty_value([5.0]) == 0.0  # no range yet: |v| below the value
    assert penalty_value([-5.0, -5.0]) == -10.0
    assert penalty_value([0.0]) == -1.0
    assert penalty_value([]) == penalty_value([math.nan]) == -1.0  # nothing feasible: -1


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=20),
    st.floats(1e-6, 1e6),
    st.floats(-1e6, 1e6),
)
def test_penalty_is_scale_equivariant_and_inside_the_observed_range(ys, a, b):
    ys = np.asarray(ys)
    if np.ptp(ys) <= 1e-9 * max(1.0, np.abs(ys).max()):
        return
    p = penalty_value(ys)
    assert ys.min() <= p <= np.median(ys)
    scaled = a * ys + b
    if np.ptp(scaled) <= 1e-9 * np.abs(scaled).max():  # the spread is below float resolution
        return
    q = penalty_value(scaled)
    assert q == pytest.approx(a * p + b, rel=1e-6, abs=1e-6 * (abs(b) + a * np.abs(ys).max()))


def test_penalty_is_robust_to_one_catastrophic_return():
    ys = list(np.linspace(100.0, 500.0, 40))
    p = penalty_value([*ys, -1e6])
    assert 150.0 < p < 250.0 and p == pytest.approx(penalty_value(ys), rel=0.05)


def test_penalizer_and_apply_penalty_agree():
    ys = np.array([1.0, np.nan, 3.0, -np.inf, 2.0])  # (5,)
    out = apply_penalty(ys)
    assert np.all(np.isfinite(out))
    pen = penalty_value([1.0, 3.0, 2.0])
    assert out[1] == out[3] == pen == Penalizer([1.0, 3.0, 2.0]).penalty()
    assert np.array_equal(out[[0, 2, 4]], ys[[0, 2, 4]])
    pz = Penalizer([5.0])
    # extra (the trial's own ok returns) is not stored, and bounds the penalty from above
    assert pz.penalty([1.0]) == penalty_value([1.0, 5.0], own=[1.0]) == 1.0 and pz.worst == 5.0
    assert pz.n == 1
    assert apply_penalty(np.array([np.nan, np.nan])).tolist() == [-1.0, -1.0]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), max_size=20), st.lists(st.floats(-1e3, 1e3), max_size=6))
def test_a_penalty_never_raises_its_configurations_mean(study, own):
    """The penalty is at or below every value its configuration counts (``own``), so a
    failed run counted there never raises the configuration's mean."""
    p = penalty_value([*study, *own], own=own)
    assert all(p <= v for v in own)
    if own:
        assert np.mean([*own, p]) <= np.mean(own) + 1e-9 * (1.0 + abs(np.mean(own)))


def test_a_configuration_with_one_low_run_is_penalized_at_that_run():
    """The issue's case: a study whose Q1 is 1.07, a configuration whose one run returned
    0.308: its failed seed counts 0.308 (not 1.07, which raised its mean), in a tell with
    its other seed and in a later tell of the configuration alone."""
    pz = Penalizer([0.308, 1.07, 1.2, 1.5, 2.0])
    assert pz.penalty() == pytest.approx(1.07)  # Q1 of the study
    assert outcomes_from_returns([0, 1], [0.308, None], penalizer=pz).returns == [0.308, 0.308]
    later = outcomes_from_returns([2], [None], penalizer=pz, own=[0.308, 0.9])
    assert later.returns == [0.308]
    assert outcomes_from_returns([2], [None], penalizer=pz, own=[1.3, 1.4]).returns == \
        [pytest.approx(1.07)]  # a configuration above Q1: Q1


def test_penalty_relative_at_extreme_scales():
    for scale in (1e-6, 1e6):
        ys = scale * np.array([1.0, 2.0, 4.0])
        assert penalty_value(ys) == pytest.approx(scale * 1.5)


def test_retry_seed_deterministic_positive_and_avoids():
    s = retry_seed(12, 1)
    assert s == retry_seed(12, 1) and s != retry_seed(12, 2) and s != retry_seed(13, 1)
    assert 1 <= s < 2**31
    assert retry_seed(12, 1, avoid=[s]) not in (s, 0)


# --- evaluate: detection and policies --------------------------------------------------------


def test_ok_runs_and_returns_in_slot_order():
    out = evaluate(linear, CONFIG, [3, 1, 2])
    assert out.returns == [0.3, 0.1, 0.2]
    assert [r.status for r in out] == ["ok"] * 3
    assert not out.excluded and out.n_failed == 0
    assert all(r.start <= r.end and r.worker for r in out)


def test_raise_and_nan_are_penalized_at_the_quartile_including_own_seeds():
    pz = Penalizer([0.0, 10.0])
    for obj in (raise_on_odd, nan_on_odd):
        out = evaluate(obj, CONFIG, [2, 3, 4, 5], penalizer=pz)
        pen = penalty_value([0.0, 10.0, 2.0, 4.0], own=[2.0, 4.0])  # Q1 2.0, at most 2.0
        assert out.returns == [2.0, pen, 4.0, pen]
        statuses = {r.slot: r.status for r in out}
        assert statuses == {0: "ok", 1: "penalized", 2: "ok", 3: "penalized"}
        assert math.isnan(out.raw[1]) and out.raw[0] == 2.0
        assert pz.n == 2  # evaluate does not modify the penalizer
    err = evaluate(raise_on_odd, CONFIG, [3]).runs[0].error
    assert err.startswith("RuntimeError: diverged on seed 3") and "Traceback" in err
    assert evaluate(nan_on_odd, CONFIG, [3]).runs[0].error == "objective returned NaN"
    # with no history the trial's own ok seeds set the scale; all failing -> -1
    own = evaluate(raise_on_odd, CONFIG, [2, 3, 6])
    assert own.returns[1] == penalty_value([2.0, 6.0], own=[2.0, 6.0]) == 2.0
    assert evaluate(raise_on_odd, CONFIG, [1, 3]).returns == [-1.0, -1.0]


def test_return_type_checks():
    out = evaluate(bad_types, CONFIG, [1, 2, 3, 4, 5, 6])
    st_ = [r.status for r in sorted(out.runs, key=lambda r: r.slot)]
    assert st_ == ["penalized", "penalized", "penalized", "ok", "penalized", "ok"]
    errs = {r.slot: r.error for r in out.runs}
    assert "NoneType" in errs[0] and "str" in errs[1] and "inf" in errs[2] and "bool" in errs[4]
    assert out.returns[3] == 4.0 and out.returns[5] == 6.0


def test_system_exit_in_objective_is_a_failed_run_not_the_end_of_the_study():
    out = evaluate(exit_on_1, CONFIG, [1, 2])
    assert [r.status for r in out] == ["penalized", "ok"]
    assert out.runs[0].error.startswith("SystemExit: 3")


def test_retry_policy_new_deterministic_seeds_then_penalize():
    rec = Recorder()
    out = evaluate(raise_on_odd, CONFIG, [2, 3], "retry", retries=3, recorder=rec)
    runs = sorted(out.runs, key=lambda r: (r.slot, r.attempt))
    slot1 = [r for r in runs if r.slot == 1]
    expect = [3] + [retry_seed(3, a, [2, 3]) for a in (1, 2, 3)]
    tried = [r.seed for r in slot1]
    assert tried == expect[: len(tried)]
    assert all(r.status == "retried" for r in slot1[:-1])
    assert slot1[-1].status in ("ok", "penalized")
    if slot1[-1].status == "ok":
        assert out.returns[1] == float(slot1[-1].seed)
    # every start precedes its end; every end matches a start
    starts = [e for e in rec.events if e[0] == "start"]
    assert len(starts) == len(out.runs) and rec.events[0][0] == "start"
    # a seed failing on all retries ends penalized
    always = evaluate(raise_on_odd, CONFIG, [1], FailurePolicy("retry", 1))
    if all(r.seed % 2 for r in always.runs):
        assert [r.status for r in always.runs] == ["retried", "penalized"]


def test_retry_on_thirty_percent_failures_all_slots_end_ok():
    seeds = list(range(100, 140))
    out = evaluate(thirty_percent, CONFIG, seeds, "retry", retries=5)
    counted = out.counted
    assert len(counted) == len(seeds) and {r.slot for r in counted} == set(range(len(seeds)))
    n_fail_first = sum(s % 10 < 3 for s in seeds)
    assert sum(r.status == "retried" for r in out.runs) >= n_fail_first
    assert sum(r.status == "penalized" for r in out.runs) <= 1  # 0.3**6 per seed


def test_exclude_policy_stops_at_first_failure():
    rec = Recorder()
    out = evaluate(raise_on_odd, CONFIG, [2, 4, 5, 6, 8], "exclude", recorder=rec)
    assert out.excluded
    assert [r.seed for r in out.runs] == [2, 4, 5]  # 6 and 8 never started (serial)
    assert out.runs[-1].status == "failed"
    assert out.returns[:2] == [2.0, 4.0] and all(math.isnan(v) for v in out.returns[2:])
    assert sum(e[0] == "start" for e in rec.events) == 3


def test_zero_variance_and_duplicates_are_plain_ok_runs():
    out = evaluate(constant, CONFIG, [1, 2, 3, 3])
    assert out.returns == [3.0] * 4 and out.n_failed == 0


def test_batch_objective():
    out = evaluate(batch_obj, CONFIG, [1, 2, 3])
    assert [r.status for r in sorted(out.runs, key=lambda r: r.slot)] == ["ok", "penalized", "ok"]
    assert out.returns == [1.0, penalty_value([1.0, 3.0], own=[1.0, 3.0]), 3.0]
    bad = evaluate(batch_wrong_len, CONFIG, [1, 2])
    assert [r.status for r in bad] == ["penalized", "penalized"]
    assert "returned 1 values for 2 seeds" in bad.runs[0].error


def test_prior_runs_resume_reruns_interrupted_once():
    def rec(slot, attempt, seed, status, raw=None):
        return RunOutcome(slot, seed, attempt, status, raw, math.nan, None, 0.0, 0.0, "w", False)

    prior = [
        rec(0, 0, 10, "ok", 1.0),
        rec(1, 0, 11, "interrupted"),
        rec(1, 0, 11, "interrupted"),  # interrupted twice (crash during the first rerun)
        rec(2, 0, 12, "retried"),
    ]
    calls = Recorder()
    out = evaluate(linear, CONFIG, [10, 11, 12, 13], "retry", recorder=calls, prior=prior)
    started = [e[1:] for e in calls.events if e[0] == "start"]
    assert started == [
        (1, 11, 0, True),
        (2, retry_seed(12, 1, [10, 11, 12, 13]), 1, False),
        (3, 13, 0, False),
    ]
    assert out.returns[0] == 1.0 and out.returns[1] == 1.1 and out.returns[3] == 1.3
    assert len(out.counted) == 4


def test_outcomes_from_returns_ask_tell_mode():
    out = outcomes_from_returns([1, 2, 3], [1.0, float("nan"), 3.0])
    assert out.returns == [1.0, penalty_value([1.0, 3.0], own=[1.0, 3.0]), 3.0]
    assert [r.status for r in out] == ["ok", "penalized", "ok"]
    ex = outcomes_from_returns([1, 2], [1.0, None], "exclude")
    assert ex.excluded and ex.runs[1].status == "failed"
    with pytest.raises(ValueError, match="2 returns for a trial with 3 seeds"):
        outcomes_from_returns([1, 2, 3], [1.0, 2.0])
    # the user's reasons replace the generic message of the failed runs only
    why = outcomes_from_returns([1, 2, 3], [1.0, float("nan"), None],
                                errors=["ignored", "CUDA out of memory", None])
    assert [r.error for r in why] == [None, "CUDA out of memory", why.runs[2].error]
    assert "expected a float" in why.runs[2].error
    with pytest.raises(ValueError, match="2 errors for 3 returns"):
        outcomes_from_returns([1, 2, 3], [1.0, 2.0, 3.0], errors=[None, None])


def test_policy_validation():
    with pytest.raises(ValueError, match="failures='skip' is not a policy"):
        FailurePolicy.coerce("skip")
    with pytest.raises(ValueError, match="retries=-1 must be >= 0"):
        FailurePolicy("retry", -1)
    assert FailurePolicy.coerce("retry", 4) == FailurePolicy("retry", 4)


# --- timeouts and crashes: isolated in worker processes --------------------------------------


@pytest.fixture(scope="module")
def pool():
    with ProcessExecutor(max_workers=2) as ex:
        yield ex


def test_timeout_kills_the_run_only(pool):
    # both workers booted and this module imported first: under load, a cold worker's first
    # unpickling (importing this module and erahbo) can itself take longer than the 1 s limit
    warm = [pool.submit(linear, CONFIG, s) for s in (5, 6)]
    assert [f.result() for f in warm] == [0.5, 0.6]
    out = evaluate(hang_on_2, CONFIG, [1, 2, 3], run_timeout=1.0, executor=pool)
    by_slot = {r.slot: r for r in out}
    assert by_slot[1].status == "penalized" and "RunTimeout" in by_slot[1].error
    assert 0.9 <= by_slot[1].end - by_slot[1].start
    assert out.returns[0] == 1.0 and out.returns[2] == 3.0


def test_segfault_is_a_failed_run_and_caller_survives(pool):
    out = evaluate(
        segfault_on_2, CONFIG, [1, 2, 3], "retry", retries=1, executor=pool, run_timeout=30
    )
    seg = next(r for r in out if r.seed == 2)
    assert seg.status == "retried" and "SIGSEGV" in seg.error and "WorkerCrashed" in seg.error
    assert out.returns[1] == float(retry_seed(2, 1, [1, 2, 3]))
    assert out.returns[0] == 1.0 and out.returns[2] == 3.0
    assert pool.submit(linear, CONFIG, 5).result() == 0.5  # pool still usable


def test_run_timeout_with_serial_executor_isolates_in_a_child():
    ex = SerialExecutor()
    try:
        out = evaluate(segfault_on_2, CONFIG, [2, 4], executor=ex, run_timeout=30)
        assert [r.status for r in out] == ["penalized", "ok"]
        assert "WorkerCrashed" in out.runs[0].error and "SIGSEGV" in out.runs[0].error
        assert out.returns == [penalty_value([4.0]), 4.0]
    finally:
        ex.shutdown()


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "msg"),
    [
        ({"alpha": -0.5}, ValueError, "alpha=-0.5 is negative"),
        ({"k_min": 0}, ValueError, "k_min=0 must be an int >= 1"),
        ({"k_min": 5, "k_max": 3}, ValueError, "k_max=3 is smaller than k_min=5"),
        ({"k_min": 2.0}, TypeError, "k_min must be an int, got the float 2.0; write 2"),
        ({"budget": 30, "n_init": 5, "k_init": 20}, ValueError, "smaller than the initial design"),
        ({"beta": 0}, ValueError, "beta=0 must be > 0"),
        ({"run_timeout": -1}, ValueError, "run_timeout=-1 must be > 0"),
        ({"alpha": float("nan")}, ValueError, "alpha=nan must be finite"),
        ({"k": 1}, ValueError, "k=1 is too small"),
        ({"alpha": "1"}, TypeError, "alpha must be a number"),
    ],
)
def test_check_options_messages(kwargs, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(".", r"\.")):
        check_options(**kwargs)


def test_check_options_accepts_paper_defaults():
    check_options(
        alpha=1.0,
        beta=2.5,
        beta_stop=1.0,
        k_min=2,
        k_max=20,
        budget=400,
        n_init=5,
        k_init=20,
        k=20,
        run_timeout=3600,
        retries=2,
    )
    check_options(alpha=0, k_min=np.int64(2), k_max=np.int64(2))


def test_check_objective():
    assert check_objective(linear) is False
    assert check_objective(batch_obj) is True
    assert check_objective(lambda config, seed, extra=1: 0.0) is False
    with pytest.raises(TypeError, match=r"cannot be called as objective\(config, seed\)"):
        check_objective(lambda x: x)
    with pytest.raises(TypeError, match="objective must be a function"):
        check_objective(3)


def test_check_journal_path(tmp_path):
    assert check_journal_path(tmp_path / "a.db") == str(tmp_path / "a.db")
    with pytest.raises(ValueError, match="is a directory"):
        check_journal_path(tmp_path)
    with pytest.raises(ValueError, match="does not exist; create it first"):
        check_journal_path(tmp_path / "missing" / "a.db")
    with pytest.raises(ValueError, match="is not a file"):
        check_journal_path(":memory:")


# --- the failure rule is the optimizer's; running a trial is the study's ---------------------


def test_runtime_failures_still_exports_the_optimizers_failure_rule():
    """Rule: ``erahbo.runtime.failures`` keeps every name it had: the failure rule's names are
    the very objects of its home in the optimizer (``erahbo.optimizer.failure`` and
    ``erahbo.optimizer.outcomes``); only ``RunRecorder`` is the runtime's own."""
    from erahbo.optimizer import failure, outcomes
    from erahbo.runtime import failures

    for name in failures.__all__:
        if name == "RunRecorder":
            continue
        home = failure if name in failure.__all__ else outcomes
        assert getattr(failures, name) is getattr(home, name), name


def test_run_trial_runs_the_seeds_under_the_optimizers_policy(tmp_path):
    """Rule: ``erahbo.study.run_trial`` runs a trial's seeds under its optimizer's failure
    policy (a failed seed counts at the penalty under ``"penalize"``) and ``tell_outcome`` takes
    the outcome in; a journaled optimizer journals every run before the tell."""
    from erahbo.objectives.synthetic import Figure1Task
    from erahbo.study import Optimizer, run_trial

    space = Figure1Task().space
    for journal in (None, tmp_path / "j.db"):
        opt = Optimizer(space, budget=10, seed=0, failures="penalize", journal=journal)
        trial = opt.ask()
        bad = trial.seeds[0]

        def fails_on_first_seed(config, seed, bad=bad):
            if seed == bad:
                raise RuntimeError("diverged")
            return 1.0

        outcome = run_trial(opt, trial, fails_on_first_seed)
        assert [r.status for r in outcome.counted] == ["penalized"] + ["ok"] * (
            len(trial.seeds) - 1)
        if journal is not None:
            assert opt.journal.n_runs() == len(trial.seeds)  # journaled before the tell
        opt.tell_outcome(trial, outcome)
        h = opt.result().history
        assert sorted(h.status) == sorted(["penalized"] + ["ok"] * (len(trial.seeds) - 1))
        opt.close()
