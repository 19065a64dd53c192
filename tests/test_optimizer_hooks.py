"""Optimizer hooks for the integrations: fit_hyperparameters, stopping_decision, ask(kind=...),
open_round and seeds_left."""

import math

import pytest

from erahbo.objectives.synthetic import Figure1Task
from erahbo.optimizer import Optimizer


def test_stopping_decision_is_the_inner_loops_rule():
    """Asked at a round's start, the hook predicts exactly where the optimizer stops."""
    task = Figure1Task()
    opt = Optimizer(task.space, method="erahbo", budget=160, seed=1, k_min=2, k_max=8,
                    n_init=4, k_init=4, raw_samples=128, n_polish=2)
    checked = stopped_early = 0
    while (trial := opt.ask()) is not None:
        if trial.phase == "bo" and opt.data.row_of(trial.config_id) is None \
                and len(trial.seeds) == 2:  # a new round on a new configuration
            returns = [task(trial.config, s) for s in range(1000, 1008)]
            k_pred = next((k for k in range(2, 9)
                           if opt.stopping_decision(trial.config, returns[:k])[0]), None)
            opt.tell(trial, returns[:2])
            k = 2
            while (nxt := opt.ask()) is not None and nxt.round == trial.round:
                opt.tell(nxt, [returns[k]])
                k += 1
            rounds = opt.result().rounds
            row = rounds[rounds["iteration"] == trial.round].iloc[0]
            if row["stop_reason"] not in ("budget", "random"):  # random rounds: no rule
                assert k_pred == row["k"] == k, (k_pred, row["k"], k)
                checked += 1
                stopped_early += row["stop_reason"] == "dominated" and k < 8
            if nxt is None:
                break
            opt.tell(nxt, [task(nxt.config, s) for s in nxt.seeds])
        else:
            opt.tell(trial, [task(trial.config, s) for s in trial.seeds])
    assert checked >= 5 and stopped_early >= 1


def test_stopping_decision_before_k_min_fixed_k_and_inputs():
    task = Figure1Task()
    opt = Optimizer(task.space, method="rahbo", k=3, budget=40, seed=0, n_init=3, k_init=3)
    assert opt.stopping_decision({"x": 0.5}, [1.0, 2.0])[0] is None
    assert opt.stopping_decision({"x": 0.5}, [1.0, 2.0, 3.0])[0] == "fixed_k"
    e = Optimizer(task.space, budget=40, seed=0, n_init=3, k_init=3)
    assert e.stopping_decision({"x": 0.5}, [1.0])[0] is None  # no data, before k_min
    with pytest.raises(ValueError, match="finite"):
        e.stopping_decision({"x": 0.5}, [1.0, math.nan])


def test_fit_hyperparameters_are_shared_by_another_optimizer():
    task = Figure1Task()
    opt = Optimizer(task.space, budget=40, seed=0, n_init=4, k_init=4)
    with pytest.raises(ValueError, match="no evaluated"):
        opt.fit_hyperparameters()
    records = []
    for _ in range(4):
        t = opt.ask()
        returns = [task(t.config, s) for s in t.seeds]
        opt.tell(t, returns)
        records.append({"config": t.config, "returns": returns, "seeds": list(t.seeds)})
    hyper = opt.fit_hyperparameters()
    twin = Optimizer(task.space, budget=40, seed=0, n_init=0, warm_start=records,
                     hyperparameters=hyper)
    assert twin.recommend() == opt.recommend()
    assert twin.incumbent_mv == pytest.approx(opt.incumbent_mv)


def _drive(opt, task, kind=None):
    """Run ``opt`` to its budget, asking new rounds of ``kind``; the asked trials."""
    out = []
    while (t := opt.ask(kind=kind)) is not None:
        out.append((t.round, t.config_id, tuple(t.seeds), t.phase))
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    return out


def test_ask_of_a_kind_is_the_schedules_round_when_the_schedule_names_it():
    """Forcing the kind the schedule would pick changes nothing else: under the paper preset
    every BO round is an acquisition round, so ask(kind="acquisition") asks the same trials."""
    task = Figure1Task()
    kw = dict(preset="paper", budget=40, seed=3, n_init=3, k_init=3, raw_samples=64,
              n_polish=1)
    plain = _drive(Optimizer(task.space, **kw), task)
    forced = _drive(Optimizer(task.space, **kw), task, kind="acquisition")
    assert forced == plain and len(plain) > 6


def test_ask_of_a_kind_opens_that_round_continues_open_rounds_and_refuses_other_kinds():
    """A random round ends after its first seeds (stop reason "random"); an open round is
    continued whatever the kind; open_round and seeds_left read the round and the caps."""
    task = Figure1Task()
    opt = Optimizer(task.space, budget=60, seed=0, n_init=3, k_init=3, k_min=2, k_max=6,
                    beta_stop=1e6, raw_samples=64, n_polish=1)
    with pytest.raises(ValueError, match="kind='bo' must be one of acquisition, random"):
        opt.ask(kind="bo")
    for _ in range(3):  # the initial design: kind does not apply
        t = opt.ask(kind="random")
        assert t.phase == "init" and opt.open_round(t.round) is None
        opt.tell(t, [task(t.config, s) for s in t.seeds])
    t = opt.ask(kind="random")
    r = opt.open_round(t.round)
    assert t.phase == "bo" and r is not None and r.k == 0 and r.config_id == t.config_id
    assert opt.seeds_left(t.config_id) >= 1
    opt.tell(t, [task(t.config, s) for s in t.seeds])
    assert opt.open_round(t.round) is None
    assert opt.result().rounds.iloc[-1]["stop_reason"] == "random"
    t = opt.ask(kind="acquisition")  # beta_stop 1e6: never dominated, on to k_max
    opt.tell(t, [task(t.config, s) for s in t.seeds])
    nxt = opt.ask(kind="random")
    assert nxt.round == t.round and opt.open_round(t.round).k == len(t.seeds) == 2


def test_a_journaled_optimizer_refuses_a_round_kind(tmp_path):
    """A resume replays the strategy's schedule, so a journaled ask takes no kind."""
    import pytest

    import erahbo

    opt = erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, budget=20, journal=tmp_path / "j.db")
    with pytest.raises(TypeError, match="journaled study follows its strategy's round schedule"):
        opt.ask(kind="random")
    opt.close()
