"""challengers: after the random rounds, seeds for a configuration whose runs beat the
recommendation's (issue 15, session 13)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import erahbo
from erahbo.acquisition import mean_variance
from erahbo.cli import app
from erahbo.datasets.loaders import load_task
from erahbo.experiments import StudySettings, parse_method, prepare_task, run_repetition
from erahbo.models import GPHyper
from erahbo.objectives.synthetic import Figure1Task
from erahbo.optimizer.challengers import Z_SE, challenger_row, is_challenger_round
from erahbo.optimizer.options import Options
from erahbo.optimizer.study import study_options
from erahbo.recommendation import mv_standard_error, sample_mv_bound

DATA = Path(__file__).resolve().parents[1] / "data" / "arlbench"


TASK = Figure1Task()


def _study(**kw) -> erahbo.Result:
    opt = erahbo.Optimizer(TASK.space, budget=150, seed=1, **kw)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [TASK(trial.config, s) for s in trial.seeds])
    return opt.result()


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


def test_defaults_presets_settings_and_validation():
    assert Options(method="erahbo").challengers is True
    assert Options(method="erahbo", preset="paper").challengers is False
    assert Options(method="rahbo").challengers is False
    assert Options(method="erahbo").settings_json()["challengers"] is True
    assert "challengers" not in Options(method="erahbo", challengers=False).settings_json()
    assert study_options({"method": "erahbo"})["challengers"] is False  # older journals
    with pytest.raises(ValueError, match="challengers='yes' must be True or False"):
        Options(challengers="yes")
    with pytest.raises(ValueError, match="method='random' has no recommendation"):
        Options(method="random", challengers=True)


def test_a_study_runs_challenger_rounds_on_evaluated_configurations():
    res = _study()
    r = res.rounds
    ch = r[r.phase == "challenger"]
    assert len(ch) >= 2
    before = r["k"].cumsum().shift(fill_value=0)
    assert (before[ch.index] >= 50).all()  # after the random rounds only
    for i, row in ch.iterrows():  # each re-runs a configuration evaluated before it
        assert row.config_id in set(r.loc[: i - 1, "config_id"])
        assert row.k >= 2 and row.stop_reason in ("dominated", "k_max", "max_seeds", "budget")
    off = _study(challengers=False)
    assert "challenger" not in set(off.rounds.phase)
    # up to the first challenger round the two studies are the same
    first = ch.index[0]
    pd.testing.assert_frame_equal(r.loc[: first - 1], off.rounds.loc[: first - 1])


def test_a_challenger_study_resumes_exactly(tmp_path):
    path = tmp_path / "study.sqlite"
    opt = erahbo.Optimizer(TASK.space, budget=150, seed=1, journal=path)
    while not (opt.result().rounds.phase == "challenger").any():  # part-way, after one
        trial = opt.ask()
        opt.tell(trial, [TASK(trial.config, s) for s in trial.seeds])
    opt.close()
    again = erahbo.Optimizer(TASK.space, budget=150, seed=1, journal=path)
    while (trial := again.ask()) is not None:
        again.tell(trial, [TASK(trial.config, s) for s in trial.seeds])
    cols = ["config_id", "seed", "return"]
    pd.testing.assert_frame_equal(again.result().history[cols], _study().history[cols])
    again.close()


# A finite table built so that challenger rounds are certain (fixed hyperparameters, warm
# runs): configuration 10 has 20 quiet seeds (sample MV about 1) and is the recommendation at
# recommend_beta 50; the three "needles" 2, 17 and 6 return 3.2, 3.1 and 3.0 (+0.01 on odd
# seeds) on 2 seeds each, so each one's sample MV less 1.5 standard errors beats the
# incumbent's by about 2; six other configurations return 1 +- 1.
_TABLE = pd.DataFrame({"x": np.linspace(0, 1, 21)})
_QUIET, _NEEDLES = 10, {2: 3.2, 17: 3.1, 6: 3.0}


def _needle_returns(cid: int, seed: int) -> float:
    if cid in _NEEDLES:
        return _NEEDLES[cid] + 0.01 * (seed % 2)
    return 1.0 + (0.1 if cid == _QUIET else 1.0) * (-1) ** (seed % 2)


def _needle_optimizer(**kw) -> erahbo.Optimizer:
    warm = [{"row": _QUIET, "returns": [_needle_returns(_QUIET, s) for s in range(20)],
             "seeds": list(range(20))}]
    warm += [{"row": c, "returns": [_needle_returns(c, s) for s in (0, 1)], "seeds": [0, 1]}
             for c in (*_NEEDLES, 0, 4, 8, 13, 15, 20)]
    hyper = (GPHyper("matern52", np.array([0.2])),
             GPHyper("matern52", np.array([0.2]), noise=0.1))
    return erahbo.Optimizer(erahbo.SearchSpace.from_table(_TABLE), budget=30, seed=0,
                            warm_start=warm, n_init=0, hyperparameters=hyper,
                            random_interleave=0, recommend_beta=50.0, **kw)


def test_the_needle_table_has_three_challengers():
    """The scenario below holds by construction: the incumbent is the quiet configuration and
    each needle's sample bound beats its sample MV by far more than any rounding."""
    opt = _needle_optimizer()
    assert opt.incumbent_id == _QUIET
    c = opt.result().configs.set_index("config_id")
    lcb = c["lcb_mv"].sort_values()
    assert lcb.index[-1] == _QUIET and lcb.iloc[-1] - lcb.iloc[-2] > 0.5  # no near tie
    sample, bound = sample_mv_bound(c["mean"], c["var"], c["k"], 1.0, Z_SE)
    beats = bound - sample[c.index.get_loc(_QUIET)]
    assert (beats[[c.index.get_loc(i) for i in _NEEDLES]] > 1.5).all()
    others = [c.index.get_loc(i) for i in c.index if i not in _NEEDLES and i != _QUIET]
    assert not (beats[others] > 0).any()  # no other challenger


def test_a_challenger_is_never_a_configuration_with_a_pending_trial():
    """With configurations in flight (``n_parallel``) a challenger round must not re-run a
    configuration whose seeds are still being trained: it would be handed the same seeds.

    Rounds 1 and 3 after the warm start are challenger rounds (``random_interleave=0``). Round
    1 takes the best needle, 2; while its trial is pending, round 3 must take the best needle
    that has no pending trial (17, or 6 if round 2's acquisition chose 17)."""
    opt = _needle_optimizer(n_parallel=3)
    first = [opt.ask() for _ in range(3)]  # rounds 1, 2, 3, all pending at once
    assert None not in first and len({t.config_id for t in first}) == 3
    assert first[0].config_id == 2
    expected = next(c for c in (17, 6) if c != first[1].config_id)
    assert first[2].config_id == expected
    pending, ran = list(first), []
    while True:
        while len(pending) < 3 and (trial := opt.ask()) is not None:
            assert all(p.config_id != trial.config_id or p.round == trial.round
                       for p in pending)
            pending.append(trial)
        if not pending:
            break
        trial = pending.pop(0)
        ran += [(trial.config_id, s) for s in trial.seeds]
        opt.tell(trial, [_needle_returns(trial.config_id, s) for s in trial.seeds])
    r = opt.result().rounds.set_index("iteration")
    assert r.loc[first[0].round, "phase"] == r.loc[first[2].round, "phase"] == "challenger"
    assert len(ran) == len(set(ran))  # every (configuration, seed) once


def _mountain_car(method: str, repetition: int) -> int:
    task = prepare_task(load_task(DATA / "ppo_cc_mountain_car.parquet"), alpha=1.0,
                        outcome_processing="minmax")
    trace, _ = run_repetition(task, parse_method(method), repetition,
                              StudySettings(budget=1000, alpha=1.0, protocol="user",
                                            outcome_processing="minmax"))
    return int(trace["incumbent_id"].iloc[-1])


def test_the_needle_of_ppo_mountain_car_is_found_with_challengers():
    """Configuration 79 reaches the flag on 44 of 50 seeds; its neighbours never do. In
    repetition 14 of the user's protocol (alpha 1, min-max) it keeps few seeds without
    challenger rounds, and a quiet configuration is recommended; challenger rounds give it
    seeds and recommend it."""
    assert _mountain_car("erahbo-ch0", 14) != 79
    assert _mountain_car("erahbo", 14) == 79


def test_cli_flags_reach_the_study(tmp_path):
    runner = CliRunner()
    phases = {}
    for flag in ("--challengers", "--no-challengers"):
        out = tmp_path / flag
        res = runner.invoke(app, ["optimize", "--objective", "figure1", "--budget", "150",
                                  flag, "--random-top", "1", "--out", str(out), "--no-progress"])
        assert res.exit_code == 0, res.output
        phases[flag] = set(pd.read_csv(out / "rounds.csv").phase)
    assert "challenger" in phases["--challengers"]
    assert "challenger" not in phases["--no-challengers"]

