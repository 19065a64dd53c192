"""Several configurations in flight (``n_parallel``): ask/tell, believer model, loop, resume."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import erahbo
import erahbo.runtime.journal
from erahbo.gp import FastModel, believer_round
from erahbo.objectives.synthetic import Figure1Task
from erahbo.study import Optimizer
from fault_injection import table, table_objective

KW = {"budget": 60, "seed": 3, "k_min": 2, "k_max": 6, "n_init": 3}


def returns(trial) -> list[float]:
    return [table_objective(trial.config, s) for s in trial.seeds]


def run_out_of_order(opt, pick, check=None) -> None:
    """Keep ``n_parallel`` trials pending; tell ``pending.pop(pick(pending))`` until done."""
    pending: list = []
    while True:
        while opt.n_pending < opt.n_parallel and (t := opt.ask()) is not None:
            pending.append(t)
        if not pending:
            return
        t = pending.pop(pick(pending))
        opt.tell(t, returns(t))
        if check is not None:
            check(pending)


def test_n_parallel_is_validated_and_stored_only_when_not_1():
    with pytest.raises(ValueError, match="n_parallel=0 must be an int >= 1"):
        Optimizer(table(), "rahbo", n_parallel=0)
    assert Optimizer(table(), "rahbo", k=2, **KW).study_settings()["n_parallel"] == 1
    assert Optimizer(table(), "rahbo", k=2, n_parallel=3, **KW).study_settings()["n_parallel"] == 3


@pytest.mark.parametrize("space", ["table", "continuous"])
def test_pending_trials_are_distinct_configurations_and_capped(space):
    sp = table() if space == "table" else {"x0": ("float", 0, 1), "x1": ("float", 0, 1)}
    obj = table_objective if space == "table" else (lambda c, s: c["x0"] + 0.1 * np.sin(s))
    opt = Optimizer(sp, "rahbo", k=2, n_parallel=4, raw_samples=64, n_polish=1, **KW)
    init = [opt.ask() for _ in range(3)]
    assert opt.ask() is None and opt.n_pending == 3  # the first fit waits for the design
    for t in reversed(init):  # any order
        opt.tell(t, [obj(t.config, s) for s in t.seeds])
    batch = [opt.ask() for _ in range(4)]
    assert all(t is not None and t.phase == "bo" for t in batch)
    ids = [t.config_id for t in batch]
    assert len(set(ids)) == 4
    if space == "continuous":  # four different points, not the same argmax four times
        U = np.array([t.u for t in batch])
        assert min(np.linalg.norm(U[i] - U[j]) for i in range(4) for j in range(i)) > 1e-3
    with pytest.raises(RuntimeError, match=r"still pending \(n_parallel=4\)"):
        opt.ask()
    opt.tell(batch[2], [obj(batch[2].config, s) for s in batch[2].seeds])
    nxt = opt.ask()
    assert nxt.config_id not in {batch[i].config_id for i in (0, 1, 3)}
    with pytest.raises(ValueError, match="not the pending one"):
        opt.tell(batch[2], [1.0, 2.0])


@pytest.mark.parametrize("method", ["erahbo", "rahbo", "random"])
def test_parallel_study_spends_exactly_the_budget(method):
    opt = Optimizer(table(), method, k=3, n_parallel=3, **KW)
    rng = np.random.default_rng(0)

    def within_budget(pending) -> None:
        assert opt.n_evals + sum(len(p.seeds) for p in pending) <= KW["budget"]

    run_out_of_order(opt, lambda p: int(rng.integers(len(p))), within_budget)  # random order
    res = opt.result()
    assert res.n_evals == KW["budget"] == len(res.history)
    bo = res.rounds[res.rounds.phase == "bo"]
    assert res.rounds.iteration.is_monotonic_increasing
    assert (bo.k >= 1).all() and (bo.k <= (KW["k_max"] if method == "erahbo" else 3)).all()
    if method == "erahbo":  # rounds interleave: each still follows the inner loop
        assert set(bo.stop_reason) <= {"dominated", "k_max", "budget", "random"}
        done = bo[bo.stop_reason != "budget"]
        assert (done.k >= KW["k_min"]).all()
    # every configuration's seeds are distinct (no two trials drew the same stream slice)
    for _, g in res.history.groupby("config_id"):
        assert g.seed.is_unique


def test_believer_model_shrinks_uncertainty_at_pending_points_only():
    opt = Optimizer(table(), "rahbo", k=2, n_parallel=2, **KW)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, returns(t))
    first = opt.ask()  # pending, not yet in the data
    rm = opt.round_model()
    d, C = opt.data, opt.space.candidates_unit()
    bel = believer_round(rm, d.U, d.ybar, d.s2, d.k, first.u[None, :], np.array([2]),
                         opt.model_settings, C)
    mu0, sd0, _, _ = rm.predict(first.u[None, :])
    mu1, sd1, _, _ = bel.predict(first.u[None, :])
    assert sd1[0] < 0.8 * sd0[0]
    assert mu1[0] == pytest.approx(mu0[0], abs=0.1 * sd0[0] + 1e-9)
    far = C[np.argmax(np.linalg.norm(C - first.u, axis=1))][None, :]
    shrink_far = 1 - bel.predict(far)[1][0] / rm.predict(far)[1][0]
    assert 0 <= shrink_far < 0.5 * (1 - sd1[0] / sd0[0])  # mostly local
    second = opt.ask()
    assert second.config_id != first.config_id


@pytest.mark.parametrize("method", ["erahbo", "rahbo"])
def test_parallel_optimizer_told_at_once_decides_as_the_sequential_one(method):
    """With never more than one trial pending, n_parallel > 1 is the paper's sequential loop."""
    runs = []
    for q in (1, 3):
        opt = Optimizer(table(), method, k=3, n_parallel=q, **KW)
        while (t := opt.ask()) is not None:
            opt.tell(t, returns(t))
        runs.append(opt.result().history[["config_id", "seed", "return"]])
    assert runs[0].equals(runs[1])


def test_optimize_with_n_parallel_runs_trials_concurrently(tmp_path):
    task = Figure1Task()
    res = erahbo.optimize(task, task.space, method="rahbo", k=2, budget=60, seed=0,
                          n_parallel=3, executor="process", workers=2)
    assert res.n_evals == 60 and res.incumbent is not None
    assert res.history.worker.nunique() >= 2


def test_parallel_journal_resumes_with_trials_in_flight(tmp_path):
    path = tmp_path / "p.db"
    opt = Optimizer(table(), "erahbo", journal=path, n_parallel=3, **KW)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, returns(t))
    a, b, c = opt.ask(), opt.ask(), opt.ask()
    opt.tell(b, returns(b))
    d = opt.ask()  # a, c, d in flight at the crash
    opt.journal._abandon()
    opt = Optimizer(table(), "erahbo", journal=path, n_parallel=3, **KW)
    assert opt.n_pending == 3
    again = [opt.ask() for _ in range(3)]
    assert [(t.config_id, t.seeds) for t in again] == [(t.config_id, t.seeds) for t in (a, c, d)]
    for t in again[::-1]:
        opt.tell(t, returns(t))
    while (t := opt.ask()) is not None:
        opt.tell(t, returns(t))
    assert opt.n_evals == KW["budget"]
    opt.close()
    again = Optimizer(table(), "erahbo", journal=path, n_parallel=3, **KW)  # replays it all
    assert again.result().history.seed.tolist() == opt.result().history.seed.tolist()
    again.close()


def test_cli_optimize_parallel_is_a_journaled_setting(tmp_path, monkeypatch, cli_options):
    """--parallel reaches the optimizer and its journal; a resume takes it from there (a
    parallel study resuming exactly: test_parallel_journal_resumes_with_trials_in_flight)."""
    from typer.testing import CliRunner

    from erahbo.cli import app

    monkeypatch.chdir(tmp_path)
    space = tmp_path / "space.json"
    space.write_text('{"x0": ["float", 0, 1], "x1": ["float", 0, 1], "x2": ["float", 0, 1]}')
    res, opts = cli_options(
        "--objective", "fault_injection:table_objective", "--space", str(space),
        "--method", "rahbo", "--k", "2", "--budget", "30", "--n-init", "3", "--parallel", "3",
        "--journal", "p.db", "--out", "p")
    assert res.exit_code == 0, res.output
    assert opts["n_parallel"] == 3
    with erahbo.runtime.journal.Journal.open("p.db") as j:
        assert j.settings["n_parallel"] == 3
    again = CliRunner().invoke(app, ["resume", "p.db", "--no-progress"])  # the same settings
    assert again.exit_code == 0, again.output


def test_drive_propagates_an_evaluation_error_without_hanging():
    from erahbo.optimizer.loop import drive

    opt = Optimizer(table(), "rahbo", k=2, n_parallel=3, **KW)
    told: list[int] = []

    def evaluate(trial):
        if trial.trial_id == 5:
            raise KeyError("worker lost")
        return returns(trial)

    with pytest.raises(KeyError, match="worker lost"):
        drive(opt, evaluate, lambda t, r: (opt.tell(t, r), told.append(t.trial_id)))
    assert 5 not in told and len(told) >= 3  # the initial design was told before


def test_fast_and_reference_engines_agree_with_rounds_interleaved():
    """Open ERAHBO rounds keep the model of their start while other rounds add data."""
    hist = []
    for engine in ("fast", "reference"):
        opt = Optimizer(table(), "erahbo", n_parallel=3, engine=engine, **KW)
        run_out_of_order(opt, lambda p: len(p) // 2)  # a fixed, non-FIFO finishing order
        res = opt.result()
        assert (np.diff(res.history["iteration"]) < 0).any()  # rounds did interleave
        hist.append(res.history[["config_id", "seed"]])
        stops = res.rounds.stop_reason.tolist()
        hist.append(pd.Series(stops))
    assert hist[0].equals(hist[2]) and hist[1].equals(hist[3])


class Crash(BaseException):
    """Stands for a crash of the study process."""


def test_optimize_parallel_crash_then_resume_finishes_the_study(tmp_path):
    from erahbo.study.run import resume

    sp = {"x0": ("float", 0, 1), "x1": ("float", 0, 1), "x2": ("float", 0, 1)}
    path = tmp_path / "c.db"
    told: list[tuple[int, int, float]] = []  # (config_id, seed, return) told before the crash

    def crash(opt, trial, outcome):
        if trial is not None:
            told.extend(zip([trial.config_id] * len(trial.seeds), trial.seeds, outcome.returns,
                            strict=True))
            if len(told) >= 12:
                raise Crash

    with pytest.raises(Crash):
        erahbo.optimize(table_objective, sp, method="rahbo", k=2, budget=40, n_init=3,
                        n_parallel=3, journal=path, callback=crash, raw_samples=64, n_polish=1,
                        journal_info={"objective": "fault_injection:table_objective"})
    res = resume(path)
    assert res.n_evals == 40
    h = res.history
    assert not h.duplicated(["config_id", "seed"]).any()  # nothing counted twice
    kept = set(zip(h.config_id, h.seed, h["return"], strict=True))
    assert set(told) <= kept  # what was told before the crash stands, unchanged


def test_infeasible_and_excluded_configurations_with_trials_in_flight():
    opt = Optimizer(table(), "erahbo", n_parallel=3, failures="exclude", **KW)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, returns(t))
    a, b, c = opt.ask(), opt.ask(), opt.ask()
    opt.tell(b, [float("nan")] * len(b.seeds))  # a failed run: b's configuration is excluded
    opt.exclude(a.config_id)  # a's stored seeds ran out (as the replay does): ends at next ask
    opt.tell(a, returns(a))
    nxt = [opt.ask(), opt.ask()]
    assert {t.config_id for t in nxt}.isdisjoint({a.config_id, b.config_id, c.config_id})
    reasons = dict(zip(opt.result().rounds.config_id, opt.result().rounds.stop_reason,
                       strict=False))
    assert reasons[b.config_id] == "infeasible"
    # its tell may end it first (a random round ends after its first seeds)
    assert reasons[a.config_id] in {"excluded", "dominated", "k_max", "random"}
    for t in (c, *nxt):
        opt.tell(t, returns(t))
    while (t := opt.ask()) is not None:
        assert t.config_id not in (a.config_id, b.config_id)
        opt.tell(t, returns(t))
    assert opt.incumbent_id != b.config_id


def test_believer_model_of_the_fast_engine_matches_the_reference_one():
    """n_parallel > 1 chooses on the fast engine's believer model: same posterior, same choice."""
    opt = Optimizer(table(), "rahbo", k=2, n_parallel=2, **KW)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, returns(t))
    pending = [opt.ask()]
    rm, d, C = opt.round_model(), opt.data, opt.space.candidates_unit()
    args = (d.U, d.ybar, d.s2, d.k, np.array([t.u for t in pending]), np.array([2]),
            opt.model_settings, C)
    ref = believer_round(rm, *args)
    fast = believer_round(rm, *args, fast=FastModel(opt.model_settings, C).copy())
    assert type(fast).__name__ == "FastRound"
    for a, b in zip(ref.predict(C), fast.predict(C), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
    allowed = np.ones(len(C), dtype=bool)
    assert ref.select(allowed, 1.0) == pytest.approx(fast.select(allowed, 1.0))
