"""random_interleave: every other BO round random while the study is young (issue 15)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import erahbo
from conftest import corner_peak, table3
from erahbo.optimizer.random_design import is_random_round


def _table() -> pd.DataFrame:
    return table3(200, seed=3)


_objective = corner_peak


def _study(**kw) -> erahbo.Result:
    opt = erahbo.Optimizer(_table(), budget=160, seed=2, **kw)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    return opt.result()


def _runs_before(result: erahbo.Result) -> pd.Series:
    """Runs told before each round started (rounds are sequential here)."""
    r = result.rounds
    return r["k"].cumsum().shift(fill_value=0).set_axis(r.index)


def test_the_first_rounds_alternate_random_and_acquisition():
    res = _study(random_interleave=60)
    r = res.rounds
    before = _runs_before(res)
    bo = r[r.phase == "bo"]
    early, late = bo[before[bo.index] < 60], bo[before[bo.index] >= 60]
    assert len(early) >= 6 and len(late) >= 6
    rand = early.iloc[0::2]  # the first BO round after the design, the third, ...
    # a random round has no models: no B_t, no bounds, k_min seeds and no more
    assert (rand.stop_reason == "random").all() and (rand.k == res.settings["k_min"]).all()
    assert rand.B_t.isna().all() and rand.ucb_mv.isna().all()
    # each picks a configuration not evaluated before
    seen = set(r.config_id[r.phase == "init"])
    for _, row in bo.iterrows():
        if row.stop_reason == "random":
            assert row.config_id not in seen
        seen.add(row.config_id)
    # the rounds in between, and every round after 60 runs, are the acquisition's
    model_rounds = pd.concat([early.iloc[1::2], late])
    assert (model_rounds.stop_reason != "random").all()
    assert model_rounds.B_t.notna().all()


def test_zero_is_the_previous_search_and_the_default_differs():
    off = _study(random_interleave=0)
    assert "random" not in set(off.rounds.stop_reason)
    default = _study()  # 50 for ERAHBO
    assert (default.rounds.stop_reason == "random").sum() >= 2
    first_bo = lambda res: res.rounds[res.rounds.phase == "bo"].config_id.iloc[0]  # noqa: E731
    assert first_bo(default) != first_bo(off)
    # the same initial design: the random rounds change the search, not the start
    init = lambda res: list(res.rounds[res.rounds.phase == "init"].config_id)  # noqa: E731
    assert init(default) == init(off)


def test_a_fixed_k_method_takes_its_k_seeds_in_a_random_round():
    res = _study(method="rahbo", k=3, random_interleave=40)
    bo = res.rounds[res.rounds.phase == "bo"]
    rand = bo[bo.stop_reason == "random"]
    assert len(rand) >= 2 and (rand.k == 3).all()


def test_journaled_study_with_random_rounds_resumes_exactly(tmp_path):
    db = tmp_path / "s.db"
    first = erahbo.optimize(_objective, _table(), budget=80, seed=4, journal=db)
    assert "random" in set(first.rounds.stop_reason)
    again = erahbo.resume(db, _objective, space=_table())
    cols = ["config_id", "seed", "return"]
    assert again.history[cols].equals(first.history[cols])


def test_rule():
    assert [is_random_round(t, 0, 50) for t in range(1, 5)] == [True, False, True, False]
    assert not is_random_round(1, 49.0, 0) and not is_random_round(3, 50, 50)


def test_after_a_warm_start_the_first_bo_round_is_random_too():
    rng = np.random.default_rng(0)
    table = _table()
    rows = [{"config_id": int(i), "seed": s, "return": _objective(table.iloc[i].to_dict(), s)}
            for i in rng.choice(len(table), 3, replace=False) for s in (1, 2)]
    opt = erahbo.Optimizer(table, budget=40, seed=1, n_init=0, warm_start=pd.DataFrame(rows))
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    bo = opt.result().rounds.query("phase == 'bo'")
    assert list(bo.stop_reason.iloc[0:5:2]) == ["random"] * 3
    assert "random" not in set(bo.stop_reason.iloc[1:5:2])


def _last_random_round_start(res: erahbo.Result) -> float:
    """Runs told before the last random round started."""
    before = _runs_before(res)
    return float(before[res.rounds.stop_reason == "random"].max())


def test_the_default_length_is_the_spaces_a_table_50_runs_a_continuous_space_20():
    """Rule (session 32): without ``random_interleave`` given, ERAHBO's random rounds run
    while fewer than 50 runs are spent on a finite table and 20 on a continuous space; the
    study settings store the value in force; given by name it is the same on both."""
    space = {"a": ("float", 0.0, 1.0), "b": ("float", 0.0, 1.0), "c": ("float", 0.0, 1.0)}
    table = _table()
    assert list(table.columns) == list(space)  # the same space, once as 200 candidate rows
    on_table = _study()
    assert on_table.settings["random_interleave"] == 50
    # a round adds at most k_max = 20 seeds: a random round starts somewhere in [28, 50)
    assert 20 <= _last_random_round_start(on_table) < 50
    opt = erahbo.Optimizer(space, budget=160, seed=2)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    continuous = opt.result()
    assert continuous.settings["random_interleave"] == 20
    assert _last_random_round_start(continuous) < 20
    bo = continuous.rounds[continuous.rounds.phase == "bo"]
    assert bo.stop_reason.iloc[0] == "random"  # the first BO round starts at 10 runs (5 x 2)
    for kw in ({"random_interleave": 35}, {"preset": "paper", "budget": 500},
               {"method": "rahbo"}):
        want = kw.get("random_interleave", 0)
        assert erahbo.Optimizer(table, **{"budget": 160, **kw}).options.random_interleave == want
        assert erahbo.Optimizer(space, **{"budget": 160, **kw}).options.random_interleave == want
