"""Early stopping from partial learning curves (erahbo.optimizer.early_stop, issue 39 item 4).

Tiny learning-curve tables with deterministic values (``_table``) are built in the tests: the
returns of a configuration rise linearly to its final level, the seeds spread around it by a
fixed pattern, and the levels separate good configurations from clearly dominated ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from erahbo.datasets.curves import CurveTable
from erahbo.experiments.mf_erahbo import run_erahbo_es
from erahbo.experiments.mf_peers import parse_mf_method, run_mf_repetition
from erahbo.experiments.partial_replay import PartialReplay, prepare_curve_task
from erahbo.optimizer.core import Optimizer
from erahbo.optimizer.early_stop import CurveModel, EarlyStop, partial_bounds
from erahbo.optimizer.options import Options

STEPS = np.array([100, 200, 300, 400, 500])
N, S = 16, 8


def _table() -> CurveTable:
    """``N`` configurations x ``S`` seeds x 5 checkpoints. Configuration ``i``'s level is
    ``10`` for ``i % 4 == 0`` and ``i / 10`` otherwise (a quarter good, the rest clearly
    dominated); seed ``j`` adds ``0.2 * (j - 3.5) / 3.5``; the return at checkpoint ``c`` is
    ``(c + 1) / 5`` of the final one (curves that rise to it)."""
    cfg, seed, ck = np.meshgrid(np.arange(N), np.arange(S), np.arange(STEPS.size),
                                indexing="ij")
    level = np.where(cfg % 4 == 0, 10.0, cfg / 10.0)
    final = level + 0.2 * (seed - 3.5) / 3.5
    returns = final * (ck + 1.0) / STEPS.size  # (N, S, C)
    wall = (ck + 1.0) * 1.0
    u = (np.arange(N) + 0.5) / N
    configs = pd.DataFrame({"lr": u, "tau": (u * 7) % 1.0})
    meta = {"task": "tiny_es", "algorithm": "dqn", "domain": "cc"}
    return CurveTable(configs=configs, returns=returns, wall_s=wall, steps=STEPS.copy(),
                      env_steps=np.tile(STEPS, (N, 1)), seeds=list(range(1, S + 1)),
                      config_ids=np.arange(N), meta=meta)


def _ctask(alpha: float = 1.0):
    return prepare_curve_task(_table(), alpha=alpha, outcome_processing="none")


def _study(ct, n_curves: int):
    """An optimizer with early stopping over the table, its initial design and its random
    rounds told (final returns of the table), the curves of the first ``n_curves``
    configurations given to the part; returns it with the part and the first trial of a
    round with models (eq. 12's bounds)."""
    task = ct.task
    opt = Optimizer(task.space, "erahbo", budget=60, seed=3, alpha=task.alpha,
                    early_stop=True)
    es = EarlyStop.from_options(opt.options, ct.n_checkpoints)
    given: set[int] = set()
    used: dict[int, int] = {}
    while (trial := opt.ask()) is not None:
        r = opt.open_round(trial.round)
        if trial.phase == "bo" and r is not None and r.rm is not None:
            return opt, es, trial
        cid = int(trial.config_id)
        cols = list(range(used.get(cid, 0), used.get(cid, 0) + len(trial.seeds)))
        used[cid] = cols[-1] + 1
        opt.tell(trial, [float(ct.curves[cid, j, -1]) for j in cols])
        if len(given) < n_curves and cid not in given:
            es.add_curves(cid, ct.curves[cid, cols, :])
            given.add(cid)
    raise AssertionError("no round with models within the budget")


def test_nothing_is_stopped_before_the_minimum_of_completed_curves() -> None:
    """With fewer than MIN_CONFIGS (5) configurations with completed runs the verdict is
    never a stop, even for the worst partial return; with the fifth it is computed."""
    ct = _ctask()
    opt, es, trial = _study(ct, n_curves=4)
    assert es.n_configs == 4 and not es.ready
    worst = float(np.min(ct.curves))
    for c in range(ct.n_checkpoints - 1):
        v = es.verdict(opt, trial, c, [worst] * len(trial.seeds))
        assert not v.stop and v.reason == "too few curves"
    es.add_curves(99, ct.curves[0, :2, :])  # a fifth configuration's completed runs
    assert es.ready
    v = es.verdict(opt, trial, 0, [worst] * len(trial.seeds))
    assert v.reason in ("dominated", "continue") and np.isfinite(v.ucb_mv)


def test_an_optimistic_run_is_never_stopped() -> None:
    """The verdict stops exactly when eq. 12 holds with the partial bound (UCB_MV <= B_t);
    the bound rises with the partial return, so a run at least as good as one that goes on
    goes on too; a run as good as the best curve seen goes on at every checkpoint."""
    ct = _ctask()
    opt, es, trial = _study(ct, n_curves=5)
    n = len(trial.seeds)
    for c in range(ct.n_checkpoints - 1):
        grid = np.linspace(float(np.min(ct.curves[:, :, c])), float(np.max(ct.curves[:, :, c])),
                           25)
        verdicts = [es.verdict(opt, trial, c, [float(x)] * n) for x in grid]
        for v in verdicts:
            assert v.stop == (v.ucb_mv <= v.B_t)
        ucb = np.array([v.ucb_mv for v in verdicts])
        assert np.all(np.diff(ucb) >= -1e-9)
        go = [i for i, v in enumerate(verdicts) if not v.stop]
        assert go and all(not v.stop for v in verdicts[go[0]:])
        assert not verdicts[-1].stop


def test_a_dominated_curve_stops_at_the_first_checkpoint_that_certifies_it() -> None:
    """In the replay, a trial's runs stop at the first checkpoint whose verdict is a stop:
    every earlier verdict of that trial went on, nothing of the run is observed after it, its
    return never enters the data, and its configuration is never proposed again. The clearly
    dominated configurations (level <= 1.5 against 10) are stopped before their final
    checkpoint once the part has its curves; a good one never is."""
    ct = _ctask()
    rp = PartialReplay(ct, seed=0, repetition=0, budget_steps=40 * int(ct.full_steps))
    trace, meta = run_erahbo_es(rp, 7, record=True)
    opt = meta["optimizer"]
    assert meta["n_stopped"] > 0
    by_trial: dict[int, list[tuple]] = {}
    for v in meta["verdicts"]:
        by_trial.setdefault(v[0], []).append(v)
    stopped = {t: vs for t, vs in by_trial.items() if vs[-1][3]}
    assert len(stopped) == meta["n_stopped"]
    for vs in stopped.values():
        assert not any(v[3] for v in vs[:-1])
        assert [v[2] for v in vs] == list(range(len(vs)))  # one verdict per checkpoint
        cid, c = vs[-1][1], vs[-1][2]
        assert c < ct.n_checkpoints - 1
        runs = trace[trace["config_id"] == cid]
        if opt.data.row_of(cid) is None:  # nothing of it in the data: never a final, and
            assert not runs["final"].any()  # marked dominated: never proposed again
            assert not opt.state.allowed[cid]
            assert len(runs.drop_duplicates(["seed"])) == len(vs[-1:])
    # only clearly dominated configurations are stopped, never a good one (level 10); with
    # early_stop_beta = 1 every BO trial at a dominated one, once the part is ready, is
    dominated = {t for t, vs in by_trial.items() if ct.task.returns[vs[0][1]].mean() < 5.0}
    assert set(stopped) <= dominated
    rp = PartialReplay(ct, seed=0, repetition=0, budget_steps=40 * int(ct.full_steps))
    _, meta1 = run_erahbo_es(rp, 7, record=True, early_stop_beta=1.0)
    by1: dict[int, list[tuple]] = {}
    for v in meta1["verdicts"]:
        by1.setdefault(v[0], []).append(v)
    for vs in by1.values():
        assert vs[-1][3] == (ct.task.returns[vs[0][1]].mean() < 5.0)


def test_the_steps_charged_are_the_steps_run() -> None:
    """The replay's steps spent equal the sum over runs of the steps of the last checkpoint
    each reached, stopped runs included; the budget is never exceeded."""
    ct = _ctask()
    budget = 30 * int(ct.full_steps)
    rp = PartialReplay(ct, seed=0, repetition=1, budget_steps=budget)
    trace, meta = run_erahbo_es(rp, 11)
    assert meta["n_stopped"] > 0
    reached = trace.groupby(["config_id", "seed"])["checkpoint_step"].max()
    assert int(reached.sum()) == rp.steps_used == int(trace["steps"].iloc[-1])
    assert rp.steps_used <= budget


def test_with_the_option_off_decisions_equal_the_full_run_optimizer() -> None:
    """Without early stopping the checkpoint-by-checkpoint loop makes full-run erahbo's
    decisions: the same configurations and stored seeds in the same order, the same
    recommendations, as the existing replay (the benchmark's ``erahbo``)."""
    ct = _ctask(alpha=2.0)
    full, _ = run_mf_repetition(ct, parse_mf_method("erahbo"), 0, budget_runs=25)
    rp = PartialReplay(ct, seed=0, repetition=0, budget_steps=25 * ct.full_steps)
    from erahbo.experiments.runner import repetition_seed

    mine, meta = run_erahbo_es(rp, repetition_seed(ct.task, 0, 0), early_stop=False)
    finals = mine[mine["final"]].reset_index(drop=True)
    assert meta["n_stopped"] == 0
    assert finals["config_id"].tolist() == full["config_id"].tolist()
    assert finals["seed"].tolist() == full["seed"].tolist()
    # the first run: the existing replay shows the recommendation after its trial, this
    # loop none yet (a convention of the first row only)
    assert finals["incumbent_id"].tolist()[1:] == full["incumbent_id"].tolist()[1:]


def test_partial_bounds_without_extra_noise_are_the_models_own() -> None:
    """A partial run whose observation has no extra variance counts as a final return would:
    the bound is the round model's own inner bound with that return; an infinite variance
    leaves the bound without it (the posterior given the other points, or after the finals);
    a larger variance moves the mean towards that bound."""
    ct = _ctask()
    opt, _es, trial = _study(ct, n_curves=5)
    r = opt.open_round(trial.round)
    s1 = float(r.rm.s2_one)
    ib = partial_bounds(r.rm, r.row0, r.u, r.cand, [], [2.0], [0.0], 1.0, opt.weight)
    own = r.rm.inner(r.row0, r.u, r.cand, 2.0, s1, 1, 1.0, opt.weight)
    assert ib.mu_f == pytest.approx(own.mu_f, rel=1e-7, abs=1e-7)
    assert ib.sd_f == pytest.approx(own.sd_f, rel=1e-6, abs=1e-7)
    after = partial_bounds(r.rm, r.row0, r.u, r.cand, [1.0], [2.0], [np.inf], 1.0, opt.weight)
    fin = r.rm.inner(r.row0, r.u, r.cand, 1.0, s1, 1, 1.0, opt.weight)
    assert after.mu_f == pytest.approx(fin.mu_f) and after.sd_f == pytest.approx(fin.sd_f)
    prior = partial_bounds(r.rm, r.row0, r.u, r.cand, [], (), (), 1.0, opt.weight)
    near = partial_bounds(r.rm, r.row0, r.u, r.cand, [], [2.0], [1.0], 1.0, opt.weight)
    far = partial_bounds(r.rm, r.row0, r.u, r.cand, [], [2.0], [100.0], 1.0, opt.weight)
    assert abs(far.mu_f - prior.mu_f) < abs(near.mu_f - prior.mu_f)
    assert np.isfinite(far.ucb_mv)


def test_the_curve_model_predicts_from_partial_returns() -> None:
    """Isotonic per checkpoint: a partial return that determines the final one predicts it;
    predictions never leave the range of the finals seen; a checkpoint that says nothing
    (partial returns unrelated to the finals) gives an observation with infinite noise."""
    rng = np.random.default_rng(0)
    finals = rng.normal(size=40)
    informative = finals * 0.5  # c = 0: determines the final
    noise = rng.normal(size=40)  # c = 1: unrelated
    m = CurveModel.fit(np.c_[informative, noise, finals])
    z, tau2 = m.observation(0, 0.5 * finals[3])
    assert z == pytest.approx(finals[3], abs=0.3) and tau2 < 0.2
    mean, _ = m.predict(0, 1e6)
    assert mean <= finals.max() + 1e-12
    _, tau2_1 = m.observation(1, 0.0)
    assert tau2_1 > 10 * tau2
    with pytest.raises(ValueError, match="completed run"):
        CurveModel.fit(np.array([[0.0, 1.0]]))


def test_options_refuse_early_stopping_that_would_do_nothing() -> None:
    """early_stop is off by default; early_stop_beta without it, early stopping under a
    method without ERAHBO's models or under racing are refused with the fix; tell_stopped
    needs the option."""
    assert Options(method="erahbo", budget=50).early_stop is False
    with pytest.raises(ValueError, match="early_stop is off"):
        Options(method="erahbo", budget=50, early_stop_beta=2.0)
    with pytest.raises(ValueError, match="method='erahbo'"):
        Options(method="rahbo", budget=50, early_stop=True)
    with pytest.raises(ValueError, match="stopping='ucb'"):
        Options(method="erahbo", budget=50, early_stop=True, stopping="race")
    ct = _ctask()
    opt = Optimizer(ct.task.space, "erahbo", budget=40, seed=0)
    trial = opt.ask()
    with pytest.raises(ValueError, match="early_stop is off"):
        opt.tell_stopped(trial)


def test_the_verdict_ends_a_round_on_the_measures_stopping_bound(monkeypatch) -> None:
    """Rule: the early-stop verdict's bound is eq. 12's as the optimizer's own rule reads it
    (:func:`erahbo.optimizer.rounds.stop_bounds`): with partial runs that say nothing (an
    infinite variance) it equals that bound after ``x_t``'s final returns, under CVaR too,
    whose bound also hears the configuration's own runs. A round at a configuration with
    returns is certain: 16 configurations, at most 2 seeds a round, 25 rounds or more."""
    from erahbo.optimizer.rounds import stop_bounds

    ct = _ctask()
    opt = Optimizer(ct.task.space, "erahbo", budget=60, seed=3, risk="cvar", q=0.25, k_max=2,
                    early_stop=True)
    es = EarlyStop.from_options(opt.options, ct.n_checkpoints)
    for cid in range(5):  # the part is ready
        es.add_curves(100 + cid, ct.curves[cid, :2, :])
    monkeypatch.setattr(CurveModel, "observation", lambda self, c, v: (float(v), float("inf")))
    used: dict[int, int] = {}
    checked = 0
    while (trial := opt.ask()) is not None:
        r, row = opt.open_round(trial.round), opt.data.row_of(trial.config_id)
        if trial.phase == "bo" and r is not None and r.rm is not None and row is not None:
            v = es.verdict(opt, trial, 0, [0.0] * len(trial.seeds))
            # the pooled statistics the optimizer's tell hands its rule (core: d.stats(row))
            ref = stop_bounds(r.rm, r.row0, r.u, r.cand, *opt.data.stats(row),
                              max(float(r.beta_stop), es.beta), opt.weight, opt.options.beta)
            assert v.ucb_mv == pytest.approx(ref.ucb_mv, rel=1e-9, abs=1e-12)
            checked += 1
        cid = int(trial.config_id)
        cols = [(used.get(cid, 0) + j) % S for j in range(len(trial.seeds))]
        used[cid] = used.get(cid, 0) + len(cols)
        opt.tell(trial, [float(ct.curves[cid, j, -1]) for j in cols])
    assert checked
