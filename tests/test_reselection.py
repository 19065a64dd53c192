"""max_seeds: a re-selected configuration cannot pool seeds without end (issue 15, item 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import erahbo
from conftest import centre_peak, table3


def _table() -> pd.DataFrame:
    return table3(256, seed=0)


_objective = centre_peak


def _study(method: str, **kw) -> erahbo.Result:
    opt = erahbo.Optimizer(_table(), method, budget=400, seed=0, k_max=10, **kw)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    return opt.result()


@pytest.mark.parametrize("method,kw", [("erahbo", {"pool_share": 0.0}), ("rahbo", {"k": 2})])
def test_the_cap_keeps_the_search_exploring(method, kw):
    capped = _study(method, **kw)  # default: max_seeds = k_max = 10 (strict: no pool)
    free = _study(method, max_seeds=0, **kw)
    per_cfg = capped.history.groupby("config_id").size()
    assert per_cfg.max() <= 10 and capped.n_evals >= 399
    assert free.history.groupby("config_id").size().max() > 10  # re-selection pools seeds
    assert per_cfg.size > free.history.groupby("config_id").size().size
    # configurations at the cap still compete for the recommendation and B_t
    assert capped.incumbent_id in set(capped.history.config_id)
    full = set(per_cfg[per_cfg == 10].index)
    assert full  # some configuration reached the cap ...
    bo = capped.rounds[capped.rounds.phase == "bo"]
    later = bo[bo.iteration > bo[bo.config_id.isin(full)].iteration.min()]
    assert not later.empty
    # ... and a round started at it afterwards never exceeds the cap
    assert (bo.k_total <= 10).all()
    assert set(bo.stop_reason) <= {"dominated", "k_max", "fixed_k", "budget", "max_seeds", "random"}


def test_a_capped_study_resumes_exactly(tmp_path):  # (settings: test_option_table.py)
    db = tmp_path / "s.db"
    first = erahbo.optimize(_objective, _table(), budget=60, seed=1, k_max=6, pool_share=0.0,
                            journal=db)  # a strict cap
    assert first.history.groupby("config_id").size().max() <= 6
    again = erahbo.resume(db, _objective, space=_table())
    cols = ["config_id", "seed", "return"]
    assert again.history[cols].equals(first.history[cols])


def test_pool_share_bounds_the_seeds_beyond_the_cap(tmp_path):
    res = _study("erahbo", pool_share=0.2)
    per_cfg = res.history.groupby("config_id").size()
    beyond = int(np.maximum(per_cfg - 10, 0).sum())
    assert per_cfg.max() > 10  # the pool lets re-selected configurations go past the cap ...
    assert 0 < beyond <= 0.2 * res.n_evals  # ... within the share of all runs
    # after every run, the seeds beyond the cap never exceeded the share of the runs so far
    h = res.history.sort_values("iteration")
    counts: dict[int, int] = {}
    over = 0
    for n, cid in enumerate(h.config_id, start=1):
        counts[cid] = counts.get(cid, 0) + 1
        over += counts[cid] > 10
        assert over <= 0.2 * n + 1e-9
    assert per_cfg.size > 10  # and the search still explores
    strict = _study("erahbo", pool_share=0.0)
    assert strict.history.groupby("config_id").size().max() <= 10


def test_seed_share_grows_the_cap_with_the_study():
    res = _study("erahbo", seed_share=0.05, pool_share=0.0)
    h = res.history.sort_values("iteration")
    counts: dict[int, int] = {}
    for n, cid in enumerate(h.config_id, start=1):  # after every run: at most 5 % of the runs
        counts[cid] = counts.get(cid, 0) + 1  # so far, never below one round's 2 seeds, and
        assert counts[cid] <= min(10, max(2, int(0.05 * n)))  # never above max_seeds = 10
    per_cfg = res.history.groupby("config_id").size()
    assert per_cfg.max() == 10  # the cap reaches max_seeds (at 200 runs) and is used
    assert res.n_evals >= 399
    # early rounds explore: in the first 59 runs every configuration has its 2 first seeds only
    assert h.iloc[:59].config_id.value_counts().max() == 2


def test_seed_share_never_ends_a_study_on_a_small_table():
    # 12 rows x 2 seeds = 24 runs exhaust the table at a cap of 2 (1 % of 24 runs): the cap
    # then falls back to max_seeds and the budget is spent
    table = _table().iloc[:12]
    opt = erahbo.Optimizer(table, budget=100, seed=0, k_max=10, seed_share=0.01, pool_share=0)
    while (trial := opt.ask()) is not None:
        opt.tell(trial, [_objective(trial.config, s) for s in trial.seeds])
    res = opt.result()
    assert res.n_evals >= 99
    assert res.history.groupby("config_id").size().max() <= 10
