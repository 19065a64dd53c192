"""challengers: after the random rounds, seeds for a configuration whose runs beat the
recommendation's (issue 15, session 13)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import erahbo
from conftest import NEEDLES, needle_records, needle_return
from erahbo.datasets.loaders import load_task
from erahbo.experiments import StudySettings, parse_method, prepare_task, run_repetition
from erahbo.gp.bounds import mean_variance
from erahbo.optimizer.challenger import Z_SE, challenger_row, is_challenger_round
from erahbo.recommendation import mv_standard_error, sample_mv_bound

DATA = Path(__file__).resolve().parents[1] / "data" / "arlbench"


# The defaults of sessions 12-15 (2 seeds per configuration first, the paper's fitted noise of
# the variance GP and its prior): the mountain-car example
# below pins a trajectory under them.
TWO = {"n_init": 5, "k_init": 2, "k_min": 2, "var_noise_prior": -4.0, "var_noise": "fitted"}


def test_challenger_row_is_the_best_bound_above_the_incumbent():
    ybar = np.array([1.0, 1.5, 1.2, 3.0, 0.2])
    s2 = np.array([0.1, 0.01, 0.02, 0.5, 0.0])
    k = np.array([20, 2, 4, 1, 2])
    bound = mean_variance(ybar, s2, 1.0) - Z_SE * mv_standard_error(np.sqrt(s2), k, 1.0)
    assert bound[1] > bound[2] > mean_variance(1.0, 0.1, 1.0)  # rows 1, 2 beat the incumbent
    every = np.ones(5, dtype=bool)
    assert challenger_row(ybar, s2, k, 1.0, 0, every) == 1
    # a closed row (at recommend_seeds, no seeds left, not a candidate) is passed over
    assert challenger_row(ybar, s2, k, 1.0, 0, np.array([1, 0, 1, 1, 1], dtype=bool)) == 2
    # one seed has no sample variance: never a challenger, however high its mean (row 3)
    assert challenger_row(ybar, s2, k, 1.0, 0, np.array([1, 0, 0, 1, 1], dtype=bool)) is None
    # the incumbent never challenges itself, and nothing beats the best row
    assert challenger_row(ybar, s2, k, 1.0, 1, every) is None


def test_rounds_alternate_after_the_random_rounds():
    assert [is_challenger_round(t, 60, 50, True) for t in range(1, 5)] == [True, False] * 2
    assert not is_challenger_round(1, 49, 50, True)  # still a random round
    assert not is_challenger_round(1, 60, 50, False)
    assert is_challenger_round(1, 0, 0, True)  # no random rounds: from the first BO round


def _needle_study(journal=None, stop_after_challenger: bool = False, **kw):
    """The needle scenario (conftest) run to its budget: random rounds during the first 6
    runs, then challenger rounds (three needles are challengers by construction)."""
    opt = _needle_optimizer(random_interleave=6, budget=40, journal=journal, **kw)
    x: dict[int, float] = {}
    while (trial := opt.ask()) is not None:
        x[trial.config_id] = trial.config["x"]
        opt.tell(trial, [needle_return(x[trial.config_id], s) for s in trial.seeds])
        if stop_after_challenger and (opt.result().rounds.phase == "challenger").any():
            break
    return opt


def test_a_study_runs_challenger_rounds_on_evaluated_configurations():
    """After the random rounds, the rounds that were random go to the challengers: each
    re-runs a configuration evaluated before it (a needle), with at least k_min seeds (then
    the stopping rule); without challengers the same study has none, and is the same up to
    the first one."""
    opt = _needle_study()
    r = opt.result().rounds
    r = r[r.phase != "warm"].reset_index(drop=True)
    ch = r[r.phase == "challenger"]
    assert len(ch) >= 2
    before = r["k"].cumsum().shift(fill_value=0)
    assert (before[ch.index] >= 6).all()  # after the random rounds only
    assert (r.loc[: ch.index[0] - 1, "stop_reason"] == "random").any()
    h, k_min = opt.result().history, opt.options.k_min
    for _, row in ch.iterrows():  # each re-runs a configuration evaluated before it
        assert row.config_id in set(h.loc[h["iteration"] < row.iteration, "config_id"])
        assert row.k >= k_min and row.stop_reason in ("dominated", "k_max", "max_seeds",
                                                      "budget")
    off = _needle_study(challengers=False)
    roff = off.result().rounds
    roff = roff[roff.phase != "warm"].reset_index(drop=True)
    assert "challenger" not in set(roff.phase)
    # up to the first challenger round the two studies are the same
    first = ch.index[0]
    pd.testing.assert_frame_equal(r.loc[: first - 1], roff.loc[: first - 1])


def test_a_challenger_study_resumes_exactly(tmp_path):
    """Cut after its first challenger round and resumed from the journal: the same runs as
    the uninterrupted study."""
    path = tmp_path / "study.sqlite"
    opt = _needle_study(journal=path, stop_after_challenger=True)
    opt.close()
    again = _needle_study(journal=path)
    cols = ["config_id", "seed", "return"]
    pd.testing.assert_frame_equal(again.result().history[cols],
                                  _needle_study().result().history[cols])
    again.close()


def _needle_optimizer(**kw) -> erahbo.Optimizer:
    """An optimizer started on conftest's needle scenario, challenger rounds from round 1
    (``kw`` overrides these options)."""
    # var_noise "fitted": the scenario is built for a variance GP that smooths the needles'
    # tiny spread into their noisy region (the default until session 24); the default "log" GP
    # reads it, and argmax LCB_MV is then a needle: no challenger is left to test
    # (tests/test_recommendation.py::test_the_rule_acts_on_a_well_sampled_needle)
    opts = dict(budget=30, seed=0, n_init=0, warm_start=needle_records(), random_interleave=0,
                k_max=10, raw_samples=128, n_polish=2, var_noise="fitted")
    return erahbo.Optimizer({"x": ("float", 0.0, 1.0)}, **{**opts, **kw})


def _needle_ids(opt: erahbo.Optimizer) -> list[int]:
    """Config ids of the needles, best first."""
    c = opt.result().configs.set_index("x")
    return [int(c.loc[x, "config_id"]) for x in sorted(NEEDLES, key=NEEDLES.get, reverse=True)]


def test_the_needle_scenario_has_three_challengers():
    """The scenario below holds by construction: the incumbent is a quiet configuration, far
    ahead of every needle by LCB_MV, and each needle's sample bound beats its sample MV by far
    more than any rounding."""
    opt = _needle_optimizer()
    needles = _needle_ids(opt)
    assert opt.ask().config_id == needles[0]  # round 1 (fits the GPs; no data added yet)
    c = opt.result().configs.set_index("config_id")
    assert c.loc[opt.incumbent_id, "x"] <= 0.3  # quiet
    assert c.loc[opt.incumbent_id, "lcb_mv"] - c.loc[needles, "lcb_mv"].max() > 1.0
    sample, bound = sample_mv_bound(c["mean"], c["var"], c["k"], 1.0, Z_SE)
    beats = pd.Series(bound - sample[c.index.get_loc(opt.incumbent_id)], index=c.index)
    assert (beats[needles] > 1.5).all()
    assert not (beats.drop(needles) > 0).any()  # no other challenger


def test_a_challenger_is_never_a_configuration_with_a_pending_trial():
    """With configurations in flight (``n_parallel``) a challenger round must not re-run a
    configuration whose seeds are still being trained: it would be handed the same seeds.

    On the needle scenario rounds 1 and 3 are challenger rounds (``random_interleave=0``):
    round 1 takes the best needle; while its trial is pending, round 3 takes the second (round
    2, the acquisition's, takes a new configuration)."""
    opt = _needle_optimizer(n_parallel=3)
    best, second, _ = _needle_ids(opt)
    first = [opt.ask() for _ in range(3)]  # rounds 1, 2, 3, all pending at once
    assert None not in first
    assert first[0].config_id == best and first[2].config_id == second
    assert first[1].config_id not in _needle_ids(opt)
    x = {t.config_id: t.config["x"] for t in first}
    pending, ran = list(first), []
    while True:
        while len(pending) < 3 and (trial := opt.ask()) is not None:
            assert all(p.config_id != trial.config_id or p.round == trial.round
                       for p in pending)
            pending.append(trial)
            x[trial.config_id] = trial.config["x"]
        if not pending:
            break
        trial = pending.pop(0)
        ran += [(trial.config_id, s) for s in trial.seeds]
        opt.tell(trial, [needle_return(x[trial.config_id], s) for s in trial.seeds])
    r = opt.result().rounds.set_index("iteration")
    assert r.loc[first[0].round, "phase"] == r.loc[first[2].round, "phase"] == "challenger"
    assert len(ran) == len(set(ran))  # every (configuration, seed) once


def _mountain_car(method: str, repetition: int) -> int:
    task = prepare_task(load_task(DATA / "ppo_cc_mountain_car.parquet"), alpha=1.0,
                        outcome_processing="minmax")
    spec = parse_method(method)  # under the defaults of sessions 12-15 (TWO, no refit)
    spec = replace(spec, options={**spec.options, **TWO, "refit_growth": 0.0})
    trace, _ = run_repetition(task, spec, repetition,
                              StudySettings(budget=1000, alpha=1.0, protocol="user",
                                            outcome_processing="minmax"))
    return int(trace["incumbent_id"].iloc[-1])


@pytest.mark.slow  # pins one trajectory of a 1000-run replay: BLAS rounding may move it
def test_the_needle_of_ppo_mountain_car_is_found_with_challengers():
    """Configuration 79 reaches the flag on 44 of 50 seeds; its neighbours never do. In
    repetition 14 of the user's protocol (alpha 1, min-max; 2 seeds per configuration first,
    the defaults of sessions 12-15, which fitted the GPs' hyperparameters once) it keeps few
    seeds without challenger rounds, and a quiet configuration is recommended; challenger
    rounds give it seeds and recommend it. (Session 26's refits move the trajectory: with them
    repetition 14 of these settings misses the needle; today's default finds it in 20 of 20
    repetitions at 1000 runs and 18 of 20 at 200, session 28.) The real-data example of the
    rule; the rule itself, built so that it holds on any machine: the needle-scenario tests
    above and test_recommendation.py::test_the_rule_acts_on_a_well_sampled_needle."""
    assert _mountain_car("erahbo-ch0", 14) != 79
    assert _mountain_car("erahbo", 14) == 79


